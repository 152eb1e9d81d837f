//! The new-campaign form: its fields, the presets that fill them, and the spec it stands for.
//! It is the one mapping: the page's script posts the form and shows the answer. A field's
//! text is read as a spec value in `values`.

mod values;

use std::collections::BTreeMap;

use std::path::PathBuf;

use serde_json::Value;

use crate::engine::target::{FieldInput, SettingsText, TargetKind, ToolRepository, TypedField};
use crate::engine::tool::definition::ParamDef;
use crate::engine::tool::definition::ParamValue;
use crate::engine::tool::{LifePlan, Tools};
use crate::field_errors::FieldErrors;
use crate::size::ByteSize;
use crate::spec::{
    CampaignSpec, GeneratedSpec, MatrixSpec, ParamsSpec, SearchSpec, SearchStrategy, SourceSpec,
    TargetSpec, TestKind, ToolRun,
};

use values::split_list;

/// The spec a posted form stands for, and the fields that could not be read into it.
pub struct FormSpec {
    /// The spec as JSON, as the API takes it.
    pub spec: Value,
    /// Problems by spec path (`params.buffers`), in plain words.
    pub errors: FieldErrors,
}

/// Presets offered above the form: id and label.
pub const PRESETS: [(&str, &str); 7] = [
    ("bottleneck", "Bottleneck determination"),
    ("tuning", "Buffer × block tuning"),
    ("direct", "Direct I/O check"),
    ("network", "Network backup, 6–8 clients"),
    ("storage", "Storage layout (seed 001)"),
    ("striped", "Striped volume model (seed 001)"),
    ("life", "A year of backups"),
];

/// The form's values as text, plus the errors to show next to them.
#[derive(Debug, Clone, Default)]
pub struct CampaignForm {
    pub preset: String,
    pub name: String,
    /// The lab host to run on; empty for the one answering.
    pub host: String,
    /// The series the campaign joins; empty for its spec's own.
    pub series: String,
    pub repeat: String,
    pub source_kind: String,
    pub source_paths: String,
    pub generated_size: String,
    pub target_kind: String,
    pub target_path: String,
    /// Every kind's settings as typed, by form field (`KIND_SETTING`: `tape_drives`); only
    /// the chosen kind's go into the spec.
    pub target_settings: BTreeMap<String, String>,
    pub tests: Vec<String>,
    pub buffers: String,
    pub block_size: String,
    pub streams: String,
    pub size: String,
    pub duration_s: String,
    pub compress_ratio: String,
    pub direct: bool,
    pub cold_cache: bool,
    pub fsync: bool,
    /// Run the whole duration, reading a small source again.
    pub time_based: bool,
    pub matrix_buffers: String,
    pub matrix_block_size: String,
    pub matrix_streams: String,
    /// Network backup: agent names (comma-separated; empty = the lab's loopback clients).
    pub agents: String,
    pub clients: String,
    pub link_mb_s: String,
    pub matrix_clients: String,
    pub matrix_part_size: String,
    pub matrix_concurrency: String,
    /// How the matrix is explored: `full` or `adaptive`, its budget of runs and its seed.
    pub search_strategy: String,
    pub search_budget_runs: String,
    pub search_seed: String,
    /// A backup's life (`tool_life`): nights, retention every, backups kept, checks every.
    pub life_nights: String,
    pub life_retention_every: String,
    pub life_keep: String,
    pub life_check_every: String,
    /// The backup tools the tool tests run, by name, in the form's order: none for the lab's
    /// own pipeline, one for its table, several for a comparison.
    pub tool: Vec<String>,
    /// Every tool's parameters as posted, by form field (`tool.<tool>.<parameter>`); only the
    /// chosen tool's go into the spec.
    pub tool_params: BTreeMap<String, String>,
    /// The tools this lab offers and how each parameter is entered: what the form shows, and
    /// how it reads a parameter's text (`offer_tools`).
    pub tools: Vec<ToolOffer>,
    /// The tools this lab knows and cannot run, and why: (name, reason).
    pub tools_missing: Vec<(String, String)>,
    /// Errors by form field name.
    pub errors: BTreeMap<String, String>,
}

