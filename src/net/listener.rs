//! The lab's data listener: the TCP port agents register on and network-backup streams
//! arrive at. Each connection says what it is in its first frame; data connections are handed
//! to the run whose key they carry, control connections join the agent registry. Anything
//! malformed or unauthenticated is closed with a logged reason.
//!
//! Until a connection has sent its first frame it costs a task on the async runtime and a
//! descriptor, never a thread, and only so many may wait at once, each address holding at most
//! a share of them: a flood of silent connections displaces its own oldest members, not the
//! agents of other hosts. Only a connection that named a live run, or an agent that gave the
//! right token, is handed to a thread.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, bounded};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{Notify, oneshot};

use super::HELLO_TIMEOUT;
use super::receive::{Arrival, Arrivals, ClientGateway};
use super::registry::Registry;
use super::wire::{self, FrameKind, Hello, Refusal, Register, Registered, WireError, WorkOrder};
use crate::engine::error::EngineError;

/// How long an agent's control connection may stay silent (agents ping every few seconds).
const CONTROL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a new connection may take to send its whole first frame, however it trickles it.
/// Clients and agents send it as soon as they are connected.
pub const FIRST_FRAME_TIMEOUT: Duration = Duration::from_secs(3);
/// Connections waiting for their first frame, from every address together.
pub const MAX_PENDING: usize = 512;
/// Of those, the most one address may hold: every connection of the widest network run
/// arriving at once still fits, and a flood from one host leaves the other half free.
pub const MAX_PENDING_PER_ADDRESS: usize = crate::spec::MAX_CONNECTIONS as usize;
/// Agents' control connections served at once (each holds a thread); more are closed.
const MAX_CONTROL_CONNECTIONS: usize = 1024;
/// How long writing a refusal to a new connection may take.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);
/// Lines a second the listener logs about connections it closes; the rest are counted.
const LOG_LINES_PER_S: u32 = 20;
/// How long the listener waits after a failed accept (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The data listener and what it routes to.
pub struct DataLink {
    addr: SocketAddr,
    token: Option<Arc<str>>,
    registry: Registry,
    routes: Mutex<HashMap<String, Sender<Arrival>>>,
    /// Control connections being served by their threads.
    control_open: AtomicUsize,
    pending: Mutex<Pending>,
    log: LogLimit,
    stop: Notify,
}

