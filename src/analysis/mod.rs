//! The bottleneck verdict: the full backup compared with the isolated ceilings, the way Data
//! Protector's method reads its Table 1. Pure functions over results: typed findings first
//! (`findings`), the advice derived from them, and words only at the edge (`words`).

pub mod figures;
pub mod findings;
pub mod follow_up;
mod headline;
pub mod planner;
pub mod points;
pub mod remedy;
pub mod weight;
mod words;

use serde::{Deserialize, Serialize};

use crate::engine::result::{RunResult, StageFigures, TapeFigures};
use crate::engine::survey::Survey;
use crate::spec::TestKind;
use figures::TestFigure;
use findings::{
    AboveCeiling, Ceiling, Drives, Interference, NetworkFinding, NetworkLimit, OutranCause, Shape,
    ShoeShine, TargetCeilingFrom,
};
pub use findings::{Advice, Component, Finding, Redo, Side};
pub use headline::Headline;
use weight::{Basis, OpenClaim};
pub use words::{capitalize, component_word, counted, format_duration};

/// Share of a ceiling the full backup must reach for that ceiling to be the bottleneck.
const REACHED: f64 = 0.9;
/// How far above a ceiling it reached, in percent, a full backup must run before the verdict
/// says why: closer than this, two measurements of one thing differ by no more than usual.
const ABOVE_PCT: f64 = 1.0;
/// Share of a stage's time spent waiting that marks the other side as behind.
const WAITING: f64 = 50.0;
/// System CPU above which the pipeline counts as CPU-bound.
const CPU_BOUND_PCT: f64 = 80.0;
/// Relative difference between two compression ratios that counts as a mismatch.
const COMPRESSIBILITY_MISMATCH: f64 = 0.15;

/// Which side a run's own stage accounting says held it back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct StageAttribution {
    pub limited_by: Side,
    pub reader_wait_pct: f64,
    pub writer_wait_pct: f64,
    /// The same in words.
    pub reason: String,
}

/// One row of the bottleneck table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct VerdictRow {
    pub test: TestKind,
    pub label: String,
    /// Median MB/s of the test's repeats at its best point.
    pub mb_per_s: Option<f64>,
    /// Whether that figure is steady-state or whole-run MB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<points::Basis>,
    /// Half the repeats' range, % of the median; `None` when measured once.
    pub spread_pct: Option<f64>,
    /// Runs the figure rests on.
    pub repeats: usize,
    /// Runs at the figure's point, whatever became of them: with `runs_valid`, "1 of 3 valid".
    #[serde(default)]
    pub runs_total: usize,
    /// Runs at the figure's point that are valid.
    #[serde(default)]
    pub runs_valid: usize,
    /// Whether the figure rests on valid runs; `None` when no run finished.
    pub valid: Option<bool>,
    /// Why not, when it does not.
    pub flags: Vec<crate::engine::validity::FlagCode>,
    /// Whole-machine CPU % of the run standing for the test: the lab and other work together.
    pub cpu_pct: Option<f64>,
    /// The lab's own CPU (its process and every thread of it) in that run, as a share of all
    /// the machine's CPUs: the "CPU load" views show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_cpu_pct: Option<f64>,
    /// Other work on the machine during that run: its busy share less the lab's own. Shown
    /// beside `lab_cpu_pct`, never added into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_cpu_pct: Option<f64>,
    /// Yes on the limiting row; `None` on the full backup, which the others are compared with.
    pub bottleneck: Option<bool>,
    /// The row of the leading candidate when the verdict is inconclusive: not yet a "Yes".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub candidate: bool,
    pub stage: Option<StageAttribution>,
    /// How busy each side of the pipeline was in the run standing for the test: what the
    /// report's stage bar shows for the backup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<crate::engine::result::StageFigures>,
    /// Why the test has no figure, when it has none: a cut run is never shown as a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_figure: Option<NoFigure>,
}

/// Why a test has no figure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoFigure {
    /// A run of it failed.
    Failed,
    /// Its runs were cancelled: cut short, or never started.
    Cancelled,
    /// Its runs finished with nothing measured.
    NothingMeasured,
}

impl NoFigure {
    /// Why the test of `points` has no figure: the worst ending of the runs at its points.
    fn of(points: &[points::Point], test: TestKind) -> NoFigure {
        let has = |standing: points::RunStanding| {
            points
                .iter()
                .filter(|point| point.test == test)
                .flat_map(|point| point.runs.iter())
                .any(|run| run.standing == standing)
        };
        if has(points::RunStanding::Failed) {
            NoFigure::Failed
        } else if has(points::RunStanding::Cancelled) {
            NoFigure::Cancelled
        } else {
            NoFigure::NothingMeasured
        }
    }

    /// The word a table shows in place of the figure.
    pub fn word(self) -> &'static str {
        match self {
            NoFigure::Failed => "failed",
            NoFigure::Cancelled => "cancelled",
            NoFigure::NothingMeasured => "nothing measured",
        }
    }
}

impl VerdictRow {
    /// The figure as a table shows it, MB/s to one decimal, or why there is none.
    pub fn figure(&self) -> String {
        match (self.mb_per_s, self.no_figure) {
            (Some(value), _) => format!("{value:.1}"),
            (None, Some(why)) => why.word().to_string(),
            (None, None) => "–".to_string(),
        }
    }

    /// The figure with what it measures, as every table shows it: `239.4 steady`,
    /// `181.0 whole run`, or why there is none.
    pub fn figure_labelled(&self) -> String {
        match (self.mb_per_s, self.basis, self.no_figure) {
            (Some(value), Some(basis), _) => format!("{value:.1} {}", basis.word()),
            (Some(value), None, _) => format!("{value:.1}"),
            (None, _, Some(why)) => why.word().to_string(),
            (None, _, None) => "–".to_string(),
        }
    }

    /// "3 of 3 valid", "1 of 3 valid", or "0 of 2 valid: too_short" with the flags of the
    /// runs the figure rests on when none is valid: the same count the sweep table gives.
    pub fn valid_words(&self) -> Option<String> {
        let count = format!("{} of {} valid", self.runs_valid, self.runs_total);
        match self.valid? {
            true => Some(count),
            false => Some(format!("{count}: {}", self.flag_list())),
        }
    }

    /// The "Bottleneck?" answer every view gives: Yes on the limiting row of a conclusive
    /// verdict, "candidate" on the leading candidate of an inconclusive one ("not yet: 0 of 3
    /// valid" while none of its runs is valid), No on the other compared rows, "–" on the
    /// full backup and a restore.
    pub fn bottleneck_word(&self) -> String {
        match (self.bottleneck, self.candidate) {
            (Some(true), _) => "Yes".to_string(),
            (Some(false), true) if self.runs_valid == 0 && self.runs_total > 0 => {
                format!("not yet: 0 of {} valid", self.runs_total)
            }
            (Some(false), true) => "candidate".to_string(),
            (Some(false), false) => "No".to_string(),
            (None, _) => "–".to_string(),
        }
    }

    /// The flags of the runs behind the figure, comma-separated (empty when valid).
    pub fn flag_list(&self) -> String {
        self.flags
            .iter()
            .map(|flag| flag.id())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The answer to "which component limits the backup, by how much, and what to change".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Verdict {
    pub rows: Vec<VerdictRow>,
    /// The component named; when the verdict is inconclusive, the leading candidate.
    pub component: Option<Component>,
    /// False when a run the verdict rests on is not valid, or the figures contradict each
    /// other: the verdict then says which runs to redo and how.
    pub conclusive: bool,
    pub finding: Finding,
    pub advice: Vec<Advice>,
    /// The finding in words.
    pub verdict: String,
    pub summary: String,
    /// The advice in words.
    pub recommendations: Vec<String>,
    /// Source size ÷ full-backup speed.
    pub backup_window_s: Option<f64>,
    /// What a restore of the data takes, when the campaign measured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RestoreLine>,
    /// The same in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_words: Option<String>,
    /// The tests the finding rests on, and for each flag on them whether it can overturn
    /// the finding.
    #[serde(default)]
    pub basis: Vec<Basis>,
    /// Secondary claims still open beside the finding.
    #[serde(default)]
    pub open: Vec<OpenClaim>,
    /// The flags that cannot overturn the finding and the open claims, in words.
    #[serde(default)]
    pub caveats: Vec<String>,
    /// When the target is a dedup store and the verdict names it: the work that took most
    /// of its time (hashing, the index or writing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_limit: Option<crate::engine::target::dedup::DedupLimit>,
}

impl Verdict {
    /// What caps the backup in a few words ("the target"), when the verdict names it
    /// conclusively: a sweep that finds no better point says so beside it.
    pub fn cap(&self) -> Option<String> {
        self.component
            .filter(|_| self.conclusive)
            .map(|component| format!("the {}", words::component_word(component)))
    }
}

/// A restore's figure as the verdict states it: the time a restore of the data takes, and
/// the backup it is compared with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct RestoreLine {
    /// Bytes restored: the source's size when it is known, else what the run moved.
    pub bytes: u64,
    /// Loading and locating plus the transfer at the restore's figure.
    pub seconds: f64,
    pub mb_per_s: f64,
    pub positioning_s: f64,
    /// What the image was read from.
    pub from: String,
    /// Streams interleaved on each drive, read through to restore one.
    pub interleaved: u32,
    /// The backup's test and figure, when the campaign measured one.
    pub backup: Option<(TestKind, f64)>,
    /// Why the restore's figure may not be trusted; empty when its runs are valid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<crate::engine::validity::FlagCode>,
}

/// The restore's line, from its figure and the run behind it.
fn restore_line(figures: &Figures<'_>, survey: Option<&Survey>) -> Option<RestoreLine> {
    let figure = figures.get(TestKind::Restore)?;
    let restore = figure.run.restore.as_ref()?;
    let bytes = survey
        .map(|survey| survey.source_bytes)
        .filter(|&bytes| bytes > 0)
        .unwrap_or(figure.run.bytes);
    let mb_per_s = figure.mb_per_s;
    let backup = [TestKind::FullBackup, TestKind::NetworkBackup]
        .into_iter()
        .find_map(|test| figures.mb(test).map(|mb| (test, mb)));
    Some(RestoreLine {
        bytes,
        seconds: restore.positioning_s + bytes as f64 / (mb_per_s * 1e6).max(1.0),
        mb_per_s,
        positioning_s: restore.positioning_s,
        from: restore.from.clone(),
        interleaved: restore.interleaved,
        backup,
        flags: figure.flags.clone(),
    })
}

/// What a pipeline run's stage accounting says about which side held it back.
pub fn stage_attribution(stages: &StageFigures) -> StageAttribution {
    let (reader, writer) = (stages.reader_wait_pct, stages.writer_wait_pct);
    let limited_by = if reader >= WAITING && reader > writer {
        Side::Target
    } else if writer >= WAITING && writer > reader {
        Side::Source
    } else {
        Side::Balanced
    };
    StageAttribution {
        limited_by,
        reader_wait_pct: reader,
        writer_wait_pct: writer,
        reason: words::stage(limited_by, stages),
    }
}

/// The figures a verdict reads, by test.
struct Figures<'a> {
    tests: Vec<(TestKind, Option<TestFigure<'a>>)>,
}

impl<'a> Figures<'a> {
    fn get(&self, test: TestKind) -> Option<&TestFigure<'a>> {
        self.tests
            .iter()
            .find(|(kind, _)| *kind == test)
            .and_then(|(_, figure)| figure.as_ref())
    }

