//! A night of a backup's life: the change one day of work makes to a tree, by a stated model
//! and a seed. A share of the bytes edited in place (as [`super::change_share`] does), new
//! files of the tree's own sizes, and a share of the files deleted and a share renamed, so a
//! tool's next backup finds edits, additions, deletions and moves, as a real night has them.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Changed, IO_CHUNK, TreeError, change_share, io_at, walk, walk_error};

/// What one night changes, each as a share of the tree as the night found it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NightModel {
    /// Bytes rewritten in place (default 0.02).
    pub edited: f64,
    /// Bytes added as new files, of sizes drawn from the tree's own files (default 0.005).
    pub added: f64,
    /// Files deleted (default 0.002).
    pub deleted: f64,
    /// Files renamed within their directory, their bytes kept (default 0.002).
    pub renamed: f64,
}

impl Default for NightModel {
    fn default() -> Self {
        Self {
            edited: 0.02,
            added: 0.005,
            deleted: 0.002,
            renamed: 0.002,
        }
    }
}

impl NightModel {
    /// The model in a few words, as a page states it: `2 % of bytes edited, 0.5 % added as
    /// new files, 0.2 % of files deleted, 0.2 % renamed`.
    pub fn words(&self) -> String {
        format!(
            "{} of bytes edited, {} added as new files, {} of files deleted, {} renamed",
            percent(self.edited),
            percent(self.added),
            percent(self.deleted),
            percent(self.renamed)
        )
    }

    /// Each share that is not from 0 to 1, by name.
    pub fn problems(&self) -> Vec<(&'static str, f64)> {
        [
            ("edited", self.edited),
            ("added", self.added),
            ("deleted", self.deleted),
            ("renamed", self.renamed),
        ]
        .into_iter()
        .filter(|(_, share)| !(0.0..=1.0).contains(share))
        .collect()
    }
}

/// A share as a percentage in words: `2 %`, `0.5 %`.
fn percent(share: f64) -> String {
    let value = share * 100.0;
    if (value - value.round()).abs() < 1e-9 {
        format!("{value:.0} %")
    } else {
        format!("{value} %")
    }
}

/// What a night changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NightChanged {
    /// Files and bytes rewritten in place.
    pub edited: Changed,
    /// New files, and their bytes.
    pub added_files: u64,
    pub added_bytes: u64,
    /// Files deleted, and the bytes they held.
    pub deleted_files: u64,
    pub deleted_bytes: u64,
    /// Files renamed.
    pub renamed_files: u64,
}

/// Applies one night of `model` to the tree beneath `root`: edits first (over the files as
/// the night found them), then deletions and renames (of files the edits may have touched),
/// then the new files. Files are chosen from the sorted walk in an order `seed` sets, so the
/// same tree and seed give the same night, byte for byte; new files get incompressible bytes
/// and names no other night takes (`night-<seed>-<n>.bin`).
pub fn apply_night(root: &Path, model: &NightModel, seed: u64) -> Result<NightChanged, TreeError> {
    if let Some(&(name, share)) = model.problems().first() {
        return Err(TreeError::NightShare {
            path: root.to_path_buf(),
            name,
            share,
        });
    }
    let before = files_of(root)?;
    let total: u64 = before.iter().map(|(_, len)| len).sum();
    let mut changed = NightChanged {
        edited: change_share(root, model.edited, seed)?,
        ..NightChanged::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6e16_6874);
    let mut order: Vec<usize> = (0..before.len()).collect();
    order.shuffle(&mut rng);
    let count = |share: f64| (share * before.len() as f64).round() as usize;
    let (deleting, rest) = order.split_at(count(model.deleted).min(order.len()));
    let renaming = &rest[..count(model.renamed).min(rest.len())];
    for &index in deleting {
        let (path, len) = &before[index];
        fs::remove_file(path).map_err(io_at(path))?;
        changed.deleted_files += 1;
        changed.deleted_bytes += len;
    }
    for &index in renaming {
        let (path, _) = &before[index];
        let mut renamed = path.clone().into_os_string();
        renamed.push(format!(".moved-{seed}"));
        fs::rename(path, &renamed).map_err(io_at(path))?;
        changed.renamed_files += 1;
    }
    let target = (model.added * total as f64).round() as u64;
    let sizes: Vec<u64> = before.iter().map(|(_, len)| *len).collect();
    let dirs = dirs_of(root, &before);
    let mut buffer = vec![0u8; IO_CHUNK];
    while changed.added_bytes < target {
        let size = sizes
            .choose(&mut rng)
            .copied()
            .unwrap_or(target)
            .clamp(1, target - changed.added_bytes);
        let dir = dirs.choose(&mut rng).map_or(root, PathBuf::as_path);
        let path = dir.join(format!("night-{seed}-{}.bin", changed.added_files));
        write_new(&path, size, &mut rng, &mut buffer)?;
        changed.added_files += 1;
        changed.added_bytes += size;
    }
    Ok(changed)
}

/// The regular files beneath `root` that hold bytes, in walk order, and their lengths.
fn files_of(root: &Path) -> Result<Vec<(PathBuf, u64)>, TreeError> {
    let mut files = Vec::new();
    for entry in walk(root) {
        let entry = entry.map_err(|error| walk_error(root, error))?;
        if entry.file_type().is_file() {
            let len = entry
                .metadata()
                .map_err(|error| walk_error(root, error))?
                .len();
            files.push((entry.into_path(), len));
        }
    }
    Ok(files)
}

/// The directories the tree's files lie in, each once, in name order (the root when it has
/// none).
fn dirs_of(root: &Path, files: &[(PathBuf, u64)]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = files
        .iter()
        .filter_map(|(path, _)| path.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    if dirs.is_empty() {
        dirs.push(root.to_path_buf());
    }
    dirs
}

/// A new file of `len` pseudo-random bytes; never one that exists, never through a link.
fn write_new(
    path: &Path,
    len: u64,
    rng: &mut ChaCha8Rng,
    buffer: &mut [u8],
) -> Result<(), TreeError> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_at(path))?;
    let mut done = 0;
    while done < len {
        let piece = &mut buffer[..(len - done).min(IO_CHUNK as u64) as usize];
        rng.fill_bytes(piece);
        file.write_all(piece).map_err(io_at(path))?;
        done += piece.len() as u64;
    }
    Ok(())
}
