//! The command line: its commands and the flags they share, each command in a file of its
//! own: `backlab serve` (`serve`), `backlab run` (`run`), `backlab dataset create` and `scan`
//! (`dataset`), `backlab submit` and `import` against a running lab (`remote`); `backlab
//! agent` and `backlab lmdd` are handed on from here.

mod dataset;
mod remote;
mod run;
mod serve;

use dataset::{DatasetCommand, create_dataset, scan_dataset};
use remote::{ImportArgs, SubmitArgs, import, submit};
use run::{RunArgs, run};
use serve::{ServeArgs, serve};

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Parser, Subcommand};

use crate::engine::target::s3::{CredentialSources, ObjectStores};

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
    /// Let a backup tool reach the stores directly: its requests to the bucket are then not
    /// counted (by default they pass through the lab's counting relay on loopback).
    #[arg(long = "s3-uncounted")]
    s3_uncounted: bool,
    /// A JSON file of price sheets (the format of the lab's own, docs/bills.md) that bills
    /// are worked out by beside the lab's: a negotiated price, another provider. A sheet of
    /// the same id replaces the lab's.
    #[arg(long = "price-sheet", env = "BACKLAB_PRICE_SHEET", value_name = "FILE")]
    price_sheet: Option<PathBuf>,
}

impl StoreArgs {
    /// The stores, every problem with them named.
    fn stores(&self) -> Result<ObjectStores, Vec<String>> {
        let credentials = CredentialSources::from_environment(self.s3_credentials.as_deref())
            .map_err(|problem| vec![format!("--s3-credentials: {problem}")])?;
        let stores = ObjectStores::parse(&self.s3_stores, &credentials)?;
        Ok(if self.s3_uncounted {
            stores.uncounted()
        } else {
            stores
        })
    }

    /// The price sheets bills are worked out by: the lab's, and the operator's file's, every
    /// problem in it named by its sheet and field.
    fn prices(&self) -> Result<crate::analysis::prices::PriceSheets, Vec<String>> {
        let Some(file) = &self.price_sheet else {
            return Ok(crate::analysis::prices::PriceSheets::built_in());
        };
        let what = format!("--price-sheet {}", file.display());
        let text =
            std::fs::read_to_string(file).map_err(|error| vec![format!("{what}: {error}")])?;
        crate::analysis::prices::PriceSheets::with_file(&text, &what)
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
