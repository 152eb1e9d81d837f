//! The campaign spec as the OpenAPI document describes it: the derives on the spec's types
//! take their limits, patterns and lists from here, the limits `CampaignSpec::plan` checks,
//! so that what a client or a fuzzer generates from the document is a meaningful request.
//! A size and a duration are described by hand, being read from text by the spec's own
//! parsers; a target is put together from its kinds' settings types (`engine::target`).

use std::borrow::Cow;

use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::{
    ByteSize, DurationInput, MAX_CLIENTS, MAX_CONNECTIONS, MAX_RUNS, TargetKind, TargetSpec,
    TestKind,
};

/// The whitespace Rust's `str::trim` removes, which the spec's parsers allow around values.
pub use crate::engine::target::tape::catalogue::model_pattern as tape_model_pattern;
pub use crate::size::size_pattern;

/// An agent's or a lab host's name as `spec::check_name` accepts it.
pub const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/// What the document says of a target besides its kinds' settings: which kinds take a path.
fn target_description() -> String {
    let with_path: Vec<String> = TargetKind::all()
        .filter(|kind| kind.facts().takes_path)
        .map(|kind| format!("`{}`", kind.id()))
        .collect();
    let with_path = match with_path.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "no kind".to_string(),
    };
    format!(
        "Where the data goes. `path` is required with {with_path} and not used otherwise; each \
         other field is a setting of the one kind its description names."
    )
}

/// A target as the document describes it: its kind, its path, and every setting of every
/// kind, each as the kind's settings type derives it (`engine::target`); a target is read as
/// a `TargetSpec`, whose kind then reads its own settings.
impl PartialSchema for TargetSpec {
    fn schema() -> RefOr<Schema> {
        let mut target = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(target_description()))
            .property("kind", Ref::from_schema_name(TargetKind::name()))
            .required("kind")
            .property(
                "path",
                ObjectBuilder::new()
                    .schema_type(or_null(Type::String))
                    .description(Some(
                        "The directory (under `--allow-target`) or the device (named by \
                         `--allow-device`).",
                    )),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(false)));
        for settings in crate::engine::target::settings_schemas() {
            if let RefOr::T(Schema::Object(settings)) = settings {
                for (name, setting) in settings.properties {
                    target = target.property(name, setting);
                }
            }
        }
        target.into()
    }
}

impl ToSchema for TargetSpec {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TargetSpec")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((TargetKind::name().into_owned(), TargetKind::schema()));
        TargetKind::schemas(schemas);
        crate::engine::target::settings_schema_parts(schemas);
    }
}

impl PartialSchema for ByteSize {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
                    .maximum(Some(u64::MAX)),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(size_pattern())),
            )
            .description(Some(
                "A byte count, or digits with a binary unit: 65536, \"64K\", \"1M\", \"2GiB\"",
            ))
            .examples(["256K", "1M"])
            .into()
    }
}

impl ToSchema for ByteSize {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Size")
    }
}

impl PartialSchema for DurationInput {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Number)
                    .exclusive_minimum(Some(0.0))
                    .maximum(Some(crate::spec::bounds::MAX_DURATION_S)),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["auto"])),
            )
            .description(Some(
                "Seconds (at most the lab's `--max-duration`, itself at most a day), or \
                 \"auto\": until the throughput is steady, at most 60 s",
            ))
            .examples([serde_json::json!(60.0), serde_json::json!("auto")])
            .into()
    }
}

impl ToSchema for DurationInput {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Duration")
    }
}

/// `type: [kind, "null"]`: an optional field the spec also accepts as `null`.
pub(crate) fn or_null(kind: Type) -> SchemaType {
    SchemaType::from_iter([kind, Type::Null])
}

pub(crate) fn tests_schema() -> ArrayBuilder {
    let ids: Vec<&str> = TestKind::ALL.iter().map(|test| test.id()).collect();
    let bottleneck: Vec<&str> = TestKind::BOTTLENECK.iter().map(|test| test.id()).collect();
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(ids)),
        )
        .min_items(Some(1))
        .max_items(Some(TestKind::ALL.len()))
        .unique_items(true)
        .default(Some(serde_json::json!(bottleneck)))
        .description(Some("The tests to run, each once"))
}

pub(crate) fn paths_schema() -> ArrayBuilder {
    ArrayBuilder::new()
        .schema_type(or_null(Type::Array))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1)),
        )
        .min_items(Some(1))
        .description(Some(
            "Directories or files, under the lab's --allow-source roots (on the agents' hosts \
             for a network backup)",
        ))
}

pub(crate) fn agents_schema() -> ArrayBuilder {
    ArrayBuilder::new()
        .schema_type(or_null(Type::Array))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(NAME_PATTERN)),
        )
        .min_items(Some(1))
        .max_items(Some(MAX_CLIENTS as usize))
        .unique_items(true)
        .description(Some(
            "Registered agents that send the network backup (see GET /api/agents)",
        ))
}

pub(crate) fn int_list(most: u32, description: &str) -> ArrayBuilder {
    ArrayBuilder::new()
        .schema_type(or_null(Type::Array))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(most)),
        )
        .min_items(Some(1))
        .max_items(Some(MAX_RUNS as usize))
        .description(Some(description))
}

pub(crate) fn matrix_buffers_schema() -> ArrayBuilder {
    int_list(1024, "Ring sizes to sweep")
}

pub(crate) fn matrix_streams_schema() -> ArrayBuilder {
    int_list(256, "Stream counts to sweep")
}

pub(crate) fn matrix_clients_schema() -> ArrayBuilder {
    int_list(
        MAX_CONNECTIONS.min(MAX_CLIENTS),
        "Network backup only: client counts to sweep",
    )
}

pub(crate) fn matrix_concurrency_schema() -> ArrayBuilder {
    int_list(
        256,
        "Object-store target only: parts in flight per stream to sweep",
    )
}

pub(crate) fn matrix_block_size_schema() -> ArrayBuilder {
    size_list("Block sizes to sweep")
}

pub(crate) fn matrix_part_size_schema() -> ArrayBuilder {
    size_list("Object-store target only: part sizes to sweep")
}

pub(crate) fn size_list(description: &str) -> ArrayBuilder {
    ArrayBuilder::new()
        .schema_type(or_null(Type::Array))
        .items(ByteSize::schema())
        .min_items(Some(1))
        .max_items(Some(MAX_RUNS as usize))
        .description(Some(description))
}
