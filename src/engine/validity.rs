//! Whether a run's figure may be trusted: each reason it may not is a flag with a code, the
//! evidence, and what to do. Every threshold lives here, and `GUIDE` documents them.

pub use super::flags::{Bias, Flag, FlagCode, Validity};
use super::measure::SAMPLE_INTERVAL;
use super::result::{RunResult, RunStatus};
use super::steady::{self, MIN_STEADY_S, STEADY_CV_PCT};
use super::test_kind::TestKind;

/// Share of the source in the page cache above which a read figure is memory speed.
pub const CACHE_RESIDENT_PCT: f64 = 10.0;
/// CPU share of the whole machine taken by other work (system minus the lab's own), in
/// percentage points, above which the run competed with something else.
pub const BUSY_OTHER_PCT: f64 = 25.0;
/// Whole-machine CPU above which a device test measured the CPU instead.
pub const CPU_SATURATED_PCT: f64 = 90.0;
/// Share of the source's entries that could not be read above which the figure covers a
/// different data set than asked.
pub const SKIPPED_PCT: f64 = 5.0;
/// A run given a duration that ended before this share of it ran out of data.
pub const DATA_SHARE_OF_DURATION: f64 = 0.5;
/// Drive cycles (backhitches per drive) a shoe-shining figure needs.
pub const MIN_DRIVE_CYCLES: f64 = 3.0;
/// Times its buffer a drive must take before its figure is the drive's and not the buffer's.
pub const DRIVE_BUFFERS: f64 = 4.0;

/// One row of the flags' documentation: code, threshold and remedy.
pub struct GuideRow {
    pub code: FlagCode,
    pub meaning: String,
}

/// What each flag means, with its threshold, built from the constants above.
pub fn guide() -> Vec<GuideRow> {
    FlagCode::ALL
        .into_iter()
        .map(|code| GuideRow {
            code,
            meaning: match code {
                FlagCode::TooShort => format!(
                    "fewer than {MIN_STEADY_S} s of samples in steady state: the mean is mostly ramp"
                ),
                FlagCode::Unsteady => format!(
                    "no window covering at least {:.0} % of the run (and {MIN_STEADY_S} s) holds \
                     within {STEADY_CV_PCT} % (coefficient of variation of {} s buckets)",
                    100.0 * steady::MIN_STEADY_SHARE,
                    steady::BUCKET_S
                ),
                FlagCode::CacheResident => format!(
                    "more than {CACHE_RESIDENT_PCT} % of the source was in the page cache \
                     (mincore) when a buffered read began"
                ),
                FlagCode::DriveBufferNotFilled => format!(
                    "an emulated drive took less than {DRIVE_BUFFERS} times its buffer without \
                     ever making the host wait: the figure is the feed into the buffer"
                ),
                FlagCode::TooFewDriveCycles => format!(
                    "an emulated drive shoe-shined fewer than {MIN_DRIVE_CYCLES} times: its \
                     start-stop rate is not yet known"
                ),
                FlagCode::BusyMachine => format!(
                    "other work used more than {BUSY_OTHER_PCT} % of the machine's CPU during \
                     the run, and more than the lab itself"
                ),
                FlagCode::CpuSaturated => format!(
                    "a test meant to measure a device kept the machine's CPUs over \
                     {CPU_SATURATED_PCT} % busy"
                ),
                FlagCode::SkippedData => format!(
                    "more than {SKIPPED_PCT} % of the source's entries could not be read"
                ),
                FlagCode::DataSmallerThanRun => format!(
                    "too short to judge because the data ran out before {:.0} % of the run's \
                     duration (replaces too_short then)",
                    100.0 * DATA_SHARE_OF_DURATION
                ),
                FlagCode::UndefinedFigure => "a figure of the run could not be computed \
                    (infinite or not a number, such as a rate over no time): it is kept as 0 \
                    and named in the detail"
                    .to_string(),
            },
        })
        .collect()
}

/// Length of the buckets a run's steadiness is judged on: a drive's cycle when it shoe-shines,
/// a pass over its source when it read the source again and again (`pass_s`).
pub fn bucket_s(result: &RunResult, pass_s: Option<f64>) -> f64 {
    match &result.tape {
        Some(tape) if tape.shoe_shined(result.mb_per_s) => {
            let per_drive = tape.backhitches as f64 / f64::from(tape.drives.max(1));
            (result.seconds / per_drive).max(steady::BUCKET_S)
        }
        _ => steady::bucket_for(pass_s, result.seconds),
    }
}

