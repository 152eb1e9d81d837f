//! The lab's memory: campaigns, runs and samples, in one SQLite file by default or in a shared
//! PostgreSQL database. The only module with SQL. It imports nothing above the campaign layer:
//! what it keeps for the layers above (a judgement, a headline, a search's state, other tools'
//! figures) is a [`Document`] it neither reads nor checks, and a series key is what it is given.
//!
//! Every statement is written once, with `$N` placeholders both backends read, and run on
//! whichever backend the store has ([`on_backend!`]); the few places where the two speak
//! differently (how a write transaction begins, a JSON expression, row locks) are
//! [`Backend`]'s. On SQLite, writes are single statements or `BEGIN IMMEDIATE` transactions,
//! so two writers never deadlock on a lock upgrade, and WAL mode lets readers run beside the
//! worker's writes.
//!
//! This file opens the store and holds what its parts share; campaigns are in `campaigns`,
//! runs and samples in `runs`, hosts and their leases in `hosts`, and series, schedules,
//! searches and reference figures each in a file of their own.

#[macro_use]
mod rows;

mod document;
mod location;
mod lock;
pub mod model;

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
// Statements built with `format!` only join this module's own fragments, never input.
use sqlx::AssertSqlSafe;

pub use hosts::{Beat, HeldRun, HostHold, Lapsed, RelayFeed, Relayed};
pub use location::Location;
pub use lock::LockError;
pub use model::{
    CampaignRecord, CampaignStatus, CancelOutcome, ClaimedRun, DeleteOutcome, FiringRecord,
    HostRecord, NewCampaign, QueueFigures, Recovery, RunRecord, RunState, ScheduleRecord,
    StoredPlan, UnreadableRun,
};

/// A campaign's status, from its runs' statuses: the one place that rule is written.
macro_rules! campaign_status {
    () => {
        "CASE
            WHEN COUNT(*) FILTER (WHERE r.status = 'running') > 0 THEN 'running'
            WHEN COUNT(*) FILTER (WHERE r.status = 'interrupted') > 0 THEN 'interrupted'
            WHEN COUNT(*) FILTER (WHERE r.status = 'queued') = COUNT(*) THEN 'queued'
            WHEN COUNT(*) FILTER (WHERE r.status = 'queued') > 0 THEN 'running'
            WHEN MAX(c.searching) = 1
                 AND COUNT(*) FILTER (WHERE r.status = 'cancelled') = 0 THEN 'running'
            WHEN MAX(c.searching) = 2
                 OR COUNT(*) FILTER (WHERE r.status = 'cancelled') > 0 THEN 'cancelled'
            WHEN COUNT(*) FILTER (WHERE r.status = 'failed') > 0 THEN 'failed'
            ELSE 'done'
        END"
    };
}

/// The columns of a campaign record: its row, and its status and run counts aggregated from
/// its runs in the same pass. Followed by a WHERE on `c`, then [`campaign_group!`].
macro_rules! campaign_select {
    () => {
        concat!(
            "SELECT c.seq, c.id, c.name, c.spec, c.created_ms, c.rerun_of, c.survey, c.judgement,
                    c.headline, c.host, c.series, c.search, ",
            campaign_status!(),
            " AS status,
                COUNT(*) AS runs_total,
                COUNT(*) FILTER (WHERE r.status IN ('done', 'failed', 'cancelled')) AS runs_finished,
                COUNT(*) FILTER (WHERE r.status = 'done') AS runs_done,
                COUNT(*) FILTER (WHERE r.status = 'cancelled') AS runs_cancelled,
                COUNT(*) FILTER (WHERE r.status = 'failed') AS runs_failed,
                MAX(CASE WHEN r.status = 'done' THEN r.mb_per_s END) AS best_mb_per_s
             FROM campaigns AS c JOIN runs AS r ON r.campaign_seq = c.seq"
        )
    };
}

/// Ends [`campaign_select!`]: one row per campaign.
macro_rules! campaign_group {
    () => {
        " GROUP BY c.seq"
    };
}

/// Runs `$body` with `$pool` bound to the store's pool, whichever backend it is: the body is
/// written once and checked against each driver.
macro_rules! on_backend {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => $body,
            Pool::Postgres($pool) => $body,
        }
    };
}

/// The row number of a campaign id, if there is such a campaign, read through `$executor`.
macro_rules! campaign_seq {
    ($executor:expr, $campaign_id:expr) => {
        sqlx::query_scalar::<_, i64>("SELECT seq FROM campaigns WHERE id = $1")
            .bind($campaign_id)
            .fetch_optional($executor)
    };
}

