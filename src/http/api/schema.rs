//! The campaign spec as the OpenAPI document describes it: mirrors of the types in
//! `crate::spec`, with the limits `CampaignSpec::plan` checks, so that what a client or a
//! fuzzer generates from the document is a meaningful request. The mirrors are never built;
//! the tests below keep their fields, required fields and closed objects in step with the
//! spec's serde definitions.

// The mirrors only describe; nothing constructs or reads them.
#![allow(dead_code)]

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::{PartialSchema, ToSchema};

use crate::spec::{MAX_CLIENTS, MAX_CONNECTIONS, MAX_RUNS, TestKind};

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
const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/// A campaign: what is backed up, where to, which tests, with which parameters, and an
/// optional matrix of parameter values whose every combination runs.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(
    as = CampaignSpec,
    example = json!({
        "name": "nightly",
        "source": {"generated": {"size": "8M", "compress_ratio": 2.0}},
        "target": {"kind": "null"},
        "params": {"buffers": 16, "block_size": "1M", "duration_s": 1}
    })
)]
pub struct CampaignSpecSchema {
    /// A name to recognise the campaign by.
    #[serde(default)]
    #[schema(max_length = 200)]
    name: String,
    source: SourceSchema,
    target: TargetSchema,
    /// The tests to run; by default the five local tests of the bottleneck method.
    #[serde(default)]
    #[schema(schema_with = tests_schema)]
    tests: Vec<String>,
    #[serde(default)]
    params: ParamsSchema,
    matrix: Option<MatrixSchema>,
    /// How many times each run is repeated.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 100, default = 1)]
    repeat: u32,
    /// The lab host that runs the campaign, one of `GET /api/hosts` that is alive; by default
    /// the one receiving it (and then written into the stored spec).
    // The pattern is NAME_PATTERN, spelled out: the attribute takes a literal.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    host: Option<String>,
    /// The series the campaign's figures join (`/api/series/{series}`): campaigns naming the
    /// same one are watched as one history even when their specs differ. By default campaigns
    /// of the same spec, name aside, form a series of their own, keyed `spec-…`, a prefix a
    /// named series may not take.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    series: Option<String>,
}

/// What is backed up: `paths` (each one a file system) or `generated` data, not both; for a
/// network backup, `agents` read it on their own hosts (alone, they send generated data of
/// `params.size`).
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SourceSpec)]
pub struct SourceSchema {
    /// Directories or files, under the lab's `--allow-source` roots.
    #[schema(schema_with = paths_schema)]
    paths: Option<Vec<String>>,
    generated: Option<GeneratedSchema>,
    /// Registered agents that send the network backup (see `GET /api/agents`).
    #[schema(schema_with = agents_schema)]
    agents: Option<Vec<String>>,
}

/// Data produced at memory speed: a size and how well it compresses.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GeneratedSpec)]
pub struct GeneratedSchema {
    /// Greater than 0.
    size: Size,
    /// 1.0 is incompressible.
    #[serde(default)]
    #[schema(minimum = 1.0, maximum = 100.0, default = 2.0)]
    compress_ratio: f64,
    /// Units made ÷ distinct units (3.0: one unit in three is new); left out, nothing repeats.
    #[schema(minimum = 1.0, maximum = 100.0)]
    dedup_ratio: Option<f64>,
    /// The unit that repeats whole: a multiple of 4K, at most 64M (default 128K); needs
    /// `dedup_ratio`.
    dedup_unit: Option<Size>,
    /// Full backups of the dataset, one after another (1 to 30): the target tests
    /// (`tape_write`, `full_backup`) run once per generation, each generation the one before
    /// with `change_rate` of its distinct units changed.
    #[schema(minimum = 1, maximum = 30)]
    generations: Option<u32>,
    /// The share of distinct units each generation after the first changes (default 0.05);
    /// needs `generations` of 2 or more.
    #[schema(minimum = 0.0, maximum = 1.0)]
    change_rate: Option<f64>,
}

