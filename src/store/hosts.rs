//! Lab hosts on a shared database: their registration and heartbeat, the leases on the runs they
//! execute, the lock that keeps two labs from serving under one name, and the channel that
//! carries live events from the host running a campaign to every other host.

use std::time::{Duration, Instant};

use sqlx::Connection;
use sqlx::postgres::{PgConnection, PgListener, PgPool, PgPoolOptions};

use super::model::HostRecord;
use super::{Pool, Store, StoreError};

/// The PostgreSQL channel live events travel on between hosts.
const RELAY_CHANNEL: &str = "backlab_relay";

/// A run a host is executing: its id and the attempt the host claimed, which together fence
/// off a run that was taken back and claimed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldRun {
    pub run_id: i64,
    pub attempt: i64,
}

/// What a heartbeat learned of the runs a host holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Beat {
    /// Taken back after the lease lapsed: stop, save nothing.
    pub lost: Vec<HeldRun>,
    /// Still this host's, in a campaign that was cancelled: stop as cancelled.
    pub cancelled: Vec<HeldRun>,
}

/// What a sweep of lapsed leases did: the runs it put back on the queue, and the campaigns
/// whose lapsed runs it ended cancelled instead (a cancel made while their host was gone),
/// which may have ended with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lapsed {
    pub requeued: u64,
    pub cancelled_campaigns: Vec<String>,
}

/// Proof that this process is the one lab serving under a host name, held as long as the lab
/// runs. On PostgreSQL it is a session advisory lock on a connection of its own: when the
/// process dies the server ends the session and the lock is free at once.
pub struct HostHold {
    #[allow(dead_code)]
    connection: Option<PgConnection>,
}

/// Messages from other hosts, as they arrive, on a connection of the feed's own that it
/// checks while it is quiet: a connection that died without a word (a network that dropped
/// it, a server that lost it) is noticed within a deadline and opened again.
pub struct RelayFeed {
    /// The store's pool: it sends the probes, as any host sends its messages.
    pool: PgPool,
    /// Listening on the relay's channel and on the feed's own probe channel; `None` once
    /// found dead, until it is opened again.
    listener: Option<PgListener>,
    /// The feed's own channel, which only its probes use.
    probe_channel: String,
    /// How long the feed may hear nothing before it probes its connection.
    quiet: Duration,
    /// How long a probe may take to come back, and an opening to be done.
    deadline: Duration,
    last_heard: Instant,
    /// When the probe under way was sent.
    probed: Option<Instant>,
}

/// What the feed has next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relayed {
    /// A message another host relayed, as it sent it.
    Message(String),
    /// The connection was lost and is listening again: whatever was relayed in between
    /// is lost (live news is not durable; the store keeps what matters).
    Reopened,
}

impl RelayFeed {
    /// The next message, or [`Relayed::Reopened`] once a lost connection listens again.
    /// After `quiet` without a message the feed sends itself a probe through the store's pool;
    /// a probe that has not come back within `deadline` (or cannot be sent) means the
    /// connection is dead: it is dropped, and opened again on the next call. An error (the
    /// database cannot be reached) leaves the feed to be asked again.
    pub async fn next(&mut self) -> Result<Relayed, StoreError> {
        loop {
            let Some(listener) = self.listener.as_mut() else {
                self.listener = Some(self.listen().await?);
                return Ok(Relayed::Reopened);
            };
            let wait = match self.probed {
                Some(sent) => self.deadline.saturating_sub(sent.elapsed()),
                None => self.quiet.saturating_sub(self.last_heard.elapsed()),
            };
            match tokio::time::timeout(wait, listener.try_recv()).await {
                Ok(Ok(Some(notification))) => {
                    self.heard();
                    if notification.channel() != self.probe_channel {
                        return Ok(Relayed::Message(notification.payload().to_string()));
                    }
                }
                // The driver saw the connection close and listens again on a new one.
                Ok(Ok(None)) => {
                    self.heard();
                    return Ok(Relayed::Reopened);
                }
                Ok(Err(error)) => {
                    self.listener = None;
                    return Err(error.into());
                }
                Err(_) if self.probed.is_some() => {
                    tracing::warn!(
                        deadline_s = self.deadline.as_secs_f64(),
                        "the relay from other hosts did not hear its own probe: its connection \
                         is dead; listening again"
                    );
                    self.listener = None;
                }
                Err(_) => {
                    let sent = tokio::time::timeout(
                        self.deadline,
                        sqlx::query("SELECT pg_notify($1, '')")
                            .bind(&self.probe_channel)
                            .execute(&self.pool),
                    )
                    .await;
                    match sent {
                        Ok(Ok(_)) => self.probed = Some(Instant::now()),
                        Ok(Err(error)) => {
                            self.listener = None;
                            return Err(error.into());
                        }
                        Err(_) => {
                            self.listener = None;
                            return Err(StoreError::Unanswered(self.deadline));
                        }
                    }
                }
            }
        }
    }

