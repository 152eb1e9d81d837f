//! Campaigns by series: the key each is stored under, its judged campaigns oldest first, and
//! the newest judged campaign of every series.

use sqlx::Row;

use super::{Document, Pool, Store, StoreError};

/// A campaign of a series with the judgement kept when it finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedCampaign {
    pub id: String,
    pub name: String,
    pub created_ms: i64,
    pub judgement: Document,
}

/// Campaigns keyed per pass when keys are filled in for campaigns stored before series.
const KEY_BATCH: i64 = 500;

impl Store {
    /// Gives every campaign stored before series had keys the key `key_of` finds for its spec
    /// (given as stored). Returns how many were keyed.
    pub async fn key_series(&self, key_of: impl Fn(&str) -> String) -> Result<u64, StoreError> {
        let mut keyed = 0;
        loop {
            let rows: Vec<(String, String)> = on_backend!(self, pool => {
                sqlx::query_as(
                    "SELECT id, spec FROM campaigns WHERE series IS NULL ORDER BY seq LIMIT $1",
                )
                .bind(KEY_BATCH)
                .fetch_all(pool)
                .await?
            });
            if rows.is_empty() {
                return Ok(keyed);
            }
            for (id, spec) in &rows {
                let key = key_of(spec);
                on_backend!(self, pool => {
                    sqlx::query("UPDATE campaigns SET series = $1 WHERE id = $2")
                        .bind(&key)
                        .bind(id)
                        .execute(pool)
                        .await?;
                });
                keyed += 1;
            }
        }
    }

    /// The series campaign `campaign_id` belongs to; `None` for no such campaign.
    pub async fn series_of(&self, campaign_id: &str) -> Result<Option<String>, StoreError> {
        let key: Option<Option<String>> = on_backend!(self, pool => {
            sqlx::query_scalar("SELECT series FROM campaigns WHERE id = $1")
                .bind(campaign_id)
                .fetch_optional(pool)
                .await?
        });
        Ok(key.flatten())
    }

    /// The newest `limit` campaigns of series `key` that have a judgement kept, oldest first.
    pub async fn series_entries(
        &self,
        key: &str,
        limit: u32,
    ) -> Result<Vec<JudgedCampaign>, StoreError> {
        let sql = "SELECT id, name, created_ms, judgement FROM campaigns
                   WHERE series = $1 AND judgement IS NOT NULL
                   ORDER BY seq DESC LIMIT $2";
        let rows: Vec<(String, String, i64, String)> = on_backend!(self, pool => {
            sqlx::query(sql)
                .bind(key)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
                .collect()
        });
        Ok(rows
            .into_iter()
            .rev()
            .map(|(id, name, created_ms, judgement)| JudgedCampaign {
                id,
                name,
                created_ms,
                judgement: Document::kept(judgement),
            })
            .collect())
    }

    /// The newest judged campaign of each series, at most `limit` series, most recently
    /// measured first: what `/metrics` exports.
    pub async fn series_latest(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, JudgedCampaign)>, StoreError> {
        let sql = "SELECT c.series, c.id, c.name, c.created_ms, c.judgement FROM campaigns c
                   JOIN (SELECT series, MAX(seq) AS seq FROM campaigns
                         WHERE series IS NOT NULL AND judgement IS NOT NULL GROUP BY series) n
                   ON c.seq = n.seq
                   ORDER BY c.seq DESC LIMIT $1";
        let rows: Vec<(String, String, String, i64, String)> = on_backend!(self, pool => {
            sqlx::query(sql)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4)))
                .collect()
        });
        Ok(rows
            .into_iter()
            .map(|(key, id, name, created_ms, judgement)| {
                let campaign = JudgedCampaign {
                    id,
                    name,
                    created_ms,
                    judgement: Document::kept(judgement),
                };
                (key, campaign)
            })
            .collect())
    }
}
