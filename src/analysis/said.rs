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

    /// The verdict with every sentence rendered: what the JSON answers carry.
    pub fn said(&self) -> SaidVerdict {
        SaidVerdict {
            rows: self.rows.iter().map(SaidRow::of).collect(),
            component: self.component,
            conclusive: self.conclusive,
            finding: self.finding.clone(),
            advice: self.advice.clone(),
            verdict: self.sentence(),
            summary: self.summary(),
            recommendations: self.recommendations(),
            backup_window_s: self.backup_window_s,
            restore: self.restore.clone(),
            restore_words: self.restore_words(),
            basis: self.basis.clone(),
            open: self.open.clone(),
            caveats: self.caveats(),
            dedup_limit: self.dedup_limit,
            target: self.target.clone(),
            network_shape: self.network_shape,
            source_bytes: self.source_bytes,
            tool: self.tool.clone(),
            tools: self.tools.clone(),
            by_tool: self.by_tool.iter().map(Verdict::said).collect(),
        }
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

impl SaidVerdict {
    /// The typed verdict again, its sentences left behind (they are rendered from it).
    pub fn into_verdict(self) -> Verdict {
        Verdict {
            rows: self.rows.into_iter().map(SaidRow::into_row).collect(),
            component: self.component,
            conclusive: self.conclusive,
            finding: self.finding,
            advice: self.advice,
            backup_window_s: self.backup_window_s,
            restore: self.restore,
            basis: self.basis,
            open: self.open,
            dedup_limit: self.dedup_limit,
            target: self.target,
            network_shape: self.network_shape,
            source_bytes: self.source_bytes,
            tool: self.tool,
            tools: self.tools,
            by_tool: self
                .by_tool
                .into_iter()
                .map(SaidVerdict::into_verdict)
                .collect(),
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

impl SaidRow {
    fn of(row: &VerdictRow) -> SaidRow {
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

    fn into_row(self) -> VerdictRow {
        VerdictRow {
            test: self.test,
            label: self.label,
            tool: self.tool,
            mb_per_s: self.mb_per_s,
            basis: self.basis,
            spread_pct: self.spread_pct,
            repeats: self.repeats,
            runs_total: self.runs_total,
            runs_valid: self.runs_valid,
            valid: self.valid,
            flags: self.flags,
            cpu_pct: self.cpu_pct,
            lab_cpu_pct: self.lab_cpu_pct,
            other_cpu_pct: self.other_cpu_pct,
            bottleneck: self.bottleneck,
            candidate: self.candidate,
            stage: self.stage.map(|stage| stage.attribution),
            busy: self.busy,
            no_figure: self.no_figure,
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
        verdict.said().serialize(serializer)
    }

    /// Reads a said verdict back as the typed one; its sentences are rendered again on demand.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Verdict, D::Error> {
        SaidVerdict::deserialize(deserializer).map(SaidVerdict::into_verdict)
    }
}
