//! Which flags can change a finding. A flag says a figure may mislead, and in which direction
//! ([`Bias`]); a finding is a few comparisons between figures. A flag overturns the finding
//! only when moving its figure that way could flip one of them: other work on the machine can
//! only slow the lab's side, so a backup that still reached the target's ceiling stays
//! target-bound.
//!
//! The rule is stated once, in [`Bounds`]: a flag's direction gives the range its figure's true
//! value may lie in, and the evidence around the run narrows it (what the run itself moved, a
//! cap it ran at, an emulated device that set its pace, a drive's native rate, and what the
//! full backup delivered through every component on its path). A finding is a few
//! comparisons; a flag overturns it only when a value inside its figure's range flips one.

use serde::{Deserialize, Serialize};

use super::findings::{Ceiling, Finding, Interference, NetworkFinding, NetworkLimit, ShoeShine};
use super::{Figures, REACHED, Side, stage_attribution};
use crate::engine::result::RunResult;
use crate::engine::validity::{Bias, FlagCode};
use crate::spec::TestKind;

/// Why a flag on a run the finding rests on can or cannot overturn it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
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
    /// The full backup itself moved this much through the component: its ceiling is at least
    /// that, whatever its own isolated test's flags say.
    BackupDelivered { full_mb_s: f64 },
    /// The run moved this much data in its wall time: its ceiling is at least that, however
    /// unsteady or short the run.
    Moved { mb_s: f64 },
}

impl Weight {
    /// Whether the flag can overturn the finding.
    pub fn overturns(self) -> bool {
        self == Weight::Overturns
    }
}

/// One flag of a run the finding rests on, with its weight on that finding.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct FlagWeight {
    pub flag: FlagCode,
    pub weight: Weight,
}

/// A test the finding rests on, and the weight of each flag on its figure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[schema(as = FindingBasis)]
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
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
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
            TestKind::ToolBackup,
        ],
        _ => &[
            TestKind::TapeWrite,
            TestKind::ReadParallel,
            TestKind::NullSink,
            TestKind::FullBackup,
            TestKind::ToolCeiling,
            TestKind::ToolBackup,
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

/// Where a figure's true value may lie: at least `floor`, at most `ceiling` MB/s.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounds {
    floor: f64,
    ceiling: f64,
}

/// The ranges one flag allows its figure, narrowest last: first what its direction alone
/// allows, then the same narrowed by each piece of evidence in turn, each with the weight it
/// gives when it is what keeps the finding.
fn ranges(
    figures: &Figures<'_>,
    test: TestKind,
    run: &RunResult,
    flag: FlagCode,
) -> Vec<(Bounds, Weight)> {
    let measured = run.figure();
    let bias = flag.bias();
    let mut bounds = match bias {
        Bias::Lowered => Bounds {
            floor: measured,
            ceiling: f64::INFINITY,
        },
        Bias::Raised => Bounds {
            floor: 0.0,
            ceiling: measured,
        },
        Bias::Either => Bounds {
            floor: 0.0,
            ceiling: f64::INFINITY,
        },
    };
    let mut steps = vec![(
        bounds,
        match bias {
            Bias::Lowered => Weight::OnlyHigher,
            Bias::Raised => Weight::OnlyLower,
            Bias::Either => Weight::Overturns,
        },
    )];
    // The emulated device set the pace: other work on the machine did not slow the run.
    if bias == Bias::Lowered && device_paced(run) {
        bounds.ceiling = bounds.ceiling.min(measured);
        steps.push((bounds, Weight::DevicePaced));
    }
    // A cap (a source rate, a link) bounds the figure from above, whatever the flag; a run
    // that reached it moved at its pace.
    if let Some(cap_mb_s) = cap(run, test) {
        bounds.ceiling = bounds.ceiling.min(cap_mb_s);
        if bias != Bias::Raised && measured >= AT_CAP * cap_mb_s {
            bounds.floor = bounds.floor.max(run.mb_per_s.min(cap_mb_s));
        }
        steps.push((bounds, Weight::AtItsCap { cap_mb_s }));
    }
    // Whatever the buffer hid, drives take at least their native rate.
    if let Some(native) = drive_native(run, test, flag) {
        bounds.floor = bounds.floor.max(native.min(measured));
        steps.push((
            bounds,
            Weight::DriveRateKnown {
                native_mb_s: native,
            },
        ));
    }
    // An unsteady or short run still moved what it moved in its wall time.
    if matches!(
        flag,
        FlagCode::TooShort | FlagCode::Unsteady | FlagCode::TooFewDriveCycles
    ) && run.mb_per_s > bounds.floor
    {
        bounds.floor = run.mb_per_s;
        steps.push((bounds, Weight::Moved { mb_s: run.mb_per_s }));
    }
    // The full backup passed through this component and moved this much.
    if let Some(full_mb_s) = delivered_through(figures, test, run)
        && full_mb_s > bounds.floor
    {
        bounds.floor = full_mb_s;
        steps.push((bounds, Weight::BackupDelivered { full_mb_s }));
    }
    steps
}

