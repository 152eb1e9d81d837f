//! `backlab serve`: the lab as a service. Starts the store, recovers from a crash, lays out the
//! data directory, runs the workers, the data listener and the HTTP side, and shuts down
//! cleanly.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::engine::EngineSettings;
use crate::engine::dataset::{self, DatasetRequest, Profile};
use crate::engine::target::Writes;
use crate::engine::target::s3::{self, ObjectStores};
use crate::engine::target::sweep_lab_files;
use crate::field_errors::FieldErrors;
use crate::http::origin::{SiteFlagError, SiteFlags, SitePolicy};
use crate::http::{self, AppState, listener};
use crate::lab::host::{self, JoinError};
use crate::lab::worker;
use crate::lab::{DEMO_DIR, HostSettings, Lab};
use crate::net::Clients;
use crate::net::listener::{AgentGateway, DataLink};
use crate::policy::Policy;
use crate::spec::{CampaignSpec, format_size};
use crate::store::{Location, Store, StoreError};

/// How long a shutdown waits for the running run to stop and save.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The data listener's address when none is given: the web listener's address with the next
/// port, so a second lab started with another `--bind` does not collide with the first's data
/// port; port 0 (any free one) when the web port is 0 or the last.
pub fn data_bind_beside(bind: SocketAddr) -> SocketAddr {
    let port = match bind.port() {
        0 => 0,
        port => port.checked_add(1).unwrap_or(0),
    };
    SocketAddr::new(bind.ip(), port)
}

/// How the lab was asked to run.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    /// The TCP data listener for agents and network-backup streams.
    pub data_bind: SocketAddr,
    pub db: Location,
    pub data_dir: PathBuf,
    pub allow_sources: Vec<PathBuf>,
    pub allow_targets: Vec<PathBuf>,
    pub allow_devices: Vec<PathBuf>,
    /// The object stores campaigns may write to (`--s3-store`), with their credentials.
    pub object_stores: ObjectStores,
    /// The price sheets bills are worked out by (the lab's, and `--price-sheet`).
    pub prices: crate::analysis::prices::PriceSheets,
    /// The backup tools campaigns may run (built in, and `--tools`), found at start.
    pub tools: crate::engine::tool::Tools,
    pub token: Option<String>,
    /// The URL people use to reach the lab (`--public-url`), e.g. behind a proxy.
    pub public_url: Option<String>,
    /// Where changes found in a series are posted (`--webhook`).
    pub webhook: Option<url::Url>,
    /// More host names the lab answers to (`--allow-host`, `HOST[:PORT]`).
    pub allow_hosts: Vec<String>,
    pub lanes: usize,
    pub max_size: u64,
    pub max_duration_s: f64,
    /// Size of the demo dataset written at first start; 0 writes none.
    pub demo_size: u64,
    /// The name the lab serves under on its database (`--host-name`).
    pub host_name: String,
    /// How long a claimed run stays this lab's without a heartbeat (`--lease`).
    pub lease: Duration,
}

/// Why the lab could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach it could make the lab \
         read and write files; set --token (or BACKLAB_TOKEN), or bind to 127.0.0.1"
    )]
    OpenWithoutToken(SocketAddr),
    #[error(
        "refusing to take agents on {0} without a token: anyone who can reach it could \
         register as an agent; set --token (or BACKLAB_TOKEN), or bind --data-bind to 127.0.0.1"
    )]
    DataWithoutToken(SocketAddr),
    #[error("{flag} {path}: {reason}")]
    BadPath {
        flag: &'static str,
        path: String,
        reason: String,
    },
    #[error("cannot open the database {path}: {source}")]
    Store { path: String, source: StoreError },
    #[error("cannot take this lab's place on the database {db}: {source}")]
    Join { db: String, source: JoinError },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Serve(std::io::Error),
    #[error("--lanes must be at least 1")]
    NoLanes,
    #[error("cannot take SIGTERM and SIGINT: {0}")]
    Signals(std::io::Error),
    #[error(transparent)]
    Site(#[from] SiteFlagError),
    #[error("the API description cannot be generated: {0}")]
    OpenApi(String),
}

