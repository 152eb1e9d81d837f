//! `/api/series`: a series' history (each test's figure over its campaigns, and the changes
//! found), as JSON and CSV.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::SeriesBody;
use crate::http::AppState;
use crate::http::error::{ApiError, ErrorBody};

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router
        .routes(routes!(get_series))
        .routes(routes!(get_series_csv))
}

/// A series: its campaigns oldest first, each test's figure over them (median, range,
/// validity) and the changes found, each with its size, its first campaign and the component
/// the verdicts named before and after.
#[utoipa::path(
    get, path = "/api/series/{key}", tag = "series",
    params(("key" = String, Path, description = "The series: the `series` a campaign shows")),
    responses(
        (status = 200, description = "The series", body = SeriesBody),
        (status = 404, description = "No such series", body = ErrorBody),
    )
)]
async fn get_series(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let history = state.lab.series().history(&key).await?;
    Ok(Json(SeriesBody::from(&history)).into_response())
}

/// A series as CSV: one row per campaign and test.
#[utoipa::path(
    get, path = "/api/series/{key}/figures.csv", tag = "series",
    params(("key" = String, Path, description = "The series: the `series` a campaign shows")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such series", body = ErrorBody),
    )
)]
async fn get_series_csv(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let history = state.lab.series().history(&key).await?;
    let csv = history.to_csv();
    super::csv_download(csv, &format!("backlab-series-{key}.csv"))
}
