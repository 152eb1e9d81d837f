//! A campaign's adaptive search, stepped by the lab: after each of its runs, once none is left
//! queued, the runs so far are judged as every view judges them and the tuner chooses the next
//! points, which are queued in the same campaign; or it stops, and the campaign finishes.

use super::{Lab, LabError, run_entries};
use crate::analysis::points::{Point, points};
use crate::spec::{Arm, CampaignSpec, RunParams, SweepPlan, TestKind};
use crate::store::{CampaignRecord, Document};
use crate::tuner::{self, Bounds, Observed, SearchState, Space, Step, Stopped};

/// A search's first step at submission: the runs to queue, and its state.
pub(super) fn first_step(sweep: &SweepPlan) -> Option<(Vec<(TestKind, RunParams)>, SearchState)> {
    let search = sweep.search?;
    let state = SearchState {
        budget_runs: search.budget_runs,
        seed: search.seed,
        full_runs: search.full_runs,
        points_total: sweep.arms.len(),
        max_repeats: search.max_repeats,
        steps: 1,
        stopped: None,
    };
    let observed = vec![Observed::default(); sweep.arms.len()];
    let step = tuner::next(&space(&sweep.arms), &observed, bounds(&state, 0));
    let Step::Run(batch) = step else {
        return None;
    };
    Some((runs_of(&sweep.arms, &batch), state))
}

/// A campaign's search: its state as kept (what a step compares against) and as read; `None`
/// for a campaign without a search, or whose kept state no longer reads.
pub(super) fn state_of(record: &CampaignRecord) -> Option<(&Document, SearchState)> {
    let kept = record.search.as_ref()?;
    Some((kept, kept.decode().ok()?))
}

/// The runs a campaign's adaptive search likely takes ([`tuner::likely_runs`]) and the most
/// its budget allows; `None` for a full sweep.
pub(super) fn search_runs(sweep: &SweepPlan) -> Option<(usize, usize)> {
    let search = sweep.search?;
    let likely = tuner::likely_runs(&space(&sweep.arms), search.max_repeats);
    Some((likely.min(search.budget_runs), search.budget_runs))
}

/// The test a search decides on: the full backup when the campaign runs one, else the last
/// test in table order (the one a sweep's chart shows).
pub fn deciding_test(spec: &CampaignSpec) -> Option<TestKind> {
    let tests: Vec<TestKind> = spec
        .tests
        .iter()
        .filter_map(|name| TestKind::from_id(name))
        .collect();
    if tests.contains(&TestKind::FullBackup) {
        return Some(TestKind::FullBackup);
    }
    TestKind::ALL
        .iter()
        .rev()
        .find(|test| tests.contains(test))
        .copied()
}

/// The points of the matrix on the tuner's grid.
fn space(arms: &[Arm]) -> Space {
    let mut lengths = [1usize; 6];
    for arm in arms {
        for (axis, index) in arm.at.iter().enumerate() {
            lengths[axis] = lengths[axis].max(index + 1);
        }
    }
    Space {
        at: arms.iter().map(|arm| arm.at).collect(),
        lengths,
        runs: arms.iter().map(Arm::runs).collect(),
    }
}

fn bounds(state: &SearchState, runs_used: usize) -> Bounds {
    Bounds {
        seed: state.seed,
        budget_runs: state.budget_runs,
        runs_used,
        max_repeats: state.max_repeats,
    }
}

/// One repeat of each point of `batch`, in order.
fn runs_of(arms: &[Arm], batch: &[usize]) -> Vec<(TestKind, RunParams)> {
    batch
        .iter()
        .flat_map(|&index| arms[index].groups.iter().flatten())
        .map(|plan| (plan.test, plan.params.clone()))
        .collect()
}

/// The parameters a point's deciding run has (its last generation's).
fn deciding_params(arm: &Arm, test: TestKind) -> Option<&RunParams> {
    arm.groups
        .iter()
        .flatten()
        .filter(|plan| plan.test == test)
        .map(|plan| &plan.params)
        .next_back()
}

