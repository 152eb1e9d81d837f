//! What a run needs to give a valid figure, and how long it will take, known before a byte
//! moves: an emulated drive must take its buffer several times over before its figure is the
//! drive's and not the feed into its buffer, and a run that ends once steady lasts at least its
//! shortest steady window. The lab plans `auto` runs long enough with it, warns about an
//! explicit duration that is too short, and says up front how long a campaign takes.

use super::plan::{RunParams, RunPlan, SourcePlan};
use super::steady::MIN_STEADY_S;
use super::target::tape::TapeConfig;
use super::test_kind::TestKind;
use super::validity::{DRIVE_BUFFERS, MIN_DRIVE_CYCLES};

/// The shortest a run that ends once steady lasts: twice the shortest steady window, so that
/// steadiness is judged on a window that is not all ramp.
pub const AUTO_MIN_S: f64 = 2.0 * MIN_STEADY_S;

/// What a run takes besides its timed window: the cache survey before it, the flush and the
/// removal of its files after, the worker's bookkeeping.
const OVERHEAD_S: f64 = 0.5;

/// A run that ends once steady is judged once a second: it ends up to a second after it could.
const JUDGED_EVERY_S: f64 = 1.0;

/// Why a run must last at least some time to be valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// The shortest timed window that can give a valid figure, seconds.
    pub min_s: f64,
    /// The reason, as the warning says it.
    pub why: String,
}

/// The emulated drive a run writes to, with the rate one of its drives takes the run's data at
/// (native speed times the compression the data allows, MB/s): what every figure here about a
/// drive is worked out from.
fn drive_of(plan: &RunPlan) -> Option<(&TapeConfig, f64, f64)> {
    let config = plan.target.tape()?;
    if !plan.test.writes_target() {
        return None;
    }
    let compression = plan
        .params
        .compress_ratio
        .clamp(1.0, config.max_compression);
    Some((config, compression, config.native_mb_s * compression))
}

/// What a run needs beyond the steady window, if anything: the time an emulated drive takes to
/// be fed its buffer [`DRIVE_BUFFERS`] times at the rate it takes data.
pub fn need(plan: &RunPlan) -> Option<Need> {
    let (config, compression, host_mb_s) = drive_of(plan)?;
    let min_s = DRIVE_BUFFERS * config.buffer_bytes as f64 / (host_mb_s * 1e6);
    Some(Need {
        min_s,
        why: format!(
            "an emulated {} drive needs at least {min_s:.1} s to take its {} buffer {} times \
             at {host_mb_s:.0} MB/s ({:.0} MB/s native × {compression:.1}:1)",
            config.model,
            crate::size::format_bytes(config.buffer_bytes),
            DRIVE_BUFFERS,
            config.native_mb_s
        ),
    })
}

/// What a backup fed slower than its drives' lowest speed step needs to show how often they
/// stop and restart: [`MIN_DRIVE_CYCLES`] and one more cycles of filling a buffer at the feed,
/// repositioning and writing it out. Known before the run only when the feed is capped
/// (`source_rate_mb_s`).
pub fn cycles_need(plan: &RunPlan) -> Option<Need> {
    let (config, compression, _) = drive_of(plan)?;
    if !matches!(plan.test, TestKind::FullBackup | TestKind::NetworkBackup) {
        return None;
    }
    let params = &plan.params;
    let streams = params.streams.max(1) * params.clients.unwrap_or(1).max(1);
    let feed_mb_s = params.source_rate_mb_s? * f64::from(streams) / f64::from(config.drives.max(1));
    let lowest_mb_s = config.min_mb_s * compression;
    if feed_mb_s >= lowest_mb_s {
        return None;
    }
    let buffer = config.buffer_bytes as f64;
    let cycle_s = buffer * compression / (feed_mb_s * 1e6)
        + config.reposition_s
        + buffer / (config.min_mb_s * 1e6);
    let min_s = (MIN_DRIVE_CYCLES + 1.0) * cycle_s;
    Some(Need {
        min_s,
        why: format!(
            "fed {feed_mb_s:.0} MB/s per drive, below its lowest step ({lowest_mb_s:.0} MB/s), \
             an emulated {} drive shoe-shines in cycles of about {cycle_s:.0} s; showing how \
             often takes {} of them, at least {min_s:.0} s",
            config.model,
            MIN_DRIVE_CYCLES + 1.0
        ),
    })
}

