//! A forecast to the user's size: a figure measured at a ladder of sizes is fitted as a power
//! law (figure = a · size^b, a straight line through the logarithms) and answered at the
//! user's size with its range and its basis. An answer the ladder cannot support is said in
//! words instead of printed as a number: a figure that does not move beyond its noise across
//! the ladder, a fit whose range is wide, or a size far beyond the largest one measured.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// How sure a range is: the share of outcomes it holds.
pub const CONFIDENCE: f64 = 0.95;
/// The farthest a forecast reaches beyond the largest size measured, as a factor, before it
/// says it is an extrapolation rather than giving a number.
pub const MAX_REACH: f64 = 1_000.0;
/// The widest range, high ÷ low, a number is given with; wider, the answer says the fit is
/// too uncertain.
pub const MAX_SPREAD: f64 = 4.0;

/// What a figure grows with, and how its sizes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// Bytes (of the source, of the repository, of its index).
    Bytes,
    /// Files of the source.
    Files,
    /// Backups kept.
    Snapshots,
}

impl Driver {
    /// A size of this driver in words: `2 GiB`, `400 000 files`, `30 backups`.
    pub fn words(self, size: f64) -> String {
        match self {
            Driver::Bytes => crate::size::format_bytes(size.round() as u64),
            Driver::Files => format!("{} files", grouped(size.round() as u64)),
            Driver::Snapshots => format!("{} backups", grouped(size.round() as u64)),
        }
    }
}

/// A whole number in groups of three: `400 000`.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

/// A power law fitted to a ladder's figures, in logarithms: ln figure = intercept + exponent ·
/// ln size.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerFit {
    pub exponent: f64,
    /// The exponent's standard error.
    pub exponent_se: f64,
    pub intercept: f64,
    /// The residuals' standard deviation, in logarithms.
    pub residual_sd: f64,
    /// Points fitted, and the distinct sizes among them.
    pub points: usize,
    pub sizes: usize,
    /// The mean of ln size, and Σ (ln size − mean)².
    mean_ln_size: f64,
    spread_ln_size: f64,
    /// The largest size measured.
    pub largest: f64,
}

/// Why a ladder's figures cannot be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("a fit needs at least 3 sizes; the ladder measured {0}")]
    TooFewSizes(usize),
    #[error("a size or a figure is not above 0 (size {size}, figure {value})")]
    NotPositive { size: f64, value: f64 },
}

/// The ladder's distinct sizes, in order, once every point is checked: sizes and figures above
/// 0, and at least 3 sizes.
fn distinct_sizes(points: &[(f64, f64)]) -> Result<Vec<f64>, FitError> {
    if let Some(&(size, value)) = points.iter().find(|(size, value)| {
        !(*size > 0.0 && *value > 0.0 && size.is_finite() && value.is_finite())
    }) {
        return Err(FitError::NotPositive { size, value });
    }
    let mut distinct: Vec<f64> = points.iter().map(|(size, _)| *size).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return Err(FitError::TooFewSizes(distinct.len()));
    }
    Ok(distinct)
}

/// A least-squares line through (x, y) points, which both fits are: the power law's through
/// the logarithms, the straight line's through the figures themselves.
struct Line {
    slope: f64,
    intercept: f64,
    residual_sd: f64,
    mean_x: f64,
    /// Σ (x − mean)².
    sxx: f64,
}

impl Line {
    /// The line through at least 3 points with distinct x ([`distinct_sizes`] checks them).
    fn through(points: &[(f64, f64)]) -> Line {
        let n = points.len() as f64;
        let mean_x = points.iter().map(|(x, _)| x).sum::<f64>() / n;
        let mean_y = points.iter().map(|(_, y)| y).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
        let sxy: f64 = points
            .iter()
            .map(|(x, y)| (x - mean_x) * (y - mean_y))
            .sum();
        let slope = sxy / sxx;
        let intercept = mean_y - slope * mean_x;
        let residual_ss: f64 = points
            .iter()
            .map(|(x, y)| (y - intercept - slope * x).powi(2))
            .sum();
        Line {
            slope,
            intercept,
            residual_sd: (residual_ss / (n - 2.0)).sqrt(),
            mean_x,
            sxx,
        }
    }

    /// The slope's standard error.
    fn slope_se(&self) -> f64 {
        self.residual_sd / self.sxx.sqrt()
    }
}

/// The two-sided Student t factor for [`CONFIDENCE`] with a fit of `points` points' degrees
/// of freedom.
fn t_factor(points: usize) -> f64 {
    let df = (points as f64 - 2.0).max(1.0);
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.5 + CONFIDENCE / 2.0))
        .unwrap_or(f64::INFINITY)
}

