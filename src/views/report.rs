//! A campaign's results as one document: the JSON of `backlab run --json` and the text table.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::analysis::Verdict;
use crate::analysis::bill::{RunBill, SheetBill};
use crate::analysis::life_forecast::LifeForecast;
use crate::analysis::points::{Point, point_of_run};
use crate::analysis::prices::PriceSheets;
use crate::analysis::tools::ToolLine;
use crate::clock::format_ms;
use crate::duration::format_duration;
use crate::engine::result::{RunResult, RunStatus};
use crate::engine::survey::Survey;
use crate::engine::validity::FlagCode;
use crate::spec::{CampaignSpec, RunParams};
use crate::views::run::RunView;

/// The campaign a report belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignHeader {
    pub name: String,
    pub spec: CampaignSpec,
}

/// Everything a campaign measured and concluded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignReport {
    pub campaign: CampaignHeader,
    pub runs: Vec<RunResult>,
    /// Each test at each parameter set: the figures the verdict and every view rest on.
    #[serde(default)]
    pub points: Vec<Point>,
    /// Written with its sentences, rendered from the typed verdict.
    #[serde(with = "crate::analysis::said::in_words")]
    pub bottleneck: Verdict,
    /// The source's size and whether it shares a device with the target, when surveyed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub survey: Option<Survey>,
    /// Each tool's forecast to the user's size, from the lives on its ladder (a campaign
    /// with a `forecast`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forecasts: Vec<LifeForecast>,
    /// What each run's use of a bucket would cost by each price sheet, cheapest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bills: Vec<RunBill>,
    /// The campaign's bill by each sheet, cheapest first: its runs' bills together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub campaign_bills: Vec<SheetBill>,
}

impl CampaignReport {
    /// The report of a campaign's finished runs and what was concluded of them; the
    /// forecasts and the bills (by `prices`) are worked out here, from the runs, so every
    /// reader has the same.
    pub fn new(
        campaign: CampaignHeader,
        runs: Vec<RunResult>,
        points: Vec<Point>,
        bottleneck: Verdict,
        survey: Option<Survey>,
        prices: &PriceSheets,
    ) -> CampaignReport {
        let forecasts = crate::analysis::life_forecast::priced_forecasts(
            campaign.spec.forecast.as_ref(),
            &runs.iter().collect::<Vec<_>>(),
            prices,
        );
        let bills = crate::analysis::bill::run_bills(
            prices,
            runs.iter().enumerate().map(|(index, run)| (index + 1, run)),
        );
        let campaign_bills = crate::analysis::bill::campaign_bills(&bills);
        CampaignReport {
            campaign,
            runs,
            points,
            bottleneck,
            survey,
            forecasts,
            bills,
            campaign_bills,
        }
    }
}

