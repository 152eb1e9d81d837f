//! The tools this lab has: the built-in definitions and the operator's own (`--tools FILE`),
//! each offered only when its programs are on PATH, with the version its programs print.
//! Found once at start; a campaign naming a tool that is missing is refused with the reason.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::builtin;
use super::definition::ToolDefinition;
use super::process::{Ended, Launch, Output, Running, Stage};

/// The PATH tools run with when the lab's own has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Longest a version command may take before the tool is taken as missing.
const VERSION_WAIT: Duration = Duration::from_secs(10);

/// A tool the lab can run, with the version its programs printed.
#[derive(Debug, Clone, Serialize)]
pub struct AvailableTool {
    pub definition: ToolDefinition,
    /// The first line each version command printed, joined with "; ".
    pub version: String,
    /// Where it comes from: `built-in` or the operator's file.
    pub origin: String,
}

/// A tool the lab knows and cannot run, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MissingTool {
    pub name: String,
    pub reason: String,
}

/// The tools of this lab.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    pub available: Vec<AvailableTool>,
    pub missing: Vec<MissingTool>,
    /// The PATH every tool command runs with.
    pub path: String,
}

/// Why the operator's tools file cannot be used: the lab does not start.
#[derive(Debug, thiserror::Error)]
pub enum ToolsFileError {
    #[error("tools file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("tools file {path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Tools {
    /// The built-in tools and those of `file`, if given, each looked up on the lab's PATH.
    pub fn find(file: Option<&Path>) -> Result<Tools, ToolsFileError> {
        let mut definitions: Vec<(ToolDefinition, String)> = builtin::definitions()
            .into_iter()
            .map(|definition| (definition, "built-in".to_string()))
            .collect();
        if let Some(file) = file {
            for definition in read_file(file)? {
                definitions.retain(|(known, _)| known.name != definition.name);
                definitions.push((definition, file.display().to_string()));
            }
        }
        let path = std::env::var("PATH")
            .ok()
            .filter(|path| !path.is_empty())
            .unwrap_or_else(|| DEFAULT_PATH.to_string());
        let mut tools = Tools {
            path,
            ..Tools::default()
        };
        for (definition, origin) in definitions {
            match tools.probe(&definition) {
                Ok(version) => tools.available.push(AvailableTool {
                    definition,
                    version,
                    origin,
                }),
                Err(reason) => tools.missing.push(MissingTool {
                    name: definition.name.clone(),
                    reason,
                }),
            }
        }
        Ok(tools)
    }

    /// The tool of that name, or why it cannot be used.
    pub fn get(&self, name: &str) -> Result<&AvailableTool, String> {
        if let Some(tool) = self
            .available
            .iter()
            .find(|tool| tool.definition.name == name)
        {
            return Ok(tool);
        }
        if let Some(missing) = self.missing.iter().find(|tool| tool.name == name) {
            return Err(format!("{name} cannot run on this lab: {}", missing.reason));
        }
        let known: Vec<&str> = self
            .available
            .iter()
            .map(|tool| tool.definition.name.as_str())
            .collect();
        Err(if known.is_empty() {
            format!("unknown tool '{name}': this lab has no backup tool on its PATH")
        } else {
            format!("unknown tool '{name}': this lab has {}", known.join(", "))
        })
    }

    /// The version `tool`'s programs print now: a tool upgraded since the lab started prints
    /// its new one.
    pub fn version_now(&self, tool: &AvailableTool) -> Result<String, String> {
        self.probe(&tool.definition)
    }

    /// The program's full path on the tools' PATH.
    pub fn locate(&self, program: &str) -> Option<PathBuf> {
        if program.contains('/') {
            let path = PathBuf::from(program);
            return is_executable(&path).then_some(path);
        }
        self.path
            .split(':')
            .filter(|dir| !dir.is_empty())
            .map(|dir| Path::new(dir).join(program))
            .find(|candidate| is_executable(candidate))
    }

