//! A client's side of a network run, as an agent or one of the lab's loopback clients runs
//! it: connect each stream, wait for the lab's start, and send the client's source as `Data`
//! frames, behind an emulated link when the run has one.

use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};

use super::wire::{self, ClientSource, FrameKind, Hello, Start, StreamEnd, WorkOrder};
use super::{CONNECT_TIMEOUT, HELLO_TIMEOUT, POLL};
use crate::engine::buffer::AlignedBuf;
use crate::engine::data::DataPool;
use crate::engine::error::EngineError;
use crate::engine::measure::LatencyRecorder;
use crate::engine::pipeline::Budget;
use crate::engine::source::{self, FileStream, GeneratedStream, Renewal, Skipped, StreamSource};

/// How long a client waits for the lab's start signal once connected.
const START_TIMEOUT: Duration = CONNECT_TIMEOUT.saturating_add(Duration::from_secs(15));
/// Threads that walk a client's source paths, however many paths its order names.
const MAX_WALKERS: usize = 4;
/// Seed of the data clients generate.
const CLIENT_SEED: u64 = 0x6e65_7462_6163_6b00;

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
    let (files_tx, files_rx) = bounded::<source::SourceFile>(1024);
    let (sources, roots) = client_sources(&order.source, streams, &files_rx, &skipped);
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
        let walkers = start_walkers(scope, roots, files_tx, &skipped, &next_root);
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
    client_total(results, &skipped)
}

/// The client's streams, one per stream of the order, and the roots to walk: generated data,
/// or the files the walkers send down `files`; `skipped` keeps what could not be read.
fn client_sources<'a>(
    client_source: &'a ClientSource,
    streams: u32,
    files: &Receiver<source::SourceFile>,
    skipped: &'a Skipped,
) -> (Vec<Box<dyn StreamSource + 'a>>, &'a [PathBuf]) {
    match client_source {
        ClientSource::Generated { compress_ratio } => {
            let pool = DataPool::new(CLIENT_SEED, *compress_ratio);
            let sources = (0..streams)
                .map(|index| {
                    Box::new(GeneratedStream::new(
                        Arc::clone(&pool),
                        CLIENT_SEED ^ u64::from(index),
                        Renewal::Refresh,
                    )) as Box<dyn StreamSource>
                })
                .collect();
            (sources, &[])
        }
        ClientSource::Paths(paths) => {
            let sources = (0..streams)
                .map(|_| {
                    Box::new(FileStream::new(files.clone(), false, false, skipped))
                        as Box<dyn StreamSource>
                })
                .collect();
            (sources, paths.as_slice())
        }
    }
}

/// Starts the threads that walk `roots` into `files`, no more than [`MAX_WALKERS`], each
/// taking the next root from `next_root`; a walker that cannot start is recorded in
/// `skipped`. The walkers hold the only senders of `files` once this returns.
fn start_walkers<'scope>(
    scope: &'scope Scope<'scope, '_>,
    roots: &'scope [PathBuf],
    files: Sender<source::SourceFile>,
    skipped: &'scope Skipped,
    next_root: &'scope AtomicUsize,
) -> Vec<ScopedJoinHandle<'scope, ()>> {
    let mut walkers = Vec::new();
    for _ in 0..roots.len().min(MAX_WALKERS) {
        let files = files.clone();
        let spawned = std::thread::Builder::new()
            .name("backlab-walk".into())
            .spawn_scoped(scope, move || {
                while let Some(root) = roots.get(next_root.fetch_add(1, Ordering::Relaxed)) {
                    source::walk_into(root, &files, skipped);
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
    walkers
}

/// What the client sent, from its streams' own counts: their bytes, the longest of their
/// times, and the first error, else what the walkers could not read.
fn client_total(results: Vec<ClientSent>, skipped: &Skipped) -> ClientSent {
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
