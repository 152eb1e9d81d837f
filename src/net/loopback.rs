//! The lab's own clients: threads on this host that send a network run over loopback, for a
//! lab without agents and for `backlab run`.

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Sender, bounded};

use super::receive::{Arrival, Arrivals, ClientGateway, read_hello, reject};
use super::send::send_client;
use super::wire::WorkOrder;
use crate::engine::error::EngineError;

/// The lab's own clients: threads on this host that send over loopback.
pub struct LoopbackClients;

impl ClientGateway for LoopbackClients {
    fn open(&self, orders: Vec<WorkOrder>, _cancel: &AtomicBool) -> Result<Arrivals, EngineError> {
        let network = |source: io::Error| EngineError::Network(format!("loopback: {source}"));
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(network)?;
        listener.set_nonblocking(true).map_err(network)?;
        let addr = listener.local_addr().map_err(network)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (arrived_tx, arrived_rx) = bounded(wire_capacity(&orders));
        let run_key = orders
            .first()
            .map(|o| o.run_key.clone())
            .unwrap_or_default();
        let accept_stop = Arc::clone(&stop);
        let acceptor = std::thread::Builder::new()
            .name("backlab-accept".into())
            .spawn(move || accept_loopback(&listener, &run_key, &arrived_tx, &accept_stop))
            .map_err(EngineError::Thread)?;
        let mut clients = Vec::new();
        for order in orders {
            let client_stop = Arc::clone(&stop);
            let name = format!("backlab-client-{}", order.client);
            let handle = std::thread::Builder::new().name(name).spawn(move || {
                let sent = send_client(addr, &order, &client_stop);
                if let Some(error) = sent.error {
                    tracing::warn!(client = %order.client, %error, "loopback client failed");
                }
            });
            match handle {
                Ok(handle) => clients.push(handle),
                Err(error) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(EngineError::Thread(error));
                }
            }
        }
        Ok(Arrivals {
            connections: arrived_rx,
            guard: Box::new(LoopbackGuard {
                stop,
                threads: std::iter::once(acceptor).chain(clients).collect(),
            }),
        })
    }
}

fn wire_capacity(orders: &[WorkOrder]) -> usize {
    orders
        .iter()
        .map(|o| o.streams as usize)
        .sum::<usize>()
        .max(1)
}

/// Stops the acceptor and waits for the loopback clients when the run is over.
struct LoopbackGuard {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for LoopbackGuard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn accept_loopback(
    listener: &TcpListener,
    run_key: &str,
    arrived: &Sender<Arrival>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((socket, peer)) => match read_hello(socket) {
                Ok(arrival) if arrival.hello.run_key == run_key => {
                    let _ = arrived.send(arrival);
                }
                Ok(mut arrival) => reject(&mut arrival.socket, "unknown run"),
                Err(error) => tracing::warn!(%peer, %error, "loopback connection dropped"),
            },
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(error) => {
                tracing::warn!(%error, "loopback accept failed");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}
