//! The engine driven through the library: limits, cancellation, stage accounting, direct I/O
//! and the compressibility of generated data, all with real I/O in temp directories.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use backlab::analysis::stage_attribution;
use backlab::engine::data::{DataGenerator, DataPool};
use backlab::engine::dataset::{self, DatasetRequest, Profile};
use backlab::engine::result::{Progress, RunResult, RunStatus};
use backlab::engine::{EngineSettings, RunControl, execute};
use backlab::spec::{RunParams, RunPlan, SourcePlan, TargetPlan, TestKind};

use crate::support::fixtures::{run_params, scratch};
use crate::support::wait::wait_until;

fn generated(size: u64) -> SourcePlan {
    SourcePlan::Generated {
        size,
        compress_ratio: 2.0,
        repeat: false,
        dedup: None,
        generations: None,
    }
}

fn run_with(plan: &RunPlan, cancel: &AtomicBool) -> (RunResult, Vec<Progress>) {
    let seen = std::sync::Mutex::new(Vec::new());
    let report = |progress: &Progress| {
        if let Ok(mut seen) = seen.lock() {
            seen.push(*progress);
        }
    };
    let control = RunControl {
        cancel,
        progress: &report,
    };
    let result = execute(plan, &EngineSettings::default(), &control);
    (result, seen.into_inner().unwrap_or_default())
}

fn run(plan: &RunPlan) -> RunResult {
    run_with(plan, &AtomicBool::new(false)).0
}

fn dataset(root: &Path, profile: Profile, size: u64) -> dataset::DatasetSummary {
    let request = DatasetRequest {
        profile,
        size,
        max_files: None,
        seed: 9,
        compress_ratio: 2.0,
        dedup: None,
        like: None,
    };
    dataset::create(root, &request, &mut |_| {}).expect("dataset")
}

#[test]
fn the_duration_limit_ends_a_run_and_samples_come_every_quarter_second() {
    let plan = RunPlan {
        test: TestKind::NullSink,
        params: RunParams {
            duration_s: Some(1.0),
            time_based: false,
            until_steady: false,
            ..run_params()
        },
        source: generated(1 << 50),
        target: TargetPlan::discard(),
        agents: Vec::new(),
    };
    let (result, progress) = run_with(&plan, &AtomicBool::new(false));
    assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
    // The limit, not the source, ends the run; a loaded machine may stop it a little late.
    assert!(
        (0.95..2.0).contains(&result.seconds),
        "ran {} s",
        result.seconds
    );
    // A sample at every quarter second, or later when the machine is busy; never two at once.
    assert!(
        (2..=6).contains(&result.samples.len()),
        "{:?}",
        result.samples
    );
    assert!(
        result.samples.windows(2).all(|pair| pair[0].t < pair[1].t),
        "{:?}",
        result.samples
    );
    assert!(result.samples.iter().all(|sample| sample.mb_per_s > 0.0));
    assert!(!progress.is_empty() && progress.iter().all(|p| p.percent.is_some()));
    let expected = result.bytes as f64 / result.seconds / 1e6;
    assert!((result.mb_per_s - expected).abs() / expected < 0.01);
}

#[test]
fn a_null_sink_starves_its_writer_and_says_the_source_is_behind() {
    let plan = RunPlan {
        test: TestKind::NullSink,
        params: run_params(),
        source: generated(512 << 20),
        target: TargetPlan::discard(),
        agents: Vec::new(),
    };
    let result = run(&plan);
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.bytes, 512 << 20);
    assert!(result.stages.writer_waits > 0, "{:?}", result.stages);
    assert_eq!(
        stage_attribution(&result.stages).limited_by,
        backlab::analysis::Side::Source,
        "{:?}",
        result.stages
    );
    assert_eq!(result.latency_of.as_deref(), Some("sink_write"));
}

