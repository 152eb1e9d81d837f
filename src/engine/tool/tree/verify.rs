//! The check of a restore against its source, file by file: what is missing, what differs,
//! what is extra, by content hash.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::engine::source::{SourceFile, SourceRoot};

use super::{
    IO_CHUNK, LISTED_PATHS, TreeError, beneath_place, cancelled, gone, io_at, shown, walk,
    walk_error,
};

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
    /// The first source files ([`LISTED_PATHS`] at most) that changed, appeared or vanished
    /// after the backup began ([`SourceState`]): not compared, and no fault of the tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// Source files that changed during the test, all of them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub changed_count: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// Each source file's size and modification time when a backup began, so that a restore's
/// check can tell a file the tool restored wrong from one that changed after it was read.
#[derive(Debug, Default)]
pub struct SourceState(HashMap<PathBuf, (u64, Option<SystemTime>)>);

impl SourceState {
    /// The regular files under `roots` as they are now.
    pub fn take(roots: &[PathBuf]) -> SourceState {
        let mut state = HashMap::new();
        for root in roots {
            for entry in walk(root).flatten() {
                if !entry.file_type().is_file() {
                    continue;
                }
                if let Ok(metadata) = entry.metadata() {
                    state.insert(
                        entry.into_path(),
                        (metadata.len(), metadata.modified().ok()),
                    );
                }
            }
        }
        SourceState(state)
    }

    /// Whether the file at `path`, of `len` bytes modified at `modified`, is as it was.
    fn unchanged(&self, path: &Path, len: u64, modified: Option<SystemTime>) -> bool {
        self.0.get(path) == Some(&(len, modified))
    }
}

/// The regular files under `roots` written or changed at `since` or later (by their change
/// time, which a tool cannot set back): how many, and the first few paths. What a tool that
/// says a file changed as it read it is taken at its word by.
pub fn changed_since(roots: &[PathBuf], since: SystemTime) -> (u64, Vec<String>) {
    use std::os::unix::fs::MetadataExt;
    // File times come from a clock that lags the wall clock by up to a tick.
    let since = since - std::time::Duration::from_millis(20);
    let since_ns = since
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let at = |secs: i64, nanos: i64| {
        u128::try_from(secs).unwrap_or(0) * 1_000_000_000 + u128::try_from(nanos).unwrap_or(0)
    };
    let (mut count, mut paths) = (0u64, Vec::new());
    for root in roots {
        for entry in walk(root).flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            let changed = at(metadata.ctime(), metadata.ctime_nsec())
                .max(at(metadata.mtime(), metadata.mtime_nsec()));
            if changed >= since_ns {
                count += 1;
                if paths.len() < LISTED_PATHS {
                    paths.push(shown(root, entry.path()));
                }
            }
        }
    }
    (count, paths)
}

fn plural(count: u64, one: &'static str, more: &'static str) -> &'static str {
    if count == 1 { one } else { more }
}

/// The paths listed, and how many more there are.
pub fn listed(paths: &[String], count: u64) -> String {
    let more = count.saturating_sub(paths.len() as u64);
    if more == 0 {
        paths.join(", ")
    } else {
        format!("{} and {} more", paths.join(", "), digits(more))
    }
}

/// A count in groups of three digits from five digits on: `1204`, `268 435 456`.
pub(super) fn digits(number: u64) -> String {
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
/// backup is passed over, and with `before` (the source when the backup began), a file that
/// changed or appeared since is noted as changed, not compared. The restored files are read through the page cache as it is (a tree
/// just restored is mostly still in it): the verification is not timed, and what it proves is
/// the content, not a read from the disk. Stops at the next MiB read once `cancel` is set.
pub fn verify(
    roots: &[PathBuf],
    restored: &Path,
    layout: RestoreLayout,
    cancel: &AtomicBool,
    before: Option<&SourceState>,
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
            let metadata = source_file.metadata().map_err(io_at(&source.path))?;
            let source_len = metadata.len();
            if let Some(before) = before
                && !before.unchanged(&source.path, source_len, metadata.modified().ok())
            {
                verified.note_changed(name);
                continue;
            }
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

pub(super) enum Restored {
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
pub(super) fn hash(
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

impl Verified {
    /// Whether the restore holds every source file as it is.
    pub fn ok(&self) -> bool {
        self.missing_count == 0 && self.differ_count == 0
    }

    /// The verification in a sentence: `verified: 1204 files, 268 435 456 bytes`, or
    /// `restore differs from the source: 1 file missing (a/b.txt), 2 files differ (c.bin, d.bin)`.
    pub fn sentence(&self) -> String {
        let mut extra = match self.extra {
            0 => String::new(),
            1 => "; 1 file restored that the source does not have".to_string(),
            more => format!(
                "; {} files restored that the source does not have",
                digits(more)
            ),
        };
        if self.changed_count > 0 {
            extra.push_str(&format!(
                "; {} {} during the test, not compared ({})",
                digits(self.changed_count),
                plural(self.changed_count, "file changed", "files changed"),
                listed(&self.changed, self.changed_count)
            ));
        }
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

    fn note_changed(&mut self, path: String) {
        if self.changed.len() < LISTED_PATHS {
            self.changed.push(path);
        }
        self.changed_count += 1;
    }

    pub(super) fn note_differ(&mut self, path: String) {
        if self.differ.len() < LISTED_PATHS {
            self.differ.push(path);
        }
        self.differ_count += 1;
    }
}
