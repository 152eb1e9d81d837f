//! Steady state: the part of a run after its ramp and before its tail, where throughput holds
//! within a tolerance — the window fio's `ss` and warp's autoterm measure instead of the whole run.

use serde::{Deserialize, Serialize};

use super::measure::Sample;

/// Most the steady window's throughput may vary: coefficient of variation of its buckets, %.
pub const STEADY_CV_PCT: f64 = 10.0;
/// Seconds of steady throughput a figure needs before its mean can be trusted.
pub const MIN_STEADY_S: f64 = 3.0;
/// Share of the sampled run the steady window must cover; the rest is ramp and tail.
pub const MIN_STEADY_SHARE: f64 = 0.5;
/// Samples are summed into buckets of at least this many seconds before their spread is
/// judged, so a scheduler hiccup of one sample is not taken for unsteadiness.
pub const BUCKET_S: f64 = 0.5;

/// The buckets a run of `run_s` seconds is judged on: at least [`BUCKET_S`], and at least one
/// pass over a source read again and again (`pass_s`), whose mix of file sizes sets the pace
/// within a pass, while the run holds three or more such passes.
pub fn bucket_for(pass_s: Option<f64>, run_s: f64) -> f64 {
    match pass_s {
        Some(pass_s) if 3.0 * pass_s <= run_s => pass_s.max(BUCKET_S),
        _ => BUCKET_S,
    }
}

/// The steady part of a run and what it measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SteadyFigures {
    /// Mean throughput over the steady window, MB/s.
    pub mb_per_s: f64,
    /// The window, in seconds since the run started.
    pub from_s: f64,
    pub to_s: f64,
    /// Coefficient of variation of the window's buckets, %; `None` when the window moved no
    /// data, so its spread has no meaning (a mean of zero). Stored documents that held a
    /// non-finite spread as `null` read as `None`.
    #[serde(default)]
    pub cv_pct: Option<f64>,
    /// Whether the window meets the tolerance, length and share above; when not, the figures
    /// are those of the run's second half, the best estimate there is.
    pub steady: bool,
    /// Seconds the run's final flush took after the data stopped, charged to `mb_per_s`: data
    /// a file system accepted into its cache is not on the device until then.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_s: f64,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

#[cfg(test)]
impl SteadyFigures {
    /// A steady window of 380 MB/s over 1–6 s, with the spread `cv_pct`: where the views'
    /// tests start.
    pub(crate) fn example(cv_pct: Option<f64>) -> Self {
        SteadyFigures {
            mb_per_s: 380.0,
            from_s: 1.0,
            to_s: 6.0,
            cv_pct,
            steady: true,
            flush_s: 0.0,
        }
    }
}

impl SteadyFigures {
    /// Seconds the window covers.
    pub fn seconds(&self) -> f64 {
        self.to_s - self.from_s
    }

    /// Charges a final flush to the figure: data a file system accepted into its cache is
    /// not on the device until the flush ends, so the window's rate of handing data over
    /// cannot stand for the target. The figure becomes at most the whole run's rate, flush
    /// included (`whole_mb_s`): what reached the device per second, erring low only by the
    /// run's ramp.
    pub fn charge_flush(&mut self, whole_mb_s: f64, flush_s: f64) {
        if flush_s <= 0.0 {
            return;
        }
        self.mb_per_s = round1(self.mb_per_s.min(whole_mb_s));
        self.flush_s = round3(flush_s);
    }
}

/// The samples up to the last one in which data moved: what follows is a final flush (or a
/// close) during which the run handed over nothing, not part of its steady state.
pub fn active_part(samples: &[Sample]) -> &[Sample] {
    let end = samples
        .iter()
        .rposition(|sample| sample.mb_per_s > 0.0)
        .map_or(0, |last| last + 1);
    &samples[..end]
}

/// One bucket of summed samples: its end time, length and bytes (as MB).
#[derive(Debug, Clone, Copy)]
struct Bucket {
    end: f64,
    len: f64,
    mb: f64,
}

