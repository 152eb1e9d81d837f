//! The points of a parameter sweep: finished runs grouped by test and parameters, with the
//! median and spread of their repeats, and the best combination of each test marked.

use crate::noise::{FAMILY_ALPHA, Side, stands_out, within_run_variance};
pub use crate::noise::{Stat, median};
use crate::spec::{TestKind, format_bytes};
use crate::store::{RunRecord, RunState};

/// One parameter combination of one test.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub test: TestKind,
    pub buffers: u32,
    pub block_size: u64,
    pub streams: u32,
    /// Clients of a network backup; 0 for the local tests.
    pub clients: u32,
    /// Median MB/s of the done runs at this point (steady-state where the run found it).
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Done runs measured at this point.
    pub runs: usize,
    /// The highest median of this test (among its valid points, when it has any).
    pub best: bool,
    /// The best point beats the runner-up by more than their noise (see [`best_sentence`]);
    /// false for every other point.
    pub stands_out: bool,
    /// The runs measured at this point, and how many of them are valid.
    pub runs_total: usize,
    pub runs_valid: usize,
    /// At least one run at this point is valid, and the figures are its valid runs'.
    pub valid: bool,
    /// The same figures with their mean and variance, for telling a point from noise.
    pub noise: Side,
}

impl Point {
    /// The whole setting in words: `32 × 64 KiB with 4 streams` (and the clients of a network
    /// backup).
    pub fn setting(&self) -> String {
        let streams = if self.streams == 1 {
            "1 stream".to_string()
        } else {
            format!("{} streams", self.streams)
        };
        if self.clients > 0 {
            format!(
                "{}, {} clients × {streams}",
                self.combination(),
                self.clients
            )
        } else {
            format!("{} with {streams}", self.combination())
        }
    }

    /// The buffers × block size combination, as the legend names it.
    pub fn combination(&self) -> String {
        format!("{} × {}", self.buffers, format_bytes(self.block_size))
    }
}

/// Test, buffers, block size, streams, clients: what makes runs the same point.
type PointKey = (TestKind, u32, u64, u32, u32);

/// One run's figure, whether it is valid, and the variance its own window puts on it.
type RunFigure = (f64, bool, f64);

/// Every measured point, ordered by test, buffers, block size and streams.
pub fn points(runs: &[RunRecord]) -> Vec<Point> {
    let mut groups: Vec<(PointKey, Vec<RunFigure>)> = Vec::new();
    for run in runs {
        let Some(result) = run.result.as_ref().filter(|_| run.status == RunState::Done) else {
            continue;
        };
        let key = (
            run.test,
            run.params.buffers,
            run.params.block_size,
            run.params.streams,
            run.params.clients.unwrap_or(0),
        );
        let figure = (
            result.figure(),
            result.is_valid(),
            within_run_variance(result),
        );
        match groups.iter_mut().find(|(existing, _)| *existing == key) {
            Some((_, values)) => values.push(figure),
            None => groups.push((key, vec![figure])),
        }
    }
    groups.sort_by_key(|((test, buffers, block, streams, clients), _)| {
        (
            TestKind::ALL.iter().position(|t| t == test),
            *buffers,
            *block,
            *streams,
            *clients,
        )
    });
    let mut points: Vec<Point> = groups
        .into_iter()
        .map(|((test, buffers, block_size, streams, clients), figures)| {
            // As the verdict does: a point's figure rests on its valid runs when it has any.
            let runs_total = figures.len();
            let runs_valid = figures.iter().filter(|(_, valid, _)| *valid).count();
            let valid = runs_valid > 0;
            let values: Vec<(f64, f64)> = figures
                .into_iter()
                .filter(|(_, run_valid, _)| *run_valid || !valid)
                .map(|(figure, _, within)| (figure, within))
                .collect();
            let noise = Side::of(values, valid);
            let stat = noise.stat;
            Point {
                valid,
                test,
                buffers,
                block_size,
                streams,
                clients,
                median: stat.median,
                min: stat.min,
                max: stat.max,
                runs: stat.runs,
                best: false,
                stands_out: false,
                runs_total,
                runs_valid,
                noise,
            }
        })
        .collect();
    mark_best(&mut points);
    points
}

