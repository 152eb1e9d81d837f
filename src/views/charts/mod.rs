//! The report's charts, drawn with plotters as SVG on the server, one file per chart. SVG text
//! needs no font files: the browser draws the labels. Each function is pure: the results model
//! and the run views in, an SVG document out. This file holds what they share: the chart's
//! name and width, the colours and fonts, the document, the frames and the axes.

mod clients;
mod compare;
mod heatmap;
mod matrix;
mod series;
mod stages;
mod sweep;
mod test_figures;
mod throughput;

pub use clients::{clients_chart, clients_run};
pub use compare::compare_chart;
pub use heatmap::{HEAT_MIN_SPAN_SHARE, heat_scale, heatmap_chart};
pub use matrix::matrix_chart;
pub use series::{ChangeMark, ReferenceMark, SeriesLine, SeriesMark, series_chart};
pub use stages::stages_chart;
pub use test_figures::tests_chart;
pub use throughput::throughput_chart;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::Verdict;
use crate::matrix::Point;
use crate::spec::{RunParams, TestKind, format_bytes};
use crate::views::run::{RunPhase, RunView};

/// A report's charts, each served as `/campaigns/{id}/charts/{name}.svg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// Each test's figure as a bar, the bottleneck in red.
    Tests,
    /// MB/s over time, a panel per run.
    Throughput,
    /// Readers and writer, busy and waiting, per run.
    Stages,
    /// A parameter sweep: MB/s by streams, a line per buffers × block size.
    Matrix,
    /// A parameter sweep as a heat map: buffers × block size, a panel per stream count.
    Heatmap,
    /// A network backup's clients, stacked over time.
    Clients,
}

impl Chart {
    /// Every chart, in the order a report shows them.
    pub const ALL: [Chart; 6] = [
        Chart::Heatmap,
        Chart::Tests,
        Chart::Throughput,
        Chart::Stages,
        Chart::Matrix,
        Chart::Clients,
    ];

    /// The name in its URL (`NAME.svg`) and its element id on the page.
    pub fn id(self) -> &'static str {
        match self {
            Chart::Tests => "tests",
            Chart::Throughput => "throughput",
            Chart::Stages => "stages",
            Chart::Matrix => "matrix",
            Chart::Heatmap => "heatmap",
            Chart::Clients => "clients",
        }
    }

    /// The chart a URL names.
    pub fn from_id(id: &str) -> Option<Chart> {
        Chart::ALL.into_iter().find(|chart| chart.id() == id)
    }

    /// The caption a report gives it.
    pub fn title(self) -> &'static str {
        match self {
            Chart::Tests => {
                "Each test's figure: median MB/s (steady, or whole run as the table says) of the \
                 valid runs at its best point; \
                 the bottleneck in red, the leading candidate of an inconclusive verdict in \
                 orange, a figure whose runs are not valid outlined"
            }
            Chart::Throughput => "Throughput over time, per run",
            Chart::Stages => "Stage accounting per run: readers and writer, busy and waiting",
            Chart::Matrix => {
                "Parameter sweep: MB/s along the swept parameter (clients, streams, or block size \
                 when only it varies), one line per combination of the others"
            }
            Chart::Heatmap => {
                "Parameter sweep: median MB/s (steady, or whole run as the table says) of each \
                 buffers × block size, a panel per \
                 stream count (per client count for a network backup); points that are not \
                 valid hatched, the best outlined only when it beats the runner-up by more \
                 than noise, ± the repeats' spread"
            }
            Chart::Clients => "Network backup: what each client delivered over time, stacked",
        }
    }
}

/// Most runs the per-run charts draw; a note says when more were measured.
pub const MAX_RUN_ROWS: usize = 40;
/// Above this many runs the stage chart shows one row per test instead of one per run.
pub const MAX_STAGE_ROWS: usize = 12;

/// How wide a chart is drawn: for a desk, or narrow enough to read on a phone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// 760 px, for a desk.
    Wide,
    /// 360 px, for a phone: a phone's card is at least as wide, so the chart is never drawn
    /// smaller than its labels' sizes.
    Narrow,
}

impl Width {
    /// The chart's name in a URL: `tests.svg` is wide, `tests.narrow.svg` narrow.
    pub fn of_file(file: &str) -> Option<(&str, Width)> {
        let name = file.strip_suffix(".svg")?;
        Some(match name.strip_suffix(".narrow") {
            Some(name) => (name, Width::Narrow),
            None => (name, Width::Wide),
        })
    }

    fn px(self) -> u32 {
        match self {
            Width::Wide => 760,
            Width::Narrow => 360,
        }
    }

    /// How many panels fit side by side, at most `wide`.
    fn columns(self, wide: usize) -> usize {
        match self {
            Width::Wide => wide,
            Width::Narrow => 1,
        }
    }

