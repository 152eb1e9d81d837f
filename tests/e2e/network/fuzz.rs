//! Garbage at the data listener: random bytes, truncated and oversized frames, frames out of
//! order, bad tokens. Every connection is closed with a logged reason; the lab stays up.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use super::only_result;
use crate::support::agent::{Agent, wait_agents};
use crate::support::lab::{Lab, LabOptions};

fn header(kind: u8, len: u32) -> Vec<u8> {
    let mut bytes = b"BL".to_vec();
    bytes.push(kind);
    bytes.extend_from_slice(&len.to_be_bytes());
    bytes
}

/// One connection that sends `bytes`, then closes or lingers briefly; what the lab answers
/// is read and ignored.
fn poke(port: u16, bytes: &[u8], linger: bool) {
    let Ok(mut socket) = TcpStream::connect(("127.0.0.1", port)) else {
        panic!("the data listener stopped accepting");
    };
    let _ = socket.write_all(bytes);
    if linger {
        let _ = socket.set_read_timeout(Some(Duration::from_millis(50)));
        let _ = socket.read(&mut [0u8; 256]);
    }
}

#[tokio::test]
async fn fuzzed_frames_never_crash_the_data_listener() {
    let lab = Lab::fresh(&LabOptions {
        token: Some("fuzz-token".into()),
        ..LabOptions::default()
    });
    let port = lab.get_json("/api/agents").await["data_port"]
        .as_u64()
        .expect("data port") as u16;
    let mut rng = StdRng::seed_from_u64(0x6675_7a7a);
    let hello = json!({"run_key": "k", "client": "c", "stream": 0})
        .to_string()
        .into_bytes();
    let register = json!({
        "name": "fuzzer", "token": "wrong", "sources": [], "version": "0", "host": "h"
    })
    .to_string()
    .into_bytes();
    let cases = tokio::task::spawn_blocking(move || {
        let mut cases = 0;
        for round in 0..400 {
            let bytes: Vec<u8> = match round % 10 {
                // Pure noise of any length.
                0 | 1 => (0..rng.random_range(0..4096))
                    .map(|_| rng.random())
                    .collect(),
                // A valid magic, then noise.
                2 => {
                    let mut b = b"BL".to_vec();
                    b.extend((0..rng.random_range(0..64)).map(|_| rng.random::<u8>()));
                    b
                }
                // Every kind with a random, often huge, length and a short payload.
                3 => {
                    let mut b = header(rng.random_range(0..16), rng.random());
                    b.extend((0..rng.random_range(0..128)).map(|_| rng.random::<u8>()));
                    b
                }
                // A hello cut anywhere.
                4 => {
                    let mut b = header(1, hello.len() as u32);
                    b.extend_from_slice(&hello);
                    b.truncate(rng.random_range(0..b.len()));
                    b
                }
                // A well-formed hello for a run that does not exist, then data.
                5 => {
                    let mut b = header(1, hello.len() as u32);
                    b.extend_from_slice(&hello);
                    b.extend(header(4, 16));
                    b.extend([0u8; 16]);
                    b
                }
                // A hello whose JSON is noise.
                6 => {
                    let junk: Vec<u8> = (0..rng.random_range(1..200))
                        .map(|_| rng.random())
                        .collect();
                    let mut b = header(1, junk.len() as u32);
                    b.extend(junk);
                    b
                }
                // A registration with a wrong token, with and without what follows.
                7 => {
                    let mut b = header(6, register.len() as u32);
                    b.extend_from_slice(&register);
                    b.extend(header(9, 0));
                    b
                }
                // Data, end or work frames first, which no connection may open with.
                8 => {
                    let kind = [2u8, 4, 5, 7, 8, 9][rng.random_range(0..6)];
                    let mut b = header(kind, 8);
                    b.extend([1u8; 8]);
                    b
                }
                // Registration with a JSON payload that is valid but of the wrong shape.
                _ => {
                    let wrong = br#"{"name": 5, "sources": "x"}"#;
                    let mut b = header(6, wrong.len() as u32);
                    b.extend_from_slice(wrong);
                    b
                }
            };
            poke(port, &bytes, round % 3 == 0);
            cases += 1;
        }
        cases
    })
    .await
    .expect("fuzzing thread");
    assert_eq!(cases, 400);

    // Still serving: the API answers, nobody registered, and a real agent still works.
    assert_eq!(lab.get("/healthz").await.status(), 200);
    let body = lab.get_json("/api/agents").await;
    assert!(!body.to_string().contains("fuzzer"), "{body}");
    let _agent = Agent::start(&lab, "after");
    wait_agents(&lab, &["after"], true, Duration::from_secs(20)).await;
    let id = lab
        .submit(&json!({
            "source": {"agents": ["after"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "64M"}
        }))
        .await;
    lab.follow(&id, Duration::from_secs(60)).await;
    assert_eq!(only_result(&lab, &id).await["status"], "done");

    let log = lab.log();
    assert!(!log.contains("panicked"), "{log}");
    for reason in [
        "not a backlab frame",
        "unknown or finished run",
        "wrong or missing token",
        "may not open with",
    ] {
        assert!(log.contains(reason), "the log names '{reason}':\n{log}");
    }
}
