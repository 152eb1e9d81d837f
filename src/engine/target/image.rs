//! A backup image on a target, for the restore test: what a restore asks of a target, the
//! image a target lays down (generated data, as compressible as asked) and the stream that
//! reads it back from a file.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Sink, SinkFigures};
use crate::engine::EngineSettings;
use crate::engine::buffer::AlignedBuf;
use crate::engine::data::{DataGenerator, DataPool};
use crate::engine::error::EngineError;
use crate::engine::measure::LatencyRecorder;
use crate::engine::params::RunParams;
use crate::engine::source::StreamSource;

/// What a restore asks of a target: an image of this many bytes, as compressible as the data.
#[derive(Debug, Clone, Copy)]
pub struct ImageRequest<'a> {
    pub bytes: u64,
    pub compress_ratio: f64,
    pub direct: bool,
    /// Streams the backup interleaved on the medium: a restore of one reads through them all
    /// where the medium is read in sequence (tape).
    pub streams: u32,
    /// A name for the image's file that no other run will pick.
    pub tag: &'a str,
    /// The run's parameters (an object store's part size and concurrency).
    pub params: &'a RunParams,
    /// What the lab's operator allows (devices to overwrite, object stores), checked again
    /// before an image is laid down.
    pub settings: &'a EngineSettings,
    /// Raised to stop the run: laying down an image gives up at once.
    pub cancel: &'a AtomicBool,
}

/// A backup image ready to be read back: the stream that reads it, and what the target says
/// of it.
pub struct RestoreImage {
    pub stream: Box<dyn StreamSource>,
    /// What the image is read from, in a few words: `emulated LTO-4 drive`.
    pub from: String,
    /// Streams interleaved on the medium that the restore reads through.
    pub interleaved: u32,
    /// Seconds a restore spends before its first byte (a drive's load and locate), added to
    /// the time a restore takes; not slept.
    pub positioning_s: f64,
    /// The medium's own figures after the run, when it reports any (an object store's reads).
    pub figures: Option<MediumFigures>,
}

/// How a restore's medium reports its own figures once the run is over.
pub type MediumFigures = Box<dyn Fn() -> SinkFigures + Send>;

/// Generated data for a backup image, in blocks of this size.
const IMAGE_BLOCK: usize = 1 << 20;
/// The seed of a backup image's data.
const IMAGE_SEED: u64 = 0x001e_570e;

/// Lays down `len` bytes of generated data, as compressible as the request asks, through
/// `sink` and flushes them to stable storage. Gives up once the run is cancelled.
pub fn write_image(
    sink: &mut dyn Sink,
    request: &ImageRequest<'_>,
    len: u64,
) -> Result<(), EngineError> {
    let path = sink.path().to_path_buf();
    // A write left for a cancel is the cancel, not a failure of the target.
    let write_error = |written: u64, source| {
        if request.cancel.load(Ordering::Relaxed) {
            return EngineError::Cancelled;
        }
        EngineError::TargetWrite {
            path: path.clone(),
            written,
            source,
        }
    };
    let mut generator = DataGenerator::new(DataPool::new(IMAGE_SEED, request.compress_ratio), 1);
    let mut block = AlignedBuf::new(IMAGE_BLOCK);
    let mut written = 0u64;
    while written < len {
        if request.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        let take = (len - written).min(IMAGE_BLOCK as u64) as usize;
        let data = &mut block.as_mut_slice()[..take];
        generator.fill(data);
        // A store that stops answering is left at once on a cancel, not at its deadlines.
        sink.write_block_or_give_up(data, request.cancel)
            .map_err(|source| write_error(written, source))?;
        written += take as u64;
    }
    sink.finish_or_give_up(true, request.cancel)
        .map_err(|source| write_error(written, source))
}

/// A backup image read back from its start as a restore reads it: `len` bytes of `file`.
pub struct ImageReader {
    file: File,
    path: PathBuf,
    offset: u64,
    len: u64,
}

impl ImageReader {
    /// Reads the first `len` bytes of `file`, already opened as the restore asks (O_DIRECT or
    /// not) and dropped from the page cache.
    pub fn new(file: File, path: PathBuf, len: u64) -> Self {
        Self {
            file,
            path,
            offset: 0,
            len,
        }
    }
}

impl StreamSource for ImageReader {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        let want = (want.min(buf.len()) as u64).min(self.len - self.offset) as usize;
        if want == 0 {
            return Ok(0);
        }
        let read = self
            .file
            .read_at(&mut buf.as_mut_slice()[..want], self.offset)
            .map_err(|source| EngineError::SourceRead {
                path: self.path.clone(),
                source,
            })?;
        self.offset += read as u64;
        Ok(read)
    }

    fn files_done(&self) -> u64 {
        u64::from(self.offset >= self.len)
    }

    /// A restore times its writes (`latency_of: sink_write`), as a backup times the target's.
    fn read_latency(&self) -> Option<&LatencyRecorder> {
        None
    }
}
