//! A throwaway PostgreSQL cluster for a test: Debian's server binaries, a data dir in a temp
//! dir, a random loopback port, fsync off; started as the `postgres` user when the tests run as
//! root (the server refuses root), and stopped and removed when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running cluster with one database, `backlab`, that the user `backlab` owns.
pub struct Postgres {
    server: Option<Child>,
    /// `postgres://backlab@127.0.0.1:PORT/backlab`.
    pub url: String,
    _dir: tempfile::TempDir,
}

/// The directory of Debian's server binaries (`/usr/lib/postgresql/N/bin`), newest first.
fn server_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop()
}

/// `program` run as the `postgres` user when the tests run as root.
fn as_server_user(program: &Path) -> Command {
    if rustix::process::geteuid().is_root() {
        let mut command = Command::new("setpriv");
        command
            .args([
                "--reuid=postgres",
                "--regid=postgres",
                "--init-groups",
                "--",
            ])
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

impl Postgres {
    /// Starts a cluster. Panics with what is missing when the server is not installed (CI
    /// installs Debian's `postgresql`).
    pub fn start() -> Postgres {
        let bin = server_bin()
            .expect("PostgreSQL's server is not installed (apt-get install postgresql)");
        // Under /tmp, which the server's user can reach (the target dir may not be).
        let dir = tempfile::Builder::new()
            .prefix("backlab-pg-")
            .tempdir_in("/tmp")
            .expect("a temp dir");
        let data = dir.path().join("data");
        if rustix::process::geteuid().is_root() {
            let status = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "chown of {}", dir.path().display());
        }
        let out = as_server_user(&bin.join("initdb"))
            .args([
                "--auth=trust",
                "--username=backlab",
                "--no-sync",
                "--encoding=UTF8",
                "-D",
            ])
            .arg(&data)
            .output()
            .expect("initdb runs");
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let server = as_server_user(&bin.join("postgres"))
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.path().display()))
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
            .args(["-c", "full_page_writes=off", "-c", "max_connections=100"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("server.log")).expect("the server's log"))
            .spawn()
            .expect("postgres starts");
        let mut cluster = Postgres {
            server: Some(server),
            url: format!("postgres://backlab@127.0.0.1:{port}/backlab"),
            _dir: dir,
        };
        cluster.wait_ready(&bin, port);
        let out = Command::new(bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "backlab",
                "backlab",
            ])
            .output()
            .expect("createdb runs");
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        cluster
    }

    /// Waits until the server accepts connections, or panics with its log.
    fn wait_ready(&mut self, bin: &Path, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
                .status()
                .is_ok_and(|status| status.success());
            if ready {
                return;
            }
            let exited = self
                .server
                .as_mut()
                .and_then(|server| server.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                let log = std::fs::read_to_string(self._dir.path().join("server.log"))
                    .unwrap_or_default();
                panic!("PostgreSQL did not start ({exited:?}): {log}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            // SIGQUIT: the server's immediate shutdown; nothing in it needs keeping.
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_child(&server),
                rustix::process::Signal::QUIT,
            );
            let _ = server.wait();
        }
    }
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free port")
}
