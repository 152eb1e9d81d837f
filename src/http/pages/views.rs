//! What the pages show, already formatted: numbers with their units, right-aligned by the
//! templates; the templates only lay it out.

use crate::analysis::planner::{self, Plan, PlanQuestion};
use crate::analysis::points::RunStanding;
use crate::analysis::{Component, Verdict, counted, format_duration};
use crate::charts::{self, Chart, Width};
use crate::engine::provenance::Provenance;
use crate::engine::result::{RunResult, RunStatus};
use crate::lab::CampaignView;
use crate::matrix::{self, Point};
use crate::spec::TestKind;
use crate::spec::expectation::Expectation;
use crate::spec::{CampaignSpec, RunParams, format_bytes, format_size};
use crate::store::{RunRecord, RunState};

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
    pub references: Vec<super::references::ReferenceRow>,
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

/// One run in the runs table.
pub struct RunRow {
    pub position: i64,
    pub test: String,
    pub status: String,
    pub attempts: i64,
    pub params: String,
    pub mb_per_s: String,
    pub moved: String,
    pub seconds: String,
    pub cpu: String,
    pub readers: String,
    pub writer: String,
    pub latency: String,
    /// Steady-state MB/s and its window, when found.
    pub steady: String,
    /// "valid", or "not valid", with a line per flag.
    pub validity: String,
    pub flags: Vec<String>,
    pub warnings: Vec<String>,
    pub error: Option<String>,
    /// The target's own figures, when it reports any (emulated drives do).
    pub target: Option<String>,
    /// A network backup's clients, one line each.
    pub clients: Vec<String>,
}

/// The backup-window planner: the question as the form shows it, and the answer.
pub struct PlannerView {
    /// The campaign the planner answers from.
    pub campaign_id: String,
    /// The data size and the window as the form shows them.
    pub data: String,
    pub window: String,
    /// The answer, when the question could be read.
    pub answer: Option<Plan>,
    /// Why the question cannot be answered: a size or window that cannot be read.
    pub errors: Vec<String>,
}

impl PlannerView {
    /// The planner for `asked` (data and window as typed), or, when nothing was asked, for the
    /// campaign's own source size in an 8-hour window.
    pub fn of(view: &CampaignView, asked: Option<(&str, &str)>) -> Self {
        let verdict = &view.verdict;
        let source_bytes = view
            .survey
            .as_ref()
            .map(|survey| survey.source_bytes)
            .filter(|bytes| *bytes > 0)
            .or_else(|| {
                let generated = view.spec.source.generated.as_ref()?;
                Some(generated.size.bytes())
            });
        let (data, window) = match asked {
            Some((data, window)) => (data.trim().to_string(), window.trim().to_string()),
            // As the form reads sizes back: a whole number of units (`256M`), else bytes.
            None => (
                source_bytes.map_or_else(String::new, |bytes| {
                    let size = format_size(bytes);
                    if size.contains('.') {
                        bytes.to_string()
                    } else {
                        size
                    }
                }),
                "8h".to_string(),
            ),
        };
        let campaign_id = view.campaign.id.clone();
        // The planner's own question is asked only when its answer is a rate a person plans
        // by; a small source in 8 hours needs next to nothing, so the form asks instead.
        let data = match (asked, PlanQuestion::parse(&data, &window)) {
            (None, Ok(question)) if question.needed_mb_s() < planner::DEFAULT_QUESTION_MIN_MB_S => {
                String::new()
            }
            _ => data,
        };
        if data.is_empty() {
            return Self {
                campaign_id,
                data,
                window,
                answer: None,
                errors: Vec::new(),
            };
        }
        match PlanQuestion::parse(&data, &window) {
            Ok(question) => {
                let runs: Vec<&RunResult> = view
                    .runs
                    .iter()
                    .filter_map(|run| run.result.as_ref())
                    .collect();
                Self {
                    campaign_id,
                    answer: Some(planner::plan(
                        question,
                        verdict,
                        &view.points,
                        &runs,
                        view.survey.as_ref(),
                    )),
                    data,
                    window,
                    errors: Vec::new(),
                }
            }
            Err(errors) => Self {
                campaign_id,
                data,
                window,
                answer: None,
                errors: errors
                    .into_iter()
                    .map(|(field, message)| format!("{field}: {message}"))
                    .collect(),
            },
        }
    }
}

