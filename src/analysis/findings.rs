//! The verdict as data: what limits the backup, by how much, on what evidence, and the advice
//! that follows. Nothing here is text; `words` turns it into sentences.

use serde::{Deserialize, Serialize};

use super::WAITING;
use crate::engine::result::StageFigures;
use crate::engine::validity::FlagCode;
use crate::spec::TestKind;

/// Which side a run's own stage accounting says held it back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct StageAttribution {
    pub limited_by: Side,
    pub reader_wait_pct: f64,
    pub writer_wait_pct: f64,
}

/// What a pipeline run's stage accounting says about which side held it back.
pub fn stage_attribution(stages: &StageFigures) -> StageAttribution {
    let (reader, writer) = (stages.reader_wait_pct, stages.writer_wait_pct);
    let limited_by = if reader >= WAITING && reader > writer {
        Side::Target
    } else if writer >= WAITING && writer > reader {
        Side::Source
    } else {
        Side::Balanced
    };
    StageAttribution {
        limited_by,
        reader_wait_pct: reader,
        writer_wait_pct: writer,
    }
}

/// A component that can limit a backup.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// The target device or directory (tape_write).
    Target,
    /// The source file systems (read_parallel), or whatever feeds the target.
    Source,
    /// The pipeline and the CPU that drives it (null_sink).
    Pipeline,
    /// One device holds both source and target, so reads and writes compete.
    SharedDevice,
    /// The network between the clients and the lab, with the clients' sending.
    Network,
    /// The backup tool itself (tool_ceiling): its CPU, its threads, its own way of working.
    Tool,
}

/// Which side of a pipeline run waited for the other.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Readers waited for empty buffers: the target side is behind.
    Target,
    /// The writer waited for full buffers: the source side is behind.
    Source,
    /// Neither waited most of the time.
    Balanced,
}

/// An isolated test's figure that the full backup is measured against.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Ceiling {
    pub component: Component,
    pub test: TestKind,
    pub mb_per_s: f64,
}

/// Emulated drives as a verdict names them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Drives {
    pub model: String,
    pub count: u32,
}

/// What may explain a full backup that ran faster than an isolated ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum OutranCause {
    /// The target test wrote data that compresses differently from the source.
    Compressibility { target_test: f64, full_backup: f64 },
    /// The ceiling's runs are not valid.
    InvalidCeiling { flags: Vec<FlagCode> },
    /// The ceiling's runs vary more than the gap.
    Spread { spread_pct: f64 },
    /// None of the above: the isolated test measured less than the component can do.
    Unexplained { emulated_target: bool },
}

/// Why a full backup that reached its ceiling ran a little faster than it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum AboveCeiling {
    /// The target test's data compressed differently on the drive from the backup's.
    Compressibility { target_test: f64, full_backup: f64 },
    /// The ceiling's figure is a lower bound: its run's final flush was charged to it.
    LowerBound { flush_s: f64 },
    /// The gap is within the spread of the repeated figures.
    Spread { spread_pct: f64 },
    /// One run of each: their noise is not known.
    Unrepeated,
    /// More than the figures' spread, and nothing else at hand explains it.
    Unexplained { spread_pct: f64 },
}

/// What made the full backup slower than every isolated ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "evidence", rename_all = "snake_case")]
pub enum Interference {
    /// Source and target share a device.
    SharedDevice,
    /// The full backup's stage accounting names the side behind.
    Stages { side: Side, wait_pct: f64 },
    /// No evidence beyond the figures: the lowest ceiling is named.
    LowestCeiling,
}

/// A drive that shoe-shines because the feed is slower than its lowest speed step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ShoeShine {
    pub drives: Drives,
    pub backhitches: u64,
    pub repositioning_pct: f64,
    pub feed_mb_s: f64,
    /// What keeps every drive streaming: lowest step × compression × drives.
    pub needed_mb_s: f64,
    pub min_step_mb_s: f64,
    pub compression: f64,
    pub per_stream_mb_s: f64,
    pub streams_needed: u64,
}

/// Clients × streams of a network run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Shape {
    pub clients: u32,
    pub streams: u32,
}

