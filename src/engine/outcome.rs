//! A run's result filled in from what the pipeline measured: the figures, the stages, each
//! network client's share, and the dedup its generated data achieved.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::measure::round1;
use crate::engine::pipeline::Outcome;
use crate::engine::plan::{RunPlan, SourcePlan};
use crate::engine::remote::RemoteClient;
use crate::engine::result::{ClientStatus, RunResult, RunStatus, StageFigures};

use crate::engine::job::units_of;
use crate::engine::{measure, reduction, remote, result};

/// Fills a result from what the pipeline measured; `drain` is the run's allowance after its
/// duration and `remote` whether its target lies outside the machine (for the words of a cut).
pub(super) fn fill_from_outcome(
    result: &mut RunResult,
    outcome: Outcome,
    drain: Option<Duration>,
    remote: bool,
) {
    let wall = outcome.wall;
    result.bytes = outcome.bytes;
    result.files = outcome.files;
    result.seconds = measure::round3(wall.as_secs_f64());
    result.mb_per_s = if wall > Duration::ZERO {
        round1(outcome.bytes as f64 / wall.as_secs_f64() / 1e6)
    } else {
        0.0
    };
    result.stages = StageFigures {
        reader_busy_pct: round1(outcome.readers.busy_pct(outcome.reader_threads, wall)),
        reader_wait_pct: round1(outcome.readers.wait_pct(outcome.reader_threads, wall)),
        reader_waits: outcome.readers.waits,
        writer_busy_pct: round1(outcome.writers.busy_pct(outcome.writer_threads, wall)),
        writer_wait_pct: round1(outcome.writers.wait_pct(outcome.writer_threads, wall)),
        writer_waits: outcome.writers.waits,
    };
    result.latency_us = outcome.latency.figures();
    if result.latency_us.is_some() {
        let of = if outcome.writer_threads > 0 {
            "sink_write"
        } else {
            "source_read"
        };
        result.latency_of = Some(of.to_string());
    }
    result.samples = outcome.samples;
    super::target::figures::take_sink_figures(result, &outcome.sink_figures);
    if let Some(tape) = result.tape.as_ref().filter(|tape| tape.end_of_tape) {
        result.warnings.push(format!(
            "end of tape: a cartridge of the emulated {} filled up after {} on tape; the run \
             stopped there, as a backup would until the next cartridge",
            tape.model,
            crate::size::format_bytes(tape.tape_bytes)
        ));
    }
    // A cancel, then a cut at the drain deadline, come first: what failed after them (a
    // request given up, a sink that stopped taking data) is their consequence.
    if outcome.cancelled {
        result.status = RunStatus::Cancelled;
        result.error = Some("cancelled".to_string());
    } else if outcome.overran {
        result.status = RunStatus::Failed;
        let after = drain.map_or(0.0, |drain| drain.as_secs_f64());
        result.error = Some(if remote {
            format!(
                "the target was still taking the run's data {after:.0} s after the run's \
                 duration, and the run was cut there: the store stopped answering, or answers \
                 far slower than the ring hands it data"
            )
        } else {
            format!(
                "the emulated target was still taking the ring's data {after:.0} s after the \
                 run's duration, and the run was cut there: its settings are too slow for the \
                 data the ring holds (give it a faster speed, a larger drive buffer, or fewer \
                 and smaller buffers)"
            )
        });
    } else if let Some(failure) = outcome.failure {
        result.status = RunStatus::Failed;
        result.error = Some(failure.to_string());
    } else if outcome.bytes == 0 {
        result.status = RunStatus::Failed;
        result.error = Some("the source holds no data to read".to_string());
    }
}

/// Adds a network run's per-client figures; a run where some clients failed is partial, one
/// where all failed is failed.
pub(super) fn fill_clients(
    result: &mut RunResult,
    tallies: &[Arc<dyn RemoteClient>],
    per_client: Vec<Vec<result::Sample>>,
) {
    let clients: Vec<_> = tallies
        .iter()
        .zip(per_client.into_iter().chain(std::iter::repeat(Vec::new())))
        .map(|(tally, samples)| tally.figures(result.seconds, samples))
        .collect();
    let samples: Vec<_> = clients.iter().map(|c| c.samples.clone()).collect();
    result.samples = remote::sum_samples(&samples);
    let failed: Vec<String> = clients
        .iter()
        .filter(|client| client.status == ClientStatus::Failed)
        .map(|client| {
            format!(
                "client '{}' failed: {}",
                client.name,
                client.error.as_deref().unwrap_or("no reason given")
            )
        })
        .collect();
    if !failed.is_empty() && result.status == RunStatus::Done {
        if failed.len() == clients.len() {
            result.status = RunStatus::Failed;
            result.error = Some(format!("every client failed; {}", failed.join("; ")));
        } else {
            result.partial = true;
            result.warnings.push(format!(
                "partial: {}; the other clients finished, and the figures cover what they sent",
                failed.join("; ")
            ));
        }
    }
    result.clients = Some(clients);
}

/// The source's compressibility, measured for a target test or a restore whose image is to
/// match it. Below
/// 1.05:1 the source counts as incompressible.
/// The dedup ratio a run's generated units achieved, when the source asked for one.
pub(super) fn generated_dedup(
    plan: &RunPlan,
    source_dedup: Option<reduction::DedupSettings>,
    made: reduction::UnitTally,
) -> Option<reduction::GeneratedDedup> {
    let (dedup, generations) = match &plan.source {
        SourcePlan::Generated {
            dedup, generations, ..
        } => (*dedup, *generations),
        SourcePlan::Paths(_) => (source_dedup, None),
    };
    let (settings, change_rate) = units_of(dedup, generations, plan.params.generation)?;
    let achieved = made.ratio()?;
    let generation = generations
        .zip(plan.params.generation)
        .map(|(generations, generation)| reduction::GenerationMade {
            generation,
            of: generations.count,
            change_rate_asked: change_rate,
            change_rate_achieved: if generation > 1 {
                (made.changed_units as f64 / made.new_units as f64 * 10_000.0).round() / 10_000.0
            } else {
                0.0
            },
        });
    Some(reduction::GeneratedDedup {
        asked: settings.ratio,
        achieved: (achieved * 1000.0).round() / 1000.0,
        unit: settings.unit,
        units: made.units,
        new_units: made.new_units,
        generation,
    })
}
