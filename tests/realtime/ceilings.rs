//! A ceiling is what its device delivers, never more: the lab's own parallel read of a one-file
//! tree on a disk whose reads a block-I/O throttle caps stands at the cap, though its streams
//! could share the file's pages (a tree of many files read at the cap is `tools.rs`'s); and a
//! directory on a disk whose writes are capped is written at the cap, its flush included.

use std::path::Path;

use backlab::spec::TestKind;
use backlab::views::report::CampaignReport;

use crate::support::{Turn, backlab, run_with, scratch};
use crate::throttle::ThrottledDisk;

/// A tree of `profile` and `size` under `dir`, made by `backlab dataset create`.
fn dataset(dir: &Path, profile: &str, size: &str) {
    let status = backlab()
        .args(["dataset", "create"])
        .arg(dir)
        .args(["--profile", profile, "--size", size])
        .status()
        .expect("backlab starts");
    assert!(status.success(), "dataset create failed");
}

/// The parallel read of `source` for `seconds`, the lab inside the throttle's cgroup, from a
/// cold page cache.
fn read_parallel(
    turn: &Turn,
    dir: &Path,
    disk: &ThrottledDisk,
    source: &Path,
    seconds: u64,
) -> f64 {
    let spec = serde_json::json!({
        "name": "read behind a throttle",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": dir},
        "tests": ["read_parallel"],
        "params": {"duration_s": seconds, "streams": 4}
    });
    let path = dir.join("spec.json");
    std::fs::write(&path, spec.to_string()).expect("spec written");
    disk.drop_cache();
    let report: CampaignReport = run_with(
        turn,
        disk.command(std::ffi::OsStr::new(env!("CARGO_BIN_EXE_backlab"))),
        &path,
        &[],
    );
    let run = report
        .runs
        .iter()
        .find(|run| run.test == TestKind::ReadParallel)
        .expect("the parallel read");
    eprintln!(
        "{}: {:.2} MB/s over the whole run, figure {:.2}",
        source.display(),
        run.mb_per_s,
        run.figure()
    );
    run.figure()
}

/// Four streams over a one-file tree of 160 MiB on a disk capped at 24 MiB/s read at most 5 %
/// above the cap, never at a multiple of it (four streams sharing one file's pages read 4× the
/// cap), and near it (the throttle's own pace varies by a few percent over a few seconds).
#[test]
fn a_parallel_read_never_exceeds_its_device() {
    // The throttle sets the pace: shared with the tests that only wait on emulated devices.
    let turn = Turn::shared();
    let dir = scratch();
    let cap = 24u64 << 20;
    let Some(disk) = ThrottledDisk::make(dir.path(), 400, cap) else {
        return;
    };
    let one_file = disk.mount().join("one-file");
    dataset(&one_file, "large-files", "160M");
    let cap_mb_s = cap as f64 / 1e6;
    let read_mb_s = read_parallel(&turn, dir.path(), &disk, &one_file, 6);
    assert!(
        (0.85..=1.05).contains(&(read_mb_s / cap_mb_s)),
        "{} read at {read_mb_s:.2} MB/s under a {cap_mb_s:.2} MB/s cap",
        one_file.display()
    );
}

/// A directory on a disk whose writes a block-I/O throttle caps at 24 MiB/s: the target test
/// and the full backup into it stand at the cap, flush and all, as a long backup would find
/// the disk, never at the page cache's pace (the page cache took the same writes at over
/// 1 500 MB/s when the run handed them to it and flushed only at its end).
#[test]
fn a_directory_is_written_at_its_disks_pace() {
    let turn = Turn::shared();
    let dir = scratch();
    let cap = 24u64 << 20;
    // Reads uncapped: only the writes are the disk's limit here.
    let Some(disk) = ThrottledDisk::make(dir.path(), 512, u64::MAX >> 1) else {
        return;
    };
    if !disk.cap_writes(cap) {
        return;
    }
    let target = disk.mount().join("target");
    std::fs::create_dir(&target).expect("target dir");
    let spec = serde_json::json!({
        "name": "a directory behind a write throttle",
        "source": {"generated": {"size": "1G"}},
        "target": {"kind": "dir", "path": target},
        "tests": ["tape_write", "full_backup"],
        "params": {"duration_s": 6}
    });
    let path = dir.path().join("spec.json");
    std::fs::write(&path, spec.to_string()).expect("spec written");
    let report: CampaignReport = run_with(
        &turn,
        disk.command(std::ffi::OsStr::new(env!("CARGO_BIN_EXE_backlab"))),
        &path,
        &[],
    );
    let cap_mb_s = cap as f64 / 1e6;
    for test in [TestKind::TapeWrite, TestKind::FullBackup] {
        let run = report
            .runs
            .iter()
            .find(|run| run.test == test)
            .unwrap_or_else(|| panic!("no {test:?} run"));
        eprintln!(
            "{test:?}: {:.2} MB/s over the whole run, figure {:.2}",
            run.mb_per_s,
            run.figure()
        );
        // The whole run, its final flush included, is the disk's pace; a steady window, where
        // one is found, is no faster.
        assert!(
            (0.85..=1.05).contains(&(run.mb_per_s / cap_mb_s)),
            "{test:?} wrote at {:.2} MB/s to a disk capped at {cap_mb_s:.2} MB/s",
            run.mb_per_s
        );
        assert!(
            run.figure() <= 1.05 * cap_mb_s,
            "{test:?}'s figure {:.2} MB/s is above the cap {cap_mb_s:.2} MB/s",
            run.figure()
        );
    }
}
