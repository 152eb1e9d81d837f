//! What the pages show, already formatted: numbers with their units, right-aligned by the
//! templates; the templates only lay it out.

pub mod compare;
mod params;
mod planner;
pub mod references;
mod runs;

pub use params::{distinct_params_lines, params_line, source_words, target_words};
use params::{provenance_lines, spec_lines, telling_details};
pub use planner::{PlannerView, PreviousView};
pub use runs::RunRow;
use runs::run_row;

use crate::analysis::planner::{Plan, PlanQuestion};
use crate::analysis::points::RunStanding;
use crate::analysis::{Component, Verdict, counted};
use crate::duration::format_duration;
use crate::engine::provenance::Provenance;
use crate::engine::result::{RunResult, RunStatus};
use crate::engine::survey::Survey;
use crate::matrix::{self, Point};
use crate::spec::TestKind;
use crate::spec::expectation::Expectation;
use crate::spec::expectation::PlanWarning;
use crate::spec::{CampaignSpec, RunParams, format_bytes, format_size};
use crate::views::charts::{self, Chart, Width};
use crate::views::run::{RunPhase, RunView};

/// What a campaign's page is drawn from, in the views' own terms: built by the HTTP layer from
/// the lab's campaign, its runs as [`RunView`]s.
pub struct CampaignShown<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// Its state's word: `queued`, `running`, `done`, …
    pub status: &'static str,
    /// Nothing more will happen to it.
    pub is_final: bool,
    /// When it was submitted, as stored (`2026-01-02T03:04:05Z`).
    pub created: String,
    pub host: Option<&'a str>,
    pub rerun_of: Option<&'a str>,
    pub spec: &'a CampaignSpec,
    pub runs: Vec<RunView<'a>>,
    pub points: &'a [Point],
    pub verdict: &'a Verdict,
    /// Runs were still to come when it was judged.
    pub provisional: bool,
    pub survey: Option<&'a Survey>,
    /// Its adaptive search, when its matrix has one.
    pub search: Option<SearchShown<'a>>,
    /// Each run's expected seconds, by position, and what in the plan cannot give a valid run.
    pub expected_by_run: Vec<f64>,
    pub plan_warnings: Vec<PlanWarning>,
    /// The whole campaign's expectation as its submission stated it.
    pub expected: Option<Expectation>,
    /// The price sheets a bucket's bills are worked out by.
    pub prices: &'a crate::analysis::prices::PriceSheets,
}

impl<'a> CampaignShown<'a> {
    /// What its charts are drawn from.
    pub fn charts(&'a self) -> ChartsShown<'a> {
        ChartsShown {
            runs: &self.runs,
            points: self.points,
            verdict: self.verdict,
            unexplored: self
                .search
                .as_ref()
                .map_or(&[][..], |search| search.unexplored),
        }
    }
}

/// An adaptive search as the page tells it.
pub struct SearchShown<'a> {
    /// What it ran and why it stopped.
    pub words: String,
    /// How sure it is of its best point.
    pub sureness: &'a str,
    /// The points it did not run, hatched on the heat map.
    pub unexplored: &'a [RunParams],
}

