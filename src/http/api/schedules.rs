//! `/api/schedules`: specs queued at the times a cron pattern names; created, listed, read,
//! paused or edited, and deleted.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::{ScheduleBody, ScheduleListBody};
use crate::http::AppState;
use crate::http::error::{ApiError, ErrorBody};

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router
        .routes(routes!(create_schedule, list_schedules))
        .routes(routes!(get_schedule, change_schedule, delete_schedule))
}

/// Creates a schedule: `{"cron": "0 2 * * *", "spec": {…}, "name": …, "paused": false}`.
/// The pattern has five fields (minute hour day-of-month month day-of-week) in UTC; the spec
/// is checked as a campaign's, each bad field named under `spec.`. Each occurrence queues the
/// spec as a campaign, on one lab of the database however many share it; occurrences that
/// passed while no lab could fire them are counted as missed, never fired late.
#[utoipa::path(
    post, path = "/api/schedules", tag = "schedules",
    request_body(content = super::requests::NewScheduleRequest, description = "cron, spec, and optionally name and paused", content_type = "application/json"),
    responses(
        (status = 201, description = "Created; `Location` names it", body = ScheduleBody),
        (status = 400, description = "The body is not JSON (or not UTF-8)", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 409, description = "The lab keeps as many schedules as it may", body = ErrorBody),
        (status = 422, description = "A bad pattern or spec, each field named", body = ErrorBody),
    )
)]
async fn create_schedule(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let schedule = state.lab.schedules().create(&body?).await?;
    let mut response = (StatusCode::CREATED, Json(ScheduleBody::from(&schedule))).into_response();
    if let Ok(value) = HeaderValue::from_str(&schedule.url) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// Query of the schedule list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// At most this many (1 to 200, default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Only schedules after this schedule id (the one the `Link` to the next page names).
    #[param(min_length = 1)]
    after: Option<String>,
}

/// Schedules, oldest first, in pages: a `Link` header (`rel="next"`) leads to the next.
#[utoipa::path(
    get, path = "/api/schedules", tag = "schedules", params(ListQuery),
    responses(
        (status = 200, description = "A page of schedules", body = ScheduleListBody),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 422, description = "A `limit` out of range or an unknown `after`", body = ErrorBody),
    )
)]
async fn list_schedules(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let limit = super::page::page_limit(query.limit)?;
    let page = state
        .lab
        .schedules()
        .page(query.after.as_deref(), limit)
        .await?;
    Ok(super::page::link_next(
        Json(ScheduleListBody::from(&page)).into_response(),
        "/api/schedules",
        &[],
        limit,
        "after",
        page.next_after.as_deref(),
    ))
}

/// One schedule, with its newest firings and the campaigns they queued.
#[utoipa::path(
    get, path = "/api/schedules/{id}", tag = "schedules",
    params(("id" = String, Path, description = "Schedule id")),
    responses(
        (status = 200, description = "The schedule", body = ScheduleBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
    )
)]
async fn get_schedule(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let schedule = state.lab.schedules().view(&id).await?;
    Ok(Json(ScheduleBody::from(&schedule)).into_response())
}

/// Changes any of a schedule's `name`, `cron`, `spec` and `paused`. A resumed or re-timed
/// schedule next fires at its pattern's first occurrence from now.
#[utoipa::path(
    patch, path = "/api/schedules/{id}", tag = "schedules",
    params(("id" = String, Path, description = "Schedule id")),
    request_body(content = super::requests::ScheduleChangeRequest, description = "Any of name, cron, spec, paused", content_type = "application/json"),
    responses(
        (status = 200, description = "The schedule as changed", body = ScheduleBody),
        (status = 400, description = "The body is not JSON (or not UTF-8)", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
        (status = 422, description = "A bad pattern or spec, each field named", body = ErrorBody),
    )
)]
async fn change_schedule(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let schedule = state.lab.schedules().change(&id, &body?).await?;
    Ok(Json(ScheduleBody::from(&schedule)).into_response())
}

/// Deletes a schedule; the campaigns it queued stay.
#[utoipa::path(
    delete, path = "/api/schedules/{id}", tag = "schedules",
    params(("id" = String, Path, description = "Schedule id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such schedule", body = ErrorBody),
    )
)]
async fn delete_schedule(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.lab.schedules().delete(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
