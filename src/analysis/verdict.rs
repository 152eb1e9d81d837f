//! The verdict as it is kept: the bottleneck table's rows and the typed finding, advice and
//! evidence. Nothing here is a sentence; `said` renders them.

use serde::{Deserialize, Serialize};

use super::findings::{Advice, Component, Drives, Finding, Shape, StageAttribution};
use super::points;
use super::weight::{Basis, OpenClaim};
use crate::spec::TestKind;

/// One row of the bottleneck table, as it is kept: the JSON answers carry it as
/// [`SaidRow`](super::SaidRow), with its stage accounting in words (one `From` each way).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerdictRow {
    pub test: TestKind,
    pub label: String,
    /// The backup tool a tool test's row is of, with its parameters (`restic compression=max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
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
    pub(super) fn of(points: &[points::Point], test: TestKind) -> NoFigure {
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
///
/// This is the verdict as it is kept, and it holds no sentence: a sentence's wording can
/// change without a new judgement version. The JSON answers carry it as
/// [`SaidVerdict`](super::SaidVerdict), the same fields with the sentences rendered beside
/// them; the two stay two types because one is kept without words and the other is the
/// API's shape, with them. Each turns into the other by one `From` conversion.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    pub rows: Vec<VerdictRow>,
    /// The component named; when the verdict is inconclusive, the leading candidate.
    pub component: Option<Component>,
    /// False when a run the verdict rests on is not valid, or the figures contradict each
    /// other: the verdict then says which runs to redo and how.
    pub conclusive: bool,
    pub finding: Finding,
    pub advice: Vec<Advice>,
    /// Source size ÷ full-backup speed.
    pub backup_window_s: Option<f64>,
    /// What a restore of the data takes, when the campaign measured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RestoreLine>,
    /// The tests the finding rests on, and for each flag on them whether it can overturn
    /// the finding.
    #[serde(default)]
    pub basis: Vec<Basis>,
    /// Secondary claims still open beside the finding.
    #[serde(default)]
    pub open: Vec<OpenClaim>,
    /// When the target is a dedup store and the verdict names it: the work that took most
    /// of its time (hashing, the index or writing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_limit: Option<crate::engine::target::dedup::DedupLimit>,
    /// What the target is, when it is more than a path: the verdict's sentence names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetName>,
    /// Clients × streams of the network backup, when the campaign ran one: the summary says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_shape: Option<Shape>,
    /// The source's size, when it was surveyed: the summary's backup window is of this much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_bytes: Option<u64>,
    /// The backup tool the campaign ran, and how its backup used the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<super::findings::ToolUse>,
    /// Each backup tool's line of the comparison, in the order the campaign ran them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<super::tools::ToolLine>,
    /// When the campaign compared several tools, each one's own verdict (in the order of
    /// `tools`): against its own ceiling and the shared ones, never another tool's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_tool: Vec<Verdict>,
}

/// What the target is, when it is more than a path, from the run that best shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TargetName {
    /// Emulated tape drives.
    Drives(Drives),
    /// An object store, by the name the operator gave it.
    ObjectStore { store: String },
    /// A dedup store, and the work that took most of its time when one did.
    DedupStore {
        store: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<crate::engine::target::dedup::DedupLimit>,
    },
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
