//! Schedules as the lab keeps them: created, edited, paused and deleted by request, each spec
//! checked as a campaign is; and fired by every lab on the database, each occurrence by exactly
//! one of them, occurrences too long past counted as missed rather than fired.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::{Lab, LabError, MAX_PAGE, parse_body, read_json};
use crate::clock::{calendar_ms, format_ms};
use crate::field_errors::FieldErrors;
use crate::schedule::{self, Pattern};
use crate::spec::CampaignSpec;
use crate::store::{FiringRecord, MAX_SCHEDULES, ScheduleRecord};

/// How often a lab looks for occurrences due.
pub const SCHEDULE_TICK: Duration = Duration::from_secs(1);

/// A new schedule: a spec and the times to queue it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewSchedule {
    #[serde(default)]
    name: Option<String>,
    cron: String,
    spec: serde_json::Value,
    #[serde(default)]
    paused: bool,
}

/// A change to a schedule: any of its name, pattern, spec and pause.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleChange {
    name: Option<String>,
    cron: Option<String>,
    spec: Option<serde_json::Value>,
    paused: Option<bool>,
}

/// A schedule as the API and the page show it.
#[derive(Debug, Clone)]
pub struct ScheduleView {
    pub id: String,
    pub name: String,
    pub cron: String,
    pub spec: serde_json::Value,
    pub paused: bool,
    pub created: String,
    /// When it fires next (UTC), unless paused.
    pub next: String,
    pub fired: i64,
    /// Occurrences no lab saw in time (the labs were down): counted, never fired late.
    pub missed: i64,
    pub last_missed: Option<String>,
    pub last_error: Option<String>,
    pub url: String,
    /// The newest firings, with the campaigns they queued.
    pub firings: Vec<FiringRecord>,
}

impl ScheduleView {
    fn of(record: ScheduleRecord, firings: Vec<FiringRecord>) -> Self {
        Self {
            url: format!("/api/schedules/{}", record.id),
            spec: serde_json::from_str(&record.spec).unwrap_or(serde_json::Value::Null),
            created: format_ms(record.created_ms),
            next: format_ms(record.next_ms),
            last_missed: record.last_missed_ms.map(format_ms),
            id: record.id,
            name: record.name,
            cron: record.cron,
            paused: record.paused,
            fired: record.fired,
            missed: record.missed,
            last_error: record.last_error,
            firings,
        }
    }
}

/// A page of schedules, oldest first; `next_after` continues the list (`?after=`).
#[derive(Debug, Clone)]
pub struct SchedulePage {
    pub schedules: Vec<ScheduleView>,
    /// The last schedule of this page, when more follow.
    pub next_after: Option<String>,
}

impl SchedulePage {
    /// The page of `limit` from `read`, which holds one more when another page follows.
    fn of(mut read: Vec<ScheduleView>, limit: u32) -> Self {
        let more = read.len() > limit as usize;
        read.truncate(limit as usize);
        Self {
            next_after: more
                .then(|| read.last().map(|schedule| schedule.id.clone()))
                .flatten(),
            schedules: read,
        }
    }
}

/// The refusal of a cursor that names no schedule.
fn unknown_after(after: Option<&str>) -> LabError {
    let mut errors = FieldErrors::default();
    errors.add(
        "after",
        format!("no schedule {:?}", after.unwrap_or_default()),
    );
    LabError::BadQuery(errors)
}

/// The lab's schedules: created, read, changed and deleted by request, and fired when due.
pub struct Schedules<'a> {
    /// A schedule's spec is checked, and its occurrences queued, as a campaign is: on the lab.
    lab: &'a Arc<Lab>,
}

impl Lab {
    /// The schedules: kept, changed, and fired when due.
    pub fn schedules(self: &Arc<Self>) -> Schedules<'_> {
        Schedules { lab: self }
    }
}