/// The earlier campaign of the same spec, as the report links to it.
pub struct PreviousView {
    pub id: String,
    /// `Full backup, parallel: 412.0 → 433.1 MB/s (+5.1 %, better, more than noise)`; empty
    /// when the two share no finished point.
    pub change: String,
    /// `better`, `worse` or empty: how the change is coloured.
    pub direction: &'static str,
}

impl PreviousView {
    /// How `now` compares with the earlier campaign `before` of the same spec.
    pub fn of(before: &CampaignView, now: &CampaignView) -> Self {
        let row = crate::compare::headline_row(&before.points, &now.points);
        let change = row.as_ref().and_then(|row| {
            Some(format!(
                "{} at {}: {:.1} → {:.1} MB/s {} ({})",
                row.test.label(),
                params_line(&row.params),
                row.a?.stat.median,
                row.b?.stat.median,
                row.b_tally.map_or("", |tally| tally.basis.word()),
                row.change_words()?
            ))
        });
        Self {
            id: before.campaign.id.clone(),
            change: change.unwrap_or_default(),
            direction: row.and_then(|row| row.direction()).unwrap_or(""),
        }
    }
}

/// The campaign's expected length in words (the likely time and its bound, for an adaptive
/// search its likely runs and its budget), with how long it took once finished; and what is
/// left while it runs (the runs not yet finished, less what the running one has had).
fn durations(
    runs: &[RunRecord],
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
        .filter(|(run, _)| !run.status.is_final())
        .map(|(run, seconds)| match (run.status, run.started_ms) {
            (RunState::Running, Some(started)) => {
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
    view: &CampaignView,
    inline_charts: bool,
) -> Result<CampaignPageView, charts::ChartError> {
    let summary = &view.campaign;
    let runs = &view.runs;
    let verdict = &view.verdict;
    let is_final = summary.status.is_final();
    let runs_finished = runs.iter().filter(|r| r.status.is_final()).count();
    let points = &view.points;
    let sweep = matrix::is_sweep(points);
    let has_results = runs.iter().any(|r| r.result.is_some());

    let has_samples = runs.iter().any(|r| {
        !r.samples.is_empty() || r.result.as_ref().is_some_and(|res| !res.samples.is_empty())
    });
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
            render_chart(chart, view, Width::Wide)?
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
                summary.id,
                chart.id(),
                summary.status.id()
            ),
            narrow_url: format!(
                "/campaigns/{}/charts/{}.narrow.svg?v={}-{runs_finished}",
                summary.id,
                chart.id(),
                summary.status.id()
            ),
            svg,
        });
    }

    let running = runs.iter().find(|r| r.status == RunState::Running);
    let live_run = match running {
        Some(run) => format!(
            "Run {} of {}: {}",
            run.position + 1,
            runs.len(),
            run.test.label()
        ),
        None if is_final => String::new(),
        None => "Waiting for a free lane…".to_string(),
    };
    let live_rate = running
        .and_then(|run| run.samples.last())
        .map_or_else(String::new, |s| format!("{:.1} MB/s", s.mb_per_s));

    let (expected_by_run, plan_warnings) = view.expectation();
    let whole = view.expected();
    let (expected, left) = durations(runs, &expected_by_run, whole.as_ref(), is_final);

    Ok(CampaignPageView {
        plan_warnings: plan_warnings
            .into_iter()
            .map(|warning| format!("{}: {}", warning.field, warning.message))
            .collect(),
        expected,
        left,
        expected_json: serde_json::to_string(&expected_by_run).unwrap_or_default(),
        id: summary.id.clone(),
        name: display_name(&summary.name),
        status: summary.status.id().to_string(),
        is_final,
        created: summary
            .created
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string()
            + " UTC",
        host: summary.host.clone(),
        rerun_of: summary.rerun_of.clone(),
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
            serde_json::to_string(
                &TestKind::ALL
                    .iter()
                    .map(|test| (test.id(), test.label()))
                    .collect::<std::collections::BTreeMap<_, _>>(),
            )
            .unwrap_or_default()
        },
        planner: is_final.then(|| PlannerView::of(view, None)),
        spec_lines: {
            let mut lines = spec_lines(&view.spec);
            if let Some(reduction) = view.survey.as_ref().and_then(|s| s.reduction.as_ref()) {
                lines.push(("Source reduces".to_string(), reduction.words()));
            }
            if let Some(provenance) = view.survey.as_ref().and_then(|s| s.provenance.as_ref()) {
                lines.extend(provenance_lines(provenance));
            }
            lines
        },
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
        verdict: is_final.then(|| VerdictView {
            component: verdict
                .component
                .map_or_else(|| "none".to_string(), |c| format!("{c:?}").to_lowercase()),
            conclusive: verdict.conclusive,
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
        }),
        stages: if is_final {
            stage_bar(verdict)
        } else {
            Vec::new()
        },
        table: verdict
            .rows
            .iter()
            .map(|row| TableRow {
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
            })
            .collect(),
        charts: chart_views,
        sweep: sweep.then(|| {
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
        }),
        sweep_uploads: sweep && points.iter().any(|point| point.params.part_size.is_some()),
        sweep_generations: sweep && points.iter().any(|point| point.params.generation.is_some()),
        search: view
            .search
            .as_ref()
            .map(|search| (search.words(), search.sureness.clone())),
        runs: runs.iter().map(|run| run_row(run, points)).collect(),
    })
}