mod campaigns;
mod hosts;
mod references;
mod runs;
mod schedules;
mod search;
mod series;

pub use campaigns::Neighbour;
pub use document::Document;
pub use references::MAX_REFERENCES;
pub use schedules::{FIRINGS_KEPT, MAX_SCHEDULES};
pub use series::JudgedCampaign;

/// Upper bounds (seconds) of the run-duration histogram in `/metrics`.
pub const DURATION_BUCKETS: [f64; 8] = [1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 3600.0];

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Locked(#[from] LockError),
    /// The database did not answer within the deadline given.
    #[error("the database did not answer within {0:?}")]
    Unanswered(Duration),
    /// A claimed run whose stored test or parameters cannot be read: it was ended failed in
    /// the claim's transaction; its campaign's end is the caller's.
    #[error(
        "run {} of campaign {} cannot be read ({}); it ended failed",
        .0.run_id, .0.campaign_id, .0.why
    )]
    UnreadableRun(Box<UnreadableRun>),
    #[error(
        "the database file is damaged ({problems}); it was left unchanged. Restore it from a \
         backup, or save what can be read with `sqlite3 {path} .recover | sqlite3 recovered.db` \
         and start the lab with --db recovered.db"
    )]
    Damaged { path: String, problems: String },
}

impl StoreError {
    /// Whether the database refused a write for want of room (SQLite's `SQLITE_FULL`,
    /// PostgreSQL's `disk_full`): the lab is sound and heals once room is made.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Database(sqlx::Error::Database(error)) => {
                let code = error.code();
                let code = code.as_deref().unwrap_or_default();
                // SQLite gives its extended code; its low byte is the primary one.
                code.parse::<i32>().is_ok_and(|code| code & 0xff == 13) || code == "53100"
            }
            _ => false,
        }
    }
}

/// The database behind a store.
#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Which kind of database a store speaks to, for the few statements written differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// How a transaction that will write begins: SQLite takes its write lock at once.
    fn begin_write(self) -> &'static str {
        match self {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN",
        }
    }

    /// What a transaction that counts before it adds (runs to the queue, figures to a
    /// campaign) runs first, so two such transactions take turns: SQLite's `BEGIN IMMEDIATE`
    /// already makes them.
    fn take_turns(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => None,
            // An arbitrary key of the lab's own: "counting before adding".
            Backend::Postgres => Some("SELECT pg_advisory_xact_lock(7147173101)"),
        }
    }

    /// How a transaction that only reads, and must see one moment, begins: a SQLite read
    /// transaction keeps its first read's snapshot; PostgreSQL needs repeatable read for that.
    fn begin_snapshot(self) -> &'static str {
        match self {
            Backend::Sqlite => "BEGIN",
            Backend::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        }
    }

    /// A campaign's spec without its name (what it measures), for campaigns aliased `alias`;
    /// each backend has an index on it.
    fn spec_key(self, alias: &str) -> String {
        match self {
            Backend::Sqlite => format!("json_remove({alias}.spec, '$.name')"),
            Backend::Postgres => format!("(({alias}.spec)::jsonb - 'name')"),
        }
    }

    /// Which runs are host `$N`'s, for runs aliased `r` of campaigns aliased `c`: those of
    /// its campaigns and of campaigns stored before hosts were named. A SQLite file has one
    /// lab, so every run there is its own, whatever name it served under before.
    fn runs_of_host(self, n: u8) -> String {
        match self {
            Backend::Sqlite => format!("(${n} IS NOT NULL)"),
            Backend::Postgres => format!("(c.host = ${n} OR c.host IS NULL)"),
        }
    }

    /// Which runs aliased `r` host `$N` executes or left executing: those it claimed, and those
    /// claimed before hosts were named. On SQLite, every run (one lab per file).
    fn runs_held_by(self, n: u8) -> String {
        match self {
            Backend::Sqlite => format!("(${n} IS NOT NULL)"),
            Backend::Postgres => format!("(r.host = ${n} OR r.host IS NULL)"),
        }
    }

    /// What the queue's claim adds to its choice of run so that two hosts claiming at once
    /// take different runs (SQLite has one writer at a time and needs nothing).
    fn claim_lock(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE OF r SKIP LOCKED",
        }
    }

    /// What a statement's check of a run's attempt locks, so a sweep that takes the run back
    /// at the same moment cannot slip between the check and the write: on PostgreSQL the row
    /// is held shared until the statement ends; SQLite's writes are one at a time already.
    fn share_lock(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR SHARE",
        }
    }
}