/// Runs the lab until SIGTERM or Ctrl-C.
pub async fn serve(config: ServeConfig) -> Result<(), ServeError> {
    check_config(&config)?;
    // Taken before the lab announces itself: a SIGTERM sent the moment it is up stops it
    // cleanly instead of killing it before a handler exists.
    let stop_signals = StopSignals::register().map_err(ServeError::Signals)?;
    let site_flags = SiteFlags::parse(config.public_url.as_deref(), &config.allow_hosts)?;
    let file_limit = listener::raise_file_limit();
    let max_connections = listener::connection_cap(file_limit.soft);
    let data_dir = make_data_dir(&config.data_dir)?;
    let policy = policy_of(&config, &data_dir)?;
    let store = open_store(&config.db).await?;
    log_session_deadlines(&store).await;
    // Before anything in it is swept: a second lab on this data dir, by whatever name it
    // reaches it, would take the first lab's runs for a crashed lab's leftovers.
    let _data_dir_lock = lock_data_dir(&data_dir)?;
    let host = HostSettings {
        name: config.host_name.clone(),
        lease: config.lease,
        url: config.public_url.clone(),
        webhook: config.webhook.clone(),
    };
    let _hold = host::join(&store, &host, &policy, config.token.as_deref())
        .await
        .map_err(|source| ServeError::Join {
            db: config.db.to_string(),
            source,
        })?;
    let journal = open_upload_journal(&data_dir)?;
    let object_owner = object_owner(&host.name, &data_dir)?;
    let sweep_give_up = Arc::new(AtomicBool::new(false));
    let stores_swept = recover(
        &store,
        &host.name,
        &data_dir,
        StoreSweep {
            stores: config.object_stores.clone(),
            journal: journal.clone(),
            owner: object_owner.clone(),
            give_up: Arc::clone(&sweep_give_up),
        },
    )
    .await;

    let token: Option<Arc<str>> = config.token.as_deref().map(Arc::from);
    let datalink = start_datalink(config.data_bind, token.clone())?;
    let lab = Arc::new(
        Lab::new(
            store.clone(),
            policy,
            engine_settings(&config, &data_dir, &datalink, journal, object_owner),
            host,
            Arc::clone(&datalink),
        )
        .with_prices(config.prices.clone()),
    );
    relay_live_events(&lab).await;
    let heartbeat = host::spawn_heartbeat(&lab);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (api_router, openapi) = http::api().map_err(ServeError::OpenApi)?;
    let state = AppState::new(Arc::clone(&lab), openapi, token, shutdown_rx);
    let http_listener = bind_http(config.bind).await?;
    let addr = http_listener.local_addr().map_err(ServeError::Serve)?;
    let site = Arc::new(SitePolicy::new(addr, &site_flags));
    let app = http::app(api_router, state, Arc::clone(&site));

    log_limits(&file_limit, max_connections, &site, addr);
    announce(&format!("backlab listening on http://{addr}"));
    log_serving(&config, datalink.addr(), &data_dir);

    spawn_demo(&data_dir, config.demo_size);
    let workers = spawn_lanes_once_swept(&lab, config.lanes, stores_swept);
    spawn_judging(&lab);
    spawn_scheduling(&lab, shutdown_tx.subscribe());

    listener::serve(
        http_listener,
        app,
        max_connections,
        SHUTDOWN_GRACE,
        stop_on_signal(stop_signals, Arc::clone(&lab), sweep_give_up, shutdown_tx),
    )
    .await;
    wait_for_lanes(workers).await;
    heartbeat.abort();
    datalink.shutdown();
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// The database's own deadlines on this lab's statements, logged so that an operator sees
/// what a slow statement runs into.
async fn log_session_deadlines(store: &Store) {
    match store.session_deadlines().await {
        Ok(Some(deadlines)) => tracing::info!(
            statement_timeout = %deadlines.statement,
            idle_in_transaction_session_timeout = %deadlines.idle_in_transaction,
            "the database's deadlines for this lab's statements"
        ),
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, "cannot read the database's deadlines"),
    }
}

