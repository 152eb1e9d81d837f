//! A checked campaign expanded into its runs: matrix × tests × repeat.

use super::*;

impl CampaignSpec {
    /// Checks every field and expands the campaign into runs: matrix × tests × repeat.
    /// Every bad field is reported, not just the first.
    pub fn plan(&self) -> Result<Vec<RunPlan>, FieldErrors> {
        // Nothing proportional to the input is built before its size is known to be sane.
        let lengths = self.check_list_lengths();
        if !lengths.is_empty() {
            return Err(lengths);
        }
        let mut errors = FieldErrors::default();
        if self.name.len() > 200 {
            errors.add("name", "must be at most 200 characters");
        }
        if let Some(host) = &self.host
            && let Err(message) = check_name(host)
        {
            errors.add("host", message);
        }
        if let Some(series) = &self.series
            && let Err(message) = crate::series::check_series_name(series)
        {
            errors.add("series", message);
        }
        let source = self.source_plan(&mut errors);
        let target = self.target_plan(&mut errors);
        let tests = self.test_kinds(&mut errors);
        if !(1..=100).contains(&self.repeat) {
            errors.add("repeat", "must be between 1 and 100");
        }
        let base = self.base_params(&mut errors, source.as_ref());
        let axes = self.matrix_axes(&mut errors);
        let agents = self.agent_names(&mut errors);
        let network = self.network_plan(&mut errors, &tests, &agents);
        if let Some(target) = &target
            && let Some(index) = self
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

        if let Some(sizes) = self.matrix.as_ref().and_then(|m| m.block_size.as_ref()) {
            for (index, size) in sizes.iter().enumerate() {
                let field = format!("matrix.block_size[{index}]");
                check_block_size(&mut errors, &field, self.params.direct, size.bytes());
            }
        }
        if let Some(base) = &base {
            let most_buffers = axes
                .buffers
                .iter()
                .map(|value| value.unwrap_or(base.buffers))
                .max()
                .unwrap_or(base.buffers);
            let largest_block = axes
                .block_sizes
                .iter()
                .map(|value| value.unwrap_or(base.block_size))
                .max()
                .unwrap_or(base.block_size);
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
        if let (Some(TargetPlan::S3(config)), Some(base)) = (&target, &base) {
            let most_streams = axes
                .streams
                .iter()
                .map(|value| value.unwrap_or(base.streams))
                .max()
                .unwrap_or(base.streams);
            let largest = |values: &[Option<u64>], default: u64| {
                values
                    .iter()
                    .map(|v| v.unwrap_or(default))
                    .max()
                    .unwrap_or(default)
            };
            let part_size = largest(&axes.part_sizes, config.part_size);
            let concurrency = axes
                .concurrency
                .iter()
                .map(|value| value.unwrap_or(config.concurrency))
                .max()
                .unwrap_or(config.concurrency);
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
        let points = axes.points();
        let mut plans = Vec::with_capacity(usize::try_from(runs).unwrap_or(0));
        for point in &points {
            for &test in &tests {
                let is_network = test == TestKind::NetworkBackup;
                // A client sweep repeats only the network runs; the local tests run once.
                if !is_network && point.clients.is_some() && point.clients != points[0].clients {
                    continue;
                }
                // The target tests send each generation of a generated dataset in turn.
                let generations: Vec<Option<u32>> = match &source {
                    SourcePlan::Generated {
                        generations: Some(generations),
                        ..
                    } if test.sends_generations() => (1..=generations.count).map(Some).collect(),
                    _ => vec![None],
                };
                // Each repeat sends every generation in turn.
                let repeats = std::iter::repeat_n(&generations, self.repeat as usize);
                for &generation in repeats.flatten() {
                    let mut params = base.clone();
                    params.generation = generation;
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
                    if let TargetPlan::S3(config) = &target {
                        params.part_size = Some(point.part_size.unwrap_or(config.part_size));
                        params.concurrency = Some(point.concurrency.unwrap_or(config.concurrency));
                    }
                    if is_network {
                        if self.params.streams.is_none() && point.streams.is_none() {
                            params.streams = DEFAULT_CLIENT_STREAMS;
                        }
                        params.clients = Some(point.clients.unwrap_or(network.clients));
                        params.link_mb_s = self.params.link_mb_s;
                    }
                    plans.push(RunPlan {
                        test,
                        params,
                        source: source.clone(),
                        target: target.clone(),
                        agents: if is_network {
                            agents.clone()
                        } else {
                            Vec::new()
                        },
                    });
                }
            }
        }
        Ok(plans)
    }
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
    /// Every combination; only called once the run count is known to be within the limit.
    pub(super) fn points(&self) -> Vec<MatrixPoint> {
        let mut points = Vec::new();
        for buffers in &self.buffers {
            for block_size in &self.block_sizes {
                for streams in &self.streams {
                    for part_size in &self.part_sizes {
                        for concurrency in &self.concurrency {
                            for clients in &self.clients {
                                points.push(MatrixPoint {
                                    buffers: *buffers,
                                    block_size: *block_size,
                                    streams: *streams,
                                    clients: *clients,
                                    part_size: *part_size,
                                    concurrency: *concurrency,
                                });
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