/// Fits `figure = a · size^b` to (size, figure) points, a size measured more than once
/// counted each time.
pub fn fit(points: &[(f64, f64)]) -> Result<PowerFit, FitError> {
    let distinct = distinct_sizes(points)?;
    let logs: Vec<(f64, f64)> = points
        .iter()
        .map(|(size, value)| (size.ln(), value.ln()))
        .collect();
    let line = Line::through(&logs);
    Ok(PowerFit {
        exponent: line.slope,
        exponent_se: line.slope_se(),
        intercept: line.intercept,
        residual_sd: line.residual_sd,
        points: points.len(),
        sizes: distinct.len(),
        mean_ln_size: line.mean_x,
        spread_ln_size: line.sxx,
        largest: distinct.last().copied().unwrap_or(0.0),
    })
}

/// A forecast at one size: a number with its range, or why there is none, always with the
/// fit it comes from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// The figure at the size, and the range it lies in with [`CONFIDENCE`].
    Estimate { value: f64, low: f64, high: f64 },
    /// The figure did not move beyond its noise across the ladder: what it is at the user's
    /// size cannot be told from these sizes (the ladder's own range is given).
    NotMeasurable { low: f64, high: f64 },
    /// The size lies more than [`MAX_REACH`] times beyond the largest measured.
    TooFar { reach: f64 },
    /// The range is wider than [`MAX_SPREAD`]: the fit is too uncertain to give a number.
    TooUncertain { low: f64, high: f64 },
}

/// A forecast and its basis, in words the pages show as they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    pub answer: Answer,
    /// What it rests on: `fit over 4 sizes up to 2 GiB, exponent 1.03 ± 0.04`.
    pub basis: String,
}

impl PowerFit {
    /// The two-sided Student t factor for [`CONFIDENCE`] with this fit's degrees of freedom.
    fn t_factor(&self) -> f64 {
        t_factor(self.points)
    }

    /// The fitted figure at `size`, and its prediction range with [`CONFIDENCE`].
    pub fn at(&self, size: f64) -> (f64, f64, f64) {
        let x = size.ln();
        let y = self.intercept + self.exponent * x;
        let n = self.points as f64;
        let se = self.residual_sd
            * (1.0 + 1.0 / n + (x - self.mean_ln_size).powi(2) / self.spread_ln_size).sqrt();
        let margin = self.t_factor() * se;
        (y.exp(), (y - margin).exp(), (y + margin).exp())
    }

    /// Whether the figure moved beyond its noise across the ladder: the exponent differs
    /// from 0 by more than its range.
    pub fn moves(&self) -> bool {
        self.exponent.abs() > self.t_factor() * self.exponent_se
    }

    /// The fit in words: `fit over 4 sizes up to 2 GiB, exponent 1.03 ± 0.04`.
    pub fn basis(&self, driver: Driver) -> String {
        format!(
            "fit over {} sizes up to {}, exponent {:.2} ± {:.2}",
            self.sizes,
            driver.words(self.largest),
            self.exponent,
            self.t_factor() * self.exponent_se
        )
    }
}

/// The forecast of a figure at `size` from the ladder's `points`, its sizes of `driver`.
pub fn forecast(points: &[(f64, f64)], size: f64, driver: Driver) -> Result<Forecast, FitError> {
    let fit = fit(points)?;
    let basis = fit.basis(driver);
    let reach = size / fit.largest;
    let answer = if !fit.moves() {
        let values = points.iter().map(|(_, value)| *value);
        let low = values.clone().fold(f64::INFINITY, f64::min);
        let high = values.fold(0.0, f64::max);
        Answer::NotMeasurable { low, high }
    } else if reach > MAX_REACH {
        Answer::TooFar { reach }
    } else {
        let (value, low, high) = fit.at(size);
        if high / low > MAX_SPREAD {
            Answer::TooUncertain { low, high }
        } else {
            Answer::Estimate { value, low, high }
        }
    };
    Ok(Forecast { answer, basis })
}

/// A straight line fitted to a ladder's figures: figure = base + slope · size. Memory grows so:
/// a tool's own runtime, the same at every size, plus what its index and caches hold, in
/// proportion to what they index; a power law through the total bends at the base and fits
/// neither end.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearFit {
    pub slope: f64,
    pub slope_se: f64,
    pub base: f64,
    pub residual_sd: f64,
    pub points: usize,
    pub sizes: usize,
    mean_size: f64,
    spread_size: f64,
    pub largest: f64,
}

