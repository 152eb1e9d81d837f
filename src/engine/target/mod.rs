//! Targets: where the writers drain the ring. Each kind is one file: its `Sink` (how blocks
//! are written) and its `Target` (what it can do, what it needs of the machine, how a run's
//! sinks open). `TargetPlan::target` is the one place a kind is named; the engine, the survey
//! and the checks ask a target's capabilities, never its kind.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::error::EngineError;
use super::plan::TargetPlan;
use super::result::{RunResult, TapeFigures};
use crate::field_errors::FieldErrors;

pub mod device;
pub mod dir;
pub mod file;
pub mod files;
pub mod null;
pub mod tape;

#[cfg(test)]
mod tests;

pub use files::{LAB_FILE_PREFIX, sweep_lab_files, wait_for_background};

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
/// kind with figures adds its variant here and says, in `apply`, how its writers' figures
/// combine into the run's result; the pages show them through `RunResult::target_report`.
#[derive(Debug, Clone)]
pub enum SinkFigures {
    /// An emulated tape drive: streaming, repositioning, compression.
    Tape(TapeFigures),
}

impl SinkFigures {
    /// Puts the figures of a run's sinks (one per writer) into its result.
    pub fn apply(all: &[SinkFigures], result: &mut RunResult) {
        let drives: Vec<TapeFigures> = all
            .iter()
            .map(|figures| match figures {
                SinkFigures::Tape(drive) => drive.clone(),
            })
            .collect();
        result.tape = tape::combine(&drives);
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
    /// Devices the caller allows the lab to overwrite.
    pub allow_devices: &'a [PathBuf],
    /// A name for the run's files that no other run will pick.
    pub tag: &'a str,
}

/// One kind of target: a new kind is a file with its `Sink` and this, registered in
/// `TargetPlan::target`.
pub trait Target {
    /// What the engine may assume of it.
    fn capabilities(&self) -> Capabilities;
    /// The file system path written, for messages and checks; none for a target without one.
    fn path(&self) -> Option<&Path> {
        None
    }
    /// The device the target's data lands on (`st_dev` of a directory, `st_rdev` of a
    /// device node), to see whether the source shares it.
    fn device_id(&self) -> Option<u64> {
        None
    }
    /// Problems this target would meet on this machine, by spec field.
    fn preflight(&self, direct: bool, allow_devices: &[PathBuf], errors: &mut FieldErrors) {
        let _ = (direct, allow_devices, errors);
    }
    /// The sinks of one run: one per writer.
    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError>;
}

impl TargetPlan {
    /// The target behind this plan: the registration of every kind.
    pub fn target(&self) -> Box<dyn Target + '_> {
        match self {
            TargetPlan::Null => Box::new(null::NullTarget),
            TargetPlan::Dir(path) => Box::new(dir::DirTarget(path)),
            TargetPlan::File(path) => Box::new(file::FileTarget(path)),
            TargetPlan::Device(path) => Box::new(device::DeviceTarget(path)),
            TargetPlan::Tape(config) => Box::new(tape::TapeTarget(config)),
        }
    }
}
