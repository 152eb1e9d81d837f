//! Synthetic source trees: deterministic (same seed, byte-identical tree), lognormal file sizes,
//! directories of realistic fan-out, data of a chosen compressibility and dedup ratio (placed
//! so a per-file chunker finds it, see [`placement`]; 1:1 unless asked).

mod placement;

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use serde::Serialize;

use super::data::DataPool;
use super::reduction::{DedupSettings, UnitStream};
use placement::Placement;

/// Subdirectories per directory.
const FAN_OUT: usize = 8;
/// Largest piece written at once.
const WRITE_CHUNK: usize = 1 << 20;

/// The shape of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// A mix like a file server's: mostly small files, a long tail of large ones.
    Typical,
    /// 4–16 KiB files, like the small-file sets backup vendors test with.
    SmallFiles,
    /// Files of tens to hundreds of MiB, like databases and media.
    LargeFiles,
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "typical" => Ok(Profile::Typical),
            "small-files" => Ok(Profile::SmallFiles),
            "large-files" => Ok(Profile::LargeFiles),
            other => Err(format!(
                "unknown profile '{other}' (use typical, small-files or large-files)"
            )),
        }
    }
}

struct Shape {
    median_bytes: f64,
    sigma: f64,
    min_bytes: u64,
    max_bytes: u64,
    files_per_dir: (usize, usize),
}

impl Profile {
    fn shape(self) -> Shape {
        match self {
            Profile::Typical => Shape {
                median_bytes: 24.0 * 1024.0,
                sigma: 2.0,
                min_bytes: 1,
                max_bytes: 256 << 20,
                files_per_dir: (5, 60),
            },
            Profile::SmallFiles => Shape {
                median_bytes: 8.0 * 1024.0,
                sigma: 0.35,
                min_bytes: 4 << 10,
                max_bytes: 16 << 10,
                files_per_dir: (50, 200),
            },
            Profile::LargeFiles => Shape {
                median_bytes: 128.0 * 1024.0 * 1024.0,
                sigma: 0.75,
                min_bytes: 16 << 20,
                max_bytes: 2 << 30,
                files_per_dir: (1, 8),
            },
        }
    }
}

/// What to create.
#[derive(Debug, Clone)]
pub struct DatasetRequest {
    pub profile: Profile,
    /// Total bytes; the last file is cut to hit it exactly.
    pub size: u64,
    /// Stop after this many files even if `size` is not reached.
    pub max_files: Option<u64>,
    pub seed: u64,
    pub compress_ratio: f64,
    /// Data that repeats itself by a chosen ratio; `None`: no unit repeats.
    pub dedup: Option<DedupSettings>,
    /// A tree to be like: its file sizes and its share of whole-file copies, in place of the
    /// profile's sizes and of `dedup`.
    pub like: Option<Likeness>,
}

/// What a twin takes from the tree it stands for (`backlab dataset create --like`): the file
/// sizes, drawn from its histogram, and its dedup ratio, reached with copies of whole files
/// (a real tree's duplicates are mostly whole files: licences, vendored copies, versions).
/// Copies are of an earlier file of the same size class (a power of two).
#[derive(Debug, Clone, PartialEq)]
pub struct Likeness {
    /// The tree's file sizes at 0, 1, … 100 % of its files.
    pub percentiles: Vec<u64>,
    pub dedup_ratio: f64,
}

impl Likeness {
    /// Files whose sizes spread as a lognormal of σ 1 around `mean_bytes` (their median is
    /// the mean ÷ e^½), nothing copied: a tree of a user's shape known only by its bytes and
    /// files.
    pub fn around_mean(mean_bytes: u64) -> Likeness {
        use statrs::distribution::{ContinuousCDF, Normal};
        const SIGMA: f64 = 1.0;
        let median = mean_bytes.max(1) as f64 / (SIGMA * SIGMA / 2.0).exp();
        let normal = Normal::standard();
        let percentiles = (0..=100)
            .map(|percent| {
                // The ends are the 0.5th and 99.5th percentiles: the tails have no end.
                let p = (f64::from(percent) / 100.0).clamp(0.005, 0.995);
                (median * (SIGMA * normal.inverse_cdf(p)).exp())
                    .round()
                    .max(1.0) as u64
            })
            .collect();
        Likeness {
            percentiles,
            dedup_ratio: 1.0,
        }
    }
}

/// What was created.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetSummary {
    pub files: u64,
    pub dirs: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// Bytes written new, not copies of data written before: `bytes` ÷ this is the dedup
    /// ratio a chunker that meets every copy whole finds.
    pub new_bytes: u64,
}

/// Why a dataset could not be created.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{0} exists and is not empty; the lab only writes into a new or empty directory")]
    NotEmpty(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("stopped before the tree was whole")]
    Stopped,
}

