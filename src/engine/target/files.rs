//! The lab's own files on a target: directories opened without following links, files
//! created (never opened) in them, flushes and closes left to the background so a cancel never
//! waits for them, and the files a crashed run left behind swept at start-up.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Prefix of every file the lab creates in a target directory; nothing else is ever touched.
pub const LAB_FILE_PREFIX: &str = "backlab-run-";

/// How often a flush left to its own thread is looked at, for a result or a cancel.
const SYNC_POLL: Duration = Duration::from_millis(50);

/// fdatasync on `file`, run on a thread of its own while this one waits for it unless
/// `give_up` is raised first. Then it returns at once and the flush ends in the background: a
/// flush cannot be interrupted, and can take seconds (gigabytes in the page cache, or ext4
/// committing other files' data with this file's metadata). The next run waits for it
/// (`wait_for_background`) so it does not measure it.
pub fn sync_or_give_up(file: &File, give_up: &AtomicBool) -> io::Result<()> {
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
pub fn close_in_background(file: File) {
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
pub(super) fn walk_dir_no_follow(path: &Path) -> Result<OwnedFd, NoFollowError> {
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
        let Some(rest) = name.strip_prefix(LAB_FILE_PREFIX) else {
            continue;
        };
        let (tag, kind) = match (
            rest.strip_suffix(".img"),
            rest.strip_suffix(".restore")
                .or_else(|| rest.strip_suffix(".dedup"))
                .or_else(|| rest.strip_suffix(".tool")),
        ) {
            (Some(tag), _) => (tag, FileType::RegularFile),
            (None, Some(tag)) => (tag, FileType::Directory),
            (None, None) => continue,
        };
        if writer_alive(tag) {
            continue;
        }
        let stat = rustix::fs::statat(&dir_fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
        if FileType::from_raw_mode(stat.st_mode) != kind {
            continue;
        }
        if kind == FileType::Directory {
            // A restore's or a dedup store's directory: the files it holds are the lab's too.
            // remove_dir_all
            // does not follow links.
            std::fs::remove_dir_all(dir.join(name))?;
        } else {
            rustix::fs::unlinkat(&dir_fd, name, AtFlags::empty())?;
        }
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

/// An I/O error in words a user acts on, naming the path.
pub fn describe(shown: &impl std::fmt::Display, error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => format!("{shown} does not exist"),
        io::ErrorKind::PermissionDenied => format!("{shown} cannot be read: permission denied"),
        _ => format!("{shown}: {error}"),
    }
}
