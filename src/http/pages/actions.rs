//! Cancel, rerun and delete from the pages, without JavaScript: each is a form that POSTs
//! here (same-origin checked like every change), carrying the lab's token in its body when the
//! lab has one. Deleting asks first, on a page of its own.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use crate::http::AppState;
use crate::http::auth::same_secret;

use super::render::{error_page, html, lab_error_page};

/// The error page when the lab has a token and the form carried none, or a wrong one.
pub(super) fn token_refusal(state: &AppState, body: &Bytes) -> Option<Response> {
    let token = state.token.as_deref()?;
    let given = form_urlencoded::parse(body)
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    if same_secret(given.trim().as_bytes(), token.as_bytes()) {
        return None;
    }
    let message = if given.is_empty() {
        "This lab requires its token for changes: enter it in the form's token field."
    } else {
        "The token is not valid for this lab."
    };
    Some(error_page(
        StatusCode::UNAUTHORIZED,
        "Token needed",
        message,
    ))
}

pub(super) async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    match state.lab.campaigns().cancel(&id).await {
        Ok(_) => Redirect::to(&format!("/campaigns/{id}")).into_response(),
        Err(error) => lab_error_page(error),
    }
}

pub(super) async fn rerun(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    match state.rerun(&id).await {
        Ok(submitted) => Redirect::to(&submitted.url).into_response(),
        Err(error) => lab_error_page(error),
    }
}

#[derive(Template)]
#[template(path = "delete.html")]
struct DeleteTemplate {
    standalone: bool,
    css: &'static str,
    id: String,
    name: String,
    runs: usize,
    needs_token: bool,
}

/// Asks before deleting: what will be lost, and the button that does it.
pub(super) async fn confirm_delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Response {
    match state.lab.campaigns().view(&id).await {
        Ok(view) => html(DeleteTemplate {
            standalone: false,
            css: "",
            id: view.campaign.record.id.clone(),
            name: view.campaign.record.name.clone(),
            runs: view.runs.len(),
            needs_token: state.token.is_some(),
        }),
        Err(error) => lab_error_page(error),
    }
}

pub(super) async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    match state.delete(&id).await {
        Ok(()) => Redirect::to("/").into_response(),
        Err(error) => lab_error_page(error),
    }
}
