//! The lab as a service, apart from HTTP: accepts campaigns, answers for them, cancels and
//! deletes them, and keeps the registry of runs executing now. The web layer asks it for
//! everything and maps its errors to status codes.
//!
//! Its parts: the lanes that execute what it queues (`worker`); what follows when a run or a
//! campaign ends, in one order (`ended`); live events (`events`); its place on the database
//! and the relay between hosts (`host`); the agents it knows (`agents`); its series and their
//! alerts (`watch`), schedules (`schedules`), adaptive searches (`search`) and reference
//! figures (`references`).

mod agents;
pub use agents::{AgentView, AgentsView};
mod ended;
pub use ended::{Ending, KeptAnswers};
pub mod events;
pub mod host;
mod references;
mod schedules;
mod search;
pub use search::{SearchReport, deciding_test, search_report, unexplored};
mod watch;
pub mod worker;

pub use schedules::{MAX_CRON_CHARS, SCHEDULE_TICK, SchedulePage, ScheduleView};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

use crate::analysis;
use crate::clock::{format_ms, now_ms};
use crate::engine::result::{RunResult, Sample};
use crate::engine::survey::Survey;
use crate::engine::{EngineSettings, preflight};
use crate::ids;
use crate::lab::events::{EventHub, LabEvent, RelayMessage, RunBrief};
use crate::net::listener::DataLink;
use crate::policy::{Policy, Reach};
use crate::spec::expectation::{Expectation, expect};
use crate::spec::{self, CampaignSpec, FieldErrors, Placement, RunPlan};
use crate::store::{
    CampaignRecord, CampaignStatus, ClaimedRun, DeleteOutcome, Document, HeldRun, HostRecord,
    Neighbour, NewCampaign, QueueFigures, RunRecord, Store, StoreError,
};
use crate::views::report::{CampaignHeader, CampaignReport};
use crate::views::{RunPhase, RunView};

/// The demo dataset's directory name under the data dir.
pub const DEMO_DIR: &str = "demo";

/// The most items one list request returns (campaigns, schedules, hosts).
pub const MAX_PAGE: u32 = 200;

/// The most runs that may wait in the queue, all campaigns together (ten campaigns of the
/// largest size): a lab takes nothing more until it drains.
pub const MAX_QUEUED_RUNS: u64 = 10_000;

/// Why a request to the lab was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The request could not be read: its body is not JSON (or not UTF-8 text).
    #[error("the request is malformed")]
    Malformed(FieldErrors),
    /// The request was read but asks for something impossible or out of limits.
    #[error("the request is not valid")]
    Invalid(FieldErrors),
    /// A path lies outside what the lab was allowed to touch; what else is wrong is said
    /// beside it, apart, so an answer can say how many of each there are.
    #[error("a path is outside what this lab may use")]
    Forbidden {
        /// The paths outside the allowed roots.
        paths: FieldErrors,
        /// Every other problem found with them.
        others: FieldErrors,
    },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// A query parameter of a read is not one the lab can answer.
    #[error("the query is not valid")]
    BadQuery(FieldErrors),
    /// The queue holds as many runs as it may: nothing more is taken until it drains.
    #[error("{0}")]
    QueueFull(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

impl LabError {
    /// Every problem by field, for a refusal that names fields; `None` for another error.
    pub fn field_errors(&self) -> Option<FieldErrors> {
        match self {
            LabError::Malformed(fields) | LabError::Invalid(fields) => Some(fields.clone()),
            LabError::Forbidden { paths, others } => {
                let mut all = paths.clone();
                all.extend(others.clone());
                Some(all)
            }
            _ => None,
        }
    }
}

/// Why a running run is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A user cancelled the campaign: the run ends as cancelled.
    Cancelled = 1,
    /// The lab is shutting down: the run is interrupted and queued again at the next start.
    Shutdown = 2,
    /// The run's lease lapsed and it was put back on the queue: this attempt saves nothing.
    LeaseLost = 3,
}

/// The stop switch of one executing run, shared with its worker.
#[derive(Debug, Default)]
pub struct RunSwitch {
    /// Raised to stop the engine.
    pub cancel: AtomicBool,
    reason: AtomicU8,
}

impl RunSwitch {
    /// Stops the run, remembering the first reason given.
    pub fn stop(&self, reason: StopReason) {
        let _ = self
            .reason
            .compare_exchange(0, reason as u8, Ordering::SeqCst, Ordering::SeqCst);
        self.cancel.store(true, Ordering::SeqCst);
    }

    /// Why the run was stopped, if it was.
    pub fn reason(&self) -> Option<StopReason> {
        match self.reason.load(Ordering::SeqCst) {
            1 => Some(StopReason::Cancelled),
            2 => Some(StopReason::Shutdown),
            3 => Some(StopReason::LeaseLost),
            _ => None,
        }
    }
}

/// A campaign accepted and queued.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub id: String,
    pub url: String,
    pub runs: usize,
    /// How long it is expected to take, and what in it cannot give a valid run.
    pub expectation: Expectation,
}

/// A campaign checked and planned, not queued: what a dry run answers.
#[derive(Debug, Clone)]
pub struct Planned {
    pub runs: usize,
    pub expectation: Expectation,
    /// The runs as they would execute: test and parameters, in order.
    pub plan: Vec<PlannedRun>,
}

/// One run of a dry run's plan.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    pub test: crate::spec::TestKind,
    pub params: crate::spec::RunParams,
    /// Seconds it is expected to take.
    pub expected_s: f64,
}

/// A campaign with its spec and runs, as `GET /api/campaigns/{id}` shows it, and its
/// judgement: the points every view reads and the verdict drawn from them.
#[derive(Debug, Clone)]
pub struct CampaignView {
    pub campaign: CampaignSummary,
    pub spec: CampaignSpec,
    pub runs: Vec<RunRecord>,
    /// Each test at each parameter set, with its figure and how many of its runs are valid.
    pub points: Vec<analysis::points::Point>,
    /// The verdict on the points (`/api/campaigns/{id}/bottleneck` serves it).
    pub verdict: analysis::Verdict,
    /// Runs were still to come when it was judged.
    pub provisional: bool,
    /// The survey taken when it finished: the source's size and where it was measured.
    pub survey: Option<Survey>,
    /// Its adaptive search, when its matrix has one.
    pub search: Option<SearchReport>,
}

