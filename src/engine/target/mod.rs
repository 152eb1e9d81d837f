//! Targets: where the writers drain the ring. Each kind is one module: its [`Kind`] (what it
//! is, how a spec's target of that kind is read and checked, its settings' schema and typed
//! fields), its `Sink` (how blocks are written) and its `Target` (what it can do, what it
//! needs of the machine, how a run's sinks open, how it is named). [`KINDS`] lists the kinds;
//! the engine, the survey, the checks and the pages ask a kind's facts and a target's
//! capabilities and words, never name a kind.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::de::DeserializeOwned;

use super::EngineSettings;
use super::error::EngineError;
use super::params::RunParams;
use crate::field_errors::FieldErrors;
use image::{ImageRequest, RestoreImage};
pub use striped::StripedFigures;
pub use tape::TapeFigures;

// The kinds a spec may name, each listed in `KINDS` below.
pub mod dedup;
pub mod device;
pub mod dir;
pub mod null;
pub mod s3;
pub mod striped;
pub mod tape;

pub mod figures;
pub mod file;
pub mod files;
pub mod flag;
pub mod image;
mod kind;
mod plan;
pub mod write_behind;

/// A target's own figures in words, for pages and exports that show them without knowing the
/// kind of target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetReport {
    /// What reported them: `emulated LTO-4 × 2`.
    pub reporter: String,
    /// The device the figures are of, in a few words for a table row: `2 emulated LTO-4
    /// drives`, `emulated striped volume`.
    pub device: String,
    /// Each figure as a short phrase: `compression 2.00:1`, `3 backhitches`.
    pub figures: Vec<String>,
}

impl std::fmt::Display for TargetReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.reporter, self.figures.join(", "))
    }
}

#[cfg(test)]
mod tests;

/// The example of a new kind (`docs/examples/slow`), compiled and tested with the kinds so
/// that it stays one a newcomer can copy; never registered.
#[cfg(test)]
#[path = "../../../docs/examples/slow/mod.rs"]
mod slow_example;

pub use file::NamedFile;
pub use files::{LAB_FILE_PREFIX, sweep_lab_files, wait_for_background};
pub use kind::{
    FieldInput, Kind, SettingsText, SettingsType, TargetKind, TypedField, settings_of,
    settings_schema_parts, settings_schemas, stored_as,
};
pub use plan::{PlanParts, TargetPlan};

/// Something the writer drains into.
pub trait Sink: Send {
    /// Writes one block; `data.len()` is a multiple of `alignment()`.
    fn write_block(&mut self, data: &[u8]) -> io::Result<()>;
    /// Ends the stream: flushes to stable storage when asked. Inside the timed window.
    fn finish(&mut self, fsync: bool) -> io::Result<()>;
    /// What every write length must be a multiple of (1 for buffered sinks).
    fn alignment(&self) -> usize;
    /// The path written, for messages.
    fn path(&self) -> &Path;
    /// Writes one block unless `give_up` is raised while the device makes the host wait (an
    /// emulated drive that is repositioning); other sinks just write.
    fn write_block_or_give_up(&mut self, data: &[u8], give_up: &AtomicBool) -> io::Result<()> {
        let _ = give_up;
        self.write_block(data)
    }
    /// Writes one block that `stream` (the reader's number) filled: a sink that keeps each
    /// stream's bytes apart (a dedup store chunks each stream as the backup sent it) takes
    /// this; the others write it as any block.
    fn write_stream_block(
        &mut self,
        stream: usize,
        data: &[u8],
        give_up: &AtomicBool,
    ) -> io::Result<()> {
        let _ = stream;
        self.write_block_or_give_up(data, give_up)
    }
    /// Told, before the block `stream` filled is written, where files began within it
    /// (offsets into the block, in order): a sink that chunks each file's stream apart, as
    /// restic and borg do (a dedup store), cuts a chunk at each; the others need not know.
    fn file_starts(&mut self, stream: usize, starts: &[usize]) {
        let _ = (stream, starts);
    }
    /// Ends the stream unless `give_up` is raised while waiting for the device.
    fn finish_or_give_up(&mut self, fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        let _ = give_up;
        self.finish(fsync)
    }
    /// After the last write: how many of its bytes fitted, when the device filled up during
    /// it (`None`: all of them).
    fn fitted(&self) -> Option<usize> {
        None
    }
    /// Whether the device can take no more (an emulated cartridge is full).
    fn full(&self) -> bool {
        false
    }
    /// The sink's own figures after the run, when its kind reports any (an emulated drive).
    fn figures(&self) -> Option<SinkFigures> {
        None
    }
}