/// A backup tool the form offers: its name, the version its programs printed, and its
/// parameters.
#[derive(Debug, Clone)]
pub struct ToolOffer {
    pub name: String,
    pub version: String,
    pub params: Vec<ToolParamOffer>,
    /// The targets it can write into, said beside the choice: a repository tool needs a
    /// directory (or a bucket, when it can keep one there).
    pub targets: String,
}

/// A kind of target the form offers: what it shows of the kind, and what choosing it shows
/// of the rest of the form.
#[derive(Debug, Clone)]
pub struct KindOffer {
    /// What a spec calls it: its radio button's value and its fields' class (`for-ID`).
    pub id: &'static str,
    /// What a person choosing it reads.
    pub label: &'static str,
    /// Choosing it shows the path field.
    pub takes_path: bool,
    /// Choosing it shows the matrix's object-store sweeps (part sizes, parts in flight).
    pub object_store: bool,
    /// Its settings, shown when it is chosen.
    pub fields: Vec<SettingOffer>,
}

/// One setting of an offered kind, as the form shows it.
#[derive(Debug, Clone)]
pub struct SettingOffer {
    /// Its form field: `KIND_SETTING`.
    pub name: String,
    /// Its spec path: `target.SETTING`.
    pub path: String,
    /// What the field says it is.
    pub label: &'static str,
    /// The keyboard a phone shows for it: `numeric`, `decimal`, or none.
    pub inputmode: &'static str,
    /// Its values and their labels, for a setting chosen from a list; empty for one typed in.
    pub choices: Vec<(&'static str, String)>,
}

/// The kinds that take a path, by their labels: what the path field says it is for.
pub fn path_kinds() -> String {
    listed(
        TargetKind::all()
            .filter(|kind| kind.facts().takes_path)
            .map(|kind| kind.facts().label),
    )
}

/// The kinds a repository tool can keep its repository in, by their labels (a bucket only
/// for a tool that can use one).
fn repository_kinds(in_bucket: bool) -> String {
    let kinds = TargetKind::all().filter(|kind| match kind.facts().tool_repository {
        ToolRepository::InDirectory => true,
        ToolRepository::InBucket => in_bucket,
        ToolRepository::Nowhere => false,
    });
    format!("a {}", listed(kinds.map(|kind| kind.facts().label)))
}

/// Words as a list reads: `a, b or c`.
fn listed<'a>(words: impl Iterator<Item = &'a str>) -> String {
    let words: Vec<&str> = words.collect();
    match words.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Every kind a campaign may name, as the form offers them.
pub fn kind_offers() -> Vec<KindOffer> {
    TargetKind::all()
        .map(|kind| KindOffer {
            id: kind.id(),
            label: kind.facts().label,
            takes_path: kind.facts().takes_path,
            object_store: kind.facts().object_store,
            fields: kind
                .as_kind()
                .typed_fields()
                .iter()
                .map(|field| SettingOffer {
                    name: field_name(kind, field),
                    path: format!("target.{}", field.setting),
                    label: field.label,
                    inputmode: match field.input {
                        FieldInput::Count => "numeric",
                        FieldInput::Number => "decimal",
                        FieldInput::Size | FieldInput::Text | FieldInput::Choice(_) => "",
                    },
                    choices: match field.input {
                        FieldInput::Choice(choices) => choices(),
                        _ => Vec::new(),
                    },
                })
                .collect(),
        })
        .collect()
}

/// One parameter of an offered tool, as the form shows it.
#[derive(Debug, Clone)]
pub struct ToolParamOffer {
    pub name: String,
    /// Its form field: `tool.<tool>.<parameter>`.
    pub field: String,
    /// What it does, in the definition's words.
    pub help: String,
    /// Its bounds and default in a few words (`4–128, default 16`).
    pub rule: String,
    pub input: ParamInput,
}

/// How a parameter is entered: a number within its bounds, or one of its words.
#[derive(Debug, Clone)]
pub enum ParamInput {
    Integer {
        min: i64,
        max: i64,
        default: i64,
    },
    Choice {
        values: Vec<String>,
        default: String,
    },
}

impl ToolParamOffer {
    /// The value a campaign that leaves it alone gets, as the form writes it.
    pub fn default_text(&self) -> String {
        match &self.input {
            ParamInput::Integer { default, .. } => default.to_string(),
            ParamInput::Choice { default, .. } => default.clone(),
        }
    }
}

impl CampaignForm {
    /// The bottleneck determination, as the form opens: the seeds' four tests on the demo
    /// data into an emulated LTO-4, every field the other presets change filled in.
    fn bottleneck() -> Self {
        Self {
            preset: "bottleneck".into(),
            name: "Bottleneck determination".into(),
            // Three repeats give every figure a spread, so a comparison can tell change from
            // noise.
            repeat: "3".into(),
            source_kind: "paths".into(),
            source_paths: "demo".into(),
            generated_size: "1G".into(),
            target_kind: "tape".into(),
            target_path: String::new(),
            target_settings: TargetKind::all()
                .flat_map(|kind| {
                    kind.as_kind()
                        .typed_fields()
                        .iter()
                        .map(move |field| (field_name(kind, field), field.default.to_string()))
                })
                .collect(),
            tests: TestKind::BOTTLENECK
                .iter()
                .map(|t| t.id().to_string())
                .collect(),
            buffers: "32".into(),
            block_size: "256K".into(),
            streams: "4".into(),
            size: String::new(),
            // The defaults every spec gets: a run of the source's files is time-based and
            // ends once steady (ParamsSpec::settle).
            duration_s: "auto".into(),
            compress_ratio: String::new(),
            direct: false,
            cold_cache: true,
            fsync: true,
            time_based: true,
            ..Self::default()
        }
    }

    /// The form filled by a preset (an unknown preset gives the bottleneck one; the page
    /// says so).
    pub fn preset(id: &str) -> Self {
        let mut form = Self::bottleneck();
        match id {
            "tuning" => {
                form.preset = "tuning".into();
                form.name = "Buffer × block tuning".into();
                // The target write at every point too, so the verdict can say what caps the
                // backup; two repeats give each point the spread a best point must beat.
                form.tests = vec!["tape_write".into(), "full_backup".into()];
                form.repeat = "2".into();
                form.duration_s = "5".into();
                form.matrix_buffers = "8, 16, 32".into();
                form.matrix_block_size = "64K, 128K, 256K".into();
                form.matrix_streams = "1, 2, 4".into();
            }
            "direct" => {
                form.preset = "direct".into();
                // Direct I/O is about a real disk: the data dir.
                form.target_kind = "dir".into();
                form.target_path = ".".into();
                form.name = "Direct I/O check".into();
                form.tests = vec!["tape_write".into(), "read_single".into()];
                form.direct = true;
                form.buffers = "16".into();
                form.block_size = "1M".into();
            }
            "storage" => {
                // Seed 001: transfer size against the volume's stripe, with direct I/O as
                // lmdd measures it; the sweep names the best block size, the report the
                // volume's geometry.
                form.preset = "storage".into();
                form.name = "Storage layout (seed 001)".into();
                form.target_kind = "dir".into();
                form.target_path = ".".into();
                form.tests = vec!["tape_write".into(), "read_single".into()];
                form.direct = true;
                form.streams = "1".into();
                form.buffers = "4".into();
                form.duration_s = "10".into();
                form.matrix_block_size = "64K, 128K, 256K, 512K, 1M, 2M, 4M, 8M".into();
            }
            "striped" => {
                // Seed 001's example volume, emulated: ten 5 MB/s disks with 64 KiB stripe
                // units; the block-size sweep draws how the rate climbs until a request spans
                // the whole 640 KiB stripe.
                form.preset = "striped".into();
                form.name = "Striped volume model (seed 001)".into();
                form.repeat = "1".into();
                form.target_kind = "striped".into();
                form.source_kind = "generated".into();
                form.source_paths = String::new();
                form.tests = vec!["tape_write".into()];
                form.streams = "1".into();
                form.buffers = "8".into();
                // A 3 s run leaves its steady window a sample short now and then (too_short):
                // 5 s gives every point a valid figure.
                form.duration_s = "5".into();
                form.matrix_block_size = "64K, 128K, 256K, 320K, 512K, 640K, 1280K, 2560K".into();
            }
            "network" => {
                // Seed 000: six to eight clients, two streams each, into two LTO-4 drives.
                form.preset = "network".into();
                form.name = "Network backup, 6–8 clients".into();
                form.source_kind = "generated".into();
                form.source_paths = String::new();
                form.generated_size = "2G".into();
                form.target_settings
                    .insert("tape_drives".into(), "2".into());
                form.tests = vec!["network_backup".into()];
                form.streams = "2".into();
                form.matrix_clients = "6, 7, 8".into();
                form.matrix_buffers = "16, 32".into();
                form.matrix_block_size = "128K, 256K".into();
            }
            "life" => {
                // A year of nightly restic backups of the demo data into the data dir, pruned
                // weekly keeping a month, checked quarterly and at the end.
                form.preset = "life".into();
                form.name = "A year of backups".into();
                form.repeat = "1".into();
                form.target_kind = "dir".into();
                form.target_path = ".".into();
                form.tool = vec!["restic".into()];
                form.tests = vec![TestKind::ToolLife.id().into()];
                form.life_nights = "365".into();
                form.life_retention_every = "7".into();
                form.life_keep = "30".into();
                form.life_check_every = "90".into();
            }
            _ => {}
        }
        form
    }

    /// The form as posted (`application/x-www-form-urlencoded`, repeated `tests` keys).
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut form = Self::default();
        for (key, value) in pairs {
            let value = value.clone();
            match key.as_str() {
                "preset" => form.preset = value,
                "name" => form.name = value,
                "host" => form.host = value,
                "series" => form.series = value,
                "repeat" => form.repeat = value,
                "source_kind" => form.source_kind = value,
                "source_paths" => form.source_paths = value,
                "generated_size" => form.generated_size = value,
                "target_kind" => form.target_kind = value,
                "target_path" => form.target_path = value,
                "tests" => form.tests.push(value),
                "buffers" => form.buffers = value,
                "block_size" => form.block_size = value,
                "streams" => form.streams = value,
                "size" => form.size = value,
                "duration_s" => form.duration_s = value,
                "compress_ratio" => form.compress_ratio = value,
                "direct" => form.direct = true,
                "cold_cache" => form.cold_cache = true,
                "time_based" => form.time_based = true,
                "fsync" => form.fsync = true,
                "matrix_buffers" => form.matrix_buffers = value,
                "matrix_block_size" => form.matrix_block_size = value,
                "matrix_streams" => form.matrix_streams = value,
                "agents" => form.agents = value,
                "clients" => form.clients = value,
                "link_mb_s" => form.link_mb_s = value,
                "matrix_clients" => form.matrix_clients = value,
                "matrix_part_size" => form.matrix_part_size = value,
                "matrix_concurrency" => form.matrix_concurrency = value,
                "search_strategy" => form.search_strategy = value,
                "search_budget_runs" => form.search_budget_runs = value,
                "search_seed" => form.search_seed = value,
                "life_nights" => form.life_nights = value,
                "life_retention_every" => form.life_retention_every = value,
                "life_keep" => form.life_keep = value,
                "life_check_every" => form.life_check_every = value,
                "tool" => {
                    let name = value.trim();
                    if !name.is_empty() && !form.tool.iter().any(|chosen| chosen == name) {
                        form.tool.push(name.to_string());
                    }
                }
                _ => {
                    if key.starts_with("tool.") {
                        form.tool_params.insert(key.clone(), value);
                    } else if target_field(key).is_some() {
                        form.target_settings.insert(key.clone(), value);
                    }
                }
            }
        }
        form
    }

    /// The campaign spec the form stands for, built as the API's own spec types and handed on
    /// as the JSON the API takes, and what in the form cannot be part of one (a count that is
    /// not a whole number, a size that is not a size), by spec path, in plain words. A field
    /// that cannot be read is left to its default (or a stand-in), so that the spec's own
    /// checks still run and one answer names every bad field.
    pub fn to_spec(&self) -> FormSpec {
        let mut errors = FieldErrors::default();
        let source = self.source_spec(&mut errors);
        let target = self.target_spec(&mut errors);
        let mut tools: Vec<ToolRun> = self
            .tool
            .iter()
            .map(|name| self.tool_run(name, &mut errors))
            .collect();
        let compared = (tools.len() > 1).then(|| std::mem::take(&mut tools));
        let params = self.params_spec(&mut errors);
        let mut matrix = self.matrix_spec(&mut errors);
        if let Some(compared) = compared {
            matrix.get_or_insert_with(MatrixSpec::default).tool = Some(compared);
        }
        let repeat = values::read_count(&self.repeat, "repeat", &mut errors).unwrap_or(1);
        let spec = CampaignSpec {
            name: self.name.trim().to_string(),
            host: given(&self.host),
            series: given(&self.series),
            source,
            target,
            tests: self.tests.clone(),
            params,
            matrix,
            repeat,
            tool: tools.pop(),
            life: self.life_plan(&mut errors),
            forecast: None,
        };
        FormSpec {
            spec: serde_json::to_value(&spec).unwrap_or_default(),
            errors,
        }
    }

    /// The spec's `life`, for a campaign that runs `tool_life`: each field left empty at its
    /// default.
    fn life_plan(&self, errors: &mut FieldErrors) -> Option<LifePlan> {
        if !self
            .tests
            .iter()
            .any(|test| test == TestKind::ToolLife.id())
        {
            return None;
        }
        let defaults = LifePlan::default();
        Some(LifePlan {
            nights: values::read_count(&self.life_nights, "life.nights", errors)
                .unwrap_or(defaults.nights),
            retention_every: values::read_count(
                &self.life_retention_every,
                "life.retention_every",
                errors,
            )
            .unwrap_or(defaults.retention_every),
            keep: values::read_count(&self.life_keep, "life.keep", errors).unwrap_or(defaults.keep),
            check_every: values::read_count(&self.life_check_every, "life.check_every", errors),
            change: defaults.change,
        })
    }

    /// The spec's `source`: generated data of a size, or paths one per line, and the agents
    /// that send it.
    fn source_spec(&self, errors: &mut FieldErrors) -> SourceSpec {
        let generated = self.source_kind == "generated";
        let mut source = if generated {
            let size = values::read_size(&self.generated_size, "source.generated.size", errors)
                .unwrap_or_else(|| ByteSize::parse("1G").unwrap_or(ByteSize::new(1 << 30)));
            SourceSpec {
                generated: Some(GeneratedSpec::of_size(size)),
                ..SourceSpec::default()
            }
        } else {
            let paths = self
                .source_paths
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(PathBuf::from)
                .collect();
            SourceSpec {
                paths: Some(paths),
                ..SourceSpec::default()
            }
        };
        let agents: Vec<String> = split_list(&self.agents).map(str::to_string).collect();
        if !agents.is_empty() {
            source.agents = Some(agents);
            // Agents alone send generated data; paths are read on the agents' hosts.
            if generated {
                source.generated = None;
            }
        }
        source
    }

    /// The spec's `target`: its kind, its path when it takes one, and the settings the kind
    /// reads from its own fields, into its own settings type. A kind this lab does not know
    /// is named as the problem, and the checks run on no target at all (`null`).
    fn target_spec(&self, errors: &mut FieldErrors) -> TargetSpec {
        let Some(kind) = TargetKind::from_id(&self.target_kind) else {
            let kinds: Vec<&str> = TargetKind::all().map(TargetKind::id).collect();
            errors.add(
                "target.kind",
                format!(
                    "'{}' is not a kind of target (one of {})",
                    self.target_kind,
                    kinds.join(", ")
                ),
            );
            return TargetSpec::new(TargetKind::discard(), None);
        };
        let path = (kind.facts().takes_path && !self.target_path.trim().is_empty())
            .then(|| PathBuf::from(self.target_path.trim()));
        let mut text = KindText {
            form: self,
            kind,
            errors,
        };
        TargetSpec {
            kind,
            path,
            settings: kind.as_kind().settings_from_text(&mut text),
        }
    }

    /// A kind's setting as typed, else the empty text.
    pub fn target_value(&self, field: &str) -> &str {
        self.target_settings.get(field).map_or("", String::as_str)
    }

    /// The spec's `params`: every checkbox both ways, every filled field read; one left empty
    /// or unreadable keeps its default (the target test then matches the source's
    /// compressibility).
    fn params_spec(&self, errors: &mut FieldErrors) -> ParamsSpec {
        let defaults = ParamsSpec::default();
        ParamsSpec {
            buffers: values::read_count(&self.buffers, "params.buffers", errors)
                .unwrap_or(defaults.buffers),
            block_size: values::read_size(&self.block_size, "params.block_size", errors)
                .unwrap_or(defaults.block_size),
            direct: self.direct,
            cold_cache: self.cold_cache,
            // A checkbox is posted only when ticked: the form says both ways.
            time_based: Some(self.time_based),
            fsync: self.fsync,
            streams: values::read_count(&self.streams, "params.streams", errors),
            size: values::read_size(&self.size, "params.size", errors),
            duration_s: values::read_duration(&self.duration_s, "params.duration_s", errors),
            compress_ratio: values::read_number(
                &self.compress_ratio,
                "params.compress_ratio",
                errors,
            ),
            clients: values::read_count(&self.clients, "params.clients", errors),
            link_mb_s: values::read_number(&self.link_mb_s, "params.link_mb_s", errors),
            source_rate_mb_s: defaults.source_rate_mb_s,
        }
    }

    /// The spec's `matrix`, with its adaptive search when one is chosen; `None` when no list
    /// is filled in.
    fn matrix_spec(&self, errors: &mut FieldErrors) -> Option<MatrixSpec> {
        fn listed<T>(
            text: &str,
            path: &str,
            errors: &mut FieldErrors,
            read: fn(&str, &str, &mut FieldErrors) -> Option<T>,
        ) -> Option<Vec<T>> {
            let values: Vec<T> = split_list(text)
                .filter_map(|item| read(item, path, errors))
                .collect();
            (!values.is_empty()).then_some(values)
        }
        let mut matrix = MatrixSpec {
            buffers: listed(
                &self.matrix_buffers,
                "matrix.buffers",
                errors,
                values::read_count,
            ),
            block_size: listed(
                &self.matrix_block_size,
                "matrix.block_size",
                errors,
                values::read_size,
            ),
            streams: listed(
                &self.matrix_streams,
                "matrix.streams",
                errors,
                values::read_count,
            ),
            clients: listed(
                &self.matrix_clients,
                "matrix.clients",
                errors,
                values::read_count,
            ),
            part_size: listed(
                &self.matrix_part_size,
                "matrix.part_size",
                errors,
                values::read_size,
            ),
            concurrency: listed(
                &self.matrix_concurrency,
                "matrix.concurrency",
                errors,
                values::read_count,
            ),
            tool: None,
            search: None,
        };
        if matrix == MatrixSpec::default() {
            return None;
        }
        if self.search_strategy == "adaptive" {
            matrix.search = Some(SearchSpec {
                strategy: SearchStrategy::Adaptive,
                budget_runs: values::read_count(
                    &self.search_budget_runs,
                    "matrix.search.budget_runs",
                    errors,
                ),
                seed: values::read_count(&self.search_seed, "matrix.search.seed", errors)
                    .map(u64::from),
            });
        }
        Some(matrix)
    }

    /// A chosen tool as the spec names it: its name, and each parameter whose value is not
    /// its default (a whole number for a number, the word for a choice).
    fn tool_run(&self, name: &str, errors: &mut FieldErrors) -> ToolRun {
        let mut params = BTreeMap::new();
        let offer = self.tools.iter().find(|tool| tool.name == name);
        for param in offer.map(|tool| tool.params.as_slice()).unwrap_or_default() {
            let text = self
                .tool_params
                .get(&param.field)
                .map_or("", |text| text.trim());
            if text.is_empty() || text == param.default_text() {
                continue;
            }
            let path = format!("tool.params.{}", param.name);
            match &param.input {
                ParamInput::Integer { min, max, default } => match text.parse::<i64>() {
                    Ok(value) => {
                        params.insert(param.name.clone(), ParamValue::Integer(value));
                    }
                    Err(_) => errors.add(
                        path,
                        format!(
                            "'{text}' is not a whole number from {min} to {max} \
                             (write e.g. {default})"
                        ),
                    ),
                },
                ParamInput::Choice { .. } => {
                    params.insert(param.name.clone(), ParamValue::Word(text.to_string()));
                }
            }
        }
        ToolRun {
            name: name.to_string(),
            params,
        }
    }

    /// Whether the form has `name` among its chosen tools.
    pub fn chose_tool(&self, name: &str) -> bool {
        self.tool.iter().any(|chosen| chosen == name)
    }

    /// The tools this lab offers, for the form to show and read.
    pub fn offer_tools(&mut self, tools: &Tools) {
        self.tools = tools
            .available
            .iter()
            .map(|tool| {
                let name = &tool.definition.name;
                ToolOffer {
                    name: name.clone(),
                    version: tool.version.clone(),
                    targets: match tool.definition.shape {
                        crate::engine::tool::ToolShape::Repository => format!(
                            "keeps a repository: {}",
                            repository_kinds(tool.definition.s3.is_some())
                        ),
                        crate::engine::tool::ToolShape::Stream => {
                            "writes a stream: any target".to_string()
                        }
                    },
                    params: tool
                        .definition
                        .params
                        .iter()
                        .map(|param| ToolParamOffer {
                            name: param.name().to_string(),
                            field: format!("tool.{name}.{}", param.name()),
                            help: param.help().to_string(),
                            rule: param.rule(),
                            input: match param {
                                ParamDef::Integer {
                                    min, max, default, ..
                                } => ParamInput::Integer {
                                    min: *min,
                                    max: *max,
                                    default: *default,
                                },
                                ParamDef::Choice {
                                    values, default, ..
                                } => ParamInput::Choice {
                                    values: values.iter().map(|v| v.value.clone()).collect(),
                                    default: default.clone(),
                                },
                            },
                        })
                        .collect(),
                }
            })
            .collect();
        self.tools_missing = tools
            .missing
            .iter()
            .map(|tool| (tool.name.clone(), tool.reason.clone()))
            .collect();
    }

    /// A tool parameter's text as posted, else its default.
    pub fn tool_value(&self, param: &ToolParamOffer) -> String {
        self.tool_params
            .get(&param.field)
            .cloned()
            .unwrap_or_else(|| param.default_text())
    }

    /// Puts each spec-path error next to the form field it belongs to.
    pub fn set_errors(&mut self, fields: &BTreeMap<String, String>) {
        for (path, message) in fields {
            // A tool's parameter is a field of the chosen tool's own (`tool.params.X` for
            // one tool, `matrix.tool[N].params.X` for the Nth of several).
            let indexed = path.strip_prefix("matrix.tool[").and_then(|rest| {
                let (index, rest) = rest.split_once(']')?;
                let name = self.tool.get(index.parse::<usize>().ok()?)?;
                Some((name.as_str(), rest.strip_prefix(".params.")?))
            });
            let one = path
                .strip_prefix("tool.params.")
                .and_then(|param| Some((self.tool.first()?.as_str(), param)));
            let field = match indexed.or(one) {
                Some((tool, param)) => format!("tool.{tool}.{param}"),
                None => self
                    .setting_field(path)
                    .unwrap_or_else(|| form_field(path).to_string()),
            };
            self.errors
                .entry(field)
                .and_modify(|existing| {
                    existing.push_str("; ");
                    existing.push_str(message);
                })
                .or_insert_with(|| message.clone());
        }
    }

    /// The form field of a kind's setting a spec path names (`target.drives`): the chosen
    /// kind's, else the first kind's that has it.
    fn setting_field(&self, path: &str) -> Option<String> {
        let setting = path.strip_prefix("target.")?;
        let setting = setting.split(['.', '[']).next()?;
        let chosen = TargetKind::from_id(&self.target_kind);
        chosen
            .into_iter()
            .chain(TargetKind::all())
            .find_map(|kind| {
                let field = kind
                    .as_kind()
                    .typed_fields()
                    .iter()
                    .find(|field| field.setting == setting)?;
                Some(field_name(kind, field))
            })
    }

    /// The error shown next to a field, or nothing.
    pub fn error(&self, field: &str) -> &str {
        self.errors.get(field).map_or("", String::as_str)
    }

    /// ` invalid` for a field with an error: the class that outlines it, with or without
    /// JavaScript.
    pub fn invalid(&self, field: &str) -> &'static str {
        if self.errors.contains_key(field) {
            " invalid"
        } else {
            ""
        }
    }

    /// Whether a test's box is ticked.
    pub fn has_test(&self, test: &str) -> bool {
        self.tests.iter().any(|t| t == test)
    }
}

