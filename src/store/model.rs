//! What the store hands out: campaigns and runs as the service sees them.

use serde::{Deserialize, Serialize};

use crate::engine::plan::Placement;
use crate::engine::result::{RunResult, RunStatus, Sample};
use crate::engine::survey::Survey;
use crate::spec::{CampaignSpec, RunParams, TestKind};

use super::Document;

/// Where a run stands. `Interrupted` runs were stopped by a shutdown and are queued again at
/// the next start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
    Interrupted,
}

impl RunState {
    /// The name stored in the database and shown in the API.
    pub fn id(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Failed => "failed",
            RunState::Cancelled => "cancelled",
            RunState::Interrupted => "interrupted",
        }
    }

    /// Parses a stored or requested name.
    pub fn from_id(id: &str) -> Option<Self> {
        Some(match id {
            "queued" => RunState::Queued,
            "running" => RunState::Running,
            "done" => RunState::Done,
            "failed" => RunState::Failed,
            "cancelled" => RunState::Cancelled,
            "interrupted" => RunState::Interrupted,
            _ => return None,
        })
    }

    /// Whether nothing more will happen to a run (or a campaign) in this state.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            RunState::Done | RunState::Failed | RunState::Cancelled
        )
    }

    /// How a run in this state ended, when it has ended.
    pub fn finished(self) -> Option<RunStatus> {
        match self {
            RunState::Done => Some(RunStatus::Done),
            RunState::Failed => Some(RunStatus::Failed),
            RunState::Cancelled => Some(RunStatus::Cancelled),
            RunState::Queued | RunState::Running | RunState::Interrupted => None,
        }
    }

    /// Every state, in the order the metrics list them.
    pub const ALL: [RunState; 6] = [
        RunState::Queued,
        RunState::Running,
        RunState::Done,
        RunState::Failed,
        RunState::Cancelled,
        RunState::Interrupted,
    ];
}

impl From<RunStatus> for RunState {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Done => RunState::Done,
            RunStatus::Failed => RunState::Failed,
            RunStatus::Cancelled => RunState::Cancelled,
        }
    }
}

/// A campaign's status: derived from its runs, with the same names as a run's.
pub type CampaignStatus = RunState;

/// A campaign as stored, without its runs.
#[derive(Debug, Clone)]
pub struct CampaignRecord {
    pub id: String,
    pub name: String,
    /// The spec as accepted.
    pub spec: CampaignSpec,
    pub status: CampaignStatus,
    pub created_ms: i64,
    pub rerun_of: Option<String>,
    /// The lab host it runs on; `None` for a campaign stored before hosts were named.
    pub host: Option<String>,
    /// The key of the series its figures join, as given when it was stored.
    pub series: Option<String>,
    /// Its adaptive search's state, when its matrix has one, as last kept.
    pub search: Option<Document>,
    pub runs_total: i64,
    pub runs_finished: i64,
    /// Of the finished runs: how many ended done, cancelled and failed.
    pub runs_done: i64,
    pub runs_cancelled: i64,
    pub runs_failed: i64,
    /// The best throughput of any finished run, in MB/s.
    pub best_mb_per_s: Option<f64>,
    /// The source survey taken before the first run (`None` too when a stored one can no
    /// longer be read).
    pub survey: Option<Survey>,
    /// The judgement kept once the campaign finished and was judged, as it was kept.
    pub judgement: Option<Document>,
    /// What the list shows besides the verdict line, once judged.
    pub headline: Option<Document>,
}

/// A run as stored: its place in the campaign, its state and, once finished, its result.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub id: i64,
    /// Its place in the campaign's plan, from 0.
    pub position: i64,
    /// Its number as every view shows it: `position` + 1.
    pub number: i64,
    pub test: TestKind,
    pub params: RunParams,
    pub status: RunState,
    pub attempts: i64,
    pub started_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    /// The lab host executing it, or that executed it once it finished.
    pub host: Option<String>,
    /// Live samples of a run still in progress; a finished run's are in its result.
    pub samples: Vec<Sample>,
    /// The measured figures; present once the run finished (done, failed or cancelled).
    pub result: Option<RunResult>,
}

