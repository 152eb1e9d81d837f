//! Adaptive searches: a campaign's next runs appended as its search chooses them, and the
//! searches left waiting for their next step.

use sqlx::Row;

use super::{Document, Pool, Store, StoreError, to_json};
use crate::spec::{RunParams, TestKind};

/// `campaigns.searching` of a search still choosing its points. `campaign_status!` and the
/// statements below write these values as literals: change them together.
pub(super) const SEARCH_OPEN: i64 = 1;
/// `campaigns.searching` of a search cut by a cancel (0: no search, or one that stopped).
const SEARCH_CANCELLED: i64 = 2;

impl Store {
    /// Appends `runs` to campaign `campaign_id` and keeps its search's state as `state`, open
    /// or closed (it has stopped), if the stored state is still `expected` (the document as it
    /// was read) and none of its runs is queued or running: of two labs taking the same step,
    /// one appends. Returns whether this one did.
    pub async fn extend_search(
        &self,
        campaign_id: &str,
        expected: &Document,
        runs: &[(TestKind, RunParams)],
        state: &Document,
        open: bool,
    ) -> Result<bool, StoreError> {
        let open = i64::from(open);
        let params: Vec<String> = runs
            .iter()
            .map(|(_, params)| to_json(params))
            .collect::<Result<_, _>>()?;
        let begin = self.backend().begin_write();
        Ok(on_backend!(self, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let updated = sqlx::query(
                "UPDATE campaigns SET search = $1, searching = $2
                 WHERE id = $3 AND search = $4 AND searching = 1
                   AND NOT EXISTS (SELECT 1 FROM runs WHERE campaign_seq = campaigns.seq
                                   AND status IN ('queued', 'running', 'interrupted'))
                 RETURNING seq",
            )
            .bind(state.as_str())
            .bind(open)
            .bind(campaign_id)
            .bind(expected.as_str())
            .fetch_optional(&mut *tx)
            .await?;
            match updated {
                None => false,
                Some(row) => {
                    let seq: i64 = row.try_get(0)?;
                    let next: i64 = sqlx::query_scalar(
                        "SELECT COALESCE(MAX(position), -1) + 1 FROM runs WHERE campaign_seq = $1",
                    )
                    .bind(seq)
                    .fetch_one(&mut *tx)
                    .await?;
                    for (offset, ((test, _), params)) in runs.iter().zip(&params).enumerate() {
                        sqlx::query(
                            "INSERT INTO runs (campaign_seq, position, test, params)
                             VALUES ($1, $2, $3, $4)",
                        )
                        .bind(seq)
                        .bind(next + offset as i64)
                        .bind(test.id())
                        .bind(params)
                        .execute(&mut *tx)
                        .await?;
                    }
                    tx.commit().await?;
                    true
                }
            }
        }))
    }

    /// Closes a campaign's search cut by a cancel, keeping `state` (which says so), if the
    /// stored state is still `expected` (the document as it was read) and open; false when a
    /// step was taken meanwhile. A search so closed marks its campaign cancelled even when
    /// none of its runs was.
    pub async fn cancel_search(
        &self,
        campaign_id: &str,
        expected: &Document,
        state: &Document,
    ) -> Result<bool, StoreError> {
        let closed = on_backend!(self, pool => {
            sqlx::query(
                "UPDATE campaigns SET search = $1, searching = $2
                 WHERE id = $3 AND search = $4 AND searching = $5",
            )
            .bind(state.as_str())
            .bind(SEARCH_CANCELLED)
            .bind(campaign_id)
            .bind(expected.as_str())
            .bind(SEARCH_OPEN)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(closed == 1)
    }

    /// Campaigns of `host` whose search is open with none of their runs queued or running:
    /// waiting for their next step (a lab stopped between two).
    pub async fn idle_searches(&self, host: &str) -> Result<Vec<String>, StoreError> {
        Ok(on_backend!(self, pool => {
            sqlx::query_scalar(
                "SELECT id FROM campaigns AS c WHERE searching = 1 AND host = $1
                   AND NOT EXISTS (SELECT 1 FROM runs WHERE campaign_seq = c.seq
                                   AND status IN ('queued', 'running', 'interrupted'))
                 ORDER BY seq",
            )
            .bind(host)
            .fetch_all(pool)
            .await?
        }))
    }
}
