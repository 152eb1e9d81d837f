//! The one finding of a campaign, from each test's best figure: which component limits the
//! backup, or why none can be named yet.

use super::figures::TestFigure;
use super::findings::{
    self, AboveCeiling, Ceiling, Component, Drives, Finding, Interference, NetworkFinding,
    NetworkLimit, OutranCause, Shape, ShoeShine, Side, TargetCeilingFrom,
};
use super::findings::{StageAttribution, stage_attribution};
use super::{ABOVE_PCT, COMPRESSIBILITY_MISMATCH, Figures, REACHED};
use crate::engine::result::{RunResult, TapeFigures};
use crate::engine::survey::Survey;
use crate::spec::TestKind;

/// The component the target write measures: the target, unless the target discards what it
/// is given (the null sink), when the write measured the pipeline feeding it.
pub fn target_component(survey: Option<&Survey>) -> Component {
    if survey.is_some_and(|survey| survey.target_discards) {
        Component::Pipeline
    } else {
        Component::Target
    }
}

/// The one finding of the campaign.
pub(super) fn finding(figures: &Figures<'_>, survey: Option<&Survey>) -> Finding {
    let roles = Roles::of(figures);
    let f = figures.mb(roles.backup);
    // The drive a backup fed: a shoe-shining drive names the feed, whatever the ceilings say.
    let fed = figures
        .run(roles.backup)
        .or_else(|| figures.run(TestKind::NetworkBackup).filter(|_| f.is_none()));
    if let Some(shoe_shine) = fed.and_then(shoe_shine) {
        return Finding::ShoeShine(shoe_shine);
    }
    if f.is_none()
        && roles.backup == TestKind::FullBackup
        && let Some(network) = figures.get(TestKind::NetworkBackup)
    {
        return Finding::Network(network_finding(network, figures));
    }

    let ceilings: Vec<Ceiling> = [
        (target_component(survey), TestKind::TapeWrite),
        (Component::Source, TestKind::ReadParallel),
        roles.process,
    ]
    .into_iter()
    .filter_map(|(component, test)| {
        figures.mb(test).map(|mb_per_s| Ceiling {
            component,
            test,
            mb_per_s,
        })
    })
    .collect();
    let Some(lowest) = lowest_ceiling(&ceilings) else {
        return Finding::Incomplete {
            missing: [TestKind::TapeWrite, TestKind::ReadParallel, roles.process.1]
                .into_iter()
                .filter(|test| figures.mb(*test).is_none())
                .collect(),
            lives: figures.get(TestKind::ToolLife).is_some(),
            probed: figures.probed,
        };
    };
    let Some(full) = f else {
        return Finding::LowestCeiling { ceiling: lowest };
    };
    // A ceiling the full backup outran did not measure what the full backup met; nor did a
    // target test on data the drive compressed less than the backup's, once the backup
    // reached it (the drive takes the backup's data faster than that test says).
    let undermeasured = target_undermeasured(figures);
    // A tool whose own backup kept its cores, or its one thread, busy was held by its CPU
    // whatever its ceiling's run measured at another moment: that ceiling is not outrun, the
    // tool limits (below, with the gap said).
    let held_by_cpu = tool_held_by_cpu(figures, roles.backup);
    if let Some(outran) = ceilings
        .iter()
        .filter(|ceiling| !(held_by_cpu && ceiling.component == Component::Tool))
        .filter(|ceiling| {
            full > ceiling.mb_per_s / REACHED
                || (undermeasured
                    && ceiling.component == Component::Target
                    && full >= REACHED * ceiling.mb_per_s)
        })
        .min_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s))
    {
        return Finding::FullOutranCeiling {
            ceiling: *outran,
            full_mb_s: full,
            causes: outran_causes(figures, outran),
        };
    }
    if full >= REACHED * lowest.mb_per_s {
        return Finding::Limits {
            ceiling: lowest,
            full_mb_s: full,
            above: if full > (1.0 + ABOVE_PCT / 100.0) * lowest.mb_per_s {
                above_ceiling(figures, &lowest, full)
            } else {
                Vec::new()
            },
        };
    }
    // A tool whose own backup kept its cores, or its one thread, busy was held by its CPU:
    // the tool limits, though its ceiling's run (other data in memory, a quieter moment) went
    // faster.
    if lowest.component == Component::Tool && held_by_cpu {
        return Finding::Limits {
            ceiling: lowest,
            full_mb_s: full,
            above: Vec::new(),
        };
    }
    interference(figures, survey, &ceilings, lowest, full, roles.backup)
}

/// Whether the tool's own backup kept every core, or its one thread, busy.
fn tool_held_by_cpu(figures: &Figures<'_>, backup: TestKind) -> bool {
    figures
        .run(backup)
        .and_then(findings::ToolUse::of)
        .is_some_and(|tool| {
            matches!(
                tool.held_by,
                findings::ToolHeldBy::AllCores | findings::ToolHeldBy::OneThread
            )
        })
}

