//! `backlab dataset scan`'s answer as a table: how much data, how it reduces (with the
//! estimate's error), and how its file sizes spread.

use std::fmt::Write;
use std::path::PathBuf;

use crate::engine::reduction::TreeScan;
use crate::size::format_bytes;

/// The scan of `paths` in lines for a terminal.
pub fn scan_table(paths: &[PathBuf], scan: &TreeScan) -> String {
    let mut out = String::new();
    let r = &scan.reduction;
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let _ = writeln!(
        out,
        "{}: {} files, {}",
        names.join(", "),
        scan.files,
        format_bytes(r.logical_bytes)
    );
    let _ = writeln!(
        out,
        "dedup ratio      {:.2}:1 ± {:.1} % (95 %; {} chunks of {} on average, {} distinct ones \
         sampled, each at a chance of 1 in {})",
        r.dedup_ratio,
        r.dedup_error * 100.0,
        r.chunks,
        format_bytes(u64::from(r.chunk_sizes.avg)),
        r.sampled_chunks,
        (1.0 / r.sample_rate).round()
    );
    let _ = writeln!(
        out,
        "compression      {:.2}:1 (LZ4, of the distinct data)",
        r.compress_ratio
    );
    let _ = writeln!(
        out,
        "reduction        {:.2}:1 (dedup × compression): {} would be kept",
        r.reduction_ratio,
        format_bytes((r.logical_bytes as f64 / r.reduction_ratio.max(1.0)) as u64)
    );
    let sizes = &scan.sizes;
    let _ = writeln!(
        out,
        "file sizes       median {}, 10 % under {}, 90 % under {}, largest {}",
        format_bytes(sizes.median),
        format_bytes(sizes.p10),
        format_bytes(sizes.p90),
        format_bytes(sizes.largest)
    );
    for bucket in &sizes.histogram {
        let _ = writeln!(
            out,
            "  up to {:>9}  {:>8} files  {:>10}",
            format_bytes(bucket.upper),
            bucket.files,
            format_bytes(bucket.bytes)
        );
    }
    if scan.sparse_files > 0 {
        let _ = writeln!(
            out,
            "sparse           {} files with {} in holes, left out: sizes and ratios are of \
             their data",
            scan.sparse_files,
            format_bytes(scan.hole_bytes)
        );
    }
    if scan.skipped > 0 {
        let _ = writeln!(out, "{} files could not be read:", scan.skipped);
        for line in &scan.unreadable {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}
