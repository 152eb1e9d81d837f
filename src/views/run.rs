//! What a view needs of one run: its place, its test and parameters, where it stands, when it
//! ran, its samples and its result. Built from the stored record once, at the boundary
//! (`lab::run_views`), so that no chart, report or page reads a storage record.

use crate::engine::result::{RunResult, Sample};
use crate::spec::{RunParams, TestKind};

/// Where a run stands, as the views tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPhase {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
    /// Stopped by a lab that went away; it is queued again.
    Interrupted,
}

impl RunPhase {
    /// Its word in tables and in the CSV.
    pub fn id(self) -> &'static str {
        match self {
            RunPhase::Queued => "queued",
            RunPhase::Running => "running",
            RunPhase::Done => "done",
            RunPhase::Failed => "failed",
            RunPhase::Cancelled => "cancelled",
            RunPhase::Interrupted => "interrupted",
        }
    }

    /// Whether nothing more will happen to the run.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            RunPhase::Done | RunPhase::Failed | RunPhase::Cancelled
        )
    }
}

/// One run of a campaign, as every chart, report and page reads it.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// Its number as every view shows it, from 1, in plan order.
    pub number: usize,
    pub test: TestKind,
    pub params: &'a RunParams,
    pub phase: RunPhase,
    /// How many times a lab took it up.
    pub attempts: i64,
    pub started_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    /// MB/s over time as the samples came in, while it runs.
    pub live_samples: &'a [Sample],
    /// The measured figures, once it finished (done, failed or cancelled).
    pub result: Option<&'a RunResult>,
}

impl<'a> RunView<'a> {
    /// MB/s over time: a finished run's from its result, a running run's as they came in.
    pub fn samples(&self) -> &'a [Sample] {
        self.result
            .map_or(self.live_samples, |result| &result.samples)
    }
}
