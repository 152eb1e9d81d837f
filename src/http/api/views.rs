//! What the API answers, as JSON: campaigns, their runs and points, and the lab hosts, in the
//! shapes clients read. The lab's and the store's own types carry no serialisation of their
//! own; each answer here is built from them, so a change inside the lab never changes the
//! API by accident. The documents the lab stores whole (a run's result, the points) are
//! served in their stored shape, which `tests/fixtures/openapi.json` holds still.

use serde::Serialize;
use utoipa::ToSchema;

use super::wire::{HeadlineBody, PlanWarningBody, SearchBody, StatusBody};
use crate::analysis::points::Point;
use crate::engine::result::{RunResult, Sample};
use crate::lab::{
    CampaignPage, CampaignSummary, CampaignView, HostView, Planned, PlannedRun, Submitted,
};
use crate::spec::expectation::Expectation;
use crate::spec::{CampaignSpec, RunParams, TestKind};
use crate::store::RunRecord;

/// A campaign accepted and queued.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Submitted)]
pub struct SubmittedBody<'a> {
    pub id: &'a str,
    pub url: &'a str,
    pub runs: usize,
    /// How long it is expected to take, and what in it cannot give a valid run.
    #[serde(flatten)]
    pub expectation: ExpectationBody<'a>,
}

impl<'a> From<&'a Submitted> for SubmittedBody<'a> {
    fn from(submitted: &'a Submitted) -> Self {
        Self {
            id: &submitted.id,
            url: &submitted.url,
            runs: submitted.runs,
            expectation: ExpectationBody::from(&submitted.expectation),
        }
    }
}

/// How long a campaign is expected to take, and what in it cannot give a valid run.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Expectation)]
pub struct ExpectationBody<'a> {
    /// Seconds the campaign is likely to take, run after run (an adaptive search: its
    /// `likely_runs`).
    pub expected_s: f64,
    /// Whether some runs end with their data at a rate not known before they run: then
    /// `expected_s` is the longest they may take.
    pub at_most: bool,
    /// The longest it may take: every run that ends once steady running to its cap (an
    /// adaptive search: every run of its budget).
    pub longest_s: f64,
    /// An adaptive search only: the runs it likely takes before a point stands out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub likely_runs: Option<usize>,
    /// An adaptive search only: the most runs its budget allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_runs: Option<usize>,
    /// Values of the spec that cannot give a valid run, each with what it needs.
    pub warnings: Vec<PlanWarningBody<'a>>,
}

impl<'a> From<&'a Expectation> for ExpectationBody<'a> {
    fn from(expectation: &'a Expectation) -> Self {
        Self {
            expected_s: expectation.expected_s,
            at_most: expectation.at_most,
            longest_s: expectation.longest_s,
            likely_runs: expectation.search.map(|search| search.likely_runs),
            budget_runs: expectation.search.map(|search| search.budget_runs),
            warnings: expectation
                .warnings
                .iter()
                .map(PlanWarningBody::from)
                .collect(),
        }
    }
}

/// A dry run's answer: the plan, its expected length and its warnings.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Planned)]
pub struct PlannedBody<'a> {
    pub runs: usize,
    #[serde(flatten)]
    pub expectation: ExpectationBody<'a>,
    pub plan: Vec<PlannedRunBody<'a>>,
}

/// One run of a dry run's plan.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PlannedRun)]
pub struct PlannedRunBody<'a> {
    pub test: TestKind,
    pub params: &'a RunParams,
    /// Seconds it is expected to take.
    pub expected_s: f64,
}

impl<'a> From<&'a Planned> for PlannedBody<'a> {
    fn from(planned: &'a Planned) -> Self {
        Self {
            runs: planned.runs,
            expectation: ExpectationBody::from(&planned.expectation),
            plan: planned
                .plan
                .iter()
                .map(|run: &'a PlannedRun| PlannedRunBody {
                    test: run.test,
                    params: &run.params,
                    expected_s: run.expected_s,
                })
                .collect(),
        }
    }
}

/// A campaign as a list shows it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CampaignSummary)]
pub struct CampaignSummaryBody<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub status: StatusBody,
    pub created: String,
    pub rerun_of: Option<&'a str>,
    /// The lab host it runs on (`None`: stored before hosts were named, any host's).
    pub host: Option<&'a str>,
    pub url: String,
    /// The series its figures join: `/api/series/{series}` is their history.
    pub series: Option<&'a str>,
    pub tests: &'a [String],
    pub runs_total: i64,
    pub runs_finished: i64,
    pub runs_done: i64,
    pub runs_cancelled: i64,
    pub runs_failed: i64,
    /// The fastest whole-run figure of any test: not the backup's figure (see `headline`).
    pub best_mb_per_s: Option<f64>,
    /// The backup's figure and the component named, once the campaign has been judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headline: Option<HeadlineBody<'a>>,
}

