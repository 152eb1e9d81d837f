//! Two campaigns side by side: runs matched by test and parameters, the change in percent, and
//! whether the change is larger than the runs' own spread.

pub use crate::matrix::Stat;
use crate::spec::{RunParams, TestKind};
use crate::store::{RunRecord, RunState};

/// A change smaller than this is treated as noise when a point was measured only once.
pub const NOISE_FLOOR_PCT: f64 = 5.0;

/// One matched point.
#[derive(Debug, Clone)]
pub struct Row {
    pub test: TestKind,
    pub params: RunParams,
    pub a: Option<Stat>,
    pub b: Option<Stat>,
}

impl Row {
    /// B against A in percent.
    pub fn delta_pct(&self) -> Option<f64> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if a.median > 0.0 => Some((b.median - a.median) / a.median * 100.0),
            _ => None,
        }
    }

    /// The larger of the two sides' spreads, never below the noise floor.
    pub fn spread_pct(&self) -> f64 {
        let a = self.a.map_or(0.0, |s| s.spread_pct());
        let b = self.b.map_or(0.0, |s| s.spread_pct());
        a.max(b).max(NOISE_FLOOR_PCT)
    }

    /// Whether the change stands out of the runs' own spread.
    pub fn changed(&self) -> bool {
        self.delta_pct()
            .is_some_and(|delta| delta.abs() > self.spread_pct())
    }
}

/// The points of both campaigns, in A's order, then those only B has.
pub fn rows(a: &[RunRecord], b: &[RunRecord]) -> Vec<Row> {
    let a_points = group(a);
    let b_points = group(b);
    let mut rows: Vec<Row> = a_points
        .iter()
        .map(|(test, params, stat)| Row {
            test: *test,
            params: params.clone(),
            a: Some(*stat),
            b: b_points
                .iter()
                .find(|(t, p, _)| t == test && p == params)
                .map(|(_, _, stat)| *stat),
        })
        .collect();
    for (test, params, stat) in &b_points {
        if !rows
            .iter()
            .any(|row| row.test == *test && &row.params == params)
        {
            rows.push(Row {
                test: *test,
                params: params.clone(),
                a: None,
                b: Some(*stat),
            });
        }
    }
    rows
}

fn group(runs: &[RunRecord]) -> Vec<(TestKind, RunParams, Stat)> {
    let mut groups: Vec<(TestKind, RunParams, Vec<f64>)> = Vec::new();
    for run in runs.iter().filter(|run| run.status == RunState::Done) {
        let Some(result) = &run.result else { continue };
        match groups
            .iter_mut()
            .find(|(test, params, _)| *test == run.test && *params == run.params)
        {
            Some((_, _, values)) => values.push(result.mb_per_s),
            None => groups.push((run.test, run.params.clone(), vec![result.mb_per_s])),
        }
    }
    groups
        .into_iter()
        .map(|(test, params, values)| (test, params, Stat::of(values)))
        .collect()
}
