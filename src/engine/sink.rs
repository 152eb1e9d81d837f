//! Sinks: where the writer drains the ring. A new target kind is one new `Sink`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::buffer::PAGE;
use super::error::EngineError;

/// Prefix of every file the lab creates in a target directory; nothing else is ever touched.
pub const LAB_FILE_PREFIX: &str = "backlab-run-";

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
    /// An emulated drive's own figures.
    fn tape(&self) -> Option<super::result::TapeFigures> {
        None
    }
}

/// Discards everything: the ceiling of the pipeline itself.
pub struct NullSink;

impl Sink for NullSink {
    fn write_block(&mut self, _data: &[u8]) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self, _fsync: bool) -> io::Result<()> {
        Ok(())
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        Path::new("null")
    }
}

/// A file the lab creates in a target directory, written like a backup image and removed when
/// the sink is dropped, whether the run succeeded, failed or was cancelled.
pub struct DirSink {
    path: PathBuf,
    file: File,
    direct: bool,
}

impl DirSink {
    /// Creates a new file; never opens an existing one.
    pub fn create(dir: &Path, tag: &str, direct: bool) -> Result<Self, EngineError> {
        let path = dir.join(format!("{LAB_FILE_PREFIX}{tag}.img"));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        if direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options
            .open(&path)
            .map_err(|source| EngineError::TargetCreate {
                path: dir.to_path_buf(),
                source,
            })?;
        Ok(Self { path, file, direct })
    }
}

impl Sink for DirSink {
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

impl Drop for DirSink {
    fn drop(&mut self) {
        // The file is the lab's own; failing to remove it leaves it for the start-up sweep.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A raw device written sequentially from its start. Only opened when the caller allowed it.
pub struct DeviceSink {
    path: PathBuf,
    file: File,
    direct: bool,
}

impl DeviceSink {
    /// Opens an existing block or character device listed in `allowed`.
    pub fn open(path: &Path, allowed: &[PathBuf], direct: bool) -> Result<Self, EngineError> {
        if !device_allowed(path, allowed) {
            return Err(EngineError::DeviceNotAllowed {
                path: path.to_path_buf(),
            });
        }
        let open_error = |source| EngineError::DeviceOpen {
            path: path.to_path_buf(),
            source,
        };
        let kind = std::fs::metadata(path).map_err(open_error)?.file_type();
        if !(kind.is_block_device() || kind.is_char_device()) {
            return Err(open_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a block or character device",
            )));
        }
        let mut options = OpenOptions::new();
        options.write(true);
        if direct && kind.is_block_device() {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options.open(path).map_err(open_error)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            direct: direct && kind.is_block_device(),
        })
    }
}

impl Sink for DeviceSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.write_all(data)
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        if fsync {
            match self.file.sync_data() {
                // Character devices such as /dev/null cannot be synced; there is nothing to flush.
                Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Ok(()),
                other => other,
            }
        } else {
            Ok(())
        }
    }

    fn alignment(&self) -> usize {
        if self.direct { PAGE } else { 1 }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether `path` names one of the allowed devices (compared after resolving symlinks).
pub fn device_allowed(path: &Path, allowed: &[PathBuf]) -> bool {
    let Ok(resolved) = path.canonicalize() else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|allowed| allowed.canonicalize().ok())
        .any(|allowed| allowed == resolved)
}

/// Removes files the lab left in `dir` after a crash; returns how many were removed. A file
/// whose name carries the process id of a live process other than this one is left alone: a
/// `backlab run` may be writing it.
pub fn sweep_lab_files(dir: &Path) -> io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(tag) = name
            .strip_prefix(LAB_FILE_PREFIX)
            .and_then(|rest| rest.strip_suffix(".img"))
        else {
            continue;
        };
        if writer_alive(tag) || !entry.file_type()?.is_file() {
            continue;
        }
        std::fs::remove_file(entry.path())?;
        removed += 1;
    }
    Ok(removed)
}

/// Whether the process named in a run tag (`<pid>-<random>`) is alive and not this one.
fn writer_alive(tag: &str) -> bool {
    let Some(pid) = tag
        .split('-')
        .next()
        .and_then(|pid| pid.parse::<u32>().ok())
    else {
        return false;
    };
    pid != std::process::id() && Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_sink_never_overwrites_and_cleans_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut sink = DirSink::create(dir.path(), "t1", false).expect("create");
        assert!(
            DirSink::create(dir.path(), "t1", false).is_err(),
            "second create must fail"
        );
        sink.write_block(b"hello").expect("write");
        sink.finish(true).expect("finish");
        assert!(sink.path().exists());
        drop(sink);
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
    }

    #[test]
    fn sweep_spares_files_of_live_writers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dead = dir
            .path()
            .join(format!("{LAB_FILE_PREFIX}999999999-ab.img"));
        let mine = dir
            .path()
            .join(format!("{LAB_FILE_PREFIX}{}-cd.img", std::process::id()));
        let live = dir.path().join(format!("{LAB_FILE_PREFIX}1-ef.img"));
        let other = dir.path().join("keep.img");
        for path in [&dead, &mine, &live, &other] {
            std::fs::write(path, b"x").expect("write");
        }
        assert_eq!(sweep_lab_files(dir.path()).expect("sweep"), 2);
        assert!(!dead.exists() && !mine.exists());
        assert!(live.exists() && other.exists());
    }

    #[test]
    fn devices_need_permission() {
        let denied = DeviceSink::open(Path::new("/dev/null"), &[], false);
        assert!(matches!(denied, Err(EngineError::DeviceNotAllowed { .. })));
        let allowed = [PathBuf::from("/dev/null")];
        let mut sink = DeviceSink::open(Path::new("/dev/null"), &allowed, false).expect("open");
        sink.write_block(&[0; 512]).expect("write");
        sink.finish(true).expect("finish");
        let regular = tempfile::NamedTempFile::new().expect("file");
        let refused = DeviceSink::open(regular.path(), &[regular.path().to_path_buf()], false);
        assert!(matches!(refused, Err(EngineError::DeviceOpen { .. })));
    }
}
