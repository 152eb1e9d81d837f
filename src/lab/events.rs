//! Live news of campaigns for whoever listens (the SSE endpoint): runs starting, progress a few
//! times a second, runs and campaigns finishing. Nothing here is durable; the store is. The lab
//! publishes here and to the other hosts (`Lab::publish`), and a new follower gets the
//! campaign's state first (`Runs::state_event`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::store::{RunRecord, RunState};

use super::Lab;

/// Events buffered per subscriber before a slow one starts missing progress.
const CAPACITY: usize = 1024;

/// One thing that happened to a campaign.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LabEvent {
    /// Where the campaign stands, sent first to every subscriber.
    State {
        status: RunState,
        runs_total: usize,
        runs_finished: usize,
        runs: Vec<RunBrief>,
        /// The latest progress of the run executing now, if any.
        progress: Option<Box<LabEvent>>,
    },
    RunStarted {
        run_id: i64,
        position: usize,
        test: String,
        runs_total: usize,
    },
    Progress {
        run_id: i64,
        position: usize,
        test: String,
        elapsed_s: f64,
        bytes: u64,
        mb_per_s: f64,
        percent: Option<f64>,
    },
    RunFinished {
        run_id: i64,
        position: usize,
        test: String,
        status: RunState,
        mb_per_s: f64,
        error: Option<String>,
    },
    CampaignFinished {
        status: RunState,
    },
}

impl LabEvent {
    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            LabEvent::State { .. } => "state",
            LabEvent::RunStarted { .. } => "run_started",
            LabEvent::Progress { .. } => "progress",
            LabEvent::RunFinished { .. } => "run_finished",
            LabEvent::CampaignFinished { .. } => "campaign_finished",
        }
    }

    /// Whether this is the last event of its campaign.
    pub fn ends_campaign(&self) -> bool {
        matches!(self, LabEvent::CampaignFinished { .. })
    }
}

/// A run in the `state` event.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunBrief {
    pub run_id: i64,
    pub position: i64,
    pub test: String,
    pub status: RunState,
    pub mb_per_s: Option<f64>,
}

impl From<&RunRecord> for RunBrief {
    fn from(run: &RunRecord) -> Self {
        Self {
            run_id: run.id,
            position: run.position,
            test: run.test.id().to_string(),
            status: run.status,
            mb_per_s: run.result.as_ref().map(|result| result.mb_per_s),
        }
    }
}

/// What one lab host tells the others on a shared database: each names the host it is from,
/// which ignores its own.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RelayMessage {
    /// An event of a campaign running on the sender, for the followers connected elsewhere.
    Event {
        from: String,
        campaign: String,
        event: LabEvent,
    },
    /// Runs cancelled on the sender that execute on another host: their host stops them.
    Stop { from: String, runs: Vec<i64> },
    /// Runs were queued (or queued again): idle hosts look at their queue now.
    Queued { from: String },
}

/// An event with the campaign it belongs to.
pub type Envelope = Arc<(String, LabEvent)>;

/// Fans events out to every subscriber and remembers each campaign's latest progress.
pub struct EventHub {
    sender: broadcast::Sender<Envelope>,
    latest_progress: Mutex<HashMap<String, LabEvent>>,
}

impl Default for EventHub {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(CAPACITY).0,
            latest_progress: Mutex::new(HashMap::new()),
        }
    }
}

impl EventHub {
    /// Sends an event to the current subscribers.
    pub fn publish(&self, campaign_id: &str, event: LabEvent) {
        {
            let mut latest = self
                .latest_progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match &event {
                LabEvent::Progress { .. } | LabEvent::RunStarted { .. } => {
                    latest.insert(campaign_id.to_string(), event.clone());
                }
                LabEvent::RunFinished { .. } | LabEvent::CampaignFinished { .. } => {
                    latest.remove(campaign_id);
                }
                LabEvent::State { .. } => {}
            }
        }
        // No subscribers is not an error: nobody is watching.
        let _ = self.sender.send(Arc::new((campaign_id.to_string(), event)));
    }

    /// A receiver of every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Envelope> {
        self.sender.subscribe()
    }

    /// The latest progress (or run start) of a campaign's executing run.
    pub fn latest_progress(&self, campaign_id: &str) -> Option<LabEvent> {
        self.latest_progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(campaign_id)
            .cloned()
    }
}

impl Lab {
    /// Tells a campaign's followers what happened, on this host and on the others.
    pub(super) fn publish(&self, campaign_id: &str, event: LabEvent) {
        if self.relay_out.get().is_some() {
            self.relay(RelayMessage::Event {
                from: self.host.name.clone(),
                campaign: campaign_id.to_string(),
                event: event.clone(),
            });
        }
        self.events.publish(campaign_id, event);
    }
}
