//! The HTTP front door: requests from other sites and other names (cross-site writes, DNS
//! rebinding), and connections that dawdle or crowd (slow headers, idle keep-alive, slow bodies,
//! a flood under a low limit on open files). Raw sockets where the exact bytes matter.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use backlab::http::listener::{HEADER_READ_TIMEOUT, RECLAIM_IDLE_AFTER};
use serde_json::{Value, json};

use crate::support::lab::{Lab, LabOptions};
use crate::support::limits::room_for_open_files;

/// A small campaign that finishes in a moment.
fn small_spec() -> Value {
    json!({
        "name": "small",
        "source": {"generated": {"size": "4M"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"duration_s": 5}
    })
}

fn address(lab: &Lab) -> SocketAddr {
    lab.base
        .strip_prefix("http://")
        .expect("http base")
        .parse()
        .expect("socket address")
}

/// `Host` as a client that addressed the lab by its IP sends it.
fn own_host(lab: &Lab) -> String {
    lab.base
        .strip_prefix("http://")
        .expect("http base")
        .to_string()
}

/// An answer read off a raw socket.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// Sends one request (`Connection: close`) on a new connection and reads the whole answer.
fn exchange(
    lab: &Lab,
    method: &str,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut stream = TcpStream::connect(address(lab)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no complete answer: {text:?}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    Answer {
        status,
        head: head.to_ascii_lowercase(),
        body: body.to_string(),
    }
}

fn campaign_count(lab: &Lab) -> usize {
    let answer = exchange(lab, "GET", "/api/campaigns", &own_host(lab), &[], "");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let listed: Value = serde_json::from_str(&answer.body).expect("JSON");
    listed["campaigns"].as_array().map_or(0, Vec::len)
}

fn assert_healthy(lab: &Lab) {
    let answer = exchange(lab, "GET", "/healthz", &own_host(lab), &[], "");
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body.contains("\"ok\""), "{}", answer.body);
    assert!(!lab.log().contains("panicked"), "{}", lab.log());
}

#[test]
fn writes_from_other_sites_are_refused_and_plain_clients_still_work() {
    let lab = Lab::fresh(&LabOptions::default());
    let host = own_host(&lab);
    let spec = small_spec().to_string();

    // The classic cross-site form trick: text/plain needs no preflight.
    for origin in ["http://evil.example", "null", "http://localhost:1"] {
        let answer = exchange(
            &lab,
            "POST",
            "/api/campaigns",
            &host,
            &[("Origin", origin), ("Content-Type", "text/plain")],
            &spec,
        );
        assert_eq!(answer.status, 403, "Origin {origin}: {}", answer.body);
        let error: Value = serde_json::from_str(&answer.body).expect("JSON error");
        assert!(
            error["error"]
                .as_str()
                .is_some_and(|message| message.contains("not this lab")),
            "{error}"
        );
    }
    for site in ["cross-site", "same-site"] {
        let answer = exchange(
            &lab,
            "POST",
            "/api/campaigns",
            &host,
            &[("Sec-Fetch-Site", site), ("Content-Type", "text/plain")],
            &spec,
        );
        assert_eq!(answer.status, 403, "Sec-Fetch-Site {site}: {}", answer.body);
        assert!(answer.body.contains("another site"), "{}", answer.body);
    }
    assert_eq!(campaign_count(&lab), 0, "nothing was queued");

    // curl and scripts send no Origin: they work.
    let created = exchange(
        &lab,
        "POST",
        "/api/campaigns",
        &host,
        &[("Content-Type", "application/json")],
        &spec,
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let id = serde_json::from_str::<Value>(&created.body).expect("JSON")["id"]
        .as_str()
        .expect("id")
        .to_string();

    // Another site can neither cancel, rerun nor delete it.
    let evil = [("Origin", "http://evil.example")];
    for (method, path) in [
        ("POST", format!("/api/campaigns/{id}/cancel")),
        ("POST", format!("/api/campaigns/{id}/rerun")),
        ("DELETE", format!("/api/campaigns/{id}")),
    ] {
        let answer = exchange(&lab, method, &path, &host, &evil, "");
        assert_eq!(answer.status, 403, "{method} {path}: {}", answer.body);
    }
    assert_eq!(campaign_count(&lab), 1);
    // Reading stays open to anyone, as shared report links need.
    let read = exchange(
        &lab,
        "GET",
        &format!("/api/campaigns/{id}"),
        &host,
        &evil,
        "",
    );
    assert_eq!(read.status, 200, "{}", read.body);
    assert_healthy(&lab);
}

#[test]
fn the_labs_own_pages_still_post_forms_and_json() {
    let lab = Lab::fresh(&LabOptions::default());
    let host = own_host(&lab);
    let origin = lab.base.clone();
    let same_origin = [
        ("Origin", origin.as_str()),
        ("Sec-Fetch-Site", "same-origin"),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    let form = "name=plain+form&source_kind=generated&generated_size=4M&target_kind=null\
                &tests=null_sink&buffers=8&block_size=64K&duration_s=5&compress_ratio=2&repeat=1";
    let posted = exchange(&lab, "POST", "/campaigns/new", &host, &same_origin, form);
    assert_eq!(posted.status, 303, "{}", posted.body);
    assert!(
        posted.head.contains("location: /campaigns/"),
        "{}",
        posted.head
    );

    // The same form from another site gets a plain-text refusal, not a campaign.
    let evil = [
        ("Origin", "http://evil.example"),
        ("Sec-Fetch-Site", "cross-site"),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    let refused = exchange(&lab, "POST", "/campaigns/new", &host, &evil, form);
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.head.contains("text/plain"), "{}", refused.head);

    // The page's script posts JSON with the lab's own origin; so does a page on localhost.
    let spec = small_spec().to_string();
    for page_origin in [origin.clone(), origin.replace("127.0.0.1", "localhost")] {
        let page_host = page_origin
            .strip_prefix("http://")
            .expect("http")
            .to_string();
        let answer = exchange(
            &lab,
            "POST",
            "/api/campaigns",
            &page_host,
            &[
                ("Origin", page_origin.as_str()),
                ("Sec-Fetch-Site", "same-origin"),
                ("Content-Type", "application/json"),
            ],
            &spec,
        );
        assert_eq!(answer.status, 201, "{page_origin}: {}", answer.body);
    }
    assert_eq!(campaign_count(&lab), 3);
    assert_healthy(&lab);
}

#[test]
fn a_host_that_is_not_the_lab_is_refused_even_for_reads() {
    let lab = Lab::fresh(&LabOptions::default());
    let port = address(&lab).port();
    let rebound = format!("rebind.evil.example:{port}");
    let api = exchange(&lab, "GET", "/api/campaigns", &rebound, &[], "");
    assert_eq!(api.status, 421, "{}", api.body);
    let error: Value = serde_json::from_str(&api.body).expect("JSON error");
    let message = error["error"].as_str().expect("message");
    assert!(message.contains("--allow-host"), "{message}");
    for path in ["/", "/healthz", "/api/openapi.json"] {
        let answer = exchange(&lab, "GET", path, &rebound, &[], "");
        assert_eq!(answer.status, 421, "{path}: {}", answer.body);
    }
    let write = exchange(
        &lab,
        "POST",
        "/api/campaigns",
        &rebound,
        &[("Content-Type", "application/json")],
        &small_spec().to_string(),
    );
    assert_eq!(write.status, 421, "{}", write.body);
    assert_eq!(campaign_count(&lab), 0);
    // The names of the loopback address are the lab's own.
    for name in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let answer = exchange(&lab, "GET", "/healthz", &name, &[], "");
        assert_eq!(answer.status, 200, "{name}: {}", answer.body);
    }
    assert_healthy(&lab);
}

#[test]
fn names_given_with_flags_are_accepted() {
    let lab = Lab::fresh(&LabOptions {
        extra: [
            "--allow-host",
            "lab.test",
            "--public-url",
            "https://backlab.example.com/",
        ]
        .map(String::from)
        .to_vec(),
        ..LabOptions::default()
    });
    let port = address(&lab).port();
    for name in [
        format!("lab.test:{port}"),
        "lab.test".to_string(),
        "backlab.example.com".to_string(),
    ] {
        let answer = exchange(&lab, "GET", "/healthz", &name, &[], "");
        assert_eq!(answer.status, 200, "{name}: {}", answer.body);
    }
    let other = exchange(&lab, "GET", "/healthz", "other.test", &[], "");
    assert_eq!(other.status, 421, "{}", other.body);
    // Behind a proxy that passes the loopback Host on, pages at the public URL may post.
    let answer = exchange(
        &lab,
        "POST",
        "/api/campaigns",
        &own_host(&lab),
        &[
            ("Origin", "https://backlab.example.com"),
            ("Content-Type", "application/json"),
        ],
        &small_spec().to_string(),
    );
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert!(lab.log().contains("lab.test"), "{}", lab.log());
    assert_healthy(&lab);
}

/// Whether a read shows the peer closed the connection (`Some(true)`), is still open
/// (`Some(false)` after the read timeout), or sent data (`None`).
fn closed_by_peer(stream: &mut TcpStream) -> Option<bool> {
    let mut buffer = [0_u8; 4096];
    match stream.read(&mut buffer) {
        Ok(0) => Some(true),
        Ok(_) => None,
        Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            Some(false)
        }
        Err(_) => Some(true),
    }
}

#[test]
fn a_trickled_header_is_closed_within_the_timeout() {
    let lab = Lab::fresh(&LabOptions::default());
    let mut stream = TcpStream::connect(address(&lab)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("read timeout");
    let started = Instant::now();
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n", own_host(&lab));
    stream.write_all(head.as_bytes()).expect("first line");
    let mut line = 0;
    let open_for = loop {
        // One header line every 2 s: never a complete request head.
        match closed_by_peer(&mut stream) {
            Some(false) => {}
            Some(true) | None => break started.elapsed(),
        }
        line += 1;
        if stream
            .write_all(format!("X-Trickle-{line}: {line}\r\n").as_bytes())
            .is_err()
        {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "a trickling client still holds its connection after 60 s"
        );
    };
    // The timeout never fires early; the upper bound is loose for a loaded machine.
    assert!(
        open_for >= HEADER_READ_TIMEOUT - Duration::from_secs(1),
        "closed after {open_for:?}"
    );
    assert!(
        open_for < HEADER_READ_TIMEOUT * 4,
        "closed after {open_for:?}"
    );
    assert_healthy(&lab);
}

#[test]
fn an_idle_keep_alive_connection_is_closed() {
    let lab = Lab::fresh(&LabOptions::default());
    let mut stream = TcpStream::connect(address(&lab)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", own_host(&lab));
    stream.write_all(request.as_bytes()).expect("send");
    // The answer, then silence.
    let mut answer = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !String::from_utf8_lossy(&answer).contains('}') {
        let read = stream.read(&mut buffer).expect("the answer");
        assert!(read > 0, "closed before answering");
        answer.extend_from_slice(&buffer[..read]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    let idle_from = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    assert_eq!(
        closed_by_peer(&mut stream),
        Some(true),
        "an idle keep-alive connection is closed by the lab"
    );
    let idle_for = idle_from.elapsed();
    assert!(
        idle_for < HEADER_READ_TIMEOUT * 4,
        "closed after {idle_for:?}"
    );
    assert_healthy(&lab);
}

#[test]
fn a_request_body_that_never_arrives_is_given_up() {
    let lab = Lab::fresh(&LabOptions::default());
    let mut stream = TcpStream::connect(address(&lab)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(90)))
        .expect("read timeout");
    let started = Instant::now();
    let head = format!(
        "POST /api/campaigns HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: 1000\r\n\r\n{{\"name\": ",
        own_host(&lab)
    );
    stream.write_all(head.as_bytes()).expect("send");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let waited = started.elapsed();
    let answer = parse_answer(&raw);
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("did not arrive"), "{}", answer.body);
    assert!(
        waited < Duration::from_secs(80),
        "answered after {waited:?}"
    );
    assert_eq!(campaign_count(&lab), 0);
    assert_healthy(&lab);
}

#[tokio::test]
async fn an_event_stream_outlives_the_header_timeout() {
    let lab = Lab::fresh(&LabOptions::default());
    // A run of 13 s, read slowly: its event stream lasts longer than any connection timeout.
    let id = lab
        .submit(&json!({
            "name": "long",
            "source": {"generated": {"size": "1G"}},
            "target": {"kind": "null"},
            "tests": ["null_sink"],
            "params": {"duration_s": 13, "source_rate_mb_s": 20}
        }))
        .await;
    let started = Instant::now();
    let events = lab.follow(&id, Duration::from_secs(120)).await;
    assert_eq!(
        events.last().map(|(name, _)| name.as_str()),
        Some("campaign_finished"),
        "{events:?}"
    );
    assert!(
        started.elapsed() > Duration::from_secs(11),
        "the stream lasted {:?}",
        started.elapsed()
    );
}

/// Idle connections opened at once in the flood test.
const FLOOD: usize = 1100;
/// The limit on open files the flooded lab runs under (systemd's default soft limit).
const FLOODED_LAB_OPEN_FILES: u64 = 1024;
/// The connection cap the lab derives from that limit.
const FLOODED_LAB_CAP: usize = 256;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_flood_under_a_low_file_limit_leaves_the_lab_answering() {
    if !room_for_open_files(FLOOD as u64 + 256) {
        eprintln!("skipped: this process cannot open {FLOOD} connections");
        return;
    }
    let lab = Lab::fresh(&LabOptions {
        open_files: Some(FLOODED_LAB_OPEN_FILES),
        ..LabOptions::default()
    });
    assert!(
        lab.plain_log()
            .contains(&format!("max_connections={FLOODED_LAB_CAP}")),
        "{}",
        lab.log()
    );
    let addr = address(&lab);
    let flood_started = Instant::now();
    let mut flood = tokio::task::spawn_blocking(move || {
        (0..FLOOD)
            .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(20)).ok())
            .collect::<Vec<_>>()
    })
    .await
    .expect("flood");
    assert!(
        flood.len() > FLOODED_LAB_CAP * 2,
        "only {} connections opened",
        flood.len()
    );
    // Refusals and closes have landed, and the first connections have been idle long enough
    // to give way to newcomers.
    let settled = flood_started + RECLAIM_IDLE_AFTER + Duration::from_secs(1);
    tokio::time::sleep_until(settled.max(Instant::now() + Duration::from_secs(1)).into()).await;

    // Every connection is held (at most the cap), refused with a 503, or closed to make room.
    let (mut held, mut refused, mut closed) = (0, 0, 0);
    let mut refusal = String::new();
    for stream in &mut flood {
        stream.set_nonblocking(true).expect("nonblocking");
        let mut buffer = [0_u8; 1024];
        match stream.read(&mut buffer) {
            Ok(0) => closed += 1,
            Ok(read) => {
                let text = String::from_utf8_lossy(&buffer[..read]).into_owned();
                assert!(text.starts_with("HTTP/1.1 503"), "{text}");
                refused += 1;
                refusal = text;
            }
            Err(error) if error.kind() == ErrorKind::WouldBlock => held += 1,
            Err(_) => closed += 1,
        }
    }
    eprintln!(
        "flood of {}: {held} held, {refused} refused, {closed} closed",
        flood.len()
    );
    assert!(held <= FLOODED_LAB_CAP, "{held} connections held");
    // The excess was shed: refused while the held ones were fresh, or, once they had been idle
    // long enough, by closing those to make room. Which of the two depends on how fast this
    // machine opened the flood, so only the sum is certain.
    assert!(
        refused + closed >= flood.len() - FLOODED_LAB_CAP,
        "{refused} refused and {closed} closed of {}",
        flood.len()
    );
    if refused > 0 {
        let refusal = refusal.to_ascii_lowercase();
        assert!(refusal.contains("connection: close"), "{refusal}");
        assert!(
            refusal.contains(&format!("serving {FLOODED_LAB_CAP} connections, its limit")),
            "{refusal}"
        );
    }

    // The flood is still open, and the lab answers on new connections.
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    for _ in 0..5 {
        let started = Instant::now();
        let health = fresh
            .get(lab.url("/healthz"))
            .send()
            .await
            .expect("/healthz answers during the flood");
        assert_eq!(health.status(), 200);
        eprintln!("/healthz during the flood: {:?}", started.elapsed());
    }
    assert!(
        refused == 0 || lab.log().contains("refusing connections"),
        "refusals are logged: {}",
        lab.log()
    );
    let refusal_lines = lab.log().matches("refusing connections").count();
    assert!(
        refusal_lines <= 5,
        "{refused} refusals take {refusal_lines} log lines"
    );

    drop(flood);
    let id = lab.submit(&small_spec()).await;
    lab.wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    assert_healthy(&lab);
    assert!(!lab.log().contains("Too many open files"), "{}", lab.log());
}

/// Sends raw request head lines (without the blank line) and reads the whole answer.
fn exchange_raw(lab: &Lab, head: &str) -> Answer {
    let mut stream = TcpStream::connect(address(lab)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    stream
        .write_all(format!("{head}Connection: close\r\n\r\n").as_bytes())
        .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse_answer(&raw)
}

#[test]
fn a_missing_or_repeated_host_or_origin_is_refused() {
    let lab = Lab::fresh(&LabOptions::default());
    let own = own_host(&lab);
    // No Host at all (HTTP/1.0 allows it): the lab cannot tell who it is asked as.
    let answer = exchange_raw(&lab, "GET /api/campaigns HTTP/1.0\r\n");
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("no host"), "{}", answer.body);
    // Two copies: judged as ambiguous, whichever comes first.
    for head in [
        format!("GET /healthz HTTP/1.1\r\nHost: {own}\r\nHost: evil.example\r\n"),
        format!("GET /healthz HTTP/1.1\r\nHost: evil.example\r\nHost: {own}\r\n"),
    ] {
        let answer = exchange_raw(&lab, &head);
        assert_eq!(answer.status, 400, "{head}: {}", answer.body);
        assert!(answer.body.contains("more than once"), "{}", answer.body);
    }
    let answer = exchange(
        &lab,
        "POST",
        "/api/campaigns",
        &own,
        &[
            ("Content-Type", "application/json"),
            ("Origin", &format!("http://{own}")),
            ("Origin", "http://evil.example"),
        ],
        &small_spec().to_string(),
    );
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(campaign_count(&lab), 0);
    assert_healthy(&lab);
}
