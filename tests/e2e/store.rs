//! The store's operations, the same on a SQLite file and on a real PostgreSQL (a database per
//! test on the binary's throwaway cluster): a campaign's life from submission to deletion, the
//! list and its filters, the previous campaign of a spec, recovery after a crash, the figures
//! for `/metrics`, a series' judged campaigns, the documents it keeps for the layers above (a
//! judgement, what the lab makes of one kept under other rules, and a campaign's end taken
//! once however many read it unended); runs whose stored test or parameters cannot be read,
//! ended failed once; and on PostgreSQL, two stores (two lab hosts) claiming from one queue at
//! once never take a run twice, the sessions' deadlines, and what a lab judges at start of
//! campaigns whose end another host took or lost.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use backlab::analysis::{Headline, Judgement};
use backlab::engine::EngineSettings;
use backlab::engine::result::{RunResult, RunStatus, Sample};
use backlab::engine::survey::Survey;
use backlab::lab::events::LabEvent;
use backlab::lab::{Ending, HostSettings, KeptAnswers, Lab};
use backlab::net::listener::DataLink;
use backlab::policy::Policy;
use backlab::spec::{self, CampaignSpec, Placement, RunParams, TestKind};
use backlab::store::{
    Backend, CampaignStatus, CancelOutcome, DeleteOutcome, Document, HeldRun, Location, Neighbour,
    NewCampaign, RunState, Store,
};

use crate::support::fixtures::{run_params, scratch};
use crate::support::postgres::Postgres;

/// The parameters of every run here: 64 MiB, no time cap.
fn params() -> RunParams {
    RunParams {
        size: Some(64 << 20),
        duration_s: None,
        ..run_params()
    }
}

/// The lab host every campaign of these tests runs on, unless one says otherwise.
const HOST: &str = "lab-a";

/// A lease that lasts past every instant these tests give.
const FOREVER: i64 = i64::MAX / 2;

fn campaign(id: &str, name: &str, runs: usize) -> NewCampaign {
    campaign_on(HOST, id, name, runs)
}

/// A campaign spec of generated data into the null target, named `name`.
fn spec_named(name: &str) -> CampaignSpec {
    spec::parse_json(&format!(
        r#"{{"name":"{name}","source":{{"generated":{{"size":"64M"}}}},"target":{{"kind":"null"}}}}"#
    ))
    .expect("a spec")
}

/// Where the spec's runs read and write.
fn placement() -> Placement {
    let plans = spec_named("any").plan().expect("a plan");
    Placement::of(&plans).expect("a placement")
}

fn campaign_on(host: &str, id: &str, name: &str, runs: usize) -> NewCampaign {
    let spec = spec_named(name);
    NewCampaign {
        id: id.to_string(),
        host: host.to_string(),
        checked_by: host.to_string(),
        name: name.to_string(),
        series: backlab::series::key_of(&spec),
        spec,
        placement: placement(),
        rerun_of: None,
        runs: (0..runs).map(|_| (TestKind::NullSink, params())).collect(),
        search: None,
    }
}

/// A lab over `store`, on host [`HOST`], for what the lab decides of what the store keeps
/// (called on a tokio runtime: its data listener starts on it).
fn lab_over(store: &Store) -> Lab {
    lab_named(store, HOST, std::time::Duration::from_secs(15))
}

/// A lab over `store` serving as host `name`, its claims lasting `lease`.
fn lab_named(store: &Store, name: &str, lease: std::time::Duration) -> Lab {
    let here = std::env::temp_dir();
    Lab::new(
        store.clone(),
        Policy {
            source_roots: Vec::new(),
            target_roots: Vec::new(),
            devices: Vec::new(),
            base_dir: here.clone(),
            max_size: 1 << 30,
            max_duration_s: 600.0,
        },
        EngineSettings {
            allow_devices: Vec::new(),
            network: None,
            restore_dir: here,
            object_stores: Default::default(),
            upload_journal: None,
            object_owner: name.to_string(),
            tools: Default::default(),
            max_run: None,
        },
        HostSettings {
            name: name.to_string(),
            lease,
            url: None,
            webhook: None,
        },
        DataLink::start("127.0.0.1:0".parse().expect("address"), None)
            .expect("the data listener starts"),
    )
}

fn held(run: &backlab::store::ClaimedRun) -> HeldRun {
    HeldRun {
        run_id: run.run_id,
        attempt: run.attempt,
    }
}

fn done(mb_per_s: f64) -> RunResult {
    RunResult {
        status: RunStatus::Done,
        bytes: 64 << 20,
        seconds: 0.5,
        mb_per_s,
        samples: vec![Sample { t: 0.25, mb_per_s }, Sample { t: 0.5, mb_per_s }],
        ..RunResult::failed(TestKind::NullSink, params(), String::new())
    }
}

