//! A real `backlab serve` for tests: the binary on a random port, a temp SQLite file and data
//! dir, and helpers to talk to it over HTTP.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};

/// A temp dir on the build's disk (not a tmpfs).
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

/// A running `backlab serve` child process; killed when dropped.
pub struct Lab {
    child: Option<Child>,
    pub base: String,
    pub data_dir: PathBuf,
    pub db: PathBuf,
    pub stderr_log: PathBuf,
    pub client: reqwest::Client,
}

/// How to start a lab.
#[derive(Clone, Default)]
pub struct LabOptions {
    pub token: Option<String>,
    /// Size of the first-start demo dataset (none unless given).
    pub demo_size: Option<String>,
    /// The HTTP and data listener addresses (random loopback ports unless given).
    pub bind: Option<String>,
    pub data_bind: Option<String>,
    pub extra: Vec<String>,
    /// Start the lab under this limit on open files (soft and hard, as `ulimit -n` sets it).
    pub open_files: Option<u64>,
}

impl Lab {
    /// Starts a lab whose database and data dir live in `root`.
    pub fn start(root: &Path, options: &LabOptions) -> Lab {
        let data_dir = root.join("data");
        let db = root.join("lab.db");
        let stderr_log = root.join("serve.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&stderr_log)
            .expect("log file");
        let mut command = match options.open_files {
            Some(limit) => {
                let mut shell = Command::new("sh");
                shell
                    .args(["-c", "ulimit -n \"$0\" && exec \"$@\""])
                    .arg(limit.to_string())
                    .arg(env!("CARGO_BIN_EXE_backlab"));
                shell
            }
            None => Command::new(env!("CARGO_BIN_EXE_backlab")),
        };
        command
            .arg("serve")
            .arg("--bind")
            .arg(options.bind.as_deref().unwrap_or("127.0.0.1:0"))
            .arg("--data-bind")
            .arg(options.data_bind.as_deref().unwrap_or("127.0.0.1:0"))
            .arg("--demo-size")
            .arg(options.demo_size.as_deref().unwrap_or("0"))
            .arg("--db")
            .arg(&db)
            .arg("--data-dir")
            .arg(&data_dir)
            .args(&options.extra)
            .env_remove("BACKLAB_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        if let Some(token) = &options.token {
            command.args(["--token", token]);
        }
        let mut child = command.spawn().expect("backlab serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .expect("read the listening line");
        // Keep draining stdout so the lab never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let base = line
            .trim()
            .strip_prefix("backlab listening on ")
            .unwrap_or_else(|| {
                panic!(
                    "unexpected first line {line:?}; log:\n{}",
                    std::fs::read_to_string(&stderr_log).unwrap_or_default()
                )
            })
            .to_string();
        Lab {
            child: Some(child),
            base,
            data_dir: data_dir.canonicalize().expect("data dir exists"),
            db,
            stderr_log,
            client: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.expect("GET")
    }

    /// The body of a GET that must answer 200, as text.
    pub async fn get_text(&self, path: &str) -> String {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "GET {path}");
        response.text().await.expect("text body")
    }

    pub async fn get_json(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.expect("JSON body")
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("POST")
    }

    /// Submits a spec and returns the new campaign's id, failing the test on any error.
    pub async fn submit(&self, spec: &Value) -> String {
        self.submit_as(spec, None).await
    }

    /// Submits a spec with the lab's token, when given.
    pub async fn submit_as(&self, spec: &Value, token: Option<&str>) -> String {
        let mut request = self.client.post(self.url("/api/campaigns")).json(spec);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("POST");
        let status = response.status();
        let body: Value = response.json().await.expect("JSON body");
        assert_eq!(status, 201, "submit failed: {body}");
        body["id"].as_str().expect("id").to_string()
    }

    /// Follows a campaign's event stream until `campaign_finished` (or the timeout).
    pub async fn follow(&self, id: &str, timeout: Duration) -> Vec<(String, Value)> {
        let response = self.get(&format!("/api/campaigns/{id}/events")).await;
        assert_eq!(response.status(), 200);
        assert!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"))
        );
        let mut stream = response.bytes_stream();
        let mut buffer = String::new();
        let mut events = Vec::new();
        let deadline = Instant::now() + timeout;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let chunk = match tokio::time::timeout(remaining, stream.next()).await {
                Ok(Some(chunk)) => chunk.expect("stream chunk"),
                Ok(None) => return events,
                Err(_) => panic!("no campaign_finished within {timeout:?}; got {events:?}"),
            };
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim());
                    }
                }
                if name.is_empty() {
                    continue; // keep-alive comment
                }
                let value: Value = serde_json::from_str(&data).expect("event data is JSON");
                let done = name == "campaign_finished";
                events.push((name, value));
                if done {
                    return events;
                }
            }
        }
    }

    /// Polls a campaign until its status is one of `wanted`.
    pub async fn wait_status(&self, id: &str, wanted: &[&str], timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let campaign = self.get_json(&format!("/api/campaigns/{id}")).await;
            let status = campaign["status"].as_str().unwrap_or_default().to_string();
            if wanted.contains(&status.as_str()) {
                return campaign;
            }
            assert!(
                Instant::now() < deadline,
                "campaign {id} still {status} after {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr_log).unwrap_or_default()
    }

    /// Cancels a campaign, failing the test unless the lab accepts the request.
    pub async fn cancel(&self, id: &str) {
        let response = self
            .client
            .post(self.url(&format!("/api/campaigns/{id}/cancel")))
            .send()
            .await
            .expect("cancel");
        assert!(response.status().is_success(), "cancel {id}");
    }

    /// The server's peak resident memory so far (VmHWM), in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        let child = self.child.as_ref().expect("running");
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
            .expect("the lab's /proc status");
        let kib: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .expect("VmHWM in /proc status");
        kib / 1024.0
    }

    /// Sends a signal to the server process.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let child = self.child.as_ref().expect("running");
        let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
        rustix::process::kill_process(pid, signal).expect("kill");
    }

    /// Waits for the server to exit and returns how long it took and its exit status.
    pub fn wait_exit(&mut self, timeout: Duration) -> (Duration, std::process::ExitStatus) {
        let mut child = self.child.take().expect("running");
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return (started.elapsed(), status);
            }
            if started.elapsed() > timeout {
                let _ = child.kill();
                panic!(
                    "backlab serve did not exit within {timeout:?}; log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Creates a dataset with the CLI.
pub fn create_dataset(dir: &Path, size: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_backlab"))
        .args(["dataset", "create"])
        .arg(dir)
        .args(["--profile", "typical", "--size", size, "--seed", "7"])
        .output()
        .expect("backlab runs");
    assert!(
        out.status.success(),
        "dataset create failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Lab files (`backlab-run-*.img`) directly in `dir`.
pub fn lab_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list dir")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().into_owned();
            name.starts_with("backlab-run-").then_some(name)
        })
        .collect()
}

/// A small five-test campaign against `source`, writing into `target`.
pub fn five_tests(source: &Path, target: &Path) -> Value {
    json!({
        "name": "five tests",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "params": {"buffers": 8, "block_size": "256K", "size": "32M", "duration_s": 10}
    })
}
