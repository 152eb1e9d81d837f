//! `backlab run`: a campaign run here, without a server, from flags or a spec file, with
//! progress on the terminal and the bottleneck table (or the report's JSON) at the end.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::analysis;
use crate::analysis::follow_up::FollowUp;
use crate::analysis::points::Point;
use crate::engine::result::{Progress, RunResult, RunStatus};
use crate::engine::target::Writes;
use crate::engine::{self, EngineSettings, RunControl, preflight, survey};
use crate::field_errors::FieldErrors;
use crate::spec::{self, ByteSize, CampaignSpec, RunPlan, SourceSpec, TargetSpec, TestKind};
use crate::views::report::{self, CampaignHeader, CampaignReport, render_table};

use super::{EXIT_BAD_SPEC, EXIT_RUN_FAILED, StoreArgs, ToolFileArgs};

#[derive(Args)]
pub(super) struct RunArgs {
    /// A campaign spec (JSON); flags override its fields.
    spec: Option<PathBuf>,
    /// Source path (file or directory tree); repeat for several file systems.
    #[arg(long = "source", value_name = "PATH", conflicts_with = "generated")]
    sources: Vec<PathBuf>,
    /// Source: generated data of this size (e.g. 4G) instead of paths.
    #[arg(long, value_name = "SIZE")]
    generated: Option<String>,
    /// Generated data's dedup ratio (3.0 = one unit in three is new).
    #[arg(long, requires = "generated")]
    dedup_ratio: Option<f64>,
    /// The unit of generated data that repeats whole, e.g. 128K.
    #[arg(long, requires = "dedup_ratio")]
    dedup_unit: Option<String>,
    /// Full backups of the generated dataset, one after another: the target tests run once
    /// per generation.
    #[arg(long, requires = "generated")]
    generations: Option<u32>,
    /// Share of the dataset's distinct units each generation changes (0.05 = 5 %).
    #[arg(long, requires = "generations")]
    change_rate: Option<f64>,
    /// Target: a directory, `null`, `device:PATH`, emulated tape `tape:MODEL[:DRIVES]`, or any
    /// kind with its settings, `KIND:NAME=VALUE,…` (`striped:disks=10,stripe_unit=64K`).
    #[arg(
        long,
        value_name = "DIR|null|device:PATH|tape:MODEL[:DRIVES]|KIND:NAME=VALUE,…"
    )]
    target: Option<String>,
    /// Tests to run, comma-separated (default: all five).
    #[arg(long, value_delimiter = ',')]
    tests: Option<Vec<String>>,
    /// Buffers in the ring.
    #[arg(long)]
    buffers: Option<u32>,
    /// Block size, e.g. 256K.
    #[arg(long)]
    block_size: Option<String>,
    /// Parallel reader streams.
    #[arg(long)]
    streams: Option<u32>,
    /// O_DIRECT for source reads and target writes.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    direct: Option<bool>,
    /// Evict each source file from the page cache before reading it.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    cold_cache: Option<bool>,
    /// fsync target writes inside the timed window.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    fsync: Option<bool>,
    /// Compressibility of generated data (2.0 = 2:1).
    #[arg(long)]
    compress_ratio: Option<f64>,
    /// Bytes each run moves at most, e.g. 1G.
    #[arg(long)]
    size: Option<String>,
    /// Seconds each run lasts at most, or `auto`: until the throughput is steady (at most
    /// 60 s).
    #[arg(long = "duration", value_name = "SECONDS|auto", value_parser = parse_duration)]
    duration_s: Option<spec::DurationInput>,
    /// Run each test for its whole duration, reading a small source again until it is up
    /// (default: on for a source of paths without --size).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    time_based: Option<bool>,
    /// What-if: each stream reads at most this many MB/s.
    #[arg(long = "source-rate", value_name = "MB/S")]
    source_rate_mb_s: Option<f64>,
    /// Network backup: clients sending at once (loopback clients of this process).
    #[arg(long)]
    clients: Option<u32>,
    /// Network backup what-if: each client's link carries at most this many MB/s.
    #[arg(long = "link-rate", value_name = "MB/S")]
    link_mb_s: Option<f64>,
    /// Campaign name.
    #[arg(long)]
    name: Option<String>,
    /// Device the campaign may overwrite (needed for a device target).
    #[arg(long = "allow-device", value_name = "PATH")]
    allow_devices: Vec<PathBuf>,
    /// Directory the restore test writes its files into (in a directory of its own, removed
    /// afterwards).
    #[arg(long, value_name = "DIR", default_value = ".")]
    restore_to: PathBuf,
    #[command(flatten)]
    stores: StoreArgs,
    /// A backup tool to measure as its users run it, as NAME or NAME:PARAM=VALUE,… (e.g.
    /// `restic`, `tar-zstd:level=19`); given more than once, the tools are compared on the
    /// same data. Without --tests the campaign runs the tool's table.
    #[arg(long = "tool", value_name = "NAME[:PARAM=VALUE,…]")]
    tools: Vec<String>,
    /// A backup's life of the tool: this many nights (2 to 1000), each changed and backed up,
    /// its retention every 7 keeping 7, its checks after the last, its latest and oldest kept
    /// backup restored and verified. Without --tests the campaign runs the life alone.
    #[arg(long, value_name = "NIGHTS")]
    life: Option<u32>,
    /// Forecast the life to your size from a ladder of generated trees of your shape:
    /// `size=20T,files=50M,keep=365,change=2%` (files may take K, M or G, thousands to
    /// billions; change a percentage or a share).
    #[arg(long, value_name = "size=…,files=…[,keep=…][,change=…]")]
    forecast: Option<String>,
    #[command(flatten)]
    tool_file: ToolFileArgs,
    /// Print the machine-readable result to stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Take the verdict as the planned runs give it: when the full backup outran a ceiling
    /// measured once, do not measure the two again in turn.
    #[arg(long)]
    no_follow_up: bool,
}

