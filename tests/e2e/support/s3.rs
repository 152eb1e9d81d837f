//! A real S3 server for tests: s3s-fs (the S3 API over a directory) on a random loopback
//! port, with signature checks against one key pair, on a thread of its own. Its directory is
//! where a test looks for what a run left behind, independently of the lab's own client; it
//! counts the requests it accepts by operation, as a store's bill would.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use s3s::S3Result;
use s3s::access::{S3Access, S3AccessContext};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;

/// The key pair the server accepts.
pub const ACCESS_KEY: &str = "backlab-test";
pub const SECRET_KEY: &str = "backlab-test-secret-key";
/// The bucket every server starts with.
pub const BUCKET: &str = "backups";

/// A running server; it stops when the test process ends.
pub struct S3Server {
    pub addr: SocketAddr,
    /// Requests the server accepted (signed with its key), per client and S3 operation, as
    /// the server itself named them.
    operations: Operations,
    /// The directory behind the API: one directory per bucket, uploads as hidden files.
    pub root: PathBuf,
    _dir: tempfile::TempDir,
}

impl S3Server {
    /// Starts a server with the bucket [`BUCKET`].
    pub fn start() -> S3Server {
        let dir = tempfile::tempdir().expect("a directory for the S3 server");
        let root = dir.path().to_path_buf();
        std::fs::create_dir(root.join(BUCKET)).expect("the bucket's directory");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port for S3");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("the S3 server's address");
        let served = root.clone();
        let operations = Operations::default();
        let counted = operations.clone();
        std::thread::Builder::new()
            .name("s3s-fs".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a runtime for the S3 server");
                runtime.block_on(serve(listener, served, counted));
            })
            .expect("the S3 server's thread");
        S3Server {
            addr,
            operations,
            root,
            _dir: dir,
        }
    }

    /// The requests the server has accepted so far from a client whose `User-Agent` holds
    /// `agent` (`restic`), per operation.
    pub fn operations_from(&self, agent: &str) -> BTreeMap<String, u64> {
        let counted = self
            .operations
            .0
            .lock()
            .map(|counted| counted.clone())
            .unwrap_or_default();
        let mut from = BTreeMap::new();
        for ((client, operation), count) in counted {
            if client.contains(agent) {
                *from.entry(operation).or_default() += count;
            }
        }
        from
    }

    /// `--s3-store NAME=URL` for a store of this server's bucket (or another bucket).
    pub fn store_flag(&self, name: &str, bucket: &str) -> [String; 2] {
        [
            "--s3-store".to_string(),
            format!("{name}=http://{}/{bucket}", self.addr),
        ]
    }

    /// A lab's options with this server's bucket as its store `lab`, and its credentials.
    pub fn lab_options(&self) -> crate::support::lab::LabOptions {
        crate::support::lab::LabOptions {
            extra: self.store_flag("lab", BUCKET).to_vec(),
            env: self.credentials(true),
            ..crate::support::lab::LabOptions::default()
        }
    }

    /// The environment that gives a lab this server's credentials (or a wrong secret).
    pub fn credentials(&self, right: bool) -> Vec<(String, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID".to_string(), ACCESS_KEY.to_string()),
            (
                "AWS_SECRET_ACCESS_KEY".to_string(),
                if right { SECRET_KEY } else { "not-the-secret" }.to_string(),
            ),
        ]
    }

    /// Every file the server holds, relative to its root: objects under their bucket, and the
    /// hidden files of uploads not completed nor aborted.
    pub fn files(&self) -> Vec<String> {
        let mut found = Vec::new();
        walk(&self.root, &self.root, &mut found);
        found.sort();
        found
    }

    /// The files of uploads under way (s3s-fs keeps `.upload-ID.json` and part files).
    pub fn uploads(&self) -> Vec<String> {
        self.files()
            .into_iter()
            .filter(|file| file.contains(".upload"))
            .collect()
    }

    /// The objects in the bucket.
    pub fn objects(&self) -> Vec<String> {
        self.files()
            .into_iter()
            .filter(|file| {
                !file.contains(".upload") && !file.contains("/.") && !file.starts_with('.')
            })
            .collect()
    }
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, found);
        } else if let Ok(relative) = path.strip_prefix(root) {
            found.push(relative.display().to_string());
        }
    }
}

