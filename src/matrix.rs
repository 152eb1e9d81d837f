//! A parameter sweep's answer: whether a campaign sweeps, which test its charts show, and
//! which point is best, in words. The points themselves come from the results model.

pub use crate::analysis::points::Point;
use crate::spec::TestKind;

/// A point's figure for a sweep's chart or sentence: MB/s, 0 without one.
pub fn mb(point: &Point) -> f64 {
    point.figure.as_ref().map_or(0.0, |figure| figure.mb_per_s)
}

/// How many runs a point's figure rests on.
fn n(point: &Point) -> usize {
    point.figure.as_ref().map_or(0, |figure| figure.n)
}

/// Whether the runs sweep any parameter (a matrix campaign). Tools compared are not a sweep:
/// each tool's points are its own, and a tool is never a "best point" of another's.
pub fn is_sweep(points: &[Point]) -> bool {
    points
        .iter()
        .any(|point| sweeps(points, point.test, point.params.tool.as_ref()))
}

/// Whether `test` run with `tool` has more than one point.
fn sweeps(points: &[Point], test: TestKind, tool: Option<&crate::spec::ToolRun>) -> bool {
    points
        .iter()
        .filter(|point| point.test == test && point.params.tool.as_ref() == tool)
        .count()
        > 1
}

/// The test a sweep chart shows by default: the full backup, else the last test measured
/// that sweeps (a tool test only when one tool ran).
pub fn headline_test(points: &[Point]) -> Option<TestKind> {
    if points.iter().any(|p| p.test == TestKind::FullBackup) {
        return Some(TestKind::FullBackup);
    }
    let tools = crate::analysis::tools::tools_of(points).len();
    points
        .iter()
        .rev()
        .filter(|point| !point.test.runs_tool() || tools < 2)
        .find(|point| sweeps(points, point.test, point.params.tool.as_ref()))
        .or_else(|| points.last())
        .map(|point| point.test)
}