impl Schedules<'_> {
    /// Creates a schedule from a request body; every bad field is named (`cron`, `spec.…`).
    pub async fn create(&self, body: &[u8]) -> Result<ScheduleView, LabError> {
        let request: NewSchedule = read_json(body)?;
        let mut errors = FieldErrors::default();
        let pattern = checked_pattern(&request.cron, &mut errors);
        let spec = self.checked_schedule_spec(&request.spec, &mut errors).await;
        let name = request.name.unwrap_or_default();
        check_schedule_name(&name, &mut errors);
        let (Some(pattern), Some(spec), true) = (pattern, spec, errors.is_empty()) else {
            return Err(LabError::Invalid(errors));
        };
        let now = calendar_ms();
        let record = ScheduleRecord {
            id: crate::ids::campaign_id(),
            // Unnamed, it goes by its spec's name, else by its pattern.
            name: [name, spec.name.clone(), request.cron.trim().to_string()]
                .into_iter()
                .find(|name| !name.trim().is_empty())
                .unwrap_or_default(),
            cron: request.cron.trim().to_string(),
            spec: spec_text(&spec)?,
            paused: request.paused,
            created_ms: now,
            next_ms: pattern.next_after(now).unwrap_or(i64::MAX),
            fired: 0,
            missed: 0,
            last_missed_ms: None,
            last_error: None,
        };
        if !self.lab.store.insert_schedule(&record).await? {
            return Err(LabError::Conflict(format!(
                "the lab keeps at most {MAX_SCHEDULES} schedules: delete one first"
            )));
        }
        Ok(ScheduleView::of(record, Vec::new()))
    }

    /// A page of schedules, oldest first (without their firings): at most `limit` (clamped to
    /// 1..=[`MAX_PAGE`]) after the one `after` names.
    pub async fn page(&self, after: Option<&str>, limit: u32) -> Result<SchedulePage, LabError> {
        let limit = limit.clamp(1, MAX_PAGE);
        // One more than the page shows: whether another page follows.
        let records = self.lab.store.schedules(after, limit + 1).await?;
        let records = records.ok_or_else(|| unknown_after(after))?;
        Ok(SchedulePage::of(
            records
                .into_iter()
                .map(|record| ScheduleView::of(record, Vec::new()))
                .collect(),
            limit,
        ))
    }

    /// A page of schedules as [`Schedules::page`] reads it, each with its newest `shown`
    /// firings.
    pub async fn page_with_firings(
        &self,
        after: Option<&str>,
        limit: u32,
        shown: usize,
    ) -> Result<SchedulePage, LabError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let shown = i64::try_from(shown).unwrap_or(i64::MAX);
        let records = self
            .lab
            .store
            .schedules_with_firings(after, limit + 1, shown)
            .await?
            .ok_or_else(|| unknown_after(after))?;
        Ok(SchedulePage::of(
            records
                .into_iter()
                .map(|(record, firings)| ScheduleView::of(record, firings))
                .collect(),
            limit,
        ))
    }

    /// One schedule with its newest firings.
    pub async fn view(&self, id: &str) -> Result<ScheduleView, LabError> {
        let (record, firings) = self.schedule_with_firings(id).await?;
        Ok(ScheduleView::of(record, firings))
    }

    /// Changes a schedule's name, pattern, spec or pause; a resumed or re-timed schedule
    /// fires next at the pattern's first occurrence from now (none of those it slept through).
    pub async fn change(&self, id: &str, body: &[u8]) -> Result<ScheduleView, LabError> {
        let (mut record, _) = self.schedule_with_firings(id).await?;
        let change: ScheduleChange = read_json(body)?;
        let mut errors = FieldErrors::default();
        let pattern = match &change.cron {
            Some(cron) => checked_pattern(cron, &mut errors),
            None => Pattern::parse(&record.cron).ok(),
        };
        let spec = match &change.spec {
            Some(spec) => self.checked_schedule_spec(spec, &mut errors).await,
            None => None,
        };
        if let Some(name) = &change.name {
            check_schedule_name(name, &mut errors);
        }
        if !errors.is_empty() {
            return Err(LabError::Invalid(errors));
        }
        let resumed = record.paused && change.paused == Some(false);
        if let Some(cron) = &change.cron {
            record.cron = cron.trim().to_string();
        }
        if let Some(spec) = &spec {
            record.spec = spec_text(spec)?;
        }
        if let Some(name) = change.name {
            record.name = name;
        }
        if let Some(paused) = change.paused {
            record.paused = paused;
        }
        if (resumed || change.cron.is_some())
            && let Some(pattern) = pattern
        {
            record.next_ms = pattern.next_after(calendar_ms()).unwrap_or(i64::MAX);
        }
        if !self.lab.store.update_schedule(&record).await? {
            return Err(no_schedule(id));
        }
        self.view(id).await
    }

    /// Deletes a schedule; the campaigns it queued stay.
    pub async fn delete(&self, id: &str) -> Result<(), LabError> {
        if !crate::ids::looks_like_campaign_id(id) || !self.lab.store.delete_schedule(id).await? {
            return Err(no_schedule(id));
        }
        Ok(())
    }

    /// Fires every occurrence due now that no other lab has taken, and counts as missed those
    /// too long past. Returns how many occurrences it fired (their campaigns are queued in the
    /// background).
    pub async fn fire_due(&self) -> usize {
        let now = calendar_ms();
        let due = match self.lab.store.schedules_due(now).await {
            Ok(due) => due,
            Err(error) => {
                tracing::warn!(%error, "cannot read the schedules due");
                return 0;
            }
        };
        let mut fired = 0;
        for record in due {
            let Ok(pattern) = Pattern::parse(&record.cron) else {
                continue;
            };
            let Some(due) = schedule::due(&pattern, record.next_ms, now) else {
                continue;
            };
            if !due.is_due() {
                continue;
            }
            let taken = self
                .lab
                .store
                .take_occurrences(
                    &record.id,
                    record.next_ms,
                    due.next_ms,
                    due.missed,
                    due.last_missed,
                    due.fire,
                    &self.lab.host.name,
                    now,
                )
                .await;
            match taken {
                Ok(true) => {}
                Ok(false) => continue,
                Err(error) => {
                    tracing::warn!(schedule = %record.id, %error, "cannot take the schedule's occurrence");
                    continue;
                }
            }
            if due.missed > 0 {
                tracing::warn!(
                    schedule = %record.id,
                    missed = due.missed,
                    last = %due.last_missed.map(format_ms).unwrap_or_default(),
                    "occurrences passed while no lab could fire them: counted as missed, not fired"
                );
            }
            let Some(occurrence) = due.fire else {
                continue;
            };
            // The occurrence is taken; queuing its spec (checks that may wait on a store
            // outside the machine) goes on beside the clock, so no schedule fires late
            // because another one's checks are slow.
            let lab = Arc::clone(self.lab);
            tokio::spawn(async move { lab.schedules().fire_and_settle(&record, occurrence).await });
            fired += 1;
        }
        fired
    }

    /// Queues an occurrence's campaign and records how it went.
    async fn fire_and_settle(&self, record: &ScheduleRecord, occurrence: i64) {
        let outcome = self.fire(record).await;
        if let Err(error) = &outcome {
            tracing::warn!(schedule = %record.id, %error, "the schedule's spec could not be queued");
        }
        let settled = self
            .lab
            .store
            .settle_firing(
                &record.id,
                occurrence,
                outcome.as_deref().map_err(String::as_str),
            )
            .await;
        if let Err(error) = settled {
            tracing::warn!(schedule = %record.id, %error, "cannot record the firing");
        }
    }

    /// Queues the schedule's spec as a campaign named after the schedule when it has no name.
    async fn fire(&self, record: &ScheduleRecord) -> Result<String, String> {
        let mut spec = parse_body(record.spec.as_bytes()).map_err(|error| error.to_string())?;
        if spec.name.is_empty() {
            spec.name = record.name.clone();
        }
        match self.lab.accept(spec, None).await {
            Ok(submitted) => Ok(submitted.id),
            Err(error) => Err(error
                .field_errors()
                .map_or_else(|| error.to_string(), |errors| errors.to_string())),
        }
    }

    /// The stored schedule `id` with its newest firings; not found when there is none.
    async fn schedule_with_firings(
        &self,
        id: &str,
    ) -> Result<(ScheduleRecord, Vec<FiringRecord>), LabError> {
        if !crate::ids::looks_like_campaign_id(id) {
            return Err(no_schedule(id));
        }
        self.lab
            .store
            .schedule(id)
            .await?
            .ok_or_else(|| no_schedule(id))
    }

    /// The spec of a schedule, checked as a campaign's is; its problems go into `errors`
    /// under `spec.`.
    async fn checked_schedule_spec(
        &self,
        spec: &serde_json::Value,
        errors: &mut FieldErrors,
    ) -> Option<CampaignSpec> {
        let text = spec.to_string();
        let checked = match parse_body(text.as_bytes()) {
            Ok(spec) => self.lab.checked(spec).await,
            Err(error) => Err(error),
        };
        match checked {
            Ok((spec, _)) => Some(spec),
            Err(error) if error.field_errors().is_some() => {
                for (path, message) in error.field_errors().unwrap_or_default().0 {
                    errors.add(format!("spec.{path}"), message);
                }
                None
            }
            Err(error) => {
                errors.add("spec", error.to_string());
                None
            }
        }
    }
}

