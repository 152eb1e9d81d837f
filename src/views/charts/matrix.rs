//! The matrix chart: a sweep as a tuning chart, MB/s along the swept parameter.

use super::sweep::{Drawn, points_of};
use super::*;

/// The parameter a sweep chart runs along: clients when a network sweep varies them (as seed
/// 000 plots), else an object store's part size or parts in flight when they vary, else
/// streams when they vary, else block size (seed 001's transfer-size curve, on a log scale).
#[derive(Debug, Clone, Copy, PartialEq)]
enum SweepAxis {
    Clients,
    Streams,
    BlockSize,
    PartSize,
    Concurrency,
}

impl SweepAxis {
    fn of(points: &[Drawn]) -> SweepAxis {
        let varies = |value: fn(&Drawn) -> u64| {
            let first = points.first().map(&value);
            points.iter().any(|p| Some(value(p)) != first)
        };
        if varies(|p| u64::from(p.setting.clients)) {
            SweepAxis::Clients
        } else if varies(|p| p.setting.part_size) {
            SweepAxis::PartSize
        } else if varies(|p| u64::from(p.setting.concurrency)) {
            SweepAxis::Concurrency
        } else if !varies(|p| u64::from(p.setting.streams)) && varies(|p| p.setting.block_size) {
            SweepAxis::BlockSize
        } else {
            SweepAxis::Streams
        }
    }

    fn name(self) -> &'static str {
        match self {
            SweepAxis::Clients => "clients",
            SweepAxis::Streams => "streams",
            SweepAxis::BlockSize => "block size",
            SweepAxis::PartSize => "part size",
            SweepAxis::Concurrency => "parts in flight",
        }
    }

    fn x(self, point: &Drawn) -> f64 {
        match self {
            SweepAxis::Clients => f64::from(point.setting.clients),
            SweepAxis::Streams => f64::from(point.setting.streams),
            SweepAxis::BlockSize => (point.setting.block_size.max(1) as f64).log2(),
            SweepAxis::PartSize => (point.setting.part_size.max(1) as f64).log2(),
            SweepAxis::Concurrency => f64::from(point.setting.concurrency),
        }
    }

    /// The other parameters, which make a line of their own.
    fn line(self, point: &Drawn) -> (u32, u64) {
        match self {
            SweepAxis::BlockSize => (point.setting.buffers, u64::from(point.setting.streams)),
            SweepAxis::PartSize => (point.setting.concurrency, u64::from(point.setting.streams)),
            SweepAxis::Concurrency => (point.setting.streams, point.setting.part_size),
            _ => (point.setting.buffers, point.setting.block_size),
        }
    }

    fn line_label(self, (first, other): (u32, u64)) -> String {
        let streams = |count: u64| match count {
            1 => "1 stream".to_string(),
            _ => format!("{count} streams"),
        };
        match self {
            SweepAxis::BlockSize => format!("{first} buffers, {}", streams(other)),
            SweepAxis::PartSize => format!("{first} in flight, {}", streams(other)),
            SweepAxis::Concurrency => format!(
                "{} parts, {}",
                format_bytes(other),
                streams(u64::from(first))
            ),
            _ => format!("{first} × {}", format_bytes(other)),
        }
    }

    fn legend_title(self) -> &'static str {
        match self {
            SweepAxis::BlockSize => "buffers, streams",
            SweepAxis::PartSize => "in flight, streams",
            SweepAxis::Concurrency => "part size, streams",
            _ => "buffers × block",
        }
    }

    fn tick(self, x: f64) -> String {
        if (x - x.round()).abs() > 1e-9 {
            return String::new();
        }
        match self {
            SweepAxis::BlockSize | SweepAxis::PartSize => format_bytes(2f64.powf(x.round()) as u64),
            _ => format!("{x:.0}"),
        }
    }
}

