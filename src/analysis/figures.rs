//! Each test's figure for the verdict: its best point from the results model
//! ([`super::points`]), with the run that stands for it.

use super::points::{Basis, Point, RunEntry, RunStanding};
use crate::engine::result::RunResult;
use crate::engine::validity::FlagCode;
use crate::spec::TestKind;

/// What the verdict knows of one test.
#[derive(Debug, Clone)]
pub struct TestFigure<'a> {
    pub test: TestKind,
    /// The point's figure (median MB/s of the runs it rests on).
    pub mb_per_s: f64,
    /// Whether that figure is steady-state or whole-run MB/s.
    pub basis: Basis,
    /// Half the runs' range relative to the median, %; `None` when it rests on one run.
    pub spread_pct: Option<f64>,
    /// Runs the figure rests on.
    pub repeats: usize,
    /// Runs at the figure's point, whatever became of them.
    pub runs_total: usize,
    /// Runs at the figure's point that are valid.
    pub runs_valid: usize,
    /// Whether the figure rests on valid runs only.
    pub valid: bool,
    /// The flags of the runs it rests on, when they are not valid.
    pub flags: Vec<FlagCode>,
    /// The run closest to the median: its stages, CPU and drive figures stand for the test.
    pub run: &'a RunResult,
}

/// Each test that ran or is running, in table order, with its best point's figure when it
/// has one; a test whose every run is still to come is left out.
pub fn per_test<'a>(
    points: &[Point],
    runs: &[RunEntry<'a>],
) -> Vec<(TestKind, Option<TestFigure<'a>>)> {
    super::points::best_per_test(points)
        .into_iter()
        .filter(|(test, _)| {
            points
                .iter()
                .filter(|point| point.test == *test)
                .any(|point| {
                    point
                        .runs
                        .iter()
                        .any(|run| run.standing != RunStanding::Pending)
                })
        })
        .map(|(test, point)| (test, point.and_then(|point| figure_of(point, runs))))
        .collect()
}

fn figure_of<'a>(point: &Point, runs: &[RunEntry<'a>]) -> Option<TestFigure<'a>> {
    let figure = point.figure.as_ref()?;
    let run = runs
        .iter()
        .find(|run| run.number == figure.run)
        .and_then(|run| run.result)?;
    Some(TestFigure {
        test: point.test,
        mb_per_s: figure.mb_per_s,
        basis: figure.basis,
        spread_pct: figure.spread_pct,
        repeats: figure.n,
        runs_total: point.runs.len(),
        runs_valid: point.runs_valid,
        valid: figure.valid,
        flags: figure.flags.clone(),
        run,
    })
}
