//! Emulated LTO drives: their configuration and the catalogue of models.

use serde::{Deserialize, Serialize};

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