    /// A font size for this width: as given, and at least [`FONT_MIN`] on a desk and on a
    /// phone alike, so that no label is drawn below 11 px.
    fn font(self, size: u32) -> f64 {
        f64::from(size).max(FONT_MIN)
    }

    fn stage_labels(self) -> u32 {
        match self {
            Width::Wide => STAGE_LABEL_WIDTH,
            Width::Narrow => 150,
        }
    }
}
const BLUE: RGBColor = RGBColor(74, 120, 168);
const LIGHT_BLUE: RGBColor = RGBColor(170, 196, 222);
const ORANGE: RGBColor = RGBColor(214, 126, 44);
const LIGHT_ORANGE: RGBColor = RGBColor(240, 200, 160);
const RED: RGBColor = RGBColor(192, 57, 43);
const GREEN: RGBColor = RGBColor(60, 138, 69);
const GREY: RGBColor = RGBColor(150, 150, 150);
const INK: RGBColor = RGBColor(40, 40, 40);
const FONT: &str = "sans-serif";
/// The smallest font size of a chart: plotters writes a size as `size / 1.24` px in SVG (and
/// sizes axis text in whole units), so this is 11.3 px.
const FONT_MIN: f64 = 14.0;
/// Width of the column of run labels right of the stage bars.
const STAGE_LABEL_WIDTH: u32 = 230;
/// Width of the legend column beside a sweep chart.
const LEGEND_WIDTH: u32 = 140;

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the {chart} chart: {message}")]
pub struct ChartError {
    chart: &'static str,
    message: String,
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A chart with numbers on both axes, drawn into an SVG document.
type Plot<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Draws into a fresh SVG document of the given height.
fn svg(
    chart: &'static str,
    width: Width,
    height: u32,
    draw: impl FnOnce(&Area<'_>) -> Result<(), Box<dyn std::error::Error>>,
) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width.px(), height)).into_drawing_area();
        let fail = |message: String| ChartError { chart, message };
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        draw(&root).map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    Ok(out)
}

fn empty_note(root: &Area<'_>, width: Width, text: &str) -> Result<(), Box<dyn std::error::Error>> {
    root.draw(&Text::new(
        text.to_string(),
        (20, 30),
        (FONT, width.font(15)).into_font().color(&GREY),
    ))?;
    Ok(())
}

/// Horizontal bars' frame: MB/s along x from 0 to `x_max`, `rows` bands up the y axis
/// (labels are drawn on the bars), `top` pixels above for a legend.
fn bar_frame<'a, 'b>(
    root: &'a Area<'b>,
    width: Width,
    x_max: f64,
    rows: f64,
    top: u32,
) -> Result<Plot<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .margin_top(top)
        // Room for the last axis label.
        .margin_right(28)
        .x_label_area_size(36)
        .y_label_area_size(8)
        .build_cartesian_2d(0f64..x_max, 0f64..rows)?;
    chart
        .configure_mesh()
        .axis_desc_style((FONT, width.font(13)))
        .max_light_lines(0)
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("MB/s")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .label_style((FONT, width.font(13)))
        .draw()?;
    Ok(chart)
}

/// A legend along the top of the chart: a colour swatch and a label for each series.
fn legend_row(
    root: &Area<'_>,
    width: Width,
    items: &[(&str, RGBColor)],
) -> Result<(), Box<dyn std::error::Error>> {
    let right = root.dim_in_pixel().0 as i32;
    let (mut x, mut y) = (16, 12);
    for (label, color) in items {
        let step = 30 + 8 * label.len() as i32;
        if x > 16 && x + step > right {
            // Out of room on a narrow chart: the next row.
            (x, y) = (16, y + 18);
        }
        root.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], color.filled()))?;
        root.draw(&Text::new(
            label.to_string(),
            (x + 17, y - 1),
            (FONT, width.font(13)).into_font().color(&INK),
        ))?;
        x += step;
    }
    Ok(())
}

/// A round upper bound a little above `max`, so bars and lines do not touch the frame.
fn nice_max(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let target = max * 1.05;
    let magnitude = 10f64.powf(target.log10().floor());
    for step in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if step * magnitude >= target {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

/// Seconds across, MB/s up, with a caption: the axes of the charts drawn over a run's time.
fn time_axes<'a, 'b>(
    root: &'a Area<'b>,
    width: Width,
    caption: String,
    t_max: f64,
    y_max: f64,
) -> Result<Plot<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .caption(caption, (FONT, width.font(13)))
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..t_max, 0f64..nice_max(y_max))?;
    chart
        .configure_mesh()
        .axis_desc_style((FONT, width.font(13)))
        .max_light_lines(0)
        .x_desc("seconds")
        .y_desc("MB/s")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FONT, width.font(13)))
        .draw()?;
    Ok(chart)
}
