//! The agents the lab knows, and where its data listener takes them. The registry itself lives
//! with the data listener (`net`); the web layer asks the lab.

use super::{AgentInfo, Lab};
use crate::net::listener::DataLink;

/// The data listener and the agents registered with it, as `GET /api/agents` and the agents
/// page show them.
pub struct Agents<'a> {
    link: &'a DataLink,
}

impl Lab {
    /// The agents and the data listener they register with.
    pub fn agents(&self) -> Agents<'_> {
        Agents {
            link: &self.data_link,
        }
    }
}

impl Agents<'_> {
    /// The agents connected now and those that left lately, by name.
    pub fn list(&self) -> Vec<AgentInfo> {
        self.link.registry().list()
    }

    /// The data listener's port: agents register there and send network backups to it.
    pub fn data_port(&self) -> u16 {
        self.link.addr().port()
    }

    /// The data listener's address when it is bound to one; `None` when it listens on every
    /// address, and agents use the lab's host.
    pub fn data_host(&self) -> Option<String> {
        let ip = self.link.addr().ip();
        (!ip.is_unspecified()).then(|| ip.to_string())
    }
}