/// Marks each test's best point: the highest median among its valid points (all of them when
/// none is valid), and whether it beats the runner-up by more than their noise.
fn mark_best(points: &mut [Point]) {
    for test in TestKind::ALL {
        // A fast point whose runs are not valid is not a choice.
        let any_valid = points.iter().any(|point| point.test == test && point.valid);
        let candidate = |point: &Point| point.test == test && (point.valid || !any_valid);
        let best = points
            .iter()
            .enumerate()
            .filter(|(_, point)| candidate(point))
            .max_by(|(_, a), (_, b)| a.median.total_cmp(&b.median))
            .map(|(index, _)| index);
        if let Some(index) = best {
            points[index].best = true;
            let runner_up = points
                .iter()
                .enumerate()
                .filter(|(i, point)| *i != index && candidate(point))
                .max_by(|(_, a), (_, b)| a.median.total_cmp(&b.median))
                .map(|(_, point)| point.noise);
            points[index].stands_out = runner_up
                .is_some_and(|other| stands_out(&points[index].noise, &other, FAMILY_ALPHA));
        }
    }
}

/// Whether the runs sweep any parameter (a matrix campaign).
pub fn is_sweep(points: &[Point]) -> bool {
    TestKind::ALL
        .iter()
        .any(|test| points.iter().filter(|point| point.test == *test).count() > 1)
}

/// The test a sweep chart shows by default: the full backup, else the last test measured.
pub fn headline_test(points: &[Point]) -> Option<TestKind> {
    if points.iter().any(|p| p.test == TestKind::FullBackup) {
        return Some(TestKind::FullBackup);
    }
    points.last().map(|point| point.test)
}