/// One campaign's whole life, and everything the pages ask of the store on the way.
async fn a_campaigns_life(store: &Store) {
    store
        .insert_campaign(&campaign("c1", "first", 2), 1_000)
        .await
        .expect("insert");
    store
        .insert_campaign(&campaign("c2", "second", 1), 2_000)
        .await
        .expect("insert");
    let first = store.campaign("c1").await.expect("read").expect("c1");
    assert_eq!(
        (first.status, first.runs_total, first.runs_finished),
        (RunState::Queued, 2, 0)
    );
    assert_eq!(first.created_ms, 1_000);

    // The oldest queued run first; its live sample, then its result.
    let claimed = store
        .claim_next(HOST, 3_000, FOREVER)
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(
        (
            claimed.campaign_id.as_str(),
            claimed.position,
            claimed.runs_total
        ),
        ("c1", 0, 2)
    );
    assert_eq!(claimed.params, params());
    assert_eq!((claimed.attempt, claimed.checked_elsewhere), (1, false));
    store
        .add_sample(
            held(&claimed),
            Sample {
                t: 0.25,
                mb_per_s: 1.0,
            },
        )
        .await
        .expect("sample");
    store
        .add_sample(
            held(&claimed),
            Sample {
                t: 0.25,
                mb_per_s: 2.0,
            },
        )
        .await
        .expect("the same instant again");
    let running = store.runs("c1").await.expect("runs");
    assert_eq!(running[0].status, RunState::Running);
    assert_eq!(
        running[0].samples,
        vec![Sample {
            t: 0.25,
            mb_per_s: 2.0
        }]
    );
    assert_eq!(running[0].attempts, 1);
    assert_eq!(
        store
            .campaign("c1")
            .await
            .expect("read")
            .expect("c1")
            .status,
        RunState::Running
    );
    store
        .finish_run(held(&claimed), &done(420.5), 4_000)
        .await
        .expect("finish");
    let runs = store.runs("c1").await.expect("runs");
    let result = runs[0].result.as_ref().expect("a result");
    assert_eq!((result.mb_per_s, result.bytes), (420.5, 64 << 20));
    assert_eq!(result.samples.len(), 2);
    assert_eq!(runs[0].finished_ms, Some(4_000));

    // Lists: newest first, by status, and a page before a campaign.
    let all = store
        .list_campaigns(None, None, 10)
        .await
        .expect("list")
        .expect("page");
    assert_eq!(
        all.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c2", "c1"]
    );
    let running = store
        .list_campaigns(Some(RunState::Running), None, 10)
        .await
        .expect("list")
        .expect("page");
    assert_eq!(
        running.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c1"]
    );
    assert_eq!(running[0].best_mb_per_s, Some(420.5));
    assert_eq!((running[0].runs_finished, running[0].runs_done), (1, 1));
    let older = store
        .list_campaigns(None, Some("c2"), 10)
        .await
        .expect("list")
        .expect("page");
    assert_eq!(
        older.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c1"]
    );
    assert!(
        store
            .list_campaigns(None, Some("nope"), 10)
            .await
            .expect("list")
            .is_none()
    );

    // The same spec, its name aside, is the previous campaign; another spec is not.
    let mut again = campaign("c3", "first", 1);
    again.spec.name = "first, again".to_string();
    store.insert_campaign(&again, 5_000).await.expect("insert");
    let previous = store
        .same_spec_neighbour("c3", Neighbour::Previous)
        .await
        .expect("previous");
    assert_eq!(
        previous.as_deref(),
        Some("c2"),
        "c2's spec differs only by its name too"
    );
    assert_eq!(
        store
            .same_spec_neighbour("c1", Neighbour::Next)
            .await
            .expect("next")
            .as_deref(),
        Some("c2")
    );

    // A crash leaves a run running: recovery queues it again and drops its samples.
    let crashed = store
        .claim_next(HOST, 6_000, FOREVER)
        .await
        .expect("claim")
        .expect("a run");
    store
        .add_sample(
            held(&crashed),
            Sample {
                t: 0.25,
                mb_per_s: 9.0,
            },
        )
        .await
        .expect("sample");
    let recovery = store.recover(HOST, 7_000).await.expect("recover");
    assert_eq!(recovery.requeued, 1);
    assert_eq!(recovery.specs.len(), 1);
    let again = store
        .claim_next(HOST, 7_000, FOREVER)
        .await
        .expect("claim")
        .expect("the same run");
    assert_eq!(again.run_id, crashed.run_id);
    let runs = store.runs(&again.campaign_id).await.expect("runs");
    let run = runs
        .iter()
        .find(|run| run.id == again.run_id)
        .expect("the run");
    assert_eq!((run.attempts, run.samples.len()), (2, 0));

    // The figures for /metrics.
    let figures = store.queue_figures().await.expect("figures");
    assert_eq!(figures.bytes_moved, 64 << 20);
    assert_eq!(figures.duration_count, 1);
    assert_eq!(figures.duration_sum, 0.5);
    assert_eq!(figures.duration_buckets[0], (1.0, 1));
    let total: i64 = figures.runs_by_status.iter().map(|(_, count)| count).sum();
    assert!(total >= 2, "{:?}", figures.runs_by_status);

    // Cancel names the running run and cancels the queued ones; delete waits for the running.
    let Some(CancelOutcome {
        cancelled_queued,
        running,
    }) = store
        .cancel_campaign(&again.campaign_id, 8_000)
        .await
        .expect("cancel")
    else {
        panic!("the campaign exists");
    };
    assert_eq!(running, vec![again.run_id]);
    assert!(cancelled_queued <= 1);
    assert!(matches!(
        store
            .delete_campaign(&again.campaign_id)
            .await
            .expect("delete"),
        DeleteOutcome::Running
    ));
    store.interrupt_run(held(&again)).await.expect("interrupt");
    store
        .cancel_campaign(&again.campaign_id, 9_000)
        .await
        .expect("cancel");
    assert!(matches!(
        store
            .delete_campaign(&again.campaign_id)
            .await
            .expect("delete"),
        DeleteOutcome::Deleted
    ));
    assert!(
        store
            .campaign(&again.campaign_id)
            .await
            .expect("read")
            .is_none()
    );
    assert!(matches!(
        store.delete_campaign("nope").await.expect("delete"),
        DeleteOutcome::NotFound
    ));

    // A judgement and its headline are kept whole and handed back as they were given.
    assert_eq!(store.judgement("c2").await.expect("read"), None);
    let runs = store.runs("c2").await.expect("runs");
    let judgement = Judgement::of(&backlab::lab::run_entries(&runs), None);
    let headline = Headline::of(&judgement.verdict);
    let kept_headline = Document::encode(&headline).expect("a headline document");
    let keep = |judgement: &Judgement| Document::encode(judgement).expect("a judgement document");
    store
        .keep_judgement("c2", &keep(&judgement), &kept_headline)
        .await
        .expect("verdict");
    let survey = Survey {
        source_bytes: 64 << 20,
        ..Survey::default()
    };
    store.set_survey("c2", &survey).await.expect("survey");
    let second = store.campaign("c2").await.expect("read").expect("c2");
    assert_eq!(second.judgement.as_ref(), Some(&keep(&judgement)));
    assert_eq!(second.survey.as_ref(), Some(&survey));
    assert_eq!(second.headline.as_ref(), Some(&kept_headline));
    let read_back = store.judgement("c2").await.expect("read").expect("kept");
    assert_eq!(read_back, keep(&judgement));
    assert_eq!(
        read_back.decode::<Judgement>().ok().as_ref(),
        Some(&judgement)
    );

    // A series lists its judged campaigns oldest first (the newest `limit` of them), and
    // /metrics the newest judged campaign of each series; c3 differs from c2 by its name alone.
    let key = store
        .series_of("c2")
        .await
        .expect("read")
        .expect("a series key");
    assert_eq!(key, backlab::series::key_of(&second.spec));
    assert_eq!(store.series_of("nope").await.expect("read"), None);
    assert_eq!(
        store.series_entries(&key, 10).await.expect("entries").len(),
        1,
        "c3 has no judgement yet"
    );
    store
        .keep_judgement("c3", &keep(&judgement), &kept_headline)
        .await
        .expect("verdict");
    let entries = store.series_entries(&key, 10).await.expect("entries");
    assert_eq!(
        entries.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["c2", "c3"]
    );
    assert_eq!(
        (entries[0].created_ms, &entries[0].judgement),
        (2_000, &keep(&judgement))
    );
    let newest = store.series_entries(&key, 1).await.expect("entries");
    assert_eq!(
        newest.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["c3"]
    );
    let latest = store.series_latest(10).await.expect("latest");
    assert_eq!(
        latest
            .iter()
            .map(|(key, e)| (key.as_str(), e.id.as_str()))
            .collect::<Vec<_>>(),
        [(key.as_str(), "c3")]
    );

    // A schedule keeps its newest firings, not every one it ever had.
    let schedule = backlab::store::ScheduleRecord {
        id: "s1".to_string(),
        name: "every minute".to_string(),
        cron: "* * * * *".to_string(),
        spec: "{}".to_string(),
        paused: false,
        created_ms: 0,
        next_ms: 60_000,
        fired: 0,
        missed: 0,
        last_missed_ms: None,
        last_error: None,
    };
    assert!(store.insert_schedule(&schedule).await.expect("insert"));
    let kept = backlab::store::FIRINGS_KEPT;
    for minute in 1..=kept + 25 {
        let at = minute * 60_000;
        let taken = store
            .take_occurrences("s1", at, at + 60_000, 0, None, Some(at), HOST, at)
            .await
            .expect("take");
        assert!(taken, "minute {minute}");
    }
    let listed = store
        .schedules_with_firings(None, 200, 10_000)
        .await
        .expect("read")
        .expect("a first page");
    let (record, firings) = listed
        .iter()
        .find(|(record, _)| record.id == "s1")
        .expect("the schedule");
    assert_eq!(record.fired, kept + 25);
    assert_eq!(
        firings.len() as i64,
        kept,
        "only the newest firings are kept"
    );
    assert_eq!(
        firings[0].occurrence_ms,
        (kept + 25) * 60_000,
        "newest first"
    );
}

