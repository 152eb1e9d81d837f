//! The stages chart: readers and writer, busy and waiting, per run.

use super::*;

/// Stage accounting per run: how much of the wall time the readers and the writer were busy
/// and how much they waited for each other.
pub fn stages_chart(
    runs: &[RunView<'_>],
    points: &[Point],
    width: Width,
) -> Result<String, ChartError> {
    let rows = stage_rows(runs, points);
    let height = 120 + 40 * rows.len().max(1) as u32;
    svg("stages", width, height, |root| {
        if rows.is_empty() {
            empty_note(root, width, "No run has finished yet.")?;
            return Ok(());
        }
        let n = rows.len() as f64;
        // The run labels get a column of their own right of the bars: the axis ends at 100 %.
        let (plot, _) = root.split_horizontally(width.px() - width.stage_labels());
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(8)
            .margin_top(match width {
                Width::Wide => 36,
                Width::Narrow => 56,
            })
            .build_cartesian_2d(0f64..100f64, 0f64..n)?;
        chart
            .configure_mesh()
            .axis_desc_style((FONT, width.font(13)))
            .max_light_lines(0)
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&|x| format!("{x:.0}%"))
            .x_desc("share of the run's wall time")
            .label_style((FONT, width.font(13)))
            .draw()?;
        let parts = [
            ("reader busy", BLUE, 0usize, 0.55, 0.9),
            ("reader waiting", LIGHT_BLUE, 1, 0.55, 0.9),
            ("writer busy", ORANGE, 2, 0.1, 0.45),
            ("writer waiting", LIGHT_ORANGE, 3, 0.1, 0.45),
        ];
        for (index, (label, values)) in rows.iter().enumerate() {
            let base = n - 1.0 - index as f64;
            let mut reader_x = 0.0;
            let mut writer_x = 0.0;
            for (_, color, slot, low, high) in parts {
                let start = if slot < 2 {
                    &mut reader_x
                } else {
                    &mut writer_x
                };
                let end = (*start + values[slot]).min(100.0);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(*start, base + low), (end, base + high)],
                    color.filled(),
                )))?;
                *start = end;
            }
            let (x, y) = chart.backend_coord(&(100.0, base + 0.7));
            root.draw(&Text::new(
                label.clone(),
                (x + 8, y),
                (FONT, width.font(12)).into_font().color(&INK),
            ))?;
        }
        legend_row(root, width, &parts.map(|(label, color, ..)| (label, color)))?;
        Ok(())
    })
}

/// The rows of the stage chart, each labelled, with its reader busy and waiting and writer busy
/// and waiting shares: a row per finished run, or with many runs one per test, for the run
/// that stands for its best point (the run the verdict's stage accounting reads).
fn stage_rows(runs: &[RunView<'_>], points: &[Point]) -> Vec<(String, [f64; 4])> {
    let per_run: Vec<(&RunView<'_>, [f64; 4])> = runs
        .iter()
        .filter_map(|run| {
            let result = run.result?;
            // A run cut short or failed has no stage accounting to compare.
            let s = &result.stages;
            if result.status != crate::engine::result::RunStatus::Done {
                return None;
            }
            // A tool that kept its own repository passed through no stage of the lab's: an
            // empty row says nothing.
            if [
                s.reader_busy_pct,
                s.reader_wait_pct,
                s.writer_busy_pct,
                s.writer_wait_pct,
            ]
            .iter()
            .all(|share| *share <= 0.0)
            {
                return None;
            }
            Some((
                run,
                [
                    s.reader_busy_pct,
                    s.reader_wait_pct,
                    s.writer_busy_pct,
                    s.writer_wait_pct,
                ],
            ))
        })
        .collect();
    // Many runs: one row per test, for the run that stands for its best point (the run the
    // verdict's stage accounting reads).
    if per_run.len() <= MAX_STAGE_ROWS {
        per_run
            .iter()
            .map(|(run, values)| {
                let label = match &run.params.tool {
                    Some(tool) => {
                        format!("#{} {} ({})", run.number, run.test.label(), tool.label())
                    }
                    None => format!("#{} {}", run.number, run.test.label()),
                };
                (label, *values)
            })
            .collect()
    } else {
        crate::analysis::points::best_per_test(points)
            .into_iter()
            .filter_map(|(test, point)| {
                let number = point?.figure.as_ref()?.run;
                let (run, values) = per_run.iter().find(|(run, _)| run.number == number)?;
                Some((
                    format!("#{} {} (its best point)", run.number, test.label()),
                    *values,
                ))
            })
            .collect()
    }
}
