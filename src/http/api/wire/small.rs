//! The small parts the answers share, each a type of its own with a `From` from the lab's,
//! the analysis's or the store's: a campaign's or a run's status, a judged campaign's
//! headline, a plan's warning.

use serde::Serialize;
use utoipa::ToSchema;

use crate::analysis::Headline;
use crate::analysis::points::Basis;
use crate::spec::TestKind;
use crate::spec::expectation::PlanWarning;
use crate::store::RunState;

/// Where a run stands. `Interrupted` runs were stopped by a shutdown and are queued again at
/// the next start.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = RunState)]
pub enum StatusBody {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
    Interrupted,
}

impl From<RunState> for StatusBody {
    fn from(state: RunState) -> Self {
        match state {
            RunState::Queued => StatusBody::Queued,
            RunState::Running => StatusBody::Running,
            RunState::Done => StatusBody::Done,
            RunState::Failed => StatusBody::Failed,
            RunState::Cancelled => StatusBody::Cancelled,
            RunState::Interrupted => StatusBody::Interrupted,
        }
    }
}

/// What the list shows of a judged campaign besides its verdict line.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Headline)]
pub struct HeadlineBody<'a> {
    /// The backup's own test (full or network backup, or one tool's backup), when the
    /// campaign ran one.
    pub backup_test: Option<TestKind>,
    /// That test's table figure, MB/s: the median of its valid repeats at its best point.
    pub backup_mb_per_s: Option<f64>,
    /// Whether that figure rests on valid runs.
    pub backup_valid: Option<bool>,
    /// What that figure measures: the steady window or the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_basis: Option<Basis>,
    /// How many of the runs at that figure's point are valid, of all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_runs_valid: Option<(usize, usize)>,
    /// The backup tool whose backup `backup_test` is, with its parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_tool: Option<&'a str>,
    /// When the campaign compared several tools: each one's backup, MB/s, in their order.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub tool_backups: &'a [(String, Option<f64>)],
    /// The component the verdict names, in a word or two.
    pub component: Option<&'a str>,
    /// False when the verdict asks for runs to be redone first.
    pub conclusive: bool,
    /// The judging rules it was drawn under (`JUDGEMENT_VERSION`; 0 before they were counted).
    // Always written, but documented as optional since a headline kept before versions were
    // counted was read without one.
    #[schema(required = false)]
    pub version: u32,
}

impl<'a> From<&'a Headline> for HeadlineBody<'a> {
    fn from(headline: &'a Headline) -> Self {
        Self {
            backup_test: headline.backup_test,
            backup_mb_per_s: headline.backup_mb_per_s,
            backup_valid: headline.backup_valid,
            backup_basis: headline.backup_basis,
            backup_runs_valid: headline.backup_runs_valid,
            backup_tool: headline.backup_tool.as_deref(),
            tool_backups: &headline.tool_backups,
            component: headline.component.as_deref(),
            conclusive: headline.conclusive,
            version: headline.version,
        }
    }
}

/// A value a spec gave that cannot give a valid run, with what it needs: the campaign still
/// runs as asked.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PlanWarning)]
pub struct PlanWarningBody<'a> {
    /// The field to change, as errors name fields.
    pub field: &'a str,
    pub message: &'a str,
}

impl<'a> From<&'a PlanWarning> for PlanWarningBody<'a> {
    fn from(warning: &'a PlanWarning) -> Self {
        Self {
            field: &warning.field,
            message: &warning.message,
        }
    }
}
