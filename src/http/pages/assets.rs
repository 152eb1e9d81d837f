//! Static assets embedded in the binary (no CDN: labs often sit on isolated networks).

use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::render::not_found_page;

pub(super) const STYLE: &str = include_str!("../../../static/style.css");
pub(super) const LIVE_JS: &str = include_str!("../../../static/live.js");
pub(super) const NEW_JS: &str = include_str!("../../../static/new.js");
pub(super) async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "style.css" => (STYLE, "text/css; charset=utf-8"),
        "live.js" => (LIVE_JS, "text/javascript; charset=utf-8"),
        "new.js" => (NEW_JS, "text/javascript; charset=utf-8"),
        _ => return not_found_page(&format!("/static/{file}")),
    };
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(kind))],
        body,
    )
        .into_response()
}
