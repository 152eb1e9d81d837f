//! The end-to-end tests, in one binary: the real `backlab` binary (`serve`, `run`, `agent`,
//! `dataset`) on random ports and in temp directories, the engine and the charts through the
//! library, and the pages in a headless Chromium. One binary is compiled and linked once.
//!
//! Each module is one area; `support` holds what they share. Every lab here is the real
//! `backlab serve`, even where only the HTTP API is tested: one starts and answers within
//! about 50 ms, and the app is wired in one place only, `serve::serve`.
//!
//! The real-time tests (emulated drives whose speed is the verdict) are the `realtime` binary
//! instead: they must not share the machine with these.

mod browser;
mod charts;
mod cli;
mod engine;
mod hostile;
mod network;
mod service;
mod support;