/// Whether a connection going back to the pool may serve again. A COMMIT that failed (a full
/// disk) can leave the database out of its transaction while the driver still counts one
/// open, and then it refuses every later `BEGIN` on that connection: such a connection is
/// closed, and the pool opens a fresh one when it needs it. The ping first lets the driver
/// finish the rollback a dropped transaction queued.
async fn still_usable<C: sqlx::Connection>(connection: &mut C) -> Result<bool, sqlx::Error> {
    connection.ping().await?;
    Ok(!connection.is_in_transaction())
}

/// A handle on the lab's database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    /// A SQLite file's lock, held while any handle lives: one lab per file.
    _lock: Option<std::sync::Arc<lock::FileLock>>,
}

/// The deadlines of a PostgreSQL session, as the server writes them (`30s`, `1min`; `0`: none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionDeadlines {
    /// How long one statement may run (`statement_timeout`).
    pub statement: String,
    /// How long a transaction may sit idle before the server ends its session
    /// (`idle_in_transaction_session_timeout`).
    pub idle_in_transaction: String,
}

/// The setting that bounds how long one statement may run on PostgreSQL.
const STATEMENT_TIMEOUT: &str = "statement_timeout";

/// The deadlines every PostgreSQL session of the lab gets unless the URL (its `options`, or
/// `PGOPTIONS`) sets them itself: a statement runs at most 30 s (the lab's statements take
/// milliseconds; one that waits longer is stuck on a lock or a server in trouble, and its
/// caller fails and tries again instead of hanging), and a transaction may sit idle for at
/// most 60 s before the server ends the session (a lab that stalls inside one must not hold
/// its row locks for ever). The heartbeat has a deadline of its own (a lease).
const SESSION_DEADLINES: [(&str, &str); 2] = [
    (STATEMENT_TIMEOUT, "30s"),
    ("idle_in_transaction_session_timeout", "60s"),
];

/// Whether a PostgreSQL `options` string (`-c name=value`, `-cname=value` or
/// `--name=value`, as libpq reads it) sets the parameter `name`.
fn sets_parameter(options: &str, name: &str) -> bool {
    let mut words = options.split_whitespace();
    while let Some(word) = words.next() {
        let setting = if word == "-c" {
            words.next()
        } else {
            word.strip_prefix("-c").or_else(|| word.strip_prefix("--"))
        };
        let key = setting
            .and_then(|setting| setting.split_once('='))
            .map(|(key, _)| key);
        if key.is_some_and(|key| key.replace('-', "_").eq_ignore_ascii_case(name)) {
            return true;
        }
    }
    false
}

/// Brings a PostgreSQL database's schema up to date on a connection of its own. A migration
/// may rewrite a large table, and waits while another lab migrates: the store's own
/// statement deadline (`own_statement_deadline`) is lifted for it, on a connection closed
/// afterwards so that no other statement runs without one. A deadline the URL set holds.
async fn migrate_postgres(pool: &PgPool, own_statement_deadline: bool) -> Result<(), StoreError> {
    use sqlx::Connection;
    let mut connection = pool.acquire().await?.detach();
    if own_statement_deadline {
        sqlx::query("SET statement_timeout = 0")
            .execute(&mut connection)
            .await?;
    }
    let migrated = rows::postgres_migrator().run(&mut connection).await;
    let _ = connection.close().await;
    Ok(migrated?)
}

/// Most problems `quick_check` is asked to list.
const QUICK_CHECK_PROBLEMS: u32 = 5;

/// Checks an existing SQLite file before anything writes to it, on a read-only connection:
/// a damaged file is refused with its first problems, untouched.
async fn check_intact(path: &std::path::Path) -> Result<(), StoreError> {
    use sqlx::Connection;
    let options = SqliteConnectOptions::new().filename(path).read_only(true);
    let mut connection = sqlx::SqliteConnection::connect_with(&options).await?;
    let found: Result<Vec<String>, sqlx::Error> = sqlx::query_scalar(AssertSqlSafe(format!(
        "PRAGMA quick_check({QUICK_CHECK_PROBLEMS})"
    )))
    .fetch_all(&mut connection)
    .await;
    let _ = connection.close().await;
    let problems = match found {
        Ok(rows) if rows.iter().all(|row| row == "ok") => return Ok(()),
        Ok(rows) => rows.join("; "),
        // A page too damaged to be read fails the check itself.
        Err(sqlx::Error::Database(error)) => error.message().to_string(),
        Err(error) => return Err(error.into()),
    };
    Err(StoreError::Damaged {
        path: path.display().to_string(),
        problems,
    })
}

