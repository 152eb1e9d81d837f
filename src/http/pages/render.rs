//! What every page shares: rendering a template, error pages, SVG answers.

use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::http::error::ApiError;
use crate::lab::LabError;

/// The HTML answer to a path no route knows.
pub fn not_found_page(path: &str) -> Response {
    error_page(
        StatusCode::NOT_FOUND,
        "Page not found",
        &format!("There is no page at {path}."),
    )
}

pub(super) fn svg_response(svg: String) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("image/svg+xml"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        svg,
    )
        .into_response()
}

#[derive(Template)]
#[template(path = "error.html")]
pub(super) struct ErrorTemplate {
    standalone: bool,
    css: &'static str,
    title: String,
    message: String,
}

pub(super) fn error_page(status: StatusCode, title: &str, message: &str) -> Response {
    let mut response = html(ErrorTemplate {
        standalone: false,
        css: "",
        title: title.to_string(),
        message: message.to_string(),
    });
    *response.status_mut() = status;
    response
}

pub(super) fn lab_error_page(error: LabError) -> Response {
    let api = ApiError::from(error);
    let title = match api.status() {
        StatusCode::NOT_FOUND => "Campaign not found",
        status if status.is_client_error() => "The request cannot be served",
        _ => "Something went wrong",
    };
    error_page(api.status(), title, api.message())
}

pub(super) fn internal(message: &str) -> Response {
    tracing::error!(%message, "page failed");
    error_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        message,
    )
}

/// The content type of every page.
pub(super) const HTML: &str = "text/html; charset=utf-8";
/// The content type of every chart.
pub(super) const SVG: &str = "image/svg+xml";

pub(super) fn html<T: Template>(template: T) -> Response {
    match template.render() {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            )],
            body,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(%error, "template failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("page failed: {error}"),
            )
                .into_response()
        }
    }
}