    fn mb(&self, test: TestKind) -> Option<f64> {
        self.get(test).map(|figure| figure.mb_per_s)
    }

    fn run(&self, test: TestKind) -> Option<&'a RunResult> {
        self.get(test).map(|figure| figure.run)
    }
}

/// The version of the judging rules: a judgement kept under another version is judged again.
pub const JUDGEMENT_VERSION: u32 = 2;

/// A campaign judged: its points and the verdict drawn from them. Every view of a campaign
/// (page, report, `/compare`, CSV, JSON, list) reads one judgement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Judgement {
    /// The judging rules it was drawn under ([`JUDGEMENT_VERSION`]).
    pub version: u32,
    pub points: Vec<points::Point>,
    pub verdict: Verdict,
    /// Drawn while runs were still to come: the verdict may yet change.
    pub provisional: bool,
}

impl Judgement {
    /// Groups `runs` into points once and judges them.
    pub fn of(runs: &[points::RunEntry<'_>], survey: Option<&Survey>) -> Self {
        let points = points::points(runs);
        let verdict = judge(&points, runs, survey);
        Self {
            version: JUDGEMENT_VERSION,
            provisional: runs.iter().any(|run| run.ended.is_none()),
            points,
            verdict,
        }
    }
}

/// Builds the verdict from finished runs held in order (the command line's), numbered from 1.
pub fn verdict(runs: &[RunResult], survey: Option<&Survey>) -> Verdict {
    let entries = points::RunEntry::of_results(runs);
    judge(&points::points(&entries), &entries, survey)
}

/// Builds the verdict from a campaign's points, its runs and the survey of its source.
pub fn judge(
    points: &[points::Point],
    runs: &[points::RunEntry<'_>],
    survey: Option<&Survey>,
) -> Verdict {
    let figures = Figures {
        tests: figures::per_test(points, runs),
    };
    let finding = finding(&figures, survey);
    let has = |test: TestKind| figures.get(test).is_some();
    let basis = weight::basis(&figures, &finding);
    let redo = redo_list(&figures, &basis);
    let conclusive = redo.is_empty()
        && !matches!(
            finding,
            Finding::Incomplete { .. } | Finding::FullOutranCeiling { .. }
        );
    // An inconclusive verdict marks no row "Yes": its leading candidate's row is marked as
    // such instead, on the page, in the charts and in the JSON alike.
    let yes_row = finding.yes_row(has).filter(|_| conclusive);
    let candidate_row = if conclusive {
        None
    } else {
        finding.yes_row(has).or(match &finding {
            Finding::FullOutranCeiling { ceiling, .. } => Some(ceiling.test),
            _ => None,
        })
    };
    let advice = if conclusive {
        advice(&figures, &finding, survey)
    } else {
        // Until the runs are redone, only what the redo and the evidence at hand say.
        let mut advice: Vec<Advice> = redo.into_iter().map(Advice::Redo).collect();
        advice.extend(match &finding {
            Finding::FullOutranCeiling { causes, .. } => causes
                .iter()
                .filter_map(|cause| match cause {
                    OutranCause::Compressibility {
                        target_test,
                        full_backup,
                    } => Some(Advice::MatchCompressibility {
                        target_test: *target_test,
                        full_backup: *full_backup,
                    }),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        });
        advice
    };
    let open = if conclusive {
        weight::open_claims(&figures, &basis)
    } else {
        Vec::new()
    };
    let target = target_named(&figures);
    let component = finding.component().or_else(|| candidate(&finding));
    let dedup_limit = [TestKind::FullBackup, TestKind::TapeWrite]
        .into_iter()
        .find_map(|test| figures.run(test).and_then(|run| run.dedup.as_ref()))
        .and_then(|dedup| dedup.limit())
        .filter(|_| component == Some(Component::Target));
    let rows = figures
        .tests
        .iter()
        .map(|(test, figure)| {
            let mut row = row(*test, figure.as_ref(), yes_row);
            row.candidate = candidate_row == Some(*test) && row.bottleneck.is_some();
            // A figure none of whose runs is valid is never marked: it stays the candidate.
            if row.bottleneck == Some(true) && row.runs_valid == 0 {
                row.bottleneck = Some(false);
                row.candidate = true;
            }
            if figure.is_none() {
                row.no_figure = Some(NoFigure::of(points, *test));
            }
            row
        })
        .collect();
    let f = figures.mb(TestKind::FullBackup);
    let backup_window_s = match (f, survey) {
        (Some(full), Some(survey)) if full > 0.0 && survey.source_bytes > 0 => {
            Some((survey.source_bytes as f64 / (full * 1e6) * 10.0).round() / 10.0)
        }
        _ => None,
    };
    let network = figures.get(TestKind::NetworkBackup);
    let restore = restore_line(&figures, survey);
    let summary = words::summary(&figures.tests, f, network, survey, backup_window_s);
    Verdict {
        rows,
        component,
        dedup_limit,
        conclusive,
        verdict: words::finding(
            &finding,
            conclusive,
            advice.iter().any(|a| matches!(a, Advice::Redo(_))),
            target.as_deref(),
        ),
        recommendations: advice.iter().map(words::advice).collect(),
        finding,
        advice,
        summary,
        backup_window_s,
        restore_words: restore.as_ref().map(words::restore),
        restore,
        caveats: words::caveats(&basis, &open, conclusive),
        basis,
        open,
    }
}

/// The component an open finding points at, for an inconclusive verdict's candidate.
fn candidate(finding: &Finding) -> Option<Component> {
    match finding {
        Finding::FullOutranCeiling { ceiling, .. } => Some(ceiling.component),
        _ => None,
    }
}

fn row(test: TestKind, figure: Option<&TestFigure<'_>>, yes_row: Option<TestKind>) -> VerdictRow {
    let run = figure.map(|figure| figure.run);
    VerdictRow {
        test,
        label: match (run.and_then(RunResult::target_report), test) {
            (
                Some(report),
                TestKind::TapeWrite | TestKind::FullBackup | TestKind::NetworkBackup,
            ) => format!("{} ({})", test.label(), report.device),
            _ => test.label().to_string(),
        },
        mb_per_s: figure.map(|figure| figure.mb_per_s),
        basis: figure.map(|figure| figure.basis),
        spread_pct: figure.and_then(|figure| figure.spread_pct),
        repeats: figure.map_or(0, |figure| figure.repeats),
        runs_total: figure.map_or(0, |figure| figure.runs_total),
        runs_valid: figure.map_or(0, |figure| figure.runs_valid),
        valid: figure.map(|figure| figure.valid),
        flags: figure.map_or_else(Vec::new, |figure| figure.flags.clone()),
        cpu_pct: run.map(|run| run.cpu.system_pct),
        lab_cpu_pct: run.map(|run| run.cpu.process_pct),
        other_cpu_pct: run
            .map(|run| (10.0 * (run.cpu.system_pct - run.cpu.process_pct).max(0.0)).round() / 10.0),
        // The full backup is what the others are compared with; a restore is judged on its own.
        bottleneck: (!matches!(test, TestKind::FullBackup | TestKind::Restore))
            .then_some(yes_row == Some(test)),
        stage: run
            .filter(|run| {
                matches!(
                    run.test,
                    TestKind::NullSink
                        | TestKind::FullBackup
                        | TestKind::TapeWrite
                        | TestKind::NetworkBackup
                )
            })
            .map(|run| stage_attribution(&run.stages)),
        busy: run.map(|run| run.stages),
        no_figure: None,
        candidate: false,
    }
}

fn drives(tape: &TapeFigures) -> Drives {
    Drives {
        model: tape.model.clone(),
        count: tape.drives,
    }
}

/// The emulated drives of the run that best shows the target.
fn drives_of(figures: &Figures<'_>) -> Option<Drives> {
    [
        TestKind::FullBackup,
        TestKind::NetworkBackup,
        TestKind::TapeWrite,
    ]
    .into_iter()
    .find_map(|test| figures.run(test).and_then(|run| run.tape.as_ref()))
    .map(drives)
}

/// What the target is, in a verdict's words, when it is more than a path: the emulated drives,
/// the object store, or the dedup store and where its time went, of the run that best shows
/// the target.
fn target_named(figures: &Figures<'_>) -> Option<String> {
    let store = || {
        [
            TestKind::FullBackup,
            TestKind::NetworkBackup,
            TestKind::TapeWrite,
        ]
        .into_iter()
        .find_map(|test| figures.run(test).and_then(|run| run.s3.as_ref()))
        .map(|s3| s3.report().device)
    };
    // A dedup store: its busiest stage, which is what a faster store would need more of.
    let dedup = || {
        [TestKind::FullBackup, TestKind::TapeWrite]
            .into_iter()
            .find_map(|test| figures.run(test).and_then(|run| run.dedup.as_ref()))
            .map(|dedup| match dedup.limit() {
                Some(limit) => format!("{}: {} of its time", dedup.store, limit.words()),
                None => dedup.store.clone(),
            })
    };
    drives_of(figures)
        .map(|drives| words::drives(&drives))
        .or_else(store)
        .or_else(dedup)
}

/// The component the target write measures: the target, unless the target discards what it
/// is given (the null sink), when the write measured the pipeline feeding it.
pub fn target_component(survey: Option<&Survey>) -> Component {
    if survey.is_some_and(|survey| survey.target_discards) {
        Component::Pipeline
    } else {
        Component::Target
    }
}

/// The one finding of the campaign.
fn finding(figures: &Figures<'_>, survey: Option<&Survey>) -> Finding {
    let f = figures.mb(TestKind::FullBackup);
    // The drive a backup fed: a shoe-shining drive names the feed, whatever the ceilings say.
    let fed = figures
        .run(TestKind::FullBackup)
        .or_else(|| figures.run(TestKind::NetworkBackup).filter(|_| f.is_none()));
    if let Some(shoe_shine) = fed.and_then(shoe_shine) {
        return Finding::ShoeShine(shoe_shine);
    }
    if f.is_none()
        && let Some(network) = figures.get(TestKind::NetworkBackup)
    {
        return Finding::Network(network_finding(network, figures));
    }

    let ceilings: Vec<Ceiling> = [
        (target_component(survey), TestKind::TapeWrite),
        (Component::Source, TestKind::ReadParallel),
        (Component::Pipeline, TestKind::NullSink),
    ]
    .into_iter()
    .filter_map(|(component, test)| {
        figures.mb(test).map(|mb_per_s| Ceiling {
            component,
            test,
            mb_per_s,
        })
    })
    .collect();
    let Some(lowest) = lowest_ceiling(&ceilings) else {
        return Finding::Incomplete {
            missing: [
                TestKind::TapeWrite,
                TestKind::ReadParallel,
                TestKind::NullSink,
            ]
            .into_iter()
            .filter(|test| figures.mb(*test).is_none())
            .collect(),
        };
    };
    let Some(full) = f else {
        return Finding::LowestCeiling { ceiling: lowest };
    };
    // A ceiling the full backup outran did not measure what the full backup met.
    if let Some(outran) = ceilings
        .iter()
        .filter(|ceiling| full > ceiling.mb_per_s / REACHED)
        .min_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s))
    {
        return Finding::FullOutranCeiling {
            ceiling: *outran,
            full_mb_s: full,
            causes: outran_causes(figures, outran),
        };
    }
    if full >= REACHED * lowest.mb_per_s {
        return Finding::Limits {
            ceiling: lowest,
            full_mb_s: full,
            above: if full > (1.0 + ABOVE_PCT / 100.0) * lowest.mb_per_s {
                above_ceiling(figures, &lowest, full)
            } else {
                Vec::new()
            },
        };
    }
    let full_run = figures.run(TestKind::FullBackup);
    let stage = full_run.map(|run| stage_attribution(&run.stages));
    let (component, evidence) = if survey.is_some_and(|survey| survey.shares_device) {
        (Component::SharedDevice, Interference::SharedDevice)
    } else {
        match stage {
            Some(StageAttribution {
                limited_by: Side::Target,
                reader_wait_pct,
                ..
            }) if ceilings.iter().any(|c| c.component == Component::Target) => (
                Component::Target,
                Interference::Stages {
                    side: Side::Target,
                    wait_pct: reader_wait_pct,
                },
            ),
            Some(StageAttribution {
                limited_by: Side::Source,
                writer_wait_pct,
                ..
            }) if ceilings.iter().any(|c| c.component == Component::Source) => (
                Component::Source,
                Interference::Stages {
                    side: Side::Source,
                    wait_pct: writer_wait_pct,
                },
            ),
            _ => (lowest.component, Interference::LowestCeiling),
        }
    };
    Finding::Interference {
        component,
        lowest,
        full_mb_s: full,
        evidence,
    }
}

/// The lowest ceiling. Backup to null reads the source too, so it names the pipeline only
/// when it is clearly below reading alone; otherwise its figure is the source's.
fn lowest_ceiling(ceilings: &[Ceiling]) -> Option<Ceiling> {
    let source = ceilings
        .iter()
        .find(|ceiling| ceiling.component == Component::Source);
    let lowest = ceilings
        .iter()
        .copied()
        .min_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s))?;
    Some(match source {
        Some(source)
            if lowest.component == Component::Pipeline
                && lowest.mb_per_s >= REACHED * source.mb_per_s =>
        {
            *source
        }
        _ => lowest,
    })
}