#[tokio::test]
async fn cancelling_stops_a_run_within_a_second_and_removes_its_files() {
    let target = scratch();
    let plan = RunPlan {
        test: TestKind::FullBackup,
        params: RunParams {
            fsync: false,
            ..run_params()
        },
        source: generated(1 << 50),
        target: TargetPlan::new(backlab::engine::target::dir::DirTarget(
            target.path().to_path_buf(),
        )),
        agents: Vec::new(),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    // Should the test fail before it cancels, the run still stops.
    let _stop = CancelOnDrop(Arc::clone(&cancel));
    let runner = {
        let cancel = Arc::clone(&cancel);
        std::thread::spawn(move || run_with(&plan, &cancel).0)
    };
    let files = || std::fs::read_dir(target.path()).expect("list").count();
    // A run starts once earlier runs' files are released, which other tests here may hold.
    wait_until(
        "the run to create its file",
        Duration::from_secs(60),
        Duration::from_millis(20),
        async || {
            if files() > 0 {
                Ok(())
            } else {
                Err("no file yet")
            }
        },
    )
    .await;
    // Half a second of writing fills the page cache with dirty pages of the file.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(files(), 1, "the run writes one file");
    cancel.store(true, Ordering::Relaxed);
    let cancelled_at = Instant::now();
    let result = runner.join().expect("run");
    let took = cancelled_at.elapsed();
    eprintln!("cancelled: returned after {took:?}");
    assert!(took < Duration::from_secs(1), "took {took:?} to stop");
    assert_eq!(result.status, RunStatus::Cancelled);
    assert_eq!(files(), 0);
}

/// Raises a run's cancel flag when dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `plan` and raises its cancel flag when `when` first says so about a progress report;
/// returns the result and how long the run took to return after the flag was raised (`None`
/// when the run ended before).
fn cancel_when(
    plan: &RunPlan,
    when: impl Fn(&Progress) -> bool + Sync,
) -> (RunResult, Option<Duration>) {
    let cancel = AtomicBool::new(false);
    let cancelled_at = std::sync::Mutex::new(None);
    let report = |progress: &Progress| {
        if !cancel.load(Ordering::Relaxed) && when(progress) {
            cancel.store(true, Ordering::Relaxed);
            if let Ok(mut at) = cancelled_at.lock() {
                *at = Some(Instant::now());
            }
        }
    };
    let control = RunControl {
        cancel: &cancel,
        progress: &report,
    };
    let result = execute(plan, &EngineSettings::default(), &control);
    let returned = Instant::now();
    let cancelled_at = cancelled_at.into_inner().expect("lock");
    (result, cancelled_at.map(|at| returned.duration_since(at)))
}

#[test]
fn a_throttled_source_stops_within_a_second_of_a_cancel() {
    // At 1 MB/s a 4 MiB block is due every 4 s: the wait must not hold the stop.
    let plan = RunPlan {
        test: TestKind::NullSink,
        params: RunParams {
            buffers: 2,
            block_size: 4 << 20,
            streams: 1,
            source_rate_mb_s: Some(1.0),
            ..run_params()
        },
        source: generated(1 << 40),
        target: TargetPlan::discard(),
        agents: Vec::new(),
    };
    let (result, took) = cancel_when(&plan, |progress| progress.elapsed_s > 0.3);
    let took = took.expect("a run of hours was cancelled");
    eprintln!("cancelled a throttled source: returned after {took:?}");
    assert!(took < Duration::from_secs(1), "took {took:?} to stop");
    assert_eq!(result.status, RunStatus::Cancelled);
}

#[test]
fn a_cancel_during_the_final_flush_stops_the_run_within_a_second() {
    // A gigabyte in the page cache takes seconds to reach most disks; the flush is cancellable.
    let target = scratch();
    let size = 1u64 << 30;
    let plan = RunPlan {
        test: TestKind::TapeWrite,
        params: RunParams {
            block_size: 1 << 20,
            size: Some(size),
            duration_s: Some(120.0),
            time_based: false,
            until_steady: false,
            ..run_params()
        },
        source: generated(size),
        target: TargetPlan::new(backlab::engine::target::dir::DirTarget(
            target.path().to_path_buf(),
        )),
        agents: Vec::new(),
    };
    let (result, took) = cancel_when(&plan, |progress| progress.bytes >= size);
    let Some(took) = took else {
        // The disk had most of it already (a machine busy writing flushes dirty pages early).
        assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
        eprintln!("the flush ended before a cancel could reach it");
        return;
    };
    eprintln!("cancelled during the flush: returned after {took:?}");
    assert!(took < Duration::from_secs(1), "took {took:?} to stop");
    // A disk that flushed everything before the cancel was seen ends the run as done.
    assert!(
        matches!(result.status, RunStatus::Cancelled | RunStatus::Done),
        "{:?}",
        result.error
    );
    assert_eq!(std::fs::read_dir(target.path()).expect("list").count(), 0);
}

#[test]
fn direct_reads_take_whole_files_including_unaligned_tails() {
    let scratch = scratch();
    let root = scratch.path().join("typical");
    let summary = dataset(&root, Profile::Typical, 48 << 20);
    for (test, direct) in [
        (TestKind::ReadSingle, true),
        (TestKind::ReadParallel, true),
        (TestKind::NullSink, false),
    ] {
        let plan = RunPlan {
            test,
            params: RunParams {
                direct,
                cold_cache: true,
                ..run_params()
            },
            source: SourcePlan::Paths(vec![root.clone()]),
            target: TargetPlan::discard(),
            agents: Vec::new(),
        };
        let result = run(&plan);
        assert_eq!(result.status, RunStatus::Done, "{test}: {:?}", result.error);
        assert_eq!(result.bytes, summary.bytes, "{test} reads every byte");
        assert_eq!(result.files, summary.files, "{test} reads every file");
    }
}

#[test]
fn a_direct_write_pads_nothing_it_counts_and_leaves_no_file() {
    let target = scratch();
    let plan = RunPlan {
        test: TestKind::TapeWrite,
        params: RunParams {
            direct: true,
            block_size: 1 << 20,
            size: Some((8 << 20) + 12_345),
            ..run_params()
        },
        source: SourcePlan::Paths(vec![PathBuf::from("/")]),
        target: TargetPlan::new(backlab::engine::target::dir::DirTarget(
            target.path().to_path_buf(),
        )),
        agents: Vec::new(),
    };
    let result = run(&plan);
    assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
    assert_eq!(result.bytes, (8 << 20) + 12_345);
    assert!(result.latency_us.is_some());
    assert_eq!(std::fs::read_dir(target.path()).expect("list").count(), 0);
}

#[test]
fn one_buffer_is_read_and_written_in_turn_and_each_side_waits_for_the_other() {
    let scratch = scratch();
    let root = scratch.path().join("source");
    let summary = dataset(&root, Profile::Typical, 24 << 20);
    let target = scratch.path().join("target");
    std::fs::create_dir(&target).expect("target dir");
    let plan = RunPlan {
        test: TestKind::FullBackup,
        params: RunParams {
            buffers: 1,
            streams: 1,
            block_size: 256 << 10,
            // The final flush is the writer's alone; without it the turns are the whole run.
            fsync: false,
            ..run_params()
        },
        source: SourcePlan::Paths(vec![root]),
        target: TargetPlan::new(backlab::engine::target::dir::DirTarget(target.clone())),
        agents: Vec::new(),
    };
    let result = run(&plan);
    assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
    assert_eq!((result.bytes, result.files), (summary.bytes, summary.files));
    let stages = result.stages;
    // Every block is filled and then written: each side waits once a block, and while it
    // waits the other side works, so its waiting takes in all of the other's work.
    assert!(stages.writer_waits > 0, "{stages:?}");
    assert_eq!(stages.reader_waits, stages.writer_waits, "{stages:?}");
    // Percentages are rounded to a tenth.
    assert!(
        stages.writer_wait_pct + 0.1 >= stages.reader_busy_pct,
        "{stages:?}"
    );
    assert!(
        stages.reader_wait_pct + 0.1 >= stages.writer_busy_pct,
        "{stages:?}"
    );
    for (busy, wait) in [
        (stages.reader_busy_pct, stages.reader_wait_pct),
        (stages.writer_busy_pct, stages.writer_wait_pct),
    ] {
        assert!(busy + wait <= 100.2, "{stages:?}");
    }
    assert_eq!(std::fs::read_dir(&target).expect("list").count(), 0);
}

#[test]
fn more_streams_than_buffers_finish_the_source_without_stalling() {
    let scratch = scratch();
    let root = scratch.path().join("small");
    let summary = dataset(&root, Profile::SmallFiles, 4 << 20);
    let plan = RunPlan {
        test: TestKind::NullSink,
        params: RunParams {
            buffers: 2,
            streams: 8,
            block_size: 64 << 10,
            duration_s: Some(60.0),
            time_based: false,
            until_steady: false,
            ..run_params()
        },
        source: SourcePlan::Paths(vec![root]),
        target: TargetPlan::discard(),
        agents: Vec::new(),
    };
    let result = run(&plan);
    assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
    assert_eq!((result.bytes, result.files), (summary.bytes, summary.files));
    // Reading 4 MiB takes well under a second; reaching the 60 s limit means a stall.
    assert!(result.seconds < 30.0, "stalled for {} s", result.seconds);
}

fn deflate_ratio(compress_ratio: f64) -> f64 {
    let mut data = vec![0u8; 8 << 20];
    DataGenerator::new(DataPool::new(3, compress_ratio), 1).fill(&mut data);
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&data).expect("compress");
    let compressed = encoder.finish().expect("finish");
    data.len() as f64 / compressed.len() as f64
}