/// Where the data goes. `path` is required with `dir`, `device` and `dedup` and not used
/// otherwise; the drive settings belong to `tape` only, the disk and controller settings to
/// `striped` only, the store, prefix and part settings to `s3` only, the average chunk to
/// `dedup` only.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TargetSpec)]
pub struct TargetSchema {
    kind: TargetKindSchema,
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
    capacity: Option<Size>,
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
    track: Option<Size>,
    /// Emulated striped volume: bytes on one disk before the next, whole tracks (default one).
    stripe_unit: Option<Size>,
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
    part_size: Option<Size>,
    /// Object store: parts each stream keeps in flight (default 8).
    #[schema(minimum = 1, maximum = 256)]
    concurrency: Option<u32>,
    /// Object store: bytes in one object, at least one part (default 1G).
    object_size: Option<Size>,
    /// Dedup store: the content-defined chunker's average chunk, 1K to 1M (default 64K).
    avg_chunk: Option<Size>,
}

/// The kinds of target: files under a directory, a discard sink, a raw device, emulated LTO,
/// an emulated striped volume, an object store's bucket, a dedup store under a directory.
#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = TargetKind)]
pub enum TargetKindSchema {
    Dir,
    Null,
    Device,
    Tape,
    Striped,
    S3,
    Dedup,
}

/// Parameters; every one has a default. `buffers` × `block_size` is at most 4G.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ParamsSpec)]
pub struct ParamsSchema {
    /// Blocks in the ring between readers and writers.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1024, default = 32)]
    buffers: u32,
    /// 512 bytes to 64M; a multiple of 4096 when `direct` is true.
    #[serde(default)]
    #[schema(default = "256K")]
    block_size: Size,
    /// Parallel streams (per client, for a network backup); by default one per source path,
    /// at least 4 (2 per client for a network backup).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 256)]
    streams: Option<u32>,
    /// Read and write with O_DIRECT.
    #[serde(default)]
    #[schema(default = false)]
    direct: bool,
    /// Drop the source from the page cache before each run.
    #[serde(default)]
    #[schema(default = true)]
    cold_cache: bool,
    /// Make the target durable before a run's clock stops.
    #[serde(default)]
    #[schema(default = true)]
    fsync: bool,
    /// How well the target test's generated data compresses; 1.0 is incompressible. Left
    /// out, the target test writes data as compressible as the source's (2.0 for a generated
    /// source).
    #[serde(default)]
    #[schema(minimum = 1.0, maximum = 100.0)]
    compress_ratio: Option<f64>,
    /// Bytes each run moves at most (within the lab's `--max-size`); greater than 0.
    #[serde(default)]
    size: Option<Size>,
    /// Seconds each run lasts at most (within the lab's `--max-duration`), or `"auto"`: the
    /// run is time-based and ends once its throughput is steady, after at least 6 s and at
    /// most 60 s. Left out: `"auto"` for a source of paths or agents without `size`; a 60 s
    /// cap for a run whose data sets its length (`size`, or generated data).
    #[serde(default)]
    duration_s: Option<Duration>,
    /// Run for the whole duration, reading a small source again until it is up; otherwise
    /// the duration is a cap and a run ends with its data. Left out: on for a source of paths
    /// or agents without `size`, off otherwise.
    #[serde(default)]
    time_based: Option<bool>,
    /// What-if: each stream reads at most this fast (MB/s).
    #[serde(default)]
    #[schema(minimum = 0.1, maximum = 1_000_000.0)]
    source_rate_mb_s: Option<f64>,
    /// Network backup: clients sending at once; clients × streams is at most 256.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 64)]
    clients: Option<u32>,
    /// Network backup what-if: each client's link carries at most this much (MB/s).
    #[serde(default)]
    #[schema(minimum = 0.1, maximum = 1_000_000.0)]
    link_mb_s: Option<f64>,
}

