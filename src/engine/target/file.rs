//! A file the operator names (`backlab lmdd of=FILE`): created or truncated, written from its
//! start, and kept, so that a later read can measure it. Only the command line builds it; a
//! campaign's targets are directories the lab cleans up.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{Capabilities, Opening, Sink, Target};
use crate::engine::buffer::PAGE;
use crate::engine::error::EngineError;
use crate::field_errors::FieldErrors;

/// The named file, open for writing.
pub struct FileSink {
    path: PathBuf,
    file: File,
    direct: bool,
}

impl Sink for FileSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.write_all(data)
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        if fsync {
            self.file.sync_data()?;
        }
        Ok(())
    }

    fn alignment(&self) -> usize {
        if self.direct { PAGE } else { 1 }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// A file on a real file system, kept after the run.
pub struct FileTarget<'a>(pub &'a Path);

impl Target for FileTarget<'_> {
    fn capabilities(&self) -> Capabilities {
        Capabilities::HARDWARE
    }

    fn words(&self) -> String {
        format!("file {}", self.0.display())
    }

    fn path(&self) -> Option<&Path> {
        Some(self.0)
    }

    fn device_id(&self) -> Option<u64> {
        let parent = self.0.parent().filter(|p| !p.as_os_str().is_empty());
        std::fs::metadata(parent.unwrap_or(Path::new(".")))
            .ok()
            .map(|metadata| metadata.dev())
    }

    fn preflight(&self, _direct: bool, _allow_devices: &[PathBuf], errors: &mut FieldErrors) {
        let parent = self.0.parent().filter(|p| !p.as_os_str().is_empty());
        if !parent.unwrap_or(Path::new(".")).is_dir() {
            errors.add(
                "of",
                format!("{}: its directory does not exist", self.0.display()),
            );
        }
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        if how.direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options
            .open(self.0)
            .map_err(|source| EngineError::TargetCreate {
                path: self.0.to_path_buf(),
                source,
            })?;
        Ok(vec![Box::new(FileSink {
            path: self.0.to_path_buf(),
            file,
            direct: how.direct,
        })])
    }
}