/// Why a full backup may have outrun a ceiling, from the evidence at hand.
fn outran_causes(figures: &Figures<'_>, ceiling: &Ceiling) -> Vec<OutranCause> {
    let mut causes = Vec::new();
    if let Some(mismatch) = compressibility_mismatch(figures)
        && ceiling.component == Component::Target
    {
        causes.push(mismatch);
    }
    if let Some(figure) = figures.get(ceiling.test) {
        if !figure.valid {
            causes.push(OutranCause::InvalidCeiling {
                flags: figure.flags.clone(),
            });
        }
        if let Some(spread) = figure.spread_pct
            && spread >= 100.0 * (1.0 / REACHED - 1.0)
        {
            causes.push(OutranCause::Spread { spread_pct: spread });
        }
    }
    if causes.is_empty() {
        causes.push(OutranCause::Unexplained {
            emulated_target: figures
                .run(ceiling.test)
                .is_some_and(|run| run.tape.is_some()),
        });
    }
    causes
}

/// Why a full backup ran a little faster than the ceiling it reached, from the evidence at
/// hand; the noise of the two figures when nothing else explains it.
fn above_ceiling(figures: &Figures<'_>, ceiling: &Ceiling, full: f64) -> Vec<AboveCeiling> {
    let mut why = Vec::new();
    if ceiling.component == Component::Target
        && let Some(OutranCause::Compressibility {
            target_test,
            full_backup,
        }) = compressibility_mismatch(figures)
    {
        why.push(AboveCeiling::Compressibility {
            target_test,
            full_backup,
        });
    }
    let flush_of = |test| {
        figures
            .run(test)
            .and_then(|run| run.steady)
            .map_or(0.0, |steady| steady.flush_s)
    };
    let flush_s = flush_of(ceiling.test);
    if flush_s > flush_of(TestKind::FullBackup) {
        why.push(AboveCeiling::LowerBound { flush_s });
    }
    let gap_pct = 100.0 * (full / ceiling.mb_per_s - 1.0);
    let spread = [ceiling.test, TestKind::FullBackup]
        .into_iter()
        .filter_map(|test| figures.get(test).and_then(|figure| figure.spread_pct))
        .reduce(f64::max);
    match spread {
        Some(spread_pct) if spread_pct >= gap_pct => {
            why.push(AboveCeiling::Spread { spread_pct });
        }
        None if why.is_empty() => why.push(AboveCeiling::Unrepeated),
        Some(spread_pct) if why.is_empty() => {
            why.push(AboveCeiling::Unexplained { spread_pct });
        }
        _ => {}
    }
    why
}

/// The target test's data compressed differently on the drive from the full backup's.
fn compressibility_mismatch(figures: &Figures<'_>) -> Option<OutranCause> {
    let target = figures.run(TestKind::TapeWrite)?.tape.as_ref()?.compression;
    let full = figures
        .run(TestKind::FullBackup)?
        .tape
        .as_ref()?
        .compression;
    ((target - full).abs() > COMPRESSIBILITY_MISMATCH * full.max(target)).then_some(
        OutranCause::Compressibility {
            target_test: target,
            full_backup: full,
        },
    )
}

/// A drive fed below its lowest speed step, from the run that fed it.
fn shoe_shine(run: &RunResult) -> Option<ShoeShine> {
    let tape = run.tape.as_ref().filter(|tape| tape.backhitches > 0)?;
    // A network run's streams are every client's.
    let streams = run.params.streams.max(1) * run.params.clients.unwrap_or(1).max(1);
    let feed = run.figure();
    let per_stream = feed / f64::from(streams);
    // To stream, every drive needs at least its lowest step times the compression.
    let needed = tape.min_mb_s * tape.compression * f64::from(tape.drives);
    let wall = tape.streaming_s + tape.repositioning_s + tape.idle_s;
    Some(ShoeShine {
        drives: drives(tape),
        backhitches: tape.backhitches,
        repositioning_pct: if wall > 0.0 {
            100.0 * tape.repositioning_s / wall
        } else {
            0.0
        },
        feed_mb_s: feed,
        needed_mb_s: needed,
        min_step_mb_s: tape.min_mb_s,
        compression: tape.compression,
        per_stream_mb_s: per_stream,
        streams_needed: findings::streams_for(needed, per_stream),
    })
}

