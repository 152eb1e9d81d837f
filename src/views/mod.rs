//! The presentation layer: what a person reads, drawn from the results model (the points and
//! the verdict) and from a per-run view ([`RunView`]), never from a storage record. One file per
//! chart (`charts/`), the CLI table and CSV (`report`), a backup's life (`life`), the object-lock probe's answer (`lock`), the requests to
//! a bucket and their bills (`requests`), two campaigns side by side (`compare`) and the pages'
//! view-models (`page`); the HTTP layer and the CLI only lay them out.

pub mod charts;
pub mod compare;
pub mod life;
pub mod lock;
pub mod page;
pub mod report;
pub mod requests;
pub mod run;

pub use run::{RunPhase, RunView};

/// A CSV writer's rows as the text a download serves.
pub fn csv_text(writer: csv::Writer<Vec<u8>>) -> Result<String, csv::Error> {
    let bytes = writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
