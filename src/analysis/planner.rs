//! The backup-window planner: for a data size and a window, the rate the backup needs, and
//! which change the campaign's own measurements say gets there (more emulated drives, a faster
//! target or source, the object store's part size and parts in flight a sweep measured), or
//! that none of them does. Only measured figures are used; nothing is extrapolated past what a test
//! showed a component can carry.

use serde::Serialize;

use super::points::Point;
use super::{Component, Verdict};
use crate::duration::format_duration;
use crate::engine::result::{RunResult, RunStatus};
use crate::engine::survey::Survey;
use crate::size::{format_bytes, parse_size};
use crate::spec::{TestKind, format_size};

/// A question put to the planner: this much data in this long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanQuestion {
    /// The data to back up.
    pub data_bytes: u64,
    /// The time the backup may take.
    pub window_s: f64,
}

impl PlanQuestion {
    /// Reads a size (`12T`, `500G`) and a window (`8h`, `90m`, `3600s`, or hours alone).
    pub fn parse(data: &str, window: &str) -> Result<Self, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        let data_bytes = match parse_size(data) {
            Ok(0) => {
                errors.push(("data", "must be more than 0".to_string()));
                0
            }
            Ok(bytes) => bytes,
            Err(message) => {
                errors.push(("data", message));
                0
            }
        };
        let window_s = match parse_window(window) {
            Ok(seconds) => seconds,
            Err(message) => {
                errors.push(("window", message));
                0.0
            }
        };
        if errors.is_empty() {
            Ok(Self {
                data_bytes,
                window_s,
            })
        } else {
            Err(errors)
        }
    }

    /// The rate that moves the data in the window, MB/s (10^6 bytes a second).
    pub fn needed_mb_s(&self) -> f64 {
        self.data_bytes as f64 / self.window_s / 1e6
    }
}

/// A needed rate in MB/s as the answer says it: one decimal from 1 MB/s, two below, and never
/// a figure that reads as nothing ("0.0").
pub fn rate_text(mb_s: f64) -> String {
    if mb_s >= 1.0 {
        format!("{mb_s:.1}")
    } else if mb_s >= 0.01 {
        format!("{mb_s:.2}")
    } else {
        "under 0.01".to_string()
    }
}

/// The least rate the planner's own question (the campaign's source in an 8-hour window)
/// must need to be asked unprompted, MB/s: below it the answer says nothing a person plans
/// by, so the planner asks for the data size instead.
pub const DEFAULT_QUESTION_MIN_MB_S: f64 = 1.0;

/// The longest window the planner takes: a year.
const MAX_WINDOW_S: f64 = 365.0 * 24.0 * 3600.0;

/// A window as written: `8h`, `90m`, `45s`, `1.5h`, or a number of hours.
fn parse_window(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = match text.char_indices().last() {
        Some((at, 'h' | 'H')) => (&text[..at], 3600.0),
        Some((at, 'm' | 'M')) => (&text[..at], 60.0),
        Some((at, 's' | 'S')) => (&text[..at], 1.0),
        _ => (text, 3600.0),
    };
    match number.trim().parse::<f64>().map(|value| value * scale) {
        Ok(seconds) if seconds.is_finite() && (1.0..=MAX_WINDOW_S).contains(&seconds) => {
            Ok(seconds)
        }
        _ => Err(format!(
            "'{text}' is not a window from 1 s to a year (write e.g. 8h, 90m or 3600s)"
        )),
    }
}

/// The planner's answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Plan {
    /// The rate that moves the data in the window.
    pub needed_mb_s: f64,
    /// The full (or network) backup's measured figure, when the campaign has one.
    pub measured_mb_s: Option<f64>,
    /// The answer in one sentence.
    pub answer: String,
    /// Each change the measurements support, or why none gets there.
    pub changes: Vec<String>,
    /// Whether the measured backup, or a measured change, reaches the rate.
    pub reachable: bool,
    /// What the dedup store's disk must take at the reduction it achieved, when the backup
    /// went into one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_mb_s: Option<f64>,
}

/// A measured component ceiling.
struct Ceiling {
    component: Component,
    test: TestKind,
    mb_per_s: f64,
}

