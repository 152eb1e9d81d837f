//! The restore test: a backup image on the target read back into a directory as files shaped
//! like the source. The target provides the image and the stream that reads it
//! (`Target::restore_image`); this module writes what it reads as files, one after another,
//! in a directory of the lab's own that is removed when the run ends.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::cache::sync_filesystem;
use super::source::list_files;
use super::target::files::{LAB_FILE_PREFIX, create_file_in, open_dir_no_follow};
pub use super::target::image::{
    ImageReader, ImageRequest, MediumFigures, RestoreImage, write_image,
};
use super::target::{Sink, SinkFigures};
use crate::engine::error::EngineError;

/// Size of each restored file when the source is generated data and has no files to imitate.
pub const GENERATED_FILE_BYTES: u64 = 64 << 20;
/// Files of the source whose sizes the restored files take, in turn.
const SHAPE_FILES: usize = 4096;

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
        Some(SinkFigures::restored(
            self.files,
            self.path.display().to_string(),
        ))
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
