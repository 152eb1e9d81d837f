//! Backup tools the lab runs as a user runs them (restic, borg, tar with a compressor, an
//! operator's own): their definitions, the tools this lab has, and what a run of one
//! measures. The lab measures a process it did not write from the outside: its wall time,
//! the bytes it read and wrote, its CPU and memory, and what it left in its repository.

pub mod builtin;
pub mod catalogue;
pub mod definition;
pub mod figures;
pub mod life;
pub mod pressure;
pub mod process;
pub mod run;
pub mod tree;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use catalogue::{AvailableTool, MissingTool, Tools};
pub use definition::{ParamValue, ToolDefinition, ToolShape};
pub use figures::ToolFigures;
pub use life::{LifeFigures, LifePlan};

/// The tool a run uses and the parameters the campaign set for it (the definition's defaults
/// fill in the rest when the run starts).
#[derive(
    Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash, utoipa::ToSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ToolRun {
    /// A tool of this lab (`GET /api/tools`).
    #[schema(pattern = "^[A-Za-z0-9_-]{1,40}$")]
    pub name: String,
    /// The tool's parameters by name, each within the bounds its definition gives.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = BTreeMap<String, ParamValueSchema>)]
    pub params: BTreeMap<String, ParamValue>,
}

/// A tool parameter's value: a whole number or a word.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub enum ParamValueSchema {
    Integer(i64),
    Word(String),
}

impl ToolRun {
    /// The tool and its parameters as a table row names them: `restic compression=max`.
    pub fn label(&self) -> String {
        let mut label = self.name.clone();
        for (name, value) in &self.params {
            label.push_str(&format!(" {name}={value}"));
        }
        label
    }
}
