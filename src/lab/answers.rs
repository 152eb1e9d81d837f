//! What the lab answers for its campaigns: one campaign judged, the list, the report, the
//! neighbours with the same spec; and the judgements it keeps so that reads write nothing.

use std::collections::HashSet;

use crate::analysis;
use crate::clock::format_ms;
use crate::engine::survey::Survey;
use crate::ids;
use crate::spec::expectation::{Expectation, expect};
use crate::spec::{self, CampaignSpec, FieldErrors, RunPlan};
use crate::store::{Backend, CampaignRecord, CampaignStatus, Document, Neighbour, RunRecord};
use crate::views::report::{CampaignHeader, CampaignReport};
use crate::views::{RunPhase, RunView};

use super::{Campaigns, Ending, Lab, LabError, MAX_PAGE, SearchReport, search, search_report};

/// A campaign with its spec and runs, as `GET /api/campaigns/{id}` shows it, and its
/// judgement: the points every view reads and the verdict drawn from them.
#[derive(Debug, Clone)]
pub struct CampaignView {
    /// The campaign as stored (its spec and survey among it), at the status a reader is shown.
    pub campaign: CampaignSummary,
    pub runs: Vec<RunRecord>,
    /// Each test at each parameter set, with its figure and how many of its runs are valid.
    pub points: Vec<analysis::points::Point>,
    /// The verdict on the points (`/api/campaigns/{id}/bottleneck` serves it).
    pub verdict: analysis::Verdict,
    /// Runs were still to come when it was judged.
    pub provisional: bool,
    /// Its adaptive search, when its matrix has one.
    pub search: Option<SearchReport>,
    /// The price sheets its buckets' bills are worked out by.
    pub prices: std::sync::Arc<analysis::prices::PriceSheets>,
}

/// The runs as the results model takes them: numbered from 1, in plan order.
pub fn run_entries(runs: &[RunRecord]) -> Vec<analysis::points::RunEntry<'_>> {
    runs.iter()
        .map(|run| analysis::points::RunEntry {
            number: usize::try_from(run.number).unwrap_or_default(),
            test: run.test,
            params: &run.params,
            ended: run.status.finished(),
            result: run.result.as_ref(),
        })
        .collect()
}

/// The runs as the views take them: the one place a stored run becomes a [`RunView`].
pub fn run_views(runs: &[RunRecord]) -> Vec<RunView<'_>> {
    use crate::store::RunState;
    runs.iter()
        .map(|run| RunView {
            number: usize::try_from(run.number).unwrap_or_default(),
            test: run.test,
            params: &run.params,
            phase: match run.status {
                RunState::Queued => RunPhase::Queued,
                RunState::Running => RunPhase::Running,
                RunState::Done => RunPhase::Done,
                RunState::Failed => RunPhase::Failed,
                RunState::Cancelled => RunPhase::Cancelled,
                RunState::Interrupted => RunPhase::Interrupted,
            },
            attempts: run.attempts,
            started_ms: run.started_ms,
            finished_ms: run.finished_ms,
            live_samples: &run.samples,
            result: run.result.as_ref(),
        })
        .collect()
}

impl CampaignView {
    /// The spec as accepted.
    pub fn spec(&self) -> &CampaignSpec {
        &self.campaign.record.spec
    }

    /// The survey taken when it finished: the source's size and where it was measured.
    pub fn survey(&self) -> Option<&Survey> {
        self.campaign.record.survey.as_ref()
    }

    /// Each run's expected length in seconds, by position, as the plan check works it out
    /// from the stored spec and each run's own parameters, and what in the plan cannot give a
    /// valid run; nothing when the spec no longer expands to its runs.
    pub fn expectation(&self) -> (Vec<f64>, Vec<spec::expectation::PlanWarning>) {
        let Some(plans) = self.run_plans() else {
            return (Vec::new(), Vec::new());
        };
        let by_run = plans
            .iter()
            .map(|plan| crate::engine::expect::expected(plan).seconds)
            .collect();
        (by_run, expect(&plans).warnings)
    }

    /// The whole campaign's expectation as its submission stated it: the likely time and the
    /// bound (for an adaptive search, of its likely runs and of its budget), so a page can set
    /// it against what the campaign took.
    pub fn expected(&self) -> Option<Expectation> {
        let sweep = self.spec().plan_arms().ok()?;
        if let Some((likely, budget)) = search::search_runs(&sweep) {
            return Some(spec::expectation::expect_search(
                &sweep.plans,
                likely,
                budget,
            ));
        }
        self.run_plans().map(|plans| expect(&plans))
    }

