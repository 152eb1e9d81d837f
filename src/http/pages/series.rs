//! A series' page: each test's figure over the series' campaigns, drawn with its range, every
//! point a link to its campaign, invalid points hollow, changes marked and told in words.

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;

use crate::http::AppState;
use crate::series::history::{History, Line, MIN_CAMPAIGNS_EACH_SIDE};
use crate::series::requests::{REQUEST_CHANGE_PCT, RequestLine};

use super::render::{html, internal, lab_error_page};
use crate::views::charts::{
    ChangeMark, ChartError, ReferenceMark, SeriesLine, SeriesMark, series_chart,
};
use crate::views::page::display_name;

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
    /// Each tool's requests to its bucket per GiB backed up, campaign by campaign.
    requests: Vec<RequestsView>,
}

impl SeriesTemplate {
    /// The share a tool's requests must move by for a change, as the page says it.
    fn request_change_pct(&self) -> String {
        format!("{REQUEST_CHANGE_PCT:.0}")
    }
}

/// One tool's requests per GiB over the series, and their changes in words.
pub(super) struct RequestsView {
    tool: String,
    /// Campaign number, its link, the figure and the tool's version.
    points: Vec<(usize, String, String, String)>,
    changes: Vec<ChangeWords>,
}

/// One test's chart and its changes in words.
pub(super) struct LineView {
    label: String,
    /// The chart, drawn by `views::charts::series_chart`.
    svg: String,
    changes: Vec<ChangeWords>,
    invalid: usize,
    /// Points not valid but tested all the same (`SeriesPoint::tested`).
    tested_invalid: usize,
    /// Too few points were tested to find a change: in words, with the count, instead of
    /// "no change".
    untested: Option<String>,
    /// Other tools' figures drawn as diamonds at the campaign they were imported into.
    references: usize,
}

/// A change told in words, linked to the campaign it begins at.
pub(super) struct ChangeWords {
    words: String,
    href: String,
    class: &'static str,
}

pub(super) async fn series_page(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Response {
    let history = match state.lab.series().history(&key).await {
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
    let lines = match history
        .lines
        .iter()
        .map(|line| draw(line, &history))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(lines) => lines,
        Err(error) => return internal(&error.to_string()),
    };
    html(SeriesTemplate {
        standalone: false,
        css: "",
        key: history.key.clone(),
        campaigns: history.campaigns.len(),
        first: name(history.campaigns.first()),
        last: name(history.campaigns.last()),
        lines,
        requests: history.requests.iter().map(requests_view).collect(),
    })
}

/// A tool's requests per GiB as the page lists them.
fn requests_view(line: &RequestLine) -> RequestsView {
    RequestsView {
        tool: line.tool.clone(),
        points: line
            .points
            .iter()
            .map(|point| {
                (
                    point.number,
                    format!("/campaigns/{}", point.campaign),
                    format!("{:.1}", point.requests_per_gib),
                    point.version.clone().unwrap_or_default(),
                )
            })
            .collect(),
        changes: line
            .changes
            .iter()
            .map(|change| ChangeWords {
                words: change.words(),
                href: format!("/campaigns/{}", change.first_campaign),
                // More requests cost more: marked as a slower backup is.
                class: if change.direction() == "more" {
                    "slower"
                } else {
                    "faster"
                },
            })
            .collect(),
    }
}

/// A line's chart and words.
fn draw(line: &Line, history: &History) -> Result<LineView, ChartError> {
    let changes = line
        .changes
        .iter()
        .map(|change| ChangeWords {
            words: change.words(),
            href: format!("/campaigns/{}", change.first_campaign),
            class: change.direction(),
        })
        .collect();
    Ok(LineView {
        label: line.label(),
        svg: series_chart(&shown(line, history))?,
        changes,
        invalid: line.points.iter().filter(|p| !p.valid).count(),
        tested_invalid: line.points.iter().filter(|p| p.tested && !p.valid).count(),
        untested: untested(line),
        references: line.references.len(),
    })
}

/// The line as the chart draws it.
fn shown(line: &Line, history: &History) -> SeriesLine {
    SeriesLine {
        label: line.label(),
        campaigns: history.campaigns.len(),
        points: line
            .points
            .iter()
            .map(|p| SeriesMark {
                number: p.number,
                campaign: p.campaign.clone(),
                mb_per_s: p.mb_per_s,
                min: p.min,
                max: p.max,
                runs: p.runs,
                valid: p.valid,
            })
            .collect(),
        changes: line
            .changes
            .iter()
            .map(|change| ChangeMark {
                first_number: change.first_number,
                first_campaign: change.first_campaign.clone(),
                slower: change.after_mb_s < change.before_mb_s,
                words: change.words(),
            })
            .collect(),
        references: line
            .references
            .iter()
            .map(|mark| ReferenceMark {
                number: mark.number,
                campaign: mark.campaign.clone(),
                tool: mark.reference.tool.clone(),
                job: mark.reference.job.clone(),
                mb_per_s: mark.reference.mb_per_s,
                conditions: mark
                    .reference
                    .conditions
                    .iter()
                    .map(|(name, value)| format!("{name} {value}"))
                    .collect(),
            })
            .collect(),
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
