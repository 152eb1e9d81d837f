//! A run plan made into what the pipeline executes: the source and the target's sinks, the
//! limits and the drain allowance after the timed window, the room the target must keep; a
//! restore's job, and a network backup's clients set sending.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::bounded;

use crate::engine::error::EngineError;
use crate::engine::pipeline::{Job, Limits, Outcome};
use crate::engine::plan::{DEFAULT_GENERATED_SIZE, RunPlan, SourcePlan};
use crate::engine::remote::{Connected, RemoteClient};
use crate::engine::source::{FileStream, GeneratedStream, Passes, Renewal, Skipped, StreamSource};
use crate::engine::target::null::NullSink;
use crate::engine::target::{Opening, Sink};
use crate::engine::test_kind::TestKind;
use crate::engine::{
    EngineSettings, data, expect, pipeline, plan, reduction, restore, result, source,
};

/// A network backup: the clients are set sending, their connections become the streams, and
/// the pipeline feeds the target.
pub(super) fn run_network(
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
        passes: None,
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

/// What a target test's generated data matches of the source it stands in for.
pub(super) struct Matched {
    /// The source's compressibility, when measured.
    pub(super) compress_ratio: Option<f64>,
    /// The source's dedup ratio at the target's chunk size, when the target deduplicates.
    pub(super) dedup: Option<reduction::DedupSettings>,
}

/// Seed of generated data: every run of a campaign writes the same bytes.
const GENERATED_SEED: u64 = 0x6261_636b_6c61_6200;
/// Paths queued between the walkers and the streams.
const FILE_QUEUE: usize = 4096;

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
pub(super) fn drain_allowance(plan: &RunPlan) -> Option<Duration> {
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
pub(super) fn steady_after(plan: &RunPlan) -> Duration {
    Duration::try_from_secs_f64(expect::min_steady_run_s(plan)).unwrap_or(Duration::ZERO)
}

/// The drain allowance after a run of `duration`.
fn drain_after(duration: Duration) -> Duration {
    MIN_DRAIN.max(duration / 2)
}

/// Puts together the streams, feeders and sinks of one test.
pub(super) fn build_job<'a>(
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
    let mut feeders: Feeders<'a> = Vec::new();
    let mut passes = None;
    let mut dataset = None;
    let readers = match (generated_of(plan, matched), &plan.source) {
        (Some(generated), _) => {
            // Generated data never runs out: a time-based run ends at its duration, or at an
            // explicit size.
            if !params.time_based {
                let size = generated.size;
                limits.bytes = Some(limits.bytes.map_or(size, |limit| limit.min(size)));
            }
            let (readers, streams) = generated_readers(plan, &generated, streams, &limits, made);
            dataset = streams;
            readers
        }
        (None, SourcePlan::Paths(paths)) => {
            // A time-based run reads a source that runs out again until its time is up, but
            // into a dedup store, which would take the second pass as duplicates.
            let again = params.time_based && limits.duration.is_some() && !reads_once(plan);
            let (readers, walkers, counted) = path_readers(plan, paths, streams, again, skipped);
            feeders = walkers;
            passes = again.then_some(counted);
            readers
        }
        (None, SourcePlan::Generated { .. }) => Vec::new(),
    };
    // A source what-if caps only the tests that read the source: the target's own test
    // writes generated data, and stays the target's ceiling.
    let readers = match params.source_rate_mb_s.filter(|_| plan.test.reads_source()) {
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
        passes,
    })
}

/// Generated data a run sends: its size, compressibility, whether it repeats its one block,
/// and its dedup and generations.
struct Generated {
    size: u64,
    compress_ratio: f64,
    repeat: bool,
    dedup: Option<reduction::DedupSettings>,
    generations: Option<reduction::Generations>,
}

/// The generated data a run sends: its source's, or for a target test of a source of paths,
/// data of the size asked and the source's compressibility and dedup when they were measured.
fn generated_of(plan: &RunPlan, matched: &Matched) -> Option<Generated> {
    let params = &plan.params;
    match (&plan.source, plan.test) {
        (
            SourcePlan::Generated {
                size,
                compress_ratio,
                repeat,
                dedup,
                generations,
            },
            _,
        ) => Some(Generated {
            size: *size,
            compress_ratio: *compress_ratio,
            repeat: *repeat,
            dedup: *dedup,
            generations: *generations,
        }),
        (SourcePlan::Paths(_), TestKind::TapeWrite) => Some(Generated {
            size: params.size.unwrap_or(DEFAULT_GENERATED_SIZE),
            compress_ratio: matched.compress_ratio.unwrap_or(params.compress_ratio),
            repeat: false,
            dedup: matched.dedup,
            generations: None,
        }),
        (SourcePlan::Paths(_), _) => None,
    }
}