impl<'a> From<&'a CampaignSummary> for CampaignSummaryBody<'a> {
    fn from(summary: &'a CampaignSummary) -> Self {
        let record = &summary.record;
        Self {
            id: &record.id,
            name: &record.name,
            status: summary.status.into(),
            created: summary.created(),
            rerun_of: record.rerun_of.as_deref(),
            host: record.host.as_deref(),
            url: summary.url(),
            series: record.series.as_deref(),
            tests: &record.spec.tests,
            runs_total: record.runs_total,
            runs_finished: record.runs_finished,
            runs_done: record.runs_done,
            runs_cancelled: record.runs_cancelled,
            runs_failed: record.runs_failed,
            best_mb_per_s: record.best_mb_per_s,
            headline: summary.headline.as_ref().map(HeadlineBody::from),
        }
    }
}

/// A page of campaigns, newest first; `next_before` continues the list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CampaignList)]
pub struct CampaignListBody<'a> {
    pub campaigns: Vec<CampaignSummaryBody<'a>>,
    pub next_before: Option<&'a str>,
}

impl<'a> From<&'a CampaignPage> for CampaignListBody<'a> {
    fn from(page: &'a CampaignPage) -> Self {
        Self {
            campaigns: page
                .campaigns
                .iter()
                .map(CampaignSummaryBody::from)
                .collect(),
            next_before: page.next_before.as_deref(),
        }
    }
}

/// One run: its place and number, its state and, once finished, its result.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Run)]
pub struct RunBody<'a> {
    pub id: i64,
    /// Its place in the campaign's plan, from 0.
    pub position: i64,
    /// Its number as every view shows it, from 1.
    pub number: i64,
    pub test: TestKind,
    pub params: &'a RunParams,
    pub status: StatusBody,
    pub attempts: i64,
    pub started_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    /// The lab host executing it, or that executed it.
    pub host: Option<&'a str>,
    /// Live samples of a run still in progress; a finished run's are in its result.
    #[serde(skip_serializing_if = "<[Sample]>::is_empty")]
    pub samples: &'a [Sample],
    pub result: Option<&'a RunResult>,
}

impl<'a> From<&'a RunRecord> for RunBody<'a> {
    fn from(run: &'a RunRecord) -> Self {
        Self {
            id: run.id,
            position: run.position,
            number: run.number,
            test: run.test,
            params: &run.params,
            status: run.status.into(),
            attempts: run.attempts,
            started_ms: run.started_ms,
            finished_ms: run.finished_ms,
            host: run.host.as_deref(),
            samples: &run.samples,
            result: run.result.as_ref(),
        }
    }
}

/// A campaign with its spec, its runs and its points, as `GET /api/campaigns/{id}` shows it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Campaign)]
pub struct CampaignBody<'a> {
    #[serde(flatten)]
    pub campaign: CampaignSummaryBody<'a>,
    pub spec: &'a CampaignSpec,
    pub runs: Vec<RunBody<'a>>,
    /// Each test at each parameter set, with its figure and how many of its runs are valid.
    pub points: &'a [Point],
    /// Its adaptive search: points and runs spent, why it stopped, how sure it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchBody<'a>>,
}

impl<'a> From<&'a CampaignView> for CampaignBody<'a> {
    fn from(view: &'a CampaignView) -> Self {
        Self {
            campaign: CampaignSummaryBody::from(&view.campaign),
            spec: view.spec(),
            runs: view.runs.iter().map(RunBody::from).collect(),
            points: &view.points,
            search: view.search.as_ref().map(SearchBody::from),
        }
    }
}

/// A lab host as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = HostView)]
pub struct HostBody {
    pub name: String,
    /// Whether it was heard from within its lease: it takes runs now.
    pub alive: bool,
    /// Seconds since it was last heard from.
    pub last_seen_s: f64,
    /// Whether it is the host answering.
    pub this_host: bool,
    pub url: Option<String>,
}

impl From<HostView> for HostBody {
    fn from(host: HostView) -> Self {
        Self {
            name: host.name,
            alive: host.alive,
            last_seen_s: host.last_seen_s,
            this_host: host.this_host,
            url: host.url,
        }
    }
}
