//! The command line: `backlab serve`, `backlab run` and `backlab dataset create`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::analysis;
use crate::analysis::follow_up::FollowUp;
use crate::analysis::points::Point;
use crate::engine::dataset::{self, DatasetRequest, Profile};
use crate::engine::reduction::{self, ChunkSizes, DedupSettings};
use crate::engine::result::{Progress, RunResult, RunStatus};
use crate::engine::target::s3::{CredentialSources, ObjectStores};
use crate::engine::{self, EngineSettings, RunControl, preflight, survey};
use crate::field_errors::FieldErrors;
use crate::spec::{
    self, ByteSize, CampaignSpec, DedupConfig, RunPlan, SourceSpec, TargetKind, TargetPlan,
    TargetSpec, TestKind, format_size,
};
use crate::store::Location;
use crate::views::report::{self, CampaignHeader, CampaignReport, render_table};

/// Exit status for a spec that does not validate.
const EXIT_BAD_SPEC: u8 = 2;
/// Exit status for a run that failed or was cancelled.
const EXIT_RUN_FAILED: u8 = 1;

#[derive(Parser)]
#[command(
    name = "backlab",
    version,
    about = "Backup performance lab: finds what limits a backup, with real I/O"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the lab as a service: REST API, queue and workers.
    Serve(ServeArgs),
    /// Run a campaign here, without a server, and print the bottleneck table.
    Run(RunArgs),
    /// Synthetic source trees.
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// Send network backups to a lab from this host: register, take work, send.
    Agent(AgentArgs),
    /// lmdd's command line on the engine: `backlab lmdd of=FILE bs=7m move=500m direct=1`
    /// prints `497.00 MB in 5.83 secs, 85.29 MB/sec` (lmdd's MB is 2^20 bytes).
    Lmdd(LmddArgs),
    /// Keep another tool's result beside a campaign on a lab: fio's JSON output
    /// (--output-format=json) or iperf3's (-J), drawn and compared on the campaign's report.
    Import(ImportArgs),
    /// Submit a campaign spec (JSON) to a lab, optionally as an adaptive search over its
    /// matrix, and wait for its answer.
    Submit(SubmitArgs),
}

#[derive(Args)]
struct SubmitArgs {
    /// The campaign spec, as `POST /api/campaigns` takes it.
    file: PathBuf,
    /// Explore the spec's matrix fully, or adaptively (the points that decide the best).
    #[arg(long, value_enum)]
    search: Option<SearchFlag>,
    /// Most runs an adaptive search may queue (40 % of the full sweep's when not given).
    #[arg(long)]
    budget_runs: Option<u32>,
    /// Where an adaptive search starts.
    #[arg(long)]
    seed: Option<u64>,
    /// Wait until the campaign ends and print its answer.
    #[arg(long)]
    wait: bool,
    /// The lab's URL.
    #[arg(long, env = "BACKLAB_SERVER", default_value = "http://127.0.0.1:8080")]
    lab: String,
    /// The lab's token, when it has one.
    #[arg(long, env = "BACKLAB_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SearchFlag {
    Full,
    Adaptive,
}

#[derive(Args)]
struct ImportArgs {
    /// Which tool's output the file is.
    #[arg(value_enum)]
    tool: ImportTool,
    /// The tool's JSON output.
    file: PathBuf,
    /// The campaign to keep it beside.
    #[arg(long)]
    campaign: String,
    /// The lab's URL.
    #[arg(long, env = "BACKLAB_SERVER", default_value = "http://127.0.0.1:8080")]
    lab: String,
    /// The lab's token, when it has one.
    #[arg(long, env = "BACKLAB_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ImportTool {
    Fio,
    Iperf3,
}

#[derive(Args)]
struct LmddArgs {
    /// Operands as lmdd takes them: if=FILE, of=FILE, bs=SIZE, move=SIZE, count=BLOCKS,
    /// direct=0|1, fsync=0|1, opat=0|1 (fill each block with lmdd's offset pattern before its write).
    #[arg(
        value_name = "KEY=VALUE",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    operands: Vec<String>,
}

#[derive(Args)]
struct AgentArgs {
    /// The lab's URL, e.g. http://lab:8080.
    #[arg(long, env = "BACKLAB_SERVER")]
    server: String,
    /// The lab's token, when it has one.
    #[arg(long, env = "BACKLAB_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The name campaigns use for this agent (default: the host name).
    #[arg(long)]
    name: Option<String>,
    /// A root the lab may ask this agent to read (repeatable); without one, only generated
    /// data is sent.
    #[arg(long = "allow-source", value_name = "PATH")]
    allow_sources: Vec<PathBuf>,
}