/// A campaign cancelled while its run executes, and the lab killed before the run stored its
/// end: at the next start the run ends cancelled, never queued again.
async fn a_cancel_outlives_a_crash(store: &Store) {
    store
        .insert_campaign(&campaign("k1", "cancelled mid-run", 2), 1_000)
        .await
        .expect("insert");
    let running = store
        .claim_next(HOST, 2_000, FOREVER)
        .await
        .expect("claim")
        .expect("a run");
    let outcome = store
        .cancel_campaign("k1", 3_000)
        .await
        .expect("cancel")
        .expect("the campaign exists");
    assert_eq!(outcome.running, vec![running.run_id]);
    // The host's next heartbeat learns of the cancel even when no stop reached it.
    let beat = store
        .heartbeat(HOST, 3_500, FOREVER, &[held(&running)])
        .await
        .expect("beat");
    assert_eq!(beat.cancelled, vec![held(&running)]);
    assert!(beat.lost.is_empty(), "{beat:?}");
    let recovery = store.recover(HOST, 4_000).await.expect("recover");
    assert_eq!(recovery.requeued, 0);
    assert!(
        store
            .claim_next(HOST, 5_000, FOREVER)
            .await
            .expect("claim")
            .is_none(),
        "a run of the cancelled campaign was queued again"
    );
    let runs = store.runs("k1").await.expect("runs");
    assert!(
        runs.iter().all(|run| run.status == RunState::Cancelled),
        "{:?}",
        runs.iter().map(|run| run.status).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_cancel_outlives_a_crash_on_sqlite() {
    let dir = scratch();
    let store = Store::open(&Location::File(dir.path().join("lab.db")))
        .await
        .expect("open");
    a_cancel_outlives_a_crash(&store).await;
    store.close().await;
}

#[tokio::test]
async fn a_cancel_outlives_a_crash_on_postgres() {
    let cluster = Postgres::database();
    let store = Store::open(&Location::Postgres(cluster.url.clone()))
        .await
        .expect("open");
    a_cancel_outlives_a_crash(&store).await;
    store.close().await;
}

/// Counts the judgements kept: one each time a campaign's end reaches its step 3.
#[derive(Default)]
struct JudgedCount(AtomicUsize);

impl KeptAnswers for JudgedCount {
    fn judged(&self, _id: &str) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Two lanes whose runs end together both read the campaign as final and not yet judged;
/// the first takes its end and lets go of it before the second asks. The second finds the
/// judgement kept and does nothing: the campaign is judged once and announced once.
#[tokio::test]
async fn a_campaigns_end_is_taken_once_by_callers_that_read_it_unended() {
    let dir = scratch();
    let store = Store::open(&Location::File(dir.path().join("lab.db")))
        .await
        .expect("open");
    let id = backlab::ids::campaign_id();
    store
        .insert_campaign(&campaign(&id, "ended", 1), 1_000)
        .await
        .expect("insert");
    let claimed = store
        .claim_next(HOST, 2_000, FOREVER)
        .await
        .expect("claim")
        .expect("a run");
    store
        .finish_run(held(&claimed), &done(420.5), 3_000)
        .await
        .expect("finish");
    let lab = lab_over(&store);
    let judged = Arc::new(JudgedCount::default());
    lab.keep_answers_in(judged.clone());
    let mut events = lab.runs().subscribe();
    // What both lanes read: the campaign final, its judgement not kept.
    let read = store
        .campaign(&id)
        .await
        .expect("read")
        .expect("the campaign");
    assert!(
        read.status.is_final() && read.headline.is_none(),
        "{:?}",
        read.status
    );

    let mut finished = 0;
    for _caller in 0..2 {
        lab.campaign_ended(&id, read.status, Ending::LastRun { plan: None })
            .await;
        while let Ok(event) = events.try_recv() {
            if event.0 == id && matches!(event.1, LabEvent::CampaignFinished { .. }) {
                finished += 1;
            }
        }
    }
    assert_eq!(judged.0.load(Ordering::SeqCst), 1, "judgements kept");
    assert_eq!(finished, 1, "campaign_finished events");
    let kept = store
        .campaign(&id)
        .await
        .expect("read")
        .expect("the campaign");
    assert!(kept.headline.is_some(), "the judgement is kept");
    store.close().await;
}

/// The lab shows a judgement kept under today's rules as it was kept, and judges the runs
/// again when it was kept under others; a series shows only the first kind.
#[tokio::test]
async fn a_judgement_kept_under_other_rules_is_judged_again_by_the_lab() {
    let dir = scratch();
    let store = Store::open(&Location::File(dir.path().join("lab.db")))
        .await
        .expect("open");
    // An id as the lab gives one: the lab answers for no other.
    let id = backlab::ids::campaign_id();
    store
        .insert_campaign(&campaign(&id, "judged", 1), 1_000)
        .await
        .expect("insert");
    let claimed = store
        .claim_next(HOST, 2_000, FOREVER)
        .await
        .expect("claim")
        .expect("a run");
    store
        .finish_run(held(&claimed), &done(420.5), 3_000)
        .await
        .expect("finish");
    let record = store
        .campaign(&id)
        .await
        .expect("read")
        .expect("the campaign");
    assert!(record.status.is_final(), "{:?}", record.status);
    let key = record.series.clone().expect("a series key");
    assert_eq!(key, backlab::series::key_of(&record.spec));

    let runs = store.runs(&id).await.expect("runs");
    let judgement = Judgement::of(&backlab::lab::run_entries(&runs), None);
    let headline = Document::encode(&Headline::of(&judgement.verdict)).expect("a headline");
    // Marked, to tell the judgement kept from one drawn anew (the runs have all finished).
    let mut as_kept = judgement.clone();
    as_kept.provisional = true;
    let keep = |judgement: &Judgement| Document::encode(judgement).expect("a judgement document");
    store
        .keep_judgement(&id, &keep(&as_kept), &headline)
        .await
        .expect("verdict");
    let lab = Arc::new(lab_over(&store));
    let view = lab.campaigns().view(&id).await.expect("the campaign");
    assert!(view.provisional, "the judgement as it was kept");
    let history = lab.series().history(&key).await.expect("a series");
    let ids: Vec<&str> = history.campaigns.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [id.as_str()]);

    as_kept.version += 1;
    store
        .keep_judgement(&id, &keep(&as_kept), &headline)
        .await
        .expect("verdict");
    let view = lab.campaigns().view(&id).await.expect("the campaign");
    assert!(
        !view.provisional && view.verdict == judgement.verdict,
        "a judgement kept under other rules is judged again"
    );
    assert!(
        lab.series().history(&key).await.is_err(),
        "a series leaves out a judgement kept under other rules"
    );
    store.close().await;
}

#[tokio::test]
async fn a_campaigns_life_on_sqlite() {
    let dir = scratch();
    let store = Store::open(&Location::File(dir.path().join("lab.db")))
        .await
        .expect("open");
    assert_eq!(store.backend(), Backend::Sqlite);
    a_campaigns_life(&store).await;
    store.close().await;
}

#[tokio::test]
async fn a_campaigns_life_on_postgres() {
    let cluster = Postgres::database();
    let location = Location::Postgres(cluster.url.clone());
    let store = Store::open(&location).await.expect("open");
    assert_eq!(store.backend(), Backend::Postgres);
    a_campaigns_life(&store).await;
    store.close().await;
    // A second open finds the schema in place and the data kept.
    let store = Store::open(&location).await.expect("open again");
    assert!(store.campaign("c2").await.expect("read").is_some());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_claiming_at_once_never_take_a_run_twice() {
    const RUNS: usize = 300;
    const HOSTS: [&str; 2] = ["lab-a", "lab-b"];
    let cluster = Postgres::database();
    let location = Location::Postgres(cluster.url.clone());
    let stores = [
        Store::open(&location).await.expect("host a"),
        Store::open(&location).await.expect("host b"),
    ];
    // Campaigns for both hosts, interleaved in the queue.
    for index in 0..6 {
        stores[0]
            .insert_campaign(
                &campaign_on(HOSTS[index % 2], &format!("c{index}"), "load", RUNS / 6),
                1_000,
            )
            .await
            .expect("insert");
    }
    // Four claimers on each host, as fast as they can.
    let mut claimers = Vec::new();
    for claimer in 0..8 {
        let store = stores[claimer % 2].clone();
        let host = HOSTS[claimer % 2];
        claimers.push(tokio::spawn(async move {
            let mut claimed = Vec::new();
            while let Some(run) = store.claim_next(host, 2_000, FOREVER).await.expect("claim") {
                claimed.push((host, run.campaign_id, run.run_id));
            }
            claimed
        }));
    }
    let mut all = Vec::new();
    for claimer in claimers {
        all.extend(claimer.await.expect("claimer"));
    }
    let unique: HashSet<i64> = all.iter().map(|(_, _, run_id)| *run_id).collect();
    assert_eq!(unique.len(), all.len(), "a run was claimed twice");
    assert_eq!(all.len(), RUNS, "every run claimed once");
    for (host, campaign_id, run_id) in &all {
        let index: usize = campaign_id[1..].parse().expect("a campaign index");
        assert_eq!(
            *host,
            HOSTS[index % 2],
            "run {run_id} of {campaign_id} was taken by another host than its campaign's"
        );
    }
    for store in stores {
        store.close().await;
    }
}

/// A campaign cancelled while the host executing its run is gone: the host never hears the
/// cancel, so the sweep of lapsed leases ends the run cancelled (not queued again, to run for
/// a cancelled campaign or to keep it "running" for ever) and names the campaign, whose end
/// the sweeping host then takes.
#[tokio::test]
async fn a_lapsed_run_of_a_cancelled_campaign_ends_cancelled() {
    let (_cluster, a, b) = two_hosts().await;
    lapsed_run_of_a_cancelled_campaign(&a, &b).await;
    a.close().await;
    b.close().await;
}

/// The same on SQLite, where one lab holds the file: its own sweep finds its own lapsed run.
#[tokio::test]
async fn a_lapsed_run_of_a_cancelled_campaign_ends_cancelled_on_sqlite() {
    let dir = scratch();
    let store = Store::open(&Location::File(dir.path().join("lab.db")))
        .await
        .expect("open");
    lapsed_run_of_a_cancelled_campaign(&store, &store).await;
    store.close().await;
}

/// Host `a` claims a run of c2 and one of c1, then falls silent; c1 is cancelled through
/// `b`, whose sweep past the lease ends c1's run cancelled and queues c2's again.
async fn lapsed_run_of_a_cancelled_campaign(a: &Store, b: &Store) {
    // c2 first: the oldest queued run is claimed first.
    a.insert_campaign(&campaign_on("lab-a", "c2", "kept", 1), 1_000)
        .await
        .expect("insert");
    a.insert_campaign(&campaign_on("lab-a", "c1", "cancelled", 2), 1_500)
        .await
        .expect("insert");
    let kept = a
        .claim_next("lab-a", 2_000, 12_000)
        .await
        .expect("claim")
        .expect("a run");
    let cancelled = a
        .claim_next("lab-a", 2_000, 12_000)
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(
        (kept.campaign_id.as_str(), cancelled.campaign_id.as_str()),
        ("c2", "c1")
    );
    // Cancelled through lab-b while lab-a, silent, still holds the run.
    let outcome = b
        .cancel_campaign("c1", 5_000)
        .await
        .expect("cancel")
        .expect("the campaign");
    assert_eq!(outcome.running, vec![cancelled.run_id]);
    assert_eq!(outcome.cancelled_queued, 1);
    let lapsed = b.requeue_lapsed(16_000).await.expect("sweep");
    assert_eq!(lapsed.requeued, 1, "c2's run goes back on the queue");
    assert_eq!(lapsed.cancelled_campaigns, vec!["c1".to_string()]);
    let runs = b.runs("c1").await.expect("runs");
    assert!(
        runs.iter().all(|run| run.status == RunState::Cancelled),
        "{:?}",
        runs.iter().map(|run| run.status).collect::<Vec<_>>()
    );
    let record = b.campaign("c1").await.expect("read").expect("c1");
    assert_eq!(record.status, CampaignStatus::Cancelled);
    assert_eq!(
        b.runs("c2").await.expect("runs")[0].status,
        RunState::Queued
    );
    // Nothing of it is claimed again, and a later sweep has nothing more to say of it.
    let next = a
        .claim_next("lab-a", 17_000, 27_000)
        .await
        .expect("claim")
        .expect("c2's run");
    assert_eq!(next.campaign_id, "c2");
    let lapsed = b.requeue_lapsed(40_000).await.expect("sweep");
    assert!(lapsed.cancelled_campaigns.is_empty(), "{lapsed:?}");
}

/// The host whose heartbeat ends a cancelled campaign's lapsed run takes the campaign's end:
/// its judgement is kept and its followers hear that it finished, cancelled.
#[tokio::test]
async fn the_host_that_sweeps_a_cancelled_campaigns_lapsed_run_ends_the_campaign() {
    let (_cluster, a, b) = two_hosts().await;
    let now = backlab::clock::now_ms();
    // An id as the lab makes them: the lab reads only campaigns whose ids look like its own.
    let id = backlab::ids::campaign_id();
    a.insert_campaign(&campaign_on("lab-a", &id, "cancelled", 1), now)
        .await
        .expect("insert");
    // lab-a claims the run for a second, then falls silent; the cancel never reaches it.
    a.claim_next("lab-a", now, now + 1_000)
        .await
        .expect("claim")
        .expect("a run");
    b.cancel_campaign(&id, now)
        .await
        .expect("cancel")
        .expect("the campaign");
    let lab = Arc::new(lab_named(&b, "lab-b", std::time::Duration::from_secs(1)));
    let mut events = lab.runs().subscribe();
    let heartbeat = backlab::lab::host::spawn_heartbeat(&lab);
    let finished = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let envelope = events.recv().await.expect("the lab's events");
            if let (true, LabEvent::CampaignFinished { status }) = (envelope.0 == id, &envelope.1) {
                return *status;
            }
        }
    })
    .await
    .expect("the campaign ends within 30 s of its run's lease");
    assert_eq!(finished, CampaignStatus::Cancelled);
    let record = b.campaign(&id).await.expect("read").expect("the campaign");
    assert_eq!(record.status, CampaignStatus::Cancelled);
    assert!(record.headline.is_some(), "its judgement is kept");
    heartbeat.abort();
    a.close().await;
    b.close().await;
}

