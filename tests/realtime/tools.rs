//! Known bottlenecks of a backup tool the lab runs for real, one at a time: a slow emulated
//! drive behind a stream tool makes the target the bottleneck.

use std::path::Path;

use backlab::analysis::Component;
use backlab::spec::TestKind;
use backlab::views::report::CampaignReport;

use crate::scenarios::assert_names;
use crate::support::{Alone, backlab, scratch};

/// A dataset of `size` under `dir`, made by `backlab dataset create`.
fn dataset(dir: &Path, size: &str) {
    let status = backlab()
        .args(["dataset", "create"])
        .arg(dir)
        .args(["--size", size])
        .status()
        .expect("backlab starts");
    assert!(status.success(), "dataset create failed");
}

/// Runs a spec written to a file, with `backlab run --json`.
fn run(alone: &Alone, dir: &Path, spec: serde_json::Value) -> CampaignReport {
    let path = dir.join("spec.json");
    std::fs::write(&path, spec.to_string()).expect("spec written");
    crate::support::run(alone, &path, &[])
}

#[test]
fn a_stream_tool_into_a_slow_drive_is_limited_by_the_target() {
    let alone = Alone::wait_turn();
    let dir = scratch();
    let source = dir.path().join("source");
    dataset(&source, "64M");
    let report = run(
        &alone,
        dir.path(),
        serde_json::json!({
            "name": "tar into a 20 MB/s drive",
            "source": {"paths": [source]},
            "target": {"kind": "tape", "model": "lto-3", "native_mb_s": 20, "min_mb_s": 10,
                       "max_compression": 1.0, "buffer_mb": 16},
            "tests": ["tape_write", "read_parallel", "tool_ceiling", "tool_backup"],
            "tool": {"name": "tar"},
            "params": {"duration_s": 6, "buffers": 8, "block_size": "256K", "fsync": false}
        }),
    );
    assert_names(
        "tar into a slow drive",
        &report.bottleneck,
        Component::Target,
    );
    let backup = report
        .runs
        .iter()
        .find(|run| run.test == TestKind::ToolBackup)
        .expect("the tool's backup");
    // The stream went through the lab's pipeline into the emulated drive.
    assert!(backup.tape.is_some(), "{backup:#?}");
}
