//! The heat map: a sweep's buffers × block size, a panel per stream count.

use super::sweep::{Drawn, Setting, points_of, setting_of, setting_of_params};
use super::*;

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
    let unexplored: Vec<Cell> = unexplored
        .iter()
        .map(|params| grid.cell(setting_of_params(params)))
        .collect();
    let sorted = |mut values: Vec<u64>| {
        values.sort_unstable();
        values.dedup();
        values
    };
    let cells: Vec<Cell> = shown
        .iter()
        .map(|p| grid.cell(p.setting))
        .chain(unexplored.iter().copied())
        .collect();
    // A panel per client count and stream count: a network sweep may vary both.
    let mut panels: Vec<(u32, u32, u32, u64)> = cells.iter().map(|cell| cell.panel).collect();
    panels.sort_unstable();
    panels.dedup();
    let buffers = sorted(cells.iter().map(|cell| cell.row).collect());
    let blocks = sorted(cells.iter().map(|cell| cell.column).collect());
    let columns_per_row = panels.len().clamp(1, width.columns(3));
    let panel_rows = panels.len().div_ceil(columns_per_row).max(1);
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
        let heat = Heat {
            points,
            shown: &shown,
            test,
            grid,
            unexplored: &unexplored,
            any_valid,
            low,
            high,
            // The sweep's best point, outlined only when it beats the runner-up by more
            // than noise.
            best: shown.iter().position(|p| p.best && p.stands_out),
            width,
            buffers: &buffers,
            blocks: &blocks,
        };
        heat.legend(root)?;
        let panel_width = (width.px() as i32 - 12) / columns_per_row as i32;
        let cell_width = ((panel_width - LEFT - 12) / blocks.len().max(1) as i32).max(30);
        let rings_differ = panels
            .iter()
            .any(|panel| (panel.2, panel.3) != (panels[0].2, panels[0].3));
        for (index, panel) in panels.iter().enumerate() {
            let x0 = 6 + panel_width * (index % columns_per_row) as i32;
            let y0 = head + panel_height * (index / columns_per_row) as i32;
            heat.panel(root, *panel, (x0, y0), cell_width, rings_differ)?;
        }
        Ok(())
    })
}

/// A heat map's rows' height, and its panels' margins above and left of the cells, in px.
const CELL_HEIGHT: i32 = 34;
const TOP: i32 = 40;
const LEFT: i32 = 52;

/// What a heat map's caption, legend and cells are drawn from.
struct Heat<'a> {
    points: &'a [Point],
    shown: &'a [Drawn],
    test: TestKind,
    grid: Grid,
    unexplored: &'a [Cell],
    any_valid: bool,
    /// The ends of the shade's scale, MB/s.
    low: f64,
    high: f64,
    /// The point outlined as the best beyond noise.
    best: Option<usize>,
    width: Width,
    /// The rows' and the columns' values, in order.
    buffers: &'a [u64],
    blocks: &'a [u64],
}

impl Heat<'_> {
    /// The caption, then the shade's scale and what hatching and the outline mean (on a
    /// phone, on a line of their own).
    fn legend(&self, root: &Area<'_>) -> Result<(), Box<dyn std::error::Error>> {
        let (width, low, high) = (self.width, self.low, self.high);
        let caption = [
            format!("{}:", self.test.label()),
            "median MB/s of each point's valid runs;".to_string(),
            if self.unexplored.is_empty() {
                self.grid.caption().to_string()
            } else {
                format!(
                    "{}; {} point(s) the adaptive search did not run are marked unexplored",
                    self.grid.caption(),
                    self.unexplored.len()
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
        Ok(())
    }

    /// One panel at `(x0, y0)`: its title, its columns' and rows' labels and its cells.
    fn panel(
        &self,
        root: &Area<'_>,
        panel: (u32, u32, u32, u64),
        (x0, y0): (i32, i32),
        cell_width: i32,
        rings_differ: bool,
    ) -> Result<(), Box<dyn std::error::Error>> {
        root.draw(&Text::new(
            self.grid.title(panel, rings_differ),
            (x0 + LEFT, y0 + 2),
            (FONT, self.width.font(13))
                .into_font()
                .style(FontStyle::Bold)
                .color(&INK),
        ))?;
        for (column, block) in self.blocks.iter().enumerate() {
            root.draw(&Text::new(
                format_bytes(*block),
                (x0 + LEFT + cell_width * column as i32 + 4, y0 + 20),
                (FONT, self.width.font(12)).into_font().color(&GREY),
            ))?;
        }
        for (row, count) in self.buffers.iter().enumerate() {
            let y = y0 + TOP + CELL_HEIGHT * row as i32;
            root.draw(&Text::new(
                self.grid.row_label(*count),
                (x0 + 4, y + 10),
                (FONT, self.width.font(12)).into_font().color(&GREY),
            ))?;
            for (column, block) in self.blocks.iter().enumerate() {
                let x = x0 + LEFT + cell_width * column as i32;
                let here = Cell {
                    panel,
                    row: *count,
                    column: *block,
                };
                self.cell(
                    root,
                    here,
                    [(x, y), (x + cell_width - 2, y + CELL_HEIGHT - 2)],
                )?;
            }
        }
        Ok(())
    }

    /// One cell: its point's shade (hatched when not valid), figure and spread; or, without a
    /// point, unexplored or why the point measured nothing.
    fn cell(
        &self,
        root: &Area<'_>,
        here: Cell,
        cell: [(i32, i32); 2],
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (width, low, high, any_valid) = (self.width, self.low, self.high, self.any_valid);
        let [(x, y), _] = cell;
        let (points, shown, test, grid) = (self.points, self.shown, self.test, self.grid);
        let found = shown.iter().position(|p| grid.cell(p.setting) == here);
        let Some((at, point)) = found.map(|at| (at, &shown[at])) else {
            root.draw(&Rectangle::new(cell, GREY.mix(0.15).filled()))?;
            if self.unexplored.contains(&here) {
                root.draw(&Text::new(
                    "unexplored",
                    (x + 4, y + 3),
                    (FONT, width.font(11)).into_font().color(&GREY),
                ))?;
                return Ok(());
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
            return Ok(());
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
        if self.best == Some(at) {
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
        Ok(())
    }
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
