//! The rules every field of a spec is checked against, each bad field named by its path.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;

impl CampaignSpec {
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

    pub(super) fn check_list_lengths(&self) -> FieldErrors {
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
                ("matrix.part_size", matrix.part_size.as_ref().map(Vec::len)),
                (
                    "matrix.concurrency",
                    matrix.concurrency.as_ref().map(Vec::len),
                ),
                ("matrix.tool", matrix.tool.as_ref().map(Vec::len)),
            ];
            for (field, len) in lists {
                at_most(field, "values", len.unwrap_or(0), MAX_MATRIX_VALUES);
            }
        }
        errors
    }

    pub(super) fn check_run_count(&self) -> FieldErrors {
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
            .saturating_mul(length(matrix.streams.as_ref().map(Vec::len)))
            .saturating_mul(length(matrix.part_size.as_ref().map(Vec::len)))
            .saturating_mul(length(matrix.concurrency.as_ref().map(Vec::len)));
        let sweep = length(matrix.clients.as_ref().map(Vec::len));
        // The tool tests run once per tool compared.
        let tools = length(matrix.tool.as_ref().map(Vec::len));
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
        // The target tests run once per generation of a generated dataset.
        let generations = self
            .source
            .generated
            .as_ref()
            .and_then(|generated| generated.generations)
            .map_or(1, |count| u64::from(count.max(1)));
        let rungs = self.forecast.as_ref().map_or(1, |forecast| {
            u64::from(forecast.rungs.unwrap_or(forecast::MIN_RUNGS))
        });
        let per_point = kinds.iter().fold(0u64, |sum, &kind| {
            sum.saturating_add(match kind {
                TestKind::NetworkBackup => sweep,
                // Once per campaign, added below.
                TestKind::ObjectLock => 0,
                TestKind::ToolLife => local.saturating_mul(tools).saturating_mul(rungs),
                kind if kind.runs_tool() => local.saturating_mul(tools),
                kind if kind.sends_generations() => local.saturating_mul(generations),
                _ => local,
            })
        });
        let probes = u64::from(kinds.contains(&TestKind::ObjectLock));
        points
            .saturating_mul(per_point)
            .saturating_mul(u64::from(self.repeat))
            .saturating_add(probes)
    }

    pub(super) fn source_plan(&self, errors: &mut FieldErrors) -> Option<SourcePlan> {
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
                    .map(ByteSize::bytes)
                    .filter(|&size| size > 0)
                    .unwrap_or(DEFAULT_GENERATED_SIZE),
                compress_ratio: self
                    .params
                    .compress_ratio
                    .unwrap_or_else(default_compress_ratio),
                repeat: false,
                dedup: None,
                generations: None,
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
                    0 => {
                        errors.add("source.generated.size", "must be greater than 0");
                        None
                    }
                    size => Some(size),
                };
                let ratio_ok = check_ratio(
                    errors,
                    "source.generated.compress_ratio",
                    generated.compress_ratio,
                );
                let dedup = generated_dedup(generated, errors);
                let generations = generated_generations(generated, errors);
                match (size, ratio_ok, dedup, generations) {
                    (Some(size), true, Ok(dedup), Ok(generations)) => Some(SourcePlan::Generated {
                        size,
                        compress_ratio: generated.compress_ratio,
                        repeat: false,
                        dedup,
                        generations,
                    }),
                    _ => None,
                }
            }
        }
    }

    pub(super) fn target_plan(&self, errors: &mut FieldErrors) -> Option<TargetPlan> {
        self.target.plan(errors)
    }

    pub(super) fn test_kinds(&self, errors: &mut FieldErrors) -> Vec<TestKind> {
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
        self.check_tool_tests(errors, &kinds);
        self.check_life(errors, &kinds);
        self.check_lock_probe(errors);
        kinds.sort();
        kinds
    }

    /// The object-lock probe asks an object store: with any other target it is refused.
    fn check_lock_probe(&self, errors: &mut FieldErrors) {
        let probe = self
            .tests
            .iter()
            .position(|name| name == TestKind::ObjectLock.id());
        if let Some(index) = probe
            && !self.target.kind.facts().object_store
        {
            errors.add(
                format!("tests[{index}]"),
                format!(
                    "object_lock probes an object store's bucket: give target.kind s3 (this \
                     target is {})",
                    self.target.kind.facts().id
                ),
            );
        }
    }

    /// A life's plan within its bounds, each bad field named; a life given to a campaign
    /// that runs no `tool_life` is refused rather than ignored.
    fn check_life(&self, errors: &mut FieldErrors, kinds: &[TestKind]) {
        if let Some(life) = &self.life {
            for (field, why) in life.problems() {
                errors.add(format!("life.{field}"), why);
            }
        }
        if let Some(forecast) = &self.forecast {
            forecast.check(errors, None);
        }
        for (field, given) in [
            ("life", self.life.is_some()),
            ("forecast", self.forecast.is_some()),
        ] {
            if given && !kinds.contains(&TestKind::ToolLife) {
                errors.add(
                    field,
                    "no test runs the life: add tool_life to tests, or leave tests out",
                );
            }
        }
    }

    /// The tool tests need a tool to run and files for it to back up; a tool needs a test to
    /// run it. Each tool named is checked for its form here, and against the lab's tools by
    /// [`super::tools::check`].
    fn check_tool_tests(&self, errors: &mut FieldErrors, kinds: &[TestKind]) {
        let first_tool_test = self
            .tests
            .iter()
            .position(|name| TestKind::from_id(name).is_some_and(TestKind::runs_tool));
        if let Some(index) = first_tool_test {
            if !self.names_a_tool() {
                errors.add(
                    "tool",
                    format!(
                        "'{}' runs a backup tool: name one, e.g. {{\"name\": \"restic\"}} (GET \
                         /api/tools lists this lab's)",
                        self.tests[index]
                    ),
                );
            }
            // A forecast's lives run on the trees of its ladder; every other tool test reads
            // the source's files.
            let on_ladder = self.forecast.is_some()
                && self.tests.iter().all(|name| {
                    TestKind::from_id(name)
                        .is_none_or(|test| !test.runs_tool() || test == TestKind::ToolLife)
                });
            if self.source.paths.is_none() && !on_ladder {
                errors.add(
                    format!("tests[{index}]"),
                    "a backup tool backs up files: give source.paths",
                );
            }
        } else if self.names_a_tool() && !kinds.is_empty() {
            let field = if self.tool.is_some() {
                "tool"
            } else {
                "matrix.tool"
            };
            errors.add(
                field,
                format!(
                    "no test runs the tool: add {} to tests, or leave tests out for the tool's \
                     table",
                    TestKind::TOOL_TABLE
                        .iter()
                        .filter(|test| test.runs_tool())
                        .map(|test| test.id())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if self.tool.is_some() && self.matrix.as_ref().is_some_and(|m| m.tool.is_some()) {
            errors.add(
                "tool",
                "give one tool in `tool` or several in `matrix.tool`, not both",
            );
        }
        if let Some(list) = self.matrix.as_ref().and_then(|m| m.tool.as_ref())
            && list.is_empty()
        {
            errors.add("matrix.tool", "must list at least one tool, or be left out");
        }
        if let Some(list) = self.matrix.as_ref().and_then(|m| m.tool.as_ref()) {
            for (index, tool) in list.iter().enumerate() {
                if list[..index].contains(tool) {
                    errors.add(
                        format!("matrix.tool[{index}]"),
                        format!(
                            "{} is listed twice with the same parameters: a comparison lists \
                             each tool once",
                            tool.name
                        ),
                    );
                }
            }
        }
        for (field, tool) in super::tools::named(self) {
            if let Err(message) = super::tools::check_name(&tool.name) {
                errors.add(format!("{field}.name"), message);
            }
        }
    }

    pub(super) fn base_params(
        &self,
        errors: &mut FieldErrors,
        source: Option<&SourcePlan>,
    ) -> Option<RunParams> {
        let params = &self.params;
        let before = errors.0.len();
        if !bounds::BUFFERS.contains(u64::from(params.buffers)) {
            errors.add("params.buffers", bounds::BUFFERS.rule());
        }
        let block_size = params.block_size.bytes();
        check_block_size(errors, "params.block_size", params.direct, block_size);
        let streams = match params.streams {
            Some(streams) => streams,
            None => match source {
                Some(SourcePlan::Paths(paths)) if paths.len() > 1 => paths.len() as u32,
                _ => 4,
            },
        };
        if !bounds::STREAMS.contains(u64::from(streams)) {
            errors.add("params.streams", bounds::STREAMS.rule());
        }
        if let Some(ratio) = params.compress_ratio {
            check_ratio(errors, "params.compress_ratio", ratio);
        }
        let size = params.size.as_ref().map(|size| {
            let bytes = size.bytes();
            if bytes == 0 {
                errors.add("params.size", "must be greater than 0");
            }
            bytes
        });
        if let Some(DurationInput::Seconds(duration)) = params.duration_s
            && !bounds::duration_within(duration, bounds::MAX_DURATION_S)
        {
            errors.add(
                "params.duration_s",
                bounds::duration_rule(bounds::MAX_DURATION_S),
            );
        }
        let auto = params.duration_s == Some(DurationInput::Auto(AutoWord::Auto));
        if let Some(rate) = params.source_rate_mb_s
            && !(rate.is_finite() && (MIN_SOURCE_RATE_MB_S..=MAX_RATE_MB_S).contains(&rate))
        {
            errors.add(
                "params.source_rate_mb_s",
                format!("must be between {MIN_SOURCE_RATE_MB_S} and {MAX_RATE_MB_S} MB/s"),
            );
        }
        if errors.0.len() != before {
            return None;
        }
        Some(RunParams {
            buffers: params.buffers,
            block_size,
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
            time_based: auto || (params.time_based == Some(true) && params.duration_s.is_some()),
            until_steady: auto,
            source_rate_mb_s: params.source_rate_mb_s,
            clients: None,
            link_mb_s: None,
            part_size: None,
            concurrency: None,
            generation: None,
            tool: None,
            life: None,
            ladder: None,
        })
    }

    /// The agents named by the source, checked: names as agents register them, each once.
    pub(super) fn agent_names(&self, errors: &mut FieldErrors) -> Vec<String> {
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
            if let Err(message) = check_name(name) {
                errors.add(field, message);
            } else if agents[..index].contains(name) {
                errors.add(field, format!("'{name}' is listed twice"));
            }
        }
        agents.clone()
    }

    /// Checks what only a network backup uses, and resolves its client count.
    pub(super) fn network_plan(
        &self,
        errors: &mut FieldErrors,
        tests: &[TestKind],
        agents: &[String],
    ) -> Option<NetworkDefaults> {
        let before = errors.0.len();
        let network = tests.contains(&TestKind::NetworkBackup);
        if !network {
            self.unused_network_settings(errors);
        }
        if !agents.is_empty() {
            local_tests_with_agents(errors, tests);
        }
        let clients = self.client_count(errors, agents);
        if let Some(rate) = self.params.link_mb_s
            && !(rate.is_finite() && (MIN_LINK_MB_S..=MAX_RATE_MB_S).contains(&rate))
        {
            errors.add(
                "params.link_mb_s",
                format!("must be between {MIN_LINK_MB_S} and {MAX_RATE_MB_S} MB/s"),
            );
        }
        if network {
            self.check_connections(errors, clients);
        }
        (errors.0.len() == before).then_some(NetworkDefaults { clients })
    }

    /// The client counts the matrix sweeps, when it sweeps them.
    fn client_sweep(&self) -> Option<&Vec<u32>> {
        self.matrix.as_ref().and_then(|m| m.clients.as_ref())
    }

    /// Without a network backup, each setting only it uses is an error: set, it would be
    /// silently ignored.
    fn unused_network_settings(&self, errors: &mut FieldErrors) {
        let only = "is used by network_backup only; add it to tests or remove this";
        if self.params.clients.is_some() {
            errors.add("params.clients", only);
        }
        if self.params.link_mb_s.is_some() {
            errors.add("params.link_mb_s", only);
        }
        if self.client_sweep().is_some() {
            errors.add("matrix.clients", only);
        }
        if self.source.agents.is_some() {
            errors.add("source.agents", only);
        }
    }

    /// The number of clients a network backup runs with, checked with each the matrix sweeps:
    /// from 1 to the lab's limit, or to the number of `agents` named (each client is one).
    fn client_count(&self, errors: &mut FieldErrors, agents: &[String]) -> u32 {
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
        if let Some(sweep) = self.client_sweep() {
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
        clients
    }

    /// Whether the widest run of the network backup, the most clients by the most streams the
    /// spec asks for, stays within the connections the lab takes at once.
    fn check_connections(&self, errors: &mut FieldErrors, clients: u32) {
        let streams = self.params.streams.unwrap_or(DEFAULT_CLIENT_STREAMS);
        let widest_clients = self
            .client_sweep()
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

    /// The matrix's values, each checked; one `None` for a list left out.
    pub(super) fn matrix_axes(&self, errors: &mut FieldErrors) -> MatrixAxes {
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
                && !bounds::BUFFERS.contains(u64::from(*value))
            {
                errors.add(format!("matrix.buffers[{index}]"), bounds::BUFFERS.rule());
            }
        }
        let streams = values(errors, "matrix.streams", &matrix.streams);
        for (index, value) in streams.iter().enumerate() {
            if let Some(value) = value
                && !bounds::STREAMS.contains(u64::from(*value))
            {
                errors.add(format!("matrix.streams[{index}]"), bounds::STREAMS.rule());
            }
        }
        let block_sizes: Vec<Option<u64>> = values(errors, "matrix.block_size", &matrix.block_size)
            .into_iter()
            .map(|value| value.map(|value| value.bytes()))
            .collect();
        // Checked with the rest of the network settings.
        let clients: Vec<Option<u32>> = match &matrix.clients {
            Some(list) if !list.is_empty() => list.iter().copied().map(Some).collect(),
            _ => vec![None],
        };
        let store = self.target.kind.facts().object_store;
        let mut store_only = |field: &str, given: bool| {
            if given && !store {
                errors.add(
                    field,
                    "is swept only with an object-store target (target.kind s3)",
                );
            }
        };
        store_only("matrix.part_size", matrix.part_size.is_some());
        store_only("matrix.concurrency", matrix.concurrency.is_some());
        let part_sizes: Vec<Option<u64>> = values(errors, "matrix.part_size", &matrix.part_size)
            .into_iter()
            .map(|value| value.map(|value| value.bytes()))
            .collect();
        for (index, value) in part_sizes.iter().enumerate() {
            if let Some(value) = value {
                s3::check_part_size(*value, &format!("matrix.part_size[{index}]"), errors);
            }
        }
        let concurrency = values(errors, "matrix.concurrency", &matrix.concurrency);
        for (index, value) in concurrency.iter().enumerate() {
            if let Some(value) = value {
                s3::check_concurrency(*value, &format!("matrix.concurrency[{index}]"), errors);
            }
        }
        MatrixAxes {
            buffers,
            block_sizes,
            streams,
            clients,
            part_sizes,
            concurrency,
        }
    }
}

/// With agents named, only network_backup can run: each other test is an error, since it runs
/// on the lab's own host.
fn local_tests_with_agents(errors: &mut FieldErrors, tests: &[TestKind]) {
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

/// Checks a name agents and lab hosts register under, and campaigns name them by.
pub fn check_name(name: &str) -> Result<(), String> {
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
    // A name is also a path segment of a page (`/series/NAME`): `.` and `..` would be taken
    // by every browser for the directory itself or its parent.
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!("'{name}' must begin with a letter or a digit"));
    }
    Ok(())
}

/// Prefix of the keys of the series a spec forms by itself (one that names no `series`),
/// which a named series may not start with.
pub const SPEC_SERIES_PREFIX: &str = "spec-";

/// Checks a series named by a spec: a name that reads well in a URL and cannot be taken for
/// the key of a spec's own series.
pub fn check_series_name(name: &str) -> Result<(), String> {
    check_name(name)?;
    if name.starts_with(SPEC_SERIES_PREFIX) {
        return Err(format!(
            "'{name}' starts with '{SPEC_SERIES_PREFIX}', which keys the series a spec forms by \
             itself"
        ));
    }
    Ok(())
}

pub(super) fn check_ratio(errors: &mut FieldErrors, field: &str, ratio: f64) -> bool {
    let ok = ratio.is_finite() && (1.0..=100.0).contains(&ratio);
    if !ok {
        errors.add(field, "must be between 1.0 (incompressible) and 100.0");
    }
    ok
}

/// Checks one block size: a sane range, and O_DIRECT alignment when direct is on.
pub(super) fn check_block_size(
    errors: &mut FieldErrors,
    field: &str,
    direct: bool,
    block_size: u64,
) {
    if !(512..=(64 << 20)).contains(&block_size) {
        errors.add(field, "must be between 512 bytes and 64M");
    } else if direct && !block_size.is_multiple_of(DIRECT_ALIGN) {
        errors.add(
            field,
            format!("must be a multiple of {DIRECT_ALIGN} when direct is true (got {block_size})"),
        );
    }
}

/// The most generations a generated dataset may have: a month of nightly fulls.
pub const MAX_GENERATIONS: u32 = 30;
/// The share of distinct units a generation changes, unless a spec says.
pub const DEFAULT_CHANGE_RATE: f64 = 0.05;

/// The generations of generated data, when more than one is asked for; `Err` with the
/// problems recorded.
fn generated_generations(
    generated: &super::GeneratedSpec,
    errors: &mut FieldErrors,
) -> Result<Option<crate::engine::reduction::Generations>, ()> {
    let change_rate = generated.change_rate.unwrap_or(DEFAULT_CHANGE_RATE);
    let rate_ok = change_rate.is_finite() && (0.0..=1.0).contains(&change_rate);
    if !rate_ok {
        errors.add(
            "source.generated.change_rate",
            "must be between 0.0 and 1.0 (the share of distinct units each generation changes)",
        );
    }
    let count = match generated.generations {
        None | Some(1) if generated.change_rate.is_some() => {
            errors.add(
                "source.generated.change_rate",
                "needs source.generated.generations of 2 or more beside it",
            );
            return Err(());
        }
        None | Some(1) => return if rate_ok { Ok(None) } else { Err(()) },
        Some(count) if !bounds::GENERATIONS.contains(u64::from(count)) => {
            errors.add("source.generated.generations", bounds::GENERATIONS.rule());
            return Err(());
        }
        Some(count) => count,
    };
    if rate_ok {
        Ok(Some(crate::engine::reduction::Generations {
            count,
            change_rate,
        }))
    } else {
        Err(())
    }
}

/// The dedup ratio and unit of generated data, when a ratio is given; `Err` with the problems
/// recorded.
fn generated_dedup(
    generated: &super::GeneratedSpec,
    errors: &mut FieldErrors,
) -> Result<Option<crate::engine::reduction::DedupSettings>, ()> {
    let unit = generated.dedup_unit.as_ref().map_or(
        crate::engine::reduction::DEFAULT_DEDUP_UNIT,
        ByteSize::bytes,
    );
    let unit_ok = unit >= 4096 && unit.is_multiple_of(4096) && unit <= 64 << 20;
    if !unit_ok {
        errors.add(
            "source.generated.dedup_unit",
            "must be a multiple of 4K, at most 64M",
        );
    }
    let Some(ratio) = generated.dedup_ratio else {
        if generated.dedup_unit.is_some() {
            errors.add(
                "source.generated.dedup_unit",
                "needs source.generated.dedup_ratio beside it",
            );
            return Err(());
        }
        return if unit_ok { Ok(None) } else { Err(()) };
    };
    let ratio_ok = ratio.is_finite() && (1.0..=100.0).contains(&ratio);
    if !ratio_ok {
        errors.add(
            "source.generated.dedup_ratio",
            "must be between 1.0 and 100.0",
        );
    }
    if ratio_ok && unit_ok {
        Ok(Some(crate::engine::reduction::DedupSettings {
            ratio,
            unit,
        }))
    } else {
        Err(())
    }
}