/// The runs as the results model takes them: numbered from 1, in plan order.
pub fn run_entries(runs: &[RunRecord]) -> Vec<analysis::points::RunEntry<'_>> {
    runs.iter()
        .map(|run| analysis::points::RunEntry {
            number: usize::try_from(run.number).unwrap_or_default(),
            test: run.test,
            params: &run.params,
            ended: run.status.finished(),
            result: run.result.as_ref(),
        })
        .collect()
}

/// The runs as the views take them: the one place a stored run becomes a [`RunView`].
pub fn run_views(runs: &[RunRecord]) -> Vec<RunView<'_>> {
    use crate::store::RunState;
    runs.iter()
        .map(|run| RunView {
            number: usize::try_from(run.number).unwrap_or_default(),
            test: run.test,
            params: &run.params,
            phase: match run.status {
                RunState::Queued => RunPhase::Queued,
                RunState::Running => RunPhase::Running,
                RunState::Done => RunPhase::Done,
                RunState::Failed => RunPhase::Failed,
                RunState::Cancelled => RunPhase::Cancelled,
                RunState::Interrupted => RunPhase::Interrupted,
            },
            attempts: run.attempts,
            started_ms: run.started_ms,
            finished_ms: run.finished_ms,
            live_samples: &run.samples,
            result: run.result.as_ref(),
        })
        .collect()
}

/// The plan check of `plans` (see [`expect`]), and, when a buffered read of a source of paths
/// is not evicted first, whether that source fits in memory: a warning then names
/// `params.cold_cache`, since every read after the first would measure the page cache.
/// An adaptive search (`search`: its likely runs and its budget) is judged on those.
async fn expectation_of(plans: &[RunPlan], search: Option<(usize, usize)>) -> Expectation {
    let mut expectation = match search {
        Some((likely, budget)) => spec::expectation::expect_search(plans, likely, budget),
        None => expect(plans),
    };
    let cached = plans.iter().find_map(|plan| match &plan.source {
        spec::SourcePlan::Paths(paths)
            if plan.test.reads_source() && !plan.params.cold_cache && !plan.params.direct =>
        {
            Some(paths.clone())
        }
        _ => None,
    });
    if let Some(paths) = cached
        && let Ok(Some((bytes, memory))) =
            tokio::task::spawn_blocking(move || crate::engine::cache::fits_in_memory(&paths)).await
    {
        expectation.warnings.push(spec::expectation::PlanWarning {
            field: "params.cold_cache".to_string(),
            message: format!(
                "the source ({}) fits in this machine's memory ({}): without cold_cache or \
                 direct, every read after the first measures the page cache, not the disks; \
                 set cold_cache (--cold-cache) or direct",
                crate::size::format_bytes(bytes),
                crate::size::format_bytes(memory)
            ),
        });
    }
    expectation
}

impl CampaignView {
    /// Each run's expected length in seconds, by position, as the plan check works it out
    /// from the stored spec and each run's own parameters, and what in the plan cannot give a
    /// valid run; nothing when the spec no longer expands to its runs.
    pub fn expectation(&self) -> (Vec<f64>, Vec<spec::expectation::PlanWarning>) {
        let Some(plans) = self.run_plans() else {
            return (Vec::new(), Vec::new());
        };
        let by_run = plans
            .iter()
            .map(|plan| crate::engine::expect::expected(plan).seconds)
            .collect();
        (by_run, expect(&plans).warnings)
    }

    /// The whole campaign's expectation as its submission stated it: the likely time and the
    /// bound (for an adaptive search, of its likely runs and of its budget), so a page can set
    /// it against what the campaign took.
    pub fn expected(&self) -> Option<Expectation> {
        let sweep = self.spec.plan_arms().ok()?;
        if let Some((likely, budget)) = search::search_runs(&sweep) {
            return Some(spec::expectation::expect_search(
                &sweep.plans,
                likely,
                budget,
            ));
        }
        self.run_plans().map(|plans| expect(&plans))
    }

    /// Each run's plan, from the stored spec with the run's own parameters: by position for a
    /// full campaign, by test and parameters for an adaptive search's chosen runs; `None`
    /// when the spec no longer expands to the runs.
    fn run_plans(&self) -> Option<Vec<RunPlan>> {
        let plans = self.spec.plan().ok()?;
        if plans.len() == self.runs.len() {
            let mut plans = plans;
            for (plan, run) in plans.iter_mut().zip(&self.runs) {
                plan.params = run.params.clone();
            }
            return Some(plans);
        }
        self.runs
            .iter()
            .map(|run| {
                plans
                    .iter()
                    .find(|plan| plan.test == run.test && plan.params == run.params)
                    .cloned()
            })
            .collect()
    }
}

/// A campaign in a list.
#[derive(Debug, Clone)]
pub struct CampaignSummary {
    pub id: String,
    pub name: String,
    pub status: CampaignStatus,
    pub created: String,
    pub rerun_of: Option<String>,
    /// The lab host it runs on (`None`: stored before hosts were named, any host's).
    pub host: Option<String>,
    pub url: String,
    /// The series its figures join: `/series/{series}` draws them beside the others'.
    pub series: Option<String>,
    pub tests: Vec<String>,
    pub runs_total: i64,
    pub runs_finished: i64,
    /// Of the finished runs: how many ended done, cancelled and failed.
    pub runs_done: i64,
    pub runs_cancelled: i64,
    pub runs_failed: i64,
    /// The fastest whole-run figure of any test: not the backup's figure (see `headline`).
    pub best_mb_per_s: Option<f64>,
    /// The verdict in one line once the campaign has finished (the list shows it).
    pub verdict: Option<String>,
    /// The backup's figure and the component named, once the campaign has been judged.
    pub headline: Option<analysis::Headline>,
}