    /// Each run's plan, from the stored spec with the run's own parameters: by position for a
    /// full campaign, by test and parameters for an adaptive search's chosen runs; `None`
    /// when the spec no longer expands to the runs.
    fn run_plans(&self) -> Option<Vec<RunPlan>> {
        let plans = self.spec().plan().ok()?;
        if plans.len() == self.runs.len() {
            let mut plans = plans;
            for (plan, run) in plans.iter_mut().zip(&self.runs) {
                plan.params = run.params.clone();
            }
            return Some(plans);
        }
        self.runs
            .iter()
            .map(|run| {
                plans
                    .iter()
                    .find(|plan| plan.test == run.test && plan.params == run.params)
                    .cloned()
            })
            .collect()
    }
}

/// A campaign as a list shows it: the stored campaign, at the status a reader is shown of it
/// (`Lab::status_shown`), with its headline read. The facts are the record's own, never
/// copied; what a list says of them (its link, its date, its verdict in a line) is drawn from
/// it here. The API answers with a shape of its own (`CampaignSummaryBody`, one `From`): a
/// subset of the record, named for clients and held still by the OpenAPI document, where this
/// carries the whole record (spec, kept documents) for the pages.
#[derive(Debug, Clone)]
pub struct CampaignSummary {
    /// The campaign as stored. Its `status` is the stored one; a reader is shown `status`.
    pub record: CampaignRecord,
    /// The status a reader is shown: running while a run's end is still being taken here.
    pub status: CampaignStatus,
    /// The backup's figure and the component named, once the campaign has been judged (one
    /// kept in an older shape reads as none, and the campaign is judged again).
    pub headline: Option<analysis::Headline>,
}

impl CampaignSummary {
    /// The stored campaign `record` as a reader is shown it, at `status`.
    fn of(record: CampaignRecord, status: CampaignStatus) -> Self {
        Self {
            headline: headline_of(&record),
            record,
            status,
        }
    }

    /// Where its report lives.
    pub fn url(&self) -> String {
        campaign_url(&self.record.id)
    }

    /// When it was submitted (`2026-01-02T03:04:05Z`).
    pub fn created(&self) -> String {
        format_ms(self.record.created_ms)
    }

    /// The verdict in one line once the campaign has been judged (the list shows it):
    /// rendered from the kept judgement; one kept under older rules is said as it reads (it
    /// is judged again at start, unless it has no survey to rest on).
    pub fn verdict(&self) -> Option<String> {
        self.record
            .judgement
            .as_ref()
            .and_then(|kept| kept.decode::<analysis::Judgement>().ok())
            .map(|judgement| judgement.verdict.sentence())
    }
}

/// A page of campaigns, newest first; `next_before` continues the list.
#[derive(Debug, Clone)]
pub struct CampaignPage {
    pub campaigns: Vec<CampaignSummary>,
    pub next_before: Option<String>,
}

