//! The campaign spec: what a user submits, how sizes are written, the defaults, and the
//! validation that names every bad field by its path.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Largest ring the lab allocates: buffers × block size.
pub const MAX_RING_BYTES: u64 = 4 << 30;
/// Most runs one campaign may expand to.
pub const MAX_RUNS: u64 = 1000;
/// Size of the generated data when neither the source nor `params.size` says.
pub const DEFAULT_GENERATED_SIZE: u64 = 1 << 30;
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

/// A campaign as submitted: a source, a target, tests, parameters, an optional matrix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CampaignSpec {
    #[serde(default)]
    pub name: String,
    pub source: SourceSpec,
    pub target: TargetSpec,
    #[serde(default = "bottleneck_test_names")]
    pub tests: Vec<String>,
    #[serde(default)]
    pub params: ParamsSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<MatrixSpec>,
    #[serde(default = "one")]
    pub repeat: u32,
}

/// What is backed up: paths (each one "file system") or generated data; for a network backup,
/// optionally read by named agents on their own hosts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathBuf>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<GeneratedSpec>,
    /// Agents that send the network backup, each reading `paths` (on its own host) or
    /// generated data. Without agents the lab starts its own clients on loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
}

/// Data produced at memory speed: a size and how well it compresses.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeneratedSpec {
    pub size: SizeInput,
    #[serde(default = "default_compress_ratio")]
    pub compress_ratio: f64,
}

/// Where the data goes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    pub kind: TargetKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Emulated tape: the drive model (`lto-3` … `lto-9`, `ultrium-960`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Emulated tape: how many drives, one writer each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drives: Option<u32>,
    /// Emulated tape: overrides of the model's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_mb_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mb_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reposition_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_compression: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<SizeInput>,
}

impl TargetSpec {
    /// A target of one kind at an optional path, with no tape settings.
    pub fn new(kind: TargetKind, path: Option<PathBuf>) -> Self {
        Self {
            kind,
            path,
            model: None,
            drives: None,
            native_mb_s: None,
            min_mb_s: None,
            buffer_mb: None,
            reposition_s: None,
            max_compression: None,
            capacity: None,
        }
    }

    fn has_tape_settings(&self) -> bool {
        self.model.is_some()
            || self.drives.is_some()
            || self.native_mb_s.is_some()
            || self.min_mb_s.is_some()
            || self.buffer_mb.is_some()
            || self.reposition_s.is_some()
            || self.max_compression.is_some()
            || self.capacity.is_some()
    }
}

/// The kinds of target the lab writes to.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// Files the lab creates under a directory and removes afterwards.
    Dir,
    /// Discards everything: the pipeline's own ceiling.
    Null,
    /// A raw device, written from its start; needs the caller's permission.
    Device,
    /// Emulated LTO tape drives, in real time.
    Tape,
}

/// Parameters as written; every field has a default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ParamsSpec {
    pub buffers: u32,
    pub block_size: SizeInput,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
    pub direct: bool,
    pub cold_cache: bool,
    pub fsync: bool,
    /// How well the target test's generated data compresses; left out, the target test
    /// writes data as compressible as the source's, measured on a sample of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeInput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<DurationInput>,
    /// Run for the whole duration, reading a small source again until it is up (fio's
    /// `time_based`); otherwise the duration is a cap and the run ends with its data.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
    /// What-if: each stream reads at most this fast (MB/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_rate_mb_s: Option<f64>,
    /// Network backup: how many clients send at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Network backup what-if: each client's link carries at most this much (MB/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_mb_s: Option<f64>,
}

impl Default for ParamsSpec {
    fn default() -> Self {
        Self {
            buffers: 32,
            block_size: SizeInput::Text("256K".into()),
            streams: None,
            direct: false,
            cold_cache: true,
            fsync: true,
            compress_ratio: None,
            size: None,
            duration_s: Some(DurationInput::Seconds(60.0)),
            time_based: false,
            source_rate_mb_s: None,
            clients: None,
            link_mb_s: None,
        }
    }
}

/// Lists of parameter values; the campaign runs every combination.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffers: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<Vec<SizeInput>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<u32>>,
    /// Network backup only: client counts to sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<Vec<u32>>,
}

/// A size as a user writes it: a byte count or a string such as `64K` or `2GiB`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SizeInput {
    Bytes(u64),
    Text(String),
}

impl SizeInput {
    /// The size in bytes, or why the text is not a size.
    pub fn bytes(&self) -> Result<u64, String> {
        match self {
            SizeInput::Bytes(n) => Ok(*n),
            SizeInput::Text(text) => parse_size(text),
        }
    }
}

impl fmt::Display for SizeInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeInput::Bytes(n) => write!(f, "{n}"),
            SizeInput::Text(text) => f.write_str(text),
        }
    }
}