/// The report of one campaign.
pub struct CampaignPageView {
    pub id: String,
    pub name: String,
    pub status: String,
    pub is_final: bool,
    pub created: String,
    /// The lab host it runs on, when hosts were named.
    pub host: Option<String>,
    pub rerun_of: Option<String>,
    /// The campaigns queued as reruns of this one.
    pub reruns: Vec<String>,
    /// The page's action forms ask for the lab's token.
    pub needs_token: bool,
    /// The newest earlier campaign of the same spec, and how this one's figure changed.
    pub previous: Option<PreviousView>,
    /// The series the campaign's figures join, once it has finished.
    pub series: Option<String>,
    /// The changes in its series that this campaign's figures made stand out, in words.
    pub series_changes: Vec<String>,
    /// Other tools' figures imported beside the campaign's.
    pub references: Vec<references::ReferenceRow>,
    /// Test ids and their labels as JSON, for the live view to name runs in words.
    pub test_labels: String,
    /// The backup-window planner, once the campaign has finished.
    pub planner: Option<PlannerView>,
    pub spec_lines: Vec<(String, String)>,
    pub runs_total: usize,
    pub runs_finished: usize,
    pub progress_pct: String,
    pub live_run: String,
    pub live_rate: String,
    /// How long the campaign was expected to take, and, once finished, how long it took.
    pub expected: String,
    /// What is left of a running campaign, by the same expectation.
    pub left: String,
    /// Each run's expected seconds, by position, as JSON, for the live view to count down.
    pub expected_json: String,
    /// What in the plan cannot give a valid run, as the submission's answer said it.
    pub plan_warnings: Vec<String>,
    pub verdict: Option<VerdictView>,
    /// While runs are still to come: the table is drawn from the runs finished so far, and
    /// says so.
    pub provisional: Option<String>,
    /// The backup's stages at a glance, the limiting one marked.
    pub stages: Vec<StageSegment>,
    pub table: Vec<TableRow>,
    pub charts: Vec<ChartView>,
    pub sweep: Option<Vec<PointRow>>,
    /// The sweep wrote to an object store: its table gives each point's part size and parts
    /// in flight.
    pub sweep_uploads: bool,
    /// The campaign sent a dataset in generations: its table gives each point's generation.
    pub sweep_generations: bool,
    /// The adaptive search in words: what it ran and why it stopped, and how sure it is.
    pub search: Option<(String, String)>,
    pub runs: Vec<RunRow>,
    /// The backups' lives the campaign ran: nights, maintenance, restores.
    pub lives: Vec<crate::views::life::LifeView>,
    /// The object-lock probes' answers.
    pub locks: Vec<crate::views::lock::LockView>,
    /// The requests each run's tool made of its bucket.
    pub requests: crate::views::requests::RequestsView,
    /// What each of those runs would cost, by each price sheet.
    pub bills: crate::views::requests::BillsView,
    /// Each tool's forecast to the user's size, from the lives on its ladder.
    pub forecasts: Vec<crate::views::life::ForecastView>,
    /// The tools' forecasts compared, when several were.
    pub forecasts_compared: Vec<String>,
}

/// One component of the stage bar: how busy it was in the backup.
pub struct StageSegment {
    pub name: &'static str,
    pub busy_pct: String,
    /// The bar's width, 0–100.
    pub width: String,
    /// The verdict names this component.
    pub limiting: bool,
}

/// The verdict box.
pub struct VerdictView {
    pub component: String,
    /// False when the runs it rests on must be redone first.
    pub conclusive: bool,
    /// The campaign's answer is its life or its lock probe, not a bottleneck: not headed
    /// inconclusive.
    pub answered_otherwise: bool,
    pub text: String,
    pub summary: String,
    pub window: Option<String>,
    /// What a restore of the data takes, when the campaign measured one.
    pub restore: Option<String>,
    pub recommendations: Vec<String>,
    /// Flags that stay on the runs without changing the verdict, and what stays open.
    pub caveats: Vec<String>,
    /// A sweep's answer: its best point and how far above the worst; said first.
    pub sweep_best: Option<String>,
    /// The campaign lacks the tests that name a bottleneck (a sweep of one test, say): the
    /// verdict is a note under the sweep's answer, not an alarm.
    pub incomplete: bool,
    /// The backup tools the campaign ran, a line each, as the CLI's table gives them.
    pub tools: Vec<crate::views::report::ToolCells>,
    /// What the tools whose repository was in a bucket asked of it per GiB, as the CLI says.
    pub tools_requests: Option<String>,
    /// When it compared several tools, each one's own verdict.
    pub by_tool: Vec<ToolVerdictView>,
}

/// One tool's own verdict in a comparison of several: against its own ceiling and the
/// shared ones.
pub struct ToolVerdictView {
    pub tool: String,
    pub conclusive: bool,
    pub text: String,
    pub summary: String,
    pub restore: Option<String>,
    pub recommendations: Vec<String>,
    pub caveats: Vec<String>,
}

/// One row of the bottleneck table.
pub struct TableRow {
    pub label: String,
    pub mb_per_s: String,
    pub cpu: String,
    pub bottleneck: String,
    pub is_yes: bool,
    /// The leading candidate of an inconclusive verdict.
    pub is_candidate: bool,
    pub stage: String,
    /// "±3.1 %" over the repeats, or "measured once".
    pub spread: String,
    /// "3 of 3 valid", or "0 of 2 valid: " and the flags of the runs the figure rests on.
    pub validity: String,
    pub is_valid: bool,
}

/// A chart: its URL, and its SVG when the page is self-contained.
pub struct ChartView {
    pub name: String,
    pub title: String,
    pub url: String,
    /// The same chart drawn for a phone's width.
    pub narrow_url: String,
    pub svg: String,
}

