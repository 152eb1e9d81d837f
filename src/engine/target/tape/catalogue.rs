//! Emulated LTO drives: the catalogue of models, and a drive's configuration resolved from a
//! model and the figures a campaign overrides, with every rule those figures must keep.

use serde::{Deserialize, Serialize};

use crate::field_errors::FieldErrors;
use crate::size::ByteSize;

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
    /// Seconds to load a cartridge until it is ready, and to locate a backup on it: what a
    /// restore spends before its first byte.
    #[serde(default = "default_load_s")]
    pub load_s: f64,
    #[serde(default = "default_locate_s")]
    pub locate_s: f64,
}

fn default_load_s() -> f64 {
    DEFAULT_LOAD_S
}

fn default_locate_s() -> f64 {
    DEFAULT_LOCATE_S
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
    /// Not published by the vendors for every generation: an assumption (see docs/targets.md,
    /// "Assumed figures").
    pub buffer_mb: f64,
}

/// The reposition (backhitch) time no vendor publishes: an estimate.
pub const DEFAULT_REPOSITION_S: f64 = 2.0;
/// Seconds from inserting a cartridge until it is ready (assumed; LTO drives quote 12–19 s).
pub const DEFAULT_LOAD_S: f64 = 15.0;
/// Seconds to locate a backup on a cartridge (assumed; LTO drives quote an average file
/// access time of 50–60 s).
pub const DEFAULT_LOCATE_S: f64 = 50.0;

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

/// A tape target's settings as a campaign gives them: a model, and any of its figures
/// overridden. Each field's comment and bounds are what the OpenAPI document says of it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TapeSettings {
    /// The drive model (`lto-3` … `lto-9`, `ultrium-960`); the document gives it the
    /// spec's pattern.
    pub model: Option<String>,
    /// Emulated tape: drives, one writer each.
    #[schema(minimum = 1, maximum = 16)]
    pub drives: Option<u32>,
    /// Emulated tape: native speed, overriding the model's.
    #[schema(minimum = 1.0, maximum = 100_000.0)]
    pub native_mb_s: Option<f64>,
    /// Emulated tape: the lowest speed-matching step, at most the native speed.
    #[schema(minimum = 0.1, maximum = 100_000.0)]
    pub min_mb_s: Option<f64>,
    /// Emulated tape: the drive's buffer in MB.
    #[schema(minimum = 1.0, maximum = 65_536.0)]
    pub buffer_mb: Option<f64>,
    /// Emulated tape: seconds one reposition (backhitch) takes.
    #[schema(minimum = 0.001, maximum = 60.0)]
    pub reposition_s: Option<f64>,
    /// Emulated tape: the best compression the drive achieves.
    #[schema(minimum = 1.0, maximum = 10.0)]
    pub max_compression: Option<f64>,
    /// Emulated tape: native bytes one cartridge holds; greater than 0.
    pub capacity: Option<ByteSize>,
    /// Emulated tape: seconds to load a cartridge, added to a restore's time (default 15).
    #[schema(minimum = 0.0, maximum = 3600.0)]
    pub load_s: Option<f64>,
    /// Emulated tape: seconds to locate a backup on the cartridge, added to a restore's time
    /// (default 50).
    #[schema(minimum = 0.0, maximum = 3600.0)]
    pub locate_s: Option<f64>,
}

/// A model's name as [`tape_model`] reads it, as a JSON Schema pattern: `lto-3` … `lto-9` or
/// `ultrium-960`, any case.
pub fn model_pattern() -> String {
    crate::size::spaced_pattern("(?:[Ll][Tt][Oo]-[3-9]|[Uu][Ll][Tt][Rr][Ii][Uu][Mm]-960)")
}

/// The `model` setting as the OpenAPI document describes it, with [`model_pattern`].
pub fn model_schema() -> utoipa::openapi::schema::ObjectBuilder {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(model_pattern()))
        .examples(["lto-4", "lto-9"])
        .description(Some(
            "Emulated tape: lto-3 … lto-9, or ultrium-960 (any case)",
        ))
}

/// Every model as a person chooses one: its id, and its name with its speed and compression.
pub fn model_choices() -> Vec<(&'static str, String)> {
    TAPE_MODELS
        .iter()
        .map(|model| {
            (
                model.id,
                format!(
                    "{} ({} MB/s native, {}:1)",
                    model.name, model.native_mb_s, model.max_compression
                ),
            )
        })
        .collect()
}

