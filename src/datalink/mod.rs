//! The lab's data listener: the TCP port agents register on and network-backup streams
//! arrive at. Each connection says what it is in its first frame; data connections are handed
//! to the run whose key they carry, control connections join the agent registry. Anything
//! malformed or unauthenticated is closed with a logged reason.

pub mod registry;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Sender, bounded};

use crate::engine::error::EngineError;
use crate::engine::network::{Arrival, Arrivals, ClientGateway, HELLO_TIMEOUT, reject};
use crate::engine::wire::{
    self, Deadline, FrameKind, Hello, Register, Registered, WireError, WorkOrder,
};
use registry::Registry;

/// How long an agent's control connection may stay silent (agents ping every few seconds).
const CONTROL_TIMEOUT: Duration = Duration::from_secs(60);
/// Connections handled at once; more are closed at once.
const MAX_CONNECTIONS: usize = 1024;

/// The data listener and what it routes to.
pub struct DataLink {
    addr: SocketAddr,
    token: Option<Arc<str>>,
    registry: Registry,
    routes: Mutex<HashMap<String, Sender<Arrival>>>,
    open: AtomicUsize,
    stop: AtomicBool,
}

impl DataLink {
    /// Binds `bind` and starts accepting on a thread of its own.
    pub fn start(bind: SocketAddr, token: Option<Arc<str>>) -> io::Result<Arc<DataLink>> {
        let listener = TcpListener::bind(bind)?;
        listener.set_nonblocking(true)?;
        let link = Arc::new(DataLink {
            addr: listener.local_addr()?,
            token,
            registry: Registry::default(),
            routes: Mutex::new(HashMap::new()),
            open: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&link);
        std::thread::Builder::new()
            .name("backlab-data".into())
            .spawn(move || accepting.accept_loop(&listener))?;
        Ok(link)
    }

    /// The address the listener is bound to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The agents seen since the lab started.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Stops accepting; connections being handled finish on their own.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn accept_loop(self: Arc<Self>, listener: &TcpListener) {
        while !self.stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((socket, peer)) => {
                    if self.open.fetch_add(1, Ordering::Relaxed) >= MAX_CONNECTIONS {
                        self.open.fetch_sub(1, Ordering::Relaxed);
                        tracing::warn!(%peer, "data listener: too many connections; closed");
                        continue;
                    }
                    let link = Arc::clone(&self);
                    let spawned = std::thread::Builder::new()
                        .name("backlab-conn".into())
                        .spawn(move || {
                            if let Err(reason) = link.handle(socket, peer) {
                                tracing::warn!(%peer, %reason, "data listener closed a connection");
                            }
                            link.open.fetch_sub(1, Ordering::Relaxed);
                        });
                    if let Err(error) = spawned {
                        self.open.fetch_sub(1, Ordering::Relaxed);
                        tracing::warn!(%peer, %error, "data listener: cannot start a thread");
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(error) => {
                    tracing::warn!(%error, "data listener: accept failed");
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    /// Reads a connection's first frame and hands it on; an error is the reason it closed.
    fn handle(&self, mut socket: TcpStream, peer: SocketAddr) -> Result<(), String> {
        let setup = |socket: &TcpStream| -> io::Result<()> {
            socket.set_nonblocking(false)?;
            socket.set_write_timeout(Some(HELLO_TIMEOUT))
        };
        setup(&socket).map_err(|e| e.to_string())?;
        // The whole first frame must arrive within the deadline, however it is trickled.
        let mut first = Deadline::new(&socket, HELLO_TIMEOUT);
        let header = wire::read_header(&mut first).map_err(|e| e.to_string())?;
        match header.kind {
            FrameKind::Hello => {
                let hello: Hello =
                    wire::read_payload(&mut first, header).map_err(|e| e.to_string())?;
                let route = self
                    .routes
                    .lock()
                    .map_err(|_| "routes poisoned".to_string())?
                    .get(&hello.run_key)
                    .cloned();
                match route {
                    Some(route) => {
                        let client = hello.client.clone();
                        route
                            .try_send(Arrival { hello, socket })
                            .map_err(|refused| {
                                let mut arrival = refused.into_inner();
                                reject(
                                    &mut arrival.socket,
                                    "the run has started without this stream, or is over",
                                );
                                format!("client '{client}' connected after its run had started")
                            })
                    }
                    None => {
                        reject(&mut socket, "unknown or finished run");
                        Err(format!(
                            "client '{}' named an unknown or finished run",
                            hello.client
                        ))
                    }
                }
            }
            FrameKind::Register => {
                let hello: Register =
                    wire::read_payload(&mut first, header).map_err(|e| e.to_string())?;
                self.control(socket, peer, &hello)
            }
            other => Err(format!("a connection may not open with a {other:?} frame")),
        }
    }

    /// An agent's control connection: registers it, then watches it until it ends.
    fn control(
        &self,
        mut socket: TcpStream,
        peer: SocketAddr,
        hello: &Register,
    ) -> Result<(), String> {
        if let Err(message) = crate::spec::check_agent_name(&hello.name) {
            reject(&mut socket, &format!("agent name: {message}"));
            return Err(format!("agent name {message}"));
        }
        if let Some(token) = &self.token {
            let given = hello.token.as_deref().unwrap_or_default();
            if !crate::policy::same_secret(given.as_bytes(), token.as_bytes()) {
                reject(&mut socket, "wrong or missing token (--token)");
                return Err(format!(
                    "agent '{}' gave a wrong or missing token",
                    hello.name
                ));
            }
        }
        let (control, shutdown) = socket
            .try_clone()
            .and_then(|control| Ok((control, socket.try_clone()?)))
            .map_err(|e| e.to_string())?;
        let (session, reconnected) =
            self.registry
                .register(hello, peer.ip().to_string(), control, shutdown);
        tracing::info!(agent = %hello.name, %peer, reconnected, "agent registered");
        let registered = Registered {
            name: hello.name.clone(),
            reconnected,
        };
        // Work may go out only after the agent has its answer.
        let answer = socket
            .set_read_timeout(Some(CONTROL_TIMEOUT))
            .and_then(|()| wire::write_message(&mut socket, FrameKind::Registered, &registered))
            .map(|()| self.registry.activate(&hello.name, session));
        let ended = match answer {
            Err(error) => Err(error.to_string()),
            Ok(()) => loop {
                match wire::read_header(&mut socket) {
                    Ok(header) if header.kind == FrameKind::Ping && header.len == 0 => {
                        self.registry.seen(&hello.name, session);
                    }
                    Ok(header) => {
                        break Err(format!(
                            "agent '{}' sent a {:?} frame on its control connection",
                            hello.name, header.kind
                        ));
                    }
                    Err(WireError::Closed) => break Ok(()),
                    Err(error) => break Err(format!("agent '{}': {error}", hello.name)),
                }
            },
        };
        self.registry.disconnected(&hello.name, session);
        tracing::info!(agent = %hello.name, "agent disconnected");
        ended
    }
}

/// Network runs that name agents: their work goes out over the agents' control connections,
/// and their streams come back through the data listener.
pub struct AgentGateway(pub Arc<DataLink>);

impl ClientGateway for AgentGateway {
    fn open(
        &self,
        mut orders: Vec<WorkOrder>,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Arrivals, EngineError> {
        let link = &self.0;
        let Some(run_key) = orders.first().map(|order| order.run_key.clone()) else {
            return Err(EngineError::Network("no clients to start".into()));
        };
        for order in &mut orders {
            order.port = link.addr.port();
        }
        let capacity = orders.iter().map(|o| o.streams as usize).sum::<usize>();
        let (arrived_tx, arrived_rx) = bounded(capacity.max(1));
        link.routes
            .lock()
            .map_err(|_| EngineError::Network("routes poisoned".into()))?
            .insert(run_key.clone(), arrived_tx);
        // Dropped on a failed dispatch, which withdraws the route again.
        let mut guard = RunRoute {
            link: Arc::clone(link),
            run_key,
            orders: Vec::new(),
            dispatched: false,
        };
        link.registry
            .dispatch(&orders, cancel)
            .map_err(|error| EngineError::Network(error.to_string()))?;
        guard.orders = orders;
        guard.dispatched = true;
        Ok(Arrivals {
            connections: arrived_rx,
            guard: Box::new(guard),
        })
    }
}

/// Withdraws a run's route and frees its agents when the run is over.
struct RunRoute {
    link: Arc<DataLink>,
    run_key: String,
    orders: Vec<WorkOrder>,
    dispatched: bool,
}

impl Drop for RunRoute {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.link.routes.lock() {
            routes.remove(&self.run_key);
        }
        if self.dispatched {
            self.link.registry.idle(&self.run_key);
        }
    }
}