/// The bottleneck table with the verdict, recommendations, warnings and failures under it.
pub fn render_table(report: &CampaignReport) -> String {
    let mut out = String::new();
    let verdict = &report.bottleneck;
    let width = verdict
        .rows
        .iter()
        .map(|row| row.label.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(26);
    let _ = writeln!(
        out,
        "{:<width$}{:>8} {:<10}{:>8}{:>6}{:>7}  {:<12}Valid?",
        "Test", "MB/s", "over", "spread", "CPU", "other", "Bottleneck?"
    );
    for row in &verdict.rows {
        let mb_per_s = row.figure();
        // What the figure measures: the steady window, or the whole run.
        let over = row.basis.map_or("-", |basis| basis.word());
        let spread = match (row.spread_pct, row.repeats) {
            (Some(spread), _) => format!("±{spread:.1}%"),
            (None, 1) => "once".to_string(),
            (None, _) => "-".to_string(),
        };
        let valid = row.valid_words().unwrap_or_else(|| "-".to_string());
        // The lab's own CPU, and other work on the machine beside it (never added in).
        let percent =
            |value: Option<f64>| value.map_or_else(|| "-".to_string(), |v| format!("{v:.0}%"));
        let (cpu, other) = (percent(row.lab_cpu_pct), percent(row.other_cpu_pct));
        let bottleneck = row.bottleneck_word();
        let _ = writeln!(
            out,
            "{:<width$}{mb_per_s:>8} {over:<10}{spread:>8}{cpu:>6}{other:>7}  {bottleneck:<11} {valid}",
            row.label
        );
    }
    let _ = writeln!(
        out,
        "Verdict: {}.",
        verdict.sentence().trim_end_matches('.')
    );
    let _ = writeln!(out, "{}", verdict.summary());
    if let Some(window) = verdict.backup_window_s {
        let _ = writeln!(out, "Backup window: {}", format_duration(window));
    }
    if let Some(restore) = verdict.restore_words() {
        let _ = writeln!(out, "{restore}");
    }
    for recommendation in verdict.recommendations() {
        let _ = writeln!(out, "  - {recommendation}");
    }
    let caveats = verdict.caveats();
    if !caveats.is_empty() {
        let _ = writeln!(out, "Flags that do not change it:");
        for caveat in &caveats {
            let _ = writeln!(out, "  - {caveat}");
        }
    }
    let flags = flag_lines(&report.runs);
    if !flags.is_empty() {
        let _ = writeln!(out, "Why runs are not valid:");
        for line in flags {
            let _ = writeln!(out, "  - {line}");
        }
    }
    for (line, own) in verdict.tools.iter().zip(&verdict.by_tool) {
        let _ = writeln!(out, "{}", tool_verdict_text(line, own));
    }
    if !verdict.tools.is_empty() {
        let _ = writeln!(out, "{}", tools_table(&verdict.tools));
    }
    if let Some(words) = requests_per_gib_words(&verdict.tools) {
        let _ = writeln!(out, "{words}");
    }
    let lives: Vec<crate::views::life::LifeView> = report
        .runs
        .iter()
        .enumerate()
        .filter_map(|(index, run)| crate::views::life::LifeView::of(index + 1, run))
        .collect();
    if !lives.is_empty() {
        let _ = write!(out, "{}", crate::views::life::life_text(&lives));
    }
    let locks = crate::views::lock::LockView::all(
        report
            .runs
            .iter()
            .enumerate()
            .map(|(index, run)| (index + 1, run)),
    );
    let _ = write!(out, "{}", crate::views::lock::lock_text(&locks));
    let requests = crate::views::requests::RequestsView::of(
        report
            .runs
            .iter()
            .enumerate()
            .map(|(index, run)| (index + 1, run)),
    );
    let _ = write!(out, "{}", crate::views::requests::requests_text(&requests));
    let _ = write!(
        out,
        "{}",
        crate::views::requests::bills_text(&crate::views::requests::BillsView::of(&report.bills))
    );
    let forecasts = crate::views::life::ForecastView::all(&report.forecasts);
    if !forecasts.is_empty() {
        let _ = write!(out, "{}", crate::views::life::forecast_text(&forecasts));
    }
    for run in &report.runs {
        for warning in &run.warnings {
            let _ = writeln!(out, "warning ({}): {warning}", run.test);
        }
        if run.status != RunStatus::Done {
            let error = run.error.as_deref().unwrap_or("no reason recorded");
            let _ = writeln!(out, "{} {:?}: {error}", run.test, run.status);
        }
    }
    out
}

/// One tool's own verdict in a comparison of several, as the CLI prints it under the table.
fn tool_verdict_text(line: &ToolLine, own: &Verdict) -> String {
    let mut out = format!("{}: {}.", line.label, own.sentence().trim_end_matches('.'));
    if let Some(restore) = own.restore_words() {
        out.push_str(&format!("\n  {restore}"));
    }
    for recommendation in own.recommendations() {
        out.push_str(&format!("\n  - {recommendation}"));
    }
    for caveat in own.caveats() {
        out.push_str(&format!("\n  - {caveat}"));
    }
    out
}

/// A tool's line of the comparison as every view writes it, so the CLI, the page,
/// report.html and `tools.csv` show the same numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCells {
    pub tool: String,
    pub backup: String,
    pub alone: String,
    pub incremental: String,
    pub restore: String,
    pub cpu_s_per_gib: String,
    pub peak_memory: String,
    pub stored: String,
    pub ratio: String,
    pub verified: String,
    pub limited_by: String,
    pub version: String,
}