/// The least a test's figure may truly be, by the narrowest range each of its flags allows:
/// the figure itself when it is valid, `None` when a flag leaves it no floor. Advice sizes
/// what it says from this, so it never rests on a figure that could be lower than it says.
pub(super) fn floor_of(figures: &Figures<'_>, test: TestKind) -> Option<f64> {
    let figure = figures.get(test)?;
    figure
        .flags
        .iter()
        .try_fold(figure.mb_per_s, |least, flag| {
            let (bounds, _) = *ranges(figures, test, figure.run, *flag).last()?;
            (bounds.floor > 0.0).then_some(least.min(bounds.floor))
        })
}

/// The weight of the first range at which the claim `holds`; `Overturns` when none does.
fn decide(steps: &[(Bounds, Weight)], holds: impl Fn(Bounds) -> bool) -> Weight {
    steps
        .iter()
        .find(|(bounds, _)| holds(*bounds))
        .map_or(Weight::Overturns, |(_, weight)| *weight)
}

/// Whether the test is the backup the ceilings are compared with: the lab's own full backup,
/// or a backup tool's.
fn is_backup(test: TestKind) -> bool {
    matches!(test, TestKind::FullBackup | TestKind::ToolBackup)
}

/// A run within this share of its cap ran at the cap.
const AT_CAP: f64 = 0.95;

/// The cap a run was given: its source rate times its streams for a run that reads the
/// source, its links times its clients for a network backup.
fn cap(run: &RunResult, test: TestKind) -> Option<f64> {
    let streams = f64::from(run.params.streams.max(1));
    match test {
        TestKind::NetworkBackup => {
            let clients = f64::from(run.params.clients.unwrap_or(1).max(1));
            let links = run.params.link_mb_s.map(|link| link * clients);
            let sources = run
                .params
                .source_rate_mb_s
                .map(|rate| rate * streams * clients);
            [links, sources].into_iter().flatten().reduce(f64::min)
        }
        TestKind::ReadSingle => run.params.source_rate_mb_s,
        TestKind::ReadParallel | TestKind::NullSink | TestKind::FullBackup => {
            run.params.source_rate_mb_s.map(|rate| rate * streams)
        }
        _ => None,
    }
}

/// What the full backup moved through the component `test` measures on its own, over its
/// whole time: the component's ceiling is at least that. Only a full backup whose own figure
/// cannot be too high counts, only for components on its path, and the target only when its
/// test wrote data that compresses as the backup's did.
fn delivered_through(figures: &Figures<'_>, test: TestKind, run: &RunResult) -> Option<f64> {
    let full = figures.get(TestKind::FullBackup)?;
    if test == TestKind::FullBackup || full.flags.iter().any(|flag| flag.bias() == Bias::Raised) {
        return None;
    }
    let on_path = match test {
        TestKind::TapeWrite => super::find::compressibility_mismatch(figures).is_none(),
        TestKind::ReadParallel | TestKind::NullSink => {
            run.params.streams >= full.run.params.streams
        }
        _ => false,
    };
    on_path.then_some(full.run.mb_per_s)
}

