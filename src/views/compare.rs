//! Two campaigns side by side: runs matched by test and parameters, the change in percent, and
//! whether the change stands out of the runs' own noise (never assumed when it was not measured).
//!
//! A change is highlighted only when both sides were repeated and valid, the change is larger
//! than either side's spread, and Welch's t-test finds it unlikely to be noise: p below
//! [`FAMILY_ALPHA`] divided by the number of rows tested (Bonferroni), so that comparing many
//! rows does not make one false highlight likely.

use crate::analysis::points::{Basis, Point};
use crate::noise::stands_out;
pub use crate::noise::{FAMILY_ALPHA, Side, Stat, welch_p};
use crate::spec::{RunParams, TestKind};

/// What a side's figure measures and how many of its point's runs are valid: what a row
/// prints beside each figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub basis: Basis,
    pub runs_valid: usize,
    pub runs_total: usize,
}

impl Tally {
    /// `steady, 3 of 3 valid`.
    pub fn words(&self) -> String {
        format!(
            "{}, {} of {} valid",
            self.basis.word(),
            self.runs_valid,
            self.runs_total
        )
    }
}

/// One matched point.
#[derive(Debug, Clone)]
pub struct Row {
    pub test: TestKind,
    pub params: RunParams,
    pub a: Option<Side>,
    pub b: Option<Side>,
    /// What each side's figure measures, and its count of valid runs.
    pub a_tally: Option<Tally>,
    pub b_tally: Option<Tally>,
    /// The p-value below which this row's change counts as more than noise: [`FAMILY_ALPHA`]
    /// shared among the rows that could be tested.
    pub alpha: f64,
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

    /// Welch's p-value of the change; `None` when either side was measured once.
    pub fn p_value(&self) -> Option<f64> {
        welch_p(self.a.as_ref()?, self.b.as_ref()?)
    }

    /// Whether the change stands out of the runs' own noise: both sides repeated and valid,
    /// the change larger than either side's spread, and Welch's p below the row's share of
    /// [`FAMILY_ALPHA`].
    pub fn changed(&self) -> bool {
        let (Some(a), Some(b)) = (self.a, self.b) else {
            return false;
        };
        if !self.same_basis() {
            return false;
        }
        let (better, other) = if b.stat.median >= a.stat.median {
            (b, a)
        } else {
            (a, b)
        };
        stands_out(&better, &other, self.alpha)
    }

    /// `better` or `worse` for a change that stands out of the noise (more MB/s is better);
    /// nothing for one that does not.
    pub fn direction(&self) -> Option<&'static str> {
        let delta = self.delta_pct()?;
        self.changed()
            .then_some(if delta > 0.0 { "better" } else { "worse" })
    }

    /// The change from A to B in words: `+5.1 %, more than noise`, `-0.4 %, within noise`.
    pub fn change_words(&self) -> Option<String> {
        let delta = self.delta_pct()?;
        let judged = match (self.direction(), self.caveat()) {
            (Some(direction), _) => format!("{direction}, more than noise"),
            (None, Some(caveat)) => caveat.to_string(),
            (None, None) => "within noise".to_string(),
        };
        Some(format!("{delta:+.1} %, {judged}"))
    }

    /// Whether both sides measure the same thing (both steady, or both whole run); a side
    /// whose basis is not known is taken to match.
    pub fn same_basis(&self) -> bool {
        match (self.a_tally, self.b_tally) {
            (Some(a), Some(b)) => a.basis == b.basis,
            _ => true,
        }
    }

    /// Why a change is not highlighted even though the medians differ, if there is a reason
    /// beyond "within the spread".
    pub fn caveat(&self) -> Option<&'static str> {
        if self.a.is_some() && self.b.is_some() && !self.same_basis() {
            return Some("one side steady, the other whole run");
        }
        match (self.a, self.b) {
            (Some(a), Some(b)) if a.stat.runs < 2 || b.stat.runs < 2 => {
                Some("measured once: spread unknown")
            }
            (Some(a), Some(b)) if !a.valid || !b.valid => Some("runs not valid"),
            _ => None,
        }
    }
}

