//! Network backup: clients send framed blocks over TCP, the lab's streams receive them into
//! the ring, and the writers feed the target, all on one clock.
//!
//! The lab side waits for every (client, stream) connection of a run, starts them together,
//! and counts what each client delivered. The client side (`send_client`) is what an agent, or
//! one of the lab's own loopback clients, runs.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};

use super::buffer::AlignedBuf;
use super::data::DataPool;
use super::error::EngineError;
use super::measure::{LatencyRecorder, round1};
use super::pipeline::Budget;
use super::result::{ClientFigures, ClientStatus, Sample};
use super::source::{self, FileStream, GeneratedStream, Skipped, StreamSource};
use super::wire::{self, ClientSource, FrameKind, Hello, Refusal, Start, StreamEnd, WorkOrder};

/// How long the lab waits for all of a run's connections before it starts without the missing.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a client may send nothing before the lab gives up on that stream.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection may take to say which run it belongs to.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// Socket read timeout: how often a blocked stream looks at the run's stop flag.
const POLL: Duration = Duration::from_millis(200);
/// How long a client waits for the lab's start signal once connected.
const START_TIMEOUT: Duration = CONNECT_TIMEOUT.saturating_add(Duration::from_secs(15));
/// Threads that walk a client's source paths, however many paths its order names.
const MAX_WALKERS: usize = 4;
/// Seed of the data clients generate.
const CLIENT_SEED: u64 = 0x6e65_7462_6163_6b00;

/// One accepted data connection that said which run, client and stream it is.
pub struct Arrival {
    pub hello: Hello,
    pub socket: TcpStream,
}

/// A network run's connections as they arrive; dropping it withdraws the run (stops
/// accepting, and for the lab's own clients, waits for their threads).
pub struct Arrivals {
    pub connections: Receiver<Arrival>,
    /// Released last: whatever keeps the clients and the routing alive.
    pub guard: Box<dyn Send>,
}

/// Where a network run's clients come from.
pub trait ClientGateway: Send + Sync {
    /// Sets the clients of `orders` sending and hands back their connections; gives up
    /// waiting for clients once `cancel` is set.
    fn open(&self, orders: Vec<WorkOrder>, cancel: &AtomicBool) -> Result<Arrivals, EngineError>;
}

/// The lab's own clients: threads on this host that send over loopback.
pub struct LoopbackClients;

impl ClientGateway for LoopbackClients {
    fn open(&self, orders: Vec<WorkOrder>, _cancel: &AtomicBool) -> Result<Arrivals, EngineError> {
        let network = |source: io::Error| EngineError::Network(format!("loopback: {source}"));
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(network)?;
        listener.set_nonblocking(true).map_err(network)?;
        let addr = listener.local_addr().map_err(network)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (arrived_tx, arrived_rx) = bounded(wire_capacity(&orders));
        let run_key = orders
            .first()
            .map(|o| o.run_key.clone())
            .unwrap_or_default();
        let accept_stop = Arc::clone(&stop);
        let acceptor = std::thread::Builder::new()
            .name("backlab-accept".into())
            .spawn(move || accept_loopback(&listener, &run_key, &arrived_tx, &accept_stop))
            .map_err(EngineError::Thread)?;
        let mut clients = Vec::new();
        for order in orders {
            let client_stop = Arc::clone(&stop);
            let name = format!("backlab-client-{}", order.client);
            let handle = std::thread::Builder::new().name(name).spawn(move || {
                let sent = send_client(addr, &order, &client_stop);
                if let Some(error) = sent.error {
                    tracing::warn!(client = %order.client, %error, "loopback client failed");
                }
            });
            match handle {
                Ok(handle) => clients.push(handle),
                Err(error) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(EngineError::Thread(error));
                }
            }
        }
        Ok(Arrivals {
            connections: arrived_rx,
            guard: Box::new(LoopbackGuard {
                stop,
                threads: std::iter::once(acceptor).chain(clients).collect(),
            }),
        })
    }
}

