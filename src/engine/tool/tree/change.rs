//! The nightly change: a known share of a tree's files rewritten in place, chosen by a
//! seed, so an incremental backup has that much to find.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

use rand::seq::SliceRandom;
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{IO_CHUNK, TreeError, io_at, walk, walk_error};

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
