//! Network backup end to end: the real lab, real `backlab agent` processes, real TCP, and
//! when the machine allows it, a real rate-limited link between two network namespaces.

mod agents;
mod fuzz;
mod link;
mod sweep;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::support::lab::*;
use serde_json::Value;

/// A running `backlab agent`; killed when dropped.
pub struct Agent {
    child: Option<Child>,
    pub log: PathBuf,
}

impl Agent {
    /// Starts an agent for the lab at `base`, optionally inside a network namespace.
    pub fn start(
        base: &str,
        name: &str,
        root: &Path,
        token: Option<&str>,
        netns: Option<&str>,
    ) -> Agent {
        Agent::start_with(base, name, root, token, netns, &[])
    }

    /// Starts an agent with extra arguments (such as `--allow-source PATH`).
    pub fn start_with(
        base: &str,
        name: &str,
        root: &Path,
        token: Option<&str>,
        netns: Option<&str>,
        extra: &[&str],
    ) -> Agent {
        let log = root.join(format!("agent-{name}.log"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("agent log");
        let bin = env!("CARGO_BIN_EXE_backlab");
        let mut command = match netns {
            Some(ns) => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", ns, bin]);
                command
            }
            None => Command::new(bin),
        };
        command
            .args(["agent", "--server", base, "--name", name])
            .args(extra)
            .env_remove("BACKLAB_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file);
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        Agent {
            child: Some(command.spawn().expect("backlab agent starts")),
            log,
        }
    }

    /// Kills the agent at once, as a crash or a pulled cable would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends a signal to the agent, e.g. SIGINT as Ctrl-C does.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let child = self.child.as_ref().expect("running");
        let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
        rustix::process::kill_process(pid, signal).expect("signal");
    }

    /// Waits for the agent to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the agent did not exit in {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until every named agent is connected (or not, with `connected` false).
pub async fn wait_agents(lab: &Lab, names: &[&str], connected: bool, timeout: Duration) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let body = lab.get_json("/api/agents").await;
        let ready = names.iter().all(|name| {
            body["agents"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|a| a["name"] == *name && a["connected"] == connected)
        });
        if ready {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "agents {names:?} not connected={connected} after {timeout:?}: {body}\nlab log:\n{}",
            lab.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the campaign's first run is running.
pub async fn wait_running(lab: &Lab, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
        if campaign["runs"][0]["status"] == "running" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the run never started: {campaign}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The result of a finished campaign's only run.
pub async fn only_result(lab: &Lab, id: &str) -> Value {
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{campaign}");
    runs[0]["result"].clone()
}

pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("backlab-net-")
        .tempdir()
        .expect("temp dir")
}
