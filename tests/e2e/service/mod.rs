//! End-to-end tests of `backlab serve`: the real binary on a random port, a real SQLite file,
//! real datasets in temp directories, real HTTP; and (`in_process`) the same application in
//! this process for answers that need no worker.

mod api;
mod campaigns;
mod fleet;
mod in_process;
mod one_model;
mod pages;
mod postgres;
mod references;
mod report;
mod restart;
mod safety;
mod schedules;
mod search;
mod upgrade;
mod watch;