#[test]
fn generated_data_compresses_as_asked() {
    for asked in [1.0, 2.0] {
        let achieved = deflate_ratio(asked);
        assert!(
            (achieved - asked).abs() / asked <= 0.10,
            "asked {asked}:1, deflate achieved {achieved:.3}:1"
        );
    }
}

#[test]
fn dataset_files_compress_as_asked() {
    let scratch = scratch();
    let root = scratch.path().join("large");
    dataset(&root, Profile::LargeFiles, 16 << 20);
    let mut data = Vec::new();
    for entry in std::fs::read_dir(root.join("")).expect("list") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            data.extend(std::fs::read(path).expect("read"));
        }
    }
    assert_eq!(data.len(), 16 << 20);
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&data).expect("compress");
    let ratio = data.len() as f64 / encoder.finish().expect("finish").len() as f64;
    assert!(
        (ratio - 2.0).abs() / 2.0 <= 0.10,
        "dataset compresses {ratio:.3}:1"
    );
}

/// A source what-if caps every test that reads the source, and only those; a link what-if
/// caps none of the local tests.
#[test]
fn what_ifs_cap_only_the_component_they_describe() {
    for test in TestKind::BOTTLENECK {
        let plan = RunPlan {
            test,
            params: RunParams {
                source_rate_mb_s: Some(10.0),
                link_mb_s: Some(1.0),
                duration_s: Some(1.5),
                ..run_params()
            },
            source: generated(1 << 40),
            target: TargetPlan::discard(),
            agents: Vec::new(),
        };
        let result = run(&plan);
        assert_eq!(result.status, RunStatus::Done, "{test}: {:?}", result.error);
        let streams = if test == TestKind::ReadSingle {
            1.0
        } else {
            2.0
        };
        if test.reads_source() {
            // Each stream is held to 10 MB/s; a burst at the start may add a block or two.
            assert!(
                result.mb_per_s <= 10.0 * streams * 1.25,
                "{test} ran at {} MB/s under a {} MB/s cap",
                result.mb_per_s,
                10.0 * streams
            );
        } else {
            // Generated data into nothing runs at memory speed: far above either cap.
            assert!(
                result.mb_per_s > 100.0,
                "{test} was capped by another component's what-if: {} MB/s",
                result.mb_per_s
            );
        }
    }
}