impl DataLink {
    /// Binds `bind` and starts accepting on the tokio runtime this is called from.
    pub fn start(bind: SocketAddr, token: Option<Arc<str>>) -> io::Result<Arc<DataLink>> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            io::Error::other("the data listener must be started on a tokio runtime")
        })?;
        let listener = std::net::TcpListener::bind(bind)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let link = Arc::new(DataLink {
            addr,
            token,
            registry: Registry::default(),
            routes: Mutex::new(HashMap::new()),
            control_open: AtomicUsize::new(0),
            pending: Mutex::new(Pending::default()),
            log: LogLimit::default(),
            stop: Notify::new(),
        });
        runtime.spawn(Arc::clone(&link).accept_loop(listener));
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
        // A stored permit: the accept loop sees it even if it is not waiting right now.
        self.stop.notify_one();
    }

    /// Connections that have not sent their first frame yet.
    pub fn pending(&self) -> usize {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).total
    }

    async fn accept_loop(self: Arc<Self>, listener: tokio::net::TcpListener) {
        loop {
            let accepted = tokio::select! {
                () = self.stop.notified() => break,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((socket, peer)) => self.admit(socket, peer),
                Err(error) => {
                    if let Some(left_out) = self.log.admit() {
                        tracing::warn!(%error, left_out, "data listener: accept failed");
                    }
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        }
    }

    /// Gives a new connection a pending slot, displacing an older silent one when the
    /// address's share or every slot is taken, and reads its first frame on a task.
    fn admit(self: &Arc<Self>, socket: tokio::net::TcpStream, peer: SocketAddr) {
        let (slot, displaced) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .admit(peer.ip());
        tokio::spawn(Arc::clone(self).handshake(socket, peer, slot, displaced));
    }

    /// Reads a connection's first frame within the deadline and hands the connection on;
    /// logs why it was closed otherwise.
    async fn handshake(
        self: Arc<Self>,
        mut socket: tokio::net::TcpStream,
        peer: SocketAddr,
        slot: u64,
        displaced: oneshot::Receiver<()>,
    ) {
        let outcome = {
            let _slot = Slot {
                link: &self,
                address: peer.ip(),
                slot,
            };
            let first = tokio::select! {
                _ = displaced => Err(
                    "closed before its first frame to make room for newer connections".to_string()
                ),
                first = tokio::time::timeout(FIRST_FRAME_TIMEOUT, read_first(&mut socket)) => {
                    match first {
                        Ok(first) => first,
                        Err(_) => Err(format!(
                            "sent no complete first frame within {} s",
                            FIRST_FRAME_TIMEOUT.as_secs()
                        )),
                    }
                }
            };
            match first {
                Ok(first) => self.hand_on(socket, peer, first).await,
                Err(reason) => Err(reason),
            }
        };
        if let Err(reason) = outcome {
            self.closed(peer, &reason);
        }
    }

    /// Logs a closed connection, at most `LOG_LINES_PER_S` a second.
    fn closed(&self, peer: SocketAddr, reason: &str) {
        if let Some(left_out) = self.log.admit() {
            if left_out > 0 {
                tracing::warn!(%peer, %reason, left_out, "data listener closed a connection");
            } else {
                tracing::warn!(%peer, %reason, "data listener closed a connection");
            }
        }
    }

    /// Routes a connection by its first frame: a data stream to its run, an agent, once its
    /// name and token are checked, to a thread that serves its control connection.
    async fn hand_on(
        self: &Arc<Self>,
        socket: tokio::net::TcpStream,
        peer: SocketAddr,
        first: First,
    ) -> Result<(), String> {
        match first {
            First::Hello(hello) => {
                let route = self
                    .routes
                    .lock()
                    .map_err(|_| "routes poisoned".to_string())?
                    .get(&hello.run_key)
                    .cloned();
                let Some(route) = route else {
                    refuse(socket, "unknown or finished run").await;
                    return Err(format!(
                        "client '{}' named an unknown or finished run",
                        hello.client
                    ));
                };
                let client = hello.client.clone();
                let socket = blocking(socket).map_err(|e| e.to_string())?;
                match route.try_send(Arrival { hello, socket }) {
                    Ok(()) => Ok(()),
                    Err(refused) => {
                        if let Ok(socket) = nonblocking(refused.into_inner().socket) {
                            refuse(
                                socket,
                                "the run has started without this stream, or is over",
                            )
                            .await;
                        }
                        Err(format!(
                            "client '{client}' connected after its run had started"
                        ))
                    }
                }
            }
            First::Register(register) => {
                if let Err(message) = crate::spec::check_name(&register.name) {
                    refuse(socket, &format!("agent name: {message}")).await;
                    return Err(format!("agent name {message}"));
                }
                if let Err(message) = super::registry::check_registration(&register) {
                    refuse(socket, &message).await;
                    return Err(format!("agent '{}': {message}", register.name));
                }
                if let Some(token) = &self.token {
                    let given = register.token.as_deref().unwrap_or_default();
                    if !crate::policy::same_secret(given.as_bytes(), token.as_bytes()) {
                        refuse(socket, "wrong or missing token (--token)").await;
                        return Err(format!(
                            "agent '{}' gave a wrong or missing token",
                            register.name
                        ));
                    }
                }
                self.serve_control(socket, peer, register)
            }
        }
    }

    /// Hands an authenticated agent's control connection to a thread of its own.
    fn serve_control(
        self: &Arc<Self>,
        socket: tokio::net::TcpStream,
        peer: SocketAddr,
        register: Register,
    ) -> Result<(), String> {
        if self.control_open.fetch_add(1, Ordering::Relaxed) >= MAX_CONTROL_CONNECTIONS {
            self.control_open.fetch_sub(1, Ordering::Relaxed);
            return Err(format!(
                "agent '{}': {MAX_CONTROL_CONNECTIONS} agents are connected already",
                register.name
            ));
        }
        let socket = match blocking(socket) {
            Ok(socket) => socket,
            Err(error) => {
                self.control_open.fetch_sub(1, Ordering::Relaxed);
                return Err(error.to_string());
            }
        };
        let link = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("backlab-agent".into())
            .spawn(move || {
                if let Err(reason) = link.control(socket, peer, &register) {
                    tracing::warn!(%peer, %reason, "data listener closed a connection");
                }
                link.control_open.fetch_sub(1, Ordering::Relaxed);
            });
        spawned.map(|_| ()).map_err(|error| {
            self.control_open.fetch_sub(1, Ordering::Relaxed);
            format!("cannot start a thread: {error}")
        })
    }

    /// An agent's control connection: registers it, then watches it until it ends.
    fn control(
        &self,
        mut socket: TcpStream,
        peer: SocketAddr,
        hello: &Register,
    ) -> Result<(), String> {
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

/// What a connection said it is in its first frame.
enum First {
    Hello(Hello),
    Register(Register),
}

/// Reads and decodes a connection's first frame; the payload buffer grows only as bytes
/// arrive. An error is the reason the connection is closed.
async fn read_first(socket: &mut tokio::net::TcpStream) -> Result<First, String> {
    let mut bytes = [0u8; wire::HEADER_LEN];
    let read = socket
        .read(&mut bytes[..1])
        .await
        .map_err(|e| e.to_string())?;
    if read == 0 {
        return Err(WireError::Closed.to_string());
    }
    socket
        .read_exact(&mut bytes[1..])
        .await
        .map_err(|e| e.to_string())?;
    let header = wire::read_header(&mut bytes.as_slice()).map_err(|e| e.to_string())?;
    if !matches!(header.kind, FrameKind::Hello | FrameKind::Register) {
        return Err(format!(
            "a connection may not open with a {:?} frame",
            header.kind
        ));
    }
    let mut payload = Vec::new();
    (&mut *socket)
        .take(u64::from(header.len))
        .read_to_end(&mut payload)
        .await
        .map_err(|e| e.to_string())?;
    if payload.len() < header.len as usize {
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof).to_string());
    }
    let payload = &mut payload.as_slice();
    let first = if header.kind == FrameKind::Hello {
        wire::read_payload(payload, header).map(First::Hello)
    } else {
        wire::read_payload(payload, header).map(First::Register)
    };
    first.map_err(|e| e.to_string())
}

/// Sends a `Reject` with its reason, within a short deadline, and closes the connection.
async fn refuse(mut socket: tokio::net::TcpStream, reason: &str) {
    let mut frame = Vec::new();
    let refusal = Refusal {
        reason: reason.to_string(),
    };
    if wire::write_message(&mut frame, FrameKind::Reject, &refusal).is_ok() {
        let _ = tokio::time::timeout(REFUSAL_TIMEOUT, socket.write_all(&frame)).await;
    }
}

/// A connection leaves the runtime for a thread: blocking, with the timeouts the engine
/// expects until it sets its own.
fn blocking(socket: tokio::net::TcpStream) -> io::Result<TcpStream> {
    let socket = socket.into_std()?;
    socket.set_nonblocking(false)?;
    socket.set_read_timeout(Some(HELLO_TIMEOUT))?;
    socket.set_write_timeout(Some(HELLO_TIMEOUT))?;
    Ok(socket)
}

/// A connection comes back to the runtime (to be refused there).
fn nonblocking(socket: TcpStream) -> io::Result<tokio::net::TcpStream> {
    socket.set_nonblocking(true)?;
    tokio::net::TcpStream::from_std(socket)
}

/// The connections waiting for their first frame, by address, oldest first. Dropping a
/// connection's sender tells its task to close it.
#[derive(Default)]
struct Pending {
    next_slot: u64,
    total: usize,
    by_address: HashMap<IpAddr, VecDeque<(u64, oneshot::Sender<()>)>>,
}

impl Pending {
    /// Takes a slot for a new connection from `address`. When the address holds its share,
    /// its own oldest connection gives way; when every slot is taken, the oldest connection of
    /// the address holding the most does. A client that sends its first frame at once is
    /// never the oldest for long, so only silent connections are displaced.
    fn admit(&mut self, address: IpAddr) -> (u64, oneshot::Receiver<()>) {
        let own = self.by_address.get(&address).map_or(0, VecDeque::len);
        let give_way = if own >= MAX_PENDING_PER_ADDRESS {
            Some(address)
        } else if self.total >= MAX_PENDING {
            self.by_address
                .iter()
                .max_by_key(|(_, queue)| queue.len())
                .map(|(address, _)| *address)
        } else {
            None
        };
        if let Some(address) = give_way {
            self.displace_oldest(address);
        }
        let (displace, displaced) = oneshot::channel();
        let slot = self.next_slot;
        self.next_slot += 1;
        self.by_address
            .entry(address)
            .or_default()
            .push_back((slot, displace));
        self.total += 1;
        (slot, displaced)
    }

    fn displace_oldest(&mut self, address: IpAddr) {
        if let Some(queue) = self.by_address.get_mut(&address)
            && queue.pop_front().is_some()
        {
            self.total -= 1;
            if queue.is_empty() {
                self.by_address.remove(&address);
            }
        }
    }

    /// Frees the slot of a connection that sent its first frame, failed or was displaced.
    fn release(&mut self, address: IpAddr, slot: u64) {
        if let Some(queue) = self.by_address.get_mut(&address)
            && let Some(index) = queue.iter().position(|(held, _)| *held == slot)
        {
            queue.remove(index);
            self.total -= 1;
            if queue.is_empty() {
                self.by_address.remove(&address);
            }
        }
    }
}

/// A pending connection's slot, freed however its handshake ends.
struct Slot<'a> {
    link: &'a DataLink,
    address: IpAddr,
    slot: u64,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.link
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release(self.address, self.slot);
    }
}

