//! The campaign spec: what a user submits (here), the rules every field is checked against
//! (`validate`), and its expansion into the runs the engine executes (`expand`). The run
//! plan, the tests and the drive models are the engine's (`engine::plan`, `engine::test_kind`,
//! `engine::target::tape`), sizes and field errors are shared (`crate::size`, `crate::field_errors`);
//! they are re-exported here, where a campaign is put together.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub mod bounds;
mod expand;
pub mod expectation;
#[cfg(test)]
pub(crate) mod field_names;
pub mod forecast;
pub mod schema;
mod strict;
pub mod tools;

mod validate;

#[cfg(test)]
mod tests;

pub use crate::engine::plan::*;
pub use crate::engine::target::dedup::DedupConfig;
pub use crate::engine::target::s3::{self, S3Config};
pub use crate::engine::target::tape::catalogue::*;
pub use crate::engine::target::{Settings as TargetSettings, TargetKind};
pub use crate::engine::test_kind::*;
pub use crate::engine::tool::ToolRun;
pub use crate::field_errors::*;
pub use crate::size::*;
pub use validate::{SPEC_SERIES_PREFIX, check_name, check_series_name};

use expand::*;
pub use expand::{Arm, SearchPlan, SweepPlan};
use validate::*;

/// Largest ring the lab allocates: buffers × block size.
pub const MAX_RING_BYTES: u64 = 4 << 30;
/// Most runs one campaign may expand to.
pub const MAX_RUNS: u64 = 1000;
/// Alignment O_DIRECT needs for buffers, offsets and lengths.
pub const DIRECT_ALIGN: u64 = 4096;
/// Most clients one network run may have.
pub const MAX_CLIENTS: u32 = 64;
/// Most TCP connections (clients × streams) one network run may have.
pub const MAX_CONNECTIONS: u32 = 256;
/// Most source paths one campaign may name (each is read by a stream of its own at most).
pub const MAX_SOURCE_PATHS: usize = 256;
/// Most values one matrix list may hold.
pub const MAX_MATRIX_VALUES: usize = 64;
/// Clients the lab starts on loopback when a campaign names neither agents nor a count.
pub const DEFAULT_CLIENTS: u32 = 2;
/// Streams per client of a network backup unless the campaign says (seed 000: two each).
pub const DEFAULT_CLIENT_STREAMS: u32 = 2;

/// A campaign: what is backed up, where to, which tests, with which parameters, and an
/// optional matrix of parameter values whose every combination runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "nightly",
    "source": {"generated": {"size": "8M", "compress_ratio": 2.0}},
    "target": {"kind": "null"},
    "params": {"buffers": 16, "block_size": "1M", "duration_s": 1}
}))]
pub struct CampaignSpec {
    /// A name to recognise the campaign by.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub name: String,
    pub source: SourceSpec,
    pub target: TargetSpec,
    /// The tests to run; by default the five local tests of the bottleneck method.
    #[serde(default = "bottleneck_test_names")]
    #[schema(schema_with = schema::tests_schema)]
    pub tests: Vec<String>,
    #[serde(default)]
    pub params: ParamsSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<MatrixSpec>,
    /// How many times each run is repeated.
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 100, default = 1)]
    pub repeat: u32,
    /// The lab host that runs the campaign, one of `GET /api/hosts` that is alive; by default
    /// the one receiving it (and then written into the stored spec).
    // The pattern is schema::NAME_PATTERN, spelled out: the attribute takes a literal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    pub host: Option<String>,
    /// The series the campaign's figures join (`/api/series/{series}`): campaigns naming the
    /// same one are watched as one history even when their specs differ. By default campaigns
    /// of the same spec, name aside, form a series of their own, keyed `spec-…`, a prefix a
    /// named series may not take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    pub series: Option<String>,
    /// The backup tool the tool tests run, one of this lab's (`GET /api/tools`), and its
    /// parameters. A campaign with a tool and no `tests` runs the tool's table: the target's
    /// and the source's ceilings, and the tool alone, backing up, incremental and restoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRun>,
    /// A backup's life (`tool_life`): its nights, the tool's retention and checks, and what
    /// each night changes. A campaign with `life` and no `tests` runs the life alone; one
    /// with `tool_life` in its tests and no `life` runs the defaults (30 nights, retention
    /// every 7 keeping 7, checks after the last, 2 % of bytes edited a night).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub life: Option<crate::engine::tool::LifePlan>,
    /// A forecast of the life to the user's size: the life runs on a ladder of generated
    /// trees of the user's shape (each double the last) instead of the source, and each
    /// figure is fitted against its size and answered at the user's, with its range and basis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<forecast::ForecastSpec>,
}

