//! `backlab dataset create` and `backlab dataset scan`: synthetic source trees made to a
//! profile, and an existing tree's dedup and compression measured.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::dataset::{self, DatasetRequest, Profile};
use crate::engine::reduction::tree::TreeScan;
use crate::engine::reduction::{self, ChunkSizes, DedupSettings};
use crate::spec::{self, format_size};

use super::{EXIT_BAD_SPEC, EXIT_RUN_FAILED};

#[derive(Subcommand)]
pub(super) enum DatasetCommand {
    /// Create a deterministic source tree.
    Create(DatasetArgs),
    /// Estimate how well a tree's data dedups and compresses, and how its file sizes spread.
    Scan(ScanArgs),
}

#[derive(Args)]
pub(super) struct ScanArgs {
    /// Files or directory trees to read (repeatable); links are not followed.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The content-defined chunker's average chunk, e.g. 16K (a quarter of it at least, four
    /// times at most).
    #[arg(long, default_value = "16K")]
    avg_chunk: String,
    /// The dedup estimate's 95 % error the sample is sized for, in percent.
    #[arg(long, default_value_t = 2.0)]
    error_pct: f64,
    /// Print the scan as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub(super) struct DatasetArgs {
    /// Directory to create (must be new or empty).
    dir: PathBuf,
    /// typical, small-files or large-files.
    #[arg(long, default_value = "typical")]
    profile: Profile,
    /// Total size, e.g. 1G [default: 1G; with --like, the tree's size].
    #[arg(long)]
    size: Option<String>,
    /// A tree to make a twin of: its file sizes, compressibility and dedup ratio, as
    /// `dataset scan` measures them (the profile and the other ratios are then not used).
    #[arg(long, value_name = "PATH")]
    like: Option<PathBuf>,
    /// Stop after this many files.
    #[arg(long)]
    files: Option<u64>,
    /// Files whose sizes spread around this mean (e.g. 4K), as a forecast's ladder makes
    /// them: a tree of a shape known only by its bytes and files (the profile's sizes are
    /// then not used).
    #[arg(long, value_name = "SIZE", conflicts_with = "like")]
    mean_file_size: Option<String>,
    /// Seed: the same seed gives a byte-identical tree.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Compressibility of the file data (2.0 = 2:1).
    #[arg(long, default_value_t = 2.0)]
    compress_ratio: f64,
    /// Dedup ratio of the file data (3.0 = 3:1): units repeat so that one in three is new.
    #[arg(long)]
    dedup_ratio: Option<f64>,
    /// The unit that repeats whole, e.g. 128K (a multiple of 4K); for chunks of 64K, 512K
    /// keeps the ratio (the chunks straddling a unit's ends cost little).
    #[arg(long, default_value = "128K")]
    dedup_unit: String,
}

/// A `dataset create` asked for what cannot be made: said as the dataset's problem.
fn bad_dataset(message: &str) -> ExitCode {
    bad_arguments("the dataset cannot be made", message)
}

/// A `dataset scan` asked for what cannot be scanned: said as the scan's problem.
fn bad_scan(message: &str) -> ExitCode {
    bad_arguments("the dataset cannot be scanned", message)
}

fn bad_arguments(what: &str, message: &str) -> ExitCode {
    eprintln!("error: {what}:");
    for line in message.lines() {
        eprintln!("  {line}");
    }
    ExitCode::from(EXIT_BAD_SPEC)
}

pub(super) fn create_dataset(args: DatasetArgs) -> ExitCode {
    let like = match args.like.as_deref().map(scan_for_twin).transpose() {
        Ok(like) => like,
        Err(message) => return bad_dataset(&message),
    };
    let request = match dataset_request(&args, like.as_ref()) {
        Ok(request) => request,
        Err(message) => return bad_dataset(&message),
    };
    if let Some(scan) = &like {
        say_twin(scan);
    }
    match create_with_progress(&args.dir, &request) {
        Ok(summary) => {
            println!("{}", dataset_line(&args.dir, &request, &summary));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_RUN_FAILED)
        }
    }
}

/// The tree at `path` scanned for a twin to be made of it: its sizes, compressibility and dedup
/// ratio. A tree without files has nothing to be like.
fn scan_for_twin(path: &Path) -> Result<TreeScan, String> {
    eprintln!("scanning {} for its twin", path.display());
    match reduction::tree::scan(
        &[path.to_path_buf()],
        ChunkSizes::around(16 << 10),
        reduction::scan::DEFAULT_ERROR,
        &mut |_| {},
    ) {
        Ok(scan) if scan.files > 0 => Ok(scan),
        Ok(_) => Err(format!("--like: {} holds no files", path.display())),
        Err(error) => Err(format!("--like: {error}")),
    }
}