/// One point of a sweep.
pub struct PointRow {
    pub test: String,
    pub combination: String,
    /// Streams, or clients × streams for a network backup.
    pub streams: String,
    /// An object store's part size and parts in flight per stream: `16 MiB × 8`.
    pub uploads: String,
    /// Which generation of a generated dataset the point sent, when it sent several.
    pub generation: String,
    pub median: String,
    pub range: String,
    /// The runs at the point by number: `#3, #4`.
    pub runs: String,
    /// "3 of 3 valid", "1 of 3 valid": how many of the point's runs are valid.
    pub valid: String,
    pub all_valid: bool,
    pub best: bool,
    /// "best" when the best point beats the runner-up by more than noise, else "fastest".
    pub mark: &'static str,
}

/// The campaign's expected length in words (the likely time and its bound, for an adaptive
/// search its likely runs and its budget), with how long it took once finished; and what is
/// left while it runs (the runs not yet finished, less what the running one has had).
fn durations(
    runs: &[RunView<'_>],
    expected: &[f64],
    whole: Option<&Expectation>,
    is_final: bool,
) -> (String, String) {
    if expected.is_empty() && whole.is_none() {
        return (String::new(), String::new());
    }
    let total: f64 = expected.iter().sum();
    let mut line = match whole {
        Some(whole) => expected_words(whole),
        None => format!("expected to take about {}", format_duration(total)),
    };
    let started = runs.iter().filter_map(|run| run.started_ms).min();
    let ended = runs.iter().filter_map(|run| run.finished_ms).max();
    if is_final && let (Some(started), Some(ended)) = (started, ended) {
        let took = (ended - started).max(0) as f64 / 1000.0;
        line = format!("{line}; took {}", format_duration(took));
        if whole.is_some_and(|whole| whole.search.is_some()) {
            line.push_str(&format!(" ({} runs)", runs.len()));
        }
    }
    if is_final {
        return (line, String::new());
    }
    let now = crate::clock::now_ms();
    let left: f64 = runs
        .iter()
        .zip(expected)
        .filter(|(run, _)| !run.phase.is_final())
        .map(|(run, seconds)| match (run.phase, run.started_ms) {
            (RunPhase::Running, Some(started)) => {
                (seconds - (now - started) as f64 / 1000.0).max(0.0)
            }
            _ => *seconds,
        })
        .sum();
    (line, format!("about {} left", format_duration(left)))
}

/// "expected to take about 35.0 s, at most 5m 03s if runs must go on to their cap to settle",
/// led for an adaptive search by its likely runs and its budget.
fn expected_words(whole: &Expectation) -> String {
    let time =
        crate::spec::expectation::duration_words(whole.expected_s, whole.at_most, whole.longest_s);
    match whole.search {
        Some(search) => format!(
            "{} runs likely (an adaptive search; its budget allows {}): expected to take {time}",
            search.likely_runs, search.budget_runs
        ),
        None => format!("expected to take {time}"),
    }
}

/// Builds the report view; `inline_charts` embeds the SVG (the self-contained download).
pub fn campaign_page(
    view: &CampaignShown<'_>,
    inline_charts: bool,
) -> Result<CampaignPageView, charts::ChartError> {
    let runs = &view.runs;
    let verdict = view.verdict;
    let is_final = view.is_final;
    let runs_finished = runs.iter().filter(|r| r.phase.is_final()).count();
    let points = view.points;
    let sweep = matrix::is_sweep(points);
    let chart_views = chart_views(view, runs_finished, inline_charts)?;

    let (live_run, live_rate) = live_lines(&view.runs, is_final);
    let forecasts =
        crate::views::life::ForecastView::all(&crate::analysis::life_forecast::priced_forecasts(
            view.spec.forecast.as_ref(),
            &runs.iter().filter_map(|run| run.result).collect::<Vec<_>>(),
            view.prices,
        ));
    let expected_by_run = &view.expected_by_run;
    let (expected, left) = durations(runs, expected_by_run, view.expected.as_ref(), is_final);

    Ok(CampaignPageView {
        plan_warnings: view
            .plan_warnings
            .iter()
            .map(|warning| format!("{}: {}", warning.field, warning.message))
            .collect(),
        expected,
        left,
        expected_json: serde_json::to_string(expected_by_run).unwrap_or_default(),
        id: view.id.to_string(),
        name: display_name(view.name),
        status: view.status.to_string(),
        is_final,
        created: view
            .created
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string()
            + " UTC",
        host: view.host.map(str::to_string),
        rerun_of: view.rerun_of.map(str::to_string),
        reruns: Vec::new(),
        needs_token: false,
        previous: None,
        series: None,
        series_changes: Vec::new(),
        references: Vec::new(),
        // Only the live view names runs from events; a finished page carries no script.
        test_labels: if is_final {
            String::new()
        } else {
            test_labels()
        },
        planner: is_final.then(|| PlannerView::of(view, None)),
        spec_lines: campaign_lines(view),
        runs_total: runs.len(),
        runs_finished,
        progress_pct: format!(
            "{:.0}",
            if runs.is_empty() {
                0.0
            } else {
                runs_finished as f64 / runs.len() as f64 * 100.0
            }
        ),
        live_run,
        live_rate,
        provisional: view.provisional.then(|| {
            format!(
                "Provisional: drawn from the {runs_finished} of {} runs finished so far; the \
                 verdict is drawn when the last run ends.",
                runs.len()
            )
        }),
        verdict: is_final.then(|| verdict_view(verdict, points)),
        stages: if is_final {
            stage_bar(verdict)
        } else {
            Vec::new()
        },
        table: verdict.rows.iter().map(table_row).collect(),
        charts: chart_views,
        sweep: sweep.then(|| sweep_rows(points)),
        sweep_uploads: sweep && points.iter().any(|point| point.params.part_size.is_some()),
        sweep_generations: sweep && points.iter().any(|point| point.params.generation.is_some()),
        search: view
            .search
            .as_ref()
            .map(|search| (search.words.clone(), search.sureness.to_string())),
        runs: runs.iter().map(|run| run_row(run, points)).collect(),
        lives: crate::views::life::LifeView::all(runs),
        locks: crate::views::lock::LockView::all(
            runs.iter()
                .filter_map(|run| Some((run.number, run.result?))),
        ),
        requests: crate::views::requests::RequestsView::of(
            runs.iter()
                .filter_map(|run| Some((run.number, run.result?))),
        ),
        bills: crate::views::requests::BillsView::of(&crate::analysis::bill::run_bills(
            view.prices,
            runs.iter()
                .filter_map(|run| Some((run.number, run.result?))),
        )),
        forecasts_compared: crate::views::life::forecasts_compared(&forecasts),
        forecasts,
    })
}

/// The charts the page shows, by what the campaign has: results, samples, a sweep, clients.
fn chart_views(
    view: &CampaignShown<'_>,
    runs_finished: usize,
    inline_charts: bool,
) -> Result<Vec<ChartView>, charts::ChartError> {
    let runs = &view.runs;
    let sweep = matrix::is_sweep(view.points);
    let has_results = runs.iter().any(|r| r.result.is_some());
    let has_samples = runs
        .iter()
        .any(|r| !r.live_samples.is_empty() || r.result.is_some_and(|res| !res.samples.is_empty()));
    let has_clients = charts::clients_run(runs).is_some();
    let shown = Chart::ALL.into_iter().filter(|chart| match chart {
        Chart::Tests | Chart::Stages => has_results,
        Chart::Throughput => has_samples,
        Chart::Matrix | Chart::Heatmap => sweep,
        Chart::Clients => has_clients,
    });
    let mut chart_views = Vec::new();
    for chart in shown {
        let svg = if inline_charts {
            render_chart(chart, &view.charts(), Width::Wide)?
        } else {
            String::new()
        };
        chart_views.push(ChartView {
            name: chart.id().to_string(),
            title: chart.title().to_string(),
            // The version makes a browser fetch a chart again as runs finish, and once more
            // when the campaign does, instead of showing the image it holds.
            url: format!(
                "/campaigns/{}/charts/{}.svg?v={}-{runs_finished}",
                view.id,
                chart.id(),
                view.status
            ),
            narrow_url: format!(
                "/campaigns/{}/charts/{}.narrow.svg?v={}-{runs_finished}",
                view.id,
                chart.id(),
                view.status
            ),
            svg,
        });
    }

    Ok(chart_views)
}

/// The running run and its latest MB/s, for the live view.
fn live_lines(runs: &[RunView<'_>], is_final: bool) -> (String, String) {
    let running = runs.iter().find(|r| r.phase == RunPhase::Running);
    let live_run = match running {
        Some(run) => format!("Run {} of {}: {}", run.number, runs.len(), run.test.label()),
        None if is_final => String::new(),
        None => "Waiting for a free lane…".to_string(),
    };
    let live_rate = running
        .and_then(|run| run.live_samples.last())
        .map_or_else(String::new, |s| format!("{:.1} MB/s", s.mb_per_s));

    (live_run, live_rate)
}

/// The verdict box. The verdict's sentences are read here and nowhere else on the page.
fn verdict_view(verdict: &Verdict, points: &[Point]) -> VerdictView {
    let sweep = matrix::is_sweep(points);
    VerdictView {
        component: verdict
            .component
            .map_or_else(|| "none".to_string(), |c| format!("{c:?}").to_lowercase()),
        conclusive: verdict.conclusive,
        answered_otherwise: verdict.finding.answered_otherwise(),
        text: verdict.sentence(),
        summary: verdict.summary(),
        window: verdict.backup_window_s.map(format_duration),
        restore: verdict.restore_words(),
        recommendations: verdict.recommendations(),
        caveats: verdict.caveats(),
        sweep_best: sweep
            .then(|| matrix::headline_test(points))
            .flatten()
            .and_then(|test| matrix::best_sentence(points, test, verdict.cap().as_deref())),
        incomplete: matches!(
            verdict.finding,
            crate::analysis::findings::Finding::Incomplete { .. }
        ),
        tools: verdict
            .tools
            .iter()
            .map(crate::views::report::ToolCells::of)
            .collect(),
        tools_requests: crate::views::report::requests_per_gib_words(&verdict.tools),
        by_tool: verdict
            .tools
            .iter()
            .zip(&verdict.by_tool)
            .map(|(line, own)| ToolVerdictView {
                tool: line.label.clone(),
                conclusive: own.conclusive,
                text: own.sentence(),
                summary: own.summary(),
                restore: own.restore_words(),
                recommendations: own.recommendations(),
                caveats: own.caveats(),
            })
            .collect(),
    }
}

/// One row of the bottleneck table.
fn table_row(row: &crate::analysis::VerdictRow) -> TableRow {
    TableRow {
        label: row.label.clone(),
        mb_per_s: row.figure_labelled(),
        cpu: cpu_load(row),
        bottleneck: row.bottleneck_word().to_string(),
        is_yes: row.bottleneck == Some(true),
        is_candidate: row.candidate,
        spread: match (row.spread_pct, row.repeats) {
            (Some(spread), n) => format!("±{spread:.1}\u{a0}% (median of {n})"),
            (None, 1) if row.runs_total > 1 => "one run".to_string(),
            (None, 1) => "measured once".to_string(),
            (None, _) => "–".to_string(),
        },
        validity: row.valid_words().unwrap_or_else(|| "–".to_string()),
        is_valid: row.valid != Some(false),
        stage: row.stage_reason().unwrap_or_default(),
    }
}

/// The sweep table: a row per point.
fn sweep_rows(points: &[Point]) -> Vec<PointRow> {
    // The sweep table's columns show buffers × block, streams, clients, parts and
    // the generation; anything else that differs is written beside them.
    let telling = telling_details(
        &points
            .iter()
            .map(|point| (point.test, &point.params))
            .collect::<Vec<_>>(),
        |params| {
            format!(
                "{} {} {:?} {:?} {:?} {:?}",
                params.buffers,
                params.block_size,
                (params.streams, params.clients),
                params.part_size,
                params.concurrency,
                params.generation
            )
        },
    );
    points.iter().zip(telling).map(point_row).collect()
}

/// Test ids and their labels as JSON, for the live view to name runs in words.
fn test_labels() -> String {
    serde_json::to_string(
        &TestKind::ALL
            .iter()
            .map(|test| (test.id(), test.label()))
            .collect::<std::collections::BTreeMap<_, _>>(),
    )
    .unwrap_or_default()
}

/// The spec in lines, with what the survey found: how the source reduces, where it was
/// measured.
fn campaign_lines(view: &CampaignShown<'_>) -> Vec<(String, String)> {
    let mut lines = spec_lines(view.spec);
    if let Some(reduction) = view.survey.and_then(|s| s.reduction.as_ref()) {
        lines.push(("Source reduces".to_string(), reduction.words()));
    }
    if let Some(provenance) = view.survey.and_then(|s| s.provenance.as_ref()) {
        lines.extend(provenance_lines(provenance));
    }
    lines
}

/// What a campaign's charts are drawn from.
pub struct ChartsShown<'a> {
    pub runs: &'a [RunView<'a>],
    pub points: &'a [Point],
    pub verdict: &'a Verdict,
    /// The points an adaptive search did not run, hatched on the heat map.
    pub unexplored: &'a [RunParams],
}