/// A page of campaigns, newest first; `next_before` continues the list.
#[derive(Debug, Clone)]
pub struct CampaignPage {
    pub campaigns: Vec<CampaignSummary>,
    pub next_before: Option<String>,
}

/// Who a lab is on its database, and how long its claims last without a heartbeat.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// The name campaigns name it by (`--host-name`).
    pub name: String,
    /// How long a claimed run stays this lab's without a heartbeat (`--lease`).
    pub lease: Duration,
    /// Where people reach it (`--public-url`), shown to the other hosts.
    pub url: Option<String>,
    /// Where this lab posts the changes it finds in a series (`--webhook`), set by its
    /// operator: never a URL a request gives.
    pub webhook: Option<url::Url>,
}

impl HostSettings {
    /// When a lease taken at `now_ms` lapses.
    pub fn lease_until(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX))
    }

    /// Whether a host last heard from at `heartbeat_ms` counts as alive at `now_ms`: heard from
    /// within a lease (this host's, the only one it knows).
    pub fn hears(&self, heartbeat_ms: i64, now_ms: i64) -> bool {
        self.lease_until(heartbeat_ms) >= now_ms
    }
}

/// A lab host as the form shows it (the API's answer is built from it).
#[derive(Debug, Clone)]
pub struct HostView {
    pub name: String,
    /// Whether it was heard from within its lease: it takes runs now.
    pub alive: bool,
    /// Seconds since it was last heard from.
    pub last_seen_s: f64,
    /// Whether it is the host answering.
    pub this_host: bool,
    pub url: Option<String>,
}

/// Everything a lab service shares between requests and workers.
pub struct Lab {
    store: Store,
    policy: Policy,
    engine: EngineSettings,
    host: HostSettings,
    events: EventHub,
    /// Where events and stops go to reach the other hosts, once the relay runs.
    relay_out: OnceLock<mpsc::Sender<RelayMessage>>,
    /// Wakes idle workers when runs are queued.
    queue_changed: Notify,
    /// Held while a worker claims a run and registers its switch ([`Lab::claim_next`]), and
    /// while a cancel looks for running runs, so a cancel never misses a run just claimed.
    claim_lock: tokio::sync::Mutex<()>,
    /// The runs executing here: the attempt each holds, and its switch.
    running: Mutex<HashMap<i64, (i64, Arc<RunSwitch>)>>,
    stopping: AtomicBool,
    /// The last probe of whether the database can be written, and when it was made.
    write_check: Mutex<Option<(std::time::Instant, Result<(), String>)>>,
    /// The campaigns whose end is being taken, and who keeps answers to tell (`ended.rs`).
    endings: ended::Endings,
    /// The data listener: network-backup streams and the agents' registry.
    data_link: Arc<DataLink>,
}

/// A request body read as JSON of type `T`; what cannot be read is named as a field: a body
/// that is not JSON is malformed (400), JSON with a bad value is not valid (422).
fn read_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, LabError> {
    if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        let mut errors = FieldErrors::default();
        errors.add("body", crate::plain_words::not_json(&error));
        return Err(LabError::Malformed(errors));
    }
    let mut reader = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut reader).map_err(|error| {
        let mut errors = FieldErrors::default();
        let path = error.path().to_string();
        let field = if path == "." {
            "schedule".to_string()
        } else {
            path
        };
        errors.add(
            field,
            crate::plain_words::plain_words(&error.inner().to_string()),
        );
        LabError::Invalid(errors)
    })
}

/// A submitted spec's text, read: a body that is not UTF-8 or not a spec names the field.
fn parse_body(body: &[u8]) -> Result<CampaignSpec, LabError> {
    let text = std::str::from_utf8(body).map_err(|_| {
        let mut errors = FieldErrors::default();
        errors.add("spec", "the body is not UTF-8 text");
        LabError::Malformed(errors)
    })?;
    let mut spec = spec::parse_json(text).map_err(|error| match error {
        spec::SpecError::NotJson(errors) => LabError::Malformed(errors),
        spec::SpecError::Invalid(errors) => LabError::Invalid(errors),
    })?;
    spec.settle_defaults();
    Ok(spec)
}

impl Lab {
    /// A lab over an open store, its agents registering with `data_link`.
    pub fn new(
        store: Store,
        policy: Policy,
        engine: EngineSettings,
        host: HostSettings,
        data_link: Arc<DataLink>,
    ) -> Self {
        Self {
            store,
            policy,
            engine,
            host,
            events: EventHub::default(),
            relay_out: OnceLock::new(),
            queue_changed: Notify::new(),
            claim_lock: tokio::sync::Mutex::new(()),
            running: Mutex::new(HashMap::new()),
            write_check: Mutex::new(None),
            stopping: AtomicBool::new(false),
            endings: ended::Endings::default(),
            data_link,
        }
    }

    /// The allow-lists and limits campaigns are held to.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What every run is executed with.
    pub fn engine_settings(&self) -> &EngineSettings {
        &self.engine
    }

    /// The backup tools campaigns may name here, found at start: those it can run, with
    /// their versions and parameters, and those it cannot, with the reason.
    pub fn tools(&self) -> &crate::engine::tool::Tools {
        &self.engine.tools
    }

    /// Who this lab is on its database.
    pub fn host(&self) -> &HostSettings {
        &self.host
    }

    /// The store, for the tasks that keep the lab's place on it (heartbeat, relay).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Where the demo dataset lives.
    pub fn demo_dir(&self) -> std::path::PathBuf {
        self.policy.base_dir.join(DEMO_DIR)
    }

