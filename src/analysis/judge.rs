//! The verdict put together: the finding, the advice that follows from it, and the table's
//! rows, from each test's best point.

use super::figures::{self, TestFigure};
use super::find::{self, drives};
use super::findings::stage_attribution;
use super::findings::{Component, Drives, Finding, Redo, Shape};
use super::verdict::{NoFigure, RestoreLine, TargetName, Verdict, VerdictRow};
use super::weight::{self, Basis};
use super::{Figures, advise, points, remedy};
use crate::engine::result::RunResult;
use crate::engine::survey::Survey;
use crate::spec::TestKind;

/// The restore's line, from its figure and the run behind it.
fn restore_line(figures: &Figures<'_>, survey: Option<&Survey>) -> Option<RestoreLine> {
    let Some(figure) = figures.get(TestKind::Restore) else {
        return tool_restore_line(figures, survey);
    };
    let restore = figure.run.restore.as_ref()?;
    let bytes = survey
        .map(|survey| survey.source_bytes)
        .filter(|&bytes| bytes > 0)
        .unwrap_or(figure.run.bytes);
    let mb_per_s = figure.mb_per_s;
    let backup = [TestKind::FullBackup, TestKind::NetworkBackup]
        .into_iter()
        .find_map(|test| figures.mb(test).map(|mb| (test, mb)));
    Some(RestoreLine {
        bytes,
        seconds: restore.positioning_s + bytes as f64 / (mb_per_s * 1e6).max(1.0),
        mb_per_s,
        positioning_s: restore.positioning_s,
        from: restore.from.clone(),
        interleaved: restore.interleaved,
        backup,
        flags: figure.flags.clone(),
    })
}

/// A backup tool's restore as the verdict states it: the tool's own restore, verified, and
/// what the same restore of the whole source takes.
fn tool_restore_line(figures: &Figures<'_>, survey: Option<&Survey>) -> Option<RestoreLine> {
    let figure = figures.get(TestKind::ToolRestore)?;
    let tool = figure.run.tool.as_ref()?;
    let bytes = survey
        .map(|survey| survey.source_bytes)
        .filter(|&bytes| bytes > 0)
        .unwrap_or(figure.run.bytes);
    let mb_per_s = figure.mb_per_s;
    Some(RestoreLine {
        bytes,
        seconds: bytes as f64 / (mb_per_s * 1e6).max(1.0),
        mb_per_s,
        positioning_s: 0.0,
        from: format!(
            "{}'s {}",
            tool.name,
            match tool.shape {
                crate::engine::tool::ToolShape::Repository => "repository",
                crate::engine::tool::ToolShape::Stream => "stream",
            }
        ),
        interleaved: 1,
        backup: figures
            .mb(TestKind::ToolBackup)
            .map(|mb| (TestKind::ToolBackup, mb)),
        flags: figure.flags.clone(),
    })
}

