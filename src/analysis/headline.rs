//! A finished campaign at a glance, for the list: what the backup itself did and which
//! component the verdict names. Kept with the campaign when it is judged, so the list reads it
//! instead of judging again.

use serde::{Deserialize, Serialize};

use super::Verdict;
use super::words::component_word;
use crate::spec::TestKind;

/// What the list shows of a judged campaign besides its verdict line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Headline {
    /// The backup's own test (full or network backup, or one tool's backup), when the
    /// campaign ran one.
    pub backup_test: Option<TestKind>,
    /// That test's table figure, MB/s: the median of its valid repeats at its best point.
    pub backup_mb_per_s: Option<f64>,
    /// Whether that figure rests on valid runs.
    pub backup_valid: Option<bool>,
    /// What that figure measures: the steady window or the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_basis: Option<super::points::Basis>,
    /// How many of the runs at that figure's point are valid, of all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_runs_valid: Option<(usize, usize)>,
    /// The backup tool whose backup `backup_test` is (`restic compression=max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_tool: Option<String>,
    /// When the campaign compared several tools: each one's backup, MB/s, in their order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_backups: Vec<(String, Option<f64>)>,
    /// The component the verdict names, in a word or two.
    pub component: Option<String>,
    /// False when the verdict asks for runs to be redone first.
    pub conclusive: bool,
    /// The judging rules it was drawn under (`JUDGEMENT_VERSION`; 0 before they were counted).
    #[serde(default)]
    pub version: u32,
}

impl Headline {
    /// The headline of a verdict.
    pub fn of(verdict: &Verdict) -> Headline {
        // A tool's backup is the campaign's backup when it ran no full backup of its own;
        // of several tools, none stands for the others.
        let backup = verdict
            .rows
            .iter()
            .filter(|row| {
                matches!(row.test, TestKind::FullBackup | TestKind::NetworkBackup)
                    || (row.test == TestKind::ToolBackup && verdict.by_tool.is_empty())
            })
            .find(|row| row.mb_per_s.is_some());
        let backup_tool = backup
            .filter(|row| row.test == TestKind::ToolBackup)
            .and_then(|_| verdict.tools.first())
            .map(|line| line.label.clone());
        let tool_backups = if verdict.by_tool.is_empty() {
            Vec::new()
        } else {
            verdict
                .tools
                .iter()
                .map(|line| (line.label.clone(), line.backup_mb_s))
                .collect()
        };
        Headline {
            backup_test: backup.map(|row| row.test),
            backup_mb_per_s: backup.and_then(|row| row.mb_per_s),
            backup_valid: backup.and_then(|row| row.valid),
            backup_basis: backup.and_then(|row| row.basis),
            backup_runs_valid: backup.map(|row| (row.runs_valid, row.runs_total)),
            backup_tool,
            tool_backups,
            component: verdict.component.map(|c| component_word(c).to_string()),
            conclusive: verdict.conclusive,
            version: super::JUDGEMENT_VERSION,
        }
    }
}
