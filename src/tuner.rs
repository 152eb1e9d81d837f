//! The adaptive search over a matrix's points: which points to run next, from what the runs so
//! far measured, and when to stop.
//!
//! It is a coordinate search with repeats on the leaders. From a start the seed chooses, it
//! measures the points along one list (buffers, block size, streams, part size, parts in
//! flight, clients) through the best point so far, every value of a short list and the two
//! neighbours of a long one, moves to the best and goes on along the next list, until no line
//! through the best point has an unmeasured point the rule asks for. Then it repeats the best
//! point and its contenders (the runner-up, and every point its noise cannot yet be told from)
//! until the best beats each by the rule `/compare` uses ([`stands_out`]), or every contender
//! has had the campaign's repeats and none can be told apart (within noise), or the budget of
//! runs is spent. A contender measured once is one within [`SCREEN_PCT`] of the best.
//!
//! Pure: figures in, the next points out. The lab queues them and feeds their figures back.

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::noise::{FAMILY_ALPHA, Side, stands_out};

/// How far below the best a point measured once may lie and still be repeated: a single run
/// shows no noise, and disks vary this much between runs.
pub const SCREEN_PCT: f64 = 10.0;

/// A campaign's search as the store keeps it: its bounds, and once it stopped, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchState {
    pub budget_runs: usize,
    pub seed: u64,
    /// The runs the full sweep would take, and its points.
    pub full_runs: usize,
    pub points_total: usize,
    pub max_repeats: usize,
    /// Batches of runs queued so far.
    pub steps: u32,
    pub stopped: Option<Stopped>,
}

/// The matrix's points: where each lies on the six lists, and how long each list is.
#[derive(Debug, Clone)]
pub struct Space {
    pub at: Vec<[usize; 6]>,
    pub lengths: [usize; 6],
    /// Runs one repeat of each point takes.
    pub runs: Vec<usize>,
}

/// What the runs so far say of one point, for the test the search decides on.
#[derive(Debug, Clone, Copy, Default)]
pub struct Observed {
    /// Repeats run (whatever became of them).
    pub visits: usize,
    /// Its figure's noise: the median, spread and validity of its runs; `None` without one.
    pub side: Option<Side>,
}

/// The search's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub seed: u64,
    pub budget_runs: usize,
    /// Runs queued so far.
    pub runs_used: usize,
    /// Most repeats of one point.
    pub max_repeats: usize,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run one more repeat of each of these points.
    Run(Vec<usize>),
    Stop(Stopped),
}

/// Why a search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The best point beats every contender by more than their noise.
    StandsOut,
    /// The leaders had every repeat and cannot be told apart.
    WithinNoise,
    /// The next runs would pass the budget.
    BudgetSpent,
    /// No run measured anything.
    NothingMeasured,
    /// The campaign was cancelled.
    Cancelled,
    /// The campaign names no test whose points could be judged.
    Ended,
}

impl Stopped {
    /// Why the search stopped, in words.
    pub fn words(self) -> &'static str {
        match self {
            Stopped::StandsOut => {
                "the best point beats every contender by more than their noise (the rule \
                 /compare uses)"
            }
            Stopped::WithinNoise => {
                "the leading points had every repeat and stay within each other's noise: no \
                 point stands out"
            }
            Stopped::BudgetSpent => "its budget of runs is spent",
            Stopped::NothingMeasured => "no run measured anything",
            Stopped::Cancelled => "the campaign was cancelled",
            Stopped::Ended => "the campaign names no test whose points could be judged",
        }
    }
}