impl Store {
    /// Opens the database (creating a SQLite file if needed) and brings its schema up to date.
    /// On PostgreSQL each session is held to `SESSION_DEADLINES` (30 s a statement, 60 s
    /// idle in a transaction), except those the URL sets itself.
    pub async fn open(location: &Location) -> Result<Self, StoreError> {
        let mut held = None;
        let pool = match location {
            Location::File(given) => {
                let lock = lock::FileLock::take(given)?;
                // Every connection opens the file by its real path, so its WAL is the one
                // every name of the file shares.
                let path = lock.path.clone();
                held = Some(std::sync::Arc::new(lock));
                if std::fs::metadata(&path).is_ok_and(|metadata| metadata.len() > 0) {
                    check_intact(&path).await?;
                }
                let options = SqliteConnectOptions::new()
                    .filename(&path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10))
                    .foreign_keys(true);
                let pool = SqlitePoolOptions::new()
                    .max_connections(4)
                    .after_release(|connection, _| {
                        Box::pin(async move { still_usable(connection).await })
                    })
                    .connect_with(options)
                    .await?;
                rows::sqlite_migrator().run(&pool).await?;
                Pool::Sqlite(pool)
            }
            Location::Postgres(url) => {
                let given: PgConnectOptions = url.parse()?;
                let deadlines: Vec<(&str, &str)> = SESSION_DEADLINES
                    .into_iter()
                    .filter(|(name, _)| !sets_parameter(given.get_options().unwrap_or(""), name))
                    .collect();
                let own_statement_deadline =
                    deadlines.iter().any(|(name, _)| *name == STATEMENT_TIMEOUT);
                let options = if deadlines.is_empty() {
                    given
                } else {
                    given.options(deadlines)
                };
                let pool = PgPoolOptions::new()
                    .max_connections(8)
                    .after_release(|connection, _| {
                        Box::pin(async move { still_usable(connection).await })
                    })
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(options)
                    .await?;
                migrate_postgres(&pool, own_statement_deadline).await?;
                Pool::Postgres(pool)
            }
        };
        Ok(Self { pool, _lock: held })
    }

    /// Which kind of database this store speaks to.
    pub fn backend(&self) -> Backend {
        match self.pool {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// Closes every connection (on SQLite, checkpointing the WAL).
    pub async fn close(&self) {
        on_backend!(self, pool => pool.close().await)
    }

    /// The deadlines the database holds this store's sessions to, as the server states them:
    /// logged at start, so an operator sees which apply (the store's or the URL's own). `None`
    /// on SQLite, which has none.
    pub async fn session_deadlines(&self) -> Result<Option<SessionDeadlines>, StoreError> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(None);
        };
        let (statement, idle_in_transaction) = sqlx::query_as(
            "SELECT current_setting('statement_timeout'),
                    current_setting('idle_in_transaction_session_timeout')",
        )
        .fetch_one(pool)
        .await?;
        Ok(Some(SessionDeadlines {
            statement,
            idle_in_transaction,
        }))
    }

    /// Writes one row, to learn whether the database can be written now (`/healthz`): a full
    /// disk fails the write, and a read would not notice.
    pub async fn probe_write(&self, now_ms: i64) -> Result<(), StoreError> {
        on_backend!(self, pool => {
            sqlx::query(
                "INSERT INTO write_probe (id, checked_ms) VALUES (1, $1)
                 ON CONFLICT (id) DO UPDATE SET checked_ms = excluded.checked_ms",
            )
            .bind(now_ms)
            .execute(pool)
            .await?;
        });
        Ok(())
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("cannot encode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::sets_parameter;

    #[test]
    fn a_parameter_set_in_a_urls_options_is_found_in_each_spelling() {
        for options in [
            "-c statement_timeout=5000",
            "-cstatement_timeout=5s",
            "--statement-timeout=5s",
            "-c geqo=off -c STATEMENT_TIMEOUT=1min",
        ] {
            assert!(sets_parameter(options, "statement_timeout"), "{options}");
        }
        for options in [
            "",
            "-c lock_timeout=5s",
            "-c idle_in_transaction_session_timeout=0",
            "-c search_path=statement_timeout\\ x",
        ] {
            assert!(!sets_parameter(options, "statement_timeout"), "{options}");
        }
    }
}