pub(super) fn run(args: RunArgs) -> ExitCode {
    let (spec, plans) = match checked_plans(&args) {
        Ok(checked) => checked,
        Err(message) => return bad_spec(&message),
    };
    let settings = match engine_settings(&args, &spec, &plans) {
        Ok(settings) => settings,
        Err(message) => return bad_spec(&message),
    };
    let prices = match args.stores.prices() {
        Ok(prices) => prices,
        Err(problems) => return bad_spec(&problems.join("\n")),
    };
    show_expectation(&plans);
    let cancel = cancel_on_ctrl_c();
    let mut runs = execute_in_turn(&plans, &settings, &cancel, (0, plans.len()));

    let survey = plans
        .first()
        .map(|plan| survey::survey(&plan.source, &plan.target));
    let mut judgement = analysis::Judgement::of(
        &analysis::points::RunEntry::of_results(&runs),
        survey.as_ref(),
    );
    let mut all_done =
        runs.len() == plans.len() && runs.iter().all(|run| run.status == RunStatus::Done);
    // A backup that outran a ceiling measured once is not yet an answer: the lab measures the
    // two again, in turn, and judges the medians.
    if all_done
        && !args.no_follow_up
        && let Some(follow_up) = FollowUp::of(&judgement.verdict)
    {
        let again = follow_up_plans(&follow_up, &plans, &judgement.points);
        if !again.is_empty() {
            let expected = spec::expectation::expect(&again);
            eprintln!(
                "{}: {}; {}",
                judgement.verdict.sentence().trim_end_matches('.'),
                follow_up.words(),
                expected.summary(again.len())
            );
            let of = plans.len() + again.len();
            let more = execute_in_turn(&again, &settings, &cancel, (plans.len(), of));
            all_done &= more.iter().all(|run| run.status == RunStatus::Done);
            runs.extend(more);
            all_done &= runs.len() == plans.len() + again.len();
            judgement = analysis::Judgement::of(
                &analysis::points::RunEntry::of_results(&runs),
                survey.as_ref(),
            );
        }
    }
    let report = CampaignReport::new(
        CampaignHeader {
            name: spec.name.clone(),
            spec,
        },
        runs,
        judgement.points,
        judgement.verdict,
        survey,
        &prices,
    );
    print_report(&report, args.json, all_done)
}