/// Finds the steady window of a run's samples, with buckets at least `bucket_s` long (a
/// shoe-shining drive needs buckets as long as its cycle). `None` when the samples cover too
/// little time to judge.
pub fn find(samples: &[Sample], bucket_s: f64) -> Option<SteadyFigures> {
    // At most about a thousand buckets, so the search stays quick on runs of hours.
    let run_s = samples.last().map_or(0.0, |sample| sample.t);
    let buckets = buckets(samples, bucket_s.max(BUCKET_S).max(run_s / 1000.0));
    let covered: f64 = buckets.iter().map(|b| b.len).sum();
    if buckets.len() < 3 || covered < MIN_STEADY_S {
        return None;
    }
    // Prefix sums of length, MB and MB²/len make every window's mean and spread O(1).
    let n = buckets.len();
    let mut len = vec![0.0; n + 1];
    let mut mb = vec![0.0; n + 1];
    let mut rate_sq = vec![0.0; n + 1];
    let mut rate = vec![0.0; n + 1];
    for (i, b) in buckets.iter().enumerate() {
        let r = b.mb / b.len;
        len[i + 1] = len[i] + b.len;
        mb[i + 1] = mb[i] + b.mb;
        rate[i + 1] = rate[i] + r;
        rate_sq[i + 1] = rate_sq[i] + r * r;
    }
    let cv = |i: usize, j: usize| {
        let k = (j - i) as f64;
        let mean = (rate[j] - rate[i]) / k;
        if mean <= 0.0 {
            return f64::INFINITY;
        }
        let var = ((rate_sq[j] - rate_sq[i]) / k - mean * mean).max(0.0);
        100.0 * var.sqrt() / mean
    };
    let start_of = |i: usize| buckets[i].end - buckets[i].len;
    // The longest window within the tolerance; the later one when two are as long.
    let mut best: Option<(usize, usize)> = None;
    for i in 0..n {
        for j in (i + 2..=n).rev() {
            let longer = best.is_none_or(|(bi, bj)| len[j] - len[i] >= len[bj] - len[bi]);
            if !longer {
                break;
            }
            if cv(i, j) <= STEADY_CV_PCT {
                best = Some((i, j));
                break;
            }
        }
    }
    let window = |i: usize, j: usize, steady: bool| SteadyFigures {
        mb_per_s: round1((mb[j] - mb[i]) / (len[j] - len[i])),
        from_s: round3(start_of(i)),
        to_s: round3(buckets[j - 1].end),
        cv_pct: Some(cv(i, j)).filter(|cv| cv.is_finite()).map(round1),
        steady,
        flush_s: 0.0,
    };
    match best {
        Some((i, j))
            if len[j] - len[i] >= MIN_STEADY_S && len[j] - len[i] >= MIN_STEADY_SHARE * covered =>
        {
            Some(window(i, j, true))
        }
        _ => {
            let half = buckets
                .iter()
                .position(|b| b.end - b.len >= buckets[n - 1].end / 2.0)
                .unwrap_or(0)
                .min(n - 2);
            Some(window(half, n, false))
        }
    }
}

