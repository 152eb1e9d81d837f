//! A real S3 server for tests: s3s-fs (the S3 API over a directory) on a random loopback
//! port, with signature checks against one key pair, on a thread of its own. Its directory is
//! where a test looks for what a run left behind, independently of the lab's own client.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

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
        std::thread::Builder::new()
            .name("s3s-fs".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a runtime for the S3 server");
                runtime.block_on(serve(listener, served));
            })
            .expect("the S3 server's thread");
        S3Server {
            addr,
            root,
            _dir: dir,
        }
    }

    /// `--s3-store NAME=URL` for a store of this server's bucket (or another bucket).
    pub fn store_flag(&self, name: &str, bucket: &str) -> [String; 2] {
        [
            "--s3-store".to_string(),
            format!("{name}=http://{}/{bucket}", self.addr),
        ]
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

async fn serve(listener: std::net::TcpListener, root: PathBuf) {
    let fs = s3s_fs::FileSystem::new(&root).expect("s3s-fs over the directory");
    let mut builder = S3ServiceBuilder::new(fs);
    builder.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
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