/// What is backed up: `paths` (each one a file system) or `generated` data, not both; for a
/// network backup, `agents` read it on their own hosts (alone, they send generated data of
/// `params.size`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Directories or files, under the lab's `--allow-source` roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::paths_schema)]
    pub paths: Option<Vec<PathBuf>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<GeneratedSpec>,
    /// Agents that send the network backup, each reading `paths` (on its own host) or
    /// generated data. Without agents the lab starts its own clients on loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::agents_schema)]
    pub agents: Option<Vec<String>>,
}

/// Data produced at memory speed: a size, how well it compresses and, when given, how much
/// it repeats itself (vdbench's `dedupratio` and `dedupunit`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GeneratedSpec {
    /// Greater than 0.
    pub size: ByteSize,
    /// 1.0 is incompressible.
    #[serde(default = "default_compress_ratio")]
    #[schema(minimum = 1.0, maximum = 100.0, default = 2.0)]
    pub compress_ratio: f64,
    /// Units made ÷ distinct units (3.0: one unit in three is new); left out, nothing repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1.0, maximum = 100.0)]
    pub dedup_ratio: Option<f64>,
    /// The unit that repeats whole: a multiple of 4K, at most 64M (default 128K); needs
    /// `dedup_ratio`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_unit: Option<ByteSize>,
    /// Full backups of the dataset, one after another (1 to 30): the target tests
    /// (`tape_write`, `full_backup`) run once per generation, each generation the one before
    /// with `change_rate` of its distinct units changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 30)]
    pub generations: Option<u32>,
    /// The share of distinct units each generation after the first changes (default 0.05);
    /// needs `generations` of 2 or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub change_rate: Option<f64>,
}

impl GeneratedSpec {
    /// Generated data of a size, every other figure its default.
    pub fn of_size(size: ByteSize) -> Self {
        Self {
            size,
            compress_ratio: default_compress_ratio(),
            dedup_ratio: None,
            dedup_unit: None,
            generations: None,
            change_rate: None,
        }
    }
}

/// Where the data goes: a kind, the path it writes when it writes one, and the kind's own
/// settings (a tape's model and drives, a striped volume's disks), which the kind reads and
/// checks (`engine::target`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetSpec {
    pub kind: TargetKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    #[serde(flatten)]
    pub settings: TargetSettings,
}

impl TargetSpec {
    /// A target of one kind at an optional path, with no settings.
    pub fn new(kind: TargetKind, path: Option<PathBuf>) -> Self {
        Self {
            kind,
            path,
            settings: TargetSettings::new(),
        }
    }

    /// The same target with one setting given.
    pub fn with(mut self, name: &str, value: impl Into<serde_json::Value>) -> Self {
        self.settings.insert(name.to_string(), value.into());
        self
    }

    /// The target as the engine runs it, or `None` with every problem in `errors`.
    pub fn plan(&self, errors: &mut FieldErrors) -> Option<TargetPlan> {
        self.kind.plan(self.path.as_deref(), &self.settings, errors)
    }

    /// The target in a few words, as its kind names it: `2 × emulated LTO-4`.
    pub fn words(&self) -> String {
        self.plan(&mut FieldErrors::default())
            .map_or_else(|| self.kind.id().to_string(), |plan| plan.target().words())
    }
}

/// Parameters; every one has a default. `buffers` × `block_size` is at most 4G.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ParamsSpec {
    /// Blocks in the ring between readers and writers.
    #[schema(minimum = 1, maximum = 1024, default = 32)]
    pub buffers: u32,
    /// 512 bytes to 64M; a multiple of 4096 when `direct` is true.
    #[schema(default = "256K")]
    pub block_size: ByteSize,
    /// Parallel streams (per client, for a network backup); by default one per source path,
    /// at least 4 (2 per client for a network backup).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 256)]
    pub streams: Option<u32>,
    /// Read and write with O_DIRECT.
    #[schema(default = false)]
    pub direct: bool,
    /// Drop the source from the page cache before each run.
    #[schema(default = true)]
    pub cold_cache: bool,
    /// Make the target durable before a run's clock stops.
    #[schema(default = true)]
    pub fsync: bool,
    /// How well the target test's generated data compresses; 1.0 is incompressible. Left
    /// out, the target test writes data as compressible as the source's (2.0 for a generated
    /// source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1.0, maximum = 100.0)]
    pub compress_ratio: Option<f64>,
    /// Bytes each run moves at most (within the lab's `--max-size`); greater than 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<ByteSize>,
    /// Seconds each run lasts at most (within the lab's `--max-duration`), or `"auto"`: the
    /// run is time-based and ends once its throughput is steady, after at least 6 s and at
    /// most 60 s. Left out: `"auto"` for a source of paths or agents without `size`; a 60 s
    /// cap for a run whose data sets its length (`size`, or generated data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<DurationInput>,
    /// Run for the whole duration, reading a small source again until it is up (fio's
    /// `time_based`); otherwise the duration is a cap and the run ends with its data. Left out
    /// of a submitted spec, [`ParamsSpec::settle`] decides; left out of a spec stored before
    /// that, it is off, as it was when the spec was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_based: Option<bool>,
    /// What-if: each stream reads at most this fast (MB/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.1, maximum = 1_000_000.0)]
    pub source_rate_mb_s: Option<f64>,
    /// Network backup: clients sending at once; clients × streams is at most 256.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 64)]
    pub clients: Option<u32>,
    /// Network backup what-if: each client's link carries at most this much (MB/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.1, maximum = 1_000_000.0)]
    pub link_mb_s: Option<f64>,
}

