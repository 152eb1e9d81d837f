//! The report's charts, drawn with plotters as SVG on the server. SVG text needs no font files:
//! the browser draws the labels. Each function is pure: runs in, an SVG document out.

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

/// The network run whose clients the contribution chart shows: the fastest finished one.
pub fn clients_run<'r, 'a>(runs: &'r [RunView<'a>]) -> Option<&'r RunView<'a>> {
    runs.iter()
        .filter(|run| {
            run.result
                .is_some_and(|result| result.clients.as_ref().is_some_and(|c| !c.is_empty()))
        })
        .max_by(|a, b| {
            let rate = |run: &RunView<'_>| run.result.map_or(0.0, |r| r.mb_per_s);
            rate(a).total_cmp(&rate(b))
        })
}

/// A network run's throughput over time, stacked by client: each band is what one client
/// delivered, and the top edge is the run's total at that moment.
pub fn clients_chart(runs: &[RunView<'_>], width: Width) -> Result<String, ChartError> {
    let run = clients_run(runs);
    let clients = run
        .and_then(|run| run.result)
        .and_then(|result| result.clients.clone())
        .unwrap_or_default();
    svg("clients", width, 340, |root| {
        let Some(run) = run.filter(|_| clients.iter().any(|c| !c.samples.is_empty())) else {
            empty_note(
                root,
                width,
                "No per-client samples: the network run was shorter than a sample (250 ms).",
            )?;
            return Ok(());
        };
        let (plot, legend) = root.split_horizontally(width.px() - LEGEND_WIDTH);
        let steps = clients.iter().map(|c| c.samples.len()).max().unwrap_or(0);
        // Cumulative tops, client by client, at each sample instant.
        let mut below = vec![0.0f64; steps];
        let mut bands = Vec::new();
        for client in &clients {
            let mut band = Vec::with_capacity(steps);
            for (index, base) in below.iter_mut().enumerate() {
                let sample = client.samples.get(index);
                let t = sample.map_or(0.0, |s| s.t);
                let top = *base + sample.map_or(0.0, |s| s.mb_per_s);
                band.push((t, *base, top));
                *base = top;
            }
            bands.push(band);
        }
        let t_max = bands
            .iter()
            .flat_map(|band| band.iter().map(|p| p.0))
            .fold(0.25f64, f64::max);
        let y_max = below.iter().copied().fold(0.0f64, f64::max);
        let caption = format!(
            "run #{}: {}, stacked",
            run.number,
            crate::analysis::counted(clients.len() as u64, "client", "clients")
        );
        let mut chart = time_axes(&plot, width, caption, t_max, y_max)?;
        for (index, band) in bands.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let mut outline: Vec<(f64, f64)> = band.iter().map(|&(t, _, top)| (t, top)).collect();
            outline.extend(band.iter().rev().map(|&(t, base, _)| (t, base)));
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(0.55).filled(),
            )))?;
            chart.draw_series(LineSeries::new(
                band.iter().map(|&(t, _, top)| (t, top)),
                color.stroke_width(1),
            ))?;
        }
        for (index, client) in clients.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let y = 40 + 16 * index as i32;
            legend.draw(&Rectangle::new(
                [(6, y - 5), (20, y + 5)],
                color.mix(0.55).filled(),
            ))?;
            let failed = if client.status == crate::engine::result::ClientStatus::Failed {
                " ✖"
            } else {
                ""
            };
            legend.draw(&Text::new(
                format!("{}{failed}", client.name),
                (26, y - 6),
                (FONT, width.font(12)).into_font().color(&INK),
            ))?;
        }
        Ok(())
    })
}

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
                    "all {} runs, backup first; one MB/s scale; shaded: the steady window",
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
            panel.draw(area, width, y_max)?;
        }
        Ok(())
    })
}

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

    fn title(&self) -> String {
        let head = format!("#{} {}", self.run.number, self.run.test.label());
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
    ) -> Result<(), Box<dyn std::error::Error>> {
        let t_max = self.points.iter().map(|p| p.0).fold(self.seconds, f64::max);
        // A run still starting has no length yet: a quarter second, a sample's worth.
        let t_max = if t_max > 0.0 { t_max } else { 0.25 };
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .caption(self.title(), (FONT, width.font(13)))
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

/// Stage accounting per run: how much of the wall time the readers and the writer were busy
/// and how much they waited for each other.
pub fn stages_chart(
    runs: &[RunView<'_>],
    points: &[Point],
    width: Width,
) -> Result<String, ChartError> {
    let per_run: Vec<(&RunView<'_>, [f64; 4])> = runs
        .iter()
        .filter_map(|run| {
            let result = run.result?;
            // A run cut short or failed has no stage accounting to compare.
            let s = &result.stages;
            if result.status != crate::engine::result::RunStatus::Done {
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
    let rows: Vec<(String, [f64; 4])> = if per_run.len() <= MAX_STAGE_ROWS {
        per_run
            .iter()
            .map(|(run, values)| (format!("#{} {}", run.number, run.test.label()), *values))
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
    };
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

/// A sweep's point as its charts draw it: the setting, the figure and how far to trust it.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    setting: Setting,
    median: f64,
    min: f64,
    max: f64,
    /// Runs the figure rests on.
    runs: usize,
    valid: bool,
    best: bool,
    stands_out: bool,
    spread_pct: Option<f64>,
}

/// The points of `test` that have a figure, as the sweep charts draw them.
fn points_of(points: &[Point], test: Option<TestKind>) -> Vec<Drawn> {
    let Some(test) = test else {
        return Vec::new();
    };
    points
        .iter()
        .filter(|p| p.test == test)
        .filter_map(|p| {
            let figure = p.figure.as_ref()?;
            Some(Drawn {
                setting: setting_of(p),
                median: figure.mb_per_s,
                min: figure.min,
                max: figure.max,
                runs: figure.n,
                valid: figure.valid,
                best: p.best,
                stands_out: p.stands_out,
                spread_pct: figure.spread_pct,
            })
        })
        .collect()
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
    })
}

/// What a heat map's rows and columns are: buffers × block size, or for a sweep of an object
/// store's uploads, parts in flight × part size. The other parameters make the panels.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Grid {
    BuffersByBlock,
    ConcurrencyByPartSize,
}

/// A point's place on a heat map: its panel (clients, streams, and on the object-store grid
/// buffers and block size), row and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    panel: (u32, u32, u32, u64),
    row: u64,
    column: u64,
}

impl Grid {
    fn of(points: &[Drawn]) -> Grid {
        let first = points.first();
        let varies =
            |value: fn(&Drawn) -> u64| points.iter().any(|p| Some(value(p)) != first.map(value));
        if varies(|p| p.setting.part_size) || varies(|p| u64::from(p.setting.concurrency)) {
            Grid::ConcurrencyByPartSize
        } else {
            Grid::BuffersByBlock
        }
    }

    /// Where the setting lies.
    fn cell(self, setting: Setting) -> Cell {
        let Setting {
            buffers,
            block_size,
            streams,
            clients,
            part_size,
            concurrency,
        } = setting;
        match self {
            Grid::BuffersByBlock => Cell {
                panel: (clients, streams, 0, 0),
                row: u64::from(buffers),
                column: block_size,
            },
            Grid::ConcurrencyByPartSize => Cell {
                panel: (clients, streams, buffers, block_size),
                row: u64::from(concurrency),
                column: part_size,
            },
        }
    }

    fn caption(self) -> &'static str {
        match self {
            Grid::BuffersByBlock => "rows are buffers, columns block sizes",
            Grid::ConcurrencyByPartSize => "rows are parts in flight, columns part sizes",
        }
    }

    fn row_label(self, row: u64) -> String {
        match self {
            Grid::BuffersByBlock => format!("{row} buf"),
            Grid::ConcurrencyByPartSize => format!("{row} fly"),
        }
    }

    /// A panel's title: its streams (and clients), and on the object-store grid the ring when
    /// the panels differ in it.
    fn title(self, panel: (u32, u32, u32, u64), rings_differ: bool) -> String {
        let (clients, streams, buffers, block_size) = panel;
        let mut title = if streams == 1 {
            "1 stream".to_string()
        } else {
            format!("{streams} streams")
        };
        if clients > 0 {
            title = format!("{clients} clients × {title}");
        }
        if self == Grid::ConcurrencyByPartSize && rings_differ {
            title = format!("{title}, {buffers} × {}", format_bytes(block_size));
        }
        title
    }
}

/// The parameters a heat map places a point by; `part_size` and `concurrency` are 0 for
/// targets other than an object store.
#[derive(Debug, Clone, Copy)]
struct Setting {
    buffers: u32,
    block_size: u64,
    streams: u32,
    clients: u32,
    part_size: u64,
    concurrency: u32,
}

/// A point's setting as the heat map places it, whether or not it has a figure.
fn setting_of(point: &Point) -> Setting {
    setting_of_params(&point.params)
}

/// The setting of a run's parameters.
fn setting_of_params(params: &RunParams) -> Setting {
    Setting {
        buffers: params.buffers,
        block_size: params.block_size,
        streams: params.streams,
        clients: params.clients.unwrap_or(0),
        part_size: params.part_size.unwrap_or(0),
        concurrency: params.concurrency.unwrap_or(0),
    }
}

/// A sweep as a heat map: a panel per stream count (and client count, for a network sweep),
/// rows of buffers, columns of block sizes (rows of parts in flight and columns of part sizes
/// for an object store's uploads: `Grid`); each cell's shade is its median MB/s on one scale for
/// all panels, with the figure and the repeats' spread written in it; the best cell outlined.
/// The settings of `unexplored` (points an adaptive search did not run) get cells of their
/// own, marked unexplored: neither empty nor zero.
pub fn heatmap_chart(
    points: &[Point],
    test: Option<TestKind>,
    unexplored: &[RunParams],
    width: Width,
) -> Result<String, ChartError> {
    let shown = points_of(points, test);
    let grid = Grid::of(&shown);
    let cell_of = |p: &Drawn| grid.cell(p.setting);
    let unexplored: Vec<Cell> = unexplored
        .iter()
        .map(|params| grid.cell(setting_of_params(params)))
        .collect();
    let sorted = |mut values: Vec<u64>| {
        values.sort_unstable();
        values.dedup();
        values
    };
    // A panel per client count and stream count: a network sweep may vary both.
    let mut panels: Vec<(u32, u32, u32, u64)> = shown
        .iter()
        .map(|p| cell_of(p).panel)
        .chain(unexplored.iter().map(|cell| cell.panel))
        .collect();
    panels.sort_unstable();
    panels.dedup();
    let rings_differ = panels
        .iter()
        .any(|panel| (panel.2, panel.3) != (panels[0].2, panels[0].3));
    let buffers = sorted(
        shown
            .iter()
            .map(|p| cell_of(p).row)
            .chain(unexplored.iter().map(|cell| cell.row))
            .collect(),
    );
    let blocks = sorted(
        shown
            .iter()
            .map(|p| cell_of(p).column)
            .chain(unexplored.iter().map(|cell| cell.column))
            .collect(),
    );
    let columns_per_row = panels.len().clamp(1, width.columns(3));
    let panel_rows = panels.len().div_ceil(columns_per_row).max(1);
    const CELL_HEIGHT: i32 = 34;
    const TOP: i32 = 40;
    const LEFT: i32 = 52;
    // The caption and the legend above the panels (two lines more on a phone).
    let head: i32 = match width {
        Width::Wide => 46,
        Width::Narrow => 92,
    };
    let panel_height = TOP + CELL_HEIGHT * buffers.len().max(1) as i32 + 24;
    let height = head as u32 + panel_height as u32 * panel_rows as u32;
    svg("heatmap", width, height, |root| {
        let Some(test) = test.filter(|_| !shown.is_empty()) else {
            empty_note(root, width, "No parameter sweep measured yet.")?;
            return Ok(());
        };
        // The shade spans the valid points (all of them when none is): a point whose runs
        // are not valid is hatched instead, never a colour on the scale.
        let any_valid = shown.iter().any(|p| p.valid);
        let on_scale: Vec<f64> = shown
            .iter()
            .filter(|p| p.valid || !any_valid)
            .map(|p| p.median)
            .collect();
        let (low, high) = heat_scale(&on_scale);
        // The sweep's best point, outlined only when it beats the runner-up by more than noise.
        let best = shown.iter().position(|p| p.best && p.stands_out);
        let caption = [
            format!("{}:", test.label()),
            "median MB/s of each point's valid runs;".to_string(),
            if unexplored.is_empty() {
                grid.caption().to_string()
            } else {
                format!(
                    "{}; {} point(s) the adaptive search did not run are marked unexplored",
                    grid.caption(),
                    unexplored.len()
                )
            },
        ];
        let caption: Vec<String> = match width {
            Width::Wide => vec![caption.join(" ")],
            Width::Narrow => caption.to_vec(),
        };
        for (line, text) in caption.iter().enumerate() {
            root.draw(&Text::new(
                text.clone(),
                (12, 6 + 14 * line as i32),
                (FONT, width.font(12)).into_font().color(&INK),
            ))?;
        }
        // The legend: the shade's scale, then what hatching and the outline mean (on a
        // phone, on a line of their own).
        let scale_y = 10 + 14 * caption.len() as i32;
        const STEPS: i32 = 10;
        const STEP_WIDTH: i32 = 12;
        let low_words = format!("{low:.0}");
        let high_words = format!("{high:.0} MB/s");
        root.draw(&Text::new(
            low_words.clone(),
            (12, scale_y),
            (FONT, width.font(11)).into_font().color(&INK),
        ))?;
        let bar_x = 12 + 6 * low_words.len() as i32 + 6;
        for step in 0..STEPS {
            let x = bar_x + STEP_WIDTH * step;
            root.draw(&Rectangle::new(
                [(x, scale_y), (x + STEP_WIDTH, scale_y + 12)],
                shade(f64::from(step) / f64::from(STEPS - 1)).filled(),
            ))?;
        }
        let after_bar = bar_x + STEP_WIDTH * STEPS + 6;
        root.draw(&Text::new(
            high_words.clone(),
            (after_bar, scale_y),
            (FONT, width.font(11)).into_font().color(&INK),
        ))?;
        let (swatch, swatch_y) = match width {
            Width::Wide => (after_bar + 6 * high_words.len() as i32 + 12, scale_y),
            Width::Narrow => (12, scale_y + 16),
        };
        let cell = [(swatch, swatch_y), (swatch + 14, swatch_y + 12)];
        root.draw(&Rectangle::new(cell, WHITE.filled()))?;
        hatch(root, cell)?;
        root.draw(&Rectangle::new(cell, GREY.stroke_width(1)))?;
        root.draw(&Text::new(
            "not valid",
            (swatch + 18, swatch_y),
            (FONT, width.font(11)).into_font().color(&INK),
        ))?;
        let outline = swatch + 18 + 6 * 9 + 12;
        // A path, not a rectangle: the only red-outlined rectangle is the best cell itself.
        root.draw(&PathElement::new(
            vec![
                (outline, swatch_y),
                (outline + 14, swatch_y),
                (outline + 14, swatch_y + 12),
                (outline, swatch_y + 12),
                (outline, swatch_y),
            ],
            RED.stroke_width(2),
        ))?;
        root.draw(&Text::new(
            "best beyond noise",
            (outline + 18, swatch_y),
            (FONT, width.font(11)).into_font().color(&INK),
        ))?;
        let panel_width = (width.px() as i32 - 12) / columns_per_row as i32;
        let cell_width = ((panel_width - LEFT - 12) / blocks.len().max(1) as i32).max(30);
        for (index, panel) in panels.iter().enumerate() {
            let x0 = 6 + panel_width * (index % columns_per_row) as i32;
            let y0 = head + panel_height * (index / columns_per_row) as i32;
            root.draw(&Text::new(
                grid.title(*panel, rings_differ),
                (x0 + LEFT, y0 + 2),
                (FONT, width.font(13))
                    .into_font()
                    .style(FontStyle::Bold)
                    .color(&INK),
            ))?;
            for (column, block) in blocks.iter().enumerate() {
                root.draw(&Text::new(
                    format_bytes(*block),
                    (x0 + LEFT + cell_width * column as i32 + 4, y0 + 20),
                    (FONT, width.font(12)).into_font().color(&GREY),
                ))?;
            }
            for (row, count) in buffers.iter().enumerate() {
                let y = y0 + TOP + CELL_HEIGHT * row as i32;
                root.draw(&Text::new(
                    grid.row_label(*count),
                    (x0 + 4, y + 10),
                    (FONT, width.font(12)).into_font().color(&GREY),
                ))?;
                for (column, block) in blocks.iter().enumerate() {
                    let x = x0 + LEFT + cell_width * column as i32;
                    let cell = [(x, y), (x + cell_width - 2, y + CELL_HEIGHT - 2)];
                    let here = Cell {
                        panel: *panel,
                        row: *count,
                        column: *block,
                    };
                    let found = shown.iter().position(|p| cell_of(p) == here);
                    let Some((at, point)) = found.map(|at| (at, &shown[at])) else {
                        root.draw(&Rectangle::new(cell, GREY.mix(0.15).filled()))?;
                        if unexplored.contains(&here) {
                            root.draw(&Text::new(
                                "unexplored",
                                (x + 4, y + 3),
                                (FONT, width.font(11)).into_font().color(&GREY),
                            ))?;
                            continue;
                        }
                        // A point measured nothing: why, in the tables' word for it.
                        let why = points
                            .iter()
                            .find(|p| p.test == test && grid.cell(setting_of(p)) == here);
                        if let Some(why) = why.and_then(Point::no_figure) {
                            root.draw(&Text::new(
                                why.word(),
                                (x + 4, y + 3),
                                (FONT, width.font(11)).into_font().color(&INK),
                            ))?;
                        }
                        continue;
                    };
                    let share = if high > low {
                        ((point.median - low) / (high - low)).clamp(0.0, 1.0)
                    } else {
                        1.0
                    };
                    if point.valid || !any_valid {
                        root.draw(&Rectangle::new(cell, shade(share).filled()))?;
                    } else {
                        root.draw(&Rectangle::new(cell, WHITE.filled()))?;
                        hatch(root, cell)?;
                    }
                    if best == Some(at) {
                        root.draw(&Rectangle::new(cell, RED.stroke_width(3)))?;
                    }
                    let shaded = point.valid || !any_valid;
                    let ink = if shaded && share > 0.55 { WHITE } else { INK };
                    root.draw(&Text::new(
                        // One decimal, as every table shows the point's figure.
                        if shaded {
                            format!("{:.1}", point.median)
                        } else {
                            format!("{:.1} not valid", point.median)
                        },
                        (x + 4, y + 3),
                        (FONT, width.font(12)).into_font().color(&ink),
                    ))?;
                    if let Some(spread) = point.spread_pct {
                        root.draw(&Text::new(
                            format!("±{spread:.0}%"),
                            (x + 4, y + 17),
                            (FONT, width.font(11)).into_font().color(&ink),
                        ))?;
                    }
                }
            }
        }
        Ok(())
    })
}

/// The least span of a heat map's shade, as a share of the median figure on it: ±5 % about
/// the middle of the figures. Repeats of one setting differ by a few percent on a quiet disk,
/// so figures within that much of each other are drawn in nearly the same shade, and only
/// differences beyond run-to-run noise show as contrast.
pub const HEAT_MIN_SPAN_SHARE: f64 = 0.10;

/// The ends of a heat map's shade scale for the figures on it: their range, widened about its
/// middle to at least [`HEAT_MIN_SPAN_SHARE`] of their median.
pub fn heat_scale(figures_mb_s: &[f64]) -> (f64, f64) {
    let mut finite: Vec<f64> = figures_mb_s
        .iter()
        .copied()
        .filter(|f| f.is_finite())
        .collect();
    finite.sort_by(f64::total_cmp);
    if finite.is_empty() {
        return (0.0, 0.0);
    }
    let low = finite.iter().copied().fold(f64::MAX, f64::min);
    let high = finite.iter().copied().fold(f64::MIN, f64::max);
    let median = crate::noise::median(&finite);
    let least = HEAT_MIN_SPAN_SHARE * median.abs();
    if high - low >= least {
        return (low, high);
    }
    let middle = (low + high) / 2.0;
    ((middle - least / 2.0).max(0.0), middle + least / 2.0)
}

/// Diagonal lines across a cell: a point whose runs are not valid.
fn hatch(root: &Area<'_>, cell: [(i32, i32); 2]) -> Result<(), Box<dyn std::error::Error>> {
    let [(x0, y0), (x1, y1)] = cell;
    let mut offset = 0;
    while offset < (x1 - x0) + (y1 - y0) {
        let start = (x0 + offset.min(x1 - x0), y0 + (offset - (x1 - x0)).max(0));
        let end = (x0 + (offset - (y1 - y0)).max(0), y0 + offset.min(y1 - y0));
        root.draw(&PathElement::new(vec![start, end], GREY.mix(0.6)))?;
        offset += 8;
    }
    Ok(())
}

/// A heat map cell's colour: pale for the slowest point, deep blue for the fastest.
fn shade(share: f64) -> RGBColor {
    let share = share.clamp(0.0, 1.0);
    let mix =
        |pale: u8, deep: u8| (f64::from(pale) + (f64::from(deep) - f64::from(pale)) * share) as u8;
    RGBColor(mix(236, 31), mix(242, 79), mix(248, 130))
}

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