/// Renders one chart of a campaign at a width.
pub fn render_chart(
    chart: Chart,
    view: &ChartsShown<'_>,
    width: Width,
) -> Result<String, charts::ChartError> {
    let (runs, points) = (view.runs, view.points);
    let sweep_test = matrix::headline_test(points);
    match chart {
        Chart::Tests => charts::tests_chart(view.verdict, points, width),
        Chart::Throughput => charts::throughput_chart(runs, width),
        Chart::Stages => charts::stages_chart(runs, points, width),
        Chart::Clients => charts::clients_chart(runs, width),
        Chart::Matrix => charts::matrix_chart(points, sweep_test, width),
        Chart::Heatmap => charts::heatmap_chart(points, sweep_test, view.unexplored, width),
    }
}

/// A campaign's name, or a stand-in when it has none.
pub fn display_name(name: &str) -> String {
    if name.trim().is_empty() {
        "Untitled campaign".to_string()
    } else {
        name.to_string()
    }
}

/// A row of the sweep table; `telling` holds the settings that tell it apart from another
/// point whose columns would read the same.
fn point_row((point, telling): (&Point, Vec<String>)) -> PointRow {
    let figure = point.figure.as_ref();
    PointRow {
        test: point.test.label().to_string(),
        combination: if telling.is_empty() {
            point.combination()
        } else {
            format!("{}, {}", point.combination(), telling.join(", "))
        },
        streams: if point.clients() > 0 {
            format!(
                "{} × {}",
                counted(u64::from(point.clients()), "client", "clients"),
                point.params.streams
            )
        } else {
            point.params.streams.to_string()
        },
        uploads: match (point.params.part_size, point.params.concurrency) {
            (Some(part_size), Some(concurrency)) => {
                format!("{} × {concurrency}", format_bytes(part_size))
            }
            _ => "–".to_string(),
        },
        generation: point
            .params
            .generation
            .map_or_else(|| "–".to_string(), |generation| generation.to_string()),
        median: point.figure_labelled(),
        range: match figure {
            Some(figure) if figure.n > 1 => format!("{:.1}–{:.1}", figure.min, figure.max),
            _ => "–".to_string(),
        },
        runs: point.run_numbers(),
        valid: point.valid_count(),
        all_valid: point.runs_valid == point.runs.len(),
        best: point.best,
        mark: match (point.best, point.stands_out) {
            (true, true) => "best",
            (true, false) => "fastest, within noise",
            _ => "",
        },
    }
}

