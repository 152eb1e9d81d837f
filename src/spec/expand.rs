//! A checked campaign expanded into its runs: matrix × tests × repeat.

use super::*;
use crate::engine::tool::life::LadderRung;

impl CampaignSpec {
    /// Checks every field and expands the campaign into its matrix's points and their runs.
    /// Every bad field is reported, not just the first.
    pub fn plan_arms(&self) -> Result<SweepPlan, FieldErrors> {
        // Nothing proportional to the input is built before its size is known to be sane.
        let lengths = self.check_list_lengths();
        if !lengths.is_empty() {
            return Err(lengths);
        }
        let mut errors = FieldErrors::default();
        self.check_labels(&mut errors);
        let source = self.source_plan(&mut errors);
        let target = self.target_plan(&mut errors);
        let tests = self.test_kinds(&mut errors);
        if !bounds::REPEAT.contains(u64::from(self.repeat)) {
            errors.add("repeat", bounds::REPEAT.rule());
        }
        let base = self.base_params(&mut errors, source.as_ref());
        let axes = self.matrix_axes(&mut errors);
        let agents = self.agent_names(&mut errors);
        let network = self.network_plan(&mut errors, &tests, &agents);
        if let Some(target) = &target {
            self.check_restore_target(&mut errors, target);
        }
        self.check_matrix_block_sizes(&mut errors);
        if let Some(base) = &base {
            self.check_ring_memory(&mut errors, &axes, base);
        }
        if let (Some(config), Some(base)) =
            (target.as_ref().and_then(TargetPlan::object_store), &base)
        {
            check_part_memory(&mut errors, &axes, base, config);
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
        let arms = build_arms(
            &axes, &tests, &source, &target, &base, network, &agents, self,
        );
        let search = self.search_plan(&mut errors, &arms);
        if !errors.is_empty() {
            return Err(errors);
        }
        let plans = queue_order(&arms, self.repeat as usize, runs);
        Ok(SweepPlan {
            plans,
            arms,
            search,
        })
    }

    /// The words that name the campaign and where it goes: its name's length, its host's and
    /// its series' names.
    fn check_labels(&self, errors: &mut FieldErrors) {
        if self.name.chars().count() > 200 {
            errors.add("name", "must be at most 200 characters");
        }
        if let Some(host) = &self.host
            && let Err(message) = check_name(host)
        {
            errors.add("host", message);
        }
        if let Some(series) = &self.series
            && let Err(message) = check_series_name(series)
        {
            errors.add("series", message);
        }
    }

    /// A restore reads back a backup image: the first restore test listed is an error when
    /// the target keeps none.
    fn check_restore_target(&self, errors: &mut FieldErrors, target: &TargetPlan) {
        if let Some(index) = self
            .tests
            .iter()
            .position(|test| test == TestKind::Restore.id())
            && !target.target().restores()
        {
            errors.add(
                format!("tests[{index}]"),
                format!(
                    "a restore reads back a backup image, and the target ({}) keeps none; use a \
                     dir, block device, tape or s3 target",
                    target.target().words()
                ),
            );
        }
    }

    /// Each block size the matrix sweeps meets the same rules as the one in `params`.
    fn check_matrix_block_sizes(&self, errors: &mut FieldErrors) {
        if let Some(sizes) = self.matrix.as_ref().and_then(|m| m.block_size.as_ref()) {
            for (index, size) in sizes.iter().enumerate() {
                let field = format!("matrix.block_size[{index}]");
                check_block_size(errors, &field, self.params.direct, size.bytes());
            }
        }
    }

    /// The largest ring any point allocates, the most buffers by the largest block, stays
    /// within the memory a run may take; the error names the matrix when it sets either.
    fn check_ring_memory(&self, errors: &mut FieldErrors, axes: &MatrixAxes, base: &RunParams) {
        let most_buffers = largest(&axes.buffers, base.buffers);
        let largest_block = largest(&axes.block_sizes, base.block_size);
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

    /// Checks every field and expands the campaign into runs: matrix × tests × repeat.
    /// Every bad field is reported, not just the first.
    pub fn plan(&self) -> Result<Vec<RunPlan>, FieldErrors> {
        self.plan_arms().map(|planned| planned.plans)
    }

    /// The search a matrix asks for, checked against its points: `None` for a full sweep.
    fn search_plan(&self, errors: &mut FieldErrors, arms: &[Arm]) -> Option<SearchPlan> {
        let search = self.matrix.as_ref()?.search.as_ref()?;
        if search.strategy == SearchStrategy::Full {
            return None;
        }
        if arms.len() < 2 {
            errors.add(
                "matrix.search.strategy",
                "an adaptive search chooses among a matrix's points: list at least two values \
                 in one of the matrix's lists",
            );
        }
        if self.repeat < 2 {
            errors.add(
                "repeat",
                "an adaptive search repeats its leading points up to `repeat` times to tell \
                 them from noise: give at least 2",
            );
        }
        let full: usize = arms.iter().map(Arm::runs).sum::<usize>() * self.repeat as usize;
        let smallest = arms.iter().map(Arm::runs).max().unwrap_or(1) * 2;
        let budget = search.budget_runs.map_or_else(
            || ((full as f64 * DEFAULT_SEARCH_SHARE).floor() as usize).max(smallest),
            |budget| budget as usize,
        );
        if budget < smallest || budget > full {
            errors.add(
                "matrix.search.budget_runs",
                format!(
                    "must be between {smallest} (two points' runs) and {full} (the full \
                     sweep's runs)"
                ),
            );
        }
        Some(SearchPlan {
            budget_runs: budget,
            seed: search.seed.unwrap_or(0),
            full_runs: full,
            max_repeats: self.repeat as usize,
        })
    }
}

/// The parts an object store's widest run holds at once, the most streams by the most
/// concurrency by the largest part, stay within the memory a run may take.
fn check_part_memory(
    errors: &mut FieldErrors,
    axes: &MatrixAxes,
    base: &RunParams,
    config: &S3Config,
) {
    let most_streams = largest(&axes.streams, base.streams);
    let part_size = largest(&axes.part_sizes, config.part_size);
    let concurrency = largest(&axes.concurrency, config.concurrency);
    let held = S3Config {
        part_size,
        concurrency,
        ..config.clone()
    }
    .part_memory(most_streams);
    if held > MAX_RING_BYTES {
        errors.add(
            "target.part_size",
            format!(
                "streams × (concurrency + 1) × part_size is {}; at most {} may be held in parts",
                format_size(held),
                format_size(MAX_RING_BYTES)
            ),
        );
    }
}

/// The largest value a matrix list gives, a value left out standing for `default`.
fn largest<T: Ord + Copy>(values: &[Option<T>], default: T) -> T {
    values
        .iter()
        .map(|value| value.unwrap_or(default))
        .max()
        .unwrap_or(default)
}

/// The full sweep's runs in queue order: each point's tests in turn, each test's runs
/// repeated `repeat` times, each repeat sending every generation.
fn queue_order(arms: &[Arm], repeat: usize, runs: u64) -> Vec<RunPlan> {
    let mut plans = Vec::with_capacity(usize::try_from(runs).unwrap_or(0));
    for arm in arms {
        for group in &arm.groups {
            // The object-lock probe asks the bucket once: its answer does not vary.
            let once = group.first().is_some_and(|plan| !plan.test.measures_rate());
            for _ in 0..if once { 1 } else { repeat } {
                plans.extend(group.iter().cloned());
            }
        }
    }
    plans
}

/// A campaign's runs, and the matrix points they come from.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// Every run of the full sweep, in queue order.
    pub plans: Vec<RunPlan>,
    /// The matrix's points, each with one repeat of its runs.
    pub arms: Vec<Arm>,
    /// The adaptive search asked for, if any.
    pub search: Option<SearchPlan>,
}

/// A point of a matrix: where it lies on each list, and one repeat of its runs.
#[derive(Debug, Clone)]
pub struct Arm {
    /// Its index in each of the matrix's lists: buffers, block size, streams, part size,
    /// concurrency, clients (0 for a list left out).
    pub at: [usize; 6],
    /// One repeat of its runs, a group per test (each generation a run of its own).
    pub groups: Vec<Vec<RunPlan>>,
}

impl Arm {
    /// Runs one repeat of the point takes.
    pub fn runs(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }
}

/// An adaptive search's bounds, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchPlan {
    pub budget_runs: usize,
    pub seed: u64,
    /// The runs the full sweep would take.
    pub full_runs: usize,
    /// Most repeats of one point: the spec's `repeat`.
    pub max_repeats: usize,
}