/// The journal in the data dir where the lab notes its uploads, so that what a stopped lab
/// left in object stores can be found again.
fn open_upload_journal(data_dir: &Path) -> Result<s3::journal::Journal, ServeError> {
    s3::journal::Journal::open(&data_dir.join(UPLOAD_JOURNAL))
        .map_err(|e| bad_path("--data-dir", &data_dir.join(UPLOAD_JOURNAL), &e))
}

/// The owner this lab's objects in a shared object store carry: its name and its data dir's
/// identity.
fn object_owner(host_name: &str, data_dir: &Path) -> Result<String, ServeError> {
    Ok(format!(
        "{}-{}",
        host_name,
        lab_identity(data_dir).map_err(|e| bad_path("--data-dir", &data_dir.join(LAB_ID), &e))?
    ))
}

/// The TCP data listener for agents and network-backup streams, listening.
fn start_datalink(bind: SocketAddr, token: Option<Arc<str>>) -> Result<Arc<DataLink>, ServeError> {
    DataLink::start(bind, token).map_err(|source| ServeError::Bind { addr: bind, source })
}

/// What the engine runs this lab's campaigns with: its flags, the data link its network
/// clients reach agents through, and where it keeps restores and notes uploads.
fn engine_settings(
    config: &ServeConfig,
    data_dir: &Path,
    datalink: &Arc<DataLink>,
    journal: s3::journal::Journal,
    object_owner: String,
) -> EngineSettings {
    EngineSettings {
        allow_devices: config.allow_devices.clone(),
        network: Some(Arc::new(Clients::with_agents(Arc::new(AgentGateway(
            Arc::clone(datalink),
        ))))),
        restore_dir: data_dir.to_path_buf(),
        object_stores: config.object_stores.clone(),
        upload_journal: Some(journal),
        object_owner,
        tools: Arc::new(config.tools.clone()),
        max_run: std::time::Duration::try_from_secs_f64(config.max_duration_s).ok(),
    }
}

/// Relays live events between the labs on the database; without it the lab still serves,
/// its followers seeing other hosts' runs only when they finish.
async fn relay_live_events(lab: &Arc<Lab>) {
    if let Err(error) = host::start_relay(lab).await {
        tracing::warn!(%error, "cannot relay live events between hosts: followers on other hosts see runs only when they finish");
    }
}

/// The web listener, bound to `--bind`.
async fn bind_http(bind: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(bind)
        .await
        .map_err(|source| ServeError::Bind { addr: bind, source })
}

/// Logs where and how the lab serves, once it listens.
fn log_serving(config: &ServeConfig, data_addr: SocketAddr, data_dir: &Path) {
    tracing::info!(
        data = %data_addr,
        data_dir = %data_dir.display(),
        db = %config.db,
        host = %config.host_name,
        lanes = config.lanes,
        "serving"
    );
}

/// Clears away half-written demo datasets and writes the demo when one is asked for: file-
/// system work, off the async workers, since a half-written demo can be hundreds of MB.
fn spawn_demo(data_dir: &Path, size: u64) {
    let demo_parent = data_dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        remove_partial_demos(&demo_parent);
        if size > 0 {
            write_demo_dataset(&demo_parent.join(DEMO_DIR), size);
        }
    });
}

/// Starts the lanes once the object stores are swept of what this lab left (or the sweep's
/// deadline passed): a sweep must not take a new run's objects for an old run's.
fn spawn_lanes_once_swept(
    lab: &Arc<Lab>,
    lanes: usize,
    stores_swept: tokio::task::JoinHandle<()>,
) -> tokio::task::JoinHandle<Vec<tokio::task::JoinHandle<()>>> {
    let lanes_lab = Arc::clone(lab);
    tokio::spawn(async move {
        let _ = stores_swept.await;
        worker::spawn_lanes(&lanes_lab, lanes)
    })
}

/// Waits for SIGTERM or Ctrl-C, then stops the lab: the running run is interrupted, the
/// store sweep given up and live streams ended.
async fn stop_on_signal(
    stop_signals: StopSignals,
    lab: Arc<Lab>,
    sweep_give_up: Arc<AtomicBool>,
    shutdown_tx: watch::Sender<bool>,
) {
    stop_signals.recv().await;
    tracing::info!("shutting down: interrupting the running run, ending live streams");
    lab.stop_all();
    sweep_give_up.store(true, Ordering::Relaxed);
    let _ = shutdown_tx.send(true);
}