impl ToolCells {
    /// The line's figures in words: MB/s to one decimal, sizes in binary units, `-` for none.
    pub fn of(line: &ToolLine) -> Self {
        use crate::size::format_bytes;
        let mb = |value: Option<f64>| value.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
        ToolCells {
            tool: line.label.clone(),
            backup: mb(line.backup_mb_s),
            alone: mb(line.ceiling_mb_s),
            incremental: mb(line.incremental_mb_s),
            restore: mb(line.restore_mb_s),
            cpu_s_per_gib: line
                .cpu_s_per_gib
                .map_or_else(|| "-".to_string(), |v| format!("{v:.2}")),
            peak_memory: line
                .peak_rss_bytes
                .map_or_else(|| "-".to_string(), format_bytes),
            stored: line
                .stored_bytes
                .map_or_else(|| "-".to_string(), format_bytes),
            ratio: line
                .reduction
                .map_or_else(|| "-".to_string(), |v| format!("{v:.2}")),
            verified: line.verified_words(),
            limited_by: line.limited_by(),
            version: line.version.clone().unwrap_or_else(|| "-".to_string()),
        }
    }
}

/// What the tools whose repository was in a bucket asked of it per GiB backed up, in one
/// sentence every view shows under the tools' table: each such tool's figure, and with two or
/// more, how many times fewer the fewest made than the most. `None` when no tool used a
/// bucket.
pub fn requests_per_gib_words(lines: &[ToolLine]) -> Option<String> {
    let counted: Vec<(&str, f64)> = lines
        .iter()
        .filter_map(|line| Some((line.label.as_str(), line.requests_per_gib?)))
        .collect();
    let each = counted
        .iter()
        .map(|(label, per_gib)| format!("{label} {per_gib:.1}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut words = format!(
        "Requests to the bucket per GiB backed up (the backup run's, its repository's creation \
         among them), as the lab's relay counted them: {each}."
    );
    let fewest = counted.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let most = counted.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    if counted.len() > 1 && fewest.1 > 0.0 && most.1 > fewest.1 {
        words.push_str(&format!(
            " {} makes {:.1}× fewer than {}.",
            fewest.0,
            most.1 / fewest.1,
            most.0
        ));
    }
    Some(words)
}

/// The tools side by side: backup, incremental and restore MB/s, CPU seconds per GiB, peak
/// memory, what the backup kept, the restore verified, and what limits each.
pub fn tools_table(lines: &[ToolLine]) -> String {
    let cells: Vec<ToolCells> = lines.iter().map(ToolCells::of).collect();
    let mut out = String::new();
    let width = cells
        .iter()
        .map(|cell| cell.tool.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(12);
    let verified_width = cells
        .iter()
        .map(|cell| cell.verified.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(10);
    let _ = writeln!(
        out,
        "{:<width$}{:>9}{:>9}{:>9}{:>9}{:>11}{:>11}{:>12}{:>7}  {:<verified_width$}Limited by",
        "Tool",
        "backup",
        "alone",
        "incr.",
        "restore",
        "CPU s/GiB",
        "peak mem",
        "stored",
        "ratio",
        "restore check"
    );
    for cell in &cells {
        let _ = writeln!(
            out,
            "{:<width$}{:>9}{:>9}{:>9}{:>9}{:>11}{:>11}{:>12}{:>7}  {:<verified_width$}{}",
            cell.tool,
            cell.backup,
            cell.alone,
            cell.incremental,
            cell.restore,
            cell.cpu_s_per_gib,
            cell.peak_memory,
            cell.stored,
            cell.ratio,
            cell.verified,
            cell.limited_by,
        );
    }
    let versions: Vec<String> = lines
        .iter()
        .filter_map(|line| {
            line.version
                .as_ref()
                .map(|version| format!("{}: {version}", line.label))
        })
        .collect();
    if !versions.is_empty() {
        let _ = write!(out, "Versions: {}", versions.join("; "));
    }
    out
}

/// One line per tool, as the comparison table gives it, with the figures unrounded beyond
/// the table's own rounding: `tools.csv`.
#[derive(Serialize)]
struct ToolCsvRow<'a> {
    campaign: &'a str,
    tool: &'a str,
    name: &'a str,
    version: Option<&'a str>,
    backup_mb_s: Option<f64>,
    alone_mb_s: Option<f64>,
    incremental_mb_s: Option<f64>,
    restore_mb_s: Option<f64>,
    cpu_s_per_gib: Option<f64>,
    peak_rss_bytes: Option<u64>,
    stored_bytes: Option<u64>,
    ratio: Option<f64>,
    requests_per_gib: Option<f64>,
    restore_verified: Option<bool>,
    verified_files: Option<u64>,
    verified_bytes: Option<u64>,
    limited_by: String,
    conclusive: bool,
}

/// The tools a campaign compared as CSV, one line per tool (and parameters).
pub fn tools_csv(campaign_id: &str, lines: &[ToolLine]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for line in lines {
        writer.serialize(ToolCsvRow {
            campaign: campaign_id,
            tool: &line.label,
            name: &line.tool.name,
            version: line.version.as_deref(),
            backup_mb_s: line.backup_mb_s,
            alone_mb_s: line.ceiling_mb_s,
            incremental_mb_s: line.incremental_mb_s,
            restore_mb_s: line.restore_mb_s,
            cpu_s_per_gib: line.cpu_s_per_gib,
            peak_rss_bytes: line.peak_rss_bytes,
            stored_bytes: line.stored_bytes,
            ratio: line.reduction,
            requests_per_gib: line.requests_per_gib,
            restore_verified: line.restore_verified,
            verified_files: line.verified_files,
            verified_bytes: line.verified_bytes,
            limited_by: line.limited_by(),
            conclusive: line.conclusive,
        })?;
    }
    super::csv_text(writer)
}

/// Each flag raised, once per test: its detail from the first run that raised it, and how
/// many of the test's runs did.
fn flag_lines(runs: &[RunResult]) -> Vec<String> {
    let mut seen: Vec<(crate::spec::TestKind, FlagCode, &str, usize)> = Vec::new();
    for run in runs {
        for flag in run.validity.iter().flat_map(|validity| &validity.flags) {
            match seen
                .iter_mut()
                .find(|(test, code, ..)| *test == run.test && *code == flag.code)
            {
                Some(entry) => entry.3 += 1,
                None => seen.push((run.test, flag.code, &flag.detail, 1)),
            }
        }
    }
    seen.into_iter()
        .map(|(test, code, detail, raised)| {
            let of = runs.iter().filter(|run| run.test == test).count();
            let share = if of > 1 {
                format!(" ({raised} of {of} runs)")
            } else {
                String::new()
            };
            format!("{test}: {}{share}: {detail}", code.id())
        })
        .collect()
}

/// A finished run's steady-state figure and validity in a few words, for progress lines.
pub fn validity_note(result: &RunResult) -> String {
    // A spread that was not measured is left out, never written as ±0.0 %.
    let cv = |steady: &crate::engine::steady::SteadyFigures| {
        steady
            .cv_pct
            .map_or_else(String::new, |cv| format!(" (±{cv:.1}% CV)"))
    };
    let steady = match &result.steady {
        Some(steady) if steady.steady && steady.flush_s > 0.0 => format!(
            "steady {:.1} MB/s over {:.1}–{:.1} s{} with the final {:.1} s flush charged",
            steady.mb_per_s,
            steady.from_s,
            steady.to_s,
            cv(steady),
            steady.flush_s
        ),
        Some(steady) if steady.steady => format!(
            "steady {:.1} MB/s over {:.1}–{:.1} s{}",
            steady.mb_per_s,
            steady.from_s,
            steady.to_s,
            cv(steady)
        ),
        _ => "no steady state".to_string(),
    };
    match &result.validity {
        Some(validity) if validity.valid => format!("{steady}; valid"),
        Some(validity) => format!("{steady}; NOT VALID: {}", validity.codes()),
        None => steady,
    }
}

/// One CSV row per run: every parameter and figure a column, in groups by where they come
/// from; the groups' fields, in order, are the columns.
#[derive(Serialize)]
struct CsvRow<'a>(
    RunColumns<'a>,
    ParamColumns,
    FigureColumns,
    StageColumns<'a>,
    RecordColumns<'a>,
    TapeColumns,
    NetworkColumns,
    S3Columns,
    DedupColumns,
    ToolColumns<'a>,
    LockColumns<'a>,
);

/// Which run of which campaign the row is, and how far it got.
#[derive(Serialize)]
struct RunColumns<'a> {
    campaign: &'a str,
    run: usize,
    test: &'a str,
    /// The backup tool a tool test ran, with its parameters (`restic compression=max`).
    tool: Option<String>,
    status: &'a str,
    attempts: i64,
}