impl Campaigns<'_> {
    /// A campaign with its spec and runs, judged: its points and the verdict on them. A
    /// finished campaign's judgement is the one kept when it finished; any other is drawn in
    /// memory from the runs. Reads only: nothing is written.
    pub async fn view(&self, id: &str) -> Result<CampaignView, LabError> {
        let lab = self.lab;
        let (record, status) = lab.record_shown(id).await?;
        let runs = lab.store.runs(&record.id).await?;
        let kept = if record.status.is_final() {
            lab.store
                .judgement(&record.id)
                .await?
                .as_ref()
                .and_then(current_judgement)
        } else {
            None
        };
        let judgement = kept.unwrap_or_else(|| {
            analysis::Judgement::of(&run_entries(&runs), record.survey.as_ref())
        });
        let search = search::state_of(&record).map(|(_, state)| {
            let cap = judgement.verdict.cap();
            search_report(&record.spec, &state, runs.len(), &judgement.points, cap)
        });
        Ok(CampaignView {
            campaign: CampaignSummary::of(record, status),
            search,
            runs,
            points: judgement.points,
            verdict: judgement.verdict,
            provisional: judgement.provisional,
            prices: std::sync::Arc::clone(lab.prices()),
        })
    }

    /// Campaigns newest first.
    pub async fn list(
        &self,
        status: Option<CampaignStatus>,
        before: Option<&str>,
        limit: u32,
    ) -> Result<CampaignPage, LabError> {
        let lab = self.lab;
        let limit = limit.clamp(1, MAX_PAGE);
        let start = lab.read_start();
        let Some(records) = lab.store.list_campaigns(status, before, limit).await? else {
            let mut errors = FieldErrors::default();
            errors.add(
                "before",
                format!("no campaign {:?}", before.unwrap_or_default()),
            );
            return Err(LabError::BadQuery(errors));
        };
        let next_before = if records.len() == limit as usize {
            records.last().map(|record| record.id.clone())
        } else {
            None
        };
        // A read: the list shows what was kept when each campaign was judged, and judges
        // nothing itself (see `judge_stale`). A campaign still being judged here reads as
        // running, so a list of another status leaves it out.
        let mut campaigns = Vec::with_capacity(records.len());
        for record in records {
            let shown = match lab.status_shown(&record, start) {
                Some(shown) => CampaignSummary::of(record, shown),
                None => match lab.record_shown(&record.id).await {
                    Ok((record, shown)) => CampaignSummary::of(record, shown),
                    Err(LabError::NotFound(_)) => continue,
                    Err(error) => return Err(error),
                },
            };
            if status.is_none_or(|status| shown.status == status) {
                campaigns.push(shown);
            }
        }
        Ok(CampaignPage {
            campaigns,
            next_before,
        })
    }

    /// The campaign's report: the same document `backlab run --json` prints.
    pub async fn report(&self, id: &str) -> Result<CampaignReport, LabError> {
        let view = self.view(id).await?;
        let record = view.campaign.record;
        Ok(CampaignReport::new(
            CampaignHeader {
                name: record.name,
                spec: record.spec,
            },
            view.runs.into_iter().filter_map(|run| run.result).collect(),
            view.points,
            view.verdict,
            record.survey,
            &view.prices,
        ))
    }

    /// The campaigns queued as reruns of `id`, oldest first.
    pub async fn reruns(&self, id: &str) -> Result<Vec<String>, LabError> {
        check_id(id)?;
        Ok(self.lab.store.reruns_of(id).await?)
    }

    /// The newest earlier campaign with the same spec (its name aside), if any.
    pub async fn previous_with_same_spec(&self, id: &str) -> Result<Option<String>, LabError> {
        check_id(id)?;
        Ok(self
            .lab
            .store
            .same_spec_neighbour(id, Neighbour::Previous)
            .await?)
    }

    /// The oldest later campaign with the same spec (its name aside), if any.
    pub async fn next_with_same_spec(&self, id: &str) -> Result<Option<String>, LabError> {
        check_id(id)?;
        Ok(self
            .lab
            .store
            .same_spec_neighbour(id, Neighbour::Next)
            .await?)
    }
}

impl Lab {
    /// Judges a campaign from its runs, whatever was kept.
    async fn judge(&self, id: &str) -> Result<analysis::Judgement, LabError> {
        let record = self.record(id).await?;
        let runs = self.store.runs(&record.id).await?;
        Ok(analysis::Judgement::of(
            &run_entries(&runs),
            record.survey.as_ref(),
        ))
    }

