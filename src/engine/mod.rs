//! The measurement engine: sources, sinks, the pipeline, and the instruments around them.
//! It knows nothing of HTTP or SQL: it takes a `RunPlan` and returns a `RunResult`.

pub mod buffer;
pub mod cache;
pub mod compressibility;
pub mod data;
pub mod dataset;
pub mod error;
pub mod expect;
pub mod finite;
pub mod geometry;
pub mod measure;
pub mod pipeline;
pub mod plan;
pub mod preflight;
pub mod provenance;
pub mod reduction;
pub mod remote;
pub mod restore;
pub mod result;
pub mod source;
pub mod steady;
pub mod survey;
pub mod target;
pub mod test_kind;
pub mod tool;
pub mod validity;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::bounded;

use error::EngineError;
use measure::{CpuSnapshot, round1};
use pipeline::{Job, Limits, Outcome};
use plan::{DEFAULT_GENERATED_SIZE, RunPlan, SourcePlan};
use remote::{Connected, NetworkClients, RemoteClient};
use result::{ClientStatus, RunResult, RunStatus, StageFigures};
use source::{FileStream, GeneratedStream, Renewal, Skipped, StreamSource};
use target::null::NullSink;
use target::{Opening, Sink};
use test_kind::TestKind;

pub use pipeline::RunControl;

/// Files sampled for page-cache residency before a test that reads the source.
const RESIDENCY_SAMPLE_FILES: usize = 2000;
/// Share of the source in the page cache above which a read figure is flagged.
const RESIDENCY_WARN_PCT: f64 = validity::CACHE_RESIDENT_PCT;
/// Seed of generated data: every run of a campaign writes the same bytes.
const GENERATED_SEED: u64 = 0x6261_636b_6c61_6200;
/// Paths queued between the walkers and the streams.
const FILE_QUEUE: usize = 4096;
/// Longest a run waits for the files of earlier runs to be closed before it starts.
const CLOSE_WAIT: Duration = Duration::from_secs(60);

/// Settings of the engine that come from whoever runs it, not from the spec.
#[derive(Clone, Default)]
pub struct EngineSettings {
    /// Devices the caller allows the lab to overwrite.
    pub allow_devices: Vec<PathBuf>,
    /// Where a network backup's clients come from; without it a network backup fails.
    pub network: Option<Arc<dyn NetworkClients>>,
    /// The directory a restore writes its files into (in a directory of its own, removed
    /// afterwards): the lab's data dir.
    pub restore_dir: PathBuf,
    /// The object stores the operator named; a spec's store must be one of them.
    pub object_stores: target::s3::ObjectStores,
    /// Where the lab notes the uploads and objects it has under way in object stores, for
    /// the sweep after a crash (`None`: not noted; a start-up listing of the bucket is all).
    pub upload_journal: Option<target::s3::journal::Journal>,
    /// Whose objects a run writes to an object store (their keys start with it): the lab's
    /// own name, so the sweep after a crash takes only what this lab left, never what another
    /// lab sharing the bucket is writing.
    pub object_owner: String,
    /// The backup tools this lab has (built in and the operator's), found at start.
    pub tools: Arc<tool::Tools>,
}

impl std::fmt::Debug for EngineSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineSettings")
            .field("allow_devices", &self.allow_devices)
            .field("network", &self.network.is_some())
            .field("restore_dir", &self.restore_dir)
            .field("object_stores", &self.object_stores)
            .field("upload_journal", &self.upload_journal)
            .field("object_owner", &self.object_owner)
            .field("tools", &self.tools.available.len())
            .finish()
    }
}

