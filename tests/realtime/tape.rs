//! Emulated LTO drives in real time, through `backlab run`: rates, several drives, shoe-shining
//! behind a slow feed, and the end of a cartridge. Data is kept small: seconds per test.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Turn, backlab, scratch};

/// Runs a spec with `backlab run --json` and returns the report.
fn run(turn: &Turn, spec: &Value) -> Value {
    let dir = scratch();
    let path = dir.path().join("spec.json");
    std::fs::write(&path, spec.to_string()).expect("write spec");
    crate::support::run(turn, &path, &[])
}

fn run_of<'a>(report: &'a Value, test: &str) -> &'a Value {
    report["runs"]
        .as_array()
        .and_then(|runs| runs.iter().find(|run| run["test"] == test))
        .unwrap_or_else(|| panic!("no {test} run in {report}"))
}

fn within(value: f64, expected: f64, pct: f64) -> bool {
    (value - expected).abs() <= expected * pct / 100.0
}

#[test]
fn one_lto3_writes_80_mb_s_native_and_160_at_two_to_one() {
    let turn = Turn::shared();
    for (ratio, size, expected) in [(1.0, "160M", 80.0), (2.0, "320M", 160.0)] {
        let report = run(
            &turn,
            &json!({
                "source": {"generated": {"size": size, "compress_ratio": ratio}},
                "target": {"kind": "tape", "model": "lto-3"},
                "tests": ["tape_write"],
                "params": {"block_size": "256K"}
            }),
        );
        let write = run_of(&report, "tape_write");
        assert_eq!(write["status"], "done", "{write}");
        let tape = &write["tape"];
        // The drive takes host data at its native speed times the compression it measured
        // (1.98:1 for data generated at 2:1).
        let compression = tape["compression"].as_f64().expect("compression");
        let pace = 80.0 * compression;
        let rate = write["mb_per_s"].as_f64().expect("rate");
        assert!(
            within(rate, pace, 5.0) && within(pace, expected, 2.0),
            "{ratio}:1 gave {rate} MB/s, not {pace} (80 MB/s x {compression}:1) ± 5%"
        );
        assert_eq!(tape["emulated"], true);
        assert_eq!(tape["model"], "LTO-3");
        assert_eq!(tape["backhitches"], 0, "a fast feed keeps it streaming");
        assert!(
            within(compression, ratio, 5.0),
            "measured {compression}:1 for {ratio}:1 data"
        );
        assert!(
            within(tape["tape_mb_s"].as_f64().unwrap_or(0.0), 80.0, 2.0),
            "{tape}"
        );
        let label = report["bottleneck"]["rows"][0]["label"]
            .as_str()
            .unwrap_or("");
        assert!(label.contains("emulated LTO-3"), "{label}");
    }
}

#[test]
fn two_lto4_drives_behind_eight_streams_take_480_mb_s_and_are_named() {
    let turn = Turn::shared();
    let report = run(
        &turn,
        &json!({
            "source": {"generated": {"size": "960M", "compress_ratio": 2.0}},
            "target": {"kind": "tape", "model": "lto-4", "drives": 2},
            "tests": ["tape_write", "null_sink", "full_backup"],
            "params": {"streams": 8, "buffers": 32, "block_size": "256K"}
        }),
    );
    let full = run_of(&report, "full_backup");
    let compression = full["tape"]["compression"].as_f64().expect("compression");
    let pace = 2.0 * 120.0 * compression;
    let rate = full["mb_per_s"].as_f64().expect("rate");
    assert!(
        within(rate, pace, 7.0) && within(pace, 480.0, 2.0),
        "full backup {rate} MB/s, not {pace} (2 x 120 MB/s x {compression}:1) ± 7%"
    );
    assert_eq!(full["tape"]["drives"], 2);
    let verdict = report["bottleneck"]["verdict"].as_str().unwrap_or("");
    assert_eq!(report["bottleneck"]["component"], "target", "{verdict}");
    assert!(verdict.contains("2 emulated LTO-4 drives"), "{verdict}");
}

