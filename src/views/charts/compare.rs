//! The compare chart: two campaigns' matched rows side by side.

use super::*;

/// Two campaigns' matched rows side by side: A in blue, B in orange.
pub fn compare_chart(
    rows: &[(String, Option<f64>, Option<f64>)],
    width: Width,
) -> Result<String, ChartError> {
    let rows: Vec<_> = rows.iter().take(MAX_RUN_ROWS).collect();
    let height = 80 + 44 * rows.len().max(1) as u32;
    svg("compare", width, height, |root| {
        if rows.is_empty() {
            empty_note(root, width, "The two campaigns have no runs in common.")?;
            return Ok(());
        }
        let max = rows
            .iter()
            .flat_map(|(_, a, b)| [*a, *b])
            .flatten()
            .fold(0.0f64, f64::max);
        let x_max = nice_max(max);
        let n = rows.len() as f64;
        let mut chart = bar_frame(root, width, x_max, n, 36)?;
        for (index, (label, a, b)) in rows.iter().enumerate() {
            let base = n - 1.0 - index as f64;
            for (value, color, low, high) in [(a, BLUE, 0.5, 0.72), (b, ORANGE, 0.26, 0.48)] {
                if let Some(value) = value {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(0.0, base + low), (*value, base + high)],
                        color.filled(),
                    )))?;
                }
            }
            chart.draw_series(std::iter::once(Text::new(
                label.clone(),
                (x_max * 0.01, base + 0.96),
                (FONT, width.font(12)).into_font().color(&INK),
            )))?;
        }
        legend_row(root, width, &[("A", BLUE), ("B", ORANGE)])?;
        Ok(())
    })
}
