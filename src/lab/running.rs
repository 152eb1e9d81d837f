//! The registry of the runs executing here: each one's stop switch, claimed with it and
//! forgotten when its attempt ends, so a cancel or a shutdown reaches every run, and a run
//! never executes twice at once on one host.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, PoisonError};

use crate::clock::now_ms;
use crate::store::{ClaimedRun, HeldRun, StoreError};

use super::Lab;

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

impl Lab {
    /// Takes the oldest queued run and registers its switch, both under the claim lock, so a
    /// cancel never misses a run just claimed. `None` when nothing is queued or the lab is
    /// stopping.
    pub(super) async fn claim_next(
        &self,
    ) -> Result<Option<(ClaimedRun, Arc<RunSwitch>)>, StoreError> {
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
    pub(super) fn unregister(&self, run: HeldRun) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running
            .get(&run.run_id)
            .is_some_and(|(attempt, _)| *attempt == run.attempt)
        {
            running.remove(&run.run_id);
        }
    }

    /// The switch of a run executing here, whatever its attempt (a cancel stops it).
    pub(super) fn switch(&self, run_id: i64) -> Option<Arc<RunSwitch>> {
        self.registered(run_id).map(|(_, switch)| switch)
    }

    /// The switch of one attempt of a run, when that attempt is the one executing here.
    pub(super) fn attempt_switch(&self, run: HeldRun) -> Option<Arc<RunSwitch>> {
        self.registered(run.run_id)
            .filter(|(attempt, _)| *attempt == run.attempt)
            .map(|(_, switch)| switch)
    }

    /// The attempt of a run executing here, and its switch.
    fn registered(&self, run_id: i64) -> Option<(i64, Arc<RunSwitch>)> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&run_id)
            .map(|(attempt, switch)| (*attempt, Arc::clone(switch)))
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
    pub(super) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}
