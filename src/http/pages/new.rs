//! The new-campaign form: presets, and the form posted without JavaScript.

use crate::http::api::views::{PlannedBody, SubmittedBody};
use askama::Template;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::field_errors::FieldErrors;
use crate::http::AppState;
use crate::http::error::ApiError;
use crate::lab::LabError;
use crate::spec::TestKind;

use super::form::{
    CampaignForm, FormSpec, KindOffer, PRESETS, ParamInput, kind_offers, path_kinds,
};
use super::render::html;

#[derive(Template)]
#[template(path = "new.html")]
pub(super) struct NewTemplate {
    standalone: bool,
    css: &'static str,
    form: CampaignForm,
    presets: Vec<(&'static str, &'static str)>,
    tests: Vec<(&'static str, &'static str)>,
    target_kinds: Vec<KindOffer>,
    /// What the path field is for: the kinds that take one.
    path_kinds: String,
    error: Option<String>,
    /// What a dry run found: the runs, how long they take, what cannot give a valid run.
    plan: Option<String>,
    needs_token: bool,
    /// The live lab hosts a campaign may run on, this one first: (name, label).
    hosts: Vec<(String, String)>,
}

#[derive(Deserialize)]
pub(super) struct NewQuery {
    preset: Option<String>,
}

pub(super) fn new_page(
    form: CampaignForm,
    error: Option<String>,
    needs_token: bool,
    hosts: Vec<(String, String)>,
) -> NewTemplate {
    NewTemplate {
        plan: None,
        needs_token,
        hosts,
        standalone: false,
        css: "",
        form,
        presets: PRESETS.to_vec(),
        tests: TestKind::ALL.iter().map(|t| (t.id(), t.label())).collect(),
        target_kinds: kind_offers(),
        path_kinds: path_kinds(),
        error,
    }
}

pub(super) async fn new_form(
    State(state): State<AppState>,
    Query(query): Query<NewQuery>,
) -> Response {
    let asked = query.preset.as_deref().unwrap_or("bottleneck");
    let known = PRESETS.iter().any(|(id, _)| *id == asked);
    let mut form = CampaignForm::preset(if known { asked } else { "bottleneck" });
    form.host = state.lab.hosts().this_host().to_string();
    form.offer_tools(state.lab.tools());
    // A preset that is not one is said, with the ones there are, over the default form.
    let error = (!known).then(|| {
        let ids: Vec<&str> = PRESETS.iter().map(|(id, _)| *id).collect();
        format!(
            "there is no preset '{}'; the presets are {}. The form below is the {} one",
            asked.chars().take(64).collect::<String>(),
            ids.join(", "),
            form.preset
        )
    });
    let mut response = html(new_page(
        form,
        error,
        state.token.is_some(),
        live_hosts(&state).await,
    ));
    if !known {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    response
}

/// The live lab hosts for the form's choice, this one first; only this one when the others
/// cannot be read (the campaign still runs here).
async fn live_hosts(state: &AppState) -> Vec<(String, String)> {
    let this = state.lab.hosts().this_host().to_string();
    let mut hosts = vec![(this.clone(), format!("{this} (this lab)"))];
    match state.lab.hosts().list().await {
        Ok(all) => hosts.extend(
            all.into_iter()
                .filter(|host| host.alive && !host.this_host)
                .map(|host| (host.name.clone(), host.name)),
        ),
        Err(error) => tracing::warn!(%error, "cannot list the lab hosts for the form"),
    }
    hosts
}

/// The form posted: mapped to a spec here (the one mapping from form to spec) and checked as
/// the API checks it. A browser without JavaScript gets the page again with its errors, or a
/// redirect to the new campaign; the page's script asks for JSON (`Accept: application/json`)
/// and gets the API's answer: the new campaign, or the error with each bad field by its path.
pub(super) async fn create_from_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let wants_json = asks_for_json(&headers);
    let pairs: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let mut form = CampaignForm::from_pairs(&pairs);
    form.offer_tools(state.lab.tools());
    if let Some(message) = token_refusal(&state, &pairs) {
        return token_refused(&state, form, message, wants_json).await;
    }
    let FormSpec { spec, errors } = form.to_spec();
    let spec = spec.to_string();
    let dry_run = pairs
        .iter()
        .any(|(key, value)| key == "dry_run" && value == "true");
    if dry_run && errors.is_empty() {
        return dry_run_answer(&state, form, &spec, wants_json).await;
    }
    let outcome = if errors.is_empty() {
        state.lab.campaigns().submit(spec.as_bytes()).await
    } else {
        // Fields the form could not read, and everything else the checks find, in one answer.
        match state.lab.campaigns().check(spec.as_bytes()).await {
            Ok(_) => Err(LabError::Invalid(errors)),
            Err(error) => Err(with_form_errors(error, errors)),
        }
    };
    match outcome {
        Ok(submitted) if wants_json => {
            (StatusCode::CREATED, Json(SubmittedBody::from(&submitted))).into_response()
        }
        Ok(submitted) => Redirect::to(&submitted.url).into_response(),
        Err(error) => refused(&state, form, ApiError::from(error), wants_json).await,
    }
}

