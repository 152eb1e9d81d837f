//! Hostile and careless clients against a real `backlab serve`: each finding of the hardening
//! review as a regression test, the lab healthy afterwards.

#[path = "../common/lab.rs"]
mod lab;

mod data;
