//! The HTTP front door: accepts connections, bounds how many are open and how long each may
//! dawdle, and answers the ones beyond the bound with a short 503 instead of letting them pile up.
//!
//! A connection must deliver a complete request head within [`HEADER_READ_TIMEOUT`] of opening
//! or of finishing its previous request (so the same bound is the keep-alive idle timeout), a
//! request body within [`BODY_READ_TIMEOUT`], and must take what the lab writes within
//! [`WRITE_STALL_TIMEOUT`]. Long answers that keep flowing (event streams) have no limit.
//!
//! At the cap, a new connection takes the place of the connection that has been idle longest
//! (no request in flight), provided it has been idle for [`RECLAIM_IDLE_AFTER`]: a crowd of idle
//! connections cannot lock everyone else out. With no such connection, the newcomer is refused.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::Sleep;
use tower::ServiceExt;

/// How long a connection may take to send a complete request head, counted from when it opens
/// or finishes its previous request: the header-read and the keep-alive idle timeout.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request body (at most 1 MiB) may take to arrive, counted from its head.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a write may wait for a client that does not read before the connection is closed.
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection must have been idle before a newcomer at the cap may take its place:
/// long enough for a client on loopback or a LAN to send its request head, short enough that a
/// burst of idle connections turns a real request away for a moment at most.
pub const RECLAIM_IDLE_AFTER: Duration = Duration::from_millis(250);
/// How long a connection that is asked to close (shutdown, reclaimed) may take to finish the
/// request head it is sending.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// How long a refused connection is given to read its 503 before it is dropped.
const REFUSAL_LINGER: Duration = Duration::from_secs(2);
/// Refused connections lingering at once; beyond, they are dropped right after the 503.
const MAX_LINGERING_REFUSALS: usize = 64;
/// At most one log line per this interval about refusals or accept errors.
const LOG_INTERVAL: Duration = Duration::from_secs(10);
/// The pause after an accept error (out of file descriptors, typically).
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// File descriptors kept back from HTTP: the database, the data listener's agents and streams,
/// the files runs read and write.
const RESERVED_FILES: u64 = 512;
/// More connections than this rarely helps a lab.
const MAX_CONNECTIONS: usize = 1024;
/// A few dozen connections must always fit.
const MIN_CONNECTIONS: usize = 32;

/// The limit on open files: what the process started with and what it runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    /// The soft limit at start (`None`: unlimited).
    pub started_with: Option<u64>,
    /// The soft limit now.
    pub soft: Option<u64>,
    /// The hard limit, the most the soft one can be raised to.
    pub hard: Option<u64>,
}

/// Raises the soft limit on open files to the hard one. The usual soft default (1024) would let
/// a few hundred idle clients starve the database and the data listener, while the hard limit
/// is typically far higher. A failure leaves the limit as it was (logged).
pub fn raise_file_limit() -> FileLimit {
    let before = getrlimit(Resource::Nofile);
    let mut soft = before.current;
    if before.current != before.maximum {
        let raised = Rlimit {
            current: before.maximum,
            maximum: before.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => soft = getrlimit(Resource::Nofile).current,
            Err(error) => tracing::warn!(%error, "cannot raise the limit on open files"),
        }
    }
    FileLimit {
        started_with: before.current,
        soft,
        hard: before.maximum,
    }
}