/// Gives the lanes up to [`SHUTDOWN_GRACE`] to stop and save their runs.
async fn wait_for_lanes(workers: tokio::task::JoinHandle<Vec<tokio::task::JoinHandle<()>>>) {
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
        if let Ok(lanes) = workers.await {
            futures_util::future::join_all(lanes).await;
        }
    })
    .await;
}

/// The flags' checks that need nothing opened: a lab reachable from other machines takes a
/// token, and it has at least one lane.
fn check_config(config: &ServeConfig) -> Result<(), ServeError> {
    if config.token.is_none() && !config.bind.ip().is_loopback() {
        return Err(ServeError::OpenWithoutToken(config.bind));
    }
    if config.token.is_none() && !config.data_bind.ip().is_loopback() {
        return Err(ServeError::DataWithoutToken(config.data_bind));
    }
    if config.lanes == 0 {
        return Err(ServeError::NoLanes);
    }
    Ok(())
}

/// The data directory, made if it is missing, as an absolute path.
fn make_data_dir(dir: &Path) -> Result<PathBuf, ServeError> {
    std::fs::create_dir_all(dir).map_err(|e| bad_path("--data-dir", dir, &e))?;
    dir.canonicalize()
        .map_err(|e| bad_path("--data-dir", dir, &e))
}

/// What campaigns on this lab may touch, from its flags, every root resolved.
fn policy_of(config: &ServeConfig, data_dir: &Path) -> Result<Policy, ServeError> {
    Ok(Policy {
        source_roots: roots("--allow-source", data_dir, &config.allow_sources)?,
        target_roots: roots("--allow-target", data_dir, &config.allow_targets)?,
        devices: config.allow_devices.clone(),
        base_dir: data_dir.to_path_buf(),
        max_size: config.max_size,
        max_duration_s: config.max_duration_s,
    })
}

/// The store, its file's directory made first; campaigns stored before series had keys are
/// keyed before anything reads a series.
async fn open_store(db: &Location) -> Result<Store, ServeError> {
    if let Location::File(path) = db
        && let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|e| bad_path("--db", path, &e))?;
    }
    let opened = async {
        let store = Store::open(db).await?;
        store.key_series(crate::series::key_of_stored).await?;
        Ok(store)
    };
    opened.await.map_err(|source| ServeError::Store {
        path: db.to_string(),
        source,
    })
}

/// Logs the limits the lab serves under, and warns of what an operator should know: a lab
/// answering to any Host, a test calendar in place of the clock.
fn log_limits(
    file_limit: &listener::FileLimit,
    max_connections: usize,
    site: &SitePolicy,
    addr: SocketAddr,
) {
    tracing::info!(
        open_files_at_start = ?file_limit.started_with,
        open_files = ?file_limit.soft,
        open_files_hard = ?file_limit.hard,
        max_connections,
        header_read_timeout_s = listener::HEADER_READ_TIMEOUT.as_secs(),
        "connection limits"
    );
    if site.accepts_any_host() {
        tracing::warn!(
            bind = %addr,
            "accepting requests for any Host: DNS rebinding protection needs the names this \
             lab is reached by, given with --public-url or --allow-host"
        );
    } else {
        tracing::info!(hosts = ?site.hosts(), "answering to these hosts only");
    }
    if let Some(file) = std::env::var_os(crate::clock::TEST_CALENDAR_ENV) {
        tracing::warn!(
            file = %std::path::Path::new(&file).display(),
            "{} is set: the schedules read now from this file, not the clock; it is for \
             tests only",
            crate::clock::TEST_CALENDAR_ENV
        );
    }
}

/// Campaigns finished before their judgement was kept (their end lost with the lab that
/// was taking it), or judged under older rules: judged once, in the background, so that no
/// page or list read has to write (`Lab::judge_stale`).
fn spawn_judging(lab: &Arc<Lab>) {
    let lab = Arc::clone(lab);
    tokio::spawn(async move {
        let judged = lab.judge_stale().await;
        if judged > 0 {
            tracing::info!(
                judged,
                "judged the campaigns kept under older judging rules"
            );
        }
    });
}

