//! The campaign list, newest first, in pages.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::http::AppState;
use crate::lab::CampaignSummary;
use crate::spec::TestKind;
use crate::store::RunState;

use super::render::{error_page, html, lab_error_page};
use crate::views::page::display_name;

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
    /// The backup's own figure (full or network backup), never another test's.
    backup: String,
    backup_note: String,
    /// The component the verdict names, and whether the verdict is conclusive.
    component: String,
    conclusive: bool,
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
    let page = match state
        .lab
        .campaigns()
        .list(status, before.as_deref(), PAGE_SIZE)
        .await
    {
        Ok(page) => page,
        Err(error) => return lab_error_page(error),
    };
    let mut rows = Vec::with_capacity(page.campaigns.len());
    for summary in &page.campaigns {
        let verdict = if summary.status.is_final() {
            summary.verdict().map_or_else(String::new, |verdict| {
                verdict.trim_end_matches('.').to_string()
            })
        } else {
            String::new()
        };
        let headline = summary.headline.as_ref();
        let (backup, backup_note) = match headline {
            Some(headline) => match (headline.backup_test, headline.backup_mb_per_s) {
                (Some(test), Some(mb_per_s)) => {
                    // What the figure is: the test, steady or whole run, and n of m valid.
                    let mut note = vec![match &headline.backup_tool {
                        Some(tool) => format!("{} ({tool})", test.label().to_lowercase()),
                        None => test.label().to_lowercase(),
                    }];
                    note.extend(headline.backup_basis.map(|basis| basis.word().to_string()));
                    match (headline.backup_runs_valid, headline.backup_valid) {
                        (Some((valid, total)), _) => note.push(format!("{valid} of {total} valid")),
                        (None, Some(false)) => note.push("not valid".to_string()),
                        (None, _) => {}
                    }
                    (format!("{mb_per_s:.1} MB/s"), note.join(", "))
                }
                _ if !headline.tool_backups.is_empty() => (
                    format!("{} tools", headline.tool_backups.len()),
                    headline
                        .tool_backups
                        .iter()
                        .map(|(tool, mb_per_s)| match mb_per_s {
                            Some(mb_per_s) => format!("{tool} {mb_per_s:.1} MB/s"),
                            None => format!("{tool} –"),
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                _ => ("–".to_string(), "no backup measured".to_string()),
            },
            None => ("–".to_string(), String::new()),
        };
        rows.push(ListRow {
            id: summary.record.id.clone(),
            name: display_name(&summary.record.name),
            status: summary.status.id().to_string(),
            runs: run_counts(summary),
            created: summary
                .created()
                .replace('T', " ")
                .trim_end_matches('Z')
                .chars()
                .take(16)
                .collect(),
            tests: summary
                .record
                .spec
                .tests
                .iter()
                .map(|id| TestKind::from_id(id).map_or(id.as_str(), |test| test.label()))
                .collect::<Vec<_>>()
                .join(" · "),
            backup,
            backup_note,
            component: headline
                .and_then(|h| h.component.clone())
                .unwrap_or_default(),
            conclusive: headline.is_none_or(|h| h.conclusive),
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

/// How many runs ended, and how: a cancelled campaign says how many were really done.
fn run_counts(summary: &CampaignSummary) -> String {
    let record = &summary.record;
    if !summary.status.is_final() {
        return format!("{} of {} runs", record.runs_finished, record.runs_total);
    }
    let mut text = format!("{} of {} runs done", record.runs_done, record.runs_total);
    if record.runs_cancelled > 0 {
        text.push_str(&format!(", {} cancelled", record.runs_cancelled));
    }
    if record.runs_failed > 0 {
        text.push_str(&format!(", {} failed", record.runs_failed));
    }
    text
}
