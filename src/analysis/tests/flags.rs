//! Flags with a direction: which flags on the runs a finding rests on can overturn it.

use super::*;

#[test]
fn a_backup_at_its_ceiling_is_not_vetoed_by_unsteady_faster_components() {
    use crate::engine::validity::FlagCode;
    let runs = vec![
        run(TestKind::TapeWrite, 233.7, 3.0),
        flagged(
            run(TestKind::ReadParallel, 900.0, 9.0),
            &[FlagCode::Unsteady],
        ),
        flagged(
            run(TestKind::NullSink, 700.0, 18.0),
            &[FlagCode::TooShort, FlagCode::BusyMachine],
        ),
        run(TestKind::FullBackup, 238.8, 13.0),
    ];
    let verdict = verdict(&runs, None);
    assert!(verdict.conclusive, "{}", verdict.sentence());
    assert_eq!(verdict.component, Some(Component::Target));
    // The same flags on a backup far below the faster components still stand aside,
    // while a flag that can lower the named ceiling's rival below it still overturns.
    let rival = vec![
        run(TestKind::TapeWrite, 233.7, 3.0),
        flagged(
            run(TestKind::ReadParallel, 240.0, 9.0),
            &[FlagCode::CacheResident],
        ),
        run(TestKind::NullSink, 700.0, 18.0),
        flagged(
            run(TestKind::FullBackup, 215.0, 13.0),
            &[FlagCode::CacheResident],
        ),
    ];
    assert!(!super::verdict(&rival, None).conclusive);
}

/// A feed capped at 2 × 20 MB/s into a target test that ran unsteady far above it: the
/// advice sizes the feed from the target's floor (what it moved), not from nothing.
#[test]
fn advice_uses_a_flagged_figure_at_the_least_its_flags_allow() {
    use crate::engine::validity::FlagCode;
    let capped = |test, mb_per_s| {
        let mut run = run(test, mb_per_s, 5.0);
        run.params.source_rate_mb_s = Some(20.0);
        run
    };
    let mut target = flagged(
        run(TestKind::TapeWrite, 13_665.0, 40.0),
        &[FlagCode::Unsteady],
    );
    target.mb_per_s = 12_000.0;
    let mut single = capped(TestKind::ReadSingle, 20.0);
    single.params.streams = 1;
    let runs = vec![
        target,
        single,
        capped(TestKind::ReadParallel, 39.9),
        capped(TestKind::NullSink, 39.9),
        capped(TestKind::FullBackup, 39.9),
    ];
    let verdict = verdict(&runs, None);
    assert!(verdict.conclusive, "{}", verdict.sentence());
    assert_eq!(verdict.component, Some(Component::Source));
    let bound = verdict.advice.iter().find_map(|advice| match advice {
        Advice::SourceBound { target_mb_s, .. } => Some(*target_mb_s),
        _ => None,
    });
    assert_eq!(bound, Some(12_000.0), "{:#?}", verdict.advice);
    // A flag that leaves the target no floor leaves the advice out.
    let mut runs = runs;
    runs[0] = flagged(
        run(TestKind::TapeWrite, 13_665.0, 40.0),
        &[FlagCode::CacheResident],
    );
    let verdict = super::verdict(&runs, None);
    assert!(
        !verdict
            .advice
            .iter()
            .any(|advice| matches!(advice, Advice::SourceBound { .. })),
        "{:#?}",
        verdict.advice
    );
}

/// Table 1 with an emulated drive that made its feed wait, every run flagged busy.
pub(super) fn busy_table_one(drive_paced: bool) -> Vec<RunResult> {
    use crate::engine::validity::FlagCode;
    table_one()
        .into_iter()
        .map(|mut run| {
            if run.test == TestKind::TapeWrite && drive_paced {
                run = tape(run, 1);
                run.stages.reader_wait_pct = 90.0;
                run.stages.reader_waits = 900;
            }
            flagged(run, &[FlagCode::BusyMachine])
        })
        .collect()
}

#[test]
fn other_work_cannot_unseat_a_target_that_set_its_own_pace() {
    use crate::engine::validity::FlagCode;
    use weight::Weight;
    let verdict = verdict(&busy_table_one(true), None);
    assert!(verdict.conclusive, "{}", verdict.sentence());
    assert_eq!(verdict.component, Some(Component::Target));
    let weight_of = |test: TestKind| {
        verdict
            .basis
            .iter()
            .find(|basis| basis.test == test)
            .map(|basis| basis.flags[0])
    };
    assert_eq!(
        weight_of(TestKind::TapeWrite).map(|f| f.weight),
        Some(Weight::DevicePaced)
    );
    // The full backup and the higher ceilings could only be faster without other work.
    for test in [
        TestKind::FullBackup,
        TestKind::ReadParallel,
        TestKind::NullSink,
    ] {
        assert_eq!(
            weight_of(test),
            Some(weight::FlagWeight {
                flag: FlagCode::BusyMachine,
                weight: Weight::OnlyHigher
            }),
            "{test}"
        );
    }
    assert_eq!(verdict.caveats().len(), 4, "{:?}", verdict.caveats());
    assert!(verdict.caveats()[0].starts_with("busy_machine on the target write cannot change"));
}

