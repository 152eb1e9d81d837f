//! Hostile and careless requests against a real `backlab serve`: each finding of a targeted
//! attack is a regression test here — the exact request, the refusal it must get, the memory
//! it may cost, and a healthy lab afterwards.

mod agents;
mod data;
mod errors;
mod faults;
mod http;
mod plan;
mod poison;
mod request_schemas;
mod spec;
mod stall;
mod swap;