/// Parses `65536`, `64K`, `64KiB`, `64KB`, `1M`, `2G`, `1T`; K/M/G/T are binary multiples.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    if digits.is_empty() {
        return Err(format!(
            "'{text}' is not a size (write e.g. 65536, 64K, 1M, 2G)"
        ));
    }
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "'{text}' has an unknown unit '{}' (use K, M, G or T)",
                unit.trim()
            ));
        }
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// Formats bytes with binary units, the way sizes are written in specs.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ];
    for (unit, scale) in UNITS {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    for (unit, scale) in UNITS {
        if bytes >= scale {
            return format!("{:.1}{unit}iB", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes}B")
}

/// The tests: the five local ones of the bottleneck method, in table order, then the network
/// backup.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Generated data into the target: the target's ceiling.
    TapeWrite,
    /// One stream reads the source and discards it: one stream's ceiling.
    ReadSingle,
    /// Every stream reads at once and discards: the source's ceiling.
    ReadParallel,
    /// The full pipeline into the null sink: source + pipeline + CPU ceiling.
    NullSink,
    /// The full pipeline into the target: the end-to-end figure.
    FullBackup,
    /// Clients × streams send over TCP into the pipeline and the target.
    NetworkBackup,
}

impl TestKind {
    /// Every test, in the order of the bottleneck table.
    pub const ALL: [TestKind; 6] = [
        TestKind::TapeWrite,
        TestKind::ReadSingle,
        TestKind::ReadParallel,
        TestKind::NullSink,
        TestKind::FullBackup,
        TestKind::NetworkBackup,
    ];

    /// The five local tests of the bottleneck method: what a campaign runs by default.
    pub const BOTTLENECK: [TestKind; 5] = [
        TestKind::TapeWrite,
        TestKind::ReadSingle,
        TestKind::ReadParallel,
        TestKind::NullSink,
        TestKind::FullBackup,
    ];

    /// The id used in specs and results.
    pub fn id(self) -> &'static str {
        match self {
            TestKind::TapeWrite => "tape_write",
            TestKind::ReadSingle => "read_single",
            TestKind::ReadParallel => "read_parallel",
            TestKind::NullSink => "null_sink",
            TestKind::FullBackup => "full_backup",
            TestKind::NetworkBackup => "network_backup",
        }
    }

    /// The row label of the bottleneck table.
    pub fn label(self) -> &'static str {
        match self {
            TestKind::TapeWrite => "Target write",
            TestKind::ReadSingle => "Read, single stream",
            TestKind::ReadParallel => "Read, parallel",
            TestKind::NullSink => "Backup to null, parallel",
            TestKind::FullBackup => "Full backup, parallel",
            TestKind::NetworkBackup => "Network backup",
        }
    }

    /// Parses a test id.
    pub fn from_id(id: &str) -> Option<TestKind> {
        TestKind::ALL.into_iter().find(|test| test.id() == id)
    }

    /// Whether the test reads the campaign's source on this host (and so can be served from
    /// the page cache). A network backup's clients read it.
    pub fn reads_source(self) -> bool {
        !matches!(self, TestKind::TapeWrite | TestKind::NetworkBackup)
    }

    /// Whether the test writes into the campaign's target.
    pub fn writes_target(self) -> bool {
        matches!(
            self,
            TestKind::TapeWrite | TestKind::FullBackup | TestKind::NetworkBackup
        )
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The parameters of one run, every value resolved to a number.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunParams {
    pub buffers: u32,
    pub block_size: u64,
    pub streams: u32,
    pub direct: bool,
    pub cold_cache: bool,
    pub fsync: bool,
    pub compress_ratio: f64,
    /// The target test writes data as compressible as the source's (measured when it runs)
    /// instead of `compress_ratio`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub match_source: bool,
    pub size: Option<u64>,
    pub duration_s: Option<f64>,
    /// The run lasts its whole duration: a source that runs out is read again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
    /// The run ends as soon as its throughput is steady (`duration_s: "auto"`); `duration_s`
    /// is then its longest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub until_steady: bool,
    /// Each stream's read rate cap in MB/s (a what-if), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_rate_mb_s: Option<f64>,
    /// Network backup: clients sending at once (`streams` is then per client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Network backup: each client's emulated link cap in MB/s, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_mb_s: Option<f64>,
}

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

/// The source of a validated campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourcePlan {
    Paths(Vec<PathBuf>),
    Generated { size: u64, compress_ratio: f64 },
}

/// The target of a validated campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetPlan {
    Null,
    Dir(PathBuf),
    Device(PathBuf),
    Tape(TapeConfig),
}

/// One emulated tape drive's figures, from its model with the spec's overrides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TapeConfig {
    pub model: String,
    pub drives: u32,
    /// Native (uncompressed) tape speed.
    pub native_mb_s: f64,
    /// The lowest speed-matching step, in native MB/s; below it the drive backhitches.
    pub min_mb_s: f64,
    pub buffer_bytes: u64,
    pub reposition_s: f64,
    pub max_compression: f64,
    /// Native bytes one cartridge holds.
    pub capacity_bytes: u64,
}

/// A published LTO generation: native MB/s, max compression, lowest speed-match step MB/s,
/// native capacity, and the drive buffer (MB).
pub struct TapeModel {
    pub id: &'static str,
    pub name: &'static str,
    pub native_mb_s: f64,
    pub max_compression: f64,
    pub min_mb_s: f64,
    pub capacity_bytes: u64,
    /// Not published by the vendors for every generation: an assumption (see README).
    pub buffer_mb: f64,
}

/// The reposition (backhitch) time no vendor publishes: an estimate.
pub const DEFAULT_REPOSITION_S: f64 = 2.0;

/// LTO-3 to LTO-9. The lowest step of LTO-4 is not published (40 assumed, as for LTO-3 and
/// LTO-5); the buffer sizes are assumptions in the range the drives ship with.
pub const TAPE_MODELS: [TapeModel; 7] = [
    TapeModel {
        id: "lto-3",
        name: "LTO-3",
        native_mb_s: 80.0,
        max_compression: 2.0,
        min_mb_s: 40.0,
        capacity_bytes: 400_000_000_000,
        buffer_mb: 128.0,
    },
    TapeModel {
        id: "lto-4",
        name: "LTO-4",
        native_mb_s: 120.0,
        max_compression: 2.0,
        min_mb_s: 40.0,
        capacity_bytes: 800_000_000_000,
        buffer_mb: 128.0,
    },
    TapeModel {
        id: "lto-5",
        name: "LTO-5",
        native_mb_s: 140.0,
        max_compression: 2.0,
        min_mb_s: 40.0,
        capacity_bytes: 1_500_000_000_000,
        buffer_mb: 256.0,
    },
    TapeModel {
        id: "lto-6",
        name: "LTO-6",
        native_mb_s: 160.0,
        max_compression: 2.5,
        min_mb_s: 40.0,
        capacity_bytes: 2_500_000_000_000,
        buffer_mb: 512.0,
    },
    TapeModel {
        id: "lto-7",
        name: "LTO-7",
        native_mb_s: 300.0,
        max_compression: 2.5,
        min_mb_s: 101.0,
        capacity_bytes: 6_000_000_000_000,
        buffer_mb: 1024.0,
    },
    TapeModel {
        id: "lto-8",
        name: "LTO-8",
        native_mb_s: 360.0,
        max_compression: 2.5,
        min_mb_s: 112.0,
        capacity_bytes: 12_000_000_000_000,
        buffer_mb: 1024.0,
    },
    TapeModel {
        id: "lto-9",
        name: "LTO-9",
        native_mb_s: 400.0,
        max_compression: 2.5,
        min_mb_s: 177.0,
        capacity_bytes: 18_000_000_000_000,
        buffer_mb: 1024.0,
    },
];

/// The model a name stands for (`ultrium-960` is LTO-3), case-insensitive.
pub fn tape_model(name: &str) -> Option<&'static TapeModel> {
    let name = name.trim().to_ascii_lowercase();
    let id = if name == "ultrium-960" {
        "lto-3"
    } else {
        name.as_str()
    };
    TAPE_MODELS.iter().find(|model| model.id == id)
}

/// One run to execute: a test at one parameter point.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    pub test: TestKind,
    pub params: RunParams,
    pub source: SourcePlan,
    pub target: TargetPlan,
    /// Network backup: the agents that send, in order (the first `clients` of them); empty
    /// when the lab's own clients send on loopback.
    pub agents: Vec<String>,
}

impl RunPlan {
    /// The run at one point of a campaign: its own test and parameters, and where every run of
    /// the campaign reads and writes.
    pub fn at(test: TestKind, params: RunParams, placement: &Placement) -> RunPlan {
        RunPlan {
            test,
            params,
            source: placement.source.clone(),
            target: placement.target.clone(),
            agents: if test == TestKind::NetworkBackup {
                placement.agents.clone()
            } else {
                Vec::new()
            },
        }
    }
}

