//! The file trees a backup tool the lab runs works on: copies of the source (one the lab may
//! change for an incremental run, one in a memory file system for the tool's ceiling), a
//! nightly change of a known share of a tree, the check of a restore against its source file
//! by file, a repository's stored size, a cold start, and the removal of scratch trees a tool
//! left read-only. Every walk reads its tree as the lab's own readers do: in name order, on
//! the root's file system, never following a link, source files opened beneath their root.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use rand::seq::SliceRandom;
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use crate::engine::cache;
use crate::engine::source::{SourceFile, SourceRoot, each_file};
use crate::size::format_bytes;

/// Bytes copied between two looks at the cancel switch.
const COPY_CHUNK: u64 = 8 << 20;
/// Bytes read between two looks at the cancel switch when hashing, and when rewriting.
const IO_CHUNK: usize = 1 << 20;
/// Paths a verification lists of each kind (missing, differing); the counts go on.
pub const LISTED_PATHS: usize = 10;
/// Smallest room a memory directory keeps free beside the copy.
const MEMORY_RESERVE_MIN: u64 = 64 << 20;
/// Share of the memory available that a copy in a memory file system may take at most: the
/// rest is for the tool, its repository and the machine.
const MEMORY_SHARE: f64 = 0.5;
/// The statfs magic numbers of the memory file systems.
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;
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

/// Where a copy or a restore lays each source root's files inside its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RestoreLayout {
    /// Root `/a/b` at `<dir>/a/b`: what restic, borg and tar do when given absolute source
    /// paths, and what [`copy_tree`] does.
    #[default]
    AbsolutePaths,
    /// Root `/a/b` at `<dir>/b`: a copy of the root by its own name (`cp -r /a/b <dir>`).
    RootNames,
}

impl RestoreLayout {
    /// Where `root` lies inside `dir` in this layout (a relative root is taken from the
    /// working directory). A root with `..` in it is refused: its place could lie outside `dir`.
    pub fn place(self, root: &Path, dir: &Path) -> Result<PathBuf, TreeError> {
        let absolute = std::path::absolute(root).map_err(io_at(root))?;
        let mut names = Vec::new();
        for component in absolute.components() {
            match component {
                Component::Normal(name) => names.push(name),
                Component::RootDir | Component::CurDir => {}
                Component::ParentDir | Component::Prefix(_) => {
                    return Err(TreeError::RootPath {
                        path: root.to_path_buf(),
                        why: "a path with '..' in it could lead outside the directory",
                    });
                }
            }
        }
        match self {
            RestoreLayout::AbsolutePaths => Ok(names
                .iter()
                .fold(dir.to_path_buf(), |place, name| place.join(name))),
            RestoreLayout::RootNames => match names.last() {
                Some(name) => Ok(dir.join(name)),
                None => Err(TreeError::RootPath {
                    path: root.to_path_buf(),
                    why: "the root directory has no name to lay it out by",
                }),
            },
        }
    }
}

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

/// Copies one file; `None` when it was gone by the time it was opened.
fn copy_file(
    file: &SourceFile,
    dest: &Path,
    cancel: &AtomicBool,
) -> Result<Option<u64>, TreeError> {
    let mut source = match file.open(false) {
        Ok(source) => source,
        Err(error) if gone(&error) => return Ok(None),
        Err(error) => return Err(io_at(&file.path)(error)),
    };
    let mut copy = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dest)
        .map_err(io_at(dest))?;
    let mut bytes = 0;
    loop {
        cancelled(cancel, &file.path)?;
        let copied =
            io::copy(&mut (&mut source).take(COPY_CHUNK), &mut copy).map_err(|source| {
                TreeError::Copy {
                    from: file.path.clone(),
                    to: dest.to_path_buf(),
                    source,
                }
            })?;
        if copied == 0 {
            return Ok(Some(bytes));
        }
        bytes += copied;
    }
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

/// What [`change_share`] rewrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Changed {
    /// Files with a region rewritten.
    pub files: u64,
    /// Bytes rewritten in them.
    pub bytes: u64,
}

