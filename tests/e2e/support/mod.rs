//! What the end-to-end tests share.

pub mod lab;
