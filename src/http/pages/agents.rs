//! The agents the lab knows and how to start one.

use askama::Template;
use axum::extract::State;
use axum::http::header;
use axum::response::Response;

use crate::http::AppState;

use super::assets::STYLE;
use super::render::html;

#[derive(Template)]
#[template(path = "agents.html")]
pub(super) struct AgentsTemplate {
    standalone: bool,
    css: &'static str,
    server: String,
    needs_token: bool,
    data_port: u16,
    agents: Vec<AgentRow>,
}

pub(super) struct AgentRow {
    name: String,
    state: &'static str,
    state_class: &'static str,
    host: String,
    sources: String,
    version: String,
    connections: u32,
    last_seen: String,
}

/// The agents the lab knows and how to start one.
pub(super) async fn agents_page(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
) -> Response {
    let body = crate::http::api::agents_body(&state);
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("LAB:8080");
    let agents = body
        .agents
        .iter()
        .map(|agent| {
            let (state, state_class) = match (agent.connected, agent.busy) {
                (true, true) => ("sending", "running"),
                (true, false) => ("connected", "done"),
                (false, _) => ("disconnected", "failed"),
            };
            AgentRow {
                name: agent.name.clone(),
                state,
                state_class,
                host: agent.host.clone(),
                sources: if agent.sources.is_empty() {
                    "generated data only".to_string()
                } else {
                    agent
                        .sources
                        .iter()
                        .map(|path| path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                version: agent.version.clone(),
                connections: agent.connections,
                last_seen: crate::clock::format_ms(agent.last_seen_ms),
            }
        })
        .collect();
    html(AgentsTemplate {
        standalone: false,
        css: STYLE,
        server: format!("http://{host}"),
        needs_token: state.token.is_some(),
        data_port: body.data_port,
        agents,
    })
}