/// What a run knows about itself beyond its result: the entries its source skipped.
#[derive(Debug, Clone, Copy, Default)]
pub struct Evidence {
    pub skipped_entries: u64,
    /// The run reads or writes a real device or file system, not generated data into memory
    /// or an emulated drive: only then can the CPU, rather than the device, set its pace.
    pub measures_device: bool,
    /// The run writes a file system or device and syncs it at the end: the flush is part of
    /// what the target did.
    pub flushes_at_end: bool,
    /// The run reads its source once, whatever its duration: a target that deduplicates
    /// would take a second pass as all duplicates.
    pub one_pass: bool,
    /// The run times a job from its start to its end (a backup tool's backup or restore):
    /// its whole-run figure is the measurement, so ending before its duration or without a
    /// steady window says nothing against it; only a job too short to time is flagged.
    pub whole_job: bool,
    /// Seconds one pass took over a source the run read again and again.
    pub pass_s: Option<f64>,
}

/// The shortest job (a backup tool's backup or restore, timed whole) whose figure is more
/// than the tool's start-up.
pub const MIN_JOB_S: f64 = 1.0;

/// Finds the steady window and judges the run. Only finished runs are judged.
pub fn judge(result: &mut RunResult, evidence: Evidence) {
    if result.status != RunStatus::Done {
        return;
    }
    find_steady_window(result, &evidence);
    let mut flags = length_flags(result, &evidence);
    flags.extend(cache_flag(result));
    flags.extend(drive_flag(result));
    flags.extend(cpu_flags(result, &evidence));
    flags.extend(skipped_flag(result, &evidence));
    result.validity = Some(Validity {
        valid: flags.is_empty(),
        flags,
    });
}

fn flag(code: FlagCode, detail: String) -> Flag {
    Flag { code, detail }
}

/// The run's steady window, in buckets fit for its passes; a run whose end flushed to stable
/// storage has the flush charged to the window.
fn find_steady_window(result: &mut RunResult, evidence: &Evidence) {
    let active = steady::active_part(&result.samples);
    result.steady = steady::find(active, bucket_s(result, evidence.pass_s));
    if evidence.flushes_at_end
        && let (Some(figures), Some(last)) = (result.steady.as_mut(), active.last())
    {
        // The last sample closes an interval in which data still moved; beyond it, the flush.
        let flush_s = result.seconds - last.t - SAMPLE_INTERVAL.as_secs_f64();
        figures.charge_flush(result.mb_per_s, flush_s);
    }
}

/// Whether the run lasted long enough, and steadily enough, to be judged: data that ran out,
/// too short, or unsteady.
fn length_flags(result: &RunResult, evidence: &Evidence) -> Vec<Flag> {
    let mut flags = Vec::new();
    // A run too short to judge because its data ran out long before its duration says so:
    // the cure is to read the data again, not a longer duration.
    let ran_out = result.params.duration_s.filter(|&duration| {
        !evidence.whole_job
            && result.seconds < DATA_SHARE_OF_DURATION * duration
            && !result.tape.as_ref().is_some_and(|tape| tape.end_of_tape)
    });
    // Too short when the samples cover too little time to judge at all; a run long enough to
    // judge that found no steady window is unsteady instead. A whole job is too short only
    // when it is over before a steady window could be looked for.
    let too_short = if evidence.whole_job {
        result.seconds < MIN_JOB_S
    } else {
        result.steady.is_none()
    };
    if too_short && let Some(duration) = ran_out {
        let why = if evidence.one_pass {
            " (a dedup store would take a second pass over the source as duplicates, so it is \
             read once: a larger source gives a steady figure)"
        } else {
            ""
        };
        flags.push(flag(
            FlagCode::DataSmallerThanRun,
            format!(
                "the data ran out after {:.1} s of the {duration} s allowed: the figure is \
                 mostly start-up{why}",
                result.seconds
            ),
        ));
        return flags;
    }
    match &result.steady {
        _ if evidence.whole_job && too_short => flags.push(flag(
            FlagCode::TooShort,
            format!(
                "the job took {:.2} s; under {MIN_JOB_S} s its figure is mostly the tool's \
                 start-up: give it more data",
                result.seconds
            ),
        )),
        _ if evidence.whole_job => {}
        None => flags.push(flag(
            FlagCode::TooShort,
            format!(
                "{:.2} s of samples; a steady figure needs at least {MIN_STEADY_S} s",
                result.samples.last().map_or(0.0, |sample| sample.t)
            ),
        )),
        Some(window) if !window.steady => flags.push(flag(
            FlagCode::Unsteady,
            match window.cv_pct {
                Some(cv_pct) => format!(
                    "no {MIN_STEADY_S} s window covering half the run held within \
                     {STEADY_CV_PCT} %; the second half varied {cv_pct:.0} %"
                ),
                None => format!(
                    "no {MIN_STEADY_S} s window covering half the run held within \
                     {STEADY_CV_PCT} %; no data moved in the second half ({:.1} to {:.1} s)",
                    window.from_s, window.to_s
                ),
            },
        )),
        Some(_) => {}
    }
    flags
}