/// Which tests play the backup and the backup's own process in the table: the lab's full
/// backup and its pipeline, or, in a campaign that runs a backup tool, the tool's backup and
/// the tool alone.
struct Roles {
    backup: TestKind,
    process: (Component, TestKind),
}

impl Roles {
    fn of(figures: &Figures<'_>) -> Roles {
        let runs_tool = [TestKind::ToolBackup, TestKind::ToolCeiling]
            .into_iter()
            .any(|test| figures.tests.iter().any(|(kind, _)| *kind == test));
        if runs_tool {
            Roles {
                backup: TestKind::ToolBackup,
                process: (Component::Tool, TestKind::ToolCeiling),
            }
        } else {
            Roles {
                backup: TestKind::FullBackup,
                process: (Component::Pipeline, TestKind::NullSink),
            }
        }
    }
}

/// A full backup well below every ceiling: the components interfere, and the evidence at hand
/// (a shared device, the backup's own stage accounting) names the one they slow.
fn interference(
    figures: &Figures<'_>,
    survey: Option<&Survey>,
    ceilings: &[Ceiling],
    lowest: Ceiling,
    full: f64,
    backup: TestKind,
) -> Finding {
    let full_run = figures.run(backup);
    let stage = full_run.map(|run| stage_attribution(&run.stages));
    let (component, evidence) = if survey.is_some_and(|survey| survey.shares_device) {
        (Component::SharedDevice, Interference::SharedDevice)
    } else {
        match stage {
            Some(StageAttribution {
                limited_by: Side::Target,
                reader_wait_pct,
                ..
            }) if ceilings.iter().any(|c| c.component == Component::Target) => (
                Component::Target,
                Interference::Stages {
                    side: Side::Target,
                    wait_pct: reader_wait_pct,
                },
            ),
            Some(StageAttribution {
                limited_by: Side::Source,
                writer_wait_pct,
                ..
            }) if ceilings.iter().any(|c| c.component == Component::Source) => (
                Component::Source,
                Interference::Stages {
                    side: Side::Source,
                    wait_pct: writer_wait_pct,
                },
            ),
            _ => (lowest.component, Interference::LowestCeiling),
        }
    };
    Finding::Interference {
        component,
        lowest,
        full_mb_s: full,
        evidence,
    }
}

/// The lowest ceiling. Backup to null reads the source too, so it names the pipeline only
/// when it is clearly below reading alone; otherwise its figure is the source's.
fn lowest_ceiling(ceilings: &[Ceiling]) -> Option<Ceiling> {
    let source = ceilings
        .iter()
        .find(|ceiling| ceiling.component == Component::Source);
    let lowest = ceilings
        .iter()
        .copied()
        .min_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s))?;
    Some(match source {
        Some(source)
            if lowest.component == Component::Pipeline
                && lowest.mb_per_s >= REACHED * source.mb_per_s =>
        {
            *source
        }
        _ => lowest,
    })
}

/// Why a full backup may have outrun a ceiling, from the evidence at hand.
fn outran_causes(figures: &Figures<'_>, ceiling: &Ceiling) -> Vec<OutranCause> {
    let mut causes = Vec::new();
    if let Some(mismatch) = compressibility_mismatch(figures)
        && ceiling.component == Component::Target
    {
        causes.push(mismatch);
    }
    if let Some(figure) = figures.get(ceiling.test) {
        if !figure.valid {
            causes.push(OutranCause::InvalidCeiling {
                flags: figure.flags.clone(),
            });
        }
        if let Some(spread) = figure.spread_pct
            && spread >= 100.0 * (1.0 / REACHED - 1.0)
        {
            causes.push(OutranCause::Spread { spread_pct: spread });
        }
    }
    if causes.is_empty() {
        causes.push(OutranCause::Unexplained {
            emulated_target: figures
                .run(ceiling.test)
                .is_some_and(|run| run.tape.is_some()),
        });
    }
    causes
}

/// Why a full backup ran a little faster than the ceiling it reached, from the evidence at
/// hand; the noise of the two figures when nothing else explains it.
fn above_ceiling(figures: &Figures<'_>, ceiling: &Ceiling, full: f64) -> Vec<AboveCeiling> {
    let mut why = Vec::new();
    if ceiling.component == Component::Target
        && let Some(OutranCause::Compressibility {
            target_test,
            full_backup,
        }) = compressibility_mismatch(figures)
    {
        why.push(AboveCeiling::Compressibility {
            target_test,
            full_backup,
        });
    }
    let flush_of = |test| {
        figures
            .run(test)
            .and_then(|run| run.steady)
            .map_or(0.0, |steady| steady.flush_s)
    };
    let flush_s = flush_of(ceiling.test);
    if flush_s > flush_of(TestKind::FullBackup) {
        why.push(AboveCeiling::LowerBound { flush_s });
    }
    let gap_pct = 100.0 * (full / ceiling.mb_per_s - 1.0);
    let spread = [ceiling.test, TestKind::FullBackup]
        .into_iter()
        .filter_map(|test| figures.get(test).and_then(|figure| figure.spread_pct))
        .reduce(f64::max);
    match spread {
        Some(spread_pct) if spread_pct >= gap_pct => {
            why.push(AboveCeiling::Spread { spread_pct });
        }
        None if why.is_empty() => why.push(AboveCeiling::Unrepeated),
        Some(spread_pct) if why.is_empty() => {
            why.push(AboveCeiling::Unexplained { spread_pct });
        }
        _ => {}
    }
    why
}

