//! The service's own endpoints: its OpenAPI document, liveness, and Prometheus metrics.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::{HealthBody, HealthStatus, OpenApiBody};
use crate::http::AppState;
use crate::http::error::ApiError;
use crate::http::metrics;
use crate::store::RunState;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router
        .routes(routes!(get_openapi))
        .routes(routes!(healthz))
        .routes(routes!(get_metrics))
}

/// This API's OpenAPI document.
#[utoipa::path(
    get, path = "/api/openapi.json", tag = "service",
    responses((status = 200, description = "OpenAPI 3.1", body = OpenApiBody))
)]
async fn get_openapi(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        state.openapi.as_str().to_owned(),
    )
        .into_response()
}

/// Liveness and a glance at the queue.
#[utoipa::path(
    get, path = "/healthz", tag = "service",
    responses(
        (status = 200, description = "The lab is serving and its database can be written", body = HealthBody),
        (status = 503, description = "The lab is serving but its database cannot be written (a full disk, say)", body = HealthBody)
    )
)]
async fn healthz(State(state): State<AppState>) -> Result<Response, ApiError> {
    let runs_by_status = state.lab.runs().by_status().await?;
    let count = |wanted: RunState| {
        runs_by_status
            .iter()
            .find(|(state, _)| *state == wanted)
            .map_or(0, |(_, count)| *count)
    };
    // A lab whose database cannot be written (a full disk) answers but cannot store a result:
    // it says so, and the status tells a load balancer or a monitor.
    let writable = state.lab.runs().database_writable().await;
    let body = Json(HealthBody {
        status: if writable.is_ok() {
            HealthStatus::Ok
        } else {
            HealthStatus::Degraded
        },
        database: match &writable {
            Ok(()) => "writable".to_string(),
            Err(why) => format!("cannot be written: {why}"),
        },
        queued: count(RunState::Queued),
        running: count(RunState::Running),
    });
    let status = if writable.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    Ok((status, body).into_response())
}

/// Prometheus text: runs by status, queue depth, bytes moved, run durations, and the newest
/// figure of each test of each series.
#[utoipa::path(
    get, path = "/metrics", tag = "service",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String))
)]
async fn get_metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let figures = state.lab.runs().queue_figures().await?;
    let latest = state.lab.series().latest().await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        metrics::render(&figures) + &metrics::render_series(&latest),
    )
        .into_response())
}
