//! The REST API: one module per resource, each adding its routes; the OpenAPI document is
//! generated from their `#[utoipa::path]` annotations and the derives on what they take and
//! answer: the campaign spec's own types (`crate::spec`), the answers' wire types (`views`,
//! `wire`) and the few request bodies only the lab reads (`requests`).

mod agents;
mod campaigns;
mod events;
mod hosts;
mod page;
mod references;
mod requests;
mod schedules;
mod series;
mod service;
#[cfg(test)]
mod tests;
mod tools;
pub(crate) mod views;
mod wire;

use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub use agents::{AgentsBody, agents_body};

use crate::http::AppState;

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
pub fn router() -> OpenApiRouter<AppState> {
    let mut document = ApiInfo::openapi();
    // The derive fills these from Cargo.toml, which names neither.
    document.info.license = None;
    document.info.contact = None;
    let router = OpenApiRouter::with_openapi(document);
    let router = campaigns::routes(router);
    let router = events::routes(router);
    let router = service::routes(router);
    let router = hosts::routes(router);
    let router = series::routes(router);
    let router = schedules::routes(router);
    let router = references::routes(router);
    let router = tools::routes(router);
    agents::routes(router)
}

/// A CSV document, offered for download as `filename`; one that could not be written is a 500
/// saying so.
fn csv_download(
    csv: Result<String, csv::Error>,
    filename: &str,
) -> Result<axum::response::Response, crate::http::ApiError> {
    use axum::http::{HeaderMap, HeaderValue, header};
    use axum::response::IntoResponse;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    let csv = csv.map_err(|error| {
        crate::http::ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot write CSV: {error}"),
        )
    })?;
    Ok((headers, csv).into_response())
}
