//! A run's target figures: each kind's sink figures put into the run's result, and read back
//! in words. The one place a kind's figures are told apart.

use super::{SinkFigures, StripedFigures, TapeFigures, TargetReport};
use crate::engine::result::RunResult;

/// Puts the figures of a run's sinks (one per writer) into the result.
pub fn take_sink_figures(result: &mut RunResult, all: &[SinkFigures]) {
    let mut drives = Vec::new();
    for figures in all {
        match figures {
            SinkFigures::Tape(drive) => drives.push(drive.clone()),
            SinkFigures::Striped(volume) => result.striped = Some(volume.clone()),
            // Each writer reports the shared tally when it ends: the last to end saw the
            // most requests.
            SinkFigures::S3(store)
                if result
                    .s3
                    .as_ref()
                    .is_none_or(|seen| seen.requests <= store.requests) =>
            {
                let mut store = store.clone();
                if result.seconds > 0.0 {
                    store.requests_per_s =
                        (store.requests as f64 / result.seconds * 10.0).round() / 10.0;
                }
                result.s3 = Some(store);
            }
            SinkFigures::S3(_) => {}
            SinkFigures::Dedup(store)
                if result
                    .dedup
                    .as_ref()
                    .is_none_or(|seen| seen.logical_bytes <= store.logical_bytes) =>
            {
                let mut store = store.clone();
                store.over(result.seconds);
                result.dedup = Some(store);
            }
            SinkFigures::Dedup(_) => {}
            SinkFigures::Restored { files, into } => {
                result.files = *files;
                if let Some(restore) = result.restore.as_mut() {
                    restore.into.clone_from(into);
                }
            }
        }
    }
    if let Some(tape) = super::tape::combine(&drives) {
        result.tape = Some(tape);
    }
}

/// The target's own figures in words, when it reports any: every kind that does is listed
/// here.
pub fn target_report(result: &RunResult) -> Option<TargetReport> {
    result
        .tape
        .as_ref()
        .map(TapeFigures::report)
        .or_else(|| result.striped.as_ref().map(StripedFigures::report))
        .or_else(|| result.s3.as_ref().map(super::s3::S3Figures::report))
        .or_else(|| {
            result
                .dedup
                .as_ref()
                .map(super::dedup::DedupFigures::report)
        })
}