/// `duration_s: "auto"`: a run whose throughput holds ends once it is steady, well before its
/// cap, and its figure is the steady window's.
#[test]
fn a_run_until_steady_ends_once_its_throughput_holds() {
    let plan = RunPlan {
        test: TestKind::NullSink,
        params: RunParams {
            // A paced feed: as steady as a run gets, on any machine.
            source_rate_mb_s: Some(50.0),
            duration_s: Some(60.0),
            time_based: true,
            until_steady: true,
            ..run_params()
        },
        source: generated(1 << 40),
        target: TargetPlan::discard(),
        agents: Vec::new(),
    };
    let result = run(&plan);
    assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
    let steady = result.steady.expect("a judged run");
    assert!(steady.steady, "{steady:?}");
    assert!(
        result.seconds < 45.0,
        "ran {} s: it should have stopped once steady, not at its 60 s cap",
        result.seconds
    );
    assert!((90.0..=110.0).contains(&steady.mb_per_s), "{steady:?}");
}

fn dedup_store(dir: &Path) -> TargetPlan {
    TargetPlan::new(backlab::engine::target::dedup::DedupTarget(
        backlab::engine::target::dedup::DedupConfig {
            path: dir.to_path_buf(),
            avg_chunk: 64 << 10,
        },
    ))
}