/// Runs one test at one parameter point with real I/O. Always returns a result: a failed or
/// cancelled run says why in `status` and `error`, and leaves none of its files behind.
pub fn execute(plan: &RunPlan, settings: &EngineSettings, control: &RunControl<'_>) -> RunResult {
    let params = &plan.params;
    let mut warnings = stripe_warnings(plan);
    // The files of earlier runs are flushed and closed in the background (a cancel does not
    // wait for it); this run starts once the disk is done with them.
    if !target::wait_for_background(CLOSE_WAIT) {
        warnings.push(format!(
            "the file of an earlier run was still being released after {} s; the disk may \
             have been busy with it during this run",
            CLOSE_WAIT.as_secs()
        ));
    }
    let cache_resident_pct = match &plan.source {
        SourcePlan::Paths(paths) if plan.test.reads_source() => Some(source_residency(
            paths,
            params.cold_cache,
            params.direct,
            &mut warnings,
        )),
        _ => None,
    };

    let skipped = Skipped::default();
    let made = reduction::UnitsMade::default();
    let source_ratio = source_ratio(plan);
    // A cancel during the estimate ends it within a read, and the run with it.
    let source_dedup = source_dedup(plan, control.cancel, &mut warnings);
    let matched = Matched {
        compress_ratio: source_ratio,
        dedup: source_dedup,
    };
    let cpu_before = CpuSnapshot::take();
    let mut tallies = Vec::new();
    let mut restore_figures = None;
    let mut tool_figures = None;
    let outcome = if control.cancel.load(std::sync::atomic::Ordering::Relaxed) {
        Err(EngineError::Cancelled)
    } else if plan.test.runs_tool() {
        tool::run::execute(plan, settings, control).map(|measured| {
            tool_figures = Some(measured.figures);
            measured.outcome
        })
    } else if plan.test == TestKind::NetworkBackup {
        run_network(plan, settings, control).map(|(outcome, clients)| {
            tallies = clients;
            outcome
        })
    } else if plan.test == TestKind::Restore {
        restore_job(plan, settings, source_ratio, control.cancel).map(|(job, figures, medium)| {
            restore_figures = Some(figures);
            let mut outcome = pipeline::run(job, control);
            // The medium's own figures (an object store's reads), taken once its reader is done.
            outcome.sink_figures.extend(medium.map(|figures| figures()));
            outcome
        })
    } else {
        build_job(plan, settings, &skipped, &made, &matched, control.cancel)
            .map(|job| pipeline::run(job, control))
    };
    let cpu = cpu_before.usage_until(&CpuSnapshot::take());
    warnings.extend(skipped.warning());

    let mut result = RunResult {
        status: RunStatus::Done,
        error: None,
        cpu,
        cache_resident_pct,
        warnings,
        data_compress_ratio: source_ratio,
        generated_dedup: generated_dedup(plan, source_dedup, made.tally()),
        restore: restore_figures,
        tool: tool_figures,
        ..RunResult::failed(plan.test, params.clone(), String::new())
    };
    let (drain, remote) = (
        drain_allowance(plan),
        plan.target.target().reaches_outside(),
    );
    match outcome {
        Ok(mut outcome) if plan.test == TestKind::NetworkBackup => {
            let per_client = std::mem::take(&mut outcome.tally_samples);
            fill_from_outcome(&mut result, outcome, drain, remote);
            fill_clients(&mut result, &tallies, per_client);
        }
        Ok(outcome) => fill_from_outcome(&mut result, outcome, drain, remote),
        Err(EngineError::Cancelled) => {
            result.status = RunStatus::Cancelled;
            result.error = Some("cancelled".to_string());
        }
        Err(error) => {
            result.status = RunStatus::Failed;
            result.error = Some(error.to_string());
        }
    }
    if plan.test.writes_target()
        && let Some(room) = target_room(&plan.target)
        && result.bytes > 0
        && result.bytes + plan.params.block_size >= room
    {
        result.warnings.push(format!(
            "the target's file system had room for {} more (its free space less a reserve of              1 GiB or a twentieth of it): the run stopped there rather than fill it",
            crate::size::format_bytes(room)
        ));
    }
    let capabilities = plan.target.target().capabilities();
    validity::judge(
        &mut result,
        validity::Evidence {
            skipped_entries: skipped.count(),
            // A dedup store's work is the CPU's as much as its disk's: a busy CPU is what it
            // measures, not a reason to doubt it.
            measures_device: if plan.test.reads_source() {
                matches!(plan.source, SourcePlan::Paths(_))
            } else {
                capabilities.real_device && plan.target.target().dedups_at().is_none()
            },
            flushes_at_end: plan.test.writes_target() && params.fsync && capabilities.flushes,
            one_pass: reads_once(plan),
            whole_job: plan.test.runs_tool(),
        },
    );
    if result.status == RunStatus::Failed {
        // A failed run keeps what it moved and for how long, never a rate: the run did not
        // measure what it was meant to.
        result.mb_per_s = 0.0;
        result.steady = None;
    }
    finite::keep_finite(&mut result);
    result
}

