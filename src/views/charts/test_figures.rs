//! The tests chart: each test's figure as a bar, the bottleneck in red.

use super::*;

/// The tests' best figures as bars, the bottleneck's in red; where a test was repeated, a
/// whisker spans the min–max of its repeats at its best parameter point. A figure from runs
/// that are not valid is drawn as an outline and labelled with the reasons.
pub fn tests_chart(
    verdict: &Verdict,
    points: &[Point],
    width: Width,
) -> Result<String, ChartError> {
    let rows: Vec<(String, Option<f64>, bool)> = verdict
        .rows
        .iter()
        .map(|row| {
            (
                row.label.clone(),
                row.mb_per_s,
                row.bottleneck == Some(true),
            )
        })
        .collect();
    let candidates: Vec<bool> = verdict.rows.iter().map(|row| row.candidate).collect();
    let counts: Vec<Option<(usize, usize)>> = verdict
        .rows
        .iter()
        .map(|row| row.mb_per_s.map(|_| (row.runs_valid, row.runs_total)))
        .collect();
    let not_valid: Vec<Option<String>> = verdict
        .rows
        .iter()
        .map(|row| (row.valid == Some(false)).then(|| row.flag_list()))
        .collect();
    // Why a test has no figure, in the bottleneck table's word for it.
    let no_figure: Vec<&str> = verdict
        .rows
        .iter()
        .map(|row| row.no_figure.map_or("no figure", |why| why.word()))
        .collect();
    // The figure's own runs' range, from the point the row's figure is (its test's best).
    let spreads: Vec<Option<&crate::analysis::points::Figure>> = verdict
        .rows
        .iter()
        .map(|row| {
            points
                .iter()
                .find(|p| p.test == row.test && p.best)
                .and_then(|p| p.figure.as_ref())
                .filter(|figure| figure.n > 1)
        })
        .collect();
    // On a phone a row's label takes two lines: the figure above the bar, its runs below.
    let row_height = match width {
        Width::Wide => 40,
        Width::Narrow => 78,
    };
    let height = 70 + row_height * rows.len().max(1) as u32;
    svg("tests", width, height, |root| {
        if rows.is_empty() {
            empty_note(root, width, "No test has finished yet.")?;
            return Ok(());
        }
        let max = rows
            .iter()
            .filter_map(|(_, value, _)| *value)
            .fold(0.0f64, f64::max);
        let x_max = nice_max(max);
        let n = rows.len() as f64;
        let mut chart = bar_frame(root, width, x_max, n, 12)?;
        for (index, (label, value, bottleneck)) in rows.iter().enumerate() {
            let y = n - index as f64;
            let color = match (*bottleneck, candidates[index]) {
                (true, _) => RED,
                (false, true) => ORANGE,
                _ => BLUE,
            };
            let length = value.unwrap_or(0.0);
            let style = if not_valid[index].is_some() {
                color.stroke_width(2)
            } else {
                color.filled()
            };
            let (bar_top, bar_bottom) = match width {
                Width::Wide => (0.5, 0.92),
                Width::Narrow => (0.3, 0.56),
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - bar_top), (length, y - bar_bottom)],
                style,
            )))?;
            if let Some(point) = spreads[index] {
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
            // How far the figure can be trusted: its runs' range, and how many are valid.
            let range =
                spreads[index].map(|p| format!("median of {}: {:.1}–{:.1}", p.n, p.min, p.max));
            let validity = match (&not_valid[index], counts[index]) {
                (Some(flags), _) => Some(format!("not valid: {flags}")),
                (None, Some((valid, total))) if valid < total => {
                    Some(format!("{valid} of {total} runs valid"))
                }
                _ => None,
            };
            // The figure and its word: "227.8 MB/s (bottleneck)", or why there is none.
            let figure = match value {
                Some(value) if *bottleneck => format!("{value:.1} MB/s (bottleneck)"),
                Some(value) if candidates[index] => format!("{value:.1} MB/s (candidate)"),
                Some(value) => format!("{value:.1} MB/s"),
                None => no_figure[index].to_string(),
            };
            let joined = |parts: Vec<Option<String>>| {
                parts.into_iter().flatten().collect::<Vec<_>>().join(" · ")
            };
            // On a phone: the test above its bar; the figure and its range, then how many
            // runs are valid, below it.
            let lines = match width {
                Width::Wide => vec![(
                    joined(vec![Some(format!("{label}: {figure}")), range, validity]),
                    0.08,
                )],
                Width::Narrow => {
                    let mut lines = vec![
                        (label.clone(), 0.05),
                        (joined(vec![Some(figure), range]), 0.6),
                    ];
                    if let Some(validity) = validity {
                        lines.push((validity, 0.8));
                    }
                    lines
                }
            };
            for (text, below) in lines {
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