/// The campaign the spec file and flags describe, checked and expanded into its runs: every
/// mistake in the flags and the spec is named at once.
fn checked_plans(args: &RunArgs) -> Result<(CampaignSpec, Vec<RunPlan>), String> {
    let mut flag_errors = FieldErrors::default();
    let spec = build_spec(args, &mut flag_errors)?;
    let mut plans = match spec.plan() {
        Ok(plans) if flag_errors.is_empty() => plans,
        Ok(_) => return Err(flag_errors.to_string()),
        Err(mut errors) => {
            errors.extend(flag_errors);
            return Err(errors.to_string());
        }
    };
    resolve_target_dirs(&mut plans);
    Ok((spec, plans))
}

/// The engine follows no link on a target's path; the operator's own path is resolved once,
/// here, as the lab resolves a submitted one.
fn resolve_target_dirs(plans: &mut [RunPlan]) {
    for plan in plans {
        if plan.target.writes() == Writes::FilesUnder
            && let Some(dir) = plan.target.path_mut()
            && let Ok(resolved) = dir.canonicalize()
        {
            *dir = resolved;
        }
    }
}

/// What the engine runs the campaign with: the object stores and tools the flags name, the
/// tools checked against the spec and the runs against the settings before any starts.
fn engine_settings(
    args: &RunArgs,
    spec: &CampaignSpec,
    plans: &[RunPlan],
) -> Result<EngineSettings, String> {
    let object_stores = args
        .stores
        .stores()
        .map_err(|problems| problems.join("\n"))?;
    let tools = Arc::new(args.tool_file.tools()?);
    let tool_errors = spec::tools::check(spec, &tools);
    if !tool_errors.is_empty() {
        return Err(tool_errors.to_string());
    }
    let settings = EngineSettings {
        allow_devices: args.allow_devices.clone(),
        network: Some(Arc::new(crate::net::Clients::loopback())),
        restore_dir: args.restore_to.clone(),
        object_stores,
        tools,
        // A run from the command line is watched by its operator; Ctrl-C cleans up.
        upload_journal: None,
        object_owner: crate::engine::target::s3::process_owner(),
        max_run: None,
    };
    let problems = preflight::check(plans, &settings);
    if !problems.is_empty() {
        return Err(problems.to_string());
    }
    Ok(settings)
}

/// Before the first byte: how long it takes, and what in the plan cannot give a valid run.
fn show_expectation(plans: &[RunPlan]) {
    let mut expectation = spec::expectation::expect(plans);
    expectation
        .warnings
        .extend(spec::expectation::machine_warnings(plans));
    eprintln!("{}", expectation.summary(plans.len()));
    for warning in &expectation.warnings {
        eprintln!("warning: {}: {}", warning.field, warning.message);
    }
}

/// The flag Ctrl-C raises: it stops the current run within a second, and its files are
/// removed.
fn cancel_on_ctrl_c() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let handler_flag = Arc::clone(&cancel);
    let _ = ctrlc::set_handler(move || handler_flag.store(true, Ordering::Relaxed));
    cancel
}

/// Runs `plans` one after another, numbered on from `before` of `of`, until all have run or
/// Ctrl-C stops them.
fn execute_in_turn(
    plans: &[RunPlan],
    settings: &EngineSettings,
    cancel: &AtomicBool,
    (before, of): (usize, usize),
) -> Vec<RunResult> {
    let mut runs = Vec::with_capacity(plans.len());
    for (index, plan) in plans.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        runs.push(execute_shown(
            plan,
            settings,
            cancel,
            (before + index + 1, of),
        ));
    }
    runs
}