/// Where every run of a campaign reads and writes, resolved once at submission and stored with
/// the campaign, so a run executes exactly what was accepted and no run copies the source list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub source: SourcePlan,
    pub target: TargetPlan,
    /// The agents that send the network runs; empty for the lab's own clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
}

impl Placement {
    /// The placement shared by a campaign's runs, taken from its plans (`None` without runs).
    pub fn of(plans: &[RunPlan]) -> Option<Placement> {
        let first = plans.first()?;
        let agents = plans
            .iter()
            .find(|plan| !plan.agents.is_empty())
            .map(|plan| plan.agents.clone())
            .unwrap_or_default();
        Some(Placement {
            source: first.source.clone(),
            target: first.target.clone(),
            agents,
        })
    }
}

/// Field-level validation errors, keyed by the field's path (`params.block_size`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FieldErrors(pub BTreeMap<String, String>);

impl FieldErrors {
    /// Records a problem with one field; a second problem with the same field is appended.
    pub fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let message = message.into();
        self.0
            .entry(path.into())
            .and_modify(|existing| {
                existing.push_str("; ");
                existing.push_str(&message);
            })
            .or_insert(message);
    }

    /// Whether no field has a problem.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds every error of another set.
    pub fn extend(&mut self, other: FieldErrors) {
        for (path, message) in other.0 {
            self.add(path, message);
        }
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (path, message)) in self.0.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{path}: {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldErrors {}

/// Parses a spec from JSON; a syntax or type error names the field it happened at.
pub fn parse_json(text: &str) -> Result<CampaignSpec, FieldErrors> {
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let path = error.path().to_string();
        let mut errors = FieldErrors::default();
        let path = if path == "." {
            "spec".to_string()
        } else {
            path
        };
        errors.add(path, error.into_inner().to_string());
        errors
    })
}

impl CampaignSpec {
    /// Checks every field and expands the campaign into runs: matrix × tests × repeat.
    /// Every bad field is reported, not just the first.
    pub fn plan(&self) -> Result<Vec<RunPlan>, FieldErrors> {
        // Nothing proportional to the input is built before its size is known to be sane.
        let lengths = self.check_list_lengths();
        if !lengths.is_empty() {
            return Err(lengths);
        }
        let mut errors = FieldErrors::default();
        if self.name.len() > 200 {
            errors.add("name", "must be at most 200 characters");
        }
        let source = self.source_plan(&mut errors);
        let target = self.target_plan(&mut errors);
        let tests = self.test_kinds(&mut errors);
        if !(1..=100).contains(&self.repeat) {
            errors.add("repeat", "must be between 1 and 100");
        }
        let base = self.base_params(&mut errors, source.as_ref());
        let axes = self.matrix_axes(&mut errors);
        let agents = self.agent_names(&mut errors);
        let network = self.network_plan(&mut errors, &tests, &agents);

        if let Some(sizes) = self.matrix.as_ref().and_then(|m| m.block_size.as_ref()) {
            for (index, size) in sizes.iter().enumerate() {
                if let Ok(bytes) = size.bytes() {
                    let field = format!("matrix.block_size[{index}]");
                    check_block_size(&mut errors, &field, self.params.direct, bytes);
                }
            }
        }
        if let Some(base) = &base {
            let most_buffers = axes
                .buffers
                .iter()
                .map(|value| value.unwrap_or(base.buffers))
                .max()
                .unwrap_or(base.buffers);
            let largest_block = axes
                .block_sizes
                .iter()
                .map(|value| value.unwrap_or(base.block_size))
                .max()
                .unwrap_or(base.block_size);
            let largest_ring = u64::from(most_buffers).saturating_mul(largest_block);
            if largest_ring > MAX_RING_BYTES {
                let matrix_sets_ring = self
                    .matrix
                    .as_ref()
                    .is_some_and(|m| m.buffers.is_some() || m.block_size.is_some());
                let field = if matrix_sets_ring { "matrix" } else { "params" };
                errors.add(
                    field,
                    format!(
                        "buffers × block_size is {}; at most {} may be allocated",
                        format_size(largest_ring),
                        format_size(MAX_RING_BYTES)
                    ),
                );
            }
        }
        errors.extend(self.check_run_count());
        let runs = self.run_count();

        let (Some(source), Some(target), Some(base), Some(network)) =
            (source, target, base, network)
        else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let points = axes.points();
        let mut plans = Vec::with_capacity(usize::try_from(runs).unwrap_or(0));
        for point in &points {
            for &test in &tests {
                let is_network = test == TestKind::NetworkBackup;
                // A client sweep repeats only the network runs; the local tests run once.
                if !is_network && point.clients.is_some() && point.clients != points[0].clients {
                    continue;
                }
                for _ in 0..self.repeat {
                    let mut params = base.clone();
                    if let Some(buffers) = point.buffers {
                        params.buffers = buffers;
                    }
                    if let Some(block_size) = point.block_size {
                        params.block_size = block_size;
                    }
                    if let Some(streams) = point.streams {
                        params.streams = streams;
                    }
                    if is_network {
                        if self.params.streams.is_none() && point.streams.is_none() {
                            params.streams = DEFAULT_CLIENT_STREAMS;
                        }
                        params.clients = Some(point.clients.unwrap_or(network.clients));
                        params.link_mb_s = self.params.link_mb_s;
                    }
                    plans.push(RunPlan {
                        test,
                        params,
                        source: source.clone(),
                        target: target.clone(),
                        agents: if is_network {
                            agents.clone()
                        } else {
                            Vec::new()
                        },
                    });
                }
            }
        }
        Ok(plans)
    }

    /// Checks every list's length and the number of runs the campaign expands to, by
    /// arithmetic alone: a request cannot make the lab build, resolve or store anything in
    /// proportion to a list it was not allowed to send.
    pub fn check_bounds(&self) -> FieldErrors {
        let errors = self.check_list_lengths();
        if errors.is_empty() {
            self.check_run_count()
        } else {
            errors
        }
    }

    fn check_list_lengths(&self) -> FieldErrors {
        let mut errors = FieldErrors::default();
        let mut at_most = |field: &str, what: &str, len: usize, most: usize| {
            if len > most {
                errors.add(
                    field,
                    format!("lists {len} {what}; at most {most} are allowed"),
                );
            }
        };
        if let Some(paths) = &self.source.paths {
            at_most("source.paths", "paths", paths.len(), MAX_SOURCE_PATHS);
        }
        if let Some(agents) = &self.source.agents {
            at_most(
                "source.agents",
                "agents",
                agents.len(),
                MAX_CLIENTS as usize,
            );
        }
        at_most("tests", "tests", self.tests.len(), TestKind::ALL.len());
        if let Some(matrix) = &self.matrix {
            let lists = [
                ("matrix.buffers", matrix.buffers.as_ref().map(Vec::len)),
                (
                    "matrix.block_size",
                    matrix.block_size.as_ref().map(Vec::len),
                ),
                ("matrix.streams", matrix.streams.as_ref().map(Vec::len)),
                ("matrix.clients", matrix.clients.as_ref().map(Vec::len)),
            ];
            for (field, len) in lists {
                at_most(field, "values", len.unwrap_or(0), MAX_MATRIX_VALUES);
            }
        }
        errors
    }

