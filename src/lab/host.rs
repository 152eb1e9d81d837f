//! A lab's place on its database: its name held against a second lab taking it, its
//! registration (what it may read and write), its heartbeat, and the relay that carries live
//! events and stops between the hosts of a fleet. How it sees the other hosts is in `hosts`.

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::clock::now_ms;
use crate::lab::events::RelayMessage;
use crate::lab::{Lab, StopReason};
use crate::policy::Policy;
use crate::store::{HeldRun, HostHold, Lapsed, Relayed, Store, StoreError};

/// The longest message PostgreSQL carries on a channel is 8000 bytes; a longer one is not sent.
const MAX_RELAYED: usize = 7900;

/// Messages waiting to be relayed before more are dropped (a database too slow to keep up
/// must not make the lab hold events without bound).
const RELAY_QUEUE: usize = 1024;

/// The least time the relay's check of its connection may take before the connection is
/// taken for dead.
const RELAY_DEADLINE_LEAST: Duration = Duration::from_secs(10);

/// How often a lab that finds its name taken looks again while it waits.
const HOLD_RETRY: Duration = Duration::from_millis(250);

/// Why a lab could not take its place on the database.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error(
        "a lab named '{0}' is already serving on this database; give this one another \
         --host-name (or stop that one)"
    )]
    NameTaken(String),
    #[error(
        "lab host '{0}' on this database serves with another token (or none): every host of a \
         fleet takes the same --token, because a campaign submitted to one runs on another"
    )]
    OtherToken(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Takes the host name (waiting up to a lease for a lab that just died to let it go: the
/// database notices a dead session within moments), checks that the live hosts take the same
/// token, and registers the host with its policy. The returned hold keeps the name while the
/// lab runs.
pub async fn join(
    store: &Store,
    host: &HostSettings,
    policy: &Policy,
    token: Option<&str>,
) -> Result<HostHold, JoinError> {
    let deadline = Instant::now() + host.lease;
    let hold = loop {
        if let Some(hold) = store.hold_host(&host.name).await? {
            break hold;
        }
        if Instant::now() >= deadline {
            return Err(JoinError::NameTaken(host.name.clone()));
        }
        tokio::time::sleep(HOLD_RETRY).await;
    };
    let fingerprint = token_fingerprint(token);
    let now = now_ms();
    if let Some(other) = store.hosts().await?.into_iter().find(|other| {
        other.name != host.name
            && host.hears(other.heartbeat_ms, now)
            && other.token_fingerprint != fingerprint
    }) {
        return Err(JoinError::OtherToken(other.name));
    }
    let policy_json = serde_json::to_string(policy)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode the policy: {e}")))?;
    store
        .register_host(
            &host.name,
            &policy_json,
            host.url.as_deref(),
            &fingerprint,
            now,
        )
        .await?;
    Ok(hold)
}

/// What the database keeps of a host's token: its SHA-256, to compare with the other hosts'
/// (empty for no token). Whoever reads the database can already do anything a token allows.
fn token_fingerprint(token: Option<&str>) -> String {
    use sha2::{Digest, Sha256};
    let Some(token) = token else {
        return String::new();
    };
    let digest = Sha256::new()
        .chain_update(b"backlab fleet token\0")
        .chain_update(token.as_bytes())
        .finalize();
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Beats every third of a lease until the lab stops: renews this host's leases and takes back
/// the runs of hosts that stopped beating.
pub fn spawn_heartbeat(lab: &Arc<Lab>) -> JoinHandle<()> {
    let lab = Arc::clone(lab);
    let every = lab.host().lease / 3;
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !lab.is_stopping() {
            ticks.tick().await;
            // A beat the database has not answered within a lease has lost the leases it
            // was to renew: it is given up, and the next one asks again (a connection that
            // died silently would otherwise hold the loop for the kernel's TCP timeout).
            match tokio::time::timeout(lab.host().lease, lab.heartbeat()).await {
                Ok(Ok(lapsed)) => {
                    // Ended apart from the beat: judging them must not delay the renewals.
                    for id in lapsed.cancelled_campaigns {
                        let ending = Arc::clone(&lab);
                        tokio::spawn(async move { ending.step_or_end(&id, None).await });
                    }
                }
                Ok(Err(error)) => {
                    tracing::warn!(%error, "cannot renew this host's heartbeat and leases");
                }
                Err(_) => tracing::warn!(
                    lease_s = lab.host().lease.as_secs_f64(),
                    "the database did not answer the heartbeat within a lease; beating again"
                ),
            }
        }
    })
}

/// Starts relaying between this host and the others, when the database carries messages
/// (PostgreSQL); on SQLite there is no one else and nothing starts. The feed from the others
/// is checked when it has been quiet for a third of a lease, and taken for dead when its
/// check has not come back within a lease, `RELAY_DEADLINE_LEAST` at least (a busy
/// database is not taken for a dead connection: each time, what is relayed meanwhile is
/// lost); once it listens again, this host catches up on what it may have missed
/// ([`Lab::relay_reopened`]).
pub async fn start_relay(lab: &Arc<Lab>) -> Result<(), StoreError> {
    let lease = lab.host().lease;
    let deadline = lease.max(RELAY_DEADLINE_LEAST);
    let Some(mut feed) = lab.store.relay_feed(lease / 3, deadline).await? else {
        return Ok(());
    };
    let receiving = Arc::clone(lab);
    tokio::spawn(async move {
        let mut retry = HOLD_RETRY;
        while !receiving.is_stopping() {
            match feed.next().await {
                Ok(Relayed::Message(text)) => match serde_json::from_str::<RelayMessage>(&text) {
                    Ok(message) => receiving.receive_relayed(message),
                    Err(error) => tracing::warn!(%error, "ignoring a relayed message"),
                },
                Ok(Relayed::Reopened) => {
                    retry = HOLD_RETRY;
                    tracing::warn!(
                        "the relay from other hosts was cut and listens again: catching up on \
                         what it may have missed"
                    );
                    receiving.relay_reopened();
                }
                Err(error) => {
                    tracing::warn!(%error, "the relay from other hosts was cut; listening again");
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(deadline);
                }
            }
        }
    });
    let (sender, mut outbox) = mpsc::channel::<RelayMessage>(RELAY_QUEUE);
    lab.relay_through(sender);
    let store = lab.store.clone();
    tokio::spawn(async move {
        while let Some(message) = outbox.recv().await {
            let Ok(text) = serde_json::to_string(&message) else {
                continue;
            };
            if text.len() > MAX_RELAYED {
                tracing::warn!(
                    bytes = text.len(),
                    "a message too long to relay was dropped"
                );
                continue;
            }
            if let Err(error) = store.relay(&text).await {
                tracing::warn!(%error, "cannot relay to the other hosts");
            }
        }
    });
    Ok(())
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

impl Lab {
    /// The heartbeat: tells the database this host is alive, renews the leases of the runs it
    /// executes (stopping any whose lease it lost, or whose campaign was cancelled), and puts
    /// back on the queue the runs of hosts whose leases lapsed, or ends them cancelled when
    /// their campaign was cancelled meanwhile. Returns what the sweep did; the campaigns it
    /// cancelled runs of are the caller's to end.
    async fn heartbeat(&self) -> Result<Lapsed, StoreError> {
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
            if let Some(switch) = self.attempt_switch(run) {
                switch.stop(StopReason::Cancelled);
            }
        }
        for run in beat.lost {
            tracing::warn!(
                run_id = run.run_id,
                "the run's lease lapsed and it was queued again: stopping this attempt"
            );
            // Only the attempt that lost it: a later attempt of the run, claimed here since
            // this beat read what it held, holds the lease now.
            if let Some(switch) = self.attempt_switch(run) {
                switch.stop(StopReason::LeaseLost);
            }
        }
        let lapsed = self.store.requeue_lapsed(now).await?;
        if lapsed.requeued > 0 {
            tracing::warn!(
                runs = lapsed.requeued,
                "runs whose host stopped renewing their lease were queued again for that host"
            );
            self.queue_changed.notify_waiters();
            self.relay(RelayMessage::Queued {
                from: self.host.name.clone(),
            });
        }
        for id in &lapsed.cancelled_campaigns {
            tracing::warn!(
                campaign = %id,
                "a run whose host stopped renewing its lease ended cancelled: its campaign was \
                 cancelled meanwhile"
            );
        }
        Ok(lapsed)
    }

    /// Starts sending this host's events and stops to the others through `sender`.
    fn relay_through(&self, sender: mpsc::Sender<RelayMessage>) {
        let _ = self.relay_out.set(sender);
    }

    /// Sends `message` to the other hosts, once the relay runs.
    pub(super) fn relay(&self, message: RelayMessage) {
        // Full only when the database cannot keep up: live news is dropped, the store keeps
        // what matters.
        if let Some(sender) = self.relay_out.get() {
            let _ = sender.try_send(message);
        }
    }

    /// The relay from the other hosts listens again after it was cut: what they relayed in
    /// between is lost. Idle lanes look at the queue (runs queued meanwhile), and every
    /// follower here reads its campaign's state again
    /// ([`Runs::relay_reopenings`](crate::lab::Runs::relay_reopenings)); a cancel whose stop
    /// was lost reaches its run by the next heartbeat, which reads cancels from the store.
    fn relay_reopened(&self) {
        self.queue_changed.notify_waiters();
        self.relay_reopened.send_modify(|count| *count += 1);
    }

    /// Takes in what another host relayed: its campaigns' events for this host's followers,
    /// stops for runs executing here, and news of runs queued.
    fn receive_relayed(&self, message: RelayMessage) {
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
}
