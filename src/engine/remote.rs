//! Streams that arrive from other processes. A network backup's pipeline reads them like any
//! other source; how the clients are found, what travels on the wire and how a connection is
//! read is the network layer's, which hands the engine its streams through `NetworkClients`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use super::error::EngineError;
use super::measure::round1;
use super::plan::RunPlan;
use super::result::{ClientFigures, Sample};
use super::source::StreamSource;

/// Where a network run's clients come from: the lab's own loopback clients, or agents.
pub trait NetworkClients: Send + Sync {
    /// Sets the clients of `plan` sending and waits until their streams have connected (or
    /// gave up, or `cancel` was set); the streams it returns have been told to start.
    fn connect(&self, plan: &RunPlan, cancel: &AtomicBool) -> Result<Connected, EngineError>;
}

/// One client of a running network backup, as the engine sees it.
pub trait RemoteClient: Send + Sync {
    /// Payload bytes received from this client so far; the pipeline samples it.
    fn received(&self) -> Arc<AtomicU64>;
    /// This client's figures over a run of `seconds`, with its samples.
    fn figures(&self, seconds: f64, samples: Vec<Sample>) -> ClientFigures;
}

/// A network run's streams once its clients connected.
pub struct Connected {
    pub streams: Vec<Box<dyn StreamSource>>,
    pub clients: Vec<Arc<dyn RemoteClient>>,
    /// Released after the pipeline ends: whatever keeps the clients and the routing alive.
    pub guard: Box<dyn Send>,
}

/// Sums the clients' samples, which share one clock, into the run's aggregate samples.
pub fn sum_samples(per_client: &[Vec<Sample>]) -> Vec<Sample> {
    let longest = per_client.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .filter_map(|index| {
            let at: Vec<&Sample> = per_client.iter().filter_map(|s| s.get(index)).collect();
            let t = at.first()?.t;
            Some(Sample {
                t,
                mb_per_s: round1(at.iter().map(|s| s.mb_per_s).sum()),
            })
        })
        .collect()
}
