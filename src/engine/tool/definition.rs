//! What the lab knows of a backup tool: the programs it runs, how it prepares a repository,
//! backs up, backs up again and restores, how it reports progress, and the parameters a
//! campaign may set. Built-in definitions (`builtin.rs`) and an operator's own file
//! (`--tools FILE`) have this one shape; a campaign names a tool and sets its parameters, and
//! never gives a command, an argument or an environment variable.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How a tool keeps what it backs up.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolShape {
    /// The tool writes a repository of its own into a directory (restic, borg).
    Repository,
    /// The tool writes one stream to its standard output (tar, tar | zstd): the lab takes it
    /// into its own pipeline and any target it has.
    Stream,
}

/// Where the lab reads a tool's progress from while it runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProgressFrom {
    /// restic's `--json` status lines on standard output (`bytes_done`).
    ResticJson,
    /// borg's `--log-json --progress` lines on standard error (`original_size`).
    BorgJson,
    /// The bytes the tool's processes read (a backup) or wrote (a restore), from the kernel.
    ProcessIo,
}

/// One parameter a campaign may set, typed and bounded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ParamDef {
    /// A whole number within `min..=max`, put into the arguments as written.
    Integer {
        name: String,
        min: i64,
        max: i64,
        default: i64,
        #[serde(default)]
        help: String,
    },
    /// One of a few words. A placeholder standing alone as an argument becomes the value's
    /// arguments (`args`, when given; they may name other parameters), else the word itself.
    Choice {
        name: String,
        values: Vec<ChoiceValue>,
        default: String,
        #[serde(default)]
        help: String,
    },
}

/// One value of a choice, and the arguments it stands for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ChoiceValue {
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
}

impl ParamDef {
    /// The parameter's name, as a campaign sets it.
    pub fn name(&self) -> &str {
        match self {
            ParamDef::Integer { name, .. } | ParamDef::Choice { name, .. } => name,
        }
    }

    /// The value a campaign that does not set it gets.
    pub fn default_value(&self) -> ParamValue {
        match self {
            ParamDef::Integer { default, .. } => ParamValue::Integer(*default),
            ParamDef::Choice { default, .. } => ParamValue::Word(default.clone()),
        }
    }