/// With direct I/O every request reaches the device as the run sized it: says when that size
/// does not use every disk of a striped source or target volume (read from sysfs, before the
/// timed window).
fn stripe_warnings(plan: &RunPlan) -> Vec<String> {
    if !plan.params.direct {
        return Vec::new();
    }
    let mut places: Vec<(&str, &Path)> = Vec::new();
    if plan.test.reads_source()
        && plan.agents.is_empty()
        && let SourcePlan::Paths(paths) = &plan.source
    {
        places.extend(paths.iter().map(|path| ("source", path.as_path())));
    }
    let target = plan.target.target();
    if plan.test.writes_target()
        && let Some(path) = target.path()
    {
        places.push(("target", path));
    }
    let block = plan.params.block_size;
    let mut warnings: Vec<String> = Vec::new();
    for (role, path) in places {
        let place = provenance::place(role, path);
        let advice = place.geometry.as_ref().and_then(|geometry| {
            geometry
                .fit(block)
                .and_then(|fit| fit.advice(role, &geometry.device, block))
        });
        if let Some(advice) = advice.filter(|advice| !warnings.contains(advice)) {
            warnings.push(advice);
        }
    }
    warnings
}

/// Fills a result from what the pipeline measured; `drain` is the run's allowance after its
/// duration and `remote` whether its target lies outside the machine (for the words of a cut).
fn fill_from_outcome(
    result: &mut RunResult,
    outcome: Outcome,
    drain: Option<Duration>,
    remote: bool,
) {
    let wall = outcome.wall;
    result.bytes = outcome.bytes;
    result.files = outcome.files;
    result.seconds = measure::round3(wall.as_secs_f64());
    result.mb_per_s = if wall > Duration::ZERO {
        round1(outcome.bytes as f64 / wall.as_secs_f64() / 1e6)
    } else {
        0.0
    };
    result.stages = StageFigures {
        reader_busy_pct: round1(outcome.readers.busy_pct(outcome.reader_threads, wall)),
        reader_wait_pct: round1(outcome.readers.wait_pct(outcome.reader_threads, wall)),
        reader_waits: outcome.readers.waits,
        writer_busy_pct: round1(outcome.writers.busy_pct(outcome.writer_threads, wall)),
        writer_wait_pct: round1(outcome.writers.wait_pct(outcome.writer_threads, wall)),
        writer_waits: outcome.writers.waits,
    };
    result.latency_us = outcome.latency.figures();
    if result.latency_us.is_some() {
        let of = if outcome.writer_threads > 0 {
            "sink_write"
        } else {
            "source_read"
        };
        result.latency_of = Some(of.to_string());
    }
    result.samples = outcome.samples;
    target::SinkFigures::apply(&outcome.sink_figures, result);
    if let Some(tape) = result.tape.as_ref().filter(|tape| tape.end_of_tape) {
        result.warnings.push(format!(
            "end of tape: a cartridge of the emulated {} filled up after {} on tape; the run \
             stopped there, as a backup would until the next cartridge",
            tape.model,
            crate::size::format_bytes(tape.tape_bytes)
        ));
    }
    // A cancel, then a cut at the drain deadline, come first: what failed after them (a
    // request given up, a sink that stopped taking data) is their consequence.
    if outcome.cancelled {
        result.status = RunStatus::Cancelled;
        result.error = Some("cancelled".to_string());
    } else if outcome.overran {
        result.status = RunStatus::Failed;
        let after = drain.map_or(0.0, |drain| drain.as_secs_f64());
        result.error = Some(if remote {
            format!(
                "the target was still taking the run's data {after:.0} s after the run's \
                 duration, and the run was cut there: the store stopped answering, or answers \
                 far slower than the ring hands it data"
            )
        } else {
            format!(
                "the emulated target was still taking the ring's data {after:.0} s after the \
                 run's duration, and the run was cut there: its settings are too slow for the \
                 data the ring holds (give it a faster speed, a larger drive buffer, or fewer \
                 and smaller buffers)"
            )
        });
    } else if let Some(failure) = outcome.failure {
        result.status = RunStatus::Failed;
        result.error = Some(failure.to_string());
    } else if outcome.bytes == 0 {
        result.status = RunStatus::Failed;
        result.error = Some("the source holds no data to read".to_string());
    }
}