#[test]
fn other_work_on_a_ceiling_the_lab_paced_still_asks_for_a_redo() {
    use crate::engine::validity::FlagCode;
    let verdict = verdict(&busy_table_one(false), None);
    assert!(!verdict.conclusive);
    // Only the named ceiling could move the finding: a faster target write might leave
    // the backup below it.
    assert_eq!(
        verdict.advice,
        vec![Advice::Redo(Redo {
            test: TestKind::TapeWrite,
            flags: vec![FlagCode::BusyMachine],
            changes: Vec::new(),
        })]
    );
    assert!(verdict.caveats().is_empty());
}

#[test]
fn a_full_drive_buffer_cannot_make_a_drive_far_faster_than_the_feed_the_limit() {
    use crate::engine::validity::FlagCode;
    use weight::Weight;
    // A 30 MB/s source into one drive of 120 MB/s native that never filled its buffer.
    let full = |mb_per_s: f64| {
        flagged(
            tape(run(TestKind::FullBackup, mb_per_s, 5.0), 1),
            &[FlagCode::DriveBufferNotFilled],
        )
    };
    let runs = |mb_per_s: f64| {
        vec![
            tape(run(TestKind::TapeWrite, 240.0, 3.0), 1),
            run(TestKind::ReadParallel, mb_per_s, 5.0),
            run(TestKind::NullSink, mb_per_s, 5.0),
            full(mb_per_s),
        ]
    };
    let slow = verdict(&runs(30.0), None);
    assert!(slow.conclusive, "{}", slow.sentence());
    assert_eq!(slow.component, Some(Component::Source));
    let on_full = slow
        .basis
        .iter()
        .find(|basis| basis.test == TestKind::FullBackup)
        .map(|basis| basis.flags[0].weight);
    assert_eq!(on_full, Some(Weight::DriveRateKnown { native_mb_s: 120.0 }));
    // A feed close to the drive's native rate: the drive may be what limits.
    let close = verdict(&runs(115.0), None);
    assert!(!close.conclusive, "{}", close.sentence());
}

#[test]
fn other_work_can_overturn_a_backup_found_below_every_ceiling() {
    use crate::engine::validity::FlagCode;
    let mut runs = table_one();
    runs[4] = flagged(
        run(TestKind::FullBackup, 90.0, 13.0),
        &[FlagCode::BusyMachine],
    );
    let verdict = verdict(&runs, None);
    assert!(matches!(verdict.finding, Finding::Interference { .. }));
    assert!(!verdict.conclusive);
}

#[test]
fn a_shoe_shining_drive_names_the_feed_and_leaves_its_cycle_rate_open() {
    use crate::engine::validity::FlagCode;
    let mut full = tape(run(TestKind::FullBackup, 30.0, 5.0), 1);
    full.seconds = 10.0;
    if let Some(tape) = full.tape.as_mut() {
        tape.backhitches = 1;
        tape.repositioning_s = 2.0;
    }
    let runs = |source_mb_s: f64, flags: &[FlagCode]| {
        vec![
            tape(run(TestKind::TapeWrite, 240.0, 3.0), 1),
            run(TestKind::ReadParallel, source_mb_s, 5.0),
            flagged(full.clone(), flags),
        ]
    };
    // Too short to judge the backup's own figure: a source that could feed the drives
    // might have, so the run is redone; one that reads at 30 MB/s on its own cannot.
    let both = [FlagCode::TooShort, FlagCode::TooFewDriveCycles];
    assert!(!verdict(&runs(300.0, &both), None).conclusive);
    assert!(verdict(&runs(30.0, &both), None).conclusive);
    // Other work beside a read capped at 30 MB/s: it read at its cap, so it could not have
    // fed the drives either.
    let mut busy = runs(30.0, &both);
    busy[1].params.source_rate_mb_s = Some(15.0);
    busy[1] = flagged(busy[1].clone(), &[FlagCode::BusyMachine]);
    assert!(verdict(&busy, None).conclusive);
    busy[1].params.source_rate_mb_s = Some(100.0);
    assert!(
        !verdict(&busy, None).conclusive,
        "below its cap: it might have been faster"
    );
    let verdict = verdict(&runs(300.0, &[FlagCode::TooFewDriveCycles]), None);
    assert!(matches!(verdict.finding, Finding::ShoeShine(_)));
    assert!(verdict.conclusive, "{}", verdict.sentence());
    assert_eq!(
        verdict.open,
        vec![weight::OpenClaim::ShoeShining {
            test: TestKind::FullBackup,
            needs_s: 40.0
        }]
    );
    assert!(
        verdict
            .caveats()
            .iter()
            .any(|line| line.starts_with("Not yet certain: shoe-shining")),
        "{:?}",
        verdict.caveats()
    );
}

