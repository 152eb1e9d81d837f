//! The machine as the tests share it. A lab flags a run `busy_machine` when other work takes
//! more of the CPU than the run does, and a search or a verdict prefers the figures that are
//! not flagged. A test that loads the machine on purpose would flag the runs of whatever test
//! runs beside it, so it holds the machine alone ([`loaded`]); a test whose answer rests on
//! which runs are valid holds it shared ([`quiet`]) and never runs beside such a load. Every
//! other test takes neither: the load of ordinary tests (a build, a browser) is what the labs
//! around them must tolerate anyway.
//!
//! The hold is a lock on a file of the target directory, so it holds across test binaries:
//! `./run-tests` runs this binary and the PostgreSQL one side by side.

use std::fs::File;
use std::path::Path;

use rustix::fs::{FlockOperation, flock};

/// A hold on the machine, given back when dropped (or when the test's process ends).
pub struct Hold {
    _file: File,
}

async fn hold(operation: FlockOperation) -> Hold {
    tokio::task::spawn_blocking(move || {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("machine.lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        flock(&file, operation).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Hold { _file: file }
    })
    .await
    .expect("the machine's lock")
}

/// Held by a test that keeps the machine busy on purpose, for as long as its load runs.
pub async fn loaded() -> Hold {
    hold(FlockOperation::LockExclusive).await
}

/// Held by a test whose answer rests on which runs are valid, from its first run to its last.
pub async fn quiet() -> Hold {
    hold(FlockOperation::LockShared).await
}
