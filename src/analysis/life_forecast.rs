//! A life forecast to the user's size: each figure of the lives measured on a ladder of
//! generated trees (one life a rung) fitted against what drives it, the source's bytes or its
//! files, and answered at the user's size with its range and its basis
//! ([`crate::forecast`]); where the ladder cannot support a number, the answer says so in
//! words. Memory is the answer people are paged for: it is set beside the machine's.

use serde::{Deserialize, Serialize};

use crate::engine::result::RunResult;
use crate::engine::target::s3::operations::RequestCounts;
use crate::engine::tool::life::{
    CommandFigures, LATEST, LifeCommand, LifeFigures, LifePlan, LifeRestore, ONE_FILE,
};
use crate::forecast::{self, Answer, Driver, Forecast};
use crate::size::format_bytes;
use crate::spec::forecast::ForecastSpec;

/// One rung's life, with the size of the tree it ran on.
#[derive(Debug, Clone, Copy)]
pub struct RungLife<'a> {
    /// The tree's bytes and files on its first night.
    pub bytes: u64,
    pub files: u64,
    pub life: &'a LifeFigures,
}

/// How a forecast figure is written: seconds, or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Seconds,
    Bytes,
    /// Requests to a bucket.
    Requests,
}

impl Unit {
    /// A value of this unit in words: `1.23 s`, `2 h 05 min`, `21.4 GiB`.
    pub fn words(self, value: f64) -> String {
        match self {
            Unit::Bytes => format_bytes(value.max(0.0).round() as u64),
            Unit::Seconds if value >= 3600.0 => {
                let minutes = (value / 60.0).round() as u64;
                format!("{} h {:02} min", minutes / 60, minutes % 60)
            }
            Unit::Seconds if value >= 120.0 => format!("{:.0} min", value / 60.0),
            Unit::Seconds => format!("{} s", crate::forecast::sig(value)),
            Unit::Requests => format!("{} requests", value.max(0.0).round()),
        }
    }
}

/// One answer of a forecast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ForecastLine {
    /// What is forecast, for a program: `retention_peak_memory_bytes`.
    pub key: String,
    /// What is forecast, in words: `retention (prune), peak memory`.
    pub figure: String,
    pub unit: Unit,
    /// The answer: a number with its range, or why there is none; `None` when the ladder
    /// did not measure it (the tool has no such command).
    pub answer: Option<Answer>,
    /// The answer in words, as every view writes it.
    pub said: String,
    /// What it rests on, in words: the fit, what drives it, what was not on the ladder.
    pub basis: String,
}

impl ForecastLine {
    /// A line with its answer in words.
    fn new(key: &str, figure: String, unit: Unit, answer: Option<Answer>, basis: String) -> Self {
        let said = answer_words(unit, answer.as_ref());
        ForecastLine {
            key: key.to_string(),
            figure,
            unit,
            answer,
            said,
            basis,
        }
    }
}

/// An answer in words, with its range: `about 21.4 GiB (19.9–23.0 GiB)`.
fn answer_words(unit: Unit, answer: Option<&Answer>) -> String {
    match answer {
        None => "not measured".to_string(),
        Some(Answer::Estimate { value, low, high }) => format!(
            "about {} ({}–{})",
            unit.words(*value),
            unit.words(*low),
            unit.words(*high)
        ),
        Some(Answer::NotMeasurable { low, high }) => format!(
            "not measurable at these sizes: it stayed within {}–{} across the ladder, \
                 within its noise",
            unit.words(*low),
            unit.words(*high)
        ),
        Some(Answer::TooFar { reach }) => format!(
            "no number: your size is {}× the largest measured, beyond the {}× a fit may \
                 be carried",
            reach.round(),
            forecast::MAX_REACH
        ),
        Some(Answer::TooUncertain { low, high }) => format!(
            "no number: the fit is too uncertain, anywhere from {} to {}",
            unit.words(*low),
            unit.words(*high)
        ),
    }
}