/// The points a campaign's figures are judged by when set beside an earlier one: each backup
/// tool's backup (a row per tool, since tools are compared, never ranked as one), else of the
/// points both measured the full (or network) backup's, else any test's, the one the later
/// campaign measured fastest (its best point, as its verdict reports it).
pub fn headline_rows(before: &[Point], after: &[Point]) -> Vec<Row> {
    let rows = rows(before, after);
    let both = |row: &&Row| row.a.is_some() && row.b.is_some();
    let tools: Vec<Row> = rows
        .iter()
        .filter(both)
        .filter(|row| row.test == TestKind::ToolBackup)
        .cloned()
        .collect();
    if !tools.is_empty() {
        return tools;
    }
    let after_median = |row: &&Row| row.b.map_or(0.0, |side| side.stat.median);
    let fastest = |backup_only: bool| {
        rows.iter()
            .filter(both)
            .filter(|row| {
                !backup_only || matches!(row.test, TestKind::FullBackup | TestKind::NetworkBackup)
            })
            .max_by(|x, y| after_median(x).total_cmp(&after_median(y)))
    };
    fastest(true)
        .or_else(|| fastest(false))
        .cloned()
        .into_iter()
        .collect()
}

/// The points of both campaigns, in A's order, then those only B has.
pub fn rows(a: &[Point], b: &[Point]) -> Vec<Row> {
    let a_points = group(a);
    let b_points = group(b);
    let mut rows: Vec<Row> = a_points
        .iter()
        .map(|(test, params, side, tally)| {
            let b = b_points
                .iter()
                .find(|(t, p, _, _)| t == test && p == params);
            Row {
                test: *test,
                params: params.clone(),
                a: Some(*side),
                b: b.map(|(_, _, side, _)| *side),
                a_tally: Some(*tally),
                b_tally: b.map(|(_, _, _, tally)| *tally),
                alpha: FAMILY_ALPHA,
            }
        })
        .collect();
    for (test, params, side, tally) in &b_points {
        if !rows
            .iter()
            .any(|row| row.test == *test && &row.params == params)
        {
            rows.push(Row {
                test: *test,
                params: params.clone(),
                a: None,
                b: Some(*side),
                a_tally: None,
                b_tally: Some(*tally),
                alpha: FAMILY_ALPHA,
            });
        }
    }
    let tested = rows.iter().filter(|row| row.p_value().is_some()).count();
    for row in &mut rows {
        row.alpha = FAMILY_ALPHA / tested.max(1) as f64;
    }
    rows
}

