//! What a run of a backup tool reports beside the figures every run has: the tool and its
//! version, what it used (CPU of its whole process tree, memory), what it kept (stored size,
//! what an incremental added) and what a restore proved.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::definition::{ParamValue, ToolShape};
pub use super::pressure::PressureFigures;
use crate::engine::target::s3::operations::{RequestCounts, StoredObjects};

/// A tool run's own figures, kept in the run's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ToolFigures {
    pub name: String,
    /// What the tool's programs printed as their version.
    pub version: String,
    pub shape: ToolShape,
    /// Every parameter the run used, the definition's defaults filled in.
    #[schema(value_type = BTreeMap<String, super::ParamValueSchema>)]
    pub params: BTreeMap<String, ParamValue>,
    /// The files and bytes the tool backed up (the source, or the lab's copy of it).
    pub source_files: u64,
    pub source_bytes: u64,
    /// The tool read and wrote in memory (its ceiling), not the source's and target's disks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_memory: bool,
    /// CPU seconds of the tool's whole process tree in the timed step.
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// CPU seconds ÷ wall seconds: the cores the tool kept busy on average.
    pub cores_used: f64,
    /// The most cores it used in one sampling interval.
    pub max_cores_used: f64,
    /// The machine's cores.
    pub cores: u32,
    /// The busiest single thread's CPU time as a share of the wall time: near 100 % is a tool
    /// held back by one thread.
    pub busiest_thread_pct: f64,
    /// The most memory the process tree held at once.
    pub peak_rss_bytes: u64,
    /// What the repository (or the stream) took on the target after the timed backup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<u64>,
    /// An incremental: what the second backup added to the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_bytes: Option<u64>,
    /// An incremental: what changed in the copy between the two backups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_bytes: Option<u64>,
    /// A restore's check against the source, file by file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<super::tree::Verified>,
    /// A life: its nights, maintenance and restores (the figures above are then its
    /// backups' together: CPU summed, the highest peak memory of any command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub life: Option<super::life::LifeFigures>,
    /// The machine's CPU and I/O pressure over the timed step, where the kernel gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureFigures>,
    /// Every request the run's commands made of the bucket its repository is in, counted by
    /// the lab's relay (`engine/target/s3/relay.rs`); none for a repository on a disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestCounts>,
    /// Why a repository in a bucket has no counts (a store the relay cannot reach).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_not_counted: Option<String>,
    /// What the backup left in the bucket, object by object's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_objects: Option<StoredObjects>,
}

impl ToolFigures {
    /// CPU seconds the tool spent per GiB it backed up or restored.
    pub fn cpu_s_per_gib(&self) -> Option<f64> {
        (self.source_bytes > 0).then(|| {
            (self.cpu_user_s + self.cpu_system_s) / (self.source_bytes as f64 / (1u64 << 30) as f64)
        })
    }

    /// Requests the tool made of a bucket per GiB it backed up or restored, when its
    /// repository was in one and the lab's relay counted them.
    pub fn requests_per_gib(&self) -> Option<f64> {
        let requests = self.requests.as_ref()?.requests();
        (self.source_bytes > 0)
            .then(|| requests as f64 / (self.source_bytes as f64 / (1u64 << 30) as f64))
    }

    /// Source bytes per stored byte: what compression and dedup saved.
    pub fn reduction(&self) -> Option<f64> {
        self.stored_bytes
            .filter(|stored| *stored > 0)
            .map(|stored| self.source_bytes as f64 / stored as f64)
    }
}
