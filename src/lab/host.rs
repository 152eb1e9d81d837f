//! A lab's place on its database: its name held against a second lab taking it, its
//! registration (what it may read and write), its heartbeat, and the relay that carries live
//! events and stops between the hosts of a fleet.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::clock::now_ms;
use crate::lab::events::RelayMessage;
use crate::lab::{HostSettings, Lab};
use crate::policy::Policy;
use crate::store::{HostHold, Store, StoreError};

/// The longest message PostgreSQL carries on a channel is 8000 bytes; a longer one is not sent.
const MAX_RELAYED: usize = 7900;

/// Messages waiting to be relayed before more are dropped (a database too slow to keep up
/// must not make the lab hold events without bound).
const RELAY_QUEUE: usize = 1024;

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
            if let Err(error) = lab.heartbeat().await {
                tracing::warn!(%error, "cannot renew this host's heartbeat and leases");
            }
        }
    })
}

/// Starts relaying between this host and the others, when the database carries messages
/// (PostgreSQL); on SQLite there is no one else and nothing starts.
pub async fn start_relay(lab: &Arc<Lab>) -> Result<(), StoreError> {
    let Some(mut feed) = lab.store().relay_feed().await? else {
        return Ok(());
    };
    let receiving = Arc::clone(lab);
    tokio::spawn(async move {
        while !receiving.is_stopping() {
            match feed.next().await {
                Ok(text) => match serde_json::from_str::<RelayMessage>(&text) {
                    Ok(message) => receiving.receive_relayed(message),
                    Err(error) => tracing::warn!(%error, "ignoring a relayed message"),
                },
                Err(error) => {
                    tracing::warn!(%error, "the relay from other hosts was cut; listening again");
                    tokio::time::sleep(HOLD_RETRY).await;
                }
            }
        }
    });
    let (sender, mut outbox) = mpsc::channel::<RelayMessage>(RELAY_QUEUE);
    lab.start_relay(sender);
    let store = lab.store().clone();
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
