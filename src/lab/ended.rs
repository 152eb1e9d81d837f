//! What follows when a run ends and when a campaign ends, each owned by one function and done
//! in one order, read top to bottom: [`Lab::run_ended`] and [`Lab::campaign_ended`]. Lanes,
//! cancels and anything else that ends a run or a campaign call these and nothing beside them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::events::LabEvent;
use super::{Lab, RunSwitch, StopReason};
use crate::clock::now_ms;
use crate::engine::result::{RunResult, RunStatus};
use crate::engine::survey::{self, Survey};
use crate::spec::RunPlan;
use crate::store::{
    CampaignRecord, CampaignStatus, ClaimedRun, HeldRun, RunState, StoreError, UnreadableRun,
};

/// First wait before storing a result again, and the longest wait between two tries.
const SAVE_RETRY_FIRST: Duration = Duration::from_millis(250);
const SAVE_RETRY_MAX: Duration = Duration::from_secs(5);

/// Whoever keeps answers drawn from finished campaigns (the web layer's rendered pages):
/// told when a campaign's judgement is kept, since a kept answer of it, or of a campaign
/// compared with it, may have been drawn before.
pub trait KeptAnswers: Send + Sync {
    /// Campaign `id`'s judgement was kept just now.
    fn judged(&self, id: &str);
}

/// How a campaign came to its end.
#[derive(Debug, Clone, Copy)]
pub enum Ending<'a> {
    /// Its last run ended. `plan`: that run's plan, when it got as far as one and the
    /// campaign has no survey yet (the survey reads it).
    LastRun { plan: Option<&'a RunPlan> },
    /// A cancel took its queued runs while none of them executed: no run of it ends now, so
    /// it is announced and nothing more (its judgement is not kept, its series not watched).
    CancelledIdle,
}

/// The lab's share of the ends: which campaigns' ends are being taken now, which have a run
/// ending, and who keeps answers to tell.
#[derive(Default)]
pub(super) struct Endings {
    /// Campaigns whose end is being taken on this lab: two lanes whose runs end together,
    /// or a lane and a cancel, take it once.
    taking: Mutex<HashSet<String>>,
    /// Campaigns with a run's end (or a search's step) under way on this lab: a campaign
    /// that turns final here reads as running until its judgement is kept
    /// ([`Lab::status_shown`]).
    settling: Mutex<Settlings>,
    kept_answers: OnceLock<Arc<dyn KeptAnswers>>,
}

/// The campaigns with a run's end under way on this lab, each from before its result is
/// stored until all that follows it is done, and how many marks were taken or let go.
#[derive(Default)]
struct Settlings {
    /// Campaign → marks held (two lanes may end runs of one campaign at once).
    held: HashMap<String, usize>,
    /// Marks taken or let go so far: a read during which it moved may have found a
    /// campaign in the middle of its end, after its mark was let go.
    moves: u64,
}

/// Where the marks stood when a read of the store began ([`Lab::read_start`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadStart {
    moves: u64,
}

/// A run's end under way on this lab, for its campaign: let go when dropped.
struct Settling<'a> {
    endings: &'a Endings,
    id: String,
}

impl Drop for Settling<'_> {
    fn drop(&mut self) {
        let mut settlings = self
            .endings
            .settling
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = settlings.held.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                settlings.held.remove(&self.id);
            }
        }
        settlings.moves += 1;
    }
}

/// A campaign's end being taken on this lab: released when dropped, however the taking ends.
struct TakenEnd<'a> {
    endings: &'a Endings,
    id: String,
}