/// What a network backup's figure says, against the target's ceiling when one is known.
fn network_finding(network: &TestFigure<'_>, figures: &Figures<'_>) -> NetworkFinding {
    let run = network.run;
    let n = network.mb_per_s;
    let clients = run.params.clients.unwrap_or(1);
    let shape = Shape {
        clients,
        streams: run.params.streams,
    };
    // The target's ceiling: its own test, else what emulated drives take at the compression
    // they achieved.
    let ceiling = figures
        .mb(TestKind::TapeWrite)
        .map(|t| (t, TargetCeilingFrom::TapeWriteTest))
        .or_else(|| {
            run.tape.as_ref().map(|tape| {
                (
                    tape.native_mb_s * tape.compression * f64::from(tape.drives),
                    TargetCeilingFrom::EmulatedDrives,
                )
            })
        });
    let stage = stage_attribution(&run.stages);
    let links = run.params.link_mb_s.map(|link| link * f64::from(clients));
    let target_full = match ceiling {
        Some((t, _)) => n >= REACHED * t,
        None => stage.limited_by == Side::Target,
    };
    let limit = if ceiling.is_none() && links.is_none() && stage.limited_by == Side::Balanced {
        NetworkLimit::Undetermined {
            reader_wait_pct: stage.reader_wait_pct,
            writer_wait_pct: stage.writer_wait_pct,
        }
    } else if target_full {
        NetworkLimit::Target {
            ceiling_mb_s: ceiling.map(|(t, _)| t),
            from: ceiling.map(|(_, from)| from),
            reader_wait_pct: stage.reader_wait_pct,
        }
    } else {
        match (links, ceiling) {
            (Some(total), _) if n >= REACHED * total => NetworkLimit::Links {
                per_client_mb_s: total / f64::from(clients.max(1)),
                total_mb_s: total,
            },
            (_, Some((t, from))) => NetworkLimit::BelowTarget {
                ceiling_mb_s: t,
                from,
            },
            _ => NetworkLimit::Starved,
        }
    };
    NetworkFinding {
        shape,
        mb_per_s: n,
        limit,
        writer_wait_pct: run.stages.writer_wait_pct,
        failed_clients: run
            .clients
            .iter()
            .flatten()
            .filter(|client| client.status == crate::engine::result::ClientStatus::Failed)
            .map(|client| client.name.clone())
            .collect(),
    }
}

/// The tests whose flags can overturn the finding, with those flags and what clears them.
fn redo_list(figures: &Figures<'_>, basis: &[Basis]) -> Vec<Redo> {
    basis
        .iter()
        .filter_map(|basis| {
            let flags = basis.overturning();
            let run = figures.run(basis.test)?;
            (!flags.is_empty()).then(|| Redo {
                test: basis.test,
                changes: remedy::changes(&flags, run),
                flags,
            })
        })
        .collect()
}

/// How much faster than the network a backup server's local writes must be (seed 001: twice,
/// so that it absorbs the protocol's overhead as well).
pub const LOCAL_OVER_NETWORK: f64 = 2.0;