/// A sweep in the shape of a tuning chart: x = the swept parameter (`SweepAxis`), y = MB/s,
/// one line per combination of the others; repeats drawn as the median with min–max whiskers.
pub fn matrix_chart(
    points: &[Point],
    test: Option<TestKind>,
    width: Width,
) -> Result<String, ChartError> {
    let shown = points_of(points, test);
    let axis = SweepAxis::of(&shown);
    let mut combinations: Vec<(u32, u64)> = Vec::new();
    for point in &shown {
        if !combinations.contains(&axis.line(point)) {
            combinations.push(axis.line(point));
        }
    }
    // The legend gets a column of its own: sweeps often have a dozen combinations or more.
    let height = (380).max(70 + 16 * combinations.len() as u32);
    svg("matrix", width, height, |root| {
        let Some(test) = test.filter(|_| !shown.is_empty()) else {
            empty_note(root, width, "No parameter sweep measured yet.")?;
            return Ok(());
        };
        let (plot, legend) = root.split_horizontally(width.px() - LEGEND_WIDTH);
        let root = &plot;
        let x_of = |p: &Drawn| axis.x(p);
        let x_min = shown.iter().map(&x_of).fold(f64::MAX, f64::min);
        let x_max = shown.iter().map(&x_of).fold(0.0, f64::max);
        let y_max = shown.iter().map(|p| p.max).fold(0.0f64, f64::max);
        let pad = ((x_max - x_min) * 0.05).max(0.5);
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .caption(
                format!(
                    "{} by {} (median MB/s; rings: not valid)",
                    test.label(),
                    axis.name()
                ),
                (FONT, width.font(15)),
            )
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d((x_min - pad)..(x_max + pad), 0f64..nice_max(y_max))?;
        chart
            .configure_mesh()
            .axis_desc_style((FONT, width.font(13)))
            .max_light_lines(0)
            .x_desc(axis.name())
            .y_desc("MB/s")
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_label_formatter(&|x| axis.tick(*x))
            .label_style((FONT, width.font(13)))
            .draw()?;
        for (index, combination) in combinations.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let line: Vec<&Drawn> = shown
                .iter()
                .filter(|p| axis.line(p) == *combination)
                .collect();
            let xy: Vec<(f64, f64)> = line.iter().map(|p| (x_of(p), p.median)).collect();
            chart
                .draw_series(LineSeries::new(xy.iter().copied(), color.stroke_width(2)))?
                .label(axis.line_label(*combination))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            // A point whose runs are not valid is a hollow ring, never a dot like the others.
            chart.draw_series(line.iter().map(|p| {
                let style = if p.valid {
                    color.filled()
                } else {
                    color.stroke_width(2)
                };
                Circle::new((x_of(p), p.median), if p.valid { 3 } else { 5 }, style)
            }))?;
            for point in line.iter().filter(|p| p.runs > 1) {
                let x = x_of(point);
                let cap = pad * 0.15;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, point.min), (x, point.max)],
                    color.stroke_width(1),
                )))?;
                for y in [point.min, point.max] {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x - cap, y), (x + cap, y)],
                        color.stroke_width(1),
                    )))?;
                }
            }
        }
        legend_column(&legend, width, axis, &combinations)
    })
}

/// The legend's column beside the plot: a line's colour and its combination, under the title
/// of what the lines differ in.
fn legend_column(
    legend: &Area<'_>,
    width: Width,
    axis: SweepAxis,
    combinations: &[(u32, u64)],
) -> Result<(), Box<dyn std::error::Error>> {
    for (index, combination) in combinations.iter().enumerate() {
        let color = Palette99::pick(index).to_rgba();
        let y = 40 + 16 * index as i32;
        legend.draw(&PathElement::new(
            vec![(6, y), (24, y)],
            color.stroke_width(2),
        ))?;
        legend.draw(&Text::new(
            axis.line_label(*combination),
            (30, y - 6),
            (FONT, width.font(12)).into_font().color(&INK),
        ))?;
    }
    legend.draw(&Text::new(
        axis.legend_title().to_string(),
        (6, 14),
        (FONT, width.font(12)).into_font().color(&GREY),
    ))?;
    Ok(())
}