/// A host that stops renewing its lease loses its run: another host's heartbeat puts it back
/// on the queue, for the same host only; the old attempt can no longer save a result or renew,
/// and the run's next attempt finishes it.
#[tokio::test]
async fn a_lapsed_lease_sends_the_run_back_to_its_own_host() {
    let (_cluster, a, b) = two_hosts().await;
    a.insert_campaign(&campaign_on("lab-a", "c1", "leased", 1), 1_000)
        .await
        .expect("insert");
    let first = a
        .claim_next("lab-a", 2_000, 12_000)
        .await
        .expect("claim")
        .expect("a run");
    assert!(
        b.claim_next("lab-b", 2_000, 12_000)
            .await
            .expect("claim")
            .is_none(),
        "lab-b took lab-a's run"
    );
    // Renewed at 5 s: the lease lasts to 15 s, and nothing lapses at 13 s.
    let beat = a
        .heartbeat("lab-a", 5_000, 15_000, &[held(&first)])
        .await
        .expect("beat");
    assert!(
        beat.lost.is_empty() && beat.cancelled.is_empty(),
        "{beat:?}"
    );
    assert_eq!(b.requeue_lapsed(13_000).await.expect("sweep").requeued, 0);
    // Silent past 15 s: lab-b's sweep takes it back, still lab-a's.
    let lapsed = b.requeue_lapsed(16_000).await.expect("sweep");
    assert_eq!((lapsed.requeued, lapsed.cancelled_campaigns.len()), (1, 0));
    assert!(
        b.claim_next("lab-b", 16_000, 26_000)
            .await
            .expect("claim")
            .is_none(),
        "the run went to another host"
    );
    let second = a
        .claim_next("lab-a", 17_000, 27_000)
        .await
        .expect("claim")
        .expect("the run again");
    assert_eq!((second.run_id, second.attempt), (first.run_id, 2));
    // The first attempt, still sampling, adds nothing to the second's samples.
    a.add_sample(
        held(&first),
        Sample {
            t: 0.25,
            mb_per_s: 7.0,
        },
    )
    .await
    .expect("a stale sample is ignored, not an error");
    a.add_sample(
        held(&second),
        Sample {
            t: 0.5,
            mb_per_s: 3.0,
        },
    )
    .await
    .expect("sample");
    assert_eq!(
        a.runs("c1").await.expect("runs")[0].samples,
        vec![Sample {
            t: 0.5,
            mb_per_s: 3.0
        }]
    );
    // The first attempt learns it lost the run, and cannot save over the second.
    let beat = a
        .heartbeat("lab-a", 18_000, 28_000, &[held(&first), held(&second)])
        .await
        .expect("beat");
    assert_eq!(beat.lost, vec![held(&first)]);
    assert!(
        !a.finish_run(held(&first), &done(1.0), 19_000)
            .await
            .expect("finish")
    );
    assert!(
        a.finish_run(held(&second), &done(2.0), 20_000)
            .await
            .expect("finish")
    );
    let runs = a.runs("c1").await.expect("runs");
    assert_eq!(runs[0].status, RunState::Done);
    assert_eq!(runs[0].attempts, 2);
    assert_eq!(runs[0].result.as_ref().map(|r| r.mb_per_s), Some(2.0));
    a.close().await;
    b.close().await;
}

