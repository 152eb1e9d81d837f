//! `/api/campaigns/{id}/references`: other tools' results (fio, iperf3) kept beside a
//! campaign's figures, drawn and compared on its report.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::ReferenceBody;
use crate::http::AppState;
use crate::http::error::{ApiError, ErrorBody};

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(import_references, list_references))
}

/// Imports a tool's result beside the campaign: `{"tool": "fio", "result": <fio
/// --output-format=json>}` or `{"tool": "iperf3", "result": <iperf3 -J>}`. Each fio job's read
/// and write bandwidth, or iperf3's received rate, is kept with its conditions; the answer is
/// every reference the campaign holds.
#[utoipa::path(
    post, path = "/api/campaigns/{id}/references", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    request_body(content = super::requests::ReferenceImport, description = "tool and result", content_type = "application/json"),
    responses(
        (status = 201, description = "The campaign's references", body = Vec<ReferenceBody>),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
        (status = 409, description = "The campaign holds as many references as it may", body = ErrorBody),
        (status = 422, description = "An unknown tool, or not the tool's JSON output", body = ErrorBody),
    )
)]
async fn import_references(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let references = state.lab.campaigns().import_references(&id, &body?).await?;
    // The report shows them: a kept page of it is stale now.
    state.pages.forget(&id);
    let body: Vec<ReferenceBody> = references.iter().map(ReferenceBody::from).collect();
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// The reference figures kept with the campaign.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/references", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "The campaign's references", body = Vec<ReferenceBody>),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn list_references(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let references = state.lab.campaigns().references(&id).await?;
    let body: Vec<ReferenceBody> = references.iter().map(ReferenceBody::from).collect();
    Ok(Json(body).into_response())
}