/// Creates the dataset under `root` (new or empty). `progress` gets the bytes written so far.
/// Files are flushed at the end so that a cold-cache test can evict them. A create that fails
/// part way removes what it wrote (and `root` itself when it made it), so a failed dataset
/// never stands in for a whole one.
pub fn create(
    root: &Path,
    request: &DatasetRequest,
    progress: &mut dyn FnMut(u64),
) -> Result<DatasetSummary, DatasetError> {
    create_until(root, request, progress, &AtomicBool::new(false))
}

/// [`create`], stopped between two files once `stop` is set: what it wrote is removed, and
/// the answer is [`DatasetError::Stopped`] (a run's tree, given up on its cancel).
pub fn create_until(
    root: &Path,
    request: &DatasetRequest,
    progress: &mut dyn FnMut(u64),
    stop: &AtomicBool,
) -> Result<DatasetSummary, DatasetError> {
    let started = Instant::now();
    let made_root = if root.exists() {
        let mut entries = std::fs::read_dir(root).map_err(io_error(root))?;
        if entries.next().is_some() {
            return Err(DatasetError::NotEmpty(root.to_path_buf()));
        }
        false
    } else {
        std::fs::create_dir_all(root).map_err(io_error(root))?;
        true
    };
    let written = write_tree(root, request, progress, stop, started);
    if written.is_err() {
        remove_written(root, made_root);
    }
    written
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> DatasetError + use<> {
    let path = path.to_path_buf();
    move |source| DatasetError::Io { path, source }
}

/// Takes away a failed create's files: `root` itself when the create made it, else what is
/// in it (it was empty before). Best effort: the create's own error is the one to tell.
fn remove_written(root: &Path, made_root: bool) {
    if made_root {
        let _ = std::fs::remove_dir_all(root);
        return;
    }
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = match entry.file_type() {
                Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
        }
    }
}

/// Writes the files and directories of the dataset under `root`, then flushes them.
fn write_tree(
    root: &Path,
    request: &DatasetRequest,
    progress: &mut dyn FnMut(u64),
    stop: &AtomicBool,
    started: Instant,
) -> Result<DatasetSummary, DatasetError> {
    let shape = request.profile.shape();
    let sizes =
        LogNormal::new(shape.median_bytes.ln(), shape.sigma).map_err(|error| DatasetError::Io {
            path: root.to_path_buf(),
            source: io::Error::other(error.to_string()),
        })?;
    let mut rng = ChaCha8Rng::seed_from_u64(request.seed);
    let pool = DataPool::new(request.seed ^ 0x5eed_da7a, request.compress_ratio);
    // Without a dedup ratio every unit is new: no two 4 KiB chunks of the tree are alike, so
    // the tree dedups 1:1 however a store chunks it.
    let dedup = request.dedup.unwrap_or(DedupSettings {
        ratio: 1.0,
        unit: 1 << 20,
    });
    let data = UnitStream::new(Arc::clone(&pool), dedup, request.seed);
    let mut placement = Placement::new(pool, dedup, request.seed);
    let mut buffer = vec![0u8; WRITE_CHUNK];

    let mut dirs = Directories::new(root, &shape, &mut rng);
    let mut twin = request.like.as_ref().map(|like| TwinFiles::new(like, data));
    let mut written = 0u64;
    let mut files = 0u64;
    while written < request.size && request.max_files.is_none_or(|max| files < max) {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(DatasetError::Stopped);
        }
        let path = dirs
            .for_next_file(&shape, &mut rng)?
            .join(format!("file-{files:07}.dat"));
        let left = request.size - written;
        let size = match &mut twin {
            Some(twin) => twin.write(&path, written, left, &mut rng, &mut buffer)?,
            None => {
                let drawn = sizes.sample(&mut rng).round() as u64;
                let size = drawn.clamp(shape.min_bytes, shape.max_bytes).min(left);
                placement
                    .write(&path, size, left, &mut buffer)
                    .map_err(io_error(&path))?
            }
        };
        written += size;
        files += 1;
        progress(written);
    }
    sync_tree(root)?;
    Ok(DatasetSummary {
        files,
        dirs: dirs.paths.len() as u64,
        bytes: written,
        seconds: started.elapsed().as_secs_f64(),
        new_bytes: match twin {
            Some(twin) => twin.unique,
            None => placement.new_bytes(),
        },
    })
}

/// Flushes everything written under `root`, so that a cold-cache test can evict it.
fn sync_tree(root: &Path) -> Result<(), DatasetError> {
    let root_dir = std::fs::File::open(root).map_err(io_error(root))?;
    rustix::fs::syncfs(&root_dir).map_err(|error| DatasetError::Io {
        path: root.to_path_buf(),
        source: error.into(),
    })
}

/// The directories of a tree being written, in creation order, and how many files the newest
/// takes before the next is made.
struct Directories {
    paths: Vec<PathBuf>,
    budget: usize,
    files_in_newest: usize,
}