/// A tool's life forecast to the user's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LifeForecast {
    /// The tool and its parameters, as every view names it: `restic compression=auto`.
    #[serde(default)]
    pub tool: String,
    /// The user's size in words: `20 TiB in 50000000 files, 2 % changed a day, 365 kept`.
    pub request: String,
    /// The ladder in words: `4 rungs of 32 MiB to 256 MiB, 10 nights each`.
    pub ladder: String,
    pub lines: Vec<ForecastLine>,
    /// The memory answer against the machine's: `the retention would need about 21.4 GiB at
    /// 18.2 TiB; this machine has 15.6 GiB`.
    pub memory: Option<String>,
    /// A year at the user's size by each price sheet, cheapest first, where the lives kept
    /// their repository in a bucket and the forecast gave both its nightly requests and its
    /// repository; and what it rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub year: Vec<super::bill::YearBill>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year_basis: Option<String>,
}

impl LifeForecast {
    /// A line by its key.
    fn line(&self, key: &str) -> Option<&ForecastLine> {
        self.lines.iter().find(|line| line.key == key)
    }

    /// Prices a year at the user's size by `sheets` ([`super::bill::year_bills`]) from this
    /// forecast's nightly requests and repository, at the mix of the nights of its ladder's
    /// largest life among `runs`.
    pub fn price_the_year(&mut self, runs: &[&RunResult], sheets: &super::prices::PriceSheets) {
        let largest = runs
            .iter()
            .filter(|result| {
                result.params.ladder.is_some()
                    && result.params.tool.as_ref().map(|tool| tool.label())
                        == Some(self.tool.clone())
            })
            .filter_map(|result| result.tool.as_ref()?.life.as_ref())
            .max_by_key(|life| life.nights.first().map_or(0, |night| night.source_bytes));
        if let Some(largest) = largest {
            self.price_the_year_on(largest, sheets);
        }
    }

    /// [`LifeForecast::price_the_year`] at the mix of `largest`'s nights. A forecast whose
    /// lives counted no request (a repository not in a bucket) is left as it is; one that
    /// gives no number for the nightly requests or the repository says so instead of a price.
    fn price_the_year_on(&mut self, largest: &LifeFigures, sheets: &super::prices::PriceSheets) {
        let Some(nightly) = self.line("nightly_requests") else {
            return;
        };
        let Some((mix, nights)) = nights_requests(largest) else {
            return;
        };
        let estimate = |line: Option<&ForecastLine>| match line?.answer {
            Some(Answer::Estimate { value, low, high }) => {
                Some(super::bill::Ranged { value, low, high })
            }
            _ => None,
        };
        let repository = self.line("repository_bytes");
        let (Some(requests), Some(bytes)) = (estimate(Some(nightly)), estimate(repository)) else {
            let missing = [Some(nightly), repository]
                .into_iter()
                .flatten()
                .filter(|line| estimate(Some(line)).is_none())
                .map(|line| format!("{}: {}", line.figure, line.said))
                .collect::<Vec<_>>()
                .join("; ");
            self.year_basis = Some(format!(
                "Not priced: the forecast gives no number for what a year at your size is \
                 priced from ({missing})"
            ));
            return;
        };
        let tree = largest.nights.first().map_or(0, |night| night.source_bytes);
        self.year = super::bill::year_bills(sheets, requests, &mix, bytes);
        self.year_basis = Some(format!(
            "{} nightly backups of about {} each (the forecast's nightly backup), priced at the \
             operations of the {nights} nights measured on the ladder's largest tree ({}: {}), \
             and twelve months of the forecast repository ({}); the range is the year at both \
             ends of the two forecasts' ranges; the first full backup, the retentions' and \
             checks' requests, restores and free allowances are not counted",
            super::bill::NIGHTS_A_YEAR,
            Unit::Requests.words(requests.value),
            format_bytes(tree),
            mix.each_words(),
            Unit::Bytes.words(bytes.value),
        ));
    }
}

/// [`forecasts`], each with a year at the user's size priced by `sheets` where its lives kept
/// their repository in a bucket ([`LifeForecast::price_the_year`]): what every view shows.
pub fn priced_forecasts(
    request: Option<&ForecastSpec>,
    runs: &[&RunResult],
    sheets: &super::prices::PriceSheets,
) -> Vec<LifeForecast> {
    let mut priced = forecasts(request, runs);
    for forecast in &mut priced {
        forecast.price_the_year(runs, sheets);
    }
    priced
}

