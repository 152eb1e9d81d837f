//! A backup's life as every view shows it: its nights, its maintenance and its verified
//! restores, each figure formatted once here so the page, report.html, the CLI and
//! `life.csv` give the same numbers under the same names.

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::life_forecast::LifeForecast;
use crate::engine::result::RunResult;
use crate::engine::tool::life::{
    CommandFigures, LATEST, LifeCommand, LifeFigures, NightFigures, ONE_FILE,
};
use crate::forecast::Answer;
use crate::size::format_bytes;

use super::run::RunView;

/// One life of one tool, in cells.
#[derive(Debug, Clone, PartialEq)]
pub struct LifeView {
    /// The run's number, as every view numbers it.
    pub run: usize,
    /// The tool and its parameters: `restic compression=auto`.
    pub tool: String,
    pub version: String,
    /// The plan in a sentence: nights, retention, checks, change.
    pub plan: String,
    /// On a forecast's ladder: which rung, and its tree (`rung 2 of 4: 64 MiB in 152 files`).
    pub rung: Option<String>,
    /// Why the tool ran no maintenance of its own, when it did not.
    pub no_maintenance: Option<String>,
    pub nights: Vec<NightRow>,
    pub maintenance: Vec<CommandRow>,
    pub restores: Vec<RestoreRow>,
    /// The life in a few sentences: first and last night's backup, the most memory a command
    /// took, the failures.
    pub summary: Vec<String>,
    /// The nights drawn: backup seconds, repository size, peak memory of each command.
    pub panels: Vec<LifePanel>,
}

/// One panel of a life's chart: a figure night by night, drawn in the page's own SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct LifePanel {
    pub title: String,
    /// The top of the axis, in words.
    pub top: String,
    /// The panel's line, `x,y` pairs in its 600 × 120 box.
    pub line: String,
    /// Each point, with its colour and what it is (a command's memory).
    pub marks: Vec<LifeMark>,
    /// The last night's number, for the axis.
    pub nights: u32,
}

/// A point of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct LifeMark {
    pub x: f64,
    pub y: f64,
    pub color: &'static str,
    pub title: String,
}

/// The panel's box: 600 wide, 120 high, 40 to the left for the axis's words.
const PANEL_LEFT: f64 = 40.0;
const PANEL_WIDTH: f64 = 560.0;
const PANEL_HEIGHT: f64 = 120.0;

/// The colour each command is drawn in.
fn command_color(command: LifeCommand) -> &'static str {
    match command {
        LifeCommand::Backup => "#4a78a8",
        LifeCommand::Retention => "#d67e2c",
        LifeCommand::Check => "#5a9a5a",
        LifeCommand::CheckData => "#9a5a9a",
    }
}

