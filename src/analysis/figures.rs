//! Each test's figure for the verdict: the median steady-state MB/s of its repeats at its best
//! parameter point, with their spread, preferring valid runs.

use crate::engine::result::{RunResult, RunStatus};
use crate::engine::validity::FlagCode;
use crate::spec::TestKind;

/// What the verdict knows of one test.
#[derive(Debug, Clone)]
pub struct TestFigure<'a> {
    pub test: TestKind,
    /// Median of the repeats' figures (steady-state MB/s where the run found its steady state).
    pub mb_per_s: f64,
    /// Half the repeats' range relative to the median, %; `None` when measured once.
    pub spread_pct: Option<f64>,
    /// Runs the figure rests on.
    pub repeats: usize,
    /// Runs measured at the figure's point, valid or not.
    pub runs_total: usize,
    /// Whether the figure rests on valid runs only.
    pub valid: bool,
    /// The flags of the runs it rests on, when they are not valid.
    pub flags: Vec<FlagCode>,
    /// The run closest to the median: its stages, CPU and drive figures stand for the test.
    pub run: &'a RunResult,
}

/// Each test that ran, in table order, with its figure when any run of it finished.
pub fn per_test(runs: &[RunResult]) -> Vec<(TestKind, Option<TestFigure<'_>>)> {
    let mut tests: Vec<TestKind> = runs.iter().map(|run| run.test).collect();
    tests.sort();
    tests.dedup();
    tests
        .into_iter()
        .map(|test| (test, best_point(runs, test)))
        .collect()
}

/// The parameter point of `test` with the highest median, among points with a valid run when
/// there is one.
fn best_point(runs: &[RunResult], test: TestKind) -> Option<TestFigure<'_>> {
    let done: Vec<&RunResult> = runs
        .iter()
        .filter(|run| run.test == test && run.status == RunStatus::Done && run.mb_per_s > 0.0)
        .collect();
    let mut points: Vec<Vec<&RunResult>> = Vec::new();
    for run in done {
        match points
            .iter_mut()
            .find(|point| point[0].params == run.params)
        {
            Some(point) => point.push(run),
            None => points.push(vec![run]),
        }
    }
    let figures: Vec<TestFigure<'_>> = points.into_iter().map(|p| figure_of(test, p)).collect();
    let any_valid = figures.iter().any(|figure| figure.valid);
    figures
        .into_iter()
        .filter(|figure| figure.valid || !any_valid)
        .max_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s))
}

/// A run counts as valid when it was judged valid, or when it was stored before runs were
/// judged (there is nothing to hold against it).
fn counts_as_valid(run: &RunResult) -> bool {
    run.validity.as_ref().is_none_or(|validity| validity.valid)
}

fn figure_of(test: TestKind, runs: Vec<&RunResult>) -> TestFigure<'_> {
    let runs_total = runs.len();
    let valid: Vec<&RunResult> = runs
        .iter()
        .copied()
        .filter(|r| counts_as_valid(r))
        .collect();
    let is_valid = !valid.is_empty();
    let chosen = if is_valid { valid } else { runs };
    let mut values: Vec<(f64, &RunResult)> = chosen.iter().map(|r| (r.figure(), *r)).collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2].0
    } else {
        (values[n / 2 - 1].0 + values[n / 2].0) / 2.0
    };
    let spread_pct =
        (n >= 2 && median > 0.0).then(|| (values[n - 1].0 - values[0].0) / 2.0 / median * 100.0);
    let mut flags: Vec<FlagCode> = chosen
        .iter()
        .filter_map(|run| run.validity.as_ref())
        .flat_map(|validity| validity.flags.iter().map(|flag| flag.code))
        .collect();
    flags.sort();
    flags.dedup();
    TestFigure {
        test,
        mb_per_s: (median * 10.0).round() / 10.0,
        spread_pct,
        repeats: n,
        runs_total,
        valid: is_valid,
        flags: if is_valid { Vec::new() } else { flags },
        run: values[n / 2].1,
    }
}
