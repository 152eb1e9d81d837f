//! Why a run failed, in words a storage admin can act on.

use std::io;
use std::path::PathBuf;

use crate::size::format_size;

/// A failure of the measurement engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A backup tool failed, or what it needs could not be made: the sentence says which.
    #[error("{0}")]
    Tool(String),
    #[error("source {path}: {source}")]
    Source { path: PathBuf, source: io::Error },
    #[error("reading {path} failed: {source}")]
    SourceRead { path: PathBuf, source: io::Error },
    #[error("cannot create a file in the target {path}: {source}")]
    TargetCreate { path: PathBuf, source: io::Error },
    #[error(
        "target directory {path}: a component is a symbolic link; the lab does not follow links \
         in targets"
    )]
    TargetLink { path: PathBuf },
    #[error("cannot open the device {path}: {source}")]
    DeviceOpen { path: PathBuf, source: io::Error },
    #[error(
        "device {path} is not allowed: writing to a device destroys its contents, \
         so it must be allowed explicitly (--allow-device {path})"
    )]
    DeviceNotAllowed { path: PathBuf },
    #[error("writing to {path} failed after {written} bytes ({}) were written: {source}", format_size(*written))]
    TargetWrite {
        path: PathBuf,
        written: u64,
        source: io::Error,
    },
    #[error(
        "flushing {path} to stable storage (fsync) failed after {written} bytes were written: {source}"
    )]
    TargetSync {
        path: PathBuf,
        written: u64,
        source: io::Error,
    },
    #[error("cannot start a measurement thread: {0}")]
    Thread(io::Error),
    #[error("network backup: {0}")]
    Network(String),
    #[error(
        "{target} keeps no backup image to restore from; a restore reads back from a directory \
         or emulated tape target"
    )]
    NothingToRestore { target: String },
    #[error("cannot create the restore directory in {path}: {source}")]
    RestoreCreate { path: PathBuf, source: io::Error },
    #[error("object store: {0}")]
    ObjectStore(String),
    #[error(
        "the dedup store took in {} of the dataset's {generations} earlier generations ({}) \
         before the run's duration of {duration_s} s was up, and the run ended there: a later \
         generation needs a duration long enough to take the earlier ones in first (or a smaller \
         dataset)",
        format_size(*taken_bytes),
        format_size(*history_bytes)
    )]
    HistoryPastDeadline {
        taken_bytes: u64,
        history_bytes: u64,
        generations: u32,
        duration_s: f64,
    },
    #[error("cancelled")]
    Cancelled,
}