/// Keeps a flood of bad connections from flooding the log: `LOG_LINES_PER_S` lines a second,
/// and the next line says how many were left out.
#[derive(Default)]
struct LogLimit {
    window: Mutex<LogWindow>,
}

#[derive(Default)]
struct LogWindow {
    started: Option<Instant>,
    lines: u32,
    left_out: u64,
}

impl LogLimit {
    /// Whether a line may be logged now, with how many were left out before it.
    fn admit(&self) -> Option<u64> {
        let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let fresh = window
            .started
            .is_none_or(|started| now.duration_since(started) >= Duration::from_secs(1));
        if fresh {
            window.started = Some(now);
            window.lines = 0;
        }
        if window.lines >= LOG_LINES_PER_S {
            window.left_out += 1;
            return None;
        }
        window.lines += 1;
        Some(std::mem::take(&mut window.left_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn one_address_only_displaces_its_own_connections() {
        let mut pending = Pending::default();
        let mut first = pending.admit(address(1)).1;
        let mut others: Vec<_> = (0..10).map(|_| pending.admit(address(2)).1).collect();
        for _ in 1..MAX_PENDING_PER_ADDRESS {
            pending.admit(address(1));
        }
        assert_eq!(pending.total, MAX_PENDING_PER_ADDRESS + 10);
        assert!(
            first
                .try_recv()
                .is_err_and(|e| e == oneshot::error::TryRecvError::Empty)
        );
        // One more from the same address: its oldest gives way, the other address is untouched.
        pending.admit(address(1));
        assert_eq!(pending.total, MAX_PENDING_PER_ADDRESS + 10);
        assert_eq!(first.try_recv(), Err(oneshot::error::TryRecvError::Closed));
        for other in &mut others {
            assert_eq!(other.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        }
    }

    #[test]
    fn when_every_slot_is_taken_the_biggest_holder_gives_way() {
        let mut pending = Pending::default();
        let mut small: Vec<_> = (0..MAX_PENDING - MAX_PENDING_PER_ADDRESS)
            .map(|index| pending.admit(address(10 + (index % 100) as u8)).1)
            .collect();
        let (oldest_slot, mut oldest) = pending.admit(address(1));
        for _ in 1..MAX_PENDING_PER_ADDRESS {
            pending.admit(address(1));
        }
        assert_eq!(pending.total, MAX_PENDING);
        let (newcomer, _kept) = pending.admit(address(200));
        assert_eq!(pending.total, MAX_PENDING);
        assert_eq!(oldest.try_recv(), Err(oneshot::error::TryRecvError::Closed));
        assert!(
            small
                .iter_mut()
                .all(|rx| rx.try_recv() == Err(oneshot::error::TryRecvError::Empty))
        );
        // Releasing a displaced slot changes nothing; releasing a held one frees it.
        pending.release(address(1), oldest_slot);
        assert_eq!(pending.total, MAX_PENDING);
        pending.release(address(200), newcomer);
        assert_eq!(pending.total, MAX_PENDING - 1);
    }

    #[test]
    fn the_log_is_limited_per_second() {
        let limit = LogLimit::default();
        let admitted = (0..100).filter(|_| limit.admit().is_some()).count();
        assert_eq!(admitted, LOG_LINES_PER_S as usize);
        limit.window.lock().unwrap().started = Some(Instant::now() - Duration::from_secs(2));
        assert_eq!(limit.admit(), Some(100 - u64::from(LOG_LINES_PER_S)));
    }
}