/// A field's text, trimmed, when something was typed.
fn given(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// A kind's setting's form field: `KIND_SETTING` (`tape_drives`, `s3_part_size`).
pub fn field_name(kind: TargetKind, field: &TypedField) -> String {
    format!("{}_{}", kind.id(), field.setting)
}

/// The kind and setting a form field is of, when it is a kind's setting.
fn target_field(name: &str) -> Option<(TargetKind, &'static TypedField)> {
    TargetKind::all().find_map(|kind| {
        let setting = name.strip_prefix(kind.id())?.strip_prefix('_')?;
        let field = kind
            .as_kind()
            .typed_fields()
            .iter()
            .find(|field| field.setting == setting)?;
        Some((kind, field))
    })
}

/// The chosen kind's settings as the form holds them, read into the kind's settings type; a
/// text that cannot be read is recorded under `target.SETTING` in the form's words.
struct KindText<'a> {
    form: &'a CampaignForm,
    kind: TargetKind,
    errors: &'a mut FieldErrors,
}

impl<'a> KindText<'a> {
    /// The setting's text as typed, and its spec path.
    fn typed(&self, setting: &str) -> (&'a str, String) {
        let form: &'a CampaignForm = self.form;
        let field = format!("{}_{setting}", self.kind.id());
        (form.target_value(&field), format!("target.{setting}"))
    }
}