/// What a sink reports of itself after a run, one variant per kind that reports anything. A
/// kind with figures adds its variant here and says, in `figures::take_sink_figures`, how
/// its writers' figures combine into the run's result; the pages show them through
/// `figures::target_report`.
#[derive(Debug, Clone)]
pub enum SinkFigures {
    /// An emulated tape drive: streaming, repositioning, compression.
    Tape(TapeFigures),
    /// One writer's share of an emulated striped volume: the whole volume's figures so far.
    Striped(StripedFigures),
    /// A restore's files, written into a directory of the lab's.
    Restored { files: u64, into: String },
    /// An object store's requests: every stream's sink reports the run's whole tally.
    S3(s3::S3Figures),
    /// A dedup store: every writer reports the figures of the writers that have finished.
    Dedup(dedup::DedupFigures),
}

impl SinkFigures {
    /// What a restore's writer reports: the files it wrote, and the directory it wrote them
    /// into (no kind's figures: a restore writes into a directory of the lab's).
    pub fn restored(files: u64, into: String) -> Self {
        SinkFigures::Restored { files, into }
    }
}

/// What a target kind is, as far as a measurement depends on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Writes reach a real file system or device: a write figure is the hardware's, and the
    /// source may share its device.
    pub real_device: bool,
    /// With `fsync`, a run's data is flushed to stable storage at its end, inside the timed
    /// window.
    pub flushes: bool,
    /// A model of a device running in real time: its figures are the model's, and say so.
    pub emulated: bool,
}

impl Capabilities {
    /// Neither a device nor a model of one: writes go nowhere (the null sink), so a write
    /// figure is the pipeline's, never a target's.
    pub fn discards(&self) -> bool {
        !self.real_device && !self.emulated
    }

    /// A real file system or device, flushed at the end when asked.
    pub const HARDWARE: Capabilities = Capabilities {
        real_device: true,
        flushes: true,
        emulated: false,
    };
    /// A model of a device, in real time.
    pub const EMULATED: Capabilities = Capabilities {
        real_device: false,
        flushes: false,
        emulated: true,
    };
}

/// How a run opens its target's sinks.
pub struct Opening<'a> {
    pub direct: bool,
    /// The bytes of a full block, for a sink that keeps a buffer of its own.
    pub block_size: usize,
    /// The run's parameters (its streams, an object store's part size).
    pub params: &'a RunParams,
    /// What the lab's operator allows: devices to overwrite, object stores to write to.
    pub settings: &'a EngineSettings,
    /// A name for the run's files that no other run will pick.
    pub tag: &'a str,
    /// The generated dataset the run sends, when it is a later generation of it: a target
    /// that keeps what it was sent (a dedup store) takes the earlier generations in before
    /// the timed window.
    pub history: Option<&'a crate::engine::reduction::DatasetStreams>,
    /// Raised to stop taking the history in.
    pub cancel: &'a std::sync::atomic::AtomicBool,
    /// When the run's duration is up: taking the history in counts against it, so a run
    /// ends within its duration whatever it must do before its timed window.
    pub deadline: Option<std::time::Instant>,
}

/// Where a target writes on the lab's host: what the lab's policy checks, its room check
/// watches and its start-up sweep looks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Files the lab makes under a directory (`--allow-target`), swept at start when a run
    /// left them, and written only within the directory's room above the lab's reserve.
    FilesUnder,
    /// A raw device (`--allow-device`), written from its start.
    Device,
    /// A file the operator named on the command line, kept after the run.
    NamedFile,
    /// Nothing on the host: emulated, discarded, or a store elsewhere.
    Nothing,
}

