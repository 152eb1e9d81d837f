//! Copies of a source tree: one the lab may change for an incremental run, and one in a
//! memory file system for a tool's ceiling, refused when the memory cannot hold it.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::engine::source::{SourceFile, SourceRoot};
use crate::size::format_bytes;

use super::{
    RestoreLayout, TreeError, beneath_place, cancelled, gone, io_at, make_dir, make_fresh_dir,
    walk, walk_error,
};

/// Bytes copied between two looks at the cancel switch.
const COPY_CHUNK: u64 = 8 << 20;
/// Smallest room a memory directory keeps free beside the copy.
const MEMORY_RESERVE_MIN: u64 = 64 << 20;
/// Share of the memory available that a copy in a memory file system may take at most: the
/// rest is for the tool, its repository and the machine.
const MEMORY_SHARE: f64 = 0.5;
/// The statfs magic numbers of the memory file systems.
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// What [`copy_tree`] copied, and what it stepped over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TreeTally {
    /// Regular files copied.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Directories made, each root's own among them.
    pub dirs: u64,
    /// Entries not copied: symbolic links (never followed), devices, FIFOs, sockets, and files
    /// that vanished or stopped being regular files between the walk and their opening.
    pub skipped: u64,
}

/// Copies the regular files and directories beneath the source roots into `into`, each root
/// at its absolute path beneath it (root `/a/b` lands in `into/a/b`, see
/// [`RestoreLayout::place`]), so that a tool can back up a copy the lab may change (an
/// incremental run) or one in a memory file system (the tool's ceiling). Links are never
/// followed (they are skipped and counted), the walk stays on each root's file system, and
/// only contents are copied: modes, owners and times are the copy's own, and a file with
/// several links becomes one file per link. Stops at the next
/// chunk of 8 MiB or the next entry once `cancel` is set, leaving a partial copy for
/// [`remove_tree`].
pub fn copy_tree(
    roots: &[PathBuf],
    into: &Path,
    cancel: &AtomicBool,
) -> Result<TreeTally, TreeError> {
    fs::create_dir_all(into).map_err(io_at(into))?;
    let into_real = into.canonicalize().map_err(io_at(into))?;
    let mut tally = TreeTally::default();
    for root in roots {
        let opened = SourceRoot::open(root).map_err(io_at(root))?;
        let root_real = root.canonicalize().map_err(io_at(root))?;
        if into_real.starts_with(&root_real) {
            return Err(TreeError::IntoSource {
                into: into.to_path_buf(),
                root: root.clone(),
            });
        }
        let place = RestoreLayout::AbsolutePaths.place(root, into)?;
        if let Some(parent) = place.parent() {
            fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        for entry in walk(root) {
            cancelled(cancel, root)?;
            let entry = entry.map_err(|error| walk_error(root, error))?;
            let dest = beneath_place(&place, root, entry.path());
            let kind = entry.file_type();
            if kind.is_dir() {
                make_dir(&dest)?;
                tally.dirs += 1;
            } else if kind.is_file() {
                let file = SourceFile::beneath(&opened, entry.into_path());
                match copy_file(&file, &dest, cancel)? {
                    Some(bytes) => {
                        tally.files += 1;
                        tally.bytes += bytes;
                    }
                    None => tally.skipped += 1,
                }
            } else {
                tally.skipped += 1;
            }
        }
    }
    Ok(tally)
}

/// Copies one file; `None` when it was gone by the time it was opened.
fn copy_file(
    file: &SourceFile,
    dest: &Path,
    cancel: &AtomicBool,
) -> Result<Option<u64>, TreeError> {
    let source = match file.open(false) {
        Ok(source) => source,
        Err(error) if gone(&error) => return Ok(None),
        Err(error) => return Err(io_at(&file.path)(error)),
    };
    let copy = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dest)
        .map_err(io_at(dest))?;
    let failed = |source: io::Error| TreeError::Copy {
        from: file.path.clone(),
        to: dest.to_path_buf(),
        source,
    };
    let len = source.metadata().map_err(failed)?.len();
    // Sparse files stay sparse: only the data between holes is read and written, and the
    // copy gets the source's length, so a 2 GiB file of holes takes no room in the copy.
    let mut buffer = vec![0u8; COPY_CHUNK as usize];
    let mut offset = 0u64;
    while offset < len {
        cancelled(cancel, &file.path)?;
        let data = match rustix::fs::seek(&source, rustix::fs::SeekFrom::Data(offset)) {
            Ok(data) => data,
            // No data past `offset`: the rest is a hole.
            Err(rustix::io::Errno::NXIO) => len,
            // A file system that cannot say: all of it is data.
            Err(_) => offset,
        };
        if data >= len {
            break;
        }
        let hole = rustix::fs::seek(&source, rustix::fs::SeekFrom::Hole(data))
            .unwrap_or(len)
            .min(len);
        let mut at = data;
        while at < hole {
            cancelled(cancel, &file.path)?;
            let want = (hole - at).min(COPY_CHUNK) as usize;
            let read = source.read_at(&mut buffer[..want], at).map_err(failed)?;
            if read == 0 {
                break;
            }
            copy.write_all_at(&buffer[..read], at).map_err(failed)?;
            at += read as u64;
        }
        offset = hole.max(at).max(data + 1);
    }
    copy.set_len(len).map_err(failed)?;
    Ok(Some(len))
}

