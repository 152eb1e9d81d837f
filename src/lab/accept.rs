//! Taking a campaign in: its spec read, checked against the spec rules, the policy of the
//! host it runs on and the real file system, planned, and (unless it is a dry run) stored
//! and queued.

use std::sync::Arc;

use crate::clock::now_ms;
use crate::engine::preflight;
use crate::ids;
use crate::lab::events::RelayMessage;
use crate::policy::{Policy, Reach};
use crate::spec::expectation::{Expectation, expect};
use crate::spec::{self, CampaignSpec, FieldErrors, Placement, RunPlan};
use crate::store::{Document, NewCampaign};

use super::{Campaigns, Lab, LabError, MAX_QUEUED_RUNS, campaign_url, search};

/// A campaign accepted and queued.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub id: String,
    pub url: String,
    pub runs: usize,
    /// How long it is expected to take, and what in it cannot give a valid run.
    pub expectation: Expectation,
}

/// A campaign checked and planned, not queued: what a dry run answers.
#[derive(Debug, Clone)]
pub struct Planned {
    pub runs: usize,
    pub expectation: Expectation,
    /// The runs as they would execute: test and parameters, in order.
    pub plan: Vec<PlannedRun>,
}

/// One run of a dry run's plan.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    pub test: crate::spec::TestKind,
    pub params: crate::spec::RunParams,
    /// Seconds it is expected to take.
    pub expected_s: f64,
}

/// The plan check of `plans` (see [`expect`]) with what the machine adds to it
/// ([`spec::expectation::machine_warnings`]). An adaptive search (`search`: its likely runs and
/// its budget) is judged on those.
async fn expectation_of(plans: Arc<[RunPlan]>, search: Option<(usize, usize)>) -> Expectation {
    // An estimate counts a source's bytes (a tool's test, a life), and the machine's warnings
    // walk it: file-system work, off the async workers. The plans are shared, not copied: a
    // wide campaign's are a thousand runs of hundreds of paths.
    let questions = spec::expectation::SourceQuestions::of(&plans);
    let checked = Arc::clone(&plans);
    let worked = tokio::task::spawn_blocking(move || {
        let mut expectation = planned(&checked, search);
        expectation.warnings.extend(questions.warnings());
        expectation
    })
    .await;
    // A check that panicked answers without the machine's warnings, as one that could not
    // ask the machine.
    worked.unwrap_or_else(|_| planned(&plans, search))
}

/// The plan check of `plans` alone, an adaptive search's on its likely runs and its budget.
fn planned(plans: &[RunPlan], search: Option<(usize, usize)>) -> Expectation {
    match search {
        Some((likely, budget)) => spec::expectation::expect_search(plans, likely, budget),
        None => expect(plans),
    }
}

/// A submitted spec's text, read: a body that is not UTF-8 or not a spec names the field.
pub(super) fn parse_body(body: &[u8]) -> Result<CampaignSpec, LabError> {
    let text = std::str::from_utf8(body).map_err(|_| {
        let mut errors = FieldErrors::default();
        errors.add("spec", "the body is not UTF-8 text");
        LabError::Malformed(errors)
    })?;
    let mut spec = spec::parse_json(text).map_err(|error| match error {
        spec::SpecError::NotJson(errors) => LabError::Malformed(errors),
        spec::SpecError::Invalid(errors) => LabError::Invalid(errors),
    })?;
    spec.settle_defaults();
    Ok(spec)
}

