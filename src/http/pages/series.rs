//! A series' page: each test's figure over the series' campaigns, drawn with its range, every
//! point a link to its campaign, invalid points hollow, changes marked and told in words.

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;

use crate::http::AppState;
use crate::series::history::{History, Line, MIN_CAMPAIGNS_EACH_SIDE};

use super::render::{html, lab_error_page};
use crate::views::page::display_name;

/// The drawing's size and margins, in SVG units.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

#[derive(Template)]
#[template(path = "series.html")]
pub(super) struct SeriesTemplate {
    standalone: bool,
    css: &'static str,
    key: String,
    campaigns: usize,
    first: String,
    last: String,
    lines: Vec<LineView>,
}

/// One test's drawing and its changes.
pub(super) struct LineView {
    label: String,
    width: f64,
    height: f64,
    /// Points of the valid figures' polyline.
    path: String,
    /// Polygon of the valid figures' min–max range.
    band: String,
    dots: Vec<Dot>,
    ticks: Vec<(f64, String)>,
    numbers: Vec<(f64, usize)>,
    changes: Vec<ChangeMark>,
    invalid: usize,
    /// Points not valid but tested all the same (`SeriesPoint::tested`).
    tested_invalid: usize,
    /// Too few points were tested to find a change: in words, with the count, instead of
    /// "no change".
    untested: Option<String>,
    /// Other tools' figures: a diamond at the campaign they were imported into.
    references: Vec<ReferenceDot>,
}

pub(super) struct ReferenceDot {
    /// The diamond's corners.
    points: String,
    href: String,
    title: String,
}

pub(super) struct Dot {
    x: f64,
    y: f64,
    href: String,
    title: String,
    valid: bool,
}

pub(super) struct ChangeMark {
    x: f64,
    words: String,
    href: String,
    class: &'static str,
}

pub(super) async fn series_page(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Response {
    let history = match state.lab.series(&key).await {
        Ok(history) => history,
        Err(error) => return lab_error_page(error),
    };
    let name = |i: Option<&crate::series::history::CampaignMark>| {
        i.map(|c| {
            format!(
                "{} ({})",
                display_name(&c.name),
                crate::clock::format_ms(c.created_ms)
            )
        })
        .unwrap_or_default()
    };
    html(SeriesTemplate {
        standalone: false,
        css: "",
        key: history.key.clone(),
        campaigns: history.campaigns.len(),
        first: name(history.campaigns.first()),
        last: name(history.campaigns.last()),
        lines: history
            .lines
            .iter()
            .map(|line| draw(line, &history))
            .collect(),
    })
}

/// Places a line's points on the drawing: campaigns along x by their place in the series,
/// MB/s up y from zero.
fn draw(line: &Line, history: &History) -> LineView {
    let count = history.campaigns.len().max(2) as f64;
    let top = line
        .points
        .iter()
        .map(|p| p.max.max(p.mb_per_s))
        .chain(line.references.iter().map(|r| r.reference.mb_per_s))
        .fold(0.0_f64, f64::max)
        .max(1.0)
        * 1.1;
    let x = |number: usize| LEFT + (number as f64 - 1.0) / (count - 1.0) * (WIDTH - LEFT - RIGHT);
    let y = |mb_per_s: f64| TOP + (1.0 - mb_per_s / top) * (HEIGHT - TOP - BOTTOM);
    let valid: Vec<_> = line.points.iter().filter(|p| p.valid).collect();
    let path = valid
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.number), y(p.mb_per_s)))
        .collect::<Vec<_>>()
        .join(" ");
    let upper = valid
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.number), y(p.max)));
    let lower = valid
        .iter()
        .rev()
        .map(|p| format!("{:.1},{:.1}", x(p.number), y(p.min)));
    let band = upper.chain(lower).collect::<Vec<_>>().join(" ");
    let dots = line
        .points
        .iter()
        .map(|p| Dot {
            x: x(p.number),
            y: y(p.mb_per_s),
            href: format!("/campaigns/{}", p.campaign),
            title: format!(
                "campaign {} ({}): {:.1} MB/s, {:.1}–{:.1} over {} run(s){}",
                p.number,
                p.campaign,
                p.mb_per_s,
                p.min,
                p.max,
                p.runs,
                if p.valid { "" } else { "; not valid" }
            ),
            valid: p.valid,
        })
        .collect();
    let step = nice_step(top / 4.0);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let ticks = (0..)
        .map(|i| f64::from(i) * step)
        .take_while(|value| *value <= top)
        .map(|value| (y(value), format!("{value:.decimals$}")))
        .collect();
    let step = (history.campaigns.len() / 10).max(1);
    let numbers = (1..=history.campaigns.len())
        .filter(|n| (n - 1) % step == 0 || *n == history.campaigns.len())
        .map(|n| (x(n), n))
        .collect();
    let changes = line
        .changes
        .iter()
        .map(|change| ChangeMark {
            x: x(change.first_number) - (WIDTH - LEFT - RIGHT) / (count - 1.0) / 2.0,
            words: change.words(),
            href: format!("/campaigns/{}", change.first_campaign),
            class: if change.after_mb_s < change.before_mb_s {
                "slower"
            } else {
                "faster"
            },
        })
        .collect();
    let references = line
        .references
        .iter()
        .map(|mark| {
            let (cx, cy) = (x(mark.number), y(mark.reference.mb_per_s));
            let conditions = mark
                .reference
                .conditions
                .iter()
                .map(|(name, value)| format!("{name} {value}"))
                .collect::<Vec<_>>()
                .join(", ");
            ReferenceDot {
                points: format!(
                    "{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    cx,
                    cy - 6.0,
                    cx + 6.0,
                    cy,
                    cx,
                    cy + 6.0,
                    cx - 6.0,
                    cy
                ),
                href: format!("/campaigns/{}#references", mark.campaign),
                title: format!(
                    "{} ({}) beside campaign {}: {:.1} MB/s; {conditions}",
                    mark.reference.tool, mark.reference.job, mark.number, mark.reference.mb_per_s
                ),
            }
        })
        .collect();
    LineView {
        references,
        label: line.test.label().to_string(),
        width: WIDTH,
        height: HEIGHT,
        path,
        band,
        dots,
        ticks,
        numbers,
        changes,
        invalid: line.points.len() - valid.len(),
        tested_invalid: line.points.iter().filter(|p| p.tested && !p.valid).count(),
        untested: untested(line),
    }
}

/// "Not tested: 8 of 8 points not valid": what a line says when too few of its points can be
/// tested for a change to be found at all (a few on each side of it).
fn untested(line: &Line) -> Option<String> {
    let tested = line.points.iter().filter(|p| p.tested).count();
    (tested < 2 * MIN_CAMPAIGNS_EACH_SIDE).then(|| {
        let not_valid = line.points.iter().filter(|p| !p.tested).count();
        format!(
            "Not tested for changes: {not_valid} of {} point(s) not valid, {tested} tested; a \
             change needs at least {MIN_CAMPAIGNS_EACH_SIDE} tested campaigns on each side",
            line.points.len()
        )
    })
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
