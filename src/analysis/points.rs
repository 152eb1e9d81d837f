//! The results model: a campaign's runs grouped once into points — one test at one parameter
//! set — each with its figure, how many of its runs are valid, and why the others are not.
//! The verdict, the tables, the charts, `/compare`, the CSV and the JSON all read these
//! points; none of them groups runs or takes a median itself.

use serde::{Deserialize, Serialize};

use crate::engine::result::{RunResult, RunStatus};
use crate::engine::validity::FlagCode;
use crate::noise::{FAMILY_ALPHA, Side, Stat, stands_out, within_run_variance};
use crate::spec::{RunParams, TestKind, format_bytes};

/// One run as the model takes it: its number in the campaign (from 1, as every view numbers
/// runs), what it was, and how it ended.
#[derive(Debug, Clone, Copy)]
pub struct RunEntry<'a> {
    pub number: usize,
    pub test: TestKind,
    pub params: &'a RunParams,
    /// How the run ended; `None` while it is queued or running.
    pub ended: Option<RunStatus>,
    pub result: Option<&'a RunResult>,
}

impl<'a> RunEntry<'a> {
    /// The entries of finished runs held in order, numbered from 1 (the command line's runs).
    pub fn of_results(results: &'a [RunResult]) -> Vec<RunEntry<'a>> {
        results
            .iter()
            .enumerate()
            .map(|(index, result)| RunEntry {
                number: index + 1,
                test: result.test,
                params: &result.params,
                ended: Some(result.status),
                result: Some(result),
            })
            .collect()
    }

    /// The run's result when it finished done with something measured: only such a run has
    /// a figure.
    pub fn measured(&self) -> Option<&'a RunResult> {
        self.result
            .filter(|result| result.status == RunStatus::Done && result.mb_per_s > 0.0)
    }
}

/// The one validity rule: a measured run counts as valid when it was judged valid, or when it
/// was stored before runs were judged (there is nothing to hold against it).
pub fn counts_as_valid(result: &RunResult) -> bool {
    result
        .validity
        .as_ref()
        .is_none_or(|validity| validity.valid)
}

/// How one run stands at its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStanding {
    /// Measured and valid.
    Valid,
    /// Measured, and a flag holds against it.
    NotValid,
    /// Finished without a figure: nothing measured.
    NothingMeasured,
    Failed,
    /// Cancelled: cut short, or never started.
    Cancelled,
    /// Queued or running.
    Pending,
}

impl RunStanding {
    fn of(entry: &RunEntry<'_>) -> Self {
        if let Some(result) = entry.measured() {
            return if counts_as_valid(result) {
                RunStanding::Valid
            } else {
                RunStanding::NotValid
            };
        }
        match entry.ended {
            Some(RunStatus::Done) => RunStanding::NothingMeasured,
            Some(RunStatus::Failed) => RunStanding::Failed,
            Some(RunStatus::Cancelled) => RunStanding::Cancelled,
            None => RunStanding::Pending,
        }
    }

    /// The word views show for a run in this standing.
    pub fn word(self) -> &'static str {
        match self {
            RunStanding::Valid => "valid",
            RunStanding::NotValid => "not valid",
            RunStanding::NothingMeasured => "nothing measured",
            RunStanding::Failed => "failed",
            RunStanding::Cancelled => "cancelled",
            RunStanding::Pending => "pending",
        }
    }
}

/// One run at a point: its number and how it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PointRun {
    pub number: usize,
    pub standing: RunStanding,
}

/// What a figure measures: the steady window of every run it rests on, or the whole run (ramp
/// and tail included). One figure never mixes the two: a median of one run's steady rate and
/// another's whole-run rate says neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Every run it rests on found its steady state: the median of their steady MB/s.
    #[default]
    Steady,
    /// At least one of them found none (a dedup generation, a run too short to settle): the
    /// median of every one's whole-run MB/s.
    WholeRun,
}

impl Basis {
    /// The basis of `runs`' figures: steady only when every one of them found its steady state.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a RunResult>) -> Self {
        let steady = |result: &RunResult| result.steady.as_ref().is_some_and(|s| s.steady);
        if runs.into_iter().all(steady) {
            Basis::Steady
        } else {
            Basis::WholeRun
        }
    }

    /// A run's figure on this basis, and its within-run variance (none for a whole run).
    pub fn figure_of(self, result: &RunResult) -> (f64, f64) {
        match self {
            Basis::Steady => (result.figure(), within_run_variance(result)),
            Basis::WholeRun => (result.mb_per_s, 0.0),
        }
    }

    /// The words every view writes beside a figure: `steady`, `whole run`.
    pub fn word(self) -> &'static str {
        match self {
            Basis::Steady => "steady",
            Basis::WholeRun => "whole run",
        }
    }

    /// The id the CSV and the JSON use.
    pub fn id(self) -> &'static str {
        match self {
            Basis::Steady => "steady",
            Basis::WholeRun => "whole_run",
        }
    }
}

