//! A deduplicating target: a campaign backs up a tree made to dedup 3:1 into a real
//! content-addressed store under a directory, and restores from it; the store's figures reach
//! the result and the page, the verdict names where the store's time went, and nothing of it is
//! left afterwards.

use std::time::Duration;

use serde_json::json;

use crate::support::cli::{backlab, output, stderr};
use crate::support::lab::{Lab, LabOptions};

#[tokio::test]
async fn a_backup_into_a_dedup_store_keeps_a_third_and_restores_through_it() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("reducing");
    let out = output(backlab().args(["dataset", "create"]).arg(&source).args([
        "--profile",
        "large-files",
        "--size",
        "256M",
        "--dedup-ratio",
        "3",
        "--compress-ratio",
        "2",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let store_dir = lab.empty_dir("dedup");
    let spec = json!({
        "name": "dedup",
        "source": {"paths": [source]},
        "target": {"kind": "dedup", "path": store_dir, "avg_chunk": "16K"},
        "tests": ["tape_write", "read_parallel", "null_sink", "full_backup", "restore"],
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "time_based": false,
                   "duration_s": 60, "cold_cache": false}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    let runs = campaign["runs"].as_array().expect("runs");
    let run = |test: &str| {
        runs.iter()
            .find(|run| run["test"] == test)
            .unwrap_or_else(|| panic!("a {test} run: {campaign}"))
    };
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
    }
    let full = &run("full_backup")["result"];
    let dedup = &full["dedup"];
    assert_eq!(dedup["logical_bytes"], 256 << 20, "{dedup}");
    let ratio = dedup["dedup_ratio"].as_f64().unwrap_or(0.0);
    assert!(
        (ratio - 3.0).abs() / 3.0 <= 0.05,
        "asked 3:1, stored {ratio}:1: {dedup}"
    );
    let stored = dedup["stored_bytes"].as_u64().unwrap_or(0);
    assert!(stored > 0 && stored < (256 << 20) / 2, "{dedup}");
    assert!(
        dedup["physical_mb_s"].as_f64().unwrap_or(0.0) > 0.0,
        "{dedup}"
    );
    for stage in ["chunking_s", "hashing_s", "index_s", "writing_s"] {
        assert!(
            dedup[stage].as_f64().unwrap_or(-1.0) >= 0.0,
            "{stage}: {dedup}"
        );
    }
    assert!(dedup["hashing_s"].as_f64().unwrap_or(0.0) > 0.0, "{dedup}");

    // The restore read its image back through the store's index, chunk by chunk.
    let restore = &run("restore")["result"];
    assert!(restore["bytes"].as_u64().unwrap_or(0) > 0, "{restore}");
    assert!(
        restore["restore"]["from"]
            .as_str()
            .unwrap_or_default()
            .starts_with("dedup store"),
        "{restore}"
    );

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("dedup store"), "the page names the store");
    assert!(page.contains(" stored ("), "the page gives what was stored");
    let report = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let bottleneck = &report["bottleneck"];
    let verdict = bottleneck["verdict"].as_str().unwrap_or_default();
    assert!(!verdict.is_empty(), "{report}");
    if bottleneck["component"] == "target" {
        assert!(
            verdict.contains("dedup store") && verdict.contains("% of its time"),
            "a target verdict names the store and its busiest stage: {verdict}"
        );
    }

    // Nothing of the store is left.
    let left: Vec<_> = std::fs::read_dir(&store_dir)
        .expect("the target directory")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Generated data asked for 3:1 dedup and 2:1 compression: its units achieve the ratio as
/// they are made, and the dedup store finds it within 5 %, for the target write and the full
/// backup alike.
#[tokio::test]
async fn generated_data_of_a_chosen_dedup_ratio_dedups_by_it_in_the_store() {
    let lab = Lab::fresh(&LabOptions::default());
    let store_dir = lab.empty_dir("dedup");
    let spec = json!({
        "name": "generated dedup",
        "source": {"generated": {"size": "256M", "compress_ratio": 2.0, "dedup_ratio": 3.0}},
        "target": {"kind": "dedup", "path": store_dir, "avg_chunk": "16K"},
        "tests": ["tape_write", "full_backup"],
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "time_based": false,
                   "duration_s": 60}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    for run in campaign["runs"].as_array().expect("runs") {
        assert_eq!(run["status"], "done", "{run}");
        let result = &run["result"];
        let made = &result["generated_dedup"];
        let achieved = made["achieved"].as_f64().unwrap_or(0.0);
        assert!((achieved - 3.0).abs() / 3.0 <= 0.05, "{made}");
        assert_eq!(made["unit"], 128 << 10, "{made}");
        let stored = result["dedup"]["dedup_ratio"].as_f64().unwrap_or(0.0);
        assert!(
            (stored - 3.0).abs() / 3.0 <= 0.05,
            "{}: asked 3:1, stored {stored}:1: {}",
            result["test"],
            result["dedup"]
        );
    }
    // A ratio without a unit it can use is refused, naming the field.
    let bad = json!({
        "name": "bad",
        "source": {"generated": {"size": "16M", "dedup_ratio": 0.5, "dedup_unit": "5000"}},
        "target": {"kind": "null"},
        "tests": ["tape_write"]
    });
    let response = lab.post_json("/api/campaigns", &bad).await;
    assert_eq!(response.status().as_u16(), 422);
    let body: serde_json::Value = response.json().await.expect("JSON");
    for field in [
        "source.generated.dedup_ratio",
        "source.generated.dedup_unit",
    ] {
        assert!(body["fields"][field].is_string(), "{field}: {body}");
    }
}
