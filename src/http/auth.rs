//! The token rule: with a token configured, every request that changes something must carry
//! `Authorization: Bearer TOKEN`. Reading stays open so shared report links work.

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;

/// Where the new-campaign form posts.
pub const FORM_PATH: &str = "/campaigns/new";

/// The path of a page action on a campaign (`/campaigns/ID/cancel`, `rerun`, `delete`) or a
/// schedule (`/schedules/new`, `/schedules/ID/edit`, `pause`, `resume`, `delete`): the token
/// middleware lets these through because their handlers check the token in the form body.
pub fn is_action_path(path: &str) -> bool {
    if let Some(rest) = path.strip_prefix("/campaigns/") {
        return matches!(
            rest.split_once('/'),
            Some((_, "cancel" | "rerun" | "delete"))
        );
    }
    if let Some(rest) = path.strip_prefix("/schedules/") {
        return rest == "new"
            || matches!(
                rest.split_once('/'),
                Some((_, "edit" | "pause" | "resume" | "delete"))
            );
    }
    false
}

/// Middleware that refuses mutating requests without the configured token.
pub async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = state.token.as_deref() else {
        return next.run(request).await;
    };
    let reads_only = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    // The no-JavaScript form carries its token in the form body; its handler checks it.
    let path = request.uri().path();
    if reads_only || path == FORM_PATH || is_action_path(path) {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match presented {
        None => ApiError::unauthorized(
            "this lab requires a token for changes: send 'Authorization: Bearer TOKEN'",
        )
        .into_response(),
        Some(presented) if !same_secret(presented.trim().as_bytes(), token.as_bytes()) => {
            ApiError::unauthorized("the token is not valid for this lab").into_response()
        }
        Some(_) => next.run(request).await,
    }
}

pub use crate::policy::same_secret;

#[cfg(test)]
mod tests {
    use super::{is_action_path, same_secret};

    #[test]
    fn only_the_page_actions_are_action_paths() {
        assert!(is_action_path("/campaigns/QkzcB1Twsyjk/cancel"));
        assert!(is_action_path("/campaigns/QkzcB1Twsyjk/rerun"));
        assert!(is_action_path("/campaigns/QkzcB1Twsyjk/delete"));
        assert!(!is_action_path("/api/campaigns/QkzcB1Twsyjk/cancel"));
        assert!(!is_action_path("/campaigns/QkzcB1Twsyjk"));
        assert!(!is_action_path("/campaigns/QkzcB1Twsyjk/report.html"));
        assert!(!is_action_path("/campaigns/a/b/cancel"));
        assert!(is_action_path("/schedules/new"));
        assert!(is_action_path("/schedules/QkzcB1Twsyjk/pause"));
        assert!(!is_action_path("/api/schedules/QkzcB1Twsyjk"));
        assert!(!is_action_path("/schedules/a/b/delete"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
    }
}
