//! backlab: a backup performance lab. Measures a backup environment with real I/O, finds the
//! component that limits it, and says what to change.

pub mod analysis;
pub mod change_points;
pub mod cli;
pub mod clock;
pub mod duration;
pub mod engine;
pub mod field_errors;
pub mod forecast;
pub mod http;
pub mod ids;
pub mod lab;
pub mod lmdd;
pub mod matrix;
pub mod net;
pub mod noise;
pub mod plain_words;
pub mod policy;
pub mod reduction_report;
pub mod reference;
pub mod schedule;
pub mod secrets;
pub mod series;
pub mod serve;
pub mod size;
pub mod spec;
pub mod store;
pub mod tuner;
pub mod views;