/// What each matrix point measured for the deciding test, from the judged points.
pub fn observed(arms: &[Arm], judged: &[Point], test: TestKind) -> Vec<Observed> {
    arms.iter()
        .map(|arm| {
            let point = deciding_params(arm, test).and_then(|params| {
                judged
                    .iter()
                    .find(|p| p.test == test && p.params == *params)
            });
            point.map_or_else(Observed::default, |point| Observed {
                visits: point.runs.len(),
                side: point.figure.as_ref().map(|figure| figure.noise),
            })
        })
        .collect()
}

/// The matrix points a search has not run, by the parameters of their deciding run: what the
/// heat map shows as unexplored.
pub fn unexplored(spec: &CampaignSpec, judged: &[Point]) -> Vec<RunParams> {
    let (Ok(sweep), Some(test)) = (spec.plan_arms(), deciding_test(spec)) else {
        return Vec::new();
    };
    sweep
        .arms
        .iter()
        .filter_map(|arm| deciding_params(arm, test))
        .filter(|params| {
            !judged
                .iter()
                .any(|p| p.test == test && p.params == **params)
        })
        .cloned()
        .collect()
}

impl Lab {
    /// Takes the next step of campaign `id`'s search, once none of its runs is left to run:
    /// queues the points the tuner chooses, or records why it stopped. Returns whether the
    /// search is still open.
    pub(super) async fn advance_search(&self, id: &str) -> Result<bool, LabError> {
        let record = self.record(id).await?;
        let Some((kept, state)) = state_of(&record) else {
            return Ok(false);
        };
        if state.stopped.is_some() {
            return Ok(false);
        }
        let runs = self.store.runs(id).await?;
        if runs.iter().any(|run| run.status.finished().is_none()) {
            return Ok(true);
        }
        let sweep = record.spec.plan_arms().map_err(|errors| {
            LabError::Internal(format!("the stored spec no longer plans: {errors}"))
        })?;
        let cancelled = runs
            .iter()
            .any(|run| run.status == crate::store::RunState::Cancelled);
        let step = match deciding_test(&record.spec) {
            _ if cancelled => Step::Stop(Stopped::Cancelled),
            Some(test) => {
                let judged = points(&run_entries(&runs));
                let observed = observed(&sweep.arms, &judged, test);
                tuner::next(&space(&sweep.arms), &observed, bounds(&state, runs.len()))
            }
            None => Step::Stop(Stopped::Ended),
        };
        let (queued, next) = match step {
            Step::Run(batch) => (
                runs_of(&sweep.arms, &batch),
                SearchState {
                    steps: state.steps + 1,
                    ..state.clone()
                },
            ),
            Step::Stop(stopped) => (
                Vec::new(),
                SearchState {
                    stopped: Some(stopped),
                    ..state.clone()
                },
            ),
        };
        let open = next.stopped.is_none();
        let stepped = Document::encode(&next)?;
        if self
            .store
            .extend_search(id, kept, &queued, &stepped, open)
            .await?
        {
            match next.stopped {
                Some(stopped) => {
                    tracing::info!(campaign = %id, why = stopped.words(), runs = runs.len(), "search stopped")
                }
                None => {
                    tracing::info!(campaign = %id, step = next.steps, runs = queued.len(), "search queued its next runs")
                }
            }
            if open {
                self.queue_changed.notify_waiters();
            }
        }
        Ok(open)
    }

    /// Closes campaign `id`'s open search as cancelled, so that it chooses nothing more and
    /// its campaign reads cancelled even when the cancel fell between two steps.
    pub(super) async fn cancel_search(&self, id: &str) -> Result<(), LabError> {
        // A step taken meanwhile changes the stored state: read it again and retry.
        for _ in 0..3 {
            let Some(record) = self.store.campaign(id).await? else {
                return Ok(());
            };
            let Some((kept, state)) =
                state_of(&record).filter(|(_, state)| state.stopped.is_none())
            else {
                return Ok(());
            };
            let cancelled = Document::encode(&SearchState {
                stopped: Some(Stopped::Cancelled),
                ..state
            })?;
            if self.store.cancel_search(id, kept, &cancelled).await? {
                return Ok(());
            }
        }
        Err(LabError::Internal(format!(
            "campaign {id}'s search kept changing while it was being cancelled"
        )))
    }