/// Sums consecutive samples into buckets of at least `bucket_s` seconds; a last bucket shorter
/// than that is dropped.
fn buckets(samples: &[Sample], bucket_s: f64) -> Vec<Bucket> {
    let mut out = Vec::new();
    let (mut prev_t, mut len, mut mb) = (0.0_f64, 0.0_f64, 0.0_f64);
    for sample in samples {
        let dt = (sample.t - prev_t).max(0.0);
        prev_t = sample.t;
        len += dt;
        mb += sample.mb_per_s * dt;
        if len >= bucket_s - 1e-9 {
            out.push(Bucket {
                end: sample.t,
                len,
                mb,
            });
            (len, mb) = (0.0, 0.0);
        }
    }
    out
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rates: &[f64]) -> Vec<Sample> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &mb_per_s)| Sample {
                t: 0.25 * (i + 1) as f64,
                mb_per_s,
            })
            .collect()
    }

    #[test]
    fn a_window_that_moved_no_data_has_no_spread_rather_than_an_infinite_one() {
        // Data in the first half, then a long wait (an object store completing its uploads).
        let mut rates = vec![100.0; 12];
        rates.extend(std::iter::repeat_n(0.0, 20));
        let window = find(&samples(&rates), BUCKET_S).expect("long enough to judge");
        assert!(!window.steady);
        assert_eq!(window.mb_per_s, 0.0);
        assert_eq!(window.cv_pct, None);
        let json = serde_json::to_string(&window).expect("encodes");
        let back: SteadyFigures = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, window);
        // As an earlier version stored it: the spread as null.
        let stored = r#"{"mb_per_s":0.0,"from_s":4.0,"to_s":8.0,"cv_pct":null,"steady":false}"#;
        let read: SteadyFigures = serde_json::from_str(stored).expect("reads");
        assert_eq!(read.cv_pct, None);
    }

    #[test]
    fn the_ramp_and_the_tail_are_left_out() {
        let mut rates = vec![20.0, 60.0, 90.0, 95.0];
        rates.extend(std::iter::repeat_n(100.0, 24));
        rates.extend([40.0, 10.0]);
        let steady = find(&samples(&rates), BUCKET_S).expect("enough samples");
        assert!(steady.steady, "{steady:?}");
        assert!((steady.mb_per_s - 100.0).abs() < 3.0, "{steady:?}");
        assert!(steady.from_s >= 0.5 && steady.to_s <= 7.0, "{steady:?}");
    }

    #[test]
    fn a_final_flush_is_left_out_of_the_window_and_charged_to_its_figure() {
        // 5 s at 400 MB/s into a cache, then 2.5 s of sync with nothing moving.
        let mut rates = vec![400.0; 20];
        rates.extend([0.0; 10]);
        let all = samples(&rates);
        let active = active_part(&all);
        assert_eq!(active.len(), 20);
        let mut steady = find(active, BUCKET_S).expect("enough samples");
        assert!(
            steady.steady && (steady.mb_per_s - 400.0).abs() < 0.1,
            "{steady:?}"
        );
        // The device had the 2000 MB in 7.5 s.
        steady.charge_flush(266.7, 2.5);
        assert!((steady.mb_per_s - 266.7).abs() < 0.1, "{steady:?}");
        assert_eq!(steady.flush_s, 2.5);
    }

    #[test]
    fn a_short_run_has_no_steady_state() {
        assert_eq!(find(&samples(&[100.0; 8]), BUCKET_S), None);
    }

    #[test]
    fn a_sawtooth_is_unsteady() {
        let rates: Vec<f64> = (0..40)
            .map(|i| if i % 4 < 2 { 200.0 } else { 20.0 })
            .collect();
        let steady = find(&samples(&rates), BUCKET_S).expect("enough samples");
        assert!(!steady.steady, "{steady:?}");
        // Buckets as long as the cycle see its mean, which is steady.
        let cycle = find(&samples(&rates), 1.0).expect("enough samples");
        assert!(cycle.steady, "{cycle:?}");
        assert!((cycle.mb_per_s - 110.0).abs() < 1.0, "{cycle:?}");
    }

    #[test]
    fn a_tree_read_again_is_judged_on_buckets_a_pass_long_while_three_fit() {
        assert_eq!(bucket_for(None, 60.0), BUCKET_S);
        assert_eq!(bucket_for(Some(0.9), 60.0), 0.9);
        assert_eq!(bucket_for(Some(0.2), 60.0), BUCKET_S);
        // Two passes in a run: buckets a pass long would leave too few to judge.
        assert_eq!(bucket_for(Some(3.0), 6.0), BUCKET_S);
    }
}
