//! Campaigns through the API: submit, follow live, read results back; cancel, delete, rerun,
//! list.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fixtures::{create_dataset, five_tests, lab_files};
use crate::support::lab::{Lab, LabOptions};
use crate::support::runs::five_tests_done;

#[tokio::test]
async fn five_tests_run_end_to_end_with_live_events_and_stored_results() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    let target = lab.empty_dir("out");
    create_dataset(&source, "24M");

    let response = lab
        .post_json("/api/campaigns", &five_tests(&source, &target))
        .await;
    assert_eq!(response.status(), 201);
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("Location header")
        .to_string();
    let created: Value = response.json().await.expect("JSON");
    let id = created["id"].as_str().expect("id").to_string();
    assert_eq!(location, format!("/api/campaigns/{id}"));
    assert_eq!(created["url"], format!("/campaigns/{id}"));
    assert_eq!(created["runs"], 5);
    assert!(id.len() >= 11 && id.bytes().all(|b| b.is_ascii_alphanumeric()));

    let events = lab.follow(&id, Duration::from_secs(120)).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"state"), "{names:?}");
    assert_eq!(names.last(), Some(&"campaign_finished"), "{names:?}");
    let finished: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "run_finished")
        .map(|(_, data)| data)
        .collect();
    // A subscriber may connect after the first run started: the state event covers what
    // happened before, the stream what happened after, and together they cover every run.
    let state = &events[0].1;
    let done_before = state["runs"]
        .as_array()
        .expect("state runs")
        .iter()
        .filter(|run| run["status"] == "done")
        .count();
    assert_eq!(state["runs_total"], 5);
    assert_eq!(done_before + finished.len(), 5, "{names:?}");
    assert!(
        finished.iter().all(|data| data["status"] == "done"),
        "{finished:?}"
    );
    let started = names.iter().filter(|name| **name == "run_started").count();
    assert!(started >= finished.len().saturating_sub(1), "{names:?}");
    assert_eq!(
        events.last().map(|(_, data)| &data["status"]),
        Some(&json!("done"))
    );

    // The stored campaign: every run done, with figures.
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    assert_eq!(campaign["status"], "done");
    assert_eq!(campaign["spec"]["name"], "five tests");
    let runs = five_tests_done(&campaign);
    for run in runs {
        assert_eq!(run["attempts"], 1);
        let result = &run["result"];
        assert!(result["bytes"].as_u64().unwrap_or(0) > 0, "{run}");
        assert!(result["mb_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
        assert!(result["samples"].is_array());
    }
    // Reads moved the whole dataset; the write moved the size limit.
    assert_eq!(runs[1]["result"]["bytes"], 24 << 20);
    assert_eq!(runs[0]["result"]["bytes"], 32 << 20);

    // The verdict: five rows, the same shape as `backlab run --json`. One row says Yes, unless
    // the verdict blames the device source and target share (all on one disk here, maybe),
    // which no single test isolates.
    let report = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let rows = report["bottleneck"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 5);
    let yes = rows.iter().filter(|row| row["bottleneck"] == true).count();
    if report["bottleneck"]["conclusive"] == false {
        // 32 MiB read once cannot give a steady figure: the verdict says which runs to redo.
        assert!(yes <= 1, "{report}");
        assert!(
            report["bottleneck"]["verdict"]
                .as_str()
                .is_some_and(|text| text.starts_with("Inconclusive")),
            "{report}"
        );
        assert!(rows.iter().all(|row| row["valid"] == false), "{report}");
    } else if report["bottleneck"]["component"] == "shared_device" {
        assert_eq!(yes, 0, "{report}");
    } else {
        assert_eq!(yes, 1, "{report}");
    }
    assert!(
        !report["bottleneck"]["verdict"]
            .as_str()
            .unwrap_or("")
            .is_empty()
    );
    assert_eq!(report["runs"].as_array().map(Vec::len), Some(5));
    assert_eq!(report["campaign"]["name"], "five tests");

    // The CSV: a header and one row per run, figures matching the JSON.
    let response = lab.get(&format!("/api/campaigns/{id}/results.csv")).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap_or("")
            .starts_with("text/csv")
    );
    let csv = response.text().await.expect("text");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 6, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for column in [
        "test",
        "status",
        "whole_run_mb_per_s",
        "steady_mb_per_s",
        "point_mb_per_s",
        "reader_wait_pct",
        "writer_waits",
        "latency_p99_us",
    ] {
        assert!(
            header.contains(&column),
            "missing column {column}: {header:?}"
        );
    }
    let mb_column = header
        .iter()
        .position(|c| *c == "whole_run_mb_per_s")
        .expect("whole_run_mb_per_s");
    for (line, run) in lines[1..].iter().zip(runs) {
        let cells: Vec<&str> = line.split(',').collect();
        let figure: f64 = cells[mb_column].parse().expect("number");
        assert_eq!(Some(figure), run["result"]["mb_per_s"].as_f64());
    }

    // A late subscriber gets the final state at once, then the end.
    let late = lab.follow(&id, Duration::from_secs(5)).await;
    let late_names: Vec<&str> = late.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(late_names, ["state", "campaign_finished"]);
    assert_eq!(late[0].1["runs_finished"], 5);

    assert!(lab_files(&target).is_empty(), "{:?}", lab_files(&target));
    let metrics = lab.get("/metrics").await.text().await.expect("text");
    assert!(
        metrics.contains("backlab_runs{status=\"done\"} 5"),
        "{metrics}"
    );
    assert!(metrics.contains("backlab_queue_depth 0"), "{metrics}");
}

