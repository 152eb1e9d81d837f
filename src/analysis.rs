//! The bottleneck verdict: the full backup compared with the isolated ceilings, the way Data
//! Protector's method reads its Table 1. Pure functions over results.

use serde::{Deserialize, Serialize};

use crate::engine::result::{RunResult, RunStatus, StageFigures};
use crate::engine::survey::Survey;
use crate::spec::TestKind;

/// Share of a ceiling the full backup must reach for that ceiling to be the bottleneck.
const REACHED: f64 = 0.9;
/// Share of a stage's time spent waiting that marks the other side as behind.
const WAITING: f64 = 50.0;
/// System CPU above which the pipeline counts as CPU-bound.
const CPU_BOUND_PCT: f64 = 80.0;

/// A component that can limit a backup.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// The target device or directory (tape_write).
    Target,
    /// The source file systems (read_parallel).
    Source,
    /// The pipeline and the CPU that drives it (null_sink).
    Pipeline,
    /// One device holds both source and target, so reads and writes compete.
    SharedDevice,
    /// The network between the clients and the lab, with the clients' sending.
    Network,
}

impl Component {
    fn name(self) -> &'static str {
        match self {
            Component::Target => "the target",
            Component::Source => "the source",
            Component::Pipeline => "the pipeline (CPU and memory copies)",
            Component::SharedDevice => "the device shared by source and target",
            Component::Network => "the network",
        }
    }
}

/// Which side a run's own stage accounting says held it back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StageAttribution {
    /// `target`, `source` or `balanced`.
    pub limited_by: String,
    pub reason: String,
}

/// One row of the bottleneck table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerdictRow {
    pub test: TestKind,
    pub label: String,
    /// Best MB/s among the test's finished runs.
    pub mb_per_s: Option<f64>,
    /// Whole-system CPU % of that run.
    pub cpu_pct: Option<f64>,
    /// Yes on the limiting row; `None` on the full backup, which the others are compared with.
    pub bottleneck: Option<bool>,
    pub stage: Option<StageAttribution>,
}

/// The answer to "which component limits the backup, by how much, and what to change".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    pub rows: Vec<VerdictRow>,
    pub component: Option<Component>,
    pub verdict: String,
    pub summary: String,
    pub recommendations: Vec<String>,
    /// Source size ÷ full-backup speed.
    pub backup_window_s: Option<f64>,
}

/// The best finished run of each test, in table order.
pub fn best_runs(runs: &[RunResult]) -> Vec<(TestKind, Option<&RunResult>)> {
    let mut tests: Vec<TestKind> = runs.iter().map(|run| run.test).collect();
    tests.sort();
    tests.dedup();
    tests
        .into_iter()
        .map(|test| {
            let best = runs
                .iter()
                .filter(|run| {
                    run.test == test && run.status == RunStatus::Done && run.mb_per_s > 0.0
                })
                .max_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s));
            (test, best)
        })
        .collect()
}

/// What a pipeline run's stage accounting says about which side held it back.
pub fn stage_attribution(stages: &StageFigures) -> StageAttribution {
    let (reader, writer) = (stages.reader_wait_pct, stages.writer_wait_pct);
    if reader >= WAITING && reader > writer {
        StageAttribution {
            limited_by: "target".into(),
            reason: format!(
                "readers waited for empty buffers {reader:.0}% of the time ({} waits): the target side is behind",
                stages.reader_waits
            ),
        }
    } else if writer >= WAITING && writer > reader {
        StageAttribution {
            limited_by: "source".into(),
            reason: format!(
                "the writer waited for full buffers {writer:.0}% of the time ({} waits): the source side is behind",
                stages.writer_waits
            ),
        }
    } else {
        StageAttribution {
            limited_by: "balanced".into(),
            reason: format!(
                "readers waited {reader:.0}% and the writer {writer:.0}% of the time: neither side starved the other"
            ),
        }
    }
}

