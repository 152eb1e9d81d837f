//! The verdict's rules, on runs made up for each case: what it names, what it advises and
//! what it says.

mod flags;
mod plans;
mod said;
mod sentences;
mod tools;

use super::*;
use crate::engine::result::{CpuFigures, RunStatus, StageFigures, TapeFigures};
use crate::spec::RunParams;
use findings::AboveCeiling;

fn run(test: TestKind, mb_per_s: f64, cpu: f64) -> RunResult {
    RunResult {
        test,
        params: RunParams {
            streams: 2,
            duration_s: None,
            time_based: false,
            ..RunParams::example()
        },
        status: RunStatus::Done,
        bytes: (mb_per_s * 1e6) as u64,
        files: 1,
        seconds: 1.0,
        mb_per_s,
        cpu: CpuFigures {
            process_pct: cpu,
            system_pct: cpu,
        },
        stages: StageFigures::default(),
        latency_us: None,
        latency_of: None,
        cache_resident_pct: None,
        samples: Vec::new(),
        warnings: Vec::new(),
        error: None,
        tape: None,
        striped: None,
        s3: None,
        dedup: None,
        restore: None,
        tool: None,
        clients: None,
        partial: false,
        steady: None,
        validity: None,
        lock: None,
        data_compress_ratio: None,
        generated_dedup: None,
    }
}

fn network(mb_per_s: f64, clients: u32, link: Option<f64>, writer_wait: f64) -> RunResult {
    let mut result = run(TestKind::NetworkBackup, mb_per_s, 10.0);
    result.params.clients = Some(clients);
    result.params.link_mb_s = link;
    result.stages.writer_wait_pct = writer_wait;
    result
}

fn tape(mut run: RunResult, drives: u32) -> RunResult {
    run.tape = Some(TapeFigures {
        emulated: true,
        model: "LTO-4".into(),
        drives,
        native_mb_s: 120.0,
        min_mb_s: 40.0,
        compression: 2.0,
        streaming_s: 1.0,
        repositioning_s: 0.0,
        idle_s: 0.0,
        backhitches: 0,
        tape_mb_s: 120.0,
        tape_bytes: 0,
        end_of_tape: false,
        buffer_bytes: 0,
        buffer_filled: true,
    });
    run
}

#[test]
fn a_backup_a_little_faster_than_its_ceiling_says_why() {
    let runs = vec![
        run(TestKind::TapeWrite, 233.7, 10.0),
        run(TestKind::ReadParallel, 1000.0, 10.0),
        run(TestKind::NullSink, 900.0, 10.0),
        run(TestKind::FullBackup, 238.8, 10.0),
    ];
    let single = verdict(&runs, None);
    assert!(
        matches!(&single.finding, Finding::Limits { above, .. }
            if above == &vec![AboveCeiling::Unrepeated]),
        "{:?}",
        single.finding
    );
    assert!(single.conclusive, "{}", single.sentence());
    assert!(
        single.sentence().contains("102% of its isolated ceiling")
            && single.sentence().contains("2.2% faster than that test")
            && single.sentence().contains("cannot tell from noise"),
        "{}",
        single.sentence()
    );
    // At the ceiling or under it, nothing to explain.
    let mut under = runs.clone();
    under[3] = run(TestKind::FullBackup, 230.0, 10.0);
    assert!(matches!(&verdict(&under, None).finding,
        Finding::Limits { above, .. } if above.is_empty()));
    // A target test whose final flush was charged to it is a lower bound.
    let mut flushed = runs.clone();
    flushed[0].steady = Some(crate::engine::steady::SteadyFigures {
        mb_per_s: 233.7,
        from_s: 0.0,
        to_s: 1.0,
        cv_pct: Some(1.0),
        steady: true,
        flush_s: 0.6,
    });
    let flushed = verdict(&flushed, None);
    assert!(
        flushed
            .sentence()
            .contains("lower bound, its final flush (0.6 s)"),
        "{}",
        flushed.sentence()
    );
}