/// Fits `figure = base + slope · size` to (size, figure) points.
pub fn fit_linear(points: &[(f64, f64)]) -> Result<LinearFit, FitError> {
    let distinct = distinct_sizes(points)?;
    let line = Line::through(points);
    Ok(LinearFit {
        slope: line.slope,
        slope_se: line.slope_se(),
        base: line.intercept,
        residual_sd: line.residual_sd,
        points: points.len(),
        sizes: distinct.len(),
        mean_size: line.mean_x,
        spread_size: line.sxx,
        largest: distinct.last().copied().unwrap_or(0.0),
    })
}

impl LinearFit {
    fn t_factor(&self) -> f64 {
        t_factor(self.points)
    }

    /// The fitted figure at `size`, and its prediction range with [`CONFIDENCE`].
    pub fn at(&self, size: f64) -> (f64, f64, f64) {
        let y = self.base + self.slope * size;
        let n = self.points as f64;
        let se = self.residual_sd
            * (1.0 + 1.0 / n + (size - self.mean_size).powi(2) / self.spread_size).sqrt();
        let margin = self.t_factor() * se;
        (y, y - margin, y + margin)
    }

    /// Whether the figure moved beyond its noise: the slope differs from 0 by more than its
    /// range.
    pub fn moves(&self) -> bool {
        self.slope.abs() > self.t_factor() * self.slope_se
    }
}

/// The forecast of a figure at `size` from the ladder's `points` by a straight line (see
/// [`LinearFit`]); `words` writes the figure's own values (`62 MiB`) in the basis.
pub fn forecast_linear(
    points: &[(f64, f64)],
    size: f64,
    driver: Driver,
    words: impl Fn(f64) -> String,
) -> Result<Forecast, FitError> {
    let fit = fit_linear(points)?;
    let margin = fit.t_factor() * fit.slope_se;
    let basis = format!(
        "a straight line over {} sizes up to {}: {} plus {} ± {} per {}",
        fit.sizes,
        driver.words(fit.largest),
        words(fit.base),
        words(fit.slope * driver.per()),
        words(margin * driver.per()),
        driver.unit()
    );
    let reach = size / fit.largest;
    let answer = if !fit.moves() {
        let values = points.iter().map(|(_, value)| *value);
        let low = values.clone().fold(f64::INFINITY, f64::min);
        let high = values.fold(0.0, f64::max);
        Answer::NotMeasurable { low, high }
    } else if reach > MAX_REACH {
        Answer::TooFar { reach }
    } else {
        let (value, low, high) = fit.at(size);
        if low <= 0.0 || high / low > MAX_SPREAD {
            Answer::TooUncertain {
                low: low.max(0.0),
                high,
            }
        } else {
            Answer::Estimate { value, low, high }
        }
    };
    Ok(Forecast { answer, basis })
}

/// The forecast by the law the figure follows. A time or a memory is a base (a tool's
/// start-up, its runtime) plus so much per unit of what drives it: a straight line. A power
/// law through such a figure bends at the base and, carried beyond the ladder, falls short
/// (restic's nightly backup on 50–400 MiB fits a power law of exponent 0.61 as closely as a
/// line, and at 800 MiB that law said 0.73 of what was measured, the line 0.88). The power
/// law is taken only where the figure grows faster than any straight line can: its exponent
/// above 1 by more than twice its standard error. The basis names the law.
pub fn forecast_best(
    points: &[(f64, f64)],
    size: f64,
    driver: Driver,
    words: impl Fn(f64) -> String,
) -> Result<Forecast, FitError> {
    let power = fit(points)?;
    if power.exponent - 2.0 * power.exponent_se > 1.0 {
        forecast(points, size, driver)
    } else {
        forecast_linear(points, size, driver, words)
    }
}

impl Driver {
    /// How much of the driver a straight line's slope is given per: a thousand files, a GiB.
    fn per(self) -> f64 {
        match self {
            Driver::Bytes => (1u64 << 30) as f64,
            Driver::Files => 1000.0,
            Driver::Snapshots => 1.0,
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Driver::Bytes => "GiB",
            Driver::Files => "thousand files",
            Driver::Snapshots => "backup",
        }
    }
}