/// Prints the report, as the table or as JSON, and gives the exit code: success only when
/// every run was done.
fn print_report(report: &CampaignReport, json: bool, all_done: bool) -> ExitCode {
    if json {
        match serde_json::to_string_pretty(report) {
            Ok(json) => println!("{json}"),
            Err(error) => {
                eprintln!("error: cannot encode the result: {error}");
                return ExitCode::from(EXIT_RUN_FAILED);
            }
        }
    } else {
        print!("{}", render_table(report));
    }
    if all_done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_RUN_FAILED)
    }
}

/// Runs `plan` as run `number` of `of`, with a progress bar while it runs and its line once
/// it ends.
fn execute_shown(
    plan: &RunPlan,
    settings: &EngineSettings,
    cancel: &AtomicBool,
    (number, of): (usize, usize),
) -> RunResult {
    let bar = progress_bar(format!("[{number}/{of}] {}", plan.test));
    let report = |progress: &Progress| show_progress(&bar, progress);
    let control = RunControl {
        cancel,
        progress: &report,
    };
    let result = engine::execute(plan, settings, &control);
    bar.finish_and_clear();
    eprintln!("{}", run_line(number, of, &result));
    result
}

/// The runs of a follow-up, in turn: for each round, each of its tests at the parameters of
/// the point that stands for it (its best point).
fn follow_up_plans(follow_up: &FollowUp, plans: &[RunPlan], points: &[Point]) -> Vec<RunPlan> {
    let at_best = |test: TestKind| {
        let best = points
            .iter()
            .find(|point| point.test == test && point.best)?;
        plans
            .iter()
            .find(|plan| plan.test == test && plan.params == best.params)
    };
    let Some(pair) = follow_up
        .tests
        .iter()
        .map(|test| at_best(*test).cloned())
        .collect::<Option<Vec<RunPlan>>>()
    else {
        return Vec::new();
    };
    (0..follow_up.rounds).flat_map(|_| pair.clone()).collect()
}

/// `--duration`: seconds, or `auto`.
fn parse_duration(text: &str) -> Result<spec::DurationInput, String> {
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(spec::DurationInput::Auto(spec::AutoWord::Auto));
    }
    text.trim()
        .parse::<f64>()
        .map(spec::DurationInput::Seconds)
        .map_err(|_| format!("'{text}' is neither a number of seconds nor \"auto\""))
}

/// The spec from the file (or defaults), with every flag applied on top. A size flag that is
/// not a size is recorded in `flag_errors` under its spec field and left at its default, so
/// the spec's own checks still name every other mistake.
fn build_spec(args: &RunArgs, flag_errors: &mut FieldErrors) -> Result<CampaignSpec, String> {
    let mut spec = spec_to_start_from(args)?;
    if let Some(host) = &spec.host {
        return Err(format!(
            "host: this command measures the machine it runs on; host '{host}' names a lab host \
             on a shared database, for campaigns submitted to a lab (backlab serve)"
        ));
    }
    apply_source_flags(args, &mut spec.source, flag_errors);
    if let Some(target) = &args.target {
        spec.target = parse_target(target);
    }
    let tool_errors = apply_tool_flags(args, &mut spec);
    if let Some(nights) = args.life {
        spec.life.get_or_insert_with(Default::default).nights = nights;
    }
    if let Some(text) = &args.forecast {
        spec.forecast = parse_forecast(text, flag_errors);
    }
    if let Some(tests) = &args.tests {
        spec.tests = tests.iter().map(|test| test.trim().to_string()).collect();
    }
    if let Some(name) = &args.name {
        spec.name = name.clone();
    }
    apply_param_flags(args, &mut spec.params, flag_errors);
    flag_errors.extend(tool_errors);
    spec.settle_defaults();
    Ok(spec)
}

/// The spec the flags apply to: the spec file given, or without one a campaign of the
/// bottleneck tests into the null target.
fn spec_to_start_from(args: &RunArgs) -> Result<CampaignSpec, String> {
    Ok(match &args.spec {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("spec: cannot read {}: {error}", path.display()))?;
            spec::parse_json(&text).map_err(|errors| errors.to_string())?
        }
        None => CampaignSpec {
            name: String::new(),
            source: SourceSpec::default(),
            target: parse_target("null"),
            tests: spec::TestKind::BOTTLENECK
                .iter()
                .map(|test| test.id().to_string())
                .collect(),
            params: spec::ParamsSpec::default(),
            matrix: None,
            repeat: 1,
            host: None,
            series: None,
            tool: None,
            life: None,
            forecast: None,
        },
    })
}

