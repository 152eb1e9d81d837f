//! This test process's limit on open files: the flood tests hold more connections than a
//! default soft limit allows, and every test of the binary shares the process.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Raises the soft limit on open files as far as the hard limit allows; true when this
/// process may now hold `needed` of them.
pub fn room_for_open_files(needed: u64) -> bool {
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|current| current < needed) {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        );
    }
    getrlimit(Resource::Nofile)
        .current
        .is_none_or(|current| current >= needed)
}
