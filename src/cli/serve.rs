//! `backlab serve`: the lab as a service, its flags checked and its parts started.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::spec;
use crate::store::Location;

use super::{EXIT_BAD_SPEC, StoreArgs, ToolFileArgs, init_logging};

#[derive(Args)]
pub(super) struct ServeArgs {
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

pub(super) fn serve(args: ServeArgs) -> ExitCode {
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
    let prices = args
        .stores
        .prices()
        .map_err(|found| problems.extend(found))
        .ok();
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
        prices: prices.unwrap_or_else(crate::analysis::prices::PriceSheets::built_in),
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
    // Read by now: the secrets leave the environment a tool could read in /proc, and are
    // redacted from whatever a tool prints.
    crate::secrets::keep_out_of_environment(&crate::secrets::SECRET_VARIABLES);
    if let Some(token) = &config.token {
        crate::secrets::know(token);
    }
    for secret in config.object_stores.secret_values() {
        crate::secrets::know(&secret);
    }
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
