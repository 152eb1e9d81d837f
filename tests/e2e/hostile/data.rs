//! The data port before authentication, and what an agent trusts: a flood of connections that
//! never finish their first frame must not keep agents out or cost the lab a thread each, and
//! an agent refuses a work order beyond the lab's own limits instead of spawning and
//! allocating what it says.

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use backlab::net::wire::{
    self, ClientSource, FrameKind, Hello, Register, Registered, Start, StreamEnd, WorkOrder,
};
use serde_json::json;

use crate::support::agent::{Agent, AgentOptions, wait_agents};
use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};
use crate::support::limits::room_for_open_files;
use crate::support::wait::wait_until;

/// Connections each flood opens: more than the 1024 descriptors a default limit allows.
const FLOOD: usize = 1100;

/// Threads of a process, from /proc.
fn threads_of(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// What a flood did: connections opened, and how many of them the lab closed.
#[derive(Default)]
struct FloodCount {
    opened: AtomicUsize,
    closed_by_lab: AtomicUsize,
}

/// `FLOOD` connections from `source`, each sending two bytes of a frame header and then
/// holding; with `reconnect`, each reconnects as soon as the lab closes it, until `stop`.
fn flood(
    port: u16,
    source: Ipv4Addr,
    reconnect: bool,
    stop: &Arc<AtomicBool>,
    count: &Arc<FloodCount>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..FLOOD)
        .map(|_| {
            let (stop, count) = (Arc::clone(stop), Arc::clone(count));
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                while !stop.load(Ordering::Relaxed) {
                    let Ok(socket) = tokio::net::TcpSocket::new_v4() else {
                        return;
                    };
                    if socket.bind(SocketAddr::new(IpAddr::V4(source), 0)).is_err() {
                        return;
                    }
                    let Ok(mut stream) = socket.connect(([127, 0, 0, 1], port).into()).await else {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    };
                    count.opened.fetch_add(1, Ordering::Relaxed);
                    if stream.write_all(b"BL").await.is_ok() {
                        // Held until the lab closes it or the test ends.
                        loop {
                            let read = tokio::time::timeout(
                                Duration::from_millis(200),
                                stream.read(&mut [0u8; 64]),
                            )
                            .await;
                            match read {
                                Ok(Ok(0) | Err(_)) => break,
                                Ok(Ok(_)) => {}
                                Err(_) if stop.load(Ordering::Relaxed) => return,
                                Err(_) => {}
                            }
                        }
                    }
                    count.closed_by_lab.fetch_add(1, Ordering::Relaxed);
                    if !reconnect {
                        // Closed by the lab: stay closed until the test ends.
                        return;
                    }
                }
            })
        })
        .collect()
}

/// Waits until `name` is a connected agent of the lab; how long it took.
async fn wait_registered(lab: &Lab, name: &str, timeout: Duration) -> Duration {
    let started = Instant::now();
    wait_agents(lab, &[name], true, timeout).await;
    started.elapsed()
}

/// Waits until `count` reaches `at_least`: counted by the flood's client tasks, which may lag
/// on a loaded machine.
async fn wait_for_count(count: &AtomicUsize, at_least: usize, what: &str) {
    wait_until(
        what,
        Duration::from_secs(20),
        Duration::from_millis(20),
        async || match count.load(Ordering::Relaxed) {
            now if now >= at_least => Ok(()),
            now => Err(format!("{now} of {at_least}")),
        },
    )
    .await;
}