/// What the campaign's measurements say about moving `question.data_bytes` in
/// `question.window_s`, from its verdict, its points and their runs. Rates are logical (what
/// the backup sends); when the backup went into a dedup store, the answer also gives the rate
/// its disk must take at the reduction it achieved.
pub fn plan(
    question: PlanQuestion,
    verdict: &Verdict,
    points: &[Point],
    runs: &[&RunResult],
    survey: Option<&Survey>,
) -> Plan {
    let mut plan = logical_plan(question, verdict, points, runs, survey);
    let reduction = runs
        .iter()
        .filter(|run| run.test == TestKind::FullBackup && run.status == RunStatus::Done)
        .find_map(|run| run.dedup.as_ref())
        .map(|dedup| dedup.dedup_ratio)
        .filter(|ratio| *ratio > 1.0);
    if let Some(ratio) = reduction {
        let physical = plan.needed_mb_s / ratio;
        plan.physical_mb_s = Some(physical);
        plan.answer.push_str(&format!(
            " At the {ratio:.2}:1 reduction the dedup store achieved, that is {:.1} MB/s \
             logical and {physical:.1} MB/s physical, to its disk.",
            plan.needed_mb_s
        ));
    }
    plan
}

/// The plan in logical rates: each tool's own in a comparison of tools, else judged by the
/// measured backup against the rate the question needs.
fn logical_plan(
    question: PlanQuestion,
    verdict: &Verdict,
    points: &[Point],
    runs: &[&RunResult],
    survey: Option<&Survey>,
) -> Plan {
    if !verdict.by_tool.is_empty() {
        return tools_plan(question, verdict, points, runs, survey);
    }
    let asked = Asked::new(question);
    let ceilings = measured_ceilings(verdict, survey);
    let short: Vec<&Ceiling> = ceilings
        .iter()
        .filter(|c| c.mb_per_s < asked.needed)
        .collect();
    match measured_backup(verdict) {
        None => unmeasured_plan(&asked, &ceilings, &short),
        Some((backup_test, measured)) if measured >= asked.needed => {
            fast_enough_plan(&asked, points, backup_test, measured)
        }
        Some((backup_test, measured)) => too_slow_plan(
            &asked,
            verdict,
            runs,
            &ceilings,
            &short,
            (backup_test, measured),
        ),
    }
}

/// The question as every answer says it: the rate it needs, the data and the window in words.
struct Asked {
    question: PlanQuestion,
    needed: f64,
    needed_text: String,
    data: String,
    window: String,
}

impl Asked {
    /// The question with its rate worked out and its data and window said once.
    fn new(question: PlanQuestion) -> Self {
        let needed = question.needed_mb_s();
        Self {
            question,
            needed,
            needed_text: rate_text(needed),
            data: format_bytes(question.data_bytes),
            window: format_duration(question.window_s),
        }
    }

    /// How long the data takes at `mb_s`, in words.
    fn time_at(&self, mb_s: f64) -> String {
        format_duration(self.question.data_bytes as f64 / (mb_s * 1e6))
    }
}

/// The verdict's figure of `test`, when the campaign measured one.
fn row_figure(verdict: &Verdict, test: TestKind) -> Option<f64> {
    verdict
        .rows
        .iter()
        .find(|row| row.test == test)
        .and_then(|row| row.mb_per_s)
}

/// The backup the answer is judged by: the full backup's figure, else the network's, else the
/// tool's.
fn measured_backup(verdict: &Verdict) -> Option<(TestKind, f64)> {
    [
        TestKind::FullBackup,
        TestKind::NetworkBackup,
        TestKind::ToolBackup,
    ]
    .into_iter()
    .find_map(|test| row_figure(verdict, test).map(|mb| (test, mb)))
}

/// Each component's ceiling its isolated test measured, in the order the answer names them.
fn measured_ceilings(verdict: &Verdict, survey: Option<&Survey>) -> Vec<Ceiling> {
    [
        (super::target_component(survey), TestKind::TapeWrite),
        (Component::Source, TestKind::ReadParallel),
        (Component::Pipeline, TestKind::NullSink),
        (Component::Tool, TestKind::ToolCeiling),
    ]
    .into_iter()
    .filter_map(|(component, test)| {
        row_figure(verdict, test).map(|mb_per_s| Ceiling {
            component,
            test,
            mb_per_s,
        })
    })
    .collect()
}