    fn check_run_count(&self) -> FieldErrors {
        let mut errors = FieldErrors::default();
        let runs = self.run_count();
        if runs > MAX_RUNS {
            let field = if self.matrix.is_some() {
                "matrix"
            } else {
                "repeat"
            };
            errors.add(
                field,
                format!("expands to {runs} runs; at most {MAX_RUNS} are allowed"),
            );
        }
        errors
    }

    /// How many runs the campaign expands to, computed from the lists' lengths (saturating), so
    /// it can be checked before any run is built. Unknown and repeated tests are not counted.
    pub fn run_count(&self) -> u64 {
        let length =
            |len: Option<usize>| u64::try_from(len.unwrap_or(1).max(1)).unwrap_or(u64::MAX);
        let empty = MatrixSpec::default();
        let matrix = self.matrix.as_ref().unwrap_or(&empty);
        let points = length(matrix.buffers.as_ref().map(Vec::len))
            .saturating_mul(length(matrix.block_size.as_ref().map(Vec::len)))
            .saturating_mul(length(matrix.streams.as_ref().map(Vec::len)));
        let sweep = length(matrix.clients.as_ref().map(Vec::len));
        // The local tests run at the points of the sweep's first client count.
        let local = matrix
            .clients
            .as_ref()
            .and_then(|list| {
                let first = list.first()?;
                Some(list.iter().filter(|value| *value == first).count())
            })
            .map_or(1, |count| length(Some(count)));
        let mut kinds: Vec<TestKind> = self
            .tests
            .iter()
            .filter_map(|name| TestKind::from_id(name))
            .collect();
        kinds.sort();
        kinds.dedup();
        // A client sweep repeats only the network runs; the local tests run once per point.
        let per_point = kinds.iter().fold(0u64, |sum, &kind| {
            sum.saturating_add(if kind == TestKind::NetworkBackup {
                sweep
            } else {
                local
            })
        });
        points
            .saturating_mul(per_point)
            .saturating_mul(u64::from(self.repeat))
    }

    fn source_plan(&self, errors: &mut FieldErrors) -> Option<SourcePlan> {
        match (&self.source.paths, &self.source.generated) {
            (Some(_), Some(_)) => {
                errors.add("source", "give either paths or generated, not both");
                None
            }
            // Agents alone send generated data of the campaign's size and compressibility.
            (None, None) if self.source.agents.is_some() => Some(SourcePlan::Generated {
                size: self
                    .params
                    .size
                    .as_ref()
                    .and_then(|size| size.bytes().ok())
                    .filter(|&size| size > 0)
                    .unwrap_or(DEFAULT_GENERATED_SIZE),
                compress_ratio: self
                    .params
                    .compress_ratio
                    .unwrap_or_else(default_compress_ratio),
            }),
            (None, None) => {
                errors.add("source", "give paths, generated or agents");
                None
            }
            (Some(paths), None) => {
                if paths.is_empty() {
                    errors.add("source.paths", "must name at least one path");
                    return None;
                }
                let mut ok = true;
                let mut seen: BTreeMap<&PathBuf, usize> = BTreeMap::new();
                for (index, path) in paths.iter().enumerate() {
                    let field = format!("source.paths[{index}]");
                    if path.as_os_str().is_empty() {
                        errors.add(field, "must not be empty");
                        ok = false;
                    } else if let Some(first) = seen.get(path) {
                        // The same data read twice would double the figure's bytes.
                        errors.add(
                            field,
                            format!("is the same path as source.paths[{first}]; list it once"),
                        );
                        ok = false;
                    } else {
                        seen.insert(path, index);
                    }
                }
                ok.then(|| SourcePlan::Paths(paths.clone()))
            }
            (None, Some(generated)) => {
                let size = match generated.size.bytes() {
                    Ok(0) => {
                        errors.add("source.generated.size", "must be greater than 0");
                        None
                    }
                    Ok(size) => Some(size),
                    Err(message) => {
                        errors.add("source.generated.size", message);
                        None
                    }
                };
                let ratio_ok = check_ratio(
                    errors,
                    "source.generated.compress_ratio",
                    generated.compress_ratio,
                );
                match (size, ratio_ok) {
                    (Some(size), true) => Some(SourcePlan::Generated {
                        size,
                        compress_ratio: generated.compress_ratio,
                    }),
                    _ => None,
                }
            }
        }
    }

    fn target_plan(&self, errors: &mut FieldErrors) -> Option<TargetPlan> {
        let path = self
            .target
            .path
            .as_ref()
            .filter(|path| !path.as_os_str().is_empty());
        if self.target.kind != TargetKind::Tape && self.target.has_tape_settings() {
            errors.add(
                "target",
                "model, drives and the drive figures belong to kind tape only",
            );
        }
        match (self.target.kind, path) {
            (TargetKind::Tape, None) => self.tape_plan(errors).map(TargetPlan::Tape),
            (TargetKind::Tape, Some(_)) => {
                errors.add(
                    "target.path",
                    "is not used with kind tape (the drive is emulated); remove it",
                );
                self.tape_plan(errors);
                None
            }
            (TargetKind::Null, None) => Some(TargetPlan::Null),
            (TargetKind::Null, Some(_)) => {
                errors.add("target.path", "is not used with kind null; remove it");
                None
            }
            (TargetKind::Dir, Some(path)) => Some(TargetPlan::Dir(path.clone())),
            (TargetKind::Device, Some(path)) => Some(TargetPlan::Device(path.clone())),
            (kind, None) => {
                let kind = if kind == TargetKind::Dir {
                    "dir"
                } else {
                    "device"
                };
                errors.add("target.path", format!("is required with kind {kind}"));
                None
            }
        }
    }