/// The target test's data compressed clearly less on the drive than the full backup's: its
/// figure is below what the drive takes of the backup's data.
fn target_undermeasured(figures: &Figures<'_>) -> bool {
    matches!(
        compressibility_mismatch(figures),
        Some(OutranCause::Compressibility { target_test, full_backup }) if full_backup > target_test
    )
}

/// The target test's data compressed differently on the drive from the full backup's.
pub(super) fn compressibility_mismatch(figures: &Figures<'_>) -> Option<OutranCause> {
    let target = figures.run(TestKind::TapeWrite)?.tape.as_ref()?.compression;
    let full = figures
        .run(TestKind::FullBackup)?
        .tape
        .as_ref()?
        .compression;
    ((target - full).abs() > COMPRESSIBILITY_MISMATCH * full.max(target)).then_some(
        OutranCause::Compressibility {
            target_test: target,
            full_backup: full,
        },
    )
}

/// A drive fed below its lowest speed step, from the run that fed it.
fn shoe_shine(run: &RunResult) -> Option<ShoeShine> {
    let tape = run
        .tape
        .as_ref()
        .filter(|tape| tape.shoe_shined(run.mb_per_s))?;
    // A network run's streams are every client's.
    let streams = run.params.streams.max(1) * run.params.clients.unwrap_or(1).max(1);
    let feed = run.figure();
    let per_stream = feed / f64::from(streams);
    // To stream, every drive needs at least its lowest step times the compression.
    let needed = tape.min_mb_s * tape.compression * f64::from(tape.drives);
    let wall = tape.streaming_s + tape.repositioning_s + tape.idle_s;
    Some(ShoeShine {
        drives: drives(tape),
        backhitches: tape.backhitches,
        repositioning_pct: if wall > 0.0 {
            100.0 * tape.repositioning_s / wall
        } else {
            0.0
        },
        feed_mb_s: feed,
        needed_mb_s: needed,
        min_step_mb_s: tape.min_mb_s,
        compression: tape.compression,
        per_stream_mb_s: per_stream,
        streams_needed: findings::streams_for(needed, per_stream),
    })
}

/// What a network backup's figure says, against the target's ceiling when one is known.
fn network_finding(network: &TestFigure<'_>, figures: &Figures<'_>) -> NetworkFinding {
    let run = network.run;
    let n = network.mb_per_s;
    let clients = run.params.clients.unwrap_or(1);
    let shape = Shape {
        clients,
        streams: run.params.streams,
    };
    // The target's ceiling: its own test, else what emulated drives take at the compression
    // they achieved.
    let ceiling = figures
        .mb(TestKind::TapeWrite)
        .map(|t| (t, TargetCeilingFrom::TapeWriteTest))
        .or_else(|| {
            run.tape.as_ref().map(|tape| {
                (
                    tape.native_mb_s * tape.compression * f64::from(tape.drives),
                    TargetCeilingFrom::EmulatedDrives,
                )
            })
        });
    let stage = stage_attribution(&run.stages);
    let links = run.params.link_mb_s.map(|link| link * f64::from(clients));
    let target_full = match ceiling {
        Some((t, _)) => n >= REACHED * t,
        None => stage.limited_by == Side::Target,
    };
    let limit = if ceiling.is_none() && links.is_none() && stage.limited_by == Side::Balanced {
        NetworkLimit::Undetermined {
            reader_wait_pct: stage.reader_wait_pct,
            writer_wait_pct: stage.writer_wait_pct,
        }
    } else if target_full {
        NetworkLimit::Target {
            ceiling_mb_s: ceiling.map(|(t, _)| t),
            from: ceiling.map(|(_, from)| from),
            reader_wait_pct: stage.reader_wait_pct,
        }
    } else {
        match (links, ceiling) {
            (Some(total), _) if n >= REACHED * total => NetworkLimit::Links {
                per_client_mb_s: total / f64::from(clients.max(1)),
                total_mb_s: total,
            },
            (_, Some((t, from))) => NetworkLimit::BelowTarget {
                ceiling_mb_s: t,
                from,
            },
            _ => NetworkLimit::Starved,
        }
    };
    NetworkFinding {
        shape,
        mb_per_s: n,
        limit,
        writer_wait_pct: run.stages.writer_wait_pct,
        failed_clients: run
            .clients
            .iter()
            .flatten()
            .filter(|client| client.status == crate::engine::result::ClientStatus::Failed)
            .map(|client| client.name.clone())
            .collect(),
    }
}

/// Emulated drives as a verdict names them.
pub(super) fn drives(tape: &TapeFigures) -> Drives {
    Drives {
        model: tape.model.clone(),
        count: tape.drives,
    }
}
