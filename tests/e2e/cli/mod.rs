//! End-to-end tests of the `backlab` binary: real datasets in temp directories, real I/O.

mod bad_input;
mod campaign;
mod dataset;

use std::path::Path;
use std::process::{Command, Output};

/// The built `backlab` binary.
pub fn backlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_backlab"))
}

/// A temp dir on the build's disk: /tmp may be a tmpfs, whose pages cannot be evicted and
/// which may refuse O_DIRECT.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

/// Runs a command and returns its output, failing the test if it could not start.
pub fn output(command: &mut Command) -> Output {
    command.output().expect("backlab starts")
}

/// Creates a dataset with the CLI, failing the test when it does not succeed.
pub fn create_dataset(dir: &Path, profile: &str, size: &str, seed: u64) {
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

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Parses `backlab run --json` output.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}): {}\nstderr: {}",
            stdout(out),
            stderr(out)
        )
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