/// The next step of a search over `space`, given what each point measured.
pub fn next(space: &Space, observed: &[Observed], bounds: Bounds) -> Step {
    let count = space.at.len();
    if count == 0 {
        return Step::Stop(Stopped::NothingMeasured);
    }
    let Some(best) = leader(observed) else {
        // Nothing measured yet: the seeded start, or, when started points measured nothing,
        // another point not yet tried.
        let untried: Vec<usize> = (0..count).filter(|i| observed[*i].visits == 0).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(bounds.seed);
        let Some(&start) = untried.get(rng.random_range(0..untried.len().max(1))) else {
            return Step::Stop(Stopped::NothingMeasured);
        };
        return within_budget(space, bounds, vec![start]);
    };
    if let Some(batch) = explore(space, observed, best, bounds.seed) {
        return within_budget(space, bounds, batch);
    }
    match settle(observed, best, bounds.max_repeats) {
        Ok(batch) => within_budget(space, bounds, batch),
        Err(stopped) => Step::Stop(stopped),
    }
}

/// The point with the highest median; valid figures first when any point has one.
pub fn leader(observed: &[Observed]) -> Option<usize> {
    let any_valid = observed
        .iter()
        .any(|o| o.side.is_some_and(|side| side.valid));
    observed
        .iter()
        .enumerate()
        .filter_map(|(i, o)| Some((i, o.side?)))
        .filter(|(_, side)| side.valid || !any_valid)
        .max_by(|(ia, a), (ib, b)| {
            a.stat
                .median
                .total_cmp(&b.stat.median)
                .then(a.stat.runs.cmp(&b.stat.runs))
                .then(ib.cmp(ia))
        })
        .map(|(i, _)| i)
}

/// The unmeasured points on the first line through `best` (lists in the seed's order) that
/// the search measures: every value of a list of three or fewer, the two neighbours of a
/// longer one. `None` once every such line is measured.
fn explore(space: &Space, observed: &[Observed], best: usize, seed: u64) -> Option<Vec<usize>> {
    let mut axes: Vec<usize> = (0..6).filter(|axis| space.lengths[*axis] > 1).collect();
    axes.shuffle(&mut ChaCha8Rng::seed_from_u64(seed.wrapping_add(1)));
    let here = space.at[best];
    for axis in axes {
        let wanted = |index: usize| {
            space.lengths[axis] <= 3 || index + 1 == here[axis] || index == here[axis] + 1
        };
        let missing: Vec<usize> = (0..space.at.len())
            .filter(|&i| {
                let at = space.at[i];
                (0..6).all(|other| other == axis || at[other] == here[other])
                    && at[axis] != here[axis]
                    && wanted(at[axis])
                    && observed[i].visits == 0
            })
            .collect();
        if !missing.is_empty() {
            return Some(missing);
        }
    }
    None
}

/// Repeats for the best point and its contenders, or why none are needed.
fn settle(observed: &[Observed], best: usize, max_repeats: usize) -> Result<Vec<usize>, Stopped> {
    let Some(leading) = observed[best].side else {
        return Err(Stopped::NothingMeasured);
    };
    let mut rivals: Vec<(usize, Side)> = observed
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best)
        .filter_map(|(i, o)| Some((i, o.side?)))
        .filter(|(_, side)| side.valid || !leading.valid)
        .collect();
    rivals.sort_by(|a, b| b.1.stat.median.total_cmp(&a.1.stat.median));
    let contenders: Vec<usize> = rivals
        .iter()
        .enumerate()
        .filter(|(rank, (_, side))| {
            *rank == 0
                || if side.stat.runs < 2 || leading.stat.runs < 2 {
                    side.stat.median >= leading.stat.median * (1.0 - SCREEN_PCT / 100.0)
                } else {
                    !stands_out(&leading, side, FAMILY_ALPHA)
                }
        })
        .map(|(_, (i, _))| *i)
        .collect();
    if contenders.is_empty() {
        // A matrix whose other points measured nothing: the one figure is the answer.
        return Err(Stopped::StandsOut);
    }
    let visits = |i: usize| observed[i].visits;
    let runs = |i: usize| observed[i].side.map_or(0, |side| side.stat.runs);
    // Every contender (and the best) measured twice before any is judged.
    let first: Vec<usize> = std::iter::once(best)
        .chain(contenders.iter().copied())
        .filter(|&i| runs(i) < 2 && visits(i) < max_repeats)
        .collect();
    if !first.is_empty() {
        return Ok(first);
    }
    let side_of = |i: usize| observed[i].side.unwrap_or(leading);
    let unsettled: Vec<usize> = contenders
        .iter()
        .copied()
        .filter(|&i| runs(i) < 2 || !stands_out(&leading, &side_of(i), FAMILY_ALPHA))
        .collect();
    if unsettled.is_empty() {
        return Err(Stopped::StandsOut);
    }
    let more: Vec<usize> = std::iter::once(best)
        .chain(unsettled)
        .filter(|&i| visits(i) < max_repeats)
        .collect();
    if more.is_empty() {
        Err(Stopped::WithinNoise)
    } else {
        Ok(more)
    }
}

