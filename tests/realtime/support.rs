//! What the real-time tests share: their turns on the machine, a scratch
//! directory, and `backlab run --json`.

use std::path::Path;
use std::process::Command;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use serde::de::DeserializeOwned;

/// The most tests that hold the machine shared at once: together they use well under the
/// quarter of its CPU at which a run's neighbours flag it `busy_machine`.
const SHARED_AT_ONCE: usize = 3;

/// Who holds the machine now.
struct Holders {
    alone: bool,
    shared: usize,
}

static HOLDERS: Mutex<Holders> = Mutex::new(Holders {
    alone: false,
    shared: 0,
});
static CHANGED: Condvar = Condvar::new();

fn holders() -> MutexGuard<'static, Holders> {
    HOLDERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A real-time test's hold on the machine, from its first line to its last, asked for by
/// [`run`]. A test whose runs use a core or a disk of the machine holds it [`Turn::alone`]; one
/// whose runs only wait on emulated devices and links (a few percent of a core, no disk of their
/// own) holds it [`Turn::shared`], beside at most two others of its kind. Shared turns go first:
/// a test waiting to be alone waits until no shared one runs, so with every test started at
/// once (`./run-tests` gives this binary a thread per test) the shared ones run three at a time
/// and then the others one by one. A test that failed while holding its turn still hands it on.
pub struct Turn {
    alone: bool,
}

impl Turn {
    /// Waits until no other real-time test runs, then keeps it so until dropped.
    pub fn alone() -> Turn {
        let mut now = holders();
        while now.alone || now.shared > 0 {
            now = CHANGED.wait(now).unwrap_or_else(PoisonError::into_inner);
        }
        now.alone = true;
        Turn { alone: true }
    }

    /// Waits until no test holds the machine alone and fewer than [`SHARED_AT_ONCE`] hold it
    /// shared, then keeps its place until dropped.
    pub fn shared() -> Turn {
        let mut now = holders();
        while now.alone || now.shared >= SHARED_AT_ONCE {
            now = CHANGED.wait(now).unwrap_or_else(PoisonError::into_inner);
        }
        now.shared += 1;
        Turn { alone: false }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut now = holders();
        if self.alone {
            now.alone = false;
        } else {
            now.shared -= 1;
        }
        CHANGED.notify_all();
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
