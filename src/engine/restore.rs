//! The restore test: a backup image on the target read back into a directory as files shaped
//! like the source. The target provides the image and the stream that reads it
//! (`Target::restore_image`); this module writes what it reads as files, one after another,
//! in a directory of the lab's own that is removed when the run ends.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::buffer::AlignedBuf;
use super::cache::sync_filesystem;
use super::data::{DataGenerator, DataPool};
use super::measure::LatencyRecorder;
use super::source::{StreamSource, list_files};
use super::target::files::{LAB_FILE_PREFIX, create_file_in, open_dir_no_follow};
use super::target::{Sink, SinkFigures};
use crate::engine::EngineSettings;
use crate::engine::error::EngineError;
use crate::engine::plan::RunParams;

/// Size of each restored file when the source is generated data and has no files to imitate.
pub const GENERATED_FILE_BYTES: u64 = 64 << 20;
/// Files of the source whose sizes the restored files take, in turn.
const SHAPE_FILES: usize = 4096;

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

/// The sizes restored files take, in turn: the source's files', or 64 MiB each for generated
/// data.
pub fn file_shapes(paths: Option<&[PathBuf]>) -> Vec<u64> {
    let sizes: Vec<u64> = paths
        .map(|paths| {
            list_files(paths, SHAPE_FILES)
                .iter()
                .filter_map(|file| std::fs::symlink_metadata(&file.path).ok())
                .map(|metadata| metadata.len())
                .filter(|&len| len > 0)
                .collect()
        })
        .unwrap_or_default();
    if sizes.is_empty() {
        vec![GENERATED_FILE_BYTES]
    } else {
        sizes
    }
}

/// Writes the stream it is given as files of the given sizes, in turn, in a directory of the
/// lab's own under `root`; the directory and everything in it is removed when the sink is
/// dropped, whether the run succeeded, failed or was cancelled.
pub struct RestoreSink {
    /// The restore directory, opened without following links; files are created in it.
    dir: OwnedFd,
    path: PathBuf,
    shapes: Vec<u64>,
    next_shape: usize,
    current: Option<File>,
    left_in_file: u64,
    files: u64,
    written: u64,
}

impl RestoreSink {
    /// Creates the restore directory under `root`.
    pub fn create(root: &Path, tag: &str, shapes: Vec<u64>) -> Result<Self, EngineError> {
        let path = root.join(format!("{LAB_FILE_PREFIX}{tag}.restore"));
        let create_error = |source| EngineError::RestoreCreate {
            path: root.to_path_buf(),
            source,
        };
        std::fs::create_dir(&path).map_err(create_error)?;
        let dir = open_dir_no_follow(&path).map_err(|error| create_error(error.into_io(&path)))?;
        Ok(Self {
            dir,
            path,
            shapes,
            next_shape: 0,
            current: None,
            left_in_file: 0,
            files: 0,
            written: 0,
        })
    }

    fn open_next(&mut self) -> io::Result<()> {
        let size = self.shapes[self.next_shape % self.shapes.len()];
        let name = format!("f{:07}", self.next_shape);
        self.next_shape += 1;
        self.current = Some(create_file_in(&self.dir, &name, false)?);
        self.left_in_file = size.max(1);
        Ok(())
    }

    fn write_error(&self, source: io::Error) -> io::Error {
        io::Error::new(
            source.kind(),
            format!("restoring into {}: {source}", self.path.display()),
        )
    }
}

impl Sink for RestoreSink {
    fn write_block(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            if self.current.is_none() {
                self.open_next().map_err(|error| self.write_error(error))?;
            }
            let take = data.len().min(self.left_in_file as usize);
            if let Some(file) = self.current.as_mut() {
                file.write_all(&data[..take])
                    .map_err(|error| self.write_error(error))?;
            }
            data = &data[take..];
            self.written += take as u64;
            self.left_in_file -= take as u64;
            if self.left_in_file == 0 {
                self.current = None;
                self.files += 1;
            }
        }
        Ok(())
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        if self.current.take().is_some() {
            self.files += 1;
        }
        if fsync {
            // Every restored file on stable storage: the file system's, in one call.
            sync_filesystem(&self.path).map_err(|error| self.write_error(error))?;
        }
        Ok(())
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn figures(&self) -> Option<SinkFigures> {
        Some(SinkFigures::Restored {
            files: self.files,
            into: self.path.display().to_string(),
        })
    }
}

impl Drop for RestoreSink {
    fn drop(&mut self) {
        self.current = None;
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(dir = %self.path.display(), %error, "could not remove a restore directory");
        }
    }
}
