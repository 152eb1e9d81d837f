//! The REST API's handlers; each one reads the request, asks the lab, and shapes the answer.
//! The OpenAPI document is generated from the `#[utoipa::path]` annotations here; the
//! campaign spec's schema is described in `schema`.

mod schema;

use std::convert::Infallible;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use utoipa::{IntoParams, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::metrics;
use crate::events::LabEvent;
use crate::lab::MAX_PAGE;
use crate::report;
use crate::store::RunState;

/// What the OpenAPI document says about itself.
#[derive(OpenApi)]
#[openapi(info(
    title = "backlab",
    version = env!("CARGO_PKG_VERSION"),
    description = "A backup performance lab: submit campaigns of backup tests, follow them \
                   live, and read which component limits the backup."
))]
struct ApiInfo;

/// Every API route, with its OpenAPI description.
pub fn api() -> OpenApiRouter<AppState> {
    let mut document = ApiInfo::openapi();
    // The derive fills these from Cargo.toml, which names neither.
    document.info.license = None;
    document.info.contact = None;
    OpenApiRouter::with_openapi(document)
        .routes(routes!(create_campaign, list_campaigns))
        .routes(routes!(get_campaign, delete_campaign))
        .routes(routes!(get_bottleneck))
        .routes(routes!(get_results_csv))
        .routes(routes!(get_events))
        .routes(routes!(cancel_campaign))
        .routes(routes!(rerun_campaign))
        .routes(routes!(get_openapi))
        .routes(routes!(healthz))
        .routes(routes!(get_metrics))
        .routes(routes!(list_agents))
}

/// The agents the lab knows, and where its data listener takes them.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct AgentsBody {
    /// The data listener's port: agents register there and send network backups to it.
    pub data_port: u16,
    /// The listener's address when it is bound to one; otherwise agents use the lab's host.
    pub data_host: Option<String>,
    pub agents: Vec<crate::datalink::registry::AgentInfo>,
}

/// Lists the agents that registered since the lab started, connected or not.
#[utoipa::path(
    get, path = "/api/agents", tag = "agents",
    responses((status = 200, description = "The data listener and the agents", body = AgentsBody))
)]
async fn list_agents(State(state): State<AppState>) -> Json<AgentsBody> {
    Json(agents_body(&state))
}

/// What `GET /api/agents` answers; the agents page shows the same.
pub fn agents_body(state: &AppState) -> AgentsBody {
    let addr = state.datalink.addr();
    AgentsBody {
        data_port: addr.port(),
        data_host: (!addr.ip().is_unspecified()).then(|| addr.ip().to_string()),
        agents: state.datalink.registry().list(),
    }
}

/// Queues a campaign. The body is a campaign spec.
#[utoipa::path(
    post, path = "/api/campaigns", tag = "campaigns",
    request_body(content = schema::CampaignSpecSchema, description = "A campaign spec", content_type = "application/json"),
    responses(
        (status = 201, description = "Queued; `Location` names the campaign", body = schema::SubmittedSchema,
            headers(("Location" = String, description = "The campaign's API path")),
            links(
                ("get" = (operation_id = "get_campaign", parameters(("id" = "$response.body#/id")))),
                ("bottleneck" = (operation_id = "get_bottleneck", parameters(("id" = "$response.body#/id")))),
                ("results" = (operation_id = "get_results_csv", parameters(("id" = "$response.body#/id")))),
                ("cancel" = (operation_id = "cancel_campaign", parameters(("id" = "$response.body#/id")))),
                ("rerun" = (operation_id = "rerun_campaign", parameters(("id" = "$response.body#/id")))),
                ("delete" = (operation_id = "delete_campaign", parameters(("id" = "$response.body#/id")))),
            )),
        (status = 400, description = "Malformed JSON, wrong types or unknown fields", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 403, description = "A path outside the allowed roots", body = ErrorBody),
        (status = 413, description = "Body larger than 1 MiB", body = ErrorBody),
        (status = 422, description = "Invalid fields or limits exceeded", body = ErrorBody),
    )
)]
async fn create_campaign(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body?;
    let submitted = state.lab.submit(&body).await?;
    created(submitted)
}

fn created(submitted: crate::lab::Submitted) -> Result<Response, ApiError> {
    let location = format!("/api/campaigns/{}", submitted.id);
    let mut response = (StatusCode::CREATED, Json(submitted)).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// Query of the campaign list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only campaigns in this status: queued, running, done, failed, cancelled, interrupted.
    #[param(pattern = "^(queued|running|done|failed|cancelled|interrupted)?$")]
    status: Option<String>,
    /// At most this many (1 to 200, default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Only campaigns older than this campaign id (the `next_before` of the previous page).
    before: Option<String>,
}

/// Campaigns, newest first, in pages.
#[utoipa::path(
    get, path = "/api/campaigns", tag = "campaigns", params(ListQuery),
    responses(
        (status = 200, description = "A page of campaigns", body = serde_json::Value),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 422, description = "Unknown status or `before`", body = ErrorBody),
    )
)]
async fn list_campaigns(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let status = match query.status.as_deref() {
        None | Some("") => None,
        Some(text) => Some(text.parse::<RunState>().map_err(|message| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("status: {message}"),
            )
            .with_field("status", message)
        })?),
    };
    if let Some(limit) = query.limit
        && !(1..=MAX_PAGE).contains(&limit)
    {
        let message = format!("must be between 1 and {MAX_PAGE}");
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("limit: {message}"),
        )
        .with_field("limit", message));
    }
    let page = state
        .lab
        .list(status, query.before.as_deref(), query.limit.unwrap_or(50))
        .await?;
    Ok(Json(page).into_response())
}