/// Rewrites `share` (0 to 1) of the bytes of the regular files beneath `root`, as a night of
/// work changes a tree before an incremental backup: files are chosen in a seeded order from
/// the sorted walk, and a region of each (at least half of the file, or `share` of it if
/// more, at a seeded offset) gets new pseudo-random bytes of the same length, until the
/// regions add up to `share` of the tree's bytes (to the byte, rounded; the last region is cut
/// to fit). Sizes stay; each changed file's mtime moves at least a second past its old one,
/// so a tool that compares times sees the change. The same tree and `seed` give the same
/// change, byte for byte. The new bytes are incompressible, whatever the tree's were.
pub fn change_share(root: &Path, share: f64, seed: u64) -> Result<Changed, TreeError> {
    if !(0.0..=1.0).contains(&share) {
        return Err(TreeError::Share {
            path: root.to_path_buf(),
            share,
        });
    }
    let mut files = Vec::new();
    for entry in walk(root) {
        let entry = entry.map_err(|error| walk_error(root, error))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let len = entry
            .metadata()
            .map_err(|error| walk_error(root, error))?
            .len();
        if len > 0 {
            files.push((entry.into_path(), len));
        }
    }
    let total: u64 = files.iter().map(|(_, len)| len).sum();
    let mut remaining = ((share * total as f64).round() as u64).min(total);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.shuffle(&mut rng);
    // With every region at least `share` of its file, one pass over the files reaches the target.
    let least = share.max(0.5);
    let mut changed = Changed::default();
    let mut buffer = vec![0u8; IO_CHUNK];
    for index in order {
        if remaining == 0 {
            break;
        }
        let (path, len) = &files[index];
        let len = *len;
        let least_bytes = ((len as f64 * least).ceil() as u64).clamp(1, len);
        let region = rng.random_range(least_bytes..=len).min(remaining);
        let offset = rng.random_range(0..=len - region);
        rewrite(path, offset, region, &mut rng, &mut buffer)?;
        changed.files += 1;
        changed.bytes += region;
        remaining -= region;
    }
    Ok(changed)
}

/// Writes `len` new bytes at `offset` of the file and moves its mtime on.
fn rewrite(
    path: &Path,
    offset: u64,
    len: u64,
    rng: &mut ChaCha8Rng,
    buffer: &mut [u8],
) -> Result<(), TreeError> {
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(io_at(path))?;
    let before = file.metadata().map_err(io_at(path))?.modified().ok();
    let mut done = 0;
    while done < len {
        let piece = &mut buffer[..(len - done).min(IO_CHUNK as u64) as usize];
        rng.fill_bytes(piece);
        file.write_all_at(piece, offset + done)
            .map_err(io_at(path))?;
        done += piece.len() as u64;
    }
    let now = SystemTime::now();
    let modified = match before {
        Some(before) if before + Duration::from_secs(1) > now => before + Duration::from_secs(1),
        _ => now,
    };
    file.set_modified(modified).map_err(io_at(path))
}

/// How a restore compares with its source, file by file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Verified {
    /// Source files found in the restore with the same size and content.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The first source files ([`LISTED_PATHS`] at most) the restore lacks, each relative to
    /// its source root (a root that is one file by its name).
    pub missing: Vec<String>,
    /// Source files the restore lacks, all of them.
    pub missing_count: u64,
    /// The first source files ([`LISTED_PATHS`] at most) restored with another size or
    /// content, or as something other than a regular file, named as `missing` names them.
    pub differ: Vec<String>,
    /// Source files restored different, all of them.
    pub differ_count: u64,
    /// Regular files in the restore the source does not have (they do not fail it).
    pub extra: u64,
}

impl Verified {
    /// Whether the restore holds every source file as it is.
    pub fn ok(&self) -> bool {
        self.missing_count == 0 && self.differ_count == 0
    }