impl<'a> RunColumns<'a> {
    /// The run's place in campaign `campaign_id`, its test and its phase.
    fn of(campaign_id: &'a str, run: &RunView<'_>) -> Self {
        Self {
            campaign: campaign_id,
            run: run.number,
            test: run.test.id(),
            tool: run
                .params
                .tool
                .as_ref()
                .map(crate::engine::tool::ToolRun::label),
            status: run.phase.id(),
            attempts: run.attempts,
        }
    }
}

/// The parameters the run was planned with.
#[derive(Serialize)]
struct ParamColumns {
    buffers: u32,
    block_size: u64,
    streams: u32,
    direct: bool,
    cold_cache: bool,
    fsync: bool,
    compress_ratio: f64,
    /// The ratio the target test's data was given when it matched the source's.
    data_compress_ratio: Option<f64>,
    size: Option<u64>,
    duration_s: Option<f64>,
    time_based: bool,
    until_steady: bool,
    /// Each stream's read rate cap (a what-if's), MB/s; empty without one.
    source_rate_mb_s: Option<f64>,
    /// An object store sweep's part size and parts in flight at this run.
    part_size: Option<u64>,
    concurrency: Option<u32>,
    /// Which full backup of a dataset with generations the run sent (1 = the first).
    generation: Option<u32>,
}

