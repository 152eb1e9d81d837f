//! Campaigns in the store: inserted with their runs (within the queue's bound), read back
//! with their status and counts, listed, kept judgements and surveys, cancelled and deleted.

// Statements built with `format!` only join this module's own fragments, never input.
use sqlx::AssertSqlSafe;

use crate::engine::survey::Survey;

use super::model::{
    CampaignRecord, CampaignStatus, CancelOutcome, DeleteOutcome, NewCampaign, RunState,
};
use super::{Document, Pool, Store, StoreError, search, to_json};

/// Which neighbour of a campaign among those of its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Neighbour {
    /// The newest older one.
    Previous,
    /// The oldest newer one.
    Next,
}

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

impl Store {
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