/// Builds the verdict from a campaign's runs and the survey of its source.
pub fn verdict(runs: &[RunResult], survey: Option<&Survey>) -> Verdict {
    let best = best_runs(runs);
    let figure = |test: TestKind| {
        best.iter()
            .find(|(kind, _)| *kind == test)
            .and_then(|(_, run)| run.map(|run| run.mb_per_s))
    };
    let (t, s1, sp, p, f) = (
        figure(TestKind::TapeWrite),
        figure(TestKind::ReadSingle),
        figure(TestKind::ReadParallel),
        figure(TestKind::NullSink),
        figure(TestKind::FullBackup),
    );
    let run_of = |test: TestKind| {
        best.iter()
            .find(|(kind, _)| *kind == test)
            .and_then(|(_, run)| *run)
    };

    let ceilings: Vec<(Component, TestKind, f64)> = [
        (Component::Target, TestKind::TapeWrite, t),
        (Component::Source, TestKind::ReadParallel, sp),
        (Component::Pipeline, TestKind::NullSink, p),
    ]
    .into_iter()
    .filter_map(|(component, test, value)| value.map(|value| (component, test, value)))
    .collect();
    let lowest = ceilings.iter().copied().min_by(|a, b| a.2.total_cmp(&b.2));
    let shares_device = survey.is_some_and(|survey| survey.shares_device);
    let full_stage = run_of(TestKind::FullBackup).map(|run| stage_attribution(&run.stages));

    let mut yes_row = None;
    let (component, verdict_text) = match (lowest, f) {
        (None, _) => (
            None,
            "not enough finished tests to name a bottleneck: run tape_write, read_parallel and null_sink"
                .to_string(),
        ),
        (Some((component, test, ceiling)), Some(full)) if full >= REACHED * ceiling => {
            yes_row = Some(test);
            let text = if full > ceiling / REACHED {
                format!(
                    "{} limits the backup, though the full backup ({full:.1} MB/s) outran its \
                     isolated test ({}: {ceiling:.1} MB/s): that figure is low, so repeat the \
                     campaign (repeat > 1) or use direct I/O to steady it",
                    capitalize(component.name()),
                    test.label().to_lowercase()
                )
            } else {
                format!(
                    "{} limits the backup: the full backup reached {full:.1} MB/s, {:.0}% of its \
                     isolated ceiling ({}: {ceiling:.1} MB/s)",
                    capitalize(component.name()),
                    100.0 * full / ceiling,
                    test.label().to_lowercase()
                )
            };
            (Some(component), text)
        }
        (Some((lowest_component, test, ceiling)), Some(full)) => {
            let component = if shares_device {
                Component::SharedDevice
            } else {
                match full_stage.as_ref().map(|stage| stage.limited_by.as_str()) {
                    Some("target") => Component::Target,
                    Some("source") => Component::Source,
                    _ => lowest_component,
                }
            };
            // A single component named: its isolated test is the row to act on.
            yes_row = ceilings
                .iter()
                .find(|(ceiling_component, ..)| *ceiling_component == component)
                .map(|(_, test, _)| *test);
            (
                Some(component),
                format!(
                    "{} limits the backup: the components slow each other down when combined. \
                     The full backup ran at {full:.1} MB/s, only {:.0}% of the lowest isolated \
                     ceiling ({}: {ceiling:.1} MB/s)",
                    capitalize(component.name()),
                    100.0 * full / ceiling,
                    test.label().to_lowercase()
                ),
            )
        }
        (Some((component, test, ceiling)), None) => {
            yes_row = Some(test);
            (
                Some(component),
                format!(
                    "{} has the lowest ceiling ({}: {ceiling:.1} MB/s); run full_backup to confirm \
                     it limits the backup",
                    capitalize(component.name()),
                    test.label().to_lowercase()
                ),
            )
        }
    };

    // A network backup: the end-to-end figure when no local full backup ran, a note beside it
    // otherwise.
    let mut network_advice = Vec::new();
    let mut network_component = None;
    let mut verdict_text = verdict_text;
    if let Some(run) = run_of(TestKind::NetworkBackup) {
        // The target's ceiling: its own test, else what emulated drives take at the
        // compression they achieved.
        let ceiling = t.map(|t| (t, "the target's ceiling")).or_else(|| {
            run.tape.as_ref().map(|tape| {
                (
                    tape.native_mb_s * tape.compression * f64::from(tape.drives),
                    "what the emulated drives take",
                )
            })
        });
        let network = network_verdict(run, ceiling);
        if f.is_none() {
            network_component = network.component;
            yes_row = network.yes_row;
            verdict_text = network.text;
        } else {
            network_advice.push(network.text);
        }
        network_advice.extend(network.advice);
    }

    // Emulated tape: name the drives, and blame a feed too slow to keep them streaming.
    let tape_run = run_of(TestKind::FullBackup)
        .or_else(|| run_of(TestKind::NetworkBackup).filter(|_| f.is_none()))
        .or_else(|| run_of(TestKind::TapeWrite))
        .filter(|run| run.tape.is_some());
    let drives_name = tape_run.and_then(|run| run.tape.as_ref()).map(drives_label);
    let mut component = network_component.or(component);
    let mut verdict_text = match (&drives_name, component) {
        (Some(drives), Some(Component::Target)) => {
            verdict_text.replacen("The target", &format!("The target ({drives})"), 1)
        }
        _ => verdict_text,
    };
    let mut shoe_shine_advice = None;
    if let Some(run) = tape_run
        && let Some(tape) = run.tape.as_ref().filter(|tape| tape.backhitches > 0)
    {
        // A network run's streams are every client's.
        let streams = run.params.streams.max(1) * run.params.clients.unwrap_or(1).max(1);
        let per_stream = run.mb_per_s / f64::from(streams);
        // To stream, every drive needs at least its lowest step times the compression.
        let needed = tape.min_mb_s * tape.compression * f64::from(tape.drives);
        let needed_streams = if per_stream > 0.0 {
            (needed / per_stream).ceil() as u64
        } else {
            0
        };
        let wall = tape.streaming_s + tape.repositioning_s + tape.idle_s;
        let repositioning_pct = if wall > 0.0 {
            100.0 * tape.repositioning_s / wall
        } else {
            0.0
        };
        component = Some(Component::Source);
        yes_row = [
            TestKind::ReadParallel,
            TestKind::ReadSingle,
            TestKind::NullSink,
        ]
        .into_iter()
        .find(|test| run_of(*test).is_some());
        verdict_text = format!(
            "The feed limits the backup: the {} {} ({} backhitches, repositioning {:.0}% of the \
             time) because data arrives at {:.1} MB/s, below the {:.1} MB/s needed to keep \
             streaming (lowest speed-matching step {:.0} MB/s × {:.2}:1 compression{})",
            drives_name.clone().unwrap_or_default(),
            if tape.drives == 1 {
                "shoe-shines"
            } else {
                "shoe-shine"
            },
            tape.backhitches,
            repositioning_pct,
            run.mb_per_s,
            needed,
            tape.min_mb_s,
            tape.compression,
            if tape.drives > 1 {
                format!(" × {} drives", tape.drives)
            } else {
                String::new()
            }
        );
        let fewer = if tape.drives > 1 {
            format!(
                "; fewer drives also help, since each one needs {:.1} MB/s",
                tape.min_mb_s * tape.compression
            )
        } else {
            String::new()
        };
        shoe_shine_advice = Some(format!(
            "Feed the drive{} at least {needed:.1} MB/s to keep {} streaming: {needed_streams} \
             streams at the measured {per_stream:.1} MB/s per stream, or faster streams{fewer}.",
            if tape.drives > 1 { "s" } else { "" },
            if tape.drives > 1 { "them" } else { "it" },
        ));
    }

    let rows = best
        .iter()
        .map(|(test, run)| VerdictRow {
            test: *test,
            label: match (run.and_then(|run| run.tape.as_ref()), test) {
                (
                    Some(tape),
                    TestKind::TapeWrite | TestKind::FullBackup | TestKind::NetworkBackup,
                ) => {
                    format!("{} ({})", test.label(), drives_label(tape))
                }
                _ => test.label().to_string(),
            },
            mb_per_s: run.map(|run| run.mb_per_s),
            cpu_pct: run.map(|run| run.cpu.system_pct),
            bottleneck: (*test != TestKind::FullBackup).then_some(yes_row == Some(*test)),
            stage: run
                .filter(|run| {
                    matches!(
                        run.test,
                        TestKind::NullSink
                            | TestKind::FullBackup
                            | TestKind::TapeWrite
                            | TestKind::NetworkBackup
                    )
                })
                .map(|run| stage_attribution(&run.stages)),
        })
        .collect();

    let mut recommendations = Vec::new();
    recommendations.extend(shoe_shine_advice);
    recommendations.extend(network_advice);
    if let (Some(s1), Some(t)) = (s1, t)
        && s1 < t
    {
        let streams = (t / s1).ceil().max(2.0);
        recommendations.push(format!(
            "One stream reads {s1:.1} MB/s but the target takes {t:.1} MB/s: one stream cannot keep \
             the target busy; back up with at least {streams:.0} parallel streams."
        ));
    }
    if let (Some(sp), Some(t)) = (sp, t)
        && sp < t
    {
        let streams = run_of(TestKind::ReadParallel).map_or(0, |run| run.params.streams);
        recommendations.push(format!(
            "The source delivers {sp:.1} MB/s with {streams} streams, less than the target's \
             {t:.1} MB/s: the backup is source-bound; spread it over more file systems or faster \
             disks."
        ));
    }
    if let (Some((Component::Target, _, t)), Some(full)) = (lowest, f)
        && full >= REACHED * t
        && full <= t / REACHED
    {
        recommendations.push(format!(
            "Balanced: the target streams at full speed ({full:.1} of {t:.1} MB/s); only a faster \
             target or a second one raises the figure."
        ));
    }
    if let Some(run) = run_of(TestKind::NullSink)
        && run.cpu.system_pct >= CPU_BOUND_PCT
    {
        recommendations.push(format!(
            "Backup to null kept the CPUs {:.0}% busy: the pipeline is CPU-bound; larger blocks \
             cut per-block overhead, and compression or encryption would slow it further.",
            run.cpu.system_pct
        ));
    }
    if let (Some(p), Some(sp)) = (p, sp)
        && p < 0.8 * sp
    {
        recommendations.push(format!(
            "The pipeline ({p:.1} MB/s to null) is slower than reading alone ({sp:.1} MB/s): try \
             more buffers or larger blocks (e.g. 32 × 256K)."
        ));
    }
    if let Some(run) = run_of(TestKind::FullBackup) {
        let stages = &run.stages;
        if stages.reader_wait_pct >= WAITING {
            recommendations.push(format!(
                "In the full backup the readers waited for empty buffers {:.0}% of the time: the \
                 target side is behind, so more buffers will not help.",
                stages.reader_wait_pct
            ));
        } else if stages.writer_wait_pct >= WAITING {
            recommendations.push(format!(
                "In the full backup the writer waited for full buffers {:.0}% of the time: the \
                 source side is behind; add streams if read_parallel is faster than the full backup.",
                stages.writer_wait_pct
            ));
        }
    }
    if component == Some(Component::SharedDevice) {
        recommendations.push(
            "Source and target are on the same device, so the backup's reads and writes compete: \
             put the target on a separate device."
                .to_string(),
        );
    }
    if runs.iter().any(|run| {
        run.warnings
            .iter()
            .any(|warning| warning.contains("page cache"))
    }) {
        recommendations.push(
            "Some read figures were served from the page cache: set cold_cache (or direct) to \
             measure the disks."
                .to_string(),
        );
    }

    let backup_window_s = match (f, survey) {
        (Some(full), Some(survey)) if full > 0.0 && survey.source_bytes > 0 => {
            Some((survey.source_bytes as f64 / (full * 1e6) * 10.0).round() / 10.0)
        }
        _ => None,
    };
    let summary = summary(&best, f, survey, backup_window_s);
    Verdict {
        rows,
        component,
        verdict: verdict_text,
        summary,
        recommendations,
        backup_window_s,
    }
}