impl Campaigns<'_> {
    /// Validates a submitted spec (JSON text) against the spec rules, the lab's policy and the
    /// real file system, then stores and queues its runs.
    pub async fn submit(&self, body: &[u8]) -> Result<Submitted, LabError> {
        self.lab.accept(parse_body(body)?, None).await
    }

    /// Checks a spec as `submit` does, queueing nothing: every problem it has, by field, or
    /// the plan it would run, how long it would take and what in it cannot give a valid run.
    pub async fn check(&self, body: &[u8]) -> Result<Planned, LabError> {
        let (spec, plans) = self.lab.checked(parse_body(body)?).await?;
        let plans: Arc<[RunPlan]> = plans.into();
        Ok(Planned {
            runs: plans.len(),
            expectation: expectation_of(
                Arc::clone(&plans),
                spec.plan_arms().ok().as_ref().and_then(search::search_runs),
            )
            .await,
            plan: plans
                .iter()
                .map(|plan| PlannedRun {
                    test: plan.test,
                    params: plan.params.clone(),
                    expected_s: crate::engine::expect::expected(plan).seconds,
                })
                .collect(),
        })
    }

    /// Queues a new campaign with the same spec as `id`, linked to it.
    pub async fn rerun(&self, id: &str) -> Result<Submitted, LabError> {
        let record = self.lab.record(id).await?;
        self.lab.accept(record.spec, Some(record.id)).await
    }
}

impl Lab {
    /// A spec checked for the host it names (this one when it names none, and then filled in),
    /// with its runs. Resolving paths and the preflight touch the file system: not on an async
    /// worker.
    pub(super) async fn checked(
        self: &Arc<Self>,
        mut spec: CampaignSpec,
    ) -> Result<(CampaignSpec, Vec<RunPlan>), LabError> {
        let host = spec.host.clone().unwrap_or_else(|| self.host.name.clone());
        let runs_on = self.runs_on(&host).await?;
        spec.host = Some(host);
        let lab = Arc::clone(self);
        tokio::task::spawn_blocking(move || lab.validate(spec, runs_on))
            .await
            .map_err(|e| LabError::Internal(format!("the campaign check failed: {e}")))?
    }

    /// Whose policy a campaign for `host` is held to: this lab's, another live host's, or
    /// none, with the reason.
    async fn runs_on(&self, host: &str) -> Result<RunsOn, LabError> {
        if host == self.host.name {
            return Ok(RunsOn::Here);
        }
        if spec::check_name(host).is_err() {
            // The spec's own check names the field.
            return Ok(RunsOn::Nowhere(None));
        }
        let Some(record) = self.store.host(host).await? else {
            let known: Vec<String> = self
                .hosts()
                .list()
                .await?
                .into_iter()
                .filter(|host| host.alive)
                .map(|host| host.name)
                .collect();
            let alive = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            return Ok(RunsOn::Nowhere(Some(format!(
                "no lab host named '{host}' serves on this database (alive: {alive})"
            ))));
        };
        let view = self.hosts().view(&record, now_ms());
        if !view.alive {
            return Ok(RunsOn::Nowhere(Some(format!(
                "lab host '{host}' was last heard from {:.0} s ago: it is not running, and its \
                 queue would not move; start it, or name a live host",
                view.last_seen_s
            ))));
        }
        let policy: Policy = serde_json::from_str(&record.policy_json).map_err(|e| {
            LabError::Internal(format!(
                "the registered policy of host {host} is damaged: {e}"
            ))
        })?;
        Ok(RunsOn::Elsewhere(policy))
    }

    /// Checks a spec, stores it as a new campaign (a rerun of `rerun_of`, when it is one) and
    /// queues its runs, or an adaptive search's first step.
    pub(super) async fn accept(
        self: &Arc<Self>,
        spec: CampaignSpec,
        rerun_of: Option<String>,
    ) -> Result<Submitted, LabError> {
        let (spec, plans) = self.checked(spec).await?;
        let host = spec.host.clone().unwrap_or_else(|| self.host.name.clone());
        // An adaptive search queues its first step; the rest follow as it chooses them.
        let sweep = spec.plan_arms().map_err(LabError::Invalid)?;
        let (runs, search) = match search::first_step(&sweep) {
            Some((runs, state)) => (runs, Some(Document::encode(&state)?)),
            None => (
                plans
                    .iter()
                    .map(|plan| (plan.test, plan.params.clone()))
                    .collect(),
                None,
            ),
        };
        let queued = runs.len();
        let id = ids::campaign_id();
        let campaign = NewCampaign {
            id: id.clone(),
            host: host.clone(),
            checked_by: self.host.name.clone(),
            name: spec.name.clone(),
            spec: spec.clone(),
            placement: Placement::of(&plans)
                .ok_or_else(|| LabError::Internal("the campaign expands to no runs".to_string()))?,
            rerun_of,
            series: crate::series::key_of(&spec),
            runs,
            search,
        };
        // Counted with the insert, in one transaction: submissions at the same moment cannot
        // pass the limit together.
        if let Err(waiting) = self
            .store
            .insert_campaign_within(&campaign, now_ms(), MAX_QUEUED_RUNS)
            .await?
        {
            return Err(LabError::QueueFull(format!(
                "the queue holds {waiting} runs waiting and this campaign adds {queued}; at most \
                 {MAX_QUEUED_RUNS} may wait: submit it once some have run, or cancel campaigns"
            )));
        }
        if host == self.host.name {
            self.queue_changed.notify_waiters();
        } else {
            self.relay(RelayMessage::Queued {
                from: self.host.name.clone(),
            });
        }
        Ok(Submitted {
            url: campaign_url(&id),
            id,
            runs: queued,
            expectation: expectation_of(plans.into(), search::search_runs(&sweep)).await,
        })
    }

