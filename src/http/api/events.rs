//! `/api/campaigns/{id}/events`: a campaign's live events as Server-Sent Events.

use std::convert::Infallible;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::requests;
use crate::http::AppState;
use crate::http::error::{ApiError, ErrorBody};
use crate::lab::events::LabEvent;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router.routes(routes!(get_events))
}

/// Live events of a campaign (Server-Sent Events). The first event is `state`; then
/// `run_started`, `progress` (a few times a second), `run_finished` and, last,
/// `campaign_finished`, after which the stream ends.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/events", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = requests::EventBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    // Subscribe before reading the state, so nothing falls between the two.
    let mut events = state.lab.subscribe();
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