/// What a network backup's best run says: which side held it back, and what to change.
struct NetworkVerdict {
    component: Option<Component>,
    yes_row: Option<TestKind>,
    text: String,
    advice: Vec<String>,
}

fn network_verdict(run: &RunResult, target_ceiling: Option<(f64, &str)>) -> NetworkVerdict {
    let mut verdict = network_limit(run, target_ceiling);
    let failed: Vec<&str> = run
        .clients
        .iter()
        .flatten()
        .filter(|client| client.status == crate::engine::result::ClientStatus::Failed)
        .map(|client| client.name.as_str())
        .collect();
    if !failed.is_empty() {
        verdict.advice.push(format!(
            "The figure is partial: {} failed during the run, so fewer clients sent than asked.",
            failed.join(", ")
        ));
    }
    verdict
}

/// Which side held a network run back, and the advice that follows from it.
fn network_limit(run: &RunResult, target_ceiling: Option<(f64, &str)>) -> NetworkVerdict {
    let n = run.mb_per_s;
    let clients = run.params.clients.unwrap_or(1);
    let streams = run.params.streams;
    let shape = format!(
        "{clients} client{} × {streams} stream{}",
        if clients == 1 { "" } else { "s" },
        if streams == 1 { "" } else { "s" }
    );
    let stage = stage_attribution(&run.stages);
    let link_total = run.params.link_mb_s.map(|link| link * f64::from(clients));
    let mut advice = Vec::new();
    let target_named = match target_ceiling {
        Some((t, _)) => n >= REACHED * t,
        None => stage.limited_by == "target",
    };
    if target_ceiling.is_none() && link_total.is_none() && stage.limited_by == "balanced" {
        return NetworkVerdict {
            component: None,
            yes_row: None,
            text: format!(
                "Neither the network nor the target held this network backup back \
                 ({n:.1} MB/s from {shape}): {}; run tape_write to know the target's ceiling",
                stage.reason
            ),
            advice,
        };
    }
    if target_named {
        let text = match target_ceiling {
            Some((t, what)) => format!(
                "The target limits the network backup: {shape} delivered {n:.1} MB/s, {:.0}% of \
             {what} ({t:.1} MB/s)",
                100.0 * n / t
            ),
            None => format!(
                "The target limits the network backup ({n:.1} MB/s from {shape}): {}",
                stage.reason
            ),
        };
        advice.push(
            "The network delivers what the target takes: more clients or streams will not raise \
             the figure; a faster target, or a second drive, will."
                .to_string(),
        );
        return NetworkVerdict {
            component: Some(Component::Target),
            yes_row: Some(TestKind::TapeWrite),
            text,
            advice,
        };
    }
    let mut text = match (link_total, target_ceiling) {
        (Some(links), _) if n >= REACHED * links => format!(
            "The network limits the backup: {shape} delivered {n:.1} MB/s, {:.0}% of what the \
             emulated links carry ({} × {:.1} MB/s = {links:.1} MB/s)",
            100.0 * n / links,
            clients,
            links / f64::from(clients)
        ),
        (_, Some((t, what))) => format!(
            "The network limits the backup: {shape} delivered {n:.1} MB/s, only {:.0}% of \
             {what} ({t:.1} MB/s)",
            100.0 * n / t
        ),
        (_, None) => format!("The network limits the backup: {shape} delivered {n:.1} MB/s"),
    };
    if stage.limited_by == "source" {
        text.push_str(&format!(
            "; the writer waited for data from the network {:.0}% of the time",
            run.stages.writer_wait_pct
        ));
    }
    if let Some(links) = link_total {
        advice.push(format!(
            "Each client's link carries {:.1} MB/s, so {clients} clients deliver at most \
             {links:.1} MB/s: add clients or faster links.",
            links / f64::from(clients)
        ));
    } else {
        advice.push(format!(
            "{shape} could not fill the target: add clients or streams per client, or check \
             the links between the clients and the lab (seed 000's servers were fed by six to \
             eight clients with two streams each)."
        ));
    }
    NetworkVerdict {
        component: Some(Component::Network),
        yes_row: Some(TestKind::NetworkBackup),
        text,
        advice,
    }
}

