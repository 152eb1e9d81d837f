//! The lab's end of a network run's data connections: which run, client and stream each is,
//! the reading of `Data` frames into the pipeline's blocks, and what each client delivered.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::wire::{self, FrameKind, Hello, Refusal, Start, StreamEnd, WorkOrder};
use super::{HELLO_TIMEOUT, POLL};
use crate::engine::buffer::AlignedBuf;
use crate::engine::error::EngineError;
use crate::engine::measure::{LatencyRecorder, round1};
use crate::engine::remote::RemoteClient;
use crate::engine::result::{ClientFigures, ClientStatus, Sample};
use crate::engine::source::StreamSource;

/// How long a client may send nothing before the lab gives up on that stream.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

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
}

impl RemoteClient for ClientTally {
    fn received(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.received)
    }

    /// This client's figures over a run of `seconds`, with its samples.
    fn figures(&self, seconds: f64, samples: Vec<Sample>) -> ClientFigures {
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
pub struct ConnectedStreams {
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
) -> ConnectedStreams {
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
    ConnectedStreams { streams, tallies }
}

/// A fresh secret for a network run: what its clients present in their `Hello`.
pub fn new_run_key() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{Ipv4Addr, TcpListener};

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