/// Lists of parameter values; the campaign runs every combination (at most 1000 runs with
/// the tests and repeats).
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MatrixSpec)]
pub struct MatrixSchema {
    #[schema(schema_with = matrix_buffers_schema)]
    buffers: Option<Vec<u32>>,
    #[schema(schema_with = matrix_block_size_schema)]
    block_size: Option<Vec<Size>>,
    #[schema(schema_with = matrix_streams_schema)]
    streams: Option<Vec<u32>>,
    /// Network backup only: client counts to sweep.
    #[schema(schema_with = matrix_clients_schema)]
    clients: Option<Vec<u32>>,
    /// Object-store target only: part sizes to sweep.
    #[schema(schema_with = matrix_part_size_schema)]
    part_size: Option<Vec<Size>>,
    /// Object-store target only: parts in flight per stream to sweep.
    #[schema(schema_with = matrix_concurrency_schema)]
    concurrency: Option<Vec<u32>>,
    /// How the combinations are explored: all of them, or an adaptive search.
    search: Option<SearchSchema>,
}

/// How a matrix is explored: `full` runs every point `repeat` times; `adaptive` runs the
/// points that decide which is best (a coordinate search from a seeded start), repeats the
/// leaders up to `repeat` times until the best stands out of their noise by the rule
/// `/compare` uses, and stops then, when none can, or when its budget is spent.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SearchSpec)]
pub struct SearchSchema {
    strategy: Option<SearchStrategySchema>,
    /// Most runs the search may queue; 40 % of the full sweep's when not given.
    #[schema(minimum = 1)]
    budget_runs: Option<u32>,
    /// Where the search starts; 0 when not given.
    seed: Option<u64>,
}

/// `full` (the default) or `adaptive`.
#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = SearchStrategy)]
pub enum SearchStrategySchema {
    Full,
    Adaptive,
}

/// A new schedule: a campaign spec and the times to queue it.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewSchedule)]
pub struct NewScheduleSchema {
    /// A name to recognise it by; unnamed, it goes by its spec's name, else by its pattern.
    #[schema(max_length = 200)]
    name: Option<String>,
    #[schema(schema_with = cron_schema)]
    cron: String,
    /// The campaign queued at each occurrence, checked as a campaign's is (its paths against
    /// the lab's roots, its durations against the lab's limits).
    spec: CampaignSpecSchema,
    /// Kept without firing until resumed.
    #[serde(default)]
    #[schema(default = false)]
    paused: bool,
}

/// A change to a schedule: any of its name, pattern, spec and pause (`null` or left out:
/// unchanged).
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ScheduleChange)]
pub struct ScheduleChangeSchema {
    #[schema(max_length = 200)]
    name: Option<String>,
    #[schema(schema_with = cron_change_schema)]
    cron: Option<String>,
    spec: Option<CampaignSpecSchema>,
    paused: Option<bool>,
}

/// A cron pattern as `schedule::Pattern` reads it: five fields (minute, hour, day of month,
/// month, day of week), each `*`, a value, a range or a list of them, with an optional step;
/// months and days may be named (`JAN`, `MON`). UTC. A pattern that never occurs (`0 0 31 2
/// *`) is refused too, which no pattern can say.
pub fn cron_pattern() -> String {
    fn field(value: &str) -> String {
        let item = format!("(?:\\*|(?:{value})(?:-(?:{value}))?)(?:/0*[1-9][0-9]{{0,2}})?");
        format!("{item}(?:,{item})*")
    }
    let minute = "0?[0-9]|[1-5][0-9]";
    let hour = "0?[0-9]|1[0-9]|2[0-3]";
    let day = "0?[1-9]|[12][0-9]|3[01]";
    let month = "0?[1-9]|1[0-2]|[Jj][Aa][Nn]|[Ff][Ee][Bb]|[Mm][Aa][Rr]|[Aa][Pp][Rr]|[Mm][Aa][Yy]|\
                 [Jj][Uu][Nn]|[Jj][Uu][Ll]|[Aa][Uu][Gg]|[Ss][Ee][Pp]|[Oo][Cc][Tt]|[Nn][Oo][Vv]|\
                 [Dd][Ee][Cc]";
    let weekday = "[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|\
                   [Ff][Rr][Ii]|[Ss][Aa][Tt]";
    let fields: Vec<String> = [minute, hour, day, month, weekday]
        .into_iter()
        .map(field)
        .collect();
    format!("^[ \\t]*{}[ \\t]*$", fields.join("[ \\t]+"))
}