fn wire_capacity(orders: &[WorkOrder]) -> usize {
    orders
        .iter()
        .map(|o| o.streams as usize)
        .sum::<usize>()
        .max(1)
}

/// Stops the acceptor and waits for the loopback clients when the run is over.
struct LoopbackGuard {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for LoopbackGuard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn accept_loopback(
    listener: &TcpListener,
    run_key: &str,
    arrived: &Sender<Arrival>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((socket, peer)) => match read_hello(socket) {
                Ok(arrival) if arrival.hello.run_key == run_key => {
                    let _ = arrived.send(arrival);
                }
                Ok(mut arrival) => reject(&mut arrival.socket, "unknown run"),
                Err(error) => tracing::warn!(%peer, %error, "loopback connection dropped"),
            },
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(error) => {
                tracing::warn!(%error, "loopback accept failed");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Reads the first frame of a data connection, which must be a `Hello`, within the timeout.
pub fn read_hello(socket: TcpStream) -> Result<Arrival, wire::WireError> {
    socket.set_nonblocking(false)?;
    let mut first = wire::Deadline::new(&socket, HELLO_TIMEOUT);
    let hello: Hello = wire::read_message(&mut first, FrameKind::Hello)?;
    Ok(Arrival { hello, socket })
}

/// Sends a `Reject` with its reason; the connection is closed by the caller dropping it.
pub fn reject(socket: &mut TcpStream, reason: &str) {
    let _ = wire::write_message(
        socket,
        FrameKind::Reject,
        &Refusal {
            reason: reason.to_string(),
        },
    );
}

/// What one client delivered to the lab, counted as it arrives.
#[derive(Debug)]
pub struct ClientTally {
    pub name: String,
    pub streams: u32,
    /// Payload bytes received from this client.
    pub received: Arc<AtomicU64>,
    state: Mutex<TallyState>,
}

#[derive(Debug, Default, Clone)]
struct TallyState {
    ended: u32,
    reported_bytes: u64,
    reported_seconds: f64,
    failure: Option<String>,
}

impl ClientTally {
    fn new(name: String, streams: u32) -> Self {
        Self {
            name,
            streams,
            received: Arc::new(AtomicU64::new(0)),
            state: Mutex::new(TallyState::default()),
        }
    }

    fn fail(&self, why: String) {
        if let Ok(mut state) = self.state.lock()
            && state.failure.is_none()
        {
            state.failure = Some(why);
        }
    }

    fn ended(&self, end: &StreamEnd) {
        if let Ok(mut state) = self.state.lock() {
            state.ended += 1;
            state.reported_bytes += end.bytes;
            state.reported_seconds = state.reported_seconds.max(end.seconds);
            if let Some(error) = &end.error
                && state.failure.is_none()
            {
                state.failure = Some(format!("a stream ended early: {error}"));
            }
        }
    }

    /// This client's figures over a run of `seconds`, with its samples.
    pub fn figures(&self, seconds: f64, samples: Vec<Sample>) -> ClientFigures {
        let bytes = self.received.load(Ordering::Relaxed);
        let state = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        ClientFigures {
            name: self.name.clone(),
            streams: self.streams,
            bytes,
            mb_per_s: if seconds > 0.0 {
                round1(bytes as f64 / seconds / 1e6)
            } else {
                0.0
            },
            status: if state.failure.is_some() {
                ClientStatus::Failed
            } else {
                ClientStatus::Done
            },
            error: state.failure,
            reported_bytes: (state.ended > 0).then_some(state.reported_bytes),
            reported_mb_per_s: (state.ended > 0 && state.reported_seconds > 0.0)
                .then(|| round1(state.reported_bytes as f64 / state.reported_seconds / 1e6)),
            samples,
        }
    }
}

/// The lab's end of one data connection: reads `Data` frames into the ring's blocks.
pub struct NetStream {
    socket: TcpStream,
    stream: u32,
    tally: Arc<ClientTally>,
    /// Payload bytes of the current `Data` frame not read yet.
    frame_left: usize,
    done: bool,
    idle_since: Option<Instant>,
    latency: LatencyRecorder,
}

impl NetStream {
    fn new(socket: TcpStream, stream: u32, tally: Arc<ClientTally>) -> Self {
        Self {
            socket,
            stream,
            tally,
            frame_left: 0,
            done: false,
            idle_since: None,
            latency: LatencyRecorder::new(),
        }
    }

    /// Ends this stream as failed: the client's part of the run is partial.
    fn broke(&mut self, why: String) {
        tracing::warn!(client = %self.tally.name, stream = self.stream, %why, "closed a client's stream");
        self.done = true;
        self.tally.fail(format!("stream {}: {why}", self.stream));
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }

    /// Reads into `into`, waiting through read timeouts until data comes, `give_up` is set or
    /// the client has been silent too long. `None` when the stream should stop filling.
    fn read_some(&mut self, into: &mut [u8], give_up: &AtomicBool) -> Option<usize> {
        loop {
            let started = Instant::now();
            match self.socket.read(into) {
                Ok(0) => {
                    self.broke(format!(
                        "the connection closed in the middle of a frame or without an end \
                         frame ({} bytes received from the client)",
                        self.tally.received.load(Ordering::Relaxed)
                    ));
                    return None;
                }
                Ok(count) => {
                    self.latency.record(started.elapsed());
                    self.idle_since = None;
                    return Some(count);
                }
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if give_up.load(Ordering::Relaxed) {
                        return None;
                    }
                    let idle = *self.idle_since.get_or_insert(started);
                    if idle.elapsed() >= IDLE_TIMEOUT {
                        self.broke(format!("sent nothing for {} s", IDLE_TIMEOUT.as_secs()));
                        return None;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    self.broke(format!("receiving failed: {error}"));
                    return None;
                }
            }
        }
    }

    /// Fills `into` completely; false when the stream ended or `give_up` was set.
    fn read_full(&mut self, into: &mut [u8], give_up: &AtomicBool) -> bool {
        let mut filled = 0;
        while filled < into.len() {
            match self.read_some(&mut into[filled..], give_up) {
                Some(count) => filled += count,
                None => return false,
            }
        }
        true
    }

    /// Reads the next frame header; false when the stream ended (cleanly or not).
    fn next_frame(&mut self, give_up: &AtomicBool) -> bool {
        let mut header = [0u8; wire::HEADER_LEN];
        if !self.read_full(&mut header, give_up) {
            return false;
        }
        let header = match wire::read_header(&mut header.as_slice()) {
            Ok(header) => header,
            Err(error) => {
                self.broke(format!("malformed frame: {error}"));
                return false;
            }
        };
        match header.kind {
            // An empty data frame moves nothing: a client that sends them is broken.
            FrameKind::Data if header.len == 0 => {
                self.broke("malformed frame: an empty data frame".to_string());
                false
            }
            FrameKind::Data => {
                self.frame_left = header.len as usize;
                true
            }
            FrameKind::End => {
                let mut payload = vec![0u8; header.len as usize];
                if !self.read_full(&mut payload, give_up) {
                    return false;
                }
                match wire::read_payload::<StreamEnd>(&mut payload.as_slice(), header) {
                    Ok(end) => self.tally.ended(&end),
                    Err(error) => {
                        self.broke(format!("malformed end frame: {error}"));
                        return false;
                    }
                }
                self.done = true;
                false
            }
            other => {
                self.broke(format!("unexpected {other:?} frame during the run"));
                false
            }
        }
    }

    /// Tells the client the run's clock has started; reads then poll the run's stop flag.
    pub fn start(&mut self) {
        let _ = self.socket.set_read_timeout(Some(POLL));
        if let Err(error) = wire::write_message(&mut self.socket, FrameKind::Start, &Start {}) {
            self.broke(format!("cannot signal the start: {error}"));
        }
    }
}

impl StreamSource for NetStream {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        self.fill_or_give_up(buf, want, &AtomicBool::new(false))
    }

    fn fill_or_give_up(
        &mut self,
        buf: &mut AlignedBuf,
        want: usize,
        give_up: &AtomicBool,
    ) -> Result<usize, EngineError> {
        let want = want.min(buf.len());
        let bytes = buf.as_mut_slice();
        let mut filled = 0;
        while filled < want && !self.done && !give_up.load(Ordering::Relaxed) {
            if self.frame_left == 0 {
                if !self.next_frame(give_up) {
                    break;
                }
                continue;
            }
            let room = (want - filled).min(self.frame_left);
            match self.read_some(&mut bytes[filled..filled + room], give_up) {
                Some(count) => {
                    filled += count;
                    self.frame_left -= count;
                    self.tally
                        .received
                        .fetch_add(count as u64, Ordering::Relaxed);
                }
                None => break,
            }
        }
        Ok(filled)
    }

    fn files_done(&self) -> u64 {
        0
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        Some(&self.latency)
    }
}

/// A network run's streams once its clients connected, with what each client delivers.
pub struct Connected {
    pub streams: Vec<NetStream>,
    pub tallies: Vec<Arc<ClientTally>>,
}

/// Waits for every (client, stream) of `orders` to connect, up to `timeout` or a cancel.
/// Unknown or repeated connections are refused; clients with streams missing are marked
/// failed, and their connected streams still send.
pub fn connect_all(
    orders: &[WorkOrder],
    arrivals: &Receiver<Arrival>,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Connected {
    let tallies: Vec<Arc<ClientTally>> = orders
        .iter()
        .map(|order| Arc::new(ClientTally::new(order.client.clone(), order.streams)))
        .collect();
    let mut waiting: BTreeMap<(String, u32), Arc<ClientTally>> = BTreeMap::new();
    for (order, tally) in orders.iter().zip(&tallies) {
        for stream in 0..order.streams {
            waiting.insert((order.client.clone(), stream), Arc::clone(tally));
        }
    }
    let deadline = Instant::now() + timeout;
    let mut streams = Vec::new();
    while !waiting.is_empty() && !cancel.load(Ordering::Relaxed) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match arrivals.recv_timeout(left.min(POLL)) {
            Ok(mut arrival) => {
                let key = (arrival.hello.client.clone(), arrival.hello.stream);
                match waiting.remove(&key) {
                    Some(tally) => {
                        streams.push(NetStream::new(arrival.socket, key.1, tally));
                    }
                    None => reject(
                        &mut arrival.socket,
                        &format!(
                            "client '{}' stream {} is not expected by this run (or already \
                             connected)",
                            key.0, key.1
                        ),
                    ),
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        }
    }
    let cancelled = cancel.load(Ordering::Relaxed);
    for ((_, stream), tally) in waiting {
        tally.fail(if cancelled {
            format!("stream {stream} had not connected when the run was cancelled")
        } else {
            format!(
                "stream {stream} did not connect within {} s",
                timeout.as_secs()
            )
        });
    }
    Connected { streams, tallies }
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

/// What one client sent, by its own count.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ClientSent {
    pub bytes: u64,
    pub seconds: f64,
    /// The first thing that went wrong, if anything did.
    pub error: Option<String>,
}

/// The client side of a network run: opens `order.streams` connections to `addr`, waits for
/// the lab's start, and sends the client's source as `Data` frames until it is exhausted,
/// the lab stops reading, or `stop` is set.
pub fn send_client(addr: SocketAddr, order: &WorkOrder, stop: &AtomicBool) -> ClientSent {
    let streams = order.streams.max(1);
    let link = order.link_mb_s.map(Link::new);
    let skipped = Skipped::default();
    let block_size = order.block_size.clamp(4096, u64::from(wire::MAX_DATA)) as usize;
    let (files_tx, files_rx) = bounded::<PathBuf>(1024);
    let (sources, roots): (Vec<Box<dyn StreamSource + '_>>, &[PathBuf]) = match &order.source {
        ClientSource::Generated { compress_ratio } => {
            let pool = DataPool::new(CLIENT_SEED, *compress_ratio);
            let sources = (0..streams)
                .map(|index| {
                    Box::new(GeneratedStream::new(
                        Arc::clone(&pool),
                        CLIENT_SEED ^ u64::from(index),
                        true,
                    )) as Box<dyn StreamSource>
                })
                .collect();
            (sources, &[])
        }
        ClientSource::Paths(paths) => {
            let sources = (0..streams)
                .map(|_| {
                    Box::new(FileStream::new(files_rx.clone(), false, false, &skipped))
                        as Box<dyn StreamSource>
                })
                .collect();
            (sources, paths.as_slice())
        }
    };
    drop(files_rx);
    // The client's share of the run's bytes, spread over its streams as they ask.
    let share = Budget::new(order.bytes);
    let sources: Vec<Box<dyn StreamSource + '_>> = sources
        .into_iter()
        .map(|inner| {
            Box::new(Budgeted {
                inner,
                share: &share,
            }) as Box<dyn StreamSource>
        })
        .collect();
    // A few walkers share the roots, however many the order names.
    let next_root = AtomicUsize::new(0);
    let results: Vec<ClientSent> = std::thread::scope(|scope| {
        let failed = |why: String| ClientSent {
            error: Some(why),
            ..ClientSent::default()
        };
        let mut walkers = Vec::new();
        for _ in 0..roots.len().min(MAX_WALKERS) {
            let files_tx = files_tx.clone();
            let (skipped, next_root) = (&skipped, &next_root);
            let spawned = std::thread::Builder::new()
                .name("backlab-walk".into())
                .spawn_scoped(scope, move || {
                    while let Some(root) = roots.get(next_root.fetch_add(1, Ordering::Relaxed)) {
                        source::walk_into(root, &files_tx, skipped);
                    }
                });
            match spawned {
                Ok(walker) => walkers.push(walker),
                Err(error) => skipped.record(format!("cannot start a walker: {error}")),
            }
        }
        if walkers.is_empty() && !roots.is_empty() {
            skipped.record("no walker could start; nothing was read".to_string());
        }
        drop(files_tx);
        let senders: Vec<_> = sources
            .into_iter()
            .enumerate()
            .map(|(index, source)| {
                let link = link.as_ref();
                std::thread::Builder::new()
                    .name(format!("backlab-send-{index}"))
                    .spawn_scoped(scope, move || {
                        send_stream(addr, order, index as u32, source, block_size, link, stop)
                    })
            })
            .collect();
        let results = senders
            .into_iter()
            .map(|spawned| match spawned {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|_| failed("a sender thread panicked".into())),
                Err(error) => failed(format!("cannot start a sender thread: {error}")),
            })
            .collect();
        for walker in walkers {
            let _ = walker.join();
        }
        results
    });
    let mut sent = ClientSent::default();
    for result in results {
        sent.bytes += result.bytes;
        sent.seconds = sent.seconds.max(result.seconds);
        if sent.error.is_none() {
            sent.error = result.error;
        }
    }
    if sent.error.is_none() {
        sent.error = skipped.warning();
    }
    sent
}

/// Sends one stream of a client.
fn send_stream(
    addr: SocketAddr,
    order: &WorkOrder,
    stream: u32,
    mut source: Box<dyn StreamSource + '_>,
    block_size: usize,
    link: Option<&Link>,
    stop: &AtomicBool,
) -> ClientSent {
    let mut sent = ClientSent::default();
    let fail = |sent: &mut ClientSent, why: String| {
        sent.error = Some(format!("stream {stream}: {why}"));
    };
    let mut socket = match TcpStream::connect_timeout(&addr, HELLO_TIMEOUT) {
        Ok(socket) => socket,
        Err(error) => {
            fail(&mut sent, format!("cannot connect to {addr}: {error}"));
            return sent;
        }
    };
    let hello = Hello {
        run_key: order.run_key.clone(),
        client: order.client.clone(),
        stream,
    };
    if let Err(error) = wire::write_message(&mut socket, FrameKind::Hello, &hello) {
        fail(&mut sent, format!("cannot say hello: {error}"));
        return sent;
    }
    let _ = socket.set_read_timeout(Some(START_TIMEOUT));
    if let Err(error) = wire::read_message::<Start>(&mut socket, FrameKind::Start) {
        fail(
            &mut sent,
            format!("the lab did not start the stream: {error}"),
        );
        return sent;
    }
    let started = Instant::now();
    let mut buf = AlignedBuf::new(block_size);
    let mut source_error = None;
    // Behind an emulated link a block goes out in slices of about a tenth of a second, so the
    // stream never falls silent for long.
    let slice = link.map_or(block_size, |link| link.slice(block_size));
    'blocks: while !stop.load(Ordering::Relaxed) {
        let count = match source.fill(&mut buf, block_size) {
            Ok(0) => break,
            Ok(count) => count,
            Err(error) => {
                source_error = Some(error.to_string());
                break;
            }
        };
        for part in buf.as_slice()[..count].chunks(slice) {
            if let Some(link) = link {
                link.pace(part.len() as u64, stop);
            }
            if wire::write_frame(&mut socket, FrameKind::Data, part).is_err() {
                // The lab stopped reading: its limit was reached or the run was cancelled.
                sent.seconds = started.elapsed().as_secs_f64();
                return sent;
            }
            sent.bytes += part.len() as u64;
            if stop.load(Ordering::Relaxed) {
                break 'blocks;
            }
        }
    }
    // Stopped before the source ended (the agent is shutting down): the lab must not count
    // this stream as complete.
    if source_error.is_none() && stop.load(Ordering::Relaxed) {
        source_error = Some("the client was stopped before it had sent everything".to_string());
    }
    sent.seconds = started.elapsed().as_secs_f64();
    let end = StreamEnd {
        bytes: sent.bytes,
        seconds: sent.seconds,
        error: source_error.clone(),
    };
    let _ = wire::write_message(&mut socket, FrameKind::End, &end);
    // A graceful close: the lab reads everything sent, then the end of the connection.
    let _ = socket.shutdown(std::net::Shutdown::Write);
    if let Some(error) = source_error {
        fail(&mut sent, error);
    }
    sent
}

/// Refuses an order the way the lab can see at once: every stream connects, says hello, and
/// ends at once with `reason` as its error, so the client is failed with that reason instead of
/// "did not connect". Every stream connects before any waits for the start (the lab starts a
/// run's streams together), and no more than the lab's limit of connections are opened
/// whatever the order asks for.
pub fn refuse_order(addr: SocketAddr, order: &WorkOrder, reason: &str) {
    let streams = order.streams.clamp(1, crate::spec::MAX_CONNECTIONS);
    let mut said_hello = Vec::new();
    for stream in 0..streams {
        let Ok(mut socket) = TcpStream::connect_timeout(&addr, HELLO_TIMEOUT) else {
            break;
        };
        let hello = Hello {
            run_key: order.run_key.clone(),
            client: order.client.clone(),
            stream,
        };
        if wire::write_message(&mut socket, FrameKind::Hello, &hello).is_ok() {
            said_hello.push(socket);
        }
    }
    let deadline = Instant::now() + START_TIMEOUT;
    for mut socket in said_hello {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let _ = socket.set_read_timeout(Some(left));
        if wire::read_message::<Start>(&mut socket, FrameKind::Start).is_ok() {
            let end = StreamEnd {
                bytes: 0,
                seconds: 0.0,
                error: Some(reason.to_string()),
            };
            let _ = wire::write_message(&mut socket, FrameKind::End, &end);
        }
    }
}

/// A client's stream that ends when the client's share of bytes is sent.
struct Budgeted<'a> {
    inner: Box<dyn StreamSource + 'a>,
    share: &'a Budget,
}

impl StreamSource for Budgeted<'_> {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        let grant = self.share.claim(want);
        if grant == 0 {
            return Ok(0);
        }
        let filled = self.inner.fill(buf, grant)?;
        // What the source could not deliver goes back to the other streams.
        self.share.release(grant - filled);
        Ok(filled)
    }

    fn files_done(&self) -> u64 {
        self.inner.files_done()
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        self.inner.read_latency()
    }
}