/// The shortest timed window of a run that ends once steady: the steady window's minimum, or
/// longer when its target needs it.
pub fn min_steady_run_s(plan: &RunPlan) -> f64 {
    need(plan).map_or(AUTO_MIN_S, |need| need.min_s.max(AUTO_MIN_S))
}

/// How long a run is expected to take, seconds, and whether that is only an upper bound (a run
/// that ends with its data, at a rate not known before it runs); and the longest it may take
/// (a run that ends once steady and never settles runs to its cap).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expected {
    pub seconds: f64,
    pub at_most: bool,
    pub longest_s: f64,
}

/// What one command of a backup tool takes before it moves a byte (its start-up, its
/// repository's opening): restic and borg each take most of a second on a small machine.
const TOOL_START_S: f64 = 1.0;
/// The rates a life's length is worked out at, MB/s: a tool's full backup, its scan of an
/// unchanged tree, a check reading every byte, a restore, the lab's verification and copies.
/// Rates of restic and borg on a 2-core machine with a virtio disk, rounded down.
const LIFE_BACKUP_MB_S: f64 = 40.0;
const LIFE_SCAN_MB_S: f64 = 400.0;
const LIFE_READ_MB_S: f64 = 100.0;
const LIFE_RESTORE_MB_S: f64 = 60.0;
const LIFE_COPY_MB_S: f64 = 200.0;
/// The longest one night of a life is counted at when its tree's bytes are not known: a
/// tool's step (`tool::run`'s default limit).
const LIFE_STEP_LIMIT_S: f64 = 600.0;

/// A life's expected length: its nights' backups (the first in full, the others over the
/// night's change), the tool's list after each, its retentions and checks, two restores
/// verified and one file's restore (a stream tool reads its whole stream for it), and the
/// copies; from its tree's bytes (a rung's, or the source's when a bounded
/// walk can count them). `None` when the bytes are not known.
fn life_expected(plan: &RunPlan) -> Option<Expected> {
    let life = plan.params.life?;
    let bytes = match (&plan.params.ladder, &plan.source) {
        (Some(rung), _) => rung.bytes,
        (None, SourcePlan::Paths(paths)) => super::cache::tree_bytes_recent(paths)?,
        _ => return None,
    } as f64
        / 1e6;
    let nights = f64::from(life.nights);
    let per_night = TOOL_START_S * 2.0
        + bytes / LIFE_SCAN_MB_S
        + bytes * (life.change.edited + life.change.added) / LIFE_BACKUP_MB_S;
    let retentions = f64::from(life.nights / life.retention_every.max(1));
    let checks = f64::from(
        (1..=life.nights)
            .filter(|night| life.checks_due(*night))
            .count() as u32,
    );
    let seconds = TOOL_START_S
        + bytes / LIFE_BACKUP_MB_S
        + (nights - 1.0) * per_night
        + retentions * 2.0 * (TOOL_START_S + bytes / LIFE_COPY_MB_S)
        + checks * (2.0 * TOOL_START_S + bytes / LIFE_READ_MB_S)
        + 2.0 * (TOOL_START_S + bytes / LIFE_RESTORE_MB_S + bytes / LIFE_COPY_MB_S)
        + TOOL_START_S
        + bytes / LIFE_RESTORE_MB_S
        + 2.0 * bytes / LIFE_COPY_MB_S
        + OVERHEAD_S;
    Some(Expected {
        seconds,
        at_most: false,
        // A tool three times slower than these rates.
        longest_s: 3.0 * seconds,
    })
}

/// What a tool test takes besides its share per MB: the tool started for its repository and
/// its timed command, and the lab's bookkeeping around them.
const TOOL_TEST_BASE_S: f64 = 2.0;

/// Seconds a tool test takes per MB of its source, its untimed steps with its timed one: a
/// backup (a new repository, the backup); the tool alone (the source copied into memory, then
/// backed up there); an incremental (a copy, a first backup, a change, the second backup); a
/// restore (a backup, the restore, every file compared). Measured with restic 0.14 and borg
/// 1.2 over trees of 256 MiB and 1 GiB on a 2-core machine with a virtio disk, where the two
/// tools differed by a fifth at most.
fn tool_test_s_per_mb(test: TestKind) -> Option<f64> {
    match test {
        TestKind::ToolBackup => Some(0.0042),
        TestKind::ToolCeiling => Some(0.011),
        TestKind::ToolIncremental => Some(0.0075),
        TestKind::ToolRestore => Some(0.0105),
        _ => None,
    }
}

