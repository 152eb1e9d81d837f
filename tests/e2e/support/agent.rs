//! Real `backlab agent` processes for a lab, and waiting for the lab to see them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::lab::Lab;
use super::wait::wait_until;

/// A running `backlab agent`; killed when dropped.
pub struct Agent {
    child: Option<Child>,
    log: PathBuf,
}

/// How to start an agent beyond its lab and name.
#[derive(Default)]
pub struct AgentOptions<'a> {
    /// The token to present; the lab's own unless given.
    pub token: Option<&'a str>,
    /// A network namespace to run the agent in (`ip netns exec`).
    pub netns: Option<&'a str>,
    /// More flags, such as `--allow-source PATH`.
    pub extra: &'a [&'a str],
}

impl Agent {
    /// Starts an agent named `name` for `lab`, with the lab's token.
    pub fn start(lab: &Lab, name: &str) -> Agent {
        Agent::start_with(lab, name, &AgentOptions::default())
    }

    /// Starts an agent for `lab` as `options` say; it logs beside the lab's own log.
    pub fn start_with(lab: &Lab, name: &str, options: &AgentOptions) -> Agent {
        let options = AgentOptions {
            token: options.token.or(lab.token()),
            ..*options
        };
        Agent::start_at(&lab.base, &lab.root, name, &options)
    }

    /// Starts an agent for whatever serves the lab's API at `server`, logging into `log_dir`.
    pub fn start_at(server: &str, log_dir: &Path, name: &str, options: &AgentOptions) -> Agent {
        let log = log_dir.join(format!("agent-{name}.log"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("agent log");
        let bin = env!("CARGO_BIN_EXE_backlab");
        let mut command = match options.netns {
            Some(netns) => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", netns, bin]);
                command
            }
            None => Command::new(bin),
        };
        command
            .args(["agent", "--server", server, "--name", name])
            .args(options.extra)
            .env_remove("BACKLAB_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file);
        if let Some(token) = options.token {
            command.args(["--token", token]);
        }
        Agent {
            child: Some(command.spawn().expect("backlab agent starts")),
            log,
        }
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
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
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).expect("pid");
        rustix::process::kill_process(pid, signal).expect("signal");
    }

    /// Waits for the agent to exit by itself; one still running after `timeout` fails the
    /// test (and is killed when dropped).
    pub async fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let child = self.child.as_mut().expect("running");
        let status = wait_until(
            "the agent to exit",
            timeout,
            Duration::from_millis(20),
            async || child.try_wait().expect("try_wait").ok_or("still running"),
        )
        .await;
        self.child = None;
        status
    }

    /// What the agent has logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until every named agent is connected to the lab (or, with `connected` false, known
/// and gone); returns the lab's list of agents.
pub async fn wait_agents(lab: &Lab, names: &[&str], connected: bool, timeout: Duration) -> Value {
    let what = format!(
        "agents {names:?} to be {}",
        if connected {
            "connected"
        } else {
            "disconnected"
        }
    );
    wait_until(&what, timeout, Duration::from_millis(100), async || {
        let body = lab.get_json("/api/agents").await;
        let ready = names.iter().all(|name| {
            body["agents"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|a| a["name"] == *name && a["connected"] == connected)
        });
        if ready {
            Ok(body)
        } else {
            Err(format!("{body}\nlab {}", lab.log_tail()))
        }
    })
    .await
}

/// Agents `alpha` and `beta`, both connected to `lab`: the set-up of the tests with two
/// clients.
pub async fn alpha_and_beta(lab: &Lab) -> (Agent, Agent) {
    let alpha = Agent::start(lab, "alpha");
    let beta = Agent::start(lab, "beta");
    wait_agents(lab, &["alpha", "beta"], true, Duration::from_secs(20)).await;
    (alpha, beta)
}

/// Waits until the named agent is busy with a run's work.
pub async fn wait_busy(lab: &Lab, name: &str) {
    wait_until(
        &format!("agent {name} to get the work"),
        Duration::from_secs(30),
        Duration::from_millis(50),
        async || {
            let body = lab.get_json("/api/agents").await;
            let busy = body["agents"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|a| a["name"] == name && a["busy"] == true);
            if busy { Ok(()) } else { Err(body) }
        },
    )
    .await;
}
