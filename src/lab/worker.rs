//! Workers: each lane takes the oldest queued run, executes it through the engine on OS
//! threads, reports progress to the store (samples) and to live subscribers, and hands what
//! became of it to [`Lab::run_ended`], which does everything that follows.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::engine::result::{Progress, RunResult, Sample};
use crate::engine::{self, RunControl, preflight};
use crate::lab::events::LabEvent;
use crate::lab::{Lab, RunSwitch};
use crate::spec::{FieldErrors, RunPlan};
use crate::store::{ClaimedRun, HeldRun, StoreError, StoredPlan};

/// How long an idle lane sleeps before it looks at the queue again without being woken.
const IDLE_POLL: Duration = Duration::from_secs(2);

/// How often an idle first lane looks for searches left between two steps (a step that could
/// not be taken when its last run finished, the store being unreachable then).
const SEARCH_RETRY: Duration = Duration::from_secs(30);

/// Starts `lanes` workers; they return once the lab is stopping and their run is saved.
pub fn spawn_lanes(lab: &Arc<Lab>, lanes: usize) -> Vec<JoinHandle<()>> {
    // Searches left between two steps when the lab last stopped take their step now.
    let resuming = Arc::clone(lab);
    tokio::spawn(async move { resuming.resume_searches().await });
    (0..lanes.max(1))
        .map(|lane| {
            let lab = Arc::clone(lab);
            tokio::spawn(async move { lane_loop(lab, lane).await })
        })
        .collect()
}

async fn lane_loop(lab: Arc<Lab>, lane: usize) {
    let mut searches_looked = tokio::time::Instant::now();
    loop {
        if lab.is_stopping() {
            return;
        }
        let woken = lab.work_queued();
        match lab.claim_next().await {
            Ok(Some((claimed, switch))) => {
                execute(&lab, claimed, switch).await;
            }
            Ok(None) => {
                if lane == 0 && searches_looked.elapsed() >= SEARCH_RETRY {
                    searches_looked = tokio::time::Instant::now();
                    lab.resume_searches().await;
                }
                let _ = tokio::time::timeout(IDLE_POLL, woken).await;
            }
            Err(StoreError::UnreadableRun(run)) => lab.unreadable_run_ended(&run).await,
            Err(error) => {
                tracing::error!(lane, %error, "cannot take a run off the queue");
                tokio::time::sleep(IDLE_POLL).await;
            }
        }
    }
}

async fn execute(lab: &Arc<Lab>, claimed: ClaimedRun, switch: Arc<RunSwitch>) {
    let run_id = claimed.run_id;
    let plan = match plan_of(&claimed) {
        Ok(plan) => plan,
        Err(message) => {
            tracing::error!(run_id, %message, "stored campaign cannot be planned");
            let result = failed_result(&claimed, message);
            lab.run_ended(&claimed, &switch, result, None).await;
            return;
        }
    };
    let plan = match checked_at_start(lab, &claimed, plan).await {
        Ok(plan) => plan,
        Err(message) => {
            let result = failed_result(&claimed, message);
            lab.run_ended(&claimed, &switch, result, None).await;
            return;
        }
    };
    announce_start(lab, &claimed, &plan);
    let result = run_through_engine(lab, &claimed, &switch, &plan).await;
    lab.run_ended(&claimed, &switch, result, Some(&plan)).await;
}

/// The run's paths checked again as it starts, since the allow-lists may have narrowed since
/// the run was queued, or a directory on its way been replaced by a link. The plan to run, or
/// why the run is refused (a refusal is logged).
async fn checked_at_start(
    lab: &Arc<Lab>,
    claimed: &ClaimedRun,
    plan: RunPlan,
) -> Result<RunPlan, String> {
    let checking = Arc::clone(lab);
    let elsewhere = claimed.checked_elsewhere;
    let rechecked =
        tokio::task::spawn_blocking(move || recheck_paths(&checking, plan, elsewhere)).await;
    match rechecked {
        Ok((plan, problems)) if problems.is_empty() => Ok(plan),
        Ok((_, problems)) => {
            let message = format!(
                "refused when the run started on host {}, its paths checked again: {problems}",
                lab.host().name
            );
            tracing::warn!(run_id = claimed.run_id, %message, "run refused at start");
            Err(message)
        }
        Err(error) => Err(format!("the run's paths could not be checked: {error}")),
    }
}