/// One stream of generated data per reader, and the dataset they share when the data
/// dedups by units.
fn generated_readers<'a>(
    plan: &RunPlan,
    generated: &Generated,
    streams: usize,
    limits: &Limits,
    made: &'a reduction::UnitsMade,
) -> (
    Vec<Box<dyn StreamSource + 'a>>,
    Option<reduction::DatasetStreams>,
) {
    let params = &plan.params;
    let pool = data::DataPool::new(GENERATED_SEED, generated.compress_ratio);
    // The target write must outrun any target, so its blocks are refreshed in place; where
    // generated data stands in for a source, every byte is produced, as a read would copy it;
    // lmdd's internal input writes its one block again as it is.
    let renewal = if generated.repeat {
        Renewal::Repeat
    } else if plan.test == TestKind::TapeWrite {
        Renewal::Refresh
    } else {
        Renewal::Full
    };
    let seeds = (0..streams).map(|index| GENERATED_SEED ^ index as u64);
    match units_of(generated.dedup, generated.generations, params.generation) {
        // Units are made afresh every time: a copy must be its original. A dataset of several
        // generations is split between the streams, each sending its share of it whole, so
        // every generation is the same data but for its changes.
        Some((settings, change_rate)) => {
            let share_of = generated
                .generations
                .map(|_| limits.bytes.unwrap_or(generated.size));
            let dataset = reduction::DatasetStreams::new(
                Arc::clone(&pool),
                settings,
                seeds,
                share_of,
                params.generation.unwrap_or(1),
                change_rate,
            );
            let generation = dataset.generation();
            let readers = (0..dataset.len())
                .filter_map(|index| dataset.stream(index, generation))
                .map(|(units, share)| {
                    Box::new(source::UnitSource::new(units, made, share)) as Box<dyn StreamSource>
                })
                .collect();
            (readers, Some(dataset))
        }
        None => (
            seeds
                .map(|seed| {
                    Box::new(GeneratedStream::new(Arc::clone(&pool), seed, renewal))
                        as Box<dyn StreamSource>
                })
                .collect(),
            None,
        ),
    }
}

/// The walkers that feed a run's file streams, one per root, each run on a thread of its own.
type Feeders<'a> = Vec<Box<dyn FnOnce() + Send + 'a>>;

/// The feeders and file streams of a source of paths: one walker per root into a queue the
/// streams share, walking again (`again`) until the streams hang up, with the passes counted.
fn path_readers<'a>(
    plan: &RunPlan,
    paths: &'a [std::path::PathBuf],
    streams: usize,
    again: bool,
    skipped: &'a Skipped,
) -> (Vec<Box<dyn StreamSource + 'a>>, Feeders<'a>, Arc<Passes>) {
    let params = &plan.params;
    let (files_tx, files_rx) = bounded::<source::SourceFile>(FILE_QUEUE);
    let alive = Arc::new(());
    let counted = Arc::new(Passes::new(paths.len()));
    let mut feeders: Feeders<'a> = Vec::new();
    for root in paths {
        let files_tx = files_tx.clone();
        let streams = Arc::downgrade(&alive);
        let counted = Arc::clone(&counted);
        feeders.push(Box::new(move || {
            if again {
                source::walk_until_hung_up(root, &files_tx, skipped, &streams, &counted)
            } else {
                source::walk_into(root, &files_tx, skipped)
            }
        }));
    }
    let readers = (0..streams)
        .map(|_| {
            Box::new(
                FileStream::new(files_rx.clone(), params.direct, params.cold_cache, skipped)
                    .counted_in(&alive),
            ) as Box<dyn StreamSource>
        })
        .collect();
    (readers, feeders, counted)
}

/// The bytes a run may write into its target's file system (a kind that makes files under a
/// directory), less the reserve ([`super::room`]). `None` for other targets.
pub(super) fn target_room(target: &plan::TargetPlan) -> Option<u64> {
    super::room::room_at(target.files_dir()?)
}

/// A restore: the target lays down a backup image (before the timed window) and gives the
/// stream that reads it back; one writer puts what it reads into files shaped like the source.
pub(super) fn restore_job(
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
        passes: None,
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

/// Whether the run reads its source once whatever its duration: a backup of a tree into a
/// target that deduplicates, where a second pass would be all duplicates.
pub(super) fn reads_once(plan: &RunPlan) -> bool {
    matches!(plan.source, SourcePlan::Paths(_))
        && plan.test.reads_source()
        && plan.test.writes_target()
        && plan.target.target().dedups_at().is_some()
}

/// The writers' sinks of a test: none for read tests, the null sink for the null-sink test,
/// else the target's (one per emulated drive).
pub(super) fn target_sinks(
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
        | TestKind::ToolRestore
        | TestKind::ObjectLock => Ok(Vec::new()),
        TestKind::NullSink | TestKind::ToolCeiling => Ok(vec![Box::new(NullSink)]),
        TestKind::TapeWrite
        | TestKind::FullBackup
        | TestKind::NetworkBackup
        | TestKind::ToolBackup
        | TestKind::ToolIncremental
        | TestKind::ToolLife => plan.target.target().open(&Opening {
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
pub(super) fn units_of(
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
pub(super) fn run_tag() -> String {
    format!("{}-{:016x}", std::process::id(), rand::random::<u64>())
}