/// An emulated link: the client's streams together send at most this rate.
struct Link {
    bytes_per_s: f64,
    state: Mutex<(Option<Instant>, u64)>,
}

impl Link {
    fn new(mb_per_s: f64) -> Self {
        Self {
            // At least a byte per second keeps every figure below finite.
            bytes_per_s: (mb_per_s * 1e6).max(1.0),
            state: Mutex::new((None, 0)),
        }
    }

    /// The bytes of a tenth of a second on this link, within 4 KiB and a block.
    fn slice(&self, block_size: usize) -> usize {
        ((self.bytes_per_s / 10.0) as usize).clamp(4096, block_size.max(4096))
    }

    /// Waits until `bytes` more fit under the cap.
    fn pace(&self, bytes: u64, stop: &AtomicBool) {
        let due = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let started = *state.0.get_or_insert_with(Instant::now);
            state.1 += bytes;
            started
                + Duration::try_from_secs_f64(state.1 as f64 / self.bytes_per_s)
                    .unwrap_or(Duration::from_secs(86_400))
        };
        while !stop.load(Ordering::Relaxed) {
            let left = due.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(POLL));
        }
    }
}

/// A fresh secret for a network run: what its clients present in their `Hello`.
pub fn new_run_key() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A lab-side stream and the client's end of its connection, over real loopback TCP.
    fn pair() -> (NetStream, Arc<ClientTally>, TcpStream) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("listen");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        let tally = Arc::new(ClientTally::new("c1".into(), 1));
        let mut stream = NetStream::new(server, 0, Arc::clone(&tally));
        stream.start();
        (stream, tally, client)
    }

    #[test]
    fn an_empty_data_frame_fails_the_client() {
        let (mut stream, tally, mut client) = pair();
        client
            .write_all(&wire::header_bytes(FrameKind::Data, 0))
            .expect("send");
        let mut buf = AlignedBuf::new(64 << 10);
        assert_eq!(stream.fill(&mut buf, 64 << 10).expect("fill"), 0);
        let figures = tally.figures(1.0, Vec::new());
        assert_eq!(figures.status, ClientStatus::Failed);
        assert!(
            figures
                .error
                .unwrap_or_default()
                .contains("empty data frame")
        );
    }

    #[test]
    fn a_silent_client_does_not_hold_a_stopping_run() {
        let (mut stream, _tally, _client) = pair();
        let give_up = AtomicBool::new(false);
        let mut buf = AlignedBuf::new(64 << 10);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                give_up.store(true, Ordering::Relaxed);
            });
            let started = Instant::now();
            let filled = stream
                .fill_or_give_up(&mut buf, 64 << 10, &give_up)
                .expect("fill");
            assert_eq!(filled, 0);
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{:?}",
                started.elapsed()
            );
        });
    }

    #[test]
    fn frames_are_read_across_blocks_and_the_end_is_counted() {
        let (mut stream, tally, mut client) = pair();
        let payload = vec![7u8; 100_000];
        wire::write_frame(&mut client, FrameKind::Data, &payload).expect("data");
        let end = StreamEnd {
            bytes: 100_000,
            seconds: 0.5,
            error: None,
        };
        wire::write_message(&mut client, FrameKind::End, &end).expect("end");
        let mut buf = AlignedBuf::new(64 << 10);
        assert_eq!(stream.fill(&mut buf, 64 << 10).expect("fill"), 64 << 10);
        assert_eq!(
            stream.fill(&mut buf, 64 << 10).expect("fill"),
            100_000 - (64 << 10)
        );
        assert_eq!(stream.fill(&mut buf, 64 << 10).expect("fill"), 0);
        let figures = tally.figures(1.0, Vec::new());
        assert_eq!(figures.status, ClientStatus::Done);
        assert_eq!(figures.bytes, 100_000);
        assert_eq!(figures.reported_bytes, Some(100_000));
    }
}