/// Adds a network run's per-client figures; a run where some clients failed is partial, one
/// where all failed is failed.
fn fill_clients(
    result: &mut RunResult,
    tallies: &[Arc<dyn RemoteClient>],
    per_client: Vec<Vec<result::Sample>>,
) {
    let clients: Vec<_> = tallies
        .iter()
        .zip(per_client.into_iter().chain(std::iter::repeat(Vec::new())))
        .map(|(tally, samples)| tally.figures(result.seconds, samples))
        .collect();
    let samples: Vec<_> = clients.iter().map(|c| c.samples.clone()).collect();
    result.samples = remote::sum_samples(&samples);
    let failed: Vec<String> = clients
        .iter()
        .filter(|client| client.status == ClientStatus::Failed)
        .map(|client| {
            format!(
                "client '{}' failed: {}",
                client.name,
                client.error.as_deref().unwrap_or("no reason given")
            )
        })
        .collect();
    if !failed.is_empty() && result.status == RunStatus::Done {
        if failed.len() == clients.len() {
            result.status = RunStatus::Failed;
            result.error = Some(format!("every client failed; {}", failed.join("; ")));
        } else {
            result.partial = true;
            result.warnings.push(format!(
                "partial: {}; the other clients finished, and the figures cover what they sent",
                failed.join("; ")
            ));
        }
    }
    result.clients = Some(clients);
}

/// A network backup: the clients are set sending, their connections become the streams, and
/// the pipeline feeds the target.
fn run_network(
    plan: &RunPlan,
    settings: &EngineSettings,
    control: &pipeline::RunControl<'_>,
) -> Result<(Outcome, Vec<Arc<dyn RemoteClient>>), EngineError> {
    let params = &plan.params;
    let network = settings.network.as_deref().ok_or_else(|| {
        EngineError::Network("this lab was started without network clients".to_string())
    })?;
    let sinks = target_sinks(plan, settings, None, control.cancel, None)?;
    let Connected {
        streams,
        clients,
        guard,
    } = network.connect(plan, control.cancel)?;
    let job = Job {
        streams,
        feeders: Vec::new(),
        sinks,
        buffers: params.buffers as usize,
        block_size: params.block_size as usize,
        fsync: params.fsync,
        // The clients send their shares of the size; the lab ends the run at its duration.
        limits: Limits {
            bytes: None,
            duration: params.duration_s.map(Duration::from_secs_f64),
            until_steady: params.until_steady,
            steady_after: steady_after(plan),
            drain: drain_allowance(plan),
        },
        tallies: clients.iter().map(|client| client.received()).collect(),
    };
    let outcome = pipeline::run(job, control);
    drop(guard);
    Ok((outcome, clients))
}

/// Shortest time an emulated target is given after the run's duration to take what the ring
/// holds and close (a drive writes out its buffer); the allowance is half the duration when
/// that is longer.
const MIN_DRAIN: Duration = Duration::from_secs(5);
/// The least a run into a target outside the machine may take after its duration to complete
/// what it handed over (an object store's last uploads): a store's completions take seconds.
const MIN_REMOTE_DRAIN: Duration = Duration::from_secs(30);

/// How long after its duration a run into an emulated target, or one outside the machine, may
/// drain before it is cut: an emulated target's waits are its model's, and a model with absurd
/// settings must not hold the lane; a store that stops answering must not either. `None` for
/// the machine's own targets and for runs that write nothing: a real flush is the measurement.
fn drain_allowance(plan: &RunPlan) -> Option<Duration> {
    let target = plan.target.target();
    let duration = plan.params.duration_s.map(Duration::from_secs_f64)?;
    if !plan.test.writes_target() {
        return None;
    }
    if target.reaches_outside() {
        Some(MIN_REMOTE_DRAIN.max(drain_after(duration)))
    } else {
        target
            .capabilities()
            .emulated
            .then(|| drain_after(duration))
    }
}

/// The shortest a run that ends once steady may last: its steady window's minimum, or what its
/// emulated drive needs to take its buffer several times (`expect`).
fn steady_after(plan: &RunPlan) -> Duration {
    Duration::try_from_secs_f64(expect::min_steady_run_s(plan)).unwrap_or(Duration::ZERO)
}

/// The drain allowance after a run of `duration`.
fn drain_after(duration: Duration) -> Duration {
    MIN_DRAIN.max(duration / 2)
}

