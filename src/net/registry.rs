//! The agents the lab knows: who registered, from where, what they may read, and the control
//! connection work is sent over. Agents are live things, so the registry lives in memory; an
//! agent that reconnects under the same name takes its entry back.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::wire::{self, FrameKind, Register, WorkOrder};
use crate::clock::now_ms;

/// An agent as the registry keeps it, and as `GET /api/agents` shows it: one shape from the
/// registry to the answer, its schema held still by `tests/fixtures/openapi.json`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(description = "An agent as `GET /api/agents` shows it.")]
pub struct AgentInfo {
    pub name: String,
    /// The address its control connection comes from.
    pub host: String,
    /// The paths it may read.
    #[schema(value_type = Vec<String>)]
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

struct Entry {
    info: AgentInfo,
    /// Distinguishes this connection from an earlier one under the same name.
    session: u64,
    /// Where work is written; its lock is never taken under the registry's.
    control: Option<Arc<Mutex<TcpStream>>>,
    /// The same connection, to shut it down without waiting for a writer.
    shutdown: Option<TcpStream>,
    /// The run key of the network run this agent sends for.
    busy_run: Option<String>,
}

/// Every agent seen since the lab started.
#[derive(Default)]
pub struct Registry {
    agents: Mutex<BTreeMap<String, Entry>>,
}

/// Why work could not go to an agent.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(
        "agent '{0}' is not registered with this lab (waited {wait} s; see GET /api/agents)",
        wait = AGENT_WAIT.as_secs()
    )]
    Unknown(String),
    #[error(
        "agent '{0}' is not connected (its last connection ended; waited {wait} s for it to \
         return)",
        wait = AGENT_WAIT.as_secs()
    )]
    Disconnected(String),
    #[error("agent '{0}' is busy with another network backup")]
    Busy(String),
    #[error(
        "agent '{agent}' may not read {path} (it allows: {allowed}); start it with \
         --allow-source for that path"
    )]
    SourceNotAllowed {
        agent: String,
        path: String,
        allowed: String,
    },
    #[error("cannot send work to agent '{agent}': {source}")]
    Send {
        agent: String,
        source: std::io::Error,
    },
}

/// Most paths an agent may offer, the most bytes they may take together, and the longest
/// version string it may give: what it says of itself is kept while it is remembered.
pub const MAX_AGENT_SOURCES: usize = 64;
pub const MAX_AGENT_SOURCE_BYTES: usize = 4096;
pub const MAX_AGENT_VERSION_BYTES: usize = 64;
/// Agents that left are remembered this long (so a page shows who was there), and at most
/// this many of them; the oldest is forgotten first.
pub const FORGET_GONE_AFTER: Duration = Duration::from_secs(600);
pub const MAX_GONE_AGENTS: usize = 256;

/// What is wrong with what an agent says of itself, if anything: too many paths, too many
/// bytes of them, or too long a version.
pub fn check_registration(hello: &Register) -> Result<(), String> {
    let bytes: usize = hello
        .sources
        .iter()
        .map(|path| path.as_os_str().len())
        .sum();
    if hello.sources.len() > MAX_AGENT_SOURCES {
        return Err(format!(
            "sources: {} paths; at most {MAX_AGENT_SOURCES}",
            hello.sources.len()
        ));
    }
    if bytes > MAX_AGENT_SOURCE_BYTES {
        return Err(format!(
            "sources: {bytes} bytes of paths; at most {MAX_AGENT_SOURCE_BYTES}"
        ));
    }
    if hello.version.len() > MAX_AGENT_VERSION_BYTES {
        return Err(format!(
            "version: {} bytes; at most {MAX_AGENT_VERSION_BYTES}",
            hello.version.len()
        ));
    }
    Ok(())
}

/// How long writing work to an agent may take before the agent counts as stalled.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a run waits for its agents to (re)connect: after a lab restart they come back
/// within a few seconds, and a queued run should not fail for that.
pub const AGENT_WAIT: Duration = Duration::from_secs(10);

impl Registry {
    /// Records a registration, not yet given work until `activate`; returns its session and
    /// whether it replaced a connection.
    pub fn register(
        &self,
        hello: &Register,
        host: String,
        control: TcpStream,
        shutdown: TcpStream,
    ) -> (u64, bool) {
        // A stalled agent must not hold a dispatch up for long.
        let _ = control.set_write_timeout(Some(WRITE_TIMEOUT));
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        let now = now_ms();
        forget_gone(&mut agents, now, &hello.name);
        let session = rand::random::<u64>();
        let entry = agents.entry(hello.name.clone()).or_insert_with(|| Entry {
            info: AgentInfo {
                name: hello.name.clone(),
                host: host.clone(),
                sources: Vec::new(),
                version: String::new(),
                connected: false,
                busy: false,
                connections: 0,
                first_seen_ms: now,
                last_seen_ms: now,
            },
            session,
            control: None,
            shutdown: None,
            busy_run: None,
        });
        let reconnected = entry.info.connections > 0;
        entry.control = None;
        if let Some(old) = entry.shutdown.take() {
            let _ = old.shutdown(std::net::Shutdown::Both);
        }
        entry.info.host = host;
        entry.info.sources = hello.sources.clone();
        entry.info.version = hello.version.clone();
        entry.info.connected = false;
        entry.busy_run = None;
        entry.info.connections += 1;
        entry.info.last_seen_ms = now;
        entry.session = session;
        entry.control = Some(Arc::new(Mutex::new(control)));
        entry.shutdown = Some(shutdown);
        (session, reconnected)
    }

