//! Backup tools compared on the same data: one line per tool (and parameters) with its
//! backup, incremental and restore figures, what it used and kept, whether its restore was
//! verified, and the component that limits its backup, judged from the campaign's ceilings
//! and that tool's own runs alone.

use serde::{Deserialize, Serialize};

use super::findings::Component;
use super::points::{Point, RunEntry};
use crate::engine::result::RunResult;
use crate::engine::survey::Survey;
use crate::engine::tool::ToolRun;
use crate::spec::TestKind;

/// One tool's line of the comparison.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ToolLine {
    pub tool: ToolRun,
    /// What the tool's programs printed as their version.
    pub version: Option<String>,
    /// The point figures (MB/s) of its tests, as every view shows them.
    pub backup_mb_s: Option<f64>,
    pub ceiling_mb_s: Option<f64>,
    pub incremental_mb_s: Option<f64>,
    pub restore_mb_s: Option<f64>,
    /// CPU seconds of its whole process tree per GiB backed up, in its backup.
    pub cpu_s_per_gib: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    /// What its backup kept on the target, and source bytes per stored byte.
    pub stored_bytes: Option<u64>,
    pub reduction: Option<f64>,
    /// Its restore held every source file as it was (`None`: no restore ran).
    pub restore_verified: Option<bool>,
    /// The component that limits its backup, and whether that is conclusive.
    pub component: Option<Component>,
    pub conclusive: bool,
}

/// The comparison of every tool the campaign ran, in the order they first appear; empty for a
/// campaign that ran none.
pub fn compare(points: &[Point], runs: &[RunEntry<'_>], survey: Option<&Survey>) -> Vec<ToolLine> {
    let mut tools: Vec<&ToolRun> = Vec::new();
    for point in points {
        if let Some(tool) = point.params.tool.as_ref()
            && !tools.contains(&tool)
        {
            tools.push(tool);
        }
    }
    tools
        .into_iter()
        .map(|tool| line(tool, points, runs, survey))
        .collect()
}

fn line(
    tool: &ToolRun,
    points: &[Point],
    runs: &[RunEntry<'_>],
    survey: Option<&Survey>,
) -> ToolLine {
    // The campaign's other tests are every tool's ceilings; the tool tests are this tool's.
    let own: Vec<RunEntry<'_>> = runs
        .iter()
        .filter(|run| !run.test.runs_tool() || run.params.tool.as_ref() == Some(tool))
        .copied()
        .collect();
    let judgement = super::Judgement::of(&own, survey);
    let best = |test: TestKind| {
        points
            .iter()
            .filter(|point| point.test == test && point.params.tool.as_ref() == Some(tool))
            .find_map(|point| point.figure.as_ref())
    };
    let run_of = |test: TestKind| -> Option<&RunResult> {
        let figure = best(test)?;
        runs.iter()
            .find(|run| run.number == figure.run)
            .and_then(|run| run.result)
    };
    let backup = run_of(TestKind::ToolBackup).and_then(|run| run.tool.as_ref());
    let restore = run_of(TestKind::ToolRestore).and_then(|run| run.tool.as_ref());
    let version = [
        TestKind::ToolBackup,
        TestKind::ToolCeiling,
        TestKind::ToolIncremental,
        TestKind::ToolRestore,
    ]
    .into_iter()
    .find_map(|test| run_of(test).and_then(|run| run.tool.as_ref()))
    .map(|figures| figures.version.clone());
    ToolLine {
        tool: tool.clone(),
        version,
        backup_mb_s: best(TestKind::ToolBackup).map(|figure| figure.mb_per_s),
        ceiling_mb_s: best(TestKind::ToolCeiling).map(|figure| figure.mb_per_s),
        incremental_mb_s: best(TestKind::ToolIncremental).map(|figure| figure.mb_per_s),
        restore_mb_s: best(TestKind::ToolRestore).map(|figure| figure.mb_per_s),
        cpu_s_per_gib: backup
            .and_then(|figures| figures.cpu_s_per_gib())
            .map(|value| (value * 100.0).round() / 100.0),
        peak_rss_bytes: backup.map(|figures| figures.peak_rss_bytes),
        stored_bytes: backup.and_then(|figures| figures.stored_bytes),
        reduction: backup
            .and_then(|figures| figures.reduction())
            .map(|value| (value * 100.0).round() / 100.0),
        restore_verified: restore
            .and_then(|figures| figures.verified.as_ref())
            .map(|verified| verified.ok()),
        component: judgement.verdict.component,
        conclusive: judgement.verdict.conclusive,
    }
}
