//! How much a run may write on a file system: what is free to unprivileged writers less a
//! reserve (a twentieth of the file system, 1 GiB at most), so that a run on a shared disk
//! never fills it, for other users or for the lab's own database. The lab's own writes keep to
//! it by stopping there; a backup tool's are watched and stopped there.

use std::path::Path;

/// The most a run leaves free on a file system: 1 GiB (a twentieth of a smaller one).
pub const RESERVE_MAX: u64 = 1 << 30;

/// The bytes a run may still write on the file system holding `dir`; `None` when it cannot
/// be asked.
pub fn room_at(dir: &Path) -> Option<u64> {
    let stats = rustix::fs::statvfs(dir).ok()?;
    let block = stats.f_frsize.max(1);
    let free = stats.f_bavail.saturating_mul(block);
    Some(free.saturating_sub(reserve_of(stats.f_blocks.saturating_mul(block))))
}

/// The reserve kept on a file system of `size` bytes.
pub fn reserve_of(size: u64) -> u64 {
    RESERVE_MAX.min(size / 20)
}
