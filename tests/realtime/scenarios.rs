//! Known bottlenecks, built with real runs: each scenario is a spec in `tests/scenarios/`
//! (runnable as `backlab run tests/scenarios/NAME.json`), and each test asserts the verdict it
//! must give, its component, and that the advice agrees with it.

use std::path::{Path, PathBuf};

use backlab::analysis::{Advice, Component, Finding, Verdict};
use backlab::engine::validity::FlagCode;
use backlab::spec::TestKind;
use backlab::views::report::CampaignReport;

use crate::support::{Turn, backlab, scratch};

fn spec(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scenarios")
        .join(format!("{name}.json"))
}

/// Runs a scenario with `backlab run --json`, with extra flags.
fn run(turn: &Turn, name: &str, extra: &[&str]) -> CampaignReport {
    crate::support::run(turn, &spec(name), extra)
}

/// Flags that say the machine was not quiet, not that the run was wrongly shaped.
fn environmental(flag: FlagCode) -> bool {
    matches!(flag, FlagCode::BusyMachine | FlagCode::Unsteady)
}

/// The verdict names `component`; when it is inconclusive, only because the machine was busy.
pub fn assert_names(name: &str, verdict: &Verdict, component: Component) {
    assert_eq!(
        verdict.component,
        Some(component),
        "{name}: {}\n{:#?}",
        verdict.sentence(),
        verdict.rows
    );
    if !verdict.conclusive {
        let redo = redo_of(verdict);
        assert!(
            !redo.is_empty()
                && redo
                    .iter()
                    .all(|r| r.flags.iter().all(|f| environmental(*f))),
            "{name}: inconclusive for a reason of the run's own: {}\n{:#?}",
            verdict.sentence(),
            verdict.rows
        );
        eprintln!(
            "{name}: inconclusive on this busy machine: {}",
            verdict.sentence()
        );
    }
}

/// The runs the verdict asks to redo.
fn redo_of(verdict: &Verdict) -> Vec<&backlab::analysis::Redo> {
    verdict
        .advice
        .iter()
        .filter_map(|advice| match advice {
            Advice::Redo(redo) => Some(redo),
            _ => None,
        })
        .collect()
}

fn has(verdict: &Verdict, wanted: impl Fn(&Advice) -> bool) -> bool {
    verdict.advice.iter().any(wanted)
}

fn figure(report: &CampaignReport, test: TestKind) -> f64 {
    report
        .bottleneck
        .rows
        .iter()
        .find(|row| row.test == test)
        .and_then(|row| row.mb_per_s)
        .unwrap_or_else(|| panic!("no figure for {test}"))
}

/// Advice that only a source-side (or feed) verdict may give.
fn blames_the_feed(advice: &Advice) -> bool {
    matches!(
        advice,
        Advice::SourceBound { .. } | Advice::FeedTheDrives { .. } | Advice::WriterWaited { .. }
    )
}

#[test]
fn a_slow_emulated_target_is_named() {
    let turn = Turn::alone();
    let report = run(&turn, "slow_target", &[]);
    let verdict = &report.bottleneck;
    assert_names("slow_target", verdict, Component::Target);
    assert!(
        matches!(verdict.finding, Finding::Limits { .. }),
        "{:?}",
        verdict.finding
    );
    if verdict.conclusive {
        assert!(has(verdict, |a| matches!(
            a,
            Advice::TargetAtFullSpeed { .. }
        )));
    }
    assert!(!has(verdict, blames_the_feed), "{:#?}", verdict.advice);
}

#[test]
fn a_slow_source_is_named_and_its_what_if_leaves_the_target_test_alone() {
    let turn = Turn::alone();
    let report = run(&turn, "slow_source", &[]);
    let verdict = &report.bottleneck;
    assert_names("slow_source", verdict, Component::Source);
    // The what-if caps reads at 2 × 20 MB/s; the target's own test is not capped by it.
    let (sp, t) = (
        figure(&report, TestKind::ReadParallel),
        figure(&report, TestKind::TapeWrite),
    );
    assert!((30.0..=44.0).contains(&sp), "read_parallel {sp} MB/s");
    assert!(
        t > 5.0 * sp,
        "tape_write {t} MB/s against read_parallel {sp}"
    );
    assert!(
        !has(verdict, |a| matches!(a, Advice::TargetAtFullSpeed { .. })),
        "{:#?}",
        verdict.advice
    );
    if verdict.conclusive {
        assert!(has(verdict, |a| matches!(a, Advice::SourceBound { .. })));
        assert!(has(verdict, |a| matches!(
            a,
            Advice::ParallelStreams { .. }
        )));
    }
}

#[test]
fn a_feed_below_the_lowest_speed_step_shoe_shines() {
    let turn = Turn::shared();
    let report = run(&turn, "shoe_shine", &[]);
    let verdict = &report.bottleneck;
    assert_names("shoe_shine", verdict, Component::Source);
    assert!(
        matches!(verdict.finding, Finding::ShoeShine(_)),
        "{:?}",
        verdict.finding
    );
    if verdict.conclusive {
        assert!(has(verdict, |a| matches!(a, Advice::FeedTheDrives { .. })));
    }
    assert!(
        !has(verdict, |a| matches!(a, Advice::TargetAtFullSpeed { .. })),
        "{:#?}",
        verdict.advice
    );
}