/// The weight of `flag`, raised on `test`'s figure (measured by `run`), on `finding`.
fn weigh(
    figures: &Figures<'_>,
    finding: &Finding,
    test: TestKind,
    run: &RunResult,
    flag: FlagCode,
) -> Weight {
    let raised = RaisedFlag {
        steps: ranges(figures, test, run, flag),
        figures,
        test,
        run,
        flag,
    };
    match finding {
        Finding::Limits {
            ceiling, full_mb_s, ..
        } => raised.on_limits(ceiling, *full_mb_s),
        Finding::LowestCeiling { ceiling } => raised.on_lowest_ceiling(ceiling),
        Finding::Interference {
            lowest,
            full_mb_s,
            evidence,
            ..
        } => raised.on_interference(lowest, *full_mb_s, evidence),
        Finding::ShoeShine(shoe_shine) => raised.on_shoe_shine(shoe_shine),
        Finding::Network(network) => raised.on_network(network),
        // Each tool's own verdict weighs its flags; the comparison rests on those.
        Finding::Incomplete { .. }
        | Finding::FullOutranCeiling { .. }
        | Finding::ToolsCompared { .. } => Weight::Overturns,
    }
}

/// A flag as it is weighed: the figures around it, the test and run it was raised on, and the
/// ranges it allows that run's figure. Each kind of finding weighs it by its own comparisons.
struct RaisedFlag<'a> {
    figures: &'a Figures<'a>,
    test: TestKind,
    run: &'a RunResult,
    flag: FlagCode,
    steps: Vec<(Bounds, Weight)>,
}

