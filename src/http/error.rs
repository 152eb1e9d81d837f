//! The one place where the lab's errors become HTTP answers: a status code and
//! `{"error": "...", "fields": {"path": "message"}}`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::lab::LabError;

/// An error answer of the API.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
}

/// The JSON body of every error answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in one sentence.
    pub error: String,
    /// Problems by field path (`params.block_size`), when fields are to blame.
    pub fields: BTreeMap<String, String>,
}

impl ApiError {
    /// An error with a status and a message, blaming no field.
    pub fn new(status: StatusCode, error: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorBody {
                error: error.into(),
                fields: BTreeMap::new(),
            },
        }
    }

    /// The same error, blaming one field.
    pub fn with_field(mut self, path: impl Into<String>, message: impl Into<String>) -> Self {
        self.body.fields.insert(path.into(), message.into());
        self
    }

    /// The status code of the answer.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The one-sentence message.
    pub fn message(&self) -> &str {
        &self.body.error
    }

    /// Problems by field path.
    pub fn fields(&self) -> &BTreeMap<String, String> {
        &self.body.fields
    }

    /// 401 for a missing or wrong token.
    pub fn unauthorized(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }
}

impl From<LabError> for ApiError {
    fn from(error: LabError) -> Self {
        let (status, fields) = match &error {
            LabError::Malformed(fields) => (StatusCode::BAD_REQUEST, fields.0.clone()),
            LabError::Invalid(fields) => (StatusCode::UNPROCESSABLE_ENTITY, fields.0.clone()),
            LabError::Forbidden { .. } => (
                StatusCode::FORBIDDEN,
                error.field_errors().unwrap_or_default().0,
            ),
            LabError::NotFound(_) => (StatusCode::NOT_FOUND, BTreeMap::new()),
            LabError::Conflict(_) => (StatusCode::CONFLICT, BTreeMap::new()),
            LabError::BadQuery(fields) => (StatusCode::UNPROCESSABLE_ENTITY, fields.0.clone()),
            LabError::QueueFull(_) => (StatusCode::TOO_MANY_REQUESTS, BTreeMap::new()),
            LabError::Store(store) if store.is_disk_full() => {
                tracing::error!(%error, "the database's disk is full");
                return Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the lab's database cannot be written: its disk is full; nothing was \
                     changed. Make room on it and try again",
                );
            }
            LabError::Store(_) | LabError::Internal(_) => {
                tracing::error!(%error, "request failed");
                (StatusCode::INTERNAL_SERVER_ERROR, BTreeMap::new())
            }
        };
        let message = match (fields.iter().next(), &error) {
            (Some((path, message)), _) if fields.len() == 1 => {
                format!("{error}: {path}: {message}")
            }
            (Some(_), LabError::Forbidden { paths, others }) => {
                let outside = match paths.0.len() {
                    1 => "1 path is outside what this lab may use".to_string(),
                    count => format!("{count} paths are outside what this lab may use"),
                };
                match others.0.len() {
                    0 => format!("{} fields have problems: {outside}", fields.len()),
                    1 => format!(
                        "{} fields have problems: {outside}, 1 is not valid",
                        fields.len()
                    ),
                    count => format!(
                        "{} fields have problems: {outside}, {count} are not valid",
                        fields.len()
                    ),
                }
            }
            (Some(_), _) => format!("{error}: {} fields have problems", fields.len()),
            (None, _) => error.to_string(),
        };
        Self {
            status,
            body: ErrorBody {
                error: message,
                fields,
            },
        }
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> Self {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!(
                "the request body is larger than {} bytes",
                super::MAX_BODY_BYTES
            )
        } else {
            format!("the request body cannot be read: {}", rejection.body_text())
        };
        Self::new(status, message)
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            format!("bad query string: {}", rejection.body_text()),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let mut response = (self.status, Json(self.body)).into_response();
        if unauthorized {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"backlab\""),
            );
        }
        response
    }
}
