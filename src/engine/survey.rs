//! Facts about a campaign's source and target that the verdict needs besides the runs, and
//! where it was measured.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use super::plan::{SourcePlan, TargetPlan};
use super::provenance::Provenance;
use super::reduction::{self, SOURCE_SCAN_BYTES, SourceReduction};

/// The average chunk the survey's estimate cuts at, unless the target deduplicates at its own.
const SURVEY_AVG_CHUNK: u32 = 64 << 10;

/// How big the source is and whether it shares a device with the target.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
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
    /// after the runs ([`reduction`]); none for generated data, whose ratios are asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<SourceReduction>,
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
            Survey {
                source_bytes: bytes,
                source_files: files,
                shares_device,
                provenance,
                target_discards,
                reduction: None,
            }
        }
    }
}

/// How a campaign's source reduces, for its survey: a tree's files read (at most
/// `SOURCE_SCAN_BYTES` of them) at the target's chunk size, or 64 KiB for a target that does not
/// deduplicate; `None` for generated data, whose ratios are asked for. It reads the source, so
/// it is taken apart from the survey's quick facts.
pub fn reduction(source: &SourcePlan, target: &TargetPlan) -> Option<SourceReduction> {
    let SourcePlan::Paths(paths) = source else {
        return None;
    };
    let avg_chunk = target.target().dedups_at().unwrap_or(SURVEY_AVG_CHUNK);
    reduction::source_estimate::estimate(paths, avg_chunk, SOURCE_SCAN_BYTES)
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
