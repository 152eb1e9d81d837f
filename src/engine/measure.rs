//! The instruments of a run: stage clocks, write latency, CPU usage and throughput samples.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Interval between throughput samples.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(250);

/// Time one thread of a stage spent working and waiting, and how often it had to wait.
#[derive(Debug, Clone, Copy, Default)]
pub struct StageClock {
    pub busy: Duration,
    pub wait: Duration,
    pub waits: u64,
}

impl StageClock {
    /// Adds another thread's clock of the same stage.
    pub fn merge(&mut self, other: &StageClock) {
        self.busy += other.busy;
        self.wait += other.wait;
        self.waits += other.waits;
    }

    /// Busy time as a percentage of `threads × wall`.
    pub fn busy_pct(&self, threads: usize, wall: Duration) -> f64 {
        share_pct(self.busy, threads, wall)
    }

    /// Waiting time as a percentage of `threads × wall`.
    pub fn wait_pct(&self, threads: usize, wall: Duration) -> f64 {
        share_pct(self.wait, threads, wall)
    }
}

fn share_pct(part: Duration, threads: usize, wall: Duration) -> f64 {
    let whole = wall.as_secs_f64() * threads.max(1) as f64;
    if whole <= 0.0 {
        0.0
    } else {
        (100.0 * part.as_secs_f64() / whole).min(100.0)
    }
}

/// Latencies of individual I/O calls in microseconds (1 µs to 1 hour, 3 significant digits).
pub struct LatencyRecorder {
    histogram: Option<Histogram<u64>>,
}

impl LatencyRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self {
            histogram: Histogram::new_with_bounds(1, 3_600_000_000, 3).ok(),
        }
    }

    /// Records one call that took `elapsed`.
    pub fn record(&mut self, elapsed: Duration) {
        if let Some(histogram) = &mut self.histogram {
            let micros = (elapsed.as_micros() as u64).clamp(1, 3_600_000_000);
            // Values are clamped into the histogram's bounds, so recording cannot fail.
            let _ = histogram.record(micros);
        }
    }

    /// Adds another thread's latencies.
    pub fn merge(&mut self, other: &LatencyRecorder) {
        if let (Some(mine), Some(theirs)) = (&mut self.histogram, &other.histogram) {
            let _ = mine.add(theirs);
        }
    }

    /// p50, p99 and max, or `None` when nothing was recorded.
    pub fn figures(&self) -> Option<LatencyFigures> {
        let histogram = self.histogram.as_ref()?;
        if histogram.is_empty() {
            return None;
        }
        Some(LatencyFigures {
            p50: histogram.value_at_quantile(0.50),
            p99: histogram.value_at_quantile(0.99),
            max: histogram.max(),
        })
    }
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

/// A reading of the process's CPU time and the whole system's CPU counters.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    at: Instant,
    process: Duration,
    system_busy: u64,
    system_total: u64,
}

impl CpuSnapshot {
    /// Reads getrusage(RUSAGE_SELF) and /proc/stat now.
    pub fn take() -> Self {
        let (system_busy, system_total) = system_ticks().unwrap_or((0, 0));
        Self {
            at: Instant::now(),
            process: process_cpu_time(),
            system_busy,
            system_total,
        }
    }

    /// CPU use between `self` and `later`, both as a percentage of all CPUs of the machine.
    pub fn usage_until(&self, later: &CpuSnapshot) -> CpuFigures {
        let wall = later.at.duration_since(self.at).as_secs_f64();
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1) as f64;
        let process = later.process.saturating_sub(self.process).as_secs_f64();
        let process_pct = if wall > 0.0 {
            (100.0 * process / (wall * cpus)).min(100.0)
        } else {
            0.0
        };
        let total = later.system_total.saturating_sub(self.system_total);
        let busy = later.system_busy.saturating_sub(self.system_busy);
        let system_pct = if total > 0 {
            100.0 * busy as f64 / total as f64
        } else {
            0.0
        };
        CpuFigures {
            process_pct: round1(process_pct),
            system_pct: round1(system_pct),
        }
    }
}