    /// Steps every search of this host left waiting (the lab stopped between two steps), and
    /// ends the campaigns whose search stops there.
    pub(super) async fn resume_searches(&self) {
        let idle = match self.store.idle_searches(&self.host.name).await {
            Ok(idle) => idle,
            Err(error) => {
                tracing::warn!(%error, "cannot read the searches waiting for a step");
                return;
            }
        };
        for id in idle {
            self.step_or_end(&id, None).await;
        }
    }
}

/// What a report says of its campaign's search: how much of the matrix it ran, why it
/// stopped, and how sure it is of the best point.
#[derive(Debug, Clone)]
pub struct SearchReport {
    pub state: SearchState,
    /// Matrix points with at least one run, and the runs queued.
    pub points_run: usize,
    pub runs: usize,
    /// Why it stopped, in words; `None` while it is still choosing.
    pub why: Option<String>,
    /// The best point's setting, and whether it beats the runner-up by more than noise.
    pub best: Option<String>,
    pub stands_out: bool,
    /// How sure the search is of its best point, in a sentence.
    pub sureness: String,
    /// The points it did not run, by their deciding run's parameters.
    pub unexplored: Vec<RunParams>,
}

/// The report of a campaign's search from its judged points.
/// `cap` is the component the verdict names, told when no point stands out.
pub fn search_report(
    spec: &CampaignSpec,
    state: &SearchState,
    runs: usize,
    judged: &[Point],
    cap: Option<String>,
) -> SearchReport {
    let test = deciding_test(spec);
    let best = judged
        .iter()
        .find(|p| Some(p.test) == test && p.best && p.figure.is_some());
    let unexplored = unexplored(spec, judged);
    let points_run = state.points_total.saturating_sub(unexplored.len());
    let stands_out = best.is_some_and(|p| p.stands_out);
    let setting = best.map(Point::setting);
    let sureness = match (&setting, stands_out, state.stopped) {
        (None, _, _) => "No point has a figure yet.".to_string(),
        (Some(best), true, _) => format!(
            "Sure of the best: {best} beats the runner-up by more than their noise (the gap \
             wider than either's spread and Welch's p below 0.05, as /compare decides)."
        ),
        (Some(best), false, Some(Stopped::WithinNoise)) => format!(
            "No point stands out: {best} leads, but the leading points had all {} repeats and \
             stay within each other's noise; any of them will do.{}",
            state.max_repeats,
            cap.map(|cap| format!(
                " {} caps the backup: tuning these settings will not help.",
                crate::analysis::capitalize(&cap)
            ))
            .unwrap_or_default()
        ),
        (Some(best), false, Some(Stopped::BudgetSpent)) => format!(
            "Not settled: {best} leads, but the budget ran out before it could be told from its \
             contenders; a larger budget_runs repeats them further.{}",
            cap.map(|cap| format!(
                " So far none stands out, and {cap} caps the backup: tuning these settings may \
                 not help."
            ))
            .unwrap_or_default()
        ),
        (Some(best), false, _) => format!("{best} leads so far; not yet told from its contenders."),
    };
    SearchReport {
        points_run,
        runs,
        why: state.stopped.map(|stopped| stopped.words().to_string()),
        best: setting,
        stands_out,
        sureness,
        unexplored,
        state: state.clone(),
    }
}

impl SearchReport {
    /// What the search did, in a sentence.
    pub fn words(&self) -> String {
        let share = |part: usize, whole: usize| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64 * 100.0
            }
        };
        let how = format!(
            "The adaptive search ran {} of the matrix's {} points: {} runs, {:.0} % of the full \
             sweep's {} (budget {}, seed {})",
            self.points_run,
            self.state.points_total,
            self.runs,
            share(self.runs, self.state.full_runs),
            self.state.full_runs,
            self.state.budget_runs,
            self.state.seed
        );
        match &self.why {
            Some(why) => format!("{how}, and stopped: {why}."),
            None => format!("{how} so far, and is choosing its next points."),
        }
    }
}