/// The answer without a backup figure: only the isolated tests can speak, and the campaign
/// cannot be said to reach the rate.
fn unmeasured_plan(asked: &Asked, ceilings: &[Ceiling], short: &[&Ceiling]) -> Plan {
    let Asked {
        needed,
        needed_text,
        data,
        window,
        ..
    } = asked;
    let mut changes = short_words(short, *needed);
    if changes.is_empty() && !ceilings.is_empty() {
        changes.push(format!(
            "Every isolated test reached {needed_text} MB/s; run the full backup to see \
             whether they do together."
        ));
    }
    Plan {
        needed_mb_s: *needed,
        measured_mb_s: None,
        answer: format!(
            "{data} in {window} needs {needed_text} MB/s; this campaign measured no full \
             backup to judge it by."
        ),
        changes,
        reachable: false,
        physical_mb_s: None,
    }
}

/// The answer when the measured backup already reaches the rate: how long it takes, and the
/// upload settings that reach it with the least memory when the campaign swept them.
fn fast_enough_plan(asked: &Asked, points: &[Point], backup_test: TestKind, measured: f64) -> Plan {
    let Asked {
        needed,
        needed_text,
        data,
        window,
        ..
    } = asked;
    Plan {
        needed_mb_s: *needed,
        measured_mb_s: Some(measured),
        answer: format!(
            "{data} in {window} needs {needed_text} MB/s; the measured backup ({measured:.1} \
             MB/s) does it in {}.",
            asked.time_at(measured)
        ),
        changes: upload_settings(points, backup_test, *needed)
            .into_iter()
            .collect(),
        reachable: true,
        physical_mb_s: None,
    }
}

/// The answer when the measured backup falls short of the rate. The backup's figure is already
/// its best measured point (the median of its valid repeats), so no other point of a sweep is
/// offered: only changes the isolated tests measured.
fn too_slow_plan(
    asked: &Asked,
    verdict: &Verdict,
    runs: &[&RunResult],
    ceilings: &[Ceiling],
    short: &[&Ceiling],
    (backup_test, measured): (TestKind, f64),
) -> Plan {
    let Asked {
        needed,
        needed_text,
        data,
        window,
        ..
    } = asked;
    let (drives, reachable) = match more_drives_change(verdict, runs, short, *needed) {
        Some((change, others_keep_up)) => (Some(change), others_keep_up),
        None => (None, false),
    };
    let changes = drives
        .into_iter()
        .chain(components_changes(
            asked,
            ceilings,
            short,
            backup_test,
            measured,
        ))
        .collect();
    let answer = if reachable {
        format!(
            "{data} in {window} needs {needed_text} MB/s; the backup measured {measured:.1} MB/s, \
             and the measurements show a way there."
        )
    } else {
        format!(
            "{data} in {window} needs {needed_text} MB/s; the backup measured {measured:.1} MB/s \
             ({} for the data), and no measured change gets there.",
            asked.time_at(measured)
        )
    };
    Plan {
        needed_mb_s: *needed,
        measured_mb_s: Some(measured),
        answer,
        changes,
        reachable,
        physical_mb_s: None,
    }
}

/// More emulated drives as a change, when the target write's figure says how many the rate
/// takes and that is more than now; with whether the other components keep up, so that the
/// drives alone get there.
fn more_drives_change(
    verdict: &Verdict,
    runs: &[&RunResult],
    short: &[&Ceiling],
    needed: f64,
) -> Option<(String, bool)> {
    let drives = row_figure(verdict, TestKind::TapeWrite)
        .and_then(|mb_per_s| more_drives(runs, mb_per_s, needed))
        .filter(|drives| drives.needed > drives.now)?;
    let others_keep_up = short.iter().all(|c| c.component == Component::Target);
    let change = format!(
        "Use {} drives{}: each wrote {:.1} MB/s here.{}",
        drives.needed,
        drives.model,
        drives.per_drive_mb_s,
        if others_keep_up {
            String::new()
        } else {
            " More drives alone do not get there (see below).".to_string()
        }
    );
    Some((change, others_keep_up))
}