/// A size flag's value; one that is not a size is recorded in `flag_errors` under its spec
/// `field` and stands in as `stand_in` bytes.
fn size_flag(flag_errors: &mut FieldErrors, field: &str, text: &str, stand_in: u64) -> ByteSize {
    ByteSize::parse(text).unwrap_or_else(|message| {
        flag_errors.add(field, message);
        ByteSize::new(stand_in)
    })
}

/// `--source` paths, or `--generated` data with its dedup and generations, in place of the
/// spec's source.
fn apply_source_flags(args: &RunArgs, source: &mut SourceSpec, flag_errors: &mut FieldErrors) {
    if !args.sources.is_empty() {
        *source = SourceSpec {
            paths: Some(args.sources.clone()),
            generated: None,
            agents: None,
        };
    }
    if let Some(size) = &args.generated {
        *source = SourceSpec {
            paths: None,
            generated: Some(spec::GeneratedSpec {
                size: size_flag(flag_errors, "source.generated.size", size, 1 << 30),
                compress_ratio: args.compress_ratio.unwrap_or(2.0),
                dedup_ratio: args.dedup_ratio,
                dedup_unit: args.dedup_unit.as_ref().map(|unit| {
                    size_flag(flag_errors, "source.generated.dedup_unit", unit, 128 << 10)
                }),
                generations: args.generations,
                change_rate: args.change_rate,
            }),
            agents: None,
        };
    }
}

/// `--tool`: one tool is the spec's tool, several are the matrix's list to compare. The
/// mistakes in their parameters are returned, to be named after the other flags'.
fn apply_tool_flags(args: &RunArgs, spec: &mut CampaignSpec) -> FieldErrors {
    let mut tool_errors = FieldErrors::default();
    match args.tools.as_slice() {
        [] => {}
        [one] => spec.tool = Some(parse_tool(one, "tool", &mut tool_errors)),
        several => {
            let tools = several
                .iter()
                .enumerate()
                .map(|(index, text)| {
                    parse_tool(text, &format!("matrix.tool[{index}]"), &mut tool_errors)
                })
                .collect();
            spec.matrix.get_or_insert_with(Default::default).tool = Some(tools);
        }
    }
    tool_errors
}

/// The run parameters' flags, each given one in place of the spec's value.
fn apply_param_flags(args: &RunArgs, params: &mut spec::ParamsSpec, flag_errors: &mut FieldErrors) {
    if let Some(buffers) = args.buffers {
        params.buffers = buffers;
    }
    if let Some(block_size) = &args.block_size {
        params.block_size = size_flag(flag_errors, "params.block_size", block_size, 256 << 10);
    }
    if args.streams.is_some() {
        params.streams = args.streams;
    }
    if let Some(direct) = args.direct {
        params.direct = direct;
    }
    if let Some(cold_cache) = args.cold_cache {
        params.cold_cache = cold_cache;
    }
    if let Some(fsync) = args.fsync {
        params.fsync = fsync;
    }
    if let Some(ratio) = args.compress_ratio {
        params.compress_ratio = Some(ratio);
    }
    if let Some(size) = &args.size {
        params.size = Some(size_flag(flag_errors, "params.size", size, 1 << 30));
    }
    if args.duration_s.is_some() {
        params.duration_s = args.duration_s;
    }
    if args.time_based.is_some() {
        params.time_based = args.time_based;
    }
    if args.source_rate_mb_s.is_some() {
        params.source_rate_mb_s = args.source_rate_mb_s;
    }
    if args.clients.is_some() {
        params.clients = args.clients;
    }
    if args.link_mb_s.is_some() {
        params.link_mb_s = args.link_mb_s;
    }
}

