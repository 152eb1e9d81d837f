//! Schedules and their firings. Firing is a compare-and-set on a schedule's next occurrence, so
//! that of several labs on one database exactly one fires each occurrence.

use sqlx::Row;

use super::model::{FiringRecord, ScheduleRecord};
use super::{Pool, Store, StoreError};

/// The columns of a schedule, in [`ScheduleRecord::from_row`]'s order.
const SCHEDULE_COLUMNS: &str = "id, name, cron, spec, paused, created_ms, next_ms, fired, \
                                missed, last_missed_ms, last_error";

/// The most schedules a lab keeps.
pub const MAX_SCHEDULES: i64 = 1000;

/// Firings listed with a schedule, newest first.
const FIRINGS_SHOWN: i64 = 50;
/// The firings a schedule keeps, its newest: what its page shows, and some history besides.
pub const FIRINGS_KEPT: i64 = 200;

/// A schedule read from a row of [`SCHEDULE_COLUMNS`].
macro_rules! schedule_of_row {
    ($row:expr) => {{
        let row = $row;
        ScheduleRecord {
            id: row.get(0),
            name: row.get(1),
            cron: row.get(2),
            spec: row.get(3),
            paused: row.get::<i64, _>(4) != 0,
            created_ms: row.get(5),
            next_ms: row.get(6),
            fired: row.get(7),
            missed: row.get(8),
            last_missed_ms: row.get(9),
            last_error: row.get(10),
        }
    }};
}

/// A firing read from a row whose columns from `$first` are occurrence_ms, host, fired_ms,
/// campaign_id and error.
macro_rules! firing_of_row {
    ($row:expr, $first:expr) => {{
        let row = $row;
        FiringRecord {
            occurrence_ms: row.get($first),
            host: row.get($first + 1),
            fired_ms: row.get($first + 2),
            campaign_id: row.get($first + 3),
            error: row.get($first + 4),
        }
    }};
}

macro_rules! schedule_rows {
    ($store:expr, $sql:expr, $($bind:expr),*) => {{
        let rows: Vec<ScheduleRecord> = on_backend!($store, pool => {
            sqlx::query(sqlx::AssertSqlSafe($sql))
                $(.bind($bind))*
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| schedule_of_row!(row))
                .collect()
        });
        rows
    }};
}

