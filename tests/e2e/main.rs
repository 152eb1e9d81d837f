//! The end-to-end tests, in one binary: the real `backlab` binary (`serve`, `run`, `agent`,
//! `dataset`) on random ports and in temp directories, the engine and the charts through the
//! library, and the pages in a headless Chromium. One binary is compiled and linked once.
//!
//! Each module is one area; `support` holds what they share. Almost every lab here is the real
//! `backlab serve` (one starts and answers within about 50 ms); answers that need no worker and
//! no connection are also asked of the application in this process (`support::in_process`,
//! `service::in_process`): the same router and guards over a real SQLite file.
//!
//! The real-time tests (emulated drives whose speed is the verdict) are the `realtime` binary
//! instead: they must not share the machine with these.

mod browser;
mod charts;
mod cli;
// Its one test lasts about a minute: named to sort early, it starts among the first (the
// harness starts tests in name order), not alone at the end of the run.
mod compare_tools;
mod dedup;
mod engine;
mod hostile;
mod life;
mod maintenance;
mod network;
mod object_lock;
mod object_store;
mod service;
mod store;
mod support;
mod tools;

/// Where this binary's labs keep results unless a test says otherwise: a SQLite file, or, with
/// `BACKLAB_TEST_STORE=postgres`, a database of each lab's own on one throwaway PostgreSQL
/// cluster per process. `./run-tests` runs the service tests whose outcome can depend on the
/// backend a second time that way (its list says which, and why).
fn store() -> support::lab::DefaultStore {
    match std::env::var("BACKLAB_TEST_STORE").as_deref() {
        Ok("postgres") => support::lab::DefaultStore::Postgres,
        _ => support::lab::DefaultStore::Sqlite,
    }
}