#[test]
fn a_feed_below_the_lowest_step_shoe_shines_and_the_verdict_blames_the_feed() {
    let turn = Turn::shared();
    let report = run(
        &turn,
        &json!({
            "source": {"generated": {"size": "10G", "compress_ratio": 1.0}},
            "target": {"kind": "tape", "model": "lto-3", "buffer_mb": 8, "reposition_s": 0.5},
            "tests": ["null_sink", "full_backup"],
            "params": {"streams": 1, "source_rate_mb_s": 20, "duration_s": 4,
                       "block_size": "1M", "buffers": 8}
        }),
    );
    let full = run_of(&report, "full_backup");
    let tape = &full["tape"];
    assert!(tape["backhitches"].as_u64().unwrap_or(0) > 0, "{tape}");
    assert!(tape["repositioning_s"].as_f64().unwrap_or(0.0) > 0.0);
    let rate = full["mb_per_s"].as_f64().expect("rate");
    assert!(
        rate < 20.0,
        "throughput {rate} MB/s is not below the 20 MB/s feed"
    );
    let verdict = &report["bottleneck"];
    let text = verdict["verdict"].as_str().unwrap_or("");
    assert_eq!(verdict["component"], "source", "{text}");
    assert!(
        text.contains("feed") && text.contains("shoe-shines"),
        "{text}"
    );
    let advice = verdict["recommendations"].to_string();
    if verdict["conclusive"] == true {
        assert!(
            advice.contains("at least 40.0 MB/s") && advice.contains("streams"),
            "{advice}"
        );
    } else {
        // A busy machine makes the runs invalid: only the redo is advised, for that reason.
        for redo in verdict["advice"].as_array().expect("advice") {
            assert_eq!(redo["advice"], "redo", "{advice}");
            for flag in redo["flags"].as_array().expect("flags") {
                assert!(flag == "busy_machine" || flag == "unsteady", "{advice}");
            }
        }
    }
}

#[test]
fn a_full_cartridge_ends_the_run_with_an_end_of_tape_result() {
    let turn = Turn::shared();
    let report = run(
        &turn,
        &json!({
            "source": {"generated": {"size": "400M", "compress_ratio": 1.0}},
            "target": {"kind": "tape", "model": "lto-3", "capacity": "40M", "buffer_mb": 16},
            "tests": ["tape_write"],
            "params": {"block_size": "1M"}
        }),
    );
    let write = run_of(&report, "tape_write");
    assert_eq!(write["status"], "done", "{write}");
    assert_eq!(write["tape"]["end_of_tape"], true);
    let bytes = write["bytes"].as_u64().expect("bytes");
    // 40M is 40 MiB; at 1:1 every byte of it holds host data, and not one more.
    assert!(
        (41_000_000..=41_943_040).contains(&bytes),
        "wrote {bytes} bytes onto a 40 MiB tape"
    );
    let warnings = write["warnings"].to_string();
    assert!(warnings.contains("end of tape"), "{warnings}");
}

#[test]
fn ctrl_c_stops_a_shoe_shining_drive_within_a_second() {
    let _turn = Turn::shared();
    let dir = scratch();
    let path = dir.path().join("spec.json");
    // A slow feed and a long reposition: the drive keeps the host waiting for seconds. The
    // feed's cap is a source what-if, so the backup shoe-shines (the target test would not).
    let spec = json!({
        "source": {"generated": {"size": "10G", "compress_ratio": 1.0}},
        "target": {"kind": "tape", "model": "lto-3", "buffer_mb": 4, "reposition_s": 5},
        "tests": ["full_backup"],
        "params": {"streams": 1, "source_rate_mb_s": 10, "duration_s": 60, "block_size": "1M",
                   "buffers": 4}
    });
    std::fs::write(&path, spec.to_string()).expect("write spec");
    let child = backlab()
        .arg("run")
        .arg(&path)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Long enough for the 4 MB buffer to fill at 10 MB/s and a backhitch to begin.
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = Instant::now();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("signal");
    let out = child.wait_with_output().expect("wait");
    let took = signalled.elapsed();
    assert!(took < Duration::from_millis(1500), "took {took:?} to stop");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["runs"][0]["status"], "cancelled");
    assert!(
        report["runs"][0]["tape"]["backhitches"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{report}"
    );
}
