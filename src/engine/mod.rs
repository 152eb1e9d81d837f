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
pub mod flags;
pub mod geometry;
pub mod measure;
pub mod params;
pub mod pipeline;
pub mod plan;
pub mod preflight;
pub mod provenance;
pub mod reduction;
pub mod remote;
pub mod restore;
pub mod result;
pub mod room;
pub mod source;
pub mod steady;
pub mod survey;
pub mod target;
pub mod test_kind;
pub mod tool;
pub mod validity;

mod before;
mod job;
mod outcome;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use error::EngineError;
use measure::CpuSnapshot;
use plan::{RunPlan, SourcePlan};
use remote::NetworkClients;
use result::{RunResult, RunStatus};
use source::Skipped;
use test_kind::TestKind;

use before::{source_dedup, source_ratio, source_residency, stripe_warnings};
use job::{Matched, build_job, drain_allowance, reads_once, restore_job, run_network, target_room};
use outcome::{fill_clients, fill_from_outcome, generated_dedup};
pub use pipeline::RunControl;

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
    /// The longest one run may last, every step of it (the operator's `--max-duration`);
    /// `None`: a run is bounded by its own duration and the tools' default limit.
    pub max_run: Option<std::time::Duration>,
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
    if plan.test == TestKind::ObjectLock {
        return probe_lock(plan, settings, control);
    }
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
    // The room the run had when it began: after it, its own file may still hold the space.
    let room_before = if plan.test.writes_target() {
        target_room(&plan.target)
    } else {
        None
    };
    let cpu_before = CpuSnapshot::take();
    let measured = measure(plan, settings, control, &skipped, &made, &matched);
    let cpu = cpu_before.usage_until(&CpuSnapshot::take());
    warnings.extend(measured.warnings);
    warnings.extend(skipped.warning());

    let mut result = RunResult {
        status: RunStatus::Done,
        error: None,
        cpu,
        cache_resident_pct,
        warnings,
        data_compress_ratio: source_ratio,
        generated_dedup: generated_dedup(plan, source_dedup, made.tally()),
        restore: measured.restore,
        tool: measured.tool,
        ..RunResult::failed(plan.test, params.clone(), String::new())
    };
    let pass_s = measured
        .outcome
        .as_ref()
        .ok()
        .and_then(|outcome| outcome.pass_s);
    record_outcome(&mut result, plan, measured.outcome, &measured.clients);
    if let Some(room) = room_before
        && result.bytes > 0
        && result.bytes + plan.params.block_size >= room
    {
        result.warnings.push(format!(
            "the target's file system had room for {} when the run began (its free space \
             less a reserve of 1 GiB or a twentieth of it): the run stopped there rather than \
             fill it",
            crate::size::format_bytes(room)
        ));
    }
    validity::judge(&mut result, evidence_of(plan, skipped.count(), pass_s));
    if result.status == RunStatus::Failed {
        // A failed run keeps what it moved and for how long, never a rate: the run did not
        // measure what it was meant to.
        result.mb_per_s = 0.0;
        result.steady = None;
    }
    finite::keep_finite(&mut result);
    result
}

/// Longest one request of the object-lock probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The object-lock probe: no pipeline and no rate; its answer is what the store refused. A
/// store that refuses or fails the probe's calls is a finding of the probe, not a failed run.
fn probe_lock(plan: &RunPlan, settings: &EngineSettings, control: &RunControl<'_>) -> RunResult {
    let mut result = RunResult::failed(plan.test, plan.params.clone(), String::new());
    let Some(config) = plan.target.object_store() else {
        result.error =
            Some("the object-lock probe needs an object-store target (target.kind s3)".into());
        return result;
    };
    let Some(store) = settings.object_stores.get(&config.store) else {
        result.error = Some(format!(
            "the lab knows no store named {}: the object-lock probe cannot run",
            config.store
        ));
        return result;
    };
    let started = std::time::Instant::now();
    let client = target::s3::client::S3Client::for_probe(
        store,
        Arc::new(target::s3::figures::RequestTally::default()),
        PROBE_TIMEOUT,
    );
    let figures = target::s3::lock::probe(&client, &config.prefix, &job::run_tag(), control.cancel);
    result.seconds = started.elapsed().as_secs_f64();
    if control.cancel.load(std::sync::atomic::Ordering::Relaxed) {
        result.status = RunStatus::Cancelled;
        result.error = Some("cancelled".to_string());
    } else {
        result.status = RunStatus::Done;
        result.error = None;
    }
    result.bytes = figures.written_bytes;
    result.lock = Some(figures);
    result
}