/// Each tool's forecast from the lives on its ladder, in the order the tools first ran;
/// none without a forecast in the spec.
pub fn forecasts(request: Option<&ForecastSpec>, runs: &[&RunResult]) -> Vec<LifeForecast> {
    let Some(request) = request else {
        return Vec::new();
    };
    let on_ladder = |result: &RunResult| -> Option<String> {
        result.params.ladder?;
        result.params.tool.as_ref().map(|tool| tool.label())
    };
    let mut tools: Vec<String> = Vec::new();
    for tool in runs.iter().filter_map(|result| on_ladder(result)) {
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    tools
        .into_iter()
        .filter_map(|tool| {
            let lives: Vec<&LifeFigures> = runs
                .iter()
                .filter(|result| on_ladder(result).as_ref() == Some(&tool))
                .filter_map(|result| result.tool.as_ref()?.life.as_ref())
                .collect();
            let rungs: Vec<RungLife<'_>> = lives
                .iter()
                .filter_map(|life| {
                    let first = life.nights.first()?;
                    Some(RungLife {
                        bytes: first.source_bytes,
                        files: first.source_files,
                        life,
                    })
                })
                .collect();
            let first = lives.first()?;
            let memory = lives.iter().find_map(|life| life.machine_memory_bytes);
            let forecast = forecast_life(request, &first.plan, &rungs, memory)?;
            Some(LifeForecast { tool, ..forecast })
        })
        .collect()
}

/// The forecast of the lives on a ladder at the user's size; `None` with fewer than three
/// rungs measured. `machine_memory` is the memory of the machine the lives ran on.
pub fn forecast_life(
    request: &ForecastSpec,
    plan: &LifePlan,
    rungs: &[RungLife<'_>],
    machine_memory: Option<u64>,
) -> Option<LifeForecast> {
    if rungs.len() < 3 {
        return None;
    }
    let size = request.size.bytes() as f64;
    let files = request.files as f64;
    let change = request.change.unwrap_or(plan.change.edited);
    let keep = request.keep.unwrap_or(plan.keep);
    let measured_keep = plan.keep.min(plan.nights);
    let kept_note = if keep == measured_keep {
        String::new()
    } else {
        format!("; measured with {measured_keep} backups kept, your {keep} are not on the ladder")
    };
    let seconds = |value: f64| Unit::Seconds.words(value);
    let by_bytes = |figure: &dyn Fn(&RungLife<'_>) -> Option<f64>| {
        forecast::forecast_best(
            &points(rungs, Driver::Bytes, figure),
            size,
            Driver::Bytes,
            seconds,
        )
        .ok()
    };
    let by_files = |figure: &dyn Fn(&RungLife<'_>) -> Option<f64>| {
        at(&points(rungs, Driver::Files, figure), files, Driver::Files)
    };
    // Memory is a tool's runtime plus what its index holds: a straight line against files,
    // unless a power law fits its ladder better.
    let memory_by_files = |figure: &dyn Fn(&RungLife<'_>) -> Option<f64>| {
        forecast::forecast_best(
            &points(rungs, Driver::Files, figure),
            files,
            Driver::Files,
            |bytes| format_bytes(bytes.max(0.0).round() as u64),
        )
        .ok()
    };
    let mut lines = Vec::new();
    lines.push(fitted_line(
        ("first_backup_seconds", "first (full) backup, seconds"),
        Unit::Seconds,
        by_bytes(&|rung: &RungLife<'_>| first_backup(rung.life).map(|backup| backup.seconds)),
        "bytes",
        "",
    ));
    lines.push(fitted_line(
        ("nightly_backup_seconds", "nightly backup, seconds"),
        Unit::Seconds,
        by_bytes(&|rung: &RungLife<'_>| nightly(rung.life, |backup| backup.seconds)),
        "bytes",
        &format!(
            "; nights changed as the life's model ({}), your {} % a day not applied",
            plan.change.words(),
            (change * 1000.0).round() / 10.0
        ),
    ));
    // The nights' requests of a bucket, where the lives kept their repository in one.
    let counted_nights = rungs
        .iter()
        .all(|rung| nightly_requests(rung.life).is_some());
    if counted_nights {
        lines.push(fitted_line(
            ("nightly_requests", "nightly backup, requests to the bucket"),
            Unit::Requests,
            forecast::forecast_best(
                &points(rungs, Driver::Bytes, &|rung: &RungLife<'_>| {
                    nightly_requests(rung.life)
                }),
                size,
                Driver::Bytes,
                |value| Unit::Requests.words(value),
            )
            .ok(),
            "bytes",
            &format!(
                "; nights changed as the life's model ({}), your {} % a day not applied",
                plan.change.words(),
                (change * 1000.0).round() / 10.0
            ),
        ));
    }
    lines.push(fitted_line(
        ("backup_peak_memory_bytes", "backup, peak memory"),
        Unit::Bytes,
        memory_by_files(&|rung: &RungLife<'_>| {
            most(rung.life, LifeCommand::Backup, |command| {
                command.peak_rss_bytes as f64
            })
        }),
        "files",
        "",
    ));
    lines_for_repository(&mut lines, rungs, size, change, keep, plan);
    lines.push(fitted_line(
        ("index_bytes", "index and metadata, bytes"),
        Unit::Bytes,
        by_files(&|rung: &RungLife<'_>| {
            rung.life
                .nights
                .last()
                .and_then(|night| night.index_bytes)
                .map(|bytes| bytes as f64)
        }),
        "files",
        "",
    ));
    for (kind, key, name) in [
        (LifeCommand::Retention, "retention", "retention (prune)"),
        (LifeCommand::Check, "check", "check (metadata)"),
        (LifeCommand::CheckData, "check_data", "check (all data)"),
    ] {
        lines.push(fitted_line(
            (&format!("{key}_seconds"), &format!("{name}, seconds")),
            Unit::Seconds,
            by_bytes(&|rung: &RungLife<'_>| most(rung.life, kind, |command| command.seconds)),
            "bytes",
            &kept_note,
        ));
        lines.push(fitted_line(
            (
                &format!("{key}_peak_memory_bytes"),
                &format!("{name}, peak memory"),
            ),
            Unit::Bytes,
            memory_by_files(&|rung: &RungLife<'_>| {
                most(rung.life, kind, |command| command.peak_rss_bytes as f64)
            }),
            "files",
            &kept_note,
        ));
    }
    lines.push(fitted_line(
        ("full_restore_seconds", "full restore, seconds"),
        Unit::Seconds,
        by_bytes(&|rung: &RungLife<'_>| {
            restore_of(rung.life, LATEST).map(|restore| restore.seconds)
        }),
        "bytes",
        "",
    ));
    let one_file = forecast::forecast_best(
        &points(rungs, Driver::Files, &|rung: &RungLife<'_>| {
            restore_of(rung.life, ONE_FILE).map(|restore| restore.seconds)
        }),
        files,
        Driver::Files,
        seconds,
    )
    .ok();
    let (answer, basis) = match one_file {
        Some(fitted) => (
            Some(fitted.answer),
            format!(
                "{}, against the source's files; the whole restore of one file (the last in \
                 name order), so its first byte comes no later",
                fitted.basis
            ),
        ),
        None => (
            None,
            "the tool's definition has no `restore_one`, so the life restored no single file"
                .to_string(),
        ),
    };
    lines.push(ForecastLine::new(
        "one_file_restore_seconds",
        "restore of one file, seconds".to_string(),
        Unit::Seconds,
        answer,
        basis,
    ));
    let memory = memory_line(&lines, request, machine_memory);
    let first = rungs.iter().map(|rung| rung.bytes).min().unwrap_or(0);
    let last = rungs.iter().map(|rung| rung.bytes).max().unwrap_or(0);
    Some(LifeForecast {
        tool: String::new(),
        request: request.words(change, keep),
        ladder: format!(
            "{} rungs of {} to {} in files of {} on average, {} nights each",
            rungs.len(),
            format_bytes(first),
            format_bytes(last),
            format_bytes(request.mean_file_bytes()),
            plan.nights
        ),
        lines,
        memory,
        year: Vec::new(),
        year_basis: None,
    })
}

