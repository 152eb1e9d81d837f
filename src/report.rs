//! A campaign's results as one document: the JSON of `backlab run --json` and the text table.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::analysis::{Verdict, format_duration};
use crate::engine::result::{RunResult, RunStatus};
use crate::spec::CampaignSpec;

/// The campaign a report belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignHeader {
    pub name: String,
    pub spec: CampaignSpec,
}

/// Everything a campaign measured and concluded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignReport {
    pub campaign: CampaignHeader,
    pub runs: Vec<RunResult>,
    pub bottleneck: Verdict,
}

/// The bottleneck table with the verdict, recommendations, warnings and failures under it.
pub fn render_table(report: &CampaignReport) -> String {
    let mut out = String::new();
    let verdict = &report.bottleneck;
    let _ = writeln!(out, "{:<26}{:>8}{:>6}  Bottleneck?", "Test", "MB/s", "CPU");
    for row in &verdict.rows {
        let mb_per_s = row
            .mb_per_s
            .map_or_else(|| "failed".to_string(), |value| format!("{value:.1}"));
        let cpu = row
            .cpu_pct
            .map_or_else(|| "-".to_string(), |value| format!("{value:.0}%"));
        let bottleneck = match row.bottleneck {
            Some(true) => "Yes",
            Some(false) => "No",
            None => "-",
        };
        let _ = writeln!(out, "{:<26}{mb_per_s:>8}{cpu:>6}  {bottleneck}", row.label);
    }
    let _ = writeln!(out, "Verdict: {}.", verdict.verdict.trim_end_matches('.'));
    let _ = writeln!(out, "{}", verdict.summary);
    if let Some(window) = verdict.backup_window_s {
        let _ = writeln!(out, "Backup window: {}", format_duration(window));
    }
    for recommendation in &verdict.recommendations {
        let _ = writeln!(out, "  - {recommendation}");
    }
    for run in &report.runs {
        for warning in &run.warnings {
            let _ = writeln!(out, "warning ({}): {warning}", run.test);
        }
        if run.status != RunStatus::Done {
            let error = run.error.as_deref().unwrap_or("no reason recorded");
            let _ = writeln!(out, "{} {:?}: {error}", run.test, run.status);
        }
    }
    out
}
