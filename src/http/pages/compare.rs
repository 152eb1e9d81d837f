//! Two campaigns side by side, and their comparison chart.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::http::AppState;
use crate::lab::{CampaignView, LabError};
use crate::views::charts;

use super::render::{error_page, html, internal, lab_error_page, svg_response};
use crate::views::page::compare::{CompareSide, ComparisonView, chart_rows};
use crate::views::page::display_name;

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

#[derive(Deserialize)]
pub(super) struct CompareQuery {
    a: Option<String>,
    b: Option<String>,
}

pub(super) async fn compare_page(
    State(state): State<AppState>,
    Query(query): Query<CompareQuery>,
) -> Response {
    let choices: Vec<(String, String)> = match state.lab.campaigns().list(None, None, 200).await {
        Ok(page) => page
            .campaigns
            .iter()
            .map(|c| {
                (
                    c.record.id.clone(),
                    format!(
                        "{} ({}, {})",
                        display_name(&c.record.name),
                        c.record.id,
                        c.created().chars().take(16).collect::<String>()
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
        comparison = Some(ComparisonView::of(&side(&a), &side(&b)));
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
    if let Some(next) = state.lab.campaigns().next_with_same_spec(a).await? {
        return Ok(Some(next));
    }
    Ok(choices
        .iter()
        .map(|(id, _)| id)
        .find(|id| *id != a)
        .cloned())
}

/// A campaign as one side of a comparison.
fn side(view: &CampaignView) -> CompareSide<'_> {
    CompareSide {
        id: &view.campaign.record.id,
        name: &view.campaign.record.name,
        spec: view.spec(),
        points: &view.points,
        host: view
            .survey()
            .and_then(|survey| survey.provenance.as_ref())
            .map(|provenance| provenance.hostname.as_str()),
    }
}

/// The two campaigns of a comparison.
pub(super) async fn load_pair(
    state: &AppState,
    a: &str,
    b: &str,
) -> Result<(CampaignView, CampaignView), LabError> {
    Ok((
        state.lab.campaigns().view(a).await?,
        state.lab.campaigns().view(b).await?,
    ))
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
    let rows = chart_rows(&a.points, &b.points);
    match charts::compare_chart(&rows, charts::Width::Wide) {
        Ok(svg) => svg_response(svg),
        Err(error) => internal(&error.to_string()),
    }
}
