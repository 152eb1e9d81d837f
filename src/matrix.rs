//! The points of a parameter sweep: finished runs grouped by test and parameters, with the
//! median and spread of their repeats, and the best combination of each test marked.

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
    /// At least one run at this point is valid, and the figures are its valid runs'.
    pub valid: bool,
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

/// Median and range of repeated measurements of one thing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: usize,
}

impl Stat {
    /// The figures of a set of measurements.
    pub fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        Self {
            median: median(&values),
            min: values.first().copied().unwrap_or(0.0),
            max: values.last().copied().unwrap_or(0.0),
            runs: values.len(),
        }
    }

    /// Half the min–max range relative to the median, in percent: the runs' own spread
    /// (0 for a single run, which shows none).
    pub fn spread_pct(&self) -> f64 {
        if self.runs < 2 || self.median <= 0.0 {
            return 0.0;
        }
        (self.max - self.min) / 2.0 / self.median * 100.0
    }
}

/// Test, buffers, block size, streams, clients: what makes runs the same point.
type PointKey = (TestKind, u32, u64, u32, u32);

/// Every measured point, ordered by test, buffers, block size and streams.
pub fn points(runs: &[RunRecord]) -> Vec<Point> {
    let mut groups: Vec<(PointKey, Vec<(f64, bool)>)> = Vec::new();
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
        let figure = (result.figure(), result.is_valid());
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
            let valid = figures.iter().any(|(_, valid)| *valid);
            let values = figures
                .into_iter()
                .filter(|(_, run_valid)| *run_valid || !valid)
                .map(|(figure, _)| figure)
                .collect();
            let stat = Stat::of(values);
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
            }
        })
        .collect();
    for test in TestKind::ALL {
        // The best among the valid points when there are any: a fast point whose runs are not
        // valid is not a choice.
        let any_valid = points.iter().any(|point| point.test == test && point.valid);
        let best = points
            .iter()
            .enumerate()
            .filter(|(_, point)| point.test == test && (point.valid || !any_valid))
            .max_by(|(_, a), (_, b)| a.median.total_cmp(&b.median))
            .map(|(index, _)| index);
        if let Some(index) = best {
            points[index].best = true;
        }
    }
    points
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

/// The sweep's answer in one sentence: the best point of `test`, how far it is above the
/// worst, and, when the runner-up's range reaches it, that the two are within each other's
/// spread. `None` when the test has fewer than two points.
pub fn best_sentence(points: &[Point], test: TestKind) -> Option<String> {
    let any_valid = points.iter().any(|p| p.test == test && p.valid);
    let mut of_test: Vec<&Point> = points
        .iter()
        .filter(|p| p.test == test && (p.valid || !any_valid))
        .collect();
    if of_test.len() < 2 {
        return None;
    }
    of_test.sort_by(|a, b| b.median.total_cmp(&a.median));
    let (best, runner_up, worst) = (of_test[0], of_test[1], of_test[of_test.len() - 1]);
    let mut sentence = format!(
        "Best: {} at {:.1} MB/s, {:+.0} % over the worst ({}, {:.1} MB/s).",
        best.setting(),
        best.median,
        if worst.median > 0.0 {
            (best.median - worst.median) / worst.median * 100.0
        } else {
            0.0
        },
        worst.setting(),
        worst.median
    );
    if !any_valid {
        sentence.push_str(" No run of the sweep is valid: redo it before choosing (see the runs).");
    } else if best.runs < 2 {
        sentence.push_str(" Each point was measured once, so its spread is unknown.");
    } else if runner_up.max >= best.min {
        sentence.push_str(&format!(
            " The runner-up, {} at {:.1} MB/s, is within its spread: either will do.",
            runner_up.setting(),
            runner_up.median
        ));
    }
    Some(sentence)
}

/// The median of sorted values.
pub fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
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
            valid: true,
        }
    }

    #[test]
    fn the_sweep_answers_with_its_best_point_first() {
        let points = vec![
            point(8, 64, 1, &[300.0, 310.0]),
            point(32, 256, 4, &[400.0, 396.0]),
            point(16, 256, 4, &[380.0, 390.0]),
        ];
        assert_eq!(
            best_sentence(&points, TestKind::FullBackup).as_deref(),
            Some(
                "Best: 32 × 256 KiB with 4 streams at 398.0 MB/s, +30 % over the worst \
                 (8 × 64 KiB with 1 stream, 305.0 MB/s)."
            )
        );
        let close = vec![
            point(8, 64, 1, &[300.0, 310.0]),
            point(32, 256, 4, &[400.0, 390.0]),
            point(16, 256, 4, &[380.0, 392.0]),
        ];
        let sentence = best_sentence(&close, TestKind::FullBackup).expect("a sweep");
        assert!(
            sentence.ends_with(
                "The runner-up, 16 × 256 KiB with 4 streams at 386.0 MB/s, is within its \
                 spread: either will do."
            ),
            "{sentence}"
        );
        assert_eq!(best_sentence(&points[..1], TestKind::FullBackup), None);
    }

    #[test]
    fn a_fast_point_whose_runs_are_not_valid_is_not_the_best() {
        let mut invalid = point(64, 1024, 8, &[900.0, 910.0]);
        invalid.valid = false;
        let points = vec![
            point(8, 64, 1, &[300.0, 310.0]),
            point(32, 256, 4, &[400.0, 396.0]),
            invalid,
        ];
        let sentence = best_sentence(&points, TestKind::FullBackup).expect("a sweep");
        assert!(
            sentence.starts_with("Best: 32 × 256 KiB with 4 streams at 398.0 MB/s"),
            "{sentence}"
        );
        let none_valid: Vec<Point> = points
            .into_iter()
            .map(|mut point| {
                point.valid = false;
                point
            })
            .collect();
        let sentence = best_sentence(&none_valid, TestKind::FullBackup).expect("a sweep");
        assert!(
            sentence.starts_with("Best: 64 × 1 MiB with 8 streams"),
            "{sentence}"
        );
        assert!(
            sentence
                .ends_with("No run of the sweep is valid: redo it before choosing (see the runs).")
        );
    }

    #[test]
    fn medians_of_odd_and_even() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 5.0, 9.0]), 5.0);
        assert_eq!(median(&[1.0, 3.0, 5.0, 9.0]), 4.0);
    }
}
