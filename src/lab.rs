//! The lab as a service, apart from HTTP: accepts campaigns, answers for them, cancels and
//! deletes them, and keeps the registry of runs executing now. The web layer asks it for
//! everything and maps its errors to status codes.
//!
//! This file holds the lab itself ([`Lab`]) and its errors. The lab keeps the worker's side:
//! the lanes that execute what it queues (`worker`), the runs executing here and their
//! switches (`running`), what follows when a run or a campaign ends, in one order (`ended`),
//! live events (`events`), its place on the database and the relay between hosts (`host`),
//! adaptive searches (`search`) and the watch over series (`watch`). The web layer reaches the
//! rest through one service per concern, each a small handle over the lab: its campaigns
//! ([`Lab::campaigns`]: taking one in, `accept`; answering for them, `answers`; taking one
//! back, `cancel`; their reference figures, `references`), its runs as they execute and are
//! counted ([`Lab::runs`]), its schedules ([`Lab::schedules`]), its series ([`Lab::series`]),
//! the hosts on its database ([`Lab::hosts`]) and the agents it knows ([`Lab::agents`]).

mod accept;
use accept::parse_body;
pub use accept::{Planned, PlannedRun, Submitted};
mod agents;
pub use crate::net::registry::AgentInfo;
pub use agents::Agents;
mod answers;
pub use answers::{
    CampaignPage, CampaignSummary, CampaignView, campaign_url, run_entries, run_views,
};
use answers::{check_id, current_judgement, not_found};
mod campaigns;
pub use campaigns::Campaigns;
mod cancel;
mod ended;
pub use ended::{Ending, KeptAnswers};
pub mod events;
pub mod host;
pub use host::HostSettings;
mod hosts;
pub use hosts::{HostView, Hosts};
mod references;
mod running;
pub use running::{RunSwitch, StopReason};
mod runs;
pub use runs::Runs;
mod schedules;
pub use schedules::{MAX_CRON_CHARS, SCHEDULE_TICK, SchedulePage, ScheduleView, Schedules};
mod search;
pub use search::{SearchReport, deciding_test, search_report, unexplored};
mod series;
pub use series::Series;
mod watch;
pub mod worker;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{Notify, mpsc};

use crate::engine::EngineSettings;
use crate::lab::events::{EventHub, RelayMessage};
use crate::net::listener::DataLink;
use crate::policy::Policy;
use crate::spec::FieldErrors;
use crate::store::{Store, StoreError};

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
    /// The price sheets a bucket's requests and bytes are billed by.
    prices: Arc<crate::analysis::prices::PriceSheets>,
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
            prices: Arc::new(crate::analysis::prices::PriceSheets::built_in()),
        }
    }

    /// The lab billing by `prices` (the lab's sheets and an operator's) in place of its own.
    pub fn with_prices(mut self, prices: crate::analysis::prices::PriceSheets) -> Self {
        self.prices = Arc::new(prices);
        self
    }

    /// The price sheets it bills by.
    pub fn prices(&self) -> &Arc<crate::analysis::prices::PriceSheets> {
        &self.prices
    }

    /// The backup tools campaigns may name here, found at start: those it can run, with
    /// their versions and parameters, and those it cannot, with the reason.
    pub fn tools(&self) -> &crate::engine::tool::Tools {
        &self.engine.tools
    }

    /// Where the demo dataset lives.
    pub fn demo_dir(&self) -> std::path::PathBuf {
        self.policy.base_dir.join(DEMO_DIR)
    }

    /// The allow-lists and limits campaigns are held to.
    fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What every run is executed with.
    fn engine_settings(&self) -> &EngineSettings {
        &self.engine
    }

    /// Who this lab is on its database.
    fn host(&self) -> &HostSettings {
        &self.host
    }

    /// Resolves when runs are queued or a lane may have work; workers wait on it when idle.
    fn work_queued(&self) -> tokio::sync::futures::Notified<'_> {
        self.queue_changed.notified()
    }
}
