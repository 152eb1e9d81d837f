//! How much a figure varies from run to run, and whether two figures differ by more than
//! that: one median, one spread and one test of noise for every view that compares points.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::engine::result::RunResult;
use crate::engine::steady::BUCKET_S;

/// Median and range of repeated measurements of one thing.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
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

/// The median of sorted values.
pub fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The chance, over a whole comparison, of highlighting a change that is only noise.
pub const FAMILY_ALPHA: f64 = 0.05;

/// One campaign's measurements of a point.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = Noise)]
pub struct Side {
    /// Median, range and count of the figures (steady-state MB/s where found).
    pub stat: Stat,
    /// Whether the figures come from valid runs only.
    pub valid: bool,
    /// Mean of the figures.
    pub mean: f64,
    /// Variance of one figure: the repeats' sample variance, or, when larger, the variance
    /// each run's own steady window puts on its mean (so that identical figures from a paced
    /// emulation do not make a rounding difference certain).
    pub variance: f64,
}

impl Side {
    /// The side of `values`, each with the variance its run's window puts on it.
    pub fn of(values: Vec<(f64, f64)>, valid: bool) -> Self {
        let within = if values.is_empty() {
            0.0
        } else {
            values.iter().map(|v| v.1).sum::<f64>() / values.len() as f64
        };
        let values: Vec<f64> = values.into_iter().map(|v| v.0).collect();
        let n = values.len() as f64;
        let mean = if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / n
        };
        let variance = if values.len() < 2 {
            0.0
        } else {
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
        };
        Self {
            stat: Stat::of(values),
            valid,
            mean,
            variance: variance.max(within),
        }
    }
}

/// Welch's t-test of two sides' means: the two-sided p-value, or `None` when either side was
/// measured fewer than twice. Two sides without any variance differ for certain when their
/// means differ.
pub fn welch_p(a: &Side, b: &Side) -> Option<f64> {
    if a.stat.runs < 2 || b.stat.runs < 2 {
        return None;
    }
    let (na, nb) = (a.stat.runs as f64, b.stat.runs as f64);
    let (va, vb) = (a.variance / na, b.variance / nb);
    let diff = (a.mean - b.mean).abs();
    if va + vb <= 0.0 {
        return Some(if diff > 0.0 { 0.0 } else { 1.0 });
    }
    let t = diff / (va + vb).sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * dist.sf(t)).min(1.0))
}

/// Whether `better` beats `other` by more than noise, by the rule `/compare` highlights a
/// change with: both repeated and valid, the gap larger than either's spread, and Welch's p
/// below `alpha`.
pub fn stands_out(better: &Side, other: &Side, alpha: f64) -> bool {
    let gap_pct = if other.stat.median > 0.0 {
        (better.stat.median - other.stat.median) / other.stat.median * 100.0
    } else {
        return false;
    };
    let repeated = better.stat.runs >= 2 && other.stat.runs >= 2;
    repeated
        && better.valid
        && other.valid
        && gap_pct > better.stat.spread_pct().max(other.stat.spread_pct())
        && welch_p(better, other).is_some_and(|p| p < alpha)
}

/// The variance of a run's steady figure from its window's own variation: the bucket CV over
/// √(buckets). Buckets are not independent, so this is a lower bound; 0 without a window.
pub fn within_run_variance(result: &RunResult) -> f64 {
    match &result.steady {
        Some(steady) if steady.steady => {
            let buckets = (steady.seconds() / BUCKET_S).max(1.0);
            (steady.cv_pct.unwrap_or(0.0) / 100.0 * steady.mb_per_s).powi(2) / buckets
        }
        _ => 0.0,
    }
}
