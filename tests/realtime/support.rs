//! What the real-time tests share: the turn that lets one of them run at a time, a scratch
//! directory, and `backlab run --json`.

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::de::DeserializeOwned;

static TURN: Mutex<()> = Mutex::new(());

/// Held by a real-time test from its first line to its last, and asked for by [`run`]: while
/// it is held no other test of this binary runs.
pub struct Alone {
    _turn: MutexGuard<'static, ()>,
}

impl Alone {
    /// Waits until no other real-time test runs, then keeps it so until dropped. A test that
    /// failed while holding the turn still hands it on.
    pub fn wait_turn() -> Alone {
        Alone {
            _turn: TURN.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }
}

/// A temp dir on the build's disk (not a tmpfs, whose pages cannot be evicted).
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temp dir under the target dir")
}

/// The built `backlab` binary.
pub fn backlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_backlab"))
}

/// Runs `backlab run SPEC --json` with `extra` flags and parses the report it prints; a run
/// with no report fails the test with its status and output.
pub fn run<T: DeserializeOwned>(alone: &Alone, spec: &Path, extra: &[&str]) -> T {
    run_with(alone, backlab(), spec, extra)
}

/// [`run`] through `command`, which starts the `backlab` binary its own way (inside a cgroup,
/// say).
pub fn run_with<T: DeserializeOwned>(
    _alone: &Alone,
    mut command: Command,
    spec: &Path,
    extra: &[&str],
) -> T {
    let out = command
        .arg("run")
        .arg(spec)
        .arg("--json")
        .args(extra)
        .output()
        .expect("backlab starts");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|error| {
        panic!(
            "{}: no report ({error}); status {}\nstdout:\n{}\nstderr:\n{}",
            spec.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
