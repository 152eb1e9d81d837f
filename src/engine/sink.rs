//! Sinks: where the writer drains the ring. A new target kind is one new `Sink`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::buffer::PAGE;
use super::error::EngineError;

/// Prefix of every file the lab creates in a target directory; nothing else is ever touched.
pub const LAB_FILE_PREFIX: &str = "backlab-run-";

/// How often a flush left to its own thread is looked at, for a result or a cancel.
const SYNC_POLL: Duration = Duration::from_millis(50);

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
/// the sink is dropped, whether the run succeeded, failed or was cancelled: its name at once,
/// its space when it is closed in the background (`close_in_background`).
pub struct DirSink {
    path: PathBuf,
    /// The target directory, opened without following links; the file is created and removed
    /// relative to it, so a directory swapped in later is never written to or removed from.
    dir: OwnedFd,
    name: String,
    /// Always present until the sink is dropped, when it is handed to `close_in_background`.
    file: Option<File>,
    direct: bool,
}

impl DirSink {
    /// Creates a new file; never opens an existing one, and follows no symbolic link on the
    /// way to it.
    pub fn create(dir: &Path, tag: &str, direct: bool) -> Result<Self, EngineError> {
        let dir_fd = open_dir_no_follow(dir).map_err(|error| match error {
            NoFollowError::Link => EngineError::TargetLink {
                path: dir.to_path_buf(),
            },
            NoFollowError::Io(source) => EngineError::TargetCreate {
                path: dir.to_path_buf(),
                source,
            },
        })?;
        let name = format!("{LAB_FILE_PREFIX}{tag}.img");
        let file =
            create_file_in(&dir_fd, &name, direct).map_err(|source| EngineError::TargetCreate {
                path: dir.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: dir.join(&name),
            dir: dir_fd,
            name,
            file: Some(file),
            direct,
        })
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the target file is already closed"))
    }
}

impl Sink for DirSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.file()?.write_all(data)
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        if fsync {
            self.file()?.sync_data()?;
        }
        Ok(())
    }

    fn finish_or_give_up(&mut self, fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        if fsync {
            sync_or_give_up(self.file()?, give_up)?;
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
        let _ = rustix::fs::unlinkat(&self.dir, self.name.as_str(), AtFlags::empty());
        if let Some(file) = self.file.take() {
            close_in_background(file);
        }
    }
}

/// fdatasync on `file`, run on a thread of its own while this one waits for it unless
/// `give_up` is raised first. Then it returns at once and the flush ends in the background: a
/// flush cannot be interrupted, and can take seconds (gigabytes in the page cache, or ext4
/// committing other files' data with this file's metadata). The next run waits for it
/// (`wait_for_background`) so it does not measure it.
fn sync_or_give_up(file: &File, give_up: &AtomicBool) -> io::Result<()> {
    let copy = file.try_clone()?;
    let (result_tx, result_rx) = crossbeam_channel::bounded(1);
    background_started();
    let spawned = std::thread::Builder::new()
        .name("backlab-sync".to_string())
        .spawn(move || {
            let _ = result_tx.send(copy.sync_data());
            drop(copy);
            background_ended();
        });
    if spawned.is_err() {
        // No thread to spare: the copy was closed when the closure was dropped.
        background_ended();
        return file.sync_data();
    }
    loop {
        match result_rx.recv_timeout(SYNC_POLL) {
            Ok(result) => return result,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                if give_up.load(Ordering::Relaxed) {
                    return Ok(());
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(io::Error::other("the flush ended without a result"));
            }
        }
    }
}

/// Closes and flushes of target files still under way on their own threads.
static IN_BACKGROUND: Mutex<usize> = Mutex::new(0);
/// Signalled whenever one of them ends.
static BACKGROUND_ENDED: Condvar = Condvar::new();