/// Every lab on the database looks for schedules due, until the shutdown; each occurrence
/// goes to one of them.
fn spawn_scheduling(lab: &Arc<Lab>, mut stop: watch::Receiver<bool>) {
    let lab = Arc::clone(lab);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(crate::lab::SCHEDULE_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    lab.schedules().fire_due().await;
                }
                _ = stop.changed() => break,
            }
        }
    });
}

/// Tells whoever started the lab where it listens: one line on stdout. A closed stdout is no
/// reason to stop serving.
fn announce(line: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// The directory in the data dir where the lab notes its uploads to object stores.
const UPLOAD_JOURNAL: &str = ".backlab-uploads";

/// The file in the data dir that holds the lab's own identity: with its name, what its
/// objects in a shared object store carry, so its sweep takes only what it left itself.
const LAB_ID: &str = ".backlab-lab-id";

/// Longest the start-up sweep of object stores may hold back the lab's runs: a store that
/// does not answer is given up (what is left stays in the journal for the next start).
const STORE_SWEEP_DEADLINE: Duration = Duration::from_secs(30);

/// The lab's identity, made once and kept in its data dir: two labs on one machine, even
/// under one name, have data dirs (and identities) of their own.
fn lab_identity(data_dir: &Path) -> std::io::Result<String> {
    let path = data_dir.join(LAB_ID);
    match std::fs::read_to_string(&path) {
        Ok(text)
            if (8..=32).contains(&text.trim().len())
                && text.trim().bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            return Ok(text.trim().to_string());
        }
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let identity: String = crate::ids::campaign_id().chars().take(10).collect();
    std::fs::write(&path, format!("{identity}\n"))?;
    Ok(identity)
}

/// What the start-up sweep of object stores works from.
struct StoreSweep {
    stores: ObjectStores,
    journal: s3::journal::Journal,
    owner: String,
    /// Raised at the sweep's deadline, or when the lab shuts down: the sweep stops there.
    give_up: Arc<AtomicBool>,
}

/// Queues again the runs the last shutdown left unfinished and removes the files they left
/// on this machine; the object stores are swept in the background, never holding the start:
/// the task returned ends when they are swept or their deadline passed.
async fn recover(
    store: &Store,
    host: &str,
    data_dir: &Path,
    objects: StoreSweep,
) -> tokio::task::JoinHandle<()> {
    match store.recover(host, crate::clock::now_ms()).await {
        Ok(recovery) => {
            if recovery.requeued > 0 {
                tracing::warn!(
                    runs = recovery.requeued,
                    "runs were left unfinished by the last shutdown or crash; queued again"
                );
            }
            // Looking through target directories is file-system work: off the async workers.
            let specs = Arc::new(recovery.specs);
            let local_specs = Arc::clone(&specs);
            let data_dir = data_dir.to_path_buf();
            let owner = objects.owner.clone();
            let swept =
                tokio::task::spawn_blocking(move || sweep_targets(&local_specs, &data_dir, &owner))
                    .await;
            if let Err(error) = swept {
                tracing::warn!(%error, "cannot look for files left by interrupted runs");
            }
            sweep_stores_in_background(specs, objects)
        }
        Err(error) => {
            tracing::error!(%error, "cannot recover unfinished runs");
            tokio::spawn(async {})
        }
    }
}

/// Sweeps the object stores on a thread of its own, given up at [`STORE_SWEEP_DEADLINE`].
fn sweep_stores_in_background(
    specs: Arc<Vec<CampaignSpec>>,
    objects: StoreSweep,
) -> tokio::task::JoinHandle<()> {
    let give_up = Arc::clone(&objects.give_up);
    // The deadline holds without the async side too: a lab stopping mid-sweep waits for the
    // sweep's thread no longer than one request past it.
    let timer = Arc::clone(&give_up);
    let _ = std::thread::Builder::new()
        .name("backlab-sweep-deadline".to_string())
        .spawn(move || {
            std::thread::sleep(STORE_SWEEP_DEADLINE);
            timer.store(true, Ordering::Relaxed);
        });
    let sweeping = tokio::task::spawn_blocking({
        let give_up = Arc::clone(&give_up);
        move || {
            sweep_journal(&objects.journal, &objects.stores, &give_up);
            sweep_stores(&specs, &objects.stores, &objects.owner, &give_up);
        }
    });
    tokio::spawn(async move {
        match tokio::time::timeout(STORE_SWEEP_DEADLINE, sweeping).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(%error, "cannot look for what interrupted runs left in object stores")
            }
            Err(_) => {
                give_up.store(true, Ordering::Relaxed);
                tracing::warn!(
                    deadline_s = STORE_SWEEP_DEADLINE.as_secs(),
                    "the object stores did not finish the start-up sweep in time: runs start \
                     now, and what is left stays in the journal for the next start"
                );
            }
        }
    })
}

