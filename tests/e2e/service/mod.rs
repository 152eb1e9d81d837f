//! End-to-end tests of `backlab serve`: the real binary on a random port, a real SQLite file,
//! real datasets in temp directories, real HTTP.

mod api;
mod campaigns;
mod pages;
mod report;
mod restart;
mod safety;
mod upgrade;