/// A run taken off the queue by a worker.
#[derive(Debug, Clone)]
pub struct ClaimedRun {
    pub run_id: i64,
    pub campaign_id: String,
    pub position: usize,
    pub test: TestKind,
    pub params: RunParams,
    /// Where the campaign's runs read and write, as stored.
    pub plan: StoredPlan,
    /// How many runs the campaign has.
    pub runs_total: usize,
    /// Which attempt this claim is: the run's result is kept only by the attempt that holds it.
    pub attempt: i64,
    /// Whether the campaign's paths were checked by a lab other than the one claiming it (a
    /// campaign submitted to one host for another): they are resolved on this host at start.
    pub checked_elsewhere: bool,
}

/// A run claimed and ended failed at once because what is stored of it cannot be read (a
/// test this lab does not know, parameters that do not parse): what its campaign's followers
/// and its end need to know of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableRun {
    pub run_id: i64,
    pub campaign_id: String,
    pub position: usize,
    /// Its test as stored.
    pub test: String,
    /// Why it cannot be read.
    pub why: String,
}

/// What a new campaign is made of: its accepted spec and the runs it expands to.
#[derive(Debug, Clone)]
pub struct NewCampaign {
    pub id: String,
    /// The lab host that runs it.
    pub host: String,
    /// The lab host that checked its paths (the one that received it).
    pub checked_by: String,
    pub name: String,
    pub spec: CampaignSpec,
    /// Where every run reads and writes.
    pub placement: Placement,
    pub rerun_of: Option<String>,
    /// The key of the series its figures join.
    pub series: String,
    /// The first runs: all of them, or an adaptive search's first step.
    pub runs: Vec<(TestKind, RunParams)>,
    /// The state of the adaptive search choosing the rest, if any (the search is open).
    pub search: Option<Document>,
}

/// What a cancel request changed.
#[derive(Debug, Clone, Default)]
pub struct CancelOutcome {
    /// Queued runs that will now never run.
    pub cancelled_queued: u64,
    /// The campaign's run that is executing right now, to be stopped by its worker.
    pub running: Vec<i64>,
}

/// Whether a campaign could be deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteOutcome {
    Deleted,
    NotFound,
    Running,
}

/// Runs put back on the queue at start-up, and the campaigns whose targets may hold their files.
#[derive(Debug, Clone, Default)]
pub struct Recovery {
    pub requeued: u64,
    /// The specs of the campaigns whose runs were requeued (those that can still be read).
    pub specs: Vec<CampaignSpec>,
}

/// Where a claimed run reads and writes, as its campaign stored it.
#[derive(Debug, Clone)]
pub enum StoredPlan {
    /// The campaign's placement: every run's paths, resolved when it was accepted.
    Placement(Placement),
    /// A campaign stored before placements were kept: its spec, planned again.
    Spec(Box<CampaignSpec>),
    /// What was stored cannot be read: the run fails, saying why.
    Unreadable(String),
}

/// Counts for `/metrics`.
#[derive(Debug, Clone, Default)]
pub struct QueueFigures {
    pub runs_by_status: Vec<(RunState, i64)>,
    pub bytes_moved: i64,
    pub duration_buckets: Vec<(f64, i64)>,
    pub duration_sum: f64,
    pub duration_count: i64,
}

row_struct! {
/// A lab host as registered on the database.
#[derive(Debug, Clone)]
pub struct HostRecord {
    pub name: String,
    /// What it may read and write and its limits (its `Policy`, as JSON).
    pub policy_json: String as "policy",
    /// Where people reach it, when it was told (`--public-url`).
    pub url: Option<String>,
    /// A fingerprint of its token (empty: none), to find hosts started with another.
    pub token_fingerprint: String as "token",
    pub started_ms: i64,
    pub heartbeat_ms: i64,
}
}

/// A schedule as stored: a spec queued at the times its cron pattern names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScheduleRecord {
    pub id: String,
    pub name: String,
    /// The cron pattern (five fields, UTC).
    pub cron: String,
    /// The spec each firing queues, as JSON text.
    pub spec: String,
    pub paused: bool,
    pub created_ms: i64,
    /// The next occurrence, ms since the epoch.
    pub next_ms: i64,
    /// Occurrences fired, and passed unfired because no lab saw them in time.
    pub fired: i64,
    pub missed: i64,
    pub last_missed_ms: Option<i64>,
    /// Why the last firing queued no campaign, if it did not.
    pub last_error: Option<String>,
}

/// One occurrence of a schedule, fired.
#[derive(Debug, Clone, PartialEq)]
pub struct FiringRecord {
    pub occurrence_ms: i64,
    /// The lab host that fired it.
    pub host: String,
    pub fired_ms: i64,
    pub campaign_id: Option<String>,
    pub error: Option<String>,
}