/// Removes lab files left in the directory targets of the given campaign specs, and the
/// restore directories left in the data dir.
fn sweep_targets(specs: &[CampaignSpec], data_dir: &Path, owner: &str) {
    if !crate::engine::tool::process::caged() {
        tracing::warn!(
            "this machine gives the lab no cgroup to cage its backup tools in (it runs without \
             root or delegation): a tool's process that leaves its process group (a new \
             session) can outlive its run"
        );
    }
    let (killed, removed) = crate::engine::tool::run::sweep_left_behind(owner);
    if killed + removed > 0 {
        tracing::warn!(
            processes = killed,
            directories = removed,
            "ended the backup tool processes and removed the memory directories an interrupted run left"
        );
    }
    let targets = specs.iter().filter_map(|spec| {
        (spec.target.kind.facts().writes == Writes::FilesUnder)
            .then(|| spec.target.path.clone())
            .flatten()
    });
    for dir in std::iter::once(data_dir.to_path_buf()).chain(targets) {
        match sweep_lab_files(&dir) {
            Ok(0) => {}
            Ok(removed) => tracing::warn!(
                dir = %dir.display(), removed, "removed files left by an interrupted run"
            ),
            Err(error) => tracing::warn!(
                dir = %dir.display(), %error, "cannot look for files left by an interrupted run"
            ),
        }
    }
}

/// Aborts the uploads and removes the objects the journal says a stopped lab left behind.
fn sweep_journal(journal: &s3::journal::Journal, stores: &ObjectStores, give_up: &AtomicBool) {
    let (swept, problems) = s3::sweep::sweep_journal(journal, stores, give_up);
    if swept != s3::sweep::Swept::default() {
        tracing::warn!(
            uploads_aborted = swept.uploads_aborted,
            objects_removed = swept.objects_removed,
            "removed what an interrupted run left in object stores"
        );
    }
    for problem in problems {
        tracing::warn!(%problem, "cannot remove what an interrupted run left in an object store");
    }
}

/// Aborts the uploads and removes the objects that interrupted runs left in the object
/// stores of the given campaign specs, as far as the stores list them.
fn sweep_stores(specs: &[CampaignSpec], stores: &ObjectStores, owner: &str, give_up: &AtomicBool) {
    let mut seen = Vec::new();
    for spec in specs {
        if give_up.load(Ordering::Relaxed) {
            return;
        }
        let Some(config) = spec
            .target
            .plan(&mut FieldErrors::default())
            .and_then(|plan| plan.object_store().cloned())
        else {
            continue;
        };
        if seen.contains(&(config.store.clone(), config.prefix.clone())) {
            continue;
        }
        seen.push((config.store.clone(), config.prefix.clone()));
        let Some(store) = stores.get(&config.store) else {
            tracing::warn!(
                store = %config.store,
                "cannot look for uploads left by an interrupted run: the lab was started without this store"
            );
            continue;
        };
        match s3::sweep::sweep(store, &config.prefix, owner, give_up) {
            Ok(swept) if swept == s3::sweep::Swept::default() => {}
            Ok(swept) => tracing::warn!(
                store = %config.store,
                prefix = %config.prefix,
                uploads_aborted = swept.uploads_aborted,
                objects_removed = swept.objects_removed,
                "removed what an interrupted run left in an object store"
            ),
            Err(error) => tracing::warn!(
                store = %config.store, %error,
                "cannot look for uploads left by an interrupted run"
            ),
        }
    }
}