/// Puts together the streams, feeders and sinks of one test.
fn build_job<'a>(
    plan: &'a RunPlan,
    settings: &EngineSettings,
    skipped: &'a Skipped,
    made: &'a reduction::UnitsMade,
    matched: &Matched,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Job<'a>, EngineError> {
    let params = &plan.params;
    let streams = match plan.test {
        TestKind::TapeWrite | TestKind::ReadSingle => 1,
        _ => params.streams as usize,
    };
    let mut limits = Limits {
        bytes: params.size,
        duration: params.duration_s.map(Duration::from_secs_f64),
        until_steady: params.until_steady,
        steady_after: steady_after(plan),
        drain: drain_allowance(plan),
    };
    let mut feeders: Vec<Box<dyn FnOnce() + Send + 'a>> = Vec::new();
    let generated = match (&plan.source, plan.test) {
        (
            SourcePlan::Generated {
                size,
                compress_ratio,
                repeat,
                dedup,
                generations,
            },
            _,
        ) => Some((*size, *compress_ratio, *repeat, *dedup, *generations)),
        (SourcePlan::Paths(_), TestKind::TapeWrite) => Some((
            params.size.unwrap_or(DEFAULT_GENERATED_SIZE),
            matched.compress_ratio.unwrap_or(params.compress_ratio),
            false,
            matched.dedup,
            None,
        )),
        (SourcePlan::Paths(_), _) => None,
    };
    let mut dataset = None;
    let readers: Vec<Box<dyn StreamSource + 'a>> = match (generated, &plan.source) {
        (Some((size, compress_ratio, repeat, dedup, generations)), _) => {
            // Generated data never runs out: a time-based run ends at its duration, or at an
            // explicit size.
            if !params.time_based {
                limits.bytes = Some(limits.bytes.map_or(size, |limit| limit.min(size)));
            }
            let pool = data::DataPool::new(GENERATED_SEED, compress_ratio);
            // The target write must outrun any target, so its blocks are refreshed in place;
            // where generated data stands in for a source, every byte is produced, as a read
            // would copy it; lmdd's internal input writes its one block again as it is.
            let renewal = if repeat {
                Renewal::Repeat
            } else if plan.test == TestKind::TapeWrite {
                Renewal::Refresh
            } else {
                Renewal::Full
            };
            let seeds = (0..streams).map(|index| GENERATED_SEED ^ index as u64);
            match units_of(dedup, generations, params.generation) {
                // Units are made afresh every time: a copy must be its original. A dataset of
                // several generations is split between the streams, each sending its share
                // of it whole, so every generation is the same data but for its changes.
                Some((settings, change_rate)) => {
                    let share_of = generations.map(|_| limits.bytes.unwrap_or(size));
                    let streams = reduction::DatasetStreams::new(
                        Arc::clone(&pool),
                        settings,
                        seeds,
                        share_of,
                        params.generation.unwrap_or(1),
                        change_rate,
                    );
                    let generation = streams.generation();
                    let readers = (0..streams.len())
                        .filter_map(|index| streams.stream(index, generation))
                        .map(|(units, share)| {
                            Box::new(source::UnitSource::new(units, made, share))
                                as Box<dyn StreamSource>
                        })
                        .collect();
                    dataset = Some(streams);
                    readers
                }
                None => seeds
                    .map(|seed| {
                        Box::new(GeneratedStream::new(Arc::clone(&pool), seed, renewal))
                            as Box<dyn StreamSource>
                    })
                    .collect(),
            }
        }
        (None, SourcePlan::Paths(paths)) => {
            let (files_tx, files_rx) = bounded::<source::SourceFile>(FILE_QUEUE);
            // A time-based run reads a source that runs out again until its time is up, but
            // into a dedup store, which would take the second pass as duplicates.
            let again = params.time_based && limits.duration.is_some() && !reads_once(plan);
            for root in paths {
                let files_tx = files_tx.clone();
                feeders.push(Box::new(move || {
                    if again {
                        source::walk_until_hung_up(root, &files_tx, skipped)
                    } else {
                        source::walk_into(root, &files_tx, skipped)
                    }
                }));
            }
            (0..streams)
                .map(|_| {
                    Box::new(FileStream::new(
                        files_rx.clone(),
                        params.direct,
                        params.cold_cache,
                        skipped,
                    )) as Box<dyn StreamSource>
                })
                .collect()
        }
        (None, SourcePlan::Generated { .. }) => Vec::new(),
    };
    // A source what-if caps only the tests that read the source: the target's own test
    // writes generated data, and stays the target's ceiling.
    let source_rate = params.source_rate_mb_s.filter(|_| plan.test.reads_source());
    let readers = match source_rate {
        Some(rate) => readers
            .into_iter()
            .map(|stream| Box::new(source::Throttled::new(stream, rate)) as Box<dyn StreamSource>)
            .collect(),
        None => readers,
    };
    // A target that keeps what it was sent takes the dataset's earlier generations in first.
    // It counts against the run's duration: the run ends within it all the same.
    let history = dataset.as_ref().filter(|streams| streams.generation() > 1);
    let opened = std::time::Instant::now();
    let deadline = limits.duration.map(|duration| opened + duration);
    let sinks = target_sinks(plan, settings, history, cancel, deadline)?;
    if history.is_some() {
        limits.duration = limits
            .duration
            .map(|duration| duration.saturating_sub(opened.elapsed()));
    }
    // A run into a file system never fills it: it stops at the room left less a reserve.
    if plan.test.writes_target()
        && let Some(room) = target_room(&plan.target)
    {
        limits.bytes = Some(limits.bytes.map_or(room, |limit| limit.min(room)));
    }
    Ok(Job {
        streams: readers,
        feeders,
        sinks,
        buffers: params.buffers as usize,
        block_size: params.block_size as usize,
        fsync: params.fsync,
        limits,
        tallies: Vec::new(),
    })
}