#[test]
fn two_drives_fed_by_many_streams_are_the_limit() {
    let turn = Turn::alone();
    let report = run(&turn, "two_drives", &[]);
    let verdict = &report.bottleneck;
    assert_names("two_drives", verdict, Component::Target);
    let full = figure(&report, TestKind::FullBackup);
    // Two LTO-3 drives take 2 × 80 MB/s × up to 2:1.
    assert!(full > 200.0 && full < 340.0, "full backup {full} MB/s");
    assert!(!has(verdict, blames_the_feed), "{:#?}", verdict.advice);
}

/// Two drives fed above their lowest speed step (4 × 60 MB/s into two LTO-5 drives, whose
/// lowest step takes 40 MB/s × 2:1 each) never shoe-shine: a 10 s run names the feed, the
/// source, conclusively, with no drive-cycle flag and no drive stopping at its start.
#[test]
fn two_drives_fed_above_their_lowest_step_give_a_conclusive_answer_in_10_s() {
    let turn = Turn::shared();
    let report = run(&turn, "two_drives_fed_slowly", &[]);
    let verdict = &report.bottleneck;
    assert_names("two_drives_fed_slowly", verdict, Component::Source);
    assert!(
        !matches!(verdict.finding, Finding::ShoeShine(_)),
        "{}",
        verdict.sentence()
    );
    for run in &report.runs {
        let flags = run
            .validity
            .as_ref()
            .map(|validity| validity.flags.iter().map(|flag| flag.code).collect())
            .unwrap_or_else(Vec::new);
        assert!(
            !flags.contains(&FlagCode::TooFewDriveCycles) && !flags.contains(&FlagCode::TooShort),
            "{}: {flags:?}",
            run.test
        );
    }
    let backup = report
        .runs
        .iter()
        .find(|run| run.test == TestKind::FullBackup)
        .and_then(|run| run.tape.as_ref())
        .expect("the full backup's drives");
    // At most the stop that drains the last buffer, never one at each drive's start.
    assert!(
        backup.backhitches <= u64::from(backup.drives),
        "{} backhitches",
        backup.backhitches
    );
}

/// Seed 003's concurrency, seen from the other side: four streams interleaved on one drive
/// back up at the drive's speed, and a restore of one of them reads all four from tape.
#[test]
fn a_restore_through_interleaved_streams_is_named_slower_than_the_backup() {
    let turn = Turn::shared();
    let report = run(&turn, "restore_interleaved", &[]);
    let verdict = &report.bottleneck;
    let full = figure(&report, TestKind::FullBackup);
    let restore = figure(&report, TestKind::Restore);
    // The drive reads 80 MB/s × 2:1 and a quarter of it is the stream being restored.
    assert!((32.0..=44.0).contains(&restore), "restore {restore} MB/s");
    assert!(
        full > 3.0 * restore,
        "full backup {full} against restore {restore} MB/s"
    );
    let line = verdict.restore.as_ref().expect("a restore line");
    assert_eq!(line.interleaved, 4, "{line:?}");
    assert_eq!(
        line.backup.map(|(test, _)| test),
        Some(TestKind::FullBackup)
    );
    // The default load and locate times of an LTO drive come before the first byte.
    assert_eq!(line.positioning_s, 65.0);
    let words = verdict.restore_words().unwrap_or_default();
    for part in [
        "× slower than the full backup",
        "interleaves 4 streams",
        "loading and locating",
    ] {
        assert!(words.contains(part), "{part:?} missing from: {words}");
    }
    let row = verdict
        .rows
        .iter()
        .find(|row| row.test == TestKind::Restore)
        .expect("a restore row");
    assert_eq!(row.bottleneck, None, "a restore is no candidate bottleneck");
}

#[test]
fn capped_links_are_the_limit_of_a_network_backup() {
    let turn = Turn::shared();
    let report = run(&turn, "network_link", &[]);
    let verdict = &report.bottleneck;
    assert_names("network_link", verdict, Component::Network);
    assert!(has(verdict, |a| matches!(a, Advice::FasterLinks { .. })));
    let n = figure(&report, TestKind::NetworkBackup);
    assert!((30.0..=42.0).contains(&n), "network backup {n} MB/s");
}

#[test]
fn a_target_test_on_data_unlike_the_source_is_explained_not_trusted() {
    let turn = Turn::shared();
    let dir = scratch();
    let source = dir.path().join("typical");
    make_dataset(&source);
    let report = run(&turn, "compress_mismatch", &["--source", path(&source)]);
    let verdict = &report.bottleneck;
    assert!(!verdict.conclusive, "{}", verdict.sentence());
    assert_eq!(
        verdict.component,
        Some(Component::Target),
        "{}",
        verdict.sentence()
    );
    match &verdict.finding {
        Finding::FullOutranCeiling { causes, .. } => assert!(
            causes.iter().any(|cause| matches!(
                cause,
                backlab::analysis::findings::OutranCause::Compressibility { .. }
            )),
            "{causes:?}"
        ),
        other => panic!("expected the full backup to outrun the target test: {other:?}"),
    }
    assert!(has(verdict, |a| matches!(
        a,
        Advice::MatchCompressibility { .. }
    )));
}