#[test]
fn a_figure_resting_on_some_of_its_runs_says_how_many() {
    use crate::engine::validity::FlagCode;
    let mut runs = table_one();
    for _ in 0..2 {
        let mut again = flagged(run(TestKind::TapeWrite, 150.0, 3.0), &[FlagCode::Unsteady]);
        again.params = runs[0].params.clone();
        runs.push(again);
    }
    let verdict = verdict(&runs, None);
    let row = &verdict.rows[0];
    assert_eq!((row.repeats, row.runs_total), (1, 3));
    assert_eq!(row.valid_words().as_deref(), Some("1 of 3 valid"));
    assert_eq!(
        verdict.rows[1].valid_words().as_deref(),
        Some("1 of 1 valid")
    );
}

#[test]
fn a_full_backup_faster_than_its_ceiling_is_not_a_verdict() {
    let mut runs = table_one();
    runs[4].mb_per_s = 200.0;
    let verdict = verdict(&runs, None);
    assert!(!verdict.conclusive);
    assert!(
        matches!(verdict.finding, Finding::FullOutranCeiling { .. }),
        "{:?}",
        verdict.finding
    );
    assert!(
        verdict
            .sentence()
            .starts_with("Inconclusive: the full backup"),
        "{}",
        verdict.sentence()
    );
    assert!(
        verdict.sentence().contains("longer runs"),
        "{}",
        verdict.sentence()
    );
}

#[test]
fn a_backup_that_outran_a_ceiling_measured_once_is_measured_again_in_turn() {
    use super::follow_up::{FOLLOW_UP_RUNS, FollowUp};
    let mut runs = table_one();
    runs[4].mb_per_s = 200.0;
    let outran = verdict(&runs, None);
    let follow_up = FollowUp::of(&outran).expect("a follow-up");
    assert_eq!(follow_up.tests, [TestKind::TapeWrite, TestKind::FullBackup]);
    assert_eq!(follow_up.rounds, FOLLOW_UP_RUNS - 1);
    assert_eq!(
        follow_up.words(),
        "measuring the target write and the full backup twice more each, in turn, so \
         both meet the same conditions"
    );
    // Measured in turn: the medians tell the two apart, and no further step is asked.
    for _ in 0..follow_up.rounds {
        runs.push(run(TestKind::TapeWrite, 154.0, 3.0));
        runs.push(run(TestKind::FullBackup, 150.0, 13.0));
    }
    let again = verdict(&runs, None);
    assert!(
        matches!(again.finding, Finding::Limits { .. }),
        "{:?}",
        again.finding
    );
    assert_eq!(FollowUp::of(&again), None);
    // A verdict that stands asks for nothing.
    assert_eq!(FollowUp::of(&verdict(&table_one(), None)), None);
}

#[test]
fn a_backup_that_outran_a_ceiling_is_not_repeated_for_a_flag_a_repeat_brings_back() {
    use super::follow_up::FollowUp;
    use crate::engine::validity::FlagCode;
    let outran = |flags: &[FlagCode]| {
        let mut runs = table_one();
        runs[4].mb_per_s = 200.0;
        runs[0] = flagged(run(TestKind::TapeWrite, 154.0, 3.0), flags);
        verdict(&runs, None)
    };
    // Noise may pass: the two are measured again in turn.
    let unsteady = outran(&[FlagCode::Unsteady]);
    assert!(
        matches!(unsteady.finding, Finding::FullOutranCeiling { .. }),
        "{:?}",
        unsteady.finding
    );
    assert!(FollowUp::of(&unsteady).is_some());
    // Data smaller than the run comes back on every repeat: the redo says what to change.
    let small = outran(&[FlagCode::DataSmallerThanRun]);
    assert!(
        matches!(small.finding, Finding::FullOutranCeiling { .. }),
        "{:?}",
        small.finding
    );
    assert_eq!(FollowUp::of(&small), None);
}

#[test]
fn repeats_give_the_median_and_its_spread() {
    let mut runs = table_one();
    let mut again = run(TestKind::TapeWrite, 160.0, 3.0);
    again.params = runs[0].params.clone();
    runs.push(again);
    let mut third = run(TestKind::TapeWrite, 150.0, 3.0);
    third.params = runs[0].params.clone();
    runs.push(third);
    let verdict = verdict(&runs, None);
    let row = &verdict.rows[0];
    assert_eq!(row.mb_per_s, Some(154.0));
    assert_eq!(row.repeats, 3);
    let spread = row.spread_pct.expect("spread of three");
    assert!((spread - 5.0 / 154.0 * 100.0).abs() < 0.01, "{spread}");
    assert_eq!(verdict.rows[1].spread_pct, None);
}

#[test]
fn failed_runs_do_not_count() {
    let mut runs = table_one();
    runs[0].status = RunStatus::Failed;
    let verdict = verdict(&runs, None);
    assert_eq!(verdict.rows[0].mb_per_s, None);
    assert_ne!(verdict.component, Some(Component::Target));
}