/// A point's figure: the median of its valid runs' figures, or of all its measured runs when
/// none is valid; steady-state MB/s when every one of those runs found its steady state, else
/// whole-run MB/s for every one ([`Basis`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Figure {
    /// The median, MB/s, rounded once to 0.1: every view shows this number.
    pub mb_per_s: f64,
    /// Whether it is a steady or a whole-run figure.
    #[serde(default)]
    pub basis: Basis,
    /// The median of the same runs' whole-run MB/s (ramp and tail included), rounded once.
    pub whole_run_mb_per_s: f64,
    /// The lowest and highest of the runs' figures, rounded once.
    pub min: f64,
    pub max: f64,
    /// Half the runs' range relative to the median, %; `None` when it rests on one run.
    pub spread_pct: Option<f64>,
    /// How many runs it rests on.
    pub n: usize,
    /// Whether it rests on valid runs only.
    pub valid: bool,
    /// The flags of the runs it rests on, when they are not valid.
    pub flags: Vec<FlagCode>,
    /// The same figures with their mean and variance, for telling a point from noise.
    pub noise: Side,
    /// The number of the run closest to the median: its stages, CPU and drives stand for
    /// the point.
    pub run: usize,
}

impl Figure {
    /// The figure as every view prints it: MB/s to one decimal.
    pub fn words(&self) -> String {
        format!("{:.1}", self.mb_per_s)
    }

    /// The figure with what it measures: `239.4 steady`, `181.0 whole run`.
    pub fn labelled(&self) -> String {
        format!("{} {}", self.words(), self.basis.word())
    }
}

/// One test at one parameter set, with every run measured there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Point {
    pub test: TestKind,
    pub params: RunParams,
    /// Every run at the point, in campaign order.
    pub runs: Vec<PointRun>,
    /// How many of them are valid.
    pub runs_valid: usize,
    /// `None` when no run of the point measured anything.
    pub figure: Option<Figure>,
    /// The highest figure of its test, among valid points when the test has any.
    pub best: bool,
    /// The best point beats its runner-up by more than their noise; false on every other.
    pub stands_out: bool,
}

impl Point {
    /// Whether the point's figure rests on valid runs.
    pub fn is_valid(&self) -> bool {
        self.figure.as_ref().is_some_and(|figure| figure.valid)
    }

    /// "2 of 3 valid": how many of the point's runs are valid, of all its runs.
    pub fn valid_count(&self) -> String {
        format!("{} of {} valid", self.runs_valid, self.runs.len())
    }

    /// Why the point has no figure, in the word views use: the worst of its runs' endings.
    pub fn no_figure(&self) -> Option<RunStanding> {
        if self.figure.is_some() {
            return None;
        }
        let has = |standing| self.runs.iter().any(|run| run.standing == standing);
        [
            RunStanding::Failed,
            RunStanding::Cancelled,
            RunStanding::Pending,
        ]
        .into_iter()
        .find(|standing| has(*standing))
        .or(Some(RunStanding::NothingMeasured))
    }

    /// The point's figure in words, or why it has none.
    pub fn figure_words(&self) -> String {
        match (&self.figure, self.no_figure()) {
            (Some(figure), _) => figure.words(),
            (None, Some(why)) => why.word().to_string(),
            (None, None) => "–".to_string(),
        }
    }

    /// The point's figure with what it measures (`239.4 steady`), or why it has none.
    pub fn figure_labelled(&self) -> String {
        match (&self.figure, self.no_figure()) {
            (Some(figure), _) => figure.labelled(),
            (None, Some(why)) => why.word().to_string(),
            (None, None) => "–".to_string(),
        }
    }

