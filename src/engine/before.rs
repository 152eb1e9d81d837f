//! What a run learns of its data before the timed window: whether its requests use every
//! disk of a striped volume, how much of the source sits in the page cache, and the source's
//! dedup and compression, which a target's data is made to match.

use std::path::{Path, PathBuf};

use crate::engine::measure::round1;
use crate::engine::plan::{RunPlan, SourcePlan};
use crate::engine::test_kind::TestKind;
use crate::engine::{cache, compressibility, provenance, reduction, source, validity};

/// Files sampled for page-cache residency before a test that reads the source.
const RESIDENCY_SAMPLE_FILES: usize = 2000;
/// Share of the source in the page cache above which a read figure is flagged.
const RESIDENCY_WARN_PCT: f64 = validity::CACHE_RESIDENT_PCT;

/// With direct I/O every request reaches the device as the run sized it: says when that size
/// does not use every disk of a striped source or target volume (read from sysfs, before the
/// timed window).
pub(super) fn stripe_warnings(plan: &RunPlan) -> Vec<String> {
    if !plan.params.direct {
        return Vec::new();
    }
    let mut places: Vec<(&str, &Path)> = Vec::new();
    if plan.test.reads_source()
        && plan.agents.is_empty()
        && let SourcePlan::Paths(paths) = &plan.source
    {
        places.extend(paths.iter().map(|path| ("source", path.as_path())));
    }
    let target = plan.target.target();
    if plan.test.writes_target()
        && let Some(path) = target.path()
    {
        places.push(("target", path));
    }
    let block = plan.params.block_size;
    let mut warnings: Vec<String> = Vec::new();
    for (role, path) in places {
        let place = provenance::place(role, path);
        let advice = place.geometry.as_ref().and_then(|geometry| {
            geometry
                .fit(block)
                .and_then(|fit| fit.advice(role, &geometry.device, block))
        });
        if let Some(advice) = advice.filter(|advice| !warnings.contains(advice)) {
            warnings.push(advice);
        }
    }
    warnings
}

/// Below this ratio a source counts as not deduplicating.
const MIN_SOURCE_DEDUP: f64 = 1.05;

/// The source's dedup ratio, scanned at the target's average chunk before a target test into
/// a deduplicating target whose data is to match the source: a store that finds the source
/// reducing 3:1 must be measured taking data that reduces 3:1. The units repeat whole at
/// eight chunks or more, so the store's chunks straddling their ends cost little of the ratio.
pub(super) fn source_dedup(
    plan: &RunPlan,
    cancel: &std::sync::atomic::AtomicBool,
    warnings: &mut Vec<String>,
) -> Option<reduction::DedupSettings> {
    let SourcePlan::Paths(paths) = &plan.source else {
        return None;
    };
    if plan.test != TestKind::TapeWrite || !plan.params.match_source {
        return None;
    }
    let avg_chunk = plan.target.target().dedups_at()?;
    let started = std::time::Instant::now();
    let found = reduction::source_estimate::estimate_until(
        paths,
        avg_chunk,
        reduction::SOURCE_SCAN_BYTES,
        cancel,
    );
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let Some(found) = found else {
        warnings.push(
            "the source's dedup ratio could not be estimated (no file could be read); the \
             target test wrote data that does not repeat"
                .to_string(),
        );
        return None;
    };
    let ratio = found.estimate.dedup_ratio;
    warnings.push(format!(
        "the target test's data was made to dedup {ratio:.2}:1, as the source does ({}; \
         {:.1} s, before the timed window)",
        found.words(),
        started.elapsed().as_secs_f64()
    ));
    (ratio >= MIN_SOURCE_DEDUP).then(|| reduction::DedupSettings {
        ratio: (ratio * 100.0).round() / 100.0,
        unit: (u64::from(avg_chunk) * 8).clamp(reduction::DEFAULT_DEDUP_UNIT, 8 << 20) / 4096
            * 4096,
    })
}

pub(super) fn source_ratio(plan: &RunPlan) -> Option<f64> {
    match &plan.source {
        SourcePlan::Paths(paths)
            if matches!(plan.test, TestKind::TapeWrite | TestKind::Restore)
                && plan.params.match_source =>
        {
            compressibility::measure(paths).map(|ratio| {
                if ratio < 1.05 {
                    1.0
                } else {
                    (ratio * 100.0).round() / 100.0
                }
            })
        }
        _ => None,
    }
}

/// Measures how much of the source sits in the page cache (on a sample of its files), after
/// evicting it when `cold_cache` is on, and warns when a read figure would come from memory.
pub(super) fn source_residency(
    paths: &[PathBuf],
    cold_cache: bool,
    direct: bool,
    warnings: &mut Vec<String>,
) -> f64 {
    if cold_cache {
        for root in paths {
            // Dirty pages cannot be evicted; writing them back first makes eviction complete.
            let _ = cache::sync_filesystem(root);
        }
    }
    let files = source::list_files(paths, RESIDENCY_SAMPLE_FILES);
    let (mut total, mut resident) = (0u64, 0u64);
    for path in &files {
        if let Ok((len, in_cache)) = file_residency(path, cold_cache) {
            total += len;
            resident += in_cache;
        }
    }
    let pct = if total > 0 {
        round1(100.0 * resident as f64 / total as f64)
    } else {
        0.0
    };
    if pct > RESIDENCY_WARN_PCT && !direct {
        let sampled = if files.len() >= RESIDENCY_SAMPLE_FILES {
            format!("the first {} files", files.len())
        } else {
            "all files".to_string()
        };
        let warning = if cold_cache {
            format!(
                "{pct}% of the source ({sampled}) stayed in the page cache after eviction \
                 (pages still dirty, or mapped by another process): this figure is partly \
                 memory speed, not the disk's"
            )
        } else {
            format!(
                "{pct}% of the source ({sampled}) was in the page cache before the test: this \
                 figure is partly memory speed, not the disk's; set cold_cache to evict it first"
            )
        };
        warnings.push(warning);
    }
    pct
}

fn file_residency(found: &source::SourceFile, evict: bool) -> std::io::Result<(u64, u64)> {
    let file = found.open(false)?;
    let len = file.metadata()?.len();
    if evict {
        cache::evict(&file)?;
    }
    Ok((len, cache::resident_bytes(&file, len)?))
}