/// One campaign with its spec and runs (results included once finished).
#[utoipa::path(
    get, path = "/api/campaigns/{id}", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "The campaign", body = serde_json::Value),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.lab.campaign(&id).await?).into_response())
}

/// Deletes a campaign and its results; refused while one of its runs executes.
#[utoipa::path(
    delete, path = "/api/campaigns/{id}", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
        (status = 409, description = "The campaign is running", body = ErrorBody),
    )
)]
async fn delete_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.lab.delete(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The bottleneck verdict with the runs it rests on: the document `backlab run --json` prints.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/bottleneck", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "Campaign, runs and the `bottleneck` verdict", body = serde_json::Value),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_bottleneck(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.lab.report(&id).await?).into_response())
}

/// One row per run, every figure a column.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/results.csv", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_results_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (record, runs) = state.lab.runs(&id).await?;
    let csv = report::runs_csv(&record.id, &runs).map_err(|error| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot write CSV: {error}"),
        )
    })?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(value) = HeaderValue::from_str(&format!(
        "attachment; filename=\"backlab-{}.csv\"",
        record.id
    )) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok((headers, csv).into_response())
}

/// Live events of a campaign (Server-Sent Events). The first event is `state`; then
/// `run_started`, `progress` (a few times a second), `run_finished` and, last,
/// `campaign_finished`, after which the stream ends.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/events", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = schema::EventSchema),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    // Subscribe before reading the state, so nothing falls between the two.
    let mut events = state.lab.events.subscribe();
    let first = state.lab.state_event(&id).await?;
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(64);
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        let finished = match &first {
            LabEvent::State { status, .. } => status.is_final(),
            _ => false,
        };
        if tx.send(Ok(sse_event(&first))).await.is_err() {
            return;
        }
        if finished {
            if let LabEvent::State { status, .. } = first {
                let _ = tx
                    .send(Ok(sse_event(&LabEvent::CampaignFinished { status })))
                    .await;
            }
            return;
        }
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                received = events.recv() => match received {
                    Ok(envelope) => {
                        let (campaign, event) = &*envelope;
                        if campaign != &id {
                            continue;
                        }
                        if tx.send(Ok(sse_event(event))).await.is_err() {
                            return;
                        }
                        if event.ends_campaign() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    Ok(Sse::new(ReceiverStream::new(rx))
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn sse_event(event: &LabEvent) -> Event {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_string());
    Event::default().event(event.name()).data(data)
}

/// Cancels the queued runs and stops the running one (within a second; its files are removed).
#[utoipa::path(
    post, path = "/api/campaigns/{id}/cancel", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 202, description = "Cancelling; the answer gives the status now", body = serde_json::Value),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn cancel_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let status = state.lab.cancel(&id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({ "id": id, "status": status })),
    )
        .into_response())
}

/// Queues a new campaign with the same spec, linked to this one by `rerun_of`.
#[utoipa::path(
    post, path = "/api/campaigns/{id}/rerun", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 201, description = "Queued", body = schema::SubmittedSchema,
            headers(("Location" = String, description = "The new campaign's API path")),
            links(
                ("get" = (operation_id = "get_campaign", parameters(("id" = "$response.body#/id")))),
                ("bottleneck" = (operation_id = "get_bottleneck", parameters(("id" = "$response.body#/id")))),
                ("results" = (operation_id = "get_results_csv", parameters(("id" = "$response.body#/id")))),
                ("cancel" = (operation_id = "cancel_campaign", parameters(("id" = "$response.body#/id")))),
                ("rerun" = (operation_id = "rerun_campaign", parameters(("id" = "$response.body#/id")))),
                ("delete" = (operation_id = "delete_campaign", parameters(("id" = "$response.body#/id")))),
            )),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 403, description = "A path outside the allowed roots now", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
        (status = 422, description = "The spec no longer passes the checks", body = ErrorBody),
    )
)]
async fn rerun_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    created(state.lab.rerun(&id).await?)
}

/// This API's OpenAPI document.
#[utoipa::path(
    get, path = "/api/openapi.json", tag = "service",
    responses((status = 200, description = "OpenAPI 3.1", body = serde_json::Value))
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
    responses((status = 200, description = "The lab is serving", body = serde_json::Value))
)]
async fn healthz(State(state): State<AppState>) -> Result<Response, ApiError> {
    let figures = state
        .lab
        .store
        .queue_figures()
        .await
        .map_err(crate::lab::LabError::from)?;
    let count = |wanted: RunState| {
        figures
            .runs_by_status
            .iter()
            .find(|(state, _)| *state == wanted)
            .map_or(0, |(_, count)| *count)
    };
    Ok(Json(serde_json::json!({
        "status": "ok",
        "queued": count(RunState::Queued),
        "running": count(RunState::Running),
    }))
    .into_response())
}

/// Prometheus text: runs by status, queue depth, bytes moved, run durations.
#[utoipa::path(
    get, path = "/metrics", tag = "service",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String))
)]
async fn get_metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let figures = state
        .lab
        .store
        .queue_figures()
        .await
        .map_err(crate::lab::LabError::from)?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        metrics::render(&figures),
    )
        .into_response())
}
