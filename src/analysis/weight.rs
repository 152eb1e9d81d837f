//! Which flags can change a finding. A flag says a figure may mislead, and in which direction
//! ([`Bias`]); a finding is a few comparisons between figures. A flag overturns the finding
//! only when moving its figure that way could flip one of them: other work on the machine can
//! only slow the lab's side, so a backup that still reached the target's ceiling stays
//! target-bound.

use serde::{Deserialize, Serialize};

use super::findings::{Ceiling, Finding, Interference};
use super::{Figures, REACHED, Side, stage_attribution};
use crate::engine::result::RunResult;
use crate::engine::validity::{Bias, FlagCode};
use crate::spec::TestKind;

/// Why a flag on a run the finding rests on can or cannot overturn it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(tag = "weight", rename_all = "snake_case")]
pub enum Weight {
    /// It can: the run must be redone before the finding stands.
    Overturns,
    /// The figure can only be higher than measured, which leaves the finding as it is.
    OnlyHigher,
    /// The figure can only be lower than measured, which leaves the finding as it is.
    OnlyLower,
    /// An emulated target set the run's pace (the host waited for it): other work on the
    /// machine did not slow it.
    DevicePaced,
    /// The run read at its `source_rate_mb_s` cap: it could not have been faster.
    AtItsCap { cap_mb_s: f64 },
    /// Whatever the buffer hid, the drives take at least their native rate, which is far from
    /// the figure that decides.
    DriveRateKnown { native_mb_s: f64 },
    /// It leaves the component named; a secondary figure stays open (see [`OpenClaim`]).
    Secondary,
    /// The drives shoe-shine for want of data, and the source read on its own (a valid run)
    /// delivers less than they need to stream: no better figure of the backup changes that.
    FeedCannotReach { source_mb_s: f64, needed_mb_s: f64 },
}

impl Weight {
    /// Whether the flag can overturn the finding.
    pub fn overturns(self) -> bool {
        self == Weight::Overturns
    }
}

/// One flag of a run the finding rests on, with its weight on that finding.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct FlagWeight {
    pub flag: FlagCode,
    pub weight: Weight,
}

/// A test the finding rests on, and the weight of each flag on its figure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Basis {
    pub test: TestKind,
    pub mb_per_s: f64,
    pub flags: Vec<FlagWeight>,
}

impl Basis {
    /// The flags that can overturn the finding.
    pub fn overturning(&self) -> Vec<FlagCode> {
        self.flags
            .iter()
            .filter(|flag| flag.weight.overturns())
            .map(|flag| flag.flag)
            .collect()
    }
}

/// A secondary claim that stays open while the component named stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(tag = "claim", rename_all = "snake_case")]
pub enum OpenClaim {
    /// How fast the drives start and stop is not known yet: a run of `needs_s` would show it.
    ShoeShining { test: TestKind, needs_s: f64 },
}

/// The tests a finding rests on.
fn rests_on(finding: &Finding) -> &'static [TestKind] {
    match finding {
        Finding::Network(_) => &[TestKind::NetworkBackup, TestKind::TapeWrite],
        Finding::ShoeShine(_) => &[
            TestKind::FullBackup,
            TestKind::NetworkBackup,
            TestKind::ReadParallel,
        ],
        _ => &[
            TestKind::TapeWrite,
            TestKind::ReadParallel,
            TestKind::NullSink,
            TestKind::FullBackup,
        ],
    }
}

/// Each test the finding rests on, with the weight of every flag on its figure.
pub(super) fn basis(figures: &Figures<'_>, finding: &Finding) -> Vec<Basis> {
    rests_on(finding)
        .iter()
        .filter_map(|test| figures.get(*test))
        .map(|figure| Basis {
            test: figure.test,
            mb_per_s: figure.mb_per_s,
            flags: figure
                .flags
                .iter()
                .map(|flag| FlagWeight {
                    flag: *flag,
                    weight: weigh(figures, finding, figure.test, figure.run, *flag),
                })
                .collect(),
        })
        .collect()
}

