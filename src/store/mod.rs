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

#[macro_use]
mod rows;

mod document;
mod location;
mod lock;
pub mod model;

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
// Statements built with `format!` only join this module's own fragments, never input.
use sqlx::{AssertSqlSafe, Row};

use crate::engine::result::{RunResult, Sample};
use crate::engine::survey::Survey;
use crate::spec::{RunParams, TestKind};

pub use hosts::{Beat, HeldRun, HostHold, RelayFeed};
pub use location::Location;
pub use lock::LockError;
pub use model::{
    CampaignRecord, CampaignStatus, CancelOutcome, ClaimedRun, DeleteOutcome, FiringRecord,
    HostRecord, NewCampaign, QueueFigures, Recovery, RunRecord, RunState, ScheduleRecord,
    StoredPlan,
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

mod hosts;
mod references;
mod schedules;
mod search;
mod series;

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

/// Which neighbour of a campaign among those of its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Neighbour {
    /// The newest older one.
    Previous,
    /// The oldest newer one.
    Next,
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
                let pool = PgPoolOptions::new()
                    .max_connections(8)
                    .after_release(|connection, _| {
                        Box::pin(async move { still_usable(connection).await })
                    })
                    .acquire_timeout(Duration::from_secs(10))
                    .connect(url)
                    .await?;
                rows::postgres_migrator().run(&pool).await?;
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

    /// Stores a campaign and every run it expands to, in one transaction.
    pub async fn insert_campaign(
        &self,
        campaign: &NewCampaign,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.insert_campaign_within(campaign, now_ms, u64::MAX)
            .await
            .map(|_| ())
    }

    /// Stores a new campaign and its queued runs unless the runs waiting, with these, would
    /// pass `max_queued`: the count and the insert are one step, so submissions at once
    /// cannot pass the limit together. `Err(waiting)` in the answer when it would.
    pub async fn insert_campaign_within(
        &self,
        campaign: &NewCampaign,
        now_ms: i64,
        max_queued: u64,
    ) -> Result<Result<(), u64>, StoreError> {
        let begin = self.backend().begin_write();
        let serialize = self.backend().take_turns();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            if let Some(lock) = serialize {
                sqlx::query(lock).execute(&mut *tx).await?;
            }
            let waiting: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE status = 'queued'")
                    .fetch_one(&mut *tx)
                    .await?;
            let waiting = waiting.max(0) as u64;
            if waiting.saturating_add(campaign.runs.len() as u64) > max_queued {
                tx.rollback().await?;
                return Ok(Err(waiting));
            }
            let seq: i64 = sqlx::query_scalar(
                "INSERT INTO campaigns
                 (id, name, spec, plan, created_ms, rerun_of, host, checked_by, series,
                  search, searching)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                 RETURNING seq",
            )
            .bind(&campaign.id)
            .bind(&campaign.name)
            .bind(to_json(&campaign.spec)?)
            .bind(to_json(&campaign.placement)?)
            .bind(now_ms)
            .bind(&campaign.rerun_of)
            .bind(&campaign.host)
            .bind(&campaign.checked_by)
            .bind(&campaign.series)
            .bind(campaign.search.as_ref().map(Document::as_str))
            .bind(if campaign.search.is_some() { search::SEARCH_OPEN } else { 0 })
            .fetch_one(&mut *tx)
            .await?;
            for (position, (test, params)) in campaign.runs.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO runs (campaign_seq, position, test, params)
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(seq)
                .bind(position as i64)
                .bind(test.id())
                .bind(to_json(params)?)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(())
        }))
    }

    /// One campaign, without its runs.
    pub async fn campaign(&self, id: &str) -> Result<Option<CampaignRecord>, StoreError> {
        let row = on_backend!(self, pool => {
            sqlx::query_as::<_, CampaignRow>(concat!(
                campaign_select!(),
                " WHERE c.id = $1",
                campaign_group!()
            ))
            .bind(id)
            .fetch_optional(pool)
            .await?
        });
        row.map(CampaignRow::into_record).transpose()
    }

    /// The ids of the campaigns queued as reruns of `campaign_id`, oldest first.
    pub async fn reruns_of(&self, campaign_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(on_backend!(self, pool => {
            sqlx::query_scalar::<_, String>(
                "SELECT id FROM campaigns WHERE rerun_of = $1 ORDER BY seq",
            )
            .bind(campaign_id)
            .fetch_all(pool)
            .await?
        }))
    }

    /// The campaign next to `campaign_id` among those with the same spec, its name aside:
    /// the newest older one (the one its figures are compared with first), or the oldest newer
    /// one (the one whose report names `campaign_id` as its previous).
    pub async fn same_spec_neighbour(
        &self,
        campaign_id: &str,
        which: Neighbour,
    ) -> Result<Option<String>, StoreError> {
        let (other, this) = (self.backend().spec_key("o"), self.backend().spec_key("c"));
        let (relation, order) = match which {
            Neighbour::Previous => ("<", "DESC"),
            Neighbour::Next => (">", "ASC"),
        };
        let sql = format!(
            "SELECT o.id FROM campaigns c JOIN campaigns o
             ON {other} = {this} AND o.seq {relation} c.seq
             WHERE c.id = $1 ORDER BY o.seq {order} LIMIT 1"
        );
        Ok(on_backend!(self, pool => {
            sqlx::query_scalar::<_, String>(AssertSqlSafe(sql.as_str()))
                .bind(campaign_id)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// Campaigns newest first, optionally only those in one status and older than `before`.
    /// `Ok(None)` when `before` names no campaign.
    pub async fn list_campaigns(
        &self,
        status: Option<CampaignStatus>,
        before: Option<&str>,
        limit: u32,
    ) -> Result<Option<Vec<CampaignRecord>>, StoreError> {
        let before_seq = match before {
            Some(id) => {
                let seq = on_backend!(self, pool => campaign_seq!(pool, id).await?);
                match seq {
                    Some(seq) => seq,
                    None => return Ok(None),
                }
            }
            None => i64::MAX,
        };
        let rows = on_backend!(self, pool => {
            sqlx::query_as::<_, CampaignRow>(concat!(
                campaign_select!(),
                // Walks campaigns newest first and stops after a page: the unfiltered list
                // reads only the runs of the campaigns it shows.
                " WHERE c.seq < $1",
                campaign_group!(),
                " HAVING (CAST($2 AS TEXT) IS NULL OR ",
                campaign_status!(),
                " = $2) ORDER BY c.seq DESC LIMIT $3"
            ))
            .bind(before_seq)
            .bind(status.map(RunState::id))
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        });
        rows.into_iter()
            .map(CampaignRow::into_record)
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// Every run of a campaign in plan order, with results where finished.
    pub async fn runs(&self, campaign_id: &str) -> Result<Vec<RunRecord>, StoreError> {
        let (rows, samples) = on_backend!(self, pool => {
            let rows = sqlx::query_as::<_, RunRow>(
                "SELECT r.id, r.position, r.test, r.params, r.status, r.attempts, r.started_ms,
                        r.finished_ms, r.result, r.host
                 FROM runs AS r JOIN campaigns AS c ON c.seq = r.campaign_seq
                 WHERE c.id = $1 ORDER BY r.position",
            )
            .bind(campaign_id)
            .fetch_all(pool)
            .await?;
            // All samples of the campaign in one query, split by run.
            let samples: Vec<(i64, f64, f64)> = sqlx::query_as(
                "SELECT s.run_id, s.t, s.mb_per_s FROM samples AS s
                 JOIN runs AS r ON r.id = s.run_id JOIN campaigns AS c ON c.seq = r.campaign_seq
                 WHERE c.id = $1 ORDER BY s.run_id, s.t",
            )
            .bind(campaign_id)
            .fetch_all(pool)
            .await?;
            (rows, samples)
        });
        let mut by_run: std::collections::HashMap<i64, Vec<Sample>> =
            std::collections::HashMap::new();
        for (run_id, t, mb_per_s) in samples {
            by_run
                .entry(run_id)
                .or_default()
                .push(Sample { t, mb_per_s });
        }
        rows.into_iter()
            .map(|row| {
                let samples = by_run.remove(&row.id).unwrap_or_default();
                row.into_record(samples)
            })
            .collect()
    }

    /// Takes the oldest queued run of the campaigns that run on `host` (or on any host, for
    /// campaigns stored before hosts) and marks it running under a lease that lasts until
    /// `lease_until_ms`, atomically: two claims at once never take the same run.
    pub async fn claim_next(
        &self,
        host: &str,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> Result<Option<ClaimedRun>, StoreError> {
        let sql = format!(
            "UPDATE runs SET status = 'running', attempts = attempts + 1, started_ms = $1,
                host = $2, lease_ms = $3
             WHERE status = 'queued' AND id = (
                 SELECT r.id FROM runs AS r JOIN campaigns AS c ON c.seq = r.campaign_seq
                 WHERE r.status = 'queued' AND {}
                 ORDER BY r.id LIMIT 1{}
             )
             RETURNING id, campaign_seq, position, test, params, attempts",
            self.backend().runs_of_host(2),
            self.backend().claim_lock()
        );
        let claimed = on_backend!(self, pool => {
            let row = sqlx::query(AssertSqlSafe(sql.as_str()))
                .bind(now_ms)
                .bind(host)
                .bind(lease_until_ms)
                .fetch_optional(pool)
                .await?;
            match row {
                None => None,
                Some(row) => {
                    let run: (i64, i64, i64, String, String, i64) = (
                        row.try_get("id")?,
                        row.try_get("campaign_seq")?,
                        row.try_get("position")?,
                        row.try_get("test")?,
                        row.try_get("params")?,
                        row.try_get("attempts")?,
                    );
                    let campaign: (String, Option<String>, Option<String>, i64, bool) =
                        sqlx::query_as(
                            "SELECT id, plan, CASE WHEN plan IS NULL THEN spec END,
                                    (SELECT COUNT(*) FROM runs WHERE campaign_seq = c.seq),
                                    COALESCE(checked_by <> $2, FALSE)
                             FROM campaigns AS c WHERE seq = $1",
                        )
                        .bind(run.1)
                        .bind(host)
                        .fetch_one(pool)
                        .await?;
                    sqlx::query("DELETE FROM samples WHERE run_id = $1")
                        .bind(run.0)
                        .execute(pool)
                        .await?;
                    Some((run, campaign))
                }
            }
        });
        let Some(((run_id, _, position, test, params, attempt), campaign)) = claimed else {
            return Ok(None);
        };
        let (campaign_id, placement_json, spec_json, runs_total, checked_elsewhere) = campaign;
        let plan = match (placement_json, spec_json) {
            (Some(json), _) => serde_json::from_str(&json).map_or_else(
                |e| StoredPlan::Unreadable(format!("the stored placement cannot be read: {e}")),
                StoredPlan::Placement,
            ),
            (None, Some(json)) => serde_json::from_str(&json).map_or_else(
                |e| StoredPlan::Unreadable(format!("the stored spec cannot be read: {e}")),
                |spec| StoredPlan::Spec(Box::new(spec)),
            ),
            (None, None) => StoredPlan::Unreadable(
                "the campaign has neither a placement nor a spec".to_string(),
            ),
        };
        let test = TestKind::from_id(&test)
            .ok_or_else(|| StoreError::Corrupt(format!("run {run_id} has test {test:?}")))?;
        let params: RunParams = serde_json::from_str(&params)
            .map_err(|e| StoreError::Corrupt(format!("run {run_id} params: {e}")))?;
        Ok(Some(ClaimedRun {
            run_id,
            campaign_id,
            position: usize::try_from(position).map_err(|_| {
                StoreError::Corrupt(format!("run {run_id} has position {position}"))
            })?,
            test,
            params,
            plan,
            runs_total: usize::try_from(runs_total).unwrap_or(0),
            attempt,
            checked_elsewhere,
        }))
    }

    /// Keeps the survey of a campaign's source, taken before its first run.
    pub async fn set_survey(&self, campaign_id: &str, survey: &Survey) -> Result<(), StoreError> {
        let survey_json = to_json(survey)?;
        on_backend!(self, pool => {
            sqlx::query("UPDATE campaigns SET survey = $1 WHERE id = $2")
                .bind(&survey_json)
                .bind(campaign_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Keeps a finished campaign's judgement, and its headline for the list. The `verdict`
    /// column, where earlier versions kept a verdict line, is emptied: a line is rendered
    /// from the judgement when shown, never kept.
    pub async fn keep_judgement(
        &self,
        campaign_id: &str,
        judgement: &Document,
        headline: &Document,
    ) -> Result<(), StoreError> {
        on_backend!(self, pool => {
            sqlx::query(
                "UPDATE campaigns SET verdict = NULL, headline = $1, judgement = $2 WHERE id = $3",
            )
            .bind(headline.as_str())
            .bind(judgement.as_str())
            .bind(campaign_id)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// The judgement kept with a finished campaign, as it was kept; `None` when none was.
    pub async fn judgement(&self, campaign_id: &str) -> Result<Option<Document>, StoreError> {
        let kept: Option<Option<String>> = on_backend!(self, pool => {
            sqlx::query_scalar("SELECT judgement FROM campaigns WHERE id = $1")
                .bind(campaign_id)
                .fetch_optional(pool)
                .await?
        });
        Ok(kept.flatten().map(Document::kept))
    }

    /// Records a live sample of a running run.
    pub async fn add_sample(&self, run_id: i64, sample: Sample) -> Result<(), StoreError> {
        on_backend!(self, pool => {
            sqlx::query(UPSERT_SAMPLE)
                .bind(run_id)
                .bind(sample.t)
                .bind(sample.mb_per_s)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Stores a finished run's result and its samples in one transaction. The run keeps its
    /// result only while it is still `running` in the attempt that finished: a run deleted
    /// meanwhile, or taken back after its lease lapsed, is left alone (`Ok(false)`).
    pub async fn finish_run(
        &self,
        run: HeldRun,
        result: &RunResult,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let status = RunState::from(result.status);
        // The document leaves the samples out: they have their own table.
        let document = to_json(&RunResult {
            samples: Vec::new(),
            ..result.clone()
        })?;
        let begin = self.backend().begin_write();
        on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let kept = sqlx::query(
                "UPDATE runs SET status = $1, finished_ms = $2, bytes = $3, seconds = $4,
                    mb_per_s = $5, result = $6, lease_ms = NULL
                 WHERE id = $7 AND status = 'running' AND attempts = $8",
            )
            .bind(status.id())
            .bind(now_ms)
            .bind(to_i64(result.bytes))
            .bind(result.seconds)
            .bind(result.mb_per_s)
            .bind(&document)
            .bind(run.run_id)
            .bind(run.attempt)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if kept == 0 {
                // Not this attempt's any more: its samples are not this attempt's to replace.
                return Ok(false);
            }
            sqlx::query("DELETE FROM samples WHERE run_id = $1")
                .bind(run.run_id)
                .execute(&mut *tx)
                .await?;
            for sample in &result.samples {
                sqlx::query(UPSERT_SAMPLE)
                    .bind(run.run_id)
                    .bind(sample.t)
                    .bind(sample.mb_per_s)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        });
        Ok(true)
    }

    /// Marks a run stopped by a shutdown: it will be queued again at its host's next start.
    pub async fn interrupt_run(&self, run: HeldRun) -> Result<(), StoreError> {
        let begin = self.backend().begin_write();
        on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let kept = sqlx::query(
                "UPDATE runs SET status = 'interrupted', lease_ms = NULL
                 WHERE id = $1 AND status = 'running' AND attempts = $2",
            )
            .bind(run.run_id)
            .bind(run.attempt)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if kept > 0 {
                sqlx::query("DELETE FROM samples WHERE run_id = $1")
                    .bind(run.run_id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// At a host's start-up: the runs it left running when it crashed, or interrupted when it
    /// shut down, go back on the queue (or end cancelled, when their campaign was cancelled
    /// meanwhile); their partial samples are dropped. Other hosts' runs
    /// are theirs (their leases say when they are dead). Runs stored before hosts were named
    /// count as this host's.
    pub async fn recover(&self, host: &str, now_ms: i64) -> Result<Recovery, StoreError> {
        let mine = format!(
            "r.status IN ('running', 'interrupted') AND {}",
            self.backend().runs_held_by(1)
        );
        let begin = self.backend().begin_write();
        let (spec_jsons, requeued) = on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let spec_jsons: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT DISTINCT c.spec FROM campaigns AS c JOIN runs AS r ON r.campaign_seq = c.seq
                 WHERE {mine}"
            )))
            .bind(host)
            .fetch_all(&mut *tx)
            .await?;
            sqlx::query(AssertSqlSafe(format!(
                "DELETE FROM samples WHERE run_id IN
                    (SELECT r.id FROM runs AS r JOIN campaigns AS c ON c.seq = r.campaign_seq
                     WHERE {mine})"
            )))
            .bind(host)
            .execute(&mut *tx)
            .await?;
            // A campaign cancelled while this run executed stays cancelled.
            sqlx::query(AssertSqlSafe(format!(
                "UPDATE runs SET status = 'cancelled', finished_ms = $2, lease_ms = NULL
                 WHERE id IN (SELECT r.id FROM runs AS r JOIN campaigns AS c ON c.seq = r.campaign_seq
                              WHERE {mine} AND c.cancelled_ms IS NOT NULL)"
            )))
            .bind(host)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
            let requeued = sqlx::query(AssertSqlSafe(format!(
                "UPDATE runs SET status = 'queued', started_ms = NULL, host = NULL, lease_ms = NULL
                 WHERE id IN (SELECT r.id FROM runs AS r JOIN campaigns AS c ON c.seq = r.campaign_seq
                              WHERE {mine})"
            )))
            .bind(host)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            (spec_jsons, requeued)
        });
        Ok(Recovery {
            requeued,
            // A spec that no longer reads names no target to sweep: it is left out.
            specs: spec_jsons
                .iter()
                .filter_map(|json| serde_json::from_str(json).ok())
                .collect(),
        })
    }

    /// Cancels a campaign's queued runs and names its running ones. `Ok(None)` for an unknown id.
    pub async fn cancel_campaign(
        &self,
        campaign_id: &str,
        now_ms: i64,
    ) -> Result<Option<CancelOutcome>, StoreError> {
        let begin = self.backend().begin_write();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            match campaign_seq!(&mut *tx, campaign_id).await? {
                None => None,
                Some(seq) => {
                    sqlx::query(
                        "UPDATE campaigns SET cancelled_ms = $1
                         WHERE seq = $2 AND cancelled_ms IS NULL",
                    )
                    .bind(now_ms)
                    .bind(seq)
                    .execute(&mut *tx)
                    .await?;
                    let cancelled_queued = sqlx::query(
                        "UPDATE runs SET status = 'cancelled', finished_ms = $1
                         WHERE campaign_seq = $2 AND status IN ('queued', 'interrupted')",
                    )
                    .bind(now_ms)
                    .bind(seq)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    let running: Vec<i64> = sqlx::query_scalar(
                        "SELECT id FROM runs WHERE campaign_seq = $1 AND status = 'running'",
                    )
                    .bind(seq)
                    .fetch_all(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    Some(CancelOutcome {
                        cancelled_queued,
                        running,
                    })
                }
            }
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

    /// Deletes a campaign with its runs and samples, unless one of its runs is executing.
    pub async fn delete_campaign(&self, campaign_id: &str) -> Result<DeleteOutcome, StoreError> {
        let begin = self.backend().begin_write();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            match campaign_seq!(&mut *tx, campaign_id).await? {
                None => DeleteOutcome::NotFound,
                Some(seq) => {
                    let running: i64 = sqlx::query_scalar(
                        "SELECT COUNT(*) FROM runs WHERE campaign_seq = $1 AND status = 'running'",
                    )
                    .bind(seq)
                    .fetch_one(&mut *tx)
                    .await?;
                    if running > 0 {
                        DeleteOutcome::Running
                    } else {
                        sqlx::query("DELETE FROM campaigns WHERE seq = $1")
                            .bind(seq)
                            .execute(&mut *tx)
                            .await?;
                        tx.commit().await?;
                        DeleteOutcome::Deleted
                    }
                }
            }
        }))
    }

    /// Run counts by status, bytes moved and the run-duration histogram, for `/metrics`.
    pub async fn queue_figures(&self) -> Result<QueueFigures, StoreError> {
        let runs_by_status = self.runs_by_status().await?;
        // Sums and the histogram's cumulative counts in one pass over the finished runs: one
        // count of `seconds <= bound` per bucket bound.
        const _: () = assert!(DURATION_BUCKETS.len() == 8);
        let sql = "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT),
                    CAST(COALESCE(SUM(seconds), 0.0) AS DOUBLE PRECISION), COUNT(seconds),
                    COUNT(*) FILTER (WHERE seconds <= $1), COUNT(*) FILTER (WHERE seconds <= $2),
                    COUNT(*) FILTER (WHERE seconds <= $3), COUNT(*) FILTER (WHERE seconds <= $4),
                    COUNT(*) FILTER (WHERE seconds <= $5), COUNT(*) FILTER (WHERE seconds <= $6),
                    COUNT(*) FILTER (WHERE seconds <= $7), COUNT(*) FILTER (WHERE seconds <= $8)
             FROM runs WHERE status IN ('done', 'failed', 'cancelled')";
        let (bytes_moved, duration_sum, duration_count, counts) = on_backend!(self, pool => {
            let mut query = sqlx::query(sql);
            for bound in DURATION_BUCKETS {
                query = query.bind(bound);
            }
            let row = query.fetch_one(pool).await?;
            let mut counts = Vec::with_capacity(DURATION_BUCKETS.len());
            for index in 0..DURATION_BUCKETS.len() {
                counts.push(row.try_get::<Option<i64>, _>(3 + index)?);
            }
            (
                row.try_get::<i64, _>(0)?,
                row.try_get::<f64, _>(1)?,
                row.try_get::<i64, _>(2)?,
                counts,
            )
        });
        let duration_buckets = DURATION_BUCKETS
            .into_iter()
            .zip(counts)
            .map(|(bound, count)| (bound, count.unwrap_or(0)))
            .collect();
        Ok(QueueFigures {
            runs_by_status,
            bytes_moved,
            duration_buckets,
            duration_sum,
            duration_count,
        })
    }

    /// How many runs are in each state, every state listed; one query.
    pub async fn runs_by_status(&self) -> Result<Vec<(RunState, i64)>, StoreError> {
        let counts: Vec<(String, i64)> = on_backend!(self, pool => {
            sqlx::query_as("SELECT status, COUNT(*) FROM runs GROUP BY status")
                .fetch_all(pool)
                .await?
        });
        let mut runs_by_status: Vec<(RunState, i64)> =
            RunState::ALL.iter().map(|&state| (state, 0)).collect();
        for (status, count) in counts {
            let state = RunState::from_id(&status)
                .ok_or_else(|| StoreError::Corrupt(format!("unknown run status {status:?}")))?;
            if let Some(entry) = runs_by_status.iter_mut().find(|(s, _)| *s == state) {
                entry.1 = count;
            }
        }
        Ok(runs_by_status)
    }
}

/// A live or final sample, written again when a run reports the same instant twice.
const UPSERT_SAMPLE: &str = "INSERT INTO samples (run_id, t, mb_per_s) VALUES ($1, $2, $3)
     ON CONFLICT (run_id, t) DO UPDATE SET mb_per_s = excluded.mb_per_s";

row_struct! {
struct CampaignRow {
    id: String,
    name: String,
    spec: String,
    created_ms: i64,
    rerun_of: Option<String>,
    survey: Option<String>,
    judgement: Option<String>,
    headline: Option<String>,
    host: Option<String>,
    series: Option<String>,
    search: Option<String>,
    status: String,
    runs_total: i64,
    runs_finished: i64,
    runs_done: i64,
    runs_cancelled: i64,
    runs_failed: i64,
    best_mb_per_s: Option<f64>,
}
}

impl CampaignRow {
    fn into_record(self) -> Result<CampaignRecord, StoreError> {
        let status = RunState::from_id(&self.status).ok_or_else(|| {
            StoreError::Corrupt(format!("campaign {} has status {:?}", self.id, self.status))
        })?;
        let spec = serde_json::from_str(&self.spec).map_err(|e| {
            StoreError::Corrupt(format!("stored spec of {} is damaged: {e}", self.id))
        })?;
        Ok(CampaignRecord {
            id: self.id,
            name: self.name,
            spec,
            status,
            created_ms: self.created_ms,
            rerun_of: self.rerun_of,
            host: self.host,
            series: self.series,
            search: self.search.map(Document::kept),
            runs_total: self.runs_total,
            runs_finished: self.runs_finished,
            runs_done: self.runs_done,
            runs_cancelled: self.runs_cancelled,
            runs_failed: self.runs_failed,
            best_mb_per_s: self.best_mb_per_s,
            // A survey kept in an older shape reads as none: the campaign is surveyed again,
            // never refused.
            survey: self
                .survey
                .as_deref()
                .and_then(|json| serde_json::from_str(json).ok()),
            judgement: self.judgement.map(Document::kept),
            headline: self.headline.map(Document::kept),
        })
    }
}

row_struct! {
struct RunRow {
    id: i64,
    position: i64,
    test: String,
    params: String,
    status: String,
    attempts: i64,
    started_ms: Option<i64>,
    finished_ms: Option<i64>,
    result: Option<String>,
    host: Option<String>,
}
}

/// What a run cancelled before it started reports: it has no stored result.
const CANCELLED_BEFORE_START: &str = "cancelled before it started";

impl RunRow {
    fn into_record(self, samples: Vec<Sample>) -> Result<RunRecord, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("run {}: {what}", self.id));
        let test = TestKind::from_id(&self.test).ok_or_else(|| corrupt("unknown test"))?;
        let params: RunParams =
            serde_json::from_str(&self.params).map_err(|e| corrupt(&format!("params: {e}")))?;
        let status = RunState::from_id(&self.status).ok_or_else(|| corrupt("unknown status"))?;
        let result = match (status.finished(), &self.result) {
            (None, _) => None,
            (Some(_), Some(json)) => {
                // A result that cannot be read costs its run, not the campaign: the run shows
                // as failed with the reason, and every other run of the campaign still shows.
                let mut result = serde_json::from_str::<RunResult>(json).unwrap_or_else(|e| {
                    tracing::warn!(run = self.id, "stored result cannot be read: {e}");
                    RunResult::failed(
                        test,
                        params.clone(),
                        format!("its stored result cannot be read ({e}); run it again"),
                    )
                });
                result.samples = samples.clone();
                Some(result)
            }
            (Some(ended), None) => Some(RunResult {
                status: ended,
                ..RunResult::failed(test, params.clone(), CANCELLED_BEFORE_START.to_string())
            }),
        };
        Ok(RunRecord {
            id: self.id,
            position: self.position,
            number: self.position + 1,
            test,
            params,
            status,
            attempts: self.attempts,
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            host: self.host,
            samples: if result.is_some() {
                Vec::new()
            } else {
                samples
            },
            result,
        })
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("cannot encode: {e}")))
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl FromStr for RunState {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        RunState::from_id(text).ok_or_else(|| {
            format!(
                "unknown status {text:?}; one of {}",
                RunState::ALL.map(RunState::id).join(", ")
            )
        })
    }
}
