//! A deduplicating target: a campaign backs up a tree made to dedup 3:1 into a real
//! content-addressed store under a directory, and restores from it; the store's figures reach
//! the result and the page, the verdict names where the store's time went, and nothing of it is
//! left afterwards.

use std::time::Duration;

use serde_json::json;

use crate::support::cli::{backlab, json as json_of, output, stderr, stdout};
use crate::support::csv_table::CsvTable;
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;

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
        // Time-based runs read a small source again, except into a dedup store, which takes
        // a tree once.
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "cold_cache": false,
                   "time_based": true, "duration_s": 8}
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
    assert_eq!(dedup["logical_bytes"], 256 << 20, "read once: {dedup}");
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

    // The target test wrote data that dedups as the source does, scanned at the store's
    // chunk size, and the store found it so.
    let target = &run("tape_write")["result"];
    let made = &target["generated_dedup"];
    let asked = made["asked"].as_f64().unwrap_or(0.0);
    assert!((asked - 3.0).abs() / 3.0 <= 0.05, "{made}");
    let stored = target["dedup"]["dedup_ratio"].as_f64().unwrap_or(0.0);
    assert!(
        (stored - asked).abs() / asked <= 0.1,
        "the target test's data dedups {stored}:1 in the store, the source {asked}:1"
    );

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

    // The survey, taken once the runs are done, estimated how the source reduces, reading
    // all of it.
    let reduction = wait_until(
        "the survey's estimate of the source's reduction",
        Duration::from_secs(120),
        Duration::from_millis(200),
        async || {
            let report = lab
                .get_json(&format!("/api/campaigns/{id}/bottleneck"))
                .await;
            let reduction = &report["survey"]["reduction"];
            if reduction.is_object() {
                Ok(reduction.clone())
            } else {
                Err(report.to_string())
            }
        },
    )
    .await;
    let surveyed = reduction["estimate"]["dedup_ratio"].as_f64().unwrap_or(0.0);
    assert!((surveyed - 3.0).abs() / 3.0 <= 0.05, "{reduction}");
    assert_eq!(reduction["complete"], true, "{reduction}");
    assert_eq!(reduction["scanned_bytes"], 256 << 20, "{reduction}");

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("dedup store"), "the page names the store");
    assert!(
        page.contains("Source reduces"),
        "the page gives the survey's estimate"
    );
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
/// A typical tree made to dedup 3:1, backed up by four streams into a dedup store: the
/// streams pack several files into a block, yet the store chunks each file apart, as restic and
/// borg do, so it keeps what a per-file chunker (`dataset scan`) finds at the same chunk size,
/// chunk for chunk, and the asked ratio holds.
#[test]
fn a_typical_tree_backed_up_by_streams_dedups_in_the_store_as_the_scan_reads_it() {
    let scratch = crate::support::fixtures::scratch();
    let tree = scratch.path().join("typical");
    let out = output(backlab().args(["dataset", "create"]).arg(&tree).args([
        "--profile",
        "typical",
        "--size",
        "256M",
        "--dedup-ratio",
        "3",
        "--seed",
        "1",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    for avg_chunk in ["16K", "64K"] {
        let out = output(
            backlab()
                .args(["dataset", "scan", "--json", "--avg-chunk", avg_chunk])
                .arg(&tree),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let scanned: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        let scanned = &scanned["reduction"];

        let store = scratch.path().join(format!("store-{avg_chunk}"));
        std::fs::create_dir(&store).expect("store dir");
        let spec = scratch.path().join(format!("spec-{avg_chunk}.json"));
        let written = serde_json::to_vec(&json!({
            "name": "typical into a dedup store",
            "source": {"paths": [tree]},
            "target": {"kind": "dedup", "path": store, "avg_chunk": avg_chunk},
            "tests": ["full_backup"],
            "params": {"buffers": 8, "block_size": "1M", "streams": 4, "cold_cache": false,
                       "time_based": false, "duration_s": 300}
        }))
        .expect("spec");
        std::fs::write(&spec, written).expect("spec file");
        let out = output(backlab().args(["run", "--json"]).arg(&spec));
        assert!(out.status.success(), "{}", stderr(&out));
        let run = &json_of(&out)["runs"][0];
        assert_eq!(run["status"], "done", "{run}");
        let dedup = &run["dedup"];
        assert_eq!(dedup["logical_bytes"], 256 << 20, "read once: {dedup}");
        let stored = dedup["dedup_ratio"].as_f64().unwrap_or(0.0);
        let read = scanned["dedup_ratio"].as_f64().unwrap_or(0.0);
        // The scan sampled every chunk of so small a tree: its figure is exact.
        assert_eq!(scanned["dedup_error"].as_f64(), Some(0.0), "{scanned}");
        assert_eq!(
            dedup["chunks"], scanned["chunks"],
            "{dedup} against {scanned}"
        );
        assert!(
            (stored - read).abs() <= 0.01,
            "{avg_chunk} chunks: the store kept {stored}:1, the per-file scan reads {read}:1"
        );
        // At the scan's default chunk (16K), the ratio asked; at 64K the 128K units' ends
        // cost a tenth of it, in the scan and the store alike.
        if avg_chunk == "16K" {
            assert!(
                (2.85..=3.15).contains(&stored),
                "asked 3:1, the store kept {stored}:1: {dedup}"
            );
        }
        let left: Vec<_> = std::fs::read_dir(&store).expect("store dir").collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

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
    refused_naming(
        &lab,
        &bad,
        &[
            "source.generated.dedup_ratio",
            "source.generated.dedup_unit",
        ],
    )
    .await;
}

/// Five nightly fulls of one dataset, each changing 5 % of it: the store takes the first
/// whole and of each later one only what changed, so generations 2–5 ingest faster than the
/// first and grow the store by about 5 % each; each run says which generation it sent and
/// how much of it changed, and the verdict rests on the last. What each later generation
/// writes is what changed; how much faster that makes its ingest and its writing is timed by
/// bench/generations.sh, as a loaded 2-core machine can swap one generation's times with
/// another's (the store's last fsync alone can take longer than writing the first whole).
#[tokio::test]
async fn five_generations_at_five_percent_grow_the_store_by_about_five_percent_each() {
    let lab = Lab::fresh(&LabOptions::default());
    let store_dir = lab.empty_dir("dedup");
    let spec = json!({
        "name": "a week of fulls",
        "source": {"generated": {"size": "512M", "compress_ratio": 2.0,
                                 "generations": 5, "change_rate": 0.05}},
        "target": {"kind": "dedup", "path": store_dir, "avg_chunk": "16K"},
        "tests": ["full_backup"],
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "duration_s": 120}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(600))
        .await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 5, "one full backup per generation: {campaign}");
    let mut first: Option<(u64, u64)> = None;
    for (index, run) in runs.iter().enumerate() {
        assert_eq!(run["status"], "done", "{run}");
        let result = &run["result"];
        let generation = index as u64 + 1;
        assert_eq!(result["params"]["generation"], generation, "{result}");
        let made = &result["generated_dedup"]["generation"];
        assert_eq!(made["generation"], generation, "{made}");
        assert_eq!(made["of"], 5, "{made}");
        let dedup = &result["dedup"];
        assert_eq!(dedup["logical_bytes"], 512 << 20, "{dedup}");
        let stored = dedup["stored_bytes"].as_u64().unwrap_or(0);
        let new_chunks = dedup["new_chunks"].as_u64().unwrap_or(0);
        match first {
            None => {
                assert_eq!(dedup["held_bytes"].as_u64().unwrap_or(0), 0, "{dedup}");
                first = Some((stored, new_chunks));
            }
            Some((first_stored, first_new_chunks)) => {
                let achieved = made["change_rate_achieved"].as_f64().unwrap_or(0.0);
                assert!((achieved - 0.05).abs() <= 0.005, "{made}");
                // The store grows by what changed, chunks straddling a change's ends included.
                let growth = stored as f64 / first_stored as f64;
                assert!(
                    (0.04..=0.065).contains(&growth),
                    "generation {generation} grew the store by {:.1} %: {dedup}",
                    growth * 100.0
                );
                assert!(
                    dedup["held_bytes"].as_u64().unwrap_or(0) >= first_stored,
                    "the store held the earlier generations: {dedup}"
                );
                // What it wrote is what changed: a twentieth of the first's new chunks, give
                // or take the chunks straddling a change's ends.
                assert!(
                    new_chunks * 10 < first_new_chunks,
                    "generation {generation} stored {new_chunks} new chunks, the first \
                     {first_new_chunks}: {dedup}"
                );
            }
        }
    }
    // The page names each generation; the verdict stands on the last.
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains(">Generation</th>"),
        "the page's table of points gives each point's generation"
    );
    let report = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let best: Vec<_> = report["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter(|point| point["best"] == true)
        .collect();
    assert_eq!(best.len(), 1, "{report}");
    assert_eq!(best[0]["params"]["generation"], 5, "{report}");
    // Each figure says what it measures: steady only when every run it rests on found its
    // steady state, and the page writes that beside the figure.
    for point in report["points"].as_array().expect("points") {
        let figure = &point["figure"];
        let all_steady = point["runs"].as_array().expect("runs").iter().all(|run| {
            let number = run["number"].as_u64().unwrap_or(0) as usize;
            runs[number - 1]["result"]["steady"]["steady"] == true
        });
        let (basis, word) = if all_steady {
            ("steady", "steady")
        } else {
            ("whole_run", "whole run")
        };
        assert_eq!(figure["basis"], basis, "{point}");
        let shown = format!("{:.1} {word}", figure["mb_per_s"].as_f64().unwrap_or(0.0));
        assert!(page.contains(&shown), "the page shows {shown}");
    }
    // The CSV tells the generations apart, with each one's store figures.
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    let table = CsvTable::parse(&csv);
    assert_eq!(table.rows.len(), runs.len(), "{csv}");
    let (generation, stored) = (
        table.column("generation"),
        table.column("dedup_stored_bytes"),
    );
    let basis = table.column("point_basis");
    for (cells, run) in table.rows.iter().zip(runs) {
        assert_eq!(
            cells[generation],
            run["result"]["params"]["generation"].to_string()
        );
        let point = report["points"]
            .as_array()
            .expect("points")
            .iter()
            .find(|point| point["params"]["generation"] == run["result"]["params"]["generation"])
            .expect("the run's point");
        assert_eq!(
            Some(cells[basis].as_str()),
            point["figure"]["basis"].as_str()
        );
        assert_eq!(
            cells[stored],
            run["result"]["dedup"]["stored_bytes"].to_string()
        );
    }
    let left: Vec<_> = std::fs::read_dir(&store_dir)
        .expect("the target directory")
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // A change rate without generations, or out of range, is refused by field.
    let bad = json!({
        "name": "bad",
        "source": {"generated": {"size": "16M", "change_rate": 1.5, "generations": 31}},
        "target": {"kind": "null"},
        "tests": ["full_backup"]
    });
    refused_naming(
        &lab,
        &bad,
        &[
            "source.generated.change_rate",
            "source.generated.generations",
        ],
    )
    .await;
}

/// A lab that limits every run to 5 s (`--max-duration 5`) holds a campaign of generations into
/// a dedup store to it: the earlier generations the store takes in before each run's timed
/// window (8 GiB before the third) count against the run's duration, so every run ends within
/// it, plus the store's last flush; a run that could not take them in says so.
#[tokio::test]
async fn generations_into_a_dedup_store_end_within_the_labs_longest_run() {
    let lab = Lab::fresh(&LabOptions {
        extra: vec!["--max-duration".into(), "5".into()],
        ..LabOptions::default()
    });
    let store_dir = lab.empty_dir("dedup");
    let spec = json!({
        "name": "nights under a cap",
        "source": {"generated": {"size": "4G", "compress_ratio": 2.0,
                                 "generations": 3, "change_rate": 0.05}},
        "target": {"kind": "dedup", "path": store_dir, "avg_chunk": "64K"},
        "tests": ["full_backup"],
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "fsync": false,
                   "duration_s": 5}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3, "{campaign}");
    for run in runs {
        let started = run["started_ms"].as_i64().expect("started");
        let finished = run["finished_ms"].as_i64().expect("finished");
        let took_ms = finished - started;
        eprintln!(
            "generation {}: {took_ms} ms, {}",
            run["result"]["params"]["generation"], run["status"]
        );
        assert!(took_ms <= 8_000, "a run of 5 s took {took_ms} ms: {run}");
        if run["status"] != "done" {
            assert_eq!(run["status"], "failed", "{run}");
            let error = run["result"]["error"].as_str().unwrap_or("");
            assert!(error.contains("earlier generations"), "{run}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(&store_dir)
        .expect("the target directory")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Generated data that dedups 3:1, sent into a dedup store on a tmpfs of the lab's own: the
/// store writes little to a disk that costs little, so hashing (cutting and naming chunks) is
/// its work, and the verdict names it as the limit, typed and in words.
#[tokio::test]
async fn a_store_on_a_tmpfs_is_limited_by_its_hashing_and_the_verdict_says_so() {
    let root = crate::support::fixtures::scratch();
    // The lab's database lives on a tmpfs of its own mount namespace; the store goes beside it.
    let tmpfs = root.path().join("dbfs");
    let lab = Lab::start(
        root.path(),
        &LabOptions {
            db_tmpfs_mib: Some(3072),
            extra: vec!["--allow-target".into(), tmpfs.display().to_string()],
            ..LabOptions::default()
        },
    );
    let spec = json!({
        "name": "hashing bound",
        "source": {"generated": {"size": "64G", "compress_ratio": 2.0, "dedup_ratio": 3.0}},
        "target": {"kind": "dedup", "path": tmpfs, "avg_chunk": "16K"},
        "tests": ["tape_write", "null_sink", "full_backup"],
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "time_based": true,
                   "duration_s": 6}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    for run in campaign["runs"].as_array().expect("runs") {
        assert_eq!(run["status"], "done", "{run}");
    }
    let report = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let bottleneck = &report["bottleneck"];
    assert_eq!(bottleneck["component"], "target", "{report}");
    let limit = &bottleneck["dedup_limit"];
    assert_eq!(limit["work"], "hashing", "{report}");
    assert!(limit["share_pct"].as_f64().unwrap_or(0.0) > 50.0, "{limit}");
    let verdict = bottleneck["verdict"].as_str().unwrap_or_default();
    assert!(
        verdict.contains("dedup store") && verdict.contains(": hashing (cutting chunks"),
        "{verdict}"
    );
}

/// Submits `spec` and checks it is refused (422) with an error on each of `fields`.
async fn refused_naming(lab: &Lab, spec: &serde_json::Value, fields: &[&str]) {
    let response = lab.post_json("/api/campaigns", spec).await;
    assert_eq!(response.status().as_u16(), 422);
    let body: serde_json::Value = response.json().await.expect("JSON");
    for field in fields {
        assert!(body["fields"][field].is_string(), "{field}: {body}");
    }
}
