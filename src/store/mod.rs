//! The lab's memory: campaigns, runs and samples in one SQLite file. The only module with SQL.
//!
//! Writes are single statements or `BEGIN IMMEDIATE` transactions, so two writers never
//! deadlock on a lock upgrade; WAL mode lets readers run beside the worker's writes.

pub mod model;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{FromRow, Row};

use crate::engine::result::{RunResult, Sample};
use crate::spec::{RunParams, TestKind};

pub use model::{
    CampaignRecord, CampaignStatus, CancelOutcome, ClaimedRun, DeleteOutcome, NewCampaign,
    QueueFigures, Recovery, RunRecord, RunState,
};

/// The columns of a campaign record: its row, and its status and run counts aggregated from
/// its runs in the same pass: a campaign's status follows from its runs' statuses, and this is
/// the one place that rule is written. Followed by a WHERE on `c`, then [`campaign_group!`].
macro_rules! campaign_select {
    () => {
        "SELECT c.seq, c.id, c.name, c.spec, c.created_ms, c.rerun_of, c.survey, c.verdict, c.headline,
                CASE
                    WHEN SUM(r.status = 'running') > 0 THEN 'running'
                    WHEN SUM(r.status = 'interrupted') > 0 THEN 'interrupted'
                    WHEN SUM(r.status = 'queued') = COUNT(*) THEN 'queued'
                    WHEN SUM(r.status = 'queued') > 0 THEN 'running'
                    WHEN SUM(r.status = 'cancelled') > 0 THEN 'cancelled'
                    WHEN SUM(r.status = 'failed') > 0 THEN 'failed'
                    ELSE 'done'
                END AS status,
                COUNT(*) AS runs_total,
                SUM(r.status IN ('done', 'failed', 'cancelled')) AS runs_finished,
                SUM(r.status = 'done') AS runs_done,
                SUM(r.status = 'cancelled') AS runs_cancelled,
                SUM(r.status = 'failed') AS runs_failed,
                MAX(CASE WHEN r.status = 'done' THEN r.mb_per_s END) AS best_mb_per_s
         FROM campaigns AS c JOIN runs AS r ON r.campaign_seq = c.seq"
    };
}

/// Ends [`campaign_select!`]: one row per campaign.
macro_rules! campaign_group {
    () => {
        " GROUP BY c.seq"
    };
}

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
}

/// Which neighbour of a campaign among those of its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Neighbour {
    /// The newest older one.
    Previous,
    /// The oldest newer one.
    Next,
}

