//! A tree's data as a dedup store would see it: every regular file under the paths read once,
//! in walk order, through one `ReductionScan`, and the files' sizes as a distribution.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use super::extents::DataReader;
use super::scan::{ChunkSizes, ReductionEstimate, ReductionScan};

/// What a tree holds and how well it reduces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeScan {
    pub files: u64,
    /// Files that could not be read (named in `unreadable`, the first few).
    pub skipped: u64,
    pub unreadable: Vec<String>,
    /// Files holding less data than their length says (holes): each is read and sized by its
    /// data alone, so `sizes` and `reduction` count what the tree holds.
    #[serde(default)]
    pub sparse_files: u64,
    /// Bytes of the sparse files' lengths that are holes, left out of every figure.
    #[serde(default)]
    pub hole_bytes: u64,
    pub sizes: FileSizes,
    pub reduction: ReductionEstimate,
}

/// File sizes: quantiles and a histogram by powers of two.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSizes {
    pub median: u64,
    pub p10: u64,
    pub p90: u64,
    pub largest: u64,
    /// Files of at most `upper` bytes and more than half of it (the first bucket from 0).
    pub histogram: Vec<SizeBucket>,
    /// The sizes at 0, 1, … 100 % of the files: what a twin draws its sizes from.
    #[serde(default)]
    pub percentiles: Vec<u64>,
}

/// One bucket of `FileSizes::histogram`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBucket {
    pub upper: u64,
    pub files: u64,
    pub bytes: u64,
}

impl FileSizes {
    /// The distribution of `sizes` (in any order).
    pub fn of(mut sizes: Vec<u64>) -> Self {
        if sizes.is_empty() {
            return Self::default();
        }
        sizes.sort_unstable();
        let at = |share: f64| sizes[((sizes.len() - 1) as f64 * share).round() as usize];
        let mut histogram: Vec<SizeBucket> = Vec::new();
        for size in &sizes {
            let upper = size.max(&1).next_power_of_two();
            match histogram.last_mut() {
                Some(bucket) if bucket.upper == upper => {
                    bucket.files += 1;
                    bucket.bytes += size;
                }
                _ => histogram.push(SizeBucket {
                    upper,
                    files: 1,
                    bytes: *size,
                }),
            }
        }
        Self {
            percentiles: (0..=100).map(|p| at(f64::from(p) / 100.0)).collect(),
            median: at(0.5),
            p10: at(0.1),
            p90: at(0.9),
            largest: sizes[sizes.len() - 1],
            histogram,
        }
    }
}

/// Reads every regular file under `paths` (links not followed, one file system per path; a
/// sparse file's data extents alone), `progress` told the bytes read so far.
pub fn scan(
    paths: &[PathBuf],
    chunk_sizes: ChunkSizes,
    error: f64,
    progress: &mut dyn FnMut(u64),
) -> io::Result<TreeScan> {
    let mut reduction = ReductionScan::new(chunk_sizes, error);
    let (mut sizes, mut skipped, mut unreadable) = (Vec::new(), 0u64, Vec::new());
    let (mut sparse_files, mut hole_bytes) = (0u64, 0u64);
    for root in paths {
        if !root.exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} does not exist", root.display()),
            ));
        }
        crate::engine::source::refuse_pseudo_file_system(root)?;
        for entry in WalkDir::new(root)
            .follow_links(false)
            .same_file_system(true)
        {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    skip(
                        &mut skipped,
                        &mut unreadable,
                        error.path(),
                        &error.to_string(),
                    );
                    continue;
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            let path = entry.path();
            let read = File::open(path)
                .and_then(DataReader::new)
                .and_then(|mut reader| reduction.read(&mut reader).map(|()| reader));
            match read {
                Ok(reader) => {
                    sizes.push(reader.data_bytes());
                    if reader.hole_bytes() > 0 {
                        sparse_files += 1;
                        hole_bytes += reader.hole_bytes();
                    }
                    progress(reduction.logical_bytes());
                }
                Err(error) => skip(
                    &mut skipped,
                    &mut unreadable,
                    Some(path),
                    &error.to_string(),
                ),
            }
        }
    }
    Ok(TreeScan {
        files: sizes.len() as u64,
        skipped,
        unreadable,
        sparse_files,
        hole_bytes,
        sizes: FileSizes::of(sizes),
        reduction: reduction.estimate(),
    })
}

fn skip(skipped: &mut u64, unreadable: &mut Vec<String>, path: Option<&Path>, why: &str) {
    *skipped += 1;
    if unreadable.len() < 10 {
        let path = path.map_or_else(|| "?".to_string(), |p| p.display().to_string());
        unreadable.push(format!("{path}: {why}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_have_quantiles_and_power_of_two_buckets() {
        let sizes = FileSizes::of(vec![1, 3, 4, 5, 1000, 1024, 1025]);
        assert_eq!(sizes.median, 5);
        assert_eq!(sizes.largest, 1025);
        let uppers: Vec<u64> = sizes.histogram.iter().map(|b| b.upper).collect();
        assert_eq!(uppers, vec![1, 4, 8, 1024, 2048]);
        assert_eq!(sizes.histogram[1].files, 2, "3 and 4");
    }
}