#[test]
fn a_target_test_on_data_less_compressible_than_the_backups_never_limits_it() {
    let on_drive = |test, mb_per_s, compression| {
        let mut result = tape(run(test, mb_per_s, 10.0), 1);
        if let Some(tape) = result.tape.as_mut() {
            tape.compression = compression;
        }
        result
    };
    let with_backup = |full| {
        verdict(
            &[
                on_drive(TestKind::TapeWrite, 80.0, 1.0),
                run(TestKind::ReadParallel, 1000.0, 10.0),
                run(TestKind::NullSink, 900.0, 10.0),
                on_drive(TestKind::FullBackup, full, 1.97),
            ],
            None,
        )
    };
    // Within the share a noisy figure may run above its ceiling, and under the ceiling: the
    // drive takes the backup's data faster than its test says, so that test is not trusted.
    for (full, verb) in [(86.3, "ran faster than"), (76.0, "reached")] {
        let verdict = with_backup(full);
        assert!(
            matches!(&verdict.finding, Finding::FullOutranCeiling { causes, .. }
                if matches!(causes[..], [findings::OutranCause::Compressibility { .. }])),
            "{full}: {:?}",
            verdict.finding
        );
        assert!(!verdict.conclusive, "{}", verdict.sentence());
        assert!(
            verdict
                .advice
                .iter()
                .any(|advice| matches!(advice, Advice::MatchCompressibility { .. })),
            "{:?}",
            verdict.advice
        );
        let sentence = verdict.sentence();
        assert!(
            sentence.contains(verb) && sentence.contains("faster than that test says"),
            "{sentence}"
        );
    }
    // Well below it, the components interfere: the drive's ceiling is not the question.
    assert!(matches!(
        with_backup(50.0).finding,
        Finding::Interference { .. }
    ));
}

#[test]
fn a_null_target_never_limits_the_backup_its_write_measured_the_pipeline() {
    let runs = vec![
        run(TestKind::TapeWrite, 900.0, 100.0),
        run(TestKind::ReadParallel, 2000.0, 60.0),
        run(TestKind::NullSink, 1500.0, 100.0),
    ];
    let null = Survey {
        source_bytes: 1 << 30,
        source_files: 10,
        shares_device: false,
        provenance: None,
        target_discards: true,
        reduction: None,
    };
    let verdict = verdict(&runs, Some(&null));
    assert_eq!(verdict.component, Some(Component::Pipeline), "{verdict:?}");
    assert!(
        verdict.sentence().starts_with("The pipeline"),
        "{}",
        verdict.sentence()
    );
    let tape = verdict
        .rows
        .iter()
        .find(|row| row.test == TestKind::TapeWrite);
    assert_eq!(tape.and_then(|row| row.bottleneck), Some(true));
}

#[test]
fn a_network_backup_below_the_target_blames_the_network() {
    let runs = vec![
        run(TestKind::TapeWrite, 240.0, 3.0),
        network(117.0, 1, None, 85.0),
    ];
    let verdict = verdict(&runs, None);
    assert_eq!(verdict.component, Some(Component::Network));
    assert!(
        verdict
            .sentence()
            .starts_with("The network limits the backup: 1 client × 2 streams delivered 117.0"),
        "{}",
        verdict.sentence()
    );
    let row = verdict
        .rows
        .iter()
        .find(|row| row.test == TestKind::NetworkBackup)
        .expect("row");
    assert_eq!(row.bottleneck, Some(true));
}

