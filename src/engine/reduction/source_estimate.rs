//! How well a campaign's source reduces, estimated from its files: what the survey reports
//! after the runs and what a target test into a dedup store makes its data match before its
//! timed window. A source of at most a cap is read whole; past it, whole files spread evenly
//! across it up to the cap, and the dedup ratio is then a floor. Files are opened beneath their
//! source path, without links and without blocking, as every read of a source is.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::scan::{ChunkSizes, DEFAULT_ERROR, ReductionEstimate, ReductionScan};
use crate::engine::source;
use crate::size::format_bytes;

/// The most of a source read for an estimate: past it, whole files spread across the source.
pub const SOURCE_SCAN_BYTES: u64 = 4 << 30;

/// How well a source reduces, and how much of it the estimate read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SourceReduction {
    pub estimate: ReductionEstimate,
    /// Bytes of the source read.
    pub scanned_bytes: u64,
    /// Every file was read. When not, the files read were spread across the source and the
    /// dedup ratio is a floor: copies between a file read and one not read are not seen.
    pub complete: bool,
}

impl SourceReduction {
    /// "dedup 2.92:1 (±1.0 %) at 16 KiB chunks, LZ4 2.01:1, on all 512 MiB".
    pub fn words(&self) -> String {
        let estimate = &self.estimate;
        let coverage = if self.complete {
            format!("on all {}", format_bytes(self.scanned_bytes))
        } else {
            format!(
                "on {} of files spread across the source: a floor, since copies between the \
                 files read and the rest are not seen",
                format_bytes(self.scanned_bytes)
            )
        };
        format!(
            "dedup {:.2}:1 (±{:.1} %) at {} chunks, LZ4 {:.2}:1, {coverage}",
            estimate.dedup_ratio,
            estimate.dedup_error * 100.0,
            format_bytes(u64::from(estimate.chunk_sizes.avg)),
            estimate.compress_ratio
        )
    }
}

/// Estimates how the files under `paths` reduce at chunks around `avg_chunk`, reading at most
/// `cap` bytes; `None` when nothing could be read.
pub fn estimate(paths: &[std::path::PathBuf], avg_chunk: u32, cap: u64) -> Option<SourceReduction> {
    estimate_until(paths, avg_chunk, cap, &AtomicBool::new(false))
}

/// [`estimate`] for a run: `stop` (the run's cancel) is looked at before every read and every
/// file, so a read of gigabytes does not hold a cancel; `None` once it is raised.
pub fn estimate_until(
    paths: &[std::path::PathBuf],
    avg_chunk: u32,
    cap: u64,
    stop: &AtomicBool,
) -> Option<SourceReduction> {
    let stopped = || stop.load(Ordering::Relaxed);
    let mut total = 0u64;
    source::each_file(paths, |_, len| {
        total += len;
        !stopped()
    });
    let stride = total.div_ceil(cap.max(1)).max(1);
    let mut scan = ReductionScan::new(ChunkSizes::around(avg_chunk), DEFAULT_ERROR);
    let (mut index, mut complete) = (0u64, true);
    source::each_file(paths, |file, _| {
        if stopped() {
            return false;
        }
        index += 1;
        if !(index - 1).is_multiple_of(stride) {
            complete = false;
            return true;
        }
        if scan.logical_bytes() >= cap {
            complete = false;
            return false;
        }
        if file
            .open(false)
            .and_then(|opened| {
                scan.read(Stoppable {
                    inner: opened,
                    stop,
                })
            })
            .is_err()
        {
            complete = false;
        }
        true
    });
    (scan.logical_bytes() > 0 && !stopped()).then(|| SourceReduction {
        estimate: scan.estimate(),
        scanned_bytes: scan.logical_bytes(),
        complete,
    })
}

/// A file read that fails once `stop` is raised: the chunker reads a buffer at a time, so a
/// stop is seen within one read.
struct Stoppable<'a, R> {
    inner: R,
    stop: &'a AtomicBool,
}

impl<R: Read> Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(io::Error::other("stopped"));
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raised stop ends the estimate before it reads a byte, however large the source.
    #[test]
    fn a_raised_stop_ends_the_estimate_at_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data: Vec<u8> = (0..4u32 << 20)
            .map(|at| (at.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for name in ["a", "b"] {
            std::fs::write(dir.path().join(name), &data).expect("file");
        }
        let paths = [dir.path().to_path_buf()];
        let read = estimate_until(&paths, 16 << 10, SOURCE_SCAN_BYTES, &AtomicBool::new(false));
        assert_eq!(read.map(|found| found.scanned_bytes), Some(8 << 20));
        let stop = AtomicBool::new(true);
        assert!(estimate_until(&paths, 16 << 10, SOURCE_SCAN_BYTES, &stop).is_none());
        let mut stopped = Stoppable {
            inner: &data[..],
            stop: &stop,
        };
        assert!(stopped.read(&mut [0u8; 16]).is_err());
    }
}
