//! The campaign list, newest first, in pages.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::analysis::Headline;
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
            None => return unknown_status_page(&status_text),
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
    let rows = page.campaigns.iter().map(list_row).collect();
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

/// The answer to a status filter that names no campaign status.
fn unknown_status_page(status_text: &str) -> Response {
    error_page(
        StatusCode::BAD_REQUEST,
        "Unknown status",
        &format!("There is no campaign status {status_text:?}."),
    )
}

/// One campaign as a row of the list.
fn list_row(summary: &CampaignSummary) -> ListRow {
    let headline = summary.headline.as_ref();
    let (backup, backup_note) = backup_cells(headline);
    ListRow {
        id: summary.record.id.clone(),
        name: display_name(&summary.record.name),
        status: summary.status.id().to_string(),
        runs: run_counts(summary),
        created: created_minute(summary),
        tests: test_labels(summary),
        backup,
        backup_note,
        component: headline
            .and_then(|h| h.component.clone())
            .unwrap_or_default(),
        conclusive: headline.is_none_or(|h| h.conclusive),
        verdict: verdict_text(summary),
    }
}

/// The verdict in a sentence without its full stop; none until the campaign has ended.
fn verdict_text(summary: &CampaignSummary) -> String {
    if summary.status.is_final() {
        summary.verdict().map_or_else(String::new, |verdict| {
            verdict.trim_end_matches('.').to_string()
        })
    } else {
        String::new()
    }
}

/// When the campaign was created, to the minute, with a space between date and time.
fn created_minute(summary: &CampaignSummary) -> String {
    summary
        .created()
        .replace('T', " ")
        .trim_end_matches('Z')
        .chars()
        .take(16)
        .collect()
}

/// The campaign's tests by their labels (an id no test has, as it is), in their order.
fn test_labels(summary: &CampaignSummary) -> String {
    summary
        .record
        .spec
        .tests
        .iter()
        .map(|id| TestKind::from_id(id).map_or(id.as_str(), |test| test.label()))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The backup column, (figure, note): the backup's own figure, else each compared tool's,
/// else that none was measured; blank before the campaign has a headline.
fn backup_cells(headline: Option<&Headline>) -> (String, String) {
    let Some(headline) = headline else {
        return ("–".to_string(), String::new());
    };
    match (headline.backup_test, headline.backup_mb_per_s) {
        (Some(test), Some(mb_per_s)) => (
            format!("{mb_per_s:.1} MB/s"),
            backup_figure_note(headline, test),
        ),
        _ if !headline.tool_backups.is_empty() => (
            format!("{} tools", headline.tool_backups.len()),
            tool_backups_note(headline),
        ),
        _ => ("–".to_string(), "no backup measured".to_string()),
    }
}

/// What the backup figure is: the test (and its tool), steady or whole run, and n of m valid.
fn backup_figure_note(headline: &Headline, test: TestKind) -> String {
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
    note.join(", ")
}

/// Each compared tool's backup figure, in their order; a dash for a tool without one.
fn tool_backups_note(headline: &Headline) -> String {
    headline
        .tool_backups
        .iter()
        .map(|(tool, mb_per_s)| match mb_per_s {
            Some(mb_per_s) => format!("{tool} {mb_per_s:.1} MB/s"),
            None => format!("{tool} –"),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