/// Where the target's ceiling for a network run comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetCeilingFrom {
    TapeWriteTest,
    EmulatedDrives,
}

/// What held a network backup back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "limit", rename_all = "snake_case")]
pub enum NetworkLimit {
    /// Neither side waited and no ceiling is known.
    Undetermined {
        reader_wait_pct: f64,
        writer_wait_pct: f64,
    },
    /// The target takes no more.
    Target {
        ceiling_mb_s: Option<f64>,
        from: Option<TargetCeilingFrom>,
        reader_wait_pct: f64,
    },
    /// The emulated links carry no more.
    Links {
        per_client_mb_s: f64,
        total_mb_s: f64,
    },
    /// Below what the target takes.
    BelowTarget {
        ceiling_mb_s: f64,
        from: TargetCeilingFrom,
    },
    /// Below an unknown target, with the writer waiting for the network.
    Starved,
}

/// A network backup's finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct NetworkFinding {
    pub shape: Shape,
    pub mb_per_s: f64,
    pub limit: NetworkLimit,
    /// Share of the time the lab's writer waited for data from the network.
    pub writer_wait_pct: f64,
    pub failed_clients: Vec<String>,
}

/// The verdict's one finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Too few tests finished to name a bottleneck; `lives` when the campaign ran a backup's
    /// life, which names none of its own (its nights, maintenance and restores are its answer);
    /// `probed` when it ran the object-lock probe, whose answer is what the store refused.
    Incomplete {
        missing: Vec<TestKind>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        lives: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        probed: bool,
    },
    /// The full backup reaches the lowest ceiling; `above` says why, when it ran faster than
    /// the ceiling (by less than the share that makes it `FullOutranCeiling`).
    Limits {
        ceiling: Ceiling,
        full_mb_s: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        above: Vec<AboveCeiling>,
    },
    /// The full backup ran faster than a ceiling allows, or reached a target ceiling measured
    /// on data that compressed less than its own: that ceiling did not measure what the full
    /// backup met.
    FullOutranCeiling {
        ceiling: Ceiling,
        full_mb_s: f64,
        causes: Vec<OutranCause>,
    },
    /// The full backup is well below every ceiling: the components interfere.
    Interference {
        component: Component,
        lowest: Ceiling,
        full_mb_s: f64,
        evidence: Interference,
    },
    /// No full backup: the lowest ceiling is the candidate.
    LowestCeiling { ceiling: Ceiling },
    /// The feed is too slow to keep the drives streaming.
    ShoeShine(ShoeShine),
    /// A network backup with no local full backup to compare.
    Network(NetworkFinding),
    /// Several backup tools compared on the same data: each judged on its own, against its
    /// own ceiling and the campaign's shared ones, never against another tool's.
    ToolsCompared { tools: Vec<ToolOutcome> },
}

/// One tool's answer in a comparison of several.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ToolOutcome {
    /// The tool and its parameters (`restic compression=max`).
    pub tool: String,
    /// Its backup's figure, MB/s.
    pub backup_mb_s: Option<f64>,
    /// The component its own verdict names (its candidate while not conclusive).
    pub component: Option<Component>,
    pub conclusive: bool,
    /// No one component limits it: `component` is where they slow each other down.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interference: bool,
}

impl Finding {
    /// Whether the campaign's answer is another than a bottleneck: a backup's life, or the
    /// object-lock probe, run with too few tests to name one. Not inconclusive, though no
    /// component is named.
    pub fn answered_otherwise(&self) -> bool {
        matches!(
            self,
            Finding::Incomplete { lives: true, .. } | Finding::Incomplete { probed: true, .. }
        )
    }

    /// The component the finding names, if any.
    pub fn component(&self) -> Option<Component> {
        match self {
            Finding::Incomplete { .. }
            | Finding::FullOutranCeiling { .. }
            | Finding::ToolsCompared { .. } => None,
            Finding::Limits { ceiling, .. } | Finding::LowestCeiling { ceiling } => {
                Some(ceiling.component)
            }
            Finding::Interference { component, .. } => Some(*component),
            Finding::ShoeShine(_) => Some(Component::Source),
            Finding::Network(network) => match network.limit {
                NetworkLimit::Undetermined { .. } => None,
                NetworkLimit::Target { .. } => Some(Component::Target),
                _ => Some(Component::Network),
            },
        }
    }

