//! The file trees a backup tool the lab runs works on: copies of the source (one the lab may
//! change for an incremental run, one in a memory file system for the tool's ceiling), a
//! nightly change of a known share of a tree (and a whole night of a life: edits, new,
//! deleted and renamed files), the check of a restore against its source file
//! by file, a repository's stored size, a cold start, and the removal of scratch trees a tool
//! left read-only. Every walk reads its tree as the lab's own readers do: in name order, on
//! the root's file system, never following a link, source files opened beneath their root.
//!
//! This file holds the walk and the removal they share, a tree's size and its eviction from
//! the page cache; the copies are in `copy`, the nightly change in `change`, a night of a life
//! in `night`, and the check of a restore in `verify`.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use crate::engine::cache;
use crate::engine::source::each_file;

mod change;
mod copy;
mod night;
mod verify;

pub use change::{Changed, change_share};
pub use copy::{MemoryRefused, TreeTally, copy_tree, memory_dir};
pub use night::{NightChanged, NightModel, apply_night};
pub use verify::{
    RestoreLayout, SourceState, Verified, changed_since, listed as listed_paths, verify,
};

/// Bytes read between two looks at the cancel switch when hashing, and when rewriting.
const IO_CHUNK: usize = 1 << 20;
/// Paths a verification lists of each kind (missing, differing); the counts go on.
pub const LISTED_PATHS: usize = 10;
/// How the name of each directory [`memory_dir`] makes begins, so a sweep at start can find
/// the ones a crashed lab left: `backlab-tool-<pid>-<n>`.
pub const MEMORY_DIR_PREFIX: &str = "backlab-tool-";

/// Why a tree could not be copied, changed, verified, measured or removed; each names the path.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("copying {from} to {to}: {source}")]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: io::Error,
    },
    #[error("{path} cannot be laid out in another directory: {why}")]
    RootPath { path: PathBuf, why: &'static str },
    #[error("{into} lies beneath the source {root}: a copy there would copy itself")]
    IntoSource { into: PathBuf, root: PathBuf },
    #[error("{path}: a share of {share} of its bytes cannot be changed (give 0 to 1)")]
    Share { path: PathBuf, share: f64 },
    #[error("{path}: a night's {name} share of {share} is not from 0 to 1")]
    NightShare {
        path: PathBuf,
        name: &'static str,
        share: f64,
    },
    #[error("{path} is another file system mounted inside the tree: it is not removed")]
    Mounted { path: PathBuf },
    #[error("cancelled at {path}")]
    Cancelled { path: PathBuf },
}

/// The error of an I/O call on `path`.
fn io_at(path: &Path) -> impl FnOnce(io::Error) -> TreeError + '_ {
    move |source| TreeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn walk_error(root: &Path, error: walkdir::Error) -> TreeError {
    TreeError::Io {
        path: error.path().unwrap_or(root).to_path_buf(),
        source: error.into(),
    }
}

/// A walk beneath `root` as the lab's readers walk a source: name order, on the root's file
/// system, links not followed.
fn walk(root: &Path) -> walkdir::IntoIter {
    WalkDir::new(root)
        .follow_links(false)
        .same_file_system(true)
        .sort_by_file_name()
        .into_iter()
}

fn cancelled(cancel: &AtomicBool, path: &Path) -> Result<(), TreeError> {
    if cancel.load(Ordering::Relaxed) {
        return Err(TreeError::Cancelled {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Where `path`, found beneath `root`, lies beneath the root's `place`.
fn beneath_place(place: &Path, root: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => place.join(relative),
        _ => place.to_path_buf(),
    }
}

/// `path` relative to `root`, as a verification names it (a root that is one file is named
/// by its file name).
fn shown(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.file_name().map_or_else(
            || path.display().to_string(),
            |name| name.display().to_string(),
        ),
    }
}

/// Makes a directory of the copy; one already there (two roots sharing a part) is kept.
fn make_dir(path: &Path) -> Result<(), TreeError> {
    match fs::create_dir(path) {
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            match fs::symlink_metadata(path) {
                Ok(metadata) if metadata.is_dir() => Ok(()),
                _ => Err(TreeError::Io {
                    path: path.to_path_buf(),
                    source: error,
                }),
            }
        }
        made => made.map_err(io_at(path)),
    }
}

/// Whether opening a file the walk found failed because it is no longer there as a regular
/// file (vanished, swapped for a link or something else): it is skipped, as a backup does.
fn gone(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::InvalidInput
    ) || error.raw_os_error() == Some(libc::ELOOP)
}

/// Makes `<base>/backlab-tool-<pid>-<n>`, with a number no other directory there has.
fn make_fresh_dir(base: &Path) -> Result<PathBuf, MemoryRefused> {
    static MADE: AtomicU64 = AtomicU64::new(0);
    loop {
        let number = MADE.fetch_add(1, Ordering::Relaxed);
        let path = base.join(format!(
            "{MEMORY_DIR_PREFIX}{}-{number}",
            std::process::id()
        ));
        match fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(MemoryRefused::Io { path, source }),
        }
    }
}

/// The size of a tree on its disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TreeSize {
    /// Regular files.
    pub files: u64,
    /// Directories, the root's own among them.
    pub dirs: u64,
    /// The regular files' lengths added up.
    pub apparent_bytes: u64,
    /// What every entry takes on the disk (`st_blocks` × 512, as `du` counts): less than the
    /// apparent bytes for sparse files, more for many small ones.
    pub allocated_bytes: u64,
}

