//! Two campaigns side by side: runs matched by test and parameters, the change in percent, and
//! whether the change is larger than the runs' own spread (never assumed when it was not measured).

pub use crate::matrix::Stat;
use crate::spec::{RunParams, TestKind};
use crate::store::{RunRecord, RunState};

/// One matched point.
#[derive(Debug, Clone)]
pub struct Row {
    pub test: TestKind,
    pub params: RunParams,
    pub a: Option<Side>,
    pub b: Option<Side>,
}

/// One campaign's measurements of a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    /// Median, range and count of the figures (steady-state MB/s where found).
    pub stat: Stat,
    /// Whether the figures come from valid runs only.
    pub valid: bool,
}

impl Row {
    /// B against A in percent.
    pub fn delta_pct(&self) -> Option<f64> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if a.stat.median > 0.0 => {
                Some((b.stat.median - a.stat.median) / a.stat.median * 100.0)
            }
            _ => None,
        }
    }

    /// The larger of the two sides' spreads; `None` when either side was measured once, so
    /// its spread is unknown.
    pub fn spread_pct(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a.stat.runs >= 2 && b.stat.runs >= 2).then(|| a.stat.spread_pct().max(b.stat.spread_pct()))
    }

    /// Whether the change stands out of the runs' own spread: both sides repeated and valid,
    /// the change larger than either side's spread, and their ranges apart.
    pub fn changed(&self) -> bool {
        let (Some(a), Some(b), Some(spread), Some(delta)) =
            (self.a, self.b, self.spread_pct(), self.delta_pct())
        else {
            return false;
        };
        a.valid
            && b.valid
            && delta.abs() > spread
            && (a.stat.max < b.stat.min || b.stat.max < a.stat.min)
    }

    /// Why a change is not highlighted even though the medians differ, if there is a reason
    /// beyond "within the spread".
    pub fn caveat(&self) -> Option<&'static str> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if a.stat.runs < 2 || b.stat.runs < 2 => {
                Some("measured once: spread unknown")
            }
            (Some(a), Some(b)) if !a.valid || !b.valid => Some("runs not valid"),
            _ => None,
        }
    }
}

/// The points of both campaigns, in A's order, then those only B has.
pub fn rows(a: &[RunRecord], b: &[RunRecord]) -> Vec<Row> {
    let a_points = group(a);
    let b_points = group(b);
    let mut rows: Vec<Row> = a_points
        .iter()
        .map(|(test, params, side)| Row {
            test: *test,
            params: params.clone(),
            a: Some(*side),
            b: b_points
                .iter()
                .find(|(t, p, _)| t == test && p == params)
                .map(|(_, _, side)| *side),
        })
        .collect();
    for (test, params, side) in &b_points {
        if !rows
            .iter()
            .any(|row| row.test == *test && &row.params == params)
        {
            rows.push(Row {
                test: *test,
                params: params.clone(),
                a: None,
                b: Some(*side),
            });
        }
    }
    rows
}

/// The figures of each point, from its valid runs when it has any.
fn group(runs: &[RunRecord]) -> Vec<(TestKind, RunParams, Side)> {
    type Figures = Vec<(f64, bool)>;
    let mut groups: Vec<(TestKind, RunParams, Figures)> = Vec::new();
    for run in runs.iter().filter(|run| run.status == RunState::Done) {
        let Some(result) = &run.result else { continue };
        // Runs stored before runs were judged have nothing held against them.
        let figure = (
            result.figure(),
            result.validity.as_ref().is_none_or(|v| v.valid),
        );
        match groups
            .iter_mut()
            .find(|(test, params, _)| *test == run.test && *params == run.params)
        {
            Some((_, _, values)) => values.push(figure),
            None => groups.push((run.test, run.params.clone(), vec![figure])),
        }
    }
    groups
        .into_iter()
        .map(|(test, params, figures)| {
            let valid: Vec<f64> = figures.iter().filter(|f| f.1).map(|f| f.0).collect();
            let side = if valid.is_empty() {
                Side {
                    stat: Stat::of(figures.iter().map(|f| f.0).collect()),
                    valid: false,
                }
            } else {
                Side {
                    stat: Stat::of(valid),
                    valid: true,
                }
            };
            (test, params, side)
        })
        .collect()
}