/// The runs a search over `space` likely takes, for its estimate before it runs: its start,
/// two passes along each list (through the start and through the point it moves to; every
/// value of a list of three or fewer, the two neighbours of a longer one), and the best point
/// and one contender repeated `max_repeats` times, each point at its runs per repeat. A surface with one clear leader takes about this
/// many; a flat or noisy one climbs further and repeats more contenders, up to its budget,
/// which stays the bound.
pub fn likely_runs(space: &Space, max_repeats: usize) -> usize {
    let points = space.at.len();
    if points == 0 {
        return 0;
    }
    let one_pass: usize = space
        .lengths
        .iter()
        .filter(|length| **length > 1)
        .map(|length| if *length <= 3 { length - 1 } else { 2 })
        .sum();
    let explored = (1 + 2 * one_pass).min(points);
    let leaders = points.min(2);
    let repeats = leaders * max_repeats.saturating_sub(1);
    let runs_per_point = space.runs.iter().sum::<usize>().div_ceil(points);
    (explored + repeats) * runs_per_point
}

/// The batch cut to what the budget leaves, in order; a stop when not even its first fits.
fn within_budget(space: &Space, bounds: Bounds, batch: Vec<usize>) -> Step {
    let mut left = bounds.budget_runs.saturating_sub(bounds.runs_used);
    let mut fitting = Vec::new();
    for point in batch {
        let runs = space.runs[point];
        if runs > left {
            break;
        }
        left -= runs;
        fitting.push(point);
    }
    if fitting.is_empty() {
        Step::Stop(Stopped::BudgetSpent)
    } else {
        Step::Run(fitting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    /// A 3 × 3 × 3 space (buffers × block × streams), one run per repeat.
    fn cube() -> Space {
        let mut at = Vec::new();
        for b in 0..3 {
            for k in 0..3 {
                for s in 0..3 {
                    at.push([b, k, s, 0, 0, 0]);
                }
            }
        }
        Space {
            runs: vec![1; at.len()],
            at,
            lengths: [3, 3, 3, 1, 1, 1],
        }
    }

    /// Runs a search on a surface: `truth(point)` MB/s with `cv` Gaussian noise per run.
    /// Returns the point chosen, the runs spent and why it stopped.
    fn search(
        space: &Space,
        truth: &dyn Fn(&[usize; 6]) -> f64,
        cv: f64,
        seed: u64,
        budget: usize,
        repeats: usize,
    ) -> (usize, usize, Stopped) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 1000);
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); space.at.len()];
        let mut used = 0;
        loop {
            let observed: Vec<Observed> = values
                .iter()
                .map(|v| Observed {
                    visits: v.len(),
                    side: (!v.is_empty())
                        .then(|| Side::of(v.iter().map(|x| (*x, 0.0)).collect(), true)),
                })
                .collect();
            let bounds = Bounds {
                seed,
                budget_runs: budget,
                runs_used: used,
                max_repeats: repeats,
            };
            match next(space, &observed, bounds) {
                Step::Run(batch) => {
                    for point in batch {
                        let mean = truth(&space.at[point]);
                        let noise = Normal::new(mean, mean * cv).expect("a distribution");
                        values[point].push(noise.sample(&mut rng));
                        used += space.runs[point];
                    }
                }
                Step::Stop(stopped) => {
                    return (leader(&observed).expect("a leader"), used, stopped);
                }
            }
        }
    }

    #[test]
    fn a_clear_peak_is_found_with_well_under_half_the_sweeps_runs() {
        let space = cube();
        // Best at 2 buffers-index, 1 block-index, 2 streams-index; others at least 15 % lower.
        let truth = |at: &[usize; 6]| {
            300.0
                - 30.0 * (at[0] as f64 - 2.0).abs()
                - 45.0 * (at[1] as f64 - 1.0).abs()
                - 25.0 * (at[2] as f64 - 2.0).abs()
        };
        let best = space
            .at
            .iter()
            .position(|at| *at == [2, 1, 2, 0, 0, 0])
            .expect("the peak");
        let full = space.at.len() * 3;
        for seed in 0..5 {
            let (chosen, used, stopped) = search(&space, &truth, 0.02, seed, full * 4 / 10, 3);
            assert_eq!(chosen, best, "seed {seed}: {stopped:?} after {used} runs");
            assert_eq!(stopped, Stopped::StandsOut, "seed {seed}");
            assert!(used * 10 <= full * 4, "seed {seed}: {used} of {full} runs");
        }
    }

    #[test]
    fn a_flat_surface_stops_within_noise_or_at_its_budget_and_says_so() {
        let space = cube();
        for seed in 0..5 {
            let (_, used, stopped) = search(&space, &|_| 200.0, 0.03, seed, 32, 3);
            assert!(
                matches!(stopped, Stopped::WithinNoise | Stopped::BudgetSpent),
                "seed {seed}: {stopped:?}"
            );
            assert!(used <= 32, "seed {seed}: {used}");
        }
    }

    #[test]
    fn a_long_list_is_climbed_by_neighbours_to_its_plateau() {
        // Eight block sizes rising until the fifth, flat after: any plateau point is right.
        let space = Space {
            at: (0..8).map(|k| [0, k, 0, 0, 0, 0]).collect(),
            lengths: [1, 8, 1, 1, 1, 1],
            runs: vec![1; 8],
        };
        let truth = |at: &[usize; 6]| 10.0 * (at[1].min(5) + 1) as f64;
        for seed in 0..5 {
            let (chosen, used, _) = search(&space, &truth, 0.01, seed, 10, 3);
            assert!(space.at[chosen][1] >= 5, "seed {seed}: chose {chosen}");
            assert!(used <= 10, "seed {seed}: {used}");
        }
    }

    /// The estimate's likely count is what a search of a surface with a clear leader spends
    /// (between half and one and a half times it; 11 to 18 runs against 17 here), and below
    /// the budget, which stays the bound.
    #[test]
    fn the_likely_runs_are_what_a_clear_search_spends() {
        let space = cube();
        let likely = likely_runs(&space, 3);
        let truth = |at: &[usize; 6]| {
            300.0
                - 30.0 * (at[0] as f64 - 2.0).abs()
                - 45.0 * (at[1] as f64 - 1.0).abs()
                - 25.0 * (at[2] as f64 - 2.0).abs()
        };
        let budget = space.at.len() * 3 * 4 / 10;
        assert!(likely < budget, "{likely} of a budget of {budget}");
        for seed in 0..5 {
            let (_, used, _) = search(&space, &truth, 0.02, seed, budget, 3);
            assert!(
                2 * used >= likely && 2 * used <= 3 * likely,
                "seed {seed}: spent {used}, estimated {likely}"
            );
        }
        // Each point's runs count: two tests a point take twice the runs.
        let doubled = Space {
            runs: vec![2; space.at.len()],
            ..space.clone()
        };
        assert_eq!(likely_runs(&doubled, 3), 2 * likely);
    }

    #[test]
    fn nothing_fits_a_spent_budget() {
        let space = cube();
        let observed = vec![Observed::default(); space.at.len()];
        let bounds = Bounds {
            seed: 0,
            budget_runs: 4,
            runs_used: 4,
            max_repeats: 3,
        };
        assert_eq!(
            next(&space, &observed, bounds),
            Step::Stop(Stopped::BudgetSpent)
        );
    }
}
