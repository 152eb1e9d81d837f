//! A campaign's plan judged before it runs, in the spec's own terms: the fields whose values
//! cannot give a valid figure, with the minimum each needs, and how long the campaign takes.

use serde::Serialize;

use super::RunPlan;
use crate::engine::expect;

/// A value a spec gave that cannot give a valid run, with what it needs: the campaign still
/// runs as asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanWarning {
    /// The field to change, as errors name fields.
    pub field: String,
    pub message: String,
}

/// What a campaign's runs need and how long they take, before any of them runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expectation {
    /// Seconds the whole campaign is expected to take, run after run.
    pub expected_s: f64,
    /// Whether some runs end with their data at a rate not known before: the figure is then
    /// the longest they may take.
    pub at_most: bool,
    /// The longest the campaign may take: every run that ends once steady running to its cap.
    pub longest_s: f64,
    /// Each distinct problem once.
    pub warnings: Vec<PlanWarning>,
}

impl Expectation {
    /// The expectation in one line, for the CLI and the form: how long `runs` runs take, and
    /// the longest they may.
    pub fn summary(&self, runs: usize) -> String {
        let format = crate::analysis::format_duration;
        let mut line = format!(
            "{runs} run(s), expected to take {}{}",
            if self.at_most { "at most " } else { "about " },
            format(self.expected_s)
        );
        if self.longest_s > self.expected_s * 1.25 {
            line.push_str(&format!(
                " (at most {} if runs that end once steady never settle)",
                format(self.longest_s)
            ));
        }
        line
    }
}

/// Judges a campaign's runs: the sum of their expected lengths, and a warning for each value
/// too small to give a valid run.
pub fn expect(plans: &[RunPlan]) -> Expectation {
    let mut expected_s = 0.0;
    let mut longest_s = 0.0;
    let mut at_most = false;
    let mut warnings: Vec<PlanWarning> = Vec::new();
    for plan in plans {
        let expected = expect::expected(plan);
        expected_s += expected.seconds;
        longest_s += expected.longest_s;
        at_most |= expected.at_most;
        for warning in warnings_of(plan) {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    Expectation {
        expected_s: (expected_s * 10.0).round() / 10.0,
        at_most,
        longest_s: (longest_s * 10.0).round() / 10.0,
        warnings,
    }
}

fn warnings_of(plan: &RunPlan) -> Vec<PlanWarning> {
    let params = &plan.params;
    let mut warnings = Vec::new();
    // A backup that will shoe-shine needs several cycles; "auto" stops at its cap before.
    if let Some(cycles) = expect::cycles_need(plan)
        && params
            .duration_s
            .is_some_and(|duration| duration < cycles.min_s)
    {
        warnings.push(PlanWarning {
            field: "params.duration_s".to_string(),
            message: format!("{}; give at least {:.0} s", cycles.why, cycles.min_s.ceil()),
        });
    }
    let Some(need) = expect::need(plan) else {
        return warnings;
    };
    match params.duration_s {
        Some(duration) if duration < need.min_s && (params.time_based || params.until_steady) => {
            warnings.push(PlanWarning {
                field: "params.duration_s".to_string(),
                message: format!(
                    "{}; give at least {:.0} s, or \"auto\"",
                    need.why,
                    need.min_s.ceil()
                ),
            });
        }
        _ => {}
    }
    if !params.time_based
        && let Some(bytes) = params.size
        && let super::TargetPlan::Tape(config) = &plan.target
    {
        let needed = (crate::engine::validity::DRIVE_BUFFERS
            * config.buffer_bytes as f64
            * f64::from(config.drives)) as u64;
        if bytes < needed {
            warnings.push(PlanWarning {
                field: "params.size".to_string(),
                message: format!(
                    "{}; {} per run is less than {}: leave size out (time-based) or give more",
                    need.why,
                    crate::size::format_bytes(bytes),
                    crate::size::format_bytes(needed)
                ),
            });
        }
    }
    warnings
}
