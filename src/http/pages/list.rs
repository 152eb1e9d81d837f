//! The campaign list, newest first, in pages.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::http::AppState;
use crate::store::RunState;

use super::render::{error_page, html, lab_error_page, shorten};
use super::views::display_name;

/// Campaigns per page of the list.
pub(super) const PAGE_SIZE: u32 = 25;

#[derive(Template)]
#[template(path = "index.html")]
pub(super) struct IndexTemplate {
    standalone: bool,
    css: &'static str,
    rows: Vec<ListRow>,
    status: String,
    status_options: Vec<String>,
    next_before: Option<String>,
    paged: bool,
    demo_dir: String,
    demo_ready: bool,
}

pub(super) struct ListRow {
    id: String,
    name: String,
    status: String,
    runs: String,
    created: String,
    tests: String,
    best: String,
    verdict: String,
}

#[derive(Deserialize)]
pub(super) struct ListQuery {
    status: Option<String>,
    before: Option<String>,
}

pub(super) async fn index(
    State(state): State<AppState>,
    Query(query): Query<ListQuery>,
) -> Response {
    let status_text = query.status.unwrap_or_default();
    let status = if status_text.is_empty() {
        None
    } else {
        match RunState::from_id(&status_text) {
            Some(status) => Some(status),
            None => {
                return error_page(
                    StatusCode::BAD_REQUEST,
                    "Unknown status",
                    &format!("There is no campaign status {status_text:?}."),
                );
            }
        }
    };
    let before = query.before.filter(|b| !b.is_empty());
    let page = match state.lab.list(status, before.as_deref(), PAGE_SIZE).await {
        Ok(page) => page,
        Err(error) => return lab_error_page(error),
    };
    let mut rows = Vec::with_capacity(page.campaigns.len());
    for summary in &page.campaigns {
        let verdict = if summary.status.is_final() {
            summary
                .verdict
                .as_deref()
                .map_or_else(String::new, |verdict| shorten(verdict, 160))
        } else {
            String::new()
        };
        rows.push(ListRow {
            id: summary.id.clone(),
            name: display_name(&summary.name),
            status: summary.status.id().to_string(),
            runs: format!("{} of {} runs", summary.runs_finished, summary.runs_total),
            created: summary
                .created
                .replace('T', " ")
                .trim_end_matches('Z')
                .chars()
                .take(16)
                .collect(),
            tests: summary.tests.join(", "),
            best: summary
                .best_mb_per_s
                .map_or_else(|| "–".to_string(), |v| format!("{v:.1} MB/s")),
            verdict,
        });
    }
    let demo = state.lab.demo_dir();
    html(IndexTemplate {
        standalone: false,
        css: "",
        rows,
        status: status_text,
        status_options: RunState::ALL.iter().map(|s| s.id().to_string()).collect(),
        next_before: page.next_before,
        paged: before.is_some(),
        demo_ready: demo.is_dir(),
        demo_dir: demo.display().to_string(),
    })
}
