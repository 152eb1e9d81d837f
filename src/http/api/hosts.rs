//! `/api/hosts`: the lab hosts on this lab's database, alive or not.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::views::HostBody;
use crate::http::AppState;
use crate::http::error::{ApiError, ErrorBody};

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(list_hosts))
}

/// Query of the host list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// At most this many (1 to 200, default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Only hosts whose names sort after this one (the one the `Link` to the next page names).
    after: Option<String>,
}

/// The lab hosts that share this lab's database, by name, in pages (a `Link` header with
/// `rel="next"` leads to the next): a campaign names one of the live ones (`host`) to run
/// there.
#[utoipa::path(
    get, path = "/api/hosts", tag = "hosts", params(ListQuery),
    responses(
        (status = 200, description = "A page of lab hosts", body = Vec<HostBody>),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 422, description = "A `limit` out of range", body = ErrorBody),
    )
)]
async fn list_hosts(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let limit = super::page::page_limit(query.limit)?;
    let (hosts, next_after) = state
        .lab
        .hosts()
        .page(query.after.as_deref(), limit)
        .await?;
    let body: Vec<HostBody> = hosts.into_iter().map(HostBody::from).collect();
    Ok(super::page::link_next(
        Json(body).into_response(),
        "/api/hosts",
        &[],
        limit,
        "after",
        next_after.as_deref(),
    ))
}