    fn tape_plan(&self, errors: &mut FieldErrors) -> Option<TapeConfig> {
        let target = &self.target;
        let before = errors.0.len();
        let model = match target.model.as_deref() {
            None => {
                errors.add("target.model", "is required with kind tape (lto-3 … lto-9)");
                None
            }
            Some(name) => {
                let found = tape_model(name);
                if found.is_none() {
                    let known: Vec<&str> = TAPE_MODELS.iter().map(|m| m.id).collect();
                    errors.add(
                        "target.model",
                        format!(
                            "unknown model '{name}' (known: {}, ultrium-960)",
                            known.join(", ")
                        ),
                    );
                }
                found
            }
        };
        let drives = target.drives.unwrap_or(1);
        if !(1..=16).contains(&drives) {
            errors.add("target.drives", "must be between 1 and 16");
        }
        let positive = |errors: &mut FieldErrors, field: &str, value: Option<f64>, max: f64| {
            if let Some(value) = value
                && !(value.is_finite() && value > 0.0 && value <= max)
            {
                errors.add(field, format!("must be more than 0 and at most {max}"));
            }
        };
        positive(errors, "target.native_mb_s", target.native_mb_s, 100_000.0);
        positive(errors, "target.min_mb_s", target.min_mb_s, 100_000.0);
        positive(errors, "target.buffer_mb", target.buffer_mb, 65_536.0);
        positive(errors, "target.reposition_s", target.reposition_s, 600.0);
        if let Some(ratio) = target.max_compression
            && !(ratio.is_finite() && (1.0..=10.0).contains(&ratio))
        {
            errors.add("target.max_compression", "must be between 1 and 10");
        }
        let capacity = target.capacity.as_ref().and_then(|size| {
            let bytes = size_field(errors, "target.capacity", size)?;
            if bytes == 0 {
                errors.add("target.capacity", "must be greater than 0");
            }
            Some(bytes)
        });
        let model = model?;
        let native = target.native_mb_s.unwrap_or(model.native_mb_s);
        let min = target.min_mb_s.unwrap_or(model.min_mb_s);
        if min > native {
            errors.add(
                "target.min_mb_s",
                format!("must not exceed the native speed ({native} MB/s)"),
            );
        }
        if errors.0.len() != before {
            return None;
        }
        Some(TapeConfig {
            model: model.name.to_string(),
            drives,
            native_mb_s: native,
            min_mb_s: min,
            buffer_bytes: (target.buffer_mb.unwrap_or(model.buffer_mb) * 1e6) as u64,
            reposition_s: target.reposition_s.unwrap_or(DEFAULT_REPOSITION_S),
            max_compression: target.max_compression.unwrap_or(model.max_compression),
            capacity_bytes: capacity.unwrap_or(model.capacity_bytes),
        })
    }

    fn test_kinds(&self, errors: &mut FieldErrors) -> Vec<TestKind> {
        if self.tests.is_empty() {
            errors.add("tests", "must list at least one test");
        }
        let mut kinds = Vec::new();
        for (index, name) in self.tests.iter().enumerate() {
            match TestKind::from_id(name) {
                Some(kind) if kinds.contains(&kind) => {
                    errors.add(
                        format!("tests[{index}]"),
                        format!("'{name}' is listed twice"),
                    );
                }
                Some(kind) => kinds.push(kind),
                None => errors.add(
                    format!("tests[{index}]"),
                    format!(
                        "unknown test '{name}' (known: {})",
                        all_test_names().join(", ")
                    ),
                ),
            }
        }
        kinds.sort();
        kinds
    }

    fn base_params(
        &self,
        errors: &mut FieldErrors,
        source: Option<&SourcePlan>,
    ) -> Option<RunParams> {
        let params = &self.params;
        let before = errors.0.len();
        if !(1..=1024).contains(&params.buffers) {
            errors.add("params.buffers", "must be between 1 and 1024");
        }
        let block_size = size_field(errors, "params.block_size", &params.block_size);
        if let Some(block_size) = block_size {
            check_block_size(errors, "params.block_size", params.direct, block_size);
        }
        let streams = match params.streams {
            Some(streams) => streams,
            None => match source {
                Some(SourcePlan::Paths(paths)) if paths.len() > 1 => paths.len() as u32,
                _ => 4,
            },
        };
        if !(1..=256).contains(&streams) {
            errors.add("params.streams", "must be between 1 and 256");
        }
        if let Some(ratio) = params.compress_ratio {
            check_ratio(errors, "params.compress_ratio", ratio);
        }
        let size = params.size.as_ref().and_then(|size| {
            let bytes = size_field(errors, "params.size", size)?;
            if bytes == 0 {
                errors.add("params.size", "must be greater than 0");
            }
            Some(bytes)
        });
        if let Some(DurationInput::Seconds(duration)) = params.duration_s
            && !(duration > 0.0 && duration <= 86_400.0)
        {
            errors.add(
                "params.duration_s",
                "must be more than 0 and at most 86400, or \"auto\"",
            );
        }
        let auto = params.duration_s == Some(DurationInput::Auto(AutoWord::Auto));
        if let Some(rate) = params.source_rate_mb_s
            && !(rate.is_finite() && rate > 0.0 && rate <= 1_000_000.0)
        {
            errors.add("params.source_rate_mb_s", "must be more than 0 MB/s");
        }
        if errors.0.len() != before {
            return None;
        }
        Some(RunParams {
            buffers: params.buffers,
            block_size: block_size?,
            streams,
            direct: params.direct,
            cold_cache: params.cold_cache,
            fsync: params.fsync,
            compress_ratio: params.compress_ratio.unwrap_or_else(default_compress_ratio),
            match_source: params.compress_ratio.is_none()
                && matches!(source, Some(SourcePlan::Paths(_))),
            size,
            duration_s: params.duration_s.map(|duration| match duration {
                DurationInput::Seconds(seconds) => seconds,
                DurationInput::Auto(_) => AUTO_MAX_DURATION_S,
            }),
            time_based: auto || (params.time_based && params.duration_s.is_some()),
            until_steady: auto,
            source_rate_mb_s: params.source_rate_mb_s,
            clients: None,
            link_mb_s: None,
        })
    }

    /// The agents named by the source, checked: names as agents register them, each once.
    fn agent_names(&self, errors: &mut FieldErrors) -> Vec<String> {
        let Some(agents) = &self.source.agents else {
            return Vec::new();
        };
        if agents.is_empty() {
            errors.add(
                "source.agents",
                "must name at least one agent, or be left out (the lab's own clients send)",
            );
        }
        if agents.len() > MAX_CLIENTS as usize {
            errors.add(
                "source.agents",
                format!("names {} agents; at most {MAX_CLIENTS}", agents.len()),
            );
        }
        for (index, name) in agents.iter().enumerate() {
            let field = format!("source.agents[{index}]");
            if let Err(message) = check_agent_name(name) {
                errors.add(field, message);
            } else if agents[..index].contains(name) {
                errors.add(field, format!("'{name}' is listed twice"));
            }
        }
        agents.clone()
    }

