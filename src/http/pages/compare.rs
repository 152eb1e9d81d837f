//! Two campaigns side by side, and their comparison chart.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::http::AppState;
use crate::lab::{CampaignView, LabError};
use crate::views::charts;
use crate::views::compare;

use super::render::{error_page, html, internal, lab_error_page, svg_response};
use crate::views::page::{display_name, distinct_params_lines, source_words, target_words};

#[derive(Template)]
#[template(path = "compare.html")]
pub(super) struct CompareTemplate {
    standalone: bool,
    css: &'static str,
    choices: Vec<(String, String)>,
    a_id: String,
    b_id: String,
    comparison: Option<ComparisonView>,
    /// Why nothing is compared, when A and B are one campaign.
    note: Option<String>,
}

pub(super) struct ComparisonView {
    /// What differs between the two besides what was tuned.
    differences: Vec<String>,
    a_id: String,
    a_name: String,
    b_id: String,
    b_name: String,
    rows: Vec<CompareRow>,
    chart_url: String,
}

pub(super) struct CompareRow {
    class: &'static str,
    test: String,
    params: String,
    a: String,
    b: String,
    delta: String,
    spread: String,
}

#[derive(Deserialize)]
pub(super) struct CompareQuery {
    a: Option<String>,
    b: Option<String>,
}

pub(super) async fn compare_page(
    State(state): State<AppState>,
    Query(query): Query<CompareQuery>,
) -> Response {
    let choices: Vec<(String, String)> = match state.lab.list(None, None, 200).await {
        Ok(page) => page
            .campaigns
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    format!(
                        "{} ({}, {})",
                        display_name(&c.name),
                        c.id,
                        c.created.chars().take(16).collect::<String>()
                    ),
                )
            })
            .collect(),
        Err(error) => return lab_error_page(error),
    };
    let a_id = query.a.unwrap_or_default();
    let mut b_id = query.b.unwrap_or_default();
    if !a_id.is_empty() && b_id.is_empty() {
        // B left open ("Compare with…" on a report): the next campaign of the same spec when
        // there is one, else the newest other campaign; never A itself.
        b_id = match default_partner(&state, &a_id, &choices).await {
            Ok(partner) => partner.unwrap_or_default(),
            Err(error) => return lab_error_page(error),
        };
    }
    let mut comparison = None;
    let mut note = None;
    if !a_id.is_empty() && a_id == b_id {
        note = Some("A and B are the same campaign: choose another campaign as B.".to_string());
    } else if !a_id.is_empty() && !b_id.is_empty() {
        let (a, b) = match load_pair(&state, &a_id, &b_id).await {
            Ok(pair) => pair,
            Err(error) => return lab_error_page(error),
        };
        let rows = compare::rows(&a.points, &b.points);
        let params = params_lines(&rows);
        let fmt = |side: Option<compare::Side>, tally: Option<compare::Tally>| {
            side.map_or_else(
                || "–".to_string(),
                |side| {
                    let s = side.stat;
                    let range = if s.runs > 1 {
                        format!(" ({:.1}–{:.1})", s.min, s.max)
                    } else {
                        String::new()
                    };
                    let tally = tally.map_or_else(String::new, |tally| tally.words());
                    let figure = format!("{:.1}{range} {tally}", s.median);
                    if side.valid {
                        figure
                    } else {
                        format!("{figure}, not valid")
                    }
                },
            )
        };
        let differences = differences(&a, &b);
        comparison = Some(ComparisonView {
            differences,
            a_name: display_name(&a.campaign.name),
            b_name: display_name(&b.campaign.name),
            a_id: a.campaign.id.clone(),
            b_id: b.campaign.id.clone(),
            rows: rows
                .iter()
                .zip(params)
                .map(|(row, params)| CompareRow {
                    class: match row.direction() {
                        Some("better") => "changed better",
                        Some(_) => "changed worse",
                        None => "",
                    },
                    test: row.test.label().to_string(),
                    params,
                    a: fmt(row.a, row.a_tally),
                    b: fmt(row.b, row.b_tally),
                    delta: row
                        .delta_pct()
                        .map_or_else(|| "–".to_string(), |d| format!("{d:+.1} %")),
                    spread: match (row.caveat(), row.spread_pct()) {
                        (Some(caveat), _) => caveat.to_string(),
                        (None, Some(spread)) => match row.p_value() {
                            Some(p) => format!("±{spread:.1} % (p = {p:.2})"),
                            None => format!("±{spread:.1} %"),
                        },
                        (None, None) => "–".to_string(),
                    },
                })
                .collect(),
            chart_url: format!("/compare/chart.svg?a={}&b={}", a.campaign.id, b.campaign.id),
        });
    }
    html(CompareTemplate {
        standalone: false,
        css: "",
        choices,
        a_id,
        b_id,
        comparison,
        note,
    })
}

