//! Agents on this machine: a run into an emulated drive, a client killed mid-run, and an
//! agent that comes back under its name.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{only_result, wait_running};
use crate::support::agent::{Agent, AgentOptions, alpha_and_beta, wait_agents, wait_busy};
use crate::support::fixtures::{create_dataset, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;

fn as_f64(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

#[tokio::test]
async fn two_agents_send_into_an_emulated_drive_and_the_figures_add_up() {
    let lab = Lab::fresh(&LabOptions::default());
    let _agents = alpha_and_beta(&lab).await;

    let id = lab
        .submit(&json!({
            "name": "two agents into LTO-4",
            "source": {"agents": ["alpha", "beta"]},
            "target": {"kind": "tape", "model": "lto-4"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "768M"}
        }))
        .await;
    lab.follow(&id, Duration::from_secs(120)).await;
    let result = only_result(&lab, &id).await;
    assert_eq!(result["status"], "done", "{result}");
    assert!(result.get("partial").is_none(), "{result}");
    assert_eq!(result["tape"]["emulated"], true);
    let total_bytes = result["bytes"].as_u64().expect("bytes");
    assert_eq!(
        total_bytes,
        768 << 20,
        "the clients' shares add up to the size"
    );
    let total_rate = as_f64(&result["mb_per_s"]);
    // An LTO-4 takes 120 MB/s native, about twice that at 2:1: the drive, not loopback, limits.
    assert!(
        (150.0..=250.0).contains(&total_rate),
        "two clients into one emulated LTO-4: {total_rate} MB/s"
    );

    let clients = result["clients"].as_array().expect("clients");
    assert_eq!(clients.len(), 2);
    let names: Vec<&str> = clients.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    let mut bytes_sum = 0u64;
    let mut rate_sum = 0.0;
    for client in clients {
        assert_eq!(client["status"], "done", "{client}");
        assert_eq!(client["streams"], 2);
        let bytes = client["bytes"].as_u64().expect("client bytes");
        assert_eq!(
            client["reported_bytes"].as_u64(),
            Some(bytes),
            "the agent counted what the lab received: {client}"
        );
        bytes_sum += bytes;
        rate_sum += as_f64(&client["mb_per_s"]);
    }
    assert!(
        (bytes_sum as f64 - total_bytes as f64).abs() <= 0.01 * total_bytes as f64,
        "clients {bytes_sum} vs total {total_bytes}"
    );
    assert!(
        (rate_sum - total_rate).abs() <= 0.01 * total_rate,
        "clients {rate_sum} MB/s vs total {total_rate} MB/s"
    );
    // Every aggregate sample is the sum of the clients' samples at the same moment.
    let samples = result["samples"].as_array().expect("samples");
    assert!(
        samples.len() >= 4,
        "a run of seconds has samples: {samples:?}"
    );
    for (index, sample) in samples.iter().enumerate() {
        let at: Vec<&Value> = clients.iter().map(|c| &c["samples"][index]).collect();
        for client_sample in &at {
            assert_eq!(client_sample["t"], sample["t"], "one clock");
        }
        let sum: f64 = at.iter().map(|s| as_f64(&s["mb_per_s"])).sum();
        assert!(
            (sum - as_f64(&sample["mb_per_s"])).abs() < 0.25,
            "sample {index}: clients {sum} vs total {}",
            sample["mb_per_s"]
        );
    }

    // Where it was received is recorded, though the source lies on the agents' hosts.
    let report = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let provenance = &report["survey"]["provenance"];
    assert!(
        provenance["hostname"]
            .as_str()
            .is_some_and(|h| !h.is_empty()),
        "{report}"
    );
    assert_eq!(
        report["survey"]["source_files"], 0,
        "the source is not walked here"
    );

    let agents = lab.get_json("/api/agents").await;
    for agent in agents["agents"].as_array().expect("agents") {
        assert_eq!(agent["connected"], true);
        assert_eq!(agent["busy"], false, "a finished run frees its agents");
    }
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("chart-clients"),
        "the report has the client chart"
    );
    assert!(page.contains("client alpha (2 streams)"));
    let chart = lab
        .get_text(&format!("/campaigns/{id}/charts/clients.svg"))
        .await;
    assert!(chart.contains("alpha") && chart.contains("beta"));
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    assert!(
        csv.lines()
            .next()
            .unwrap_or_default()
            .contains("client_figures")
    );
    assert!(
        csv.contains("alpha:") && csv.contains(":done beta:"),
        "{csv}"
    );
    let agents_page = lab.get_text("/agents").await;
    assert!(agents_page.contains("alpha") && agents_page.contains("connected"));
}

#[tokio::test]
async fn killing_an_agent_mid_run_leaves_a_partial_result_naming_it() {
    let lab = Lab::fresh(&LabOptions::default());
    let (_alpha, mut beta) = alpha_and_beta(&lab).await;

    // 20 MB/s links: each client's 120 MB share takes six seconds.
    let id = lab
        .submit(&json!({
            "source": {"agents": ["alpha", "beta"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "240M", "link_mb_s": 20}
        }))
        .await;
    wait_running(&lab, &id).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    beta.kill();
    lab.follow(&id, Duration::from_secs(60)).await;

    let result = only_result(&lab, &id).await;
    assert_eq!(
        result["status"], "done",
        "the surviving client finished: {result}"
    );
    assert_eq!(result["partial"], true, "{result}");
    let clients = result["clients"].as_array().expect("clients");
    let alpha = &clients[0];
    let failed = &clients[1];
    assert_eq!(alpha["status"], "done", "{alpha}");
    assert_eq!(alpha["bytes"].as_u64(), Some(120 << 20));
    assert_eq!(failed["name"], "beta");
    assert_eq!(failed["status"], "failed", "{failed}");
    let error = failed["error"].as_str().expect("why beta failed");
    assert!(error.contains("closed"), "{error}");
    let beta_bytes = failed["bytes"].as_u64().expect("bytes");
    assert!(
        beta_bytes > 0 && beta_bytes < 120 << 20,
        "beta sent part: {beta_bytes}"
    );
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("partial") && warnings.contains("'beta'"),
        "{warnings}"
    );
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("partial"));

    // The lab keeps serving, knows beta is gone, and runs the next campaign with alpha.
    wait_agents(&lab, &["beta"], false, Duration::from_secs(10)).await;
    let next = lab
        .submit(&json!({
            "source": {"agents": ["alpha"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 1, "size": "64M"}
        }))
        .await;
    lab.follow(&next, Duration::from_secs(60)).await;
    assert_eq!(only_result(&lab, &next).await["status"], "done");
    assert!(!lab.log().contains("panicked"), "{}", lab.log());
}

#[tokio::test]
async fn a_campaign_naming_a_missing_agent_fails_with_its_name() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&json!({
            "source": {"agents": ["nowhere"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"]
        }))
        .await;
    lab.follow(&id, Duration::from_secs(30)).await;
    let result = only_result(&lab, &id).await;
    assert_eq!(result["status"], "failed");
    let error = result["error"].as_str().expect("error");
    assert!(
        error.contains("'nowhere'") && error.contains("not registered"),
        "{error}"
    );

    // The local tests cannot run with agents: named by field.
    let response = lab
        .post_json(
            "/api/campaigns",
            &json!({
                "source": {"agents": ["a"]},
                "target": {"kind": "null"},
                "tests": ["read_single", "network_backup"],
                "params": {"clients": 3}
            }),
        )
        .await;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.expect("body");
    let text = body.to_string();
    assert!(
        text.contains("tests[0]") && text.contains("params.clients"),
        "{text}"
    );
}

#[tokio::test]
async fn an_agent_that_reconnects_is_recognised_by_name() {
    let lab = Lab::fresh(&LabOptions {
        token: Some("agent-token".into()),
        ..LabOptions::default()
    });
    // A wrong token is refused for good: the agent says so and exits.
    let wrong_token = AgentOptions {
        token: Some("nope"),
        ..AgentOptions::default()
    };
    let mut wrong = Agent::start_with(&lab, "intruder", &wrong_token);
    wait_until(
        "the agent to log its refusal",
        Duration::from_secs(20),
        Duration::from_millis(100),
        async || {
            let log = wrong.log_text();
            if log.contains("refused") {
                Ok(())
            } else {
                Err(log)
            }
        },
    )
    .await;
    wrong.kill();

    // The right token is the lab's own, which an agent is given unless told otherwise.
    let mut first = Agent::start(&lab, "gamma");
    wait_agents(&lab, &["gamma"], true, Duration::from_secs(20)).await;
    first.kill();
    wait_agents(&lab, &["gamma"], false, Duration::from_secs(20)).await;
    let _second = Agent::start(&lab, "gamma");
    let body = wait_agents(&lab, &["gamma"], true, Duration::from_secs(20)).await;
    let agents = body["agents"].as_array().expect("agents");
    assert_eq!(agents.len(), 1, "one entry, by name: {body}");
    assert_eq!(agents[0]["connections"], 2);
    assert!(!body.to_string().contains("intruder"));
}

#[tokio::test]
async fn an_agent_reads_its_own_files_and_only_under_its_allowed_roots() {
    let lab = Lab::fresh(&LabOptions::default());
    let files = lab.root.join("agent-files");
    create_dataset(&files, "48M");
    let files = files.canonicalize().expect("dataset");
    let on_disk: u64 = walk_sizes(&files);
    let allowed = files.display().to_string();
    let _agent = Agent::start_with(
        &lab,
        "reader",
        &AgentOptions {
            extra: &["--allow-source", &allowed],
            ..AgentOptions::default()
        },
    );
    wait_agents(&lab, &["reader"], true, Duration::from_secs(20)).await;
    let listed = lab.get_json("/api/agents").await;
    assert_eq!(listed["agents"][0]["sources"][0], allowed.as_str());

    // The agent's files, read on its side: every byte arrives.
    let id = lab
        .submit(&json!({
            "source": {"paths": [allowed], "agents": ["reader"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2}
        }))
        .await;
    lab.follow(&id, Duration::from_secs(60)).await;
    let result = only_result(&lab, &id).await;
    assert_eq!(result["status"], "done", "{result}");
    assert_eq!(result["bytes"].as_u64(), Some(on_disk), "{result}");
    assert_eq!(
        result["clients"][0]["reported_bytes"].as_u64(),
        Some(on_disk)
    );

    // A path outside its roots is refused before anything is sent, naming the agent's roots.
    let id = lab
        .submit(&json!({
            "source": {"paths": ["/etc"], "agents": ["reader"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"]
        }))
        .await;
    lab.follow(&id, Duration::from_secs(60)).await;
    let result = only_result(&lab, &id).await;
    assert_eq!(result["status"], "failed");
    let error = result["error"].as_str().expect("error");
    assert!(
        error.contains("may not read /etc") && error.contains(&allowed),
        "{error}"
    );
}

#[tokio::test]
async fn cancelling_a_network_run_stops_it_and_frees_the_agents() {
    let lab = Lab::fresh(&LabOptions::default());
    let _agent = Agent::start(&lab, "slow");
    wait_agents(&lab, &["slow"], true, Duration::from_secs(20)).await;
    let id = lab
        .submit(&json!({
            "source": {"agents": ["slow"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "1G", "link_mb_s": 10}
        }))
        .await;
    wait_busy(&lab, "slow").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = Instant::now();
    let response = lab
        .client
        .post(lab.url(&format!("/api/campaigns/{id}/cancel")))
        .send()
        .await
        .expect("cancel");
    assert!(response.status().is_success());
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(10))
        .await;
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "cancel took {:?}",
        asked.elapsed()
    );
    let agents = lab.get_json("/api/agents").await;
    assert_eq!(agents["agents"][0]["busy"], false, "{agents}");
    assert_eq!(agents["agents"][0]["connected"], true, "{agents}");
}

fn walk_sizes(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let meta = entry.metadata().expect("metadata");
        if meta.is_dir() {
            total += walk_sizes(&entry.path());
        } else if meta.is_file() {
            total += meta.len();
        }
    }
    total
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test]
async fn a_run_interrupted_by_a_restart_runs_again_once_its_agent_returns() {
    let root = scratch();
    // Fixed ports: the agent finds the restarted lab at the same address.
    let options = LabOptions {
        bind: Some(format!("127.0.0.1:{}", free_port())),
        data_bind: Some(format!("127.0.0.1:{}", free_port())),
        ..LabOptions::default()
    };
    let mut lab = Lab::start(root.path(), &options);
    let agent = Agent::start(&lab, "steady");
    wait_agents(&lab, &["steady"], true, Duration::from_secs(20)).await;
    let id = lab
        .submit(&json!({
            "source": {"agents": ["steady"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "200M", "link_mb_s": 50}
        }))
        .await;
    wait_running(&lab, &id).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    lab.signal(rustix::process::Signal::TERM);
    let (took, status) = lab.wait_exit(Duration::from_secs(15)).await;
    assert!(status.success(), "{status:?} after {took:?}");

    // The run is queued again at start-up and waits for the agent to come back.
    let lab = Lab::start(root.path(), &options);
    lab.follow(&id, Duration::from_secs(90)).await;
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let run = &campaign["runs"][0];
    assert_eq!(run["attempts"], 2, "{run}");
    let result = &run["result"];
    assert_eq!(
        result["status"],
        "done",
        "{result}\nagent log:\n{}",
        agent.log_text()
    );
    assert_eq!(result["bytes"].as_u64(), Some(200 << 20));
}

#[tokio::test]
async fn an_agent_stopped_with_ctrl_c_fails_its_part_and_says_why() {
    let lab = Lab::fresh(&LabOptions::default());
    let (_alpha, mut beta) = alpha_and_beta(&lab).await;
    let id = lab
        .submit(&json!({
            "source": {"agents": ["alpha", "beta"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "160M", "link_mb_s": 20}
        }))
        .await;
    wait_busy(&lab, "beta").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    beta.signal(rustix::process::Signal::INT);
    assert!(beta.wait_exit(Duration::from_secs(10)).await.success());
    lab.follow(&id, Duration::from_secs(60)).await;
    let result = only_result(&lab, &id).await;
    assert_eq!(result["partial"], true, "{result}");
    let failed = &result["clients"][1];
    assert_eq!(failed["status"], "failed");
    let error = failed["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("stopped before it had sent everything"),
        "{error}"
    );
    assert_eq!(result["clients"][0]["bytes"].as_u64(), Some(80 << 20));
    // alpha's emulated 20 MB/s link set its pace over the whole run.
    let alpha_rate = result["clients"][0]["mb_per_s"].as_f64().unwrap_or(0.0);
    assert!(
        (18.0..=20.5).contains(&alpha_rate),
        "alpha: {alpha_rate} MB/s"
    );
}