/// The backup's components and how busy each was in its run: source (or network) reads,
/// the pipeline's CPU, target writes; empty without a backup run.
fn stage_bar(verdict: &Verdict) -> Vec<StageSegment> {
    let Some((row, busy)) = verdict.rows.iter().find_map(|row| {
        matches!(row.test, TestKind::FullBackup | TestKind::NetworkBackup)
            .then_some(())
            .and(row.busy.map(|busy| (row, busy)))
    }) else {
        return Vec::new();
    };
    let reads = if row.test == TestKind::NetworkBackup {
        ("Network", Component::Network)
    } else {
        ("Source", Component::Source)
    };
    let parts = [
        (reads.0, Some(busy.reader_busy_pct), reads.1),
        ("Pipeline (CPU)", row.lab_cpu_pct, Component::Pipeline),
        ("Target", Some(busy.writer_busy_pct), Component::Target),
    ];
    parts
        .into_iter()
        .map(|(name, pct, component)| {
            let pct = pct.unwrap_or(0.0).clamp(0.0, 100.0);
            StageSegment {
                name,
                busy_pct: format!("{pct:.0} %"),
                width: format!("{pct:.0}"),
                limiting: verdict.component == Some(component)
                    || (verdict.component == Some(Component::SharedDevice)
                        && component != Component::Pipeline),
            }
        })
        .collect()
}

/// The lab's own CPU load of a row, with other work on the machine beside it when there was
/// any to speak of (never added in).
fn cpu_load(row: &crate::analysis::VerdictRow) -> String {
    let Some(own) = row.lab_cpu_pct else {
        return "–".to_string();
    };
    match row.other_cpu_pct {
        Some(other) if other >= OTHER_WORK_SHOWN_PCT => {
            format!("{own:.0}\u{a0}% (other work {other:.0}\u{a0}%)")
        }
        _ => format!("{own:.0}\u{a0}%"),
    }
}

/// Other work on the machine below this share of its CPUs is not worth a word.
const OTHER_WORK_SHOWN_PCT: f64 = 5.0;
