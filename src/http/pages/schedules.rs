//! The schedules page: every schedule with its pattern, next firing, what it fired and
//! missed; forms that create, edit, pause, resume and delete them without JavaScript, each
//! carrying the lab's token in its body when the lab has one.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::http::AppState;
use crate::lab::{LabError, ScheduleView};

use super::actions::token_refusal;
use super::render::{html, lab_error_page};

/// Firings shown under each schedule.
const FIRINGS_SHOWN: usize = 5;

#[derive(Template)]
#[template(path = "schedules.html")]
struct SchedulesTemplate {
    standalone: bool,
    css: &'static str,
    needs_token: bool,
    schedules: Vec<ScheduleView>,
    /// The link to the next page of schedules, when more follow.
    next_page: Option<String>,
    /// What a refused form asked for, and why, by field.
    refused: Option<Refused>,
}

struct Refused {
    /// The schedule the refused form edits; none for a new one.
    id: Option<String>,
    name: String,
    cron: String,
    spec: String,
    errors: Vec<(String, String)>,
}

/// Schedules shown on one page; a link leads to the next.
const SCHEDULES_SHOWN: u32 = 50;

/// Query of the schedules page.
#[derive(Debug, Deserialize)]
pub(super) struct PageQuery {
    /// Only schedules after this schedule id.
    after: Option<String>,
}

/// A page of schedules and the forms that change them.
pub(super) async fn schedules_page(
    State(state): State<AppState>,
    Query(query): Query<PageQuery>,
) -> Response {
    let after = query.after.filter(|after| !after.is_empty());
    render(&state, after.as_deref(), None, StatusCode::OK).await
}

async fn render(
    state: &AppState,
    after: Option<&str>,
    refused: Option<Refused>,
    status: StatusCode,
) -> Response {
    let page = match state
        .lab
        .schedules()
        .page_with_firings(after, SCHEDULES_SHOWN, FIRINGS_SHOWN)
        .await
    {
        Ok(page) => page,
        Err(error) => return lab_error_page(error),
    };
    let next_page = page.next_after.map(|id| {
        format!(
            "/schedules?{}",
            form_urlencoded::Serializer::new(String::new())
                .append_pair("after", &id)
                .finish()
        )
    });
    let mut response = html(SchedulesTemplate {
        standalone: false,
        css: "",
        needs_token: state.token.is_some(),
        schedules: page.schedules,
        next_page,
        refused,
    });
    *response.status_mut() = status;
    response
}

/// The form's fields.
fn fields(body: &Bytes) -> (String, String, String) {
    let mut name = String::new();
    let mut cron = String::new();
    let mut spec = String::new();
    for (key, value) in form_urlencoded::parse(body) {
        match key.as_ref() {
            "name" => name = value.into_owned(),
            "cron" => cron = value.into_owned(),
            "spec" => spec = value.into_owned(),
            _ => {}
        }
    }
    (name, cron, spec)
}

/// The JSON request the form stands for; a spec that is not JSON is named as such.
fn request(name: &str, cron: &str, spec: &str) -> Result<Vec<u8>, Vec<(String, String)>> {
    let spec: Value = serde_json::from_str(spec).map_err(|error| {
        vec![(
            "spec".to_string(),
            format!("is not a JSON campaign spec: {error}"),
        )]
    })?;
    let mut body = Map::new();
    body.insert("name".into(), Value::String(name.trim().to_string()));
    body.insert("cron".into(), Value::String(cron.trim().to_string()));
    body.insert("spec".into(), spec);
    Ok(Value::Object(body).to_string().into_bytes())
}

/// Answers a form whose change was refused: the page again, the form as it was sent, and
/// each problem by field.
async fn refuse(
    state: &AppState,
    id: Option<String>,
    (name, cron, spec): (String, String, String),
    error: Result<LabError, Vec<(String, String)>>,
) -> Response {
    let errors = match error {
        Err(errors) => errors,
        Ok(error) => match error.field_errors() {
            Some(found) => found.0.into_iter().collect(),
            None => return lab_error_page(error),
        },
    };
    let refused = Refused {
        id,
        name,
        cron,
        spec,
        errors,
    };
    render(state, None, Some(refused), StatusCode::UNPROCESSABLE_ENTITY).await
}

/// Creates a schedule from the page's form.
pub(super) async fn create(State(state): State<AppState>, body: Bytes) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    let form = fields(&body);
    let json = match request(&form.0, &form.1, &form.2) {
        Ok(json) => json,
        Err(errors) => return refuse(&state, None, form, Err(errors)).await,
    };
    match state.lab.schedules().create(&json).await {
        Ok(_) => Redirect::to("/schedules").into_response(),
        Err(error) => refuse(&state, None, form, Ok(error)).await,
    }
}

/// Replaces a schedule's name, pattern and spec from its edit form.
pub(super) async fn edit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    let form = fields(&body);
    let json = match request(&form.0, &form.1, &form.2) {
        Ok(json) => json,
        Err(errors) => return refuse(&state, Some(id), form, Err(errors)).await,
    };
    match state.lab.schedules().change(&id, &json).await {
        Ok(_) => Redirect::to("/schedules").into_response(),
        Err(error) => refuse(&state, Some(id), form, Ok(error)).await,
    }
}

/// Pauses a schedule.
pub(super) async fn pause(state: State<AppState>, id: Path<String>, body: Bytes) -> Response {
    set_paused(state, id, body, true).await
}

/// Resumes a schedule from its next occurrence.
pub(super) async fn resume(state: State<AppState>, id: Path<String>, body: Bytes) -> Response {
    set_paused(state, id, body, false).await
}

async fn set_paused(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
    paused: bool,
) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    let change = serde_json::json!({ "paused": paused }).to_string();
    match state.lab.schedules().change(&id, change.as_bytes()).await {
        Ok(_) => Redirect::to("/schedules").into_response(),
        Err(error) => lab_error_page(error),
    }
}

/// Deletes a schedule (its campaigns stay).
pub(super) async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Some(refused) = token_refusal(&state, &body) {
        return refused;
    }
    match state.lab.schedules().delete(&id).await {
        Ok(()) => Redirect::to("/schedules").into_response(),
        Err(error) => lab_error_page(error),
    }
}
