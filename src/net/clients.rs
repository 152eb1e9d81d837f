//! The lab's side of starting a network run: one work order per client, the clients set
//! sending through a gateway (the lab's own loopback clients, or agents), and their streams
//! handed to the engine once connected and started together.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::CONNECT_TIMEOUT;
use super::loopback::LoopbackClients;
use super::receive::{self, Arrivals, ClientGateway, ConnectedStreams};
use super::wire::{ClientSource, WorkOrder};
use crate::engine::error::EngineError;
use crate::engine::remote::{Connected, NetworkClients, RemoteClient};
use crate::engine::source::StreamSource;
use crate::spec::{RunPlan, SourcePlan};

/// The clients a lab can set sending: its own on loopback always, agents when it has them.
pub struct Clients {
    agents: Option<Arc<dyn ClientGateway>>,
}

impl Clients {
    /// Only the lab's own loopback clients: what `backlab run` has.
    pub fn loopback() -> Self {
        Self { agents: None }
    }

    /// The lab's own clients, and the agents reached through `agents`.
    pub fn with_agents(agents: Arc<dyn ClientGateway>) -> Self {
        Self {
            agents: Some(agents),
        }
    }
}

impl NetworkClients for Clients {
    fn connect(&self, plan: &RunPlan, cancel: &AtomicBool) -> Result<Connected, EngineError> {
        let orders = work_orders(plan);
        let gateway: &dyn ClientGateway = if plan.agents.is_empty() {
            &LoopbackClients
        } else {
            self.agents.as_deref().ok_or_else(|| {
                EngineError::Network(
                    "agents can only send to a lab started with `backlab serve`; `backlab run` \
                     has only its own loopback clients (leave source.agents out)"
                        .to_string(),
                )
            })?
        };
        let Arrivals { connections, guard } = gateway.open(orders.clone(), cancel)?;
        let ConnectedStreams {
            mut streams,
            tallies,
        } = receive::connect_all(&orders, &connections, CONNECT_TIMEOUT, cancel);
        // Later connections are refused from here on: the run has started without them.
        drop(connections);
        if cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        if streams.is_empty() {
            let why: Vec<String> = tallies
                .iter()
                .map(|tally| {
                    let figures = tally.figures(0.0, Vec::new());
                    format!(
                        "{}: {}",
                        figures.name,
                        figures.error.unwrap_or_else(|| "not connected".into())
                    )
                })
                .collect();
            return Err(EngineError::Network(format!(
                "no client connected; {}",
                why.join("; ")
            )));
        }
        // Every stream starts at once, on the run's clock.
        for stream in &mut streams {
            stream.start();
        }
        Ok(Connected {
            streams: streams
                .into_iter()
                .map(|stream| Box::new(stream) as Box<dyn StreamSource>)
                .collect(),
            clients: tallies
                .into_iter()
                .map(|tally| tally as Arc<dyn RemoteClient>)
                .collect(),
            guard,
        })
    }
}

/// One order per client: the agents the plan names (the first `clients` of them) or the lab's
/// own `client-N`, each with its share of the run's bytes.
fn work_orders(plan: &RunPlan) -> Vec<WorkOrder> {
    let params = &plan.params;
    let clients = params.clients.unwrap_or(1).max(1);
    let names: Vec<String> = if plan.agents.is_empty() {
        (1..=clients)
            .map(|index| format!("client-{index}"))
            .collect()
    } else {
        plan.agents.iter().take(clients as usize).cloned().collect()
    };
    let (source, total) = match &plan.source {
        SourcePlan::Generated {
            size,
            compress_ratio,
            ..
        } => (
            ClientSource::Generated {
                compress_ratio: *compress_ratio,
            },
            // A time-based run's clients send until the lab ends it at its duration.
            if params.time_based {
                params.size
            } else {
                Some(params.size.map_or(*size, |limit| limit.min(*size)))
            },
        ),
        SourcePlan::Paths(paths) => (ClientSource::Paths(paths.clone()), params.size),
    };
    let run_key = receive::new_run_key();
    let count = names.len() as u64;
    names
        .iter()
        .enumerate()
        .map(|(index, name)| WorkOrder {
            run_key: run_key.clone(),
            client: name.clone(),
            streams: params.streams,
            block_size: params.block_size,
            source: source.clone(),
            // Shares that add up to the total exactly.
            bytes: total.map(|total| total / count + u64::from((index as u64) < total % count)),
            link_mb_s: params.link_mb_s,
            port: 0,
        })
        .collect()
}