/// Removes what a lab killed while writing the demo dataset left in `data_dir`, whether or
/// not a demo is written at this start.
fn remove_partial_demos(data_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return;
    };
    let stale = format!(".{DEMO_DIR}.partial-");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // The writer's process id ends the name: one still running is writing it now.
        let writer_alive = name
            .strip_prefix(&stale)
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if name.starts_with(&stale) && !writer_alive {
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => tracing::warn!(
                    dir = %entry.path().display(),
                    "removed a demo dataset an interrupted start left half-written"
                ),
                Err(error) => tracing::warn!(
                    dir = %entry.path().display(), %error,
                    "cannot remove a half-written demo dataset"
                ),
            }
        }
    }
}

/// Writes the demo dataset once: into a scratch directory first, renamed when complete, so a
/// campaign never reads a half-written demo.
fn write_demo_dataset(dir: &Path, size: u64) {
    if dir.exists() {
        return;
    }
    let scratch = dir.with_file_name(format!(".{DEMO_DIR}.partial-{}", std::process::id()));
    let request = DatasetRequest {
        profile: Profile::Typical,
        size,
        max_files: None,
        seed: 1,
        compress_ratio: 2.0,
        dedup: None,
        like: None,
    };
    tracing::info!(dir = %dir.display(), size = %format_size(size), "writing the demo dataset");
    let written = dataset::create(&scratch, &request, &mut |_| {})
        .map_err(|e| e.to_string())
        .and_then(|summary| {
            std::fs::rename(&scratch, dir)
                .map(|()| summary)
                .map_err(|e| e.to_string())
        });
    match written {
        Ok(summary) => tracing::info!(
            dir = %dir.display(), files = summary.files, "demo dataset ready: use it as a campaign source"
        ),
        Err(error) => {
            let _ = std::fs::remove_dir_all(&scratch);
            tracing::error!(%error, "cannot write the demo dataset");
        }
    }
}

fn roots(
    flag: &'static str,
    data_dir: &Path,
    given: &[PathBuf],
) -> Result<Vec<PathBuf>, ServeError> {
    let mut roots = vec![data_dir.to_path_buf()];
    for path in given {
        let root = path.canonicalize().map_err(|e| bad_path(flag, path, &e))?;
        if !root.is_dir() {
            return Err(ServeError::BadPath {
                flag,
                path: path.display().to_string(),
                reason: "is not a directory".to_string(),
            });
        }
        roots.push(root);
    }
    Ok(roots)
}

/// An exclusive lock on the data dir itself (its inode, so a symbolic link or another spelling
/// of the path meets the same lock), held for as long as the lab runs.
fn lock_data_dir(data_dir: &Path) -> Result<std::fs::File, ServeError> {
    let dir = std::fs::File::open(data_dir).map_err(|e| bad_path("--data-dir", data_dir, &e))?;
    match rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(dir),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(ServeError::BadPath {
            flag: "--data-dir",
            path: data_dir.display().to_string(),
            reason: "another lab is using this data dir (perhaps through another name for it): \
                     stop it first, or give this lab a data dir of its own"
                .to_string(),
        }),
        Err(errno) => Err(bad_path("--data-dir", data_dir, &errno.into())),
    }
}

fn bad_path(flag: &'static str, path: &Path, error: &std::io::Error) -> ServeError {
    ServeError::BadPath {
        flag,
        path: path.display().to_string(),
        reason: error.to_string(),
    }
}

/// The signals that stop the lab (SIGTERM, and Ctrl-C's SIGINT), registered when made: one
/// that arrives before the lab waits for it is kept, not lost or fatal.
struct StopSignals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn register() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(StopSignals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for either.
    async fn recv(mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {},
            _ = self.interrupt.recv() => {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_port_follows_the_web_port() {
        let at = |text: &str| text.parse::<SocketAddr>().expect("an address");
        assert_eq!(data_bind_beside(at("127.0.0.1:8080")), at("127.0.0.1:8081"));
        assert_eq!(data_bind_beside(at("0.0.0.0:9000")), at("0.0.0.0:9001"));
        assert_eq!(data_bind_beside(at("127.0.0.1:0")), at("127.0.0.1:0"));
        assert_eq!(data_bind_beside(at("[::1]:65535")), at("[::1]:0"));
    }
}