/// What one test measured, with what its kind adds: a network run's clients, a restore's
/// figures, a tool's figures and warnings.
struct Measured {
    outcome: Result<pipeline::Outcome, EngineError>,
    clients: Vec<Arc<dyn remote::RemoteClient>>,
    restore: Option<result::RestoreFigures>,
    tool: Option<tool::figures::ToolFigures>,
    warnings: Vec<String>,
}

/// Runs the test: a tool's, a network backup, a restore, or the lab's own pipeline.
fn measure(
    plan: &RunPlan,
    settings: &EngineSettings,
    control: &RunControl<'_>,
    skipped: &Skipped,
    made: &reduction::UnitsMade,
    matched: &Matched,
) -> Measured {
    let mut measured = Measured {
        outcome: Err(EngineError::Cancelled),
        clients: Vec::new(),
        restore: None,
        tool: None,
        warnings: Vec::new(),
    };
    if control.cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return measured;
    }
    measured.outcome = if plan.test.runs_tool() {
        tool::run::execute(plan, settings, control).map(|ran| {
            measured.tool = Some(ran.figures);
            measured.warnings = ran.warnings;
            ran.outcome
        })
    } else if plan.test == TestKind::NetworkBackup {
        run_network(plan, settings, control).map(|(outcome, clients)| {
            measured.clients = clients;
            outcome
        })
    } else if plan.test == TestKind::Restore {
        restore_job(plan, settings, matched.compress_ratio, control.cancel).map(
            |(job, figures, medium)| {
                measured.restore = Some(figures);
                let mut outcome = pipeline::run(job, control);
                // The medium's own figures (an object store's reads), taken once its reader
                // is done.
                outcome.sink_figures.extend(medium.map(|figures| figures()));
                outcome
            },
        )
    } else {
        build_job(plan, settings, skipped, made, matched, control.cancel)
            .map(|job| pipeline::run(job, control))
    };
    measured
}

/// Puts what the test measured into its result: its figures, or how it ended.
fn record_outcome(
    result: &mut RunResult,
    plan: &RunPlan,
    outcome: Result<pipeline::Outcome, EngineError>,
    clients: &[Arc<dyn remote::RemoteClient>],
) {
    let (drain, remote) = (
        drain_allowance(plan),
        plan.target.target().reaches_outside(),
    );
    match outcome {
        Ok(mut outcome) if plan.test == TestKind::NetworkBackup => {
            let per_client = std::mem::take(&mut outcome.tally_samples);
            fill_from_outcome(result, outcome, drain, remote);
            fill_clients(result, clients, per_client);
        }
        Ok(outcome) => fill_from_outcome(result, outcome, drain, remote),
        Err(EngineError::Cancelled) => {
            result.status = RunStatus::Cancelled;
            result.error = Some("cancelled".to_string());
        }
        Err(error) => {
            result.status = RunStatus::Failed;
            result.error = Some(error.to_string());
        }
    }
}

/// What the validity rules need to know of the run besides its result.
fn evidence_of(plan: &RunPlan, skipped_entries: u64, pass_s: Option<f64>) -> validity::Evidence {
    let capabilities = plan.target.target().capabilities();
    validity::Evidence {
        skipped_entries,
        // A dedup store's work is the CPU's as much as its disk's: a busy CPU is what it
        // measures, not a reason to doubt it.
        measures_device: if plan.test.reads_source() {
            matches!(plan.source, SourcePlan::Paths(_))
        } else {
            capabilities.real_device && plan.target.target().dedups_at().is_none()
        },
        flushes_at_end: plan.test.writes_target() && plan.params.fsync && capabilities.flushes,
        one_pass: reads_once(plan),
        whole_job: plan.test.runs_tool(),
        pass_s,
    }
}