    /// Checks what only a network backup uses, and resolves its client count.
    fn network_plan(
        &self,
        errors: &mut FieldErrors,
        tests: &[TestKind],
        agents: &[String],
    ) -> Option<NetworkDefaults> {
        let before = errors.0.len();
        let network = tests.contains(&TestKind::NetworkBackup);
        let sweep = self.matrix.as_ref().and_then(|m| m.clients.as_ref());
        if !network {
            let only = "is used by network_backup only; add it to tests or remove this";
            if self.params.clients.is_some() {
                errors.add("params.clients", only);
            }
            if self.params.link_mb_s.is_some() {
                errors.add("params.link_mb_s", only);
            }
            if sweep.is_some() {
                errors.add("matrix.clients", only);
            }
            if self.source.agents.is_some() {
                errors.add("source.agents", only);
            }
        }
        if !agents.is_empty() {
            for (index, test) in tests.iter().enumerate() {
                if *test != TestKind::NetworkBackup {
                    errors.add(
                        format!("tests[{index}]"),
                        format!(
                            "{} runs on the lab's own host; with source.agents only \
                             network_backup can run (submit the local tests separately)",
                            test.id()
                        ),
                    );
                }
            }
        }
        let most = if agents.is_empty() {
            MAX_CLIENTS
        } else {
            agents.len() as u32
        };
        let clients_error = |what: &str| {
            if agents.is_empty() {
                format!("{what} between 1 and {MAX_CLIENTS}")
            } else {
                format!(
                    "{what} between 1 and {most}: each client is one of the {most} agents named"
                )
            }
        };
        let clients = self.params.clients.unwrap_or(if agents.is_empty() {
            DEFAULT_CLIENTS
        } else {
            most
        });
        if !(1..=most).contains(&clients) {
            errors.add("params.clients", clients_error("must be"));
        }
        if let Some(sweep) = sweep {
            if sweep.is_empty() {
                errors.add(
                    "matrix.clients",
                    "must list at least one value, or be left out",
                );
            }
            for (index, value) in sweep.iter().enumerate() {
                if !(1..=most).contains(value) {
                    errors.add(format!("matrix.clients[{index}]"), clients_error("must be"));
                }
            }
        }
        if let Some(rate) = self.params.link_mb_s
            && !(rate.is_finite() && (0.1..=1_000_000.0).contains(&rate))
        {
            errors.add("params.link_mb_s", "must be at least 0.1 MB/s");
        }
        if network {
            let streams = self.params.streams.unwrap_or(DEFAULT_CLIENT_STREAMS);
            let widest_clients = sweep
                .and_then(|sweep| sweep.iter().max().copied())
                .unwrap_or(clients);
            let widest_streams = self
                .matrix
                .as_ref()
                .and_then(|m| m.streams.as_ref())
                .and_then(|list| list.iter().max().copied())
                .unwrap_or(streams);
            let connections = u64::from(widest_clients) * u64::from(widest_streams);
            if connections > u64::from(MAX_CONNECTIONS) {
                errors.add(
                    "params",
                    format!(
                        "clients × streams is {connections} connections; at most \
                         {MAX_CONNECTIONS} are allowed"
                    ),
                );
            }
        }
        (errors.0.len() == before).then_some(NetworkDefaults { clients })
    }

    /// The matrix's values, each checked; one `None` for a list left out.
    fn matrix_axes(&self, errors: &mut FieldErrors) -> MatrixAxes {
        let Some(matrix) = &self.matrix else {
            return MatrixAxes::default();
        };
        fn values<T: Clone>(
            errors: &mut FieldErrors,
            field: &str,
            list: &Option<Vec<T>>,
        ) -> Vec<Option<T>> {
            match list {
                None => vec![None],
                Some(list) if list.is_empty() => {
                    errors.add(field, "must list at least one value, or be left out");
                    vec![None]
                }
                Some(list) => list.iter().cloned().map(Some).collect(),
            }
        }
        let buffers = values(errors, "matrix.buffers", &matrix.buffers);
        for (index, value) in buffers.iter().enumerate() {
            if let Some(value) = value
                && !(1..=1024).contains(value)
            {
                errors.add(
                    format!("matrix.buffers[{index}]"),
                    "must be between 1 and 1024",
                );
            }
        }
        let streams = values(errors, "matrix.streams", &matrix.streams);
        for (index, value) in streams.iter().enumerate() {
            if let Some(value) = value
                && !(1..=256).contains(value)
            {
                errors.add(
                    format!("matrix.streams[{index}]"),
                    "must be between 1 and 256",
                );
            }
        }
        let block_sizes: Vec<Option<u64>> = values(errors, "matrix.block_size", &matrix.block_size)
            .into_iter()
            .enumerate()
            .map(|(index, value)| {
                value.and_then(|value| {
                    size_field(errors, &format!("matrix.block_size[{index}]"), &value)
                })
            })
            .collect();
        // Checked with the rest of the network settings.
        let clients: Vec<Option<u32>> = match &matrix.clients {
            Some(list) if !list.is_empty() => list.iter().copied().map(Some).collect(),
            _ => vec![None],
        };
        MatrixAxes {
            buffers,
            block_sizes,
            streams,
            clients,
        }
    }
}

/// The checked values of each matrix list; `[None]` where the list was left out.
#[derive(Debug, Clone)]
struct MatrixAxes {
    buffers: Vec<Option<u32>>,
    block_sizes: Vec<Option<u64>>,
    streams: Vec<Option<u32>>,
    clients: Vec<Option<u32>>,
}

impl Default for MatrixAxes {
    fn default() -> Self {
        Self {
            buffers: vec![None],
            block_sizes: vec![None],
            streams: vec![None],
            clients: vec![None],
        }
    }
}

impl MatrixAxes {
    /// Every combination; only called once the run count is known to be within the limit.
    fn points(&self) -> Vec<MatrixPoint> {
        let mut points = Vec::new();
        for buffers in &self.buffers {
            for block_size in &self.block_sizes {
                for streams in &self.streams {
                    for clients in &self.clients {
                        points.push(MatrixPoint {
                            buffers: *buffers,
                            block_size: *block_size,
                            streams: *streams,
                            clients: *clients,
                        });
                    }
                }
            }
        }
        points
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct MatrixPoint {
    buffers: Option<u32>,
    block_size: Option<u64>,
    streams: Option<u32>,
    clients: Option<u32>,
}

/// The network settings every network run of a campaign starts from.
#[derive(Debug, Clone, Copy)]
struct NetworkDefaults {
    clients: u32,
}

/// Checks an agent's name: what agents register as and campaigns name them by.
pub fn check_agent_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err("must be 1 to 64 characters".to_string());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "'{name}' may hold only letters, digits, '-', '_' and '.'"
        ));
    }
    Ok(())
}

fn size_field(errors: &mut FieldErrors, field: &str, input: &SizeInput) -> Option<u64> {
    match input.bytes() {
        Ok(bytes) => Some(bytes),
        Err(message) => {
            errors.add(field, message);
            None
        }
    }
}

fn check_ratio(errors: &mut FieldErrors, field: &str, ratio: f64) -> bool {
    let ok = ratio.is_finite() && (1.0..=100.0).contains(&ratio);
    if !ok {
        errors.add(field, "must be between 1.0 (incompressible) and 100.0");
    }
    ok
}

