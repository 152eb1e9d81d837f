//! End-to-end tests of the `backlab` binary: real datasets in temp directories, real I/O.

mod bad_input;
mod campaign;
mod dataset;
mod lmdd;
mod restore;
mod submit;
