//! A real 1 Gbit/s link: the agent in a network namespace of its own, joined to the lab by a
//! veth pair whose agent end is shaped with `tc tbf`. Needs root and iproute2; otherwise the
//! test says why it did not run.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::only_result;
use crate::support::agent::{Agent, AgentOptions, wait_agents};
use crate::support::lab::{Lab, LabOptions};

/// The namespace and veth pair of one test; removed when dropped.
struct Link {
    netns: String,
    lab_end: String,
}

impl Link {
    /// Sets the link up, or says why it cannot be.
    fn create(id: u32) -> Result<Link, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("not running as root".into());
        }
        let netns = format!("bl-agent-{id}");
        let lab_end = format!("bl{id}a");
        let agent_end = format!("bl{id}b");
        let link = Link {
            netns: netns.clone(),
            lab_end: lab_end.clone(),
        };
        let subnet = format!("10.231.{}", id % 250);
        let steps: Vec<Vec<String>> = vec![
            vec!["ip", "netns", "add", &netns],
            vec![
                "ip", "link", "add", &lab_end, "type", "veth", "peer", "name", &agent_end,
            ],
            vec!["ip", "link", "set", &agent_end, "netns", &netns],
            vec![
                "ip",
                "addr",
                "add",
                &format!("{subnet}.1/24"),
                "dev",
                &lab_end,
            ],
            vec!["ip", "link", "set", &lab_end, "up"],
            vec![
                "ip",
                "netns",
                "exec",
                &netns,
                "ip",
                "addr",
                "add",
                &format!("{subnet}.2/24"),
                "dev",
                &agent_end,
            ],
            vec![
                "ip", "netns", "exec", &netns, "ip", "link", "set", &agent_end, "up",
            ],
            vec![
                "ip", "netns", "exec", &netns, "ip", "link", "set", "lo", "up",
            ],
            // The agent's sending side: 1 Gbit/s, as a gigabit client NIC.
            vec![
                "ip", "netns", "exec", &netns, "tc", "qdisc", "add", "dev", &agent_end, "root",
                "tbf", "rate", "1gbit", "burst", "256kb", "latency", "100ms",
            ],
        ]
        .into_iter()
        .map(|step| step.into_iter().map(str::to_string).collect())
        .collect();
        for step in steps {
            let out = Command::new(&step[0])
                .args(&step[1..])
                .output()
                .map_err(|e| format!("cannot run {}: {e} (is iproute2 installed?)", step[0]))?;
            if !out.status.success() {
                return Err(format!(
                    "`{}` failed: {}",
                    step.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(link)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .output();
        let _ = Command::new("ip")
            .args(["link", "del", &self.lab_end])
            .output();
    }
}

#[tokio::test]
async fn a_gigabit_link_caps_the_backup_and_the_verdict_names_the_network() {
    let id = std::process::id() % 10_000;
    let link = match Link::create(id) {
        Ok(link) => link,
        Err(why) => {
            eprintln!("SKIPPED a_gigabit_link_caps_the_backup: {why}");
            return;
        }
    };
    let lab_ip = format!("10.231.{}.1", id % 250);
    let lab = Lab::fresh(&LabOptions {
        token: Some("link-token".into()),
        bind: Some(format!("{lab_ip}:0")),
        data_bind: Some(format!("{lab_ip}:0")),
        ..LabOptions::default()
    });
    let agent = Agent::start_with(
        &lab,
        "far",
        &AgentOptions {
            netns: Some(&link.netns),
            ..AgentOptions::default()
        },
    );
    wait_agents(&lab, &["far"], true, Duration::from_secs(20)).await;
    let id = lab
        .submit(&json!({
            "name": "over a gigabit link",
            "source": {"agents": ["far"]},
            "target": {"kind": "null"},
            "tests": ["network_backup"],
            "params": {"streams": 2, "size": "600M"}
        }))
        .await;
    lab.follow(&id, Duration::from_secs(120)).await;
    let result = only_result(&lab, &id).await;
    assert_eq!(
        result["status"],
        "done",
        "{result}\nagent log:\n{}",
        agent.log_text()
    );
    let rate = result["mb_per_s"].as_f64().expect("rate");
    // 1 Gbit/s is 125 MB/s on the wire; TCP/IP headers leave about 117 MB/s of payload.
    assert!(
        (105.0..=125.0).contains(&rate),
        "the run should sit at the link's ceiling, about 117 MB/s: {rate}"
    );
    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    assert_eq!(verdict["bottleneck"]["component"], "network", "{verdict}");
    let text = verdict["bottleneck"]["verdict"]
        .as_str()
        .unwrap_or_default();
    // On a busy machine the verdict may be inconclusive; it still names the network.
    assert!(
        text.to_lowercase()
            .contains("the network limits the backup"),
        "{text}"
    );
    eprintln!("gigabit link: {rate} MB/s; verdict: {text}");
}