/// A handle on the lab's database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating if needed) the database file and brings its schema up to date.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(Self { pool })
    }

    /// Closes every connection, checkpointing the WAL.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Stores a campaign and every run it expands to, in one transaction.
    pub async fn insert_campaign(
        &self,
        campaign: &NewCampaign,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let seq: i64 = sqlx::query_scalar(
            "INSERT INTO campaigns (id, name, spec, plan, created_ms, rerun_of)
             VALUES (?, ?, ?, ?, ?, ?)
             RETURNING seq",
        )
        .bind(&campaign.id)
        .bind(&campaign.name)
        .bind(&campaign.spec_json)
        .bind(&campaign.placement_json)
        .bind(now_ms)
        .bind(&campaign.rerun_of)
        .fetch_one(&mut *tx)
        .await?;
        for (position, (test, params)) in campaign.runs.iter().enumerate() {
            sqlx::query(
                "INSERT INTO runs (campaign_seq, position, test, params) VALUES (?, ?, ?, ?)",
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
    }

    /// One campaign, without its runs.
    pub async fn campaign(&self, id: &str) -> Result<Option<CampaignRecord>, StoreError> {
        let row = sqlx::query_as::<_, CampaignRow>(concat!(
            campaign_select!(),
            " WHERE c.id = ?",
            campaign_group!()
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(CampaignRow::into_record).transpose()
    }

    /// The ids of the campaigns queued as reruns of `campaign_id`, oldest first.
    pub async fn reruns_of(&self, campaign_id: &str) -> Result<Vec<String>, StoreError> {
        let ids = sqlx::query_scalar::<_, String>(
            "SELECT id FROM campaigns WHERE rerun_of = ? ORDER BY seq",
        )
        .bind(campaign_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(ids)
    }

    /// The campaign next to `campaign_id` among those with the same spec, its name aside:
    /// the newest older one (the one its figures are compared with first), or the oldest newer
    /// one (the one whose report names `campaign_id` as its previous).
    pub async fn same_spec_neighbour(
        &self,
        campaign_id: &str,
        which: Neighbour,
    ) -> Result<Option<String>, StoreError> {
        let sql = match which {
            Neighbour::Previous => {
                "SELECT o.id FROM campaigns c JOIN campaigns o \
                 ON json_remove(o.spec, '$.name') = json_remove(c.spec, '$.name') \
                 AND o.seq < c.seq WHERE c.id = ? ORDER BY o.seq DESC LIMIT 1"
            }
            Neighbour::Next => {
                "SELECT o.id FROM campaigns c JOIN campaigns o \
                 ON json_remove(o.spec, '$.name') = json_remove(c.spec, '$.name') \
                 AND o.seq > c.seq WHERE c.id = ? ORDER BY o.seq LIMIT 1"
            }
        };
        let id = sqlx::query_scalar::<_, String>(sql)
            .bind(campaign_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(id)
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
                let mut conn = self.pool.acquire().await?;
                match campaign_seq(&mut conn, id).await? {
                    Some(seq) => seq,
                    None => return Ok(None),
                }
            }
            None => i64::MAX,
        };
        let rows = sqlx::query_as::<_, CampaignRow>(concat!(
            campaign_select!(),
            // Walks campaigns newest first and stops after a page: the unfiltered list reads
            // only the runs of the campaigns it shows.
            " WHERE c.seq < ?2",
            campaign_group!(),
            " HAVING (?1 IS NULL OR status = ?1) ORDER BY c.seq DESC LIMIT ?3"
        ))
        .bind(status.map(RunState::id))
        .bind(before_seq)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(CampaignRow::into_record)
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// Every run of a campaign in plan order, with results where finished.
    pub async fn runs(&self, campaign_id: &str) -> Result<Vec<RunRecord>, StoreError> {
        let rows = sqlx::query_as::<_, RunRow>(
            "SELECT r.* FROM runs AS r JOIN campaigns AS c ON c.seq = r.campaign_seq
             WHERE c.id = ? ORDER BY r.position",
        )
        .bind(campaign_id)
        .fetch_all(&self.pool)
        .await?;
        // All samples of the campaign in one query, split by run.
        let samples: Vec<(i64, f64, f64)> = sqlx::query_as(
            "SELECT s.run_id, s.t, s.mb_per_s FROM samples AS s
             JOIN runs AS r ON r.id = s.run_id JOIN campaigns AS c ON c.seq = r.campaign_seq
             WHERE c.id = ? ORDER BY s.run_id, s.t",
        )
        .bind(campaign_id)
        .fetch_all(&self.pool)
        .await?;
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

    /// Takes the oldest queued run of any campaign and marks it running, atomically.
    pub async fn claim_next(&self, now_ms: i64) -> Result<Option<ClaimedRun>, StoreError> {
        let row = sqlx::query(
            "UPDATE runs SET status = 'running', attempts = attempts + 1, started_ms = ?1
             WHERE id = (SELECT id FROM runs WHERE status = 'queued' ORDER BY id LIMIT 1)
             RETURNING id, campaign_seq, position, test, params",
        )
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let run_id: i64 = row.try_get("id")?;
        let seq: i64 = row.try_get("campaign_seq")?;
        let position: i64 = row.try_get("position")?;
        let test: String = row.try_get("test")?;
        let params: String = row.try_get("params")?;
        let test = TestKind::from_id(&test)
            .ok_or_else(|| StoreError::Corrupt(format!("run {run_id} has test {test:?}")))?;
        let params: RunParams = serde_json::from_str(&params)
            .map_err(|e| StoreError::Corrupt(format!("run {run_id} params: {e}")))?;
        let (campaign_id, placement_json, spec_json, runs_total): (
            String,
            Option<String>,
            Option<String>,
            i64,
        ) = sqlx::query_as(
            "SELECT id, plan, CASE WHEN plan IS NULL THEN spec END,
                    (SELECT COUNT(*) FROM runs WHERE campaign_seq = c.seq)
             FROM campaigns AS c WHERE seq = ?",
        )
        .bind(seq)
        .fetch_one(&self.pool)
        .await?;
        sqlx::query("DELETE FROM samples WHERE run_id = ?")
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(Some(ClaimedRun {
            run_id,
            campaign_id,
            position: usize::try_from(position).map_err(|_| {
                StoreError::Corrupt(format!("run {run_id} has position {position}"))
            })?,
            test,
            params,
            placement_json,
            spec_json,
            runs_total: usize::try_from(runs_total).unwrap_or(0),
        }))
    }

    /// Keeps the survey of a campaign's source, taken before its first run.
    pub async fn set_survey(&self, campaign_id: &str, survey_json: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE campaigns SET survey = ? WHERE id = ?")
            .bind(survey_json)
            .bind(campaign_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Keeps a finished campaign's verdict line and headline (JSON), for the list.
    pub async fn set_verdict(
        &self,
        campaign_id: &str,
        verdict: &str,
        headline_json: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE campaigns SET verdict = ?, headline = ? WHERE id = ?")
            .bind(verdict)
            .bind(headline_json)
            .bind(campaign_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records a live sample of a running run.
    pub async fn add_sample(&self, run_id: i64, sample: Sample) -> Result<(), StoreError> {
        sqlx::query("INSERT OR REPLACE INTO samples (run_id, t, mb_per_s) VALUES (?, ?, ?)")
            .bind(run_id)
            .bind(sample.t)
            .bind(sample.mb_per_s)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Stores a finished run's result and its samples in one transaction. The run keeps its
    /// result only while it is still `running`: a run deleted meanwhile is left alone.
    pub async fn finish_run(
        &self,
        run_id: i64,
        result: &RunResult,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let status = RunState::from(result.status);
        // The document leaves the samples out: they have their own table.
        let document = to_json(&RunResult {
            samples: Vec::new(),
            ..result.clone()
        })?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(
            "UPDATE runs SET status = ?, finished_ms = ?, bytes = ?, seconds = ?, mb_per_s = ?,
                result = ?
             WHERE id = ? AND status = 'running'",
        )
        .bind(status.id())
        .bind(now_ms)
        .bind(to_i64(result.bytes))
        .bind(result.seconds)
        .bind(result.mb_per_s)
        .bind(document)
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM samples WHERE run_id = ?")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        for sample in &result.samples {
            sqlx::query("INSERT OR REPLACE INTO samples (run_id, t, mb_per_s) VALUES (?, ?, ?)")
                .bind(run_id)
                .bind(sample.t)
                .bind(sample.mb_per_s)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Marks a run stopped by a shutdown: it will be queued again at the next start.
    pub async fn interrupt_run(&self, run_id: i64) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query("UPDATE runs SET status = 'interrupted' WHERE id = ? AND status = 'running'")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM samples WHERE run_id = ?")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// At start-up: runs left running by a crash, or interrupted by a shutdown, go back on the
    /// queue; their partial samples are dropped.
    pub async fn recover(&self) -> Result<Recovery, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let spec_jsons: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT c.spec FROM campaigns AS c JOIN runs AS r ON r.campaign_seq = c.seq
             WHERE r.status IN ('running', 'interrupted')",
        )
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM samples WHERE run_id IN
                (SELECT id FROM runs WHERE status IN ('running', 'interrupted'))",
        )
        .execute(&mut *tx)
        .await?;
        let requeued = sqlx::query(
            "UPDATE runs SET status = 'queued', started_ms = NULL
             WHERE status IN ('running', 'interrupted')",
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(Recovery {
            requeued,
            spec_jsons,
        })
    }

    /// Cancels a campaign's queued runs and names its running ones. `Ok(None)` for an unknown id.
    pub async fn cancel_campaign(
        &self,
        campaign_id: &str,
        now_ms: i64,
    ) -> Result<Option<CancelOutcome>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let Some(seq) = campaign_seq(&mut tx, campaign_id).await? else {
            return Ok(None);
        };
        let cancelled_queued = sqlx::query(
            "UPDATE runs SET status = 'cancelled', finished_ms = ?
             WHERE campaign_seq = ? AND status IN ('queued', 'interrupted')",
        )
        .bind(now_ms)
        .bind(seq)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let running: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM runs WHERE campaign_seq = ? AND status = 'running'")
                .bind(seq)
                .fetch_all(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(Some(CancelOutcome {
            cancelled_queued,
            running,
        }))
    }

    /// Deletes a campaign with its runs and samples, unless one of its runs is executing.
    pub async fn delete_campaign(&self, campaign_id: &str) -> Result<DeleteOutcome, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let Some(seq) = campaign_seq(&mut tx, campaign_id).await? else {
            return Ok(DeleteOutcome::NotFound);
        };
        let running: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM runs WHERE campaign_seq = ? AND status = 'running'",
        )
        .bind(seq)
        .fetch_one(&mut *tx)
        .await?;
        if running > 0 {
            return Ok(DeleteOutcome::Running);
        }
        sqlx::query("DELETE FROM campaigns WHERE seq = ?")
            .bind(seq)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(DeleteOutcome::Deleted)
    }

    /// Run counts by status, bytes moved and the run-duration histogram, for `/metrics`.
    pub async fn queue_figures(&self) -> Result<QueueFigures, StoreError> {
        let runs_by_status = self.runs_by_status().await?;
        // Sums and the histogram's cumulative counts in one pass over the finished runs: one
        // `SUM(seconds <= ?)` per bucket bound.
        const _: () = assert!(DURATION_BUCKETS.len() == 8);
        let mut query = sqlx::query(
            "SELECT COALESCE(SUM(bytes), 0), COALESCE(SUM(seconds), 0.0), COUNT(seconds),
                    SUM(seconds <= ?), SUM(seconds <= ?), SUM(seconds <= ?), SUM(seconds <= ?),
                    SUM(seconds <= ?), SUM(seconds <= ?), SUM(seconds <= ?), SUM(seconds <= ?)
             FROM runs WHERE status IN ('done', 'failed', 'cancelled')",
        );
        for bound in DURATION_BUCKETS {
            query = query.bind(bound);
        }
        let row = query.fetch_one(&self.pool).await?;
        let mut duration_buckets = Vec::with_capacity(DURATION_BUCKETS.len());
        for (index, bound) in DURATION_BUCKETS.into_iter().enumerate() {
            let count: Option<i64> = row.try_get(3 + index)?;
            duration_buckets.push((bound, count.unwrap_or(0)));
        }
        Ok(QueueFigures {
            runs_by_status,
            bytes_moved: row.try_get(0)?,
            duration_buckets,
            duration_sum: row.try_get(1)?,
            duration_count: row.try_get(2)?,
        })
    }

    /// How many runs are in each state, every state listed; one query.
    pub async fn runs_by_status(&self) -> Result<Vec<(RunState, i64)>, StoreError> {
        let counts: Vec<(String, i64)> =
            sqlx::query_as("SELECT status, COUNT(*) FROM runs GROUP BY status")
                .fetch_all(&self.pool)
                .await?;
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

/// The row number of a campaign id, if there is such a campaign.
async fn campaign_seq(
    conn: &mut sqlx::SqliteConnection,
    campaign_id: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar("SELECT seq FROM campaigns WHERE id = ?")
        .bind(campaign_id)
        .fetch_optional(conn)
        .await?)
}

#[derive(FromRow)]
struct CampaignRow {
    #[allow(dead_code)]
    seq: i64,
    id: String,
    name: String,
    spec: String,
    created_ms: i64,
    rerun_of: Option<String>,
    survey: Option<String>,
    verdict: Option<String>,
    headline: Option<String>,
    status: String,
    runs_total: i64,
    runs_finished: i64,
    runs_done: i64,
    runs_cancelled: i64,
    runs_failed: i64,
    best_mb_per_s: Option<f64>,
}

impl CampaignRow {
    fn into_record(self) -> Result<CampaignRecord, StoreError> {
        let status = RunState::from_id(&self.status).ok_or_else(|| {
            StoreError::Corrupt(format!("campaign {} has status {:?}", self.id, self.status))
        })?;
        Ok(CampaignRecord {
            id: self.id,
            name: self.name,
            spec_json: self.spec,
            status,
            created_ms: self.created_ms,
            rerun_of: self.rerun_of,
            runs_total: self.runs_total,
            runs_finished: self.runs_finished,
            runs_done: self.runs_done,
            runs_cancelled: self.runs_cancelled,
            runs_failed: self.runs_failed,
            best_mb_per_s: self.best_mb_per_s,
            survey_json: self.survey,
            verdict: self.verdict,
            headline_json: self.headline,
        })
    }
}

#[derive(FromRow)]
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
                let mut result: RunResult =
                    serde_json::from_str(json).map_err(|e| corrupt(&format!("result: {e}")))?;
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
            test,
            params,
            status,
            attempts: self.attempts,
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
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