fn cron_string() -> ObjectBuilder {
    ObjectBuilder::new()
        .min_length(Some(9))
        .max_length(Some(crate::lab::MAX_CRON_CHARS))
        .pattern(Some(cron_pattern()))
        .description(Some(
            "Five fields in UTC: minute hour day-of-month month day-of-week, e.g. `0 2 * * *` \
             for every night at 02:00; a pattern that never occurs is refused",
        ))
}

fn cron_schema() -> ObjectBuilder {
    cron_string().schema_type(Type::String)
}

fn cron_change_schema() -> ObjectBuilder {
    cron_string().schema_type(or_null(Type::String))
}

/// A tool's result to keep beside a campaign's figures: fio's `--output-format=json` with a
/// job that read or wrote at a rate from a byte per second to 10 TB/s, or iperf3's `-J` with
/// a received rate in that range.
pub struct ReferenceImport;

impl PartialSchema for ReferenceImport {
    fn schema() -> RefOr<Schema> {
        let import = |tool: &str, result: ObjectBuilder| {
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(
                    "tool",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some([tool])),
                )
                .property("result", result)
                .required("tool")
                .required("result")
                .additional_properties(Some(
                    utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
                ))
        };
        let number = |minimum: f64, maximum: f64| {
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .exclusive_minimum(Some(0.0))
                .minimum(Some(minimum))
                .maximum(Some(maximum))
        };
        let fio = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "fio version",
                ObjectBuilder::new().schema_type(Type::String),
            )
            .property(
                "jobs",
                ArrayBuilder::new().min_items(Some(1)).items(
                    ObjectBuilder::new()
                        .schema_type(Type::Object)
                        .description(Some(
                            "A job; at least one has `read.bw_bytes` or `write.bw_bytes` from 1 \
                         to 1e13 bytes per second",
                        )),
                ),
            )
            .required("fio version")
            .required("jobs");
        let iperf3 = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "end",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .property(
                        "sum_received",
                        ObjectBuilder::new()
                            .schema_type(Type::Object)
                            .property("bits_per_second", number(8.0, 8e13))
                            .required("bits_per_second"),
                    )
                    .required("sum_received"),
            )
            .required("end");
        OneOfBuilder::new()
            .item(import("fio", fio))
            .item(import("iperf3", iperf3))
            .description(Some(
                "`{\"tool\": \"fio\", \"result\": <fio --output-format=json>}` or \
                 `{\"tool\": \"iperf3\", \"result\": <iperf3 -J>}`",
            ))
            .into()
    }
}

impl ToSchema for ReferenceImport {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ReferenceImport")
    }
}

/// A size: a byte count, or digits with a binary unit (`64K`, `1M`, `2GiB`, `1T`).
pub struct Size;

impl PartialSchema for Size {
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

impl ToSchema for Size {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Size")
    }
}

/// A run's duration: seconds, or `"auto"` (until steady, at most 60 s).
pub struct Duration;

impl PartialSchema for Duration {
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

impl ToSchema for Duration {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Duration")
    }
}

/// `type: [kind, "null"]`: an optional field the spec also accepts as `null`.
fn or_null(kind: Type) -> SchemaType {
    SchemaType::from_iter([kind, Type::Null])
}

