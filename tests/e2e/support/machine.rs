//! The machine as the tests share it. A lab flags a run `busy_machine` when other work takes
//! more of the CPU than the run does, and a search or a verdict prefers the figures that are
//! not flagged. A test that loads the machine on purpose would flag the runs of whatever test
//! runs beside it, so it holds the machine alone ([`loaded`]); a test whose answer rests on
//! which runs are valid holds it shared ([`quiet`]) and never runs beside such a load. Every
//! other test takes neither: the load of ordinary tests (a build, a browser) is what the labs
//! around them must tolerate anyway.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::const_new(());

/// Held by a test that keeps the machine busy on purpose, for as long as its load runs.
pub async fn loaded() -> RwLockWriteGuard<'static, ()> {
    MACHINE.write().await
}

/// Held by a test whose answer rests on which runs are valid, from its first run to its last.
pub async fn quiet() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().await
}