    /// Resolves when runs are queued or a lane may have work; workers wait on it when idle.
    pub fn work_queued(&self) -> tokio::sync::futures::Notified<'_> {
        self.queue_changed.notified()
    }

    /// Takes the oldest queued run and registers its switch, both under the claim lock, so a
    /// cancel never misses a run just claimed. `None` when nothing is queued or the lab is
    /// stopping.
    pub async fn claim_next(&self) -> Result<Option<(ClaimedRun, Arc<RunSwitch>)>, StoreError> {
        let _claiming = self.claim_lock.lock().await;
        if self.is_stopping() {
            return Ok(None);
        }
        let now = now_ms();
        let asked = std::time::Instant::now();
        let Some(claimed) = self
            .store
            .claim_next(&self.host.name, now, self.host.lease_until(now))
            .await?
        else {
            return Ok(None);
        };
        tracing::debug!(
            run_id = claimed.run_id,
            attempt = claimed.attempt,
            claim_ms = asked.elapsed().as_secs_f64() * 1e3,
            "run claimed"
        );
        let switch = self.register(claimed.run_id, claimed.attempt);
        Ok(Some((claimed, switch)))
    }

    /// The heartbeat: tells the database this host is alive, renews the leases of the runs it
    /// executes (stopping any whose lease it lost, or whose campaign was cancelled), and puts back on the queue the runs of
    /// hosts whose leases lapsed. Returns how many runs went back.
    pub async fn heartbeat(&self) -> Result<u64, StoreError> {
        let held: Vec<HeldRun> = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(&run_id, &(attempt, _))| HeldRun { run_id, attempt })
            .collect();
        let now = now_ms();
        let beat = self
            .store
            .heartbeat(&self.host.name, now, self.host.lease_until(now), &held)
            .await?;
        // A cancel made on another host whose relayed stop did not arrive.
        for run in beat.cancelled {
            if let Some(switch) = self.switch(run.run_id) {
                switch.stop(StopReason::Cancelled);
            }
        }
        for run in beat.lost {
            tracing::warn!(
                run_id = run.run_id,
                "the run's lease lapsed and it was queued again: stopping this attempt"
            );
            if let Some(switch) = self.switch(run.run_id) {
                switch.stop(StopReason::LeaseLost);
            }
        }
        let requeued = self.store.requeue_lapsed(now).await?;
        if requeued > 0 {
            tracing::warn!(
                runs = requeued,
                "runs whose host stopped renewing their lease were queued again for that host"
            );
            self.queue_changed.notify_waiters();
            self.relay(RelayMessage::Queued {
                from: self.host.name.clone(),
            });
        }
        Ok(requeued)
    }

    /// The registered lab hosts, those alive first.
    pub async fn hosts(&self) -> Result<Vec<HostView>, LabError> {
        let now = now_ms();
        let mut hosts: Vec<HostView> = self
            .store
            .hosts()
            .await?
            .into_iter()
            .map(|record| self.host_view(&record, now))
            .collect();
        hosts.sort_by_key(|host| !host.alive);
        Ok(hosts)
    }

    /// A page of the registered lab hosts by name: at most `limit` (clamped to
    /// 1..=[`MAX_PAGE`]) whose names sort after `after`; the name the next page starts
    /// after, when more follow.
    pub async fn hosts_page(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<HostView>, Option<String>), LabError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let now = now_ms();
        // One more than the page shows: whether another page follows.
        let mut records = self.store.hosts_page(after, limit + 1).await?;
        let more = records.len() > limit as usize;
        records.truncate(limit as usize);
        let next_after = more
            .then(|| records.last().map(|record| record.name.clone()))
            .flatten();
        let hosts = records
            .iter()
            .map(|record| self.host_view(record, now))
            .collect();
        Ok((hosts, next_after))
    }

    fn host_view(&self, record: &HostRecord, now: i64) -> HostView {
        let last_seen_s = (now - record.heartbeat_ms).max(0) as f64 / 1000.0;
        HostView {
            name: record.name.clone(),
            alive: record.name == self.host.name || self.host.hears(record.heartbeat_ms, now),
            last_seen_s,
            this_host: record.name == self.host.name,
            url: record.url.clone(),
        }
    }

    /// Starts sending this host's events and stops to the others through `sender`.
    pub fn start_relay(&self, sender: mpsc::Sender<RelayMessage>) {
        let _ = self.relay_out.set(sender);
    }

    fn relay(&self, message: RelayMessage) {
        // Full only when the database cannot keep up: live news is dropped, the store keeps
        // what matters.
        if let Some(sender) = self.relay_out.get() {
            let _ = sender.try_send(message);
        }
    }

    /// Takes in what another host relayed: its campaigns' events for this host's followers,
    /// stops for runs executing here, and news of runs queued.
    pub fn receive_relayed(&self, message: RelayMessage) {
        match message {
            RelayMessage::Event { from, .. }
            | RelayMessage::Stop { from, .. }
            | RelayMessage::Queued { from }
                if from == self.host.name => {}
            RelayMessage::Event {
                campaign, event, ..
            } => self.events.publish(&campaign, event),
            RelayMessage::Stop { runs, .. } => {
                for run_id in runs {
                    if let Some(switch) = self.switch(run_id) {
                        switch.stop(StopReason::Cancelled);
                    }
                }
            }
            RelayMessage::Queued { .. } => self.queue_changed.notify_waiters(),
        }
    }

    /// Keeps a live sample of a running run.
    pub async fn add_sample(&self, run_id: i64, sample: Sample) -> Result<(), StoreError> {
        self.store.add_sample(run_id, sample).await
    }

    /// Stores a finished run's result; `Ok(false)` when this attempt no longer holds the run.
    pub async fn finish_run(&self, run: HeldRun, result: &RunResult) -> Result<bool, StoreError> {
        self.store.finish_run(run, result, now_ms()).await
    }

    /// Marks a run stopped by a shutdown, to be queued again at the next start.
    pub async fn interrupt_run(&self, run: HeldRun) -> Result<(), StoreError> {
        self.store.interrupt_run(run).await
    }

    /// The stored campaign, `None` when it was deleted.
    pub async fn stored_campaign(&self, id: &str) -> Result<Option<CampaignRecord>, StoreError> {
        self.store.campaign(id).await
    }

    /// Keeps the survey of a campaign's source.
    pub async fn set_survey(&self, id: &str, survey: &Survey) -> Result<(), StoreError> {
        self.store.set_survey(id, survey).await
    }

    /// Tells a campaign's followers what happened, on this host and on the others.
    pub fn publish(&self, campaign_id: &str, event: LabEvent) {
        if self.relay_out.get().is_some() {
            self.relay(RelayMessage::Event {
                from: self.host.name.clone(),
                campaign: campaign_id.to_string(),
                event: event.clone(),
            });
        }
        self.events.publish(campaign_id, event);
    }

    /// Every event of every campaign from now on.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<crate::lab::events::Envelope> {
        self.events.subscribe()
    }

    /// Run counts by status, bytes moved and durations, for `/metrics`.
    pub async fn queue_figures(&self) -> Result<QueueFigures, LabError> {
        Ok(self.store.queue_figures().await?)
    }

    /// Whether the database can be written now, for `/healthz`: a write probe, made at most
    /// once a second however often it is asked. `Err` says why not (a full disk, say).
    pub async fn database_writable(&self) -> Result<(), String> {
        const FRESH: Duration = Duration::from_secs(1);
        if let Ok(check) = self.write_check.lock()
            && let Some((at, outcome)) = check.as_ref()
            && at.elapsed() < FRESH
        {
            return outcome.clone();
        }
        let outcome = self
            .store
            .probe_write(now_ms())
            .await
            .map_err(|error| error.to_string());
        if let Ok(mut check) = self.write_check.lock() {
            *check = Some((std::time::Instant::now(), outcome.clone()));
        }
        outcome
    }

    /// How many runs are in each state, for `/healthz`.
    pub async fn runs_by_status(&self) -> Result<Vec<(CampaignStatus, i64)>, LabError> {
        Ok(self.store.runs_by_status().await?)
    }

    /// Validates a submitted spec (JSON text) against the spec rules, the lab's policy and the
    /// real file system, then stores and queues its runs.
    pub async fn submit(self: &Arc<Self>, body: &[u8]) -> Result<Submitted, LabError> {
        self.accept(parse_body(body)?, None).await
    }

    /// Checks a spec as `submit` does, queueing nothing: every problem it has, by field, or
    /// the plan it would run, how long it would take and what in it cannot give a valid run.
    pub async fn check(self: &Arc<Self>, body: &[u8]) -> Result<Planned, LabError> {
        let (spec, plans) = self.checked(parse_body(body)?).await?;
        Ok(Planned {
            runs: plans.len(),
            expectation: expectation_of(
                &plans,
                spec.plan_arms().ok().as_ref().and_then(search::search_runs),
            )
            .await,
            plan: plans
                .iter()
                .map(|plan| PlannedRun {
                    test: plan.test,
                    params: plan.params.clone(),
                    expected_s: crate::engine::expect::expected(plan).seconds,
                })
                .collect(),
        })
    }

    /// A spec checked for the host it names (this one when it names none, and then filled in),
    /// with its runs. Resolving paths and the preflight touch the file system: not on an async
    /// worker.
    async fn checked(
        self: &Arc<Self>,
        mut spec: CampaignSpec,
    ) -> Result<(CampaignSpec, Vec<RunPlan>), LabError> {
        let host = spec.host.clone().unwrap_or_else(|| self.host.name.clone());
        let runs_on = self.runs_on(&host).await?;
        spec.host = Some(host);
        let lab = Arc::clone(self);
        tokio::task::spawn_blocking(move || lab.validate(spec, runs_on))
            .await
            .map_err(|e| LabError::Internal(format!("the campaign check failed: {e}")))?
    }

    /// Whose policy a campaign for `host` is held to: this lab's, another live host's, or
    /// none, with the reason.
    async fn runs_on(&self, host: &str) -> Result<RunsOn, LabError> {
        if host == self.host.name {
            return Ok(RunsOn::Here);
        }
        if spec::check_name(host).is_err() {
            // The spec's own check names the field.
            return Ok(RunsOn::Nowhere(None));
        }
        let Some(record) = self.store.host(host).await? else {
            let known: Vec<String> = self
                .hosts()
                .await?
                .into_iter()
                .filter(|host| host.alive)
                .map(|host| host.name)
                .collect();
            let alive = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            return Ok(RunsOn::Nowhere(Some(format!(
                "no lab host named '{host}' serves on this database (alive: {alive})"
            ))));
        };
        let view = self.host_view(&record, now_ms());
        if !view.alive {
            return Ok(RunsOn::Nowhere(Some(format!(
                "lab host '{host}' was last heard from {:.0} s ago: it is not running, and its \
                 queue would not move; start it, or name a live host",
                view.last_seen_s
            ))));
        }
        let policy: Policy = serde_json::from_str(&record.policy_json).map_err(|e| {
            LabError::Internal(format!(
                "the registered policy of host {host} is damaged: {e}"
            ))
        })?;
        Ok(RunsOn::Elsewhere(policy))
    }

    /// Queues a new campaign with the same spec as `id`, linked to it.
    pub async fn rerun(self: &Arc<Self>, id: &str) -> Result<Submitted, LabError> {
        let record = self.record(id).await?;
        self.accept(record.spec, Some(record.id)).await
    }

    async fn accept(
        self: &Arc<Self>,
        spec: CampaignSpec,
        rerun_of: Option<String>,
    ) -> Result<Submitted, LabError> {
        let (spec, plans) = self.checked(spec).await?;
        let host = spec.host.clone().unwrap_or_else(|| self.host.name.clone());
        // An adaptive search queues its first step; the rest follow as it chooses them.
        let sweep = spec.plan_arms().map_err(LabError::Invalid)?;
        let (runs, search) = match search::first_step(&sweep) {
            Some((runs, state)) => (runs, Some(Document::encode(&state)?)),
            None => (
                plans
                    .iter()
                    .map(|plan| (plan.test, plan.params.clone()))
                    .collect(),
                None,
            ),
        };
        let queued = runs.len();
        let id = ids::campaign_id();
        let campaign = NewCampaign {
            id: id.clone(),
            host: host.clone(),
            checked_by: self.host.name.clone(),
            name: spec.name.clone(),
            spec: spec.clone(),
            placement: Placement::of(&plans)
                .ok_or_else(|| LabError::Internal("the campaign expands to no runs".to_string()))?,
            rerun_of,
            series: crate::series::key_of(&spec),
            runs,
            search,
        };
        // Counted with the insert, in one transaction: submissions at the same moment cannot
        // pass the limit together.
        if let Err(waiting) = self
            .store
            .insert_campaign_within(&campaign, now_ms(), MAX_QUEUED_RUNS)
            .await?
        {
            return Err(LabError::QueueFull(format!(
                "the queue holds {waiting} runs waiting and this campaign adds {queued}; at most \
                 {MAX_QUEUED_RUNS} may wait: submit it once some have run, or cancel campaigns"
            )));
        }
        if host == self.host.name {
            self.queue_changed.notify_waiters();
        } else {
            self.relay(RelayMessage::Queued {
                from: self.host.name.clone(),
            });
        }
        Ok(Submitted {
            url: campaign_url(&id),
            id,
            runs: queued,
            expectation: expectation_of(&plans, search::search_runs(&sweep)).await,
        })
    }

    /// Checks a spec against the spec rules, the policy of the host it runs on and, when that
    /// is this one, the real file system; returns it with its paths resolved, and its runs.
    /// Blocking: it reads the file system.
    fn validate(
        &self,
        mut spec: CampaignSpec,
        runs_on: RunsOn,
    ) -> Result<(CampaignSpec, Vec<RunPlan>), LabError> {
        // Before any path is resolved or run built: the lists' sizes and the run count.
        let bounds = spec.check_bounds();
        if !bounds.is_empty() {
            return Err(LabError::Invalid(bounds));
        }
        let (policy, reach) = match &runs_on {
            RunsOn::Here => (&self.policy, Reach::Here),
            RunsOn::Elsewhere(policy) => (policy, Reach::Elsewhere),
            RunsOn::Nowhere(reason) => {
                // No policy to hold the paths to: the rules alone, and why.
                let mut invalid = spec.plan().err().unwrap_or_default();
                if let Some(reason) = reason {
                    invalid.add("host", reason.clone());
                }
                return Err(LabError::Invalid(invalid));
            }
        };
        // Every problem at once: paths, rules, limits and the machine's checks, so that one
        // answer names every bad field.
        let violations = policy.resolve_paths(&mut spec, reach);
        let mut invalid = violations.invalid;
        // The lab's own bound on a run's length is the one said for it.
        invalid.extend(policy.check_duration(&spec));
        // The tools are this lab's; another host checks its own when the runs start there.
        if reach == Reach::Here {
            invalid.extend(spec::tools::check(&spec, &self.engine.tools));
        }
        let plans = match spec.plan() {
            Ok(plans) => Some(plans),
            Err(errors) => {
                for (path, message) in errors.0 {
                    if path != "params.duration_s" || !invalid.0.contains_key(&path) {
                        invalid.add(path, message);
                    }
                }
                None
            }
        };
        if let Some(plans) = &plans {
            invalid.extend(policy.check_limits(&spec, plans));
        }
        if !violations.forbidden.is_empty() {
            // Nothing outside the allowed roots is looked at further.
            return Err(LabError::Forbidden {
                paths: violations.forbidden,
                others: invalid,
            });
        }
        let Some(plans) = plans else {
            return Err(LabError::Invalid(invalid));
        };
        // The machine's checks, for the fields not already found wrong; another host makes
        // them on itself when each run starts.
        if reach == Reach::Here {
            for (path, message) in preflight::check(&plans, &self.engine).0 {
                if !invalid.0.contains_key(&path) {
                    invalid.add(path, message);
                }
            }
        }
        if !invalid.is_empty() {
            return Err(LabError::Invalid(invalid));
        }
        Ok((spec, plans))
    }

    /// A campaign with its spec and runs, judged: its points and the verdict on them. A
    /// finished campaign's judgement is the one kept when it finished; any other is drawn in
    /// memory from the runs. Reads only: nothing is written.
    pub async fn campaign(&self, id: &str) -> Result<CampaignView, LabError> {
        let (record, status) = self.record_shown(id).await?;
        let runs = self.store.runs(&record.id).await?;
        let spec = record.spec.clone();
        let survey = survey_of(&record);
        let kept = if record.status.is_final() {
            self.store
                .judgement(&record.id)
                .await?
                .as_ref()
                .and_then(current_judgement)
        } else {
            None
        };
        let judgement =
            kept.unwrap_or_else(|| analysis::Judgement::of(&run_entries(&runs), survey.as_ref()));
        let search = search::state_of(&record).map(|(_, state)| {
            let cap = judgement.verdict.cap();
            search_report(&spec, &state, runs.len(), &judgement.points, cap)
        });
        Ok(CampaignView {
            campaign: summary(&record, status),
            search,
            spec,
            runs,
            points: judgement.points,
            verdict: judgement.verdict,
            provisional: judgement.provisional,
            survey,
        })
    }

    /// Judges a campaign from its runs, whatever was kept.
    async fn judge(&self, id: &str) -> Result<analysis::Judgement, LabError> {
        let record = self.record(id).await?;
        let runs = self.store.runs(&record.id).await?;
        Ok(analysis::Judgement::of(
            &run_entries(&runs),
            survey_of(&record).as_ref(),
        ))
    }

    /// Campaigns newest first.
    pub async fn list(
        &self,
        status: Option<CampaignStatus>,
        before: Option<&str>,
        limit: u32,
    ) -> Result<CampaignPage, LabError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let start = self.read_start();
        let Some(records) = self.store.list_campaigns(status, before, limit).await? else {
            let mut errors = FieldErrors::default();
            errors.add(
                "before",
                format!("no campaign {:?}", before.unwrap_or_default()),
            );
            return Err(LabError::BadQuery(errors));
        };
        // A read: the list shows what was kept when each campaign was judged, and judges
        // nothing itself (see `judge_stale`). A campaign still being judged here reads as
        // running, so a list of another status leaves it out.
        let mut campaigns = Vec::with_capacity(records.len());
        for record in &records {
            let shown = match self.status_shown(record, start) {
                Some(shown) => summary(record, shown),
                None => match self.record_shown(&record.id).await {
                    Ok((record, shown)) => summary(&record, shown),
                    Err(LabError::NotFound(_)) => continue,
                    Err(error) => return Err(error),
                },
            };
            if status.is_none_or(|status| shown.status == status) {
                campaigns.push(shown);
            }
        }
        let next_before = if records.len() == limit as usize {
            records.last().map(|record| record.id.clone())
        } else {
            None
        };
        Ok(CampaignPage {
            campaigns,
            next_before,
        })
    }

    /// Judges, once, every finished campaign whose kept headline is missing or was drawn under
    /// other judging rules (an older `JUDGEMENT_VERSION`), and keeps the new one; run in the
    /// background at start, so that no read has to write. A campaign whose survey is still
    /// being taken is left to its worker, which keeps the verdict after. Returns how many were
    /// judged.
    pub async fn judge_stale(&self) -> usize {
        let mut judged = 0;
        let mut before: Option<String> = None;
        loop {
            let records = match self
                .store
                .list_campaigns(None, before.as_deref(), MAX_PAGE)
                .await
            {
                Ok(Some(records)) => records,
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(%error, "cannot list the campaigns to judge");
                    break;
                }
            };
            for record in &records {
                let stale = headline_of(record)
                    .is_none_or(|headline| headline.version != analysis::JUDGEMENT_VERSION);
                if record.status.is_final()
                    && stale
                    && record.survey.is_some()
                    && self.keep_verdict(&record.id).await
                {
                    judged += 1;
                }
            }
            if records.len() < MAX_PAGE as usize {
                break;
            }
            before = records.last().map(|record| record.id.clone());
        }
        judged
    }

    /// Judges a finished campaign and keeps its judgement and headline: pages, reports and
    /// the list read them from then on. False when it cannot be judged (a warning is logged).
    pub async fn keep_verdict(&self, id: &str) -> bool {
        let judgement = match self.judge(id).await {
            Ok(judgement) => judgement,
            Err(error) => {
                tracing::warn!(campaign = %id, %error, "cannot judge the campaign");
                return false;
            }
        };
        let headline = analysis::Headline::of(&judgement.verdict);
        let kept = match (Document::encode(&judgement), Document::encode(&headline)) {
            (Ok(judged), Ok(headlined)) => self.store.keep_judgement(id, &judged, &headlined).await,
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        if let Err(error) = kept {
            tracing::warn!(campaign = %id, %error, "cannot keep the verdict");
        }
        true
    }

    /// The campaign's report: the same document `backlab run --json` prints.
    pub async fn report(&self, id: &str) -> Result<CampaignReport, LabError> {
        let view = self.campaign(id).await?;
        Ok(CampaignReport {
            campaign: CampaignHeader {
                name: view.campaign.name,
                spec: view.spec,
            },
            runs: view.runs.into_iter().filter_map(|run| run.result).collect(),
            points: view.points,
            bottleneck: view.verdict,
            survey: view.survey,
        })
    }

    /// The campaigns queued as reruns of `id`, oldest first.
    pub async fn reruns(&self, id: &str) -> Result<Vec<String>, LabError> {
        self.check_id(id)?;
        Ok(self.store.reruns_of(id).await?)
    }

    /// The newest earlier campaign with the same spec (its name aside), if any.
    pub async fn previous_with_same_spec(&self, id: &str) -> Result<Option<String>, LabError> {
        self.check_id(id)?;
        Ok(self
            .store
            .same_spec_neighbour(id, Neighbour::Previous)
            .await?)
    }

    /// The oldest later campaign with the same spec (its name aside), if any.
    pub async fn next_with_same_spec(&self, id: &str) -> Result<Option<String>, LabError> {
        self.check_id(id)?;
        Ok(self.store.same_spec_neighbour(id, Neighbour::Next).await?)
    }

    /// Cancels the queued runs of a campaign and stops its running one.
    pub async fn cancel(&self, id: &str) -> Result<CampaignStatus, LabError> {
        self.check_id(id)?;
        let outcome = {
            let _claiming = self.claim_lock.lock().await;
            // A search chooses nothing more once its campaign is cancelled.
            self.cancel_search(id).await?;
            let outcome = self
                .store
                .cancel_campaign(id, now_ms())
                .await?
                .ok_or_else(|| not_found(id))?;
            let mut elsewhere = Vec::new();
            for run_id in &outcome.running {
                match self.switch(*run_id) {
                    Some(switch) => switch.stop(StopReason::Cancelled),
                    None => elsewhere.push(*run_id),
                }
            }
            // Running on another host: that host stops it.
            if !elsewhere.is_empty() {
                self.relay(RelayMessage::Stop {
                    from: self.host.name.clone(),
                    runs: elsewhere,
                });
            }
            outcome
        };
        let (record, shown) = self.record_shown(id).await?;
        // A run executing ends the campaign when it stops; with none, the cancel did.
        if outcome.running.is_empty() && outcome.cancelled_queued > 0 {
            self.campaign_ended(id, record.status, Ending::CancelledIdle)
                .await;
        }
        Ok(shown)
    }

    /// Deletes a campaign and everything measured for it, unless it is running. Returns the
    /// campaign it was a rerun of, if any.
    pub async fn delete(&self, id: &str) -> Result<Option<String>, LabError> {
        let rerun_of = self.record(id).await?.rerun_of;
        match self.store.delete_campaign(id).await? {
            DeleteOutcome::Deleted => Ok(rerun_of),
            DeleteOutcome::NotFound => Err(not_found(id)),
            DeleteOutcome::Running => Err(LabError::Conflict(format!(
                "campaign {id} is running; cancel it first, then delete it"
            ))),
        }
    }

    /// The `state` event a new subscriber gets first.
    pub async fn state_event(&self, id: &str) -> Result<LabEvent, LabError> {
        let (record, status) = self.record_shown(id).await?;
        let runs = self.store.runs(&record.id).await?;
        Ok(LabEvent::State {
            status,
            runs_total: runs.len(),
            runs_finished: runs.iter().filter(|run| run.status.is_final()).count(),
            runs: runs.iter().map(RunBrief::from).collect(),
            progress: self.events.latest_progress(id).map(Box::new),
        })
    }

    /// Registers the switch of a run a worker just claimed, with the attempt it holds. An
    /// earlier attempt of the same run still executing here lost its lease before it knew:
    /// it is stopped now, so a run never executes twice at once.
    fn register(&self, run_id: i64, attempt: i64) -> Arc<RunSwitch> {
        let switch = Arc::new(RunSwitch::default());
        if self.is_stopping() {
            switch.stop(StopReason::Shutdown);
        }
        let earlier = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(run_id, (attempt, Arc::clone(&switch)));
        if let Some((_, earlier)) = earlier {
            earlier.stop(StopReason::LeaseLost);
        }
        switch
    }

    /// Forgets a finished attempt's switch (not a later attempt's, registered since).
    pub fn unregister(&self, run: HeldRun) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running
            .get(&run.run_id)
            .is_some_and(|(attempt, _)| *attempt == run.attempt)
        {
            running.remove(&run.run_id);
        }
    }

    fn switch(&self, run_id: i64) -> Option<Arc<RunSwitch>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&run_id)
            .map(|(_, switch)| Arc::clone(switch))
    }

    /// Begins a shutdown: no new run starts, running runs are interrupted.
    pub fn stop_all(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        for switch in self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
        {
            switch.1.stop(StopReason::Shutdown);
        }
        self.queue_changed.notify_waiters();
    }

    /// Whether a shutdown has begun.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    async fn record(&self, id: &str) -> Result<CampaignRecord, LabError> {
        self.check_id(id)?;
        self.store.campaign(id).await?.ok_or_else(|| not_found(id))
    }

    /// The stored campaign and the status a reader is shown of it ([`Lab::status_shown`]),
    /// read again when a campaign's end may have come and gone during the read (at most
    /// three times; the stored status then).
    async fn record_shown(&self, id: &str) -> Result<(CampaignRecord, CampaignStatus), LabError> {
        let mut reads = 0;
        loop {
            let start = self.read_start();
            let record = self.record(id).await?;
            reads += 1;
            match self.status_shown(&record, start) {
                Some(status) => return Ok((record, status)),
                None if reads == 3 => {
                    let status = record.status;
                    return Ok((record, status));
                }
                None => {}
            }
        }
    }

    fn check_id(&self, id: &str) -> Result<(), LabError> {
        if ids::looks_like_campaign_id(id) {
            Ok(())
        } else {
            Err(not_found(id))
        }
    }
}