/// A panel of `values` by night (a night without one is skipped), written by `words`.
fn panel(
    title: &str,
    nights: u32,
    values: &[(u32, f64, &'static str, String)],
    words: impl Fn(f64) -> String,
    line: bool,
) -> LifePanel {
    let top = values
        .iter()
        .map(|(_, value, _, _)| *value)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let x = |night: u32| {
        PANEL_LEFT + PANEL_WIDTH * f64::from(night.saturating_sub(1)) / f64::from(nights.max(2) - 1)
    };
    let y = |value: f64| PANEL_HEIGHT - PANEL_HEIGHT * 0.9 * value / top;
    let marks: Vec<LifeMark> = values
        .iter()
        .map(|(night, value, color, title)| LifeMark {
            x: (x(*night) * 10.0).round() / 10.0,
            y: (y(*value) * 10.0).round() / 10.0,
            color,
            title: title.clone(),
        })
        .collect();
    LifePanel {
        title: title.to_string(),
        top: words(top / 0.9),
        line: if line {
            marks
                .iter()
                .map(|mark| format!("{},{}", mark.x, mark.y))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            String::new()
        },
        marks,
        nights,
    }
}

/// The life's three panels: backup seconds, repository bytes, peak memory of every command.
fn panels(life: &LifeFigures) -> Vec<LifePanel> {
    let nights = life.plan.nights;
    let backups: Vec<(u32, f64, &'static str, String)> = life
        .nights
        .iter()
        .filter_map(|night| {
            let backup = night.backup()?;
            Some((
                night.night,
                backup.seconds,
                command_color(LifeCommand::Backup),
                format!("night {}: backup {:.2} s", night.night, backup.seconds),
            ))
        })
        .collect();
    let repository: Vec<(u32, f64, &'static str, String)> = life
        .nights
        .iter()
        .filter_map(|night| {
            let bytes = night.repository_bytes?;
            Some((
                night.night,
                bytes as f64,
                "#4a78a8",
                format!("night {}: repository {}", night.night, format_bytes(bytes)),
            ))
        })
        .collect();
    let memory: Vec<(u32, f64, &'static str, String)> = life
        .commands()
        .map(|(night, command)| {
            (
                night.night,
                command.peak_rss_bytes as f64,
                command_color(command.command),
                format!(
                    "night {}: {} ({}) {}",
                    night.night,
                    command.command.label(),
                    command.program,
                    format_bytes(command.peak_rss_bytes)
                ),
            )
        })
        .collect();
    let mut panels = vec![panel(
        "Backup, seconds",
        nights,
        &backups,
        |value| format!("{value:.1} s"),
        true,
    )];
    if !repository.is_empty() {
        panels.push(panel(
            "Repository",
            nights,
            &repository,
            |value| format_bytes(value as u64),
            true,
        ));
    }
    panels.push(panel(
        "Peak memory: backup (blue), retention (orange), check (green), check of all data (purple)",
        nights,
        &memory,
        |value| format_bytes(value as u64),
        false,
    ));
    panels
}

/// A night's row: its change, its backup and the repository after it.
#[derive(Debug, Clone, PartialEq)]
pub struct NightRow {
    pub night: u32,
    pub changed: String,
    pub backup_s: String,
    pub mb_per_s: String,
    pub files_per_s: String,
    pub added: String,
    pub repository: String,
    pub index: String,
    pub snapshots: String,
    pub peak_memory: String,
    pub cpu_s: String,
}

/// A maintenance command's row.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRow {
    pub night: u32,
    pub command: &'static str,
    pub program: String,
    pub seconds: String,
    pub cpu_s: String,
    pub peak_memory: String,
    pub mb_per_s: String,
    /// `ok`, or how it failed.
    pub outcome: String,
    pub failed: bool,
}

/// A verified restore's row.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreRow {
    pub which: String,
    pub night: u32,
    pub seconds: String,
    pub mb_per_s: String,
    pub peak_memory: String,
    pub verified: String,
    pub ok: bool,
}

fn dash() -> String {
    "-".to_string()
}

fn seconds(value: f64) -> String {
    format!("{value:.2}")
}

fn bytes(value: Option<u64>) -> String {
    value.map_or_else(dash, format_bytes)
}

impl LifeView {
    /// The life of a finished run (numbered as every view numbers it), if it was one.
    pub fn of(number: usize, result: &RunResult) -> Option<LifeView> {
        let tool = result.tool.as_ref()?;
        let life = tool.life.as_ref()?;
        Some(LifeView {
            run: number,
            tool: result
                .params
                .tool
                .as_ref()
                .map_or_else(|| tool.name.clone(), |tool| tool.label()),
            version: tool.version.clone(),
            plan: life.plan.words(),
            rung: result.params.ladder.map(|rung| {
                format!(
                    "rung {}: a generated tree of {} in {} files",
                    rung.rung,
                    format_bytes(rung.bytes),
                    life.nights.first().map_or(0, |night| night.source_files)
                )
            }),
            no_maintenance: life.no_maintenance.clone(),
            nights: life.nights.iter().map(NightRow::of).collect(),
            maintenance: life
                .commands()
                .filter(|(_, command)| command.command != LifeCommand::Backup)
                .map(|(night, command)| CommandRow::of(night.night, command))
                .collect(),
            restores: life
                .restores
                .iter()
                .map(|restore| RestoreRow {
                    which: match &restore.file {
                        Some(file) => format!("{}: {file}", restore.which),
                        None => restore.which.clone(),
                    },
                    night: restore.night,
                    seconds: seconds(restore.seconds),
                    mb_per_s: format!("{:.1}", restore.mb_per_s),
                    peak_memory: format_bytes(restore.peak_rss_bytes),
                    verified: restore.verified.sentence(),
                    ok: restore.verified.ok(),
                })
                .collect(),
            summary: summary(&tool.name, life),
            panels: panels(life),
        })
    }

    /// Every life among a campaign's finished runs.
    pub fn all(runs: &[RunView<'_>]) -> Vec<LifeView> {
        runs.iter()
            .filter_map(|run| LifeView::of(run.number, run.result?))
            .collect()
    }
}

impl NightRow {
    fn of(night: &NightFigures) -> NightRow {
        let backup = night.backup();
        NightRow {
            night: night.night,
            changed: night.changed.map_or_else(
                || "full backup".to_string(),
                |changed| {
                    format!(
                        "{} edited, {} new, {} deleted, {} renamed",
                        format_bytes(changed.edited.bytes),
                        format_bytes(changed.added_bytes),
                        changed.deleted_files,
                        changed.renamed_files
                    )
                },
            ),
            backup_s: backup.map_or_else(dash, |backup| seconds(backup.seconds)),
            mb_per_s: backup
                .and_then(|backup| backup.mb_per_s)
                .map_or_else(dash, |value| format!("{value:.1}")),
            files_per_s: backup
                .and_then(|backup| backup.files_per_s)
                .map_or_else(dash, |value| format!("{value:.0}")),
            added: bytes(night.added_bytes),
            repository: bytes(night.repository_bytes),
            index: bytes(night.index_bytes),
            snapshots: night.snapshots.map_or_else(dash, |count| count.to_string()),
            peak_memory: backup.map_or_else(dash, |backup| format_bytes(backup.peak_rss_bytes)),
            cpu_s: backup.map_or_else(dash, |backup| seconds(backup.cpu_s)),
        }
    }
}

impl CommandRow {
    fn of(night: u32, command: &CommandFigures) -> CommandRow {
        CommandRow {
            night,
            command: command.command.label(),
            program: command.program.clone(),
            seconds: seconds(command.seconds),
            cpu_s: seconds(command.cpu_s),
            peak_memory: format_bytes(command.peak_rss_bytes),
            mb_per_s: command
                .mb_per_s
                .map_or_else(dash, |value| format!("{value:.1}")),
            outcome: command
                .error
                .as_ref()
                .map_or_else(|| "ok".to_string(), |error| format!("failed: {error}")),
            failed: command.error.is_some(),
        }
    }
}

/// The life in sentences: how the nightly backup's time moved, the most memory each kind of
/// command took, and every command that failed.
fn summary(tool: &str, life: &LifeFigures) -> Vec<String> {
    let mut lines = Vec::new();
    let backups: Vec<(u32, &CommandFigures)> = life
        .nights
        .iter()
        .filter_map(|night| night.backup().map(|backup| (night.night, backup)))
        .collect();
    if let (Some((_, first)), Some((last_night, last))) = (backups.get(1), backups.last()) {
        lines.push(format!(
            "{tool}'s nightly backup took {:.2} s on night 2 and {:.2} s on night {last_night} \
             ({}); the full backup of night 1 took {:.2} s.",
            first.seconds,
            last.seconds,
            change_words(first.seconds, last.seconds),
            backups[0].1.seconds
        ));
    }
    for kind in [
        LifeCommand::Backup,
        LifeCommand::Retention,
        LifeCommand::Check,
        LifeCommand::CheckData,
    ] {
        if let Some((night, most)) = life
            .commands()
            .filter(|(_, command)| command.command == kind)
            .max_by_key(|(_, command)| command.peak_rss_bytes)
        {
            lines.push(format!(
                "Most memory for its {}: {} ({}, night {}).",
                kind.label(),
                format_bytes(most.peak_rss_bytes),
                most.program,
                night.night
            ));
        }
    }
    for (night, failed) in life.failures() {
        lines.push(format!(
            "Night {}: {} ({}) failed after {:.2} s holding {}: {}",
            night.night,
            failed.command.label(),
            failed.program,
            failed.seconds,
            format_bytes(failed.peak_rss_bytes),
            failed.error.as_deref().unwrap_or_default()
        ));
    }
    lines
}

/// How a time moved from `from` to `to`, in words.
fn change_words(from: f64, to: f64) -> String {
    if from <= 0.0 {
        return "no time to compare".to_string();
    }
    let ratio = to / from;
    if (0.9..=1.1).contains(&ratio) {
        "about the same".to_string()
    } else if ratio > 1.0 {
        format!("{ratio:.1}× longer")
    } else {
        format!("{:.1}× shorter", 1.0 / ratio)
    }
}

/// The lives as the CLI prints them: the plan, a row per night, the maintenance, the
/// restores and the summary.
pub fn life_text(lives: &[LifeView]) -> String {
    let mut out = String::new();
    for life in lives {
        let _ = writeln!(
            out,
            "Life of {} ({}): {}",
            life.tool, life.version, life.plan
        );
        let _ = writeln!(
            out,
            "{:>5} {:>9} {:>8} {:>8} {:>10} {:>11} {:>10} {:>5} {:>10}  Changed",
            "Night",
            "backup s",
            "MB/s",
            "files/s",
            "added",
            "repository",
            "index",
            "kept",
            "peak mem"
        );
        for night in &life.nights {
            let _ = writeln!(
                out,
                "{:>5} {:>9} {:>8} {:>8} {:>10} {:>11} {:>10} {:>5} {:>10}  {}",
                night.night,
                night.backup_s,
                night.mb_per_s,
                night.files_per_s,
                night.added,
                night.repository,
                night.index,
                night.snapshots,
                night.peak_memory,
                night.changed
            );
        }
        if let Some(why) = &life.no_maintenance {
            let _ = writeln!(out, "Maintenance: {why}");
        }
        for row in &life.maintenance {
            let _ = writeln!(
                out,
                "Night {:>3}: {:<17} {:<14} {:>8} s  CPU {:>8} s  peak {:>10}  {}",
                row.night,
                row.command,
                row.program,
                row.seconds,
                row.cpu_s,
                row.peak_memory,
                row.outcome
            );
        }
        for restore in &life.restores {
            let _ = writeln!(
                out,
                "Restore of night {} ({}): {} s, {} MB/s, peak {}; {}",
                restore.night,
                restore.which,
                restore.seconds,
                restore.mb_per_s,
                restore.peak_memory,
                restore.verified
            );
        }
        for line in &life.summary {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// One row of `life.csv`: a command of a night, or a restore, with the night's figures.
#[derive(Serialize)]
struct LifeCsvRow<'a> {
    campaign: &'a str,
    run: usize,
    tool: &'a str,
    night: u32,
    command: &'a str,
    program: &'a str,
    seconds: f64,
    cpu_s: f64,
    peak_rss_bytes: u64,
    mb_per_s: Option<f64>,
    files_per_s: Option<f64>,
    source_files: Option<u64>,
    source_bytes: Option<u64>,
    added_bytes: Option<u64>,
    repository_bytes: Option<u64>,
    index_bytes: Option<u64>,
    snapshots: Option<u32>,
    verified_files: Option<u64>,
    verified_bytes: Option<u64>,
    verified: Option<bool>,
    error: Option<&'a str>,
}

/// The lives of a campaign's runs as CSV: a row per night and command (`backup`,
/// `retention`, `check`, `check_data`), then a row per restore (`restore_latest`,
/// `restore_one_file`, `restore_oldest_kept`), each with its night's figures.
pub fn life_csv(campaign_id: &str, runs: &[RunView<'_>]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for run in runs {
        let Some((result, life)) = run.result.and_then(|result: &RunResult| {
            result
                .tool
                .as_ref()
                .and_then(|tool| tool.life.as_ref())
                .map(|life| (result, life))
        }) else {
            continue;
        };
        let tool = result.tool.as_ref().map_or("", |tool| tool.name.as_str());
        for (night, command) in life.commands() {
            let backup = command.command == LifeCommand::Backup;
            writer.serialize(LifeCsvRow {
                campaign: campaign_id,
                run: run.number,
                tool,
                night: night.night,
                command: command.command.id(),
                program: &command.program,
                seconds: command.seconds,
                cpu_s: command.cpu_s,
                peak_rss_bytes: command.peak_rss_bytes,
                mb_per_s: command.mb_per_s,
                files_per_s: command.files_per_s,
                source_files: backup.then_some(night.source_files),
                source_bytes: backup.then_some(night.source_bytes),
                added_bytes: night.added_bytes.filter(|_| backup),
                repository_bytes: night.repository_bytes,
                index_bytes: night.index_bytes,
                snapshots: night.snapshots,
                verified_files: None,
                verified_bytes: None,
                verified: None,
                error: command.error.as_deref(),
            })?;
        }
        for restore in &life.restores {
            let command = match restore.which.as_str() {
                LATEST => "restore_latest",
                ONE_FILE => "restore_one_file",
                _ => "restore_oldest_kept",
            };
            writer.serialize(LifeCsvRow {
                campaign: campaign_id,
                run: run.number,
                tool,
                night: restore.night,
                command,
                program: "",
                seconds: restore.seconds,
                cpu_s: restore.cpu_s,
                peak_rss_bytes: restore.peak_rss_bytes,
                mb_per_s: Some(restore.mb_per_s),
                files_per_s: None,
                source_files: None,
                source_bytes: None,
                added_bytes: None,
                repository_bytes: None,
                index_bytes: None,
                snapshots: None,
                verified_files: Some(restore.verified.files),
                verified_bytes: Some(restore.verified.bytes),
                verified: Some(restore.verified.ok()),
                error: None,
            })?;
        }
    }
    super::csv_text(writer)
}

/// A tool's forecast to the user's size, in cells.
#[derive(Debug, Clone, PartialEq)]
pub struct ForecastView {
    pub tool: String,
    /// The user's size in words.
    pub request: String,
    /// The ladder measured, in words.
    pub ladder: String,
    /// The memory answer against the machine's.
    pub memory: Option<String>,
    pub rows: Vec<ForecastRow>,
    /// A year at the user's size by each price sheet, the cheapest first, and its basis.
    pub year: Vec<YearRow>,
    pub year_basis: Option<String>,
}

/// A year at the user's size by one price sheet, in cells.
#[derive(Debug, Clone, PartialEq)]
pub struct YearRow {
    /// The sheet's name and date.
    pub sheet: String,
    pub requests: String,
    pub storage: String,
    pub total: String,
    pub cheapest: bool,
}

/// One answer: what, at the user's size, and on what basis.
#[derive(Debug, Clone, PartialEq)]
pub struct ForecastRow {
    pub figure: String,
    pub answer: String,
    pub basis: String,
    /// Whether the answer is a number.
    pub estimate: bool,
    /// The number, when it is one.
    pub value: Option<f64>,
}

impl ForecastView {
    /// Each tool's forecast in cells.
    pub fn all(forecasts: &[LifeForecast]) -> Vec<ForecastView> {
        forecasts.iter().map(ForecastView::of).collect()
    }

    fn of(forecast: &LifeForecast) -> ForecastView {
        ForecastView {
            tool: forecast.tool.clone(),
            request: forecast.request.clone(),
            ladder: forecast.ladder.clone(),
            memory: forecast.memory.clone(),
            rows: forecast
                .lines
                .iter()
                .map(|line| ForecastRow {
                    figure: line.figure.clone(),
                    answer: line.said.clone(),
                    basis: line.basis.clone(),
                    estimate: matches!(line.answer, Some(Answer::Estimate { .. })),
                    value: match line.answer {
                        Some(Answer::Estimate { value, .. }) => Some(value),
                        _ => None,
                    },
                })
                .collect(),
            year: forecast
                .year
                .iter()
                .enumerate()
                .map(|(index, bill)| {
                    let money = |amount| crate::views::requests::money(amount, &bill.currency);
                    YearRow {
                        sheet: bill.sheet_words.clone(),
                        requests: money(bill.requests_cost),
                        storage: money(bill.storage_cost),
                        total: format!(
                            "{} ({}–{})",
                            money(bill.total()),
                            money(bill.low),
                            money(bill.high)
                        ),
                        cheapest: index == 0,
                    }
                })
                .collect(),
            year_basis: forecast.year_basis.clone(),
        }
    }
}

/// Several tools' forecasts compared on what pages people: which tool's retention, and which
/// one's backup, needs the least memory at the user's size (only where each gave a number).
pub fn forecasts_compared(forecasts: &[ForecastView]) -> Vec<String> {
    if forecasts.len() < 2 {
        return Vec::new();
    }
    let mut lines = Vec::new();
    for figure in [
        "retention (prune), peak memory",
        "backup, peak memory",
        "nightly backup, seconds",
    ] {
        let answers: Vec<(&str, f64)> = forecasts
            .iter()
            .filter_map(|forecast| {
                let row = forecast.rows.iter().find(|row| row.figure == figure)?;
                Some((forecast.tool.as_str(), row.value?))
            })
            .collect();
        if answers.len() < 2 {
            continue;
        }
        let words = |value: f64| {
            if figure.ends_with("seconds") {
                crate::analysis::life_forecast::Unit::Seconds.words(value)
            } else {
                crate::analysis::life_forecast::Unit::Bytes.words(value)
            }
        };
        let mut sorted = answers.clone();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, least) = sorted[0];
        let others: Vec<String> = sorted[1..]
            .iter()
            .map(|(tool, value)| format!("{tool}'s {}", words(*value)))
            .collect();
        let (what, how) = figure.split_once(", ").unwrap_or((figure, ""));
        let needs = if how == "seconds" {
            "takes the least time"
        } else {
            "needs the least memory"
        };
        lines.push(format!(
            "At your size, {best}'s {what} {needs}: about {}, against {}.",
            words(least),
            others.join(", ")
        ));
    }
    lines
}

/// The forecasts as the CLI prints them.
pub fn forecast_text(forecasts: &[ForecastView]) -> String {
    let mut out = String::new();
    for line in forecasts_compared(forecasts) {
        let _ = writeln!(out, "{line}");
    }
    for forecast in forecasts {
        let _ = writeln!(
            out,
            "Forecast for {} at {} (from {}):",
            forecast.tool, forecast.request, forecast.ladder
        );
        if let Some(memory) = &forecast.memory {
            let _ = writeln!(out, "  {memory}");
        }
        for row in &forecast.rows {
            let _ = writeln!(out, "  {}: {} [{}]", row.figure, row.answer, row.basis);
        }
        let Some(basis) = &forecast.year_basis else {
            continue;
        };
        if forecast.year.is_empty() {
            let _ = writeln!(out, "  A year at your size: {basis}.");
        } else {
            let _ = writeln!(out, "  A year at your size, by each price sheet [{basis}]:");
            for row in &forecast.year {
                let _ = writeln!(
                    out,
                    "    {}: requests {}, storage {}, together {}{}",
                    row.sheet,
                    row.requests,
                    row.storage,
                    row.total,
                    if row.cheapest { " (the cheapest)" } else { "" }
                );
            }
        }
    }
    out
}
