//! What every handler can reach.

use std::sync::Arc;

use tokio::sync::watch;

use super::cache::PageCache;
use crate::lab::{KeptAnswers, Lab, LabError, Submitted};

/// The lab, its API description and the switches the handlers need.
#[derive(Clone)]
pub struct AppState {
    pub lab: Arc<Lab>,
    pub openapi: Arc<String>,
    pub token: Option<Arc<str>>,
    /// Turns true when the lab shuts down; live streams end.
    pub shutdown: watch::Receiver<bool>,
    /// Rendered pages and charts of finished campaigns.
    pub pages: Arc<PageCache>,
}

impl AppState {
    /// The handlers' state over `lab`, with an empty page cache the lab tells when a
    /// campaign's judgement is kept.
    pub fn new(
        lab: Arc<Lab>,
        openapi: String,
        token: Option<Arc<str>>,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        let pages = Arc::new(PageCache::default());
        lab.keep_answers_in(Arc::clone(&pages) as Arc<dyn KeptAnswers>);
        Self {
            lab,
            openapi: Arc::new(openapi),
            token,
            shutdown,
            pages,
        }
    }

    /// Queues a rerun of `id`. The original's kept pages list its reruns, so they are
    /// rendered again.
    pub async fn rerun(&self, id: &str) -> Result<Submitted, LabError> {
        let submitted = self.lab.campaigns().rerun(id).await?;
        self.pages.forget(id);
        Ok(submitted)
    }

    /// Deletes a campaign and forgets every kept page: its own, the list of reruns on the
    /// campaign it reran, and any later campaign's link to it as the previous of its spec.
    pub async fn delete(&self, id: &str) -> Result<(), LabError> {
        self.lab.campaigns().delete(id).await?;
        self.pages.clear();
        Ok(())
    }
}