/// On PostgreSQL every statement of the lab has a deadline, and so has a transaction left
/// idle, the store's own unless the URL sets one itself: the URL's wins.
#[tokio::test]
async fn postgres_statements_have_deadlines_and_the_urls_own_win() {
    let cluster = Postgres::database();
    let store = Store::open(&Location::Postgres(cluster.url.clone()))
        .await
        .expect("open");
    let deadlines = store
        .session_deadlines()
        .await
        .expect("read")
        .expect("PostgreSQL has deadlines");
    assert_eq!(
        (
            deadlines.statement.as_str(),
            deadlines.idle_in_transaction.as_str()
        ),
        ("30s", "1min")
    );
    store.close().await;
    let own = format!("{}?options=-c%20statement_timeout%3D5000", cluster.url);
    let store = Store::open(&Location::Postgres(own)).await.expect("open");
    let deadlines = store
        .session_deadlines()
        .await
        .expect("read")
        .expect("PostgreSQL has deadlines");
    assert_eq!(
        (
            deadlines.statement.as_str(),
            deadlines.idle_in_transaction.as_str()
        ),
        ("5s", "1min"),
        "the URL's statement deadline, the store's idle one"
    );
    store.close().await;
    let dir = scratch();
    let store = Store::open(&Location::File(dir.path().join("lab.db")))
        .await
        .expect("open");
    assert!(store.session_deadlines().await.expect("read").is_none());
    store.close().await;
}