#[derive(Args)]
struct RunArgs {
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

/// The object stores a lab may write to, as its operator gives them.
#[derive(Args, Clone, Default)]
struct StoreArgs {
    /// An object store campaigns may write to, as NAME=URL with the bucket as the URL's path:
    /// `lab=http://127.0.0.1:9000/backups`, optionally `?region=R` and `&style=virtual`
    /// (repeatable). Its credentials come from the credentials file's [NAME] section, else
    /// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the file's [default].
    #[arg(long = "s3-store", value_name = "NAME=URL")]
    s3_stores: Vec<String>,
    /// A credentials file in the AWS tools' format [default: $AWS_SHARED_CREDENTIALS_FILE].
    #[arg(long = "s3-credentials", value_name = "FILE")]
    s3_credentials: Option<PathBuf>,
}

impl StoreArgs {
    /// The stores, every problem with them named.
    fn stores(&self) -> Result<ObjectStores, Vec<String>> {
        let credentials = CredentialSources::from_environment(self.s3_credentials.as_deref())
            .map_err(|problem| vec![format!("--s3-credentials: {problem}")])?;
        ObjectStores::parse(&self.s3_stores, &credentials)
    }
}

/// The operator's own backup tools, beside the built-in ones.
#[derive(Args, Clone, Default)]
struct ToolFileArgs {
    /// A JSON file of backup tool definitions (docs/tools.md), added to the built-in restic,
    /// borg, tar, tar-gzip and tar-zstd (a definition of the same name replaces one).
    #[arg(long = "tools", env = "BACKLAB_TOOLS", value_name = "FILE")]
    tools_file: Option<PathBuf>,
}

impl ToolFileArgs {
    /// The tools this machine has, or why the file cannot be used.
    fn tools(&self) -> Result<crate::engine::tool::Tools, String> {
        crate::engine::tool::Tools::find(self.tools_file.as_deref())
            .map_err(|error| format!("--tools: {error}"))
    }
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on; anything but loopback needs --token.
    #[arg(long, env = "BACKLAB_BIND", default_value = "127.0.0.1:8080")]
    bind: std::net::SocketAddr,
    /// TCP address of the data listener agents send network backups to; anything but
    /// loopback needs --token [default: --bind's address with the next port, 127.0.0.1:8081
    /// beside the default; any free port when --bind's port is 0].
    #[arg(long, env = "BACKLAB_DATA_BIND")]
    data_bind: Option<std::net::SocketAddr>,
    /// Where results are kept: a SQLite file (created and migrated when missing), or a
    /// PostgreSQL database (`postgres://user@host/db`, migrated when needed).
    #[arg(long, env = "BACKLAB_DB", default_value = "backlab.db", value_parser = Location::parse)]
    db: Location,
    /// The lab's own directory: the demo dataset lives here; always allowed as source and target.
    #[arg(long, env = "BACKLAB_DATA_DIR", default_value = "backlab-data")]
    data_dir: PathBuf,
    /// A root that sources may lie under (repeatable).
    #[arg(
        long = "allow-source",
        env = "BACKLAB_ALLOW_SOURCE",
        value_delimiter = ',',
        value_name = "PATH"
    )]
    allow_sources: Vec<PathBuf>,
    /// A root that target directories may lie under (repeatable).
    #[arg(
        long = "allow-target",
        env = "BACKLAB_ALLOW_TARGET",
        value_delimiter = ',',
        value_name = "PATH"
    )]
    allow_targets: Vec<PathBuf>,
    /// A device that campaigns may overwrite (repeatable).
    #[arg(
        long = "allow-device",
        env = "BACKLAB_ALLOW_DEVICE",
        value_delimiter = ',',
        value_name = "PATH"
    )]
    allow_devices: Vec<PathBuf>,
    /// Token that every changing request must present as `Authorization: Bearer TOKEN`.
    #[arg(long, env = "BACKLAB_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The URL people and agents use to reach the lab, e.g. https://lab.example.com behind a
    /// proxy: its host is accepted in `Host`, and its pages may post changes.
    #[arg(long, env = "BACKLAB_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
    /// Another name the lab is reached by (repeatable); requests naming any other host are
    /// refused, against DNS rebinding.
    #[arg(
        long = "allow-host",
        env = "BACKLAB_ALLOW_HOST",
        value_delimiter = ',',
        value_name = "HOST[:PORT]"
    )]
    allow_hosts: Vec<String>,
    /// Runs executed at once (measurements running together disturb each other).
    #[arg(long, env = "BACKLAB_LANES", default_value_t = 1)]
    lanes: usize,
    /// The most bytes one run may move, e.g. 100G.
    #[arg(long, env = "BACKLAB_MAX_SIZE", default_value = "100G")]
    max_size: String,
    /// The longest one run may last, in seconds.
    #[arg(
        long = "max-duration",
        env = "BACKLAB_MAX_DURATION",
        default_value_t = 3600.0,
        value_name = "SECONDS"
    )]
    max_duration_s: f64,
    /// Size of the demo dataset written to the data dir at first start; 0 for none.
    #[arg(long, env = "BACKLAB_DEMO_SIZE", default_value = "256M")]
    demo_size: String,
    /// The name this lab serves under on its database (default: the machine's host name);
    /// campaigns name it to run here. Every lab sharing a PostgreSQL database needs its own.
    #[arg(long, env = "BACKLAB_HOST_NAME", value_name = "NAME")]
    host_name: Option<String>,
    /// How long a run stays this lab's without a heartbeat (renewed every third of it); a run
    /// whose host is silent longer goes back to that host's queue.
    #[arg(
        long = "lease",
        env = "BACKLAB_LEASE",
        default_value_t = 15.0,
        value_name = "SECONDS"
    )]
    lease_s: f64,
    /// Where the lab posts, as JSON, each change it finds in a series (an http or https URL).
    #[arg(long, env = "BACKLAB_WEBHOOK", value_name = "URL")]
    webhook: Option<url::Url>,
    #[command(flatten)]
    stores: StoreArgs,
    #[command(flatten)]
    tool_file: ToolFileArgs,
}

