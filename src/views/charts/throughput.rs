//! The throughput chart: MB/s over time, a panel per run.

use super::*;

/// MB/s over time as small multiples: a panel for every run on one MB/s scale, grouped by
/// test with the full (or network) backup first, each run's steady window shaded; a run too
/// short for a line shows its samples and its overall figure.
pub fn throughput_chart(runs: &[RunView<'_>], width: Width) -> Result<String, ChartError> {
    let mut panels: Vec<Panel<'_>> = runs.iter().filter_map(Panel::of).collect();
    // The backup is the run that matters: its panels come first, then the tests in table order.
    let order = |test: TestKind| match test {
        TestKind::FullBackup => 0,
        TestKind::NetworkBackup => 1,
        other => 2 + TestKind::ALL.iter().position(|t| *t == other).unwrap_or(0),
    };
    panels.sort_by_key(|panel| (order(panel.run.test), panel.run.number));
    let columns = panels.len().clamp(1, width.columns(3));
    let rows = panels.len().div_ceil(columns).max(1);
    let panel_height = match width {
        Width::Wide => PANEL_HEIGHT,
        Width::Narrow => NARROW_PANEL_HEIGHT,
    };
    let height = 34 + panel_height * rows as u32;
    svg("throughput", width, height, |root| {
        if panels.is_empty() {
            empty_note(
                root,
                width,
                "No samples: runs report MB/s every 250 ms, and these were shorter.",
            )?;
            return Ok(());
        }
        // One MB/s scale for every panel, so that panels compare at a glance.
        let y_max = nice_max(
            panels
                .iter()
                .flat_map(|panel| panel.points.iter().map(|p| p.1))
                .chain(panels.iter().map(|panel| panel.figure))
                .fold(0.0f64, f64::max),
        );
        root.draw(&Text::new(
            match width {
                Width::Wide => format!(
                    "all {} runs, backup first; one MB/s scale (a run far below the rest on its own, said in its title); shaded: the steady window",
                    panels.len()
                ),
                Width::Narrow => format!("all {} runs, backup first; shaded: steady", panels.len()),
            },
            (12, 8),
            (FONT, width.font(13)).into_font().color(&GREY),
        ))?;
        let (_, grid) = root.split_vertically(30);
        let areas = grid.split_evenly((rows, columns));
        for (panel, area) in panels.iter().zip(areas.iter()) {
            // A run far below the others (a backup tool at a tenth of a read's rate) would be
            // a flat line on their scale: it gets its own, and its title says so.
            let own = nice_max(
                panel
                    .points
                    .iter()
                    .map(|p| p.1)
                    .chain([panel.figure])
                    .fold(0.0f64, f64::max),
            );
            if own > 0.0 && own * OWN_SCALE_BELOW < y_max {
                panel.draw(area, width, own, true)?;
            } else {
                panel.draw(area, width, y_max, false)?;
            }
        }
        Ok(())
    })
}

/// A panel whose highest figure is below the shared scale's by this factor gets a scale of
/// its own.
const OWN_SCALE_BELOW: f64 = 10.0;

/// Height of one run's panel in the throughput chart, wide and on a phone.
const PANEL_HEIGHT: u32 = 150;
const NARROW_PANEL_HEIGHT: u32 = 130;

/// One run in the throughput chart: its samples, its figure and its steady window.
struct Panel<'a> {
    run: RunView<'a>,
    points: Vec<(f64, f64)>,
    /// The run's figure: its steady MB/s, or its overall MB/s; 0 while it runs.
    figure: f64,
    /// The steady window, when one was found.
    steady: Option<(f64, f64, f64)>,
    seconds: f64,
}

impl<'a> Panel<'a> {
    fn of(run: &RunView<'a>) -> Option<Self> {
        let run = *run;
        let samples = run.samples();
        let result = run.result;
        if samples.is_empty() && result.is_none_or(|r| r.seconds <= 0.0 || r.mb_per_s <= 0.0) {
            return None;
        }
        let points: Vec<(f64, f64)> = samples.iter().map(|s| (s.t, s.mb_per_s)).collect();
        let steady = result
            .and_then(|r| r.steady)
            .filter(|s| s.steady)
            .map(|s| (s.from_s, s.to_s, s.mb_per_s));
        Some(Self {
            run,
            // Only a finished run's rate is a figure; a cut or failed one shows its samples.
            figure: result
                .filter(|r| r.status == crate::engine::result::RunStatus::Done)
                .map_or(0.0, |r| steady.map_or(r.mb_per_s, |s| s.2)),
            seconds: result.map_or(0.0, |r| r.seconds),
            points,
            steady,
        })
    }

    fn title(&self, own_scale: bool) -> String {
        let head = match &self.run.params.tool {
            Some(tool) => format!(
                "#{} {} ({})",
                self.run.number,
                self.run.test.label(),
                tool.label()
            ),
            None => format!("#{} {}", self.run.number, self.run.test.label()),
        };
        let head = if own_scale {
            format!("{head} · own scale")
        } else {
            head
        };
        // By the rule every count of valid runs uses.
        let not_valid = if self
            .run
            .result
            .is_some_and(|result| !crate::analysis::points::counts_as_valid(result))
        {
            " · not valid"
        } else {
            ""
        };
        match self.run.phase {
            RunPhase::Cancelled => format!("{head} · cancelled, not a result"),
            RunPhase::Failed => format!("{head} · failed"),
            RunPhase::Running | RunPhase::Queued => format!("{head} · running"),
            _ if self.steady.is_some() => {
                format!("{head} · {:.1} MB/s steady{not_valid}", self.figure)
            }
            _ => format!("{head} · {:.1} MB/s{not_valid}", self.figure),
        }
    }

    fn draw(
        &self,
        area: &Area<'_>,
        width: Width,
        y_max: f64,
        own_scale: bool,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let t_max = self.points.iter().map(|p| p.0).fold(self.seconds, f64::max);
        // A run still starting has no length yet: a quarter second, a sample's worth.
        let t_max = if t_max > 0.0 { t_max } else { 0.25 };
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .caption(self.title(own_scale), (FONT, width.font(13)))
            .x_label_area_size(22)
            .y_label_area_size(44)
            .build_cartesian_2d(0f64..t_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .axis_desc_style((FONT, width.font(13)))
            .max_light_lines(0)
            .x_labels(5)
            .y_labels(4)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_label_formatter(&|x| {
                if t_max < 1.0 {
                    format!("{x:.2} s")
                } else {
                    format!("{x:.1} s")
                }
            })
            .label_style((FONT, width.font(11)))
            .draw()?;
        if let Some((from, to, mb)) = self.steady {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, 0.0), (to, y_max)],
                GREEN.mix(0.12).filled(),
            )))?;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(from, mb), (to, mb)],
                GREEN.mix(0.8).stroke_width(1),
            )))?;
        }
        if self.points.len() < 4 && self.seconds > 0.0 && self.figure > 0.0 {
            // A short run has few samples: its overall figure across its length says more.
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, self.figure), (self.seconds, self.figure)],
                GREY.stroke_width(2),
            )))?;
            chart.draw_series(
                self.points
                    .iter()
                    .map(|&p| Circle::new(p, 3, BLUE.filled())),
            )?;
        } else {
            chart.draw_series(LineSeries::new(
                self.points.iter().copied(),
                BLUE.stroke_width(2),
            ))?;
        }
        Ok(())
    }
}
