//! The verdict for a backup tool: its own backup's use of the CPU names it even when its
//! ceiling's run went faster.

use super::*;
use crate::engine::tool::{ToolFigures, ToolShape};

/// A tool run that kept `cores_used` of two cores busy, its busiest thread `busiest_pct` of the
/// time.
fn tool_run(test: TestKind, mb_per_s: f64, cores_used: f64, busiest_pct: f64) -> RunResult {
    let mut run = run(test, mb_per_s, 100.0 * cores_used / 2.0);
    run.tool = Some(ToolFigures {
        name: "tar-zstd".to_string(),
        version: "zstd 1.5".to_string(),
        shape: ToolShape::Stream,
        params: Default::default(),
        source_files: 10,
        source_bytes: run.bytes,
        in_memory: test == TestKind::ToolCeiling,
        cpu_user_s: cores_used,
        cpu_system_s: 0.0,
        cores_used,
        max_cores_used: cores_used,
        cores: 2,
        busiest_thread_pct: busiest_pct,
        peak_rss_bytes: 1 << 20,
        stored_bytes: Some(run.bytes / 3),
        added_bytes: None,
        changed_files: None,
        changed_bytes: None,
        verified: None,
        pressure: None,
        life: None,
        requests: None,
        requests_not_counted: None,
        stored_objects: None,
    });
    run
}

/// Source and target far above a tool whose backup reached only 70 % of its ceiling.
fn slow_tool(busiest_pct: f64) -> Vec<RunResult> {
    vec![
        run(TestKind::TapeWrite, 300.0, 20.0),
        run(TestKind::ReadParallel, 1000.0, 20.0),
        tool_run(TestKind::ToolCeiling, 4.0, 1.0, 99.0),
        tool_run(TestKind::ToolBackup, 2.8, busiest_pct / 100.0, busiest_pct),
    ]
}

/// Source and target on one device.
fn shared() -> Survey {
    Survey {
        shares_device: true,
        ..Survey::default()
    }
}

#[test]
fn a_tool_held_by_its_one_thread_limits_though_its_ceiling_went_faster() {
    let verdict = verdict(&slow_tool(97.0), Some(&shared()));
    assert_eq!(
        verdict.component,
        Some(Component::Tool),
        "{}",
        verdict.sentence()
    );
    assert!(
        verdict.sentence().contains("limits the backup"),
        "{}",
        verdict.sentence()
    );
}

/// The other way round: its backup held by one thread ran faster than its ceiling's run (the
/// CPU gave more at another moment): the tool still limits, the gap said, not an outrun
/// ceiling left inconclusive.
#[test]
fn a_tool_held_by_its_one_thread_limits_though_its_backup_went_faster_than_its_ceiling() {
    let runs = vec![
        run(TestKind::TapeWrite, 300.0, 20.0),
        run(TestKind::ReadParallel, 1000.0, 20.0),
        tool_run(TestKind::ToolCeiling, 8.8, 1.0, 99.0),
        tool_run(TestKind::ToolBackup, 10.8, 1.01, 95.0),
    ];
    let limited = verdict(&runs, None);
    assert!(
        matches!(&limited.finding, Finding::Limits { ceiling, above, .. }
            if ceiling.component == Component::Tool && !above.is_empty()),
        "{:?}",
        limited.finding
    );
    assert!(limited.conclusive, "{}", limited.sentence());
    // Held by nothing, the same gap leaves the ceiling outrun.
    let mut idle = runs.clone();
    idle[3] = tool_run(TestKind::ToolBackup, 10.8, 0.4, 40.0);
    assert!(matches!(
        verdict(&idle, None).finding,
        Finding::FullOutranCeiling { .. }
    ));
}

#[test]
fn a_tool_that_waited_below_its_ceiling_is_interference() {
    let verdict = verdict(&slow_tool(40.0), Some(&shared()));
    assert_eq!(
        verdict.component,
        Some(Component::SharedDevice),
        "{}",
        verdict.sentence()
    );
}

/// A tool test of `name`, its run naming the tool as the campaign's plan does.
fn named_tool_run(name: &str, test: TestKind, mb_per_s: f64, cores_used: f64) -> RunResult {
    let mut run = tool_run(test, mb_per_s, cores_used, 40.0);
    run.params.tool = Some(crate::engine::tool::ToolRun {
        name: name.to_string(),
        params: Default::default(),
    });
    if let Some(figures) = run.tool.as_mut() {
        figures.name = name.to_string();
        figures.version = format!("{name} 1.0");
    }
    run
}

/// Three tools on one source and target, each with a ceiling and a backup of its own: restic
/// slow on its own, borg reaching the target, tar-zstd far below everything.
fn three_tools() -> Vec<RunResult> {
    let mut runs = vec![
        run(TestKind::TapeWrite, 180.0, 20.0),
        run(TestKind::ReadParallel, 1000.0, 20.0),
    ];
    for (name, ceiling, backup, incremental, restore) in [
        ("restic", 68.5, 66.0, 300.0, 148.2),
        ("borg", 270.0, 175.0, 400.0, 120.0),
        ("tar-zstd", 900.0, 60.0, 500.0, 190.5),
    ] {
        runs.push(named_tool_run(name, TestKind::ToolCeiling, ceiling, 1.0));
        runs.push(named_tool_run(name, TestKind::ToolBackup, backup, 1.0));
        runs.push(named_tool_run(
            name,
            TestKind::ToolIncremental,
            incremental,
            1.0,
        ));
        runs.push(named_tool_run(name, TestKind::ToolRestore, restore, 1.0));
    }
    runs
}

