//! `/api/agents`: the agents the lab knows and where they send.

use std::path::PathBuf;

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::http::AppState;
use serde::Serialize;
use utoipa::ToSchema;

use crate::lab::{AgentView, AgentsView};

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
    pub agents: Vec<AgentBody>,
}

/// An agent as `GET /api/agents` shows it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AgentInfo)]
pub struct AgentBody {
    pub name: String,
    /// The address its control connection comes from.
    pub host: String,
    /// The paths it may read.
    #[schema(value_type = Vec<String>)]
    pub sources: Vec<PathBuf>,
    pub version: String,
    /// Whether its control connection is up.
    pub connected: bool,
    /// Whether it is sending a network backup now (derived from the run it sends for).
    pub busy: bool,
    /// How many times it connected since the lab started.
    pub connections: u32,
    pub first_seen_ms: i64,
    pub last_seen_ms: i64,
}

impl From<AgentView> for AgentBody {
    fn from(agent: AgentView) -> Self {
        Self {
            name: agent.name,
            host: agent.host,
            sources: agent.sources,
            version: agent.version,
            connected: agent.connected,
            busy: agent.busy,
            connections: agent.connections,
            first_seen_ms: agent.first_seen_ms,
            last_seen_ms: agent.last_seen_ms,
        }
    }
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
    let AgentsView {
        data_port,
        data_host,
        agents,
    } = state.lab.agents();
    AgentsBody {
        data_port,
        data_host,
        agents: agents.into_iter().map(AgentBody::from).collect(),
    }
}