/// Counts a directory (or one file) as a repository's stored size after a backup: its files,
/// their apparent bytes and what the disk allocated for it. Links are not followed, the count
/// stays on the root's file system, and a file with several links is counted once.
pub fn tree_size(root: &Path) -> Result<TreeSize, TreeError> {
    let mut size = TreeSize::default();
    let mut linked = std::collections::HashSet::new();
    for entry in walk(root) {
        let entry = entry.map_err(|error| walk_error(root, error))?;
        let metadata = entry.metadata().map_err(|error| walk_error(root, error))?;
        if metadata.nlink() > 1
            && !metadata.is_dir()
            && !linked.insert((metadata.dev(), metadata.ino()))
        {
            continue;
        }
        size.allocated_bytes += metadata.blocks() * 512;
        if metadata.is_dir() {
            size.dirs += 1;
        } else if metadata.is_file() {
            size.files += 1;
            size.apparent_bytes += metadata.len();
        }
    }
    Ok(size)
}

/// Counts what `pattern` names, as [`tree_size`] counts a tree: one path, or, when its last
/// part holds `*`, every entry of its directory whose name matches (`index.*`). Nothing there
/// counts nothing.
pub fn matching_size(pattern: &Path) -> Result<TreeSize, TreeError> {
    let wildcard = pattern
        .file_name()
        .and_then(|name| name.to_str())
        .filter(|name| name.contains('*'));
    let (Some(wildcard), Some(dir)) = (wildcard, pattern.parent()) else {
        return match fs::symlink_metadata(pattern) {
            Ok(_) => tree_size(pattern),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(TreeSize::default()),
            Err(error) => Err(io_at(pattern)(error)),
        };
    };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(TreeSize::default()),
        Err(error) => return Err(io_at(dir)(error)),
    };
    let mut size = TreeSize::default();
    for entry in entries {
        let entry = entry.map_err(io_at(dir))?;
        if wildcard_matches(wildcard, &entry.file_name().to_string_lossy()) {
            let one = tree_size(&entry.path())?;
            size.files += one.files;
            size.dirs += one.dirs;
            size.apparent_bytes += one.apparent_bytes;
            size.allocated_bytes += one.allocated_bytes;
        }
    }
    Ok(size)
}

/// Whether `name` matches `pattern`, whose `*`s stand for any run of characters.
fn wildcard_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// What [`drop_from_cache`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Evicted {
    /// Regular files beneath the roots, each asked out of the page cache.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Of those, the bytes still in the page cache afterwards (pages that stayed dirty, or
    /// another process maps): a backup started now reads that much from memory.
    pub resident_bytes: u64,
}

/// Drops every file beneath the roots from the page cache (after writing back the dirty pages
/// of their file systems), so a tool's backup starts cold as the lab's own reads do, and says
/// how much stayed. A file that cannot be opened is passed over.
pub fn drop_from_cache(roots: &[PathBuf]) -> Evicted {
    for root in roots {
        // Dirty pages cannot be evicted; writing them back first makes eviction complete.
        let _ = cache::sync_filesystem(root);
    }
    let mut evicted = Evicted::default();
    each_file(roots, |found, _| {
        let dropped = found.open(false).and_then(|file| {
            let len = file.metadata()?.len();
            cache::evict(&file)?;
            Ok((len, cache::resident_bytes(&file, len)?))
        });
        if let Ok((len, resident)) = dropped {
            evicted.files += 1;
            evicted.bytes += len;
            evicted.resident_bytes += resident;
        }
        true
    });
    evicted
}

/// Removes a scratch tree (a copy, a repository, a restore) even where a tool left read-only
/// files or directories, as restic does with its repository: a directory is made writable
/// before it is emptied. Links are removed, never followed; a file system mounted inside the
/// tree is refused, not emptied. A path that is not there is already removed.
pub fn remove_tree(path: &Path) -> Result<(), TreeError> {
    let metadata = match fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io_at(path)(error)),
    };
    if metadata.is_dir() {
        empty_dir(path, &metadata, metadata.dev())?;
        fs::remove_dir(path).map_err(io_at(path))
    } else {
        fs::remove_file(path).map_err(io_at(path))
    }
}

/// Removes everything inside the directory `path`, staying on device `device`.
fn empty_dir(path: &Path, metadata: &fs::Metadata, device: u64) -> Result<(), TreeError> {
    if metadata.dev() != device {
        return Err(TreeError::Mounted {
            path: path.to_path_buf(),
        });
    }
    let mode = metadata.permissions().mode();
    if mode & 0o700 != 0o700 {
        fs::set_permissions(path, fs::Permissions::from_mode(mode | 0o700)).map_err(io_at(path))?;
    }
    for entry in fs::read_dir(path).map_err(io_at(path))? {
        let entry = entry.map_err(io_at(path))?;
        let inner = entry.path();
        let metadata = fs::symlink_metadata(&inner).map_err(io_at(&inner))?;
        if metadata.is_dir() {
            empty_dir(&inner, &metadata, device)?;
            fs::remove_dir(&inner).map_err(io_at(&inner))?;
        } else {
            fs::remove_file(&inner).map_err(io_at(&inner))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
