//! `/api/series/{key}` and `/api/campaigns/{id}/references`: a series' history, and the
//! other tools' figures kept beside a campaign's.

use serde::Serialize;
use utoipa::ToSchema;

use crate::analysis::Component;
use crate::analysis::points::Basis;
use crate::reference::{Reference, Workload};
use crate::series::history::{CampaignMark, Change, History, Line, ReferenceMark, SeriesPoint};
use crate::spec::TestKind;

/// A series: its campaigns oldest first, one line per test, and the changes found.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Series)]
pub struct SeriesBody<'a> {
    pub key: &'a str,
    pub campaigns: Vec<SeriesCampaignBody<'a>>,
    pub lines: Vec<SeriesLineBody<'a>>,
    /// Each tool's requests to its bucket per GiB backed up, campaign by campaign, and the
    /// changes in them (a change when three campaigns or more after it each differ by more
    /// than 20 % from the median before it).
    pub requests: &'a [crate::series::requests::RequestLine],
}

/// A campaign of a series: where its points link to, and what its verdict named.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SeriesCampaign)]
pub struct SeriesCampaignBody<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub created_ms: i64,
    /// The component the campaign's verdict names (its leading candidate when inconclusive).
    pub component: Option<Component>,
    pub conclusive: bool,
    /// The backup tool's version, for a campaign that ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<&'a str>,
}

/// One test's figure over a series' campaigns.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SeriesLine)]
pub struct SeriesLineBody<'a> {
    pub test: TestKind,
    /// The backup tool the line follows, with its parameters, for a tool test: each tool
    /// compared has a line of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    pub points: Vec<SeriesPointBody<'a>>,
    /// Changes found in the valid points, oldest first.
    pub changes: Vec<SeriesChangeBody<'a>>,
    /// Other tools' figures that measure what this test does, beside its points.
    pub references: Vec<SeriesReferenceBody<'a>>,
}

/// A campaign's figure for one test: its best point's median, range and validity.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SeriesPoint)]
pub struct SeriesPointBody<'a> {
    pub campaign: &'a str,
    /// The campaign's place in the series, from 1.
    pub number: usize,
    pub created_ms: i64,
    pub mb_per_s: f64,
    /// Whether the figure is steady-state or whole-run MB/s.
    pub basis: Basis,
    pub min: f64,
    pub max: f64,
    pub spread_pct: Option<f64>,
    /// Runs the figure rests on.
    pub runs: usize,
    pub valid: bool,
    /// Tested for changes.
    pub tested: bool,
    /// The point's setting in words (buffers, block, streams …).
    pub setting: &'a str,
}

/// A change in one test's figure that stands out of its noise.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SeriesChange)]
pub struct SeriesChangeBody<'a> {
    pub test: TestKind,
    /// The tool of the line it was found in, when the line follows one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// The first campaign after the change, and its place in the series (from 1).
    pub first_campaign: &'a str,
    pub first_number: usize,
    /// Medians of the valid figures before and after, MB/s.
    pub before_mb_s: f64,
    pub after_mb_s: f64,
    pub change_pct: f64,
    /// Welch's p of the two sides.
    pub p_value: f64,
    /// Campaigns on each side.
    pub campaigns_before: usize,
    pub campaigns_after: usize,
    /// What the verdicts named most often on each side.
    pub component_before: Option<Component>,
    pub component_after: Option<Component>,
    /// The backup tool's version in the last campaign before and the first after, for a
    /// series that runs one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_before: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_after: Option<&'a str>,
}

/// Another tool's figure, placed at the campaign it was imported into.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SeriesReference)]
pub struct SeriesReferenceBody<'a> {
    pub campaign: &'a str,
    /// The campaign's place in the series, from 1.
    pub number: usize,
    #[serde(flatten)]
    pub reference: ReferenceBody<'a>,
}

/// One figure of another tool (fio, iperf3), with what it was measured under.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Reference)]
pub struct ReferenceBody<'a> {
    /// The tool and its version, as it names itself (`fio-3.33`, `iperf 3.12`).
    pub tool: &'a str,
    /// The job's name (fio), or the test's protocol and streams (iperf3).
    pub job: &'a str,
    pub workload: WorkloadBody,
    /// Bytes per second over the tool's own run time, in MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// What it was measured with, as the tool spelled it: `[name, value]` pairs.
    #[schema(value_type = Vec<Vec<String>>)]
    pub conditions: Vec<(&'a str, &'a str)>,
}

/// What a reference measured: the backlab tests it stands beside.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = Workload)]
pub enum WorkloadBody {
    Write,
    Read,
    Network,
}

impl From<Workload> for WorkloadBody {
    fn from(workload: Workload) -> Self {
        match workload {
            Workload::Write => WorkloadBody::Write,
            Workload::Read => WorkloadBody::Read,
            Workload::Network => WorkloadBody::Network,
        }
    }
}

impl<'a> From<&'a Reference> for ReferenceBody<'a> {
    fn from(reference: &'a Reference) -> Self {
        Self {
            tool: &reference.tool,
            job: &reference.job,
            workload: reference.workload.into(),
            mb_per_s: reference.mb_per_s,
            conditions: reference
                .conditions
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect(),
        }
    }
}

impl<'a> From<&'a History> for SeriesBody<'a> {
    fn from(history: &'a History) -> Self {
        Self {
            key: &history.key,
            campaigns: history.campaigns.iter().map(campaign).collect(),
            lines: history.lines.iter().map(line).collect(),
            requests: &history.requests,
        }
    }
}

fn campaign(mark: &CampaignMark) -> SeriesCampaignBody<'_> {
    SeriesCampaignBody {
        id: &mark.id,
        name: &mark.name,
        created_ms: mark.created_ms,
        component: mark.component,
        conclusive: mark.conclusive,
        tool_version: mark.tool_version.as_deref(),
    }
}

fn line(line: &Line) -> SeriesLineBody<'_> {
    SeriesLineBody {
        test: line.test,
        tool: line.tool.as_deref(),
        points: line.points.iter().map(point).collect(),
        changes: line.changes.iter().map(change).collect(),
        references: line.references.iter().map(reference_mark).collect(),
    }
}

fn point(point: &SeriesPoint) -> SeriesPointBody<'_> {
    SeriesPointBody {
        campaign: &point.campaign,
        number: point.number,
        created_ms: point.created_ms,
        mb_per_s: point.mb_per_s,
        basis: point.basis,
        min: point.min,
        max: point.max,
        spread_pct: point.spread_pct,
        runs: point.runs,
        valid: point.valid,
        tested: point.tested,
        setting: &point.setting,
    }
}

fn change(change: &Change) -> SeriesChangeBody<'_> {
    SeriesChangeBody {
        test: change.test,
        tool: change.tool.as_deref(),
        first_campaign: &change.first_campaign,
        first_number: change.first_number,
        before_mb_s: change.before_mb_s,
        after_mb_s: change.after_mb_s,
        change_pct: change.change_pct,
        p_value: change.p_value,
        campaigns_before: change.campaigns_before,
        campaigns_after: change.campaigns_after,
        component_before: change.component_before,
        component_after: change.component_after,
        tool_before: change.tool_before.as_deref(),
        tool_after: change.tool_after.as_deref(),
    }
}

fn reference_mark(mark: &ReferenceMark) -> SeriesReferenceBody<'_> {
    SeriesReferenceBody {
        campaign: &mark.campaign,
        number: mark.number,
        reference: ReferenceBody::from(&mark.reference),
    }
}