/// Most emulated drives one target may have.
pub const MAX_DRIVES: u32 = 16;
/// Slowest native speed a drive may be given, MB/s (the slowest LTO streams at 20).
pub const MIN_NATIVE_MB_S: f64 = 1.0;
/// Slowest lowest speed-match step, MB/s.
pub const MIN_STEP_MB_S: f64 = 0.1;
/// Smallest drive buffer, MB (LTO drives have 128 MB and more).
pub const MIN_BUFFER_MB: f64 = 1.0;
/// Shortest and longest backhitch, seconds (real drives take about 2 to 5).
pub const MIN_REPOSITION_S: f64 = 0.001;
pub const MAX_REPOSITION_S: f64 = 60.0;

impl TapeSettings {
    /// The drives' configuration, or `None` with every bad figure recorded in `errors` under
    /// `{prefix}.{field}`.
    pub fn resolve(&self, prefix: &str, errors: &mut FieldErrors) -> Option<TapeConfig> {
        let before = errors.0.len();
        let field = |name: &str| format!("{prefix}.{name}");
        let model = match self.model.as_deref() {
            None => {
                errors.add(field("model"), "is required with kind tape (lto-3 … lto-9)");
                None
            }
            Some(name) => {
                let found = tape_model(name);
                if found.is_none() {
                    let known: Vec<&str> = TAPE_MODELS.iter().map(|m| m.id).collect();
                    errors.add(
                        field("model"),
                        format!(
                            "unknown model '{name}' (known: {}, ultrium-960)",
                            known.join(", ")
                        ),
                    );
                }
                found
            }
        };
        let drives = self.drives.unwrap_or(1);
        if !(1..=MAX_DRIVES).contains(&drives) {
            errors.add(
                field("drives"),
                format!("must be between 1 and {MAX_DRIVES}"),
            );
        }
        // Lower bounds keep a drive able to take a run's data in its duration: an emulated
        // drive runs in real time, so a drive at a millionth of a MB/s would hold a run for days.
        let mut within = |name: &str, value: Option<f64>, min: f64, max: f64| {
            if let Some(value) = value
                && !(value.is_finite() && (min..=max).contains(&value))
            {
                errors.add(field(name), format!("must be between {min} and {max}"));
            }
        };
        within("native_mb_s", self.native_mb_s, MIN_NATIVE_MB_S, 100_000.0);
        within("min_mb_s", self.min_mb_s, MIN_STEP_MB_S, 100_000.0);
        within("buffer_mb", self.buffer_mb, MIN_BUFFER_MB, 65_536.0);
        within(
            "reposition_s",
            self.reposition_s,
            MIN_REPOSITION_S,
            MAX_REPOSITION_S,
        );
        for (name, value) in [("load_s", self.load_s), ("locate_s", self.locate_s)] {
            if let Some(value) = value
                && !(value.is_finite() && (0.0..=3600.0).contains(&value))
            {
                errors.add(field(name), "must be between 0 and 3600");
            }
        }
        if let Some(ratio) = self.max_compression
            && !(ratio.is_finite() && (1.0..=10.0).contains(&ratio))
        {
            errors.add(field("max_compression"), "must be between 1 and 10");
        }
        let capacity_bytes = self.capacity.as_ref().map(ByteSize::bytes);
        if capacity_bytes == Some(0) {
            errors.add(field("capacity"), "must be greater than 0");
        }
        let model = model?;
        let native = self.native_mb_s.unwrap_or(model.native_mb_s);
        let min = self.min_mb_s.unwrap_or(model.min_mb_s);
        if min > native {
            errors.add(
                field("min_mb_s"),
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
            buffer_bytes: (self.buffer_mb.unwrap_or(model.buffer_mb) * 1e6) as u64,
            reposition_s: self.reposition_s.unwrap_or(DEFAULT_REPOSITION_S),
            max_compression: self.max_compression.unwrap_or(model.max_compression),
            capacity_bytes: capacity_bytes.unwrap_or(model.capacity_bytes),
            load_s: self.load_s.unwrap_or(DEFAULT_LOAD_S),
            locate_s: self.locate_s.unwrap_or(DEFAULT_LOCATE_S),
        })
    }
}