#[derive(Subcommand)]
enum DatasetCommand {
    /// Create a deterministic source tree.
    Create(DatasetArgs),
    /// Estimate how well a tree's data dedups and compresses, and how its file sizes spread.
    Scan(ScanArgs),
}

#[derive(Args)]
struct ScanArgs {
    /// Files or directory trees to read (repeatable); links are not followed.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The content-defined chunker's average chunk, e.g. 16K (a quarter of it at least, four
    /// times at most).
    #[arg(long, default_value = "16K")]
    avg_chunk: String,
    /// The dedup estimate's 95 % error the sample is sized for, in percent.
    #[arg(long, default_value_t = 2.0)]
    error_pct: f64,
    /// Print the scan as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct DatasetArgs {
    /// Directory to create (must be new or empty).
    dir: PathBuf,
    /// typical, small-files or large-files.
    #[arg(long, default_value = "typical")]
    profile: Profile,
    /// Total size, e.g. 1G [default: 1G; with --like, the tree's size].
    #[arg(long)]
    size: Option<String>,
    /// A tree to make a twin of: its file sizes, compressibility and dedup ratio, as
    /// `dataset scan` measures them (the profile and the other ratios are then not used).
    #[arg(long, value_name = "PATH")]
    like: Option<PathBuf>,
    /// Stop after this many files.
    #[arg(long)]
    files: Option<u64>,
    /// Seed: the same seed gives a byte-identical tree.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Compressibility of the file data (2.0 = 2:1).
    #[arg(long, default_value_t = 2.0)]
    compress_ratio: f64,
    /// Dedup ratio of the file data (3.0 = 3:1): units repeat so that one in three is new.
    #[arg(long)]
    dedup_ratio: Option<f64>,
    /// The unit that repeats whole, e.g. 128K (a multiple of 4K); for chunks of 64K, 512K
    /// keeps the ratio (the chunks straddling a unit's ends cost little).
    #[arg(long, default_value = "128K")]
    dedup_unit: String,
}

/// Parses the command line and runs the command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Run(args) => run(args),
        Command::Dataset(DatasetCommand::Create(args)) => create_dataset(args),
        Command::Dataset(DatasetCommand::Scan(args)) => scan_dataset(args),
        Command::Agent(args) => agent(args),
        Command::Lmdd(args) => crate::lmdd::main(&args.operands),
        Command::Import(args) => import(args),
        Command::Submit(args) => submit(args),
    }
}

