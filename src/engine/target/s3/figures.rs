//! What a run against an object store measured of the store itself: requests and their
//! rate, the latency of part uploads, completions and ranged reads (p50, p99, max), the
//! attempts made again and the throttling answers among them, and the time spent completing
//! uploads. Each run's requests are counted in one `RequestTally` that its streams share.

use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::operations::{Answered, RequestCounts};
use crate::engine::target::TargetReport;
use crate::size::format_bytes;

/// Which latency a request's time counts towards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestClass {
    /// An UploadPart.
    Part,
    /// A CompleteMultipartUpload.
    Complete,
    /// A ranged GetObject.
    Get,
    /// Starting, aborting, listing, removing.
    Other,
}

/// Latency of one kind of request over a run, in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct RequestLatency {
    pub requests: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl RequestLatency {
    fn of(histogram: &Histogram<u64>) -> Self {
        let ms = |micros: u64| (micros as f64 / 100.0).round() / 10.0;
        Self {
            requests: histogram.len(),
            p50_ms: ms(histogram.value_at_quantile(0.5)),
            p99_ms: ms(histogram.value_at_quantile(0.99)),
            max_ms: ms(histogram.max()),
        }
    }

    /// `p50 12.3 ms, p99 40.1 ms, max 52.0 ms`.
    pub fn words(&self) -> String {
        format!(
            "p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            self.p50_ms, self.p99_ms, self.max_ms
        )
    }
}

/// An object store's figures for one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct S3Figures {
    /// The store, in words: `S3 store lab (bucket b at 127.0.0.1:9000)`.
    pub store: String,
    pub part_size: u64,
    /// Parts each stream keeps in flight.
    pub concurrency: u32,
    pub object_size: u64,
    /// Objects whose upload was completed.
    pub objects: u64,
    /// Every attempt of every request, retries included.
    pub requests: u64,
    /// Requests per second of the timed window.
    pub requests_per_s: f64,
    pub part_uploads: RequestLatency,
    pub completions: RequestLatency,
    /// Ranged reads, for a restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranged_gets: Option<RequestLatency>,
    /// Attempts made again after a throttling answer, a server error or a lost connection.
    pub retries: u64,
    /// Answers that asked the lab to slow down (503 SlowDown, 429).
    pub throttled: u64,
    /// Seconds spent completing uploads, summed over the streams.
    pub completing_s: f64,
    /// The run's requests by S3 operation, as its own client counted each attempt (the lab's
    /// check at submission and its cleanup after are not among them): what a store bills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<RequestCounts>,
}

impl S3Figures {
    /// The figures as the pages and reports show them.
    pub fn report(&self) -> TargetReport {
        let mut figures = vec![
            format!("{} requests ({:.1}/s)", self.requests, self.requests_per_s),
            format!(
                "{} parts of {} uploaded ({}), {} in flight per stream",
                self.part_uploads.requests,
                format_bytes(self.part_size),
                self.part_uploads.words(),
                self.concurrency
            ),
        ];
        if self.completions.requests > 0 {
            figures.push(format!(
                "{} uploads completed ({}), {:.2} s completing",
                self.completions.requests,
                self.completions.words(),
                self.completing_s
            ));
        }
        if let Some(gets) = &self.ranged_gets {
            figures.push(format!("{} ranged reads ({})", gets.requests, gets.words()));
        }
        figures.push(format!(
            "{} retries, {} throttled (503 SlowDown)",
            self.retries, self.throttled
        ));
        TargetReport {
            reporter: self.store.clone(),
            device: self.store.clone(),
            figures,
        }
    }
}

/// The requests of one run, counted as they are made, from any stream's threads.
#[derive(Debug)]
pub struct RequestTally(Mutex<Counted>);

#[derive(Debug)]
struct Counted {
    parts: Histogram<u64>,
    completes: Histogram<u64>,
    gets: Histogram<u64>,
    requests: u64,
    retries: u64,
    throttled: u64,
    completing: Duration,
    objects: u64,
    /// A billed client's attempts by S3 operation.
    counts: RequestCounts,
}

/// Longest latency a histogram holds, in microseconds: an hour.
const LONGEST_US: u64 = 3_600_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LONGEST_US, 3).expect("constant bounds hdrhistogram accepts")
}

impl Default for RequestTally {
    fn default() -> Self {
        Self(Mutex::new(Counted {
            parts: histogram(),
            completes: histogram(),
            gets: histogram(),
            requests: 0,
            retries: 0,
            throttled: 0,
            completing: Duration::ZERO,
            objects: 0,
            counts: RequestCounts::default(),
        }))
    }
}

impl RequestTally {
    fn with(&self, change: impl FnOnce(&mut Counted)) {
        let mut counted = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        change(&mut counted);
    }

    /// A request answered with success after `took` (a ranged read's time is taken when its
    /// body has arrived, by `latency`).
    pub fn answered(&self, class: RequestClass, took: Duration) {
        self.with(|counted| counted.requests += 1);
        if class != RequestClass::Get {
            self.latency(class, took);
        }
    }

    /// One request of `class` took `took`.
    pub fn latency(&self, class: RequestClass, took: Duration) {
        let micros = (took.as_micros() as u64).clamp(1, LONGEST_US);
        self.with(|counted| {
            let histogram = match class {
                RequestClass::Part => &mut counted.parts,
                RequestClass::Complete => &mut counted.completes,
                RequestClass::Get => &mut counted.gets,
                RequestClass::Other => return,
            };
            let _ = histogram.record(micros);
        });
    }

    /// An attempt that failed; `throttled` when the store asked the lab to slow down.
    pub fn refused(&self, throttled: bool) {
        self.with(|counted| {
            counted.requests += 1;
            counted.throttled += u64::from(throttled);
        });
    }

    /// One attempt of `operation` by a billed client, answered so, with the bytes of its
    /// body and of its answer's.
    pub fn counted(&self, operation: &str, answered: Answered, up: u64, down: u64) {
        self.with(|counted| {
            counted.counts.request(operation, answered);
            counted.counts.bytes(operation, true, up);
            counted.counts.bytes(operation, false, down);
        });
    }

    /// A failed attempt is made again.
    pub fn retried(&self) {
        self.with(|counted| counted.retries += 1);
    }

    /// An upload was completed, taking `took` with its retries.
    pub fn completed(&self, took: Duration) {
        self.with(|counted| {
            counted.completing += took;
            counted.objects += 1;
        });
    }

    /// A billed client's attempts so far, by operation; `None` before its first.
    pub fn counts(&self) -> Option<RequestCounts> {
        let counted = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (counted.counts.requests() > 0).then(|| counted.counts.clone())
    }

    /// The figures so far, for a run that lasted `seconds`.
    pub fn figures(&self, settings: &S3Figures, seconds: f64, restore: bool) -> S3Figures {
        let counted = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        S3Figures {
            objects: counted.objects,
            requests: counted.requests,
            requests_per_s: if seconds > 0.0 {
                (counted.requests as f64 / seconds * 10.0).round() / 10.0
            } else {
                0.0
            },
            part_uploads: RequestLatency::of(&counted.parts),
            completions: RequestLatency::of(&counted.completes),
            ranged_gets: restore.then(|| RequestLatency::of(&counted.gets)),
            retries: counted.retries,
            throttled: counted.throttled,
            completing_s: (counted.completing.as_secs_f64() * 1000.0).round() / 1000.0,
            counted: (counted.counts.requests() > 0).then(|| counted.counts.clone()),
            ..settings.clone()
        }
    }
}
