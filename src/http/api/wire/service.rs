//! The service's own answers: liveness, a cancel's acknowledgement, the OpenAPI document.

use std::borrow::Cow;

use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};

use super::StatusBody;

/// Whether the lab serves and can store results, and how many runs wait and run.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Health)]
pub struct HealthBody {
    pub status: HealthStatus,
    /// `writable`, or why the database cannot be written.
    pub database: String,
    /// Runs waiting in the queue.
    pub queued: i64,
    /// Runs executing now.
    pub running: i64,
}

/// `ok`, or `degraded` when the database cannot be written.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
    Degraded,
}

/// A cancel taken: the campaign and its status now.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Cancelled)]
pub struct CancelledBody<'a> {
    pub id: &'a str,
    pub status: StatusBody,
}

/// An OpenAPI 3.1 document: this API described, served as the lab wrote it at start-up.
pub struct OpenApiBody;

impl utoipa::PartialSchema for OpenApiBody {
    fn schema() -> RefOr<Schema> {
        let object = || ObjectBuilder::new().schema_type(Type::Object);
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "openapi",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^3\\.1\\.[0-9]+$")),
            )
            .property("info", object())
            .property("paths", object())
            .property("components", object())
            .required("openapi")
            .required("info")
            .required("paths")
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .description(Some(
                "An OpenAPI 3.1 document; its parts are the OpenAPI specification's",
            ))
            .into()
    }
}

impl ToSchema for OpenApiBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OpenApiDocument")
    }
}