/// The life's restore of that kind: [`LATEST`], [`ONE_FILE`].
fn restore_of<'a>(life: &'a LifeFigures, which: &str) -> Option<&'a LifeRestore> {
    life.restores.iter().find(|restore| restore.which == which)
}

/// A line of a fitted figure; without a fit, one saying the tool ran no such command.
/// `(key, figure)` names it as [`ForecastLine`] does.
fn fitted_line(
    (key, figure): (&str, &str),
    unit: Unit,
    fitted: Option<Forecast>,
    driver: &str,
    note: &str,
) -> ForecastLine {
    let basis = fitted.as_ref().map_or_else(
        || "the tool ran no such command".to_string(),
        |fitted| format!("{}, against the source's {driver}{note}", fitted.basis),
    );
    ForecastLine::new(
        key,
        figure.to_string(),
        unit,
        fitted.map(|fitted| fitted.answer),
        basis,
    )
}

/// The repository after the kept backups: the full backup's repository plus what each
/// further kept night adds, scaled from the life's change to the user's.
fn lines_for_repository(
    lines: &mut Vec<ForecastLine>,
    rungs: &[RungLife<'_>],
    size: f64,
    change: f64,
    keep: u32,
    plan: &LifePlan,
) {
    let full = at(
        &points(rungs, Driver::Bytes, &|rung: &RungLife<'_>| {
            rung.life
                .nights
                .first()
                .and_then(|night| night.repository_bytes)
                .map(|bytes| bytes as f64)
        }),
        size,
        Driver::Bytes,
    );
    let added = at(
        &points(rungs, Driver::Bytes, &|rung: &RungLife<'_>| {
            let added: Vec<f64> = rung
                .life
                .nights
                .iter()
                .skip(1)
                .filter_map(|night| night.added_bytes)
                .map(|bytes| bytes as f64)
                .collect();
            (!added.is_empty()).then(|| added.iter().sum::<f64>() / added.len() as f64)
        }),
        size,
        Driver::Bytes,
    );
    let scale = if plan.change.edited > 0.0 {
        change / plan.change.edited
    } else {
        1.0
    };
    let nights = f64::from(keep.saturating_sub(1));
    let answer = match (
        full.as_ref().map(|f| &f.answer),
        added.as_ref().map(|a| &a.answer),
    ) {
        (
            Some(Answer::Estimate { value, low, high }),
            Some(Answer::Estimate {
                value: a,
                low: a_low,
                high: a_high,
            }),
        ) => Some(Answer::Estimate {
            value: value + nights * scale * a,
            low: low + nights * scale * a_low,
            high: high + nights * scale * a_high,
        }),
        (Some(Answer::Estimate { .. }), Some(other)) | (Some(other), _) => Some(other.clone()),
        (None, _) => None,
    };
    let basis = match (&full, &added) {
        (Some(full), Some(added)) => format!(
            "the full backup's repository ({}) plus {} nights' additions ({}) scaled by \
                 your change over the life's ({:.2}×), against the source's bytes",
            full.basis,
            keep.saturating_sub(1),
            added.basis,
            scale
        ),
        (Some(full), None) => format!("{}, against the source's bytes", full.basis),
        _ => "the life measured no repository".to_string(),
    };
    lines.push(ForecastLine::new(
        "repository_bytes",
        format!("repository after {keep} kept backups, bytes"),
        Unit::Bytes,
        answer,
        basis,
    ));
}