impl Directories {
    /// The tree's root alone, with its share of files drawn.
    fn new(root: &Path, shape: &Shape, rng: &mut ChaCha8Rng) -> Self {
        Self {
            paths: vec![root.to_path_buf()],
            budget: rng.random_range(shape.files_per_dir.0..=shape.files_per_dir.1),
            files_in_newest: 0,
        }
    }

    /// The directory the next file goes in, counted there: the newest, or a new one made once
    /// the newest has its share. Directories form an 8-ary tree in creation order: dir i hangs
    /// under dir (i-1)/8.
    fn for_next_file(
        &mut self,
        shape: &Shape,
        rng: &mut ChaCha8Rng,
    ) -> Result<&Path, DatasetError> {
        if self.files_in_newest >= self.budget {
            let index = self.paths.len();
            let parent = &self.paths[(index - 1) / FAN_OUT];
            let dir = parent.join(format!("dir-{index:05}"));
            std::fs::create_dir(&dir).map_err(io_error(&dir))?;
            self.paths.push(dir);
            self.budget = rng.random_range(shape.files_per_dir.0..=shape.files_per_dir.1);
            self.files_in_newest = 0;
        }
        self.files_in_newest += 1;
        Ok(&self.paths[self.paths.len() - 1])
    }
}

/// A twin's files as they are written: sizes drawn from the tree it stands for, and copies of
/// earlier files of the same size class while the twin has fewer duplicate bytes than the
/// tree's dedup ratio asks.
struct TwinFiles<'a> {
    like: &'a Likeness,
    /// The data of files written afresh.
    data: UnitStream,
    /// The percentile intervals still to be dealt this round ([`draw_size`]).
    deck: Vec<usize>,
    /// The files written afresh, by size class (a power of two), with their sizes.
    by_class: HashMap<u64, Vec<(PathBuf, u64)>>,
    /// The bytes written afresh.
    unique: u64,
}

impl<'a> TwinFiles<'a> {
    /// A twin of `like` with nothing written yet, its new files' data drawn from `data`.
    fn new(like: &'a Likeness, data: UnitStream) -> Self {
        Self {
            like,
            data,
            deck: Vec::new(),
            by_class: HashMap::new(),
            unique: 0,
        }
    }

    /// Writes the file at `path`, with `written` bytes in the tree so far and `left` to go: a
    /// copy of an earlier file of its size class, or new data. Returns its size.
    fn write(
        &mut self,
        path: &Path,
        written: u64,
        left: u64,
        rng: &mut ChaCha8Rng,
        buffer: &mut [u8],
    ) -> Result<u64, DatasetError> {
        let drawn = draw_size(&self.like.percentiles, &mut self.deck, rng);
        let bucket = drawn.max(1).next_power_of_two();
        let size = drawn.min(left);
        // A copy of an earlier file of its size class while the tree has fewer
        // duplicate bytes than the ratio asks.
        let behind = (self.unique as f64) > (written + size) as f64 / self.like.dedup_ratio;
        let earlier = self
            .by_class
            .get(&bucket)
            .filter(|_| behind)
            .and_then(|files| files.get(rng.random_range(0..files.len().max(1))).cloned());
        match earlier {
            Some((original, original_size)) if original_size <= left => {
                std::fs::copy(&original, path).map_err(io_error(path))?;
                Ok(original_size)
            }
            _ => {
                write_file(path, size, &mut self.data, buffer).map_err(io_error(path))?;
                self.unique += size;
                self.by_class
                    .entry(bucket)
                    .or_default()
                    .push((path.to_path_buf(), size));
                Ok(size)
            }
        }
    }
}

/// A file size drawn from a tree's percentiles: a point between two of them at random, on a
/// log scale between their sizes (sizes of 0 and 1 byte drawn as they are). The intervals are
/// dealt from `deck`, each once per round in a shuffled order, so that a twin of a few hundred
/// files takes as many from the tail as the original has, not what chance gives: its mean
/// size, and so its file count, then follow the original's.
fn draw_size(percentiles: &[u64], deck: &mut Vec<usize>, rng: &mut ChaCha8Rng) -> u64 {
    if percentiles.len() < 2 {
        return percentiles.first().copied().unwrap_or(1);
    }
    if deck.is_empty() {
        deck.extend(0..percentiles.len() - 1);
        for i in (1..deck.len()).rev() {
            deck.swap(i, rng.random_range(0..=i));
        }
    }
    let index = deck.pop().unwrap_or(0);
    let at = index as f64 + rng.random_range(0.0..1.0);
    let (low, high) = (percentiles[index], percentiles[index + 1]);
    if low <= 1 || high <= low {
        return if rng.random_bool(at.fract()) {
            high
        } else {
            low
        };
    }
    let (low_ln, high_ln) = ((low as f64).ln(), (high as f64).ln());
    (low_ln + at.fract() * (high_ln - low_ln)).exp().round() as u64
}

fn write_file(path: &Path, size: u64, data: &mut UnitStream, buffer: &mut [u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    placement::copy_out(data, size, &mut file, buffer)
}