/// The server's own count of what it was asked, by client (its `User-Agent`) and operation.
#[derive(Clone, Default)]
struct Operations(Arc<Mutex<BTreeMap<(String, String), u64>>>);

#[async_trait::async_trait]
impl S3Access for Operations {
    /// Every signed request is counted by the operation the server made of it, then let
    /// through as without this hook (an unsigned one is refused).
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        if cx.credentials().is_none() {
            return Err(s3s::s3_error!(AccessDenied, "Signature is required"));
        }
        let agent = cx
            .headers()
            .get("user-agent")
            .and_then(|agent| agent.to_str().ok())
            .unwrap_or("")
            .to_string();
        if let Ok(mut counted) = self.0.lock() {
            *counted
                .entry((agent, cx.s3_op().name().to_string()))
                .or_default() += 1;
        }
        Ok(())
    }
}

async fn serve(listener: std::net::TcpListener, root: PathBuf, operations: Operations) {
    let fs = s3s_fs::FileSystem::new(&root).expect("s3s-fs over the directory");
    let mut builder = S3ServiceBuilder::new(fs);
    builder.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    builder.set_access(operations);
    let service = builder.build();
    let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                .await;
        });
    }
}

/// A TCP relay in front of a server that can be told to stop answering: from then on it
/// forwards nothing either way and holds every connection open, old and new, as a store that
/// hangs does; `resume` lets data through again.
pub struct StallingProxy {
    pub addr: SocketAddr,
    stalled: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Bytes the server's answers may still carry back before the relay stalls by itself
    /// (`u64::MAX`: no limit).
    answers_left: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl StallingProxy {
    /// Starts a relay to `upstream` on a random loopback port, on a thread of its own.
    pub fn start(upstream: SocketAddr) -> StallingProxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port for the relay");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("the relay's address");
        let stalled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stalled);
        let answers_left = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX));
        let left = std::sync::Arc::clone(&answers_left);
        std::thread::Builder::new()
            .name("s3-relay".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the relay");
                runtime.block_on(relay(listener, upstream, flag, left));
            })
            .expect("the relay's thread");
        StallingProxy {
            addr,
            stalled,
            answers_left,
        }
    }

    /// Stalls by itself once the server's answers have carried `bytes` more back (mid-way
    /// through a read, as a store that hangs while sending does).
    pub fn stall_after_answering(&self, bytes: u64) {
        self.answers_left
            .store(bytes, std::sync::atomic::Ordering::SeqCst);
    }

    /// Nothing passes now.
    pub fn is_stalled(&self) -> bool {
        self.stalled.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// From now on nothing passes, and no connection is closed.
    pub fn stall(&self) {
        self.stalled
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Data passes again.
    pub fn resume(&self) {
        self.answers_left
            .store(u64::MAX, std::sync::atomic::Ordering::SeqCst);
        self.stalled
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// `--s3-store NAME=URL` for a store of `bucket` reached through the relay.
    pub fn store_flag(&self, name: &str, bucket: &str) -> [String; 2] {
        [
            "--s3-store".to_string(),
            format!("{name}=http://{}/{bucket}", self.addr),
        ]
    }
}

async fn relay(
    listener: std::net::TcpListener,
    upstream: SocketAddr,
    stalled: std::sync::Arc<std::sync::atomic::AtomicBool>,
    answers_left: std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("the relay listens");
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let stalled = std::sync::Arc::clone(&stalled);
        let answers_left = std::sync::Arc::clone(&answers_left);
        tokio::spawn(async move {
            let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                return;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            let there = tokio::spawn(pump(
                client_read,
                server_write,
                std::sync::Arc::clone(&stalled),
                None,
            ));
            let back = tokio::spawn(pump(server_read, client_write, stalled, Some(answers_left)));
            let _ = tokio::join!(there, back);
        });
    }
}

/// Copies one direction of a connection, holding whatever it read while the relay is stalled.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    stalled: std::sync::Arc<std::sync::atomic::AtomicBool>,
    budget: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
) {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 << 10];
    loop {
        while stalled.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let read = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if let Some(budget) = &budget {
            let spent = budget.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                Some(left.saturating_sub(read as u64))
            });
            if spent.is_ok_and(|left| left <= read as u64) {
                stalled.store(true, Ordering::SeqCst);
            }
        }
        while stalled.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..read]).await.is_err() {
            return;
        }
    }
}
