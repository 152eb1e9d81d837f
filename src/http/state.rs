//! What every handler can reach.

use std::sync::Arc;

use tokio::sync::watch;

use super::cache::PageCache;
use crate::lab::Lab;
use crate::net::listener::DataLink;

/// The lab, its API description and the switches the handlers need.
#[derive(Clone)]
pub struct AppState {
    pub lab: Arc<Lab>,
    pub openapi: Arc<String>,
    pub token: Option<Arc<str>>,
    /// Turns true when the lab shuts down; live streams end.
    pub shutdown: watch::Receiver<bool>,
    /// The data listener: agents and network-backup streams.
    pub datalink: Arc<DataLink>,
    /// Rendered pages and charts of finished campaigns.
    pub pages: Arc<PageCache>,
}