/// What stays open beside a finding that stands.
pub(super) fn open_claims(figures: &Figures<'_>, basis: &[Basis]) -> Vec<OpenClaim> {
    basis
        .iter()
        .filter(|b| {
            b.flags
                .iter()
                .any(|f| f.weight == Weight::Secondary && f.flag == FlagCode::TooFewDriveCycles)
        })
        .filter_map(|b| {
            let run = figures.run(b.test)?;
            Some(OpenClaim::ShoeShining {
                test: b.test,
                needs_s: super::remedy::cycles_s(run)?,
            })
        })
        .collect()
}

/// The weight of `flag`, raised on `test`'s figure (measured by `run`), on `finding`.
fn weigh(
    figures: &Figures<'_>,
    finding: &Finding,
    test: TestKind,
    run: &RunResult,
    flag: FlagCode,
) -> Weight {
    let bias = flag.bias();
    match finding {
        Finding::Limits {
            ceiling, full_mb_s, ..
        } => {
            if test == TestKind::FullBackup {
                full_at_ceiling(run, flag, *full_mb_s)
            } else {
                ceiling_stays_lowest(run, test, flag, ceiling, *full_mb_s / REACHED)
            }
        }
        Finding::LowestCeiling { ceiling } => {
            ceiling_stays_lowest(run, test, flag, ceiling, ceiling.mb_per_s)
        }
        Finding::Interference {
            lowest,
            full_mb_s,
            evidence,
            ..
        } => {
            if test == TestKind::FullBackup {
                // Further below every ceiling changes nothing; closer could reach one.
                match bias {
                    Bias::Raised => Weight::OnlyLower,
                    _ => Weight::Overturns,
                }
            } else {
                let named_by_figures = matches!(evidence, Interference::LowestCeiling);
                match bias {
                    // A higher ceiling is further above the backup; it may stop being the
                    // lowest, which matters only when the lowest is what names the component.
                    Bias::Lowered if !(named_by_figures && test == lowest.test) => {
                        Weight::OnlyHigher
                    }
                    Bias::Raised => match ceiling_floor(run, test, flag) {
                        Some(native) if native * REACHED > *full_mb_s => Weight::DriveRateKnown {
                            native_mb_s: native,
                        },
                        _ => Weight::Overturns,
                    },
                    _ => Weight::Overturns,
                }
            }
        }
        Finding::ShoeShine(shoe_shine) => match (test, flag, bias) {
            // The drives did stop and start: only how often per minute is open.
            (TestKind::FullBackup | TestKind::NetworkBackup, FlagCode::TooFewDriveCycles, _) => {
                Weight::Secondary
            }
            (TestKind::FullBackup | TestKind::NetworkBackup, _, _) => {
                source_short_of(figures, shoe_shine.needed_mb_s)
            }
            // The streams' figure sizes the advice, not the finding.
            (TestKind::ReadParallel, _, Bias::Lowered) => Weight::OnlyHigher,
            _ => Weight::Overturns,
        },
        Finding::Incomplete { .. } | Finding::FullOutranCeiling { .. } | Finding::Network(_) => {
            Weight::Overturns
        }
    }
}

/// A flag on the run that fed shoe-shining drives: it cannot change the finding when the
/// source, read on its own in a valid run, delivers clearly less than the drives need.
fn source_short_of(figures: &Figures<'_>, needed_mb_s: f64) -> Weight {
    let Some(source) = figures.get(TestKind::ReadParallel) else {
        return Weight::Overturns;
    };
    // Valid, or only possibly lower while it read at its cap: it cannot have been faster.
    let trusted = source.valid
        || (source.flags.iter().all(|flag| flag.bias() == Bias::Lowered)
            && read_cap(source.run).is_some());
    if trusted && source.mb_per_s < REACHED * needed_mb_s {
        Weight::FeedCannotReach {
            source_mb_s: source.mb_per_s,
            needed_mb_s,
        }
    } else {
        Weight::Overturns
    }
}

