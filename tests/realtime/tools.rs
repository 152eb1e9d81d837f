//! Known bottlenecks of a backup tool the lab runs for real, one at a time (the tool's CPU is
//! what one of them measures): a heavy compression level on one thread makes the tool the
//! bottleneck, a slow emulated drive behind a stream tool makes the target one, and a source disk behind a
//! block-I/O throttle makes the source one.

use std::path::Path;

use backlab::analysis::Component;
use backlab::spec::TestKind;
use backlab::views::report::CampaignReport;

use crate::scenarios::assert_names;
use crate::support::{Turn, backlab, scratch};
use crate::throttle::ThrottledDisk;

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
fn run(turn: &Turn, dir: &Path, spec: serde_json::Value) -> CampaignReport {
    run_with(turn, dir, spec, backlab())
}

/// [`run`] through `command`, which starts the `backlab` binary its own way.
fn run_with(
    turn: &Turn,
    dir: &Path,
    spec: serde_json::Value,
    command: std::process::Command,
) -> CampaignReport {
    let path = dir.join("spec.json");
    std::fs::write(&path, spec.to_string()).expect("spec written");
    crate::support::run_with(turn, command, &path, &[])
}

/// tar into zstd at level 19 on one thread: its one thread is busy the whole backup, far below
/// what the source and the target take, and the verdict names the tool, saying so.
#[test]
fn a_heavy_compression_level_makes_the_tool_the_bottleneck() {
    let turn = Turn::alone();
    let dir = scratch();
    let source = dir.path().join("source");
    dataset(&source, "32M");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).expect("target dir");
    let report = run(
        &turn,
        dir.path(),
        serde_json::json!({
            "name": "zstd -19 on one thread",
            "source": {"paths": [source]},
            "target": {"kind": "dir", "path": target},
            "tests": ["tape_write", "read_parallel", "tool_ceiling", "tool_backup"],
            "tool": {"name": "tar-zstd", "params": {"level": 19, "threads": 1}},
            // zstd -19 on one core takes 32 MiB in 2.6 s on a quiet 2-core machine and in
            // over 5 s on a busy one: a tool's timed step is held to the run's duration, so
            // the duration leaves it room to finish.
            "params": {"duration_s": 10}
        }),
    );
    eprintln!("zstd -19: {}", report.bottleneck.sentence());
    assert_names("zstd -19", &report.bottleneck, Component::Tool);
    let tool = report
        .bottleneck
        .tool
        .as_ref()
        .expect("the verdict's tool use");
    assert_eq!(tool.name, "tar-zstd");
    assert!(
        report.bottleneck.sentence().contains("tar-zstd"),
        "{}",
        report.bottleneck.sentence()
    );
    let backup = report
        .runs
        .iter()
        .find(|run| run.test == TestKind::ToolBackup)
        .and_then(|run| run.tool.as_ref())
        .expect("the tool's backup");
    // The stream kept less than the source: compression is a figure, not a claim.
    let stored = backup.stored_bytes.expect("the stream's size");
    assert!(stored < backup.source_bytes, "{backup:#?}");
}

#[test]
fn a_stream_tool_into_a_slow_drive_is_limited_by_the_target() {
    let turn = Turn::alone();
    let dir = scratch();
    let source = dir.path().join("source");
    dataset(&source, "64M");
    let report = run(
        &turn,
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

/// The source on a disk whose reads a block-I/O throttle holds to 20 MiB/s, for the lab and for
/// restic alike (both run in the throttle's cgroup): the source's ceiling is the cap, restic's
/// backup reaches it, and the verdict names the source. The throttle sets every pace here, so
/// the test shares the machine with those that only wait on emulated devices.
#[test]
fn a_source_behind_a_read_throttle_limits_the_tool() {
    let turn = Turn::shared();
    let dir = scratch();
    let cap = 20u64 << 20;
    let Some(disk) = ThrottledDisk::make(dir.path(), 512, cap) else {
        return;
    };
    let source = disk.mount().join("source");
    dataset(&source, "96M");
    disk.drop_cache();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).expect("target dir");
    let spec = serde_json::json!({
        "name": "restic from a 20 MiB/s disk",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "tests": ["tape_write", "read_parallel", "tool_ceiling", "tool_backup"],
        "tool": {"name": "restic"},
        "params": {"duration_s": 10}
    });
    let report = run_with(
        &turn,
        dir.path(),
        spec,
        disk.command(std::ffi::OsStr::new(env!("CARGO_BIN_EXE_backlab"))),
    );
    eprintln!("a throttled source: {}", report.bottleneck.sentence());
    assert_names("a throttled source", &report.bottleneck, Component::Source);
    let read = report
        .runs
        .iter()
        .find(|run| run.test == TestKind::ReadParallel)
        .expect("the source's ceiling");
    // The throttle holds: the lab's own read of the source stands at the cap.
    let cap_mb_s = cap as f64 / 1e6;
    let read_mb_s = read.figure();
    assert!(
        (read_mb_s / cap_mb_s - 1.0).abs() <= 0.05,
        "the source read at {read_mb_s:.2} MB/s under a {cap_mb_s:.2} MB/s cap"
    );
}