impl SettingsText for KindText<'_> {
    fn count(&mut self, setting: &str) -> Option<u32> {
        let (text, path) = self.typed(setting);
        values::read_count(text, &path, self.errors)
    }

    fn number(&mut self, setting: &str) -> Option<f64> {
        let (text, path) = self.typed(setting);
        values::read_number(text, &path, self.errors)
    }

    fn size(&mut self, setting: &str) -> Option<ByteSize> {
        let (text, path) = self.typed(setting);
        values::read_size(text, &path, self.errors)
    }

    fn text(&mut self, setting: &str) -> Option<String> {
        Some(self.typed(setting).0.trim().to_string())
    }
}

/// The form field a spec path belongs to.
fn form_field(path: &str) -> &'static str {
    let head = |prefix: &str| {
        path == prefix
            || path.starts_with(&format!("{prefix}."))
            || path.starts_with(&format!("{prefix}["))
    };
    if head("source.paths") {
        "source_paths"
    } else if head("source.generated") {
        "generated_size"
    } else if head("source.agents") {
        "agents"
    } else if head("source") {
        "source_paths"
    } else if head("target.path") {
        "target_path"
    } else if head("target") {
        "target_kind"
    } else if head("tests") {
        "tests"
    } else if head("tool") {
        "tool"
    } else if head("life.nights") {
        "life_nights"
    } else if head("life.retention_every") {
        "life_retention_every"
    } else if head("life.keep") {
        "life_keep"
    } else if head("life.check_every") {
        "life_check_every"
    } else if head("life") {
        "tests"
    } else if head("name") {
        "name"
    } else if head("host") {
        "host"
    } else if head("series") {
        "series"
    } else if head("repeat") {
        "repeat"
    } else if head("matrix.buffers") {
        "matrix_buffers"
    } else if head("matrix.block_size") {
        "matrix_block_size"
    } else if head("matrix.streams") {
        "matrix_streams"
    } else if head("matrix.part_size") {
        "matrix_part_size"
    } else if head("matrix.concurrency") {
        "matrix_concurrency"
    } else if head("matrix.clients") {
        "matrix_clients"
    } else if head("matrix.search.budget_runs") {
        "search_budget_runs"
    } else if head("matrix.search.seed") {
        "search_seed"
    } else if head("matrix.search") {
        "search_strategy"
    } else if head("matrix") {
        "matrix"
    } else {
        for (prefix, field) in [
            ("params.buffers", "buffers"),
            ("params.block_size", "block_size"),
            ("params.streams", "streams"),
            ("params.size", "size"),
            ("params.duration_s", "duration_s"),
            ("params.compress_ratio", "compress_ratio"),
            ("params.clients", "clients"),
            ("params.link_mb_s", "link_mb_s"),
        ] {
            if head(prefix) {
                return field;
            }
        }
        "params"
    }
}

#[cfg(test)]
mod tests;