    /// A new listener on a pool of its own (a connection found dead is dropped with its pool,
    /// never handed back to the store's), listening on both channels within the deadline.
    async fn listen(&mut self) -> Result<PgListener, StoreError> {
        let options = (*self.pool.connect_options()).clone();
        let own = PgPoolOptions::new()
            .max_connections(1)
            .min_connections(0)
            .max_lifetime(None)
            .idle_timeout(None)
            .acquire_timeout(self.deadline)
            .connect_lazy_with(options);
        let opened = tokio::time::timeout(self.deadline, async {
            let mut listener = PgListener::connect_with(&own).await?;
            listener
                .listen_all([RELAY_CHANNEL, self.probe_channel.as_str()])
                .await?;
            Ok::<_, sqlx::Error>(listener)
        })
        .await
        .map_err(|_| StoreError::Unanswered(self.deadline))??;
        self.heard();
        Ok(opened)
    }

    fn heard(&mut self) {
        self.last_heard = Instant::now();
        self.probed = None;
    }
}

impl Store {
    /// Takes the lock of a host name. `Ok(None)` when another live process holds it.
    pub async fn hold_host(&self, name: &str) -> Result<Option<HostHold>, StoreError> {
        match &self.pool {
            // A SQLite file has one lab: there is no one else to keep out.
            Pool::Sqlite(_) => Ok(Some(HostHold { connection: None })),
            Pool::Postgres(pool) => {
                let mut connection = pool.acquire().await?.detach();
                let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(host_lock_key(name))
                    .fetch_one(&mut connection)
                    .await?;
                if held {
                    Ok(Some(HostHold {
                        connection: Some(connection),
                    }))
                } else {
                    let _ = connection.close().await;
                    Ok(None)
                }
            }
        }
    }

    /// Registers a host, or registers it again with what it may use now.
    pub async fn register_host(
        &self,
        name: &str,
        policy_json: &str,
        url: Option<&str>,
        token_fingerprint: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        on_backend!(self, pool => {
            sqlx::query(
                "INSERT INTO hosts (name, policy, url, token, started_ms, heartbeat_ms)
                 VALUES ($1, $2, $3, $4, $5, $5)
                 ON CONFLICT (name) DO UPDATE SET policy = excluded.policy, url = excluded.url,
                    token = excluded.token, started_ms = excluded.started_ms,
                    heartbeat_ms = excluded.heartbeat_ms",
            )
            .bind(name)
            .bind(policy_json)
            .bind(url)
            .bind(token_fingerprint)
            .bind(now_ms)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// A host's heartbeat: it is alive, and the leases of the runs it holds last until
    /// `lease_until_ms`. Returns the runs whose lease it no longer has (taken back after it
    /// lapsed: the host must stop them and save nothing), and the runs it keeps whose campaign
    /// was cancelled (the host must stop them as cancelled): a stop relayed from another host
    /// may be lost, the cancel in the store is not.
    pub async fn heartbeat(
        &self,
        name: &str,
        now_ms: i64,
        lease_until_ms: i64,
        runs: &[HeldRun],
    ) -> Result<Beat, StoreError> {
        let mut beat = Beat::default();
        on_backend!(self, pool => {
            sqlx::query("UPDATE hosts SET heartbeat_ms = $1 WHERE name = $2")
                .bind(now_ms)
                .bind(name)
                .execute(pool)
                .await?;
            for run in runs {
                let renewed = sqlx::query(
                    "UPDATE runs SET lease_ms = $1
                     WHERE id = $2 AND attempts = $3 AND status = 'running' AND host = $4",
                )
                .bind(lease_until_ms)
                .bind(run.run_id)
                .bind(run.attempt)
                .bind(name)
                .execute(pool)
                .await?
                .rows_affected();
                if renewed == 0 {
                    beat.lost.push(*run);
                    continue;
                }
                let cancelled: Option<Option<i64>> = sqlx::query_scalar(
                    "SELECT c.cancelled_ms FROM runs AS r JOIN campaigns AS c
                     ON c.seq = r.campaign_seq WHERE r.id = $1",
                )
                .bind(run.run_id)
                .fetch_optional(pool)
                .await?;
                if cancelled.flatten().is_some() {
                    beat.cancelled.push(*run);
                }
            }
        });
        Ok(beat)
    }

    /// Puts back on the queue every running run whose lease lapsed before `now_ms`: its host
    /// died or lost the database. The run stays its campaign's host's; its partial samples go.
    /// A lapsed run of a campaign cancelled meanwhile ends cancelled instead, as at a host's
    /// recovery: its host never heard the cancel, and no one else would end it.
    pub async fn requeue_lapsed(&self, now_ms: i64) -> Result<Lapsed, StoreError> {
        let begin = self.backend().begin_write();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            sqlx::query(
                "DELETE FROM samples WHERE run_id IN
                    (SELECT id FROM runs WHERE status = 'running' AND lease_ms < $1)",
            )
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
            // The campaigns of the runs this sweep itself ended: a run is ended by one sweep
            // only, however many hosts sweep at once, and names its campaign there.
            let mut ended_seqs: Vec<i64> = sqlx::query_scalar(
                "UPDATE runs SET status = 'cancelled', finished_ms = $1, lease_ms = NULL
                 WHERE status = 'running' AND lease_ms < $1 AND campaign_seq IN
                    (SELECT seq FROM campaigns WHERE cancelled_ms IS NOT NULL)
                 RETURNING campaign_seq",
            )
            .bind(now_ms)
            .fetch_all(&mut *tx)
            .await?;
            ended_seqs.sort_unstable();
            ended_seqs.dedup();
            let mut cancelled_campaigns = Vec::with_capacity(ended_seqs.len());
            for seq in ended_seqs {
                let id: String = sqlx::query_scalar("SELECT id FROM campaigns WHERE seq = $1")
                    .bind(seq)
                    .fetch_one(&mut *tx)
                    .await?;
                cancelled_campaigns.push(id);
            }
            cancelled_campaigns.sort_unstable();
            let requeued = sqlx::query(
                "UPDATE runs SET status = 'queued', started_ms = NULL, host = NULL,
                    lease_ms = NULL
                 WHERE status = 'running' AND lease_ms < $1",
            )
            .bind(now_ms)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            Lapsed {
                requeued,
                cancelled_campaigns,
            }
        }))
    }