/// One repeat of each matrix point's runs.
#[allow(clippy::too_many_arguments)]
fn build_arms(
    axes: &MatrixAxes,
    tests: &[TestKind],
    source: &SourcePlan,
    target: &TargetPlan,
    base: &RunParams,
    network: NetworkDefaults,
    agents: &[String],
    spec: &CampaignSpec,
) -> Vec<Arm> {
    let points = axes.points();
    let mut arms = Vec::with_capacity(points.len());
    for (point, at) in &points {
        let mut groups = Vec::new();
        for &test in tests {
            let is_network = test == TestKind::NetworkBackup;
            // A client sweep repeats only the network runs; the local tests run once.
            if !is_network && point.clients.is_some() && point.clients != points[0].0.clients {
                continue;
            }
            // The object-lock probe asks the bucket once, whatever the sweep.
            if test == TestKind::ObjectLock && !std::ptr::eq(point, &points[0].0) {
                continue;
            }
            // The target tests send each generation of a generated dataset in turn.
            let generations: Vec<Option<u32>> = match source {
                SourcePlan::Generated {
                    generations: Some(generations),
                    ..
                } if test.sends_generations() => (1..=generations.count).map(Some).collect(),
                _ => vec![None],
            };
            // A tool test runs once per tool compared; the other tests run none.
            let tools: Vec<Option<ToolRun>> = if test.runs_tool() {
                spec.tools().into_iter().map(Some).collect()
            } else {
                vec![None]
            };
            // A forecast's life runs once on each rung of its ladder.
            let rungs: Vec<Option<LadderRung>> = match &spec.forecast {
                Some(forecast) if test == TestKind::ToolLife => {
                    forecast.ladder().into_iter().map(Some).collect()
                }
                _ => vec![None],
            };
            let steps: Vec<(Option<u32>, Option<LadderRung>)> = generations
                .iter()
                .flat_map(|&generation| rungs.iter().map(move |&rung| (generation, rung)))
                .collect();
            for tool in tools {
                let mut group = Vec::with_capacity(steps.len());
                for &(generation, rung) in &steps {
                    let mut params = base.clone();
                    params.generation = generation;
                    params.tool = tool.clone();
                    if test == TestKind::ToolLife {
                        params.life = Some(spec.life.unwrap_or_default());
                        params.ladder = rung;
                    }
                    if let Some(buffers) = point.buffers {
                        params.buffers = buffers;
                    }
                    if let Some(block_size) = point.block_size {
                        params.block_size = block_size;
                    }
                    if let Some(streams) = point.streams {
                        params.streams = streams;
                    }
                    // Every run against an object store says how it wrote to it.
                    if let Some(config) = target.object_store() {
                        params.part_size = Some(point.part_size.unwrap_or(config.part_size));
                        params.concurrency = Some(point.concurrency.unwrap_or(config.concurrency));
                    }
                    if is_network {
                        if spec.params.streams.is_none() && point.streams.is_none() {
                            params.streams = DEFAULT_CLIENT_STREAMS;
                        }
                        params.clients = Some(point.clients.unwrap_or(network.clients));
                        params.link_mb_s = spec.params.link_mb_s;
                    }
                    group.push(RunPlan {
                        test,
                        params,
                        source: source.clone(),
                        target: target.clone(),
                        agents: if is_network {
                            agents.to_vec()
                        } else {
                            Vec::new()
                        },
                    });
                }
                groups.push(group);
            }
        }
        arms.push(Arm { at: *at, groups });
    }
    arms
}