    /// Checks a value against the parameter's type and bounds; the message names what is
    /// allowed.
    pub fn check(&self, value: &ParamValue) -> Result<(), String> {
        match (self, value) {
            (ParamDef::Integer { min, max, .. }, ParamValue::Integer(given)) => {
                if (*min..=*max).contains(given) {
                    Ok(())
                } else {
                    Err(format!("must be a whole number from {min} to {max}"))
                }
            }
            (ParamDef::Integer { min, max, .. }, ParamValue::Word(_)) => {
                Err(format!("must be a whole number from {min} to {max}"))
            }
            (ParamDef::Choice { values, .. }, ParamValue::Word(word))
                if values.iter().any(|choice| &choice.value == word) =>
            {
                Ok(())
            }
            (ParamDef::Choice { values, .. }, _) => Err(format!(
                "must be one of {}",
                values
                    .iter()
                    .map(|choice| choice.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// A short line for the form and the docs: the type, bounds and default.
    pub fn rule(&self) -> String {
        match self {
            ParamDef::Integer {
                min, max, default, ..
            } => format!("{min}–{max}, default {default}"),
            ParamDef::Choice {
                values, default, ..
            } => format!(
                "{}; default {default}",
                values
                    .iter()
                    .map(|choice| choice.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// What the parameter does, in the definition's words.
    pub fn help(&self) -> &str {
        match self {
            ParamDef::Integer { help, .. } | ParamDef::Choice { help, .. } => help,
        }
    }
}

/// A parameter's value as a campaign gives it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(untagged)]
pub enum ParamValue {
    Integer(i64),
    Word(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Integer(value) => write!(f, "{value}"),
            ParamValue::Word(word) => f.write_str(word),
        }
    }
}

/// A backup tool the lab may run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolDefinition {
    /// What campaigns call it: letters, digits, `-` and `_`.
    pub name: String,
    pub shape: ToolShape,
    /// Commands whose first line of output is the tool's version, one per program it runs
    /// (`["restic", "version"]`).
    pub version: Vec<Vec<String>>,
    /// Environment variables set for every command besides `PATH` and `HOME`, with
    /// placeholders (`{password}` is a password the lab makes for the run).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Commands run one after another to make an empty repository in `{repo}` (a repository
    /// tool), untimed.
    #[serde(default)]
    pub init: Vec<Vec<String>>,
    /// The backup: one command, or the stages of a pipeline (each one's output into the
    /// next). A stream tool's last stage writes the stream to its standard output.
    pub backup: Vec<Vec<String>>,
    /// The restore of the latest backup into `{restore}` (a stream tool reads the stream
    /// from the file `{stream}`).
    pub restore: Vec<Vec<String>>,
    /// The restore of one file of the latest backup, `{one}` (its absolute path without the
    /// leading `/`, as tar and borg name what they stored), into `{restore}`: what a user
    /// waits for when one file is lost. A life times it; a definition without it has that
    /// figure unmeasured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restore_one: Vec<Vec<String>>,
    /// A repository tool's retention: commands run one after another that keep the last
    /// `{keep}` backups and free what only the others held (restic's `forget --prune`, borg's
    /// `prune` then `compact`), each timed on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retention: Vec<Vec<String>>,
    /// A repository tool's check of its repository's structure and metadata, not its data
    /// (restic's `check`, borg's `check`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check: Vec<Vec<String>>,
    /// A repository tool's check of every byte of its data (restic's `check --read-data`,
    /// borg's `check --verify-data`), which reads the whole repository back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check_data: Vec<Vec<String>>,
    /// A repository tool's command whose output lists the backups it keeps, one a line
    /// (restic's `list snapshots`, borg's `list --short`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<Vec<String>>,
    /// Where a repository tool keeps its index and metadata, the part every command loads:
    /// paths with places, the last part of each may hold `*` (restic's `{repo}/index`, borg's
    /// `{repo}/index.*` and its cache `{home}/.cache/borg`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub index: Vec<String>,
    pub progress: ProgressFrom,
    #[serde(default)]
    pub params: Vec<ParamDef>,
    /// The exit status by which the backup's first program says a file changed while it read
    /// it (GNU tar's 1): the warning it is, not a failed run, when the lab saw a file of the
    /// source change during the backup; a failure otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_status: Option<i32>,
    /// Run each command through `sh -c` (an operator's definition only): a command's first
    /// element is the line the shell runs, which holds no placeholder; the elements after it
    /// reach the line as its positional arguments (`"$1"`, `"$@"`), never spliced into it, so
    /// a path is never read as shell code. The built-in tools never do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shell: bool,
    /// How the tool keeps its repository in an S3 bucket, for a campaign whose target is one
    /// of the lab's `s3` stores; without it, a repository tool needs a `dir` target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<S3Repository>,
}

/// A repository tool's way into an S3 bucket: what `{repo}` stands for, and the environment
/// that carries the store's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct S3Repository {
    /// What `{repo}` stands for, from `{s3_endpoint}` (`http://host:port`), `{s3_bucket}` and
    /// `{s3_key}` (the run's key prefix in the bucket): restic's `s3:{s3_endpoint}/{s3_bucket}/{s3_key}`.
    pub repo: String,
    /// Environment besides the tool's own, from `{s3_access_key}`, `{s3_secret_key}` and
    /// `{s3_region}`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// What an [`S3Repository`]'s placeholders stand for in one run.
#[derive(Debug, Clone, Default)]
pub struct S3Place {
    pub endpoint: String,
    pub bucket: String,
    pub key: String,
    pub access_key: String,
    pub secret_key: String,
    pub region: String,
}

/// The names an [`S3Repository`] may use.
const S3_PLACES: [&str; 6] = [
    "s3_endpoint",
    "s3_bucket",
    "s3_key",
    "s3_access_key",
    "s3_secret_key",
    "s3_region",
];

impl S3Repository {
    /// `{repo}` and the environment for the bucket at `place`.
    pub fn fill(&self, place: &S3Place) -> (String, Vec<(String, String)>) {
        let fill = |text: &str| {
            substitute(text, |name| match name {
                "s3_endpoint" => place.endpoint.clone(),
                "s3_bucket" => place.bucket.clone(),
                "s3_key" => place.key.clone(),
                "s3_access_key" => place.access_key.clone(),
                "s3_secret_key" => place.secret_key.clone(),
                "s3_region" => place.region.clone(),
                _ => String::new(),
            })
        };
        (
            fill(&self.repo),
            self.env
                .iter()
                .map(|(key, value)| (key.clone(), fill(value)))
                .collect(),
        )
    }
}

/// Everything a tool's command line may name, filled in for one run.
#[derive(Debug, Clone)]
pub struct Places {
    /// The source roots, absolute: `{source}` standing alone becomes one argument each.
    pub source: Vec<PathBuf>,
    pub repo: PathBuf,
    pub restore: PathBuf,
    /// The file a stream tool's stream was kept in, for its restore.
    pub stream: PathBuf,
    /// The name of this backup in the repository (`gen1`, `gen2`): borg's archive.
    pub archive: String,
    pub password: String,
    /// The scratch home of the run (`HOME`), where a tool keeps its caches.
    pub home: PathBuf,
    pub cores: usize,
    /// The backups a retention keeps.
    pub keep: u32,
    /// When the backup is said to be taken, UTC, `2001-01-01T02:00:00`: now for a first
    /// night, night N of a life a day after night N − 1, so a tool that keeps one backup a
    /// second (borg's `--keep-last` is its `--keep-secondly`) sees a backup a night.
    pub time: String,
    /// The one file `restore_one` restores, absolute; `{one}` is its path without the
    /// leading `/`. Empty outside that command.
    pub one: PathBuf,
    /// Environment the repository's place adds (an S3 bucket's keys).
    pub repo_env: Vec<(String, String)>,
}

/// Why a definition cannot be used as written.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DefinitionError {
    #[error("tool {tool}: {message}")]
    Invalid { tool: String, message: String },
}

/// Parameter names a definition may not take: they are the places.
const RESERVED: [&str; 11] = [
    "source", "repo", "restore", "stream", "archive", "password", "home", "cores", "keep", "time",
    "one",
];

impl ToolDefinition {
    /// Checks a definition as a file gives it: a good name, commands that are not empty,
    /// placeholders that name a place or a parameter, parameters whose defaults hold.
    pub fn check(&self) -> Result<(), DefinitionError> {
        let invalid = |message: String| DefinitionError::Invalid {
            tool: self.name.clone(),
            message,
        };
        self.check_name_and_shape().map_err(invalid)?;
        self.check_commands().map_err(invalid)?;
        let names = self.check_params().map_err(invalid)?;
        if self.shell {
            for command in self
                .init
                .iter()
                .chain(&self.backup)
                .chain(&self.restore)
                .chain(self.maintenance())
            {
                check_shell_line(command, &names).map_err(invalid)?;
            }
        }
        self.check_placeholders(&names).map_err(invalid)?;
        self.check_s3().map_err(invalid)?;
        self.check_env().map_err(invalid)
    }

    /// Every command of the definition: `init`, `backup`, `restore`, the maintenance,
    /// `version`.
    fn commands(&self) -> impl Iterator<Item = &Vec<String>> + Clone {
        self.init
            .iter()
            .chain(&self.backup)
            .chain(&self.restore)
            .chain(&self.restore_one)
            .chain(self.maintenance())
            .chain(&self.version)
    }

    /// The repository's maintenance and its listing: `retention`, `check`, `check_data`,
    /// `list`.
    fn maintenance(&self) -> impl Iterator<Item = &Vec<String>> + Clone {
        self.retention
            .iter()
            .chain(&self.check)
            .chain(&self.check_data)
            .chain(&self.list)
    }

    /// A name of 1 to 40 letters, digits, `-` and `_`; the commands its shape needs.
    fn check_name_and_shape(&self) -> Result<(), String> {
        if self.name.is_empty()
            || self.name.len() > 40
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err("a name is 1 to 40 letters, digits, '-' or '_'".to_string());
        }
        if self.version.is_empty() || self.version.iter().any(Vec::is_empty) {
            return Err("`version` needs a command per program".to_string());
        }
        if self.backup.is_empty() || self.restore.is_empty() {
            return Err("`backup` and `restore` need a command".to_string());
        }
        if self.shape == ToolShape::Repository && self.backup.len() > 1 {
            return Err("a repository tool's backup is one command, not a pipeline".to_string());
        }
        if self.shape == ToolShape::Stream
            && (self.maintenance().next().is_some() || !self.index.is_empty())
        {
            return Err(
                "`retention`, `check`, `check_data`, `list` and `index` are a repository \
                 tool's; a stream tool keeps no repository to maintain"
                    .to_string(),
            );
        }
        Ok(())
    }

    /// No empty command, and every program named, not a placeholder (a shell line is the
    /// shell's, so only `version` is looked at under `shell`).
    fn check_commands(&self) -> Result<(), String> {
        if self
            .commands()
            .any(|command| command.is_empty() || command[0].is_empty())
        {
            return Err("a command is empty".to_string());
        }
        let named = |command: &&Vec<String>| !self.shell || self.version.contains(command);
        if let Some(command) = self
            .commands()
            .filter(named)
            .find(|command| command[0].contains('{'))
        {
            return Err(format!(
                "the program of `{}` must be named, not a placeholder",
                command.join(" ")
            ));
        }
        Ok(())
    }

    /// Parameters with good names, none twice nor a place, each default within its own
    /// rule; their names.
    fn check_params(&self) -> Result<Vec<&str>, String> {
        let mut names: Vec<&str> = Vec::new();
        for param in &self.params {
            let name = param.name();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                return Err(format!(
                    "parameter '{name}': a name is lower-case letters, digits and '_'"
                ));
            }
            if RESERVED.contains(&name) || names.contains(&name) {
                return Err(format!(
                    "parameter '{name}' is given twice or names a place"
                ));
            }
            names.push(name);
            param
                .check(&param.default_value())
                .map_err(|message| format!("parameter '{name}': its default {message}"))?;
        }
        Ok(names)
    }

    /// Every placeholder names a place or a parameter (`names`), in the commands, the
    /// environment and a choice's arguments; a shell line's braces are the shell's.
    fn check_placeholders(&self, names: &[&str]) -> Result<(), String> {
        let texts = self
            .commands()
            .flat_map(|command| {
                let line = self.shell && !self.version.contains(command);
                command.iter().skip(usize::from(line))
            })
            .chain(self.env.values())
            .chain(&self.index)
            .chain(self.params.iter().flat_map(|param| {
                match param {
                    ParamDef::Choice { values, .. } => values
                        .iter()
                        .flat_map(|value| value.args.iter().flatten())
                        .collect::<Vec<_>>(),
                    ParamDef::Integer { .. } => Vec::new(),
                }
            }));
        for text in texts {
            for name in placeholders(text) {
                if !RESERVED.contains(&name) && !names.contains(&name) {
                    return Err(format!(
                        "`{text}` names {{{name}}}, which is neither a place nor a parameter"
                    ));
                }
            }
        }
        Ok(())
    }

    /// `s3` only for a repository tool, naming only the store's places.
    fn check_s3(&self) -> Result<(), String> {
        let Some(s3) = &self.s3 else {
            return Ok(());
        };
        if self.shape != ToolShape::Repository {
            return Err("`s3` is for a repository tool; a stream goes into any target".to_string());
        }
        for text in std::iter::once(&s3.repo).chain(s3.env.values()) {
            if let Some(name) = placeholders(text)
                .into_iter()
                .find(|name| !S3_PLACES.contains(name))
            {
                return Err(format!(
                    "`{text}` names {{{name}}}; `s3` may name {}",
                    S3_PLACES.map(|name| format!("{{{name}}}")).join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Environment names in capitals, never the lab's own (`PATH`, `HOME`, `BACKLAB_*`).
    fn check_env(&self) -> Result<(), String> {
        for key in self
            .env
            .keys()
            .chain(self.s3.iter().flat_map(|s3| s3.env.keys()))
        {
            if key.is_empty()
                || key == "PATH"
                || key == "HOME"
                || key.starts_with("BACKLAB_")
                || !key
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                return Err(format!(
                    "environment variable '{key}': a name is upper-case letters, digits and \
                     '_', and PATH, HOME and BACKLAB_* (the run's marker among them) are the \
                     lab's"
                ));
            }
        }
        Ok(())
    }

    /// The programs the tool runs: each must be on PATH for the tool to be offered.
    pub fn programs(&self) -> Vec<&str> {
        let mut programs: Vec<&str> = Vec::new();
        let commands = self.init.iter().chain(&self.backup).chain(&self.restore);
        for command in commands {
            let program = if self.shell {
                "sh"
            } else {
                command[0].as_str()
            };
            if !programs.contains(&program) {
                programs.push(program);
            }
        }
        programs
    }

    /// The parameter of that name.
    pub fn param(&self, name: &str) -> Option<&ParamDef> {
        self.params.iter().find(|param| param.name() == name)
    }

    /// Every parameter's value for a run: the given ones (already checked) and the defaults.
    pub fn settle(&self, given: &BTreeMap<String, ParamValue>) -> BTreeMap<String, ParamValue> {
        self.params
            .iter()
            .map(|param| {
                let value = given
                    .get(param.name())
                    .cloned()
                    .unwrap_or_else(|| param.default_value());
                (param.name().to_string(), value)
            })
            .collect()
    }

    /// A command with every placeholder filled in: a placeholder standing alone as an
    /// argument may become several arguments (`{source}`, a choice's `args`) or none.
    pub fn expand(
        &self,
        command: &[String],
        places: &Places,
        values: &BTreeMap<String, ParamValue>,
    ) -> Vec<OsString> {
        let mut out = Vec::new();
        for arg in command {
            if let Some(name) = whole_placeholder(arg) {
                if name == "source" {
                    out.extend(
                        places
                            .source
                            .iter()
                            .map(|path| path.clone().into_os_string()),
                    );
                    continue;
                }
                if let Some(ParamDef::Choice {
                    values: choices, ..
                }) = self.param(name)
                {
                    let chosen = values.get(name).map(ToString::to_string);
                    if let Some(args) = choices
                        .iter()
                        .find(|choice| Some(&choice.value) == chosen.as_ref())
                        .and_then(|choice| choice.args.as_ref())
                    {
                        out.extend(
                            args.iter()
                                .map(|arg| OsString::from(fill(arg, places, values))),
                        );
                        continue;
                    }
                }
            }
            out.push(OsString::from(fill(arg, places, values)));
        }
        out
    }

    /// Where the repository keeps its index and metadata (`index`), places filled in: each a
    /// path whose last part may hold `*` (`tree::matching_size` counts it).
    pub fn index_paths(
        &self,
        places: &Places,
        values: &BTreeMap<String, ParamValue>,
    ) -> Vec<PathBuf> {
        self.index
            .iter()
            .map(|pattern| PathBuf::from(fill(pattern, places, values)))
            .collect()
    }

    /// The environment of every command, placeholders filled in.
    pub fn environment(
        &self,
        places: &Places,
        values: &BTreeMap<String, ParamValue>,
    ) -> Vec<(String, String)> {
        self.env
            .iter()
            .map(|(key, value)| (key.clone(), fill(value, places, values)))
            .chain(places.repo_env.iter().cloned())
            .collect()
    }
}

/// A shell command: its line names no place or parameter (a value spliced into shell code
/// could be read as code), and a line given arguments reads them (`"$1"`, `"$@"`…), so an
/// argument never goes unused unnoticed.
fn check_shell_line(command: &[String], params: &[&str]) -> Result<(), String> {
    let line = &command[0];
    if let Some(name) = placeholders(line)
        .into_iter()
        .find(|name| RESERVED.contains(name) || params.contains(name))
    {
        return Err(format!(
            "the shell line `{line}` holds {{{name}}}: give it as an element after the line, \
             where the line reads it as \"$1\" (all of them as \"$@\"); a value spliced into \
             the line could run as shell code"
        ));
    }
    let reads_arguments = ["$@", "$*", "${@", "${*"]
        .iter()
        .any(|form| line.contains(form))
        || (1..=9).any(|n| line.contains(&format!("${n}")) || line.contains(&format!("${{{n}")));
    if command.len() > 1 && !reads_arguments {
        return Err(format!(
            "the shell line `{line}` is given {} argument(s) but reads none: the elements after \
             the line reach it as \"$1\", \"$2\", … or all as \"$@\" (e.g. `exec tar \
             --create --file - \"$@\"`)",
            command.len() - 1
        ));
    }
    Ok(())
}

/// The names inside `{…}` in a text.
fn placeholders(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        names.push(&after[..close]);
        rest = &after[close + 1..];
    }
    names
}

/// The name when the whole argument is one placeholder.
fn whole_placeholder(arg: &str) -> Option<&str> {
    arg.strip_prefix('{')?
        .strip_suffix('}')
        .filter(|name| !name.contains(['{', '}']))
}

/// A text with each placeholder replaced by its place or parameter value.
fn fill(text: &str, places: &Places, values: &BTreeMap<String, ParamValue>) -> String {
    let path = |path: &Path| path.to_string_lossy().into_owned();
    substitute(text, |name| match name {
        "source" => places
            .source
            .iter()
            .map(|source| path(source))
            .collect::<Vec<_>>()
            .join(" "),
        "repo" => path(&places.repo),
        "restore" => path(&places.restore),
        "stream" => path(&places.stream),
        "archive" => places.archive.clone(),
        "password" => places.password.clone(),
        "home" => path(&places.home),
        "cores" => places.cores.to_string(),
        "keep" => places.keep.to_string(),
        "time" => places.time.clone(),
        "one" => path(places.one.strip_prefix("/").unwrap_or(&places.one)),
        other => values
            .get(other)
            .map(ToString::to_string)
            .unwrap_or_default(),
    })
}

/// A text with each `{name}` replaced by `value(name)`, once, left to right: a value that
/// holds braces is never read again as a placeholder.
fn substitute(text: &str, value: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        out.push_str(&value(&after[..close]));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tool::builtin;

    fn places() -> Places {
        Places {
            source: vec![PathBuf::from("/data/a"), PathBuf::from("/data/b")],
            repo: PathBuf::from("/t/repo"),
            restore: PathBuf::from("/d/restore"),
            stream: PathBuf::from("/t/stream"),
            archive: "gen1".to_string(),
            password: "pw".to_string(),
            home: PathBuf::from("/d/home"),
            cores: 2,
            keep: 7,
            time: "2001-01-01T02:00:00".to_string(),
            one: PathBuf::from("/data/a/f"),
            repo_env: Vec::new(),
        }
    }

    #[test]
    fn every_built_in_definition_holds_its_own_rules() {
        for tool in builtin::definitions() {
            tool.check().unwrap_or_else(|error| panic!("{error}"));
        }
    }

    #[test]
    fn a_source_placeholder_alone_becomes_one_argument_per_root() {
        let restic = builtin::definitions()
            .into_iter()
            .find(|tool| tool.name == "restic")
            .expect("restic is built in");
        let values = restic.settle(&BTreeMap::new());
        let args = restic.expand(&restic.backup[0], &places(), &values);
        let args: Vec<String> = args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert!(args.contains(&"/data/a".to_string()), "{args:?}");
        assert!(args.contains(&"/data/b".to_string()), "{args:?}");
        assert!(args.contains(&"/t/repo".to_string()), "{args:?}");
    }

    #[test]
    fn a_choice_stands_for_its_arguments_and_they_may_name_another_parameter() {
        let borg = builtin::definitions()
            .into_iter()
            .find(|tool| tool.name == "borg")
            .expect("borg is built in");
        let mut given = BTreeMap::new();
        given.insert(
            "compression".to_string(),
            ParamValue::Word("zstd".to_string()),
        );
        given.insert("level".to_string(), ParamValue::Integer(9));
        let args = borg.expand(&borg.backup[0], &places(), &borg.settle(&given));
        let joined = args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(joined.contains("--compression zstd,9"), "{joined}");
        given.insert(
            "compression".to_string(),
            ParamValue::Word("none".to_string()),
        );
        let args = borg.expand(&borg.backup[0], &places(), &borg.settle(&given));
        let joined = args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(joined.contains("--compression none"), "{joined}");
    }

    #[test]
    fn a_definition_naming_an_unknown_placeholder_or_a_bad_default_is_refused() {
        let mut tool = builtin::definitions().remove(0);
        tool.backup[0].push("{nonsense}".to_string());
        assert!(tool.check().is_err());
        let mut tool = builtin::definitions().remove(0);
        tool.params.push(ParamDef::Integer {
            name: "threads".to_string(),
            min: 1,
            max: 4,
            default: 9,
            help: String::new(),
        });
        let error = tool.check().expect_err("a default out of bounds");
        assert!(error.to_string().contains("threads"), "{error}");
        let mut tool = builtin::definitions().remove(0);
        tool.env.insert("PATH".to_string(), "/evil".to_string());
        assert!(tool.check().is_err());
    }

    #[test]
    fn a_retention_keeps_the_count_its_places_give_and_the_index_is_found_in_the_repository() {
        for tool in builtin::definitions()
            .into_iter()
            .filter(|tool| !tool.retention.is_empty())
        {
            let values = tool.settle(&BTreeMap::new());
            let args = tool.expand(&tool.retention[0], &places(), &values);
            let joined = args
                .iter()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            assert!(joined.contains("--keep-last 7"), "{}: {joined}", tool.name);
            let index = tool.index_paths(&places(), &values);
            assert!(
                index.iter().any(|path| path.starts_with("/t/repo")),
                "{}: {index:?}",
                tool.name
            );
        }
    }

    #[test]
    fn maintenance_is_a_repository_tools_and_names_only_places_it_knows() {
        let mut tar = builtin::definitions()
            .into_iter()
            .find(|tool| tool.name == "tar")
            .expect("tar is built in");
        tar.check = vec![vec!["tar".to_string(), "--version".to_string()]];
        let error = tar.check().expect_err("a stream tool keeps no repository");
        assert!(error.to_string().contains("repository tool"), "{error}");
        let mut restic = builtin::definitions().remove(0);
        restic.retention[0].push("{kept}".to_string());
        let error = restic.check().expect_err("an unknown place");
        assert!(error.to_string().contains("{kept}"), "{error}");
        let mut restic = builtin::definitions().remove(0);
        restic.check_data = vec![vec!["{repo}".to_string()]];
        assert!(
            restic.check().is_err(),
            "a program is named, not a placeholder"
        );
    }

    #[test]
    fn an_s3_repository_names_only_the_buckets_places_and_fills_them() {
        let restic = builtin::definitions().remove(0);
        let s3 = restic
            .s3
            .clone()
            .expect("restic keeps a repository in a bucket");
        let (repo, env) = s3.fill(&S3Place {
            endpoint: "http://127.0.0.1:9000".to_string(),
            bucket: "backups".to_string(),
            key: "nightly/run-1.tool".to_string(),
            access_key: "AK".to_string(),
            secret_key: "SK".to_string(),
            region: "us-east-1".to_string(),
        });
        assert_eq!(repo, "s3:http://127.0.0.1:9000/backups/nightly/run-1.tool");
        assert!(env.contains(&("AWS_SECRET_ACCESS_KEY".to_string(), "SK".to_string())));
        let mut tool = restic.clone();
        if let Some(s3) = tool.s3.as_mut() {
            s3.repo.push_str("/{source}");
        }
        let error = tool.check().expect_err("a place the bucket does not have");
        assert!(error.to_string().contains("{source}"), "{error}");
        let mut tool = restic.clone();
        if let Some(s3) = tool.s3.as_mut() {
            s3.env.insert("HOME".to_string(), "{s3_key}".to_string());
        }
        assert!(tool.check().is_err(), "HOME is the lab's");
        let mut tar = builtin::definitions()
            .into_iter()
            .find(|tool| tool.shape == ToolShape::Stream)
            .expect("a stream tool");
        tar.s3 = restic.s3;
        assert!(tar.check().is_err(), "a stream goes into any target");
    }

    #[test]
    fn values_are_checked_against_their_bounds() {
        let level = ParamDef::Integer {
            name: "level".to_string(),
            min: 1,
            max: 19,
            default: 3,
            help: String::new(),
        };
        assert!(level.check(&ParamValue::Integer(19)).is_ok());
        assert!(level.check(&ParamValue::Integer(20)).is_err());
        assert!(level.check(&ParamValue::Word("fast".into())).is_err());
    }
}
