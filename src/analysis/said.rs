//! The verdict said: every sentence a page, table, report or JSON answer shows, rendered from
//! the kept verdict's typed findings each time it is shown, and the JSON shape that carries
//! them beside the typed verdict. What is kept (`Verdict`) holds no sentence, so a sentence's
//! wording can change without a new judgement version.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::findings::StageAttribution;
use super::findings::{Advice, Component, Finding, Shape};
use super::points::Basis as FigureBasis;
use super::verdict::{NoFigure, RestoreLine, TargetName, Verdict, VerdictRow};
use super::weight::{Basis, OpenClaim};
use super::words;
use crate::engine::result::StageFigures;
use crate::engine::target::dedup::DedupLimit;
use crate::engine::validity::FlagCode;
use crate::spec::TestKind;

impl Verdict {
    /// What caps the backup in a few words ("the target"), when the verdict names it
    /// conclusively: a sweep that finds no better point says so beside it.
    pub fn cap(&self) -> Option<String> {
        self.component
            .filter(|_| self.conclusive)
            .map(|component| format!("the {}", words::component_word(component)))
    }

    /// The verdict's sentence: the finding, said inconclusive first when it is, and whether
    /// runs must be redone.
    pub fn sentence(&self) -> String {
        let target = self.target.as_ref().map(words::target);
        let redo = self
            .advice
            .iter()
            .any(|advice| matches!(advice, Advice::Redo(_)));
        let tool = self.tool.as_ref().map(|tool| tool.name.as_str());
        let sentence = words::finding(
            &self.finding,
            self.conclusive,
            redo,
            target.as_deref(),
            tool,
        );
        match &self.tool {
            Some(tool) if self.component == Some(Component::Tool) => {
                format!("{sentence}. {}", words::capitalize(&words::tool_use(tool)))
            }
            _ => sentence,
        }
    }

    /// The campaign's figures in one paragraph.
    pub fn summary(&self) -> String {
        words::summary(self)
    }

    /// The advice, a sentence each.
    pub fn recommendations(&self) -> Vec<String> {
        self.advice.iter().map(words::advice).collect()
    }

    /// What a restore of the data takes, in a sentence or two, when the campaign measured one.
    pub fn restore_words(&self) -> Option<String> {
        self.restore.as_ref().map(words::restore)
    }

    /// The flags that cannot overturn the finding and the claims still open, a line each.
    pub fn caveats(&self) -> Vec<String> {
        words::caveats(&self.basis, &self.open, self.conclusive)
    }
}

impl VerdictRow {
    /// The run's stage accounting in words, when the row has one.
    pub fn stage_reason(&self) -> Option<String> {
        let stage = self.stage.as_ref()?;
        // The wait counts come from the run's stage figures; the shares are the attribution's.
        let stages = StageFigures {
            reader_wait_pct: stage.reader_wait_pct,
            writer_wait_pct: stage.writer_wait_pct,
            ..self.busy.unwrap_or_default()
        };
        Some(words::stage(stage.limited_by, &stages))
    }
}

/// The verdict as the JSON answers show it (`/api/campaigns/{id}/bottleneck`, `backlab run
/// --json`): the kept verdict's fields, with the sentences rendered from them beside.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SaidVerdict {
    pub rows: Vec<SaidRow>,
    pub component: Option<Component>,
    pub conclusive: bool,
    pub finding: Finding,
    pub advice: Vec<Advice>,
    /// The finding in words.
    pub verdict: String,
    pub summary: String,
    /// The advice in words.
    pub recommendations: Vec<String>,
    pub backup_window_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RestoreLine>,
    /// The restore in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_words: Option<String>,
    #[serde(default)]
    pub basis: Vec<Basis>,
    #[serde(default)]
    pub open: Vec<OpenClaim>,
    /// The flags that cannot overturn the finding and the open claims, in words.
    #[serde(default)]
    pub caveats: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_limit: Option<DedupLimit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_shape: Option<Shape>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<super::findings::ToolUse>,
    /// Each backup tool's line of the comparison, in the order the campaign ran them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<super::tools::ToolLine>,
    /// When the campaign compared several tools, each one's own verdict, said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(no_recursion)]
    pub by_tool: Vec<SaidVerdict>,
}