/// Where a repository tool (restic, borg) can keep its repository in a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolRepository {
    /// In a directory of the run's own beside the target's files.
    InDirectory,
    /// Under a key prefix of the run's own in the target's bucket, for a tool whose
    /// definition says how (`s3`).
    InBucket,
    /// Nowhere: only a stream tool writes into it.
    Nowhere,
}

/// What a kind of target is, known before its settings are read: each kind's file has its
/// own (`FACTS`), and the rest of the lab asks these rather than name the kind.
#[derive(Debug)]
pub struct KindFacts {
    /// What a spec calls it.
    pub id: &'static str,
    /// What a person choosing it reads: `emulated tape`.
    pub label: &'static str,
    /// It writes a path a spec must give (a directory, a device); the others take none.
    pub takes_path: bool,
    pub writes: Writes,
    pub tool_repository: ToolRepository,
    /// It writes objects into a store elsewhere: part size and parts in flight are its
    /// settings, and a matrix may sweep them.
    pub object_store: bool,
}

/// One kind of target with its settings, as a run uses it: a new kind is a module with its
/// `Sink`, its [`KindFacts`], its [`Kind`] and this, and one line in [`KINDS`].
pub trait Target: PlanParts {
    /// What the kind is, whatever its settings.
    fn facts(&self) -> &'static KindFacts;
    /// What the engine may assume of it.
    fn capabilities(&self) -> Capabilities;
    /// The rate the target takes data at when it is a model with a known speed (emulated
    /// drives at the data's compression, a striped volume), MB/s.
    fn takes_mb_s(&self, compress_ratio: f64) -> Option<f64> {
        let _ = compress_ratio;
        None
    }
    /// The file system path written, for messages and checks; none for a target without one.
    fn path(&self) -> Option<&Path> {
        None
    }
    /// [`Target::path`], to resolve in place.
    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        None
    }
    /// The device the target's data lands on (`st_dev` of a directory, `st_rdev` of a
    /// device node), to see whether the source shares it.
    fn device_id(&self) -> Option<u64> {
        None
    }
    /// Problems this target would meet on this machine, by spec field.
    fn preflight(&self, direct: bool, settings: &EngineSettings, errors: &mut FieldErrors) {
        let _ = (direct, settings, errors);
    }
    /// The sinks of one run: one per writer.
    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError>;
    /// The target in a few words, for pages and reports: `directory /srv/backup`.
    fn words(&self) -> String;
    /// The average chunk it deduplicates at, for a target that deduplicates what it is sent:
    /// its target test's data is then made to dedup as the source does.
    fn dedups_at(&self) -> Option<u32> {
        None
    }
    /// Whether a restore can read a backup image back from it.
    fn restores(&self) -> bool {
        false
    }
    /// Whether it lies outside the machine (an object store): it may stop answering, so a run
    /// into it that is still handing data over long after its duration is cut there.
    fn reaches_outside(&self) -> bool {
        false
    }
    /// A backup image on the target, laid down before the timed window, and the stream a
    /// restore reads it back with.
    fn restore_image(&self, request: &ImageRequest<'_>) -> Result<RestoreImage, EngineError> {
        let _ = request;
        Err(EngineError::NothingToRestore {
            target: self.words(),
        })
    }
}

/// A target kind's own settings as a spec gives them: every field of the spec's target but
/// `kind` and `path`. Each kind reads them into a type of its own (`read_settings`).
pub type Settings = serde_json::Map<String, serde_json::Value>;

/// Every kind a spec may name, in the order forms and help list them: adding a kind is its
/// module (declared with the others above) and one line here.
pub static KINDS: &[&dyn Kind] = &[
    &dir::Dir,
    &null::Null,
    &device::Device,
    &tape::Tape,
    &striped::Striped,
    &s3::S3,
    &dedup::Dedup,
];

