//! Restart safety: a crash (SIGKILL) mid-run loses nothing and runs nothing twice; a shutdown
//! (SIGTERM) interrupts the run cleanly and the next start picks it up.

use std::time::Duration;

use rustix::process::Signal;
use serde_json::json;

use crate::support::fixtures::{create_dataset, lab_files, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::runs::five_tests_done;

/// Waits until the campaign's first run has reported progress at least twice.
async fn wait_until_writing(lab: &Lab, id: &str) {
    lab.wait_campaign(
        id,
        "the first run to get going",
        Duration::from_secs(30),
        |campaign| {
            let samples = campaign["runs"][0]["samples"]
                .as_array()
                .map_or(0, Vec::len);
            campaign["runs"][0]["status"] == "running" && samples >= 2
        },
    )
    .await;
}

#[tokio::test]
async fn a_crash_mid_run_loses_nothing_and_runs_nothing_twice() {
    let root = scratch();
    let mut lab = Lab::start(root.path(), &LabOptions::default());
    let source = lab.data_dir.join("src");
    let target = lab.empty_dir("out");
    create_dataset(&source, "16M");
    let spec = json!({
        "name": "crash",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "params": {"buffers": 8, "block_size": "1M", "size": "16G", "duration_s": 3, "fsync": false}
    });
    let id = lab.submit(&spec).await;
    wait_until_writing(&lab, &id).await;
    assert_eq!(
        lab_files(&target).len(),
        1,
        "the first run is writing its file"
    );

    lab.signal(Signal::KILL);
    let (_, status) = lab.wait_exit(Duration::from_secs(5)).await;
    assert!(!status.success());
    assert_eq!(
        lab_files(&target).len(),
        1,
        "a killed lab cannot clean up after itself"
    );
    drop(lab);

    let lab = Lab::start(root.path(), &LabOptions::default());
    let campaign = lab
        .wait_status(&id, &["done"], Duration::from_secs(120))
        .await;
    assert!(lab.log().contains("queued again"), "{}", lab.log());
    assert!(
        lab.log()
            .contains("removed files left by an interrupted run"),
        "{}",
        lab.log()
    );
    let runs = five_tests_done(&campaign);
    let positions: Vec<i64> = runs
        .iter()
        .map(|r| r["position"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(positions, [0, 1, 2, 3, 4]);
    assert_eq!(runs[0]["attempts"], 2, "the interrupted run ran again");
    assert!(runs[1..].iter().all(|run| run["attempts"] == 1));
    // The repeated run's figures are its own whole run, not the killed one's.
    let first = &runs[0]["result"];
    assert!(first["seconds"].as_f64().unwrap_or(0.0) >= 2.5, "{first}");
    let samples = first["samples"].as_array().expect("samples");
    assert!(
        samples
            .windows(2)
            .all(|w| w[0]["t"].as_f64() < w[1]["t"].as_f64())
    );

    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    assert_eq!(csv.lines().count(), 6, "{csv}");
    assert!(lab_files(&target).is_empty(), "{:?}", lab_files(&target));
}

#[tokio::test]
async fn sigterm_interrupts_the_run_ends_streams_and_the_next_start_resumes() {
    let root = scratch();
    let mut lab = Lab::start(root.path(), &LabOptions::default());
    let target = lab.empty_dir("out");
    let spec = json!({
        "source": {"generated": {"size": "64G"}},
        "target": {"kind": "dir", "path": target},
        "tests": ["tape_write"],
        "params": {"buffers": 8, "block_size": "1M", "duration_s": 30, "fsync": false}
    });
    let id = lab.submit(&spec).await;
    wait_until_writing(&lab, &id).await;
    let mut events = lab.events(&id).await;
    let first = events.next().await.expect("the stream starts");
    assert!(first.is_some(), "the stream starts");

    lab.signal(Signal::TERM);
    let (took, status) = lab.wait_exit(Duration::from_secs(10)).await;
    assert!(status.success(), "clean exit: {status:?}\n{}", lab.log());
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    // It ends, or breaks off, with the lab.
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Ok(Some(_)) = events.next().await {}
    })
    .await;
    assert!(ended.is_ok(), "the event stream ends with the lab");
    assert!(lab_files(&target).is_empty(), "{:?}", lab_files(&target));
    assert!(lab.log().contains("interrupted"), "{}", lab.log());
    drop(lab);

    let lab = Lab::start(root.path(), &LabOptions::default());
    let campaign = lab
        .wait_status(&id, &["running"], Duration::from_secs(20))
        .await;
    assert_eq!(campaign["runs"][0]["attempts"], 2, "{campaign}");
    lab.cancel(&id).await;
    let campaign = lab
        .wait_status(&id, &["cancelled"], Duration::from_secs(10))
        .await;
    assert_eq!(campaign["runs"][0]["status"], "cancelled");
    assert!(lab_files(&target).is_empty());
}

/// SIGTERM the moment the lab says it listens, again and again: every time it stops cleanly
/// (exit 0). Its handlers are in place before it announces itself, so the signal is never the
/// default one that kills it.
#[tokio::test]
async fn a_sigterm_the_moment_the_lab_is_up_stops_it_cleanly() {
    for _ in 0..5 {
        let root = scratch();
        let mut lab = Lab::start(root.path(), &LabOptions::default());
        lab.signal(Signal::TERM);
        let (_, exit) = lab.wait_exit(Duration::from_secs(30)).await;
        assert!(exit.success(), "{exit:?}");
    }
}