/// Closes a sink's file on a thread of its own. Closing the last descriptor of a removed file
/// frees its pages, and waits for those already under write-back: behind a busy disk, more
/// than a second. A device's last close writes back all its dirty pages. Neither belongs to the
/// run that ends, so a cancelled run ends at once; the next run waits for them
/// (`wait_for_background`) so it does not measure them.
fn close_in_background(file: File) {
    background_started();
    let spawned = std::thread::Builder::new()
        .name("backlab-close".to_string())
        .spawn(move || {
            drop(file);
            background_ended();
        });
    if spawned.is_err() {
        // No thread to spare: the file was closed right here, when the closure was dropped.
        background_ended();
    }
}

fn background_started() {
    if let Ok(mut pending) = IN_BACKGROUND.lock() {
        *pending += 1;
    }
}

fn background_ended() {
    if let Ok(mut pending) = IN_BACKGROUND.lock() {
        *pending = pending.saturating_sub(1);
    }
    BACKGROUND_ENDED.notify_all();
}

/// Waits until the closes and flushes earlier runs left in the background have ended, at most
/// `timeout`; whether they have.
pub fn wait_for_background(timeout: Duration) -> bool {
    let Ok(pending) = IN_BACKGROUND.lock() else {
        return false;
    };
    match BACKGROUND_ENDED.wait_timeout_while(pending, timeout, |pending| *pending > 0) {
        Ok((pending, _)) => *pending == 0,
        Err(_) => false,
    }
}

/// Why a directory on a target's path was not opened.
#[derive(Debug)]
pub enum NoFollowError {
    /// A component of the path is a symbolic link. Where it points is deliberately not said.
    Link,
    /// Any other failure (missing, not a directory, permission denied...).
    Io(io::Error),
}

impl NoFollowError {
    /// The failure as an I/O error, for callers that only log it.
    pub fn into_io(self, path: &Path) -> io::Error {
        match self {
            Self::Link => io::Error::other(format!(
                "target directory {}: a component is a symbolic link; the lab does not follow \
                 links in targets",
                path.display()
            )),
            Self::Io(error) => error,
        }
    }
}

/// Opens the directory `path` (an `O_PATH` descriptor, for the `*at` calls) so that no symbolic
/// link anywhere on the path is followed: a target checked against the allow-lists cannot be
/// redirected by swapping one of its components for a link. Uses `openat2` with
/// `RESOLVE_NO_SYMLINKS` where the kernel has it, else walks the path one component at a time
/// with `O_NOFOLLOW`.
pub fn open_dir_no_follow(path: &Path) -> Result<OwnedFd, NoFollowError> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let mut attempts = 0;
    loop {
        match rustix::fs::openat2(CWD, path, flags, Mode::empty(), resolve) {
            Ok(fd) => return Ok(fd),
            Err(Errno::LOOP) => return Err(NoFollowError::Link),
            // A concurrent rename can make the kernel ask for a retry.
            Err(Errno::AGAIN) if attempts < 8 => attempts += 1,
            // No openat2 (kernels before 5.6, or a sandbox that filters it).
            Err(Errno::NOSYS | Errno::PERM) => return walk_dir_no_follow(path),
            Err(error) => return Err(NoFollowError::Io(error.into())),
        }
    }
}

/// The fallback of `open_dir_no_follow`: from `/` (or the working directory for a relative
/// path), each component is opened with `O_NOFOLLOW | O_DIRECTORY` relative to the previous one.
fn walk_dir_no_follow(path: &Path) -> Result<OwnedFd, NoFollowError> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let start = if path.is_absolute() { "/" } else { "." };
    let mut dir = rustix::fs::openat(CWD, start, flags, Mode::empty())
        .map_err(|error| NoFollowError::Io(error.into()))?;
    for component in path.components() {
        let name = match component {
            Component::Normal(name) => name,
            Component::ParentDir => OsStr::new(".."),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
        };
        let opened = rustix::fs::openat(&dir, name, flags | OFlags::NOFOLLOW, Mode::empty());
        dir = match opened {
            // O_PATH with O_NOFOLLOW can hand back the link itself: look at what was opened.
            Ok(next) => match rustix::fs::fstat(&next) {
                Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => next,
                Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                    return Err(NoFollowError::Link);
                }
                Ok(_) => return Err(NoFollowError::Io(Errno::NOTDIR.into())),
                Err(error) => return Err(NoFollowError::Io(error.into())),
            },
            Err(error) => {
                let is_link = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink);
                return Err(if is_link {
                    NoFollowError::Link
                } else {
                    NoFollowError::Io(error.into())
                });
            }
        };
    }
    Ok(dir)
}

