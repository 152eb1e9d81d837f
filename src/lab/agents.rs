//! The agents the lab knows, as the lab shows them: where its data listener takes them, and
//! each agent's state. The registry itself lives with the data listener (`net`); the web layer
//! asks the lab.

use std::path::PathBuf;

use super::Lab;
use crate::net::registry::AgentInfo;

/// The data listener and the agents, as `GET /api/agents` and the agents page show them.
#[derive(Debug, Clone)]
pub struct AgentsView {
    /// The data listener's port: agents register there and send network backups to it.
    pub data_port: u16,
    /// The listener's address when it is bound to one; otherwise agents use the lab's host.
    pub data_host: Option<String>,
    pub agents: Vec<AgentView>,
}

/// An agent as the lab shows it (the registry's own record stays with the data listener).
#[derive(Debug, Clone)]
pub struct AgentView {
    pub name: String,
    /// The address its control connection comes from.
    pub host: String,
    /// The paths it may read.
    pub sources: Vec<PathBuf>,
    pub version: String,
    /// Whether its control connection is up.
    pub connected: bool,
    /// Whether it is sending a network backup now (derived from the run it sends for).
    pub busy: bool,
    /// How many times it connected since the lab started.
    pub connections: u32,
    pub first_seen_ms: i64,
    pub last_seen_ms: i64,
}

impl From<AgentInfo> for AgentView {
    fn from(agent: AgentInfo) -> Self {
        Self {
            name: agent.name,
            host: agent.host,
            sources: agent.sources,
            version: agent.version,
            connected: agent.connected,
            busy: agent.busy,
            connections: agent.connections,
            first_seen_ms: agent.first_seen_ms,
            last_seen_ms: agent.last_seen_ms,
        }
    }
}

impl Lab {
    /// The agents connected now and those that left lately, and where the data listener
    /// takes them.
    pub fn agents(&self) -> AgentsView {
        let addr = self.data_link.addr();
        AgentsView {
            data_port: addr.port(),
            data_host: (!addr.ip().is_unspecified()).then(|| addr.ip().to_string()),
            agents: self
                .data_link
                .registry()
                .list()
                .into_iter()
                .map(AgentView::from)
                .collect(),
        }
    }
}