/// The cap a read ran at, when it was capped (`source_rate_mb_s`) and reached it: its figure
/// is the cap's, whatever else ran on the machine.
fn read_cap(run: &RunResult) -> Option<f64> {
    let per_stream = run.params.source_rate_mb_s?;
    let cap = per_stream * f64::from(run.params.streams.max(1));
    (run.figure() >= 0.95 * cap).then_some(cap)
}

/// A flag on a full backup that reached the lowest ceiling.
fn full_at_ceiling(run: &RunResult, flag: FlagCode, full_mb_s: f64) -> Weight {
    match flag.bias() {
        // A backup cannot outrun the component that limits it: higher still reaches it.
        Bias::Lowered => Weight::OnlyHigher,
        // Data went into the drives' buffers faster than they write: the drives could be what
        // limits, unless they take far more than the backup delivered.
        Bias::Raised => match drive_native(run, TestKind::FullBackup, flag) {
            Some(native) if full_mb_s < REACHED * native => Weight::DriveRateKnown {
                native_mb_s: native,
            },
            _ => Weight::Overturns,
        },
        Bias::Either => Weight::Overturns,
    }
}

/// A flag on a ceiling's figure, where `ceiling` is the lowest and `must_stay_above` is the
/// figure every other ceiling must stay above for it to remain so.
fn ceiling_stays_lowest(
    run: &RunResult,
    test: TestKind,
    flag: FlagCode,
    ceiling: &Ceiling,
    must_stay_above: f64,
) -> Weight {
    let named = test == ceiling.test;
    match (flag.bias(), named) {
        // The named ceiling lower: it limits all the more.
        (Bias::Raised, true) => Weight::OnlyLower,
        // The named ceiling higher: the backup may no longer reach it, unless the emulated
        // device set its pace.
        (Bias::Lowered, true) if device_paced(run) => Weight::DevicePaced,
        (Bias::Lowered, true) if let Some(cap_mb_s) = read_cap(run) => {
            Weight::AtItsCap { cap_mb_s }
        }
        // Another ceiling higher: further above the one named.
        (Bias::Lowered, false) => Weight::OnlyHigher,
        // Another ceiling lower: it could become the lowest, unless it is a drive whose
        // native rate alone stays above.
        (Bias::Raised, false) => match ceiling_floor(run, test, flag) {
            Some(native) if native >= must_stay_above => Weight::DriveRateKnown {
                native_mb_s: native,
            },
            _ => Weight::Overturns,
        },
        _ => Weight::Overturns,
    }
}

/// An emulated target whose host waited for it: the model, not the lab's threads, set the
/// figure.
fn device_paced(run: &RunResult) -> bool {
    let target_behind = stage_attribution(&run.stages).limited_by == Side::Target;
    let emulated =
        run.tape.as_ref().is_some_and(|tape| tape.buffer_filled) || run.striped.is_some();
    emulated && target_behind
}

/// What emulated drives take at the least, for a flag that says their buffers hid their
/// pace: their native rate (compression only adds to it).
fn drive_native(run: &RunResult, test: TestKind, flag: FlagCode) -> Option<f64> {
    let tape = run.tape.as_ref()?;
    let writes_drives = matches!(test, TestKind::TapeWrite | TestKind::FullBackup);
    (flag == FlagCode::DriveBufferNotFilled && writes_drives)
        .then(|| tape.native_mb_s * f64::from(tape.drives.max(1)))
}

/// The least a drive ceiling can really be, for a flag that says its buffers hid its pace:
/// the figure measured, or the drives' native rate when that is lower.
fn ceiling_floor(run: &RunResult, test: TestKind, flag: FlagCode) -> Option<f64> {
    drive_native(run, test, flag).map(|native| native.min(run.figure()))
}