/// Creates the file `name` in `dir` for writing: never an existing file, never through a link.
pub fn create_file_in(dir: &OwnedFd, name: &str, direct: bool) -> io::Result<File> {
    let mut flags = OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::WRONLY;
    flags |= OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o666))?;
    Ok(File::from(fd))
}

/// A raw device written sequentially from its start. Only opened when the caller allowed it.
pub struct DeviceSink {
    path: PathBuf,
    /// Always present until the sink is dropped, when it is handed to `close_in_background`.
    file: Option<File>,
    direct: bool,
}

impl DeviceSink {
    /// Opens an existing block or character device listed in `allowed`. The path is resolved
    /// once, compared with the allowed devices, and the resolved path is then opened without
    /// following any symbolic link, so what is written is what was compared.
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
        let resolved = path.canonicalize().map_err(open_error)?;
        let (Some(parent), Some(name)) = (resolved.parent(), resolved.file_name()) else {
            return Err(open_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a block or character device",
            )));
        };
        let dir = open_dir_no_follow(parent).map_err(|error| {
            open_error(match error {
                NoFollowError::Link => io::Error::other(
                    "a component of the path is a symbolic link; the lab does not follow links \
                     in targets",
                ),
                NoFollowError::Io(error) => error,
            })
        })?;
        let device_kind = |stat: &rustix::fs::Stat| match FileType::from_raw_mode(stat.st_mode) {
            FileType::BlockDevice => Some(true),
            FileType::CharacterDevice => Some(false),
            _ => None,
        };
        let not_a_device = || {
            open_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a block or character device",
            ))
        };
        let stat = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|error| open_error(error.into()))?;
        let block = device_kind(&stat).ok_or_else(not_a_device)?;
        let direct = direct && block;
        let mut flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if direct {
            flags |= OFlags::DIRECT;
        }
        let fd = rustix::fs::openat(&dir, name, flags, Mode::empty())
            .map_err(|error| open_error(error.into()))?;
        // What was opened must still be the device that was looked at.
        let opened = rustix::fs::fstat(&fd).map_err(|error| open_error(error.into()))?;
        if device_kind(&opened) != Some(block) || opened.st_rdev != stat.st_rdev {
            return Err(not_a_device());
        }
        Ok(Self {
            path: path.to_path_buf(),
            file: Some(File::from(fd)),
            direct,
        })
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the device is already closed"))
    }
}