/// The verdict with every sentence rendered: what the JSON answers carry.
impl From<&Verdict> for SaidVerdict {
    fn from(verdict: &Verdict) -> Self {
        SaidVerdict {
            rows: verdict.rows.iter().map(SaidRow::from).collect(),
            component: verdict.component,
            conclusive: verdict.conclusive,
            finding: verdict.finding.clone(),
            advice: verdict.advice.clone(),
            verdict: verdict.sentence(),
            summary: verdict.summary(),
            recommendations: verdict.recommendations(),
            backup_window_s: verdict.backup_window_s,
            restore: verdict.restore.clone(),
            restore_words: verdict.restore_words(),
            basis: verdict.basis.clone(),
            open: verdict.open.clone(),
            caveats: verdict.caveats(),
            dedup_limit: verdict.dedup_limit,
            target: verdict.target.clone(),
            network_shape: verdict.network_shape,
            source_bytes: verdict.source_bytes,
            tool: verdict.tool.clone(),
            tools: verdict.tools.clone(),
            by_tool: verdict.by_tool.iter().map(SaidVerdict::from).collect(),
        }
    }
}

/// The typed verdict again, its sentences left behind (they are rendered from it).
impl From<SaidVerdict> for Verdict {
    fn from(said: SaidVerdict) -> Self {
        Verdict {
            rows: said.rows.into_iter().map(VerdictRow::from).collect(),
            component: said.component,
            conclusive: said.conclusive,
            finding: said.finding,
            advice: said.advice,
            backup_window_s: said.backup_window_s,
            restore: said.restore,
            basis: said.basis,
            open: said.open,
            dedup_limit: said.dedup_limit,
            target: said.target,
            network_shape: said.network_shape,
            source_bytes: said.source_bytes,
            tool: said.tool,
            tools: said.tools,
            by_tool: said.by_tool.into_iter().map(Verdict::from).collect(),
        }
    }
}

/// A row of the bottleneck table as the JSON answers show it: the kept row, its stage
/// accounting with the reason in words.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SaidRow {
    pub test: TestKind,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub mb_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<FigureBasis>,
    pub spread_pct: Option<f64>,
    pub repeats: usize,
    #[serde(default)]
    pub runs_total: usize,
    #[serde(default)]
    pub runs_valid: usize,
    pub valid: Option<bool>,
    pub flags: Vec<FlagCode>,
    pub cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_cpu_pct: Option<f64>,
    pub bottleneck: Option<bool>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub candidate: bool,
    pub stage: Option<SaidStage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<StageFigures>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_figure: Option<NoFigure>,
}

/// A kept row with its stage accounting said.
impl From<&VerdictRow> for SaidRow {
    fn from(row: &VerdictRow) -> Self {
        SaidRow {
            test: row.test,
            label: row.label.clone(),
            tool: row.tool.clone(),
            mb_per_s: row.mb_per_s,
            basis: row.basis,
            spread_pct: row.spread_pct,
            repeats: row.repeats,
            runs_total: row.runs_total,
            runs_valid: row.runs_valid,
            valid: row.valid,
            flags: row.flags.clone(),
            cpu_pct: row.cpu_pct,
            lab_cpu_pct: row.lab_cpu_pct,
            other_cpu_pct: row.other_cpu_pct,
            bottleneck: row.bottleneck,
            candidate: row.candidate,
            stage: row.stage.clone().map(|attribution| SaidStage {
                reason: row.stage_reason().unwrap_or_default(),
                attribution,
            }),
            busy: row.busy,
            no_figure: row.no_figure,
        }
    }
}

/// The kept row again, its reason in words left behind.
impl From<SaidRow> for VerdictRow {
    fn from(said: SaidRow) -> Self {
        VerdictRow {
            test: said.test,
            label: said.label,
            tool: said.tool,
            mb_per_s: said.mb_per_s,
            basis: said.basis,
            spread_pct: said.spread_pct,
            repeats: said.repeats,
            runs_total: said.runs_total,
            runs_valid: said.runs_valid,
            valid: said.valid,
            flags: said.flags,
            cpu_pct: said.cpu_pct,
            lab_cpu_pct: said.lab_cpu_pct,
            other_cpu_pct: said.other_cpu_pct,
            bottleneck: said.bottleneck,
            candidate: said.candidate,
            stage: said.stage.map(|stage| stage.attribution),
            busy: said.busy,
            no_figure: said.no_figure,
        }
    }
}

/// A row's stage accounting with its reason in words.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SaidStage {
    #[serde(flatten)]
    pub attribution: StageAttribution,
    /// The same in words.
    pub reason: String,
}

/// Serde's `with` for a typed verdict that a JSON document carries said
/// (`#[serde(with = "crate::analysis::said::in_words")]`): written with its sentences,
/// read back typed.
pub mod in_words {
    use super::*;

    /// Writes the verdict with its sentences.
    pub fn serialize<S: Serializer>(verdict: &Verdict, serializer: S) -> Result<S::Ok, S::Error> {
        SaidVerdict::from(verdict).serialize(serializer)
    }

    /// Reads a said verdict back as the typed one; its sentences are rendered again on demand.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Verdict, D::Error> {
        SaidVerdict::deserialize(deserializer).map(Verdict::from)
    }
}
