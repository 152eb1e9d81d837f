//! What to change before a run is redone: for each flag, the spec field and the `backlab run`
//! flag that clear it, with the value, so a person can follow the advice as written.

use serde::{Deserialize, Serialize};

use crate::engine::result::RunResult;
use crate::engine::validity::{FlagCode, MIN_DRIVE_CYCLES};

/// One field to set, as JSON in a spec and as a command-line flag.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Change {
    /// Where it goes in a campaign spec, e.g. `params.duration_s`.
    pub field: String,
    /// The value, as JSON.
    pub value: String,
    /// The same for `backlab run`, e.g. `--duration auto`.
    pub cli: String,
}

impl Change {
    fn new(name: &str, value: &str, cli: String) -> Self {
        Self {
            field: format!("params.{name}"),
            value: value.to_string(),
            cli,
        }
    }
}

/// How long the redo must last.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Duration {
    /// Until steady, planned long enough for the drives' buffers (`"auto"`).
    Auto,
    /// At least this many seconds.
    AtLeast(f64),
}

/// The changes that clear `flags` on a redo of `run`, each field once. Flags no field clears
/// (other work on the machine, unreadable files) add none.
pub fn changes(flags: &[FlagCode], run: &RunResult) -> Vec<Change> {
    let mut duration: Option<Duration> = None;
    let mut need = |wanted: Duration| {
        duration = Some(match (duration, wanted) {
            (Some(Duration::AtLeast(a)), Duration::AtLeast(b)) => Duration::AtLeast(a.max(b)),
            (Some(Duration::AtLeast(a)), Duration::Auto) => Duration::AtLeast(a),
            (_, wanted) => wanted,
        });
    };
    let mut changes = Vec::new();
    for flag in flags {
        match flag {
            // A tool's run is timed whole, however long it is asked to last: only more data
            // makes it longer.
            FlagCode::TooShort if run.test.runs_tool() => {}
            FlagCode::TooShort
            | FlagCode::Unsteady
            | FlagCode::DriveBufferNotFilled
            | FlagCode::UndefinedFigure => need(Duration::Auto),
            // A generation is its dataset whole: a larger dataset is the cure, not a run
            // that reads it again.
            FlagCode::DataSmallerThanRun if run.params.generation.is_some() => {
                let size = crate::size::format_size(dataset_for(run));
                changes.push(Change {
                    field: "source.generated.size".to_string(),
                    value: format!("\"{size}\""),
                    cli: format!("--generated {size}"),
                });
            }
            // A tree backed up into a dedup store is read once: only a larger source helps,
            // which no field of the spec gives.
            FlagCode::DataSmallerThanRun if run.dedup.is_some() && run.test.reads_source() => {}
            FlagCode::DataSmallerThanRun => {
                changes.push(Change::new("time_based", "true", "--time-based".into()));
                need(Duration::Auto);
            }
            FlagCode::TooFewDriveCycles => {
                need(cycles_s(run).map_or(Duration::Auto, Duration::AtLeast))
            }
            FlagCode::CacheResident => {
                changes.push(Change::new("cold_cache", "true", "--cold-cache".into()))
            }
            FlagCode::CpuSaturated => {
                let block = run.params.block_size;
                let larger = crate::size::format_size(
                    block.saturating_mul(4).clamp(1 << 20, 16 << 20).max(block),
                );
                changes.push(Change::new(
                    "block_size",
                    &format!("\"{larger}\""),
                    format!("--block-size {larger}"),
                ));
            }
            FlagCode::BusyMachine | FlagCode::SkippedData => {}
        }
    }
    // A run that was already `auto` and still did not settle reached its cap: `auto` again
    // would end the same way; only a longer run can settle.
    if duration == Some(Duration::Auto) && run.params.until_steady {
        duration = Some(Duration::AtLeast(longer_than_cap_s(run)));
    }
    match duration {
        Some(Duration::Auto) => changes.push(Change::new(
            "duration_s",
            "\"auto\"",
            "--duration auto".into(),
        )),
        Some(Duration::AtLeast(seconds)) => changes.push(Change::new(
            "duration_s",
            &format!("{seconds:.0}"),
            format!("--duration {seconds:.0}"),
        )),
        None => {}
    }
    changes
}

/// A run long enough to settle where an `auto` run reached its cap unsteady: twice that cap,
/// rounded up to 10 s.
fn longer_than_cap_s(run: &RunResult) -> f64 {
    let cap_s = run
        .params
        .duration_s
        .unwrap_or(crate::spec::AUTO_MAX_DURATION_S)
        .max(run.seconds);
    ((2.0 * cap_s) / 10.0).ceil() * 10.0
}

/// A dataset large enough that a generation sent at this run's rate lasts half as long again
/// as a run that ends once steady at the soonest, in whole GiB.
fn dataset_for(run: &RunResult) -> u64 {
    let needed_s = 1.5 * crate::engine::expect::AUTO_MIN_S;
    let rate = run.bytes as f64 / run.seconds.max(1e-3);
    let gib = (rate * needed_s / (1u64 << 30) as f64).ceil().max(1.0);
    gib as u64 * (1 << 30)
}

/// Seconds a run of this shape needs for its drives to stop and restart more than
/// [`MIN_DRIVE_CYCLES`] times, rounded up to 10 s.
pub fn cycles_s(run: &RunResult) -> Option<f64> {
    let tape = run.tape.as_ref().filter(|tape| tape.backhitches > 0)?;
    let per_drive = tape.backhitches as f64 / f64::from(tape.drives.max(1));
    let cycle_s = run.seconds / per_drive;
    Some(((MIN_DRIVE_CYCLES + 1.0) * cycle_s / 10.0).ceil() * 10.0)
}
