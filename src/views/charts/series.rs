//! The series chart: one test's figure over a series' campaigns, with its runs' range as a
//! band, invalid points hollow, changes as dashed lines and other tools' figures as diamonds.
//!
//! Drawn with plotters like the other charts. A series page links every point to its campaign
//! and names it on hover, which plotters' SVG cannot say; so the document gets a layer of
//! links over the marks plotters drew (`links`), each at the place plotters drew its mark.

use std::fmt::Write;

use plotters::element::DashedPathElement;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;

/// One test's line of a series, as the chart draws it.
#[derive(Debug, Clone, Default)]
pub struct SeriesLine {
    /// The test, in words (for the chart's accessible name).
    pub label: String,
    /// How many campaigns the series has: the x axis runs from 1 to this.
    pub campaigns: usize,
    pub points: Vec<SeriesMark>,
    pub changes: Vec<ChangeMark>,
    pub references: Vec<ReferenceMark>,
}

/// A campaign's figure on the line.
#[derive(Debug, Clone)]
pub struct SeriesMark {
    /// The campaign's place in the series, from 1.
    pub number: usize,
    pub campaign: String,
    pub mb_per_s: f64,
    /// Its runs' range.
    pub min: f64,
    pub max: f64,
    pub runs: usize,
    pub valid: bool,
}

/// A change in the line: where it begins, which way, and in words.
#[derive(Debug, Clone)]
pub struct ChangeMark {
    /// The first campaign after it, and its place in the series.
    pub first_number: usize,
    pub first_campaign: String,
    pub slower: bool,
    pub words: String,
}

/// Another tool's figure at the campaign it was imported into.
#[derive(Debug, Clone)]
pub struct ReferenceMark {
    pub number: usize,
    pub campaign: String,
    pub tool: String,
    pub job: String,
    pub mb_per_s: f64,
    /// Its conditions, `name value` each.
    pub conditions: Vec<String>,
}

/// The drawing's height and margins, in px (its width is [`Width::Wide`]'s).
const HEIGHT: u32 = 220;
const LEFT: u32 = 56;
const RIGHT: u32 = 16;
const TOP: u32 = 12;
const BOTTOM: u32 = 28;
/// A dot's radius and a diamond's half-width, in px.
const DOT: i32 = 4;
const DIAMOND: i32 = 6;
const GRID: RGBColor = RGBColor(221, 221, 221);
const REFERENCE: RGBColor = RGBColor(230, 126, 34);
const REFERENCE_EDGE: RGBColor = RGBColor(156, 79, 12);

/// Where the marks of a line land, in px, for the link layer.
#[derive(Default)]
struct Placed {
    dots: Vec<(i32, i32)>,
    changes: Vec<(i32, i32, i32)>,
    diamonds: Vec<(i32, i32)>,
}

/// The line as an SVG document: campaigns along x by their place in the series, MB/s up y
/// from zero; every point a link to its campaign.
pub fn series_chart(line: &SeriesLine) -> Result<String, ChartError> {
    let mut placed = Placed::default();
    let svg = svg("series", Width::Wide, HEIGHT, |root| {
        placed = draw(root, line)?;
        Ok(())
    })?;
    Ok(with_links(&svg, line, &placed))
}

/// The highest MB/s the y axis reaches: a tenth above the highest mark.
fn y_top(line: &SeriesLine) -> f64 {
    line.points
        .iter()
        .map(|p| p.max.max(p.mb_per_s))
        .chain(line.references.iter().map(|r| r.mb_per_s))
        .fold(0.0_f64, f64::max)
        .max(1.0)
        * 1.1
}

