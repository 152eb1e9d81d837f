//! The backup-window planner and the sweeps it reads.

use super::*;

fn refs(runs: &[RunResult]) -> Vec<&RunResult> {
    runs.iter().collect()
}

/// 1 TB (10^12 bytes, given as bytes) in 1 h needs 277.8 MB/s.
fn terabyte_in_an_hour() -> planner::PlanQuestion {
    planner::PlanQuestion {
        data_bytes: 1_000_000_000_000,
        window_s: 3600.0,
    }
}

#[test]
fn the_planner_asks_for_the_drives_the_rate_takes_when_only_the_target_is_short() {
    let runs = vec![
        tape(run(TestKind::TapeWrite, 240.0, 10.0), 1),
        run(TestKind::ReadParallel, 900.0, 10.0),
        run(TestKind::NullSink, 800.0, 10.0),
        tape(run(TestKind::FullBackup, 236.0, 10.0), 1),
    ];
    let plan = planner::plan(
        terabyte_in_an_hour(),
        &verdict(&runs, None),
        &[],
        &refs(&runs),
        None,
    );
    assert!((plan.needed_mb_s - 277.8).abs() < 0.1);
    assert_eq!(plan.measured_mb_s, Some(236.0));
    assert!(plan.reachable, "{plan:?}");
    assert!(
        plan.changes[0].starts_with("Use 2 drives (emulated LTO-4): each wrote 240.0 MB/s"),
        "{plan:?}"
    );
    assert!(plan.changes[1].starts_with("The target write reached 240.0 MB/s alone"));
}

#[test]
fn the_planner_says_when_no_measured_change_gets_there() {
    let runs = vec![
        run(TestKind::TapeWrite, 900.0, 10.0),
        run(TestKind::ReadParallel, 150.0, 10.0),
        run(TestKind::NullSink, 140.0, 10.0),
        run(TestKind::FullBackup, 138.0, 10.0),
    ];
    let plan = planner::plan(
        terabyte_in_an_hour(),
        &verdict(&runs, None),
        &[],
        &refs(&runs),
        None,
    );
    assert!(!plan.reachable);
    assert!(
        plan.answer.contains("no measured change gets there"),
        "{plan:?}"
    );
    assert!(plan.answer.contains("(2h 01m for the data)"), "{plan:?}");
    assert_eq!(plan.changes.len(), 2, "source and pipeline: {plan:?}");
    assert!(plan.changes[0].contains("faster source storage"));

    let easy = planner::PlanQuestion {
        data_bytes: 100_000_000_000,
        window_s: 3600.0,
    };
    let plan = planner::plan(easy, &verdict(&runs, None), &[], &refs(&runs), None);
    assert!(plan.reachable && plan.changes.is_empty());
    assert!(
        plan.answer
            .contains("the measured backup (138.0 MB/s) does it in 12m 05s")
    );
}

/// A part size × parts in flight sweep into an object store, three repeats a point, the
/// full backup's figures given per point (the other tests far faster); `spread` MB/s
/// between repeats.
fn upload_sweep(full: [f64; 4], spread: f64) -> Vec<RunResult> {
    let store = "S3 store lab (bucket backups at 127.0.0.1:9000)";
    let settings = [
        (8u64 << 20, 4u32),
        (8 << 20, 16),
        (32 << 20, 4),
        (32 << 20, 16),
    ];
    let mut runs = Vec::new();
    for ((part_size, concurrency), full) in settings.into_iter().zip(full) {
        for test in [
            TestKind::TapeWrite,
            TestKind::ReadParallel,
            TestKind::NullSink,
            TestKind::FullBackup,
        ] {
            for repeat in [-1.0, 0.0, 1.0] {
                let mb = match test {
                    TestKind::ReadParallel => 2000.0,
                    TestKind::NullSink => 1500.0,
                    _ => full,
                } + repeat * spread;
                let mut run = run(test, mb, 10.0);
                run.params.part_size = Some(part_size);
                run.params.concurrency = Some(concurrency);
                if matches!(test, TestKind::TapeWrite | TestKind::FullBackup) {
                    run.s3 = Some(crate::engine::target::s3::S3Figures {
                        store: store.to_string(),
                        part_size,
                        concurrency,
                        ..Default::default()
                    });
                }
                runs.push(run);
            }
        }
    }
    runs
}

