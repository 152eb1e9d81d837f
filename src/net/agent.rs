//! `backlab agent`: a client host's side of network backups. It finds the lab's data listener
//! through the lab's API, registers under a name, and sends each network run it is given,
//! reading its own local source. It reconnects when the lab goes away and comes back.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Component, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::send::{refuse_order, send_client};
use super::wire::{
    self, ClientSource, Deadline, FrameKind, Register, Registered, WireError, WorkOrder,
};
use crate::spec;

/// How often an agent tells the lab it is alive.
const PING_EVERY: Duration = Duration::from_secs(5);
/// How long an agent waits before it tries to reach the lab again.
const RETRY_AFTER: Duration = Duration::from_secs(2);
/// How long the lab has to answer where its data listener is before the agent tries again: a
/// lab that takes the connection and never answers must not hold the agent for ever.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(15);
/// Work orders an agent sends at once. The lab gives an agent one run at a time; the tail of
/// the last run may still be ending when the next arrives, but more than this means a lab
/// that is confused or not a lab.
const MAX_ORDERS_AT_ONCE: usize = 4;

/// How an agent was asked to run.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The lab's URL, e.g. `http://lab:8080`.
    pub server: String,
    pub token: Option<String>,
    pub name: String,
    /// Paths the lab may ask this agent to read.
    pub sources: Vec<PathBuf>,
}

/// Why an agent stopped for good.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("--server {0}: give the lab's URL, e.g. http://lab:8080")]
    BadUrl(String),
    #[error("--name: {0}")]
    BadName(String),
    #[error("--allow-source {path}: {reason}")]
    BadSource { path: String, reason: String },
    #[error("the lab refused this agent: {0}")]
    Refused(String),
    #[error(
        "the lab's data listener only listens on {0}, which this host cannot reach: start the \
         lab with --data-bind 0.0.0.0:PORT (and --token)"
    )]
    LoopbackOnly(String),
}

/// The lab's answer to `GET /api/agents`: where its data listener is.
#[derive(Debug, Deserialize)]
struct Endpoint {
    data_port: u16,
    /// Set when the listener is bound to one address; otherwise the URL's host is used.
    data_host: Option<String>,
}

