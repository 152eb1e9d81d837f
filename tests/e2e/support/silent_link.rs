//! A TCP link between a lab and its PostgreSQL server that a test can cut silently, as a
//! network that drops a connection without a reset does: the connection's server side is
//! closed, and its lab side stays open and hears nothing again (what the lab writes on it is
//! taken and dropped).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One connection through the link.
struct Carried {
    /// The server's side, shut down when the connection is cut.
    server: TcpStream,
    cut: Arc<AtomicBool>,
    /// The lab's side, held open after a cut.
    _lab: TcpStream,
}

/// A link in front of a PostgreSQL server, carrying every connection made to it.
pub struct SilentLink {
    /// The database URL given, with the link in place of the server.
    pub url: String,
    /// The connections carried, by the port the server sees each come from.
    carried: Arc<Mutex<HashMap<u16, Carried>>>,
}

impl SilentLink {
    /// A link to the server of `url` (`postgres://user@HOST:PORT/DB`), listening on a random
    /// loopback port for as long as the test binary runs.
    pub fn before(url: &str) -> SilentLink {
        let (scheme_user, rest) = url.split_once('@').expect("a user in the URL");
        let (server, database) = rest.split_once('/').expect("a database in the URL");
        let server: SocketAddr = server.parse().expect("an address and port");
        let listener = TcpListener::bind("127.0.0.1:0").expect("the link listens");
        let addr = listener.local_addr().expect("its address");
        let carried: Arc<Mutex<HashMap<u16, Carried>>> = Arc::default();
        let registry = Arc::clone(&carried);
        std::thread::spawn(move || {
            for lab in listener.incoming() {
                let Ok(lab) = lab else { continue };
                let Ok(upstream) = TcpStream::connect(server) else {
                    continue;
                };
                let Ok(port) = upstream.local_addr().map(|addr| addr.port()) else {
                    continue;
                };
                let cut = Arc::new(AtomicBool::new(false));
                let handles = (
                    lab.try_clone(),
                    upstream.try_clone(),
                    lab.try_clone(),
                    upstream.try_clone(),
                );
                let (Ok(lab_in), Ok(server_out), Ok(lab_out), Ok(server_in)) = handles else {
                    continue;
                };
                let to_server = Arc::clone(&cut);
                std::thread::spawn(move || pump(lab_in, server_out, &to_server));
                let to_lab = Arc::clone(&cut);
                std::thread::spawn(move || pump(server_in, lab_out, &to_lab));
                registry
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(
                        port,
                        Carried {
                            server: upstream,
                            cut,
                            _lab: lab,
                        },
                    );
            }
        });
        SilentLink {
            url: format!("{scheme_user}@{addr}/{database}"),
            carried,
        }
    }

    /// The ports the server sees the link's connections come from.
    pub fn ports(&self) -> Vec<u16> {
        self.carried
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .copied()
            .collect()
    }

    /// Cuts the connection the server sees coming from `port`: from now on nothing passes
    /// either way, the server's side is closed, and the lab's side is told nothing.
    pub fn cut(&self, port: u16) {
        let carried = self.carried.lock().unwrap_or_else(PoisonError::into_inner);
        let connection = carried.get(&port).expect("a connection through the link");
        connection.cut.store(true, Ordering::SeqCst);
        let _ = connection.server.shutdown(Shutdown::Both);
    }
}

/// Copies what `from` sends to `to` until either ends, and then passes the end on, unless the
/// connection was cut: then what arrives is dropped, and nothing is passed on.
fn pump(mut from: TcpStream, mut to: TcpStream, cut: &AtomicBool) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if cut.load(Ordering::SeqCst) {
            continue;
        }
        if to.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    if !cut.load(Ordering::SeqCst) {
        let _ = to.shutdown(Shutdown::Write);
    }
}
