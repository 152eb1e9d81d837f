//! The HTTP side: the REST API (`api`), the HTML pages (`pages`), and what guards both: the
//! token, the Host and origin checks, the body limit, and the connection-capped listener. It
//! asks the lab for everything and knows nothing of files or SQL.

pub mod api;
mod auth;
pub mod cache;
pub mod error;
pub mod listener;
mod metrics;
pub mod origin;
pub mod pages;
mod state;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use tower_http::trace::TraceLayer;

use error::ApiError;
use origin::SitePolicy;
pub use state::AppState;

/// The largest request body the API reads.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The API's routes and its OpenAPI document as JSON.
pub fn api() -> Result<(Router<AppState>, String), String> {
    let (routes, document) = api::router().split_for_parts();
    let json = document.to_json().map_err(|e| e.to_string())?;
    Ok((routes, json))
}

/// The whole application: the API's routes, the pages, a fallback, and the guards every
/// request passes (site policy, token, body limit, tracing).
pub fn app(api_routes: Router<AppState>, state: AppState, site: Arc<SitePolicy>) -> Router {
    api_routes
        .merge(pages::router())
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .layer(axum::middleware::from_fn_with_state(
            site,
            origin::check_site,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// An unknown path: a JSON error under `/api/`, a page elsewhere.
async fn not_found(uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no such endpoint: {}", uri.path()),
        )
        .into_response()
    } else {
        pages::not_found_page(uri.path())
    }
}