/// What the components' own ceilings say of a backup short of the rate: each one under it, or,
/// when none is, where the rate is lost between them.
fn components_changes(
    asked: &Asked,
    ceilings: &[Ceiling],
    short: &[&Ceiling],
    backup_test: TestKind,
    measured: f64,
) -> Vec<String> {
    let needed_text = &asked.needed_text;
    if short.is_empty() && backup_test == TestKind::NetworkBackup {
        vec![format!(
            "The lab's own tests carry {needed_text} MB/s, and the network delivered \
             {measured:.1} MB/s: it takes more clients, more streams or faster links (the \
             verdict says which limits it)."
        )]
    } else if short.is_empty() {
        // Every component alone carries the rate: the backup loses it in how they are driven.
        vec![format!(
            "Each component alone carries {needed_text} MB/s (lowest ceiling {}), so the backup \
             loses the rate in how they work together: try more streams or buffers.",
            lowest_words(ceilings)
        )]
    } else {
        short_words(short, asked.needed)
    }
}

/// The plan of a comparison of tools: each tool's own, from its own verdict, said with its
/// name, so no tool's backup is judged by another's ceiling.
fn tools_plan(
    question: PlanQuestion,
    verdict: &Verdict,
    points: &[Point],
    runs: &[&RunResult],
    survey: Option<&Survey>,
) -> Plan {
    let plans: Vec<(String, Plan)> = verdict
        .tools
        .iter()
        .zip(&verdict.by_tool)
        .map(|(line, own)| {
            (
                line.label.clone(),
                logical_plan(question, own, points, runs, survey),
            )
        })
        .collect();
    Plan {
        needed_mb_s: question.needed_mb_s(),
        measured_mb_s: None,
        answer: plans
            .iter()
            .map(|(tool, plan)| format!("{tool}: {}", plan.answer))
            .collect::<Vec<_>>()
            .join(" "),
        changes: plans
            .iter()
            .flat_map(|(tool, plan)| {
                plan.changes
                    .iter()
                    .map(move |change| format!("{tool}: {change}"))
            })
            .collect(),
        reachable: plans.iter().any(|(_, plan)| plan.reachable),
        physical_mb_s: None,
    }
}

/// A sentence for each component whose own ceiling is under the rate: no change elsewhere
/// gets past it.
fn short_words(short: &[&Ceiling], needed: f64) -> Vec<String> {
    let needed_text = rate_text(needed);
    short
        .iter()
        .map(|ceiling| {
            let what = match ceiling.component {
                Component::Target => "a faster target (or more drives)",
                Component::Source => "faster source storage, or the data spread over more of it",
                Component::Pipeline => "a faster host: more or faster CPUs for the pipeline",
                Component::Tool => "a lighter setting of the tool, or more or faster CPUs for it",
                Component::Network | Component::SharedDevice => "a faster component",
            };
            // "The tool alone" is alone already.
            let alone = if ceiling.test == TestKind::ToolCeiling {
                ""
            } else {
                " alone"
            };
            format!(
                "{} reached {:.1} MB/s{alone}, under the {needed_text} MB/s needed: it takes \
                 {what}.",
                capitalized(ceiling.test.name()),
                ceiling.mb_per_s
            )
        })
        .collect()
}

