//! The verdict in words: every sentence a page, table, report or JSON answer shows is written
//! here, from the typed finding and advice, and nowhere else; nothing written here is kept.

use super::findings::{
    AboveCeiling, Advice, Ceiling, Component, Drives, Finding, Interference, NetworkFinding,
    NetworkLimit, OutranCause, Redo, Shape, ShoeShine, Side, TargetCeilingFrom, ToolOutcome,
};
use super::verdict::{RestoreLine, TargetName, Verdict};
use super::weight::{Basis, OpenClaim, Weight};
use crate::duration::format_duration;
use crate::engine::result::StageFigures;
use crate::engine::validity::FlagCode;
use crate::size::format_bytes;
use crate::spec::TestKind;

fn component(component: Component, target: Option<&str>) -> String {
    match (component, target) {
        (Component::Target, Some(target)) => format!("the target ({target})"),
        (Component::Target, None) => "the target".to_string(),
        (Component::Source, _) => "the source".to_string(),
        (Component::Pipeline, _) => "the pipeline (CPU and memory copies)".to_string(),
        (Component::SharedDevice, _) => "the device shared by source and target".to_string(),
        (Component::Network, _) => "the network".to_string(),
        (Component::Tool, _) => "the backup tool".to_string(),
    }
}

/// The component a verdict names, in a word or two: what the list shows.
pub fn component_word(component: Component) -> &'static str {
    match component {
        Component::Target => "target",
        Component::Source => "source",
        Component::Pipeline => "pipeline",
        Component::SharedDevice => "shared device",
        Component::Network => "network",
        Component::Tool => "tool",
    }
}

fn ceiling(ceiling: &Ceiling) -> String {
    format!(
        "{}: {:.1} MB/s",
        ceiling.test.label().to_lowercase(),
        ceiling.mb_per_s
    )
}

/// "2 emulated LTO-4 drives": how a verdict names emulated tape.
pub fn drives(drives: &Drives) -> String {
    if drives.count == 1 {
        format!("emulated {} drive", drives.model)
    } else {
        format!("{} emulated {} drives", drives.count, drives.model)
    }
}

/// A pipeline run's stage accounting in words.
pub fn stage(side: Side, stages: &StageFigures) -> String {
    let (reader, writer) = (stages.reader_wait_pct, stages.writer_wait_pct);
    match side {
        Side::Target => format!(
            "readers waited for empty buffers {reader:.0}% of the time ({} waits): the target \
             side is behind",
            stages.reader_waits
        ),
        Side::Source => format!(
            "the writer waited for full buffers {writer:.0}% of the time ({} waits): the source \
             side is behind",
            stages.writer_waits
        ),
        Side::Balanced => format!(
            "readers waited {reader:.0}% and the writer {writer:.0}% of the time: neither side \
             waited for the other most of the time"
        ),
    }
}

/// The finding as the verdict's sentence; an inconclusive one says so first, and whether runs
/// must be redone. `target` names what the target is when it is more than a path: the emulated
/// drives, the object store.
pub fn finding(
    finding: &Finding,
    conclusive: bool,
    redo: bool,
    target: Option<&str>,
    tool: Option<&str>,
) -> String {
    let names = Names { target, tool };
    let text = match finding {
        Finding::Incomplete {
            missing,
            lives: true,
            ..
        } => format!(
            "A backup's life names no bottleneck: its nights, its maintenance and its verified \
             restores, below, are its answer. To name what limits the backup, run {} beside it",
            and_list(missing.iter().map(|test| test.name()))
        ),
        Finding::Incomplete {
            missing,
            probed: true,
            ..
        } => format!(
            "The object-lock probe names no bottleneck: its answer, below, is whether the bucket \
             would keep a backup. To name what limits the backup, run {} beside it",
            and_list(missing.iter().map(|test| test.name()))
        ),
        Finding::Incomplete { missing, .. } => format!(
            "Not enough finished tests to name a bottleneck: run {}",
            and_list(missing.iter().map(|test| test.name()))
        ),
        Finding::Limits {
            ceiling,
            full_mb_s,
            above,
        } => limits(&names, ceiling, *full_mb_s, above),
        Finding::FullOutranCeiling {
            ceiling,
            full_mb_s,
            causes,
        } => full_outran_ceiling(&names, ceiling, *full_mb_s, causes),
        Finding::Interference {
            component,
            lowest,
            full_mb_s,
            evidence,
        } => interference(&names, *component, lowest, *full_mb_s, evidence),
        Finding::LowestCeiling { ceiling: lowest } => format!(
            "{} has the lowest ceiling ({}); run {} to confirm it limits the backup",
            capitalize(&names.component(lowest.component)),
            ceiling(lowest),
            names.backup()
        ),
        Finding::ShoeShine(shine) => shoe_shine(shine),
        Finding::Network(network) => network_finding(network),
        Finding::ToolsCompared { tools } => tools_compared(tools, target),
    };
    hedged(finding, text, conclusive, redo)
}