/// The sweep's answer in a sentence or two. A best point of `test` is named only when it
/// beats the runner-up by more than their noise (the rule `/compare` uses); otherwise the
/// answer says that no point stands out, over what range, and `cap`, the component the
/// verdict names, when there is one. `None` when the test has fewer than two points.
pub fn best_sentence(points: &[Point], test: TestKind, cap: Option<&str>) -> Option<String> {
    let any_valid = points.iter().any(|p| p.test == test && p.valid);
    let mut of_test: Vec<&Point> = points
        .iter()
        .filter(|p| p.test == test && (p.valid || !any_valid))
        .collect();
    if of_test.len() < 2 {
        return None;
    }
    // Fastest first, the point marked best (which `points` judged against its runner-up)
    // ahead of any other of the same median.
    of_test.sort_by(|a, b| b.median.total_cmp(&a.median).then(b.best.cmp(&a.best)));
    let (best, runner_up, worst) = (of_test[0], of_test[1], of_test[of_test.len() - 1]);
    let over = |other: &Point| {
        if other.median > 0.0 {
            (best.median - other.median) / other.median * 100.0
        } else {
            0.0
        }
    };
    let left_out = points.iter().filter(|p| p.test == test).count() - of_test.len();
    let not_valid = if left_out > 0 {
        format!(" {left_out} point(s) whose runs are not valid are left out.")
    } else {
        String::new()
    };
    if !any_valid {
        return Some(format!(
            "No run of the sweep is valid: redo it before choosing (see the runs). The \
             fastest point, {} at {:.1} MB/s, was {:+.0} % over the slowest ({}, {:.1} MB/s).",
            best.setting(),
            best.median,
            over(worst),
            worst.setting(),
            worst.median
        ));
    }
    if best.stands_out {
        return Some(format!(
            "Best: {} at {:.1} MB/s, {:+.0} % over the runner-up ({}, {:.1} MB/s) and {:+.0} % \
             over the worst ({}, {:.1} MB/s).{not_valid}",
            best.setting(),
            best.median,
            over(runner_up),
            runner_up.setting(),
            runner_up.median,
            over(worst),
            worst.setting(),
            worst.median
        ));
    }
    let why = if best.runs < 2 || runner_up.runs < 2 {
        "each point was measured once, so its noise is unknown"
    } else {
        "they are within each other's noise"
    };
    let mut sentence = format!(
        "No point stands out: the best, {} at {:.1} MB/s, does not beat the runner-up, {} at \
         {:.1} MB/s ({why}). The {} points lie between {:.1} and {:.1} MB/s ({:.0} % apart).",
        best.setting(),
        best.median,
        runner_up.setting(),
        runner_up.median,
        of_test.len(),
        worst.median,
        best.median,
        over(worst)
    );
    if let Some(cap) = cap {
        sentence.push_str(&format!(
            " {} caps the backup: tuning these settings will not help.",
            crate::analysis::capitalize(cap)
        ));
    }
    sentence.push_str(&not_valid);
    Some(sentence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(buffers: u32, block_kib: u64, streams: u32, values: &[f64]) -> Point {
        let stat = Stat::of(values.to_vec());
        Point {
            test: TestKind::FullBackup,
            buffers,
            block_size: block_kib << 10,
            streams,
            clients: 0,
            median: stat.median,
            min: stat.min,
            max: stat.max,
            runs: values.len(),
            best: false,
            stands_out: false,
            runs_total: values.len(),
            runs_valid: values.len(),
            valid: true,
            noise: Side::of(values.iter().map(|v| (*v, 0.0)).collect(), true),
        }
    }

    /// Points with their best marked, as `points` marks them.
    fn marked(mut points: Vec<Point>) -> Vec<Point> {
        mark_best(&mut points);
        points
    }

    #[test]
    fn the_sweep_names_a_best_point_only_when_it_beats_the_runner_up_by_more_than_noise() {
        let points = marked(vec![
            point(8, 64, 1, &[300.0, 310.0, 305.0]),
            point(32, 256, 4, &[400.0, 396.0, 398.0]),
            point(16, 256, 4, &[380.0, 382.0, 381.0]),
        ]);
        assert_eq!(
            best_sentence(&points, TestKind::FullBackup, None).as_deref(),
            Some(
                "Best: 32 × 256 KiB with 4 streams at 398.0 MB/s, +4 % over the runner-up \
                 (16 × 256 KiB with 4 streams, 381.0 MB/s) and +30 % over the worst \
                 (8 × 64 KiB with 1 stream, 305.0 MB/s)."
            )
        );
        let close = marked(vec![
            point(8, 64, 1, &[300.0, 310.0]),
            point(32, 256, 4, &[400.0, 390.0]),
            point(16, 256, 4, &[380.0, 392.0]),
        ]);
        let sentence =
            best_sentence(&close, TestKind::FullBackup, Some("the target")).expect("a sweep");
        assert!(
            sentence.starts_with(
                "No point stands out: the best, 32 × 256 KiB with 4 streams at 395.0 MB/s, does \
                 not beat the runner-up, 16 × 256 KiB with 4 streams at 386.0 MB/s (they are \
                 within each other's noise)."
            ),
            "{sentence}"
        );
        assert!(
            sentence.ends_with(
                "The 3 points lie between 305.0 and 395.0 MB/s (30 % apart). The target caps \
                 the backup: tuning these settings will not help."
            ),
            "{sentence}"
        );
        // Measured once, no point can be told from noise, however far apart.
        let once = marked(vec![point(8, 64, 1, &[100.0]), point(32, 256, 4, &[400.0])]);
        let sentence = best_sentence(&once, TestKind::FullBackup, None).expect("a sweep");
        assert!(sentence.contains("measured once"), "{sentence}");
        assert_eq!(
            best_sentence(&points[..1], TestKind::FullBackup, None),
            None
        );
    }

    #[test]
    fn a_fast_point_whose_runs_are_not_valid_is_not_the_best() {
        let mut invalid = point(64, 1024, 8, &[900.0, 910.0]);
        invalid.valid = false;
        let points = marked(vec![
            point(8, 64, 1, &[300.0, 310.0, 305.0]),
            point(32, 256, 4, &[400.0, 396.0, 398.0]),
            invalid,
        ]);
        let sentence = best_sentence(&points, TestKind::FullBackup, None).expect("a sweep");
        assert!(
            sentence.starts_with("Best: 32 × 256 KiB with 4 streams at 398.0 MB/s"),
            "{sentence}"
        );
        assert!(
            sentence.ends_with("1 point(s) whose runs are not valid are left out."),
            "{sentence}"
        );
        let none_valid = marked(
            points
                .into_iter()
                .map(|mut point| {
                    point.valid = false;
                    point.best = false;
                    point.stands_out = false;
                    point
                })
                .collect(),
        );
        let sentence = best_sentence(&none_valid, TestKind::FullBackup, None).expect("a sweep");
        assert!(
            sentence.starts_with("No run of the sweep is valid: redo it before choosing"),
            "{sentence}"
        );
        assert!(sentence.contains("64 × 1 MiB with 8 streams"), "{sentence}");
    }

    #[test]
    fn medians_of_odd_and_even() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 5.0, 9.0]), 5.0);
        assert_eq!(median(&[1.0, 3.0, 5.0, 9.0]), 4.0);
    }
}