/// What the unreadable-run tests damage: campaign u1's first run names a test no lab knows,
/// u2's only run has parameters that do not read.
const DAMAGE_RUNS: [&str; 2] = [
    "UPDATE runs SET test = 'no_such_test'
     WHERE position = 0 AND campaign_seq = (SELECT seq FROM campaigns WHERE id = 'u1')",
    "UPDATE runs SET params = '{\"block_size\": \"large\"}'
     WHERE position = 0 AND campaign_seq = (SELECT seq FROM campaigns WHERE id = 'u2')",
];

/// Queues u1 (two runs) and u2 (one run); the test then damages them ([`DAMAGE_RUNS`]).
async fn queue_runs_to_damage(store: &Store) {
    store
        .insert_campaign(&campaign("u1", "unknown test", 2), 1_000)
        .await
        .expect("insert");
    store
        .insert_campaign(&campaign("u2", "unreadable params", 1), 1_500)
        .await
        .expect("insert");
}

/// A run whose stored test or parameters do not read ends failed when it is claimed, the
/// claim saying why, and is never claimed again (not after its lease, not at a restart); the
/// runs beside it run.
async fn unreadable_runs_end_failed(store: &Store) {
    let refused = store
        .claim_next(HOST, 2_000, 12_000)
        .await
        .expect_err("u1's first run cannot be read");
    assert!(refused.to_string().contains("no_such_test"), "{refused}");
    let u1 = store.campaign("u1").await.expect("read").expect("u1");
    assert_eq!(
        (u1.runs_failed, u1.runs_finished, u1.status),
        (1, 1, RunState::Running),
        "it ended failed; u1's second run waits"
    );
    let readable = store
        .claim_next(HOST, 2_000, 12_000)
        .await
        .expect("claim")
        .expect("u1's second run");
    assert_eq!(
        (readable.campaign_id.as_str(), readable.position),
        ("u1", 1)
    );
    store
        .finish_run(held(&readable), &done(420.5), 3_000)
        .await
        .expect("finish");
    let refused = store
        .claim_next(HOST, 4_000, 14_000)
        .await
        .expect_err("u2's run cannot be read");
    assert!(refused.to_string().contains("parameters"), "{refused}");
    let u2 = store.campaign("u2").await.expect("read").expect("u2");
    assert_eq!((u2.runs_failed, u2.status), (1, RunState::Failed));
    // Past every lease, and at the host's next start: nothing is queued again.
    assert_eq!(
        store.requeue_lapsed(60_000).await.expect("sweep").requeued,
        0
    );
    assert_eq!(
        store.recover(HOST, 61_000).await.expect("recover").requeued,
        0
    );
    assert!(
        store
            .claim_next(HOST, 62_000, 72_000)
            .await
            .expect("claim")
            .is_none(),
        "an unreadable run was claimed again"
    );
    let u1 = store.campaign("u1").await.expect("read").expect("u1");
    assert_eq!(
        (u1.status, u1.runs_failed, u1.runs_done),
        (RunState::Failed, 1, 1)
    );
}