/// Tools compared are never mixed: each is judged against its own ceiling (and the shared
/// ones), its rows carry its name, its restore is set beside its own backup, and the
/// campaign's sentence is a comparison, not one tool's figure against another's ceiling.
#[test]
fn tools_compared_are_each_judged_against_their_own_ceiling() {
    let verdict = verdict(&three_tools(), None);
    let names: Vec<&str> = verdict
        .tools
        .iter()
        .map(|line| line.label.as_str())
        .collect();
    assert_eq!(names, ["restic", "borg", "tar-zstd"]);
    assert_eq!(verdict.by_tool.len(), 3);
    let line = |name: &str| {
        verdict
            .tools
            .iter()
            .find(|line| line.label == name)
            .expect("a line per tool")
    };
    // Each line carries its own tool's figures, never another's best.
    assert_eq!(line("restic").ceiling_mb_s, Some(68.5));
    assert_eq!(line("borg").ceiling_mb_s, Some(270.0));
    assert_eq!(line("borg").backup_mb_s, Some(175.0));
    assert_eq!(line("tar-zstd").restore_mb_s, Some(190.5));
    assert_eq!(line("restic").restore_mb_s, Some(148.2));
    // restic reached its own ceiling (96 %): the tool limits; borg reached the target's
    // (97 %): the target limits; tar-zstd is far below every ceiling.
    assert_eq!(line("restic").component, Some(Component::Tool));
    assert_eq!(line("borg").component, Some(Component::Target));
    assert_ne!(line("tar-zstd").component, Some(Component::Tool));
    for (line, own) in verdict.tools.iter().zip(&verdict.by_tool) {
        let sentence = own.sentence();
        let name = &line.tool.name;
        assert!(
            sentence.contains(&format!("{name}'s backup"))
                || sentence.contains(&format!("{}'s backup", crate::analysis::capitalize(name))),
            "{}: {sentence}",
            line.label
        );
        for other in verdict
            .tools
            .iter()
            .filter(|other| other.label != line.label)
        {
            assert!(
                !sentence.contains(&format!("{}'s", other.tool.name)),
                "{}'s verdict names {}: {sentence}",
                line.label,
                other.label
            );
        }
        let restore = own.restore.as_ref().expect("each tool's restore line");
        assert_eq!(Some(restore.mb_per_s), line.restore_mb_s);
        assert_eq!(restore.backup.map(|(_, mb)| mb), line.backup_mb_s);
    }
    // borg's verdict sets its backup against borg's own ceiling, not restic's.
    let borg = &verdict.by_tool[1].sentence();
    assert!(borg.contains("175.0"), "{borg}");
    assert!(!borg.contains("68.5"), "{borg}");
    // The campaign's rows: the shared ones once, and each tool's named by it.
    let labels: Vec<&str> = verdict.rows.iter().map(|row| row.label.as_str()).collect();
    for name in ["restic", "borg", "tar-zstd"] {
        assert_eq!(
            labels
                .iter()
                .filter(|label| label.ends_with(&format!("({name})")))
                .count(),
            4,
            "{labels:?}"
        );
    }
    assert_eq!(verdict.restore, None, "no restore line set across tools");
    assert_eq!(verdict.component, None);
    let sentence = verdict.sentence();
    assert!(sentence.starts_with("3 tools compared"), "{sentence}");
    assert!(
        sentence.contains("restic's backup (66.0 MB/s) is limited by restic itself"),
        "{sentence}"
    );
    assert!(
        sentence.contains("borg's backup (175.0 MB/s) is limited by the target"),
        "{sentence}"
    );
    // Each tool's best point is its own: every tool test point of each tool is its best.
    let points = crate::analysis::points::points(&crate::analysis::points::RunEntry::of_results(
        &three_tools(),
    ));
    assert!(
        points
            .iter()
            .filter(|point| point.test.runs_tool())
            .all(|point| point.best),
        "one point per tool and test, each its tool's best"
    );
}

/// A tool held by one thread gets a "What to change" naming its own setting for more
/// threads, with the value to try and the spec field.
#[test]
fn a_tool_held_by_one_thread_is_told_to_use_its_threads_setting() {
    let mut runs = slow_tool(97.0);
    if let Some(figures) = runs[3].tool.as_mut() {
        figures.params.insert(
            "threads".into(),
            crate::engine::tool::ParamValue::Integer(1),
        );
        figures
            .params
            .insert("level".into(), crate::engine::tool::ParamValue::Integer(19));
    }
    let verdict = verdict(&runs, Some(&shared()));
    assert_eq!(verdict.component, Some(Component::Tool));
    let advice = verdict.recommendations().join("\n");
    assert!(
        advice.contains(
            "tar-zstd:threads=2 (now 1; `--tool tar-zstd:threads=2`, tool.params.threads)"
        ),
        "{advice}"
    );
}
