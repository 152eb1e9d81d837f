//! `backlab run` on real datasets: the five tests, the table, the page-cache warning, a matrix.

use crate::support::cli::{backlab, json, output, stderr};
use crate::support::fixtures::{create_dataset_with, entries, scratch};
use crate::support::runs::five_tests_done;

#[test]
fn five_tests_on_a_dataset_name_a_bottleneck_and_leave_nothing_behind() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let target = scratch.path().join("target");
    std::fs::create_dir(&target).expect("target dir");
    create_dataset_with(&source, "typical", "64M", 11);

    let out = output(
        backlab()
            .args(["run", "--json", "--source"])
            .arg(&source)
            .arg("--target")
            .arg(&target)
            .args(["--size", "32M", "--block-size", "128K", "--buffers", "16"]),
    );
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    let result = json(&out);
    let runs = five_tests_done(&result);
    for run in runs {
        assert!(run["mb_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
        assert_eq!(run["bytes"], 32 << 20, "the size limit is exact: {run}");
        assert!(run["seconds"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
        for field in [
            "reader_busy_pct",
            "reader_wait_pct",
            "reader_waits",
            "writer_busy_pct",
        ] {
            assert!(
                run["stages"][field].is_number(),
                "stages.{field} missing: {run}"
            );
        }
        assert!(run["latency_us"]["p99"].as_u64().is_some(), "{run}");
        assert!(run["cpu"]["system_pct"].is_number(), "{run}");
    }
    for run in &runs[1..] {
        assert!(
            run["files"].as_u64().unwrap_or(0) > 0,
            "reads count files: {run}"
        );
        assert!(run["cache_resident_pct"].is_number(), "{run}");
    }
    // The pipeline tests account their writers; the read tests have none.
    assert!(runs[4]["stages"]["writer_busy_pct"].as_f64().unwrap_or(0.0) > 0.0);
    assert_eq!(runs[1]["stages"]["writer_waits"], 0);

    let verdict = &result["bottleneck"];
    let component = verdict["component"].as_str().expect("a component is named");
    assert!(
        ["target", "source", "pipeline", "shared_device"].contains(&component),
        "{verdict}"
    );
    assert_eq!(verdict["rows"].as_array().map(Vec::len), Some(5));
    assert!(verdict["verdict"].as_str().unwrap_or("").len() > 20);
    assert!(verdict["backup_window_s"].as_f64().unwrap_or(0.0) > 0.0);
    assert_eq!(
        result["campaign"]["spec"]["source"]["paths"][0],
        source.to_string_lossy().as_ref()
    );

    assert!(
        entries(&target).is_empty(),
        "lab files left: {:?}",
        entries(&target)
    );
}

#[test]
fn the_table_shows_every_row_and_the_verdict() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    create_dataset_with(&source, "small-files", "8M", 2);
    let out = output(
        backlab()
            .args(["run", "--source"])
            .arg(&source)
            .args([
                "--target",
                "null",
                "--tests",
                "tape_write,read_parallel,null_sink,full_backup",
            ])
            .args(["--size", "8M"]),
    );
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("Test") && lines[0].contains("Bottleneck? Valid?"),
        "{table}"
    );
    assert!(lines[1].starts_with("Target write"), "{table}");
    assert!(
        lines[4].starts_with("Full backup, parallel") && lines[4].contains("%  –  "),
        "{table}"
    );
    // 8 MB read once cannot give a steady figure: every row says why, and the verdict says
    // it is inconclusive rather than naming a bottleneck.
    assert!(
        lines[1..5]
            .iter()
            .all(|line| line.contains("0 of 1 valid: ") && line.contains("data_smaller_than_run")),
        "{table}"
    );
    assert!(
        lines[1..4].iter().all(|line| !line.contains("Yes")),
        "{table}"
    );
    assert!(lines[5].starts_with("Verdict: Inconclusive"), "{table}");
    assert!(table.contains("--time-based"), "{table}");
}

#[test]
fn a_read_of_a_fresh_dataset_warns_unless_the_cache_is_evicted() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    create_dataset_with(&source, "typical", "32M", 5);
    // What is resident is measured, and warned about, before the read begins: two seconds of
    // reading show it as well as a run that goes on until steady.
    let read = |cold: &str| {
        let out = output(
            backlab()
                .args([
                    "run",
                    "--json",
                    "--target",
                    "null",
                    "--tests",
                    "read_single",
                    "--duration",
                    "2",
                    "--source",
                ])
                .arg(&source)
                .arg(format!("--cold-cache={cold}")),
        );
        assert!(out.status.success(), "run failed: {}", stderr(&out));
        json(&out)["runs"][0].clone()
    };
    let warm = read("false");
    let warnings = warm["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("page cache")),
        "no page-cache warning: {warm}"
    );
    assert!(
        warm["cache_resident_pct"].as_f64().unwrap_or(0.0) > 50.0,
        "{warm}"
    );

    let cold = read("true");
    assert_eq!(cold["warnings"].as_array().map(Vec::len), Some(0), "{cold}");
    assert!(
        cold["cache_resident_pct"].as_f64().unwrap_or(100.0) < 10.0,
        "{cold}"
    );
}

#[test]
fn a_matrix_expands_into_every_combination() {
    let scratch = scratch();
    let spec = scratch.path().join("spec.json");
    std::fs::write(
        &spec,
        r#"{"name": "matrix", "source": {"generated": {"size": "4M", "compress_ratio": 1.0}},
            "target": {"kind": "null"}, "tests": ["tape_write", "null_sink"],
            "matrix": {"buffers": [2, 8], "block_size": ["64K", "1M"]}, "repeat": 2}"#,
    )
    .expect("spec");
    let out = output(backlab().args(["run", "--json"]).arg(&spec));
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    let result = json(&out);
    let runs = result["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2 * 2 * 2 * 2);
    assert!(runs.iter().all(|run| run["bytes"] == 4 << 20));
    // 4 MiB from memory takes milliseconds; a run that lasts its 60 s duration limit has
    // stalled (more streams than buffers once starved each other).
    assert!(
        runs.iter()
            .all(|run| run["seconds"].as_f64().unwrap_or(60.0) < 30.0),
        "{result}"
    );
    assert!(
        runs.iter()
            .any(|run| run["params"]["buffers"] == 2 && run["params"]["block_size"] == 1 << 20)
    );
    assert_eq!(result["campaign"]["name"], "matrix");
}