    /// Every registered host, by name.
    pub async fn hosts(&self) -> Result<Vec<HostRecord>, StoreError> {
        Ok(on_backend!(self, pool => {
            sqlx::query_as::<_, HostRecord>(
                "SELECT name, policy, url, token, started_ms, heartbeat_ms FROM hosts ORDER BY name",
            )
            .fetch_all(pool)
            .await?
        }))
    }

    /// A page of registered hosts by name: at most `limit` whose names sort after `after`
    /// (from the first without it).
    pub async fn hosts_page(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<HostRecord>, StoreError> {
        Ok(on_backend!(self, pool => {
            sqlx::query_as::<_, HostRecord>(
                "SELECT name, policy, url, token, started_ms, heartbeat_ms FROM hosts
                 WHERE name > $1 ORDER BY name LIMIT $2",
            )
            .bind(after.unwrap_or_default())
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        }))
    }

    /// One registered host.
    pub async fn host(&self, name: &str) -> Result<Option<HostRecord>, StoreError> {
        Ok(on_backend!(self, pool => {
            sqlx::query_as::<_, HostRecord>(
                "SELECT name, policy, url, token, started_ms, heartbeat_ms FROM hosts
                 WHERE name = $1",
            )
            .bind(name)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Sends a message to every host listening ([`Store::relay_feed`]); nothing on SQLite,
    /// where the one lab is the only listener.
    pub async fn relay(&self, message: &str) -> Result<(), StoreError> {
        if let Pool::Postgres(pool) = &self.pool {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(RELAY_CHANNEL)
                .bind(message)
                .execute(pool)
                .await?;
        }
        Ok(())
    }

    /// The messages other hosts relay, listening from now on; `None` on SQLite. The feed
    /// probes its connection after `quiet` without a message and takes it for dead when the
    /// probe has not come back within `deadline` ([`RelayFeed::next`]).
    pub async fn relay_feed(
        &self,
        quiet: Duration,
        deadline: Duration,
    ) -> Result<Option<RelayFeed>, StoreError> {
        match &self.pool {
            Pool::Sqlite(_) => Ok(None),
            Pool::Postgres(pool) => {
                let mut feed = RelayFeed {
                    pool: pool.clone(),
                    listener: None,
                    probe_channel: format!("{RELAY_CHANNEL}_probe_{}", crate::ids::campaign_id()),
                    quiet,
                    deadline,
                    last_heard: Instant::now(),
                    probed: None,
                };
                feed.listener = Some(feed.listen().await?);
                Ok(Some(feed))
            }
        }
    }
}

/// The advisory-lock key of a host name: FNV-1a, stable across builds and hosts.
fn host_lock_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"backlab host ".iter().chain(name.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}