/// "The retention would need about 21.4 GiB at 18.2 TiB; this machine has 15.6 GiB": the
/// largest memory answer, set beside the machine's.
fn memory_line(
    lines: &[ForecastLine],
    request: &ForecastSpec,
    machine_memory: Option<u64>,
) -> Option<String> {
    let (line, value, high) = lines
        .iter()
        .filter(|line| line.unit == Unit::Bytes && line.figure.ends_with("peak memory"))
        .filter_map(|line| match line.answer {
            Some(Answer::Estimate { value, high, .. }) => Some((line, value, high)),
            _ => None,
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let command = line.figure.trim_end_matches(", peak memory");
    let machine = machine_memory.map_or_else(String::new, |memory| {
        let verdict = if (memory as f64) < value {
            "; this machine has only"
        } else if (memory as f64) < high {
            "; within its range of this machine's"
        } else {
            "; this machine has"
        };
        format!("{verdict} {}", format_bytes(memory))
    });
    Some(format!(
        "The {command} would need about {} of memory at {} in {} files (up to {}){machine}.",
        Unit::Bytes.words(value),
        format_bytes(request.size.bytes()),
        request.files,
        Unit::Bytes.words(high)
    ))
}

/// The forecast of `points` at `size`, `None` without a fit (fewer than three rungs, or a
/// figure at 0).
fn at(points: &[(f64, f64)], size: f64, driver: Driver) -> Option<Forecast> {
    forecast::forecast(points, size, driver).ok()
}

/// (the rung's size, its figure) for each rung that has the figure: its bytes for a figure
/// that grows with bytes, its files for one that grows with files.
fn points(
    rungs: &[RungLife<'_>],
    driver: Driver,
    figure: &dyn Fn(&RungLife<'_>) -> Option<f64>,
) -> Vec<(f64, f64)> {
    rungs
        .iter()
        .filter_map(|rung| {
            let size = match driver {
                Driver::Files => rung.files,
                Driver::Bytes | Driver::Snapshots => rung.bytes,
            };
            figure(rung).map(|value| (size as f64, value))
        })
        .collect()
}

fn first_backup(life: &LifeFigures) -> Option<&CommandFigures> {
    life.nights.first().and_then(|night| night.backup())
}

/// The mean of a figure of the backups after the first night.
fn nightly(life: &LifeFigures, figure: impl Fn(&CommandFigures) -> f64) -> Option<f64> {
    let values: Vec<f64> = life
        .nights
        .iter()
        .skip(1)
        .filter_map(|night| night.backup())
        .map(figure)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The requests a life's nightly backups made of its bucket, operation by operation, summed
/// over the nights after the first, and those nights' number; `None` when its backups'
/// requests were not counted (a repository not in a bucket).
pub fn nights_requests(life: &LifeFigures) -> Option<(RequestCounts, u64)> {
    let mut sum = RequestCounts::default();
    let mut nights = 0u64;
    for night in life.nights.iter().skip(1) {
        sum.add(night.backup()?.requests.as_ref()?);
        nights += 1;
    }
    (nights > 0).then_some((sum, nights))
}

/// The requests of a life's average nightly backup.
fn nightly_requests(life: &LifeFigures) -> Option<f64> {
    nights_requests(life).map(|(sum, nights)| sum.requests() as f64 / nights as f64)
}

/// The largest of a figure over every command of one kind (a retention's commands summed
/// for its seconds would be as fair; its largest command is what a page is about).
fn most(
    life: &LifeFigures,
    kind: LifeCommand,
    figure: impl Fn(&CommandFigures) -> f64,
) -> Option<f64> {
    life.commands()
        .filter(|(_, command)| command.command == kind && command.error.is_none())
        .map(|(_, command)| figure(command))
        .max_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tool::life::NightFigures;
    use crate::size::ByteSize;

    /// A life whose retention's memory is `memory(files)` and whose every command took
    /// `seconds(bytes)`, over three nights with a retention after the second.
    fn life(bytes: u64, files: u64, memory: f64, seconds: f64) -> LifeFigures {
        let command = |kind: LifeCommand, rss: f64| CommandFigures {
            command: kind,
            program: "tool".to_string(),
            seconds,
            cpu_s: seconds,
            peak_rss_bytes: rss as u64,
            mb_per_s: None,
            files_per_s: None,
            pressure: None,
            error: None,
            requests: None,
        };
        let night = |night: u32, commands: Vec<CommandFigures>| NightFigures {
            night,
            changed: None,
            source_files: files,
            source_bytes: bytes,
            repository_bytes: Some(bytes / 2 + 1000 * u64::from(night)),
            added_bytes: Some(bytes / 50),
            index_bytes: Some(files * 100),
            snapshots: Some(night),
            commands,
        };
        LifeFigures {
            plan: LifePlan {
                nights: 3,
                retention_every: 2,
                keep: 1,
                ..LifePlan::default()
            },
            nights: vec![
                night(1, vec![command(LifeCommand::Backup, 50e6)]),
                night(
                    2,
                    vec![
                        command(LifeCommand::Backup, 50e6),
                        command(LifeCommand::Retention, memory),
                    ],
                ),
                night(3, vec![command(LifeCommand::Backup, 50e6)]),
            ],
            restores: Vec::new(),
            no_maintenance: None,
            machine_memory_bytes: Some(16 << 30),
        }
    }

    fn request(size: u64, files: u64) -> ForecastSpec {
        ForecastSpec {
            size: ByteSize::new(size),
            files,
            change: None,
            keep: Some(1),
            ladder_from: None,
            rungs: None,
        }
    }

    #[test]
    fn memory_growing_with_files_is_answered_beside_the_machine_and_past_reach_in_words() {
        // 1 KiB of memory a file, ±3 % apart, over 50 000 to 400 000 files.
        let noise = [1.03, 0.97, 1.02, 0.98];
        let lives: Vec<LifeFigures> = (0..4)
            .map(|rung| {
                let files = 50_000u64 << rung;
                life(
                    files * 4096,
                    files,
                    files as f64 * 1024.0 * noise[rung],
                    2.0,
                )
            })
            .collect();
        let rungs = rungs_of(&lives);
        let plan = lives[0].plan;
        // At twice the largest rung: about 800 000 KiB, the machine's 16 GiB beside it.
        let near = forecast_life(
            &request(800_000 * 4096, 800_000),
            &plan,
            &rungs,
            Some(16 << 30),
        )
        .expect("a forecast");
        let memory = near
            .lines
            .iter()
            .find(|line| line.figure == "retention (prune), peak memory")
            .expect("the retention's memory");
        let Some(Answer::Estimate { value, .. }) = memory.answer else {
            panic!("{memory:?}");
        };
        assert!((value / (800_000.0 * 1024.0) - 1.0).abs() < 0.05, "{value}");
        assert!(
            memory.basis.contains("against the source's files"),
            "{}",
            memory.basis
        );
        let said = near.memory.expect("the memory line");
        assert!(
            said.starts_with("The retention (prune) would need about 7"),
            "{said}"
        );
        assert!(said.ends_with("this machine has 16 GiB."), "{said}");
        // The time did not move: not measurable, not a number fitted to noise.
        let nightly = near
            .lines
            .iter()
            .find(|line| line.figure == "nightly backup, seconds")
            .expect("nightly");
        assert!(
            nightly.said.starts_with("not measurable at these sizes"),
            "{}",
            nightly.said
        );
        // 2 000 times the largest rung: words, no number.
        let far = forecast_life(
            &request(800_000_000 * 4096, 800_000_000),
            &plan,
            &rungs,
            Some(16 << 30),
        )
        .expect("a forecast");
        let memory = far
            .lines
            .iter()
            .find(|line| line.figure == "retention (prune), peak memory")
            .expect("the retention's memory");
        assert!(
            memory.said.starts_with("no number: your size is 2000×"),
            "{}",
            memory.said
        );
        assert!(far.memory.is_none());
    }

    /// Lives on four rungs whose nightly backups made `requests(bytes)` requests of a bucket,
    /// four PUTs to each LIST.
    fn lives_in_a_bucket(requests: impl Fn(u64) -> u64) -> Vec<LifeFigures> {
        use crate::engine::target::s3::operations::Answered;
        (0..4)
            .map(|rung| {
                let bytes = (1u64 << 30) << rung;
                let mut life = life(bytes, bytes / 65536, 1e8, 2.0);
                let made = requests(bytes);
                for night in &mut life.nights {
                    for command in &mut night.commands {
                        let mut counts = RequestCounts::default();
                        for _ in 0..made * 4 / 5 {
                            counts.request("PutObject", Answered::Status(200));
                        }
                        for _ in 0..made / 5 {
                            counts.request("ListObjectsV2", Answered::Status(200));
                        }
                        command.requests = Some(counts);
                    }
                }
                life
            })
            .collect()
    }

    /// Each life a rung, of its first night's tree.
    fn rungs_of(lives: &[LifeFigures]) -> Vec<RungLife<'_>> {
        lives
            .iter()
            .map(|life| RungLife {
                bytes: life.nights[0].source_bytes,
                files: life.nights[0].source_files,
                life,
            })
            .collect()
    }

    fn forecast_of(lives: &[LifeFigures], size: u64) -> LifeForecast {
        forecast_life(
            &request(size, size / 65536),
            &lives[0].plan,
            &rungs_of(lives),
            None,
        )
        .expect("a forecast")
    }

    /// Nightly requests that grow with the tree are forecast, and a year at the user's size is
    /// priced from them and the forecast repository at the mix of the largest rung's nights;
    /// requests that never moved give no number, and the year says it is not priced.
    #[test]
    fn a_year_at_the_users_size_is_priced_from_the_forecast_or_says_why_not() {
        let sheets = crate::analysis::prices::PriceSheets::built_in();
        // 1 000 requests a night per GiB, at 1 to 8 GiB; the user has 16 GiB.
        let lives = lives_in_a_bucket(|bytes| bytes / (1 << 30) * 1000);
        let mut forecast = forecast_of(&lives, 16 << 30);
        let nightly = forecast
            .line("nightly_requests")
            .expect("the nightly requests");
        let Some(Answer::Estimate { value: nightly, .. }) = nightly.answer else {
            panic!("{nightly:?}");
        };
        assert!((nightly / 16_000.0 - 1.0).abs() < 0.01, "{nightly}");
        let Some(Answer::Estimate {
            value: repository, ..
        }) = forecast
            .line("repository_bytes")
            .and_then(|line| line.answer.clone())
        else {
            panic!("no repository: {forecast:?}");
        };
        forecast.price_the_year_on(&lives[3], &sheets);
        let s3 = forecast
            .year
            .iter()
            .find(|bill| bill.sheet == "aws-s3-standard")
            .expect("by S3 Standard");
        // Every request is a PUT or a LIST: $0.005 a thousand.
        assert!((s3.requests_cost - 365.0 * nightly * 0.005 / 1000.0).abs() < 1e-9);
        assert!((s3.storage_cost - 12.0 * repository / (1u64 << 30) as f64 * 0.023).abs() < 1e-9);
        let basis = forecast.year_basis.as_deref().expect("a basis");
        assert!(
            basis.starts_with("365 nightly backups of about 16"),
            "{basis}"
        );
        assert!(basis.contains("2 nights measured on the ladder's largest tree (8 GiB: 12800 PutObject, 3200 ListObjectsV2)"), "{basis}");
        // The same count every night at every size: not measurable, and not priced.
        let flat = lives_in_a_bucket(|_| 16);
        let mut forecast = forecast_of(&flat, 16 << 30);
        forecast.price_the_year_on(&flat[3], &sheets);
        assert!(forecast.year.is_empty());
        let basis = forecast.year_basis.as_deref().expect("why not");
        assert!(basis.starts_with("Not priced"), "{basis}");
        assert!(
            basis.contains("nightly backup, requests to the bucket: not measurable"),
            "{basis}"
        );
        // Lives that counted no request are not a bucket's: nothing is said.
        let lives: Vec<LifeFigures> = (0..4)
            .map(|rung| life((1u64 << 30) << rung, 1 << (14 + rung), 1e8, 2.0))
            .collect();
        let mut forecast = forecast_of(&lives, 16 << 30);
        assert!(forecast.line("nightly_requests").is_none());
        forecast.price_the_year_on(&lives[3], &sheets);
        assert!(forecast.year.is_empty() && forecast.year_basis.is_none());
    }
}