    /// The verification in a sentence: `verified: 1204 files, 268 435 456 bytes`, or
    /// `restore differs from the source: 1 file missing (a/b.txt), 2 files differ (c.bin, d.bin)`.
    pub fn sentence(&self) -> String {
        let extra = match self.extra {
            0 => String::new(),
            1 => "; 1 file restored that the source does not have".to_string(),
            more => format!(
                "; {} files restored that the source does not have",
                digits(more)
            ),
        };
        if self.ok() {
            return format!(
                "verified: {} {}, {} bytes{extra}",
                digits(self.files),
                plural(self.files, "file", "files"),
                digits(self.bytes)
            );
        }
        let mut parts = Vec::new();
        if self.missing_count > 0 {
            parts.push(format!(
                "{} {} missing ({})",
                digits(self.missing_count),
                plural(self.missing_count, "file", "files"),
                listed(&self.missing, self.missing_count)
            ));
        }
        if self.differ_count > 0 {
            parts.push(format!(
                "{} {} ({})",
                digits(self.differ_count),
                plural(self.differ_count, "file differs", "files differ"),
                listed(&self.differ, self.differ_count)
            ));
        }
        format!(
            "restore differs from the source: {}{extra}",
            parts.join(", ")
        )
    }

    fn note_missing(&mut self, path: String) {
        if self.missing.len() < LISTED_PATHS {
            self.missing.push(path);
        }
        self.missing_count += 1;
    }

    fn note_differ(&mut self, path: String) {
        if self.differ.len() < LISTED_PATHS {
            self.differ.push(path);
        }
        self.differ_count += 1;
    }
}

fn plural(count: u64, one: &'static str, more: &'static str) -> &'static str {
    if count == 1 { one } else { more }
}

/// The paths listed, and how many more there are.
fn listed(paths: &[String], count: u64) -> String {
    let more = count.saturating_sub(paths.len() as u64);
    if more == 0 {
        paths.join(", ")
    } else {
        format!("{} and {} more", paths.join(", "), digits(more))
    }
}

/// A count in groups of three digits from five digits on: `1204`, `268 435 456`.
fn digits(number: u64) -> String {
    let text = number.to_string();
    if text.len() < 5 {
        return text;
    }
    let mut grouped = String::new();
    for (index, digit) in text.chars().enumerate() {
        if index > 0 && (text.len() - index).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(digit);
    }
    grouped
}

/// Checks a restore in `restored` against the source roots, file by file: each regular file
/// beneath a root must be at its place in `layout` (see [`RestoreLayout::place`]) as a
/// regular file of the same size and BLAKE3 hash. A source file that vanished since the
/// backup is passed over. The restored files are read through the page cache as it is (a tree
/// just restored is mostly still in it): the verification is not timed, and what it proves is
/// the content, not a read from the disk. Stops at the next MiB read once `cancel` is set.
pub fn verify(
    roots: &[PathBuf],
    restored: &Path,
    layout: RestoreLayout,
    cancel: &AtomicBool,
) -> Result<Verified, TreeError> {
    let mut verified = Verified::default();
    let mut buffer = vec![0u8; IO_CHUNK];
    for root in roots {
        let opened = SourceRoot::open(root).map_err(io_at(root))?;
        let place = layout.place(root, restored)?;
        for entry in walk(root) {
            cancelled(cancel, root)?;
            let entry = entry.map_err(|error| walk_error(root, error))?;
            if !entry.file_type().is_file() {
                continue;
            }
            let copy_path = beneath_place(&place, root, entry.path());
            let name = shown(root, entry.path());
            let source = SourceFile::beneath(&opened, entry.into_path());
            let mut source_file = match source.open(false) {
                Ok(file) => file,
                Err(error) if gone(&error) => continue,
                Err(error) => return Err(io_at(&source.path)(error)),
            };
            let source_len = source_file.metadata().map_err(io_at(&source.path))?.len();
            let mut copy = match open_restored(&copy_path)? {
                Restored::Missing => {
                    verified.note_missing(name);
                    continue;
                }
                Restored::NotAFile => {
                    verified.note_differ(name);
                    continue;
                }
                Restored::File(copy) => copy,
            };
            let copy_len = copy.metadata().map_err(io_at(&copy_path))?.len();
            if copy_len != source_len {
                verified.note_differ(name);
                continue;
            }
            let source_hash = hash(&mut source_file, &source.path, &mut buffer, cancel)?;
            let copy_hash = hash(&mut copy, &copy_path, &mut buffer, cancel)?;
            if source_hash == copy_hash {
                verified.files += 1;
                verified.bytes += source_hash.0;
            } else {
                verified.note_differ(name);
            }
        }
        verified.extra += count_extra(root, &place, cancel)?;
    }
    Ok(verified)
}

