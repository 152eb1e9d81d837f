//! `/api/hosts`: the lab hosts on this lab's database, alive or not.

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::http::AppState;
use crate::http::error::ApiError;
use crate::lab::HostView;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(list_hosts))
}

/// The lab hosts that share this lab's database, those alive first: a campaign names one of
/// the live ones (`host`) to run there.
#[utoipa::path(
    get, path = "/api/hosts", tag = "hosts",
    responses((status = 200, description = "The lab hosts", body = Vec<HostView>))
)]
async fn list_hosts(State(state): State<AppState>) -> Result<Json<Vec<HostView>>, ApiError> {
    Ok(Json(state.lab.hosts().await?))
}
