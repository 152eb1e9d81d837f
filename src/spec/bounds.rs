//! The numeric bounds of a spec's fields, each stated once: the checks test a value against
//! them, and the messages (the checks', a wrong type's, the form's) and the API's schema take
//! their figures and words from the same constant, so what is said is what is checked.

use super::{MAX_CLIENTS, MAX_GENERATIONS};

/// A closed range of whole numbers a field's value must lie in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeRange {
    pub min: u64,
    pub max: u64,
}

impl WholeRange {
    /// The range from `min` to `max`, both allowed.
    pub const fn new(min: u64, max: u64) -> Self {
        Self { min, max }
    }

    /// Whether `value` lies in the range.
    pub fn contains(self, value: u64) -> bool {
        (self.min..=self.max).contains(&value)
    }

    /// What a value must be, as a noun: `a whole number from 1 to 1024`.
    pub fn words(self) -> String {
        format!("a whole number from {} to {}", self.min, self.max)
    }

    /// The rule a bad value breaks: `must be between 1 and 1024`.
    pub fn rule(self) -> String {
        format!("must be between {} and {}", self.min, self.max)
    }
}

/// Buffers in a run's ring.
pub const BUFFERS: WholeRange = WholeRange::new(1, 1024);
/// Streams of a run.
pub const STREAMS: WholeRange = WholeRange::new(1, 256);
/// Times each run of a campaign is repeated.
pub const REPEAT: WholeRange = WholeRange::new(1, 100);
/// Clients of a network backup run on the lab's own loopback (agents named narrow it).
pub const CLIENTS: WholeRange = WholeRange::new(1, MAX_CLIENTS as u64);
/// Generations of a generated dataset.
pub const GENERATIONS: WholeRange = WholeRange::new(1, MAX_GENERATIONS as u64);
/// Parts in flight per stream of an object-store target.
pub const CONCURRENCY: WholeRange =
    WholeRange::new(1, crate::engine::target::s3::MAX_CONCURRENCY as u64);
/// A search's seed: any whole number.
pub const SEED: WholeRange = WholeRange::new(0, u64::MAX);

/// The longest run a spec may ask for, in seconds (a day); a lab holds its runs to its own
/// `--max-duration`, which may not exceed it.
pub const MAX_DURATION_S: f64 = 86_400.0;

/// The rule of `params.duration_s` under a longest run of `max_s` seconds.
pub fn duration_rule(max_s: f64) -> String {
    format!("must be more than 0 and at most {max_s} s, or \"auto\"")
}

/// Whether `seconds` is a duration a run of at most `max_s` seconds may be given.
pub fn duration_within(seconds: f64, max_s: f64) -> bool {
    seconds > 0.0 && seconds <= max_s
}

/// The whole-number range of the field at `path` (an item of a list as its list), when the
/// field is a whole number with one.
pub fn whole_range_at(path: &str) -> Option<WholeRange> {
    let field = path.split('[').next().unwrap_or(path);
    Some(match field {
        "params.buffers" | "matrix.buffers" => BUFFERS,
        "params.streams" | "matrix.streams" => STREAMS,
        "params.clients" | "matrix.clients" => CLIENTS,
        "repeat" => REPEAT,
        "source.generated.generations" => GENERATIONS,
        "matrix.concurrency" | "target.concurrency" => CONCURRENCY,
        "matrix.search.seed" => SEED,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_says_the_bounds_it_checks() {
        assert!(!BUFFERS.contains(0));
        assert!(BUFFERS.contains(1) && BUFFERS.contains(1024));
        assert!(!BUFFERS.contains(1025));
        assert_eq!(BUFFERS.words(), "a whole number from 1 to 1024");
        assert_eq!(BUFFERS.rule(), "must be between 1 and 1024");
        assert_eq!(whole_range_at("matrix.streams[3]"), Some(STREAMS));
        assert_eq!(whole_range_at("params.size"), None);
    }
}
