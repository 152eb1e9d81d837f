//! The runs as the web layer follows and counts them: live news of them (a campaign's state
//! first, then its events), how many are in each state, the queue's figures, and whether their
//! results can be stored now.

use std::time::Duration;

use tokio::sync::broadcast;

use super::events::{Envelope, LabEvent, RunBrief};
use super::{Lab, LabError};
use crate::clock::now_ms;
use crate::store::{CampaignStatus, QueueFigures};

/// The lab's runs, as `/api/campaigns/{id}/events`, `/healthz` and `/metrics` read them.
pub struct Runs<'a> {
    lab: &'a Lab,
}

impl Lab {
    /// The runs: their live events, their counts and whether their results can be stored.
    pub fn runs(&self) -> Runs<'_> {
        Runs { lab: self }
    }
}

impl Runs<'_> {
    /// Every event of every campaign from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Envelope> {
        self.lab.events.subscribe()
    }

    /// Changes each time the relay from the other hosts listens again after it was cut: a
    /// follower of a campaign reads where it stands then, since events may have been lost.
    pub fn relay_reopenings(&self) -> tokio::sync::watch::Receiver<u64> {
        self.lab.relay_reopened.subscribe()
    }

    /// The `state` event a new follower of campaign `id` gets first.
    pub async fn state_event(&self, id: &str) -> Result<LabEvent, LabError> {
        let (record, status) = self.lab.record_shown(id).await?;
        let runs = self.lab.store.runs(&record.id).await?;
        Ok(LabEvent::State {
            status,
            runs_total: runs.len(),
            runs_finished: runs.iter().filter(|run| run.status.is_final()).count(),
            runs: runs.iter().map(RunBrief::from).collect(),
            progress: self.lab.events.latest_progress(id).map(Box::new),
        })
    }

    /// How many runs are in each state, for `/healthz`.
    pub async fn by_status(&self) -> Result<Vec<(CampaignStatus, i64)>, LabError> {
        Ok(self.lab.store.runs_by_status().await?)
    }

    /// Run counts by status, bytes moved and durations, for `/metrics`.
    pub async fn queue_figures(&self) -> Result<QueueFigures, LabError> {
        Ok(self.lab.store.queue_figures().await?)
    }

    /// Whether the database can be written now, so that a finished run's result can be
    /// stored, for `/healthz`: a write probe, made at most once a second however often it is
    /// asked. `Err` says why not (a full disk, say).
    pub async fn database_writable(&self) -> Result<(), String> {
        const FRESH: Duration = Duration::from_secs(1);
        if let Ok(check) = self.lab.write_check.lock()
            && let Some((at, outcome)) = check.as_ref()
            && at.elapsed() < FRESH
        {
            return outcome.clone();
        }
        let outcome = self
            .lab
            .store
            .probe_write(now_ms())
            .await
            .map_err(|error| error.to_string());
        if let Ok(mut check) = self.lab.write_check.lock() {
            *check = Some((std::time::Instant::now(), outcome.clone()));
        }
        outcome
    }
}