    /// Every program on PATH, and the version each version command prints.
    fn probe(&self, definition: &ToolDefinition) -> Result<String, String> {
        for program in definition.programs() {
            if self.locate(program).is_none() {
                return Err(format!("{program} is not on the lab's PATH"));
            }
        }
        let mut lines = Vec::new();
        for command in &definition.version {
            let program = self
                .locate(&command[0])
                .ok_or_else(|| format!("{} is not on the lab's PATH", command[0]))?;
            lines.push(first_line_of(&program, &command[1..], &self.path)?);
        }
        Ok(lines.join("; "))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The first non-empty line a version command prints (standard output, else standard error),
/// at most 120 characters; an error when it fails or takes too long. It runs as a tool's
/// commands do ([`Running`]): caged, its environment cleared but for PATH, and ended with all
/// it started within [`VERSION_WAIT`], so a probe that leaves a process holding its output
/// never holds the lab's start.
fn first_line_of(program: &Path, args: &[String], path: &str) -> Result<String, String> {
    let mut argv = vec![program.as_os_str().to_owned()];
    argv.extend(args.iter().map(std::ffi::OsString::from));
    let launch = Launch {
        stages: vec![Stage { argv }],
        dir: PathBuf::from("/"),
        env: vec![("PATH".into(), path.into())],
        stdout: Output::Lines,
        on_line: None,
        sample_every: Duration::from_millis(250),
        grace: Duration::from_millis(500),
        secrets: Vec::new(),
    };
    let finished = Running::spawn(launch)
        .map_err(|error| format!("{} cannot start: {error}", program.display()))?
        .wait(&AtomicBool::new(false), Some(Instant::now() + VERSION_WAIT));
    if finished.ended == Ended::Deadline {
        return Err(format!(
            "{} did not print its version within {} s",
            program.display(),
            VERSION_WAIT.as_secs()
        ));
    }
    if let Some(failure) = finished.failure() {
        return Err(format!(
            "{} {}: {failure}",
            program.display(),
            args.join(" ")
        ));
    }
    let text = if finished.stdout_tail.trim().is_empty() {
        &finished.stderr_tail
    } else {
        &finished.stdout_tail
    };
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    Ok(line.chars().take(120).collect())
}

/// The operator's definitions: a JSON list of definitions, each checked.
fn read_file(file: &Path) -> Result<Vec<ToolDefinition>, ToolsFileError> {
    let text = std::fs::read_to_string(file).map_err(|source| ToolsFileError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let invalid = |message: String| ToolsFileError::Invalid {
        path: file.to_path_buf(),
        message,
    };
    // What the file is, said before its fields: a file that is not JSON, or a single
    // definition outside a list, is told so rather than "expected a sequence".
    let document: serde_json::Value = serde_json::from_str(&text).map_err(|error| {
        invalid(format!(
            "not JSON ({error}): the file is a JSON list of tool definitions, \
             [{{\"name\": …, \"kind\": …}}, …] (docs/tools.md)"
        ))
    })?;
    if !document.is_array() {
        return Err(invalid(format!(
            "a JSON list of tool definitions is expected, [{{…}}, …]; the file holds {}",
            match &document {
                serde_json::Value::Object(_) => "one object: put it inside [ ]",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            }
        )));
    }
    let definitions: Vec<ToolDefinition> = serde_path_to_error::deserialize(document)
        .map_err(|error| invalid(format!("at {}: {}", error.path(), error.inner())))?;
    let mut names: Vec<&str> = Vec::new();
    for definition in &definitions {
        definition
            .check()
            .map_err(|error| invalid(error.to_string()))?;
        if names.contains(&definition.name.as_str()) {
            return Err(invalid(format!(
                "tool {} is defined twice",
                definition.name
            )));
        }
        names.push(&definition.name);
    }
    Ok(definitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tar_is_found_with_its_version_and_a_tool_off_path_is_missing_with_the_reason() {
        let tools = Tools::find(None).expect("no file");
        let tar = tools.get("tar").expect("tar is on every test machine");
        assert!(tar.version.contains("tar"), "{}", tar.version);
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("tools.json");
        std::fs::write(
            &file,
            r#"[{"name": "nothere", "shape": "stream", "version": [["no-such-program-x", "--version"]],
                 "backup": [["no-such-program-x", "{source}"]], "restore": [["true"]],
                 "progress": "process_io"}]"#,
        )
        .expect("write");
        let tools = Tools::find(Some(&file)).expect("a valid file");
        let error = tools.get("nothere").expect_err("not on PATH");
        assert!(error.contains("no-such-program-x"), "{error}");
        let error = tools.get("zzz").expect_err("unknown");
        assert!(error.contains("unknown tool 'zzz'"), "{error}");
    }

    #[test]
    fn a_tools_file_with_a_bad_definition_names_where() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("tools.json");
        std::fs::write(&file, r#"[{"name": "x", "shape": "tape"}]"#).expect("write");
        let error = Tools::find(Some(&file)).expect_err("bad shape");
        assert!(error.to_string().contains("shape"), "{error}");
    }

    #[test]
    fn a_tools_file_that_is_not_a_list_says_what_it_holds() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("tools.json");
        for (text, said) in [
            ("- name: x\n", "not JSON"),
            (r#"{"name": "x"}"#, "one object: put it inside [ ]"),
            ("\"tar\"", "a string"),
        ] {
            std::fs::write(&file, text).expect("write");
            let error = Tools::find(Some(&file))
                .expect_err("not a list")
                .to_string();
            assert!(error.contains(said), "{text:?}: {error}");
            assert!(!error.contains("expected a sequence"), "{text:?}: {error}");
        }
    }

    /// A version probe that leaves a process holding its output, in its own session or not,
    /// gives its line at once and leaves nothing running (where the lab can cage it).
    #[test]
    fn a_version_probe_that_leaves_a_process_behind_neither_stalls_nor_leaks() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("tools.json");
        let seconds = format!("95.{}", rand::random::<u32>());
        let definitions = serde_json::json!([{
            "name": "lingering",
            "shape": "stream",
            "version": [["sh", "-c", format!("setsid sleep {seconds} & sleep {seconds} & echo v1")]],
            "backup": [["tar", "--create", "--file", "-", "{source}"]],
            "restore": [["tar", "--extract", "--file", "{stream}"]],
            "progress": "process_io"
        }]);
        std::fs::write(&file, definitions.to_string()).expect("write");
        let started = std::time::Instant::now();
        let tools = Tools::find(Some(&file)).expect("found");
        // Every built-in tool is probed too (borg's Python start-up among them): the bound
        // holds on a loaded machine and still fails a probe waited out to its 95 s.
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "{:?}",
            started.elapsed()
        );
        let tool = tools.get("lingering").expect("available");
        assert_eq!(tool.version, "v1");
        if super::super::process::caged() {
            let left = std::fs::read_dir("/proc")
                .expect("/proc")
                .flatten()
                .filter(|entry| {
                    std::fs::read(entry.path().join("cmdline"))
                        .is_ok_and(|line| String::from_utf8_lossy(&line).contains(&seconds))
                })
                .count();
            assert_eq!(left, 0, "the probe's processes outlived it");
        }
    }
}
