//! Backup tools compared on the same data: one line per tool (and parameters) with its
//! backup, incremental and restore figures, what it used and kept, whether its restore was
//! verified, and the component that limits its backup, judged from the campaign's ceilings
//! and that tool's own runs alone. A campaign of several tools is judged once per tool, so
//! one tool's figure is never set beside another's ceiling.

use serde::{Deserialize, Serialize};

use super::Verdict;
use super::findings::Component;
use super::points::{Point, RunEntry};
use crate::engine::result::RunResult;
use crate::engine::tool::ToolRun;
use crate::spec::TestKind;

/// One tool's line of the comparison.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ToolLine {
    pub tool: ToolRun,
    /// The tool and its parameters as every row names it (`restic compression=max`).
    #[serde(default)]
    pub label: String,
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
    /// Requests its backup's run made of the bucket its repository is in (the repository's
    /// creation among them: a fixed few that weigh on a small source), per GiB backed up (a
    /// tool whose repository was in a bucket, its requests counted by the lab's relay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_gib: Option<f64>,
    pub reduction: Option<f64>,
    /// Its restore held every source file as it was (`None`: no restore ran).
    pub restore_verified: Option<bool>,
    /// The files and bytes its restore was checked on, file by file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_files: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_bytes: Option<u64>,
    /// The component that limits its backup, and whether that is conclusive.
    pub component: Option<Component>,
    pub conclusive: bool,
    /// No one component limits it: they slow each other down, and `component` is where they
    /// meet, the first place to look.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interference: bool,
}

impl ToolLine {
    /// The component that limits the tool's backup as every table writes it: `target`,
    /// `shared device?` while not conclusive, `-` when none is named.
    pub fn limited_by(&self) -> String {
        let open = if self.conclusive { "" } else { "?" };
        if self.interference {
            return match self.component {
                Some(Component::Tool) => format!("interference, at {}{open}", self.tool.name),
                Some(component) => {
                    format!(
                        "interference, at the {}{open}",
                        super::component_word(component)
                    )
                }
                None => format!("interference{open}"),
            };
        }
        match (self.component, self.conclusive) {
            (Some(Component::Tool), true) => self.tool.name.clone(),
            (Some(Component::Tool), false) => format!("{}?", self.tool.name),
            (Some(component), true) => super::component_word(component).to_string(),
            (Some(component), false) => format!("{}?", super::component_word(component)),
            (None, _) => "-".to_string(),
        }
    }

    /// "verified: N files, B bytes", "NOT verified", or `-` when no restore ran.
    pub fn verified_words(&self) -> String {
        match (
            self.restore_verified,
            self.verified_files,
            self.verified_bytes,
        ) {
            (Some(true), Some(files), Some(bytes)) => format!(
                "verified: {}, {}",
                super::counted(files, "file", "files"),
                crate::size::format_bytes(bytes)
            ),
            (Some(true), ..) => "verified".to_string(),
            (Some(false), ..) => "NOT verified".to_string(),
            (None, ..) => "-".to_string(),
        }
    }
}

/// The tools a campaign ran a first night of (backup, ceiling, incremental, restore), each
/// once, in the order of its points. A life is shown by its nights, not in this table.
pub fn tools_of(points: &[Point]) -> Vec<&ToolRun> {
    let mut tools: Vec<&ToolRun> = Vec::new();
    for tool in points
        .iter()
        .filter(|point| point.test != TestKind::ToolLife)
        .filter_map(|point| point.params.tool.as_ref())
    {
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    tools
}

/// Whether a test with these parameters belongs to `tool`'s verdict: the campaign's other
/// tests are every tool's ceilings, the tool tests only their own tool's.
fn belongs(test: TestKind, params_tool: Option<&ToolRun>, tool: &ToolRun) -> bool {
    !test.runs_tool() || params_tool == Some(tool)
}

/// The runs one tool's verdict rests on.
pub fn own_runs<'a>(runs: &[RunEntry<'a>], tool: &ToolRun) -> Vec<RunEntry<'a>> {
    runs.iter()
        .filter(|run| belongs(run.test, run.params.tool.as_ref(), tool))
        .copied()
        .collect()
}

/// The points one tool's verdict rests on.
pub fn own_points(points: &[Point], tool: &ToolRun) -> Vec<Point> {
    points
        .iter()
        .filter(|point| belongs(point.test, point.params.tool.as_ref(), tool))
        .cloned()
        .collect()
}

/// `tool`'s line, from its own points and runs and the verdict drawn from them.
pub fn line(
    tool: &ToolRun,
    points: &[Point],
    runs: &[RunEntry<'_>],
    verdict: &Verdict,
) -> ToolLine {
    let best = |test: TestKind| {
        points
            .iter()
            .filter(|point| point.test == test && point.params.tool.as_ref() == Some(tool))
            .find(|point| point.best)
            .and_then(|point| point.figure.as_ref())
    };
    let run_of = |test: TestKind| -> Option<&RunResult> {
        let figure = best(test)?;
        runs.iter()
            .find(|run| run.number == figure.run)
            .and_then(|run| run.result)
    };
    let backup = run_of(TestKind::ToolBackup).and_then(|run| run.tool.as_ref());
    let restore = run_of(TestKind::ToolRestore).and_then(|run| run.tool.as_ref());
    let verified = restore.and_then(|figures| figures.verified.as_ref());
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
        label: tool.label(),
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
        requests_per_gib: backup
            .and_then(|figures| figures.requests_per_gib())
            .map(|value| (value * 10.0).round() / 10.0),
        reduction: backup
            .and_then(|figures| figures.reduction())
            .map(|value| (value * 100.0).round() / 100.0),
        restore_verified: verified.map(|verified| verified.ok()),
        verified_files: verified.filter(|v| v.ok()).map(|v| v.files),
        verified_bytes: verified.filter(|v| v.ok()).map(|v| v.bytes),
        component: verdict.component,
        conclusive: verdict.conclusive,
        interference: matches!(
            verdict.finding,
            super::findings::Finding::Interference { .. }
        ),
    }
}