fn agent(args: AgentArgs) -> ExitCode {
    init_logging();
    let config = crate::net::agent::AgentConfig {
        server: args.server,
        token: args.token.filter(|token| !token.is_empty()),
        name: args.name.unwrap_or_else(crate::net::agent::hostname),
        sources: args.allow_sources,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let handler_flag = Arc::clone(&stop);
    let _ = ctrlc::set_handler(move || handler_flag.store(true, Ordering::Relaxed));
    match crate::net::agent::run(&config, &stop) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("backlab agent: {error}");
            ExitCode::from(EXIT_BAD_SPEC)
        }
    }
}

fn init_logging() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
}

fn serve(args: ServeArgs) -> ExitCode {
    init_logging();
    let mut problems = Vec::new();
    let max_size = spec::parse_size(&args.max_size)
        .map_err(|e| problems.push(format!("--max-size: {e}")))
        .unwrap_or(0);
    let demo_size = spec::parse_size(&args.demo_size)
        .map_err(|e| problems.push(format!("--demo-size: {e}")))
        .unwrap_or(0);
    if !spec::bounds::duration_within(args.max_duration_s, spec::bounds::MAX_DURATION_S) {
        problems.push(format!(
            "--max-duration: must be more than 0 and at most {} seconds (got {})",
            spec::bounds::MAX_DURATION_S,
            args.max_duration_s
        ));
    }
    if !(args.lease_s.is_finite() && (1.0..=3600.0).contains(&args.lease_s)) {
        problems.push(format!(
            "--lease: must be between 1 and 3600 seconds (got {})",
            args.lease_s
        ));
    }
    let object_stores = args
        .stores
        .stores()
        .map_err(|found| problems.extend(found))
        .unwrap_or_default();
    let tools = args
        .tool_file
        .tools()
        .map_err(|problem| problems.push(problem))
        .unwrap_or_default();
    let host_name = args.host_name.unwrap_or_else(crate::net::agent::hostname);
    if let Err(problem) = spec::check_name(&host_name) {
        problems.push(format!("--host-name: {problem}"));
    }
    if !problems.is_empty() {
        for problem in problems {
            eprintln!("backlab serve: {problem}");
        }
        return ExitCode::from(EXIT_BAD_SPEC);
    }
    let config = crate::serve::ServeConfig {
        host_name,
        lease: std::time::Duration::from_secs_f64(args.lease_s),
        bind: args.bind,
        data_bind: args
            .data_bind
            .unwrap_or_else(|| crate::serve::data_bind_beside(args.bind)),
        db: args.db,
        data_dir: args.data_dir,
        allow_sources: args.allow_sources,
        allow_targets: args.allow_targets,
        allow_devices: args.allow_devices,
        object_stores,
        tools,
        token: args.token.filter(|token| !token.is_empty()),
        public_url: args.public_url,
        webhook: args.webhook,
        allow_hosts: args.allow_hosts,
        lanes: args.lanes,
        max_size,
        max_duration_s: args.max_duration_s,
        demo_size,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("backlab serve: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(crate::serve::serve(config));
    // Idle blocking threads must not hold the exit up.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("backlab serve: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: RunArgs) -> ExitCode {
    let mut flag_errors = FieldErrors::default();
    let spec = match build_spec(&args, &mut flag_errors) {
        Ok(spec) => spec,
        Err(message) => return bad_spec(&message),
    };
    let mut plans = match spec.plan() {
        Ok(plans) if flag_errors.is_empty() => plans,
        Ok(_) => return bad_spec(&flag_errors.to_string()),
        Err(mut errors) => {
            errors.extend(flag_errors);
            return bad_spec(&errors.to_string());
        }
    };
    // The engine follows no link on a target's path; the operator's own path is resolved once,
    // here, as the lab resolves a submitted one.
    for plan in &mut plans {
        if let TargetPlan::Dir(dir) | TargetPlan::Dedup(DedupConfig { path: dir, .. }) =
            &mut plan.target
            && let Ok(resolved) = dir.canonicalize()
        {
            *dir = resolved;
        }
    }
    let object_stores = match args.stores.stores() {
        Ok(stores) => stores,
        Err(problems) => return bad_spec(&problems.join("\n")),
    };
    let tools = match args.tool_file.tools() {
        Ok(tools) => Arc::new(tools),
        Err(problem) => return bad_spec(&problem),
    };
    let tool_errors = spec::tools::check(&spec, &tools);
    if !tool_errors.is_empty() {
        return bad_spec(&tool_errors.to_string());
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
    };
    let problems = preflight::check(&plans, &settings);
    if !problems.is_empty() {
        return bad_spec(&problems.to_string());
    }
    // Before the first byte: how long it takes, and what in the plan cannot give a valid run.
    let expectation = spec::expectation::expect(&plans);
    eprintln!("{}", expectation.summary(plans.len()));
    for warning in &expectation.warnings {
        eprintln!("warning: {}: {}", warning.field, warning.message);
    }

    let cancel = Arc::new(AtomicBool::new(false));
    let handler_flag = Arc::clone(&cancel);
    // Ctrl-C stops the current run within a second; its files are removed.
    let _ = ctrlc::set_handler(move || handler_flag.store(true, Ordering::Relaxed));

    let mut runs: Vec<RunResult> = Vec::with_capacity(plans.len());
    for (index, plan) in plans.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        runs.push(execute_shown(
            plan,
            &settings,
            &cancel,
            (index + 1, plans.len()),
        ));
    }

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
            for (index, plan) in again.iter().enumerate() {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                let result = execute_shown(plan, &settings, &cancel, (plans.len() + index + 1, of));
                all_done &= result.status == RunStatus::Done;
                runs.push(result);
            }
            all_done &= runs.len() == plans.len() + again.len();
            judgement = analysis::Judgement::of(
                &analysis::points::RunEntry::of_results(&runs),
                survey.as_ref(),
            );
        }
    }
    let report = CampaignReport {
        campaign: CampaignHeader {
            name: spec.name.clone(),
            spec,
        },
        runs,
        points: judgement.points,
        bottleneck: judgement.verdict,
        survey,
    };
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(error) => {
                eprintln!("error: cannot encode the result: {error}");
                return ExitCode::from(EXIT_RUN_FAILED);
            }
        }
    } else {
        print!("{}", render_table(&report));
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
    let mut size_flag = |field: &str, text: &str, stand_in: u64| {
        ByteSize::parse(text).unwrap_or_else(|message| {
            flag_errors.add(field, message);
            ByteSize::new(stand_in)
        })
    };
    let mut spec = match &args.spec {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("spec: cannot read {}: {error}", path.display()))?;
            spec::parse_json(&text).map_err(|errors| errors.to_string())?
        }
        None => CampaignSpec {
            name: String::new(),
            source: SourceSpec::default(),
            target: TargetSpec::new(TargetKind::Null, None),
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
        },
    };
    if let Some(host) = &spec.host {
        return Err(format!(
            "host: this command measures the machine it runs on; host '{host}' names a lab host \
             on a shared database, for campaigns submitted to a lab (backlab serve)"
        ));
    }
    if !args.sources.is_empty() {
        spec.source = SourceSpec {
            paths: Some(args.sources.clone()),
            generated: None,
            agents: None,
        };
    }
    if let Some(size) = &args.generated {
        spec.source = SourceSpec {
            paths: None,
            generated: Some(spec::GeneratedSpec {
                size: size_flag("source.generated.size", size, 1 << 30),
                compress_ratio: args.compress_ratio.unwrap_or(2.0),
                dedup_ratio: args.dedup_ratio,
                dedup_unit: args
                    .dedup_unit
                    .as_ref()
                    .map(|unit| size_flag("source.generated.dedup_unit", unit, 128 << 10)),
                generations: args.generations,
                change_rate: args.change_rate,
            }),
            agents: None,
        };
    }
    if let Some(target) = &args.target {
        spec.target = parse_target(target);
    }
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
    if let Some(tests) = &args.tests {
        spec.tests = tests.iter().map(|test| test.trim().to_string()).collect();
    }
    if let Some(name) = &args.name {
        spec.name = name.clone();
    }
    let params = &mut spec.params;
    if let Some(buffers) = args.buffers {
        params.buffers = buffers;
    }
    if let Some(block_size) = &args.block_size {
        params.block_size = size_flag("params.block_size", block_size, 256 << 10);
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
        params.size = Some(size_flag("params.size", size, 1 << 30));
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
    flag_errors.extend(tool_errors);
    spec.settle_defaults();
    Ok(spec)
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
    if text == "null" {
        TargetSpec::new(TargetKind::Null, None)
    } else if let Some(path) = text.strip_prefix("device:") {
        TargetSpec::new(TargetKind::Device, Some(PathBuf::from(path)))
    } else if let Some((kind, settings)) = text
        .split_once(':')
        .and_then(|(kind, rest)| Some((TargetKind::from_id(kind)?, rest)))
        .filter(|(_, rest)| rest.contains('='))
    {
        // KIND:NAME=VALUE,…: any kind's settings (and `path=` its path); validation names a
        // bad one.
        settings
            .split(',')
            .filter_map(|pair| pair.split_once('='))
            .fold(TargetSpec::new(kind, None), |mut target, (name, value)| {
                if name.trim() == "path" {
                    target.path = Some(PathBuf::from(value));
                    return target;
                }
                let value = match (value.parse::<u64>(), value.parse::<f64>()) {
                    (Ok(whole), _) => serde_json::Value::from(whole),
                    (_, Ok(number)) => serde_json::Value::from(number),
                    _ => serde_json::Value::from(value),
                };
                target.with(name.trim(), value)
            })
    } else if let Some(tape) = text.strip_prefix("tape:") {
        // tape:MODEL or tape:MODEL:DRIVES; a bad drive count is left for validation to name.
        let (model, drives) = tape.split_once(':').unwrap_or((tape, ""));
        let target = TargetSpec::new(TargetKind::Tape, None).with("model", model);
        if drives.is_empty() {
            target
        } else {
            target.with("drives", drives.parse::<u32>().unwrap_or(0))
        }
    } else {
        TargetSpec::new(TargetKind::Dir, Some(PathBuf::from(text)))
    }
}

