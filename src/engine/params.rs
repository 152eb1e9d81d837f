//! The parameters of one run, every value resolved: what every part of the engine reads of a
//! run's settings, kept apart from the run's plan so that the targets, results and restores
//! that read them need nothing else of it.

use serde::{Deserialize, Serialize};

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
    /// A life test: its nights, retention, checks and change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub life: Option<crate::engine::tool::LifePlan>,
    /// A life on a forecast's ladder: the generated tree of this rung, in place of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<crate::engine::tool::life::LadderRung>,
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
            life: None,
            ladder: None,
        }
    }
}
