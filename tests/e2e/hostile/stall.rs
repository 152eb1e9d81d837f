//! Runs that must end on time and stop at once, whatever their what-ifs and emulated settings:
//! a source throttled to the slowest rate a spec may give stops within a second of a cancel in
//! every test kind that reads the source, and an emulated target too slow to take what the
//! ring holds is cut at its drain allowance, never left holding the lane. Below those rates a
//! spec is refused at submission, with the field named.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use backlab::engine::dataset::{self, DatasetRequest, Profile};
use backlab::engine::result::{RunResult, RunStatus};
use backlab::engine::{EngineSettings, RunControl, execute};
use backlab::spec::{self, MIN_SOURCE_RATE_MB_S, RunPlan};
use serde_json::{Value, json};

use crate::support::fixtures::scratch;
use crate::support::in_process::App;

/// How long a cancel may take to stop a run.
const STOP_WITHIN: Duration = Duration::from_secs(1);

/// The one run a spec plans.
fn plan_of(spec: &Value) -> RunPlan {
    let spec = spec::parse_json(&spec.to_string()).expect("the spec reads");
    let mut plans = spec.plan().expect("the spec plans");
    assert_eq!(plans.len(), 1, "one run");
    plans.remove(0)
}

/// A small real dataset to read.
fn dataset_in(dir: &Path) {
    let request = DatasetRequest {
        profile: Profile::Typical,
        size: 16 << 20,
        max_files: None,
        seed: 3,
        compress_ratio: 2.0,
        dedup: None,
        like: None,
    };
    dataset::create(dir, &request, &mut |_| {}).expect("dataset");
}

/// Executes `plan` on a thread of its own; cancels it once it has reported progress, and
/// returns the result and how long it took to stop after the cancel.
fn cancel_once_running(plan: RunPlan) -> (RunResult, Duration) {
    let cancel = AtomicBool::new(false);
    let progressed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            let report = |_: &backlab::engine::result::Progress| {
                progressed.store(true, Ordering::Relaxed);
            };
            let control = RunControl {
                cancel: &cancel,
                progress: &report,
            };
            execute(&plan, &EngineSettings::default(), &control)
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        while !progressed.load(Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(progressed.load(Ordering::Relaxed), "the run never reported");
        // Into the throttle's wait: the first block has been read.
        std::thread::sleep(Duration::from_millis(300));
        let cancelled_at = Instant::now();
        cancel.store(true, Ordering::Relaxed);
        let result = running.join().expect("the run's thread");
        (result, cancelled_at.elapsed())
    })
}

/// A one-test spec reading `source` at the slowest rate a spec may ask for, for a minute.
fn throttled(test: &str, source: &Path, target: Value) -> Value {
    json!({
        "source": {"paths": [source.join("a"), source.join("b")]},
        "target": target,
        "tests": [test],
        "params": {"buffers": 4, "block_size": "1M", "streams": 2, "duration_s": 60,
                   "time_based": true, "source_rate_mb_s": MIN_SOURCE_RATE_MB_S},
    })
}

fn assert_stopped_at_once(test: &str, target: Value) {
    let scratch = scratch();
    for part in ["a", "b"] {
        dataset_in(&scratch.path().join("source").join(part));
    }
    let plan = plan_of(&throttled(test, &scratch.path().join("source"), target));
    let (result, took) = cancel_once_running(plan);
    assert_eq!(
        result.status,
        RunStatus::Cancelled,
        "{test}: {:?}",
        result.error
    );
    assert!(
        took < STOP_WITHIN,
        "{test} at {MIN_SOURCE_RATE_MB_S} MB/s took {took:?} to stop after its cancel"
    );
}

#[test]
fn a_throttled_single_read_stops_within_a_second_of_its_cancel() {
    assert_stopped_at_once("read_single", json!({"kind": "null"}));
}

#[test]
fn a_throttled_parallel_read_stops_within_a_second_of_its_cancel() {
    assert_stopped_at_once("read_parallel", json!({"kind": "null"}));
}

#[test]
fn a_throttled_null_sink_backup_stops_within_a_second_of_its_cancel() {
    assert_stopped_at_once("null_sink", json!({"kind": "null"}));
}

#[test]
fn a_throttled_full_backup_stops_within_a_second_of_its_cancel() {
    let target = scratch();
    assert_stopped_at_once("full_backup", json!({"kind": "dir", "path": target.path()}));
    let left: Vec<_> = std::fs::read_dir(target.path())
        .expect("target")
        .flatten()
        .collect();
    assert!(left.is_empty(), "files left in the target: {left:?}");
}

