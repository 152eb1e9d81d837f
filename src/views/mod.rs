//! The presentation layer: what a person reads, drawn from the results model (the points and
//! the verdict) and from a per-run view ([`RunView`]), never from a storage record. One file per
//! chart (`charts/`), the CLI table and CSV (`report`), a backup's life (`life`), two campaigns side by side (`compare`)
//! and the pages' view-models (`page`); the HTTP layer and the CLI only lay them out.

pub mod charts;
pub mod compare;
pub mod life;
pub mod page;
pub mod report;
pub mod requests;
pub mod run;

pub use run::{RunPhase, RunView};