/// The longest cron pattern kept: five fields with lists and ranges fit in far less.
pub const MAX_CRON_CHARS: usize = 120;
/// The largest spec a schedule keeps (as stored JSON): every schedule is read for the
/// schedules page, so a schedule's size bounds what one page view costs.
pub const MAX_SCHEDULE_SPEC_BYTES: usize = 32 << 10;

fn checked_pattern(cron: &str, errors: &mut FieldErrors) -> Option<Pattern> {
    if cron.len() > MAX_CRON_CHARS {
        errors.add(
            "cron",
            format!("must be at most {MAX_CRON_CHARS} characters (five fields)"),
        );
        return None;
    }
    Pattern::parse(cron)
        .map_err(|message| errors.add("cron", message))
        .ok()
}

fn check_schedule_name(name: &str, errors: &mut FieldErrors) {
    if name.chars().count() > 200 {
        errors.add("name", "must be at most 200 characters");
    }
}

fn spec_text(spec: &CampaignSpec) -> Result<String, LabError> {
    let text =
        serde_json::to_string(spec).map_err(|error| LabError::Internal(error.to_string()))?;
    if text.len() > MAX_SCHEDULE_SPEC_BYTES {
        let mut errors = FieldErrors::default();
        errors.add(
            "spec",
            format!(
                "is {} bytes as stored; a schedule keeps a spec of at most {} KiB",
                text.len(),
                MAX_SCHEDULE_SPEC_BYTES >> 10
            ),
        );
        return Err(LabError::Invalid(errors));
    }
    Ok(text)
}

fn no_schedule(id: &str) -> LabError {
    LabError::NotFound(format!("no schedule {id:?}"))
}