    /// The run numbers at the point: `#3, #4, #5`.
    pub fn run_numbers(&self) -> String {
        self.runs
            .iter()
            .map(|run| format!("#{}", run.number))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Clients of a network backup; 0 for the local tests.
    pub fn clients(&self) -> u32 {
        self.params.clients.unwrap_or(0)
    }

    /// The buffers × block size combination, as a sweep's legend names it.
    pub fn combination(&self) -> String {
        format!(
            "{} × {}",
            self.params.buffers,
            format_bytes(self.params.block_size)
        )
    }

    /// The backup tool a tool test ran, with its parameters (`restic compression=max`).
    pub fn tool_label(&self) -> Option<String> {
        self.params
            .tool
            .as_ref()
            .map(crate::engine::tool::ToolRun::label)
    }

    /// The whole setting in words: `32 × 64 KiB with 4 streams` (and the clients of a network
    /// backup, the parts of an object store's uploads: `, 16 MiB parts, 8 in flight`); a tool
    /// test's setting is its tool and the tool's parameters, since the lab's buffers and
    /// streams are not what it ran with.
    pub fn setting(&self) -> String {
        if let Some(tool) = self.tool_label() {
            return tool;
        }
        let streams = if self.params.streams == 1 {
            "1 stream".to_string()
        } else {
            format!("{} streams", self.params.streams)
        };
        let setting = match self.params.clients {
            Some(clients) => format!("{}, {clients} clients × {streams}", self.combination()),
            None => format!("{} with {streams}", self.combination()),
        };
        let setting = match (self.params.part_size, self.params.concurrency) {
            (Some(part_size), Some(concurrency)) => format!(
                "{setting}, {} parts, {concurrency} in flight",
                format_bytes(part_size)
            ),
            _ => setting,
        };
        match self.params.generation {
            Some(generation) => format!("{setting}, generation {generation}"),
            None => setting,
        }
    }
}

/// Every point of a campaign, ordered by test (table order), then by the tool (in the order
/// the campaign first ran each), buffers, block size, streams, clients, part size and parts in
/// flight; each test's best point marked (each tool's, for a tool test).
pub fn points(runs: &[RunEntry<'_>]) -> Vec<Point> {
    let mut tools: Vec<&crate::engine::tool::ToolRun> = Vec::new();
    for tool in runs.iter().filter_map(|run| run.params.tool.as_ref()) {
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    let mut groups: Vec<Vec<&RunEntry<'_>>> = Vec::new();
    // A probe's answer is not a rate: it is no point of the results.
    for run in runs.iter().filter(|run| run.test.measures_rate()) {
        match groups
            .iter_mut()
            .find(|group| group[0].test == run.test && *group[0].params == *run.params)
        {
            Some(group) => group.push(run),
            None => groups.push(vec![run]),
        }
    }
    let mut points: Vec<Point> = groups.into_iter().map(point_of).collect();
    points.sort_by(|a, b| {
        let key = |p: &Point| {
            (
                TestKind::ALL.iter().position(|test| *test == p.test),
                p.params
                    .tool
                    .as_ref()
                    .and_then(|tool| tools.iter().position(|known| *known == tool)),
                p.params.buffers,
                p.params.block_size,
                p.params.streams,
                p.clients(),
                p.params.part_size,
                p.params.concurrency,
                p.params.generation,
            )
        };
        key(a).cmp(&key(b))
    });
    mark_best(&mut points);
    points
}

fn point_of(runs: Vec<&RunEntry<'_>>) -> Point {
    let first = runs[0];
    let standings: Vec<PointRun> = runs
        .iter()
        .map(|run| PointRun {
            number: run.number,
            standing: RunStanding::of(run),
        })
        .collect();
    let measured: Vec<(usize, &RunResult)> = runs
        .iter()
        .filter_map(|run| run.measured().map(|result| (run.number, result)))
        .collect();
    let valid: Vec<(usize, &RunResult)> = measured
        .iter()
        .copied()
        .filter(|(_, result)| counts_as_valid(result))
        .collect();
    let runs_valid = valid.len();
    let figure = if valid.is_empty() {
        figure_of(&measured, false)
    } else {
        figure_of(&valid, true)
    };
    Point {
        test: first.test,
        params: first.params.clone(),
        runs: standings,
        runs_valid,
        figure,
        best: false,
        stands_out: false,
    }
}

/// The median of `runs` and its spread; the one place a point's figure is computed.
fn figure_of(runs: &[(usize, &RunResult)], valid: bool) -> Option<Figure> {
    if runs.is_empty() {
        return None;
    }
    let round = |value: f64| (value * 10.0).round() / 10.0;
    let basis = Basis::of(runs.iter().map(|(_, result)| *result));
    let mut noise = Side::of(
        runs.iter()
            .map(|(_, result)| basis.figure_of(result))
            .collect(),
        valid,
    );
    let whole = Stat::of(runs.iter().map(|(_, result)| result.mb_per_s).collect());
    let stat = noise.stat;
    // Rounded once, here: every view, `/compare` included, shows these numbers.
    noise.stat = Stat {
        median: round(stat.median),
        min: round(stat.min),
        max: round(stat.max),
        runs: stat.runs,
    };
    // The middle run stands for the point: the median run of an odd count, the higher of
    // the two middle ones of an even count.
    let mut by_figure: Vec<&(usize, &RunResult)> = runs.iter().collect();
    by_figure.sort_by(|a, b| basis.figure_of(a.1).0.total_cmp(&basis.figure_of(b.1).0));
    let run = by_figure[by_figure.len() / 2].0;
    let mut flags: Vec<FlagCode> = if valid {
        Vec::new()
    } else {
        runs.iter()
            .filter_map(|(_, result)| result.validity.as_ref())
            .flat_map(|validity| validity.flags.iter().map(|flag| flag.code))
            .collect()
    };
    flags.sort();
    flags.dedup();
    Some(Figure {
        mb_per_s: noise.stat.median,
        basis,
        whole_run_mb_per_s: round(whole.median),
        min: noise.stat.min,
        max: noise.stat.max,
        spread_pct: (stat.runs >= 2 && stat.median > 0.0).then(|| stat.spread_pct()),
        n: stat.runs,
        valid,
        flags,
        noise,
        run,
    })
}

/// Marks each test's best point: the highest figure among its valid points (all of them when
/// none is valid), and whether it beats the runner-up by more than their noise. Where a test
/// sent several generations of a dataset, only its last generation's points stand for it: the
/// nightly full once the target holds the nights before, not the first, seeding one. A tool
/// test's points are each tool's own: tools are compared, never one's point taken as the best
/// of another's.
pub fn mark_best(points: &mut [Point]) {
    let mut tools: Vec<Option<crate::engine::tool::ToolRun>> = Vec::new();
    for point in points.iter() {
        if !tools.contains(&point.params.tool) {
            tools.push(point.params.tool.clone());
        }
    }
    for test in TestKind::ALL {
        for tool in &tools {
            mark_best_of(points, test, tool.as_ref());
        }
    }
}

/// Marks the best point of `test` run with `tool` (none: the lab's own tests).
fn mark_best_of(points: &mut [Point], test: TestKind, tool: Option<&crate::engine::tool::ToolRun>) {
    let last_generation = last_generation(points, test);
    let of_test = |p: &Point| {
        p.test == test && p.params.tool.as_ref() == tool && p.params.generation == last_generation
    };
    let any_valid = points.iter().any(|p| of_test(p) && p.is_valid());
    let candidate = |p: &Point| of_test(p) && p.figure.is_some() && (p.is_valid() || !any_valid);
    let mb = |p: &Point| p.figure.as_ref().map_or(0.0, |figure| figure.mb_per_s);
    let Some(best) = points
        .iter()
        .enumerate()
        .filter(|(_, point)| candidate(point))
        .max_by(|(_, a), (_, b)| mb(a).total_cmp(&mb(b)))
        .map(|(index, _)| index)
    else {
        return;
    };
    let runner_up = points
        .iter()
        .enumerate()
        .filter(|(index, point)| *index != best && candidate(point))
        .max_by(|(_, a), (_, b)| mb(a).total_cmp(&mb(b)))
        .and_then(|(_, point)| point.figure.as_ref().map(|figure| figure.noise));
    let side = points[best].figure.as_ref().map(|figure| figure.noise);
    points[best].best = true;
    points[best].stands_out = match (side, runner_up) {
        (Some(best), Some(other)) => stands_out(&best, &other, FAMILY_ALPHA),
        _ => false,
    };
}

/// The last generation of a dataset `test` sent, when it sent several: the points that stand
/// for the test (the nightly full once the target holds the nights before).
pub fn last_generation(points: &[Point], test: TestKind) -> Option<u32> {
    points
        .iter()
        .filter(|p| p.test == test)
        .map(|p| p.params.generation)
        .max()
        .flatten()
}

/// Each test that ran, in table order, with its best point.
pub fn best_per_test(points: &[Point]) -> Vec<(TestKind, Option<&Point>)> {
    TestKind::ALL
        .into_iter()
        .filter(|test| points.iter().any(|point| point.test == *test))
        .map(|test| {
            let best = points
                .iter()
                .find(|point| point.test == test && point.best)
                .or_else(|| points.iter().find(|point| point.test == test));
            (test, best)
        })
        .collect()
}

/// How run `number` stands at its point, by the one validity rule.
pub fn standing_of(points: &[Point], number: usize) -> Option<RunStanding> {
    point_of_run(points, number)?
        .runs
        .iter()
        .find(|run| run.number == number)
        .map(|run| run.standing)
}

/// The point holding run `number`.
pub fn point_of_run(points: &[Point], number: usize) -> Option<&Point> {
    points
        .iter()
        .find(|point| point.runs.iter().any(|run| run.number == number))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::validity::{Flag, Validity};

    fn params(buffers: u32) -> RunParams {
        RunParams {
            buffers,
            ..RunParams::example()
        }
    }

    fn run(buffers: u32, mb_per_s: f64, valid: bool, status: RunStatus) -> RunResult {
        let mut result = RunResult::failed(TestKind::FullBackup, params(buffers), String::new());
        result.status = status;
        result.error = None;
        result.mb_per_s = mb_per_s;
        result.validity = Some(Validity {
            valid,
            flags: if valid {
                Vec::new()
            } else {
                vec![Flag {
                    code: FlagCode::TooShort,
                    detail: String::new(),
                }]
            },
        });
        result
    }

    #[test]
    fn a_point_rests_on_its_valid_runs_and_counts_every_run() {
        let results = vec![
            run(8, 100.0, true, RunStatus::Done),
            run(8, 300.0, false, RunStatus::Done),
            run(8, 110.0, true, RunStatus::Done),
            run(8, 0.0, false, RunStatus::Cancelled),
            run(16, 90.0, false, RunStatus::Done),
        ];
        let points = points(&RunEntry::of_results(&results));
        assert_eq!(points.len(), 2);
        let eight = &points[0];
        let figure = eight.figure.as_ref().expect("a figure");
        assert_eq!(figure.mb_per_s, 105.0, "the median of the valid runs only");
        assert_eq!(figure.n, 2);
        assert!(figure.valid);
        assert_eq!(eight.runs.len(), 4);
        assert_eq!(eight.runs_valid, 2);
        assert_eq!(eight.valid_count(), "2 of 4 valid");
        assert_eq!(eight.runs[3].standing, RunStanding::Cancelled);
        assert_eq!(eight.run_numbers(), "#1, #2, #3, #4");
        assert!(
            eight.best,
            "the valid point is best, however fast the other"
        );
        let sixteen = &points[1];
        assert!(!sixteen.best);
        assert_eq!(
            sixteen.figure.as_ref().map(|f| f.flags.clone()),
            Some(vec![FlagCode::TooShort])
        );
    }

    #[test]
    fn a_figure_is_steady_or_whole_run_never_a_mix_of_the_two() {
        let steady = |mut result: RunResult, mb_per_s: f64| {
            result.steady = Some(crate::engine::steady::SteadyFigures {
                mb_per_s,
                from_s: 1.0,
                to_s: 9.0,
                cv_pct: Some(1.0),
                steady: true,
                flush_s: 0.0,
            });
            result
        };
        let both = vec![
            steady(run(8, 180.0, true, RunStatus::Done), 200.0),
            steady(run(8, 170.0, true, RunStatus::Done), 190.0),
        ];
        let figure = points(&RunEntry::of_results(&both))[0]
            .figure
            .clone()
            .expect("a figure");
        assert_eq!((figure.basis, figure.mb_per_s), (Basis::Steady, 195.0));
        assert_eq!(figure.labelled(), "195.0 steady");
        // One of the two found no steady state: both are taken over their whole run.
        let mixed = vec![
            steady(run(8, 180.0, true, RunStatus::Done), 200.0),
            run(8, 170.0, true, RunStatus::Done),
        ];
        let point = &points(&RunEntry::of_results(&mixed))[0];
        let figure = point.figure.clone().expect("a figure");
        assert_eq!((figure.basis, figure.mb_per_s), (Basis::WholeRun, 175.0));
        assert_eq!(point.figure_labelled(), "175.0 whole run");
        assert_eq!(point.figure_words(), "175.0");
    }

    #[test]
    fn a_point_without_a_measured_run_says_why() {
        let results = vec![run(8, 0.0, false, RunStatus::Cancelled)];
        let points = points(&RunEntry::of_results(&results));
        assert_eq!(points[0].figure, None);
        assert_eq!(points[0].figure_words(), "cancelled");
    }
}
