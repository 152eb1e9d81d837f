//! Runs in the store: read with their samples, claimed under a lease, sampled while they
//! execute, finished or interrupted by the attempt that holds them, recovered at start, and
//! counted for `/metrics` and `/healthz`.

use std::str::FromStr;

// Statements built with `format!` only join this module's own fragments, never input.
use sqlx::{AssertSqlSafe, Row};

use crate::engine::result::{RunResult, Sample};
use crate::spec::{RunParams, TestKind};

use super::model::{
    ClaimedRun, QueueFigures, Recovery, RunRecord, RunState, StoredPlan, UnreadableRun,
};
use super::{DURATION_BUCKETS, HeldRun, Pool, Store, StoreError, to_json};

/// A live or final sample, written again when a run reports the same instant twice.
const UPSERT_SAMPLE: &str = "INSERT INTO samples (run_id, t, mb_per_s) VALUES ($1, $2, $3)
     ON CONFLICT (run_id, t) DO UPDATE SET mb_per_s = excluded.mb_per_s";

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

impl Store {
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
    /// `lease_until_ms`, reads its campaign and drops samples an earlier attempt left, in one
    /// transaction: two claims at once never take the same run, and a claim that fails leaves
    /// the run queued. A run whose stored test or parameters cannot be read is ended failed in
    /// that transaction instead, never to be claimed again, and named in
    /// [`StoreError::UnreadableRun`]: its campaign's end is the caller's.
    pub async fn claim_next(
        &self,
        host: &str,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> Result<Option<ClaimedRun>, StoreError> {
        let sql = self.claim_sql();
        let begin = self.backend().begin_write();
        let (run, campaign, read) = on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let Some(row) = sqlx::query(AssertSqlSafe(sql.as_str()))
                .bind(now_ms)
                .bind(host)
                .bind(lease_until_ms)
                .fetch_optional(&mut *tx)
                .await?
            else {
                return Ok(None);
            };
            let run: ClaimedRow = (
                row.try_get("id")?,
                row.try_get("campaign_seq")?,
                row.try_get("position")?,
                row.try_get("test")?,
                row.try_get("params")?,
                row.try_get("attempts")?,
            );
            let campaign: ClaimedCampaign = sqlx::query_as(
                "SELECT id, plan, CASE WHEN plan IS NULL THEN spec END,
                        (SELECT COUNT(*) FROM runs WHERE campaign_seq = c.seq),
                        COALESCE(checked_by <> $2, FALSE)
                 FROM campaigns AS c WHERE seq = $1",
            )
            .bind(run.1)
            .bind(host)
            .fetch_one(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM samples WHERE run_id = $1")
                .bind(run.0)
                .execute(&mut *tx)
                .await?;
            let read = read_claimed(run.2, &run.3, &run.4);
            if read.is_err() {
                sqlx::query(
                    "UPDATE runs SET status = 'failed', finished_ms = $1, lease_ms = NULL
                     WHERE id = $2",
                )
                .bind(now_ms)
                .bind(run.0)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            (run, campaign, read)
        });
        claimed_run(run, campaign, read).map(Some)
    }

    /// The statement that claims the oldest queued run this host may take, under its lease,
    /// and returns it: the backend says which runs are the host's and how the row is locked.
    fn claim_sql(&self) -> String {
        format!(
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
        )
    }

    /// Records a live sample of a running run, while `run` is the attempt that holds it: an
    /// attempt stopped or taken back leaves the samples of the next one alone.
    pub async fn add_sample(&self, run: HeldRun, sample: Sample) -> Result<(), StoreError> {
        // Kept only while the attempt `$4` holds the run.
        let sql = format!(
            "INSERT INTO samples (run_id, t, mb_per_s)
             SELECT $1, $2, $3 WHERE EXISTS
                 (SELECT 1 FROM runs WHERE id = $1 AND status = 'running' AND attempts = $4{})
             ON CONFLICT (run_id, t) DO UPDATE SET mb_per_s = excluded.mb_per_s",
            self.backend().share_lock()
        );
        on_backend!(self, pool => {
            sqlx::query(AssertSqlSafe(sql.as_str()))
                .bind(run.run_id)
                .bind(sample.t)
                .bind(sample.mb_per_s)
                .bind(run.attempt)
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

/// A claimed run as its row reads: id, campaign row number, position, test, parameters (JSON)
/// and attempt.
type ClaimedRow = (i64, i64, i64, String, String, i64);

/// A claimed run's campaign as its row reads: id, placement (JSON), spec (JSON, read only
/// without a placement), runs in all, and whether another host checked it.
type ClaimedCampaign = (String, Option<String>, Option<String>, i64, bool);

/// The claimed run from its rows and what its position, test and parameters read as: the
/// run to execute, or why it cannot be (the claim then failed it).
fn claimed_run(
    run: ClaimedRow,
    campaign: ClaimedCampaign,
    read: Result<(usize, TestKind, RunParams), String>,
) -> Result<ClaimedRun, StoreError> {
    let (run_id, _, position, test, _, attempt) = run;
    let (campaign_id, placement_json, spec_json, runs_total, checked_elsewhere) = campaign;
    let (position, test, params) = match read {
        Ok(read) => read,
        Err(why) => {
            return Err(StoreError::UnreadableRun(Box::new(UnreadableRun {
                run_id,
                campaign_id,
                position: usize::try_from(position).unwrap_or(0),
                test,
                why,
            })));
        }
    };
    Ok(ClaimedRun {
        run_id,
        campaign_id,
        position,
        test,
        params,
        plan: stored_plan(placement_json, spec_json),
        runs_total: usize::try_from(runs_total).unwrap_or(0),
        attempt,
        checked_elsewhere,
    })
}

/// What a claimed run's campaign is planned by: its placement, else its spec, each read from
/// its JSON; unreadable when neither reads.
fn stored_plan(placement_json: Option<String>, spec_json: Option<String>) -> StoredPlan {
    match (placement_json, spec_json) {
        (Some(json), _) => serde_json::from_str(&json).map_or_else(
            |e| StoredPlan::Unreadable(format!("the stored placement cannot be read: {e}")),
            StoredPlan::Placement,
        ),
        (None, Some(json)) => serde_json::from_str(&json).map_or_else(
            |e| StoredPlan::Unreadable(format!("the stored spec cannot be read: {e}")),
            |spec| StoredPlan::Spec(Box::new(spec)),
        ),
        (None, None) => {
            StoredPlan::Unreadable("the campaign has neither a placement nor a spec".to_string())
        }
    }
}

/// A claimed run's place, test and parameters as stored, read; or why they cannot be.
fn read_claimed(
    position: i64,
    test: &str,
    params: &str,
) -> Result<(usize, TestKind, RunParams), String> {
    let position = usize::try_from(position)
        .map_err(|_| format!("its stored position {position} is not a place in a campaign"))?;
    let test = TestKind::from_id(test)
        .ok_or_else(|| format!("its stored test {test:?} is not one this lab knows"))?;
    let params = serde_json::from_str(params)
        .map_err(|e| format!("its stored parameters cannot be read: {e}"))?;
    Ok((position, test, params))
}

/// A count as the database keeps it: past `i64::MAX`, `i64::MAX`.
fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
