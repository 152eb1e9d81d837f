//! A real `backlab serve` for tests: the binary on a random port, a temp SQLite file and data
//! dir, and helpers to talk to it over HTTP.

use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cli::backlab;
use super::events::Events;
use super::fixtures::scratch;
use super::wait::wait_until;

/// A running `backlab serve` child process; killed when dropped.
pub struct Lab {
    child: Option<Child>,
    /// `http://ADDR`, where the lab listens.
    pub base: String,
    /// The directory the lab keeps its database, data dir and log in; agents log here too.
    pub root: PathBuf,
    /// The lab's data dir, canonical: relative spec paths start here.
    pub data_dir: PathBuf,
    log: PathBuf,
    token: Option<String>,
    /// A client for the requests the helpers do not make.
    pub client: reqwest::Client,
    /// The scratch directory of a lab from [`Lab::fresh`], removed after the lab is stopped.
    _scratch: Option<tempfile::TempDir>,
}

/// Where the labs of a test binary keep their results when a test names no database: the
/// service suite runs once on each ([`crate::store`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultStore {
    /// A SQLite file in the lab's root.
    Sqlite,
    /// A database of the lab's own on a PostgreSQL cluster the binary shares, the lab named
    /// after it.
    Postgres,
}

/// How to start a lab.
#[derive(Clone, Default)]
pub struct LabOptions {
    /// The token every change, and every agent, must present (none unless given).
    pub token: Option<String>,
    /// The HTTP listener's address (a random loopback port unless given).
    pub bind: Option<String>,
    /// The data listener's address, for agents (a random loopback port unless given).
    pub data_bind: Option<String>,
    /// More flags for `backlab serve`.
    pub extra: Vec<String>,
    /// Start the lab under this limit on open files (soft and hard, as `ulimit -n` sets it).
    pub open_files: Option<u64>,
    /// The database (`--db`): a SQLite file in the lab's root unless given.
    pub db: Option<String>,
    /// The name it serves under (`--host-name`): the machine's host name unless given, which
    /// two labs on one database cannot share.
    pub host_name: Option<String>,
    /// Keep the SQLite file on a tmpfs of this many MiB of the lab's own (a private mount
    /// namespace), so a test can fill the database's disk ([`Lab::in_its_mounts`]).
    pub db_tmpfs_mib: Option<u64>,
    /// Environment variables for the lab (`RUST_LOG`, say).
    pub env: Vec<(String, String)>,
}

impl Lab {
    /// Starts a lab in a scratch directory of its own: for tests that never restart it.
    pub fn fresh(options: &LabOptions) -> Lab {
        let scratch = scratch();
        let mut lab = Lab::start(scratch.path(), options);
        lab._scratch = Some(scratch);
        lab
    }

    /// Starts a lab whose database, data dir and log live in `root`, without a demo dataset;
    /// a lab started again on the same `root` finds everything the last one left.
    pub fn start(root: &Path, options: &LabOptions) -> Lab {
        let data_dir = root.join("data");
        let db_dir = root.join("dbfs");
        let (db, host_name) = match (&options.db, crate::store()) {
            (Some(db), _) => (db.clone(), options.host_name.clone()),
            (None, _) if options.db_tmpfs_mib.is_some() => (
                db_dir.join("lab.db").display().to_string(),
                options.host_name.clone(),
            ),
            (None, DefaultStore::Sqlite) => (
                root.join("lab.db").display().to_string(),
                options.host_name.clone(),
            ),
            (None, DefaultStore::Postgres) => {
                let url = super::postgres::database_for(root);
                let name = url.rsplit('/').next().unwrap_or("lab").replace('_', "-");
                (url, options.host_name.clone().or(Some(name)))
            }
        };
        let mut command = match (options.open_files, options.db_tmpfs_mib) {
            (_, Some(mib)) => {
                std::fs::create_dir_all(&db_dir).expect("the tmpfs mount point");
                let mut unshare = Command::new("unshare");
                unshare.args(namespace_flags(false)).args([
                    "sh",
                    "-c",
                    "mount -t tmpfs -o size=\"$1\"m backlab-db \"$0\" && shift && exec \"$@\"",
                ]);
                unshare
                    .arg(&db_dir)
                    .arg(mib.to_string())
                    .arg(env!("CARGO_BIN_EXE_backlab"));
                unshare
            }
            (Some(limit), None) => {
                let mut shell = Command::new("sh");
                shell
                    .args(["-c", "ulimit -n \"$0\" && exec \"$@\""])
                    .arg(limit.to_string())
                    .arg(env!("CARGO_BIN_EXE_backlab"));
                shell
            }
            (None, None) => backlab(),
        };
        command
            .arg("serve")
            .arg("--bind")
            .arg(options.bind.as_deref().unwrap_or("127.0.0.1:0"))
            .arg("--data-bind")
            .arg(options.data_bind.as_deref().unwrap_or("127.0.0.1:0"))
            .args(["--demo-size", "0"])
            .arg("--db")
            .arg(&db)
            .arg("--data-dir")
            .arg(&data_dir)
            .args(&options.extra)
            .envs(options.env.iter().map(|(name, value)| (name, value)))
            .env_remove("BACKLAB_TOKEN");
        if let Some(token) = &options.token {
            command.args(["--token", token]);
        }
        if let Some(name) = &host_name {
            command.args(["--host-name", name]);
        }
        Lab::spawn(command, root, &data_dir, options.token.clone())
    }