impl Default for ParamsSpec {
    fn default() -> Self {
        Self {
            buffers: 32,
            block_size: ByteSize::parse("256K").expect("a size"),
            streams: None,
            direct: false,
            cold_cache: true,
            fsync: true,
            compress_ratio: None,
            size: None,
            duration_s: None,
            time_based: None,
            source_rate_mb_s: None,
            clients: None,
            link_mb_s: None,
        }
    }
}

/// Lists of parameter values; the campaign runs every combination (at most 1000 runs with
/// the tests and repeats).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::matrix_buffers_schema)]
    pub buffers: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::matrix_block_size_schema)]
    pub block_size: Option<Vec<ByteSize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::matrix_streams_schema)]
    pub streams: Option<Vec<u32>>,
    /// Network backup only: client counts to sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::matrix_clients_schema)]
    pub clients: Option<Vec<u32>>,
    /// Object-store target only: part sizes of its multipart uploads to sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::matrix_part_size_schema)]
    pub part_size: Option<Vec<ByteSize>>,
    /// Object-store target only: parts in flight per stream to sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = schema::matrix_concurrency_schema)]
    pub concurrency: Option<Vec<u32>>,
    /// Backup tools to compare on the same data: each tool test runs once per tool given
    /// (the other tests once), so one table sets them side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 8)]
    pub tool: Option<Vec<ToolRun>>,
    /// How the combinations are explored: all of them (the default), or a search that runs
    /// only those that decide which is best.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSpec>,
}

/// How a matrix is explored: `full` runs every point `repeat` times; `adaptive` runs the
/// points that decide which is best (a coordinate search from a seeded start), repeats the
/// leaders up to `repeat` times until the best stands out of their noise by the rule
/// `/compare` uses, and stops then, when none can, or when its budget is spent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSpec {
    #[serde(default)]
    pub strategy: SearchStrategy,
    /// Most runs the search may queue (all tests, repeats and generations counted); 40 % of
    /// the full sweep's, rounded down, when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub budget_runs: Option<u32>,
    /// Chooses where the search starts: searches of different seeds start at different
    /// points. 0 when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// `full` (the default): every point of the matrix, `repeat` times each; or `adaptive`: a
/// search over them.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchStrategy {
    #[default]
    Full,
    Adaptive,
}

/// The share of a full sweep's runs an adaptive search may spend unless its spec says.
pub const DEFAULT_SEARCH_SHARE: f64 = 0.4;

/// Most fields of the wrong type or form one reading of a spec names.
const MAX_TYPE_ERRORS: usize = 64;

/// Why a submitted spec's text cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The text is not JSON: nothing in it can be read as fields.
    #[error("{0}")]
    NotJson(FieldErrors),
    /// The text is JSON whose fields have bad values: every one is named.
    #[error("{0}")]
    Invalid(FieldErrors),
}

impl SpecError {
    /// Every problem, by field.
    pub fn fields(&self) -> &FieldErrors {
        match self {
            SpecError::NotJson(errors) | SpecError::Invalid(errors) => errors,
        }
    }
}

