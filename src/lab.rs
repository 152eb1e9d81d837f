//! The lab as a service, apart from HTTP: accepts campaigns, answers for them, cancels and
//! deletes them, and keeps the registry of runs executing now. The web layer asks it for
//! everything and maps its errors to status codes.
//!
//! This file holds the lab itself ([`Lab`]) and its errors. What it does is in its parts:
//! taking a campaign in (`accept`); answering for campaigns, judged (`answers`); taking one
//! back (`cancel`); the runs executing here and their switches (`running`); the lanes that
//! execute what it queues (`worker`); what follows when a run or a campaign ends, in one
//! order (`ended`); live events (`events`); its place on the database, the other hosts and
//! the relay between them (`host`); the agents it knows (`agents`); its series and their
//! alerts (`watch`), schedules (`schedules`), adaptive searches (`search`) and reference
//! figures (`references`).

mod accept;
use accept::parse_body;
pub use accept::{Planned, PlannedRun, Submitted};
mod agents;
pub use agents::{AgentView, AgentsView};
mod answers;
pub use answers::{
    CampaignPage, CampaignSummary, CampaignView, campaign_url, run_entries, run_views,
};
use answers::{current_judgement, not_found};
mod cancel;
mod ended;
pub use ended::{Ending, KeptAnswers};
pub mod events;
pub mod host;
pub use host::{HostSettings, HostView};
mod references;
mod running;
pub use running::{RunSwitch, StopReason};
mod schedules;
mod search;
pub use search::{SearchReport, deciding_test, search_report, unexplored};
mod watch;
pub mod worker;

pub use schedules::{MAX_CRON_CHARS, SCHEDULE_TICK, SchedulePage, ScheduleView};

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

use crate::clock::now_ms;
use crate::engine::EngineSettings;
use crate::engine::result::{RunResult, Sample};
use crate::engine::survey::Survey;
use crate::lab::events::{EventHub, RelayMessage};
use crate::net::listener::DataLink;
use crate::policy::Policy;
use crate::spec::FieldErrors;
use crate::store::{CampaignRecord, CampaignStatus, HeldRun, QueueFigures, Store, StoreError};

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
    /// Counts the times the relay from other hosts listened again after it was cut.
    relay_reopened: tokio::sync::watch::Sender<u64>,
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
            relay_reopened: tokio::sync::watch::Sender::new(0),
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

    /// Keeps a live sample of a running run.
    pub async fn add_sample(&self, run: HeldRun, sample: Sample) -> Result<(), StoreError> {
        self.store.add_sample(run, sample).await
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
}
