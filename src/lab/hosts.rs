//! The lab hosts on the database as this one sees them: which are alive, and when each was
//! last heard from.

use super::{HostSettings, Lab, LabError, MAX_PAGE};
use crate::clock::now_ms;
use crate::store::{HostRecord, Store};

/// A lab host as the form shows it (the API's answer is built from it).
#[derive(Debug, Clone)]
pub struct HostView {
    pub name: String,
    /// Whether it was heard from within its lease: it takes runs now.
    pub alive: bool,
    /// Seconds since it was last heard from.
    pub last_seen_s: f64,
    /// Whether it is the host answering.
    pub this_host: bool,
    pub url: Option<String>,
}

/// The hosts registered on the lab's database, as `GET /api/hosts` and the campaign form
/// list them.
pub struct Hosts<'a> {
    store: &'a Store,
    this: &'a HostSettings,
}

impl Lab {
    /// The lab hosts on the database, this one among them.
    pub fn hosts(&self) -> Hosts<'_> {
        Hosts {
            store: &self.store,
            this: &self.host,
        }
    }
}

impl Hosts<'_> {
    /// The name this lab serves under: the host a campaign that names none runs on.
    pub fn this_host(&self) -> &str {
        &self.this.name
    }

    /// The registered lab hosts, those alive first.
    pub async fn list(&self) -> Result<Vec<HostView>, LabError> {
        let now = now_ms();
        let mut hosts: Vec<HostView> = self
            .store
            .hosts()
            .await?
            .into_iter()
            .map(|record| self.view(&record, now))
            .collect();
        hosts.sort_by_key(|host| !host.alive);
        Ok(hosts)
    }

    /// A page of the registered lab hosts by name: at most `limit` (clamped to
    /// 1..=[`MAX_PAGE`]) whose names sort after `after`; the name the next page starts
    /// after, when more follow.
    pub async fn page(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<HostView>, Option<String>), LabError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let now = now_ms();
        // One more than the page shows: whether another page follows.
        let mut records = self.store.hosts_page(after, limit + 1).await?;
        let more = records.len() > limit as usize;
        records.truncate(limit as usize);
        let next_after = more
            .then(|| records.last().map(|record| record.name.clone()))
            .flatten();
        let hosts = records
            .iter()
            .map(|record| self.view(record, now))
            .collect();
        Ok((hosts, next_after))
    }

    /// A registered host as this lab sees it at `now`: this one is always alive.
    pub(super) fn view(&self, record: &HostRecord, now: i64) -> HostView {
        let last_seen_s = (now - record.heartbeat_ms).max(0) as f64 / 1000.0;
        HostView {
            name: record.name.clone(),
            alive: record.name == self.this.name || self.this.hears(record.heartbeat_ms, now),
            last_seen_s,
            this_host: record.name == self.this.name,
            url: record.url.clone(),
        }
    }
}