/// Builds the verdict from a campaign's points, its runs and the survey of its source. A
/// campaign that compared several backup tools is judged once per tool, each on the shared
/// tests and its own ([`super::tools`]); its verdict is the comparison of those answers.
pub fn judge(
    points: &[points::Point],
    runs: &[points::RunEntry<'_>],
    survey: Option<&Survey>,
) -> Verdict {
    let tools = super::tools::tools_of(points);
    if tools.len() < 2 {
        let mut verdict = judge_one(points, runs, survey);
        verdict.tools = tools
            .first()
            .map(|tool| super::tools::line(tool, points, runs, &verdict))
            .into_iter()
            .collect();
        return verdict;
    }
    let by_tool: Vec<Verdict> = tools
        .iter()
        .map(|tool| {
            let own_points = super::tools::own_points(points, tool);
            let own_runs = super::tools::own_runs(runs, tool);
            let mut verdict = judge_one(&own_points, &own_runs, survey);
            verdict.tools = vec![super::tools::line(tool, &own_points, &own_runs, &verdict)];
            verdict
        })
        .collect();
    compared(by_tool, survey)
}

/// The verdict of a comparison of tools: the shared tests' rows once, each tool's rows named
/// by it, and each tool's answer in the finding. Nothing of one tool is judged against
/// another's: every claim, piece of advice and restore line stays in that tool's own verdict.
fn compared(by_tool: Vec<Verdict>, survey: Option<&Survey>) -> Verdict {
    let tools: Vec<super::tools::ToolLine> = by_tool
        .iter()
        .flat_map(|verdict| verdict.tools.iter().cloned())
        .collect();
    // The shared rows are the same in every tool's verdict; whether one limits differs by
    // tool, so the comparison's table says it on each tool's line, not on the shared row.
    let mut rows: Vec<VerdictRow> = by_tool
        .first()
        .map(|verdict| {
            verdict
                .rows
                .iter()
                .filter(|row| !row.test.runs_tool())
                .cloned()
                .map(|mut row| {
                    row.bottleneck = None;
                    row.candidate = false;
                    row
                })
                .collect()
        })
        .unwrap_or_default();
    for verdict in &by_tool {
        rows.extend(
            verdict
                .rows
                .iter()
                .filter(|row| row.test.runs_tool())
                .cloned(),
        );
    }
    let outcomes = tools
        .iter()
        .map(|line| super::findings::ToolOutcome {
            tool: line.label.clone(),
            backup_mb_s: line.backup_mb_s,
            component: line.component,
            conclusive: line.conclusive,
            interference: line.interference,
        })
        .collect();
    Verdict {
        rows,
        component: None,
        dedup_limit: None,
        conclusive: by_tool.iter().all(|verdict| verdict.conclusive),
        finding: Finding::ToolsCompared { tools: outcomes },
        advice: Vec::new(),
        backup_window_s: None,
        restore: None,
        basis: Vec::new(),
        open: Vec::new(),
        target: by_tool.first().and_then(|verdict| verdict.target.clone()),
        network_shape: None,
        source_bytes: survey.map(|survey| survey.source_bytes),
        tool: None,
        tools,
        by_tool,
    }
}

/// The verdict of the lab's own tests and at most one tool's.
fn judge_one(
    points: &[points::Point],
    runs: &[points::RunEntry<'_>],
    survey: Option<&Survey>,
) -> Verdict {
    let figures = Figures {
        tests: figures::per_test(points, runs),
        probed: runs
            .iter()
            .any(|run| run.result.is_some_and(|result| result.lock.is_some())),
    };
    let finding = find::finding(&figures, survey);
    let basis = weight::basis(&figures, &finding);
    let redo = redo_list(&figures, &basis);
    let conclusive = redo.is_empty()
        && !matches!(
            finding,
            Finding::Incomplete { .. } | Finding::FullOutranCeiling { .. }
        );
    let advice = if conclusive {
        advise::advice(&figures, &finding, survey)
    } else {
        advise::until_redone(redo, &finding)
    };
    let open = if conclusive {
        weight::open_claims(&figures, &basis)
    } else {
        Vec::new()
    };
    let component = finding.component().or_else(|| candidate(&finding));
    let dedup_limit = [TestKind::FullBackup, TestKind::TapeWrite]
        .into_iter()
        .find_map(|test| figures.run(test).and_then(|run| run.dedup.as_ref()))
        .and_then(|dedup| dedup.limit())
        .filter(|_| component == Some(Component::Target));
    let backup_mb = figures
        .mb(TestKind::FullBackup)
        .or_else(|| figures.mb(TestKind::ToolBackup));
    let backup_window_s = match (backup_mb, survey) {
        (Some(full), Some(survey)) if full > 0.0 && survey.source_bytes > 0 => {
            Some((survey.source_bytes as f64 / (full * 1e6) * 10.0).round() / 10.0)
        }
        _ => None,
    };
    Verdict {
        rows: rows(&figures, points, &finding, conclusive),
        component,
        dedup_limit,
        conclusive,
        finding,
        advice,
        backup_window_s,
        restore: restore_line(&figures, survey),
        basis,
        open,
        target: target_named(&figures),
        network_shape: figures.run(TestKind::NetworkBackup).map(|run| Shape {
            clients: run.params.clients.unwrap_or(1),
            streams: run.params.streams,
        }),
        source_bytes: survey.map(|survey| survey.source_bytes),
        tool: figures
            .run(TestKind::ToolBackup)
            .or_else(|| figures.run(TestKind::ToolCeiling))
            .and_then(super::findings::ToolUse::of),
        tools: Vec::new(),
        by_tool: Vec::new(),
    }
}

/// The table's rows, one per test. An inconclusive verdict marks no row "Yes": its leading
/// candidate's row is marked as such instead, on the page, in the charts and in the JSON alike.
fn rows(
    figures: &Figures<'_>,
    points: &[points::Point],
    finding: &Finding,
    conclusive: bool,
) -> Vec<VerdictRow> {
    let has = |test: TestKind| figures.get(test).is_some();
    let yes_row = finding.yes_row(has).filter(|_| conclusive);
    let candidate_row = if conclusive {
        None
    } else {
        finding.yes_row(has).or(match finding {
            Finding::FullOutranCeiling { ceiling, .. } => Some(ceiling.test),
            _ => None,
        })
    };
    figures
        .tests
        .iter()
        .map(|(test, figure)| {
            let mut row = row(*test, figure.as_ref(), yes_row);
            row.candidate = candidate_row == Some(*test) && row.bottleneck.is_some();
            // A figure none of whose runs is valid is never marked: it stays the candidate.
            if row.bottleneck == Some(true) && row.runs_valid == 0 {
                row.bottleneck = Some(false);
                row.candidate = true;
            }
            if figure.is_none() {
                row.no_figure = Some(NoFigure::of(points, *test));
            }
            // A tool test is named with its tool even when none of its runs has figures.
            if test.runs_tool()
                && figure.is_none()
                && let Some(tool) = points
                    .iter()
                    .find(|point| point.test == *test)
                    .and_then(|point| point.params.tool.as_ref())
            {
                row.label = format!("{} ({})", test.label(), tool.label());
                row.tool = Some(tool.label());
            }
            row
        })
        .collect()
}

/// The tool a run ran and its parameters, as its rows are named (`restic compression=max`).
fn tool_label(run: &RunResult) -> Option<String> {
    match (&run.params.tool, &run.tool) {
        (Some(tool), _) => Some(tool.label()),
        (None, Some(figures)) => Some(figures.name.clone()),
        (None, None) => None,
    }
}

/// The component an open finding points at, for an inconclusive verdict's candidate.
fn candidate(finding: &Finding) -> Option<Component> {
    match finding {
        Finding::FullOutranCeiling { ceiling, .. } => Some(ceiling.component),
        _ => None,
    }
}

fn row(test: TestKind, figure: Option<&TestFigure<'_>>, yes_row: Option<TestKind>) -> VerdictRow {
    let run = figure.map(|figure| figure.run);
    let tool = run.filter(|_| test.runs_tool()).and_then(tool_label);
    VerdictRow {
        test,
        tool: tool.clone(),
        label: match (
            run.and_then(crate::engine::target::figures::target_report),
            test,
        ) {
            (_, test) if test.runs_tool() => match tool {
                Some(tool) => match run.and_then(crate::engine::target::figures::target_report) {
                    Some(report) => format!("{} ({tool}, {})", test.label(), report.device),
                    None => format!("{} ({tool})", test.label()),
                },
                None => test.label().to_string(),
            },
            (
                Some(report),
                TestKind::TapeWrite | TestKind::FullBackup | TestKind::NetworkBackup,
            ) => format!("{} ({})", test.label(), report.device),
            _ => test.label().to_string(),
        },
        mb_per_s: figure.map(|figure| figure.mb_per_s),
        basis: figure.map(|figure| figure.basis),
        spread_pct: figure.and_then(|figure| figure.spread_pct),
        repeats: figure.map_or(0, |figure| figure.repeats),
        runs_total: figure.map_or(0, |figure| figure.runs_total),
        runs_valid: figure.map_or(0, |figure| figure.runs_valid),
        valid: figure.map(|figure| figure.valid),
        flags: figure.map_or_else(Vec::new, |figure| figure.flags.clone()),
        cpu_pct: run.map(|run| run.cpu.system_pct),
        lab_cpu_pct: run.map(|run| run.cpu.process_pct),
        other_cpu_pct: run
            .map(|run| (10.0 * (run.cpu.system_pct - run.cpu.process_pct).max(0.0)).round() / 10.0),
        // The full backup is what the others are compared with; a restore is judged on its own.
        bottleneck: (!matches!(
            test,
            TestKind::FullBackup
                | TestKind::Restore
                | TestKind::ToolBackup
                | TestKind::ToolIncremental
                | TestKind::ToolRestore
                | TestKind::ToolLife
        ))
        .then_some(yes_row == Some(test)),
        stage: run
            .filter(|run| {
                matches!(
                    run.test,
                    TestKind::NullSink
                        | TestKind::FullBackup
                        | TestKind::TapeWrite
                        | TestKind::NetworkBackup
                )
            })
            .map(|run| stage_attribution(&run.stages)),
        busy: run.map(|run| run.stages),
        no_figure: None,
        candidate: false,
    }
}

/// The emulated drives of the run that best shows the target.
fn drives_of(figures: &Figures<'_>) -> Option<Drives> {
    [
        TestKind::FullBackup,
        TestKind::ToolBackup,
        TestKind::NetworkBackup,
        TestKind::TapeWrite,
    ]
    .into_iter()
    .find_map(|test| figures.run(test).and_then(|run| run.tape.as_ref()))
    .map(drives)
}

/// What the target is when it is more than a path: the emulated drives, the object store, or
/// the dedup store and where its time went, of the run that best shows the target.
fn target_named(figures: &Figures<'_>) -> Option<TargetName> {
    let store = || {
        [
            TestKind::FullBackup,
            TestKind::NetworkBackup,
            TestKind::TapeWrite,
        ]
        .into_iter()
        .find_map(|test| figures.run(test).and_then(|run| run.s3.as_ref()))
        .map(|s3| TargetName::ObjectStore {
            store: s3.report().device,
        })
    };
    // A dedup store: its busiest stage, which is what a faster store would need more of.
    let dedup = || {
        [TestKind::FullBackup, TestKind::TapeWrite]
            .into_iter()
            .find_map(|test| figures.run(test).and_then(|run| run.dedup.as_ref()))
            .map(|dedup| TargetName::DedupStore {
                store: dedup.store.clone(),
                limit: dedup.limit(),
            })
    };
    drives_of(figures)
        .map(TargetName::Drives)
        .or_else(store)
        .or_else(dedup)
}

/// The tests whose flags can overturn the finding, with those flags and what clears them.
fn redo_list(figures: &Figures<'_>, basis: &[Basis]) -> Vec<Redo> {
    basis
        .iter()
        .filter_map(|basis| {
            let flags = basis.overturning();
            let run = figures.run(basis.test)?;
            (!flags.is_empty()).then(|| Redo {
                test: basis.test,
                changes: remedy::changes(&flags, run),
                flags,
            })
        })
        .collect()
}
