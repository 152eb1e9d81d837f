//! Network backup: clients send framed blocks over TCP, the lab's streams receive them into
//! the pipeline, and the writers feed the target, all on one clock.
//!
//! One file per role: the frames (`wire`), the lab's side of a connection (`receive`), a
//! client's side (`send`), the lab's own clients on loopback (`loopback`), starting a run's
//! clients (`clients`), the lab's data listener and its agents (`listener`, `registry`), and a
//! client host's agent (`agent`). The engine sees none of it: it gets a network run's streams
//! through `engine::remote::NetworkClients`.

use std::time::Duration;

pub mod agent;
pub mod clients;
pub mod listener;
pub mod loopback;
pub mod receive;
pub mod registry;
pub mod send;
pub mod wire;

pub use clients::Clients;

/// How long the lab waits for all of a run's connections before it starts without the missing.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a connection may take to say which run it belongs to.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// Socket read timeout: how often a blocked stream looks at the run's stop flag.
const POLL: Duration = Duration::from_millis(200);