impl ParamColumns {
    /// The run's parameters, with the data ratio its result says the target test matched.
    fn of(params: &RunParams, result: Option<&RunResult>) -> Self {
        Self {
            buffers: params.buffers,
            block_size: params.block_size,
            streams: params.streams,
            direct: params.direct,
            cold_cache: params.cold_cache,
            fsync: params.fsync,
            compress_ratio: params.compress_ratio,
            data_compress_ratio: result.and_then(|r| r.data_compress_ratio),
            size: params.size,
            duration_s: params.duration_s,
            time_based: params.time_based,
            until_steady: params.until_steady,
            source_rate_mb_s: params.source_rate_mb_s,
            part_size: params.part_size,
            concurrency: params.concurrency,
            generation: params.generation,
        }
    }
}

/// What the run moved and how fast, whether it may be trusted, and its point's figure.
#[derive(Serialize)]
struct FigureColumns {
    bytes: Option<u64>,
    files: Option<u64>,
    seconds: Option<f64>,
    /// Bytes over the whole timed window, ramp and tail included.
    whole_run_mb_per_s: Option<f64>,
    /// Throughput over the steady window, and the window; empty when none was found.
    steady_mb_per_s: Option<f64>,
    steady_from_s: Option<f64>,
    steady_to_s: Option<f64>,
    steady_cv_pct: Option<f64>,
    /// Whether the run's figure may be trusted; its flags, comma-separated, when not.
    valid: Option<bool>,
    flags: Option<String>,
    /// The figure of the run's point (test and parameters), as every page shows it: the
    /// median MB/s of its valid runs; what it measures (`steady`, `whole_run`); and how many
    /// of the point's runs are valid.
    point_mb_per_s: String,
    point_basis: Option<&'static str>,
    point_valid: String,
}

impl FigureColumns {
    /// The run's own figures from its result, and its point's from `point`.
    fn of(result: Option<&RunResult>, point: Option<&Point>) -> Self {
        let steady = result.and_then(|r| r.steady);
        let validity = result.and_then(|r| r.validity.as_ref());
        Self {
            bytes: result.map(|r| r.bytes),
            files: result.map(|r| r.files),
            seconds: result.map(|r| r.seconds),
            whole_run_mb_per_s: result
                .filter(|r| r.test.measures_rate())
                .map(|r| r.mb_per_s),
            steady_mb_per_s: steady.filter(|s| s.steady).map(|s| s.mb_per_s),
            steady_from_s: steady.filter(|s| s.steady).map(|s| s.from_s),
            steady_to_s: steady.filter(|s| s.steady).map(|s| s.to_s),
            steady_cv_pct: steady.and_then(|s| s.cv_pct),
            valid: validity.map(|v| v.valid),
            flags: validity.map(|v| v.codes()),
            point_mb_per_s: point.map(Point::figure_words).unwrap_or_default(),
            point_basis: point
                .and_then(|point| point.figure.as_ref())
                .map(|figure| figure.basis.id()),
            point_valid: point.map(Point::valid_count).unwrap_or_default(),
        }
    }
}