/// Runs the agent until `stop` is set: registers, takes work, reconnects after failures.
/// Returns an error only for what retrying cannot fix (a bad URL or name, a refused token).
pub fn run(config: &AgentConfig, stop: &AtomicBool) -> Result<(), AgentError> {
    crate::spec::check_name(&config.name).map_err(AgentError::BadName)?;
    let sources = config
        .sources
        .iter()
        .map(|path| {
            path.canonicalize().map_err(|error| AgentError::BadSource {
                path: path.display().to_string(),
                reason: error.to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let url_host = url_host(&config.server)?;
    let mut announced = false;
    while !stop.load(Ordering::Relaxed) {
        match session(config, &sources, &url_host, stop, &mut announced) {
            Ok(()) => {}
            Err(SessionError::Fatal(error)) => return Err(error),
            Err(SessionError::Retry(reason)) => {
                tracing::warn!(%reason, "agent: lost the lab; trying again");
            }
        }
        let until = Instant::now() + RETRY_AFTER;
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(())
}

enum SessionError {
    Fatal(AgentError),
    Retry(String),
}

/// One connection to the lab, from registration until it ends.
fn session(
    config: &AgentConfig,
    sources: &[PathBuf],
    url_host: &str,
    stop: &AtomicBool,
    announced: &mut bool,
) -> Result<(), SessionError> {
    let retry =
        |what: &str, error: &dyn std::fmt::Display| SessionError::Retry(format!("{what}: {error}"));
    let endpoint_url = format!("{}/api/agents", config.server.trim_end_matches('/'));
    let endpoint: Endpoint = ureq::get(&endpoint_url)
        .config()
        .timeout_global(Some(ENDPOINT_TIMEOUT))
        .build()
        .call()
        .map_err(|e| retry(&endpoint_url, &e))?
        .body_mut()
        .read_json()
        .map_err(|e| retry(&endpoint_url, &e))?;
    let host = endpoint.data_host.unwrap_or_else(|| url_host.to_string());
    if is_loopback(&host) && !is_loopback(url_host) {
        return Err(SessionError::Fatal(AgentError::LoopbackOnly(format!(
            "{host}:{}",
            endpoint.data_port
        ))));
    }
    let addr = resolve(&host, endpoint.data_port).map_err(|e| retry("data listener", &e))?;
    let mut control = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| retry("connect", &e))?;
    let register = Register {
        name: config.name.clone(),
        token: config.token.clone(),
        sources: sources.to_vec(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        host: hostname(),
    };
    wire::write_message(&mut control, FrameKind::Register, &register)
        .map_err(|e| retry("register", &e))?;
    let _ = control.set_read_timeout(Some(Duration::from_secs(10)));
    let registered: Registered = match wire::read_message(&mut control, FrameKind::Registered) {
        Ok(registered) => registered,
        Err(WireError::Rejected(reason)) => {
            return Err(SessionError::Fatal(AgentError::Refused(reason)));
        }
        Err(error) => return Err(retry("register", &error)),
    };
    if !*announced {
        eprintln!(
            "backlab agent '{}' registered with {} (data listener {addr})",
            registered.name, config.server
        );
        *announced = true;
    }
    tracing::info!(name = %registered.name, reconnected = registered.reconnected, "registered");
    let _ = control.set_read_timeout(Some(Duration::from_millis(500)));
    let pinger = control.try_clone().map_err(|e| retry("control", &e))?;
    let closed = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        let closed_ping = Arc::clone(&closed);
        let pinging = std::thread::Builder::new()
            .name("backlab-ping".into())
            .spawn_scoped(scope, move || {
                let mut pinger = pinger;
                while !closed_ping.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    if wire::write_frame(&mut pinger, FrameKind::Ping, &[]).is_err() {
                        break;
                    }
                    let until = Instant::now() + PING_EVERY;
                    while Instant::now() < until && !closed_ping.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            });
        if let Err(error) = pinging {
            return Err(retry("cannot start the ping thread", &error));
        }
        let outcome = take_work(&mut control, addr.ip(), sources, stop, scope);
        closed.store(true, Ordering::Relaxed);
        let _ = control.shutdown(std::net::Shutdown::Both);
        outcome
    })
}

/// Reads work orders until the control connection ends; each order runs on its own thread.
fn take_work<'scope>(
    control: &mut TcpStream,
    lab: std::net::IpAddr,
    sources: &[PathBuf],
    stop: &'scope AtomicBool,
    scope: &'scope std::thread::Scope<'scope, '_>,
) -> Result<(), SessionError> {
    let lost = |error: &dyn std::fmt::Display| SessionError::Retry(error.to_string());
    let in_flight = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        // Nothing yet is fine; once a frame has begun, the rest must follow within seconds.
        let _ = control.set_read_timeout(Some(Duration::from_millis(500)));
        match control.peek(&mut [0u8; 1]) {
            Ok(0) => return Err(lost(&"the lab closed the connection")),
            Ok(_) => {}
            Err(error) if wire::is_timeout(&error) => continue,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(lost(&error)),
        }
        let mut frame = Deadline::new(control, Duration::from_secs(5));
        let header = wire::read_header(&mut frame).map_err(|e| lost(&e))?;
        if header.kind != FrameKind::Work {
            return Err(SessionError::Retry(format!(
                "unexpected {:?} frame from the lab",
                header.kind
            )));
        }
        let order: WorkOrder = wire::read_payload(&mut frame, header).map_err(|e| lost(&e))?;
        let addr = SocketAddr::new(lab, order.port);
        let checked = within_limits(&order)
            .and_then(|()| allowed(&order.source, sources))
            .and_then(|()| {
                let busy = in_flight.load(Ordering::Relaxed);
                if busy >= MAX_ORDERS_AT_ONCE {
                    Err(format!(
                        "it is sending {busy} network backups already (at most \
                         {MAX_ORDERS_AT_ONCE} at once)"
                    ))
                } else {
                    Ok(())
                }
            });
        if let Err(reason) = checked {
            tracing::error!(%reason, "agent: refused a work order");
            refuse_order(addr, &order, &format!("the agent refused: {reason}"));
            continue;
        }
        let sending_now = InFlight::take(&in_flight);
        let sending = std::thread::Builder::new()
            .name("backlab-client".into())
            .spawn_scoped(scope, move || {
                let _sending_now = sending_now;
                tracing::info!(
                    client = %order.client, streams = order.streams, "sending a network backup"
                );
                let sent = send_client(addr, &order, stop);
                let mb_per_s = if sent.seconds > 0.0 {
                    sent.bytes as f64 / sent.seconds / 1e6
                } else {
                    0.0
                };
                match &sent.error {
                    None => eprintln!(
                        "backlab agent: sent {} bytes in {:.2} s ({mb_per_s:.1} MB/s)",
                        sent.bytes, sent.seconds
                    ),
                    Some(error) => eprintln!(
                        "backlab agent: sent {} bytes in {:.2} s, then failed: {error}",
                        sent.bytes, sent.seconds
                    ),
                }
            });
        if let Err(error) = sending {
            tracing::error!(%error, "agent: cannot start a client thread");
        }
    }
    Ok(())
}

/// One work order being sent; counted while it lives.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn take(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(count))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether an order stays within the limits the lab itself validates campaigns against, so
/// that what the agent allocates (a block per stream) and starts (a thread per stream) for it
/// is bounded whatever the order says.
fn within_limits(order: &WorkOrder) -> Result<(), String> {
    let most_streams = spec::MAX_CONNECTIONS;
    if !(1..=most_streams).contains(&order.streams) {
        return Err(format!(
            "{} streams asked for; a lab asks for 1 to {most_streams}",
            order.streams
        ));
    }
    if order.block_size > u64::from(wire::MAX_DATA) {
        return Err(format!(
            "a block size of {} asked for; a lab asks for at most {}",
            spec::format_size(order.block_size),
            spec::format_size(u64::from(wire::MAX_DATA))
        ));
    }
    // What `send_client` allocates: one block of at least 4 KiB per stream.
    let buffers = u64::from(order.streams) * order.block_size.max(4096);
    if buffers > spec::MAX_RING_BYTES {
        return Err(format!(
            "streams × block size is {}; at most {} is allocated",
            spec::format_size(buffers),
            spec::format_size(spec::MAX_RING_BYTES)
        ));
    }
    if let ClientSource::Generated { compress_ratio } = order.source
        && !(compress_ratio.is_finite() && (1.0..=100.0).contains(&compress_ratio))
    {
        return Err(format!(
            "a compress ratio of {compress_ratio} asked for; a lab asks for 1 to 100"
        ));
    }
    if let Some(rate) = order.link_mb_s
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(format!("a link of {rate} MB/s asked for"));
    }
    Ok(())
}