fn tests_schema() -> ArrayBuilder {
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

fn paths_schema() -> ArrayBuilder {
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

fn agents_schema() -> ArrayBuilder {
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

fn tape_model_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(or_null(Type::String))
        .pattern(Some(tape_model_pattern()))
        .examples(["lto-4", "lto-9"])
        .description(Some(
            "Emulated tape: lto-3 … lto-9, or ultrium-960 (any case)",
        ))
}

fn int_list(most: u32, description: &str) -> ArrayBuilder {
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

fn matrix_buffers_schema() -> ArrayBuilder {
    int_list(1024, "Ring sizes to sweep")
}

fn matrix_streams_schema() -> ArrayBuilder {
    int_list(256, "Stream counts to sweep")
}

fn matrix_clients_schema() -> ArrayBuilder {
    int_list(
        MAX_CONNECTIONS.min(MAX_CLIENTS),
        "Network backup only: client counts to sweep",
    )
}

fn matrix_concurrency_schema() -> ArrayBuilder {
    int_list(
        256,
        "Object-store target only: parts in flight per stream to sweep",
    )
}

fn matrix_block_size_schema() -> ArrayBuilder {
    size_list("Block sizes to sweep")
}

fn matrix_part_size_schema() -> ArrayBuilder {
    size_list("Object-store target only: part sizes to sweep")
}

fn size_list(description: &str) -> ArrayBuilder {
    ArrayBuilder::new()
        .schema_type(or_null(Type::Array))
        .items(Size::schema())
        .min_items(Some(1))
        .max_items(Some(MAX_RUNS as usize))
        .description(Some(description))
}

/// One event of a campaign's stream (`text/event-stream`): its name and its data.
#[derive(ToSchema)]
#[schema(as = CampaignEvent)]
pub struct EventSchema {
    /// `state`, `run_started`, `progress`, `run_finished` or `campaign_finished`.
    event: String,
    /// The event as JSON; its `type` repeats the name.
    data: String,
}

/// What `POST /api/campaigns` and rerun answer.
#[derive(ToSchema)]
#[schema(as = Submitted)]
pub struct SubmittedSchema {
    /// The campaign's id.
    id: String,
    /// The campaign's page.
    url: String,
    /// Runs queued.
    runs: usize,
    /// Seconds the campaign is likely to take, run after run (an adaptive search: its
    /// `likely_runs`).
    expected_s: f64,
    /// Whether some runs end with their data at a rate not known before they run: then
    /// `expected_s` is the longest they may take.
    at_most: bool,
    /// The longest it may take: every run that ends once steady running to its cap (an
    /// adaptive search: every run of its budget).
    longest_s: f64,
    /// An adaptive search only: the runs it likely takes before a point stands out.
    likely_runs: Option<usize>,
    /// An adaptive search only: the most runs its budget allows.
    budget_runs: Option<usize>,
    /// Values of the spec that cannot give a valid run, each with what it needs.
    warnings: Vec<PlanWarningSchema>,
}

/// A value a spec gave that cannot give a valid run.
#[derive(ToSchema)]
#[schema(as = PlanWarning)]
#[allow(dead_code)]
pub struct PlanWarningSchema {
    /// The field to change.
    field: String,
    /// Why, and the minimum it needs.
    message: String,
}

/// What a dry run answers: the runs as they would execute, how long they would take, and
/// what in the spec cannot give a valid run.
#[derive(ToSchema)]
#[schema(as = Planned)]
#[allow(dead_code)]
pub struct PlannedSchema {
    /// Runs it would queue.
    runs: usize,
    expected_s: f64,
    at_most: bool,
    longest_s: f64,
    likely_runs: Option<usize>,
    budget_runs: Option<usize>,
    warnings: Vec<PlanWarningSchema>,
    /// Each run: its test, its parameters and its expected length.
    plan: Vec<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::engine::target::dedup::DedupSettings;
    use crate::engine::target::s3::S3Settings;
    use crate::engine::target::striped::StripedSettings;
    use crate::engine::target::tape::TapeSettings;
    use crate::spec;
    use crate::spec::field_names::names_of;

    fn document() -> Value {
        let (_, api) = super::super::router().split_for_parts();
        serde_json::to_value(&api).expect("the document serializes")
    }

    fn component<'a>(document: &'a Value, name: &str) -> &'a Value {
        &document["components"]["schemas"][name]
    }

    fn property_names(schema: &Value) -> Vec<String> {
        let mut names: Vec<String> = schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("no properties in {schema}"))
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// A spec with every field given, each struct's part valid on its own.
    fn everything() -> Value {
        json!({
            "name": "all",
            "source": {"paths": ["/a"], "generated": {"size": "1M", "compress_ratio": 2.0,
                                         "dedup_ratio": 3.0, "dedup_unit": "128K",
                                         "generations": 5, "change_rate": 0.05},
                       "agents": ["a1"]},
            "target": {"kind": "tape", "path": "/t", "model": "lto-4", "drives": 1,
                       "native_mb_s": 120.0, "min_mb_s": 40.0, "buffer_mb": 128.0,
                       "reposition_s": 2.0, "max_compression": 2.0, "capacity": "1G",
                       "load_s": 10.0, "locate_s": 30.0},
            "tests": ["null_sink"],
            "params": {"buffers": 8, "block_size": "64K", "streams": 2, "direct": false,
                       "cold_cache": false, "fsync": false, "compress_ratio": 2.0,
                       "size": 1024, "duration_s": 1.0, "source_rate_mb_s": 10.0,
                       "clients": 1, "link_mb_s": 10.0},
            "matrix": {"buffers": [1], "block_size": ["4K"], "streams": [1], "clients": [1],
                       "part_size": ["16M"], "concurrency": [8],
                       "search": {"strategy": "full", "budget_runs": 10, "seed": 1}},
            "repeat": 1
        })
    }

    /// Each mirrored struct: its component name, how to parse a value as the real type, and
    /// where its full example sits in `everything()`.
    type Parse = fn(Value) -> Result<(), String>;

    fn parse<T: for<'de> Deserialize<'de>>(value: Value) -> Result<(), String> {
        serde_json::from_value::<T>(value)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// A target parses when its kind has every setting given: the spec keeps a kind's
    /// settings open until the kind reads them.
    fn parse_target(value: Value) -> Result<(), String> {
        let target: spec::TargetSpec = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let known = match target.kind {
            spec::TargetKind::Tape => names_of::<TapeSettings>(),
            spec::TargetKind::Striped => names_of::<StripedSettings>(),
            spec::TargetKind::S3 => names_of::<S3Settings>(),
            spec::TargetKind::Dedup => names_of::<DedupSettings>(),
            _ => Vec::new(),
        };
        match target.settings.keys().find(|name| !known.contains(name)) {
            Some(name) => Err(format!("{name} is not a setting of {}", target.kind.id())),
            None => Ok(()),
        }
    }

    fn target_names() -> Vec<String> {
        let mut names = vec!["kind".to_string(), "path".to_string()];
        names.extend(names_of::<TapeSettings>());
        names.extend(names_of::<StripedSettings>());
        names.extend(names_of::<S3Settings>());
        names.extend(names_of::<DedupSettings>());
        names.sort();
        names
    }

    #[test]
    fn a_striped_target_with_every_setting_parses() {
        let target = json!({"kind": "striped", "disks": 10, "disk_mb_s": 5.0, "track": "64K",
            "stripe_unit": "128K", "controllers": 3, "controller_mb_s": 20.0,
            "rotational_delay_ms": 13.1});
        parse_target(target).expect("every striped setting");
    }

    #[test]
    fn an_object_store_target_with_every_setting_parses() {
        let target = json!({"kind": "s3", "store": "lab", "prefix": "backlab/",
            "part_size": "16M", "concurrency": 8, "object_size": "1G"});
        parse_target(target).expect("every s3 setting");
    }

    fn structs() -> Vec<(&'static str, Vec<String>, Parse, &'static str)> {
        vec![
            (
                "CampaignSpec",
                names_of::<spec::CampaignSpec>(),
                parse::<spec::CampaignSpec>,
                "",
            ),
            (
                "SourceSpec",
                names_of::<spec::SourceSpec>(),
                parse::<spec::SourceSpec>,
                "/source",
            ),
            (
                "GeneratedSpec",
                names_of::<spec::GeneratedSpec>(),
                parse::<spec::GeneratedSpec>,
                "/source/generated",
            ),
            ("TargetSpec", target_names(), parse_target, "/target"),
            (
                "ParamsSpec",
                names_of::<spec::ParamsSpec>(),
                parse::<spec::ParamsSpec>,
                "/params",
            ),
            (
                "MatrixSpec",
                names_of::<spec::MatrixSpec>(),
                parse::<spec::MatrixSpec>,
                "/matrix",
            ),
            (
                "SearchSpec",
                names_of::<spec::SearchSpec>(),
                parse::<spec::SearchSpec>,
                "/matrix/search",
            ),
        ]
    }

    #[test]
    fn the_document_says_what_it_describes() {
        let document = document();
        assert_eq!(document["info"]["title"], "backlab");
        assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(
            document["info"]["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty())
        );
        let body = &document["paths"]["/api/campaigns"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert_eq!(body["$ref"], "#/components/schemas/CampaignSpec", "{body}");
        // The example is a campaign the lab accepts.
        let example = component(&document, "CampaignSpec")["example"].to_string();
        let spec = spec::parse_json(&example).expect("the example parses");
        assert!(spec.plan().is_ok(), "{example}");
    }

    #[test]
    fn the_mirrors_have_the_fields_the_spec_accepts() {
        let document = document();
        let everything = everything();
        for (name, fields, parse, at) in structs() {
            let schema = component(&document, name);
            assert!(!fields.is_empty(), "{name}: no fields recorded");
            assert_eq!(property_names(schema), fields, "{name}: properties");

            // Exactly the required fields: with only them the real type parses; without any
            // one of them it does not.
            let full = everything.pointer(at).expect("example part").clone();
            parse(full.clone()).unwrap_or_else(|e| panic!("{name}: the full example: {e}"));
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|list| list.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let only_required: serde_json::Map<String, Value> = full
                .as_object()
                .expect("object")
                .iter()
                .filter(|(key, _)| required.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            parse(Value::Object(only_required.clone()))
                .unwrap_or_else(|e| panic!("{name}: only {required:?} given: {e}"));
            for field in &required {
                let mut without = only_required.clone();
                without.remove(*field);
                assert!(
                    parse(Value::Object(without)).is_err(),
                    "{name}: {field} is not required by the spec"
                );
            }

            // Closed objects exactly where the spec denies unknown fields.
            let mut extra = full.clone();
            extra["surplus"] = json!(1);
            let closed = parse(extra).is_err();
            assert_eq!(
                schema["additionalProperties"] == json!(false),
                closed,
                "{name}: additionalProperties"
            );
        }
    }

    #[test]
    fn the_enums_list_what_the_spec_knows() {
        let document = document();
        let kinds: Vec<String> = component(&document, "TargetKind")["enum"]
            .as_array()
            .expect("target kinds")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let mut sorted = kinds.clone();
        sorted.sort();
        assert_eq!(sorted, names_of::<spec::TargetKind>());

        let tests = &component(&document, "CampaignSpec")["properties"]["tests"];
        let listed: Vec<&str> = tests["items"]["enum"]
            .as_array()
            .expect("test ids")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let known: Vec<&str> = TestKind::ALL.iter().map(|t| t.id()).collect();
        assert_eq!(listed, known);
    }

    #[test]
    fn the_size_pattern_accepts_what_the_spec_parses() {
        let pattern = regex::Regex::new(&size_pattern()).expect("a valid pattern");
        let cases = [
            "0", "65536", "64K", "64k", "64KB", "64KiB", "64kib", "1M", "2G", "1T", "1 G", " 3M ",
            "\t7b", "8B", "5\u{a0}K", "2X", "K", "", "1.5M", "-1", "1 K B", "1MiBs", "١٢",
            "12 KIB",
        ];
        for case in cases {
            assert_eq!(
                pattern.is_match(case),
                spec::parse_size(case).is_ok(),
                "{case:?}"
            );
        }
    }

    #[test]
    fn the_tape_model_pattern_accepts_what_the_spec_knows() {
        let pattern = regex::Regex::new(&tape_model_pattern()).expect("a valid pattern");
        for case in [
            "lto-3",
            "LTO-9",
            " Lto-5 ",
            "ultrium-960",
            "lto-2",
            "lto-10",
            "lto3",
            "",
        ] {
            assert_eq!(
                pattern.is_match(case),
                spec::tape_model(case).is_some(),
                "{case:?}"
            );
        }
    }
}
