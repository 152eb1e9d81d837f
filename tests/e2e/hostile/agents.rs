//! The agent registry of a lab without a token, under thousands of registrations: what an agent
//! may say of itself is bounded, agents that left are forgotten, and the lab's memory and its
//! agents list stay small.

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use backlab::net::registry::{MAX_AGENT_SOURCE_BYTES, MAX_GONE_AGENTS};
use backlab::net::wire::{self, FrameKind, Register, Registered, WireError};

use crate::support::lab::{Lab, LabOptions};

/// Registrations made, each under a name of its own.
const REGISTRATIONS: usize = 3000;
/// The most memory the lab may reach through them (the bound docs/safety.md gives).
const PEAK_RSS_LIMIT_MIB: f64 = 120.0;

/// Paths adding up to just under the most an agent may offer.
fn largest_sources(index: usize) -> Vec<PathBuf> {
    let each = MAX_AGENT_SOURCE_BYTES / 4 - 16;
    (0..4)
        .map(|n| PathBuf::from(format!("/{index:05}/{n}/{}", "d".repeat(each))))
        .collect()
}

/// Registers `name` with `sources` on the data port and hangs up: the lab's answer.
fn register(port: u16, name: &str, sources: Vec<PathBuf>) -> Result<Registered, WireError> {
    let mut socket = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let hello = Register {
        name: name.to_string(),
        token: None,
        sources,
        version: "test".to_string(),
        host: "client".to_string(),
    };
    wire::write_message(&mut socket, FrameKind::Register, &hello).expect("register");
    wire::read_message(&mut socket, FrameKind::Registered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_registrations_keep_the_registry_and_the_lab_small() {
    let lab = Lab::fresh(&LabOptions::default());
    let port = lab.get_json("/api/agents").await["data_port"]
        .as_u64()
        .expect("data port") as u16;

    // Too much said of itself: refused, named.
    let flood: Vec<PathBuf> = (0..61)
        .map(|n| PathBuf::from(format!("/{n}/{}", "x".repeat(1000))))
        .collect();
    let refused = tokio::task::spawn_blocking(move || register(port, "talkative", flood))
        .await
        .expect("thread");
    match refused {
        Err(WireError::Rejected(reason)) => assert!(reason.contains("sources"), "{reason}"),
        other => panic!("a 61 KB registration was not refused: {other:?}"),
    }

    let started = Instant::now();
    let registered = tokio::task::spawn_blocking(move || {
        (0..REGISTRATIONS)
            .filter(|&index| {
                register(port, &format!("agent-{index:05}"), largest_sources(index)).is_ok()
            })
            .count()
    })
    .await
    .expect("thread");
    assert_eq!(registered, REGISTRATIONS);
    eprintln!("{REGISTRATIONS} registrations in {:?}", started.elapsed());

    // The list keeps the agents that left most recently, up to its bound, and answers fast.
    let mut fastest = Duration::MAX;
    let mut listed = serde_json::Value::Null;
    for _ in 0..5 {
        let asked = Instant::now();
        let answer = lab.get("/api/agents").await;
        assert_eq!(answer.status(), 200);
        let text = answer.text().await.expect("body");
        fastest = fastest.min(asked.elapsed());
        listed = serde_json::from_str(&text).expect("JSON");
        assert!(text.len() < 2 << 20, "{} bytes", text.len());
    }
    let agents = listed["agents"].as_array().expect("agents");
    assert!(
        agents.len() <= MAX_GONE_AGENTS,
        "{} agents remembered",
        agents.len()
    );
    assert!(
        agents
            .iter()
            .any(|agent| agent["name"] == format!("agent-{:05}", REGISTRATIONS - 1)),
        "the newest agent was forgotten"
    );
    assert!(
        fastest < Duration::from_millis(100),
        "/api/agents took {fastest:?}"
    );
    let page = lab.get("/agents").await;
    assert_eq!(page.status(), 200);
    let peak = lab.peak_rss_mib();
    eprintln!("peak memory {peak:.1} MiB; /api/agents in {fastest:?}");
    assert!(peak < PEAK_RSS_LIMIT_MIB, "the lab reached {peak:.1} MiB");
}