impl Drop for TakenEnd<'_> {
    fn drop(&mut self) {
        self.endings
            .taking
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl Lab {
    /// Tells `kept` whenever a campaign's judgement is kept from now on.
    pub fn keep_answers_in(&self, kept: Arc<dyn KeptAnswers>) {
        let _ = self.endings.kept_answers.set(kept);
    }

    /// Taken before a read of campaign records, for [`Lab::status_shown`].
    pub(super) fn read_start(&self) -> ReadStart {
        let settlings = self
            .endings
            .settling
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        ReadStart {
            moves: settlings.moves,
        }
    }

    /// The status a reader is shown of a campaign that a read begun at `start` found as
    /// `record`. A campaign final in the store whose judgement is not kept yet, with a run's
    /// end under way here, reads as `running`: the end that judges it follows, and a
    /// campaign reads finished only as every later reader will find it, judged. `None` when
    /// such an end may have come and gone during the read: read it again.
    ///
    /// The ending lane holds its mark from before the last result is stored until after the
    /// judgement is kept, so a read that found the campaign final and unjudged in that time
    /// finds the mark held now or sees it moved. (Another host of a fleet reading the
    /// campaign in that moment sees it final; its page and report then judge in memory, as
    /// for any campaign without a kept judgement.)
    pub(super) fn status_shown(
        &self,
        record: &CampaignRecord,
        start: ReadStart,
    ) -> Option<CampaignStatus> {
        if !record.status.is_final() || record.headline.is_some() {
            return Some(record.status);
        }
        let settlings = self
            .endings
            .settling
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if settlings.held.contains_key(&record.id) {
            Some(RunState::Running)
        } else if settlings.moves != start.moves {
            None
        } else {
            Some(record.status)
        }
    }

    /// Whether campaign `id` has a run's end, or its own end, under way on this lab.
    pub(super) fn ending_here(&self, id: &str) -> bool {
        self.endings
            .settling
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .held
            .contains_key(id)
            || self
                .endings
                .taking
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(id)
    }

    /// Marks a run's end under way for campaign `id` until the answer is dropped.
    fn settle(&self, id: &str) -> Settling<'_> {
        let mut settlings = self
            .endings
            .settling
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *settlings.held.entry(id.to_string()).or_default() += 1;
        settlings.moves += 1;
        Settling {
            endings: &self.endings,
            id: id.to_string(),
        }
    }

    /// An attempt of a run ended (done, failed, cancelled, or stopped by a shutdown or a lost
    /// lease), with `result`. Its campaign is marked as settling throughout (see
    /// [`Lab::status_shown`]). In this order:
    ///
    /// 1. **store** its result (trying again while the database cannot be written): the store
    ///    is the truth, so nothing is told of a result it does not hold; an attempt that lost
    ///    its lease, or a result that could not be stored before the lab stopped, ends here;
    /// 2. forget the run's **switch** (a cancel no longer needs to reach it);
    /// 3. **publish** `run_finished`, on this host and relayed to the others; an interrupted
    ///    run ends here (it runs again at the next start);
    /// 4. take the campaign's adaptive **search step**, once this was its last run left:
    ///    before the campaign is read back, since runs the step queues keep it open;
    /// 5. when the campaign is final now, its **end**: [`Lab::campaign_ended`].
    pub(super) async fn run_ended(
        &self,
        claimed: &ClaimedRun,
        switch: &RunSwitch,
        mut result: RunResult,
        plan: Option<&RunPlan>,
    ) {
        let run_id = claimed.run_id;
        let campaign_id = &claimed.campaign_id;
        let _settling = self.settle(campaign_id);
        let held = HeldRun {
            run_id,
            attempt: claimed.attempt,
        };
        let stopped_by = switch
            .reason()
            .filter(|_| result.status == RunStatus::Cancelled);
        let interrupted = stopped_by == Some(StopReason::Shutdown);
        if result.status == RunStatus::Cancelled
            && result.error.is_none()
            && stopped_by != Some(StopReason::Shutdown)
        {
            result.error = Some("cancelled by request".to_string());
        }
        // 1. Store.
        let saved = self.save(held, stopped_by, &result).await;
        // 2. The switch.
        self.unregister(held);
        match saved {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    run_id,
                    attempt = claimed.attempt,
                    "the run was taken back after its lease lapsed: this attempt's result is not kept"
                );
                return;
            }
            Err(error) => {
                // Only when the lab is stopping: the run is still held by this host in the
                // store and is queued again at the next start.
                tracing::error!(run_id, %error, "cannot save the run's result; it runs again at the next start");
                return;
            }
        }
        // 3. Publish.
        let status = if interrupted {
            RunState::Interrupted
        } else {
            RunState::from(result.status)
        };
        tracing::info!(campaign = %campaign_id, run_id, status = status.id(), mb_per_s = result.mb_per_s, "run finished");
        self.publish(
            campaign_id,
            LabEvent::RunFinished {
                run_id,
                position: claimed.position,
                test: result.test.id().to_string(),
                status,
                mb_per_s: result.mb_per_s,
                error: result.error.clone(),
            },
        );
        if interrupted {
            return;
        }
        self.step_or_end(campaign_id, plan).await;
    }

    /// A run the queue handed out that cannot be read ended failed as it was claimed
    /// ([`StoreError::UnreadableRun`]): it is said in the log and to its campaign's followers
    /// (`run_finished`, failed, saying why), and its campaign's end follows as for any run
    /// ([`Lab::step_or_end`]).
    pub(super) async fn unreadable_run_ended(&self, run: &UnreadableRun) {
        let _settling = self.settle(&run.campaign_id);
        tracing::error!(
            campaign = %run.campaign_id,
            run_id = run.run_id,
            why = %run.why,
            "a queued run cannot be read: it ended failed"
        );
        self.publish(
            &run.campaign_id,
            LabEvent::RunFinished {
                run_id: run.run_id,
                position: run.position,
                test: run.test.clone(),
                status: RunState::Failed,
                mb_per_s: 0.0,
                error: Some(format!("the run cannot be read: {}", run.why)),
            },
        );
        self.step_or_end(&run.campaign_id, None).await;
    }

    /// Steps 4 and 5 of [`Lab::run_ended`]: the search's next step, then the campaign's end
    /// if it is final now. Also what a search left between two steps takes when it is stepped
    /// on its own ([`Lab::resume_searches`]): a step that stops the search ends its campaign.
    pub(super) async fn step_or_end(&self, campaign_id: &str, plan: Option<&RunPlan>) {
        let _settling = self.settle(campaign_id);
        // 4. The search's next step.
        if let Err(error) = self.advance_search(campaign_id).await {
            tracing::error!(campaign = %campaign_id, %error, "cannot take the search's next step");
        }
        // 5. The campaign's end.
        let record = match self.store.campaign(campaign_id).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(error) => {
                tracing::error!(campaign = %campaign_id, %error, "cannot read the campaign back");
                return;
            }
        };
        // A campaign judged already had its end taken, by the lane whose run ended with
        // this one's.
        if record.status.is_final() && record.headline.is_none() {
            let plan = plan.filter(|_| record.survey.is_none());
            self.campaign_ended(campaign_id, record.status, Ending::LastRun { plan })
                .await;
        }
    }

    /// Campaign `id` has no run left to come and stands at `status`. In this order:
    ///
    /// 1. **survey** its source and target (when its last run had a plan and no survey was
    ///    taken) and store it: the judgement rests on it (the source's size for the backup window);
    /// 2. **judge** it once and **keep** the judgement and its headline: the list,
    ///    the pages and the series read it from then on;
    /// 3. **invalidate** the answers kept by the web layer, now that the judgement they may
    ///    show or compare with is kept;
    /// 4. **watch** its series: the changes it brings to light, read from the judgements
    ///    kept (its own among them), posted to the webhook;
    /// 5. **publish** `campaign_finished` last, on this host and relayed to the others: a
    ///    follower who reads the campaign on that news finds it as every later reader will.
    ///
    /// Taken once per campaign: a second caller while the first is at it returns at once (the
    /// first publishes), and so does one that comes after it, having read the campaign before
    /// its judgement was kept: once the end is taken here the campaign is read again, and a
    /// judgement kept by then means its end was taken already. A cancel that found none of
    /// its runs executing ([`Ending::CancelledIdle`]) takes step 5 alone.
    pub async fn campaign_ended(&self, id: &str, status: CampaignStatus, ending: Ending<'_>) {
        let Some(_taken) = self.take_end(id) else {
            return;
        };
        if let Ending::LastRun { plan } = ending {
            if self.ended_already(id).await {
                return;
            }
            tracing::info!(campaign = %id, status = status.id(), "campaign finished");
            // 1. Survey.
            if let Some(plan) = plan {
                self.survey(id, plan).await;
            }
            // 2. Judge once, keep.
            self.keep_verdict(id).await;
            // 3. Invalidate.
            if let Some(kept) = self.endings.kept_answers.get() {
                kept.judged(id);
            }
            // 4. Watch, alert.
            self.watch(id).await;
        }
        // 5. Publish.
        self.publish(id, LabEvent::CampaignFinished { status });
    }

    /// Marks campaign `id`'s end as being taken here until the answer is dropped; `None` when
    /// it already is.
    fn take_end(&self, id: &str) -> Option<TakenEnd<'_>> {
        self.endings
            .taking
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_string())
            .then(|| TakenEnd {
                endings: &self.endings,
                id: id.to_string(),
            })
    }

    /// Whether campaign `id`'s judgement is kept already, as the record reads now: its end
    /// was taken by a caller that has since finished (the mark `step_or_end` reads too). A
    /// campaign that cannot be read is not taken for ended.
    async fn ended_already(&self, id: &str) -> bool {
        match self.store.campaign(id).await {
            Ok(record) => record.is_some_and(|record| record.headline.is_some()),
            Err(error) => {
                tracing::warn!(campaign = %id, %error, "cannot read the campaign back at its end");
                false
            }
        }
    }

    /// Surveys a finished campaign's source and target from its last run's plan: stored at
    /// once, then again with how the source reduces, which reads the
    /// source and takes longer (its size and provenance need not wait for that). An agent's
    /// paths are on its own host: only the lab's side is surveyed then.
    async fn survey(&self, id: &str, plan: &RunPlan) {
        let (source, target) = (plan.source.clone(), plan.target.clone());
        let remote = !plan.agents.is_empty();
        let surveyed = tokio::task::spawn_blocking(move || {
            if remote {
                survey::lab_side(&target)
            } else {
                survey::survey(&source, &target)
            }
        })
        .await;
        let Ok(survey) = surveyed else {
            return;
        };
        if !self.store_survey(id, &survey).await || remote {
            return;
        }
        let (source, target) = (plan.source.clone(), plan.target.clone());
        let estimated = tokio::task::spawn_blocking(move || {
            survey::reduction(&source, &target).map(|reduction| Survey {
                reduction: Some(reduction),
                ..survey
            })
        })
        .await;
        if let Ok(Some(survey)) = estimated {
            self.store_survey(id, &survey).await;
        }
    }

    /// Stores a campaign's survey; false when it could not be stored (said in the log).
    async fn store_survey(&self, id: &str, survey: &Survey) -> bool {
        match self.store.set_survey(id, survey).await {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(campaign = %id, %error, "cannot store the survey");
                false
            }
        }
    }

    /// Stores what became of a run, trying again while the database cannot be written (a
    /// full disk): the result is kept and the lane waits, so the run is never executed again
    /// for want of a write. A lab stopping gives up after its last try; the run is then
    /// queued again at the next start.
    async fn save(
        &self,
        held: HeldRun,
        stopped_by: Option<StopReason>,
        result: &RunResult,
    ) -> Result<bool, StoreError> {
        let mut wait = SAVE_RETRY_FIRST;
        loop {
            let saved = match stopped_by {
                Some(StopReason::Shutdown) => self.store.interrupt_run(held).await.map(|()| true),
                // Queued again when its lease lapsed: the next attempt's result is the run's.
                Some(StopReason::LeaseLost) => Ok(false),
                Some(StopReason::Cancelled) | None => {
                    self.store.finish_run(held, result, now_ms()).await
                }
            };
            match saved {
                Err(error) if !self.is_stopping() => {
                    tracing::error!(
                        run_id = held.run_id,
                        %error,
                        retry_in_ms = wait.as_millis() as u64,
                        "cannot store the run's result; trying again"
                    );
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(SAVE_RETRY_MAX);
                }
                saved => return saved,
            }
        }
    }
}