/// The lab's CPU time: its own threads', and that of the programs it ran and waited for (a
/// backup tool's processes are the run's work, not other work on the machine).
fn process_cpu_time() -> Duration {
    let of = |who: libc::c_int| {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage writes a complete rusage into the pointer it is given; the struct
        // is zero-initialised, so it is valid even if the call failed.
        let usage = unsafe {
            libc::getrusage(who, usage.as_mut_ptr());
            usage.assume_init()
        };
        let timeval = |tv: libc::timeval| {
            Duration::from_secs(tv.tv_sec.max(0) as u64)
                + Duration::from_micros(tv.tv_usec.max(0) as u64)
        };
        timeval(usage.ru_utime) + timeval(usage.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

/// (busy, total) jiffies over all CPUs from the first line of /proc/stat; idle and iowait are
/// not busy.
fn system_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|field| field.parse().ok())
        .collect();
    if values.len() < 5 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let total: u64 = values.iter().take(8).sum();
    let idle = values[3] + values[4];
    Some((total - idle, total))
}

/// Turns a running byte counter into throughput samples at a fixed interval.
pub struct Sampler {
    start: Instant,
    last_at: Instant,
    last_bytes: u64,
    samples: Vec<Sample>,
}

impl Sampler {
    /// A sampler whose clock starts at `start`.
    pub fn new(start: Instant) -> Self {
        Self {
            start,
            last_at: start,
            last_bytes: 0,
            samples: Vec::new(),
        }
    }

    /// Records the interval since the previous sample; returns its MB/s.
    pub fn sample(&mut self, now: Instant, bytes: u64) -> f64 {
        let interval = now.duration_since(self.last_at).as_secs_f64();
        let mb_per_s = if interval > 0.0 {
            bytes.saturating_sub(self.last_bytes) as f64 / interval / 1e6
        } else {
            0.0
        };
        self.samples.push(Sample {
            t: round3(now.duration_since(self.start).as_secs_f64()),
            mb_per_s: round1(mb_per_s),
        });
        self.last_at = now;
        self.last_bytes = bytes;
        mb_per_s
    }

    /// The samples taken so far, kept.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// The samples taken so far.
    pub fn into_samples(self) -> Vec<Sample> {
        self.samples
    }
}

/// Rounds to one decimal, the precision figures are shown with.
pub fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Rounds to three decimals.
pub fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// CPU use over the run, both as a percentage of all CPUs of the machine.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CpuFigures {
    /// This process (getrusage).
    pub process_pct: f64,
    /// The whole machine (/proc/stat): everything not idle or waiting for I/O.
    pub system_pct: f64,
}

/// Percentiles of I/O call latency in microseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct LatencyFigures {
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// Throughput over one short interval of a run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Sample {
    /// Seconds since the run started, at the end of the interval.
    pub t: f64,
    pub mb_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_usage_sees_a_busy_loop() {
        // Spin until the process has used 150 ms of CPU, however long a loaded machine takes
        // to give it that: the figure must account for exactly that time over the wall time.
        let before = CpuSnapshot::take();
        let give_up = Instant::now() + Duration::from_secs(20);
        let mut spins = 0u64;
        let after = loop {
            for _ in 0..100_000 {
                spins = std::hint::black_box(spins.wrapping_add(1));
            }
            let now = CpuSnapshot::take();
            let used = now.process.saturating_sub(before.process);
            if used >= Duration::from_millis(150) || Instant::now() > give_up {
                break now;
            }
        };
        let usage = before.usage_until(&after);
        let used_s = after.process.saturating_sub(before.process).as_secs_f64();
        assert!(used_s >= 0.15, "only {used_s} s of CPU in 20 s");
        let wall_s = after.at.duration_since(before.at).as_secs_f64();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let expected = (100.0 * used_s / (wall_s * cpus)).min(100.0);
        assert!(
            (usage.process_pct - expected).abs() <= 0.1,
            "{usage:?}, expected {expected:.1}"
        );
        assert!(
            usage.process_pct > 0.0 && usage.system_pct > 0.0,
            "{usage:?}"
        );
    }

    #[test]
    fn latency_percentiles() {
        let mut recorder = LatencyRecorder::new();
        for micros in 1..=100 {
            recorder.record(Duration::from_micros(micros));
        }
        let figures = recorder.figures().expect("recorded");
        assert_eq!(figures.p50, 50);
        assert_eq!(figures.p99, 99);
        assert_eq!(figures.max, 100);
    }
}