/// Parses a spec from JSON. Every field of the wrong type or form (a size that is not a size,
/// a count that is text, a kind that is not one) is named at its path, not only the first:
/// each is set aside in turn (a required one replaced by a stand-in) and the rest read again;
/// the rest is then checked by the rules, whose findings about fields set aside are left out,
/// so one answer names every mistake.
pub fn parse_json(text: &str) -> Result<CampaignSpec, SpecError> {
    let mut errors = FieldErrors::default();
    let mut value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            errors.add("spec", crate::plain_words::not_json(&error));
            return Err(SpecError::NotJson(errors));
        }
    };
    strict::duplicate_keys(text, &mut errors);
    let mut set_aside_paths = strict::sections_are_not_lists(&mut value, &mut errors);
    if value.is_array() {
        return Err(SpecError::Invalid(errors));
    }
    strict::whole_numbers_as_integers(&mut value);
    for _ in 0..MAX_TYPE_ERRORS {
        match serde_path_to_error::deserialize::<_, CampaignSpec>(&value) {
            Ok(spec) if errors.is_empty() => return Ok(spec),
            Ok(spec) => {
                if let Err(rules) = spec.plan() {
                    for (path, message) in rules.0 {
                        if !set_aside_paths.iter().any(|aside| related(&path, aside)) {
                            errors.add(path, message);
                        }
                    }
                }
                return Err(SpecError::Invalid(errors));
            }
            Err(error) => {
                let path = error.path().clone();
                let message = error.into_inner().to_string();
                let shown = path.to_string();
                let shown = if shown == "." {
                    "spec".to_string()
                } else {
                    shown
                };
                // A required field set aside for its own error is now missing: said already,
                // and a stand-in lets the rest be read.
                let missing = message
                    .strip_prefix("missing field `")
                    .and_then(|rest| rest.split('`').next())
                    .map(|field| match shown.as_str() {
                        "spec" => field.to_string(),
                        parent => format!("{parent}.{field}"),
                    });
                if let Some(field) = missing
                    && set_aside_paths.contains(&field)
                {
                    if stand_in(&mut value, &field) {
                        continue;
                    }
                    return Err(SpecError::Invalid(errors));
                }
                let range = bounds::whole_range_at(&shown).map(bounds::WholeRange::words);
                errors.add(
                    shown,
                    crate::plain_words::plain_words_expecting(&message, range.as_deref()),
                );
                if !set_aside(&mut value, &path) {
                    return Err(SpecError::Invalid(errors));
                }
                set_aside_paths.push(field_keys(&path).join("."));
            }
        }
    }
    Err(SpecError::Invalid(errors))
}

/// Whether a rule's finding at `path` is about a field set aside at `aside` (the field, what
/// it holds, or the section holding it), so the stand-in's findings are not reported. A
/// target's kind decides what every other target field means: a kind set aside sets aside
/// the target.
fn related(path: &str, aside: &str) -> bool {
    let aside = if aside == "target.kind" {
        "target"
    } else {
        aside
    };
    let within = |inner: &str, outer: &str| {
        inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    };
    within(path, aside) || within(aside, path)
}

/// Puts a stand-in where a required field was set aside, so the rest of the spec can be read
/// and checked; false for a field with none. A target's stand-in is of a kind that cannot be
/// planned without settings of its own, so no rule judges the rest against a target that was
/// not given.
fn stand_in(value: &mut serde_json::Value, field: &str) -> bool {
    let (keys, stand_in): (&[&str], serde_json::Value) = match field {
        "source" => (&["source"], serde_json::json!({})),
        "target" => (&["target"], serde_json::json!({"kind": "s3"})),
        "target.kind" => (&["target", "kind"], serde_json::json!("s3")),
        "source.generated.size" => (&["source", "generated", "size"], serde_json::json!(1)),
        _ => return false,
    };
    match parent_fields(value, keys) {
        Some((fields, last)) => {
            fields.insert(last.to_string(), stand_in);
            true
        }
        None => false,
    }
}

