//! A counting relay on loopback between a client the lab runs (a backup tool with its
//! repository in a bucket) and the object store: every request passes through unchanged, its
//! headers (the signature among them) as they were, and is counted by its S3 operation with
//! its answer and its bytes ([`RequestCounts`]). Nothing of a request but its method, path
//! and query is looked at, and nothing of it is logged or kept beyond the counts. One upstream
//! connection serves each client connection, so the store sees the client's own pattern of
//! connections. It lives as long as its handle: dropping it closes every connection.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::operations::{Answered, RequestCounts, operation};

/// Longest the relay waits to reach the store for a new client connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a relay could not be started.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error(
        "the requests to {0} cannot be counted: the lab's relay reaches a store over plain \
         HTTP only"
    )]
    NotPlainHttp(String),
    #[error("the store's address {0} does not resolve: {1}")]
    Unresolved(String, String),
    #[error("the relay cannot start: {0}")]
    Start(std::io::Error),
}

/// A running relay; its counts are read while it runs.
pub struct CountingRelay {
    addr: SocketAddr,
    counts: Arc<Mutex<RequestCounts>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the relay needs to name requests: the bucket (a request's `Host` says whether it is
/// in the host's name or first in the path).
#[derive(Clone)]
struct Naming {
    bucket: String,
}

impl CountingRelay {
    /// Starts a relay to the store at `endpoint` (`http://host:port`) whose bucket is
    /// `bucket`, on a random loopback port, on a thread of its own.
    pub fn start(endpoint: &str, bucket: &str) -> Result<CountingRelay, RelayError> {
        let url = url::Url::parse(endpoint)
            .map_err(|error| RelayError::Unresolved(endpoint.to_string(), error.to_string()))?;
        if url.scheme() != "http" {
            return Err(RelayError::NotPlainHttp(endpoint.to_string()));
        }
        let upstream = url
            .socket_addrs(|| Some(80))
            .map_err(|error| RelayError::Unresolved(endpoint.to_string(), error.to_string()))?
            .into_iter()
            .next()
            .ok_or_else(|| {
                RelayError::Unresolved(endpoint.to_string(), "no address".to_string())
            })?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(RelayError::Start)?;
        listener.set_nonblocking(true).map_err(RelayError::Start)?;
        let addr = listener.local_addr().map_err(RelayError::Start)?;
        let counts = Arc::new(Mutex::new(RequestCounts::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(RelayError::Start)?;
        let naming = Naming {
            bucket: bucket.to_string(),
        };
        let shared = Arc::clone(&counts);
        let thread = std::thread::Builder::new()
            .name("s3-counting-relay".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    tokio::select! {
                        () = accept(listener, upstream, naming, shared) => {}
                        _ = stopped => {}
                    }
                });
                // The runtime goes with the thread: every connection still open is closed.
            })
            .map_err(RelayError::Start)?;
        Ok(CountingRelay {
            addr,
            counts,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Where a client reaches the store through the relay: `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests counted so far.
    pub fn counts(&self) -> RequestCounts {
        self.counts
            .lock()
            .map(|counts| counts.clone())
            .unwrap_or_default()
    }
}

impl Drop for CountingRelay {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept(
    listener: tokio::net::TcpListener,
    upstream: SocketAddr,
    naming: Naming,
    counts: Arc<Mutex<RequestCounts>>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let naming = naming.clone();
        let counts = Arc::clone(&counts);
        tokio::spawn(async move {
            let _ = client.set_nodelay(true);
            let sender = connect(upstream)
                .await
                .map(|sender| Arc::new(tokio::sync::Mutex::new(sender)));
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let sender = sender.clone();
                let naming = naming.clone();
                let counts = Arc::clone(&counts);
                async move { Ok::<_, Infallible>(relay(request, sender, &naming, counts).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(client), service)
                .await;
        });
    }
}

type Sender = hyper::client::conn::http1::SendRequest<BoxBody<Bytes, hyper::Error>>;

/// A connection to the store, its driver running beside; `None` where it cannot be made.
async fn connect(upstream: SocketAddr) -> Option<Sender> {
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(upstream))
        .await
        .ok()?
        .ok()?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(connection);
    Some(sender)
}

/// One request passed on and counted: its operation when it arrives, its answer's status
/// when that comes, its bytes as they flow either way.
async fn relay(
    request: Request<Incoming>,
    sender: Option<Arc<tokio::sync::Mutex<Sender>>>,
    naming: &Naming,
    counts: Arc<Mutex<RequestCounts>>,
) -> Response<BoxBody<Bytes, hyper::Error>> {
    let host = request
        .headers()
        .get(hyper::header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or("");
    let bucket_in_host = host.starts_with(&format!("{}.", naming.bucket));
    let named = operation(
        request.method().as_str(),
        request.uri().path(),
        request.uri().query().unwrap_or(""),
        &naming.bucket,
        bucket_in_host,
        request.headers().contains_key("x-amz-copy-source"),
    );
    let (parts, body) = request.into_parts();
    let body = counted(body, Arc::clone(&counts), named.clone(), true);
    let answer = match sender {
        Some(sender) => {
            let mut sender = sender.lock().await;
            match sender.ready().await {
                Ok(()) => sender
                    .send_request(Request::from_parts(parts, body))
                    .await
                    .ok(),
                Err(_) => None,
            }
        }
        None => None,
    };
    let tally = |answered| {
        if let Ok(mut counts) = counts.lock() {
            counts.request(&named, answered);
        }
    };
    match answer {
        Some(response) => {
            tally(Answered::Status(response.status().as_u16()));
            let (parts, body) = response.into_parts();
            Response::from_parts(parts, counted(body, Arc::clone(&counts), named, false))
        }
        None => {
            tally(Answered::Not);
            let mut response = Response::new(
                http_body_util::Full::new(Bytes::from_static(b"the store was not reached"))
                    .map_err(|never: Infallible| match never {})
                    .boxed(),
            );
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            response
        }
    }
}

/// A body whose bytes are added to `operation`'s as they pass.
fn counted(
    body: Incoming,
    counts: Arc<Mutex<RequestCounts>>,
    operation: String,
    up: bool,
) -> BoxBody<Bytes, hyper::Error> {
    body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref()
            && let Ok(mut counts) = counts.lock()
        {
            counts.bytes(&operation, up, data.len() as u64);
        }
        frame
    })
    .boxed()
}