    /// The row of the table marked "Yes".
    pub fn yes_row(&self, has: impl Fn(TestKind) -> bool) -> Option<TestKind> {
        match self {
            Finding::Limits { ceiling, .. } | Finding::LowestCeiling { ceiling } => {
                Some(ceiling.test)
            }
            // Components that slow each other down: none is the limit on its own row.
            Finding::Interference { .. } => None,
            Finding::ShoeShine(_) => [
                TestKind::ReadParallel,
                TestKind::ToolCeiling,
                TestKind::ReadSingle,
                TestKind::NullSink,
            ]
            .into_iter()
            .find(|test| has(*test)),
            Finding::Network(network) => match network.limit {
                NetworkLimit::Undetermined { .. } => None,
                NetworkLimit::Target { .. } => Some(TestKind::TapeWrite),
                _ => Some(TestKind::NetworkBackup),
            },
            Finding::Incomplete { .. }
            | Finding::FullOutranCeiling { .. }
            | Finding::ToolsCompared { .. } => None,
        }
    }
}

/// How a backup tool used the machine in its backup: what the verdict says of a tool that
/// limits, and the table shows beside it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ToolUse {
    pub name: String,
    pub version: String,
    /// CPU seconds of its process tree ÷ wall seconds.
    pub cores_used: f64,
    pub cores: u32,
    /// Its busiest thread's CPU time as a share of the wall time.
    pub busiest_thread_pct: f64,
    pub files_per_s: f64,
    pub held_by: ToolHeldBy,
}

/// What held a tool back, from how it used the CPU.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolHeldBy {
    /// It kept (nearly) every core busy: a lighter compression or more cores would help.
    AllCores,
    /// One of its threads was busy (nearly) all the time while cores were free: more
    /// concurrency would help.
    OneThread,
    /// Neither, on a machine whose other work took more of the CPU than the tool did
    /// (the run is flagged busy_machine): what it waited on cannot be told.
    OtherWork,
    /// Neither: it waited on something else (its reads, its writes, many small files).
    Neither,
}

/// A tool's parameter the advice names: its name, its value in the run, and the value to try.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ToolSetting {
    pub name: String,
    pub now: String,
    /// What to set it to, when the advice can say (threads: the machine's cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub try_value: Option<String>,
}

impl ToolSetting {
    /// The setting of `run`'s tool that changes what held it: `threads` for one busy thread,
    /// `level` or else `compression` for busy cores; `None` when the tool has no such
    /// parameter.
    pub fn of(run: &crate::engine::result::RunResult, held_by: ToolHeldBy) -> Option<Self> {
        let figures = run.tool.as_ref()?;
        let names: &[&str] = match held_by {
            ToolHeldBy::OneThread => &["threads"],
            ToolHeldBy::AllCores => &["level", "compression"],
            ToolHeldBy::OtherWork | ToolHeldBy::Neither => &[],
        };
        let (name, value) = names
            .iter()
            .find_map(|name| figures.params.get_key_value(*name))?;
        let try_value = match (held_by, value) {
            (ToolHeldBy::OneThread, crate::engine::tool::ParamValue::Integer(now))
                if *now < i64::from(figures.cores) =>
            {
                Some(figures.cores.to_string())
            }
            _ => None,
        };
        Some(ToolSetting {
            name: name.clone(),
            now: value.to_string(),
            try_value,
        })
    }
}

/// Share of the machine's cores (or of the wall time, for one thread) that counts as busy.
pub const BUSY_SHARE: f64 = 0.85;