/// The advice that follows from a conclusive finding: only what agrees with it.
fn advice(figures: &Figures<'_>, finding: &Finding, survey: Option<&Survey>) -> Vec<Advice> {
    let mut advice = Vec::new();
    let component = finding.component();
    // Advice sizes things from the isolated figures, each at the least its flags allow it to
    // be (the figure itself when valid); a figure whose flags leave it no floor is not used.
    let usable = |test: TestKind| weight::floor_of(figures, test);
    let (t, s1, sp, p) = (
        usable(TestKind::TapeWrite),
        usable(TestKind::ReadSingle),
        usable(TestKind::ReadParallel),
        usable(TestKind::NullSink),
    );
    match finding {
        Finding::ShoeShine(shine) => advice.push(Advice::FeedTheDrives {
            needed_mb_s: shine.needed_mb_s,
            streams_needed: shine.streams_needed,
            per_stream_mb_s: shine.per_stream_mb_s,
            drives: shine.drives.count,
            per_drive_mb_s: shine.min_step_mb_s * shine.compression,
            full_speed: t
                .filter(|t| *t > shine.needed_mb_s && shine.per_stream_mb_s > 0.0)
                .map(|t| (t, findings::streams_for(t, shine.per_stream_mb_s))),
        }),
        Finding::Network(network) => {
            match network.limit {
                NetworkLimit::Target { .. } => advice.push(Advice::NetworkTargetFull),
                NetworkLimit::Links {
                    per_client_mb_s,
                    total_mb_s,
                } => advice.push(Advice::FasterLinks {
                    per_client_mb_s,
                    clients: network.shape.clients,
                    total_mb_s,
                }),
                NetworkLimit::BelowTarget { .. } | NetworkLimit::Starved => {
                    advice.push(Advice::MoreClients {
                        shape: network.shape,
                    })
                }
                NetworkLimit::Undetermined { .. } => {}
            }
            if !network.failed_clients.is_empty() {
                advice.push(Advice::PartialNetworkRun {
                    failed: network.failed_clients.clone(),
                });
            }
            // A null target's write measured the pipeline, not a local file system.
            let local = t.filter(|_| target_component(survey) == Component::Target);
            if let Some(local) =
                local.filter(|local| *local < LOCAL_OVER_NETWORK * network.mb_per_s)
            {
                advice.push(Advice::LocalUnderTwiceNetwork {
                    local_mb_s: local,
                    network_mb_s: network.mb_per_s,
                    needed_mb_s: LOCAL_OVER_NETWORK * network.mb_per_s,
                });
            }
        }
        _ => {}
    }
    let feed_named = matches!(component, Some(Component::Source) | None);
    // How many streams a backup needs holds whatever limits it; a drive fed too slowly
    // already has its count of streams, from the backup's own per-stream rate.
    if let (Some(s1), Some(t)) = (s1, t)
        && s1 < t
        && !matches!(finding, Finding::ShoeShine(_))
    {
        advice.push(Advice::ParallelStreams {
            single_mb_s: s1,
            target_mb_s: t,
            streams: findings::streams_for(t, s1).max(2) as u32,
        });
    }
    if let (Some(sp), Some(t)) = (sp, t)
        && sp < t
        && feed_named
        && !matches!(finding, Finding::ShoeShine(_))
    {
        advice.push(Advice::SourceBound {
            source_mb_s: sp,
            target_mb_s: t,
            streams: figures
                .run(TestKind::ReadParallel)
                .map_or(0, |run| run.params.streams),
        });
    }
    if let Finding::Limits {
        ceiling, full_mb_s, ..
    } = finding
        && ceiling.component == Component::Target
    {
        advice.push(Advice::TargetAtFullSpeed {
            full_mb_s: *full_mb_s,
            target_mb_s: ceiling.mb_per_s,
        });
    }
    if component == Some(Component::Pipeline) {
        if let Some(run) = figures.run(TestKind::NullSink)
            && run.cpu.process_pct >= CPU_BOUND_PCT
        {
            advice.push(Advice::CpuBound {
                cpu_pct: run.cpu.process_pct,
            });
        }
        if let (Some(p), Some(sp)) = (p, sp)
            && p < 0.8 * sp
        {
            advice.push(Advice::PipelineSlowerThanReading {
                pipeline_mb_s: p,
                source_mb_s: sp,
            });
        }
    }
    if let Some(run) = figures.run(TestKind::FullBackup) {
        let stages = &run.stages;
        match component {
            Some(Component::Target | Component::SharedDevice)
                if stages.reader_wait_pct >= WAITING =>
            {
                advice.push(Advice::ReadersWaited {
                    wait_pct: stages.reader_wait_pct,
                })
            }
            Some(Component::Source) if stages.writer_wait_pct >= WAITING => {
                advice.push(Advice::WriterWaited {
                    wait_pct: stages.writer_wait_pct,
                })
            }
            _ => {}
        }
    }
    if component == Some(Component::SharedDevice) {
        advice.push(Advice::SeparateDevice);
    }
    advice
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::result::{CpuFigures, RunStatus};
    use crate::spec::RunParams;

    fn run(test: TestKind, mb_per_s: f64, cpu: f64) -> RunResult {
        RunResult {
            test,
            params: RunParams {
                streams: 2,
                duration_s: None,
                time_based: false,
                ..RunParams::example()
            },
            status: RunStatus::Done,
            bytes: (mb_per_s * 1e6) as u64,
            files: 1,
            seconds: 1.0,
            mb_per_s,
            cpu: CpuFigures {
                process_pct: cpu,
                system_pct: cpu,
            },
            stages: StageFigures::default(),
            latency_us: None,
            latency_of: None,
            cache_resident_pct: None,
            samples: Vec::new(),
            warnings: Vec::new(),
            error: None,
            tape: None,
            striped: None,
            s3: None,
            dedup: None,
            restore: None,
            clients: None,
            partial: false,
            steady: None,
            validity: None,
            data_compress_ratio: None,
            generated_dedup: None,
        }
    }

    fn network(mb_per_s: f64, clients: u32, link: Option<f64>, writer_wait: f64) -> RunResult {
        let mut result = run(TestKind::NetworkBackup, mb_per_s, 10.0);
        result.params.clients = Some(clients);
        result.params.link_mb_s = link;
        result.stages.writer_wait_pct = writer_wait;
        result
    }

    fn tape(mut run: RunResult, drives: u32) -> RunResult {
        run.tape = Some(TapeFigures {
            emulated: true,
            model: "LTO-4".into(),
            drives,
            native_mb_s: 120.0,
            min_mb_s: 40.0,
            compression: 2.0,
            streaming_s: 1.0,
            repositioning_s: 0.0,
            idle_s: 0.0,
            backhitches: 0,
            tape_mb_s: 120.0,
            tape_bytes: 0,
            end_of_tape: false,
            buffer_bytes: 0,
            buffer_filled: true,
        });
        run
    }

    #[test]
    fn a_backup_a_little_faster_than_its_ceiling_says_why() {
        let runs = vec![
            run(TestKind::TapeWrite, 233.7, 10.0),
            run(TestKind::ReadParallel, 1000.0, 10.0),
            run(TestKind::NullSink, 900.0, 10.0),
            run(TestKind::FullBackup, 238.8, 10.0),
        ];
        let single = verdict(&runs, None);
        assert!(
            matches!(&single.finding, Finding::Limits { above, .. }
                if above == &vec![AboveCeiling::Unrepeated]),
            "{:?}",
            single.finding
        );
        assert!(single.conclusive, "{}", single.verdict);
        assert!(
            single.verdict.contains("102% of its isolated ceiling")
                && single.verdict.contains("2.2% faster than that test")
                && single.verdict.contains("cannot tell from noise"),
            "{}",
            single.verdict
        );
        // At the ceiling or under it, nothing to explain.
        let mut under = runs.clone();
        under[3] = run(TestKind::FullBackup, 230.0, 10.0);
        assert!(matches!(&verdict(&under, None).finding,
            Finding::Limits { above, .. } if above.is_empty()));
        // A target test whose final flush was charged to it is a lower bound.
        let mut flushed = runs.clone();
        flushed[0].steady = Some(crate::engine::steady::SteadyFigures {
            mb_per_s: 233.7,
            from_s: 0.0,
            to_s: 1.0,
            cv_pct: Some(1.0),
            steady: true,
            flush_s: 0.6,
        });
        let flushed = verdict(&flushed, None);
        assert!(
            flushed
                .verdict
                .contains("lower bound, its final flush (0.6 s)"),
            "{}",
            flushed.verdict
        );
    }

    #[test]
    fn a_null_target_never_limits_the_backup_its_write_measured_the_pipeline() {
        let runs = vec![
            run(TestKind::TapeWrite, 900.0, 100.0),
            run(TestKind::ReadParallel, 2000.0, 60.0),
            run(TestKind::NullSink, 1500.0, 100.0),
        ];
        let null = Survey {
            source_bytes: 1 << 30,
            source_files: 10,
            shares_device: false,
            provenance: None,
            target_discards: true,
            reduction: None,
        };
        let verdict = verdict(&runs, Some(&null));
        assert_eq!(verdict.component, Some(Component::Pipeline), "{verdict:?}");
        assert!(
            verdict.verdict.starts_with("The pipeline"),
            "{}",
            verdict.verdict
        );
        let tape = verdict
            .rows
            .iter()
            .find(|row| row.test == TestKind::TapeWrite);
        assert_eq!(tape.and_then(|row| row.bottleneck), Some(true));
    }

    fn refs(runs: &[RunResult]) -> Vec<&RunResult> {
        runs.iter().collect()
    }

    /// 1 TB (10^12 bytes, given as bytes) in 1 h needs 277.8 MB/s.
    fn terabyte_in_an_hour() -> planner::PlanQuestion {
        planner::PlanQuestion {
            data_bytes: 1_000_000_000_000,
            window_s: 3600.0,
        }
    }

    #[test]
    fn the_planner_asks_for_the_drives_the_rate_takes_when_only_the_target_is_short() {
        let runs = vec![
            tape(run(TestKind::TapeWrite, 240.0, 10.0), 1),
            run(TestKind::ReadParallel, 900.0, 10.0),
            run(TestKind::NullSink, 800.0, 10.0),
            tape(run(TestKind::FullBackup, 236.0, 10.0), 1),
        ];
        let plan = planner::plan(
            terabyte_in_an_hour(),
            &verdict(&runs, None),
            &[],
            &refs(&runs),
            None,
        );
        assert!((plan.needed_mb_s - 277.8).abs() < 0.1);
        assert_eq!(plan.measured_mb_s, Some(236.0));
        assert!(plan.reachable, "{plan:?}");
        assert!(
            plan.changes[0].starts_with("Use 2 drives (emulated LTO-4): each wrote 240.0 MB/s"),
            "{plan:?}"
        );
        assert!(plan.changes[1].starts_with("The target write reached 240.0 MB/s alone"));
    }

    #[test]
    fn the_planner_says_when_no_measured_change_gets_there() {
        let runs = vec![
            run(TestKind::TapeWrite, 900.0, 10.0),
            run(TestKind::ReadParallel, 150.0, 10.0),
            run(TestKind::NullSink, 140.0, 10.0),
            run(TestKind::FullBackup, 138.0, 10.0),
        ];
        let plan = planner::plan(
            terabyte_in_an_hour(),
            &verdict(&runs, None),
            &[],
            &refs(&runs),
            None,
        );
        assert!(!plan.reachable);
        assert!(
            plan.answer.contains("no measured change gets there"),
            "{plan:?}"
        );
        assert!(plan.answer.contains("(2h 01m for the data)"), "{plan:?}");
        assert_eq!(plan.changes.len(), 2, "source and pipeline: {plan:?}");
        assert!(plan.changes[0].contains("faster source storage"));

        let easy = planner::PlanQuestion {
            data_bytes: 100_000_000_000,
            window_s: 3600.0,
        };
        let plan = planner::plan(easy, &verdict(&runs, None), &[], &refs(&runs), None);
        assert!(plan.reachable && plan.changes.is_empty());
        assert!(
            plan.answer
                .contains("the measured backup (138.0 MB/s) does it in 12m 05s")
        );
    }

    /// A part size × parts in flight sweep into an object store, three repeats a point, the
    /// full backup's figures given per point (the other tests far faster); `spread` MB/s
    /// between repeats.
    fn upload_sweep(full: [f64; 4], spread: f64) -> Vec<RunResult> {
        let store = "S3 store lab (bucket backups at 127.0.0.1:9000)";
        let settings = [
            (8u64 << 20, 4u32),
            (8 << 20, 16),
            (32 << 20, 4),
            (32 << 20, 16),
        ];
        let mut runs = Vec::new();
        for ((part_size, concurrency), full) in settings.into_iter().zip(full) {
            for test in [
                TestKind::TapeWrite,
                TestKind::ReadParallel,
                TestKind::NullSink,
                TestKind::FullBackup,
            ] {
                for repeat in [-1.0, 0.0, 1.0] {
                    let mb = match test {
                        TestKind::ReadParallel => 2000.0,
                        TestKind::NullSink => 1500.0,
                        _ => full,
                    } + repeat * spread;
                    let mut run = run(test, mb, 10.0);
                    run.params.part_size = Some(part_size);
                    run.params.concurrency = Some(concurrency);
                    if matches!(test, TestKind::TapeWrite | TestKind::FullBackup) {
                        run.s3 = Some(crate::engine::target::s3::S3Figures {
                            store: store.to_string(),
                            part_size,
                            concurrency,
                            ..Default::default()
                        });
                    }
                    runs.push(run);
                }
            }
        }
        runs
    }

    #[test]
    fn an_upload_sweep_names_the_store_its_best_pair_and_the_pair_a_window_needs() {
        let runs = upload_sweep([200.0, 300.0, 310.0, 420.0], 2.0);
        let judgement = Judgement::of(&points::RunEntry::of_results(&runs), None);
        let verdict = &judgement.verdict;
        assert_eq!(verdict.component, Some(Component::Target), "{verdict:?}");
        assert!(
            verdict.verdict.starts_with(
                "The target (S3 store lab (bucket backups at 127.0.0.1:9000)) limits the backup"
            ),
            "{}",
            verdict.verdict
        );
        let full = verdict
            .rows
            .iter()
            .find(|row| row.test == TestKind::FullBackup)
            .expect("a full backup row");
        assert!(full.label.contains("S3 store lab"), "{}", full.label);
        assert_eq!(full.mb_per_s, Some(420.0));

        let best = crate::matrix::best_sentence(&judgement.points, TestKind::FullBackup, None)
            .expect("a sweep");
        assert!(
            best.starts_with(
                "Best: 32 × 256 KiB with 2 streams, 32 MiB parts, 16 in flight at 420.0 MB/s"
            ),
            "{best}"
        );

        // 1 TB in an hour needs 277.8 MB/s: three pairs reach it, 8 MiB × 16 with the least
        // memory in parts (8 MiB × 17 × 2 streams = 272 MiB).
        let plan = planner::plan(
            terabyte_in_an_hour(),
            verdict,
            &judgement.points,
            &refs(&runs),
            None,
        );
        assert!(plan.reachable, "{plan:?}");
        assert_eq!(plan.changes.len(), 1, "{plan:?}");
        assert!(
            plan.changes[0].starts_with(
                "Upload in 8 MiB parts with 16 in flight per stream (target.part_size \"8M\", \
                 target.concurrency 16): the full backup measured 300.0 MB/s there"
            ),
            "{plan:?}"
        );
        assert!(plan.changes[0].contains("(272 MiB)"), "{plan:?}");

        // Within each other's noise, no pair is named.
        let close = upload_sweep([400.0, 405.0, 402.0, 398.0], 20.0);
        let judgement = Judgement::of(&points::RunEntry::of_results(&close), None);
        let sentence = crate::matrix::best_sentence(&judgement.points, TestKind::FullBackup, None)
            .expect("a sweep");
        assert!(sentence.starts_with("No point stands out"), "{sentence}");
        assert!(sentence.contains("parts"), "{sentence}");
    }

    #[test]
    fn a_backup_into_a_dedup_store_is_planned_in_logical_and_physical_terms() {
        let mut full = run(TestKind::FullBackup, 500.0, 10.0);
        full.dedup = Some(crate::engine::target::dedup::DedupFigures {
            store: "dedup store /srv (64 KiB chunks)".into(),
            logical_bytes: 2800,
            stored_bytes: 1000,
            dedup_ratio: 2.8,
            hashing_s: 3.0,
            chunking_s: 1.0,
            writing_s: 1.0,
            ..Default::default()
        });
        let runs = vec![
            run(TestKind::TapeWrite, 520.0, 10.0),
            run(TestKind::ReadParallel, 900.0, 10.0),
            run(TestKind::NullSink, 800.0, 10.0),
            full,
        ];
        // 12 TiB in 8 h: 458.1 MB/s logical; at 2.8:1, 163.6 MB/s to the store's disk.
        let question = planner::PlanQuestion::parse("12T", "8h").expect("a question");
        let plan = planner::plan(question, &verdict(&runs, None), &[], &refs(&runs), None);
        assert!(plan.reachable, "{plan:?}");
        let physical = plan.physical_mb_s.expect("a physical rate");
        assert!((physical - 163.6).abs() < 0.1, "{plan:?}");
        assert!(
            plan.answer.ends_with(
                "At the 2.80:1 reduction the dedup store achieved, that is 458.1 MB/s logical \
                 and 163.6 MB/s physical, to its disk."
            ),
            "{plan:?}"
        );
        // The store's hashing, CPU work, took most of its time: the verdict names it, typed
        // and in words.
        let judged = verdict(&runs, None);
        assert_eq!(judged.component, Some(Component::Target), "{judged:?}");
        let limit = judged.dedup_limit.expect("the store's limit");
        assert_eq!(limit.work, crate::engine::target::dedup::DedupWork::Hashing);
        assert_eq!(limit.share_pct, 80.0);
        assert!(
            judged.verdict.contains(
                "dedup store /srv (64 KiB chunks): hashing (cutting chunks 20 %, naming them \
                 60 %: CPU work, which a faster disk would not speed up) took 80 % of its time"
            ),
            "{}",
            judged.verdict
        );
    }

    #[test]
    fn a_network_backup_below_the_target_blames_the_network() {
        let runs = vec![
            run(TestKind::TapeWrite, 240.0, 3.0),
            network(117.0, 1, None, 85.0),
        ];
        let verdict = verdict(&runs, None);
        assert_eq!(verdict.component, Some(Component::Network));
        assert!(
            verdict
                .verdict
                .starts_with("The network limits the backup: 1 client × 2 streams delivered 117.0"),
            "{}",
            verdict.verdict
        );
        let row = verdict
            .rows
            .iter()
            .find(|row| row.test == TestKind::NetworkBackup)
            .expect("row");
        assert_eq!(row.bottleneck, Some(true));
    }

    /// Seed 001: the local side of a backup server should write at twice the network rate.
    #[test]
    fn a_local_write_under_twice_the_network_rate_is_called_out() {
        let tight = vec![
            run(TestKind::TapeWrite, 180.0, 3.0),
            network(117.0, 1, None, 85.0),
        ];
        let judged = verdict(&tight, None);
        let rule = judged
            .advice
            .iter()
            .find(|advice| matches!(advice, Advice::LocalUnderTwiceNetwork { .. }));
        assert_eq!(
            rule,
            Some(&Advice::LocalUnderTwiceNetwork {
                local_mb_s: 180.0,
                network_mb_s: 117.0,
                needed_mb_s: 234.0
            })
        );
        assert!(
            judged.recommendations.iter().any(|r| r.starts_with(
                "The lab's target writes 180.0 MB/s, under twice the 117.0 MB/s the network \
                 delivered"
            ) && r
                .ends_with("so its local writes need 234.0 MB/s or more.")),
            "{:?}",
            judged.recommendations
        );
        // Twice or more: nothing to say; a null target's write is not a local file system.
        let roomy = vec![
            run(TestKind::TapeWrite, 240.0, 3.0),
            network(117.0, 1, None, 85.0),
        ];
        let said = |runs: &[RunResult], survey: Option<&Survey>| {
            verdict(runs, survey)
                .advice
                .iter()
                .any(|advice| matches!(advice, Advice::LocalUnderTwiceNetwork { .. }))
        };
        assert!(!said(&roomy, None));
        let null = Survey {
            target_discards: true,
            reduction: None,
            ..Survey::default()
        };
        assert!(!said(&tight, Some(&null)));
    }

    #[test]
    fn emulated_links_and_a_full_target_are_told_apart() {
        let capped = verdict(&[network(178.0, 3, Some(60.0), 80.0)], None);
        assert_eq!(capped.component, Some(Component::Network));
        assert!(
            capped.verdict.contains("emulated links"),
            "{}",
            capped.verdict
        );
        assert!(capped.recommendations[0].contains("180.0 MB/s"));

        let full = verdict(
            &[
                run(TestKind::TapeWrite, 240.0, 3.0),
                network(231.0, 6, None, 5.0),
            ],
            None,
        );
        assert_eq!(full.component, Some(Component::Target));
        assert!(
            full.verdict
                .starts_with("The target limits the network backup")
        );
    }

    /// Table 1 of the Data Protector paper (Windows): the tape is the bottleneck.
    fn table_one() -> Vec<RunResult> {
        vec![
            run(TestKind::TapeWrite, 154.0, 3.0),
            run(TestKind::ReadSingle, 105.3, 5.0),
            run(TestKind::ReadParallel, 262.2, 9.0),
            run(TestKind::NullSink, 197.0, 18.0),
            run(TestKind::FullBackup, 151.7, 13.0),
        ]
    }

    #[test]
    fn table_one_names_the_tape() {
        let survey = Survey {
            source_bytes: 1_517_000_000,
            source_files: 10,
            shares_device: false,
            provenance: None,
            target_discards: false,
            reduction: None,
        };
        let verdict = verdict(&table_one(), Some(&survey));
        assert_eq!(verdict.component, Some(Component::Target));
        let yes: Vec<TestKind> = verdict
            .rows
            .iter()
            .filter(|row| row.bottleneck == Some(true))
            .map(|row| row.test)
            .collect();
        assert_eq!(yes, vec![TestKind::TapeWrite]);
        assert_eq!(verdict.rows[4].bottleneck, None);
        assert!(
            verdict.verdict.starts_with("The target limits the backup"),
            "{}",
            verdict.verdict
        );
        assert!(verdict.recommendations[0].contains("one stream cannot keep the target busy"));
        assert!(
            verdict
                .recommendations
                .iter()
                .any(|r| r.starts_with("The target streams at full speed"))
        );
        assert_eq!(verdict.backup_window_s, Some(10.0));
    }

    #[test]
    fn a_slow_full_backup_is_interference() {
        let mut runs = table_one();
        runs[4].mb_per_s = 60.0;
        let survey = Survey {
            source_bytes: 1,
            source_files: 1,
            shares_device: true,
            provenance: None,
            target_discards: false,
            reduction: None,
        };
        let verdict = verdict(&runs, Some(&survey));
        assert_eq!(verdict.component, Some(Component::SharedDevice));
        assert!(verdict.rows.iter().all(|row| row.bottleneck != Some(true)));
        assert!(verdict.verdict.contains("slow each other down"));
    }

    #[test]
    fn interference_on_separate_devices_marks_the_named_component() {
        let mut runs = table_one();
        runs[4].mb_per_s = 60.0;
        runs[4].stages.writer_wait_pct = 95.0;
        runs[4].stages.writer_waits = 100;
        let survey = Survey {
            source_bytes: 1,
            source_files: 1,
            shares_device: false,
            provenance: None,
            target_discards: false,
            reduction: None,
        };
        let verdict = verdict(&runs, Some(&survey));
        assert_eq!(
            verdict.component,
            Some(Component::Source),
            "{}",
            verdict.verdict
        );
        let yes: Vec<TestKind> = verdict
            .rows
            .iter()
            .filter(|row| row.bottleneck == Some(true))
            .map(|row| row.test)
            .collect();
        assert_eq!(yes, vec![TestKind::ReadParallel]);
    }

    #[test]
    fn a_slow_source_is_the_bottleneck() {
        let mut runs = table_one();
        runs[2].mb_per_s = 120.0;
        runs[4].mb_per_s = 118.0;
        let verdict = verdict(&runs, None);
        assert_eq!(verdict.component, Some(Component::Source));
        assert!(
            verdict
                .recommendations
                .iter()
                .any(|r| r.contains("source-bound"))
        );
    }

    #[test]
    fn stage_accounting_names_the_side_behind() {
        let mut stages = StageFigures {
            reader_wait_pct: 80.0,
            reader_waits: 400,
            ..StageFigures::default()
        };
        assert_eq!(stage_attribution(&stages).limited_by, Side::Target);
        stages.reader_wait_pct = 1.0;
        stages.writer_wait_pct = 70.0;
        assert_eq!(stage_attribution(&stages).limited_by, Side::Source);
        stages.writer_wait_pct = 10.0;
        assert_eq!(stage_attribution(&stages).limited_by, Side::Balanced);
    }

    #[test]
    fn an_invalid_run_makes_the_verdict_inconclusive_with_the_runs_to_redo() {
        use crate::engine::validity::{Flag, FlagCode, Validity};
        let mut runs = table_one();
        runs[0].validity = Some(Validity {
            valid: false,
            flags: vec![Flag {
                code: FlagCode::TooShort,
                detail: "0.8 s of samples".into(),
            }],
        });
        let verdict = verdict(&runs, None);
        assert!(!verdict.conclusive);
        // The candidate is still named, but no row says Yes and nothing but the redo is advised.
        assert_eq!(verdict.component, Some(Component::Target));
        assert!(verdict.rows.iter().all(|row| row.bottleneck != Some(true)));
        assert_eq!(
            verdict.advice,
            vec![Advice::Redo(Redo {
                test: TestKind::TapeWrite,
                flags: vec![FlagCode::TooShort],
                changes: vec![remedy::Change {
                    field: "params.duration_s".into(),
                    value: "\"auto\"".into(),
                    cli: "--duration auto".into(),
                }],
            })]
        );
        assert!(
            verdict.verdict.starts_with("Inconclusive"),
            "{}",
            verdict.verdict
        );
        assert_eq!(
            verdict.recommendations[0],
            "Redo the target write (too_short): set params.duration_s to \"auto\" \
             (--duration auto)."
        );
    }

    /// A run that was already `auto` (until steady, capped at 60 s) and ended unsteady at its
    /// cap is not told to set `auto`: its redo asks for a longer run, twice the cap.
    #[test]
    fn a_run_already_auto_is_told_to_run_longer_not_to_set_auto() {
        use crate::engine::validity::FlagCode;
        let mut runs = table_one();
        runs[0] = flagged(runs[0].clone(), &[FlagCode::Unsteady]);
        runs[0].params.until_steady = true;
        runs[0].params.time_based = true;
        runs[0].params.duration_s = Some(60.0);
        runs[0].seconds = 60.0;
        let verdict = verdict(&runs, None);
        let redo = verdict
            .advice
            .iter()
            .find_map(|advice| match advice {
                Advice::Redo(redo) if redo.test == TestKind::TapeWrite => Some(redo),
                _ => None,
            })
            .expect("the target write is redone");
        assert_eq!(
            redo.changes,
            vec![remedy::Change {
                field: "params.duration_s".into(),
                value: "120".into(),
                cli: "--duration 120".into(),
            }]
        );
        assert!(
            verdict.recommendations.iter().all(|r| !r.contains("auto")),
            "{:?}",
            verdict.recommendations
        );
    }

    /// A row none of whose runs is valid is never marked "Yes", whatever the verdict rests
    /// on: it says how many of its runs are valid instead.
    #[test]
    fn a_row_with_no_valid_run_is_not_marked_yes() {
        use crate::engine::validity::FlagCode;
        for flag in [FlagCode::DriveBufferNotFilled, FlagCode::TooShort] {
            let mut runs = table_one();
            runs[0] = flagged(runs[0].clone(), &[flag]);
            let verdict = verdict(&runs, None);
            let target = &verdict.rows[0];
            assert_eq!(target.test, TestKind::TapeWrite);
            assert_eq!(target.runs_valid, 0);
            assert_ne!(
                target.bottleneck,
                Some(true),
                "{flag:?}: {}",
                verdict.verdict
            );
            assert_eq!(
                target.bottleneck_word(),
                "not yet: 0 of 1 valid",
                "{flag:?}: {}",
                verdict.verdict
            );
        }
    }

    /// A drive fed too slowly (a feed what-if: streams capped at 15 MB/s) gets one count of
    /// streams, from one rule and one per-stream rate: what keeps the drive streaming and
    /// what reaches the target's full rate, in one piece of advice, never a second count
    /// worked out from another figure beside it.
    #[test]
    fn a_slow_feed_gets_its_stream_counts_from_one_rule() {
        let mut full = tape(run(TestKind::FullBackup, 30.0, 5.0), 1);
        full.seconds = 10.0;
        if let Some(tape) = full.tape.as_mut() {
            tape.backhitches = 1;
            tape.repositioning_s = 2.0;
        }
        let runs = vec![
            tape(run(TestKind::TapeWrite, 240.0, 3.0), 1),
            run(TestKind::ReadSingle, 15.0, 2.0),
            run(TestKind::ReadParallel, 30.0, 5.0),
            full,
        ];
        let verdict = verdict(&runs, None);
        assert!(matches!(verdict.finding, Finding::ShoeShine(_)));
        assert!(verdict.conclusive, "{}", verdict.verdict);
        let counts: Vec<(u64, Option<(f64, u64)>)> = verdict
            .advice
            .iter()
            .filter_map(|advice| match advice {
                Advice::FeedTheDrives {
                    streams_needed,
                    full_speed,
                    ..
                } => Some((*streams_needed, *full_speed)),
                _ => None,
            })
            .collect();
        // 2 streams gave 30 MB/s: 15 each; the drive streams from 80 MB/s (40 × 2:1), the
        // target takes 240.
        assert_eq!(counts, vec![(6, Some((240.0, 16)))]);
        assert!(
            !verdict
                .advice
                .iter()
                .any(|advice| matches!(advice, Advice::ParallelStreams { .. })),
            "{:?}",
            verdict.recommendations
        );
        let naming: Vec<&String> = verdict
            .recommendations
            .iter()
            .filter(|line| line.contains(" streams"))
            .collect();
        assert_eq!(naming.len(), 1, "{naming:?}");
    }

    fn flagged(mut run: RunResult, codes: &[crate::engine::validity::FlagCode]) -> RunResult {
        use crate::engine::validity::{Flag, Validity};
        run.validity = Some(Validity {
            valid: codes.is_empty(),
            flags: codes
                .iter()
                .map(|code| Flag {
                    code: *code,
                    detail: String::new(),
                })
                .collect(),
        });
        run
    }

    #[test]
    fn a_backup_at_its_ceiling_is_not_vetoed_by_unsteady_faster_components() {
        use crate::engine::validity::FlagCode;
        let runs = vec![
            run(TestKind::TapeWrite, 233.7, 3.0),
            flagged(
                run(TestKind::ReadParallel, 900.0, 9.0),
                &[FlagCode::Unsteady],
            ),
            flagged(
                run(TestKind::NullSink, 700.0, 18.0),
                &[FlagCode::TooShort, FlagCode::BusyMachine],
            ),
            run(TestKind::FullBackup, 238.8, 13.0),
        ];
        let verdict = verdict(&runs, None);
        assert!(verdict.conclusive, "{}", verdict.verdict);
        assert_eq!(verdict.component, Some(Component::Target));
        // The same flags on a backup far below the faster components still stand aside,
        // while a flag that can lower the named ceiling's rival below it still overturns.
        let rival = vec![
            run(TestKind::TapeWrite, 233.7, 3.0),
            flagged(
                run(TestKind::ReadParallel, 240.0, 9.0),
                &[FlagCode::CacheResident],
            ),
            run(TestKind::NullSink, 700.0, 18.0),
            flagged(
                run(TestKind::FullBackup, 215.0, 13.0),
                &[FlagCode::CacheResident],
            ),
        ];
        assert!(!super::verdict(&rival, None).conclusive);
    }

    /// A feed capped at 2 × 20 MB/s into a target test that ran unsteady far above it: the
    /// advice sizes the feed from the target's floor (what it moved), not from nothing.
    #[test]
    fn advice_uses_a_flagged_figure_at_the_least_its_flags_allow() {
        use crate::engine::validity::FlagCode;
        let capped = |test, mb_per_s| {
            let mut run = run(test, mb_per_s, 5.0);
            run.params.source_rate_mb_s = Some(20.0);
            run
        };
        let mut target = flagged(
            run(TestKind::TapeWrite, 13_665.0, 40.0),
            &[FlagCode::Unsteady],
        );
        target.mb_per_s = 12_000.0;
        let mut single = capped(TestKind::ReadSingle, 20.0);
        single.params.streams = 1;
        let runs = vec![
            target,
            single,
            capped(TestKind::ReadParallel, 39.9),
            capped(TestKind::NullSink, 39.9),
            capped(TestKind::FullBackup, 39.9),
        ];
        let verdict = verdict(&runs, None);
        assert!(verdict.conclusive, "{}", verdict.verdict);
        assert_eq!(verdict.component, Some(Component::Source));
        let bound = verdict.advice.iter().find_map(|advice| match advice {
            Advice::SourceBound { target_mb_s, .. } => Some(*target_mb_s),
            _ => None,
        });
        assert_eq!(bound, Some(12_000.0), "{:#?}", verdict.advice);
        // A flag that leaves the target no floor leaves the advice out.
        let mut runs = runs;
        runs[0] = flagged(
            run(TestKind::TapeWrite, 13_665.0, 40.0),
            &[FlagCode::CacheResident],
        );
        let verdict = super::verdict(&runs, None);
        assert!(
            !verdict
                .advice
                .iter()
                .any(|advice| matches!(advice, Advice::SourceBound { .. })),
            "{:#?}",
            verdict.advice
        );
    }

    /// Table 1 with an emulated drive that made its feed wait, every run flagged busy.
    fn busy_table_one(drive_paced: bool) -> Vec<RunResult> {
        use crate::engine::validity::FlagCode;
        table_one()
            .into_iter()
            .map(|mut run| {
                if run.test == TestKind::TapeWrite && drive_paced {
                    run = tape(run, 1);
                    run.stages.reader_wait_pct = 90.0;
                    run.stages.reader_waits = 900;
                }
                flagged(run, &[FlagCode::BusyMachine])
            })
            .collect()
    }

    #[test]
    fn other_work_cannot_unseat_a_target_that_set_its_own_pace() {
        use crate::engine::validity::FlagCode;
        use weight::Weight;
        let verdict = verdict(&busy_table_one(true), None);
        assert!(verdict.conclusive, "{}", verdict.verdict);
        assert_eq!(verdict.component, Some(Component::Target));
        let weight_of = |test: TestKind| {
            verdict
                .basis
                .iter()
                .find(|basis| basis.test == test)
                .map(|basis| basis.flags[0])
        };
        assert_eq!(
            weight_of(TestKind::TapeWrite).map(|f| f.weight),
            Some(Weight::DevicePaced)
        );
        // The full backup and the higher ceilings could only be faster without other work.
        for test in [
            TestKind::FullBackup,
            TestKind::ReadParallel,
            TestKind::NullSink,
        ] {
            assert_eq!(
                weight_of(test),
                Some(weight::FlagWeight {
                    flag: FlagCode::BusyMachine,
                    weight: Weight::OnlyHigher
                }),
                "{test}"
            );
        }
        assert_eq!(verdict.caveats.len(), 4, "{:?}", verdict.caveats);
        assert!(verdict.caveats[0].starts_with("busy_machine on the target write cannot change"));
    }

    #[test]
    fn other_work_on_a_ceiling_the_lab_paced_still_asks_for_a_redo() {
        use crate::engine::validity::FlagCode;
        let verdict = verdict(&busy_table_one(false), None);
        assert!(!verdict.conclusive);
        // Only the named ceiling could move the finding: a faster target write might leave
        // the backup below it.
        assert_eq!(
            verdict.advice,
            vec![Advice::Redo(Redo {
                test: TestKind::TapeWrite,
                flags: vec![FlagCode::BusyMachine],
                changes: Vec::new(),
            })]
        );
        assert!(verdict.caveats.is_empty());
    }

    #[test]
    fn a_full_drive_buffer_cannot_make_a_drive_far_faster_than_the_feed_the_limit() {
        use crate::engine::validity::FlagCode;
        use weight::Weight;
        // A 30 MB/s source into one drive of 120 MB/s native that never filled its buffer.
        let full = |mb_per_s: f64| {
            flagged(
                tape(run(TestKind::FullBackup, mb_per_s, 5.0), 1),
                &[FlagCode::DriveBufferNotFilled],
            )
        };
        let runs = |mb_per_s: f64| {
            vec![
                tape(run(TestKind::TapeWrite, 240.0, 3.0), 1),
                run(TestKind::ReadParallel, mb_per_s, 5.0),
                run(TestKind::NullSink, mb_per_s, 5.0),
                full(mb_per_s),
            ]
        };
        let slow = verdict(&runs(30.0), None);
        assert!(slow.conclusive, "{}", slow.verdict);
        assert_eq!(slow.component, Some(Component::Source));
        let on_full = slow
            .basis
            .iter()
            .find(|basis| basis.test == TestKind::FullBackup)
            .map(|basis| basis.flags[0].weight);
        assert_eq!(on_full, Some(Weight::DriveRateKnown { native_mb_s: 120.0 }));
        // A feed close to the drive's native rate: the drive may be what limits.
        let close = verdict(&runs(115.0), None);
        assert!(!close.conclusive, "{}", close.verdict);
    }

    #[test]
    fn other_work_can_overturn_a_backup_found_below_every_ceiling() {
        use crate::engine::validity::FlagCode;
        let mut runs = table_one();
        runs[4] = flagged(
            run(TestKind::FullBackup, 90.0, 13.0),
            &[FlagCode::BusyMachine],
        );
        let verdict = verdict(&runs, None);
        assert!(matches!(verdict.finding, Finding::Interference { .. }));
        assert!(!verdict.conclusive);
    }

    #[test]
    fn a_shoe_shining_drive_names_the_feed_and_leaves_its_cycle_rate_open() {
        use crate::engine::validity::FlagCode;
        let mut full = tape(run(TestKind::FullBackup, 30.0, 5.0), 1);
        full.seconds = 10.0;
        if let Some(tape) = full.tape.as_mut() {
            tape.backhitches = 1;
            tape.repositioning_s = 2.0;
        }
        let runs = |source_mb_s: f64, flags: &[FlagCode]| {
            vec![
                tape(run(TestKind::TapeWrite, 240.0, 3.0), 1),
                run(TestKind::ReadParallel, source_mb_s, 5.0),
                flagged(full.clone(), flags),
            ]
        };
        // Too short to judge the backup's own figure: a source that could feed the drives
        // might have, so the run is redone; one that reads at 30 MB/s on its own cannot.
        let both = [FlagCode::TooShort, FlagCode::TooFewDriveCycles];
        assert!(!verdict(&runs(300.0, &both), None).conclusive);
        assert!(verdict(&runs(30.0, &both), None).conclusive);
        // Other work beside a read capped at 30 MB/s: it read at its cap, so it could not have
        // fed the drives either.
        let mut busy = runs(30.0, &both);
        busy[1].params.source_rate_mb_s = Some(15.0);
        busy[1] = flagged(busy[1].clone(), &[FlagCode::BusyMachine]);
        assert!(verdict(&busy, None).conclusive);
        busy[1].params.source_rate_mb_s = Some(100.0);
        assert!(
            !verdict(&busy, None).conclusive,
            "below its cap: it might have been faster"
        );
        let verdict = verdict(&runs(300.0, &[FlagCode::TooFewDriveCycles]), None);
        assert!(matches!(verdict.finding, Finding::ShoeShine(_)));
        assert!(verdict.conclusive, "{}", verdict.verdict);
        assert_eq!(
            verdict.open,
            vec![weight::OpenClaim::ShoeShining {
                test: TestKind::FullBackup,
                needs_s: 40.0
            }]
        );
        assert!(
            verdict
                .caveats
                .iter()
                .any(|line| line.starts_with("Not yet certain: shoe-shining")),
            "{:?}",
            verdict.caveats
        );
    }

    #[test]
    fn a_figure_resting_on_some_of_its_runs_says_how_many() {
        use crate::engine::validity::FlagCode;
        let mut runs = table_one();
        for _ in 0..2 {
            let mut again = flagged(run(TestKind::TapeWrite, 150.0, 3.0), &[FlagCode::Unsteady]);
            again.params = runs[0].params.clone();
            runs.push(again);
        }
        let verdict = verdict(&runs, None);
        let row = &verdict.rows[0];
        assert_eq!((row.repeats, row.runs_total), (1, 3));
        assert_eq!(row.valid_words().as_deref(), Some("1 of 3 valid"));
        assert_eq!(
            verdict.rows[1].valid_words().as_deref(),
            Some("1 of 1 valid")
        );
    }

    #[test]
    fn a_full_backup_faster_than_its_ceiling_is_not_a_verdict() {
        let mut runs = table_one();
        runs[4].mb_per_s = 200.0;
        let verdict = verdict(&runs, None);
        assert!(!verdict.conclusive);
        assert!(
            matches!(verdict.finding, Finding::FullOutranCeiling { .. }),
            "{:?}",
            verdict.finding
        );
        assert!(
            verdict.verdict.starts_with("Inconclusive: the full backup"),
            "{}",
            verdict.verdict
        );
        assert!(
            verdict.verdict.contains("longer runs"),
            "{}",
            verdict.verdict
        );
    }

    #[test]
    fn a_backup_that_outran_a_ceiling_measured_once_is_measured_again_in_turn() {
        use super::follow_up::{FOLLOW_UP_RUNS, FollowUp};
        let mut runs = table_one();
        runs[4].mb_per_s = 200.0;
        let outran = verdict(&runs, None);
        let follow_up = FollowUp::of(&outran).expect("a follow-up");
        assert_eq!(follow_up.tests, [TestKind::TapeWrite, TestKind::FullBackup]);
        assert_eq!(follow_up.rounds, FOLLOW_UP_RUNS - 1);
        assert_eq!(
            follow_up.words(),
            "measuring the target write and the full backup twice more each, in turn, so \
             both meet the same conditions"
        );
        // Measured in turn: the medians tell the two apart, and no further step is asked.
        for _ in 0..follow_up.rounds {
            runs.push(run(TestKind::TapeWrite, 154.0, 3.0));
            runs.push(run(TestKind::FullBackup, 150.0, 13.0));
        }
        let again = verdict(&runs, None);
        assert!(
            matches!(again.finding, Finding::Limits { .. }),
            "{:?}",
            again.finding
        );
        assert_eq!(FollowUp::of(&again), None);
        // A verdict that stands asks for nothing.
        assert_eq!(FollowUp::of(&verdict(&table_one(), None)), None);
    }

    #[test]
    fn repeats_give_the_median_and_its_spread() {
        let mut runs = table_one();
        let mut again = run(TestKind::TapeWrite, 160.0, 3.0);
        again.params = runs[0].params.clone();
        runs.push(again);
        let mut third = run(TestKind::TapeWrite, 150.0, 3.0);
        third.params = runs[0].params.clone();
        runs.push(third);
        let verdict = verdict(&runs, None);
        let row = &verdict.rows[0];
        assert_eq!(row.mb_per_s, Some(154.0));
        assert_eq!(row.repeats, 3);
        let spread = row.spread_pct.expect("spread of three");
        assert!((spread - 5.0 / 154.0 * 100.0).abs() < 0.01, "{spread}");
        assert_eq!(verdict.rows[1].spread_pct, None);
    }

    #[test]
    fn failed_runs_do_not_count() {
        let mut runs = table_one();
        runs[0].status = RunStatus::Failed;
        let verdict = verdict(&runs, None);
        assert_eq!(verdict.rows[0].mb_per_s, None);
        assert_ne!(verdict.component, Some(Component::Target));
    }
}
