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