/// Whose policy a campaign is held to.
enum RunsOn {
    /// This lab's, on its own file system.
    Here,
    /// Another live host's, registered on the database.
    Elsewhere(Policy),
    /// No host's: the one named is unknown or not running (why, unless the name itself is
    /// bad, which the spec's check says).
    Nowhere(Option<String>),
}

/// Where a campaign's report lives.
pub fn campaign_url(id: &str) -> String {
    format!("/campaigns/{id}")
}

fn survey_of(record: &CampaignRecord) -> Option<Survey> {
    record.survey.clone()
}

/// A kept judgement, when it still reads and was drawn under today's judging rules
/// ([`analysis::JUDGEMENT_VERSION`]); `None` tells the caller to judge the runs again, or to
/// leave the campaign out of its series until it is.
fn current_judgement(kept: &Document) -> Option<analysis::Judgement> {
    kept.decode::<analysis::Judgement>()
        .ok()
        .filter(|judgement| judgement.version == analysis::JUDGEMENT_VERSION)
}

/// The headline kept with a campaign; one kept in an older shape reads as none, and the
/// campaign is judged again.
fn headline_of(record: &CampaignRecord) -> Option<analysis::Headline> {
    record.headline.as_ref().and_then(|kept| kept.decode().ok())
}

fn not_found(id: &str) -> LabError {
    LabError::NotFound(format!("no campaign {id:?}"))
}

/// A campaign as a list shows it, at the status a reader is shown ([`Lab::status_shown`]).
fn summary(record: &CampaignRecord, status: CampaignStatus) -> CampaignSummary {
    CampaignSummary {
        id: record.id.clone(),
        name: record.name.clone(),
        status,
        created: format_ms(record.created_ms),
        rerun_of: record.rerun_of.clone(),
        host: record.host.clone(),
        url: campaign_url(&record.id),
        series: record.series.clone(),
        tests: record.spec.tests.clone(),
        runs_total: record.runs_total,
        runs_finished: record.runs_finished,
        runs_done: record.runs_done,
        runs_cancelled: record.runs_cancelled,
        runs_failed: record.runs_failed,
        best_mb_per_s: record.best_mb_per_s,
        // Rendered from the kept judgement; one kept under older rules is said as it reads
        // (it is judged again at start, unless it has no survey to rest on).
        verdict: record
            .judgement
            .as_ref()
            .and_then(|kept| kept.decode::<analysis::Judgement>().ok())
            .map(|judgement| judgement.verdict.sentence()),
        headline: headline_of(record),
    }
}
