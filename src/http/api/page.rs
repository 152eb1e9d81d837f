//! Lists in pages, one mechanism for every list: a request asks for at most `limit` items
//! ([`DEFAULT_PAGE`] unless it says, at most [`MAX_PAGE`]) from a cursor that names the last
//! item of the page before (`before` for lists newest first, `after` for lists oldest first);
//! an answer with more to follow carries a `Link` header (RFC 8288, `rel="next"`) to the next
//! page. No request reads an unbounded amount.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::http::error::ApiError;
pub use crate::lab::MAX_PAGE;

/// Items a list answers with when the request does not say.
pub const DEFAULT_PAGE: u32 = 50;

/// The page size asked for: [`DEFAULT_PAGE`] when not given; refused (422, naming `limit`)
/// outside 1..=[`MAX_PAGE`].
pub fn page_limit(limit: Option<u32>) -> Result<u32, ApiError> {
    match limit {
        None => Ok(DEFAULT_PAGE),
        Some(limit) if (1..=MAX_PAGE).contains(&limit) => Ok(limit),
        Some(_) => {
            let message = format!("must be between 1 and {MAX_PAGE}");
            Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("limit: {message}"),
            )
            .with_field("limit", message))
        }
    }
}

/// Adds the `Link` to the next page to `response` when `next` names the cursor it starts
/// from: `path?` the `kept` query pairs, `limit`, and `cursor=next`.
pub fn link_next(
    mut response: Response,
    path: &str,
    kept: &[(&str, &str)],
    limit: u32,
    cursor: &str,
    next: Option<&str>,
) -> Response {
    let Some(next) = next else {
        return response;
    };
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, value) in kept {
        query.append_pair(key, value);
    }
    query.append_pair("limit", &limit.to_string());
    query.append_pair(cursor, next);
    let link = format!("<{path}?{}>; rel=\"next\"", query.finish());
    if let Ok(value) = HeaderValue::from_str(&link) {
        response.headers_mut().insert(header::LINK, value);
    }
    response
}