/// The campaign to compare `a` with when none is named: a later campaign of the same spec
/// (the one whose report names `a` as its previous), else the newest campaign that is not `a`.
async fn default_partner(
    state: &AppState,
    a: &str,
    choices: &[(String, String)],
) -> Result<Option<String>, LabError> {
    if let Some(next) = state.lab.next_with_same_spec(a).await? {
        return Ok(Some(next));
    }
    Ok(choices
        .iter()
        .map(|(id, _)| id)
        .find(|id| *id != a)
        .cloned())
}

/// What differs between two campaigns besides what was tuned, in plain words: a change in
/// their figures may come from these.
fn differences(a: &CampaignView, b: &CampaignView) -> Vec<String> {
    let mut differences = Vec::new();
    let (a_target, b_target) = (target_words(&a.spec), target_words(&b.spec));
    if a_target != b_target {
        differences.push(format!(
            "The targets differ: A wrote to {a_target}, B to {b_target}. A change may be the \
             target's."
        ));
    }
    let (a_source, b_source) = (source_words(&a.spec), source_words(&b.spec));
    if a_source != b_source {
        differences.push(format!(
            "The sources differ: A read {a_source}, B {b_source}. A change may be the source's."
        ));
    }
    let host = |view: &CampaignView| {
        view.survey
            .as_ref()
            .and_then(|survey| survey.provenance.as_ref())
            .map(|provenance| provenance.hostname.clone())
    };
    if let (Some(a_host), Some(b_host)) = (host(a), host(b))
        && a_host != b_host
    {
        differences.push(format!(
            "They were measured on different hosts: A on {a_host}, B on {b_host}."
        ));
    }
    differences
}

/// Each row's parameters, with what tells it apart from a row that would read the same.
fn params_lines(rows: &[compare::Row]) -> Vec<String> {
    distinct_params_lines(
        &rows
            .iter()
            .map(|row| (row.test, &row.params))
            .collect::<Vec<_>>(),
    )
}

/// The two campaigns of a comparison.
pub(super) async fn load_pair(
    state: &AppState,
    a: &str,
    b: &str,
) -> Result<(CampaignView, CampaignView), LabError> {
    Ok((state.lab.campaign(a).await?, state.lab.campaign(b).await?))
}

pub(super) async fn compare_chart(
    State(state): State<AppState>,
    Query(query): Query<CompareQuery>,
) -> Response {
    let (Some(a_id), Some(b_id)) = (query.a, query.b) else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "Two campaigns needed",
            "Give both a and b.",
        );
    };
    let (a, b) = match load_pair(&state, &a_id, &b_id).await {
        Ok(pair) => pair,
        Err(error) => return lab_error_page(error),
    };
    let rows = compare::rows(&a.points, &b.points);
    let params = params_lines(&rows);
    let rows: Vec<(String, Option<f64>, Option<f64>)> = rows
        .iter()
        .zip(params)
        .map(|(row, params)| {
            (
                format!("{} · {params}", row.test.label()),
                row.a.map(|s| s.stat.median),
                row.b.map(|s| s.stat.median),
            )
        })
        .collect();
    match charts::compare_chart(&rows, charts::Width::Wide) {
        Ok(svg) => svg_response(svg),
        Err(error) => internal(&error.to_string()),
    }
}