/// A target test into a dedup store first reads its source whole to match the source's dedup
/// ratio (a gigabyte here, seconds of reading); a cancel raised meanwhile ends the read within
/// one read call, and the run with it, as every other wait of a run does.
#[test]
fn a_cancel_during_the_source_dedup_estimate_ends_the_run_at_once() {
    let root = scratch();
    let tree = root.path().join("tree");
    dataset(&tree, Profile::LargeFiles, 1 << 30);
    let store = root.path().join("store");
    std::fs::create_dir(&store).expect("store dir");
    let plan = RunPlan {
        test: TestKind::TapeWrite,
        params: RunParams {
            match_source: true,
            size: Some(64 << 20),
            fsync: false,
            ..run_params()
        },
        source: SourcePlan::Paths(vec![tree]),
        target: dedup_store(&store),
        agents: Vec::new(),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let _stop = CancelOnDrop(Arc::clone(&cancel));
    let runner = {
        let cancel = Arc::clone(&cancel);
        std::thread::spawn(move || run_with(&plan, &cancel).0)
    };
    std::thread::sleep(Duration::from_millis(300));
    cancel.store(true, Ordering::Relaxed);
    let cancelled_at = Instant::now();
    let result = runner.join().expect("run");
    let took = cancelled_at.elapsed();
    eprintln!("cancelled during the estimate: returned after {took:?}");
    assert_eq!(result.status, RunStatus::Cancelled, "{result:?}");
    assert!(
        !result
            .warnings
            .iter()
            .any(|warning| warning.contains("made to dedup")),
        "the estimate read on past the cancel: {:?}",
        result.warnings
    );
    assert!(took < Duration::from_secs(1), "took {took:?} to stop");
    assert!(entries_of(&store).is_empty(), "{:?}", entries_of(&store));
}

fn entries_of(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("list")
        .flatten()
        .map(|entry| entry.path())
        .collect()
}

/// A later generation into a dedup store takes the earlier ones in before its timed window;
/// that counts against its duration, so the run ends within it (plus the store's last flush)
/// however much the earlier generations hold: here 4 GiB against 2 s, which it cannot take
/// in, so it fails saying so instead of running on.
#[test]
fn a_later_generation_into_a_dedup_store_ends_within_its_duration() {
    let store = scratch();
    let duration_s = 2.0;
    let plan = RunPlan {
        test: TestKind::FullBackup,
        params: RunParams {
            duration_s: Some(duration_s),
            fsync: false,
            generation: Some(5),
            ..run_params()
        },
        source: SourcePlan::Generated {
            size: 1 << 30,
            compress_ratio: 2.0,
            repeat: false,
            dedup: None,
            generations: Some(backlab::engine::reduction::Generations {
                count: 5,
                change_rate: 0.05,
            }),
        },
        target: dedup_store(store.path()),
        agents: Vec::new(),
    };
    let started = Instant::now();
    let result = run(&plan);
    let took = started.elapsed();
    eprintln!(
        "generation 5 of 5 in {duration_s} s: {took:?}, {:?}",
        result.error
    );
    assert!(
        took < Duration::from_secs_f64(duration_s + 1.5),
        "a run of {duration_s} s took {took:?}: {result:?}"
    );
    match result.status {
        RunStatus::Failed => assert!(
            result
                .error
                .as_deref()
                .unwrap_or("")
                .contains("earlier generations"),
            "{:?}",
            result.error
        ),
        status => assert_eq!(status, RunStatus::Done, "{result:?}"),
    }
    assert!(entries_of(store.path()).is_empty());
}