/// The sweep's answer in a sentence or two. A best point of `test` is named only when it
/// beats the runner-up by more than their noise (the rule `/compare` uses); otherwise the
/// answer says that no point stands out, over what range, and `cap`, the component the
/// verdict names, when there is one; with a single valid point among others, that nothing is
/// chosen. `None` when the test has fewer than two points.
pub fn best_sentence(points: &[Point], test: TestKind, cap: Option<&str>) -> Option<String> {
    // Of a dataset sent in generations, the last generation's points compete, as for the
    // verdict.
    let generation = crate::analysis::points::last_generation(points, test);
    let at = |p: &Point| p.test == test && p.params.generation == generation;
    let any_valid = points.iter().any(|p| at(p) && p.is_valid());
    let mut of_test: Vec<&Point> = points
        .iter()
        .filter(|p| at(p) && p.figure.is_some() && (p.is_valid() || !any_valid))
        .collect();
    let measured = points
        .iter()
        .filter(|p| at(p) && p.figure.is_some())
        .count();
    if let [only] = of_test.as_slice()
        && measured > 1
    {
        return Some(format!(
            "Only one point of the sweep is valid, {} at {:.1} MB/s: the other {} are not, so              nothing is chosen; redo them (see the runs).",
            only.setting(),
            mb(only),
            measured - 1
        ));
    }
    if of_test.len() < 2 {
        return None;
    }
    // Fastest first, the point marked best (which the model judged against its runner-up)
    // ahead of any other of the same median.
    of_test.sort_by(|a, b| mb(b).total_cmp(&mb(a)).then(b.best.cmp(&a.best)));
    let (best, runner_up, worst) = (of_test[0], of_test[1], of_test[of_test.len() - 1]);
    let over = |other: &Point| {
        if mb(other) > 0.0 {
            (mb(best) - mb(other)) / mb(other) * 100.0
        } else {
            0.0
        }
    };
    let left_out = points
        .iter()
        .filter(|p| p.test == test && p.figure.is_some())
        .count()
        - of_test.len();
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
            mb(best),
            over(worst),
            worst.setting(),
            mb(worst)
        ));
    }
    if best.stands_out {
        return Some(format!(
            "Best: {} at {:.1} MB/s, {:+.0} % over the runner-up ({}, {:.1} MB/s) and {:+.0} % \
             over the worst ({}, {:.1} MB/s).{not_valid}",
            best.setting(),
            mb(best),
            over(runner_up),
            runner_up.setting(),
            mb(runner_up),
            over(worst),
            worst.setting(),
            mb(worst)
        ));
    }
    let why = if n(best) < 2 || n(runner_up) < 2 {
        "each point was measured once, so its noise is unknown"
    } else {
        "they are within each other's noise"
    };
    let mut sentence = format!(
        "No point stands out: the best, {} at {:.1} MB/s, does not beat the runner-up, {} at \
         {:.1} MB/s ({why}). The {} points lie between {:.1} and {:.1} MB/s ({:.0} % apart).",
        best.setting(),
        mb(best),
        runner_up.setting(),
        mb(runner_up),
        of_test.len(),
        mb(worst),
        mb(best),
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
    use crate::analysis::points::{Figure, PointRun, RunStanding, mark_best};
    use crate::noise::{Side, Stat};
    use crate::spec::RunParams;

    fn point(buffers: u32, block_kib: u64, streams: u32, values: &[f64]) -> Point {
        let noise = Side::of(values.iter().map(|v| (*v, 0.0)).collect(), true);
        let stat: Stat = noise.stat;
        Point {
            test: TestKind::FullBackup,
            params: RunParams {
                buffers,
                block_size: block_kib << 10,
                streams,
                ..RunParams::example()
            },
            runs: (1..=values.len())
                .map(|number| PointRun {
                    number,
                    standing: RunStanding::Valid,
                })
                .collect(),
            runs_valid: values.len(),
            figure: Some(Figure {
                mb_per_s: stat.median,
                basis: Default::default(),
                whole_run_mb_per_s: stat.median,
                min: stat.min,
                max: stat.max,
                spread_pct: None,
                n: values.len(),
                valid: true,
                flags: Vec::new(),
                noise,
                run: 1,
            }),
            best: false,
            stands_out: false,
        }
    }

    fn invalidate(point: &mut Point) {
        if let Some(figure) = point.figure.as_mut() {
            figure.valid = false;
            figure.noise.valid = false;
        }
        point.runs_valid = 0;
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
    fn an_upload_sweep_names_the_part_size_and_parts_in_flight_of_its_best_point() {
        let upload = |part_mib: u64, in_flight: u32, values: &[f64]| {
            let mut point = point(32, 256, 2, values);
            point.params.part_size = Some(part_mib << 20);
            point.params.concurrency = Some(in_flight);
            point
        };
        let points = marked(vec![
            upload(8, 4, &[198.0, 200.0, 202.0]),
            upload(8, 16, &[298.0, 300.0, 302.0]),
            upload(32, 4, &[308.0, 310.0, 312.0]),
            upload(32, 16, &[418.0, 420.0, 422.0]),
        ]);
        let best = best_sentence(&points, TestKind::FullBackup, None).expect("a sweep");
        assert!(
            best.starts_with(
                "Best: 32 × 256 KiB with 2 streams, 32 MiB parts, 16 in flight at 420.0 MB/s"
            ),
            "{best}"
        );
        // Within each other's noise, no pair is named.
        let close = marked(vec![
            upload(8, 4, &[380.0, 400.0, 420.0]),
            upload(8, 16, &[385.0, 405.0, 425.0]),
            upload(32, 4, &[382.0, 402.0, 422.0]),
            upload(32, 16, &[378.0, 398.0, 418.0]),
        ]);
        let sentence = best_sentence(&close, TestKind::FullBackup, None).expect("a sweep");
        assert!(sentence.starts_with("No point stands out"), "{sentence}");
        assert!(sentence.contains("parts"), "{sentence}");
    }

    #[test]
    fn a_fast_point_whose_runs_are_not_valid_is_not_the_best() {
        let mut invalid = point(64, 1024, 8, &[900.0, 910.0]);
        invalidate(&mut invalid);
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
                    invalidate(&mut point);
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
}

#[cfg(test)]
mod tools_tests {
    use super::*;
    use crate::analysis::points::{Point, RunEntry, points};
    use crate::engine::result::{RunResult, RunStatus};
    use crate::spec::{RunParams, ToolRun};

    fn tool_backup(name: &str, mb_per_s: f64) -> RunResult {
        let mut run = RunResult::failed(
            TestKind::ToolBackup,
            RunParams {
                tool: Some(ToolRun {
                    name: name.to_string(),
                    params: Default::default(),
                }),
                ..RunParams::example()
            },
            String::new(),
        );
        run.status = RunStatus::Done;
        run.error = None;
        run.mb_per_s = mb_per_s;
        run.bytes = 1 << 30;
        run.seconds = 2.0;
        run
    }

    /// Three tools' backups are a comparison, not a sweep: no chart of points and no "best"
    /// sentence ranks one tool as a setting of another.
    #[test]
    fn tools_compared_are_not_a_sweep() {
        let runs = [
            tool_backup("restic", 50.0),
            tool_backup("borg", 180.0),
            tool_backup("tar-zstd", 190.0),
        ];
        let points: Vec<Point> = points(&RunEntry::of_results(&runs));
        assert_eq!(points.len(), 3);
        assert!(!is_sweep(&points));
        assert!(points.iter().all(|point| point.best));
        // A tool's point is named by its tool, never by the lab's buffers.
        assert_eq!(points[1].setting(), "borg");
    }
}