impl Sink for DeviceSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.file()?.write_all(data)
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        self.finish_or_give_up(fsync, &AtomicBool::new(false))
    }

    fn finish_or_give_up(&mut self, fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        if !fsync {
            return Ok(());
        }
        match sync_or_give_up(self.file()?, give_up) {
            // Character devices such as /dev/null cannot be synced; there is nothing to flush.
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Ok(()),
            other => other,
        }
    }

    fn alignment(&self) -> usize {
        if self.direct { PAGE } else { 1 }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DeviceSink {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            close_in_background(file);
        }
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
/// `backlab run` may be writing it. The directory is opened without following links, and only
/// regular files in it are removed.
pub fn sweep_lab_files(dir: &Path) -> io::Result<usize> {
    let dir_fd = open_dir_no_follow(dir).map_err(|error| error.into_io(dir))?;
    let listing = rustix::fs::openat(
        &dir_fd,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut removed = 0;
    for entry in rustix::fs::Dir::new(listing)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        let Some(tag) = name
            .strip_prefix(LAB_FILE_PREFIX)
            .and_then(|rest| rest.strip_suffix(".img"))
        else {
            continue;
        };
        if writer_alive(tag) {
            continue;
        }
        let stat = rustix::fs::statat(&dir_fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            continue;
        }
        rustix::fs::unlinkat(&dir_fd, name, AtFlags::empty())?;
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
        assert!(
            wait_for_background(Duration::from_secs(30)),
            "closed in the background"
        );
    }

    /// A target root holding `target/inner`, and a directory outside it; `target/inner` is then
    /// swapped for a link to the outside, as someone with write access to the root could.
    fn swapped_target() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(outside.join("deeper")).expect("outside");
        let target = root.path().join("target");
        std::fs::create_dir(&target).expect("target");
        std::os::unix::fs::symlink(&outside, target.join("inner")).expect("symlink");
        (root, target, outside)
    }

    #[test]
    fn a_link_anywhere_on_the_target_path_is_refused_and_nothing_is_written_outside() {
        let (_root, target, outside) = swapped_target();
        for dir in [target.join("inner"), target.join("inner/deeper")] {
            let refused = DirSink::create(&dir, "t1", false);
            let Err(error) = refused else {
                panic!("{} was followed", dir.display());
            };
            assert!(matches!(error, EngineError::TargetLink { .. }), "{error}");
            let message = error.to_string();
            assert!(
                message.contains("symbolic link") && !message.contains("outside"),
                "the message must not say where the link points: {message}"
            );
            assert!(matches!(walk_dir_no_follow(&dir), Err(NoFollowError::Link)));
            assert!(sweep_lab_files(&dir).is_err());
        }
        let written: Vec<_> = walkdir::WalkDir::new(&outside)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_file())
            .collect();
        assert!(written.is_empty(), "written outside: {written:?}");
        // The same directory without the link is fine, through either way of opening it.
        assert!(walk_dir_no_follow(&target).is_ok());
        assert!(walk_dir_no_follow(&outside.join("deeper")).is_ok());
        let sink = DirSink::create(&outside.join("deeper"), "t2", false).expect("plain dir");
        drop(sink);
        assert!(matches!(
            walk_dir_no_follow(&target.join("missing")),
            Err(NoFollowError::Io(error)) if error.kind() == io::ErrorKind::NotFound
        ));
    }

    #[test]
    fn the_file_is_removed_from_the_directory_it_was_created_in_even_after_a_swap() {
        let root = tempfile::tempdir().expect("tempdir");
        let target = root.path().join("target");
        let outside = root.path().join("outside");
        std::fs::create_dir(&target).expect("target");
        std::fs::create_dir(&outside).expect("outside");
        let mut sink = DirSink::create(&target, "t3", false).expect("create");
        sink.write_block(b"data").expect("write");
        let name = sink.path().file_name().expect("name").to_owned();
        // The target is moved away and a link to the outside takes its place, holding a file
        // of the same name that is not the lab's.
        let moved = root.path().join("moved");
        std::fs::rename(&target, &moved).expect("rename");
        std::os::unix::fs::symlink(&outside, &target).expect("symlink");
        std::fs::write(outside.join(&name), b"not the lab's").expect("decoy");
        drop(sink);
        assert!(!moved.join(&name).exists(), "the lab's file is removed");
        assert_eq!(
            std::fs::read(outside.join(&name)).expect("decoy stays"),
            b"not the lab's"
        );
    }

    #[test]
    fn a_flush_given_up_on_ends_in_the_background() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut sink = DirSink::create(dir.path(), "t4", false).expect("create");
        sink.write_block(&vec![7u8; 8 << 20]).expect("write");
        sink.finish_or_give_up(true, &AtomicBool::new(false))
            .expect("flush");
        sink.write_block(&vec![7u8; 8 << 20]).expect("write");
        sink.finish_or_give_up(true, &AtomicBool::new(true))
            .expect("giving up is not an error");
        drop(sink);
        assert!(wait_for_background(Duration::from_secs(30)));
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
        // A link to an allowed device (as /dev/disk/by-id/... are) is resolved and compared
        // once; the resolved path is what is opened.
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("by-id");
        std::os::unix::fs::symlink("/dev/null", &link).expect("symlink");
        let mut sink = DeviceSink::open(&link, &allowed, false).expect("open through a link");
        sink.write_block(&[0; 512]).expect("write");
    }
}