/// The plan's paths checked on the file system, where they are now; blocking. A campaign
/// another host received was checked there by name alone: its paths are resolved here first,
/// and the machine's checks made.
fn recheck_paths(lab: &Lab, mut plan: RunPlan, elsewhere: bool) -> (RunPlan, FieldErrors) {
    if elsewhere {
        lab.policy().resolve_plan(&mut plan);
    }
    let mut problems = match lab.policy().recheck(&plan) {
        Ok(()) => FieldErrors::default(),
        Err(problems) => problems,
    };
    if elsewhere && problems.is_empty() {
        let settings = lab.engine_settings();
        for (path, message) in preflight::check(std::slice::from_ref(&plan), settings).0 {
            problems.add(path, message);
        }
    }
    (plan, problems)
}

/// Tells the log and the campaign's followers that the run has started.
fn announce_start(lab: &Lab, claimed: &ClaimedRun, plan: &RunPlan) {
    let run_id = claimed.run_id;
    tracing::info!(campaign = %claimed.campaign_id, run_id, test = %plan.test, "run started");
    lab.publish(
        &claimed.campaign_id,
        LabEvent::RunStarted {
            run_id,
            position: claimed.position,
            test: plan.test.id().to_string(),
            runs_total: claimed.runs_total,
        },
    );
}

/// The run executed by the engine on an OS thread while its progress is kept and told here;
/// what became of it, a failure when the thread itself ended abnormally.
async fn run_through_engine(
    lab: &Lab,
    claimed: &ClaimedRun,
    switch: &Arc<RunSwitch>,
    plan: &RunPlan,
) -> RunResult {
    let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<Progress>();
    let settings = lab.engine_settings().clone();
    let engine_switch = Arc::clone(switch);
    let engine_plan = plan.clone();
    let engine_task = tokio::task::spawn_blocking(move || {
        let report = |progress: &Progress| {
            let _ = progress_tx.send(*progress);
        };
        let control = RunControl {
            cancel: &engine_switch.cancel,
            progress: &report,
        };
        engine::execute(&engine_plan, &settings, &control)
    });
    while let Some(progress) = progress_rx.recv().await {
        record_progress(lab, claimed, plan, progress).await;
    }
    match engine_task.await {
        Ok(result) => result,
        Err(error) => failed_result(
            claimed,
            format!("the run's thread ended abnormally: {error}"),
        ),
    }
}

/// One report of the engine's progress: stored as a sample of the run (a sample that cannot
/// be stored is logged, and the run goes on) and told to the campaign's followers.
async fn record_progress(lab: &Lab, claimed: &ClaimedRun, plan: &RunPlan, progress: Progress) {
    let run_id = claimed.run_id;
    let held = HeldRun {
        run_id,
        attempt: claimed.attempt,
    };
    let sample = Sample {
        t: progress.elapsed_s,
        mb_per_s: progress.mb_per_s,
    };
    if let Err(error) = lab.store.add_sample(held, sample).await {
        tracing::warn!(run_id, %error, "cannot store a sample");
    }
    lab.publish(
        &claimed.campaign_id,
        LabEvent::Progress {
            run_id,
            position: claimed.position,
            test: plan.test.id().to_string(),
            elapsed_s: progress.elapsed_s,
            bytes: progress.bytes,
            mb_per_s: progress.mb_per_s,
            percent: progress.percent,
        },
    );
}

/// The run's plan: its own stored test and parameters at the campaign's stored placement. A
/// campaign stored before placements were kept is planned again from its spec.
fn plan_of(claimed: &ClaimedRun) -> Result<RunPlan, String> {
    let spec = match &claimed.plan {
        StoredPlan::Placement(placement) => {
            return Ok(RunPlan::at(claimed.test, claimed.params.clone(), placement));
        }
        StoredPlan::Spec(spec) => spec,
        StoredPlan::Unreadable(why) => return Err(why.clone()),
    };
    let plans = spec.plan().map_err(|errors| errors.to_string())?;
    plans
        .into_iter()
        .nth(claimed.position)
        .ok_or_else(|| format!("the spec has no run {}", claimed.position))
}

fn failed_result(claimed: &ClaimedRun, message: String) -> RunResult {
    RunResult::failed(claimed.test, claimed.params.clone(), message)
}
