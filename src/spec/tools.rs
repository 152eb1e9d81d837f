//! A campaign's backup tools checked against the tools a lab has: the tool is there, and
//! each parameter is one its definition takes, within its bounds. A campaign names a tool and
//! sets parameters; there is no field for a command, an argument or an environment variable,
//! so none can be given.

use super::{CampaignSpec, FieldErrors, ToolRun};
use crate::engine::target::ToolRepository;
use crate::engine::tool::{ToolShape, Tools};

/// Each tool the campaign names, with the field it is named in.
pub fn named(spec: &CampaignSpec) -> Vec<(String, &ToolRun)> {
    let mut named: Vec<(String, &ToolRun)> = Vec::new();
    if let Some(tool) = &spec.tool {
        named.push(("tool".to_string(), tool));
    }
    if let Some(list) = spec.matrix.as_ref().and_then(|m| m.tool.as_ref()) {
        for (index, tool) in list.iter().enumerate() {
            named.push((format!("matrix.tool[{index}]"), tool));
        }
    }
    named
}

/// A tool's name as a campaign gives it: what a definition may be called.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 40
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("a tool's name is 1 to 40 letters, digits, '-' or '_'".to_string());
    }
    Ok(())
}

/// Every tool the campaign names, checked against this lab's tools: present on its PATH,
/// each parameter known and within bounds, and a target that can hold what the tool writes.
pub fn check(spec: &CampaignSpec, tools: &Tools) -> FieldErrors {
    let mut errors = FieldErrors::default();
    for (field, tool) in named(spec) {
        if check_name(&tool.name).is_err() {
            continue;
        }
        let available = match tools.get(&tool.name) {
            Ok(available) => available,
            Err(reason) => {
                errors.add(format!("{field}.name"), reason);
                continue;
            }
        };
        let definition = &available.definition;
        for (name, value) in &tool.params {
            let at = format!("{field}.params.{name}");
            match definition.param(name) {
                Some(param) => {
                    if let Err(message) = param.check(value) {
                        errors.add(at, message);
                    }
                }
                None => errors.add(
                    at,
                    if definition.params.is_empty() {
                        format!("{} takes no parameters", definition.name)
                    } else {
                        format!(
                            "{} takes {}",
                            definition.name,
                            definition
                                .params
                                .iter()
                                .map(|param| param.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    },
                ),
            }
        }
        let keeps_one = match spec.target.kind.facts().tool_repository {
            ToolRepository::InDirectory => true,
            ToolRepository::InBucket => definition.s3.is_some(),
            ToolRepository::Nowhere => false,
        };
        if definition.shape == ToolShape::Repository && !keeps_one {
            errors.add(
                "target.kind",
                format!(
                    "{} keeps a repository in a directory{}: give a dir target (a stream tool \
                     such as tar-zstd writes into any target)",
                    definition.name,
                    if definition.s3.is_some() {
                        " or an s3 bucket"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    errors
}