/// The checked values of each matrix list; `[None]` where the list was left out.
#[derive(Debug, Clone)]
pub(super) struct MatrixAxes {
    pub(super) buffers: Vec<Option<u32>>,
    pub(super) block_sizes: Vec<Option<u64>>,
    pub(super) streams: Vec<Option<u32>>,
    pub(super) clients: Vec<Option<u32>>,
    pub(super) part_sizes: Vec<Option<u64>>,
    pub(super) concurrency: Vec<Option<u32>>,
}

impl Default for MatrixAxes {
    fn default() -> Self {
        Self {
            buffers: vec![None],
            block_sizes: vec![None],
            streams: vec![None],
            clients: vec![None],
            part_sizes: vec![None],
            concurrency: vec![None],
        }
    }
}

impl MatrixAxes {
    /// Every combination with its index in each list; only called once the run count is
    /// known to be within the limit.
    pub(super) fn points(&self) -> Vec<(MatrixPoint, [usize; 6])> {
        let mut points = Vec::new();
        for (i0, buffers) in self.buffers.iter().enumerate() {
            for (i1, block_size) in self.block_sizes.iter().enumerate() {
                for (i2, streams) in self.streams.iter().enumerate() {
                    for (i3, part_size) in self.part_sizes.iter().enumerate() {
                        for (i4, concurrency) in self.concurrency.iter().enumerate() {
                            for (i5, clients) in self.clients.iter().enumerate() {
                                let point = MatrixPoint {
                                    buffers: *buffers,
                                    block_size: *block_size,
                                    streams: *streams,
                                    clients: *clients,
                                    part_size: *part_size,
                                    concurrency: *concurrency,
                                };
                                points.push((point, [i0, i1, i2, i3, i4, i5]));
                            }
                        }
                    }
                }
            }
        }
        points
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct MatrixPoint {
    pub(super) buffers: Option<u32>,
    pub(super) block_size: Option<u64>,
    pub(super) streams: Option<u32>,
    pub(super) clients: Option<u32>,
    pub(super) part_size: Option<u64>,
    pub(super) concurrency: Option<u32>,
}

/// The network settings every network run of a campaign starts from.
#[derive(Debug, Clone, Copy)]
pub(super) struct NetworkDefaults {
    pub(super) clients: u32,
}
