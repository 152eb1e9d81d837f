//! The campaign spec as the OpenAPI document describes it: the derives on the spec's types
//! take their limits, patterns and lists from here, the limits `CampaignSpec::plan` checks,
//! so that what a client or a fuzzer generates from the document is a meaningful request.
//! A size, a duration and a target are described by hand: the first two are read from text
//! by the spec's own parsers, and a target's settings belong to its kind (`engine::target`).

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::{PartialSchema, ToSchema};

use super::{
    ByteSize, DurationInput, MAX_CLIENTS, MAX_CONNECTIONS, MAX_RUNS, TargetKind, TargetSpec,
    TestKind,
};

/// The whitespace Rust's `str::trim` removes, which the spec's parsers allow around values.
const SPACE: &str =
    r"[\t\n\u000b\u000c\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";

/// A size as `spec::parse_size` reads it: digits, then an optional unit (K/M/G/T and KiB…TiB
/// binary, KB/MB/GB/TB decimal).
pub fn size_pattern() -> String {
    format!("^{SPACE}*[0-9]+{SPACE}*(?:[Bb]|[KkMmGgTt](?:[Ii]?[Bb])?)?{SPACE}*$")
}

/// A tape model as `spec::tape_model` reads it: `lto-3` … `lto-9` or `ultrium-960`, any case.
pub fn tape_model_pattern() -> String {
    format!("^{SPACE}*(?:[Ll][Tt][Oo]-[3-9]|[Uu][Ll][Tt][Rr][Ii][Uu][Mm]-960){SPACE}*$")
}

/// An agent's or a lab host's name as `spec::check_name` accepts it.
pub const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/// Where the data goes. `path` is required with `dir`, `device` and `dedup` and not used
/// otherwise; the drive settings belong to `tape` only, the disk and controller settings to
/// `striped` only, the store, prefix and part settings to `s3` only, the average chunk to
/// `dedup` only.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TargetSpec)]
#[allow(dead_code)] // It only describes; a target is read as a `TargetSpec`.
struct TargetFields {
    kind: TargetKind,
    /// The directory (under `--allow-target`) or the device (named by `--allow-device`).
    path: Option<String>,
    /// Emulated tape: `lto-3` … `lto-9`, or `ultrium-960`.
    #[schema(schema_with = tape_model_schema)]
    model: Option<String>,
    /// Emulated tape: drives, one writer each.
    #[schema(minimum = 1, maximum = 16)]
    drives: Option<u32>,
    /// Emulated tape: native speed, overriding the model's.
    #[schema(minimum = 1.0, maximum = 100_000.0)]
    native_mb_s: Option<f64>,
    /// Emulated tape: the lowest speed-matching step, at most the native speed.
    #[schema(minimum = 0.1, maximum = 100_000.0)]
    min_mb_s: Option<f64>,
    /// Emulated tape: the drive's buffer in MB.
    #[schema(minimum = 1.0, maximum = 65_536.0)]
    buffer_mb: Option<f64>,
    /// Emulated tape: seconds one reposition (backhitch) takes.
    #[schema(minimum = 0.001, maximum = 60.0)]
    reposition_s: Option<f64>,
    /// Emulated tape: the best compression the drive achieves.
    #[schema(minimum = 1.0, maximum = 10.0)]
    max_compression: Option<f64>,
    /// Emulated tape: native bytes one cartridge holds; greater than 0.
    capacity: Option<ByteSize>,
    /// Emulated tape: seconds to load a cartridge, added to a restore's time (default 15).
    #[schema(minimum = 0.0, maximum = 3600.0)]
    load_s: Option<f64>,
    /// Emulated tape: seconds to locate a backup on the cartridge, added to a restore's time
    /// (default 50).
    #[schema(minimum = 0.0, maximum = 3600.0)]
    locate_s: Option<f64>,
    /// Emulated striped volume: disks in the stripe (default 4).
    #[schema(minimum = 1, maximum = 256)]
    disks: Option<u32>,
    /// Emulated striped volume: one disk's rate (default 5).
    #[schema(minimum = 0.1, maximum = 100_000.0)]
    disk_mb_s: Option<f64>,
    /// Emulated striped volume: bytes under the head in one revolution (default 64K).
    track: Option<ByteSize>,
    /// Emulated striped volume: bytes on one disk before the next, whole tracks (default one).
    stripe_unit: Option<ByteSize>,
    /// Emulated striped volume: controllers, the disks split among them in order (default one
    /// per four disks).
    #[schema(minimum = 1, maximum = 256)]
    controllers: Option<u32>,
    /// Emulated striped volume: one controller's bandwidth (default 20).
    #[schema(minimum = 0.1, maximum = 100_000.0)]
    controller_mb_s: Option<f64>,
    /// Emulated striped volume: the wait before each stripe unit a write puts on a disk
    /// (default one revolution).
    #[schema(minimum = 0.0, maximum = 1000.0)]
    rotational_delay_ms: Option<f64>,
    /// Object store: the name of a store the lab was started with (`--s3-store NAME=URL`);
    /// required with `s3`. A spec names a store, never an endpoint, bucket or credential.
    store: Option<String>,
    /// Object store: where the lab's objects go in the bucket (default `backlab/`).
    prefix: Option<String>,
    /// Object store: bytes in one part of a multipart upload, 5M to 5G (default 16M).
    part_size: Option<ByteSize>,
    /// Object store: parts each stream keeps in flight (default 8).
    #[schema(minimum = 1, maximum = 256)]
    concurrency: Option<u32>,
    /// Object store: bytes in one object, at least one part (default 1G).
    object_size: Option<ByteSize>,
    /// Dedup store: the content-defined chunker's average chunk, 1K to 1M (default 64K).
    avg_chunk: Option<ByteSize>,
}

impl PartialSchema for TargetSpec {
    fn schema() -> RefOr<Schema> {
        TargetFields::schema()
    }
}

impl ToSchema for TargetSpec {
    fn name() -> Cow<'static, str> {
        TargetFields::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        TargetFields::schemas(schemas);
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

pub(crate) fn tape_model_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(or_null(Type::String))
        .pattern(Some(tape_model_pattern()))
        .examples(["lto-4", "lto-9"])
        .description(Some(
            "Emulated tape: lto-3 … lto-9, or ultrium-960 (any case)",
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
