//! A campaign's report page, its self-contained download, and its charts.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::charts;
use crate::http::AppState;
use crate::lab::{CampaignView, LabError};
use crate::matrix;

use super::assets::STYLE;
use super::render::{error_page, html, internal, lab_error_page, svg_response};
use super::views::{self, CampaignPageView};

#[derive(Template)]
#[template(path = "campaign.html")]
pub(super) struct CampaignTemplate {
    standalone: bool,
    css: &'static str,
    c: CampaignPageView,
}

pub(super) async fn load(
    state: &AppState,
    id: &str,
) -> Result<(CampaignView, crate::analysis::Verdict), LabError> {
    state.lab.campaign_with_verdict(id).await
}

pub(super) async fn campaign(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let (view, verdict) = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    match views::campaign_page(&view, &verdict, false) {
        Ok(c) => html(CampaignTemplate {
            standalone: false,
            css: "",
            c,
        }),
        Err(error) => internal(&error.to_string()),
    }
}

pub(super) async fn report_download(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Response {
    let (view, verdict) = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    match views::campaign_page(&view, &verdict, true) {
        Ok(c) => {
            let mut response = html(CampaignTemplate {
                standalone: true,
                css: STYLE,
                c,
            });
            if let Ok(value) = HeaderValue::from_str(&format!(
                "attachment; filename=\"backlab-{}.html\"",
                view.campaign.id
            )) {
                response
                    .headers_mut()
                    .insert(header::CONTENT_DISPOSITION, value);
            }
            response
        }
        Err(error) => internal(&error.to_string()),
    }
}

pub(super) async fn chart(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
) -> Response {
    let Some(name) = file
        .strip_suffix(".svg")
        .filter(|name| charts::NAMES.contains(name))
    else {
        return error_page(
            StatusCode::NOT_FOUND,
            "No such chart",
            &format!("Charts are {}, each as NAME.svg.", charts::NAMES.join(", ")),
        );
    };
    let (view, verdict) = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    let points = matrix::points(&view.runs);
    match views::render_chart(name, &view.runs, &verdict, &points) {
        Ok(svg) => svg_response(svg),
        Err(error) => internal(&error.to_string()),
    }
}