/// Reads a kind's settings into its own type. A setting the kind does not have, or of the
/// wrong type, is recorded under `target.NAME` in plain words.
pub fn read_settings<T: DeserializeOwned>(
    facts: &KindFacts,
    settings: &Settings,
    errors: &mut FieldErrors,
) -> Option<T> {
    let value = serde_json::Value::Object(settings.clone());
    serde_path_to_error::deserialize(value).map_or_else(
        |error| {
            let path = error.path().to_string();
            let message = error.into_inner().to_string();
            if let Some(field) = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
            {
                errors.add(
                    format!("target.{field}"),
                    format!("is not a setting of kind {}", facts.id),
                );
            } else {
                let path = if path == "." {
                    "target".to_string()
                } else {
                    format!("target.{path}")
                };
                errors.add(path, crate::plain_words::plain_words(&message));
            }
            None
        },
        Some,
    )
}

/// A kind that has no settings of its own: records each one given.
pub fn no_settings(facts: &KindFacts, settings: &Settings, errors: &mut FieldErrors) -> bool {
    for name in settings.keys() {
        errors.add(
            format!("target.{name}"),
            format!("is not a setting of kind {}", facts.id),
        );
    }
    settings.is_empty()
}

/// The path of a kind that takes a path and nothing else (a directory, a device).
pub fn path_only(
    facts: &KindFacts,
    path: Option<&Path>,
    settings: &Settings,
    errors: &mut FieldErrors,
) -> Option<PathBuf> {
    let no_settings = no_settings(facts, settings, errors);
    let path = required_path(facts, path, errors)?;
    no_settings.then_some(path)
}

/// The path a kind writes, which it requires.
fn required_path(
    facts: &KindFacts,
    path: Option<&Path>,
    errors: &mut FieldErrors,
) -> Option<PathBuf> {
    let path = path.filter(|path| !path.as_os_str().is_empty());
    if path.is_none() {
        errors.add("target.path", format!("is required with kind {}", facts.id));
    }
    path.map(Path::to_path_buf)
}

/// A kind that writes no path: records one given.
pub fn no_path(facts: &KindFacts, path: Option<&Path>, errors: &mut FieldErrors) -> bool {
    let given = path.is_some_and(|path| !path.as_os_str().is_empty());
    if given {
        let why = if facts.id == null::FACTS.id {
            String::new()
        } else {
            " (it is emulated)".to_string()
        };
        errors.add(
            "target.path",
            format!("is not used with kind {}{why}; remove it", facts.id),
        );
    }
    !given
}

impl TargetPlan {
    /// The path the target writes on the lab's host, when it writes one (a directory, a
    /// device, a named file); [`Target::facts`] says which.
    pub fn path(&self) -> Option<&Path> {
        self.target().path()
    }

    /// Where the target writes on the lab's host.
    pub fn writes(&self) -> Writes {
        self.target().facts().writes
    }

    /// The directory the lab makes the run's files under, for a target that writes files
    /// there: what its room, its sweep and a tool's repository beside it are about.
    pub fn files_dir(&self) -> Option<&Path> {
        self.path().filter(|_| self.writes() == Writes::FilesUnder)
    }

    /// The directory a repository tool keeps its repository beside, for a target that has
    /// one.
    pub fn tool_repository_dir(&self) -> Option<&Path> {
        self.path()
            .filter(|_| self.target().facts().tool_repository == ToolRepository::InDirectory)
    }

    /// An object store's settings, for a target that writes into one.
    pub fn object_store(&self) -> Option<&s3::S3Config> {
        self.of_type::<s3::S3Target>().map(|target| &target.0)
    }

    /// Emulated tape drives' settings, for a target that is one.
    pub fn tape(&self) -> Option<&tape::TapeConfig> {
        self.of_type::<tape::TapeTarget>().map(|target| &target.0)
    }

    /// The target that discards what it is given, as `backlab lmdd` without `of=` writes.
    pub fn discard() -> TargetPlan {
        TargetPlan::new(null::NullTarget)
    }

    /// A file the operator named on the command line, and how each block is filled.
    pub fn named_file(path: PathBuf, pattern: bool) -> TargetPlan {
        TargetPlan::new(file::FileTarget(NamedFile { path, pattern }))
    }
}