/// Seed 001: the local side of a backup server should write at twice the network rate.
#[test]
fn a_local_write_under_twice_the_network_rate_is_called_out() {
    let tight = vec![
        run(TestKind::TapeWrite, 180.0, 3.0),
        network(117.0, 1, None, 85.0),
    ];
    let judged = verdict(&tight, None);
    let rule = judged
        .advice
        .iter()
        .find(|advice| matches!(advice, Advice::LocalUnderTwiceNetwork { .. }));
    assert_eq!(
        rule,
        Some(&Advice::LocalUnderTwiceNetwork {
            local_mb_s: 180.0,
            network_mb_s: 117.0,
            needed_mb_s: 234.0
        })
    );
    assert!(
        judged.recommendations().iter().any(|r| r.starts_with(
            "The lab's target writes 180.0 MB/s, under twice the 117.0 MB/s the network \
             delivered"
        ) && r
            .ends_with("so its local writes need 234.0 MB/s or more.")),
        "{:?}",
        judged.recommendations()
    );
    // Twice or more: nothing to say; a null target's write is not a local file system.
    let roomy = vec![
        run(TestKind::TapeWrite, 240.0, 3.0),
        network(117.0, 1, None, 85.0),
    ];
    let said = |runs: &[RunResult], survey: Option<&Survey>| {
        verdict(runs, survey)
            .advice
            .iter()
            .any(|advice| matches!(advice, Advice::LocalUnderTwiceNetwork { .. }))
    };
    assert!(!said(&roomy, None));
    let null = Survey {
        target_discards: true,
        reduction: None,
        ..Survey::default()
    };
    assert!(!said(&tight, Some(&null)));
}

#[test]
fn emulated_links_and_a_full_target_are_told_apart() {
    let capped = verdict(&[network(178.0, 3, Some(60.0), 80.0)], None);
    assert_eq!(capped.component, Some(Component::Network));
    assert!(
        capped.sentence().contains("emulated links"),
        "{}",
        capped.sentence()
    );
    assert!(capped.recommendations()[0].contains("180.0 MB/s"));

    let full = verdict(
        &[
            run(TestKind::TapeWrite, 240.0, 3.0),
            network(231.0, 6, None, 5.0),
        ],
        None,
    );
    assert_eq!(full.component, Some(Component::Target));
    assert!(
        full.sentence()
            .starts_with("The target limits the network backup")
    );
}

/// Table 1 of the Data Protector paper (Windows): the tape is the bottleneck.
fn table_one() -> Vec<RunResult> {
    vec![
        run(TestKind::TapeWrite, 154.0, 3.0),
        run(TestKind::ReadSingle, 105.3, 5.0),
        run(TestKind::ReadParallel, 262.2, 9.0),
        run(TestKind::NullSink, 197.0, 18.0),
        run(TestKind::FullBackup, 151.7, 13.0),
    ]
}

#[test]
fn table_one_names_the_tape() {
    let survey = Survey {
        source_bytes: 1_517_000_000,
        source_files: 10,
        shares_device: false,
        provenance: None,
        target_discards: false,
        reduction: None,
    };
    let verdict = verdict(&table_one(), Some(&survey));
    assert_eq!(verdict.component, Some(Component::Target));
    let yes: Vec<TestKind> = verdict
        .rows
        .iter()
        .filter(|row| row.bottleneck == Some(true))
        .map(|row| row.test)
        .collect();
    assert_eq!(yes, vec![TestKind::TapeWrite]);
    assert_eq!(verdict.rows[4].bottleneck, None);
    assert!(
        verdict
            .sentence()
            .starts_with("The target limits the backup"),
        "{}",
        verdict.sentence()
    );
    assert!(verdict.recommendations()[0].contains("one stream cannot keep the target busy"));
    assert!(
        verdict
            .recommendations()
            .iter()
            .any(|r| r.starts_with("The target streams at full speed"))
    );
    assert_eq!(verdict.backup_window_s, Some(10.0));
}

#[test]
fn a_slow_full_backup_is_interference() {
    let mut runs = table_one();
    runs[4].mb_per_s = 60.0;
    let survey = Survey {
        source_bytes: 1,
        source_files: 1,
        shares_device: true,
        provenance: None,
        target_discards: false,
        reduction: None,
    };
    let verdict = verdict(&runs, Some(&survey));
    assert_eq!(verdict.component, Some(Component::SharedDevice));
    assert!(verdict.rows.iter().all(|row| row.bottleneck != Some(true)));
    assert!(verdict.sentence().contains("slow each other down"));
}