fn summary(
    best: &[(TestKind, Option<&RunResult>)],
    full: Option<f64>,
    survey: Option<&Survey>,
    window: Option<f64>,
) -> String {
    let network = best
        .iter()
        .find(|(test, _)| *test == TestKind::NetworkBackup)
        .and_then(|(_, run)| *run);
    let figures: Vec<String> = best
        .iter()
        .filter(|(test, _)| !matches!(test, TestKind::FullBackup | TestKind::NetworkBackup))
        .filter_map(|(test, run)| {
            run.map(|run| format!("{} {:.1}", test.label().to_lowercase(), run.mb_per_s))
        })
        .collect();
    let mut text = match (full, network) {
        (Some(full), _) => format!("Full backup {full:.1} MB/s"),
        (None, Some(_)) => String::new(),
        (None, None) => "No full backup".to_string(),
    };
    if let Some(run) = network {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&format!(
            "network backup {:.1} MB/s from {} client(s) × {} stream(s)",
            run.mb_per_s,
            run.params.clients.unwrap_or(1),
            run.params.streams
        ));
        if full.is_none() {
            text = capitalize(&text);
        }
    }
    if !figures.is_empty() {
        text.push_str(&format!("; ceilings in MB/s: {}", figures.join(", ")));
    }
    text.push('.');
    if let (Some(window), Some(survey)) = (window, survey) {
        text.push_str(&format!(
            " Backing up {:.2} GB takes about {}.",
            survey.source_bytes as f64 / 1e9,
            format_duration(window)
        ));
    }
    text
}