/// Where the run's time went: the CPUs, the pipeline's stages, the I/O calls' latency and the
/// page cache.
#[derive(Serialize)]
struct StageColumns<'a> {
    process_cpu_pct: Option<f64>,
    system_cpu_pct: Option<f64>,
    reader_busy_pct: Option<f64>,
    reader_wait_pct: Option<f64>,
    reader_waits: Option<u64>,
    writer_busy_pct: Option<f64>,
    writer_wait_pct: Option<f64>,
    writer_waits: Option<u64>,
    latency_p50_us: Option<u64>,
    latency_p99_us: Option<u64>,
    latency_max_us: Option<u64>,
    latency_of: Option<&'a str>,
    cache_resident_pct: Option<f64>,
}

impl<'a> StageColumns<'a> {
    /// The result's CPU, stage, latency and cache figures.
    fn of(result: Option<&'a RunResult>) -> Self {
        Self {
            process_cpu_pct: result.map(|r| r.cpu.process_pct),
            system_cpu_pct: result.map(|r| r.cpu.system_pct),
            reader_busy_pct: result.map(|r| r.stages.reader_busy_pct),
            reader_wait_pct: result.map(|r| r.stages.reader_wait_pct),
            reader_waits: result.map(|r| r.stages.reader_waits),
            writer_busy_pct: result.map(|r| r.stages.writer_busy_pct),
            writer_wait_pct: result.map(|r| r.stages.writer_wait_pct),
            writer_waits: result.map(|r| r.stages.writer_waits),
            latency_p50_us: result.and_then(|r| r.latency_us).map(|l| l.p50),
            latency_p99_us: result.and_then(|r| r.latency_us).map(|l| l.p99),
            latency_max_us: result.and_then(|r| r.latency_us).map(|l| l.max),
            latency_of: result.and_then(|r| r.latency_of.as_deref()),
            cache_resident_pct: result.and_then(|r| r.cache_resident_pct),
        }
    }
}

/// When the run started and finished, and what it warned of or failed with.
#[derive(Serialize)]
struct RecordColumns<'a> {
    started: String,
    finished: String,
    warnings: String,
    error: Option<&'a str>,
}

impl<'a> RecordColumns<'a> {
    /// The run's times and its result's warnings and error.
    fn of(run: &RunView<'a>) -> Self {
        let result = run.result;
        Self {
            started: run.started_ms.map(format_ms).unwrap_or_default(),
            finished: run.finished_ms.map(format_ms).unwrap_or_default(),
            warnings: result.map(|r| r.warnings.join(" | ")).unwrap_or_default(),
            error: result.and_then(|r| r.error.as_deref()),
        }
    }
}

/// The emulated drives' own figures.
#[derive(Serialize)]
struct TapeColumns {
    emulated_tape: Option<String>,
    tape_drives: Option<u32>,
    tape_compression: Option<f64>,
    tape_streaming_s: Option<f64>,
    tape_repositioning_s: Option<f64>,
    tape_backhitches: Option<u64>,
    tape_mb_s: Option<f64>,
    end_of_tape: Option<bool>,
}

impl TapeColumns {
    /// The result's tape figures; empty for other targets.
    fn of(result: Option<&RunResult>) -> Self {
        let tape = result.and_then(|r| r.tape.as_ref());
        Self {
            emulated_tape: tape.map(|t| t.model.clone()),
            tape_drives: tape.map(|t| t.drives),
            tape_compression: tape.map(|t| t.compression),
            tape_streaming_s: tape.map(|t| t.streaming_s),
            tape_repositioning_s: tape.map(|t| t.repositioning_s),
            tape_backhitches: tape.map(|t| t.backhitches),
            tape_mb_s: tape.map(|t| t.tape_mb_s),
            end_of_tape: tape.map(|t| t.end_of_tape),
        }
    }
}

/// A network backup's clients and links.
#[derive(Serialize)]
struct NetworkColumns {
    clients: Option<u32>,
    emulated_link_mb_s: Option<f64>,
    partial: Option<bool>,
    /// Each client as `name:bytes:MB/s:status`, separated by spaces.
    client_figures: Option<String>,
}

