//! `/api/schedules`: a schedule, and a page of them.

use serde::Serialize;
use utoipa::ToSchema;

use crate::lab::{SchedulePage, ScheduleView};
use crate::spec::CampaignSpec;
use crate::store::FiringRecord;

/// A schedule: its pattern, its spec, when it fires next and what its newest firings queued.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Schedule)]
pub struct ScheduleBody<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// Five fields in UTC: minute hour day-of-month month day-of-week.
    pub cron: &'a str,
    /// The campaign queued at each occurrence; `null` when the kept spec no longer reads.
    pub spec: Option<CampaignSpec>,
    /// Kept without firing until resumed.
    pub paused: bool,
    /// When it was created (UTC).
    pub created: &'a str,
    /// When it fires next (UTC), unless paused.
    pub next: &'a str,
    /// Occurrences fired.
    pub fired: i64,
    /// Occurrences no lab saw in time (the labs were down): counted, never fired late.
    pub missed: i64,
    pub last_missed: Option<&'a str>,
    /// Why the last occurrence could not queue its campaign.
    pub last_error: Option<&'a str>,
    /// Its API path.
    pub url: &'a str,
    /// The newest firings, with the campaigns they queued.
    pub firings: Vec<FiringBody<'a>>,
}

/// One occurrence of a schedule, fired.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Firing)]
pub struct FiringBody<'a> {
    /// The occurrence, in milliseconds since the epoch.
    pub occurrence_ms: i64,
    /// The lab host that fired it.
    pub host: &'a str,
    pub fired_ms: i64,
    /// The campaign it queued.
    pub campaign_id: Option<&'a str>,
    /// Why it queued none.
    pub error: Option<&'a str>,
}

impl<'a> From<&'a FiringRecord> for FiringBody<'a> {
    fn from(firing: &'a FiringRecord) -> Self {
        Self {
            occurrence_ms: firing.occurrence_ms,
            host: &firing.host,
            fired_ms: firing.fired_ms,
            campaign_id: firing.campaign_id.as_deref(),
            error: firing.error.as_deref(),
        }
    }
}

impl<'a> From<&'a ScheduleView> for ScheduleBody<'a> {
    fn from(schedule: &'a ScheduleView) -> Self {
        Self {
            id: &schedule.id,
            name: &schedule.name,
            cron: &schedule.cron,
            spec: serde_json::from_value(schedule.spec.clone()).ok(),
            paused: schedule.paused,
            created: &schedule.created,
            next: &schedule.next,
            fired: schedule.fired,
            missed: schedule.missed,
            last_missed: schedule.last_missed.as_deref(),
            last_error: schedule.last_error.as_deref(),
            url: &schedule.url,
            firings: schedule.firings.iter().map(FiringBody::from).collect(),
        }
    }
}

/// A page of schedules, oldest first: a JSON array (the `Link` header leads to the next).
#[derive(Debug, Serialize, ToSchema)]
#[serde(transparent)]
#[schema(as = ScheduleList)]
pub struct ScheduleListBody<'a>(pub Vec<ScheduleBody<'a>>);

impl<'a> From<&'a SchedulePage> for ScheduleListBody<'a> {
    fn from(page: &'a SchedulePage) -> Self {
        Self(page.schedules.iter().map(ScheduleBody::from).collect())
    }
}