/// A tool test's expected length, from its source's bytes when a bounded walk can count them;
/// `None` for other tests and for a tree too large to count before it starts. The tool's
/// timed command may take as long as the run's cap, besides its untimed steps.
fn tool_expected(plan: &RunPlan) -> Option<Expected> {
    let s_per_mb = tool_test_s_per_mb(plan.test)?;
    let SourcePlan::Paths(paths) = &plan.source else {
        return None;
    };
    let mb = super::cache::tree_bytes_recent(paths)? as f64 / 1e6;
    let seconds = TOOL_TEST_BASE_S + mb * s_per_mb + OVERHEAD_S;
    let cap = plan.params.duration_s.unwrap_or(f64::INFINITY);
    let longest_s = if cap.is_finite() {
        seconds + cap
    } else {
        3.0 * seconds
    };
    Some(Expected {
        seconds,
        at_most: false,
        longest_s,
    })
}

/// The object-lock probe's usual length, and its longest: its dozen requests, each given
/// up after 30 s and not sent again once timed out (its cleanup's few are shorter).
const PROBE_S: f64 = 2.0;
const PROBE_LONGEST_S: f64 = 12.0 * 30.0;

/// The expected length of a run, from its plan alone.
pub fn expected(plan: &RunPlan) -> Expected {
    if let Some(expected) = tool_expected(plan) {
        return expected;
    }
    if plan.test == TestKind::ObjectLock {
        // A dozen small requests, each given up after the probe's timeout.
        return Expected {
            seconds: PROBE_S,
            at_most: false,
            longest_s: PROBE_LONGEST_S,
        };
    }
    if plan.test == TestKind::ToolLife {
        return life_expected(plan).unwrap_or_else(|| {
            // Its tree too large to count before it starts: every command of every night at
            // the longest a tool's step may take.
            let nights = plan.params.life.map_or(1, |life| life.nights);
            let longest = f64::from(nights) * LIFE_STEP_LIMIT_S;
            Expected {
                seconds: longest,
                at_most: true,
                longest_s: longest,
            }
        });
    }
    let params = &plan.params;
    let cap = params.duration_s.unwrap_or(f64::INFINITY);
    let drain = drain_s(plan);
    if params.until_steady {
        let seconds = (min_steady_run_s(plan) + JUDGED_EVERY_S * 0.5).min(cap);
        return Expected {
            seconds: seconds + drain + OVERHEAD_S,
            at_most: false,
            longest_s: cap + drain + OVERHEAD_S,
        };
    }
    if params.time_based && cap.is_finite() {
        let seconds = cap + drain + OVERHEAD_S;
        return Expected {
            seconds,
            at_most: false,
            longest_s: seconds,
        };
    }
    // A run that ends with its data: its length is known when the target's rate is.
    let by_rate = bytes_of(plan, params)
        .zip(known_rate_mb_s(plan))
        .map(|(bytes, mb_s)| bytes as f64 / (mb_s * 1e6));
    let longest_s = if cap.is_finite() { cap } else { 0.0 } + drain + OVERHEAD_S;
    match by_rate {
        Some(seconds) => Expected {
            seconds: seconds.min(cap) + drain + OVERHEAD_S,
            at_most: false,
            longest_s,
        },
        None => Expected {
            seconds: longest_s,
            at_most: true,
            longest_s,
        },
    }
}

/// Bytes a run that ends with its data moves.
fn bytes_of(plan: &RunPlan, params: &RunParams) -> Option<u64> {
    match (&plan.source, params.size) {
        (_, Some(size)) => Some(size),
        (SourcePlan::Generated { size, .. }, None) => Some(*size),
        _ if plan.test == TestKind::TapeWrite => Some(super::plan::DEFAULT_GENERATED_SIZE),
        _ => None,
    }
}

/// The rate an emulated target takes data at, when the run writes to one.
fn known_rate_mb_s(plan: &RunPlan) -> Option<f64> {
    if !plan.test.writes_target() {
        return None;
    }
    plan.target.target().takes_mb_s(plan.params.compress_ratio)
}

/// How long an emulated drive takes to write out its buffer when the run closes it.
fn drain_s(plan: &RunPlan) -> f64 {
    drive_of(plan).map_or(0.0, |(config, _, host_mb_s)| {
        config.buffer_bytes as f64 / (host_mb_s * 1e6)
    })
}