#[test]
fn the_target_test_matches_the_source_compressibility_by_default() {
    let turn = Turn::shared();
    let dir = scratch();
    let source = dir.path().join("typical");
    make_dataset(&source);
    let report = run(&turn, "compress_matched", &["--source", path(&source)]);
    let run_of = |test| {
        report
            .runs
            .iter()
            .find(|run| run.test == test)
            .unwrap_or_else(|| panic!("no {test} run"))
    };
    let target = run_of(TestKind::TapeWrite);
    let measured = target
        .data_compress_ratio
        .expect("ratio measured on the source");
    assert!(measured > 1.3, "the typical profile compresses: {measured}");
    let compression = |test| {
        run_of(test)
            .tape
            .as_ref()
            .expect("tape figures")
            .compression
    };
    let (written, backed_up) = (
        compression(TestKind::TapeWrite),
        compression(TestKind::FullBackup),
    );
    assert!(
        (written - backed_up).abs() <= 0.15 * backed_up,
        "target test {written}:1, full backup {backed_up}:1"
    );
    assert!(
        !matches!(report.bottleneck.finding, Finding::FullOutranCeiling { .. }),
        "{}",
        report.bottleneck.sentence()
    );
}

#[test]
fn a_balanced_setup_streams_the_target_at_full_speed() {
    let turn = Turn::shared();
    let report = run(&turn, "balanced", &[]);
    let verdict = &report.bottleneck;
    assert_names("balanced", verdict, Component::Target);
    if verdict.conclusive {
        assert!(has(verdict, |a| matches!(
            a,
            Advice::TargetAtFullSpeed { .. }
        )));
    }
    assert!(!has(verdict, blames_the_feed), "{:#?}", verdict.advice);
}

#[test]
fn a_too_short_campaign_is_inconclusive_and_says_what_to_redo() {
    let turn = Turn::shared();
    let report = run(&turn, "too_short", &[]);
    let verdict = &report.bottleneck;
    assert!(!verdict.conclusive, "{}", verdict.sentence());
    assert!(
        verdict.sentence().starts_with("Inconclusive"),
        "{}",
        verdict.sentence()
    );
    let redo = redo_of(verdict);
    // 64 MB at memory speed is gone long before the 60 s cap: the data ran out.
    assert!(
        redo.iter()
            .all(|r| r.flags.contains(&FlagCode::DataSmallerThanRun)),
        "{redo:?}"
    );
    assert!(
        verdict
            .recommendations()
            .iter()
            .any(|r| r.contains("time_based")),
        "{:?}",
        verdict.recommendations()
    );
    // Nothing but the redo is advised while the figures cannot be trusted.
    assert!(verdict.advice.iter().all(|a| matches!(a, Advice::Redo(_))));
}

#[test]
fn source_and_target_on_one_device_are_named_when_they_compete() {
    let turn = Turn::alone();
    let dir = scratch();
    let (source, target) = (dir.path().join("typical"), dir.path().join("target"));
    make_dataset(&source);
    std::fs::create_dir(&target).expect("target dir");
    let report = run(
        &turn,
        "shared_device",
        &["--source", path(&source), "--target", path(&target)],
    );
    let verdict = &report.bottleneck;
    assert!(
        report.survey.as_ref().is_some_and(|s| s.shares_device),
        "the survey sees one device: {:?}",
        report.survey
    );
    // Where the backup fell below every isolated ceiling, the shared device takes the blame
    // and the advice is to separate them; a device with bandwidth to spare for both lets the
    // backup reach its lowest ceiling, and then that ceiling is the limit.
    match &verdict.finding {
        Finding::Interference { .. } => {
            assert_names("shared_device", verdict, Component::SharedDevice);
            if verdict.conclusive {
                assert!(
                    has(verdict, |a| matches!(a, Advice::SeparateDevice)),
                    "{:#?}",
                    verdict.advice
                );
            }
        }
        Finding::Limits { .. } => {
            eprintln!(
                "shared_device: this device served reads and writes at once without loss: {}",
                verdict.sentence()
            );
            assert!(!has(verdict, |a| matches!(a, Advice::SeparateDevice)));
        }
        other => panic!("{}: {other:?}", verdict.sentence()),
    }
    assert!(
        std::fs::read_dir(&target).expect("target").next().is_none(),
        "the target dir is left empty"
    );
}

fn make_dataset(dir: &Path) {
    let out = backlab()
        .args(["dataset", "create"])
        .arg(dir)
        .args(["--profile", "typical", "--size", "128M", "--seed", "7"])
        .output()
        .expect("backlab starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn path(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}
