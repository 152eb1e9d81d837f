//! The advice that follows from a finding: derived from it and the figures, so it cannot
//! contradict it.

use super::find::target_component;
use super::findings::{
    self, Advice, Component, Finding, NetworkFinding, NetworkLimit, OutranCause, Redo,
};
use super::{CPU_BOUND_PCT, Figures, WAITING, weight};
use crate::engine::survey::Survey;
use crate::spec::TestKind;

/// How much faster than the network a backup server's local writes must be (seed 001: twice,
/// so that it absorbs the protocol's overhead as well).
pub const LOCAL_OVER_NETWORK: f64 = 2.0;

/// The advice that follows from a conclusive finding: only what agrees with it.
pub(super) fn advice(
    figures: &Figures<'_>,
    finding: &Finding,
    survey: Option<&Survey>,
) -> Vec<Advice> {
    let mut advice = Vec::new();
    let component = finding.component();
    // Advice sizes things from the isolated figures, each at the least its flags allow it to
    // be (the figure itself when valid); a figure whose flags leave it no floor is not used.
    let usable = |test: TestKind| weight::floor_of(figures, test);
    let (t, s1, sp, p) = (
        usable(TestKind::TapeWrite),
        usable(TestKind::ReadSingle),
        usable(TestKind::ReadParallel),
        usable(TestKind::NullSink),
    );
    match finding {
        Finding::ShoeShine(shine) => advice.push(Advice::FeedTheDrives {
            needed_mb_s: shine.needed_mb_s,
            streams_needed: shine.streams_needed,
            per_stream_mb_s: shine.per_stream_mb_s,
            drives: shine.drives.count,
            per_drive_mb_s: shine.min_step_mb_s * shine.compression,
            full_speed: t
                .filter(|t| *t > shine.needed_mb_s && shine.per_stream_mb_s > 0.0)
                .map(|t| (t, findings::streams_for(t, shine.per_stream_mb_s))),
        }),
        Finding::Network(network) => advice.extend(network_advice(network, t, survey)),
        _ => {}
    }
    let feed_named = matches!(component, Some(Component::Source) | None);
    // How many streams a backup needs holds whatever limits it; a drive fed too slowly
    // already has its count of streams, from the backup's own per-stream rate.
    if let (Some(s1), Some(t)) = (s1, t)
        && s1 < t
        && !matches!(finding, Finding::ShoeShine(_))
    {
        advice.push(Advice::ParallelStreams {
            single_mb_s: s1,
            target_mb_s: t,
            streams: findings::streams_for(t, s1).max(2) as u32,
        });
    }
    if let (Some(sp), Some(t)) = (sp, t)
        && sp < t
        && feed_named
        && !matches!(finding, Finding::ShoeShine(_))
    {
        advice.push(Advice::SourceBound {
            source_mb_s: sp,
            target_mb_s: t,
            streams: figures
                .run(TestKind::ReadParallel)
                .map_or(0, |run| run.params.streams),
        });
    }
    if let Finding::Limits {
        ceiling, full_mb_s, ..
    } = finding
        && ceiling.component == Component::Target
    {
        advice.push(Advice::TargetAtFullSpeed {
            full_mb_s: *full_mb_s,
            target_mb_s: ceiling.mb_per_s,
        });
    }
    advice.extend(pipeline_advice(figures, component, p, sp));
    if component == Some(Component::Tool) {
        advice.extend(tool_advice(figures));
    }
    advice
}

/// What to change of a tool that limits the backup: its own setting for what held it.
fn tool_advice(figures: &Figures<'_>) -> Option<Advice> {
    let run = figures.run(TestKind::ToolBackup)?;
    let tool = findings::ToolUse::of(run)?;
    Some(Advice::ToolBound {
        setting: findings::ToolSetting::of(run, tool.held_by),
        params: run
            .tool
            .as_ref()
            .map(|figures| figures.params.keys().cloned().collect())
            .unwrap_or_default(),
        tool,
    })
}

/// The advice on a network backup's finding, `t` the lab's own target write at its floor.
fn network_advice(
    network: &NetworkFinding,
    t: Option<f64>,
    survey: Option<&Survey>,
) -> Vec<Advice> {
    let mut advice = Vec::new();
    match network.limit {
        NetworkLimit::Target { .. } => advice.push(Advice::NetworkTargetFull),
        NetworkLimit::Links {
            per_client_mb_s,
            total_mb_s,
        } => advice.push(Advice::FasterLinks {
            per_client_mb_s,
            clients: network.shape.clients,
            total_mb_s,
        }),
        NetworkLimit::BelowTarget { .. } | NetworkLimit::Starved => {
            advice.push(Advice::MoreClients {
                shape: network.shape,
            })
        }
        NetworkLimit::Undetermined { .. } => {}
    }
    if !network.failed_clients.is_empty() {
        advice.push(Advice::PartialNetworkRun {
            failed: network.failed_clients.clone(),
        });
    }
    // A null target's write measured the pipeline, not a local file system.
    let local = t.filter(|_| target_component(survey) == Component::Target);
    if let Some(local) = local.filter(|local| *local < LOCAL_OVER_NETWORK * network.mb_per_s) {
        advice.push(Advice::LocalUnderTwiceNetwork {
            local_mb_s: local,
            network_mb_s: network.mb_per_s,
            needed_mb_s: LOCAL_OVER_NETWORK * network.mb_per_s,
        });
    }
    advice
}

/// The advice on the pipeline and on which side of the full backup waited, `p` and `sp` the
/// backup to null and the parallel read at their floors.
fn pipeline_advice(
    figures: &Figures<'_>,
    component: Option<Component>,
    p: Option<f64>,
    sp: Option<f64>,
) -> Vec<Advice> {
    let mut advice = Vec::new();
    if component == Some(Component::Pipeline) {
        if let Some(run) = figures.run(TestKind::NullSink)
            && run.cpu.process_pct >= CPU_BOUND_PCT
        {
            advice.push(Advice::CpuBound {
                cpu_pct: run.cpu.process_pct,
            });
        }
        if let (Some(p), Some(sp)) = (p, sp)
            && p < 0.8 * sp
        {
            advice.push(Advice::PipelineSlowerThanReading {
                pipeline_mb_s: p,
                source_mb_s: sp,
            });
        }
    }
    if let Some(run) = figures.run(TestKind::FullBackup) {
        let stages = &run.stages;
        match component {
            Some(Component::Target | Component::SharedDevice)
                if stages.reader_wait_pct >= WAITING =>
            {
                advice.push(Advice::ReadersWaited {
                    wait_pct: stages.reader_wait_pct,
                })
            }
            Some(Component::Source) if stages.writer_wait_pct >= WAITING => {
                advice.push(Advice::WriterWaited {
                    wait_pct: stages.writer_wait_pct,
                })
            }
            _ => {}
        }
    }
    if component == Some(Component::SharedDevice) {
        advice.push(Advice::SeparateDevice);
    }
    advice
}

/// The advice while runs must be redone: only what the redo and the evidence at hand say.
pub(super) fn until_redone(redo: Vec<Redo>, finding: &Finding) -> Vec<Advice> {
    let mut advice: Vec<Advice> = redo.into_iter().map(Advice::Redo).collect();
    if let Finding::FullOutranCeiling { causes, .. } = finding {
        advice.extend(causes.iter().filter_map(|cause| match cause {
            OutranCause::Compressibility {
                target_test,
                full_backup,
            } => Some(Advice::MatchCompressibility {
                target_test: *target_test,
                full_backup: *full_backup,
            }),
            _ => None,
        }));
    }
    advice
}
