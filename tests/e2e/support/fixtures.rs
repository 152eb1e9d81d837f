//! What tests start from and look at on disk: scratch directories, datasets, the committed
//! fixtures, a campaign spec, and the files a run leaves.

use std::path::{Path, PathBuf};

use backlab::spec::RunParams;
use serde_json::{Value, json};

use super::cli::{backlab, output, stderr};

/// A temp dir on the build's disk: /tmp may be a tmpfs, whose pages cannot be evicted and
/// which may refuse O_DIRECT.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temp dir under the target dir")
}

/// The run parameters tests start from: 8 buffers of 256 KiB, 2 streams, fsync, data that
/// compresses 2:1, a 30 s cap and no size; each test overrides what it is about.
pub fn run_params() -> RunParams {
    RunParams {
        buffers: 8,
        block_size: 256 << 10,
        streams: 2,
        direct: false,
        cold_cache: false,
        fsync: true,
        compress_ratio: 2.0,
        match_source: false,
        size: None,
        duration_s: Some(30.0),
        time_based: false,
        until_steady: false,
        source_rate_mb_s: None,
        clients: None,
        link_mb_s: None,
        part_size: None,
        concurrency: None,
        generation: None,
        tool: None,
        life: None,
        ladder: None,
    }
}

/// A file under `tests/fixtures/`.
pub fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

/// Creates a dataset of the typical profile with the CLI (seed 7).
pub fn create_dataset(dir: &Path, size: &str) {
    create_dataset_with(dir, "typical", size, 7);
}

/// Creates a dataset with the CLI, failing the test when it does not succeed.
pub fn create_dataset_with(dir: &Path, profile: &str, size: &str, seed: u64) {
    let out = output(backlab().args(["dataset", "create"]).arg(dir).args([
        "--profile",
        profile,
        "--size",
        size,
        "--seed",
        &seed.to_string(),
    ]));
    assert!(
        out.status.success(),
        "dataset create failed: {}",
        stderr(&out)
    );
}

/// A small five-test campaign against `source`, writing into `target`.
pub fn five_tests(source: &Path, target: &Path) -> Value {
    json!({
        "name": "five tests",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "params": {"buffers": 8, "block_size": "256K", "size": "32M", "duration_s": 10}
    })
}

/// Names of the entries directly in `dir`.
pub fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list dir")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Lab files (`backlab-run-*.img`) directly in `dir`: what a run must not leave behind.
pub fn lab_files(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|name| name.starts_with("backlab-run-"))
        .collect()
}