fn draw(root: &Area<'_>, line: &SeriesLine) -> Result<Placed, Box<dyn std::error::Error>> {
    let count = line.campaigns.max(2) as f64;
    let top = y_top(line);
    let mut chart = ChartBuilder::on(root)
        .margin_left(LEFT)
        .margin_right(RIGHT)
        .margin_top(TOP)
        .margin_bottom(BOTTOM)
        .build_cartesian_2d(1f64..count, 0f64..top)?;
    let font = (FONT, Width::Wide.font(11)).into_font().color(&INK);
    // The MB/s grid and its labels, at round steps from zero.
    let step = nice_step(top / 4.0);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    for value in (0..).map(|i| f64::from(i) * step).take_while(|v| *v <= top) {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, value), (count, value)],
            GRID.stroke_width(1),
        )))?;
        let (_, y) = chart.backend_coord(&(1.0, value));
        root.draw(&Text::new(
            format!("{value:.decimals$}"),
            (LEFT as i32 - 6, y),
            font.pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
    }
    root.draw(&Text::new("MB/s", (12, 4), font.clone()))?;
    // Campaign numbers along x: about ten of them, and the last.
    let every = (line.campaigns / 10).max(1);
    for number in (1..=line.campaigns).filter(|n| (n - 1) % every == 0 || *n == line.campaigns) {
        let (x, _) = chart.backend_coord(&(number as f64, 0.0));
        root.draw(&Text::new(
            number.to_string(),
            (x, (HEIGHT - 10) as i32),
            font.pos(Pos::new(HPos::Center, VPos::Bottom)),
        ))?;
    }
    let mut placed = Placed::default();
    // A change between the last campaign before it and the first after it.
    for change in &line.changes {
        let x = change.first_number as f64 - 0.5;
        chart.draw_series(std::iter::once(DashedPathElement::new(
            vec![(x, top), (x, 0.0)],
            4,
            3,
            RED.stroke_width(1),
        )))?;
        let (px, y_top) = chart.backend_coord(&(x, top));
        let (_, y_bottom) = chart.backend_coord(&(x, 0.0));
        placed.changes.push((px, y_top, y_bottom));
    }
    let valid: Vec<&SeriesMark> = line.points.iter().filter(|p| p.valid).collect();
    let band: Vec<(f64, f64)> = valid
        .iter()
        .map(|p| (p.number as f64, p.max))
        .chain(valid.iter().rev().map(|p| (p.number as f64, p.min)))
        .collect();
    if !band.is_empty() {
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            LIGHT_BLUE.mix(0.5).filled(),
        )))?;
    }
    chart.draw_series(LineSeries::new(
        valid.iter().map(|p| (p.number as f64, p.mb_per_s)),
        BLUE.stroke_width(2),
    ))?;
    for point in &line.points {
        let at = (point.number as f64, point.mb_per_s);
        let fill = if point.valid { BLUE } else { WHITE };
        chart.draw_series([
            Circle::new(at, DOT, fill.filled()),
            Circle::new(at, DOT, BLUE.stroke_width(2)),
        ])?;
        placed.dots.push(chart.backend_coord(&at));
    }
    for reference in &line.references {
        let (x, y) = chart.backend_coord(&(reference.number as f64, reference.mb_per_s));
        let corners = diamond(x, y);
        root.draw(&Polygon::new(corners.clone(), REFERENCE.filled()))?;
        root.draw(&PathElement::new(
            [corners.as_slice(), &corners[..1]].concat(),
            REFERENCE_EDGE.stroke_width(1),
        ))?;
        placed.diamonds.push((x, y));
    }
    Ok(placed)
}

/// A diamond's corners about a point: top, right, bottom, left.
fn diamond(x: i32, y: i32) -> Vec<(i32, i32)> {
    vec![
        (x, y - DIAMOND),
        (x + DIAMOND, y),
        (x, y + DIAMOND),
        (x - DIAMOND, y),
    ]
}

/// The document with a layer of links over its marks: each point to its campaign, named on
/// hover, `valid` or `invalid` by class; each change to the campaign it begins at; each
/// diamond to the references of its campaign. The root gets the page's class and a name.
fn with_links(svg: &str, line: &SeriesLine, placed: &Placed) -> String {
    let mut layer = String::from("<g class=\"series-links\" fill-opacity=\"0\">");
    for (point, (x, y)) in line.points.iter().zip(&placed.dots) {
        let title = format!(
            "campaign {} ({}): {:.1} MB/s, {:.1}–{:.1} over {} run(s){}",
            point.number,
            point.campaign,
            point.mb_per_s,
            point.min,
            point.max,
            point.runs,
            if point.valid { "" } else { "; not valid" }
        );
        let _ = write!(
            layer,
            "<a href=\"/campaigns/{}\"><circle class=\"{}\" cx=\"{x}\" cy=\"{y}\" r=\"{}\" \
             fill=\"#fff\"><title>{}</title></circle></a>",
            escape(&point.campaign),
            if point.valid { "valid" } else { "invalid" },
            DOT + 2,
            escape(&title)
        );
    }
    for (change, (x, y_top, y_bottom)) in line.changes.iter().zip(&placed.changes) {
        let _ = write!(
            layer,
            "<a href=\"/campaigns/{}\"><line class=\"change-mark {}\" x1=\"{x}\" x2=\"{x}\" \
             y1=\"{y_top}\" y2=\"{y_bottom}\" stroke=\"#fff\" stroke-opacity=\"0\" \
             stroke-width=\"8\"><title>{}</title></line></a>",
            escape(&change.first_campaign),
            if change.slower { "slower" } else { "faster" },
            escape(&change.words)
        );
    }
    for (reference, (x, y)) in line.references.iter().zip(&placed.diamonds) {
        let corners = diamond(*x, *y)
            .iter()
            .map(|(x, y)| format!("{x},{y}"))
            .collect::<Vec<_>>()
            .join(" ");
        let title = format!(
            "{} ({}) beside campaign {}: {:.1} MB/s; {}",
            reference.tool,
            reference.job,
            reference.number,
            reference.mb_per_s,
            reference.conditions.join(", ")
        );
        let _ = write!(
            layer,
            "<a href=\"/campaigns/{}#references\"><polygon class=\"reference-mark\" \
             points=\"{corners}\" fill=\"#fff\"><title>{}</title></polygon></a>",
            escape(&reference.campaign),
            escape(&title)
        );
    }
    layer.push_str("</g>");
    let named = svg.replacen(
        "<svg ",
        &format!(
            "<svg class=\"series-chart\" role=\"img\" aria-label=\"{} over the series' \
             campaigns\" ",
            escape(&line.label)
        ),
        1,
    );
    match named.rfind("</svg>") {
        Some(end) => format!("{}{layer}{}", &named[..end], &named[end..]),
        None => named,
    }
}

/// Text as it may stand in an SVG attribute or element.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A round step for an axis' ticks near `rough`: 1, 2 or 5 times a power of ten.
fn nice_step(rough: f64) -> f64 {
    let power = 10f64.powf(rough.max(1e-9).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power)
}