fn bad_spec(message: &str) -> ExitCode {
    eprintln!("error: the campaign is not valid:");
    for line in message.lines() {
        eprintln!("  {line}");
    }
    ExitCode::from(EXIT_BAD_SPEC)
}

/// A `dataset create` asked for what cannot be made: said as the dataset's problem.
fn bad_dataset(message: &str) -> ExitCode {
    bad_arguments("the dataset cannot be made", message)
}

/// A `dataset scan` asked for what cannot be scanned: said as the scan's problem.
fn bad_scan(message: &str) -> ExitCode {
    bad_arguments("the dataset cannot be scanned", message)
}

fn bad_arguments(what: &str, message: &str) -> ExitCode {
    eprintln!("error: {what}:");
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
    match result.status {
        RunStatus::Done => format!(
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

fn create_dataset(args: DatasetArgs) -> ExitCode {
    let like = match &args.like {
        None => None,
        Some(path) => {
            eprintln!("scanning {} for its twin", path.display());
            match reduction::tree::scan(
                std::slice::from_ref(path),
                ChunkSizes::around(16 << 10),
                reduction::scan::DEFAULT_ERROR,
                &mut |_| {},
            ) {
                Ok(scan) if scan.files > 0 => Some(scan),
                Ok(_) => return bad_dataset(&format!("--like: {} holds no files", path.display())),
                Err(error) => return bad_dataset(&format!("--like: {error}")),
            }
        }
    };
    let size_text = match (&args.size, &like) {
        (Some(size), _) => size.clone(),
        (None, Some(scan)) => scan.reduction.logical_bytes.to_string(),
        (None, None) => "1G".to_string(),
    };
    let size = match spec::parse_size(&size_text) {
        Ok(0) => return bad_dataset("--size: must be greater than 0"),
        Ok(size) => size,
        Err(message) => return bad_dataset(&format!("--size: {message}")),
    };
    if !(args.compress_ratio.is_finite() && (1.0..=100.0).contains(&args.compress_ratio)) {
        return bad_dataset("--compress-ratio: must be between 1.0 and 100.0");
    }
    let dedup = match args.dedup_ratio {
        None => None,
        Some(ratio) if !(ratio.is_finite() && (1.0..=100.0).contains(&ratio)) => {
            return bad_dataset("--dedup-ratio: must be between 1.0 and 100.0");
        }
        Some(ratio) => match spec::parse_size(&args.dedup_unit) {
            Ok(unit) if unit >= 4096 && unit.is_multiple_of(4096) && unit <= 64 << 20 => {
                Some(DedupSettings { ratio, unit })
            }
            Ok(_) => return bad_dataset("--dedup-unit: must be a multiple of 4K, at most 64M"),
            Err(message) => return bad_dataset(&format!("--dedup-unit: {message}")),
        },
    };
    let request = match &like {
        Some(scan) => DatasetRequest {
            profile: Profile::Typical,
            size,
            max_files: args.files,
            seed: args.seed,
            compress_ratio: scan.reduction.compress_ratio.clamp(1.0, 100.0),
            dedup: None,
            like: Some(dataset::Likeness {
                percentiles: scan.sizes.percentiles.clone(),
                dedup_ratio: scan.reduction.dedup_ratio.max(1.0),
            }),
        },
        None => DatasetRequest {
            profile: args.profile,
            size,
            max_files: args.files,
            seed: args.seed,
            compress_ratio: args.compress_ratio,
            dedup,
            like: None,
        },
    };
    if let Some(scan) = &like {
        eprintln!(
            "a twin of {} files, {}: median file {}, compression {:.2}:1, dedup {:.2}:1",
            scan.files,
            crate::size::format_bytes(scan.reduction.logical_bytes),
            crate::size::format_bytes(scan.sizes.median),
            scan.reduction.compress_ratio,
            scan.reduction.dedup_ratio
        );
        if scan.sparse_files > 0 {
            eprintln!(
                "{} sparse files: their {} of holes are left out, the twin holds their data",
                scan.sparse_files,
                crate::size::format_bytes(scan.hole_bytes)
            );
        }
    }
    let bar = ProgressBar::new(size);
    let style =
        ProgressStyle::with_template("{spinner} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    let mut report = |written: u64| bar.set_position(written);
    let result = dataset::create(&args.dir, &request, &mut report);
    bar.finish_and_clear();
    match result {
        Ok(summary) => {
            println!("{}", dataset_line(&args.dir, &request, &summary));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_RUN_FAILED)
        }
    }
}

fn scan_dataset(args: ScanArgs) -> ExitCode {
    let avg = match spec::parse_size(&args.avg_chunk) {
        Ok(avg) if (256..=4 << 20).contains(&avg) => avg as u32,
        Ok(_) => return bad_scan("--avg-chunk: must be from 256 bytes to 4M"),
        Err(message) => return bad_scan(&format!("--avg-chunk: {message}")),
    };
    if !(args.error_pct.is_finite() && (0.1..=50.0).contains(&args.error_pct)) {
        return bad_scan("--error-pct: must be from 0.1 to 50");
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bytes} read, {bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut report = |read: u64| bar.set_position(read);
    let result = reduction::tree::scan(
        &args.paths,
        ChunkSizes::around(avg),
        args.error_pct / 100.0,
        &mut report,
    );
    bar.finish_and_clear();
    match result {
        Ok(scan) if args.json => match serde_json::to_string_pretty(&scan) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::from(EXIT_RUN_FAILED)
            }
        },
        Ok(scan) => {
            print!(
                "{}",
                crate::reduction_report::scan_table(&args.paths, &scan)
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_RUN_FAILED)
        }
    }
}

fn dataset_line(dir: &Path, request: &DatasetRequest, summary: &dataset::DatasetSummary) -> String {
    let mb_per_s = if summary.seconds > 0.0 {
        summary.bytes as f64 / summary.seconds / 1e6
    } else {
        0.0
    };
    format!(
        "created {} files in {} directories under {}: {} ({} bytes), profile {:?}, seed {}, \
         compress ratio {}{}, in {:.1} s ({mb_per_s:.0} MB/s)",
        summary.files,
        summary.dirs,
        dir.display(),
        crate::size::format_bytes(summary.bytes),
        summary.bytes,
        request.profile,
        request.seed,
        request.compress_ratio,
        match request.dedup {
            Some(dedup) => format!(
                ", dedup ratio {} in {} units ({} of it new: {:.2}:1)",
                dedup.ratio,
                format_size(dedup.unit),
                crate::size::format_bytes(summary.new_bytes),
                summary.bytes as f64 / summary.new_bytes.max(1) as f64
            ),
            None => String::new(),
        },
        summary.seconds
    )
}

/// `backlab import`: reads the tool's output, checks it here, and posts it to the lab.
fn import(args: ImportArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("backlab import: {message}");
        ExitCode::FAILURE
    };
    let text = match std::fs::read_to_string(&args.file) {
        Ok(text) => text,
        Err(error) => return fail(format!("cannot read {}: {error}", args.file.display())),
    };
    let result: serde_json::Value = match serde_json::from_str(&text) {
        Ok(result) => result,
        Err(error) => return fail(format!("{} is not JSON: {error}", args.file.display())),
    };
    let (tool, name) = match args.tool {
        ImportTool::Fio => (crate::reference::Tool::Fio, "fio"),
        ImportTool::Iperf3 => (crate::reference::Tool::Iperf3, "iperf3"),
    };
    if let Err(error) = crate::reference::read(tool, &result) {
        return fail(format!("{}: {error}", args.file.display()));
    }
    let url = format!(
        "{}/api/campaigns/{}/references",
        args.lab.trim_end_matches('/'),
        args.campaign
    );
    let body = serde_json::json!({ "tool": name, "result": result });
    let answer = match LabClient::new(args.token.clone()).post(&url, &body) {
        Ok(answer) => answer,
        Err(message) => return fail(message),
    };
    let references: Vec<crate::reference::Reference> =
        serde_json::from_str(&answer).unwrap_or_default();
    println!(
        "kept beside campaign {}: {} reference figure(s); {}/campaigns/{} shows them",
        args.campaign,
        references.len(),
        args.lab.trim_end_matches('/'),
        args.campaign
    );
    ExitCode::SUCCESS
}

/// The spec of `args.file` with the search the flags ask for set on its matrix.
fn submitted_spec(args: &SubmitArgs) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|error| format!("cannot read {}: {error}", args.file.display()))?;
    let mut spec: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| format!("{} is not JSON: {error}", args.file.display()))?;
    let searching = args.search.is_some() || args.budget_runs.is_some() || args.seed.is_some();
    if searching {
        let Some(matrix) = spec.get_mut("matrix").and_then(|m| m.as_object_mut()) else {
            return Err(format!(
                "{} has no matrix to search: --search, --budget-runs and --seed explore one",
                args.file.display()
            ));
        };
        let search = matrix
            .entry("search")
            .or_insert_with(|| serde_json::json!({}));
        let Some(search) = search.as_object_mut() else {
            return Err("matrix.search must be an object".to_string());
        };
        if let Some(strategy) = args.search {
            let name = match strategy {
                SearchFlag::Full => "full",
                SearchFlag::Adaptive => "adaptive",
            };
            search.insert("strategy".into(), name.into());
        }
        if let Some(budget) = args.budget_runs {
            search.insert("budget_runs".into(), budget.into());
        }
        if let Some(seed) = args.seed {
            search.insert("seed".into(), seed.into());
        }
    }
    Ok(spec)
}

