//! The tests chart: each test's figure as a bar, the bottleneck in red.

use super::*;
use crate::analysis::VerdictRow;
use crate::analysis::points::Figure;

/// One test's bar: its figure, its colour's reason, and how far it can be trusted.
struct Bar<'a> {
    label: &'a str,
    mb_per_s: Option<f64>,
    bottleneck: bool,
    /// The leading candidate of an inconclusive verdict.
    candidate: bool,
    /// Valid runs of all, when there is a figure.
    counts: Option<(usize, usize)>,
    /// The flags of a figure whose runs are not valid.
    not_valid: Option<String>,
    /// Why a test has no figure, in the bottleneck table's word for it.
    no_figure: &'static str,
    /// The figure's own runs' range, from the point the row's figure is (its test's best).
    spread: Option<&'a Figure>,
}

impl<'a> Bar<'a> {
    fn of(row: &'a VerdictRow, points: &'a [Point]) -> Self {
        Bar {
            label: &row.label,
            mb_per_s: row.mb_per_s,
            bottleneck: row.bottleneck == Some(true),
            candidate: row.candidate,
            counts: row.mb_per_s.map(|_| (row.runs_valid, row.runs_total)),
            not_valid: (row.valid == Some(false)).then(|| row.flag_list()),
            no_figure: row.no_figure.map_or("no figure", |why| why.word()),
            spread: points
                .iter()
                .find(|p| p.test == row.test && p.best)
                .and_then(|p| p.figure.as_ref())
                .filter(|figure| figure.n > 1),
        }
    }

    fn color(&self) -> RGBColor {
        match (self.bottleneck, self.candidate) {
            (true, _) => RED,
            (false, true) => ORANGE,
            _ => BLUE,
        }
    }

    /// The bar's words and how far below the bar's top each line stands: on a desk one line;
    /// on a phone the test above its bar, the figure and its range, then how many runs are
    /// valid, below it.
    fn lines(&self, width: Width) -> Vec<(String, f64)> {
        // How far the figure can be trusted: its runs' range, and how many are valid.
        let range = self
            .spread
            .map(|p| format!("median of {}: {:.1}–{:.1}", p.n, p.min, p.max));
        let validity = match (&self.not_valid, self.counts) {
            (Some(flags), _) => Some(format!("not valid: {flags}")),
            (None, Some((valid, total))) if valid < total => {
                Some(format!("{valid} of {total} runs valid"))
            }
            _ => None,
        };
        // The figure and its word: "227.8 MB/s (bottleneck)", or why there is none.
        let figure = match self.mb_per_s {
            Some(value) if self.bottleneck => format!("{value:.1} MB/s (bottleneck)"),
            Some(value) if self.candidate => format!("{value:.1} MB/s (candidate)"),
            Some(value) => format!("{value:.1} MB/s"),
            None => self.no_figure.to_string(),
        };
        let joined = |parts: Vec<Option<String>>| {
            parts.into_iter().flatten().collect::<Vec<_>>().join(" · ")
        };
        match width {
            Width::Wide => vec![(
                joined(vec![
                    Some(format!("{}: {figure}", self.label)),
                    range,
                    validity,
                ]),
                0.08,
            )],
            Width::Narrow => {
                let mut lines = vec![
                    (self.label.to_string(), 0.05),
                    (joined(vec![Some(figure), range]), 0.6),
                ];
                if let Some(validity) = validity {
                    lines.push((validity, 0.8));
                }
                lines
            }
        }
    }
}

/// The tests' best figures as bars, the bottleneck's in red; where a test was repeated, a
/// whisker spans the min–max of its repeats at its best parameter point. A figure from runs
/// that are not valid is drawn as an outline and labelled with the reasons.
pub fn tests_chart(
    verdict: &Verdict,
    points: &[Point],
    width: Width,
) -> Result<String, ChartError> {
    let bars: Vec<Bar<'_>> = verdict
        .rows
        .iter()
        .map(|row| Bar::of(row, points))
        .collect();
    // On a phone a row's label takes two lines: the figure above the bar, its runs below.
    let row_height = match width {
        Width::Wide => 40,
        Width::Narrow => 78,
    };
    let height = 70 + row_height * bars.len().max(1) as u32;
    svg("tests", width, height, |root| {
        if bars.is_empty() {
            empty_note(root, width, "No test has finished yet.")?;
            return Ok(());
        }
        let max = bars
            .iter()
            .filter_map(|bar| bar.mb_per_s)
            .fold(0.0f64, f64::max);
        let x_max = nice_max(max);
        let n = bars.len() as f64;
        let mut chart = bar_frame(root, width, x_max, n, 12)?;
        for (index, bar) in bars.iter().enumerate() {
            let y = n - index as f64;
            let color = bar.color();
            let style = if bar.not_valid.is_some() {
                color.stroke_width(2)
            } else {
                color.filled()
            };
            let (bar_top, bar_bottom) = match width {
                Width::Wide => (0.5, 0.92),
                Width::Narrow => (0.3, 0.56),
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [
                    (0.0, y - bar_top),
                    (bar.mb_per_s.unwrap_or(0.0), y - bar_bottom),
                ],
                style,
            )))?;
            if let Some(point) = bar.spread {
                let middle = y - (bar_top + bar_bottom) / 2.0;
                for segment in [
                    vec![(point.min, middle), (point.max, middle)],
                    vec![(point.min, middle - 0.12), (point.min, middle + 0.12)],
                    vec![(point.max, middle - 0.12), (point.max, middle + 0.12)],
                ] {
                    chart.draw_series(std::iter::once(PathElement::new(
                        segment,
                        INK.stroke_width(2),
                    )))?;
                }
            }
            for (text, below) in bar.lines(width) {
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x_max * 0.005, y - below),
                    (FONT, width.font(12)).into_font().color(&INK),
                )))?;
            }
        }
        Ok(())
    })
}