/// Seconds as `1h 02m`, `3m 20s` or `12.3 s`.
pub fn format_duration(seconds: f64) -> String {
    if seconds >= 3600.0 {
        let minutes = (seconds / 60.0).round() as u64;
        format!("{}h {:02}m", minutes / 60, minutes % 60)
    } else if seconds >= 60.0 {
        let whole = seconds.round() as u64;
        format!("{}m {:02}s", whole / 60, whole % 60)
    } else {
        format!("{seconds:.1} s")
    }
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// "2 emulated LTO-4 drives": how a verdict names emulated tape.
fn drives_label(tape: &crate::engine::result::TapeFigures) -> String {
    if tape.drives == 1 {
        format!("emulated {} drive", tape.model)
    } else {
        format!("{} emulated {} drives", tape.drives, tape.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::result::CpuFigures;
    use crate::spec::RunParams;

    fn run(test: TestKind, mb_per_s: f64, cpu: f64) -> RunResult {
        RunResult {
            test,
            params: RunParams {
                buffers: 32,
                block_size: 256 << 10,
                streams: 2,
                direct: false,
                cold_cache: true,
                fsync: true,
                compress_ratio: 2.0,
                size: None,
                duration_s: None,
                source_rate_mb_s: None,
                clients: None,
                link_mb_s: None,
            },
            status: RunStatus::Done,
            bytes: (mb_per_s * 1e6) as u64,
            files: 1,
            seconds: 1.0,
            mb_per_s,
            cpu: CpuFigures {
                process_pct: cpu,
                system_pct: cpu,
            },
            stages: StageFigures::default(),
            latency_us: None,
            latency_of: None,
            cache_resident_pct: None,
            samples: Vec::new(),
            warnings: Vec::new(),
            error: None,
            tape: None,
            clients: None,
            partial: false,
        }
    }

    fn network(mb_per_s: f64, clients: u32, link: Option<f64>, writer_wait: f64) -> RunResult {
        let mut result = run(TestKind::NetworkBackup, mb_per_s, 10.0);
        result.params.clients = Some(clients);
        result.params.link_mb_s = link;
        result.stages.writer_wait_pct = writer_wait;
        result
    }

    #[test]
    fn a_network_backup_below_the_target_blames_the_network() {
        let runs = vec![
            run(TestKind::TapeWrite, 240.0, 3.0),
            network(117.0, 1, None, 85.0),
        ];
        let verdict = verdict(&runs, None);
        assert_eq!(verdict.component, Some(Component::Network));
        assert!(
            verdict
                .verdict
                .starts_with("The network limits the backup: 1 client × 2 streams delivered 117.0"),
            "{}",
            verdict.verdict
        );
        let row = verdict
            .rows
            .iter()
            .find(|row| row.test == TestKind::NetworkBackup)
            .expect("row");
        assert_eq!(row.bottleneck, Some(true));
    }

    #[test]
    fn emulated_links_and_a_full_target_are_told_apart() {
        let capped = verdict(&[network(178.0, 3, Some(60.0), 80.0)], None);
        assert_eq!(capped.component, Some(Component::Network));
        assert!(
            capped.verdict.contains("emulated links"),
            "{}",
            capped.verdict
        );
        assert!(capped.recommendations[0].contains("180.0 MB/s"));

        let full = verdict(
            &[
                run(TestKind::TapeWrite, 240.0, 3.0),
                network(231.0, 6, None, 5.0),
            ],
            None,
        );
        assert_eq!(full.component, Some(Component::Target));
        assert!(
            full.verdict
                .starts_with("The target limits the network backup")
        );
    }

    /// Table 1 of the Data Protector paper (Windows): the tape is the bottleneck.
    fn table_one() -> Vec<RunResult> {
        vec![
            run(TestKind::TapeWrite, 154.0, 3.0),
            run(TestKind::ReadSingle, 105.3, 5.0),
            run(TestKind::ReadParallel, 262.2, 9.0),
            run(TestKind::NullSink, 197.0, 18.0),
            run(TestKind::FullBackup, 151.7, 13.0),
        ]
    }

    #[test]
    fn table_one_names_the_tape() {
        let survey = Survey {
            source_bytes: 1_517_000_000,
            source_files: 10,
            shares_device: false,
        };
        let verdict = verdict(&table_one(), Some(&survey));
        assert_eq!(verdict.component, Some(Component::Target));
        let yes: Vec<TestKind> = verdict
            .rows
            .iter()
            .filter(|row| row.bottleneck == Some(true))
            .map(|row| row.test)
            .collect();
        assert_eq!(yes, vec![TestKind::TapeWrite]);
        assert_eq!(verdict.rows[4].bottleneck, None);
        assert!(
            verdict.verdict.starts_with("The target limits the backup"),
            "{}",
            verdict.verdict
        );
        assert!(verdict.recommendations[0].contains("one stream cannot keep the target busy"));
        assert!(
            verdict
                .recommendations
                .iter()
                .any(|r| r.starts_with("Balanced"))
        );
        assert_eq!(verdict.backup_window_s, Some(10.0));
    }

    #[test]
    fn a_slow_full_backup_is_interference() {
        let mut runs = table_one();
        runs[4].mb_per_s = 60.0;
        let survey = Survey {
            source_bytes: 1,
            source_files: 1,
            shares_device: true,
        };
        let verdict = verdict(&runs, Some(&survey));
        assert_eq!(verdict.component, Some(Component::SharedDevice));
        assert!(verdict.rows.iter().all(|row| row.bottleneck != Some(true)));
        assert!(verdict.verdict.contains("slow each other down"));
    }

    #[test]
    fn interference_on_separate_devices_marks_the_named_component() {
        let mut runs = table_one();
        runs[4].mb_per_s = 60.0;
        runs[4].stages.writer_wait_pct = 95.0;
        runs[4].stages.writer_waits = 100;
        let survey = Survey {
            source_bytes: 1,
            source_files: 1,
            shares_device: false,
        };
        let verdict = verdict(&runs, Some(&survey));
        assert_eq!(
            verdict.component,
            Some(Component::Source),
            "{}",
            verdict.verdict
        );
        let yes: Vec<TestKind> = verdict
            .rows
            .iter()
            .filter(|row| row.bottleneck == Some(true))
            .map(|row| row.test)
            .collect();
        assert_eq!(yes, vec![TestKind::ReadParallel]);
    }

    #[test]
    fn a_slow_source_is_the_bottleneck() {
        let mut runs = table_one();
        runs[2].mb_per_s = 120.0;
        runs[4].mb_per_s = 118.0;
        let verdict = verdict(&runs, None);
        assert_eq!(verdict.component, Some(Component::Source));
        assert!(
            verdict
                .recommendations
                .iter()
                .any(|r| r.contains("source-bound"))
        );
    }

    #[test]
    fn stage_accounting_names_the_side_behind() {
        let mut stages = StageFigures {
            reader_wait_pct: 80.0,
            reader_waits: 400,
            ..StageFigures::default()
        };
        assert_eq!(stage_attribution(&stages).limited_by, "target");
        stages.reader_wait_pct = 1.0;
        stages.writer_wait_pct = 70.0;
        assert_eq!(stage_attribution(&stages).limited_by, "source");
        stages.writer_wait_pct = 10.0;
        assert_eq!(stage_attribution(&stages).limited_by, "balanced");
    }

    #[test]
    fn failed_runs_do_not_count() {
        let mut runs = table_one();
        runs[0].status = RunStatus::Failed;
        let verdict = verdict(&runs, None);
        assert_eq!(verdict.rows[0].mb_per_s, None);
        assert_ne!(verdict.component, Some(Component::Target));
    }
}