impl NetworkColumns {
    /// The clients and links the run was planned with, and what each client sent.
    fn of(params: &RunParams, result: Option<&RunResult>) -> Self {
        Self {
            clients: params.clients,
            emulated_link_mb_s: params.link_mb_s,
            partial: result.filter(|r| r.clients.is_some()).map(|r| r.partial),
            client_figures: result.and_then(|r| r.clients.as_ref()).map(|clients| {
                clients
                    .iter()
                    .map(|c| format!("{}:{}:{}:{}", c.name, c.bytes, c.mb_per_s, c.status.id()))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        }
    }
}

/// An object store's requests: count, rate, and the latency of part uploads, completions and
/// ranged reads (ms), retries, throttling answers, time completing.
#[derive(Serialize)]
struct S3Columns {
    s3_requests: Option<u64>,
    s3_requests_per_s: Option<f64>,
    s3_part_p50_ms: Option<f64>,
    s3_part_p99_ms: Option<f64>,
    s3_part_max_ms: Option<f64>,
    s3_complete_p50_ms: Option<f64>,
    s3_complete_p99_ms: Option<f64>,
    s3_complete_max_ms: Option<f64>,
    s3_get_p50_ms: Option<f64>,
    s3_get_p99_ms: Option<f64>,
    s3_get_max_ms: Option<f64>,
    s3_retries: Option<u64>,
    s3_throttled: Option<u64>,
    s3_completing_s: Option<f64>,
}

impl S3Columns {
    /// The result's object store figures; empty for other targets.
    fn of(result: Option<&RunResult>) -> Self {
        let s3 = result.and_then(|r| r.s3.as_ref());
        let gets = s3.and_then(|s| s.ranged_gets.as_ref());
        Self {
            s3_requests: s3.map(|s| s.requests),
            s3_requests_per_s: s3.map(|s| s.requests_per_s),
            s3_part_p50_ms: s3.map(|s| s.part_uploads.p50_ms),
            s3_part_p99_ms: s3.map(|s| s.part_uploads.p99_ms),
            s3_part_max_ms: s3.map(|s| s.part_uploads.max_ms),
            s3_complete_p50_ms: s3.map(|s| s.completions.p50_ms),
            s3_complete_p99_ms: s3.map(|s| s.completions.p99_ms),
            s3_complete_max_ms: s3.map(|s| s.completions.max_ms),
            s3_get_p50_ms: gets.map(|g| g.p50_ms),
            s3_get_p99_ms: gets.map(|g| g.p99_ms),
            s3_get_max_ms: gets.map(|g| g.max_ms),
            s3_retries: s3.map(|s| s.retries),
            s3_throttled: s3.map(|s| s.throttled),
            s3_completing_s: s3.map(|s| s.completing_s),
        }
    }
}

/// A deduplicating store's figures: bytes sent and written, their ratio, and the rate at which
/// the written bytes reached the disk.
#[derive(Serialize)]
struct DedupColumns {
    dedup_logical_bytes: Option<u64>,
    dedup_stored_bytes: Option<u64>,
    dedup_ratio: Option<f64>,
    dedup_physical_mb_s: Option<f64>,
}

impl DedupColumns {
    /// The result's dedup store figures; empty for other targets.
    fn of(result: Option<&RunResult>) -> Self {
        let dedup = result.and_then(|r| r.dedup.as_ref());
        Self {
            dedup_logical_bytes: dedup.map(|d| d.logical_bytes),
            dedup_stored_bytes: dedup.map(|d| d.stored_bytes),
            dedup_ratio: dedup.map(|d| d.dedup_ratio),
            dedup_physical_mb_s: dedup.map(|d| d.physical_mb_s),
        }
    }
}

/// A tool run's own figures: its programs' version, CPU seconds per GiB of its process tree,
/// its peak memory, what its backup stored, and the files and bytes its restore was verified
/// on.
#[derive(Serialize)]
struct ToolColumns<'a> {
    tool_version: Option<&'a str>,
    tool_cpu_s_per_gib: Option<f64>,
    tool_peak_rss_bytes: Option<u64>,
    tool_stored_bytes: Option<u64>,
    tool_verified: Option<bool>,
    tool_verified_files: Option<u64>,
    tool_verified_bytes: Option<u64>,
}

impl<'a> ToolColumns<'a> {
    /// The result's tool figures; empty for runs without a tool.
    fn of(result: Option<&'a RunResult>) -> Self {
        let tool = result.and_then(|r| r.tool.as_ref());
        let verified = tool.and_then(|t| t.verified.as_ref());
        Self {
            tool_version: tool.map(|t| t.version.as_str()),
            tool_cpu_s_per_gib: tool
                .and_then(|t| t.cpu_s_per_gib())
                .map(|value| (value * 100.0).round() / 100.0),
            tool_peak_rss_bytes: tool.map(|t| t.peak_rss_bytes),
            tool_stored_bytes: tool.and_then(|t| t.stored_bytes),
            tool_verified: verified.map(|v| v.ok()),
            tool_verified_files: verified.map(|v| v.files),
            tool_verified_bytes: verified.map(|v| v.bytes),
        }
    }
}

/// The object-lock probe's answer: `immutable`, `not_immutable` or `cannot_tell`, and its
/// sentence; empty for every other run.
#[derive(Serialize)]
struct LockColumns<'a> {
    lock_verdict: Option<crate::engine::target::s3::lock::LockVerdict>,
    lock_answer: Option<&'a str>,
}