    /// Opens a registered connection to work, once the agent has been answered.
    pub fn activate(&self, name: &str, session: u64) {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = agents.get_mut(name).filter(|e| e.session == session) {
            entry.info.connected = true;
        }
    }

    /// Notes a sign of life on a control connection.
    pub fn seen(&self, name: &str, session: u64) {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = agents.get_mut(name).filter(|e| e.session == session) {
            entry.info.last_seen_ms = now_ms();
        }
    }

    /// Marks an agent gone when the connection of `session` ended (a newer one stays).
    pub fn disconnected(&self, name: &str, session: u64) {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = agents.get_mut(name).filter(|e| e.session == session) {
            entry.info.connected = false;
            entry.info.last_seen_ms = now_ms();
            entry.busy_run = None;
            entry.control = None;
            entry.shutdown = None;
        }
    }

    /// Every agent, by name.
    pub fn list(&self) -> Vec<AgentInfo> {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        forget_gone(&mut agents, now_ms(), "");
        agents
            .values()
            .map(|entry| AgentInfo {
                busy: entry.busy_run.is_some(),
                ..entry.info.clone()
            })
            .collect()
    }

    /// Sends each order to its agent, after checking every agent can take it, waiting up to
    /// `AGENT_WAIT` (or until `cancel`) for agents that are not connected yet. On a failure
    /// the agents already sent to are marked idle again.
    pub fn dispatch(&self, orders: &[WorkOrder], cancel: &AtomicBool) -> Result<(), DispatchError> {
        let deadline = Instant::now() + AGENT_WAIT;
        loop {
            match self.try_dispatch(orders) {
                Err(DispatchError::Unknown(_) | DispatchError::Disconnected(_))
                    if Instant::now() < deadline && !cancel.load(Ordering::Relaxed) =>
                {
                    std::thread::sleep(Duration::from_millis(100));
                }
                done => return done,
            }
        }
    }

    fn try_dispatch(&self, orders: &[WorkOrder]) -> Result<(), DispatchError> {
        let controls = {
            let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
            let mut controls = Vec::new();
            for order in orders {
                let entry = agents
                    .get(&order.client)
                    .ok_or_else(|| DispatchError::Unknown(order.client.clone()))?;
                let control = entry
                    .control
                    .clone()
                    .filter(|_| entry.info.connected)
                    .ok_or_else(|| DispatchError::Disconnected(order.client.clone()))?;
                if entry.busy_run.is_some() {
                    return Err(DispatchError::Busy(order.client.clone()));
                }
                if let wire::ClientSource::Paths(paths) = &order.source {
                    check_sources(&entry.info, paths)?;
                }
                controls.push(control);
            }
            for order in orders {
                if let Some(entry) = agents.get_mut(&order.client) {
                    entry.busy_run = Some(order.run_key.clone());
                }
            }
            controls
        };
        for (order, control) in orders.iter().zip(controls) {
            let sent = control
                .lock()
                .map_err(|_| std::io::Error::other("control connection poisoned"))
                .and_then(|mut socket| wire::write_message(&mut *socket, FrameKind::Work, order));
            if let Err(source) = sent {
                self.idle(&order.run_key);
                return Err(DispatchError::Send {
                    agent: order.client.clone(),
                    source,
                });
            }
        }
        Ok(())
    }

    /// Frees the agents that send for the run of `run_key` (and only those).
    pub fn idle(&self, run_key: &str) {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        for entry in agents.values_mut() {
            if entry.busy_run.as_deref() == Some(run_key) {
                entry.busy_run = None;
            }
        }
    }
}

/// Forgets the agents that left longer ago than [`FORGET_GONE_AFTER`], and the oldest of those
/// that left beyond [`MAX_GONE_AGENTS`] (keeping `returning`, which is connecting again now).
/// Connected agents are bounded by the data listener's cap on control connections.
fn forget_gone(agents: &mut BTreeMap<String, Entry>, now_ms: i64, returning: &str) {
    let gone = |name: &str, entry: &Entry| {
        !entry.info.connected && entry.control.is_none() && name != returning
    };
    let forget_before = now_ms - FORGET_GONE_AFTER.as_millis() as i64;
    agents.retain(|name, entry| !gone(name, entry) || entry.info.last_seen_ms >= forget_before);
    let mut gone: Vec<(i64, String)> = agents
        .iter()
        .filter(|(name, entry)| gone(name, entry))
        .map(|(name, entry)| (entry.info.last_seen_ms, name.clone()))
        .collect();
    if gone.len() > MAX_GONE_AGENTS {
        gone.sort();
        for (_, name) in gone.iter().take(gone.len() - MAX_GONE_AGENTS) {
            agents.remove(name);
        }
    }
}

/// Every path must lie under one of the agent's allowed sources (lexically, after removing
/// `.` and refusing `..`; the agent checks again on its host).
fn check_sources(agent: &AgentInfo, paths: &[PathBuf]) -> Result<(), DispatchError> {
    for path in paths {
        let escapes = path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        let allowed = !escapes
            && path.is_absolute()
            && agent
                .sources
                .iter()
                .any(|root| path.starts_with(root) || Path::new(root) == path);
        if !allowed {
            let roots: Vec<String> = agent
                .sources
                .iter()
                .map(|root| root.display().to_string())
                .collect();
            return Err(DispatchError::SourceNotAllowed {
                agent: agent.name.clone(),
                path: path.display().to_string(),
                allowed: if roots.is_empty() {
                    "no paths, only generated data".to_string()
                } else {
                    roots.join(", ")
                },
            });
        }
    }
    Ok(())
}