enum Restored {
    Missing,
    NotAFile,
    File(File),
}

/// Opens a restored file without following a link or waiting on a FIFO.
fn open_restored(path: &Path) -> Result<Restored, TreeError> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Restored::Missing),
        Err(error) if error.raw_os_error() == Some(libc::ELOOP) => return Ok(Restored::NotAFile),
        Err(error) => return Err(io_at(path)(error)),
    };
    if file.metadata().map_err(io_at(path))?.is_file() {
        Ok(Restored::File(file))
    } else {
        Ok(Restored::NotAFile)
    }
}

/// The length and BLAKE3 hash of what is read from `file` to its end.
fn hash(
    file: &mut File,
    path: &Path,
    buffer: &mut [u8],
    cancel: &AtomicBool,
) -> Result<(u64, blake3::Hash), TreeError> {
    let mut hasher = blake3::Hasher::new();
    let mut len = 0u64;
    loop {
        cancelled(cancel, path)?;
        let read = match file.read(buffer) {
            Ok(0) => return Ok((len, hasher.finalize())),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(io_at(path)(error)),
        };
        hasher.update(&buffer[..read]);
        len += read as u64;
    }
}

/// Regular files beneath a root's place in the restore with no regular file at the same
/// place beneath the root.
fn count_extra(root: &Path, place: &Path, cancel: &AtomicBool) -> Result<u64, TreeError> {
    if fs::symlink_metadata(place).is_err() {
        return Ok(0);
    }
    let mut extra = 0;
    for entry in walk(place) {
        cancelled(cancel, place)?;
        let entry = entry.map_err(|error| walk_error(place, error))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let source = beneath_place(root, place, entry.path());
        if !fs::symlink_metadata(&source).is_ok_and(|metadata| metadata.is_file()) {
            extra += 1;
        }
    }
    Ok(extra)
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
mod tests {
    use super::*;

    /// Writes `len` seeded pseudo-random bytes to `path`, making its directory first.
    fn write_file(path: &Path, len: usize, seed: u64) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let mut bytes = vec![0u8; len];
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut bytes);
        fs::write(path, bytes).expect("write");
    }

    /// A small source: files of known sizes in nested directories, one of them empty.
    fn small_source(dir: &Path) -> (PathBuf, Vec<(&'static str, usize)>) {
        let source = dir.join("source");
        let files = vec![
            ("a/b/x.bin", 70_000),
            ("a/empty", 0),
            ("a/notes.txt", 5_000),
            ("c.bin", 9_000_000),
            ("d/e/f/deep", 1),
        ];
        for (index, (name, len)) in files.iter().enumerate() {
            write_file(&source.join(name), *len, index as u64);
        }
        fs::create_dir_all(source.join("g/empty-dir")).expect("empty dir");
        (source, files)
    }

    fn no_cancel() -> AtomicBool {
        AtomicBool::new(false)
    }

    #[test]
    fn a_copy_lands_at_the_roots_absolute_path_and_verifies_with_exact_counts() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let (source, files) = small_source(scratch.path());
        let into = scratch.path().join("copy");
        let tally = copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
        let bytes: usize = files.iter().map(|(_, len)| len).sum();
        assert_eq!(
            tally,
            TreeTally {
                files: files.len() as u64,
                bytes: bytes as u64,
                // source, a, a/b, d, d/e, d/e/f, g, g/empty-dir
                dirs: 8,
                skipped: 0,
            }
        );
        let place = into.join(source.strip_prefix("/").expect("absolute tempdir"));
        assert_eq!(
            fs::read(place.join("a/b/x.bin")).expect("copied"),
            fs::read(source.join("a/b/x.bin")).expect("source")
        );
        assert!(place.join("g/empty-dir").is_dir());

        let verified = verify(
            std::slice::from_ref(&source),
            &into,
            RestoreLayout::AbsolutePaths,
            &no_cancel(),
        )
        .expect("verify");
        assert!(verified.ok(), "{verified:?}");
        assert_eq!((verified.files, verified.bytes), (5, bytes as u64));
        assert_eq!(verified.extra, 0);
        assert_eq!(verified.sentence(), "verified: 5 files, 9 075 001 bytes");
    }

    #[test]
    fn a_flipped_byte_a_missing_file_and_an_extra_one_are_named() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let (source, _) = small_source(scratch.path());
        let into = scratch.path().join("restore");
        copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
        let place = RestoreLayout::AbsolutePaths
            .place(&source, &into)
            .expect("place");
        let flipped = place.join("c.bin");
        let mut bytes = fs::read(&flipped).expect("read");
        bytes[4_500_000] ^= 0x01;
        fs::write(&flipped, bytes).expect("write");
        fs::remove_file(place.join("a/notes.txt")).expect("remove");
        write_file(&place.join("d/stray"), 10, 99);

        let verified = verify(
            std::slice::from_ref(&source),
            &into,
            RestoreLayout::AbsolutePaths,
            &no_cancel(),
        )
        .expect("verify");
        assert!(!verified.ok());
        assert_eq!(verified.missing, vec!["a/notes.txt".to_string()]);
        assert_eq!(verified.differ, vec!["c.bin".to_string()]);
        assert_eq!((verified.files, verified.extra), (3, 1));
        assert_eq!(
            verified.sentence(),
            "restore differs from the source: 1 file missing (a/notes.txt), 1 file differs \
             (c.bin); 1 file restored that the source does not have"
        );
    }

    #[test]
    fn a_restore_of_another_size_or_kind_differs() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let (source, _) = small_source(scratch.path());
        let into = scratch.path().join("restore");
        copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
        let place = RestoreLayout::AbsolutePaths
            .place(&source, &into)
            .expect("place");
        // One byte more, and a link where a file belongs (pointing at the right content).
        let longer = place.join("a/b/x.bin");
        let mut bytes = fs::read(&longer).expect("read");
        bytes.push(0);
        fs::write(&longer, bytes).expect("write");
        fs::remove_file(place.join("d/e/f/deep")).expect("remove");
        std::os::unix::fs::symlink(source.join("d/e/f/deep"), place.join("d/e/f/deep"))
            .expect("symlink");

        let verified = verify(
            std::slice::from_ref(&source),
            &into,
            RestoreLayout::AbsolutePaths,
            &no_cancel(),
        )
        .expect("verify");
        assert_eq!(verified.differ, vec!["a/b/x.bin", "d/e/f/deep"]);
        assert_eq!(verified.differ_count, 2);
        assert!(verified.missing.is_empty());
    }

    #[test]
    fn links_are_skipped_never_followed() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let source = scratch.path().join("source");
        write_file(&source.join("kept"), 100, 1);
        write_file(&scratch.path().join("outside/secret"), 300, 2);
        std::os::unix::fs::symlink(scratch.path().join("outside"), source.join("to-dir"))
            .expect("dir link");
        std::os::unix::fs::symlink(
            scratch.path().join("outside/secret"),
            source.join("to-file"),
        )
        .expect("file link");
        let into = scratch.path().join("copy");
        let tally = copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
        assert_eq!((tally.files, tally.bytes, tally.skipped), (1, 100, 2));
        let place = RestoreLayout::AbsolutePaths
            .place(&source, &into)
            .expect("place");
        let copied: Vec<_> = fs::read_dir(&place)
            .expect("list")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(copied, vec![std::ffi::OsString::from("kept")]);
        let verified = verify(
            std::slice::from_ref(&source),
            &into,
            RestoreLayout::AbsolutePaths,
            &no_cancel(),
        )
        .expect("verify");
        assert_eq!((verified.files, verified.bytes), (1, 100));

        // A root that is itself a link is refused, by its name.
        let linked_root = scratch.path().join("linked-root");
        std::os::unix::fs::symlink(&source, &linked_root).expect("root link");
        let error = copy_tree(std::slice::from_ref(&linked_root), &into, &no_cancel())
            .expect_err("a linked root is refused");
        assert!(
            error
                .to_string()
                .contains(&linked_root.display().to_string()),
            "{error}"
        );
    }

    #[test]
    fn a_copy_into_its_own_source_is_refused() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let (source, _) = small_source(scratch.path());
        let error = copy_tree(
            std::slice::from_ref(&source),
            &source.join("copy"),
            &no_cancel(),
        )
        .expect_err("refused");
        assert!(matches!(error, TreeError::IntoSource { .. }), "{error}");
    }

    #[test]
    fn cancel_stops_a_copy_before_it_copies() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let (source, _) = small_source(scratch.path());
        let into = scratch.path().join("copy");
        let error = copy_tree(std::slice::from_ref(&source), &into, &AtomicBool::new(true))
            .expect_err("cancelled");
        assert!(matches!(error, TreeError::Cancelled { .. }), "{error}");
        assert_eq!(tree_size(&into).expect("size").files, 0);
    }

    /// A tree of 200 files of mixed sizes (most of a few KiB, some of hundreds, a few of MiBs).
    fn mixed_tree(root: &Path) -> u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let mut total = 0;
        for index in 0..200u64 {
            let len = match index % 20 {
                0 => rng.random_range(400_000..1_200_000),
                1..=4 => rng.random_range(20_000..120_000),
                _ => rng.random_range(0..12_000),
            };
            let dir = format!("d{}/e{}", index % 7, index % 3);
            write_file(&root.join(dir).join(format!("f{index}")), len, index);
            total += len as u64;
        }
        total
    }

    #[test]
    fn a_share_of_five_percent_changes_about_five_percent_the_same_way_each_time() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let original = scratch.path().join("original");
        let total = mixed_tree(&original);
        let copies: Vec<PathBuf> = ["one", "two", "other-seed"]
            .iter()
            .map(|name| {
                let copy = scratch.path().join(name).join("original");
                copy_tree(
                    std::slice::from_ref(&original),
                    &scratch.path().join(name),
                    &no_cancel(),
                )
                .expect("copy");
                fs::rename(
                    RestoreLayout::AbsolutePaths
                        .place(&original, &scratch.path().join(name))
                        .expect("place"),
                    &copy,
                )
                .expect("move");
                copy
            })
            .collect();
        let modified_before: Vec<(PathBuf, SystemTime)> = walk(&copies[0])
            .flatten()
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| {
                let modified = entry.metadata().expect("stat").modified().expect("mtime");
                (entry.into_path(), modified)
            })
            .collect();

        let first = change_share(&copies[0], 0.05, 7).expect("change");
        let second = change_share(&copies[1], 0.05, 7).expect("change");
        let other = change_share(&copies[2], 0.05, 8).expect("change");
        assert_eq!(first, second);
        let share = first.bytes as f64 / total as f64;
        assert!((0.04..=0.06).contains(&share), "changed {share}");

        // Count the bytes that really differ from the original, file by file.
        let (mut differing, mut changed_files) = (0u64, 0u64);
        for (path, before) in &modified_before {
            let relative = path.strip_prefix(&copies[0]).expect("beneath");
            let now = fs::read(path).expect("changed copy");
            let was = fs::read(original.join(relative)).expect("original");
            assert_eq!(now.len(), was.len(), "{} changed size", relative.display());
            let differ = now.iter().zip(&was).filter(|(a, b)| a != b).count() as u64;
            if differ > 0 {
                changed_files += 1;
                let modified = fs::metadata(path).expect("stat").modified().expect("mtime");
                assert!(modified >= *before + Duration::from_secs(1));
            }
            differing += differ;
        }
        let measured = differing as f64 / total as f64;
        assert!(
            (0.04..=0.06).contains(&measured),
            "bytes differing: {measured}"
        );
        assert!(changed_files <= first.files && changed_files > 0);

        // The same seed gives the same bytes; another seed, another change.
        let cancel = no_cancel();
        let same = verify(
            std::slice::from_ref(&copies[0]),
            &scratch.path().join("two"),
            RestoreLayout::RootNames,
            &cancel,
        )
        .expect("verify");
        assert!(same.ok(), "{}", same.sentence());
        let different = verify(
            std::slice::from_ref(&copies[0]),
            &scratch.path().join("other-seed"),
            RestoreLayout::RootNames,
            &cancel,
        )
        .expect("verify");
        assert!(!different.ok());
        assert!((0.04..=0.06).contains(&(other.bytes as f64 / total as f64)));
    }

    #[test]
    fn a_share_outside_zero_to_one_is_refused() {
        let scratch = tempfile::tempdir().expect("tempdir");
        for share in [-0.1, 1.5, f64::NAN] {
            let error = change_share(scratch.path(), share, 1).expect_err("refused");
            assert!(matches!(error, TreeError::Share { .. }), "{error}");
        }
        assert_eq!(
            change_share(scratch.path(), 0.5, 1).expect("an empty tree"),
            Changed::default()
        );
    }

    #[test]
    fn tree_size_counts_files_bytes_and_blocks_once_per_inode() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let root = scratch.path().join("repo");
        for (name, len) in [("a", 0), ("b", 1), ("sub/c", 4096), ("sub/d", 10_000)] {
            write_file(&root.join(name), len, 3);
        }
        fs::hard_link(root.join("sub/d"), root.join("d-again")).expect("hard link");
        std::os::unix::fs::symlink(root.join("b"), root.join("link")).expect("symlink");
        let blocks: u64 = ["", "sub", "a", "b", "sub/c", "sub/d", "link"]
            .iter()
            .map(|name| {
                fs::symlink_metadata(root.join(name))
                    .expect("stat")
                    .blocks()
            })
            .sum();
        assert_eq!(
            tree_size(&root).expect("size"),
            TreeSize {
                files: 4,
                dirs: 2,
                apparent_bytes: 14_097,
                allocated_bytes: blocks * 512,
            }
        );
        let one = tree_size(&root.join("sub/d")).expect("one file");
        assert_eq!((one.files, one.apparent_bytes), (1, 10_000));
        assert!(tree_size(&root.join("nothing")).is_err());
    }

    #[test]
    fn dropped_files_leave_the_page_cache() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let root = scratch.path().join("source");
        write_file(&root.join("a"), 1 << 20, 1);
        write_file(&root.join("b/c"), 1 << 20, 2);
        let evicted = drop_from_cache(std::slice::from_ref(&root));
        assert_eq!((evicted.files, evicted.bytes), (2, 2 << 20));
        assert!(evicted.resident_bytes < 1 << 18, "{evicted:?}");
    }

    /// Drops the capabilities that let root ignore permissions, on this thread alone (Linux
    /// keeps capabilities per thread), so a read-only tree resists root as it resists others.
    fn drop_permission_override() {
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Default, Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const VERSION_3: u32 = 0x2008_0522;
        const DAC_OVERRIDE_READ_SEARCH_FOWNER: u32 = (1 << 1) | (1 << 2) | (1 << 3);
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut data = [Data::default(); 2];
        // SAFETY: capget and capset read and write one header and two data structs of the
        // layout version 3 defines, both of which live on this stack frame for the calls.
        let dropped = unsafe {
            libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) == 0 && {
                data[0].effective &= !DAC_OVERRIDE_READ_SEARCH_FOWNER;
                libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) == 0
            }
        };
        assert!(dropped, "capset: {}", io::Error::last_os_error());
    }

    #[test]
    fn remove_tree_clears_read_only_files_and_directories() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let repo = scratch.path().join("repo");
        write_file(&repo.join("data/00/pack"), 1000, 1);
        write_file(&repo.join("config"), 10, 2);
        for (name, mode) in [
            ("data/00/pack", 0o444),
            ("config", 0o400),
            ("data/00", 0o555),
            ("data", 0o500),
            ("", 0o555),
        ] {
            fs::set_permissions(repo.join(name), fs::Permissions::from_mode(mode)).expect("chmod");
        }
        let removal = repo.clone();
        std::thread::spawn(move || {
            drop_permission_override();
            assert!(
                fs::remove_dir_all(&removal).is_err(),
                "the tree must resist a plain removal for this test to mean anything"
            );
            remove_tree(&removal).expect("removed");
            assert!(!removal.exists());
            remove_tree(&removal).expect("a tree already gone");
        })
        .join()
        .expect("removal thread");
    }

    #[test]
    fn a_memory_dir_is_made_only_on_a_memory_file_system_with_room() {
        let scratch = tempfile::tempdir_in("/var/tmp").expect("tempdir on disk");
        let refused = memory_dir(scratch.path(), 1 << 20).expect_err("a disk is not memory");
        assert!(
            matches!(refused, MemoryRefused::NotMemory { .. }),
            "{refused}"
        );
        let shm = Path::new("/dev/shm");
        let on_tmpfs = fs::read_to_string("/proc/self/mounts").is_ok_and(|mounts| {
            mounts.lines().any(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields.get(1..3) == Some(&["/dev/shm", "tmpfs"][..])
            })
        });
        if !on_tmpfs {
            eprintln!("/dev/shm is not a tmpfs here: the accepting half is not tried");
            return;
        }
        let made = memory_dir(shm, 1 << 20).expect("room for a MiB");
        let name = made
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        assert!(name.starts_with(MEMORY_DIR_PREFIX), "{name}");
        let metadata = fs::metadata(&made).expect("made");
        assert_eq!(metadata.permissions().mode() & 0o777, 0o700);
        assert_eq!(fs::read_dir(&made).expect("list").count(), 0);
        remove_tree(&made).expect("removed");
        let too_big = memory_dir(shm, u64::MAX / 2).expect_err("no room");
        assert!(
            matches!(too_big, MemoryRefused::TooSmall { .. }),
            "{too_big}"
        );
    }

    #[test]
    fn places_follow_the_layout_and_refuse_what_could_escape() {
        let dir = Path::new("/restore");
        let root = Path::new("/home/user/data");
        assert_eq!(
            RestoreLayout::AbsolutePaths
                .place(root, dir)
                .expect("place"),
            Path::new("/restore/home/user/data")
        );
        assert_eq!(
            RestoreLayout::RootNames.place(root, dir).expect("place"),
            Path::new("/restore/data")
        );
        assert!(
            RestoreLayout::AbsolutePaths
                .place(Path::new("/a/../../b"), dir)
                .is_err()
        );
        assert!(RestoreLayout::RootNames.place(Path::new("/"), dir).is_err());
    }

    #[test]
    fn the_sentence_groups_large_counts_and_lists_at_most_ten_paths() {
        let intact = Verified {
            files: 1204,
            bytes: 268_435_456,
            ..Verified::default()
        };
        assert_eq!(intact.sentence(), "verified: 1204 files, 268 435 456 bytes");
        let mut damaged = Verified::default();
        for index in 0..12 {
            damaged.note_differ(format!("f{index}"));
        }
        assert_eq!(damaged.differ.len(), LISTED_PATHS);
        assert_eq!(
            damaged.sentence(),
            "restore differs from the source: 12 files differ (f0, f1, f2, f3, f4, f5, f6, f7, \
             f8, f9 and 2 more)"
        );
    }
}
