//! `/api/campaigns/{id}/events`: a campaign's live events as Server-Sent Events.

use std::convert::Infallible;
use std::ops::ControlFlow;
use std::sync::Arc;

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
/// `campaign_finished`, after which the stream ends. `state` comes again when the lab's relay
/// from the other hosts of a fleet was cut and listens again (events may have been lost).
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
    let mut events = state.lab.runs().subscribe();
    let mut reopenings = state.lab.runs().relay_reopenings();
    let first = state.lab.runs().state_event(&id).await?;
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(64);
    let mut shutdown = state.shutdown.clone();
    let lab = Arc::clone(&state.lab);
    tokio::spawn(async move {
        if send_state(&tx, &first).await.is_break() {
            return;
        }
        let mut relay_lives = true;
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                reopened = reopenings.changed(), if relay_lives => {
                    if reopened.is_err() {
                        relay_lives = false;
                        continue;
                    }
                    // Events relayed from other hosts may have been lost: where it stands now.
                    let Ok(now) = lab.runs().state_event(&id).await else {
                        continue;
                    };
                    if send_state(&tx, &now).await.is_break() {
                        return;
                    }
                }
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

/// Sends a `state` event, and `campaign_finished` after it when the campaign has ended: the
/// stream ends then (`Break`), or when the follower has gone.
async fn send_state(
    tx: &mpsc::Sender<Result<Event, Infallible>>,
    state: &LabEvent,
) -> ControlFlow<()> {
    if tx.send(Ok(sse_event(state))).await.is_err() {
        return ControlFlow::Break(());
    }
    match state {
        LabEvent::State { status, .. } if status.is_final() => {
            let finished = LabEvent::CampaignFinished { status: *status };
            let _ = tx.send(Ok(sse_event(&finished))).await;
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    }
}

fn sse_event(event: &LabEvent) -> Event {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_string());
    Event::default().event(event.name()).data(data)
}
