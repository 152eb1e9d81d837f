//! A run as the engine executes it: its test, its resolved parameters, where it reads and
//! writes, and the placement every run of a campaign shares. The campaign layer (`spec`)
//! builds these from what a user submits; the engine takes them as they are.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::target::dedup::DedupConfig;
use super::target::s3::S3Config;
use super::target::striped::StripedConfig;
use super::target::tape::catalogue::TapeConfig;
use super::test_kind::TestKind;

/// The parameters of one run, every value resolved to a number.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct RunParams {
    pub buffers: u32,
    pub block_size: u64,
    pub streams: u32,
    pub direct: bool,
    pub cold_cache: bool,
    pub fsync: bool,
    pub compress_ratio: f64,
    /// The target test writes data as compressible as the source's (measured when it runs)
    /// instead of `compress_ratio`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub match_source: bool,
    pub size: Option<u64>,
    pub duration_s: Option<f64>,
    /// The run lasts its whole duration: a source that runs out is read again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
    /// The run ends as soon as its throughput is steady (`duration_s: "auto"`); `duration_s`
    /// is then its longest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub until_steady: bool,
    /// Each stream's read rate cap in MB/s (a what-if), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_rate_mb_s: Option<f64>,
    /// Network backup: clients sending at once (`streams` is then per client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Network backup: each client's emulated link cap in MB/s, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_mb_s: Option<f64>,
    /// Object store: the part size of this run's multipart uploads, when a sweep sets it
    /// (otherwise the target's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_size: Option<u64>,
    /// Object store: parts each stream keeps in flight, when a sweep sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Which full backup of a generated dataset with generations this run sends (1 = the
    /// first); `None` for a run outside them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
    /// The backup tool a tool test runs, and the parameters the campaign set for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::engine::tool::ToolRun>,
}

#[cfg(test)]
impl RunParams {
    /// The parameters the unit tests start from: 32 × 256 KiB, 4 streams, 10 s time-based,
    /// cold cache, fsync, 2:1 data.
    pub(crate) fn example() -> Self {
        RunParams {
            buffers: 32,
            block_size: 256 << 10,
            streams: 4,
            direct: false,
            cold_cache: true,
            fsync: true,
            compress_ratio: 2.0,
            match_source: false,
            size: None,
            duration_s: Some(10.0),
            time_based: true,
            until_steady: false,
            source_rate_mb_s: None,
            clients: None,
            link_mb_s: None,
            part_size: None,
            concurrency: None,
            generation: None,
            tool: None,
        }
    }
}

/// Size of the generated data when neither the source nor `params.size` says.
pub const DEFAULT_GENERATED_SIZE: u64 = 1 << 30;

/// The source of a validated campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourcePlan {
    Paths(Vec<PathBuf>),
    Generated {
        size: u64,
        compress_ratio: f64,
        /// Every block is the first one again, as lmdd's internal input writes its one buffer
        /// over and over: the writes then cost what the target costs and nothing else. Only
        /// `backlab lmdd` asks for it; a campaign's generated data never repeats.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        repeat: bool,
        /// Data that repeats itself by a chosen ratio; `None`: nothing repeats.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dedup: Option<crate::engine::reduction::DedupSettings>,
        /// Successive full backups of the dataset, each changed from the one before; `None`:
        /// one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generations: Option<crate::engine::reduction::Generations>,
    },
}

/// The target of a validated campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetPlan {
    Null,
    Dir(PathBuf),
    /// A file the operator names, kept after the run (`backlab lmdd of=FILE`); never from a
    /// campaign spec.
    File(NamedFile),
    Device(PathBuf),
    Tape(TapeConfig),
    Striped(StripedConfig),
    /// An object store the lab's operator named, and how the run writes to it.
    S3(S3Config),
    /// A dedup store the run builds under a directory, and its chunking.
    Dedup(DedupConfig),
}

/// A named file to write, and what goes into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedFile {
    pub path: PathBuf,
    /// lmdd's `opat=1`: each block is filled with lmdd's offset pattern just before its write,
    /// on the writing thread, instead of carrying the data the pipeline handed over.
    #[serde(default)]
    pub pattern: bool,
}

/// One run to execute: a test at one parameter point.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    pub test: TestKind,
    pub params: RunParams,
    pub source: SourcePlan,
    pub target: TargetPlan,
    /// Network backup: the agents that send, in order (the first `clients` of them); empty
    /// when the lab's own clients send on loopback.
    pub agents: Vec<String>,
}

impl RunPlan {
    /// The run at one point of a campaign: its own test and parameters, and where every run of
    /// the campaign reads and writes.
    pub fn at(test: TestKind, params: RunParams, placement: &Placement) -> RunPlan {
        RunPlan {
            test,
            params,
            source: placement.source.clone(),
            target: placement.target.clone(),
            agents: if test == TestKind::NetworkBackup {
                placement.agents.clone()
            } else {
                Vec::new()
            },
        }
    }
}

/// Where every run of a campaign reads and writes, resolved once at submission and stored with
/// the campaign, so a run executes exactly what was accepted and no run copies the source list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub source: SourcePlan,
    pub target: TargetPlan,
    /// The agents that send the network runs; empty for the lab's own clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
}

impl Placement {
    /// The placement shared by a campaign's runs, taken from its plans (`None` without runs).
    pub fn of(plans: &[RunPlan]) -> Option<Placement> {
        let first = plans.first()?;
        let agents = plans
            .iter()
            .find(|plan| !plan.agents.is_empty())
            .map(|plan| plan.agents.clone())
            .unwrap_or_default();
        Some(Placement {
            source: first.source.clone(),
            target: first.target.clone(),
            agents,
        })
    }
}