impl Forecast {
    /// The answer in words, with `unit` after each figure (`GiB`, `s`): a number only where
    /// the ladder supports one.
    pub fn words(&self, unit: &str, driver: Driver, size: f64) -> String {
        let at = driver.words(size);
        match &self.answer {
            Answer::Estimate { value, low, high } => format!(
                "about {} {unit} at {at} ({}–{} {unit}; {})",
                sig(*value),
                sig(*low),
                sig(*high),
                self.basis
            ),
            Answer::NotMeasurable { low, high } => format!(
                "not measurable at these sizes: it stayed within {}–{} {unit} across the \
                 ladder, within its noise ({})",
                sig(*low),
                sig(*high),
                self.basis
            ),
            Answer::TooFar { reach } => format!(
                "no number: {at} is {}× the largest size measured, beyond the {}× a fit \
                 may be carried ({})",
                reach.round(),
                MAX_REACH,
                self.basis
            ),
            Answer::TooUncertain { low, high } => format!(
                "no number: the fit is too uncertain, anywhere from {} to {} {unit} at {at} \
                 ({})",
                sig(*low),
                sig(*high),
                self.basis
            ),
        }
    }
}

/// A figure to three significant digits, as a forecast deserves no more: `0.0123`, `4.56`,
/// `12 300 000`.
pub fn sig(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    if magnitude >= 2 {
        let unit = 10f64.powi(magnitude - 2);
        let rounded = ((value / unit).round() * unit) as i64;
        let sign = if rounded < 0 { "-" } else { "" };
        return format!("{sign}{}", grouped(rounded.unsigned_abs()));
    }
    let digits = (2 - magnitude) as usize;
    format!("{value:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// A ladder of `rungs` sizes doubling from `first`, each measured `repeats` times, its
    /// figure `law(size)` with multiplicative noise of about `noise` (a share).
    fn ladder(
        first: f64,
        rungs: u32,
        repeats: u32,
        noise: f64,
        law: impl Fn(f64) -> f64,
    ) -> Vec<(f64, f64)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut points = Vec::new();
        for rung in 0..rungs {
            let size = first * 2f64.powi(rung as i32);
            for _ in 0..repeats {
                let factor = 1.0 + noise * (rng.random::<f64>() * 2.0 - 1.0);
                points.push((size, law(size) * factor));
            }
        }
        points
    }

    #[test]
    fn memory_on_a_base_is_answered_by_a_straight_line() {
        // 60 MiB of runtime plus 1 KiB a file, ±3 %, over 50 000 to 400 000 files.
        let noise = [1.03, 0.98, 1.01, 0.99];
        let points: Vec<(f64, f64)> = (0..4)
            .map(|rung| {
                let files = 50_000.0 * f64::from(1u32 << rung);
                (
                    files,
                    (60.0 * 1048576.0 + files * 1024.0) * noise[rung as usize],
                )
            })
            .collect();
        let at = 800_000.0;
        let truth = 60.0 * 1048576.0 + at * 1024.0;
        let said = forecast_linear(&points, at, Driver::Files, |bytes| {
            crate::size::format_bytes(bytes as u64)
        })
        .expect("a forecast");
        let Answer::Estimate { value, low, high } = said.answer else {
            panic!("{said:?}");
        };
        assert!((value / truth - 1.0).abs() < 0.1, "{value} against {truth}");
        assert!(low < truth && truth < high, "{low}–{high} holds {truth}");
        assert!(
            said.basis
                .starts_with("a straight line over 4 sizes up to 400 000 files"),
            "{}",
            said.basis
        );
        // The same points through a power law: it bends at the base.
        let power = forecast(&points, at, Driver::Files).expect("a forecast");
        if let Answer::Estimate { value, .. } = power.answer {
            assert!(
                value < truth * 0.95,
                "a power law through a base undershoots: {value}"
            );
        }
    }

    #[test]
    fn a_figure_on_a_base_is_a_straight_line_and_only_faster_growth_a_power_law() {
        // A start-up of 0.8 s plus 9 ms a MiB, ±3 %, over 50 to 400 MiB: four points a power
        // law of exponent 0.6 fits about as closely, and carries to 800 MiB a quarter short.
        let noise = [1.03, 0.97, 1.02, 0.98];
        let startup: Vec<(f64, f64)> = (0..4)
            .map(|rung| {
                let mib = 50.0 * f64::from(1u32 << rung);
                (mib, (0.8 + 0.009 * mib) * noise[rung as usize])
            })
            .collect();
        let truth = 0.8 + 0.009 * 800.0;
        let said = forecast_best(&startup, 800.0, Driver::Snapshots, |s| format!("{s}"))
            .expect("a forecast");
        let Answer::Estimate { value, .. } = said.answer else {
            panic!("{said:?}");
        };
        assert!(said.basis.starts_with("a straight line"), "{}", said.basis);
        assert!((value / truth - 1.0).abs() < 0.1, "{value} against {truth}");
        // A true power law of exponent 1.5 is kept a power law.
        let power: Vec<(f64, f64)> = (0..4)
            .map(|rung| {
                let size = 50.0 * f64::from(1u32 << rung);
                (size, 0.01 * size.powf(1.5) * noise[rung as usize])
            })
            .collect();
        let said = forecast_best(&power, 800.0, Driver::Snapshots, |s| format!("{s}"))
            .expect("a forecast");
        assert!(said.basis.starts_with("fit over 4 sizes"), "{}", said.basis);
        let Answer::Estimate { value, .. } = said.answer else {
            panic!("{said:?}");
        };
        let truth = 0.01 * 800f64.powf(1.5);
        assert!((value / truth - 1.0).abs() < 0.1, "{value} against {truth}");
    }

    #[test]
    fn a_known_law_is_recovered_within_five_percent_of_its_exponent() {
        for exponent in [1.0, 1.5] {
            let points = ladder(256.0 * 1024.0 * 1024.0, 4, 3, 0.05, |size| {
                2e-6 * size.powf(exponent)
            });
            let fit = fit(&points).expect("a fit");
            assert!(
                (fit.exponent - exponent).abs() / exponent < 0.05,
                "exponent {exponent} fitted as {}",
                fit.exponent
            );
            assert!(fit.moves());
            // At twice the largest rung, the law's own figure lies in the range.
            let size = 2.0 * fit.largest;
            let forecast = forecast(&points, size, Driver::Bytes).expect("a forecast");
            let Answer::Estimate { value, low, high } = forecast.answer else {
                panic!("a number: {forecast:?}");
            };
            let truth = 2e-6 * size.powf(exponent);
            assert!(low <= truth && truth <= high, "{low} ≤ {truth} ≤ {high}");
            assert!(
                (value - truth).abs() / truth < 0.1,
                "{value} against {truth}"
            );
            assert!(
                forecast
                    .basis
                    .starts_with("fit over 4 sizes up to 2 GiB, exponent")
            );
        }
    }

    #[test]
    fn past_a_thousand_times_the_largest_size_the_forecast_says_it_is_an_extrapolation() {
        let points = ladder(1e6, 4, 2, 0.02, |size| size);
        let largest = 8e6;
        let forecast = forecast(&points, 2_000.0 * largest, Driver::Files).expect("a forecast");
        assert!(
            matches!(forecast.answer, Answer::TooFar { .. }),
            "{forecast:?}"
        );
        let words = forecast.words("s", Driver::Files, 2_000.0 * largest);
        assert!(
            words.starts_with("no number: 16 000 000 000 files is 2000× the largest"),
            "{words}"
        );
        let near = super::forecast(&points, 500.0 * largest, Driver::Files).expect("a forecast");
        assert!(matches!(near.answer, Answer::Estimate { .. }), "{near:?}");
    }

    #[test]
    fn a_figure_that_stays_within_its_noise_is_not_measurable_at_these_sizes() {
        // Memory that does not grow with the bytes of a few large files.
        let points = ladder(256e6, 4, 3, 0.05, |_| 60e6);
        let forecast = forecast(&points, 36e12, Driver::Bytes).expect("a forecast");
        assert!(
            matches!(forecast.answer, Answer::NotMeasurable { .. }),
            "{forecast:?}"
        );
        let words = forecast.words("MB", Driver::Bytes, 36e12);
        assert!(
            words.starts_with("not measurable at these sizes"),
            "{words}"
        );
    }

    #[test]
    fn a_noisy_fit_gives_no_number() {
        let points = ladder(1e6, 4, 2, 0.9, |size| size.powf(1.2));
        let forecast = forecast(&points, 500.0 * 8e6, Driver::Bytes).expect("a forecast");
        assert!(
            !matches!(forecast.answer, Answer::Estimate { .. }),
            "{forecast:?}"
        );
    }

    #[test]
    fn a_figure_is_shown_to_three_significant_digits() {
        assert_eq!(sig(12_345_678.0), "12 300 000");
        assert_eq!(sig(456.7), "457");
        assert_eq!(sig(4.567), "4.57");
        assert_eq!(sig(0.012_34), "0.0123");
    }

    #[test]
    fn a_ladder_too_short_or_with_nothing_measured_is_refused() {
        assert_eq!(
            fit(&[(1.0, 1.0), (2.0, 2.0), (2.0, 2.1)]),
            Err(FitError::TooFewSizes(2))
        );
        assert!(matches!(
            fit(&[(1.0, 1.0), (2.0, 0.0), (4.0, 4.0)]),
            Err(FitError::NotPositive { .. })
        ));
    }
}