/// `/healthz` answers 200 within a few seconds.
async fn healthy(lab: &Lab) {
    let answer = tokio::time::timeout(Duration::from_secs(10), lab.get("/healthz"))
        .await
        .expect("/healthz answers within 10 s");
    assert_eq!(answer.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_neither_keep_agents_out_nor_cost_the_lab_threads() {
    assert!(
        room_for_open_files(FLOOD as u64 + 256),
        "this process cannot hold {FLOOD} connections"
    );
    let lab = Lab::fresh(&LabOptions::default());
    let port = lab.get_json("/api/agents").await["data_port"]
        .as_u64()
        .expect("data port") as u16;
    let pid = lab.pid();
    let threads_before = threads_of(pid);
    let stop = Arc::new(AtomicBool::new(false));

    // 1. Connections from the agent's own address that send two bytes and hold.
    let held = Arc::new(FloodCount::default());
    let mut tasks = flood(port, Ipv4Addr::LOCALHOST, false, &stop, &held);
    wait_for_count(&held.opened, FLOOD, "the flood's connections to open").await;
    // No thread per connection: the lab has about the threads it had.
    let threads_flooded = threads_of(pid);
    assert!(
        threads_flooded < threads_before + 64,
        "{threads_flooded} threads under the flood, {threads_before} before"
    );
    let first = Agent::start(&lab, "steady");
    let took = wait_registered(&lab, "steady", Duration::from_secs(20)).await;
    eprintln!("under {FLOOD} held connections, an agent registered in {took:?}");
    healthy(&lab).await;
    // Beyond one address's share the lab closes them (at once, or at the first-frame
    // deadline), however long the client would hold them. Counted by the client's tasks, which
    // may lag on a loaded machine: waited for, not sampled.
    wait_for_count(
        &held.closed_by_lab,
        FLOOD - backlab_share(),
        "the lab to close the flood beyond one address's share",
    )
    .await;

    // 2. Another host that reconnects each connection the moment the lab closes it.
    let churn = Arc::new(FloodCount::default());
    tasks.extend(flood(
        port,
        Ipv4Addr::new(127, 0, 0, 2),
        true,
        &stop,
        &churn,
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = Agent::start(&lab, "other");
    let took = wait_registered(&lab, "other", Duration::from_secs(20)).await;
    eprintln!(
        "under a reconnecting flood ({} connections so far), an agent registered in {took:?}",
        churn.opened.load(Ordering::Relaxed)
    );
    healthy(&lab).await;
    assert!(
        threads_of(pid) < threads_before + 64,
        "{} threads under the reconnecting flood",
        threads_of(pid)
    );
    // Both agents stayed registered through it.
    wait_registered(&lab, "steady", Duration::from_secs(5)).await;

    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }

    // 3. Afterwards the lab is healthy and its data port carries a network backup.
    healthy(&lab).await;
    let id = lab
        .submit(&json!({
            "source": {"agents": ["steady", "other"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "32M"}
        }))
        .await;
    lab.follow(&id, Duration::from_secs(90)).await;
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    assert_eq!(
        campaign["runs"][0]["result"]["status"],
        "done",
        "{campaign}\nagent logs:\n{}\n{}",
        first.log_text(),
        second.log_text()
    );
    let log = lab.log();
    assert!(!log.contains("panicked"), "{}", lab.log_tail());
    // The log says why connections were closed without a line for each of thousands.
    let closed_lines = log
        .lines()
        .filter(|line| line.contains("data listener closed a connection"))
        .count();
    let closed =
        held.closed_by_lab.load(Ordering::Relaxed) + churn.closed_by_lab.load(Ordering::Relaxed);
    assert!(closed_lines > 0, "nothing logged");
    assert!(
        closed_lines * 4 < closed,
        "{closed_lines} log lines for {closed} closed connections"
    );
}

/// The most pending connections one address may hold at the lab.
fn backlab_share() -> usize {
    backlab::net::listener::MAX_PENDING_PER_ADDRESS
}

/// A stand-in for a lab that hands its agent absurd work: it serves `GET /api/agents`,
/// takes the agent's registration, and sends the orders it is given.
struct FakeLab {
    base: String,
    data: TcpListener,
}

impl FakeLab {
    fn start() -> FakeLab {
        let http = TcpListener::bind("127.0.0.1:0").expect("bind http");
        let data = TcpListener::bind("127.0.0.1:0").expect("bind data");
        let base = format!("http://{}", http.local_addr().expect("addr"));
        let body = json!({
            "data_port": data.local_addr().expect("addr").port(),
            "data_host": "127.0.0.1",
            "agents": []
        })
        .to_string();
        std::thread::spawn(move || {
            for socket in http.incoming() {
                let Ok(socket) = socket else { continue };
                let mut reader = BufReader::new(socket);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let _ = write!(
                    reader.get_mut(),
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \
                     {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        FakeLab { base, data }
    }

    /// Accepts the agent's control connection and answers its registration.
    fn registered(&self) -> (TcpStream, Register) {
        let (mut control, _) = self.data.accept().expect("the agent connects");
        control
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let register: Register =
            wire::read_message(&mut control, FrameKind::Register).expect("a registration");
        let registered = Registered {
            name: register.name.clone(),
            reconnected: false,
        };
        wire::write_message(&mut control, FrameKind::Registered, &registered).expect("answer");
        (control, register)
    }

    /// The data connections that arrive until none has for two seconds.
    fn streams(&self) -> Vec<(TcpStream, Hello)> {
        self.data.set_nonblocking(true).expect("nonblocking");
        let mut streams = Vec::new();
        let mut last = Instant::now();
        while last.elapsed() < Duration::from_secs(2) {
            match self.data.accept() {
                Ok((mut socket, _)) => {
                    socket.set_nonblocking(false).expect("blocking");
                    socket
                        .set_read_timeout(Some(Duration::from_secs(10)))
                        .expect("timeout");
                    let hello: Hello =
                        wire::read_message(&mut socket, FrameKind::Hello).expect("a hello");
                    streams.push((socket, hello));
                    last = Instant::now();
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        self.data.set_nonblocking(false).expect("blocking");
        streams
    }
}

/// Starts every stream and collects the reasons their ends give.
fn ends(streams: Vec<(TcpStream, Hello)>) -> Vec<Option<String>> {
    let mut sockets = Vec::new();
    for (mut socket, _) in streams {
        wire::write_message(&mut socket, FrameKind::Start, &Start {}).expect("start");
        sockets.push(socket);
    }
    sockets
        .into_iter()
        .map(|mut socket| {
            wire::read_message::<StreamEnd>(&mut socket, FrameKind::End)
                .expect("an end frame")
                .error
        })
        .collect()
}

fn order(name: &str, port: u16, streams: u32, block_size: u64) -> WorkOrder {
    WorkOrder {
        run_key: format!("run-{streams}-{block_size}"),
        client: name.to_string(),
        streams,
        block_size,
        source: ClientSource::Generated {
            compress_ratio: 2.0,
        },
        bytes: Some(1 << 20),
        link_mb_s: None,
        port,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_refuses_work_beyond_the_labs_limits() {
    let root = scratch();
    let lab = FakeLab::start();
    let port = lab.data.local_addr().expect("addr").port();
    let agent = Agent::start_at(&lab.base, root.path(), "careful", &AgentOptions::default());
    let pid = agent.pid();
    let checked = tokio::task::spawn_blocking(move || {
        let (mut control, register) = lab.registered();
        assert_eq!(register.name, "careful");
        let limit = backlab::spec::MAX_CONNECTIONS;
        let mut refusals = Vec::new();

        // A million streams: refused, through no more connections than a lab allows.
        let huge = order("careful", port, 1_000_000, 64 << 10);
        wire::write_message(&mut control, FrameKind::Work, &huge).expect("send work");
        let streams = lab.streams();
        assert_eq!(streams.len(), limit as usize, "connections for the refusal");
        assert!(
            streams
                .iter()
                .all(|(_, hello)| hello.run_key == huge.run_key)
        );
        assert!(
            threads_of(pid) < 32,
            "the agent runs {} threads",
            threads_of(pid)
        );
        refusals.extend(ends(streams));

        // Blocks of a terabyte, and 256 blocks of 64 MiB (16 GiB): refused as well.
        for (streams, block_size) in [(2, 1 << 40), (limit, 64 << 20)] {
            let absurd = order("careful", port, streams, block_size);
            wire::write_message(&mut control, FrameKind::Work, &absurd).expect("send work");
            let streams = lab.streams();
            assert_eq!(streams.len() as u32, absurd.streams);
            refusals.extend(ends(streams));
        }

        // A sane order is still sent.
        let sane = order("careful", port, 2, 64 << 10);
        wire::write_message(&mut control, FrameKind::Work, &sane).expect("send work");
        let streams = lab.streams();
        assert_eq!(streams.len(), 2);
        let mut sent = 0u64;
        for (mut socket, _) in streams {
            wire::write_message(&mut socket, FrameKind::Start, &Start {}).expect("start");
            loop {
                let header = wire::read_header(&mut socket).expect("a frame");
                match header.kind {
                    FrameKind::Data => {
                        let mut payload = vec![0u8; header.len as usize];
                        std::io::Read::read_exact(&mut socket, &mut payload).expect("data");
                        sent += u64::from(header.len);
                    }
                    FrameKind::End => {
                        let end: StreamEnd = wire::read_payload(&mut socket, header).expect("end");
                        assert_eq!(end.error, None);
                        break;
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        (refusals, sent)
    })
    .await;
    let (refusals, sent) = match checked {
        Ok(outcome) => outcome,
        Err(error) => panic!("{error}\nagent log:\n{}", agent.log_text()),
    };
    assert_eq!(sent, 1 << 20, "the sane order's bytes");
    let reasons: Vec<&str> = refusals
        .iter()
        .map(|r| r.as_deref().unwrap_or(""))
        .collect();
    assert!(
        reasons[..256]
            .iter()
            .all(|r| r.contains("the agent refused") && r.contains("1000000 streams")),
        "{:?}",
        &reasons[..3]
    );
    assert!(
        reasons[256..258].iter().all(|r| r.contains("block size")),
        "{reasons:?}"
    );
    assert!(
        reasons[258..]
            .iter()
            .all(|r| r.contains("streams × block size")),
        "{:?}",
        &reasons[258..261]
    );
    let log = agent.log_text();
    assert!(!log.contains("panicked"), "{log}");
}
