//! `/api/hosts`: the lab hosts on this lab's database, alive or not.

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::views::HostBody;
use crate::http::AppState;
use crate::http::error::ApiError;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(list_hosts))
}

/// The lab hosts that share this lab's database, those alive first: a campaign names one of
/// the live ones (`host`) to run there.
#[utoipa::path(
    get, path = "/api/hosts", tag = "hosts",
    responses((status = 200, description = "The lab hosts", body = Vec<HostBody>))
)]
async fn list_hosts(State(state): State<AppState>) -> Result<Json<Vec<HostBody>>, ApiError> {
    let hosts = state.lab.hosts().await?;
    Ok(Json(hosts.into_iter().map(HostBody::from).collect()))
}
