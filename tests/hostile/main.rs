//! Hostile and careless clients against a real `backlab serve`: each finding of the hardening
//! review as a regression test, each ending with the lab still healthy.

mod http;

#[path = "../common/lab.rs"]
mod lab;

pub use lab::*;
