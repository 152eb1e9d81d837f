//! Taking a campaign back: cancelling its queued runs and stopping its running one, here or
//! on another host; deleting it once nothing of it runs.

use crate::clock::now_ms;
use crate::lab::events::RelayMessage;
use crate::store::{CampaignStatus, DeleteOutcome};

use super::{Campaigns, Ending, LabError, StopReason, check_id, not_found};

impl Campaigns<'_> {
    /// Cancels the queued runs of a campaign and stops its running one.
    pub async fn cancel(&self, id: &str) -> Result<CampaignStatus, LabError> {
        check_id(id)?;
        let lab = self.lab;
        let outcome = {
            let _claiming = lab.claim_lock.lock().await;
            // A search chooses nothing more once its campaign is cancelled.
            lab.cancel_search(id).await?;
            let outcome = lab
                .store
                .cancel_campaign(id, now_ms())
                .await?
                .ok_or_else(|| not_found(id))?;
            let mut elsewhere = Vec::new();
            for run_id in &outcome.running {
                match lab.switch(*run_id) {
                    Some(switch) => switch.stop(StopReason::Cancelled),
                    None => elsewhere.push(*run_id),
                }
            }
            // Running on another host: that host stops it.
            if !elsewhere.is_empty() {
                lab.relay(RelayMessage::Stop {
                    from: lab.host.name.clone(),
                    runs: elsewhere,
                });
            }
            outcome
        };
        let (record, shown) = lab.record_shown(id).await?;
        // A run executing ends the campaign when it stops; with none, the cancel did.
        if outcome.running.is_empty() && outcome.cancelled_queued > 0 {
            lab.campaign_ended(id, record.status, Ending::CancelledIdle)
                .await;
        }
        Ok(shown)
    }

    /// Deletes a campaign and everything measured for it, unless it is running. Returns the
    /// campaign it was a rerun of, if any.
    pub async fn delete(&self, id: &str) -> Result<Option<String>, LabError> {
        let rerun_of = self.lab.record(id).await?.rerun_of;
        match self.lab.store.delete_campaign(id).await? {
            DeleteOutcome::Deleted => Ok(rerun_of),
            DeleteOutcome::NotFound => Err(not_found(id)),
            DeleteOutcome::Running => Err(LabError::Conflict(format!(
                "campaign {id} is running; cancel it first, then delete it"
            ))),
        }
    }
}