impl ToolUse {
    /// How the tool's run used the machine.
    pub fn of(run: &crate::engine::result::RunResult) -> Option<ToolUse> {
        let tool = run.tool.as_ref()?;
        let cores = tool.cores.max(1);
        let held_by =
            if tool.cores_used >= BUSY_SHARE * f64::from(cores) {
                ToolHeldBy::AllCores
            } else if tool.busiest_thread_pct >= 100.0 * BUSY_SHARE {
                ToolHeldBy::OneThread
            } else if run.validity.as_ref().is_some_and(|validity| {
                validity.has(crate::engine::validity::FlagCode::BusyMachine)
            }) {
                ToolHeldBy::OtherWork
            } else {
                ToolHeldBy::Neither
            };
        Some(ToolUse {
            name: tool.name.clone(),
            version: tool.version.clone(),
            cores_used: tool.cores_used,
            cores,
            busiest_thread_pct: tool.busiest_thread_pct,
            files_per_s: if run.seconds > 0.0 {
                (tool.source_files as f64 / run.seconds * 10.0).round() / 10.0
            } else {
                0.0
            },
            held_by,
        })
    }
}

/// A run to do again before the verdict can stand.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Redo {
    pub test: TestKind,
    pub flags: Vec<FlagCode>,
    /// What to set for the redo, each field once.
    #[serde(default)]
    pub changes: Vec<super::remedy::Change>,
}

/// One piece of advice, derived from the finding and the figures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "advice", rename_all = "snake_case")]
pub enum Advice {
    /// Redo runs that are not valid.
    Redo(Redo),
    /// Feed the drives fast enough to stream.
    FeedTheDrives {
        needed_mb_s: f64,
        streams_needed: u64,
        per_stream_mb_s: f64,
        drives: u32,
        per_drive_mb_s: f64,
        /// The target's own rate and the streams that reach it at the same per-stream rate,
        /// by the same rule ([`streams_for`]), when the target was measured alone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        full_speed: Option<(f64, u64)>,
    },
    /// One stream is slower than the target.
    ParallelStreams {
        single_mb_s: f64,
        target_mb_s: f64,
        streams: u32,
    },
    /// The source delivers less than the target takes.
    SourceBound {
        source_mb_s: f64,
        target_mb_s: f64,
        streams: u32,
    },
    /// The target streams at full speed.
    TargetAtFullSpeed { full_mb_s: f64, target_mb_s: f64 },
    /// The pipeline kept the CPUs busy.
    CpuBound { cpu_pct: f64 },
    /// The pipeline is slower than reading alone.
    PipelineSlowerThanReading {
        pipeline_mb_s: f64,
        source_mb_s: f64,
    },
    /// Readers waited: more buffers will not help.
    ReadersWaited { wait_pct: f64 },
    /// The writer waited: the source side is behind.
    WriterWaited { wait_pct: f64 },
    /// Put the target on another device.
    SeparateDevice,
    /// Match the target test's data to the source's.
    MatchCompressibility { target_test: f64, full_backup: f64 },
    /// Network: the target takes no more.
    NetworkTargetFull,
    /// Network: the links carry no more.
    FasterLinks {
        per_client_mb_s: f64,
        clients: u32,
        total_mb_s: f64,
    },
    /// Network: more clients or streams.
    MoreClients { shape: Shape },
    /// Network: some clients failed.
    PartialNetworkRun { failed: Vec<String> },
    /// The backup tool limits the backup: what held it, and the tool's own setting that
    /// changes that, when it has one (`threads` for one busy thread; `level` or `compression`
    /// for busy cores).
    ToolBound {
        tool: ToolUse,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        setting: Option<ToolSetting>,
        /// Every parameter the tool was run with, by name, for a tool held by neither.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        params: Vec<String>,
    },
    /// Network: the lab writes locally at less than twice what the network delivers, the
    /// margin a backup server needs to absorb the protocol's overhead (seed 001).
    LocalUnderTwiceNetwork {
        local_mb_s: f64,
        network_mb_s: f64,
        needed_mb_s: f64,
    },
}

/// Streams of `per_stream_mb_s` each that together deliver `wanted_mb_s`: the one rule every
/// piece of advice that names a number of streams uses, so two of them cannot disagree.
pub fn streams_for(wanted_mb_s: f64, per_stream_mb_s: f64) -> u64 {
    if per_stream_mb_s > 0.0 && wanted_mb_s.is_finite() {
        (wanted_mb_s / per_stream_mb_s).ceil().max(1.0) as u64
    } else {
        0
    }
}