/// Whether the poster is the page's script, which asks for the API's answer in JSON.
fn asks_for_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
}

/// Why a lab that requires its token refuses the form: none given, or not its token; `None`
/// when the lab requires none or the form gave it.
fn token_refusal(state: &AppState, pairs: &[(String, String)]) -> Option<&'static str> {
    let token = state.token.as_deref()?;
    let given = pairs
        .iter()
        .find(|(key, _)| key == "token")
        .map_or("", |(_, value)| value.as_str());
    if crate::http::auth::same_secret(given.as_bytes(), token.as_bytes()) {
        return None;
    }
    Some(if given.is_empty() {
        "this lab requires its token to start a campaign"
    } else {
        "the token is not valid for this lab"
    })
}

/// The answer to a form without the lab's token: the API's refusal, or the form again with
/// the token field marked.
async fn token_refused(
    state: &AppState,
    mut form: CampaignForm,
    message: &str,
    wants_json: bool,
) -> Response {
    if wants_json {
        return ApiError::unauthorized(message).into_response();
    }
    form.errors.insert("token".into(), message.into());
    let hosts = live_hosts(state).await;
    let mut response = html(new_page(form, Some(message.to_string()), true, hosts));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
}

/// The answer to a dry run of a form that read well: the plan (as the API gives it, with its
/// summary), or the form again with the plan said above it; or the checks' refusal.
async fn dry_run_answer(
    state: &AppState,
    form: CampaignForm,
    spec: &str,
    wants_json: bool,
) -> Response {
    match state.lab.campaigns().check(spec.as_bytes()).await {
        Ok(planned) => {
            let summary = plan_summary(&planned);
            if wants_json {
                let mut answer =
                    serde_json::to_value(PlannedBody::from(&planned)).unwrap_or_default();
                answer["summary"] = summary.into();
                return Json(answer).into_response();
            }
            let hosts = live_hosts(state).await;
            let mut page = new_page(form, None, state.token.is_some(), hosts);
            page.plan = Some(summary);
            html(page)
        }
        Err(error) => refused(state, form, ApiError::from(error), wants_json).await,
    }
}

/// The answer to a form the lab refuses: the API's error, or the form again with its message
/// and each bad field marked, under the error's status.
async fn refused(
    state: &AppState,
    mut form: CampaignForm,
    api: ApiError,
    wants_json: bool,
) -> Response {
    if wants_json {
        return api.into_response();
    }
    form.set_errors(api.fields());
    let hosts = live_hosts(state).await;
    let mut response = html(new_page(
        form,
        Some(api.message().to_string()),
        state.token.is_some(),
        hosts,
    ));
    *response.status_mut() = api.status();
    response
}

/// The checks' answer with the form's own problems added: each field the form could not read
/// keeps the form's message, in place of what the checks said of its stand-in.
fn with_form_errors(error: LabError, form: FieldErrors) -> LabError {
    let merge = |checked: FieldErrors| {
        let mut all = form.clone();
        for (path, message) in checked.0 {
            let read_badly = form
                .0
                .keys()
                .any(|bad| path == *bad || path.starts_with(&format!("{bad}[")));
            if !read_badly {
                all.add(path, message);
            }
        }
        all
    };
    match error {
        LabError::Malformed(fields) => LabError::Invalid(merge(fields)),
        LabError::Invalid(fields) => LabError::Invalid(merge(fields)),
        LabError::Forbidden { paths, others } => {
            let mut merged = merge(others);
            merged.0.retain(|path, _| !paths.0.contains_key(path));
            LabError::Forbidden {
                paths,
                others: merged,
            }
        }
        other => other,
    }
}

/// A dry run in one sentence for the form: the runs, how long they take, and each warning.
fn plan_summary(planned: &crate::lab::Planned) -> String {
    let expectation = &planned.expectation;
    let mut summary = format!("{}.", expectation.summary(planned.runs));
    for warning in &expectation.warnings {
        summary.push_str(&format!(
            " Warning: {}: {}.",
            warning.field, warning.message
        ));
    }
    summary
}
