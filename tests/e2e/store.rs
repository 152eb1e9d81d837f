//! The store's operations, the same on a SQLite file and on a real PostgreSQL (a throwaway
//! cluster per test): a campaign's life from submission to deletion, the list and its filters,
//! the previous campaign of a spec, recovery after a crash, the figures for `/metrics`; and on
//! PostgreSQL, two stores (two lab hosts) claiming from one queue at once never take a run twice.

use std::collections::HashSet;

use backlab::engine::result::{RunResult, RunStatus, Sample};
use backlab::spec::{RunParams, TestKind};
use backlab::store::{
    Backend, CancelOutcome, DeleteOutcome, Location, Neighbour, NewCampaign, RunState, Store,
};

use crate::support::fixtures::scratch;
use crate::support::postgres::Postgres;

fn params() -> RunParams {
    RunParams {
        buffers: 8,
        block_size: 256 << 10,
        streams: 2,
        direct: false,
        cold_cache: false,
        fsync: true,
        compress_ratio: 2.0,
        match_source: false,
        size: Some(64 << 20),
        duration_s: None,
        time_based: false,
        until_steady: false,
        source_rate_mb_s: None,
        clients: None,
        link_mb_s: None,
    }
}

fn campaign(id: &str, name: &str, runs: usize) -> NewCampaign {
    NewCampaign {
        id: id.to_string(),
        name: name.to_string(),
        spec_json: format!(r#"{{"name":"{name}","source":{{"generated":"64M"}}}}"#),
        placement_json: "{}".to_string(),
        rerun_of: None,
        runs: (0..runs).map(|_| (TestKind::NullSink, params())).collect(),
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
        .claim_next(3_000)
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
    store
        .add_sample(
            claimed.run_id,
            Sample {
                t: 0.25,
                mb_per_s: 1.0,
            },
        )
        .await
        .expect("sample");
    store
        .add_sample(
            claimed.run_id,
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
        .finish_run(claimed.run_id, &done(420.5), 4_000)
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
    again.spec_json = r#"{"name":"first, again","source":{"generated":"64M"}}"#.to_string();
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
        .claim_next(6_000)
        .await
        .expect("claim")
        .expect("a run");
    store
        .add_sample(
            crashed.run_id,
            Sample {
                t: 0.25,
                mb_per_s: 9.0,
            },
        )
        .await
        .expect("sample");
    let recovery = store.recover().await.expect("recover");
    assert_eq!(recovery.requeued, 1);
    assert_eq!(recovery.spec_jsons.len(), 1);
    let again = store
        .claim_next(7_000)
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
    store.interrupt_run(again.run_id).await.expect("interrupt");
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

    store
        .set_verdict("c2", "Target-bound.", "{}")
        .await
        .expect("verdict");
    store.set_survey("c2", "{}").await.expect("survey");
    let second = store.campaign("c2").await.expect("read").expect("c2");
    assert_eq!(second.verdict.as_deref(), Some("Target-bound."));
    assert_eq!(second.survey_json.as_deref(), Some("{}"));
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
    let cluster = Postgres::start();
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
    let cluster = Postgres::start();
    let location = Location::Postgres(cluster.url.clone());
    let hosts = [
        Store::open(&location).await.expect("host a"),
        Store::open(&location).await.expect("host b"),
    ];
    for index in 0..6 {
        hosts[0]
            .insert_campaign(&campaign(&format!("c{index}"), "load", RUNS / 6), 1_000)
            .await
            .expect("insert");
    }
    // Four claimers on each host, as fast as they can.
    let mut claimers = Vec::new();
    for claimer in 0..8 {
        let store = hosts[claimer % 2].clone();
        claimers.push(tokio::spawn(async move {
            let mut claimed = Vec::new();
            while let Some(run) = store.claim_next(2_000).await.expect("claim") {
                claimed.push(run.run_id);
            }
            claimed
        }));
    }
    let mut all = Vec::new();
    for claimer in claimers {
        all.extend(claimer.await.expect("claimer"));
    }
    let unique: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "a run was claimed twice");
    assert_eq!(all.len(), RUNS, "every run claimed once");
    for host in hosts {
        host.close().await;
    }
}