/// `--forecast size=20T,files=50M,keep=365,change=2%`; each mistake is recorded under its
/// spec field.
fn parse_forecast(
    text: &str,
    flag_errors: &mut FieldErrors,
) -> Option<spec::forecast::ForecastSpec> {
    let mut forecast = spec::forecast::ForecastSpec {
        size: ByteSize::new(0),
        files: 0,
        change: None,
        keep: None,
        ladder_from: None,
        rungs: None,
    };
    let (mut sized, mut counted) = (false, false);
    for pair in text.split(',').filter(|pair| !pair.trim().is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (key.trim(), value.trim());
        let field = format!("forecast.{key}");
        match key {
            "size" => {
                forecast.size = size_flag(flag_errors, &field, value, 0);
                sized = true;
            }
            "files" => match parse_count(value) {
                Some(files) => {
                    forecast.files = files;
                    counted = true;
                }
                None => flag_errors.add(
                    field,
                    format!("'{value}' is not a count of files (write e.g. 50M or 400000)"),
                ),
            },
            "keep" => match value.parse() {
                Ok(keep) => forecast.keep = Some(keep),
                Err(_) => flag_errors.add(field, format!("'{value}' is not a whole number")),
            },
            "change" => match parse_share(value) {
                Some(share) => forecast.change = Some(share),
                None => flag_errors.add(
                    field,
                    format!("'{value}' is not a share (write e.g. 2% or 0.02)"),
                ),
            },
            "ladder_from" => {
                forecast.ladder_from = Some(size_flag(flag_errors, &field, value, 0));
            }
            "rungs" => match value.parse() {
                Ok(rungs) => forecast.rungs = Some(rungs),
                Err(_) => flag_errors.add(field, format!("'{value}' is not a whole number")),
            },
            _ => flag_errors.add(
                "forecast",
                format!(
                    "'{key}' is not a part of a forecast (size, files, keep, change, \
                     ladder_from, rungs)"
                ),
            ),
        }
    }
    if !sized {
        flag_errors.add("forecast.size", "give the source's size: size=20T");
    }
    if !counted {
        flag_errors.add("forecast.files", "give the source's files: files=50M");
    }
    Some(forecast)
}

