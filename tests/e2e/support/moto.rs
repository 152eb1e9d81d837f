//! A real S3 server that implements versioning and object lock, for the lock probe's tests:
//! moto's server mode (`moto_server`, from PyPI; `./run-tests` installs it into
//! `target/moto` where it is missing), on a random loopback port, stopped with the test. Its
//! request log is the server's own account of what it was asked and how it answered.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running moto server.
pub struct Moto {
    pub addr: String,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// Where `moto_server` is: `BACKLAB_MOTO_SERVER`, the copy `./run-tests` installs, or the one
/// on the PATH.
fn moto_server() -> PathBuf {
    if let Some(given) = std::env::var_os("BACKLAB_MOTO_SERVER") {
        return PathBuf::from(given);
    }
    let installed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/moto/bin/moto_server");
    if installed.exists() {
        return installed;
    }
    PathBuf::from("moto_server")
}

impl Moto {
    /// Starts a server and waits until it answers.
    pub fn start() -> Moto {
        let dir = tempfile::tempdir().expect("a directory for moto's log");
        let log = dir.path().join("moto.log");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let file = std::fs::File::create(&log).expect("moto's log file");
        let child = Command::new(moto_server())
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("moto's log, twice"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "moto_server cannot start ({error}): ./run-tests installs it into \
                     target/moto, or `pip install 'moto[server]'`"
                )
            });
        let mut moto = Moto {
            addr: format!("127.0.0.1:{port}"),
            child,
            log,
            _dir: dir,
        };
        let began = Instant::now();
        loop {
            if agent().get(&moto.url("/")).call().is_ok() {
                return moto;
            }
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto_server ended ({status}): {}", moto.log());
            }
            assert!(
                began.elapsed() < Duration::from_secs(60),
                "moto_server did not answer within 60 s: {}",
                moto.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `http://ADDR` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A bucket; with `lock` (`COMPLIANCE` or `GOVERNANCE`, days), versioned with object lock
    /// and that default retention. Made as any S3 client makes it; moto's server mode checks
    /// no signature.
    pub fn bucket(&self, name: &str, lock: Option<(&str, u32)>) {
        let mut create = agent().put(&self.url(&format!("/{name}")));
        if lock.is_some() {
            create = create.header("x-amz-bucket-object-lock-enabled", "true");
        }
        create.send_empty().expect("a bucket on moto");
        if let Some((mode, days)) = lock {
            let body = format!(
                "<ObjectLockConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
                 <ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>\
                 <Mode>{mode}</Mode><Days>{days}</Days></DefaultRetention></Rule>\
                 </ObjectLockConfiguration>"
            );
            agent()
                .put(&self.url(&format!("/{name}?object-lock")))
                .send(body.as_bytes())
                .expect("a default retention on moto");
        }
    }

    /// Every version the bucket holds (delete markers apart), as `(key, version id)`.
    pub fn versions(&self, bucket: &str) -> Vec<(String, String)> {
        let body = agent()
            .get(&self.url(&format!("/{bucket}?versions")))
            .call()
            .expect("a listing of versions")
            .into_body()
            .read_to_string()
            .expect("the listing's text");
        let document = roxmltree::Document::parse(&body).expect("the listing's XML");
        document
            .descendants()
            .filter(|node| node.has_tag_name("Version"))
            .filter_map(|version| {
                let text = |name: &str| {
                    version
                        .children()
                        .find(|child| child.has_tag_name(name))
                        .and_then(|child| child.text())
                        .map(str::to_string)
                };
                Some((text("Key")?, text("VersionId")?))
            })
            .collect()
    }

    /// The requests the server logged under a path holding `needle`, each as
    /// `(method, path and query, status)`.
    pub fn requests(&self, needle: &str) -> Vec<(String, String, u16)> {
        without_colours(&self.log())
            .lines()
            .filter_map(|line| {
                let quoted = line.split('"').nth(1)?;
                let status = line.split('"').nth(2)?.split_whitespace().next()?;
                let mut parts = quoted.split_whitespace();
                let method = parts.next()?.to_string();
                let path = parts.next()?.to_string();
                Some((method, path, status.parse().ok()?))
            })
            .filter(|(_, path, _)| path.contains(needle))
            .collect()
    }

    /// What the server has written to its log so far.
    pub fn log(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = std::fs::File::open(&self.log) {
            let _ = file.read_to_string(&mut text);
        }
        text
    }
}

/// A client whose every request to moto gives up after 10 s: a server that stops answering
/// fails the test instead of holding it.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .new_agent()
}

/// `text` without the terminal's colour sequences (`ESC [ 33 m`) its logger may add.
fn without_colours(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