fn submit(args: SubmitArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("backlab submit: {message}");
        ExitCode::FAILURE
    };
    let spec = match submitted_spec(&args) {
        Ok(spec) => spec,
        Err(message) => return fail(message),
    };
    let lab = args.lab.trim_end_matches('/').to_string();
    let client = LabClient::new(args.token.clone());
    let answer = match client.post(&format!("{lab}/api/campaigns"), &spec) {
        Ok(answer) => answer,
        Err(message) => return fail(message),
    };
    let submitted: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
    let id = submitted["id"].as_str().unwrap_or_default().to_string();
    println!("queued campaign {id}: {lab}/campaigns/{id}");
    if !args.wait {
        return ExitCode::SUCCESS;
    }
    let url = format!("{lab}/api/campaigns/{id}");
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let campaign: serde_json::Value = match client.get(&url) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_default(),
            Err(message) => return fail(message),
        };
        let status = campaign["status"].as_str().unwrap_or_default();
        if !["done", "failed", "cancelled"].contains(&status) {
            continue;
        }
        println!("campaign {id} {status}");
        if let Some(search) = campaign.get("search") {
            println!(
                "search: {} of {} points, {} of the full sweep's {} runs; stopped: {}",
                search["points_run"],
                search["points_total"],
                search["runs"],
                search["full_runs"],
                search["why"].as_str().unwrap_or("-")
            );
            println!("{}", search["sureness"].as_str().unwrap_or(""));
        }
        return if status == "done" {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
}

