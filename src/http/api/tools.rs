//! `/api/tools`: the backup tools campaigns may name on this lab.

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::ToolsBody;
use crate::http::AppState;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(list_tools))
}

/// The backup tools this lab can run (name, shape, version, origin and parameters, each with
/// its type, bounds, default and help), and those it knows and cannot run, with the reason.
/// Found when the lab started.
#[utoipa::path(
    get, path = "/api/tools", tag = "tools",
    responses((status = 200, description = "The lab's backup tools", body = ToolsBody))
)]
async fn list_tools(State(state): State<AppState>) -> Json<ToolsBody> {
    Json(ToolsBody::from(state.lab.tools()))
}