/// Renders one chart of a campaign at a width.
pub fn render_chart(
    chart: Chart,
    view: &CampaignView,
    width: Width,
) -> Result<String, charts::ChartError> {
    let (runs, points) = (&view.runs, &view.points);
    let sweep_test = matrix::headline_test(points);
    match chart {
        Chart::Tests => charts::tests_chart(&view.verdict, points, width),
        Chart::Throughput => charts::throughput_chart(runs, width),
        Chart::Stages => charts::stages_chart(runs, points, width),
        Chart::Clients => charts::clients_chart(runs, width),
        Chart::Matrix => charts::matrix_chart(points, sweep_test, width),
        Chart::Heatmap => charts::heatmap_chart(
            points,
            sweep_test,
            view.search
                .as_ref()
                .map_or(&[][..], |search| &search.unexplored),
            width,
        ),
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

/// Where a campaign was measured, as the page's spec list shows it.
fn provenance_lines(provenance: &Provenance) -> Vec<(String, String)> {
    let mut host = format!("{} · {}", provenance.hostname, provenance.kernel);
    match &provenance.cpu_model {
        Some(model) => host.push_str(&format!(" · {} × {model}", provenance.cpus)),
        None => host.push_str(&format!(" · {} CPUs", provenance.cpus)),
    }
    if let Some(memory) = provenance.memory_bytes {
        host.push_str(&format!(
            " · {:.1} GiB memory",
            memory as f64 / (1u64 << 30) as f64
        ));
    }
    let build = match &provenance.git_commit {
        Some(commit) => format!("backlab {} ({commit})", provenance.backlab_version),
        None => format!("backlab {}", provenance.backlab_version),
    };
    let mut lines = vec![
        ("Measured on".to_string(), host),
        ("Measured with".to_string(), build),
    ];
    for place in &provenance.places {
        let mut storage = vec![match (&place.fs_type, &place.device) {
            (Some(fs_type), _) => fs_type.clone(),
            (None, Some(_)) => "block device".to_string(),
            (None, None) => "unknown file system".to_string(),
        }];
        if let Some(device) = &place.device {
            storage.push(format!("on {device}"));
        }
        if let Some(model) = &place.model {
            storage.push(format!("({model})"));
        }
        if let Some(striped) = place.geometry.as_ref().filter(|g| g.stripe().is_some()) {
            storage.push(format!("· {}", striped.words()));
        }
        if let Some(stripe) = &place.fs_stripe {
            storage.push(format!("· {}", stripe.words()));
        }
        let role = if place.role == "target" {
            "Target storage"
        } else {
            "Source storage"
        };
        lines.push((
            role.to_string(),
            format!("{}: {}", place.path.display(), storage.join(" ")),
        ));
    }
    lines
}

fn spec_lines(spec: &CampaignSpec) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    lines.push(("Source".to_string(), source_words(spec)));
    lines.push(("Target".to_string(), target_words(spec)));
    let tests: Vec<&str> = spec
        .tests
        .iter()
        .map(|id| crate::spec::TestKind::from_id(id).map_or(id.as_str(), |test| test.label()))
        .collect();
    lines.push(("Tests".to_string(), tests.join(" · ")));
    let p = &spec.params;
    let mut params = format!(
        "{} buffers × {}, {}, direct {}, cold cache {}, fsync {}",
        p.buffers,
        format_bytes(p.block_size.bytes()),
        p.streams.map_or_else(
            || "default streams".to_string(),
            |s| counted(u64::from(s), "stream", "streams"),
        ),
        yes_no(p.direct),
        yes_no(p.cold_cache),
        yes_no(p.fsync)
    );
    if let Some(size) = &p.size {
        params.push_str(&format!(", at most {} per run", format_bytes(size.bytes())));
    }
    match p.duration_s {
        Some(crate::spec::DurationInput::Seconds(duration)) if p.time_based == Some(true) => {
            params.push_str(&format!(", {duration} s per run (time-based)"))
        }
        Some(crate::spec::DurationInput::Seconds(duration)) => {
            params.push_str(&format!(", at most {duration} s per run"))
        }
        Some(crate::spec::DurationInput::Auto(_)) => {
            params.push_str(", until steady (at most 60 s) per run")
        }
        None => {}
    }
    lines.push(("Parameters".to_string(), params));
    if let Some(matrix) = &spec.matrix {
        let mut parts = Vec::new();
        if let Some(buffers) = &matrix.buffers {
            parts.push(format!("buffers {buffers:?}"));
        }
        if let Some(sizes) = &matrix.block_size {
            let sizes: Vec<String> = sizes.iter().map(|s| format_bytes(s.bytes())).collect();
            parts.push(format!("block size [{}]", sizes.join(", ")));
        }
        if let Some(streams) = &matrix.streams {
            parts.push(format!("streams {streams:?}"));
        }
        lines.push(("Matrix".to_string(), parts.join(" × ")));
    }
    if spec.repeat > 1 {
        lines.push(("Repeat".to_string(), format!("{} times", spec.repeat)));
    }
    lines
}

/// What a campaign reads, in a few words: its paths, or generated data, and the agents.
pub fn source_words(spec: &CampaignSpec) -> String {
    let source = match (&spec.source.paths, &spec.source.generated) {
        (Some(paths), _) => paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        (None, Some(generated)) => format!(
            "generated, {} at {}:1",
            format_bytes(generated.size.bytes()),
            generated.compress_ratio
        ),
        (None, None) => "generated data".to_string(),
    };
    match &spec.source.agents {
        Some(agents) => format!("agents {} reading {source}", agents.join(", ")),
        None => source,
    }
}

/// Where a campaign writes, in a few words.
pub fn target_words(spec: &CampaignSpec) -> String {
    spec.target.words()
}

fn yes_no(value: bool) -> &'static str {
    if value { "on" } else { "off" }
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

/// The parameters of a run in one short line.
pub fn params_line(params: &RunParams) -> String {
    let mut line = match params.clients {
        Some(clients) => format!(
            "{} × {}, {} × {}",
            params.buffers,
            format_bytes(params.block_size),
            counted(u64::from(clients), "client", "clients"),
            counted(u64::from(params.streams), "stream", "streams")
        ),
        None => format!(
            "{} × {}, {}",
            params.buffers,
            format_bytes(params.block_size),
            counted(u64::from(params.streams), "stream", "streams")
        ),
    };
    if let (Some(part_size), Some(concurrency)) = (params.part_size, params.concurrency) {
        line.push_str(&format!(
            ", {} parts × {concurrency} in flight",
            format_bytes(part_size)
        ));
    }
    if let Some(link) = params.link_mb_s {
        line.push_str(&format!(", emulated link {link} MB/s per client"));
    }
    if params.direct {
        line.push_str(", direct");
    }
    if !params.fsync {
        line.push_str(", no fsync");
    }
    if let Some(generation) = params.generation {
        line.push_str(&format!(", generation {generation}"));
    }
    line
}

/// Each setting of a run beyond its buffers, block size, streams, clients, parts and
/// generation, keyed by the setting: what can tell apart two points that read alike.
fn param_details(params: &RunParams) -> Vec<(&'static str, String)> {
    let mut details = Vec::new();
    details.push((
        "direct",
        if params.direct {
            "direct I/O"
        } else {
            "buffered I/O"
        }
        .to_string(),
    ));
    details.push((
        "fsync",
        if params.fsync { "fsync" } else { "no fsync" }.to_string(),
    ));
    details.push((
        "link",
        params.link_mb_s.map_or_else(
            || "no emulated link".to_string(),
            |link| format!("emulated link {link} MB/s per client"),
        ),
    ));
    let length = match (params.size, params.duration_s) {
        (_, Some(seconds)) if params.until_steady => {
            format!("until steady, at most {}", format_duration(seconds))
        }
        (_, Some(seconds)) if params.time_based => {
            format!("{} time-based", format_duration(seconds))
        }
        (Some(size), Some(seconds)) => {
            format!("{} or {}", format_size(size), format_duration(seconds))
        }
        (Some(size), None) => format_size(size),
        (None, Some(seconds)) => format_duration(seconds),
        (None, None) => "the whole source".to_string(),
    };
    details.push(("length", length));
    details.push((
        "cache",
        if params.cold_cache {
            "cold cache"
        } else {
            "warm cache"
        }
        .to_string(),
    ));
    details.push((
        "data",
        if params.match_source {
            "data as compressible as the source's".to_string()
        } else {
            format!("{}:1 data", params.compress_ratio)
        },
    ));
    details.push((
        "source rate",
        params.source_rate_mb_s.map_or_else(
            || "source not capped".to_string(),
            |rate| format!("source capped at {rate} MB/s per stream"),
        ),
    ));
    details
}

/// The parameter line of each of `rows` (a test and its parameters), with the settings that
/// tell it apart from another row of the same test whose line would read the same: two rows
/// never look alike unless they are alike.
pub fn distinct_params_lines(rows: &[(TestKind, &RunParams)]) -> Vec<String> {
    rows.iter()
        .zip(telling_details(rows, params_line))
        .map(|((_, params), telling)| {
            let line = params_line(params);
            if telling.is_empty() {
                line
            } else {
                format!("{line}, {}", telling.join(", "))
            }
        })
        .collect()
}

/// For each of `rows`, the settings that differ from another row of the same test whose
/// `shown` words are the same: what tells it apart, empty when nothing needs to.
fn telling_details(
    rows: &[(TestKind, &RunParams)],
    shown: fn(&RunParams) -> String,
) -> Vec<Vec<String>> {
    let lines: Vec<String> = rows.iter().map(|(_, params)| shown(params)).collect();
    let details: Vec<Vec<(&'static str, String)>> = rows
        .iter()
        .map(|(_, params)| param_details(params))
        .collect();
    rows.iter()
        .enumerate()
        .map(|(at, (test, _))| {
            let alike: Vec<usize> = (0..rows.len())
                .filter(|other| rows[*other].0 == *test && lines[*other] == lines[at])
                .collect();
            details[at]
                .iter()
                .enumerate()
                .filter(|(key, (_, word))| {
                    alike.iter().any(|other| details[*other][*key].1 != *word)
                })
                .map(|(_, (_, word))| word.clone())
                .collect()
        })
        .collect()
}

fn run_row(run: &RunRecord, points: &[Point]) -> RunRow {
    let dash = || "–".to_string();
    // Only a finished run's figures are results; a run that failed or was cancelled part way
    // shows what it moved and for how long, and that it was cut, never its rate.
    let ran = run.result.as_ref();
    let result = ran.filter(|r| r.status == RunStatus::Done);
    let cut = ran.filter(|r| r.status != RunStatus::Done && (r.bytes > 0 || r.seconds > 0.0));
    let moved = |r: &RunResult| {
        if r.files > 0 {
            format!(
                "{} in {}",
                format_bytes(r.bytes),
                counted(r.files, "file", "files")
            )
        } else {
            format_bytes(r.bytes)
        }
    };
    let was_cut = cut.is_some_and(|r| r.status == RunStatus::Cancelled);
    RunRow {
        position: run.position + 1,
        test: run.test.label().to_string(),
        status: if result.is_some_and(|r| r.partial) {
            "partial".to_string()
        } else {
            run.status.id().to_string()
        },
        attempts: run.attempts,
        params: params_line(&run.params),
        mb_per_s: if was_cut {
            "cancelled".to_string()
        } else {
            result.map_or_else(dash, |r| format!("{:.1}", r.mb_per_s))
        },
        moved: result.or(cut).map_or_else(dash, moved),
        seconds: result
            .or(cut)
            .map_or_else(dash, |r| format!("{:.2}\u{a0}s", r.seconds)),
        cpu: result.map_or_else(dash, |r| {
            format!(
                "{:.0}\u{a0}% / {:.0}\u{a0}%",
                r.cpu.process_pct, r.cpu.system_pct
            )
        }),
        readers: result.map_or_else(dash, |r| {
            format!(
                "{:.0}\u{a0}% / {:.0}\u{a0}%",
                r.stages.reader_busy_pct, r.stages.reader_wait_pct
            )
        }),
        writer: result.map_or_else(dash, |r| {
            if r.stages.writer_busy_pct == 0.0 && r.stages.writer_waits == 0 {
                "–".to_string()
            } else {
                format!(
                    "{:.0}\u{a0}% / {:.0}\u{a0}%",
                    r.stages.writer_busy_pct, r.stages.writer_wait_pct
                )
            }
        }),
        latency: result
            .and_then(|r| r.latency_us)
            .map_or_else(dash, |l| format!("{} / {} µs", l.p50, l.p99)),
        steady: result
            .and_then(|r| r.steady)
            .filter(|s| s.steady)
            .map_or_else(dash, |s| {
                let flush = if s.flush_s > 0.0 {
                    format!(", flush {:.1}\u{a0}s charged", s.flush_s)
                } else {
                    String::new()
                };
                format!(
                    "{:.1} ({:.1}–{:.1}\u{a0}s, ±{:.1}\u{a0}%{flush})",
                    s.mb_per_s,
                    s.from_s,
                    s.to_s,
                    s.cv_pct.unwrap_or(0.0)
                )
            }),
        // How the run stands at its point, by the rule every count of valid runs uses.
        validity: usize::try_from(run.number)
            .ok()
            .and_then(|number| crate::analysis::points::standing_of(points, number))
            .filter(|standing| matches!(standing, RunStanding::Valid | RunStanding::NotValid))
            .map_or_else(dash, |standing| standing.word().to_string()),
        flags: result
            .and_then(|r| r.validity.as_ref())
            .map(|v| {
                v.flags
                    .iter()
                    .map(|flag| {
                        format!(
                            "{}: {} — {}",
                            flag.code.id(),
                            flag.detail,
                            flag.code.remedy()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        warnings: ran.map(|r| r.warnings.clone()).unwrap_or_default(),
        error: if was_cut {
            cut.map(|r| {
                format!(
                    "cancelled after {:.2} s with {} moved: what it measured is not a result",
                    r.seconds,
                    format_bytes(r.bytes)
                )
            })
        } else {
            ran.and_then(|r| r.error.clone())
        },
        target: result
            .and_then(RunResult::target_report)
            .map(|report| report.to_string()),
        clients: result
            .and_then(|r| r.clients.as_ref())
            .map(|clients| clients.iter().map(client_line).collect())
            .unwrap_or_default(),
    }
}

/// One client of a network run: what the lab received, and what the client says it sent.
fn client_line(client: &crate::engine::result::ClientFigures) -> String {
    let reported = client.reported_bytes.map_or_else(String::new, |bytes| {
        format!("; the client counted {} sent", format_bytes(bytes))
    });
    let status = match &client.error {
        Some(error) => format!("failed: {error}"),
        None => "done".to_string(),
    };
    format!(
        "client {} ({}): {} at {:.1} MB/s, {status}{reported}",
        client.name,
        counted(u64::from(client.streams), "stream", "streams"),
        format_bytes(client.bytes),
        client.mb_per_s
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_would_read_alike_say_what_tells_them_apart() {
        let short = RunParams {
            duration_s: Some(30.0),
            ..RunParams::example()
        };
        let long = RunParams {
            duration_s: Some(60.0),
            ..RunParams::example()
        };
        let lines = distinct_params_lines(&[
            (TestKind::FullBackup, &short),
            (TestKind::FullBackup, &long),
            (TestKind::ReadParallel, &short),
        ]);
        assert_eq!(lines[0], "32 × 256 KiB, 4 streams, 30.0 s time-based");
        assert_eq!(lines[1], "32 × 256 KiB, 4 streams, 1m 00s time-based");
        assert_eq!(
            lines[2], "32 × 256 KiB, 4 streams",
            "nothing to tell apart in a test of its own"
        );
        let generations: Vec<RunParams> = (1..=3)
            .map(|generation| RunParams {
                generation: Some(generation),
                ..RunParams::example()
            })
            .collect();
        let lines = distinct_params_lines(
            &generations
                .iter()
                .map(|params| (TestKind::FullBackup, params))
                .collect::<Vec<_>>(),
        );
        assert_eq!(lines[2], "32 × 256 KiB, 4 streams, generation 3");
        assert_eq!(
            lines.iter().collect::<std::collections::HashSet<_>>().len(),
            3
        );
    }
}