/// The most a run leaves free on its target's file system: 1 GiB (a twentieth of a smaller
/// one).
const TARGET_RESERVE_MAX: u64 = 1 << 30;

/// The bytes a run may write into its target's file system (a dir or a dedup store): what
/// is free to unprivileged writers less a reserve (a twentieth of the file system, 1 GiB at
/// most), so that a run on a shared disk never fills it, for other users or for the lab's own
/// database. `None` for other targets.
pub fn target_room(target: &plan::TargetPlan) -> Option<u64> {
    let dir = match target {
        plan::TargetPlan::Dir(dir) => dir,
        plan::TargetPlan::Dedup(config) => &config.path,
        _ => return None,
    };
    let stats = rustix::fs::statvfs(dir.as_path()).ok()?;
    let block = stats.f_frsize.max(1);
    let free = stats.f_bavail.saturating_mul(block);
    let size = stats.f_blocks.saturating_mul(block);
    Some(free.saturating_sub(TARGET_RESERVE_MAX.min(size / 20)))
}

/// A restore: the target lays down a backup image (before the timed window) and gives the
/// stream that reads it back; one writer puts what it reads into files shaped like the source.
fn restore_job(
    plan: &RunPlan,
    settings: &EngineSettings,
    source_ratio: Option<f64>,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<
    (
        Job<'static>,
        result::RestoreFigures,
        Option<restore::MediumFigures>,
    ),
    EngineError,
> {
    let params = &plan.params;
    let (bytes, compress_ratio, paths) = match &plan.source {
        SourcePlan::Generated {
            size,
            compress_ratio,
            ..
        } => (*size, *compress_ratio, None),
        SourcePlan::Paths(paths) => (
            params.size.unwrap_or(DEFAULT_GENERATED_SIZE),
            source_ratio.unwrap_or(params.compress_ratio),
            Some(paths.as_slice()),
        ),
    };
    let bytes = params.size.map_or(bytes, |size| size.min(bytes));
    let tag = run_tag();
    let image = plan.target.target().restore_image(&restore::ImageRequest {
        bytes,
        compress_ratio,
        direct: params.direct,
        streams: params.streams,
        tag: &tag,
        params,
        settings,
        cancel,
    })?;
    let sink =
        restore::RestoreSink::create(&settings.restore_dir, &tag, restore::file_shapes(paths))?;
    let medium = image.figures;
    let figures = result::RestoreFigures {
        from: image.from,
        into: String::new(),
        interleaved: image.interleaved,
        positioning_s: image.positioning_s,
    };
    let job = Job {
        streams: vec![image.stream],
        feeders: Vec::new(),
        sinks: vec![Box::new(sink)],
        buffers: params.buffers as usize,
        block_size: params.block_size as usize,
        fsync: params.fsync,
        limits: Limits {
            // A time-based restore reads until its time is up (an emulated drive's image
            // never ends; a file image ends where it ends).
            bytes: (!params.time_based).then_some(bytes),
            duration: params.duration_s.map(Duration::from_secs_f64),
            until_steady: params.until_steady,
            steady_after: steady_after(plan),
            drain: None,
        },
        tallies: Vec::new(),
    };
    Ok((job, figures, medium))
}

/// The source's compressibility, measured for a target test or a restore whose image is to
/// match it. Below
/// 1.05:1 the source counts as incompressible.
/// The dedup ratio a run's generated units achieved, when the source asked for one.
fn generated_dedup(
    plan: &RunPlan,
    source_dedup: Option<reduction::DedupSettings>,
    made: reduction::UnitTally,
) -> Option<reduction::GeneratedDedup> {
    let (dedup, generations) = match &plan.source {
        SourcePlan::Generated {
            dedup, generations, ..
        } => (*dedup, *generations),
        SourcePlan::Paths(_) => (source_dedup, None),
    };
    let (settings, change_rate) = units_of(dedup, generations, plan.params.generation)?;
    let achieved = made.ratio()?;
    let generation = generations
        .zip(plan.params.generation)
        .map(|(generations, generation)| reduction::GenerationMade {
            generation,
            of: generations.count,
            change_rate_asked: change_rate,
            change_rate_achieved: if generation > 1 {
                (made.changed_units as f64 / made.new_units as f64 * 10_000.0).round() / 10_000.0
            } else {
                0.0
            },
        });
    Some(reduction::GeneratedDedup {
        asked: settings.ratio,
        achieved: (achieved * 1000.0).round() / 1000.0,
        unit: settings.unit,
        units: made.units,
        new_units: made.new_units,
        generation,
    })
}

/// Whether the run reads its source once whatever its duration: a backup of a tree into a
/// target that deduplicates, where a second pass would be all duplicates.
fn reads_once(plan: &RunPlan) -> bool {
    matches!(plan.source, SourcePlan::Paths(_))
        && plan.test.reads_source()
        && plan.test.writes_target()
        && plan.target.target().dedups_at().is_some()
}

/// What a target test's generated data matches of the source it stands in for.
struct Matched {
    /// The source's compressibility, when measured.
    compress_ratio: Option<f64>,
    /// The source's dedup ratio at the target's chunk size, when the target deduplicates.
    dedup: Option<reduction::DedupSettings>,
}

/// Below this ratio a source counts as not deduplicating.
const MIN_SOURCE_DEDUP: f64 = 1.05;

/// The source's dedup ratio, scanned at the target's average chunk before a target test into
/// a deduplicating target whose data is to match the source: a store that finds the source
/// reducing 3:1 must be measured taking data that reduces 3:1. The units repeat whole at
/// eight chunks or more, so the store's chunks straddling their ends cost little of the ratio.
fn source_dedup(
    plan: &RunPlan,
    cancel: &std::sync::atomic::AtomicBool,
    warnings: &mut Vec<String>,
) -> Option<reduction::DedupSettings> {
    let SourcePlan::Paths(paths) = &plan.source else {
        return None;
    };
    if plan.test != TestKind::TapeWrite || !plan.params.match_source {
        return None;
    }
    let avg_chunk = plan.target.target().dedups_at()?;
    let started = std::time::Instant::now();
    let found = reduction::source_estimate::estimate_until(
        paths,
        avg_chunk,
        reduction::SOURCE_SCAN_BYTES,
        cancel,
    );
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let Some(found) = found else {
        warnings.push(
            "the source's dedup ratio could not be estimated (no file could be read); the \
             target test wrote data that does not repeat"
                .to_string(),
        );
        return None;
    };
    let ratio = found.estimate.dedup_ratio;
    warnings.push(format!(
        "the target test's data was made to dedup {ratio:.2}:1, as the source does ({}; \
         {:.1} s, before the timed window)",
        found.words(),
        started.elapsed().as_secs_f64()
    ));
    (ratio >= MIN_SOURCE_DEDUP).then(|| reduction::DedupSettings {
        ratio: (ratio * 100.0).round() / 100.0,
        unit: (u64::from(avg_chunk) * 8).clamp(reduction::DEFAULT_DEDUP_UNIT, 8 << 20) / 4096
            * 4096,
    })
}

fn source_ratio(plan: &RunPlan) -> Option<f64> {
    match &plan.source {
        SourcePlan::Paths(paths)
            if matches!(plan.test, TestKind::TapeWrite | TestKind::Restore)
                && plan.params.match_source =>
        {
            compressibility::measure(paths).map(|ratio| {
                if ratio < 1.05 {
                    1.0
                } else {
                    (ratio * 100.0).round() / 100.0
                }
            })
        }
        _ => None,
    }
}

/// The writers' sinks of a test: none for read tests, the null sink for the null-sink test,
/// else the target's (one per emulated drive).
fn target_sinks(
    plan: &RunPlan,
    settings: &EngineSettings,
    history: Option<&reduction::DatasetStreams>,
    cancel: &std::sync::atomic::AtomicBool,
    deadline: Option<std::time::Instant>,
) -> Result<Vec<Box<dyn Sink>>, EngineError> {
    match plan.test {
        TestKind::ReadSingle
        | TestKind::ReadParallel
        | TestKind::Restore
        | TestKind::ToolRestore => Ok(Vec::new()),
        TestKind::NullSink | TestKind::ToolCeiling => Ok(vec![Box::new(NullSink)]),
        TestKind::TapeWrite
        | TestKind::FullBackup
        | TestKind::NetworkBackup
        | TestKind::ToolBackup
        | TestKind::ToolIncremental => plan.target.target().open(&Opening {
            direct: plan.params.direct,
            block_size: plan.params.block_size as usize,
            params: &plan.params,
            settings,
            tag: &run_tag(),
            history,
            cancel,
            deadline,
        }),
    }
}

/// How generated units are made for a run: the dedup settings asked for (every unit new when
/// only generations are), and the change rate between generations; `None` when the data is
/// plain generated data.
fn units_of(
    dedup: Option<reduction::DedupSettings>,
    generations: Option<reduction::Generations>,
    generation: Option<u32>,
) -> Option<(reduction::DedupSettings, f64)> {
    let change_rate = generations
        .filter(|_| generation.is_some())
        .map(|generations| generations.change_rate);
    match (dedup, change_rate) {
        (None, None) => None,
        (dedup, change_rate) => Some((
            dedup.unwrap_or(reduction::DedupSettings {
                ratio: 1.0,
                unit: reduction::DEFAULT_DEDUP_UNIT,
            }),
            change_rate.unwrap_or(0.0),
        )),
    }
}

/// A name for a run's files that no other run, in this process or another, will pick.
fn run_tag() -> String {
    format!("{}-{:016x}", std::process::id(), rand::random::<u64>())
}

/// Measures how much of the source sits in the page cache (on a sample of its files), after
/// evicting it when `cold_cache` is on, and warns when a read figure would come from memory.
fn source_residency(
    paths: &[PathBuf],
    cold_cache: bool,
    direct: bool,
    warnings: &mut Vec<String>,
) -> f64 {
    if cold_cache {
        for root in paths {
            // Dirty pages cannot be evicted; writing them back first makes eviction complete.
            let _ = cache::sync_filesystem(root);
        }
    }
    let files = source::list_files(paths, RESIDENCY_SAMPLE_FILES);
    let (mut total, mut resident) = (0u64, 0u64);
    for path in &files {
        if let Ok((len, in_cache)) = file_residency(path, cold_cache) {
            total += len;
            resident += in_cache;
        }
    }
    let pct = if total > 0 {
        round1(100.0 * resident as f64 / total as f64)
    } else {
        0.0
    };
    if pct > RESIDENCY_WARN_PCT && !direct {
        let sampled = if files.len() >= RESIDENCY_SAMPLE_FILES {
            format!("the first {} files", files.len())
        } else {
            "all files".to_string()
        };
        let warning = if cold_cache {
            format!(
                "{pct}% of the source ({sampled}) stayed in the page cache after eviction \
                 (pages still dirty, or mapped by another process): this figure is partly \
                 memory speed, not the disk's"
            )
        } else {
            format!(
                "{pct}% of the source ({sampled}) was in the page cache before the test: this \
                 figure is partly memory speed, not the disk's; set cold_cache to evict it first"
            )
        };
        warnings.push(warning);
    }
    pct
}

fn file_residency(found: &source::SourceFile, evict: bool) -> std::io::Result<(u64, u64)> {
    let file = found.open(false)?;
    let len = file.metadata()?.len();
    if evict {
        cache::evict(&file)?;
    }
    Ok((len, cache::resident_bytes(&file, len)?))
}