    /// Checks a spec against the spec rules, the policy of the host it runs on and, when that
    /// is this one, the real file system; returns it with its paths resolved, and its runs.
    /// Blocking: it reads the file system.
    fn validate(
        &self,
        mut spec: CampaignSpec,
        runs_on: RunsOn,
    ) -> Result<(CampaignSpec, Vec<RunPlan>), LabError> {
        // Before any path is resolved or run built: the lists' sizes and the run count.
        let bounds = spec.check_bounds();
        if !bounds.is_empty() {
            return Err(LabError::Invalid(bounds));
        }
        let (policy, reach) = match &runs_on {
            RunsOn::Here => (&self.policy, Reach::Here),
            RunsOn::Elsewhere(policy) => (policy, Reach::Elsewhere),
            RunsOn::Nowhere(reason) => {
                // No policy to hold the paths to: the rules alone, and why.
                let mut invalid = spec.plan().err().unwrap_or_default();
                if let Some(reason) = reason {
                    invalid.add("host", reason.clone());
                }
                return Err(LabError::Invalid(invalid));
            }
        };
        // Every problem at once: paths, rules, limits and the machine's checks, so that one
        // answer names every bad field.
        let violations = policy.resolve_paths(&mut spec, reach);
        let mut invalid = violations.invalid;
        // The lab's own bound on a run's length is the one said for it.
        invalid.extend(policy.check_duration(&spec));
        // The tools are this lab's; another host checks its own when the runs start there.
        if reach == Reach::Here {
            invalid.extend(spec::tools::check(&spec, &self.engine.tools));
        }
        let plans = match spec.plan() {
            Ok(plans) => Some(plans),
            Err(errors) => {
                for (path, message) in errors.0 {
                    if path != "params.duration_s" || !invalid.0.contains_key(&path) {
                        invalid.add(path, message);
                    }
                }
                None
            }
        };
        if let Some(plans) = &plans {
            invalid.extend(policy.check_limits(&spec, plans));
        }
        if !violations.forbidden.is_empty() {
            // Nothing outside the allowed roots is looked at further.
            return Err(LabError::Forbidden {
                paths: violations.forbidden,
                others: invalid,
            });
        }
        let Some(plans) = plans else {
            return Err(LabError::Invalid(invalid));
        };
        // The machine's checks, for the fields not already found wrong; another host makes
        // them on itself when each run starts.
        if reach == Reach::Here {
            for (path, message) in preflight::check(&plans, &self.engine).0 {
                if !invalid.0.contains_key(&path) {
                    invalid.add(path, message);
                }
            }
        }
        if !invalid.is_empty() {
            return Err(LabError::Invalid(invalid));
        }
        Ok((spec, plans))
    }
}

/// Whose policy a campaign is held to.
enum RunsOn {
    /// This lab's, on its own file system.
    Here,
    /// Another live host's, registered on the database.
    Elsewhere(Policy),
    /// No host's: the one named is unknown or not running (why, unless the name itself is
    /// bad, which the spec's check says).
    Nowhere(Option<String>),
}