/// Components that slow each other down are no one component's limit: the verdict names
/// where to look first (the source, whose side the writer waited on), and marks no row "Yes".
#[test]
fn interference_on_separate_devices_names_where_to_look_and_marks_no_row() {
    let mut runs = table_one();
    runs[4].mb_per_s = 60.0;
    runs[4].stages.writer_wait_pct = 95.0;
    runs[4].stages.writer_waits = 100;
    let survey = Survey {
        source_bytes: 1,
        source_files: 1,
        shares_device: false,
        provenance: None,
        target_discards: false,
        reduction: None,
    };
    let verdict = verdict(&runs, Some(&survey));
    assert_eq!(
        verdict.component,
        Some(Component::Source),
        "{}",
        verdict.sentence()
    );
    assert!(verdict.rows.iter().all(|row| row.bottleneck != Some(true)));
    let sentence = verdict.sentence();
    assert!(
        sentence.starts_with("No one component limits the backup")
            && sentence.contains("the source is the first place to look"),
        "{sentence}"
    );
}

#[test]
fn a_slow_source_is_the_bottleneck() {
    let mut runs = table_one();
    runs[2].mb_per_s = 120.0;
    runs[4].mb_per_s = 118.0;
    let verdict = verdict(&runs, None);
    assert_eq!(verdict.component, Some(Component::Source));
    assert!(
        verdict
            .recommendations()
            .iter()
            .any(|r| r.contains("source-bound"))
    );
}

#[test]
fn stage_accounting_names_the_side_behind() {
    let mut stages = StageFigures {
        reader_wait_pct: 80.0,
        reader_waits: 400,
        ..StageFigures::default()
    };
    assert_eq!(stage_attribution(&stages).limited_by, Side::Target);
    stages.reader_wait_pct = 1.0;
    stages.writer_wait_pct = 70.0;
    assert_eq!(stage_attribution(&stages).limited_by, Side::Source);
    stages.writer_wait_pct = 10.0;
    assert_eq!(stage_attribution(&stages).limited_by, Side::Balanced);
}

#[test]
fn an_invalid_run_makes_the_verdict_inconclusive_with_the_runs_to_redo() {
    use crate::engine::validity::{Flag, FlagCode, Validity};
    let mut runs = table_one();
    runs[0].validity = Some(Validity {
        valid: false,
        flags: vec![Flag {
            code: FlagCode::TooShort,
            detail: "0.8 s of samples".into(),
        }],
    });
    let verdict = verdict(&runs, None);
    assert!(!verdict.conclusive);
    // The candidate is still named, but no row says Yes and nothing but the redo is advised.
    assert_eq!(verdict.component, Some(Component::Target));
    assert!(verdict.rows.iter().all(|row| row.bottleneck != Some(true)));
    assert_eq!(
        verdict.advice,
        vec![Advice::Redo(Redo {
            test: TestKind::TapeWrite,
            flags: vec![FlagCode::TooShort],
            changes: vec![remedy::Change {
                field: "params.duration_s".into(),
                value: "\"auto\"".into(),
                cli: "--duration auto".into(),
            }],
        })]
    );
    assert!(
        verdict.sentence().starts_with("Inconclusive"),
        "{}",
        verdict.sentence()
    );
    assert_eq!(
        verdict.recommendations()[0],
        "Redo the target write (too_short): set params.duration_s to \"auto\" \
         (--duration auto)."
    );
}

