//! Buffered writes into a file system at the disk's pace: every window of bytes written is
//! handed to the disk at once, and the window some way behind it is waited for and dropped
//! from the page cache. A buffered write then runs at what the disk sustains from its first
//! second, as a long backup does, instead of at the page cache's pace until memory fills and
//! the disk's after (a figure that depends on how long the run lasted); and a target test
//! and a full backup into the same directory meet the same write path. The page cache also
//! keeps the source it is reading rather than the target's data, as a backup of more than the
//! machine's memory finds it.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use rustix::fs::{Advice, fadvise};

/// Bytes handed to the disk at a time.
const WINDOW: u64 = 16 << 20;
/// Windows in flight before the writer waits for the oldest: enough to keep a disk's queue
/// full, little enough that the dirty pages are a fraction of memory.
const IN_FLIGHT: u64 = 4;

/// Where a sink's writes stand: what it wrote, and how far it has handed to the disk.
#[derive(Debug, Default)]
pub struct WriteBehind {
    written: u64,
    handed: u64,
}

impl WriteBehind {
    /// Counts `len` bytes just written at the end of `file`; hands each full window to the
    /// disk and waits for the one [`IN_FLIGHT`] windows behind, then drops it from the cache.
    pub fn wrote(&mut self, file: &File, len: usize) -> io::Result<()> {
        self.written += len as u64;
        while self.written - self.handed >= WINDOW {
            let start = self.handed;
            sync_range(file, start, WINDOW, libc::SYNC_FILE_RANGE_WRITE)?;
            if let Some(old) = start.checked_sub(IN_FLIGHT * WINDOW) {
                sync_range(
                    file,
                    old,
                    WINDOW,
                    libc::SYNC_FILE_RANGE_WAIT_BEFORE
                        | libc::SYNC_FILE_RANGE_WRITE
                        | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                )?;
                let _ = fadvise(
                    file,
                    old,
                    std::num::NonZeroU64::new(WINDOW),
                    Advice::DontNeed,
                );
            }
            self.handed += WINDOW;
        }
        Ok(())
    }
}

/// `sync_file_range(2)` over `len` bytes of `file` from `offset`.
fn sync_range(file: &File, offset: u64, len: u64, flags: libc::c_uint) -> io::Result<()> {
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    // SAFETY: the descriptor is open for as long as `file` is borrowed, and the call reads
    // no memory of ours.
    let done = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, flags) };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A file written through it holds what was written, and its windows leave the cache.
    #[test]
    fn a_file_written_behind_holds_every_byte() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create");
        let mut behind = WriteBehind::default();
        let block = vec![7u8; 1 << 20];
        for _ in 0..((8 * WINDOW) >> 20) {
            file.write_all(&block).expect("write");
            behind.wrote(&file, block.len()).expect("write behind");
        }
        file.sync_data().expect("sync");
        assert_eq!(behind.handed, 8 * WINDOW);
        let len = std::fs::metadata(&path).expect("metadata").len();
        assert_eq!(len, 8 * WINDOW);
        let resident = crate::engine::cache::resident_bytes(&file, len).expect("mincore");
        assert!(
            resident <= (IN_FLIGHT + 1) * WINDOW,
            "{resident} bytes still cached of {len}"
        );
    }
}