/// Why no directory in a memory file system was made: a sentence a run shows as a warning
/// before it falls back to the page cache.
#[derive(Debug, thiserror::Error)]
pub enum MemoryRefused {
    #[error("{path} is not a memory file system (tmpfs or ramfs)")]
    NotMemory { path: PathBuf },
    #[error(
        "{path} has {} free; the copy needs {} with its reserve",
        format_bytes(*free_bytes),
        format_bytes(*need_bytes)
    )]
    TooSmall {
        path: PathBuf,
        free_bytes: u64,
        need_bytes: u64,
    },
    #[error(
        "the copy needs {} with its reserve, more than half of the {} of memory available",
        format_bytes(*need_bytes),
        format_bytes(*available_bytes)
    )]
    MemoryShort {
        available_bytes: u64,
        need_bytes: u64,
    },
    #[error("the memory available is unknown (no MemAvailable in /proc/meminfo)")]
    MemoryUnknown,
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// A fresh, empty directory (mode 0700) inside `base` (`/dev/shm`, say) for a copy of
/// `need_bytes` the tool's ceiling reads from memory, when `base` is a memory file system
/// (tmpfs or ramfs, by its statfs magic) with room for the copy and a reserve (a sixteenth of
/// it, 64 MiB at least), and the two together take at most half of the memory available
/// (`MemAvailable`): a copy that pushed the machine into swap or the tool out of memory would
/// measure neither. Give the tree's allocated bytes ([`tree_size`]) as `need_bytes`: a memory
/// file system stores a small file in a whole page too. Its name begins with
/// [`MEMORY_DIR_PREFIX`]; the caller removes it ([`remove_tree`]).
pub fn memory_dir(base: &Path, need_bytes: u64) -> Result<PathBuf, MemoryRefused> {
    let unreadable = |source: rustix::io::Errno| MemoryRefused::Io {
        path: base.to_path_buf(),
        source: source.into(),
    };
    let stats = rustix::fs::statfs(base).map_err(unreadable)?;
    let magic = stats.f_type as i64;
    if magic != TMPFS_MAGIC && magic != RAMFS_MAGIC {
        return Err(MemoryRefused::NotMemory {
            path: base.to_path_buf(),
        });
    }
    let need_bytes = need_bytes.saturating_add((need_bytes / 16).max(MEMORY_RESERVE_MIN));
    // A ramfs has no size and reports no free space: memory alone bounds it.
    if magic == TMPFS_MAGIC {
        let stats = rustix::fs::statvfs(base).map_err(unreadable)?;
        let free_bytes = stats.f_bavail.saturating_mul(stats.f_frsize);
        if free_bytes < need_bytes {
            return Err(MemoryRefused::TooSmall {
                path: base.to_path_buf(),
                free_bytes,
                need_bytes,
            });
        }
    }
    let available_bytes = memory_available_bytes().ok_or(MemoryRefused::MemoryUnknown)?;
    if need_bytes as f64 > available_bytes as f64 * MEMORY_SHARE {
        return Err(MemoryRefused::MemoryShort {
            available_bytes,
            need_bytes,
        });
    }
    make_fresh_dir(base)
}

/// Memory the kernel says is available for new work without swapping (`MemAvailable`).
fn memory_available_bytes() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