/// A count with an optional decimal multiple: `400000`, `400K`, `50M`, `2G`.
fn parse_count(text: &str) -> Option<u64> {
    let (digits, scale) = match text.chars().last()? {
        'K' | 'k' => (&text[..text.len() - 1], 1_000),
        'M' | 'm' => (&text[..text.len() - 1], 1_000_000),
        'G' | 'g' => (&text[..text.len() - 1], 1_000_000_000),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// A share as a percentage (`2%`) or a fraction (`0.02`).
fn parse_share(text: &str) -> Option<f64> {
    match text.strip_suffix('%') {
        Some(percent) => percent
            .trim()
            .parse::<f64>()
            .ok()
            .map(|value| value / 100.0),
        None => text.parse().ok(),
    }
}

/// `--tool NAME[:PARAM=VALUE,…]`: a value that reads as a whole number is one, any other a
/// word; the lab's tools check both. A pair without `=` is named under the spec field.
fn parse_tool(text: &str, field: &str, flag_errors: &mut FieldErrors) -> spec::ToolRun {
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    let mut params = std::collections::BTreeMap::new();
    for pair in rest.split(',').filter(|pair| !pair.trim().is_empty()) {
        match pair.split_once('=') {
            Some((param, value)) => {
                let value = value.trim();
                let value = value
                    .parse::<i64>()
                    .map(crate::engine::tool::ParamValue::Integer)
                    .unwrap_or_else(|_| crate::engine::tool::ParamValue::Word(value.to_string()));
                params.insert(param.trim().to_string(), value);
            }
            None => flag_errors.add(
                format!("{field}.params"),
                format!("'{pair}' is not PARAM=VALUE"),
            ),
        }
    }
    spec::ToolRun {
        name: name.trim().to_string(),
        params,
    }
}

fn parse_target(text: &str) -> TargetSpec {
    let (kind, path, settings) = crate::engine::target::flag::read(text);
    TargetSpec {
        kind,
        path,
        settings,
    }
}

fn bad_spec(message: &str) -> ExitCode {
    eprintln!("error: the campaign is not valid:");
    for line in message.lines() {
        eprintln!("  {line}");
    }
    ExitCode::from(EXIT_BAD_SPEC)
}

fn progress_bar(prefix: String) -> ProgressBar {
    let bar = ProgressBar::new(1000);
    let style = ProgressStyle::with_template("{prefix:<22} [{bar:30}] {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(prefix);
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

fn show_progress(bar: &ProgressBar, progress: &Progress) {
    if let Some(percent) = progress.percent {
        bar.set_position((percent * 10.0) as u64);
    }
    bar.set_message(format!(
        "{:>8.1} MB/s  {:>10}  {:>5.1} s",
        progress.mb_per_s,
        crate::size::format_bytes(progress.bytes),
        progress.elapsed_s
    ));
}

fn run_line(index: usize, total: usize, result: &RunResult) -> String {
    let head = format!("[{index}/{total}] {:<13}", result.test.id());
    match (result.status, &result.lock) {
        // A probe has no rate: its line is its answer.
        (RunStatus::Done, Some(lock)) => {
            format!("{head} {} ({:.2} s)", lock.answer, result.seconds)
        }
        (RunStatus::Done, None) => format!(
            "{head} {:>8.1} MB/s  {} in {:.2} s, {}{}; {}",
            result.mb_per_s,
            crate::size::format_bytes(result.bytes),
            result.seconds,
            crate::analysis::counted(result.files, "file", "files"),
            result
                .data_compress_ratio
                .map_or_else(String::new, |ratio| format!(
                    ", data {ratio:.2}:1 as the source"
                )),
            report::validity_note(result)
        ),
        _ => format!(
            "{head} {:?}: {}",
            result.status,
            result.error.as_deref().unwrap_or("no reason recorded")
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::{CommandFactory, Parser};
    use serde_json::Value;

    use super::*;
    use crate::spec::field_names::names_of;

    /// `backlab run`'s flags on their own, as the tests parse them.
    #[derive(Parser)]
    struct Run {
        #[command(flatten)]
        args: RunArgs,
    }

    /// Every flag of `backlab run` with values that differ from the spec's defaults (a
    /// boolean both ways), and the flags that set no spec field.
    const FLAGS: &[(&str, &[&str])] = &[
        ("--source", &["/a"]),
        ("--generated", &["1G"]),
        ("--dedup-ratio", &["3"]),
        ("--dedup-unit", &["64K"]),
        ("--generations", &["5"]),
        ("--change-rate", &["0.1"]),
        ("--target", &["tape:lto-4"]),
        ("--tests", &["null_sink"]),
        ("--buffers", &["7"]),
        ("--block-size", &["64K"]),
        ("--streams", &["3"]),
        ("--direct", &["true", "false"]),
        ("--cold-cache", &["true", "false"]),
        ("--fsync", &["true", "false"]),
        ("--compress-ratio", &["3.5"]),
        ("--size", &["1G"]),
        ("--duration", &["7"]),
        ("--time-based", &["true", "false"]),
        ("--source-rate", &["10"]),
        ("--clients", &["3"]),
        ("--link-rate", &["10"]),
        ("--name", &["n"]),
        ("--tool", &["restic"]),
        ("--life", &["5"]),
        ("--forecast", &["size=20T,files=50M,keep=365,change=2%"]),
    ];
    const NOT_SPEC_FIELDS: &[&str] = &[
        "--allow-device",
        "--restore-to",
        "--s3-store",
        "--s3-credentials",
        "--s3-uncounted",
        "--price-sheet",
        "--json",
        "--no-follow-up",
        "--tools",
    ];

    /// The flags that need others beside them (clap's `requires`), with those others.
    const NEEDS: &[(&str, &[&str])] = &[
        ("--dedup-ratio", &["--generated", "1G"]),
        ("--dedup-unit", &["--generated", "1G", "--dedup-ratio", "3"]),
        ("--generations", &["--generated", "1G"]),
        (
            "--change-rate",
            &["--generated", "1G", "--generations", "5"],
        ),
    ];

    /// The spec's parameters a flag of `run` does not set, and why.
    const NO_FLAG: &[(&str, &str)] = &[];

    /// The spec fields (`params.buffers`) whose values differ between two specs.
    fn changed(a: &Value, b: &Value) -> BTreeSet<String> {
        let mut paths = BTreeSet::new();
        let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
            return paths;
        };
        for key in a.keys().chain(b.keys()) {
            let (x, y) = (&a.get(key), &b.get(key));
            if x == y {
                continue;
            }
            match (x, y) {
                (Some(x), Some(y)) if key == "params" || key == "source" => {
                    for inner in changed(x, y) {
                        paths.insert(format!("{key}.{inner}"));
                    }
                }
                (Some(Value::Object(x)), None) | (None, Some(Value::Object(x)))
                    if key == "params" || key == "source" =>
                {
                    for inner in x.keys() {
                        paths.insert(format!("{key}.{inner}"));
                    }
                }
                _ => {
                    paths.insert(key.clone());
                }
            }
        }
        paths
    }

    fn spec_of(argv: &[&str]) -> Value {
        let run = Run::try_parse_from(std::iter::once("run").chain(argv.iter().copied()))
            .unwrap_or_else(|error| panic!("{argv:?}: {error}"));
        let mut errors = FieldErrors::default();
        let spec = build_spec(&run.args, &mut errors).expect("a spec");
        assert!(errors.is_empty(), "{argv:?}: {errors}");
        serde_json::to_value(&spec).expect("JSON")
    }

    /// The spec's shape is written once, in `crate::spec`: every parameter it accepts is set
    /// by a flag of `run` (or named in `NO_FLAG` with why), and every flag is known here, so a
    /// field added to the spec without its flag, or a flag added without its field, fails.
    #[test]
    fn every_spec_parameter_has_a_flag_and_every_flag_sets_a_field() {
        let flags: BTreeSet<String> = Run::command()
            .get_arguments()
            .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
            .collect();
        let known: BTreeSet<String> = FLAGS
            .iter()
            .map(|(flag, _)| flag.to_string())
            .chain(NOT_SPEC_FIELDS.iter().map(|flag| flag.to_string()))
            .collect();
        assert_eq!(flags, known, "the flags of `backlab run`");

        let mut set = BTreeSet::new();
        for (flag, values) in FLAGS {
            let needs: &[&str] = NEEDS
                .iter()
                .find(|(name, _)| name == flag)
                .map_or(&[], |(_, needs)| needs);
            let base = spec_of(needs);
            let mut by_flag = BTreeSet::new();
            for value in *values {
                let argv: Vec<&str> = needs.iter().copied().chain([*flag, *value]).collect();
                by_flag.extend(changed(&base, &spec_of(&argv)));
            }
            assert!(!by_flag.is_empty(), "{flag} changes no field of the spec");
            set.extend(by_flag);
        }
        for field in names_of::<crate::spec::ParamsSpec>() {
            let path = format!("params.{field}");
            assert!(
                set.contains(&path) || NO_FLAG.iter().any(|(name, _)| *name == field),
                "{path} has no flag of `backlab run`: add one, or say why in NO_FLAG"
            );
        }
        for (field, _) in NO_FLAG {
            assert!(
                !set.contains(&format!("params.{field}")),
                "params.{field} has a flag now: take it out of NO_FLAG"
            );
        }
        for field in names_of::<crate::spec::CampaignSpec>() {
            let covered = set
                .iter()
                .any(|path| path.split('.').next() == Some(&field));
            let campaign_only = ["matrix", "repeat", "host", "series"].contains(&field.as_str());
            assert!(
                covered || campaign_only,
                "{field} has no flag of `backlab run`"
            );
        }
    }
}
