//! Other tools' figures kept with a campaign.

use sqlx::Row;

use super::{Document, Pool, Store, StoreError};

/// The most reference figures a campaign keeps.
pub const MAX_REFERENCES: i64 = 100;

impl Store {
    /// Adds figures (a document each) to a campaign's references; `None` when there is no such
    /// campaign, `Some(false)` when it would then hold more than [`MAX_REFERENCES`].
    pub async fn add_references(
        &self,
        campaign_id: &str,
        documents: &[Document],
        now_ms: i64,
    ) -> Result<Option<bool>, StoreError> {
        let begin = self.backend().begin_write();
        let take_turns = self.backend().take_turns();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            // Imports at the same moment count in turn, so together they cannot pass the cap.
            if let Some(lock) = take_turns {
                sqlx::query(lock).execute(&mut *tx).await?;
            }
            let Some(seq) = campaign_seq!(&mut *tx, campaign_id).await? else {
                return Ok(None);
            };
            let held: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM campaign_references WHERE campaign_seq = $1",
            )
            .bind(seq)
            .fetch_one(&mut *tx)
            .await?;
            if held + documents.len() as i64 > MAX_REFERENCES {
                Some(false)
            } else {
                for document in documents {
                    sqlx::query(
                        "INSERT INTO campaign_references (campaign_seq, imported_ms, reference)
                         VALUES ($1, $2, $3)",
                    )
                    .bind(seq)
                    .bind(now_ms)
                    .bind(document.as_str())
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Some(true)
            }
        }))
    }

    /// A campaign's reference figures, in the order they were imported; `None` when there is
    /// no such campaign.
    pub async fn references(&self, campaign_id: &str) -> Result<Option<Vec<Document>>, StoreError> {
        // The campaign and its references in one snapshot: none for a campaign not there.
        let begin = self.backend().begin_snapshot();
        let documents: Option<Vec<String>> = on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            match campaign_seq!(&mut *tx, campaign_id).await? {
                None => None,
                Some(seq) => Some(
                    sqlx::query(
                        "SELECT reference FROM campaign_references WHERE campaign_seq = $1
                         ORDER BY imported_ms",
                    )
                    .bind(seq)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(|row| row.get(0))
                    .collect(),
                ),
            }
        });
        Ok(documents.map(|documents| documents.into_iter().map(Document::kept).collect()))
    }

    /// The reference figures of series `key`'s campaigns, with the campaign each belongs to,
    /// oldest import first; at most `limit`.
    pub async fn series_references(
        &self,
        key: &str,
        limit: u32,
    ) -> Result<Vec<(String, Document)>, StoreError> {
        let rows: Vec<(String, String)> = on_backend!(self, pool => {
            sqlx::query(
                "SELECT c.id, r.reference FROM campaign_references r
                 JOIN campaigns c ON c.seq = r.campaign_seq
                 WHERE c.series = $1 ORDER BY r.imported_ms LIMIT $2",
            )
            .bind(key)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect()
        });
        Ok(rows
            .into_iter()
            .map(|(id, document)| (id, Document::kept(document)))
            .collect())
    }
}
