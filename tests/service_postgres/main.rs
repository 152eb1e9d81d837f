//! The service tests whose outcome can depend on the store's backend, run again with every lab
//! that names no database on PostgreSQL instead of a SQLite file: a database of its own on one
//! throwaway cluster that this binary starts (Debian's server binaries, as for the `e2e`
//! binary's PostgreSQL tests) and that dies with it. The tests are the `e2e` binary's, read
//! from its directory, a module at a time.
//!
//! A module is listed here when its tests drive statements that differ between the backends
//! or that the store's own tests (`tests/e2e/store.rs`, on both) do not run: the queue, its
//! transactions and a campaign's life through the lab (`campaigns`), recovery of held runs
//! at a restart (`restart`), schedules and their firings (`schedules`), a search's steps
//! added to its campaign (`search`) and references beside a series (`references`). The other
//! modules read what those store, render it or check input, and run on SQLite alone; `fleet`
//! and `postgres` name PostgreSQL themselves and run in the `e2e` binary, and `upgrade` and
//! `in_process` name a SQLite file. A new test whose outcome depends on the backend goes in
//! one of the modules below, or its module is added here.

/// The backend-sensitive part of `tests/e2e/service/`.
#[path = "../e2e/service"]
mod service {
    mod campaigns;
    mod references;
    mod restart;
    mod schedules;
    mod search;
}
// The support serves every area of the `e2e` binary; this one uses part of it.
#[allow(dead_code)]
#[path = "../e2e/support/mod.rs"]
mod support;

/// Where this binary's labs keep results unless a test says otherwise.
const STORE: support::lab::DefaultStore = support::lab::DefaultStore::Postgres;