#[test]
fn an_upload_sweep_names_the_store_and_the_pair_a_window_needs() {
    let runs = upload_sweep([200.0, 300.0, 310.0, 420.0], 2.0);
    let judgement = Judgement::of(&points::RunEntry::of_results(&runs), None);
    let verdict = &judgement.verdict;
    assert_eq!(verdict.component, Some(Component::Target), "{verdict:?}");
    assert!(
        verdict.sentence().starts_with(
            "The target (S3 store lab (bucket backups at 127.0.0.1:9000)) limits the backup"
        ),
        "{}",
        verdict.sentence()
    );
    let full = verdict
        .rows
        .iter()
        .find(|row| row.test == TestKind::FullBackup)
        .expect("a full backup row");
    assert!(full.label.contains("S3 store lab"), "{}", full.label);
    assert_eq!(full.mb_per_s, Some(420.0));

    // 1 TB in an hour needs 277.8 MB/s: three pairs reach it, 8 MiB × 16 with the least
    // memory in parts (8 MiB × 17 × 2 streams = 272 MiB).
    let plan = planner::plan(
        terabyte_in_an_hour(),
        verdict,
        &judgement.points,
        &refs(&runs),
        None,
    );
    assert!(plan.reachable, "{plan:?}");
    assert_eq!(plan.changes.len(), 1, "{plan:?}");
    assert!(
        plan.changes[0].starts_with(
            "Upload in 8 MiB parts with 16 in flight per stream (target.part_size \"8M\", \
             target.concurrency 16): the full backup measured 300.0 MB/s there"
        ),
        "{plan:?}"
    );
    assert!(plan.changes[0].contains("(272 MiB)"), "{plan:?}");
}

#[test]
fn a_backup_into_a_dedup_store_is_planned_in_logical_and_physical_terms() {
    let mut full = run(TestKind::FullBackup, 500.0, 10.0);
    full.dedup = Some(crate::engine::target::dedup::DedupFigures {
        store: "dedup store /srv (64 KiB chunks)".into(),
        logical_bytes: 2800,
        stored_bytes: 1000,
        dedup_ratio: 2.8,
        hashing_s: 3.0,
        chunking_s: 1.0,
        writing_s: 1.0,
        ..Default::default()
    });
    let runs = vec![
        run(TestKind::TapeWrite, 520.0, 10.0),
        run(TestKind::ReadParallel, 900.0, 10.0),
        run(TestKind::NullSink, 800.0, 10.0),
        full,
    ];
    // 12 TiB in 8 h: 458.1 MB/s logical; at 2.8:1, 163.6 MB/s to the store's disk.
    let question = planner::PlanQuestion::parse("12T", "8h").expect("a question");
    let plan = planner::plan(question, &verdict(&runs, None), &[], &refs(&runs), None);
    assert!(plan.reachable, "{plan:?}");
    let physical = plan.physical_mb_s.expect("a physical rate");
    assert!((physical - 163.6).abs() < 0.1, "{plan:?}");
    assert!(
        plan.answer.ends_with(
            "At the 2.80:1 reduction the dedup store achieved, that is 458.1 MB/s logical \
             and 163.6 MB/s physical, to its disk."
        ),
        "{plan:?}"
    );
    // The store's hashing, CPU work, took most of its time: the verdict names it, typed
    // and in words.
    let judged = verdict(&runs, None);
    assert_eq!(judged.component, Some(Component::Target), "{judged:?}");
    let limit = judged.dedup_limit.expect("the store's limit");
    assert_eq!(limit.work, crate::engine::target::dedup::DedupWork::Hashing);
    assert_eq!(limit.share_pct, 80.0);
    assert!(
        judged.sentence().contains(
            "dedup store /srv (64 KiB chunks): hashing (cutting chunks 20 %, naming them \
             60 %: CPU work, which a faster disk would not speed up) took 80 % of its time"
        ),
        "{}",
        judged.sentence()
    );
}