fn lowest_words(ceilings: &[Ceiling]) -> String {
    ceilings
        .iter()
        .min_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s))
        .map_or_else(
            || "unknown".to_string(),
            |c| format!("{} at {:.1} MB/s", c.test.name(), c.mb_per_s),
        )
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The part size and parts in flight an object store's backup needs for the rate, when the
/// campaign swept them: of the valid points of `test` that reached it, the one holding the least
/// memory in parts. `None` without such a sweep, or when no point reached the rate.
fn upload_settings(points: &[Point], test: TestKind, needed: f64) -> Option<String> {
    let needed_text = rate_text(needed);
    /// A measured point's uploads: its pair, the memory it holds in parts, its figure.
    struct Uploads {
        part_size: u64,
        concurrency: u32,
        memory: u64,
        mb_per_s: f64,
    }
    let swept: Vec<Uploads> = points
        .iter()
        .filter(|point| point.test == test && point.is_valid())
        .filter_map(|point| {
            let (part_size, concurrency) = (point.params.part_size?, point.params.concurrency?);
            Some(Uploads {
                part_size,
                concurrency,
                memory: part_size
                    .saturating_mul(u64::from(concurrency) + 1)
                    .saturating_mul(u64::from(point.params.streams)),
                mb_per_s: point.figure.as_ref()?.mb_per_s,
            })
        })
        .collect();
    let pair = |uploads: &Uploads| (uploads.part_size, uploads.concurrency);
    if swept
        .iter()
        .all(|uploads| Some(pair(uploads)) == swept.first().map(pair))
    {
        return None;
    }
    let chosen = swept
        .iter()
        .filter(|uploads| uploads.mb_per_s >= needed)
        .min_by(|a, b| {
            a.memory
                .cmp(&b.memory)
                .then(b.mb_per_s.total_cmp(&a.mb_per_s))
        })?;
    Some(format!(
        "Upload in {} parts with {} in flight per stream (target.part_size \"{}\", \
         target.concurrency {}): {} measured {:.1} MB/s there, the least memory in parts ({}) \
         of the points that reach {needed_text} MB/s.",
        format_bytes(chosen.part_size),
        chosen.concurrency,
        format_size(chosen.part_size),
        chosen.concurrency,
        test.name(),
        chosen.mb_per_s,
        format_bytes(chosen.memory),
    ))
}

/// How many emulated drives the rate takes, at the rate one drive wrote here.
struct Drives {
    now: u32,
    needed: u32,
    model: String,
    per_drive_mb_s: f64,
}

/// The drives the rate takes, from the target write's figure (`target_mb_s`, the median of its
/// valid repeats) over the drives it wrote to; `None` without emulated drives.
fn more_drives(runs: &[&RunResult], target_mb_s: f64, needed: f64) -> Option<Drives> {
    let tape = runs
        .iter()
        .filter(|run| run.test == TestKind::TapeWrite && run.status == RunStatus::Done)
        .find_map(|run| run.tape.as_ref())?;
    let per_drive = target_mb_s / f64::from(tape.drives.max(1));
    if per_drive <= 0.0 {
        return None;
    }
    Some(Drives {
        now: tape.drives,
        needed: (needed / per_drive).ceil().min(f64::from(u32::MAX)) as u32,
        model: format!(" (emulated {})", tape.model),
        per_drive_mb_s: per_drive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_windows_are_read_as_written() {
        let question = PlanQuestion::parse("12T", "8h").expect("valid");
        assert_eq!(question.data_bytes, 12 << 40);
        assert_eq!(question.window_s, 8.0 * 3600.0);
        // 12 TiB in 8 h: 13 194 139 533 312 bytes / 28 800 s = 458.1 MB/s.
        assert!((question.needed_mb_s() - 458.1).abs() < 0.1);
        assert_eq!(
            PlanQuestion::parse("1G", "90m").expect("m").window_s,
            5400.0
        );
        assert_eq!(
            PlanQuestion::parse("1G", "2").expect("hours").window_s,
            7200.0
        );
        // "12TB" is decimal: 12 × 10^12 bytes in 8 h is 416.7 MB/s.
        let decimal = PlanQuestion::parse("12TB", "8h").expect("valid");
        assert_eq!(decimal.data_bytes, 12_000_000_000_000);
        assert!((decimal.needed_mb_s() - 416.7).abs() < 0.1);
        let errors = PlanQuestion::parse("12X", "soon").expect_err("both bad");
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].0, "data");
        assert_eq!(errors[1].0, "window");
    }

    /// A rate that rounds to nothing at one decimal is said with the figures it has.
    #[test]
    fn a_small_rate_is_never_said_as_nothing() {
        assert_eq!(rate_text(458.07), "458.1");
        assert_eq!(rate_text(0.0093), "under 0.01");
        assert_eq!(rate_text(0.037), "0.04");
        let question = PlanQuestion::parse("1G", "8h").expect("valid");
        assert_ne!(rate_text(question.needed_mb_s()), "0.0");
    }
}
