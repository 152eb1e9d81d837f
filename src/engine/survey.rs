//! Facts about a campaign's source and target that the verdict needs besides the runs, and
//! where it was measured.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use super::plan::{SourcePlan, TargetPlan};
use super::provenance::Provenance;
use super::reduction::{ChunkSizes, ReductionEstimate, ReductionScan, scan::DEFAULT_ERROR};
use crate::size::format_bytes;

/// The average chunk the survey's estimate cuts at, unless the target deduplicates at its own.
const SURVEY_AVG_CHUNK: u32 = 64 << 10;

/// How big the source is and whether it shares a device with the target.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Survey {
    /// Bytes in the source's regular files (the generated size for generated data).
    pub source_bytes: u64,
    pub source_files: u64,
    /// Source and target live on the same device, so a backup's reads and writes compete.
    pub shares_device: bool,
    /// The host, file systems, devices and backlab the campaign was measured with (absent
    /// from campaigns measured before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The target discards what it is given (the null sink): the target write measured the
    /// pipeline, and the target can limit nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub target_discards: bool,
    /// How well the source's data reduces (dedup and compression), estimated from its files
    /// after the runs; none for generated data, whose ratios are asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<SourceReduction>,
}

/// The most of a source the survey reads to estimate how it reduces: past it, whole files
/// spread evenly across the source.
pub const REDUCTION_SCAN_BYTES: u64 = 4 << 30;

/// How well a campaign's source reduces, and how much of it the estimate read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceReduction {
    pub estimate: ReductionEstimate,
    /// Bytes of the source read, of `source_bytes`.
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

/// Walks the source for its size and compares device numbers. Run it after the measurements:
/// the walk fills the metadata cache.
pub fn survey(source: &SourcePlan, target: &TargetPlan) -> Survey {
    let target = target.target();
    let mut places: Vec<(&str, &Path)> = Vec::new();
    if let SourcePlan::Paths(paths) = source {
        places.extend(paths.iter().map(|path| ("source", path.as_path())));
    }
    places.extend(target.path().map(|path| ("target", path)));
    let provenance = Some(Provenance::here(&places));
    let target_discards = target.capabilities().discards();
    match source {
        SourcePlan::Generated { size, .. } => Survey {
            source_bytes: *size,
            source_files: 0,
            shares_device: false,
            provenance,
            target_discards,
            reduction: None,
        },
        SourcePlan::Paths(paths) => {
            let (mut bytes, mut files) = (0, 0);
            for root in paths {
                let walker = WalkDir::new(root)
                    .follow_links(false)
                    .same_file_system(true);
                for entry in walker.into_iter().flatten() {
                    if entry.file_type().is_file()
                        && let Ok(metadata) = entry.metadata()
                    {
                        bytes += metadata.len();
                        files += 1;
                    }
                }
            }
            let target_device = target.device_id();
            let shares_device = target_device
                .is_some_and(|target| paths.iter().any(|path| device_of(path) == Some(target)));
            let avg_chunk = target.dedups_at().unwrap_or(SURVEY_AVG_CHUNK);
            Survey {
                source_bytes: bytes,
                source_files: files,
                shares_device,
                provenance,
                target_discards,
                reduction: reduction_of(paths, bytes, files, avg_chunk),
            }
        }
    }
}

/// Estimates how the source reduces from its files, every one when it holds at most
/// `REDUCTION_SCAN_BYTES`, else every k-th file up to that many bytes. Files are opened
/// without following links and without blocking; one that cannot be read is passed over.
fn reduction_of(
    paths: &[std::path::PathBuf],
    bytes: u64,
    files: u64,
    avg_chunk: u32,
) -> Option<SourceReduction> {
    use std::os::unix::fs::OpenOptionsExt;
    if files == 0 {
        return None;
    }
    let stride = bytes.div_ceil(REDUCTION_SCAN_BYTES).max(1);
    let mut scan = ReductionScan::new(ChunkSizes::around(avg_chunk), DEFAULT_ERROR);
    let mut index = 0u64;
    let mut complete = true;
    'roots: for root in paths {
        let walker = WalkDir::new(root)
            .follow_links(false)
            .same_file_system(true);
        for entry in walker.into_iter().flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            index += 1;
            if !(index - 1).is_multiple_of(stride) {
                complete = false;
                continue;
            }
            if scan.logical_bytes() >= REDUCTION_SCAN_BYTES {
                complete = false;
                break 'roots;
            }
            let opened = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(
                    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
                )
                .open(entry.path());
            match opened.and_then(|file| scan.read(file)) {
                Ok(()) => {}
                Err(_) => complete = false,
            }
        }
    }
    (scan.logical_bytes() > 0).then(|| SourceReduction {
        estimate: scan.estimate(),
        scanned_bytes: scan.logical_bytes(),
        complete,
    })
}

/// The lab's side of a campaign whose source lies on agents' hosts: where it was measured and
/// what the target is, and nothing of the source, which is not on this host to walk.
pub fn lab_side(target: &TargetPlan) -> Survey {
    let target = target.target();
    let places: Vec<(&str, &Path)> = target
        .path()
        .map(|path| ("target", path))
        .into_iter()
        .collect();
    Survey {
        source_bytes: 0,
        source_files: 0,
        shares_device: false,
        provenance: Some(Provenance::here(&places)),
        target_discards: target.capabilities().discards(),
        reduction: None,
    }
}

fn device_of(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|metadata| metadata.dev())
}