#[tokio::test]
async fn unreadable_runs_end_failed_on_sqlite() {
    let dir = scratch();
    let path = dir.path().join("lab.db");
    let store = Store::open(&Location::File(path.clone()))
        .await
        .expect("open");
    queue_runs_to_damage(&store).await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("the database, beside the store");
    for damage in DAMAGE_RUNS {
        sqlx::query(damage).execute(&pool).await.expect("damaged");
    }
    pool.close().await;
    unreadable_runs_end_failed(&store).await;
    store.close().await;
}

#[tokio::test]
async fn unreadable_runs_end_failed_on_postgres() {
    let cluster = Postgres::database();
    let store = Store::open(&Location::Postgres(cluster.url.clone()))
        .await
        .expect("open");
    queue_runs_to_damage(&store).await;
    let pool = sqlx::PgPool::connect(&cluster.url)
        .await
        .expect("the database, beside the store");
    for damage in DAMAGE_RUNS {
        sqlx::query(damage).execute(&pool).await.expect("damaged");
    }
    pool.close().await;
    unreadable_runs_end_failed(&store).await;
    store.close().await;
}

/// A campaign of `host` whose only run ended done at `now`, its end not taken: final in the
/// store, not judged.
async fn ended_unjudged(store: &Store, host: &str, now: i64) -> String {
    let id = backlab::ids::campaign_id();
    store
        .insert_campaign(&campaign_on(host, &id, "ended", 1), now)
        .await
        .expect("insert");
    let claimed = store
        .claim_next(host, now, now + 60_000)
        .await
        .expect("claim")
        .expect("a run");
    store
        .finish_run(held(&claimed), &done(420.5), now)
        .await
        .expect("finish");
    id
}

