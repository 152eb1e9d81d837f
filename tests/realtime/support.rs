//! What the real-time tests share: their turns on the machine, a scratch
//! directory, and `backlab run --json`.

use std::path::Path;
use std::process::Command;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde::de::DeserializeOwned;

static MACHINE: RwLock<()> = RwLock::new(());

/// A real-time test's hold on the machine, from its first line to its last, asked for by
/// [`run`]. A test whose runs use a core or a disk of the machine holds it [`Turn::alone`]; one
/// whose runs only wait on emulated devices and links (a few percent of a core, no disk of their
/// own) holds it [`Turn::shared`] with others of its kind. A test that failed while holding it
/// still hands it on.
pub enum Turn {
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
}

impl Turn {
    /// Waits until no other real-time test runs, then keeps it so until dropped.
    pub fn alone() -> Turn {
        Turn::Alone(MACHINE.write().unwrap_or_else(PoisonError::into_inner))
    }

    /// Waits until no test holds the machine alone, then keeps it so until dropped; other
    /// tests holding it shared run beside this one. Such a test uses so little of the machine
    /// that its neighbours' runs are never flagged for it (other work must take a quarter of
    /// the CPU for that), and their small load does not slow its emulated devices.
    pub fn shared() -> Turn {
        Turn::Shared(MACHINE.read().unwrap_or_else(PoisonError::into_inner))
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
pub fn run<T: DeserializeOwned>(turn: &Turn, spec: &Path, extra: &[&str]) -> T {
    run_with(turn, backlab(), spec, extra)
}

/// [`run`] through `command`, which starts the `backlab` binary its own way (inside a cgroup,
/// say).
pub fn run_with<T: DeserializeOwned>(
    _turn: &Turn,
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