/// How a finding names what it judges: the target when it is more than a path, and the backup
/// tool when the campaign ran one (the backup is then the tool's, and so is the process).
struct Names<'a> {
    target: Option<&'a str>,
    tool: Option<&'a str>,
}

impl Names<'_> {
    /// The backup the finding judges: the full backup, or the tool's.
    fn backup(&self) -> String {
        self.tool.map_or_else(
            || "the full backup".to_string(),
            |tool| format!("{tool}'s backup"),
        )
    }

    /// A component as the finding names it: the tool by its own name.
    fn component(&self, named: Component) -> String {
        match (named, self.tool) {
            (Component::Tool, Some(tool)) => tool.to_string(),
            _ => component(named, self.target),
        }
    }
}

/// One component limits the backup: how close the backup came to its ceiling, and why it
/// ran above it when it did.
fn limits(names: &Names<'_>, limit: &Ceiling, full_mb_s: f64, above: &[AboveCeiling]) -> String {
    format!(
        "{} limits the backup: {} reached {full_mb_s:.1} MB/s, {:.0}% of its \
         isolated ceiling ({}){}",
        capitalize(&names.component(limit.component)),
        names.backup(),
        100.0 * full_mb_s / limit.mb_per_s,
        ceiling(limit),
        if above.is_empty() {
            String::new()
        } else {
            format!(
                "; it ran {:.1}% faster than that test: {}",
                100.0 * (full_mb_s / limit.mb_per_s - 1.0),
                above
                    .iter()
                    .map(above_ceiling)
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    )
}

/// The backup reached or passed an isolated ceiling, so that test missed what the backup met:
/// the causes that explain it.
fn full_outran_ceiling(
    names: &Names<'_>,
    limit: &Ceiling,
    full_mb_s: f64,
    causes: &[OutranCause],
) -> String {
    format!(
        "{} ({full_mb_s:.1} MB/s) {} the isolated test of {} \
         ({}), so that test did not measure what the backup met: {}",
        capitalize(&names.backup()),
        if full_mb_s > limit.mb_per_s {
            "ran faster than"
        } else {
            "reached"
        },
        names.component(limit.component),
        ceiling(limit),
        causes
            .iter()
            .map(outran_cause)
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// No one component limits the backup: how far below the lowest ceiling it ran, the evidence
/// of the components slowing each other, and where to look first.
fn interference(
    names: &Names<'_>,
    named: Component,
    lowest: &Ceiling,
    full_mb_s: f64,
    evidence: &Interference,
) -> String {
    format!(
        "No one component limits the backup: the components slow each other down when \
         combined. {} ran at {full_mb_s:.1} MB/s, only {:.0}% of the lowest isolated \
         ceiling ({}){}; where they meet, {} is the first place to look",
        capitalize(&names.backup()),
        100.0 * full_mb_s / lowest.mb_per_s,
        ceiling(lowest),
        match evidence {
            Interference::SharedDevice => "; source and target share one device".to_string(),
            Interference::Stages {
                side: Side::Target,
                wait_pct,
            } => format!("; its readers waited for the target {wait_pct:.0}% of the time"),
            Interference::Stages { wait_pct, .. } => {
                format!("; its writer waited for the source {wait_pct:.0}% of the time")
            }
            Interference::LowestCeiling => String::new(),
        },
        names.component(named)
    )
}

/// A finding's sentence as the verdict says it: as it is when conclusive, else said to be
/// inconclusive, and whether runs it rests on must be redone.
fn hedged(finding: &Finding, text: String, conclusive: bool, redo: bool) -> String {
    if conclusive || finding.answered_otherwise() {
        text
    } else if matches!(finding, Finding::Incomplete { .. }) {
        format!("Inconclusive. {text}")
    } else if !redo {
        format!("Inconclusive: {}", lower_first(&text))
    } else {
        format!(
            "Inconclusive: runs it rests on must be redone (see below). What they suggest: {}",
            lower_first(&text)
        )
    }
}

/// A comparison of tools in a sentence: each tool's backup and what limits it, by its own
/// verdict.
fn tools_compared(tools: &[ToolOutcome], target: Option<&str>) -> String {
    let each: Vec<String> = tools
        .iter()
        .map(|outcome| {
            let backup = outcome.backup_mb_s.map_or_else(
                || format!("{}'s backup (not measured)", outcome.tool),
                |mb_per_s| format!("{}'s backup ({mb_per_s:.1} MB/s)", outcome.tool),
            );
            let named = |named: Component| match named {
                Component::Tool => format!("{} itself", outcome.tool),
                other => component(other, target),
            };
            match (outcome.component, outcome.conclusive) {
                (Some(limit), true) if outcome.interference => format!(
                    "{backup} is held back by its components together, first at {}",
                    named(limit)
                ),
                (Some(limit), true) => format!("{backup} is limited by {}", named(limit)),
                (Some(limit), false) => {
                    format!(
                        "{backup} is not yet judged ({} is the candidate)",
                        named(limit)
                    )
                }
                (None, _) => format!("{backup} is not yet judged"),
            }
        })
        .collect();
    format!(
        "{} tools compared on the same data, each against its own ceiling and the shared \
         ones: {}",
        tools.len(),
        each.join("; ")
    )
}

fn above_ceiling(why: &AboveCeiling) -> String {
    match why {
        AboveCeiling::Compressibility {
            target_test,
            full_backup,
        } => format!(
            "the target test's data compressed {target_test:.2}:1 on the drive, the backup's \
             {full_backup:.2}:1"
        ),
        AboveCeiling::LowerBound { flush_s } => format!(
            "that test's figure is a lower bound, its final flush ({flush_s:.1} s) charged to it"
        ),
        AboveCeiling::Spread { spread_pct } => {
            format!("within their spread (±{spread_pct:.1}%)")
        }
        AboveCeiling::Unrepeated => "a gap that one run of each cannot tell from noise (repeat \
             the campaign to measure their spread)"
            .to_string(),
        AboveCeiling::Unexplained { spread_pct } => format!(
            "more than their spread (±{spread_pct:.1}%) and not explained by the data or a flush: \
             the target test may measure less than the target does (run it longer, or with \
             direct I/O)"
        ),
    }
}

fn outran_cause(cause: &OutranCause) -> String {
    match cause {
        OutranCause::Compressibility {
            target_test,
            full_backup,
        } => format!(
            "the target test's data compressed {target_test:.2}:1 on the drive, the source's \
             {full_backup:.2}:1, so the drive takes the source's data {} than that test says",
            if full_backup > target_test {
                "faster"
            } else {
                "slower"
            }
        ),
        OutranCause::InvalidCeiling { flags } => {
            format!("its runs are not valid ({})", flag_list(flags))
        }
        OutranCause::Spread { spread_pct } => {
            format!("its repeats differ by ±{spread_pct:.0}%, more than the gap")
        }
        OutranCause::Unexplained {
            emulated_target: true,
        } => "repeat the campaign with longer runs".to_string(),
        OutranCause::Unexplained {
            emulated_target: false,
        } => "repeat the campaign with longer runs, or with direct I/O".to_string(),
    }
}

fn shoe_shine(shine: &ShoeShine) -> String {
    format!(
        "The feed limits the backup: the {} {} ({} backhitches, repositioning {:.0}% of the time) \
         because data arrives at {:.1} MB/s, below the {:.1} MB/s needed to keep streaming \
         (lowest speed-matching step {:.0} MB/s × {:.2}:1 compression{})",
        drives(&shine.drives),
        if shine.drives.count == 1 {
            "shoe-shines"
        } else {
            "shoe-shine"
        },
        shine.backhitches,
        shine.repositioning_pct,
        shine.feed_mb_s,
        shine.needed_mb_s,
        shine.min_step_mb_s,
        shine.compression,
        if shine.drives.count > 1 {
            format!(" × {} drives", shine.drives.count)
        } else {
            String::new()
        }
    )
}

fn shape(shape: &Shape) -> String {
    format!(
        "{} client{} × {} stream{}",
        shape.clients,
        if shape.clients == 1 { "" } else { "s" },
        shape.streams,
        if shape.streams == 1 { "" } else { "s" }
    )
}

fn target_ceiling_from(from: TargetCeilingFrom) -> &'static str {
    match from {
        TargetCeilingFrom::TapeWriteTest => "the target's ceiling",
        TargetCeilingFrom::EmulatedDrives => "what the emulated drives take",
    }
}

fn network_finding(network: &NetworkFinding) -> String {
    let (n, shape) = (network.mb_per_s, shape(&network.shape));
    let mut text = match &network.limit {
        NetworkLimit::Undetermined {
            reader_wait_pct,
            writer_wait_pct,
        } => format!(
            "Neither the network nor the target held this network backup back ({n:.1} MB/s \
             from {shape}): readers waited {reader_wait_pct:.0}% and the writer \
             {writer_wait_pct:.0}% of the time; run tape_write to know the target's ceiling"
        ),
        NetworkLimit::Target {
            ceiling_mb_s: Some(t),
            from,
            ..
        } => format!(
            "The target limits the network backup: {shape} delivered {n:.1} MB/s, {:.0}% of {} \
             ({t:.1} MB/s)",
            100.0 * n / t,
            from.map_or("the target's ceiling", target_ceiling_from)
        ),
        NetworkLimit::Target {
            reader_wait_pct, ..
        } => format!(
            "The target limits the network backup ({n:.1} MB/s from {shape}): readers waited \
             for empty buffers {reader_wait_pct:.0}% of the time"
        ),
        NetworkLimit::Links {
            per_client_mb_s,
            total_mb_s,
        } => format!(
            "The network limits the backup: {shape} delivered {n:.1} MB/s, {:.0}% of what the \
             emulated links carry ({} × {per_client_mb_s:.1} MB/s = {total_mb_s:.1} MB/s)",
            100.0 * n / total_mb_s,
            network.shape.clients
        ),
        NetworkLimit::BelowTarget { ceiling_mb_s, from } => format!(
            "The network limits the backup: {shape} delivered {n:.1} MB/s, only {:.0}% of {} \
             ({ceiling_mb_s:.1} MB/s)",
            100.0 * n / ceiling_mb_s,
            target_ceiling_from(*from)
        ),
        NetworkLimit::Starved => {
            format!("The network limits the backup: {shape} delivered {n:.1} MB/s")
        }
    };
    if matches!(
        network.limit,
        NetworkLimit::Links { .. } | NetworkLimit::BelowTarget { .. } | NetworkLimit::Starved
    ) && network.writer_wait_pct >= super::WAITING
    {
        text.push_str(&format!(
            "; the writer waited for data from the network {:.0}% of the time",
            network.writer_wait_pct
        ));
    }
    text
}

fn flag_list(flags: &[FlagCode]) -> String {
    flags
        .iter()
        .map(|flag| flag.id())
        .collect::<Vec<_>>()
        .join(", ")
}

fn redo(redo: &Redo) -> String {
    let mut steps = Vec::new();
    if !redo.changes.is_empty() {
        let fields: Vec<String> = redo
            .changes
            .iter()
            .map(|change| format!("{} to {}", change.field, change.value))
            .collect();
        let flags: Vec<&str> = redo
            .changes
            .iter()
            .map(|change| change.cli.as_str())
            .collect();
        steps.push(format!(
            "set {} ({})",
            and_list(fields.iter().map(String::as_str)),
            flags.join(" ")
        ));
    }
    for flag in &redo.flags {
        let step = match flag {
            FlagCode::BusyMachine => "repeat it when the machine is idle",
            FlagCode::Unsteady if !redo.flags.contains(&FlagCode::BusyMachine) => {
                "keep other work off the machine and its disks"
            }
            FlagCode::SkippedData => {
                "make the source readable by the lab, or leave the unreadable parts out"
            }
            FlagCode::TooShort if redo.test.runs_tool() => {
                "back up a larger source (a tool's run is timed whole, and under a second its \
                 figure is mostly the tool's start-up)"
            }
            // No field cures it: a tree backed up into a dedup store is read once.
            FlagCode::DataSmallerThanRun if redo.changes.is_empty() => {
                "back up a larger source, one that lasts several seconds: a dedup store takes \
                 a tree once, since a second pass would be all duplicates"
            }
            _ => continue,
        };
        steps.push(step.to_string());
    }
    format!(
        "Redo {} ({}): {}.",
        redo.test.name(),
        flag_list(&redo.flags),
        steps.join("; ")
    )
}

/// One piece of advice as a sentence: one arm per kind of advice, each sentence written
/// beside the figures it says.
pub fn advice(advice: &Advice) -> String {
    match advice {
        Advice::Redo(r) => redo(r),
        Advice::ToolBound {
            tool,
            setting,
            params,
        } => tool_bound(tool, setting.as_ref(), params),
        Advice::FeedTheDrives {
            needed_mb_s,
            streams_needed,
            per_stream_mb_s,
            drives,
            per_drive_mb_s,
            full_speed,
        } => feed_the_drives(
            *needed_mb_s,
            *streams_needed,
            *per_stream_mb_s,
            (*drives, *per_drive_mb_s),
            *full_speed,
        ),
        Advice::ParallelStreams {
            single_mb_s,
            target_mb_s,
            streams,
        } => parallel_streams(*single_mb_s, *target_mb_s, *streams),
        Advice::SourceBound {
            source_mb_s,
            target_mb_s,
            streams,
        } => source_bound(*source_mb_s, *target_mb_s, *streams),
        Advice::TargetAtFullSpeed {
            full_mb_s,
            target_mb_s,
        } => target_at_full_speed(*full_mb_s, *target_mb_s),
        Advice::CpuBound { cpu_pct } => cpu_bound(*cpu_pct),
        Advice::PipelineSlowerThanReading {
            pipeline_mb_s,
            source_mb_s,
        } => pipeline_slower_than_reading(*pipeline_mb_s, *source_mb_s),
        Advice::ReadersWaited { wait_pct } => readers_waited(*wait_pct),
        Advice::WriterWaited { wait_pct } => writer_waited(*wait_pct),
        Advice::SeparateDevice => "Source and target are on the same device, so the backup's \
             reads and writes compete: put the target on a separate device."
            .to_string(),
        Advice::MatchCompressibility {
            target_test,
            full_backup,
        } => match_compressibility(*target_test, *full_backup),
        Advice::NetworkTargetFull => "The network delivers what the target takes: more clients \
             or streams will not raise the figure; a faster target, or a second drive, will."
            .to_string(),
        Advice::FasterLinks {
            per_client_mb_s,
            clients,
            total_mb_s,
        } => faster_links(*per_client_mb_s, *clients, *total_mb_s),
        Advice::MoreClients { shape } => more_clients(shape),
        Advice::PartialNetworkRun { failed } => format!(
            "The figure is partial: {} failed during the run, so fewer clients sent than asked.",
            failed.join(", ")
        ),
        Advice::LocalUnderTwiceNetwork {
            local_mb_s,
            network_mb_s,
            needed_mb_s,
        } => local_under_twice_network(*local_mb_s, *network_mb_s, *needed_mb_s),
    }
}

/// The drives shoe-shine for want of data: the rate and streams that keep them streaming.
/// `drives` is their count and what each one needs.
fn feed_the_drives(
    needed_mb_s: f64,
    streams_needed: u64,
    per_stream_mb_s: f64,
    (drives, per_drive_mb_s): (u32, f64),
    full_speed: Option<(f64, u64)>,
) -> String {
    let fewer = if drives > 1 {
        format!("; fewer drives also help, since each one needs {per_drive_mb_s:.1} MB/s")
    } else {
        String::new()
    };
    let full = full_speed.map_or_else(String::new, |(target_mb_s, streams)| {
        format!(
            " ({} for the target's full {target_mb_s:.1} MB/s)",
            counted(streams, "stream", "streams")
        )
    });
    format!(
        "Feed the drive{} at least {needed_mb_s:.1} MB/s to keep {} streaming: \
         {} at the measured {per_stream_mb_s:.1} MB/s per stream{full}, \
         or faster streams{fewer}.",
        if drives > 1 { "s" } else { "" },
        if drives > 1 { "them" } else { "it" },
        counted(streams_needed, "stream", "streams"),
    )
}

/// One stream cannot keep the target busy: how many it takes.
fn parallel_streams(single_mb_s: f64, target_mb_s: f64, streams: u32) -> String {
    format!(
        "One stream reads {single_mb_s:.1} MB/s but the target takes {target_mb_s:.1} MB/s: \
         one stream cannot keep the target busy; back up with at least {streams} parallel \
         streams."
    )
}

/// The source delivers less than the target takes, even with parallel streams.
fn source_bound(source_mb_s: f64, target_mb_s: f64, streams: u32) -> String {
    format!(
        "The source delivers {source_mb_s:.1} MB/s with {}, less than the target's \
         {target_mb_s:.1} MB/s: the backup is source-bound; spread it over more file \
         systems or faster disks.",
        counted(u64::from(streams), "stream", "streams")
    )
}

/// The backup already runs at the target's speed: only the target can raise it.
fn target_at_full_speed(full_mb_s: f64, target_mb_s: f64) -> String {
    format!(
        "The target streams at full speed ({full_mb_s:.1} of {target_mb_s:.1} MB/s): only a \
         faster target or a second one raises the figure."
    )
}

/// The pipeline kept the CPUs busy: what lightens it, and what would weigh on it more.
fn cpu_bound(cpu_pct: f64) -> String {
    format!(
        "Backup to null kept the CPUs {cpu_pct:.0}% busy: the pipeline is CPU-bound; larger \
         blocks cut per-block overhead, and compression or encryption would slow it further."
    )
}

/// The pipeline loses what the source delivers: buffers and blocks to try.
fn pipeline_slower_than_reading(pipeline_mb_s: f64, source_mb_s: f64) -> String {
    format!(
        "The pipeline ({pipeline_mb_s:.1} MB/s to null) is slower than reading alone \
         ({source_mb_s:.1} MB/s): try more buffers or larger blocks (e.g. 32 × 256K)."
    )
}

/// The full backup's readers waited for the target: buffers are not what it lacks.
fn readers_waited(wait_pct: f64) -> String {
    format!(
        "In the full backup the readers waited for empty buffers {wait_pct:.0}% of the time: \
         the target side is behind, so more buffers will not help."
    )
}

/// The full backup's writer waited for the source: streams may help.
fn writer_waited(wait_pct: f64) -> String {
    format!(
        "In the full backup the writer waited for full buffers {wait_pct:.0}% of the time: \
         the source side is behind; add streams if read_parallel is faster than the full \
         backup."
    )
}

/// The target test wrote data unlike the source's: the ratio that makes them alike.
fn match_compressibility(target_test: f64, full_backup: f64) -> String {
    format!(
        "The target test wrote data that compressed {target_test:.2}:1, the source \
         {full_backup:.2}:1: set compress_ratio to {full_backup:.1} so the target's ceiling \
         is measured on data like the source's."
    )
}

/// The emulated links carry no more: more clients or faster links.
fn faster_links(per_client_mb_s: f64, clients: u32, total_mb_s: f64) -> String {
    format!(
        "Each client's link carries {per_client_mb_s:.1} MB/s, so {clients} clients deliver \
         at most {total_mb_s:.1} MB/s: add clients or faster links."
    )
}

/// The clients could not fill the target: more of them, or a look at the links.
fn more_clients(clients: &Shape) -> String {
    format!(
        "{} could not fill the target: add clients or streams per client, or check the links \
         between the clients and the lab (seed 000's servers were fed by six to eight \
         clients with two streams each).",
        shape(clients)
    )
}

/// The lab's own writes leave a backup server too little margin over the network's rate.
fn local_under_twice_network(local_mb_s: f64, network_mb_s: f64, needed_mb_s: f64) -> String {
    format!(
        "The lab's target writes {local_mb_s:.1} MB/s, under twice the {network_mb_s:.1} \
         MB/s the network delivered: a backup server also absorbs the protocol's overhead, \
         so its local writes need {needed_mb_s:.1} MB/s or more."
    )
}

/// The campaign's figures in one paragraph, from the verdict's rows.
pub fn summary(verdict: &Verdict) -> String {
    let figure = |test: TestKind| {
        verdict
            .rows
            .iter()
            .find(|row| row.test == test)
            .and_then(|row| row.mb_per_s)
    };
    // Only the isolated tests are ceilings: a backup, an incremental or a restore is not.
    let figures: Vec<String> = verdict
        .rows
        .iter()
        .filter(|row| {
            !matches!(
                row.test,
                TestKind::FullBackup
                    | TestKind::NetworkBackup
                    | TestKind::Restore
                    | TestKind::ToolBackup
                    | TestKind::ToolIncremental
                    | TestKind::ToolRestore
                    | TestKind::ToolLife
            )
        })
        .filter_map(|row| {
            let tool = row
                .tool
                .as_ref()
                .map_or_else(String::new, |tool| format!(" ({tool})"));
            row.mb_per_s
                .map(|mb_per_s| format!("{}{tool} {mb_per_s:.1}", row.test.label().to_lowercase()))
        })
        .collect();
    let full = figure(TestKind::FullBackup);
    let network = figure(TestKind::NetworkBackup).zip(verdict.network_shape);
    let tool_backups: Vec<(&str, f64)> = verdict
        .tools
        .iter()
        .filter_map(|line| line.backup_mb_s.map(|mb| (line.label.as_str(), mb)))
        .collect();
    let mut text = match (full, network, tool_backups.as_slice()) {
        (Some(full), ..) => format!("Full backup {full:.1} MB/s"),
        (None, Some(_), _) => String::new(),
        (None, None, [(tool, mb_per_s)]) => {
            capitalize(&format!("{tool}'s backup {mb_per_s:.1} MB/s"))
        }
        (None, None, []) => "No full backup".to_string(),
        (None, None, many) => format!(
            "Backups in MB/s: {}",
            many.iter()
                .map(|(tool, mb_per_s)| format!("{tool} {mb_per_s:.1}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if let Some((mb_per_s, shape)) = network {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&format!(
            "network backup {mb_per_s:.1} MB/s from {} client(s) × {} stream(s)",
            shape.clients, shape.streams
        ));
        if full.is_none() {
            text = capitalize(&text);
        }
    }
    if !figures.is_empty() {
        text.push_str(&format!("; ceilings in MB/s: {}", figures.join(", ")));
    }
    text.push('.');
    if let (Some(window), Some(bytes)) = (verdict.backup_window_s, verdict.source_bytes) {
        text.push_str(&format!(
            " Backing up {} takes about {}.",
            format_bytes(bytes),
            format_duration(window)
        ));
    }
    text
}

/// What the target is, as the verdict's sentence names it beside the component.
pub fn target(target: &TargetName) -> String {
    match target {
        TargetName::Drives(named) => drives(named),
        TargetName::ObjectStore { store } => store.clone(),
        TargetName::DedupStore {
            store,
            limit: Some(limit),
        } => format!("{store}: {} of its time", limit.words()),
        TargetName::DedupStore { store, limit: None } => store.clone(),
    }
}

/// A restore's line: how long a restore of the data takes, beside the backup it restores.
pub fn restore(restore: &RestoreLine) -> String {
    let mut text = format!(
        "A restore of {} takes about {} at {:.1} MB/s",
        format_bytes(restore.bytes),
        format_duration(restore.seconds),
        restore.mb_per_s
    );
    if restore.positioning_s > 0.0 {
        text.push_str(&format!(
            ", {} of it loading and locating ({})",
            format_duration(restore.positioning_s),
            restore.from
        ));
    }
    if let Some((backup, backup_mb_per_s)) = restore.backup {
        let ratio = backup_mb_per_s / restore.mb_per_s.max(f64::MIN_POSITIVE);
        if ratio >= 1.1 {
            text.push_str(&format!(
                ": {ratio:.1} × slower than {} ({backup_mb_per_s:.1} MB/s)",
                backup.name()
            ));
        } else if ratio <= 1.0 / 1.1 {
            text.push_str(&format!(
                ": {:.1} × faster than {} ({backup_mb_per_s:.1} MB/s)",
                1.0 / ratio,
                backup.name()
            ));
        } else {
            text.push_str(&format!(
                ", about as fast as {} ({backup_mb_per_s:.1} MB/s)",
                backup.name()
            ));
        }
    }
    text.push('.');
    if !restore.flags.is_empty() {
        let flags: Vec<&str> = restore.flags.iter().map(|flag| flag.id()).collect();
        text.push_str(&format!(
            " The restore's run is not valid ({}): redo it before trusting this.",
            flags.join(", ")
        ));
    }
    if restore.interleaved > 1 {
        text.push_str(&format!(
            " The backup interleaves {} streams on each drive, so restoring one stream's data \
             reads all {} from tape: fewer streams per drive (more drives, or less \
             concurrency) restore faster.",
            restore.interleaved, restore.interleaved
        ));
    }
    text
}

/// Items joined as a sentence does: `a`, `a and b`, `a, b and c`.
fn and_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// "1 stream", "4 streams": a count with its noun in the right number. Every sentence and
/// table that counts streams, clients or files says it this way.
pub fn counted(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

/// The text with its first letter in upper case.
pub fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The first letter in lower case, unless the word is an acronym such as "LTO".
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if !second.is_uppercase() => first
            .to_lowercase()
            .chain(std::iter::once(second))
            .chain(chars)
            .collect(),
        _ => text.to_string(),
    }
}

/// Why a flag cannot change the finding, as a clause.
fn weight(weight: Weight) -> Option<String> {
    Some(match weight {
        Weight::Overturns => return None,
        Weight::OnlyHigher => {
            "its figure can only be higher than measured, which leaves the finding as it is".into()
        }
        Weight::OnlyLower => {
            "its figure can only be lower than measured, which leaves the finding as it is".into()
        }
        Weight::DevicePaced => "the emulated target set the run's pace (the host waited for \
                                it), so other work did not slow it"
            .into(),
        Weight::AtItsCap { cap_mb_s } => format!(
            "the run read at its cap (source_rate_mb_s, {cap_mb_s:.1} MB/s in all), so it \
             could not have been faster"
        ),
        Weight::DriveRateKnown { native_mb_s } => format!(
            "whatever the buffer hid, the drives take at least their native {native_mb_s:.0} \
             MB/s, far from the figure that decides"
        ),
        Weight::FeedCannotReach {
            source_mb_s,
            needed_mb_s,
        } => format!(
            "the source read on its own delivers {source_mb_s:.1} MB/s, below the \
             {needed_mb_s:.1} MB/s the drives need to stream"
        ),
        Weight::Secondary => "it leaves the component named; only a secondary figure stays open \
                              (below)"
            .into(),
        Weight::BackupDelivered { full_mb_s } => format!(
            "the full backup itself moved {full_mb_s:.1} MB/s through this component, so it \
             delivers at least that"
        ),
        Weight::Moved { mb_s } => format!(
            "the run itself moved {mb_s:.1} MB/s over its whole time, so the component delivers \
             at least that"
        ),
    })
}

/// One line per flag that stays on a finding without overturning it, then one per claim that
/// stays open; nothing while the verdict is inconclusive (its redo lines say it all).
pub fn caveats(basis: &[Basis], open: &[OpenClaim], conclusive: bool) -> Vec<String> {
    if !conclusive {
        return Vec::new();
    }
    let mut lines: Vec<String> = basis
        .iter()
        .flat_map(|basis| {
            basis.flags.iter().filter_map(move |flag| {
                weight(flag.weight).map(|why| {
                    format!(
                        "{} on {} cannot change this: {why}.",
                        flag.flag.id(),
                        basis.test.name()
                    )
                })
            })
        })
        .collect();
    lines.extend(open.iter().map(|claim| match claim {
        OpenClaim::ShoeShining { test, needs_s } => format!(
            "Not yet certain: shoe-shining, how often the drives stop and restart — needs {} \
             of at least {needs_s:.0} s (params.duration_s, --duration {needs_s:.0}).",
            test.name()
        ),
    }));
    lines
}

/// What to change of a tool that limits the backup, naming its own setting.
fn tool_bound(
    tool: &super::findings::ToolUse,
    setting: Option<&super::findings::ToolSetting>,
    params: &[String],
) -> String {
    use super::findings::ToolHeldBy;
    let name = &tool.name;
    let named = |setting: &super::findings::ToolSetting| match &setting.try_value {
        Some(value) => format!(
            "{name}:{}={value} (now {}; `--tool {name}:{}={value}`, tool.params.{})",
            setting.name, setting.now, setting.name, setting.name
        ),
        None => format!(
            "{name}:{} (now {}; tool.params.{})",
            setting.name, setting.now, setting.name
        ),
    };
    match (tool.held_by, setting) {
        (ToolHeldBy::AllCores, Some(setting)) => format!(
            "{} kept every core busy: a lighter setting of {}, or more or faster cores, would \
             raise its backup.",
            capitalize(name),
            named(setting)
        ),
        (ToolHeldBy::AllCores, None) => format!(
            "{} kept every core busy: more or faster cores would raise its backup.",
            capitalize(name)
        ),
        (ToolHeldBy::OneThread, Some(setting)) => format!(
            "One thread of {name} held it back: more threads would help, {}.",
            named(setting)
        ),
        (ToolHeldBy::OneThread, None) => format!(
            "One thread of {name} held it back and {name} has no setting for more: back up \
             parts of the source with several runs of it side by side."
        ),
        (ToolHeldBy::OtherWork, _) => format!(
            "Other work on the machine took more of the CPU than {name}: repeat the tool's \
             backup on an idle machine to tell what holds it."
        ),
        (ToolHeldBy::Neither, _) if params.is_empty() => format!(
            "Neither {name}'s CPU nor one of its threads held it: back up parts of the source \
             with several runs of it side by side."
        ),
        (ToolHeldBy::Neither, _) => format!(
            "Neither {name}'s CPU nor one of its threads held it: try its own settings ({}), \
             or back up parts of the source with several runs of it side by side.",
            params
                .iter()
                .map(|param| format!("{name}:{param}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How a backup tool used the machine, in a sentence: what the verdict adds when the tool
/// limits ("restic used 1.96 of 2 cores: …").
pub fn tool_use(tool: &super::findings::ToolUse) -> String {
    use super::findings::ToolHeldBy;
    match tool.held_by {
        ToolHeldBy::AllCores => format!(
            "{} used {:.2} of {} cores: it is CPU-bound, so a lighter compression or more \
             cores would help",
            tool.name, tool.cores_used, tool.cores
        ),
        ToolHeldBy::OneThread => format!(
            "{} kept one thread busy {:.0}% of the time while it used {:.2} of {} cores: one \
             thread holds it back, so more concurrency would help",
            tool.name, tool.busiest_thread_pct, tool.cores_used, tool.cores
        ),
        ToolHeldBy::OtherWork => format!(
            "{} used {:.2} of {} cores while other work on the machine took more: what held \
             it back cannot be told until it runs on an idle machine",
            tool.name, tool.cores_used, tool.cores
        ),
        ToolHeldBy::Neither => format!(
            "{} used {:.2} of {} cores, no thread of it busy all the time, and backed up {:.0} \
             files per second: its own way of working held it, not the CPU",
            tool.name, tool.cores_used, tool.cores, tool.files_per_s
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One stream, one client, one file: a count of one is said in the singular, in advice as
    /// in tables.
    #[test]
    fn a_count_of_one_is_singular() {
        let one = advice(&Advice::SourceBound {
            source_mb_s: 80.0,
            target_mb_s: 160.0,
            streams: 1,
        });
        assert!(one.contains("with 1 stream,"), "{one}");
        let feed = advice(&Advice::FeedTheDrives {
            needed_mb_s: 40.0,
            streams_needed: 1,
            per_stream_mb_s: 50.0,
            drives: 1,
            per_drive_mb_s: 40.0,
            full_speed: Some((160.0, 4)),
        });
        assert!(feed.contains(": 1 stream at the measured"), "{feed}");
        assert!(
            feed.contains("(4 streams for the target's full 160.0 MB/s)"),
            "{feed}"
        );
        assert_eq!(counted(1, "client", "clients"), "1 client");
        assert_eq!(counted(0, "file", "files"), "0 files");
    }
}