/// Judging at start leaves alone a campaign whose host is alive (its end may be under way
/// there, its survey still being taken); once that host has not been heard from for a lease,
/// the campaign is judged.
#[tokio::test]
async fn judging_at_start_leaves_a_live_hosts_campaign_to_it() {
    let (_cluster, a, b) = two_hosts().await;
    let now = backlab::clock::now_ms();
    let id = ended_unjudged(&a, "lab-a", now).await;
    // lab-a is alive and has surveyed the source; its judgement is still to come.
    a.register_host("lab-a", "{}", None, "", now)
        .await
        .expect("lab-a registers");
    a.set_survey(&id, &Survey::default()).await.expect("survey");
    let lab = lab_named(&b, "lab-b", std::time::Duration::from_secs(15));
    assert_eq!(lab.judge_stale().await, 0, "lab-a's campaign was judged");
    let record = b.campaign(&id).await.expect("read").expect("the campaign");
    assert!(record.headline.is_none());
    // lab-a falls silent for longer than a lease: nobody is ending the campaign any more.
    a.heartbeat("lab-a", now - 60_000, now - 45_000, &[])
        .await
        .expect("an old beat");
    assert_eq!(lab.judge_stale().await, 1);
    let record = b.campaign(&id).await.expect("read").expect("the campaign");
    assert!(record.headline.is_some(), "judged once lab-a is gone");
    a.close().await;
    b.close().await;
}

/// A host's heartbeat sweeps a dead host's lapsed run of a cancelled campaign, which ends
/// the campaign; the sweeping host shuts down before it takes that end. The next start of a
/// lab on the database takes it: the campaign is judged and its followers told.
#[tokio::test]
async fn an_end_left_by_a_sweeping_host_that_stopped_is_taken_at_the_next_start() {
    let (_cluster, a, b) = two_hosts().await;
    let now = backlab::clock::now_ms();
    let id = backlab::ids::campaign_id();
    a.insert_campaign(&campaign_on("lab-a", &id, "swept", 1), now - 30_000)
        .await
        .expect("insert");
    a.register_host("lab-a", "{}", None, "", now - 30_000)
        .await
        .expect("lab-a registers");
    a.claim_next("lab-a", now - 30_000, now - 20_000)
        .await
        .expect("claim")
        .expect("a run");
    b.cancel_campaign(&id, now - 25_000)
        .await
        .expect("cancel")
        .expect("the campaign");
    // lab-b's sweep ends the run and names the campaign; lab-b stops before ending it.
    let lapsed = b.requeue_lapsed(now).await.expect("sweep");
    assert_eq!(lapsed.cancelled_campaigns, vec![id.clone()]);
    let record = b.campaign(&id).await.expect("read").expect("the campaign");
    assert_eq!(record.status, CampaignStatus::Cancelled);
    assert!(record.headline.is_none() && record.survey.is_none());

    // lab-b starts again.
    let lab = lab_named(&b, "lab-b", std::time::Duration::from_secs(15));
    let mut events = lab.runs().subscribe();
    assert_eq!(lab.judge_stale().await, 1, "the end left behind is taken");
    let record = b.campaign(&id).await.expect("read").expect("the campaign");
    assert!(record.headline.is_some(), "its judgement is kept");
    let mut finished = None;
    while let Ok(envelope) = events.try_recv() {
        if let (true, LabEvent::CampaignFinished { status }) = (envelope.0 == id, &envelope.1) {
            finished = Some(*status);
        }
    }
    assert_eq!(finished, Some(CampaignStatus::Cancelled));
    a.close().await;
    b.close().await;
}

/// A lane handed a run that cannot be read ends it there: the run's followers hear it failed
/// and why, and its campaign ends failed.
#[tokio::test]
async fn a_lane_handed_an_unreadable_run_ends_it_and_its_campaign() {
    let dir = scratch();
    let path = dir.path().join("lab.db");
    let store = Store::open(&Location::File(path.clone()))
        .await
        .expect("open");
    let id = backlab::ids::campaign_id();
    store
        .insert_campaign(&campaign(&id, "unknown test", 1), 1_000)
        .await
        .expect("insert");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("the database, beside the store");
    sqlx::query(
        "UPDATE runs SET test = 'no_such_test'
         WHERE campaign_seq = (SELECT seq FROM campaigns WHERE id = $1)",
    )
    .bind(&id)
    .execute(&pool)
    .await
    .expect("damaged");
    pool.close().await;
    let lab = Arc::new(lab_over(&store));
    let mut events = lab.runs().subscribe();
    let lanes = backlab::lab::worker::spawn_lanes(&lab, 1);
    let (mut failed, mut finished) = (None, None);
    let heard = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while finished.is_none() {
            let envelope = events.recv().await.expect("the lab's events");
            match (&envelope.1, envelope.0 == id) {
                (LabEvent::RunFinished { status, error, .. }, true) => {
                    failed = Some((*status, error.clone()));
                }
                (LabEvent::CampaignFinished { status }, true) => finished = Some(*status),
                _ => {}
            }
        }
    })
    .await;
    assert!(
        heard.is_ok(),
        "the campaign's end was not heard: {failed:?}"
    );
    let (status, error) = failed.expect("the run's end was heard");
    assert_eq!(status, RunState::Failed);
    assert!(
        error
            .as_deref()
            .unwrap_or_default()
            .contains("no_such_test"),
        "{error:?}"
    );
    assert_eq!(finished, Some(CampaignStatus::Failed));
    let record = store
        .campaign(&id)
        .await
        .expect("read")
        .expect("the campaign");
    assert_eq!((record.status, record.runs_failed), (RunState::Failed, 1));
    lab.stop_all();
    for lane in lanes {
        lane.await.expect("the lane stops");
    }
    store.close().await;
}

/// Two lab hosts' stores on one fresh PostgreSQL database: its cluster (kept while the test
/// runs), and host a's and host b's store.
async fn two_hosts() -> (Postgres, Store, Store) {
    let cluster = Postgres::database();
    let location = Location::Postgres(cluster.url.clone());
    let a = Store::open(&location).await.expect("host a");
    let b = Store::open(&location).await.expect("host b");
    (cluster, a, b)
}