/// How many HTTP connections the lab holds at once, given its limit on open files (`None`:
/// unlimited): [`RESERVED_FILES`] stay for everything else, HTTP gets half of the rest, and the
/// result lies between 32 and 1024.
pub fn connection_cap(open_files: Option<u64>) -> usize {
    let share = open_files
        .unwrap_or(u64::MAX)
        .saturating_sub(RESERVED_FILES)
        / 2;
    usize::try_from(share)
        .unwrap_or(usize::MAX)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// Accepts connections on `listener` and serves `app` on them, within the bounds above, until
/// `shutdown` completes; then asks every connection to close and waits up to `grace` for them.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    max_connections: usize,
    grace: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let tracker = Arc::new(Tracker::new(max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    let lingering = Arc::new(AtomicUsize::new(0));
    let refusals = Throttle::default();
    let accept_errors = Throttle::default();
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.as_mut() => break,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                if let Some(count) = accept_errors.hit() {
                    tracing::warn!(%error, count, "cannot accept connections");
                }
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        match tracker.admit() {
            Some(slot) => {
                let connection =
                    serve_connection(stream, slot, app.clone(), builder.clone(), stop_rx.clone());
                tokio::spawn(connection);
            }
            None => {
                if let Some(count) = refusals.hit() {
                    tracing::warn!(
                        limit = tracker.cap,
                        refused = count,
                        "refusing connections: the lab is serving as many as its limit"
                    );
                }
                refuse(stream, tracker.cap, &lingering);
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(stop_rx);
    // Every connection holds a receiver: closed() completes when the last one ends.
    let _ = tokio::time::timeout(grace, stop_tx.closed()).await;
}

/// Errors of one connection that was already gone when accepted: nothing to wait for.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Serves one connection until it ends, is reclaimed, or the lab shuts down.
async fn serve_connection(
    stream: TcpStream,
    slot: Slot,
    app: Router,
    builder: http1::Builder,
    mut stop: watch::Receiver<bool>,
) {
    let state = Arc::clone(&slot.state);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let in_flight = InFlight::begin(&state);
        let request = request.map(|body| Body::new(DeadlineBody::new(body, BODY_READ_TIMEOUT)));
        let response = app.clone().oneshot(request);
        async move {
            let response = response.await?;
            // The request counts as in flight until its answer's last byte is handed over.
            Ok::<_, Infallible>(response.map(move |body| {
                body.map_frame(move |frame| {
                    let _answering = &in_flight;
                    frame
                })
            }))
        }
    });
    let io = TokioIo::new(StallLimited::new(stream));
    let mut connection = pin!(builder.serve_connection(io, service));
    tokio::select! {
        served = connection.as_mut() => {
            log_end(served);
            return;
        }
        () = slot.state.close.notified() => {}
        _ = stop.wait_for(|stop| *stop) => {}
    }
    // A request in flight is answered; a connection in the middle of a request head gets
    // a moment to finish it, then is dropped.
    connection.as_mut().graceful_shutdown();
    loop {
        match tokio::time::timeout(CLOSE_GRACE, connection.as_mut()).await {
            Ok(served) => return log_end(served),
            Err(_) if slot.state.in_flight.load(Ordering::Acquire) == 0 => return,
            Err(_) => {}
        }
    }
}

fn log_end(served: Result<(), hyper::Error>) {
    if let Err(error) = served {
        tracing::debug!(%error, "connection ended");
    }
}

/// Answers a connection beyond the cap with a 503 and closes it, without taking a slot.
fn refuse(stream: TcpStream, cap: usize, lingering: &Arc<AtomicUsize>) {
    let body = format!("the lab is serving {cap} connections, its limit; try again in a moment\n");
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // A fresh socket's send buffer takes this at once; if not, the client gets no answer.
    let _ = stream.try_write(response.as_bytes());
    if lingering.fetch_add(1, Ordering::AcqRel) >= MAX_LINGERING_REFUSALS {
        lingering.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let lingering = Arc::clone(lingering);
    tokio::spawn(async move {
        // Closing a socket with unread input resets it, and the client may lose the 503: close
        // the sending side, then read what the client sent until it closes too.
        let _ = tokio::time::timeout(REFUSAL_LINGER, drain(stream)).await;
        lingering.fetch_sub(1, Ordering::AcqRel);
    });
}

async fn drain(mut stream: TcpStream) {
    if std::future::poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx))
        .await
        .is_err()
    {
        return;
    }
    let mut buffer = [0_u8; 4096];
    loop {
        if stream.readable().await.is_err() {
            return;
        }
        match stream.try_read(&mut buffer) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// The open connections, and which of them may give way to a newcomer.
struct Tracker {
    cap: usize,
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<ConnectionState>>>,
}

/// What the tracker knows of one connection.
struct ConnectionState {
    epoch: Instant,
    /// Requests being answered.
    in_flight: AtomicUsize,
    /// Milliseconds since the tracker's epoch when the connection last became idle.
    idle_since_ms: AtomicU64,
    /// Asks the connection to close.
    close: Notify,
}

impl ConnectionState {
    fn now_ms(&self) -> u64 {
        millis(self.epoch.elapsed())
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Tracker {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            epoch: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// A slot for a new connection: a free one, or the one of the connection idle longest
    /// (asked to close); `None` when every connection is busy or only just idle.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let now_ms = millis(self.epoch.elapsed());
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.len() >= self.cap {
            let reclaim_ms = millis(RECLAIM_IDLE_AFTER);
            let idlest = open
                .iter()
                .filter(|(_, state)| state.in_flight.load(Ordering::Acquire) == 0)
                .map(|(id, state)| (*id, state.idle_since_ms.load(Ordering::Acquire)))
                .filter(|(_, idle_since_ms)| now_ms.saturating_sub(*idle_since_ms) >= reclaim_ms)
                .min_by_key(|(_, idle_since_ms)| *idle_since_ms);
            let (id, _) = idlest?;
            if let Some(reclaimed) = open.remove(&id) {
                reclaimed.close.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnectionState {
            epoch: self.epoch,
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(now_ms),
            close: Notify::new(),
        });
        open.insert(id, Arc::clone(&state));
        Some(Slot {
            tracker: Arc::clone(self),
            id,
            state,
        })
    }
}

/// A connection's place among the open ones; given back when dropped.
struct Slot {
    tracker: Arc<Tracker>,
    id: u64,
    state: Arc<ConnectionState>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .tracker
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.remove(&self.id);
    }
}

/// One request being answered on a connection; the connection is idle again when the last
/// one is dropped.
struct InFlight(Arc<ConnectionState>);

impl InFlight {
    fn begin(state: &Arc<ConnectionState>) -> Self {
        state.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(state))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0
            .idle_since_ms
            .store(self.0.now_ms(), Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Counts events and says when one log line about them is due: at most one per
/// [`LOG_INTERVAL`].
#[derive(Default)]
struct Throttle {
    state: Mutex<ThrottleState>,
}

#[derive(Default)]
struct ThrottleState {
    last_logged: Option<Instant>,
    unlogged: u64,
}

impl Throttle {
    /// Counts one event; `Some(events since the last line)` when a line is due.
    fn hit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.unlogged += 1;
        let due = state
            .last_logged
            .is_none_or(|last| last.elapsed() >= LOG_INTERVAL);
        if !due {
            return None;
        }
        state.last_logged = Some(Instant::now());
        Some(std::mem::take(&mut state.unlogged))
    }
}

/// The body was not complete within [`BODY_READ_TIMEOUT`].
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {} s", BODY_READ_TIMEOUT.as_secs())]
struct BodyTooSlow;

/// A request body that fails when it has not arrived by a deadline.
struct DeadlineBody {
    body: Incoming,
    deadline: Pin<Box<Sleep>>,
}

impl DeadlineBody {
    fn new(body: Incoming, timeout: Duration) -> Self {
        Self {
            body,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(BodyTooSlow.into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A TCP stream whose writes fail once the client has not taken anything for
/// [`WRITE_STALL_TIMEOUT`].
struct StallLimited {
    stream: TcpStream,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl StallLimited {
    fn new(stream: TcpStream) -> Self {
        Self {
            stream,
            stalled: None,
        }
    }

    fn watch<T>(
        &mut self,
        polled: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(WRITE_STALL_TIMEOUT)));
        if stalled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client has not read the answer for too long",
            )));
        }
        Poll::Pending
    }
}

impl AsyncRead for StallLimited {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for StallLimited {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch(polled, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.watch(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch(polled, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_room_for_everything_else() {
        // systemd's default soft limit, once raised to a hard limit of 1024 too.
        assert_eq!(connection_cap(Some(1024)), 256);
        assert_eq!(connection_cap(Some(4096)), 1024);
        assert_eq!(connection_cap(Some(524_288)), 1024);
        assert_eq!(connection_cap(None), 1024);
        assert_eq!(connection_cap(Some(600)), 44);
        assert_eq!(connection_cap(Some(256)), 32);
        assert_eq!(connection_cap(Some(0)), 32);
    }

    #[test]
    fn the_soft_file_limit_is_raised_to_the_hard_one() {
        let limit = raise_file_limit();
        // An unlimited hard limit may be more than the kernel allows for a soft one.
        if limit.hard.is_some() {
            assert_eq!(limit.soft, limit.hard);
            assert_eq!(getrlimit(Resource::Nofile).current, limit.hard);
        }
    }

    #[test]
    fn a_newcomer_at_the_cap_takes_the_place_of_a_connection_idle_long_enough() {
        let mut tracker = Tracker::new(2);
        // A tracker that started a minute ago, so idle times need no waiting.
        tracker.epoch = Instant::now()
            .checked_sub(Duration::from_secs(60))
            .expect("a minute of uptime");
        let tracker = Arc::new(tracker);
        let first = tracker.admit().expect("room");
        let second = tracker.admit().expect("room");
        // Both only just opened: no place to take.
        assert!(tracker.admit().is_none());
        // One is answering a request, the other has been idle long enough.
        let _answering = InFlight::begin(&first.state);
        second.state.idle_since_ms.store(0, Ordering::Release);
        let third = tracker.admit().expect("the idle connection gives way");
        let open = tracker.open.lock().expect("lock");
        assert!(open.contains_key(&first.id));
        assert!(!open.contains_key(&second.id));
        assert!(open.contains_key(&third.id));
    }
}