    /// Judges, once, every finished campaign whose kept headline is missing or was drawn under
    /// other judging rules (an older `JUDGEMENT_VERSION`), and keeps the new one; run in the
    /// background at start, so that no read has to write. A campaign with no headline at all
    /// lost its end (its host, or the host that swept its lapsed run, stopped before taking
    /// it): the end is taken now ([`Lab::campaign_ended`], without a survey: no run's plan is
    /// at hand). Left alone: a campaign of another host that is alive (its end may be under
    /// way there, its survey still being taken, and it judges its own at its start) and one
    /// whose end is under way here. Returns how many were judged.
    pub async fn judge_stale(&self) -> usize {
        let others_alive = self.other_hosts_alive().await;
        let mut judged = 0;
        let mut before: Option<String> = None;
        loop {
            let records = match self
                .store
                .list_campaigns(None, before.as_deref(), MAX_PAGE)
                .await
            {
                Ok(Some(records)) => records,
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(%error, "cannot list the campaigns to judge");
                    break;
                }
            };
            for record in &records {
                let headline = headline_of(record);
                let stale = headline
                    .as_ref()
                    .is_none_or(|headline| headline.version != analysis::JUDGEMENT_VERSION);
                let ended = record.status.is_final() && record.runs_finished == record.runs_total;
                let held_elsewhere = match (&record.host, &others_alive) {
                    (None, _) => false,
                    (Some(host), Some(alive)) => alive.contains(host),
                    (Some(host), None) => *host != self.host.name,
                };
                if !ended || !stale || held_elsewhere || self.ending_here(&record.id) {
                    continue;
                }
                if record.headline.is_none() {
                    self.campaign_ended(&record.id, record.status, Ending::LastRun { plan: None })
                        .await;
                    if self.judged_now(&record.id).await {
                        judged += 1;
                    }
                } else if self.keep_verdict(&record.id).await {
                    judged += 1;
                }
            }
            if records.len() < MAX_PAGE as usize {
                break;
            }
            before = records.last().map(|record| record.id.clone());
        }
        judged
    }

    /// The other hosts on the database heard from within a lease (none on SQLite, where this
    /// lab is the only one); `None` when they cannot be read, and every other host is taken
    /// for alive.
    async fn other_hosts_alive(&self) -> Option<HashSet<String>> {
        if self.store.backend() == Backend::Sqlite {
            return Some(HashSet::new());
        }
        let now = crate::clock::now_ms();
        match self.store.hosts().await {
            Ok(hosts) => Some(
                hosts
                    .into_iter()
                    .filter(|host| host.name != self.host.name)
                    .filter(|host| self.host.hears(host.heartbeat_ms, now))
                    .map(|host| host.name)
                    .collect(),
            ),
            Err(error) => {
                tracing::warn!(%error, "cannot read the hosts: their campaigns are left to them");
                None
            }
        }
    }

    /// Whether campaign `id` has a headline kept now.
    async fn judged_now(&self, id: &str) -> bool {
        match self.store.campaign(id).await {
            Ok(record) => record.is_some_and(|record| record.headline.is_some()),
            Err(_) => false,
        }
    }

    /// Judges a finished campaign and keeps its judgement and headline: pages, reports and
    /// the list read them from then on. False when it cannot be judged (a warning is logged).
    pub(super) async fn keep_verdict(&self, id: &str) -> bool {
        let judgement = match self.judge(id).await {
            Ok(judgement) => judgement,
            Err(error) => {
                tracing::warn!(campaign = %id, %error, "cannot judge the campaign");
                return false;
            }
        };
        let headline = analysis::Headline::of(&judgement.verdict);
        let kept = match (Document::encode(&judgement), Document::encode(&headline)) {
            (Ok(judged), Ok(headlined)) => self.store.keep_judgement(id, &judged, &headlined).await,
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        if let Err(error) = kept {
            tracing::warn!(campaign = %id, %error, "cannot keep the verdict");
        }
        true
    }

    /// The stored campaign `id`; not found when there is none.
    pub(super) async fn record(&self, id: &str) -> Result<CampaignRecord, LabError> {
        check_id(id)?;
        self.store.campaign(id).await?.ok_or_else(|| not_found(id))
    }

    /// The stored campaign and the status a reader is shown of it ([`Lab::status_shown`]),
    /// read again when a campaign's end may have come and gone during the read (at most
    /// three times; the stored status then).
    pub(super) async fn record_shown(
        &self,
        id: &str,
    ) -> Result<(CampaignRecord, CampaignStatus), LabError> {
        let mut reads = 0;
        loop {
            let start = self.read_start();
            let record = self.record(id).await?;
            reads += 1;
            match self.status_shown(&record, start) {
                Some(status) => return Ok((record, status)),
                None if reads == 3 => {
                    let status = record.status;
                    return Ok((record, status));
                }
                None => {}
            }
        }
    }
}

/// Refuses, as not found, an id no campaign can have: the store is not asked.
pub(super) fn check_id(id: &str) -> Result<(), LabError> {
    if ids::looks_like_campaign_id(id) {
        Ok(())
    } else {
        Err(not_found(id))
    }
}

/// Where a campaign's report lives.
pub fn campaign_url(id: &str) -> String {
    format!("/campaigns/{id}")
}

/// A kept judgement, when it still reads and was drawn under today's judging rules
/// ([`analysis::JUDGEMENT_VERSION`]); `None` tells the caller to judge the runs again, or to
/// leave the campaign out of its series until it is.
pub(super) fn current_judgement(kept: &Document) -> Option<analysis::Judgement> {
    kept.decode::<analysis::Judgement>()
        .ok()
        .filter(|judgement| judgement.version == analysis::JUDGEMENT_VERSION)
}

/// The headline kept with a campaign; one kept in an older shape reads as none, and the
/// campaign is judged again.
fn headline_of(record: &CampaignRecord) -> Option<analysis::Headline> {
    record.headline.as_ref().and_then(|kept| kept.decode().ok())
}

pub(super) fn not_found(id: &str) -> LabError {
    LabError::NotFound(format!("no campaign {id:?}"))
}
