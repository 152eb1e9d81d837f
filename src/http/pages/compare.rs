//! Two campaigns side by side, and their comparison chart.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::charts;
use crate::compare;
use crate::http::AppState;
use crate::lab::{CampaignView, LabError};

use super::render::{error_page, html, internal, lab_error_page, svg_response};
use super::views::{display_name, params_line};

#[derive(Template)]
#[template(path = "compare.html")]
pub(super) struct CompareTemplate {
    standalone: bool,
    css: &'static str,
    choices: Vec<(String, String)>,
    a_id: String,
    b_id: String,
    comparison: Option<ComparisonView>,
}

pub(super) struct ComparisonView {
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
    let choices = match state.lab.list(None, None, 200).await {
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
    let b_id = query.b.unwrap_or_default();
    let mut comparison = None;
    if !a_id.is_empty() && !b_id.is_empty() {
        let (a, b) = match load_pair(&state, &a_id, &b_id).await {
            Ok(pair) => pair,
            Err(error) => return lab_error_page(error),
        };
        let rows = compare::rows(&a.runs, &b.runs);
        let fmt = |side: Option<compare::Side>| {
            side.map_or_else(
                || "–".to_string(),
                |side| {
                    let s = side.stat;
                    let figure = if s.runs > 1 {
                        format!(
                            "{:.1} ({:.1}–{:.1}, {} runs)",
                            s.median, s.min, s.max, s.runs
                        )
                    } else {
                        format!("{:.1}", s.median)
                    };
                    if side.valid {
                        figure
                    } else {
                        format!("{figure} not valid")
                    }
                },
            )
        };
        comparison = Some(ComparisonView {
            a_name: display_name(&a.campaign.name),
            b_name: display_name(&b.campaign.name),
            a_id: a.campaign.id.clone(),
            b_id: b.campaign.id.clone(),
            rows: rows
                .iter()
                .map(|row| CompareRow {
                    class: if row.changed() { "changed" } else { "" },
                    test: row.test.label().to_string(),
                    params: params_line(&row.params),
                    a: fmt(row.a),
                    b: fmt(row.b),
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
    })
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
    let rows: Vec<(String, Option<f64>, Option<f64>)> = compare::rows(&a.runs, &b.runs)
        .iter()
        .map(|row| {
            (
                format!("{} · {}", row.test.label(), params_line(&row.params)),
                row.a.map(|s| s.stat.median),
                row.b.map(|s| s.stat.median),
            )
        })
        .collect();
    match charts::compare_chart(&rows) {
        Ok(svg) => svg_response(svg),
        Err(error) => internal(&error.to_string()),
    }
}
