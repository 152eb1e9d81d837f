//! A campaign's adaptive search, as its document shows it.

use serde::Serialize;
use utoipa::ToSchema;

use crate::lab::SearchReport;
use crate::tuner::Stopped;

/// How far a campaign's search went, why it stopped and how sure it is of its best point.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Search)]
pub struct SearchBody<'a> {
    /// Most runs the search may queue.
    pub budget_runs: usize,
    /// Where it started.
    pub seed: u64,
    /// The runs the full sweep would take, and its points.
    pub full_runs: usize,
    pub points_total: usize,
    /// Most repeats of one point.
    pub max_repeats: usize,
    /// Batches of runs queued so far.
    pub steps: u32,
    /// Why it stopped; `null` while it is still choosing.
    pub stopped: Option<StoppedBody>,
    /// Matrix points with at least one run, and the runs queued.
    pub points_run: usize,
    pub runs: usize,
    /// Why it stopped, in words; `null` while it is still choosing.
    pub why: Option<&'a str>,
    /// The best point's setting.
    pub best: Option<&'a str>,
    /// Whether the best point beats the runner-up by more than noise.
    pub stands_out: bool,
    /// How sure the search is of its best point, in a sentence.
    pub sureness: &'a str,
}

impl<'a> From<&'a SearchReport> for SearchBody<'a> {
    fn from(report: &'a SearchReport) -> Self {
        let state = &report.state;
        Self {
            budget_runs: state.budget_runs,
            seed: state.seed,
            full_runs: state.full_runs,
            points_total: state.points_total,
            max_repeats: state.max_repeats,
            steps: state.steps,
            stopped: state.stopped.map(StoppedBody::from),
            points_run: report.points_run,
            runs: report.runs,
            why: report.why.as_deref(),
            best: report.best.as_deref(),
            stands_out: report.stands_out,
            sureness: &report.sureness,
        }
    }
}

/// Why a search stopped.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = Stopped)]
pub enum StoppedBody {
    StandsOut,
    WithinNoise,
    BudgetSpent,
    NothingMeasured,
    Cancelled,
    Ended,
}

impl From<Stopped> for StoppedBody {
    fn from(stopped: Stopped) -> Self {
        match stopped {
            Stopped::StandsOut => StoppedBody::StandsOut,
            Stopped::WithinNoise => StoppedBody::WithinNoise,
            Stopped::BudgetSpent => StoppedBody::BudgetSpent,
            Stopped::NothingMeasured => StoppedBody::NothingMeasured,
            Stopped::Cancelled => StoppedBody::Cancelled,
            Stopped::Ended => StoppedBody::Ended,
        }
    }
}