/// Whether the agent may read what an order asks for (the lab checked too).
fn allowed(source: &ClientSource, roots: &[PathBuf]) -> Result<(), String> {
    let ClientSource::Paths(paths) = source else {
        return Ok(());
    };
    for path in paths {
        let resolved = path
            .canonicalize()
            .map_err(|error| format!("{}: {error}", path.display()))?;
        let lexical_escape = path.components().any(|c| c == Component::ParentDir);
        if lexical_escape || !roots.iter().any(|root| resolved.starts_with(root)) {
            return Err(format!(
                "{} is not under any --allow-source of this agent",
                path.display()
            ));
        }
    }
    Ok(())
}

fn url_host(server: &str) -> Result<String, AgentError> {
    let bad = || AgentError::BadUrl(server.to_string());
    let rest = server.strip_prefix("http://").ok_or_else(bad)?;
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default().to_string(),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(h, _)| h)
            .to_string(),
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok(host)
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn resolve(host: &str, port: u16) -> std::io::Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other(format!("{host} has no address")))
}

/// This host's name, the default agent name.
pub fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::{ClientSource, WorkOrder, url_host, within_limits};

    fn order(streams: u32, block_size: u64) -> WorkOrder {
        WorkOrder {
            run_key: "k".into(),
            client: "c".into(),
            streams,
            block_size,
            source: ClientSource::Generated {
                compress_ratio: 2.0,
            },
            bytes: None,
            link_mb_s: None,
            port: 1,
        }
    }

    #[test]
    fn orders_beyond_the_labs_limits_are_refused() {
        assert!(within_limits(&order(2, 256 << 10)).is_ok());
        assert!(within_limits(&order(256, 16 << 20)).is_ok());
        let refused = |order: &WorkOrder| within_limits(order).unwrap_err();
        assert!(refused(&order(0, 4096)).contains("0 streams"));
        assert!(refused(&order(257, 4096)).contains("1 to 256"));
        assert!(refused(&order(u32::MAX, 4096)).contains("streams"));
        assert!(refused(&order(1, u64::MAX)).contains("block size"));
        assert!(refused(&order(256, 64 << 20)).contains("16G"));
        let mut odd = order(1, 4096);
        odd.source = ClientSource::Generated {
            compress_ratio: f64::NAN,
        };
        assert!(refused(&odd).contains("compress ratio"));
        odd = order(1, 4096);
        odd.link_mb_s = Some(-1.0);
        assert!(refused(&odd).contains("link"));
    }

    #[test]
    fn the_host_comes_from_the_url() {
        assert_eq!(url_host("http://lab:8080").unwrap(), "lab");
        assert_eq!(url_host("http://10.0.0.1:8080/").unwrap(), "10.0.0.1");
        assert_eq!(url_host("http://[::1]:8080").unwrap(), "::1");
        assert!(url_host("lab:8080").is_err());
    }

    #[test]
    fn loopback_hosts_are_told_apart() {
        assert!(super::is_loopback("127.0.0.1"));
        assert!(super::is_loopback("localhost"));
        assert!(super::is_loopback("::1"));
        assert!(!super::is_loopback("10.0.0.1"));
        assert!(!super::is_loopback("lab"));
    }
}