/// The commands' way to a lab's API: one agent, the token on every request, and any answer
/// but a success turned into the message a command prints.
struct LabClient {
    agent: ureq::Agent,
    token: Option<String>,
}

impl LabClient {
    fn new(token: Option<String>) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .new_agent();
        Self { agent, token }
    }

    /// The body of the answer to a GET of `url`, or why there is none.
    fn get(&self, url: &str) -> Result<String, String> {
        let mut request = self.agent.get(url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        Self::answer(url, request.call())
    }

    /// The body of the answer to `body` posted as JSON to `url`, or why there is none.
    fn post(&self, url: &str, body: &serde_json::Value) -> Result<String, String> {
        let mut request = self.agent.post(url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        Self::answer(url, request.send_json(body))
    }

    fn answer(
        url: &str,
        sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<String, String> {
        let mut response = sent.map_err(|error| format!("{url}: {error}"))?;
        let status = response.status();
        let answer = response.body_mut().read_to_string().unwrap_or_default();
        if status.is_success() {
            Ok(answer)
        } else {
            Err(format!("{url} answered {status}: {answer}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::CommandFactory;
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
    ];
    const NOT_SPEC_FIELDS: &[&str] = &[
        "--allow-device",
        "--restore-to",
        "--s3-store",
        "--s3-credentials",
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
