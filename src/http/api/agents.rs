//! `/api/agents`: the agents the lab knows and where they send.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::http::AppState;
use crate::lab::AgentInfo;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(list_agents))
}

/// The agents the lab knows, and where its data listener takes them.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentsBody {
    /// The data listener's port: agents register there and send network backups to it.
    pub data_port: u16,
    /// The listener's address when it is bound to one; otherwise agents use the lab's host.
    pub data_host: Option<String>,
    pub agents: Vec<AgentInfo>,
}

/// Lists the agents connected now and those that left in the last 10 minutes (at most 256 of
/// them, the most recent).
#[utoipa::path(
    get, path = "/api/agents", tag = "agents",
    responses((status = 200, description = "The data listener and the agents", body = AgentsBody))
)]
async fn list_agents(State(state): State<AppState>) -> Json<AgentsBody> {
    Json(agents_body(&state))
}

/// What `GET /api/agents` answers; the agents page shows the same.
pub fn agents_body(state: &AppState) -> AgentsBody {
    let agents = state.lab.agents();
    AgentsBody {
        data_port: agents.data_port(),
        data_host: agents.data_host(),
        agents: agents.list(),
    }
}
