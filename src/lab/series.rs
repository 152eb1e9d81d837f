//! The lab's series as the web layer reads them: each as a history, the newest figure of each
//! for `/metrics`, and the changes a campaign's figures made stand out in its series.

use super::{Lab, LabError, check_id, current_judgement};
use crate::series::history::{Entry, FoundChanges, History};
use crate::store::{JudgedCampaign, Store};

/// The most campaigns of a series a history reads: the newest ones.
pub const SERIES_CAMPAIGNS: u32 = 1000;

/// The most other tools' figures a history draws.
pub const SERIES_REFERENCES: u32 = 1000;

/// The most series `/metrics` exports, the most recently measured.
pub const METRICS_SERIES: u32 = 200;

/// The series the lab's campaigns join, read from the judgements kept.
pub struct Series<'a> {
    store: &'a Store,
}

impl Lab {
    /// The series: their histories, and the changes each campaign brought to light.
    pub fn series(&self) -> Series<'_> {
        Series { store: &self.store }
    }
}

impl Series<'_> {
    /// The history of series `key`.
    pub async fn history(&self, key: &str) -> Result<History, LabError> {
        if !crate::series::is_key(key) {
            return Err(LabError::NotFound(format!("no series {key:?}")));
        }
        let entries = entries(self.store.series_entries(key, SERIES_CAMPAIGNS).await?);
        if entries.is_empty() {
            return Err(LabError::NotFound(format!(
                "no series {key:?} (or none of its campaigns has finished)"
            )));
        }
        let references = self
            .store
            .series_references(key, SERIES_REFERENCES)
            .await?
            .into_iter()
            .filter_map(|(id, kept)| Some((id, kept.decode().ok()?)))
            .collect();
        Ok(History::of(key, &entries).with_references(references))
    }

    /// The newest judged campaign of each series, for `/metrics`.
    pub async fn latest(&self) -> Result<Vec<(String, Entry)>, LabError> {
        Ok(self
            .store
            .series_latest(METRICS_SERIES)
            .await?
            .into_iter()
            .filter_map(|(key, judged)| Some((key, entry(judged)?)))
            .collect())
    }

    /// The series of campaign `id` and the changes its figures made stand out there (what
    /// its report tells of); no series for a campaign not yet keyed.
    pub async fn changes_found_by(
        &self,
        id: &str,
    ) -> Result<(Option<String>, FoundChanges), LabError> {
        check_id(id)?;
        Ok(match self.found_by(id).await? {
            Some((key, changes)) => (Some(key), changes),
            None => (None, FoundChanges::default()),
        })
    }

    /// The series of campaign `id` and the changes its figures made stand out there; `None`
    /// for a campaign not yet keyed.
    pub(super) async fn found_by(
        &self,
        id: &str,
    ) -> Result<Option<(String, FoundChanges)>, LabError> {
        let Some(key) = self.store.series_of(id).await? else {
            return Ok(None);
        };
        let entries = entries(self.store.series_entries(&key, SERIES_CAMPAIGNS).await?);
        let changes = History::found_by(&key, &entries, id);
        Ok(Some((key, changes)))
    }
}

/// A series' campaigns whose kept judgement was drawn under today's rules, in their order.
fn entries(judged: Vec<JudgedCampaign>) -> Vec<Entry> {
    judged.into_iter().filter_map(entry).collect()
}

/// A campaign of a series as its history reads it; `None` when its kept judgement was drawn
/// under other rules (it joins its history again once judged anew).
fn entry(judged: JudgedCampaign) -> Option<Entry> {
    Some(Entry {
        judgement: current_judgement(&judged.judgement)?,
        id: judged.id,
        name: judged.name,
        created_ms: judged.created_ms,
    })
}