/// A campaign whose first run writes for up to 30 s and whose second would follow.
fn long_campaign(target: &std::path::Path) -> Value {
    json!({
        "name": "long",
        "source": {"generated": {"size": "64G"}},
        "target": {"kind": "dir", "path": target},
        "tests": ["tape_write"],
        "repeat": 2,
        "params": {"buffers": 8, "block_size": "1M", "duration_s": 30, "fsync": false}
    })
}

/// Waits for the campaign's first `count` progress events and returns them.
async fn wait_for_progress(lab: &Lab, id: &str, count: usize) -> Vec<Value> {
    let mut events = lab.events(id).await;
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), async {
        while seen.len() < count {
            let (name, data) = events
                .next()
                .await
                .expect("the event stream breaks off")
                .expect("the event stream stays open");
            if name == "progress" {
                seen.push(data);
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {count} progress events within 30 s: {seen:?}"));
    seen
}

#[tokio::test]
async fn cancel_stops_the_running_run_within_a_second_and_drops_queued_runs() {
    let lab = Lab::fresh(&LabOptions::default());
    let target = lab.empty_dir("out");
    let id = lab.submit(&long_campaign(&target)).await;

    let progress = wait_for_progress(&lab, &id, 3).await;
    let bytes: Vec<u64> = progress
        .iter()
        .map(|p| p["bytes"].as_u64().unwrap_or(0))
        .collect();
    assert!(
        bytes.windows(2).all(|w| w[0] <= w[1]) && bytes[2] > 0,
        "{progress:?}"
    );
    assert!(
        progress
            .iter()
            .all(|p| p["percent"].as_f64().is_some_and(|v| v > 0.0 && v < 100.0))
    );
    assert!(progress.iter().all(|p| p["mb_per_s"].as_f64().is_some()));
    assert_eq!(lab_files(&target).len(), 1, "the run writes its file");

    let asked = Instant::now();
    let response = lab
        .post_json(&format!("/api/campaigns/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(response.status(), 202);
    let campaign = lab
        .wait_status(&id, &["cancelled"], Duration::from_secs(10))
        .await;
    let stopped_in = asked.elapsed();
    eprintln!("cancel: the campaign was cancelled {stopped_in:?} after the request");
    assert!(
        stopped_in < Duration::from_secs(3),
        "cancel took {stopped_in:?} (the run must stop within a second)"
    );
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs[0]["status"], "cancelled");
    assert!(runs[0]["result"]["bytes"].as_u64().unwrap_or(0) > 0);
    assert!(runs[0]["result"]["seconds"].as_f64().unwrap_or(99.0) < 29.0);
    assert_eq!(runs[1]["status"], "cancelled");
    assert_eq!(runs[1]["attempts"], 0, "the queued run never started");
    assert!(lab_files(&target).is_empty(), "{:?}", lab_files(&target));

    // The lab stays healthy and takes the next campaign.
    let health = lab.get_json("/healthz").await;
    assert_eq!(health["status"], "ok");
}

#[tokio::test]
async fn delete_is_refused_while_running_and_removes_everything_after() {
    let lab = Lab::fresh(&LabOptions::default());
    let target = lab.empty_dir("out");
    let id = lab.submit(&long_campaign(&target)).await;
    lab.wait_status(&id, &["running"], Duration::from_secs(20))
        .await;

    let response = lab
        .client
        .delete(lab.url(&format!("/api/campaigns/{id}")))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(response.status(), 409);
    let body: Value = response.json().await.expect("JSON");
    assert!(
        body["error"].as_str().unwrap_or("").contains("running"),
        "{body}"
    );

    lab.cancel(&id).await;
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(10))
        .await;
    let response = lab
        .client
        .delete(lab.url(&format!("/api/campaigns/{id}")))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(response.status(), 204);
    assert_eq!(lab.get(&format!("/api/campaigns/{id}")).await.status(), 404);
    assert_eq!(
        lab.get(&format!("/api/campaigns/{id}/results.csv"))
            .await
            .status(),
        404
    );
    let again = lab
        .client
        .delete(lab.url(&format!("/api/campaigns/{id}")))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(again.status(), 404);
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn list_pages_newest_first_filters_by_status_and_reruns_link_back() {
    let lab = Lab::fresh(&LabOptions::default());
    let quick = |name: &str| {
        json!({
            "name": name,
            "source": {"generated": {"size": "8M"}},
            "target": {"kind": "null"},
            "tests": ["null_sink"]
        })
    };
    let mut ids = Vec::new();
    for name in ["one", "two", "three"] {
        ids.push(lab.submit(&quick(name)).await);
    }
    for id in &ids {
        lab.wait_status(id, &["done"], Duration::from_secs(30))
            .await;
    }

    // The queue is first in, first out across campaigns.
    let mut started = Vec::new();
    for id in &ids {
        let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
        started.push(campaign["runs"][0]["started_ms"].as_i64().expect("started"));
    }
    assert!(started.windows(2).all(|w| w[0] <= w[1]), "{started:?}");

    let page = lab.get_json("/api/campaigns?limit=2").await;
    let names: Vec<&str> = page["campaigns"]
        .as_array()
        .expect("campaigns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["three", "two"]);
    let next = page["next_before"]
        .as_str()
        .expect("next_before")
        .to_string();
    let rest = lab
        .get_json(&format!("/api/campaigns?limit=2&before={next}"))
        .await;
    assert_eq!(rest["campaigns"].as_array().map(Vec::len), Some(1));
    assert_eq!(rest["campaigns"][0]["name"], "one");
    assert!(rest["next_before"].is_null());
    assert_eq!(
        rest["campaigns"][0]["best_mb_per_s"]
            .as_f64()
            .map(|v| v > 0.0),
        Some(true)
    );

    let done = lab.get_json("/api/campaigns?status=done").await;
    assert_eq!(done["campaigns"].as_array().map(Vec::len), Some(3));
    let queued = lab.get_json("/api/campaigns?status=queued").await;
    assert_eq!(queued["campaigns"].as_array().map(Vec::len), Some(0));
    for bad in [
        "status=finished",
        "limit=0",
        "limit=abc",
        "before=nosuchcampaign",
    ] {
        let response = lab.get(&format!("/api/campaigns?{bad}")).await;
        assert!(
            response.status().is_client_error(),
            "{bad}: {}",
            response.status()
        );
        let body: Value = response.json().await.expect("JSON error");
        assert!(body["error"].is_string(), "{bad}: {body}");
    }

    let response = lab
        .post_json(&format!("/api/campaigns/{}/rerun", ids[0]), &json!({}))
        .await;
    assert_eq!(response.status(), 201);
    let rerun: Value = response.json().await.expect("JSON");
    let rerun_id = rerun["id"].as_str().expect("id");
    assert_ne!(rerun_id, ids[0]);
    let campaign = lab
        .wait_status(rerun_id, &["done"], Duration::from_secs(30))
        .await;
    assert_eq!(campaign["rerun_of"], ids[0].as_str());
    assert_eq!(campaign["name"], "one");
    let first = lab.get_json(&format!("/api/campaigns/{}", ids[0])).await;
    assert_eq!(campaign["spec"], first["spec"]);
}

/// A campaign reads finished only once it is judged: read over and over while its last run
/// ends, its source is surveyed (64 MiB of files read for their reduction) and it is judged,
/// it never reads final without the headline its judgement brings, and once final its figure
/// is in its series and the list shows its verdict.
#[tokio::test]
async fn a_campaign_reads_finished_only_once_it_is_judged() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset(&source, "64M");
    let id = lab
        .submit(&json!({
            "name": "judged",
            "source": {"paths": [source]},
            "target": {"kind": "null"},
            "tests": ["read_single"],
            "params": {"size": "16M"}
        }))
        .await;
    let path = format!("/api/campaigns/{id}");
    let started = Instant::now();
    let (campaign, reads) = loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "campaign {id} not final in 120 s"
        );
        let campaign = lab.get_json(&path).await;
        let status = campaign["status"].as_str().unwrap_or_default().to_string();
        if ["done", "failed", "cancelled"].contains(&status.as_str()) {
            break (campaign, started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(campaign["status"], "done", "{campaign}");
    assert!(
        campaign["headline"].is_object(),
        "final before its judgement was kept (after {reads:?}): {campaign}"
    );
    let series = campaign["series"].as_str().expect("a series");
    let history = lab.get_json(&format!("/api/series/{series}")).await;
    let in_series: Vec<&str> = history["campaigns"]
        .as_array()
        .map(|campaigns| campaigns.iter().filter_map(|c| c["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(in_series, [id.as_str()], "{history}");
    let list = lab.get_json("/api/campaigns").await;
    assert_eq!(list["campaigns"][0]["id"], id.as_str(), "{list}");
    assert!(list["campaigns"][0]["headline"].is_object(), "{list}");
}