/// What to create, from the arguments, checked, and the scanned tree when a twin is asked for
/// (its sizes and ratios then stand in for the profile's and the arguments'). The error is the
/// first argument that cannot be used, said as `--flag: why`.
fn dataset_request(args: &DatasetArgs, like: Option<&TreeScan>) -> Result<DatasetRequest, String> {
    let size_text = match (&args.size, like) {
        (Some(size), _) => size.clone(),
        (None, Some(scan)) => scan.reduction.logical_bytes.to_string(),
        (None, None) => "1G".to_string(),
    };
    let size = match spec::parse_size(&size_text) {
        Ok(0) => return Err("--size: must be greater than 0".to_string()),
        Ok(size) => size,
        Err(message) => return Err(format!("--size: {message}")),
    };
    if !(args.compress_ratio.is_finite() && (1.0..=100.0).contains(&args.compress_ratio)) {
        return Err("--compress-ratio: must be between 1.0 and 100.0".to_string());
    }
    let dedup = dedup_settings(args)?;
    if let Some(text) = &args.mean_file_size {
        let mean = match spec::parse_size(text) {
            Ok(0) => return Err("--mean-file-size: must be greater than 0".to_string()),
            Ok(mean) => mean,
            Err(message) => return Err(format!("--mean-file-size: {message}")),
        };
        return Ok(DatasetRequest {
            profile: Profile::Typical,
            size,
            max_files: args.files,
            seed: args.seed,
            compress_ratio: args.compress_ratio,
            dedup: None,
            like: Some(dataset::Likeness::around_mean(mean)),
        });
    }
    Ok(match like {
        Some(scan) => DatasetRequest {
            profile: Profile::Typical,
            size,
            max_files: args.files,
            seed: args.seed,
            compress_ratio: scan.reduction.compress_ratio.clamp(1.0, 100.0),
            dedup: None,
            like: Some(dataset::Likeness {
                percentiles: scan.sizes.percentiles.clone(),
                dedup_ratio: scan.reduction.dedup_ratio.max(1.0),
            }),
        },
        None => DatasetRequest {
            profile: args.profile,
            size,
            max_files: args.files,
            seed: args.seed,
            compress_ratio: args.compress_ratio,
            dedup,
            like: None,
        },
    })
}

/// The dedup ratio and unit asked for, checked; `None` when no ratio is.
fn dedup_settings(args: &DatasetArgs) -> Result<Option<DedupSettings>, String> {
    match args.dedup_ratio {
        None => Ok(None),
        Some(ratio) if !(ratio.is_finite() && (1.0..=100.0).contains(&ratio)) => {
            Err("--dedup-ratio: must be between 1.0 and 100.0".to_string())
        }
        Some(ratio) => match spec::parse_size(&args.dedup_unit) {
            Ok(unit) if unit >= 4096 && unit.is_multiple_of(4096) && unit <= 64 << 20 => {
                Ok(Some(DedupSettings { ratio, unit }))
            }
            Ok(_) => Err("--dedup-unit: must be a multiple of 4K, at most 64M".to_string()),
            Err(message) => Err(format!("--dedup-unit: {message}")),
        },
    }
}

/// Says what the twin will be like, before it is written: the scanned tree's files, size,
/// median file and ratios, and its sparse files' holes, which the twin leaves out.
fn say_twin(scan: &TreeScan) {
    eprintln!(
        "a twin of {} files, {}: median file {}, compression {:.2}:1, dedup {:.2}:1",
        scan.files,
        crate::size::format_bytes(scan.reduction.logical_bytes),
        crate::size::format_bytes(scan.sizes.median),
        scan.reduction.compress_ratio,
        scan.reduction.dedup_ratio
    );
    if scan.sparse_files > 0 {
        eprintln!(
            "{} sparse files: their {} of holes are left out, the twin holds their data",
            scan.sparse_files,
            crate::size::format_bytes(scan.hole_bytes)
        );
    }
}

/// Creates the dataset under `dir` with a progress bar of the bytes written, cleared when
/// done.
fn create_with_progress(
    dir: &Path,
    request: &DatasetRequest,
) -> Result<dataset::DatasetSummary, dataset::DatasetError> {
    let bar = ProgressBar::new(request.size);
    let style =
        ProgressStyle::with_template("{spinner} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    let mut report = |written: u64| bar.set_position(written);
    let result = dataset::create(dir, request, &mut report);
    bar.finish_and_clear();
    result
}

pub(super) fn scan_dataset(args: ScanArgs) -> ExitCode {
    let avg = match spec::parse_size(&args.avg_chunk) {
        Ok(avg) if (256..=4 << 20).contains(&avg) => avg as u32,
        Ok(_) => return bad_scan("--avg-chunk: must be from 256 bytes to 4M"),
        Err(message) => return bad_scan(&format!("--avg-chunk: {message}")),
    };
    if !(args.error_pct.is_finite() && (0.1..=50.0).contains(&args.error_pct)) {
        return bad_scan("--error-pct: must be from 0.1 to 50");
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bytes} read, {bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut report = |read: u64| bar.set_position(read);
    let result = reduction::tree::scan(
        &args.paths,
        ChunkSizes::around(avg),
        args.error_pct / 100.0,
        &mut report,
    );
    bar.finish_and_clear();
    match result {
        Ok(scan) if args.json => match serde_json::to_string_pretty(&scan) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::from(EXIT_RUN_FAILED)
            }
        },
        Ok(scan) => {
            print!(
                "{}",
                crate::reduction_report::scan_table(&args.paths, &scan)
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_RUN_FAILED)
        }
    }
}

fn dataset_line(dir: &Path, request: &DatasetRequest, summary: &dataset::DatasetSummary) -> String {
    let mb_per_s = if summary.seconds > 0.0 {
        summary.bytes as f64 / summary.seconds / 1e6
    } else {
        0.0
    };
    format!(
        "created {} files in {} directories under {}: {} ({} bytes), profile {:?}, seed {}, \
         compress ratio {}{}, in {:.1} s ({mb_per_s:.0} MB/s)",
        summary.files,
        summary.dirs,
        dir.display(),
        crate::size::format_bytes(summary.bytes),
        summary.bytes,
        request.profile,
        request.seed,
        request.compress_ratio,
        match request.dedup {
            Some(dedup) => format!(
                ", dedup ratio {} in {} units ({} of it new: {:.2}:1)",
                dedup.ratio,
                format_size(dedup.unit),
                crate::size::format_bytes(summary.new_bytes),
                summary.bytes as f64 / summary.new_bytes.max(1) as f64
            ),
            None => String::new(),
        },
        summary.seconds
    )
}