    /// Starts `backlab serve` with no flags, in `root` as its working directory and configured
    /// by `env` alone: what a first start on a fresh machine does.
    pub fn start_unconfigured(root: &Path, env: &[(&str, &str)]) -> Lab {
        let mut command = backlab();
        command
            .arg("serve")
            .current_dir(root)
            .envs(env.iter().copied())
            .env_remove("BACKLAB_TOKEN");
        Lab::spawn(command, root, &root.join("backlab-data"), None)
    }

    /// Spawns the lab and reads the address it announces on its first line of output.
    fn spawn(mut command: Command, root: &Path, data_dir: &Path, token: Option<String>) -> Lab {
        let log = root.join("serve.log");
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("the lab's log file");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .expect("backlab serve starts");
        let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .expect("read the listening line");
        // Keep draining stdout so the lab never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let mut lab = Lab {
            child: Some(child),
            base: String::new(),
            root: root.to_path_buf(),
            data_dir: PathBuf::new(),
            log,
            token,
            // Idle connections are dropped before the lab's 10 s keep-alive timeout closes
            // them, so a request never goes out on a connection the lab is closing.
            client: reqwest::Client::builder()
                .pool_idle_timeout(Duration::from_secs(5))
                .build()
                .expect("HTTP client"),
            _scratch: None,
        };
        let Some(base) = line.trim().strip_prefix("backlab listening on ") else {
            panic!("unexpected first line {line:?}; {}", lab.log_tail());
        };
        lab.base = base.to_string();
        lab.data_dir = data_dir.canonicalize().expect("the data dir exists");
        lab
    }

    /// A new empty directory in the lab's data dir: a target the lab may write into.
    pub fn empty_dir(&self, name: &str) -> PathBuf {
        let dir = self.data_dir.join(name);
        std::fs::create_dir(&dir).expect("a new directory in the data dir");
        dir
    }

    /// The token the lab was started with, which its agents need too.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The lab's URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A GET whose answer the test checks itself.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.expect("GET")
    }

    /// The body of a GET that must answer 200, as text.
    pub async fn get_text(&self, path: &str) -> String {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "GET {path}");
        response.text().await.expect("text body")
    }

    /// The body of a GET that must answer 200, as JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.expect("JSON body")
    }

    /// A POST of a JSON body whose answer the test checks itself.
    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("POST")
    }

    /// Submits a spec (with the lab's token, when it has one) and returns the new campaign's
    /// id, failing the test on any error.
    pub async fn submit(&self, spec: &Value) -> String {
        let mut request = self.client.post(self.url("/api/campaigns")).json(spec);
        if let Some(token) = self.token() {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("POST");
        let status = response.status();
        let body: Value = response.json().await.expect("JSON body");
        assert_eq!(status, 201, "submit failed: {body}");
        body["id"].as_str().expect("id").to_string()
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

    /// Opens a campaign's live event stream.
    pub async fn events(&self, id: &str) -> Events {
        Events::new(self.get(&format!("/api/campaigns/{id}/events")).await)
    }

    /// Follows a campaign's event stream until `campaign_finished` (or until the lab ends it);
    /// returns every event seen.
    pub async fn follow(&self, id: &str, timeout: Duration) -> Vec<(String, Value)> {
        let mut events = self.events(id).await;
        let mut seen = Vec::new();
        let followed = tokio::time::timeout(timeout, async {
            while let Some(event) = events.next().await.expect("the event stream breaks off") {
                let finished = event.0 == "campaign_finished";
                seen.push(event);
                if finished {
                    break;
                }
            }
        })
        .await;
        assert!(
            followed.is_ok(),
            "no campaign_finished within {timeout:?}; got {seen:?}"
        );
        seen
    }

    /// Polls a campaign until `done` holds for it, and returns it; `what` names the wait in
    /// the failure.
    pub async fn wait_campaign(
        &self,
        id: &str,
        what: &str,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let path = format!("/api/campaigns/{id}");
        wait_until(what, timeout, Duration::from_millis(100), async || {
            let campaign = self.get_json(&path).await;
            if done(&campaign) {
                Ok(campaign)
            } else {
                Err(campaign)
            }
        })
        .await
    }

    /// Polls a campaign until its status is one of `wanted`.
    pub async fn wait_status(&self, id: &str, wanted: &[&str], timeout: Duration) -> Value {
        let what = format!("campaign {id} to be {}", wanted.join(" or "));
        self.wait_campaign(id, &what, timeout, |campaign| {
            campaign["status"]
                .as_str()
                .is_some_and(|status| wanted.contains(&status))
        })
        .await
    }

    /// Fails the test when any file the lab keeps in its root (its database, its log, its
    /// data dir) holds `secret`.
    pub fn assert_no_file_holds(&self, secret: &str) {
        for entry in walkdir::WalkDir::new(&self.root).into_iter().flatten() {
            if entry.file_type().is_file() {
                let bytes = std::fs::read(entry.path()).unwrap_or_default();
                assert!(
                    !bytes
                        .windows(secret.len())
                        .any(|window| window == secret.as_bytes()),
                    "{} holds the secret",
                    entry.path().display()
                );
            }
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The server's log so far without terminal colours, so fields read `name=value`.
    pub fn plain_log(&self) -> String {
        let log = self.log();
        let mut plain = String::with_capacity(log.len());
        let mut rest = log.as_str();
        while let Some(start) = rest.find('\u{1b}') {
            plain.push_str(&rest[..start]);
            rest = &rest[start..];
            let end = rest.find('m').map_or(rest.len(), |end| end + 1);
            rest = &rest[end..];
        }
        plain.push_str(rest);
        plain
    }

    /// The end of the server's log, read when shown: for failure messages.
    pub fn log_tail(&self) -> LogTail {
        LogTail(self.log.clone())
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// The server's peak resident memory so far (VmHWM), in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the lab's /proc status");
        let kib: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .expect("VmHWM in /proc status");
        kib / 1024.0
    }

    /// Runs a shell script in the lab's mount namespace (a lab started with `db_tmpfs_mib`
    /// sees its tmpfs there, and nobody else does); whether the script succeeded.
    pub fn in_its_mounts(&self, script: &str) -> bool {
        Command::new("nsenter")
            .arg(format!("--target={}", self.pid()))
            .args(namespace_flags(true))
            .args(["sh", "-c", script])
            .status()
            .expect("nsenter runs (util-linux)")
            .success()
    }

    /// Sends a signal to the server process.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).expect("pid");
        rustix::process::kill_process(pid, signal).expect("kill");
    }

    /// Waits for the server to exit and returns how long it took and its exit status; one
    /// still running after `timeout` fails the test (and is killed when the lab is dropped).
    pub async fn wait_exit(&mut self, timeout: Duration) -> (Duration, ExitStatus) {
        let started = Instant::now();
        let tail = self.log_tail();
        let child = self.child.as_mut().expect("running");
        let status = wait_until(
            "backlab serve to exit",
            timeout,
            Duration::from_millis(20),
            async || child.try_wait().expect("try_wait").ok_or(&tail),
        )
        .await;
        self.child = None;
        (started.elapsed(), status)
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

/// The flags of `unshare` (or, `entering`, of `nsenter`) for a private mount namespace: as
/// root a mount namespace is enough; otherwise the user is mapped to root in a user namespace.
fn namespace_flags(entering: bool) -> Vec<&'static str> {
    match (rustix::process::geteuid().is_root(), entering) {
        (true, _) => vec!["--mount"],
        (false, false) => vec!["--user", "--map-root-user", "--mount"],
        (false, true) => vec!["--user", "--mount", "--preserve-credentials"],
    }
}

/// The last lines of a log file, read only when displayed.
pub struct LogTail(PathBuf);

impl fmt::Display for LogTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let log = std::fs::read_to_string(&self.0).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(60)..].join("\n");
        write!(f, "the end of {}:\n{tail}", self.0.display())
    }
}
