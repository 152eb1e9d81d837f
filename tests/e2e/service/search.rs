//! An adaptive search over a matrix: seed 001's block-size sweep on the emulated striped
//! volume, submitted with `backlab submit --search adaptive`, finds a point of the plateau
//! with fewer runs than the sweep, says why it stopped and how sure it is, and marks the points
//! it skipped as unexplored; a search the spec cannot hold is refused by field.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli::{backlab, output, stderr, stdout};
use crate::support::lab::{Lab, LabOptions};
use crate::support::machine;
use crate::support::wait::wait_until;

/// Seed 001's example volume: ten 5 MB/s disks with 64 KiB stripe units behind three
/// controllers; a request fills every disk from 640 KiB on.
fn striped_sweep() -> Value {
    json!({
        "name": "striped search",
        "source": {"generated": {"size": "1G"}},
        "target": {"kind": "striped", "disks": 10, "disk_mb_s": 5, "stripe_unit": "64K",
                   "controllers": 3, "controller_mb_s": 20},
        "tests": ["tape_write"],
        "params": {"streams": 1, "buffers": 8, "duration_s": 5},
        "matrix": {"block_size": ["64K", "128K", "256K", "320K", "512K", "640K", "1280K", "2560K"]},
        "repeat": 3
    })
}

#[tokio::test]
async fn an_adaptive_search_finds_the_plateau_with_fewer_runs_and_says_how_sure_it_is() {
    // Which points are valid decides the best one: no deliberate load beside it.
    let _quiet = machine::quiet().await;
    let lab = Lab::fresh(&LabOptions::default());
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("striped.json");
    std::fs::write(&file, striped_sweep().to_string()).expect("the spec written");
    let out = output(
        backlab()
            .arg("submit")
            .arg(&file)
            .args(["--search", "adaptive", "--seed", "1", "--lab", &lab.base]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    let id = printed
        .split_whitespace()
        .nth(2)
        .map(|id| id.trim_end_matches(':').to_string())
        .unwrap_or_else(|| panic!("no campaign id in {printed}"));

    let campaign = lab
        .wait_status(
            &id,
            &["done", "failed", "cancelled"],
            Duration::from_secs(300),
        )
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let search = &campaign["search"];
    assert_eq!(search["points_total"], 8, "{search}");
    assert_eq!(search["full_runs"], 24, "{search}");
    let budget = search["budget_runs"].as_u64().unwrap_or(0);
    assert_eq!(budget, 9, "40 % of 24 runs, rounded down: {search}");
    let runs = campaign["runs"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(search["runs"], runs, "{search}");
    assert!(runs <= budget, "{runs} runs past its budget of {budget}");
    assert!(
        search["why"].is_string(),
        "it says why it stopped: {search}"
    );
    assert!(search["sureness"].is_string(), "{search}");
    // The plateau: from 640 KiB every disk is busy and the figure stops rising.
    let best = campaign["points"]
        .as_array()
        .expect("points")
        .iter()
        .find(|p| p["best"] == true)
        .unwrap_or_else(|| panic!("no best point: {campaign}"));
    let block = best["params"]["block_size"].as_u64().unwrap_or(0);
    assert!(
        block >= 640 << 10,
        "a point of the plateau: {best}\nevery point: {}",
        campaign["points"]
    );

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("id=\"search\""),
        "the report's search section"
    );
    // The expectation gives the likely runs and the budget's bound apart, against what the
    // search took.
    let expected = page
        .split("<span id=\"expected\">")
        .nth(1)
        .and_then(|rest| rest.split("</span>").next())
        .unwrap_or_else(|| panic!("no expected duration on the page"));
    assert!(
        expected
            .contains(" runs likely (an adaptive search; its budget allows 9): expected to take ")
            && expected.contains("; took "),
        "{expected}"
    );
    assert!(expected.ends_with(&format!(" ({runs} runs)")), "{expected}");
    assert!(
        page.contains("of the matrix&#39;s 8 points"),
        "points run of the matrix's"
    );
    let points_run = search["points_run"].as_u64().unwrap_or(0);
    let heatmap = lab
        .get_text(&format!("/campaigns/{id}/charts/heatmap.svg"))
        .await;
    if points_run < 8 {
        assert!(
            heatmap.contains("unexplored"),
            "skipped points marked unexplored"
        );
    }

    // What a search cannot do is named by field, all at once.
    let mut bad = striped_sweep();
    bad["repeat"] = json!(1);
    bad["matrix"]["search"] = json!({"strategy": "adaptive", "budget_runs": 500});
    let refused = lab.post_json("/api/campaigns", &bad).await;
    assert_eq!(refused.status().as_u16(), 422);
    let body: Value = refused.json().await.expect("JSON");
    assert!(body["fields"]["repeat"].is_string(), "{body}");
    assert!(
        body["fields"]["matrix.search.budget_runs"].is_string(),
        "{body}"
    );
}

/// A search cancelled part way chooses nothing more: its campaign reads cancelled, its report
/// says the search stopped because of the cancel, and no run is queued after it.
#[tokio::test]
async fn a_cancelled_search_chooses_nothing_more_and_says_so() {
    let lab = Lab::fresh(&LabOptions::default());
    let mut spec = striped_sweep();
    spec["params"]["duration_s"] = json!(2);
    spec["matrix"]["search"] = json!({"strategy": "adaptive", "seed": 3});
    let submitted = lab.post_json("/api/campaigns", &spec).await;
    assert_eq!(submitted.status().as_u16(), 201);
    let body: Value = submitted.json().await.expect("JSON");
    let id = body["id"].as_str().expect("an id").to_string();
    let path = format!("/api/campaigns/{id}");
    wait_until(
        "a first run of the search done and its next step queued",
        Duration::from_secs(120),
        Duration::from_millis(100),
        async || {
            // The next step is taken after a run is kept done: until it queues its runs, a
            // cancel would find nothing to take.
            let campaign = lab.get_json(&path).await;
            let runs = campaign["runs"].as_array().cloned().unwrap_or_default();
            let done = runs.iter().any(|run| run["status"] == "done");
            let to_come = runs
                .iter()
                .any(|run| run["status"] == "queued" || run["status"] == "running");
            if done && to_come {
                Ok(())
            } else {
                Err(campaign)
            }
        },
    )
    .await;
    // Opened before the cancel: the run the cancel stops ends, the search takes its last step
    // (it stops), and only then is the campaign's end taken and `campaign_finished` said, so
    // after it nothing of the campaign moves.
    let mut events = lab.events(&id).await;
    let cancelled = lab.post_json(&format!("{path}/cancel"), &json!({})).await;
    assert!(cancelled.status().is_success(), "{cancelled:?}");
    let finished = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some((name, _)) = events.next().await.expect("the event stream") {
            if name == "campaign_finished" {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(finished, Ok(true), "the campaign said it finished");
    let campaign = lab.get_json(&path).await;
    assert_eq!(campaign["status"], "cancelled", "{campaign}");
    let why = campaign["search"]["why"].as_str().unwrap_or_default();
    assert!(why.contains("cancelled"), "{}", campaign["search"]);
    // Runs are taken in their order; the cancel ended the one running and took the queued
    // ones. A step taken after it would have added runs behind them that it never saw.
    let statuses: Vec<&str> = campaign["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| run["status"].as_str().unwrap_or_default())
        .collect();
    let first_cancelled = statuses
        .iter()
        .position(|status| *status == "cancelled")
        .unwrap_or_else(|| panic!("no run cancelled: {campaign}"));
    assert!(
        statuses[first_cancelled..]
            .iter()
            .all(|status| *status == "cancelled"),
        "no step taken after the cancel: {statuses:?}"
    );
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("stopped: the campaign was cancelled"),
        "the report says why the search stopped"
    );
}