impl Store {
    /// Stores a new schedule; false when the lab already keeps [`MAX_SCHEDULES`].
    pub async fn insert_schedule(&self, schedule: &ScheduleRecord) -> Result<bool, StoreError> {
        let inserted = on_backend!(self, pool => {
            sqlx::query(
                "INSERT INTO schedules (id, name, cron, spec, paused, created_ms, next_ms)
                 SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS TEXT), CAST($4 AS TEXT),
                        CAST($5 AS BIGINT), CAST($6 AS BIGINT), CAST($7 AS BIGINT)
                 WHERE (SELECT COUNT(*) FROM schedules) < CAST($8 AS BIGINT)",
            )
            .bind(&schedule.id)
            .bind(&schedule.name)
            .bind(&schedule.cron)
            .bind(&schedule.spec)
            .bind(i64::from(schedule.paused))
            .bind(schedule.created_ms)
            .bind(schedule.next_ms)
            .bind(MAX_SCHEDULES)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(inserted == 1)
    }

    /// Where a page of schedules starts: after the schedule `after` names (its creation time
    /// and id, the list's order), or at the first. `Ok(None)` when `after` names none.
    async fn schedule_cursor(
        &self,
        after: Option<&str>,
    ) -> Result<Option<(i64, String)>, StoreError> {
        let Some(id) = after else {
            return Ok(Some((i64::MIN, String::new())));
        };
        let created_ms: Option<i64> = on_backend!(self, pool => {
            sqlx::query_scalar("SELECT created_ms FROM schedules WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        Ok(created_ms.map(|created_ms| (created_ms, id.to_string())))
    }

    /// A page of schedules, oldest first: at most `limit` after the one `after` names (from
    /// the first without it). `Ok(None)` when `after` names no schedule.
    pub async fn schedules(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Option<Vec<ScheduleRecord>>, StoreError> {
        let Some((after_ms, after_id)) = self.schedule_cursor(after).await? else {
            return Ok(None);
        };
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules
             WHERE created_ms > $1 OR (created_ms = $1 AND id > $2)
             ORDER BY created_ms, id LIMIT $3"
        );
        Ok(Some(schedule_rows!(
            self,
            sql.as_str(),
            after_ms,
            &after_id,
            i64::from(limit)
        )))
    }

    /// A page of schedules as [`Store::schedules`] reads it, each with its newest `shown`
    /// firings (newest first), read in one snapshot with two statements whatever the page's
    /// size; the firings of other schedules are not read. `Ok(None)` when `after` names no
    /// schedule.
    pub async fn schedules_with_firings(
        &self,
        after: Option<&str>,
        limit: u32,
        shown: i64,
    ) -> Result<Option<Vec<(ScheduleRecord, Vec<FiringRecord>)>>, StoreError> {
        let Some((after_ms, after_id)) = self.schedule_cursor(after).await? else {
            return Ok(None);
        };
        let limit = i64::from(limit);
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules
             WHERE created_ms > $1 OR (created_ms = $1 AND id > $2)
             ORDER BY created_ms, id LIMIT $3"
        );
        let begin = self.backend().begin_snapshot();
        let (records, firings): (Vec<ScheduleRecord>, Vec<(String, FiringRecord)>) = on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let records = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                .bind(after_ms)
                .bind(&after_id)
                .bind(limit)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|row| schedule_of_row!(row))
                .collect();
            let firings = sqlx::query(
                "SELECT schedule_id, occurrence_ms, host, fired_ms, campaign_id, error
                     FROM (SELECT f.*, ROW_NUMBER() OVER (PARTITION BY schedule_id
                                                          ORDER BY occurrence_ms DESC) AS newest
                           FROM schedule_firings AS f
                           WHERE f.schedule_id IN
                               (SELECT id FROM schedules
                                WHERE created_ms > $2 OR (created_ms = $2 AND id > $3)
                                ORDER BY created_ms, id LIMIT $4)) AS ranked
                     WHERE newest <= $1 ORDER BY schedule_id, occurrence_ms DESC",
            )
            .bind(shown)
            .bind(after_ms)
            .bind(&after_id)
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|row| (row.get(0), firing_of_row!(row, 1)))
            .collect();
            tx.commit().await?;
            (records, firings)
        });
        let mut by_schedule: std::collections::HashMap<String, Vec<FiringRecord>> =
            std::collections::HashMap::new();
        for (id, firing) in firings {
            by_schedule.entry(id).or_default().push(firing);
        }
        Ok(Some(
            records
                .into_iter()
                .map(|record| {
                    let firings = by_schedule.remove(&record.id).unwrap_or_default();
                    (record, firings)
                })
                .collect(),
        ))
    }

    /// One schedule and its newest firings (newest first), read in one snapshot: a firing is
    /// never shown beside counters that do not count it yet.
    pub async fn schedule(
        &self,
        id: &str,
    ) -> Result<Option<(ScheduleRecord, Vec<FiringRecord>)>, StoreError> {
        let sql = format!("SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE id = $1");
        let begin = self.backend().begin_snapshot();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let record = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
                .map(|row| schedule_of_row!(&row));
            let firings = match record {
                Some(_) => sqlx::query(
                    "SELECT occurrence_ms, host, fired_ms, campaign_id, error
                     FROM schedule_firings
                     WHERE schedule_id = $1 ORDER BY occurrence_ms DESC LIMIT $2",
                )
                .bind(id)
                .bind(FIRINGS_SHOWN)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|row| firing_of_row!(row, 0))
                .collect(),
                None => Vec::new(),
            };
            tx.commit().await?;
            record.map(|record| (record, firings))
        }))
    }

    /// The schedules not paused whose next occurrence is at or before `now_ms`.
    pub async fn schedules_due(&self, now_ms: i64) -> Result<Vec<ScheduleRecord>, StoreError> {
        let sql =
            format!("SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE paused = 0 AND next_ms <= $1");
        Ok(schedule_rows!(self, sql.as_str(), now_ms))
    }

    /// Replaces a schedule's name, pattern, spec, pause and next occurrence; false when there
    /// is no such schedule.
    pub async fn update_schedule(&self, schedule: &ScheduleRecord) -> Result<bool, StoreError> {
        let updated = on_backend!(self, pool => {
            sqlx::query(
                "UPDATE schedules SET name = $2, cron = $3, spec = $4, paused = $5, next_ms = $6,
                 last_error = NULL WHERE id = $1",
            )
            .bind(&schedule.id)
            .bind(&schedule.name)
            .bind(&schedule.cron)
            .bind(&schedule.spec)
            .bind(i64::from(schedule.paused))
            .bind(schedule.next_ms)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(updated == 1)
    }

    /// Deletes a schedule and its firings (its campaigns stay); false when there was none.
    pub async fn delete_schedule(&self, id: &str) -> Result<bool, StoreError> {
        let deleted = on_backend!(self, pool => {
            sqlx::query("DELETE FROM schedules WHERE id = $1")
                .bind(id)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(deleted == 1)
    }

    /// Takes the occurrences due at a schedule whose next occurrence was read as `seen_next_ms`:
    /// moves it to `next_ms`, counting `missed` and, when `fire` is given, recording that
    /// `host` fires it. True for the one lab whose read was still current; every other lab
    /// gets false and does nothing.
    #[allow(clippy::too_many_arguments)]
    pub async fn take_occurrences(
        &self,
        id: &str,
        seen_next_ms: i64,
        next_ms: i64,
        missed: u32,
        last_missed_ms: Option<i64>,
        fire: Option<i64>,
        host: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let begin = self.backend().begin_write();
        let taken = on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let moved = sqlx::query(
                "UPDATE schedules SET next_ms = $3, missed = missed + $4,
                 last_missed_ms = COALESCE(CAST($5 AS BIGINT), last_missed_ms),
                 fired = fired + $6
                 WHERE id = $1 AND next_ms = $2 AND paused = 0",
            )
            .bind(id)
            .bind(seen_next_ms)
            .bind(next_ms)
            .bind(i64::from(missed))
            .bind(last_missed_ms)
            .bind(i64::from(fire.is_some()))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if moved == 1 && let Some(occurrence) = fire {
                sqlx::query(
                    "INSERT INTO schedule_firings (schedule_id, occurrence_ms, host, fired_ms)
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(id)
                .bind(occurrence)
                .bind(host)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
                // A schedule keeps its newest firings only: an every-minute schedule would
                // otherwise add 1 440 rows a day, forever.
                sqlx::query(
                    "DELETE FROM schedule_firings WHERE schedule_id = $1 AND occurrence_ms <
                     (SELECT MIN(occurrence_ms) FROM (SELECT occurrence_ms FROM schedule_firings
                      WHERE schedule_id = $1 ORDER BY occurrence_ms DESC LIMIT $2) AS newest)",
                )
                .bind(id)
                .bind(FIRINGS_KEPT)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            moved == 1
        });
        Ok(taken)
    }

    /// Records what became of a firing: the campaign it queued, or why none was.
    pub async fn settle_firing(
        &self,
        id: &str,
        occurrence_ms: i64,
        outcome: Result<&str, &str>,
    ) -> Result<(), StoreError> {
        let (campaign, error) = match outcome {
            Ok(campaign) => (Some(campaign), None),
            Err(error) => (None, Some(error)),
        };
        on_backend!(self, pool => {
            sqlx::query(
                "UPDATE schedule_firings SET campaign_id = $3, error = $4
                 WHERE schedule_id = $1 AND occurrence_ms = $2",
            )
            .bind(id)
            .bind(occurrence_ms)
            .bind(campaign)
            .bind(error)
            .execute(pool)
            .await?;
            sqlx::query("UPDATE schedules SET last_error = $2 WHERE id = $1")
                .bind(id)
                .bind(error)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}