impl<'a> LockColumns<'a> {
    fn of(result: Option<&'a RunResult>) -> Self {
        let lock = result.and_then(|r| r.lock.as_ref());
        Self {
            lock_verdict: lock.map(|lock| lock.verdict),
            lock_answer: lock.map(|lock| lock.answer.as_str()),
        }
    }
}

/// The runs of a campaign as CSV, in plan order, numbered from 1 as the pages number them,
/// each with its point's figure from `points`.
pub fn runs_csv(
    campaign_id: &str,
    runs: &[RunView<'_>],
    points: &[Point],
) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for run in runs {
        let result = run.result;
        writer.serialize(CsvRow(
            RunColumns::of(campaign_id, run),
            ParamColumns::of(run.params, result),
            FigureColumns::of(result, point_of_run(points, run.number)),
            StageColumns::of(result),
            RecordColumns::of(run),
            TapeColumns::of(result),
            NetworkColumns::of(run.params, result),
            S3Columns::of(result),
            DedupColumns::of(result),
            ToolColumns::of(result),
            LockColumns::of(result),
        ))?;
    }
    super::csv_text(writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::steady::SteadyFigures;
    use crate::engine::test_kind::TestKind;

    /// A steady window whose spread was not measured is said without one on the progress line,
    /// never "±0.0 %"; a measured spread is said.
    #[test]
    fn a_spread_not_measured_is_left_out() {
        let mut result =
            RunResult::failed(TestKind::TapeWrite, RunParams::example(), String::new());
        result.steady = Some(SteadyFigures::example(None));
        let note = validity_note(&result);
        assert!(
            note.starts_with("steady 380.0 MB/s over 1.0–6.0 s"),
            "{note}"
        );
        assert!(!note.contains('±'), "{note}");
        result.steady = Some(SteadyFigures::example(Some(3.2)));
        assert!(validity_note(&result).contains("(±3.2% CV)"));
    }

    /// A tool's line as the verdict keeps it, with `requests_per_gib` where it used a bucket.
    fn line(name: &str, requests_per_gib: Option<f64>) -> ToolLine {
        serde_json::from_value(serde_json::json!({
            "tool": {"name": name},
            "label": name,
            "version": null,
            "backup_mb_s": 100.0,
            "ceiling_mb_s": null,
            "incremental_mb_s": null,
            "restore_mb_s": null,
            "cpu_s_per_gib": null,
            "peak_rss_bytes": null,
            "stored_bytes": null,
            "requests_per_gib": requests_per_gib,
            "reduction": null,
            "restore_verified": null,
            "component": null,
            "conclusive": false
        }))
        .expect("a tool line")
    }

    /// The tools' requests per GiB are said for the tools that used a bucket, and with two,
    /// how many times fewer the fewest made; nothing is said when none used one.
    #[test]
    fn the_tools_requests_per_gib_are_compared_where_they_used_a_bucket() {
        assert_eq!(requests_per_gib_words(&[line("borg", None)]), None);
        let one = requests_per_gib_words(&[line("restic", Some(412.3)), line("borg", None)]);
        assert_eq!(
            one.as_deref(),
            Some(
                "Requests to the bucket per GiB backed up (the backup run's, its repository's \
                 creation among them), as the lab's relay counted them: \
                 restic 412.3."
            )
        );
        let two =
            requests_per_gib_words(&[line("restic", Some(412.3)), line("mine", Some(1278.1))])
                .expect("two tools in buckets");
        assert!(
            two.ends_with("restic 412.3, mine 1278.1. restic makes 3.1× fewer than mine."),
            "{two}"
        );
    }
}