/// Checks one block size: a sane range, and O_DIRECT alignment when direct is on.
fn check_block_size(errors: &mut FieldErrors, field: &str, direct: bool, block_size: u64) {
    if !(512..=(64 << 20)).contains(&block_size) {
        errors.add(field, "must be between 512 bytes and 64M");
    } else if direct && !block_size.is_multiple_of(DIRECT_ALIGN) {
        errors.add(
            field,
            format!("must be a multiple of {DIRECT_ALIGN} when direct is true (got {block_size})"),
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> CampaignSpec {
        match parse_json(json) {
            Ok(spec) => spec,
            Err(errors) => panic!("spec did not parse: {errors}"),
        }
    }

    #[test]
    fn sizes_use_binary_multiples() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("64kb"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("2X").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(format_size(256 << 10), "256K");
        assert_eq!(format_size(1536 << 20), "1536M");
    }

    #[test]
    fn defaults_fill_a_minimal_spec() {
        let spec = spec(r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}}"#);
        let plans = spec.plan().expect("valid");
        assert_eq!(plans.len(), 5);
        let params = &plans[0].params;
        assert_eq!(params.buffers, 32);
        assert_eq!(params.block_size, 256 << 10);
        assert_eq!(params.streams, 4);
        assert!(params.cold_cache && params.fsync && !params.direct);
        assert_eq!(plans[0].test, TestKind::TapeWrite);
        assert_eq!(plans[4].test, TestKind::FullBackup);
    }

    #[test]
    fn a_client_sweep_repeats_only_the_network_runs() {
        let spec = spec(
            r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
                "tests": ["tape_write", "network_backup"],
                "matrix": {"clients": [6, 7, 8], "buffers": [16, 32]}}"#,
        );
        let plans = spec.plan().expect("valid");
        let network: Vec<&RunPlan> = plans
            .iter()
            .filter(|p| p.test == TestKind::NetworkBackup)
            .collect();
        assert_eq!(network.len(), 6, "3 client counts × 2 buffers");
        assert_eq!(
            plans.len() - network.len(),
            2,
            "tape_write once per buffers value"
        );
        assert!(
            network
                .iter()
                .all(|p| p.params.streams == DEFAULT_CLIENT_STREAMS)
        );
        let clients: Vec<u32> = network.iter().filter_map(|p| p.params.clients).collect();
        assert_eq!(clients, [6, 7, 8, 6, 7, 8]);
        assert!(
            plans
                .iter()
                .filter(|p| p.test == TestKind::TapeWrite)
                .all(|p| p.params.clients.is_none())
        );
    }

    #[test]
    fn network_fields_are_checked_by_name() {
        let errors = spec(
            r#"{"source": {"agents": ["a", "a", "bad name"]}, "target": {"kind": "null"},
                "tests": ["read_single", "network_backup"],
                "params": {"clients": 5, "link_mb_s": -1}}"#,
        )
        .plan()
        .expect_err("invalid");
        for field in [
            "source.agents[1]",
            "source.agents[2]",
            "tests[0]",
            "params.clients",
            "params.link_mb_s",
        ] {
            assert!(errors.0.contains_key(field), "{field} in {errors}");
        }
        let local = spec(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "params": {"clients": 2}, "matrix": {"clients": [1]}}"#,
        )
        .plan()
        .expect_err("clients without a network test");
        assert!(local.0.contains_key("params.clients") && local.0.contains_key("matrix.clients"));
        let wide = spec(
            r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
                "tests": ["network_backup"], "params": {"clients": 64, "streams": 8}}"#,
        )
        .plan()
        .expect_err("too many connections");
        assert!(wide.to_string().contains("512 connections"), "{wide}");
    }

    #[test]
    fn agents_alone_send_generated_data_of_the_campaign_size() {
        let plans = spec(
            r#"{"source": {"agents": ["x", "y"]}, "target": {"kind": "null"},
                "tests": ["network_backup"], "params": {"size": "3G"}}"#,
        )
        .plan()
        .expect("valid");
        assert_eq!(plans[0].agents, ["x", "y"]);
        assert_eq!(plans[0].params.clients, Some(2), "every agent by default");
        assert!(matches!(
            plans[0].source,
            SourcePlan::Generated { size, .. } if size == 3 << 30
        ));
    }

    #[test]
    fn streams_default_to_one_per_path() {
        let spec = spec(
            r#"{"source": {"paths": ["/a", "/b"]}, "target": {"kind": "null"}, "tests": ["read_parallel"]}"#,
        );
        assert_eq!(spec.plan().expect("valid")[0].params.streams, 2);
    }

    #[test]
    fn the_issue_example_expands_its_matrix() {
        let spec = spec(
            r#"{
              "name": "fs1+fs2 to scratch",
              "source": {"paths": ["/srv/fs1", "/srv/fs2"]},
              "target": {"kind": "dir", "path": "/scratch/backlab"},
              "tests": ["tape_write", "read_single", "read_parallel", "null_sink", "full_backup"],
              "params": {"buffers": 32, "block_size": "256K", "streams": 2, "direct": false,
                         "cold_cache": true, "fsync": true, "compress_ratio": 2.0,
                         "size": "1G", "duration_s": 60},
              "matrix": {"buffers": [8, 32], "block_size": ["64K", "256K"], "streams": [1, 2, 4]},
              "repeat": 1
            }"#,
        );
        let plans = spec.plan().expect("valid");
        assert_eq!(plans.len(), 2 * 2 * 3 * 5);
        assert!(plans.iter().any(|plan| plan.params.buffers == 8
            && plan.params.block_size == 64 << 10
            && plan.params.streams == 4));
        assert!(plans.iter().all(|plan| plan.params.size == Some(1 << 30)));
    }

    #[test]
    fn an_auto_duration_runs_time_based_until_steady_within_a_cap() {
        let auto = spec(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "tests": ["read_single"], "params": {"duration_s": "auto"}}"#,
        );
        let plans = auto.plan().expect("valid");
        let params = &plans[0].params;
        assert!(params.until_steady && params.time_based);
        assert_eq!(params.duration_s, Some(AUTO_MAX_DURATION_S));
        // The source is left to match: no compress_ratio was given.
        assert!(params.match_source);

        let seconds = spec(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "tests": ["read_single"], "params": {"duration_s": 5, "compress_ratio": 1.5}}"#,
        );
        let params = &seconds.plan().expect("valid")[0].params;
        assert!(!params.until_steady && !params.time_based && !params.match_source);
        assert_eq!(params.duration_s, Some(5.0));
        assert!(
            serde_json::from_str::<CampaignSpec>(
                r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                    "params": {"duration_s": "forever"}}"#
            )
            .is_err()
        );
    }

    #[test]
    fn every_bad_field_is_reported() {
        let spec = spec(
            r#"{"source": {"paths": []}, "target": {"kind": "dir"},
                "tests": ["tape_write", "fast_test"],
                "params": {"buffers": 0, "block_size": "1000", "direct": true, "size": "1Q",
                           "compress_ratio": 0.5, "duration_s": -1},
                "repeat": 0}"#,
        );
        let errors = spec.plan().expect_err("invalid");
        let fields: Vec<&str> = errors.0.keys().map(String::as_str).collect();
        for expected in [
            "source.paths",
            "target.path",
            "tests[1]",
            "params.buffers",
            "params.block_size",
            "params.size",
            "params.compress_ratio",
            "params.duration_s",
            "repeat",
        ] {
            assert!(
                fields.contains(&expected),
                "{expected} missing from {fields:?}"
            );
        }
    }

    #[test]
    fn direct_needs_aligned_blocks() {
        let spec = spec(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "params": {"block_size": "6000", "direct": true}}"#,
        );
        let errors = spec.plan().expect_err("invalid");
        assert_eq!(
            errors.0.get("params.block_size").map(String::as_str),
            Some("must be a multiple of 4096 when direct is true (got 6000)")
        );
    }

    #[test]
    fn too_many_runs_and_too_large_rings_are_refused() {
        let spec = spec(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "params": {"buffers": 1024, "block_size": "64M"},
                "matrix": {"streams": [1,2,3,4,5,6,7,8,9,10]}, "repeat": 100}"#,
        );
        let errors = spec.plan().expect_err("invalid");
        assert!(errors.0["matrix"].contains("5000 runs"));
        assert!(errors.0["params"].contains("at most 4G"));
    }

    #[test]
    fn oversized_lists_are_refused_before_anything_is_built() {
        let ones = vec!["1"; 20_000].join(",");
        let bomb = spec(&format!(
            r#"{{"source": {{"paths": ["/a"]}}, "target": {{"kind": "null"}},
                "matrix": {{"buffers": [{ones}], "streams": [{ones}]}}}}"#
        ));
        let started = std::time::Instant::now();
        let errors = bomb.plan().expect_err("invalid");
        assert!(errors.0["matrix.buffers"].contains("20000 values; at most 64"));
        assert!(errors.0["matrix.streams"].contains("20000 values; at most 64"));
        assert_eq!(errors.0.len(), 2, "{errors}");
        // Arithmetic only: far below what building 400 million points would take.
        assert!(started.elapsed() < std::time::Duration::from_secs(5));

        let paths = vec![r#""demo""#; 10_000].join(",");
        let many = spec(&format!(
            r#"{{"source": {{"paths": [{paths}]}}, "target": {{"kind": "null"}}}}"#
        ));
        let errors = many.check_bounds();
        assert!(errors.0["source.paths"].contains("10000 paths; at most 256"));
    }

    #[test]
    fn the_run_count_is_known_before_the_runs_are_built() {
        let wide = r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
            "matrix": {"buffers": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],
                       "streams": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}"#;
        let wide = spec(wide);
        assert_eq!(wide.run_count(), 16 * 16 * 5);
        let errors = wide.plan().expect_err("too many runs");
        assert!(errors.0["matrix"].contains("1280 runs"), "{errors}");
        for json in [
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "repeat": 3}"#,
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"},
                "tests": ["read_single", "network_backup", "null_sink"],
                "matrix": {"buffers": [8, 16], "clients": [2, 3, 2]}, "repeat": 2}"#,
            r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
                "tests": ["network_backup"], "matrix": {"clients": [1, 2, 4]}}"#,
        ] {
            let campaign = spec(json);
            let plans = campaign.plan().expect("valid");
            assert_eq!(campaign.run_count(), plans.len() as u64, "{json}");
        }
    }

    #[test]
    fn a_path_listed_twice_is_named() {
        let errors =
            spec(r#"{"source": {"paths": ["/a", "/b", "/a"]}, "target": {"kind": "null"}}"#)
                .plan()
                .expect_err("invalid");
        assert!(
            errors.0["source.paths[2]"].contains("source.paths[0]"),
            "{errors}"
        );
    }

    #[test]
    fn a_run_plan_is_rebuilt_from_its_placement() {
        let campaign = spec(
            r#"{"source": {"agents": ["alpha"]}, "target": {"kind": "null"},
                "tests": ["network_backup"], "params": {"clients": 1}}"#,
        );
        let plans = campaign.plan().expect("valid");
        let placement = Placement::of(&plans).expect("runs");
        let json = serde_json::to_string(&placement).expect("encode");
        let placement: Placement = serde_json::from_str(&json).expect("decode");
        for plan in &plans {
            assert_eq!(
                &RunPlan::at(plan.test, plan.params.clone(), &placement),
                plan
            );
        }
    }

    #[test]
    fn unknown_fields_and_bad_types_name_their_path() {
        let errors = parse_json(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "params": {"bufers": 3}}"#,
        )
        .expect_err("unknown field");
        assert!(errors.0.contains_key("params.bufers"), "{errors}");
        let errors = parse_json(
            r#"{"source": {"paths": ["/a"]}, "target": {"kind": "null"}, "params": {"buffers": "x"}}"#,
        )
        .expect_err("bad type");
        assert!(errors.0.contains_key("params.buffers"), "{errors}");
        let errors = parse_json(r#"{"source": {"paths": ["/a"]}, "target": {"kind": "floppy"}}"#)
            .expect_err("bad kind");
        assert!(errors.0.contains_key("target.kind"), "{errors}");
    }

    #[test]
    fn tape_targets_take_a_known_model_and_sane_overrides() {
        let plan = |target: &str| {
            let text =
                format!(r#"{{"source": {{"generated": {{"size": "1G"}}}}, "target": {target}}}"#);
            parse_json(&text).expect("parses").plan()
        };
        let plans =
            plan(r#"{"kind": "tape", "model": "Ultrium-960", "drives": 2, "buffer_mb": 8}"#)
                .expect("valid");
        let TargetPlan::Tape(config) = &plans[0].target else {
            panic!("not tape");
        };
        assert_eq!((config.model.as_str(), config.drives), ("LTO-3", 2));
        assert_eq!((config.native_mb_s, config.min_mb_s), (80.0, 40.0));
        assert_eq!(config.buffer_bytes, 8_000_000);
        let errors = plan(
            r#"{"kind": "tape", "model": "lto-10", "drives": 0, "path": "/dev/st0",
                "min_mb_s": 500, "max_compression": 20, "capacity": "0"}"#,
        )
        .expect_err("invalid");
        for field in [
            "target.model",
            "target.drives",
            "target.path",
            "target.max_compression",
            "target.capacity",
        ] {
            assert!(errors.0.contains_key(field), "{field}: {errors}");
        }
        let errors =
            plan(r#"{"kind": "tape", "model": "lto-4", "min_mb_s": 500}"#).expect_err("min");
        assert!(errors.0["target.min_mb_s"].contains("native"), "{errors}");
        let errors = plan(r#"{"kind": "null", "model": "lto-4"}"#).expect_err("model on null");
        assert!(errors.0.contains_key("target"), "{errors}");
    }
}