/// A buffered read of a source the page cache held measured memory.
fn cache_flag(result: &RunResult) -> Option<Flag> {
    let pct = result.cache_resident_pct?;
    (pct > CACHE_RESIDENT_PCT && !result.params.direct).then(|| {
        flag(
            FlagCode::CacheResident,
            format!("{pct:.0} % of the source was in the page cache when the read began"),
        )
    })
}

/// An emulated drive's figure that is its buffer's, or a shoe-shine seen too few times.
fn drive_flag(result: &RunResult) -> Option<Flag> {
    let tape = result.tape.as_ref()?;
    let drives = f64::from(tape.drives.max(1));
    let per_drive_host = result.bytes as f64 / drives;
    if tape.backhitches == 0
        && !tape.buffer_filled
        && per_drive_host < DRIVE_BUFFERS * tape.buffer_bytes as f64 * tape.compression
    {
        Some(flag(
            FlagCode::DriveBufferNotFilled,
            format!(
                "each drive took {} against a {} buffer and never made the host wait: the \
                 figure is how fast data went into the buffer",
                crate::size::format_bytes(per_drive_host as u64),
                crate::size::format_bytes(tape.buffer_bytes)
            ),
        ))
    } else if tape.shoe_shined(result.mb_per_s)
        && (tape.backhitches as f64 / drives) < MIN_DRIVE_CYCLES
    {
        Some(flag(
            FlagCode::TooFewDriveCycles,
            format!(
                "{} backhitch(es) over {} drive(s); at least {MIN_DRIVE_CYCLES} per drive \
                 show the start-stop rate",
                tape.backhitches, tape.drives
            ),
        ))
    } else {
        None
    }
}

/// Other work on the machine, or CPUs so busy that a device test measured them.
fn cpu_flags(result: &RunResult, evidence: &Evidence) -> Vec<Flag> {
    let mut flags = Vec::new();
    let other = result.cpu.system_pct - result.cpu.process_pct;
    // A network run's clients on this machine are part of the run, not other work.
    let busy = result.test != TestKind::NetworkBackup
        && other > BUSY_OTHER_PCT
        && other > result.cpu.process_pct;
    if busy {
        flags.push(flag(
            FlagCode::BusyMachine,
            format!(
                "other work used {other:.0} % of the machine's CPU, the lab {:.0} %",
                result.cpu.process_pct
            ),
        ));
    }
    let measures_device = evidence.measures_device
        && matches!(
            result.test,
            TestKind::TapeWrite | TestKind::ReadSingle | TestKind::ReadParallel
        );
    // On a machine busy with other work the CPUs are full whatever the run does.
    if measures_device && !busy && result.cpu.system_pct > CPU_SATURATED_PCT {
        flags.push(flag(
            FlagCode::CpuSaturated,
            format!(
                "the CPUs were {:.0} % busy: the figure may be the CPU's, not the device's",
                result.cpu.system_pct
            ),
        ));
    }
    flags
}

/// A source of which too much could not be read: the figure covers other data than asked.
fn skipped_flag(result: &RunResult, evidence: &Evidence) -> Option<Flag> {
    let entries = result.files + evidence.skipped_entries;
    (evidence.skipped_entries > 0
        && 100.0 * evidence.skipped_entries as f64 / entries as f64 > SKIPPED_PCT)
        .then(|| {
            flag(
                FlagCode::SkippedData,
                format!(
                    "{} of {entries} entries of the source could not be read",
                    evidence.skipped_entries
                ),
            )
        })
}
