//! The target of a run as the engine executes it: one variant per kind, each with the kind's
//! own settings, read and checked by the kind (`TargetKind::plan`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::dedup::DedupConfig;
use super::s3::S3Config;
use super::striped::StripedConfig;
use super::tape::catalogue::TapeConfig;

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