/// Each point with a figure, that figure's noise side, and its tally.
fn group(points: &[Point]) -> Vec<(TestKind, RunParams, Side, Tally)> {
    points
        .iter()
        .filter_map(|point| {
            let figure = point.figure.as_ref()?;
            let tally = Tally {
                basis: figure.basis,
                runs_valid: point.runs_valid,
                runs_total: point.runs.len(),
            };
            Some((point.test, point.params.clone(), figure.noise, tally))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: &[f64], b: &[f64], rows_tested: usize) -> Row {
        Row {
            test: TestKind::ReadParallel,
            params: RunParams::example(),
            a: Some(Side::of(a.iter().map(|v| (*v, 0.0)).collect(), true)),
            b: Some(Side::of(b.iter().map(|v| (*v, 0.0)).collect(), true)),
            a_tally: None,
            b_tally: None,
            alpha: FAMILY_ALPHA / rows_tested as f64,
        }
    }

    #[test]
    fn a_change_out_of_the_noise_is_better_or_worse_and_said_so() {
        let faster = row(&[100.0, 101.0, 99.0], &[150.0, 151.0, 149.0], 1);
        assert_eq!(faster.direction(), Some("better"));
        assert_eq!(
            faster.change_words().as_deref(),
            Some("+50.0 %, better, more than noise")
        );
        let slower = row(&[150.0, 151.0, 149.0], &[100.0, 101.0, 99.0], 1);
        assert_eq!(slower.direction(), Some("worse"));
        let same = row(&[100.0, 104.0, 96.0], &[101.0, 97.0, 103.0], 1);
        assert_eq!(same.direction(), None);
        assert_eq!(same.change_words().as_deref(), Some("+1.0 %, within noise"));
        let once = row(&[100.0], &[150.0], 1);
        assert_eq!(once.direction(), None, "measured once: spread unknown");
        assert_eq!(
            once.change_words().as_deref(),
            Some("+50.0 %, measured once: spread unknown")
        );
    }

    #[test]
    fn welch_p_matches_the_textbook_value() {
        // 1, 2, 3 against 4, 5, 6: t = 3.674 on 4 degrees of freedom, p = 0.0213.
        let p = row(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 1)
            .p_value()
            .expect("both repeated");
        assert!((p - 0.0213).abs() < 0.0005, "p = {p}");
    }

    #[test]
    fn a_rerun_whose_ranges_happen_to_part_is_not_a_change() {
        // Two identical preset campaigns measured these read_parallel figures: +10 %, ranges
        // apart, but three runs a side cannot tell that from noise.
        let rerun = row(&[796.0, 808.0, 821.0], &[832.0, 912.0, 926.0], 5);
        assert!(rerun.delta_pct().is_some_and(|d| d > 5.0));
        assert!(!rerun.changed(), "p = {:?}", rerun.p_value());
    }

    #[test]
    fn a_change_far_outside_the_noise_is_highlighted() {
        let slower = row(&[300.0, 304.0, 298.0], &[150.0, 152.0, 149.0], 5);
        assert!(slower.changed(), "p = {:?}", slower.p_value());
    }

    #[test]
    fn sharing_alpha_among_rows_takes_more_evidence_per_row() {
        let modest = [&[100.0, 104.0, 102.0][..], &[108.0, 111.0, 109.0][..]];
        assert!(row(modest[0], modest[1], 1).changed());
        assert!(!row(modest[0], modest[1], 20).changed());
    }

    #[test]
    fn identical_paced_figures_differing_by_rounding_are_not_a_change() {
        // An emulated drive gives the same figure every run; its window's own 1 % variation
        // over 20 buckets is what separates two campaigns' figures.
        let paced = |figure: f64| {
            let var = (0.01 * figure).powi(2) / 20.0;
            Some(Side::of(vec![(figure, var); 3], true))
        };
        let mut r = row(&[1.0], &[1.0], 5);
        (r.a, r.b) = (paced(227.7), paced(227.8));
        assert!(!r.changed(), "p = {:?}", r.p_value());
        (r.a, r.b) = (paced(227.7), paced(160.0));
        assert!(r.changed(), "p = {:?}", r.p_value());
    }

    #[test]
    fn a_steady_figure_is_never_set_against_a_whole_run_one() {
        let mut r = row(&[300.0, 304.0, 298.0], &[150.0, 152.0, 149.0], 1);
        let tally = |basis| {
            Some(Tally {
                basis,
                runs_valid: 3,
                runs_total: 3,
            })
        };
        (r.a_tally, r.b_tally) = (tally(Basis::Steady), tally(Basis::WholeRun));
        assert!(!r.changed());
        assert_eq!(r.caveat(), Some("one side steady, the other whole run"));
        r.b_tally = tally(Basis::Steady);
        assert!(r.changed());
        assert_eq!(
            r.a_tally.map(|t| t.words()).as_deref(),
            Some("steady, 3 of 3 valid")
        );
    }

    #[test]
    fn a_point_measured_once_is_never_highlighted() {
        let once = row(&[100.0], &[200.0], 1);
        assert!(!once.changed());
        assert_eq!(once.caveat(), Some("measured once: spread unknown"));
    }

    #[test]
    fn invalid_runs_are_never_highlighted() {
        let mut r = row(&[300.0, 304.0, 298.0], &[150.0, 152.0, 149.0], 1);
        if let Some(side) = r.b.as_mut() {
            side.valid = false;
        }
        assert!(!r.changed());
        assert_eq!(r.caveat(), Some("runs not valid"));
    }
}