/// Runs a 2 s target write into `target` and checks it ends by its drain allowance (5 s past
/// its duration), cut and failed, and named so.
fn assert_cut_at_the_drain_allowance(target: Value) {
    let plan = plan_of(&json!({
        "source": {"generated": {"size": "1G"}},
        "target": target,
        "tests": ["tape_write"],
        "params": {"buffers": 32, "block_size": "1M", "duration_s": 2, "time_based": true},
    }));
    let started = Instant::now();
    let result = execute(
        &plan,
        &EngineSettings::default(),
        &RunControl {
            cancel: &AtomicBool::new(false),
            progress: &|_| {},
        },
    );
    let took = started.elapsed();
    // 2 s of duration, 5 s to drain, and room for a loaded machine.
    assert!(took < Duration::from_secs(10), "the run lasted {took:?}");
    assert!(
        took >= Duration::from_secs(6),
        "ended after {took:?}: the target could not have drained 32 MiB"
    );
    assert_eq!(result.status, RunStatus::Failed, "{result:?}");
    let error = result.error.unwrap_or_default();
    assert!(error.contains("cut"), "{error}");
    assert_eq!(result.mb_per_s, 0.0, "a failed run reports no rate");
}

#[test]
fn a_drive_too_slow_for_its_ring_is_cut_at_its_drain_allowance() {
    assert_cut_at_the_drain_allowance(json!({
        "kind": "tape", "model": "lto-4", "native_mb_s": 1, "min_mb_s": 0.5, "buffer_mb": 1,
        "reposition_s": 60,
    }));
}

#[test]
fn a_striped_volume_too_slow_for_its_ring_is_cut_at_its_drain_allowance() {
    assert_cut_at_the_drain_allowance(json!({
        "kind": "striped", "disks": 2, "disk_mb_s": 0.1, "controller_mb_s": 0.1,
    }));
}

#[tokio::test]
async fn rates_below_the_lower_bounds_are_refused_at_submission_with_the_field_named() {
    let app = App::new().await;
    let generated = json!({"generated": {"size": "64M"}});
    let cases = [
        (
            json!({"source": generated, "target": {"kind": "null"}, "tests": ["read_single"],
                   "params": {"duration_s": 2, "source_rate_mb_s": 1e-9}}),
            "params.source_rate_mb_s",
        ),
        (
            json!({"source": generated, "target": {"kind": "null"}, "tests": ["read_single"],
                   "params": {"duration_s": 2, "source_rate_mb_s": 1e-300}}),
            "params.source_rate_mb_s",
        ),
        (
            json!({"source": generated, "target": {"kind": "tape", "model": "lto-4",
                   "native_mb_s": 1e-6}, "tests": ["tape_write"], "params": {"duration_s": 2}}),
            "target.native_mb_s",
        ),
        (
            json!({"source": generated, "target": {"kind": "tape", "model": "lto-4",
                   "buffer_mb": 0.001, "reposition_s": 600}, "tests": ["tape_write"],
                   "params": {"duration_s": 2}}),
            "target.buffer_mb",
        ),
        (
            json!({"source": generated, "target": {"kind": "striped", "controller_mb_s": 1e-6},
                   "tests": ["tape_write"], "params": {"duration_s": 2}}),
            "target.controller_mb_s",
        ),
        (
            json!({"source": generated, "target": {"kind": "striped", "disk_mb_s": 1e-300},
                   "tests": ["tape_write"], "params": {"duration_s": 2}}),
            "target.disk_mb_s",
        ),
    ];
    for (spec, field) in cases {
        let answer = app
            .send("POST", "/api/campaigns", Some(&spec.to_string()))
            .await;
        assert_eq!(answer.status, 422, "{spec}: {}", answer.body);
        let fields = &answer.json()["fields"];
        assert!(fields[field].is_string(), "{field} not named: {fields}");
        // Only what was sent is named: a default derived from a bad figure is not blamed.
        assert!(
            fields.get("target.rotational_delay_ms").is_none(),
            "{spec}: {fields}"
        );
    }
    // reposition_s beyond a minute is refused too, under its own name.
    let spec = json!({"source": generated, "target": {"kind": "tape", "model": "lto-4",
                      "reposition_s": 600}, "tests": ["tape_write"], "params": {"duration_s": 2}});
    let answer = app
        .send("POST", "/api/campaigns", Some(&spec.to_string()))
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(answer.json()["fields"]["target.reposition_s"].is_string());
}
