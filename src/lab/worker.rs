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
    let held = HeldRun {
        run_id,
        attempt: claimed.attempt,
    };
    let campaign_id = claimed.campaign_id.clone();
    let plan = match plan_of(&claimed) {
        Ok(plan) => plan,
        Err(message) => {
            tracing::error!(run_id, %message, "stored campaign cannot be planned");
            let result = failed_result(&claimed, message);
            lab.run_ended(&claimed, &switch, result, None).await;
            return;
        }
    };
    let total = claimed.runs_total;
    // The allow-lists may have narrowed since the run was queued, or a directory on its way
    // been replaced by a link: its paths are checked again now, on the file system. A campaign
    // another host received was checked there by name alone: its paths are resolved here
    // first, and the machine's checks made.
    let checking = Arc::clone(lab);
    let mut checked_plan = plan;
    let elsewhere = claimed.checked_elsewhere;
    let rechecked = tokio::task::spawn_blocking(move || {
        if elsewhere {
            checking.policy().resolve_plan(&mut checked_plan);
        }
        let mut problems = match checking.policy().recheck(&checked_plan) {
            Ok(()) => FieldErrors::default(),
            Err(problems) => problems,
        };
        if elsewhere && problems.is_empty() {
            let settings = checking.engine_settings();
            for (path, message) in preflight::check(std::slice::from_ref(&checked_plan), settings).0
            {
                problems.add(path, message);
            }
        }
        (checked_plan, problems)
    })
    .await;
    let (plan, refusal) = match rechecked {
        Ok((plan, problems)) if problems.is_empty() => (plan, None),
        Ok((plan, problems)) => (
            plan,
            Some(format!(
                "refused when the run started on host {}, its paths checked again: {problems}",
                lab.host().name
            )),
        ),
        Err(error) => {
            let message = format!("the run's paths could not be checked: {error}");
            let result = failed_result(&claimed, message);
            lab.run_ended(&claimed, &switch, result, None).await;
            return;
        }
    };
    if let Some(message) = refusal {
        tracing::warn!(run_id, %message, "run refused at start");
        let result = failed_result(&claimed, message);
        lab.run_ended(&claimed, &switch, result, None).await;
        return;
    }
    tracing::info!(campaign = %campaign_id, run_id, test = %plan.test, "run started");
    lab.publish(
        &campaign_id,
        LabEvent::RunStarted {
            run_id,
            position: claimed.position,
            test: plan.test.id().to_string(),
            runs_total: total,
        },
    );

    let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<Progress>();
    let settings = lab.engine_settings().clone();
    let engine_switch = Arc::clone(&switch);
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
        let sample = Sample {
            t: progress.elapsed_s,
            mb_per_s: progress.mb_per_s,
        };
        if let Err(error) = lab.store.add_sample(held, sample).await {
            tracing::warn!(run_id, %error, "cannot store a sample");
        }
        lab.publish(
            &campaign_id,
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
    let result = match engine_task.await {
        Ok(result) => result,
        Err(error) => failed_result(
            &claimed,
            format!("the run's thread ended abnormally: {error}"),
        ),
    };
    lab.run_ended(&claimed, &switch, result, Some(&plan)).await;
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