/// The object holding the field at `keys`, and that field's own key; `None` when a key on the
/// way is missing or the holder is not an object.
fn parent_fields<'v, 'k>(
    value: &'v mut serde_json::Value,
    keys: &[&'k str],
) -> Option<(&'v mut serde_json::Map<String, serde_json::Value>, &'k str)> {
    let (last, parents) = keys.split_last()?;
    let mut object = value;
    for key in parents {
        object = object.get_mut(*key)?;
    }
    Some((object.as_object_mut()?, last))
}

/// The keys down to the field an error at `path` is about: a list item's error is the list's.
fn field_keys(path: &serde_path_to_error::Path) -> Vec<&str> {
    use serde_path_to_error::Segment;
    path.iter()
        .map_while(|segment| match segment {
            Segment::Map { key } => Some(key.as_str()),
            _ => None,
        })
        .collect()
}

/// Removes the field a type error was found at (the whole list, for an item of one), so the
/// rest of the spec can be read; false when there is no such field to remove (the error is
/// about the spec as a whole, or a field that is missing).
fn set_aside(value: &mut serde_json::Value, path: &serde_path_to_error::Path) -> bool {
    parent_fields(value, &field_keys(path))
        .and_then(|(fields, last)| fields.remove(last))
        .is_some()
}

fn all_test_names() -> Vec<String> {
    TestKind::ALL
        .iter()
        .map(|test| test.id().to_string())
        .collect()
}

fn bottleneck_test_names() -> Vec<String> {
    TestKind::BOTTLENECK
        .iter()
        .map(|test| test.id().to_string())
        .collect()
}

fn one() -> u32 {
    1
}

fn default_compress_ratio() -> f64 {
    2.0
}

/// The slowest a source what-if may deliver, MB/s: below it a block takes minutes to arrive.
pub const MIN_SOURCE_RATE_MB_S: f64 = 0.1;
/// The slowest a client's link what-if may carry, MB/s.
pub const MIN_LINK_MB_S: f64 = 0.1;
/// The fastest a source or link what-if may be, MB/s: beyond it the cap caps nothing.
pub const MAX_RATE_MB_S: f64 = 1_000_000.0;

/// The cap on a run whose data sets its length (a size, or generated data) when the spec gives
/// no duration.
pub const DEFAULT_CAP_S: f64 = 60.0;

impl ParamsSpec {
    /// The defaults a new campaign gets, written into its spec before it is checked and
    /// stored, so that the API, the form and the CLI plan the same runs from the same spec and
    /// a stored spec says what it meant. A run whose length no size sets (a source of paths
    /// or agents, and no `size`) is time-based, a small source read again, and ends once its
    /// throughput is steady (`duration_s: "auto"`, between [`AUTO_MIN_DURATION_S`] and
    /// [`AUTO_MAX_DURATION_S`]); one with a size, or of generated data, ends with its data,
    /// capped at [`DEFAULT_CAP_S`]. What the spec gives explicitly is kept.
    pub fn settle(&mut self, source: &SourceSpec) {
        let sized = self.size.is_some() || source.generated.is_some();
        if self.duration_s.is_none() {
            self.duration_s = Some(if sized {
                DurationInput::Seconds(DEFAULT_CAP_S)
            } else {
                DurationInput::Auto(AutoWord::Auto)
            });
        }
        if self.time_based.is_none() {
            self.time_based = Some(!sized);
        }
    }
}

impl CampaignSpec {
    /// Writes the defaults of a new campaign into the spec ([`ParamsSpec::settle`]).
    /// A campaign that names a tool and leaves the tests at their default runs the tool's
    /// table instead ([`TestKind::TOOL_TABLE`]); one with a life or a forecast, the life alone.
    pub fn settle_defaults(&mut self) {
        // A forecast's lives run on the trees of its ladder: a spec that names no source gets
        // generated data of its first rung's size, which the ladder's own trees stand in for.
        if let Some(forecast) = &self.forecast
            && self.source == SourceSpec::default()
            && let Some(first) = forecast.ladder().first()
        {
            self.source.generated = Some(GeneratedSpec::of_size(ByteSize::new(first.bytes)));
        }
        self.params.settle(&self.source);
        if (self.life.is_some() || self.forecast.is_some()) && self.tests == bottleneck_test_names()
        {
            self.tests = vec![TestKind::ToolLife.id().to_string()];
        } else if self.names_a_tool() && self.tests == bottleneck_test_names() {
            self.tests = TestKind::TOOL_TABLE
                .iter()
                .map(|test| test.id().to_string())
                .collect();
        }
    }

    /// Whether the campaign names a backup tool, alone or in its matrix.
    pub fn names_a_tool(&self) -> bool {
        self.tool.is_some() || self.matrix.as_ref().is_some_and(|m| m.tool.is_some())
    }

    /// The tools the tool tests run: the matrix's list, else the one tool, else none.
    pub fn tools(&self) -> Vec<ToolRun> {
        match (
            self.matrix.as_ref().and_then(|m| m.tool.as_ref()),
            &self.tool,
        ) {
            (Some(list), _) => list.clone(),
            (None, Some(tool)) => vec![tool.clone()],
            (None, None) => Vec::new(),
        }
    }
}

/// The shortest a run with `duration_s: "auto"` lasts (longer when its target needs it:
/// `engine::expect`).
pub const AUTO_MIN_DURATION_S: f64 = crate::engine::expect::AUTO_MIN_S;

/// The longest a run with `duration_s: "auto"` lasts when it never becomes steady.
pub const AUTO_MAX_DURATION_S: f64 = 60.0;

/// A run's duration as a spec gives it: seconds, or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DurationInput {
    Seconds(f64),
    Auto(AutoWord),
}

/// The word `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AutoWord {
    #[serde(rename = "auto")]
    Auto,
}
