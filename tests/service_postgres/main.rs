//! The service suite of the end-to-end tests again, every lab that names no database on
//! PostgreSQL instead of a SQLite file: a database of its own on one throwaway cluster that
//! this binary starts (Debian's server binaries, as for the `e2e` binary's PostgreSQL tests)
//! and that dies with it. The tests are the `e2e` binary's, read from its directory.

#[path = "../e2e/service/mod.rs"]
mod service;
// The support serves every area of the `e2e` binary; this one uses part of it.
#[allow(dead_code)]
#[path = "../e2e/support/mod.rs"]
mod support;

/// Where this binary's labs keep results unless a test says otherwise.
const STORE: support::lab::DefaultStore = support::lab::DefaultStore::Postgres;
