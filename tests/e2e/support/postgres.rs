//! PostgreSQL for the tests: one throwaway cluster per test binary (Debian's server binaries, a
//! data dir in a temp dir, a random loopback port, fsync off; started as the `postgres` user
//! when the tests run as root, since the server refuses root), started at first use, and a
//! database of its own for each test or lab. The cluster is stopped and its temp dir removed
//! when the test binary exits; one whose binary was killed is removed by the next.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A database of a test's own, `postgres://backlab@127.0.0.1:PORT/NAME`, owned by the user
/// `backlab`, on the cluster the test binary shares.
pub struct Postgres {
    pub url: String,
}

impl Postgres {
    /// A new, empty database on the shared cluster (started by the first test that asks).
    /// Panics with what is missing when the server is not installed (CI installs Debian's
    /// `postgresql`).
    pub fn database() -> Postgres {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("test_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        Postgres {
            url: create_database(&name),
        }
    }
}

/// A running cluster with one database, `backlab`, that the user `backlab` owns.
struct Cluster {
    server: Option<Child>,
    /// `postgres://backlab@127.0.0.1:PORT/backlab`.
    url: String,
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

/// `program` run as the `postgres` user when the tests run as root; with `dies_with_parent`,
/// killed when the thread that started it ends (the kernel's parent-death signal).
fn as_server_user(program: &Path, dies_with_parent: bool) -> Command {
    let mut command = Command::new("setpriv");
    if rustix::process::geteuid().is_root() {
        command.args(["--reuid=postgres", "--regid=postgres", "--init-groups"]);
    }
    if dies_with_parent {
        command.args(["--pdeathsig", "KILL"]);
    }
    command.arg("--").arg(program);
    command
}

impl Cluster {
    /// Starts a cluster in a temp dir whose name starts with `prefix`; `dies_with_parent`
    /// as for [`as_server_user`].
    fn start_as(prefix: &str, dies_with_parent: bool) -> Cluster {
        let bin = server_bin()
            .expect("PostgreSQL's server is not installed (apt-get install postgresql)");
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(cluster_parent())
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
        let out = as_server_user(&bin.join("initdb"), false)
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
        let server = as_server_user(&bin.join("postgres"), dies_with_parent)
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
        let mut cluster = Cluster {
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

impl Drop for Cluster {
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

/// Where a cluster's temp dir goes: somewhere the server's user can reach (the target dir may
/// not be), in memory (`/dev/shm`) when that has room for a test binary's databases, so that
/// neither the tests nor the cluster's removal wait on the disk; else under /tmp.
fn cluster_parent() -> &'static str {
    const ROOM: u64 = 2 << 30;
    match rustix::fs::statvfs("/dev/shm") {
        Ok(shm) if shm.f_bavail.saturating_mul(shm.f_frsize) >= ROOM => "/dev/shm",
        _ => "/tmp",
    }
}

/// The prefix of the shared cluster's temp dir.
const SHARED_PREFIX: &str = "backlab-pg-shared-";

/// The URL of a database of its own for the lab kept in `root`, on the cluster the test binary
/// shares: created at first use, the same database for a lab started again on `root`.
pub fn database_for(root: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in root.as_os_str().as_encoded_bytes() {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
    }
    create_database(&format!("lab_{hash:016x}"))
}

/// The shared cluster, once started: stopped by [`stop_shared_cluster`] at exit.
static SHARED_CLUSTER: Mutex<Option<Cluster>> = Mutex::new(None);

/// The URL of the cluster the test binary shares, started at first use by a thread that stays
/// its parent as long as the tests run (the server dies with the binary, however it ends).
fn shared_cluster() -> &'static str {
    static SHARED: OnceLock<String> = OnceLock::new();
    SHARED.get_or_init(|| {
        remove_dead_shared_clusters();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let prefix = format!("{SHARED_PREFIX}{}-", std::process::id());
            let cluster = Cluster::start_as(&prefix, true);
            let url = cluster.url.clone();
            if let Ok(mut shared) = SHARED_CLUSTER.lock() {
                *shared = Some(cluster);
            }
            // SAFETY: registers a plain function, once, to run when the process exits.
            unsafe { libc::atexit(stop_shared_cluster) };
            let _ = sender.send(url);
            loop {
                std::thread::park();
            }
        });
        receiver.recv().expect("the shared cluster starts")
    })
}

/// Stops the shared cluster and removes its temp dir, as the test binary exits.
extern "C" fn stop_shared_cluster() {
    let cluster = SHARED_CLUSTER
        .lock()
        .ok()
        .and_then(|mut shared| shared.take());
    drop(cluster);
}

/// Creates the database `name` on the shared cluster (one already there is kept) and returns
/// its URL.
fn create_database(name: &str) -> String {
    let cluster = shared_cluster();
    let (server, _) = cluster.rsplit_once('/').expect("a database URL");
    let port = server.rsplit_once(':').expect("a port").1;
    let out = Command::new(server_bin().expect("the server binaries").join("createdb"))
        .args(["-h", "127.0.0.1", "-p", port, "-U", "backlab", name])
        .output()
        .expect("createdb runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || stderr.contains("already exists"),
        "createdb {name}: {stderr}"
    );
    format!("{server}/{name}")
}

/// Removes the temp dirs of shared clusters whose test binary is gone (killed, so it could not
/// remove them): each dir is named after the binary's pid (`backlab-pg-shared-PID-…`), so one
/// another binary is still starting is left alone.
fn remove_dead_shared_clusters() {
    let entries = ["/dev/shm", "/tmp"]
        .into_iter()
        .filter_map(|parent| std::fs::read_dir(parent).ok())
        .flatten();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(SHARED_PREFIX) else {
            continue;
        };
        let Some(owner) = rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{owner}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