/// A run that was already `auto` (until steady, capped at 60 s) and ended unsteady at its
/// cap is not told to set `auto`: its redo asks for a longer run, twice the cap.
#[test]
fn a_run_already_auto_is_told_to_run_longer_not_to_set_auto() {
    use crate::engine::validity::FlagCode;
    let mut runs = table_one();
    runs[0] = flagged(runs[0].clone(), &[FlagCode::Unsteady]);
    runs[0].params.until_steady = true;
    runs[0].params.time_based = true;
    runs[0].params.duration_s = Some(60.0);
    runs[0].seconds = 60.0;
    let verdict = verdict(&runs, None);
    let redo = verdict
        .advice
        .iter()
        .find_map(|advice| match advice {
            Advice::Redo(redo) if redo.test == TestKind::TapeWrite => Some(redo),
            _ => None,
        })
        .expect("the target write is redone");
    assert_eq!(
        redo.changes,
        vec![remedy::Change {
            field: "params.duration_s".into(),
            value: "120".into(),
            cli: "--duration 120".into(),
        }]
    );
    assert!(
        verdict
            .recommendations()
            .iter()
            .all(|r| !r.contains("auto")),
        "{:?}",
        verdict.recommendations()
    );
}

/// A row none of whose runs is valid is never marked "Yes", whatever the verdict rests
/// on: it says how many of its runs are valid instead.
#[test]
fn a_row_with_no_valid_run_is_not_marked_yes() {
    use crate::engine::validity::FlagCode;
    for flag in [FlagCode::DriveBufferNotFilled, FlagCode::TooShort] {
        let mut runs = table_one();
        runs[0] = flagged(runs[0].clone(), &[flag]);
        let verdict = verdict(&runs, None);
        let target = &verdict.rows[0];
        assert_eq!(target.test, TestKind::TapeWrite);
        assert_eq!(target.runs_valid, 0);
        assert_ne!(
            target.bottleneck,
            Some(true),
            "{flag:?}: {}",
            verdict.sentence()
        );
        assert_eq!(
            target.bottleneck_word(),
            "not yet: 0 of 1 valid",
            "{flag:?}: {}",
            verdict.sentence()
        );
    }
}

/// A drive fed too slowly (a feed what-if: streams capped at 15 MB/s) gets one count of
/// streams, from one rule and one per-stream rate: what keeps the drive streaming and
/// what reaches the target's full rate, in one piece of advice, never a second count
/// worked out from another figure beside it.
#[test]
fn a_slow_feed_gets_its_stream_counts_from_one_rule() {
    let mut full = tape(run(TestKind::FullBackup, 30.0, 5.0), 1);
    full.seconds = 10.0;
    if let Some(tape) = full.tape.as_mut() {
        tape.backhitches = 1;
        tape.repositioning_s = 2.0;
    }
    let runs = vec![
        tape(run(TestKind::TapeWrite, 240.0, 3.0), 1),
        run(TestKind::ReadSingle, 15.0, 2.0),
        run(TestKind::ReadParallel, 30.0, 5.0),
        full,
    ];
    let verdict = verdict(&runs, None);
    assert!(matches!(verdict.finding, Finding::ShoeShine(_)));
    assert!(verdict.conclusive, "{}", verdict.sentence());
    let counts: Vec<(u64, Option<(f64, u64)>)> = verdict
        .advice
        .iter()
        .filter_map(|advice| match advice {
            Advice::FeedTheDrives {
                streams_needed,
                full_speed,
                ..
            } => Some((*streams_needed, *full_speed)),
            _ => None,
        })
        .collect();
    // 2 streams gave 30 MB/s: 15 each; the drive streams from 80 MB/s (40 × 2:1), the
    // target takes 240.
    assert_eq!(counts, vec![(6, Some((240.0, 16)))]);
    assert!(
        !verdict
            .advice
            .iter()
            .any(|advice| matches!(advice, Advice::ParallelStreams { .. })),
        "{:?}",
        verdict.recommendations()
    );
    let recommendations = verdict.recommendations();
    let naming: Vec<&String> = recommendations
        .iter()
        .filter(|line| line.contains(" streams"))
        .collect();
    assert_eq!(naming.len(), 1, "{naming:?}");
}

fn flagged(mut run: RunResult, codes: &[crate::engine::validity::FlagCode]) -> RunResult {
    use crate::engine::validity::{Flag, Validity};
    run.validity = Some(Validity {
        valid: codes.is_empty(),
        flags: codes
            .iter()
            .map(|code| Flag {
                code: *code,
                detail: String::new(),
            })
            .collect(),
    });
    run
}
