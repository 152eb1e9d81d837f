//! What the end-to-end tests share: a real lab and its agents, the CLI, the files tests start
//! from, and the one way they wait.

pub mod agent;
pub mod cli;
pub mod csv_table;
pub mod events;
pub mod fixtures;
pub mod in_process;
pub mod lab;
pub mod limits;
pub mod machine;
pub mod moto;
pub mod openapi;
pub mod postgres;
pub mod runs;
pub mod s3;
pub mod silent_link;
pub mod wait;
