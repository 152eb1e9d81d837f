//! The real-time tests: emulated tape drives that run at their real speed, and the known
//! bottlenecks of `tests/scenarios/*.json` whose verdicts rest on those speeds. A figure here is
//! only the drive's own when nothing else starves its feed, so these tests never share the
//! machine with work that takes its CPU or its disks:
//!
//! - with the other tests: this is a binary of its own, and `cargo test` (and `./run-tests`,
//!   which runs it last) runs it alone, so none of the end-to-end tests (floods, Chromium,
//!   agents) runs beside these;
//! - with each other: every test holds a [`support::Turn`] from its first line to its last,
//!   alone when its runs use a core or a disk, shared with tests whose runs only wait on
//!   emulated devices (they use a few percent of a core between them).
//!
//! Folded into the end-to-end binary, they would share its test threads with whatever else
//! is running, and only a lock taken by every other test could keep them apart; a separate
//! binary costs one more link and needs nothing from the other tests.
//!
//! On a machine busy with other work a verdict may still be inconclusive; that is accepted
//! only when every reason is the machine's, never the run's.

mod ceilings;
mod scenarios;
mod striped;
mod support;
mod tape;
mod throttle;
mod tools;