impl RaisedFlag<'_> {
    /// The weight of the first range at which the claim `holds`.
    fn decide(&self, holds: impl Fn(Bounds) -> bool) -> Weight {
        decide(&self.steps, holds)
    }

    /// On "the component of `ceiling` limits the backup", which reached `full` MB/s.
    fn on_limits(&self, ceiling: &Ceiling, full: f64) -> Weight {
        if is_backup(self.test) {
            if self.flag.bias() == Bias::Raised {
                full_at_ceiling(self.run, self.flag, full)
            } else {
                // The backup reached the ceiling: it still does at any value it may have.
                self.decide(|b| b.floor >= REACHED * ceiling.mb_per_s)
            }
        } else if self.test == ceiling.test {
            // The named ceiling higher could leave the backup short of it.
            self.decide(|b| full >= REACHED * b.ceiling)
        } else {
            // Another ceiling lower could become the lowest; one the backup itself
            // proved at least as fast as what reached the named one cannot.
            self.decide(|b| b.floor >= REACHED * ceiling.mb_per_s.min(full))
        }
    }

    /// On "`ceiling` is the lowest", with no backup to confirm it.
    fn on_lowest_ceiling(&self, ceiling: &Ceiling) -> Weight {
        if self.test == ceiling.test {
            let others = lowest_other(self.figures, ceiling.test);
            self.decide(|b| b.ceiling <= others)
        } else {
            self.decide(|b| b.floor >= ceiling.mb_per_s)
        }
    }

    /// On "the components slow each other down": the backup at `full_mb_s` is well below the
    /// `lowest` ceiling, which `evidence` may have named.
    fn on_interference(&self, lowest: &Ceiling, full_mb_s: f64, evidence: &Interference) -> Weight {
        if is_backup(self.test) {
            // Further below every ceiling changes nothing; closer could reach one.
            return match self.flag.bias() {
                Bias::Raised => Weight::OnlyLower,
                _ => self.decide(|b| b.ceiling < REACHED * lowest.mb_per_s),
            };
        }
        let named_by_figures = matches!(evidence, Interference::LowestCeiling);
        if named_by_figures && self.test == lowest.test {
            // The lowest names the component: it must stay the lowest.
            let others = lowest_other(self.figures, self.test);
            self.decide(|b| b.ceiling <= others && REACHED * b.floor > full_mb_s)
        } else {
            // A higher ceiling is further above the backup; a lower one must stay
            // clear of it.
            self.decide(|b| REACHED * b.floor > full_mb_s)
        }
    }

    /// On "the drives shoe-shine for want of data".
    fn on_shoe_shine(&self, shoe_shine: &ShoeShine) -> Weight {
        match (self.test, self.flag) {
            // The drives did stop and start: only how often per minute is open.
            (
                TestKind::FullBackup | TestKind::NetworkBackup | TestKind::ToolBackup,
                FlagCode::TooFewDriveCycles,
            ) => Weight::Secondary,
            (TestKind::FullBackup | TestKind::NetworkBackup | TestKind::ToolBackup, _) => {
                // A feed held below what the drives need by its cap cannot reach it.
                match self.decide(|b| b.ceiling < REACHED * shoe_shine.needed_mb_s) {
                    Weight::Overturns => source_short_of(self.figures, shoe_shine.needed_mb_s),
                    weight => weight,
                }
            }
            // The streams' figure sizes the advice, not the finding; a bounded one sizes it.
            (TestKind::ReadParallel, _) => self.decide(|b| b.ceiling.is_finite()),
            _ => Weight::Overturns,
        }
    }

    /// On what limits a network backup: the links or the target.
    fn on_network(&self, network: &NetworkFinding) -> Weight {
        let n = network.mb_per_s;
        match (&network.limit, self.test) {
            (NetworkLimit::Links { total_mb_s, .. }, TestKind::NetworkBackup) => {
                self.decide(|b| b.floor >= REACHED * total_mb_s)
            }
            (NetworkLimit::Links { .. }, TestKind::TapeWrite) => {
                // The target stays clear of full.
                self.decide(|b| REACHED * b.floor > n)
            }
            (
                NetworkLimit::Target {
                    ceiling_mb_s: Some(t),
                    ..
                },
                TestKind::NetworkBackup,
            ) => self.decide(|b| b.floor >= REACHED * t),
            (NetworkLimit::Target { .. }, TestKind::TapeWrite) => {
                self.decide(|b| n >= REACHED * b.ceiling)
            }
            _ => Weight::Overturns,
        }
    }
}

/// The lowest of the ceilings other than `test`'s.
fn lowest_other(figures: &Figures<'_>, test: TestKind) -> f64 {
    [
        TestKind::TapeWrite,
        TestKind::ReadParallel,
        TestKind::NullSink,
    ]
    .into_iter()
    .filter(|other| *other != test)
    .filter_map(|other| figures.mb(other))
    .fold(f64::INFINITY, f64::min)
}

/// A flag on the run that fed shoe-shining drives: it cannot change the finding when the
/// source, read on its own, delivers clearly less than the drives need: a valid run's figure,
/// or the most its flags and its cap allow.
fn source_short_of(figures: &Figures<'_>, needed_mb_s: f64) -> Weight {
    let Some(source) = figures.get(TestKind::ReadParallel) else {
        return Weight::Overturns;
    };
    let most = if source.valid {
        source.mb_per_s
    } else {
        source
            .flags
            .iter()
            .map(|flag| {
                ranges(figures, TestKind::ReadParallel, source.run, *flag)
                    .last()
                    .map_or(f64::INFINITY, |(bounds, _)| bounds.ceiling)
            })
            .fold(0.0, f64::max)
    };
    if most < REACHED * needed_mb_s {
        Weight::FeedCannotReach {
            source_mb_s: most,
            needed_mb_s,
        }
    } else {
        Weight::Overturns
    }
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
