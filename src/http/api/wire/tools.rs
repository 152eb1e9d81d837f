//! The backup tools a lab offers campaigns (`GET /api/tools`): those it can run, with the
//! version their programs printed and the parameters a spec may set, and those it knows and
//! cannot run, with the reason.

use serde::Serialize;
use utoipa::ToSchema;

use crate::engine::tool::definition::ParamDef;
use crate::engine::tool::{AvailableTool, MissingTool, ToolShape, Tools};

/// This lab's backup tools: what a spec's `tool` and `matrix.tool` may name.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ToolList)]
pub struct ToolsBody {
    /// The tools this lab can run, in the order it found them (built-in first).
    pub tools: Vec<ToolBody>,
    /// The tools it knows and cannot run here: a campaign naming one is refused with the
    /// reason given here.
    pub missing: Vec<MissingToolBody>,
}

/// A tool this lab can run.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Tool)]
pub struct ToolBody {
    /// What a spec's `tool.name` calls it.
    pub name: String,
    pub shape: ToolShape,
    /// The first line each of its programs printed when asked for its version, joined with
    /// "; " (it goes into each run's provenance too).
    pub version: String,
    /// `built-in`, or `tools file`: the operator's definitions (their path is the
    /// operator's, not shown).
    pub origin: String,
    /// The parameters a spec's `tool.params` may set, each typed and bounded; one left out
    /// takes its default.
    pub params: Vec<ToolParamBody>,
}

/// One parameter of a tool, as a spec sets it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schema(as = ToolParam)]
pub enum ToolParamBody {
    /// A whole number from `min` to `max`.
    Integer {
        name: String,
        min: i64,
        max: i64,
        default: i64,
        /// What it does, in the definition's words.
        help: String,
    },
    /// One of a few words.
    Choice {
        name: String,
        values: Vec<String>,
        default: String,
        /// What it does, in the definition's words.
        help: String,
    },
}

/// A tool the lab knows and cannot run.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = MissingTool)]
pub struct MissingToolBody {
    pub name: String,
    /// Why: a program not on the lab's PATH, or one that would not say its version.
    pub reason: String,
}

impl From<&Tools> for ToolsBody {
    fn from(tools: &Tools) -> Self {
        ToolsBody {
            tools: tools.available.iter().map(ToolBody::from).collect(),
            missing: tools.missing.iter().map(MissingToolBody::from).collect(),
        }
    }
}

impl From<&AvailableTool> for ToolBody {
    fn from(tool: &AvailableTool) -> Self {
        ToolBody {
            name: tool.definition.name.clone(),
            shape: tool.definition.shape,
            version: tool.version.clone(),
            origin: if tool.origin == "built-in" {
                tool.origin.clone()
            } else {
                "tools file".to_string()
            },
            params: tool
                .definition
                .params
                .iter()
                .map(ToolParamBody::from)
                .collect(),
        }
    }
}

impl From<&ParamDef> for ToolParamBody {
    fn from(param: &ParamDef) -> Self {
        match param {
            ParamDef::Integer {
                name,
                min,
                max,
                default,
                help,
            } => ToolParamBody::Integer {
                name: name.clone(),
                min: *min,
                max: *max,
                default: *default,
                help: help.clone(),
            },
            ParamDef::Choice {
                name,
                values,
                default,
                help,
            } => ToolParamBody::Choice {
                name: name.clone(),
                values: values.iter().map(|choice| choice.value.clone()).collect(),
                default: default.clone(),
                help: help.clone(),
            },
        }
    }
}

impl From<&MissingTool> for MissingToolBody {
    fn from(tool: &MissingTool) -> Self {
        MissingToolBody {
            name: tool.name.clone(),
            reason: tool.reason.clone(),
        }
    }
}
