//! One run of a tool test: the repository, copies and restore directory it needs, the
//! untimed steps before the timed one (a repository made, a first backup, a change), the timed
//! step measured from outside, and everything removed afterwards, whatever happened.
//!
//! This file holds a run's context and what it leaves behind; each test's steps are in
//! `steps`, a stream tool's path into its target in `stream`, and the tool's progress in
//! `progress`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::definition::{Places, S3Place, ToolDefinition, ToolShape};
use super::figures::{PressureFigures, ToolFigures};
use super::process::{Finished, Launch, Output, Running, Stage};
use super::tree::{self, RestoreLayout};
use crate::engine::EngineSettings;
use crate::engine::error::EngineError;
use crate::engine::measure::{LatencyRecorder, StageClock, round1, round3};
use crate::engine::pipeline::{Outcome, RunControl};
use crate::engine::plan::{RunPlan, SourcePlan};
use crate::engine::target::files::LAB_FILE_PREFIX;
use crate::engine::target::s3::ObjectStore;
use crate::engine::target::s3::client::S3Client;
use crate::engine::target::s3::figures::RequestTally;
use crate::engine::target::s3::operations::{RequestCounts, StoredObjects};
use crate::engine::target::s3::relay::CountingRelay;
use crate::engine::test_kind::TestKind;
use steps::source_size;

mod life;
mod progress;
mod steps;
mod stream;

use progress::Progress;

/// How often the tool's process tree is sampled.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// How long a tool has to end after it is told to stop, before it is killed.
const GRACE: Duration = Duration::from_secs(5);
/// The suffix of a tool run's directories (`backlab-run-<tag>.tool`), which the start-up
/// sweep removes when their run is gone.
pub const TOOL_DIR_SUFFIX: &str = ".tool";
/// The environment variable every process of a tool run carries, `<owner>:<tag>`, so the
/// start-up sweep finds what a killed lab left running.
pub const MARKER: &str = "BACKLAB_TOOL_RUN";
/// The memory file system the tool's ceiling copies its source into.
const MEMORY_BASE: &str = "/dev/shm";
/// The longest a tool run lasts when its duration is not given in seconds.
const DEFAULT_LIMIT: Duration = Duration::from_secs(600);
/// How often the file systems a tool writes are looked at for room: a tool writing 200 MB/s
/// writes 10 MB between two looks, within the reserve of any file system over 200 MB.
const ROOM_EVERY: Duration = Duration::from_millis(50);

/// What a tool test measured: the run's outcome (bytes, wall, samples, the pipeline's own for
/// a stream) and the tool's figures.
pub struct ToolOutcome {
    pub outcome: Outcome,
    pub figures: ToolFigures,
    /// What the run's steps noticed that the run's result should say (a file that changed
    /// while the tool read it).
    pub warnings: Vec<String>,
}

/// The directories of one run, and the keys of its repository in a bucket, removed when it
/// ends, however it ends.
struct Scratch {
    dirs: Vec<PathBuf>,
    objects: Vec<S3Objects>,
    /// The relay the run's requests to its bucket pass through, counted; it closes after
    /// the run's objects are removed (the lab's own cleanup is not counted).
    relay: Option<Arc<CountingRelay>>,
    /// Why the requests to its bucket could not be counted.
    relay_refused: Option<String>,
}

/// The keys under one prefix in an S3 store: a repository a tool keeps in a bucket.
#[derive(Clone)]
struct S3Objects {
    store: ObjectStore,
    prefix: String,
}

impl S3Objects {
    fn client(&self) -> S3Client {
        S3Client::for_cleanup(&self.store, Arc::new(RequestTally::default()))
    }

    /// The objects under the prefix and their bytes.
    fn stored(&self) -> Option<StoredObjects> {
        let listed = self
            .client()
            .list_objects(&self.prefix, &AtomicBool::new(false))
            .ok()?;
        Some(StoredObjects::of(listed.iter().map(|(_, size)| *size)))
    }

    /// Removes every key under the prefix.
    fn remove(&self) -> Result<(), String> {
        let client = self.client();
        let give_up = AtomicBool::new(false);
        let listed = client
            .list_objects(&self.prefix, &give_up)
            .map_err(|failure| failure.message)?;
        for (key, _) in listed {
            if key.starts_with(&self.prefix) {
                client
                    .delete(&key, &give_up)
                    .map_err(|failure| failure.message)?;
            }
        }
        Ok(())
    }
}

impl Scratch {
    fn make(&mut self, path: PathBuf) -> Result<PathBuf, EngineError> {
        std::fs::create_dir_all(&path).map_err(|error| {
            EngineError::Tool(format!("cannot make {}: {error}", path.display()))
        })?;
        self.dirs.push(path.clone());
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for dir in self.dirs.iter().rev() {
            if let Err(error) = tree::remove_tree(dir) {
                tracing::warn!(%error, "cannot remove a tool run's directory");
            }
        }
        for objects in &self.objects {
            if let Err(error) = objects.remove() {
                tracing::warn!(
                    %error,
                    store = %objects.store.name,
                    prefix = %objects.prefix,
                    "cannot remove a tool run's repository from its bucket: the next start sweeps it"
                );
            }
        }
    }
}

/// Runs one tool test. Never leaves a process or a directory of the run behind.
pub fn execute(
    plan: &RunPlan,
    settings: &EngineSettings,
    control: &RunControl<'_>,
) -> Result<ToolOutcome, EngineError> {
    let run = plan.params.tool.as_ref().ok_or_else(|| {
        EngineError::Tool("a tool test needs a tool, and this run names none".to_string())
    })?;
    let tool = settings.tools.get(&run.name).map_err(EngineError::Tool)?;
    let definition = &tool.definition;
    for (name, value) in &run.params {
        let param = definition.param(name).ok_or_else(|| {
            EngineError::Tool(format!("{} has no parameter '{name}'", definition.name))
        })?;
        param.check(value).map_err(|message| {
            EngineError::Tool(format!("{}.{name} {message}", definition.name))
        })?;
    }
    let values = definition.settle(&run.params);
    let no_roots = Vec::new();
    let roots = match &plan.source {
        SourcePlan::Paths(roots) => roots,
        // A forecast's life makes its own tree.
        _ if plan.params.ladder.is_some() && plan.test == TestKind::ToolLife => &no_roots,
        _ => {
            return Err(EngineError::Tool(
                "a backup tool backs up files: the source must be paths".to_string(),
            ));
        }
    };
    // The tool runs in a directory of its own: a root given relative to the lab's is made
    // absolute here, or the tool would look for it beside its own home.
    let roots = &roots
        .iter()
        .map(|root| {
            std::path::absolute(root)
                .map_err(|error| EngineError::Tool(format!("{}: {error}", root.display())))
        })
        .collect::<Result<Vec<PathBuf>, EngineError>>()?;
    let limit = match (plan.params.duration_s, plan.params.until_steady) {
        (Some(seconds), false) => Duration::from_secs_f64(seconds.max(1.0)),
        _ => DEFAULT_LIMIT,
    };
    let tag = format!("{}-{:016x}", std::process::id(), rand::random::<u64>());
    // The version is read again as the run starts: a tool upgraded while the lab runs is
    // named as it is now, so a change after an upgrade names the upgrade.
    let mut warnings = Vec::new();
    let version = settings.tools.version_now(tool).unwrap_or_else(|why| {
        warnings.push(format!(
            "{}'s version could not be read again as the run began ({why}): the one read when \
             the lab started, {}, is given",
            definition.name, tool.version
        ));
        tool.version.clone()
    });
    let context = Context {
        plan,
        settings,
        control,
        version,
        definition,
        values,
        tag,
        limit,
        run_deadline: settings.max_run.map(|longest| Instant::now() + longest),
        warnings: std::sync::Mutex::new(warnings),
    };
    let mut scratch = Scratch {
        dirs: Vec::new(),
        objects: Vec::new(),
        relay: None,
        relay_refused: None,
    };
    let result = match plan.test {
        TestKind::ToolBackup => context.backup(roots, &mut scratch),
        TestKind::ToolCeiling => context.ceiling(roots, &mut scratch),
        TestKind::ToolIncremental => context.incremental(roots, &mut scratch),
        TestKind::ToolRestore => context.restore(roots, &mut scratch),
        TestKind::ToolLife => context.life(roots, &mut scratch),
        other => Err(EngineError::Tool(format!("{other} does not run a tool"))),
    };
    let result = result.map(|mut measured| {
        measured.figures.requests = scratch.relay.as_ref().map(|relay| relay.counts());
        measured.figures.requests_not_counted = scratch.relay_refused.take();
        measured
    });
    drop(scratch);
    // A step stopped by a cancel (a copy, a change, a tool) fails in its own words; the run
    // was cancelled.
    let result = match result {
        Err(_) if control.cancel.load(Ordering::Relaxed) => Err(EngineError::Cancelled),
        other => other,
    };
    let warnings = context
        .warnings
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    result.map(|mut measured| {
        measured.warnings.extend(warnings);
        measured
    })
}

/// Everything the steps of one run share.
struct Context<'a> {
    plan: &'a RunPlan,
    settings: &'a EngineSettings,
    control: &'a RunControl<'a>,
    /// The tool's version as its programs print it when the run began.
    version: String,
    definition: &'a ToolDefinition,
    values: BTreeMap<String, super::ParamValue>,
    tag: String,
    /// The longest the timed step may take: the run's duration.
    limit: Duration,
    /// When the whole run must have ended, every step of it (the lab's `--max-duration`).
    run_deadline: Option<Instant>,
    /// What the steps noticed for the run's result to say.
    warnings: std::sync::Mutex<Vec<String>>,
}

/// Where one backup reads and writes.
struct Where {
    roots: Vec<PathBuf>,
    repo: Repo,
    home: PathBuf,
    restore: PathBuf,
    stream: PathBuf,
    in_memory: bool,
}

/// Where a repository tool keeps its repository: a directory, or keys in an S3 bucket.
struct Repo {
    /// What `{repo}` stands for: the directory, or the tool's address of the bucket's keys.
    place: PathBuf,
    /// The directory it is in, for a repository on a disk (or a stream kept for a restore).
    dir: Option<PathBuf>,
    /// The environment that opens it (the bucket's keys).
    env: Vec<(String, String)>,
    objects: Option<S3Objects>,
    /// The relay its requests pass through, for a repository in a bucket.
    relay: Option<Arc<CountingRelay>>,
}

impl Repo {
    fn in_dir(dir: PathBuf) -> Repo {
        Repo {
            place: dir.join("repo"),
            dir: Some(dir),
            env: Vec::new(),
            objects: None,
            relay: None,
        }
    }

    /// `step` run, with the requests it made of the repository's bucket (through the relay).
    fn counted<T>(&self, step: impl FnOnce() -> T) -> (T, Option<RequestCounts>) {
        let before = self.relay.as_ref().map(|relay| relay.counts());
        let done = step();
        let made = self
            .relay
            .as_ref()
            .zip(before)
            .map(|(relay, before)| relay.counts().since(&before));
        (done, made)
    }

    /// What the repository takes where it is kept.
    fn stored(&self) -> Option<u64> {
        match &self.objects {
            Some(objects) => objects.stored().map(|stored| stored.bytes),
            None => tree::tree_size(&self.place)
                .ok()
                .map(|size| size.allocated_bytes),
        }
    }

    /// A repository in a bucket: its objects, for what a store bills of them.
    fn stored_objects(&self) -> Option<StoredObjects> {
        self.objects.as_ref()?.stored()
    }
}

impl Context<'_> {
    fn dir_name(&self) -> String {
        format!("{LAB_FILE_PREFIX}{}{TOOL_DIR_SUFFIX}", self.tag)
    }

    /// The run's directory beside the target's files: a repository lives there; a stream
    /// kept for a restore too.
    fn target_dir(&self, scratch: &mut Scratch) -> Result<PathBuf, EngineError> {
        match self.plan.target.tool_repository_dir() {
            Some(dir) => {
                let dir = std::path::absolute(dir)
                    .map_err(|error| EngineError::Tool(format!("{}: {error}", dir.display())))?;
                scratch.make(dir.join(self.dir_name()))
            }
            None if self.definition.shape == ToolShape::Stream => {
                scratch.make(self.data_dir()?.join(format!(
                    "{LAB_FILE_PREFIX}{}-kept{TOOL_DIR_SUFFIX}",
                    self.tag
                )))
            }
            None => Err(EngineError::Tool(format!(
                "{} keeps a repository in a directory: the target must be a dir",
                self.definition.name
            ))),
        }
    }

    /// The run's own directory in the lab's data dir: its home, its restore, its copy.
    fn lab_dir(&self, scratch: &mut Scratch) -> Result<PathBuf, EngineError> {
        scratch.make(self.data_dir()?.join(self.dir_name()))
    }

    /// The lab's data dir, absolute: a tool runs in a directory of its own, so every path it
    /// is given must be.
    fn data_dir(&self) -> Result<PathBuf, EngineError> {
        std::path::absolute(&self.settings.restore_dir).map_err(|error| {
            EngineError::Tool(format!("{}: {error}", self.settings.restore_dir.display()))
        })
    }

    fn places(&self, at: &Where, archive: &str) -> Places {
        Places {
            source: at.roots.clone(),
            repo: at.repo.place.clone(),
            restore: at.restore.clone(),
            stream: at.stream.clone(),
            archive: archive.to_string(),
            password: format!("{:032x}", rand::random::<u128>()),
            home: at.home.clone(),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            // No tool test runs a retention; a backup's life gives its own count and time.
            keep: 1,
            time: jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%S")
                .to_string(),
            one: PathBuf::new(),
            repo_env: at.repo.env.clone(),
        }
    }

    /// The same password for every command of a run: a repository made with one is opened
    /// with it.
    fn places_with(&self, at: &Where, archive: &str, password: &str) -> Places {
        Places {
            password: password.to_string(),
            ..self.places(at, archive)
        }
    }

    fn environment(&self, places: &Places) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
            ("PATH".into(), self.settings.tools.path.clone().into()),
            ("HOME".into(), places.home.clone().into_os_string()),
            (
                MARKER.into(),
                format!("{}:{}", self.settings.object_owner, self.tag).into(),
            ),
        ];
        env.extend(
            self.definition
                .environment(places, &self.values)
                .into_iter()
                .map(|(key, value)| (key.into(), value.into())),
        );
        env
    }

    fn stages(&self, commands: &[Vec<String>], places: &Places) -> Vec<Stage> {
        commands
            .iter()
            .map(|command| {
                if self.definition.shell {
                    // The line as written; every value reaches it as a positional argument.
                    let mut argv: Vec<std::ffi::OsString> = vec![
                        "sh".into(),
                        "-c".into(),
                        command[0].clone().into(),
                        "sh".into(),
                    ];
                    argv.extend(self.definition.expand(&command[1..], places, &self.values));
                    Stage { argv }
                } else {
                    Stage {
                        argv: self.definition.expand(command, places, &self.values),
                    }
                }
            })
            .collect()
    }

    /// Runs commands one after another, untimed (a repository made, a first backup): each
    /// must succeed.
    fn untimed(
        &self,
        commands: &[Vec<String>],
        places: &Places,
        dir: &Path,
        what: &str,
    ) -> Result<(), EngineError> {
        for command in commands {
            let finished = self.spawn_and_wait(
                self.stages(std::slice::from_ref(command), places),
                places,
                dir,
                Output::Discard,
                None,
                false,
            )?;
            self.fail_unless_succeeded(&finished, what)?;
        }
        Ok(())
    }

    fn launch(
        &self,
        stages: Vec<Stage>,
        places: &Places,
        dir: &Path,
        stdout: Output,
        on_line: Option<super::process::LineHandler>,
    ) -> Launch {
        Launch {
            stages,
            dir: dir.to_path_buf(),
            env: self.environment(places),
            stdout,
            on_line,
            sample_every: SAMPLE_EVERY,
            grace: GRACE,
            // The run's password and the store's keys its environment carries.
            secrets: std::iter::once(places.password.clone())
                .chain(places.repo_env.iter().map(|(_, value)| value.clone()))
                .collect(),
        }
    }

    /// The longest a step may take: the run's duration for the timed one; an untimed step
    /// (a repository made, a first backup, a stream kept) is not held to it, since the
    /// duration measures nothing there, and a key derivation alone may outlast a short one.
    fn step_limit(&self, timed: bool) -> Duration {
        if timed {
            self.limit
        } else {
            self.limit.max(DEFAULT_LIMIT)
        }
    }

    /// When a step started now must end: its limit, and never past the run's deadline.
    fn step_deadline(&self, timed: bool) -> Instant {
        let own = Instant::now() + self.step_limit(timed);
        self.run_deadline.map_or(own, |run| own.min(run))
    }

    /// Whether the run's deadline (the lab's longest run) has passed.
    fn past_run_deadline(&self) -> bool {
        self.run_deadline.is_some_and(|run| Instant::now() >= run)
    }

    fn spawn_and_wait(
        &self,
        stages: Vec<Stage>,
        places: &Places,
        dir: &Path,
        stdout: Output,
        on_line: Option<super::process::LineHandler>,
        timed: bool,
    ) -> Result<Finished, EngineError> {
        let launch = self.launch(stages, places, dir, stdout, on_line);
        let running =
            Running::spawn(launch).map_err(|error| EngineError::Tool(error.to_string()))?;
        let deadline = self.step_deadline(timed);
        self.within_room(places, |stop| running.wait(stop, Some(deadline)))
    }

    /// Runs `wait` (a tool's wait, stopped by the flag it is given) while the file systems the
    /// run writes (its repository, restore, kept stream and home) are watched every 50 ms: one
    /// down to the lab's reserve ([`crate::engine::room`]) stops the tool, as a cancel does, and
    /// the run fails saying where. A cancel of the run stops it too.
    pub(super) fn within_room(
        &self,
        places: &Places,
        wait: impl FnOnce(&AtomicBool) -> Finished,
    ) -> Result<Finished, EngineError> {
        let mut dirs: Vec<PathBuf> = [
            places.repo.as_path(),
            places.restore.as_path(),
            places.home.as_path(),
        ]
        .into_iter()
        .chain(places.stream.parent())
        .filter(|dir| dir.is_dir())
        .map(Path::to_path_buf)
        .collect();
        dirs.dedup();
        let stop = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let full: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);
        let cancel = self.control.cancel;
        let finished = std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    if cancel.load(Ordering::Relaxed) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Some(dir) = dirs
                        .iter()
                        .find(|dir| crate::engine::room::room_at(dir) == Some(0))
                    {
                        if let Ok(mut full) = full.lock() {
                            full.get_or_insert_with(|| dir.clone());
                        }
                        stop.store(true, Ordering::Relaxed);
                    }
                    std::thread::sleep(ROOM_EVERY);
                }
            });
            let finished = wait(&stop);
            done.store(true, Ordering::Relaxed);
            finished
        });
        let full = full.into_inner().ok().flatten();
        match full {
            Some(dir) => Err(EngineError::Tool(format!(
                "{} was stopped: the file system of {} came down to the lab's reserve (a \
                 twentieth of it, 1 GiB at most), which a run never takes; give the run a \
                 target with more room, or a smaller source",
                self.definition.name,
                dir.display()
            ))),
            None => Ok(finished),
        }
    }

    fn fail_unless_succeeded(&self, finished: &Finished, what: &str) -> Result<(), EngineError> {
        if self.control.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        match finished.failure() {
            None => Ok(()),
            Some(failure)
                if finished.ended == super::process::Ended::Deadline
                    && self.past_run_deadline() =>
            {
                Err(EngineError::Tool(format!(
                    "{what}: {failure}: a run lasts at most the lab's longest run \
                     (--max-duration, {:.0} s), every step of it included",
                    self.settings
                        .max_run
                        .map_or(0.0, |longest| longest.as_secs_f64())
                )))
            }
            // The run's duration stopped it (an untimed step stops only at the longer limit).
            Some(failure)
                if finished.ended == super::process::Ended::Deadline
                    && (finished.wall < self.step_limit(false)
                        || self.step_limit(false) == self.limit) =>
            {
                Err(EngineError::Tool(format!(
                    "{what}: {failure}: a tool's run lasts at most the run's duration \
                     (params.duration_s, {:.0} s here); give it longer for this much data",
                    self.limit.as_secs_f64()
                )))
            }
            Some(failure) => Err(EngineError::Tool(format!("{what}: {failure}"))),
        }
    }

    /// Like [`Self::fail_unless_succeeded`] for a backup of `roots` that began at `began`,
    /// except that a tool's own status for "a file changed as I read it" is a warning when
    /// the lab saw a file of the source change since: the backup is whole but for that file's
    /// copy, as the tool says.
    fn fail_unless_backed_up(
        &self,
        finished: &Finished,
        what: &str,
        roots: &[PathBuf],
        began: std::time::SystemTime,
    ) -> Result<(), EngineError> {
        let said_changed = self.definition.changed_status.is_some_and(|status| {
            matches!(&finished.ended, super::process::Ended::Exited { codes }
                if codes.first() == Some(&super::process::StageExit::Code(status))
                    && codes[1..].iter().all(|code| *code == super::process::StageExit::Code(0)))
        });
        if said_changed && !self.control.cancel.load(Ordering::Relaxed) {
            let (count, paths) = tree::changed_since(roots, began);
            if count > 0 {
                let program = finished.programs.first().map_or("the tool", String::as_str);
                let told = finished
                    .stage_stderr_tails
                    .first()
                    .and_then(|tail| tail.lines().rev().find(|line| line.contains("changed")))
                    .map(|line| format!(" (\"{}\")", line.trim()))
                    .unwrap_or_default();
                self.warn(format!(
                    "{program} said a file changed while it read it{told}, exiting with status \
                     {}, and {} of the source changed during {what} ({}): {} copy in the \
                     backup may be torn; the run counts, the status being the warning it is",
                    self.definition.changed_status.unwrap_or_default(),
                    if count == 1 {
                        "1 file".to_string()
                    } else {
                        format!("{count} files")
                    },
                    tree::listed_paths(&paths, count),
                    if count == 1 { "its" } else { "their" },
                ));
                return Ok(());
            }
        }
        self.fail_unless_succeeded(finished, what)
    }

    /// Refuses a step that would write `bytes` into the file system holding `dir` when it
    /// has less room than that above the lab's reserve: the run fails before it writes, naming
    /// what needed the room, rather than be stopped at the reserve part way.
    fn needs_room(&self, dir: &Path, bytes: u64, what: &str) -> Result<(), EngineError> {
        match crate::engine::room::room_at(dir) {
            Some(room) if room < bytes => Err(EngineError::Tool(format!(
                "{what} needs {} and the file system of {} has room for {} above the lab's \
                 reserve (a twentieth of it, 1 GiB at most): give the run a smaller source, or \
                 the lab more room there",
                crate::size::format_bytes(bytes),
                dir.display(),
                crate::size::format_bytes(room)
            ))),
            _ => Ok(()),
        }
    }

    /// Keeps a warning for the run's result.
    fn warn(&self, warning: String) {
        self.warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(warning);
    }

    /// The tool's figures from its finished process tree.
    fn figures(&self, finished: &Finished, tally: (u64, u64), in_memory: bool) -> ToolFigures {
        let wall = finished.wall.as_secs_f64();
        let cpu = finished.cpu_user_s + finished.cpu_system_s;
        let share = |part: f64| if wall > 0.0 { part / wall } else { 0.0 };
        ToolFigures {
            name: self.definition.name.clone(),
            version: self.version.clone(),
            shape: self.definition.shape,
            params: self.values.clone(),
            source_files: tally.0,
            source_bytes: tally.1,
            in_memory,
            cpu_user_s: round3(finished.cpu_user_s),
            cpu_system_s: round3(finished.cpu_system_s),
            cores_used: round3(share(cpu)),
            max_cores_used: round3(finished.max_cores_used),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            busiest_thread_pct: round1(100.0 * share(finished.busiest_thread_cpu_s)),
            peak_rss_bytes: finished.peak_rss_bytes,
            stored_bytes: None,
            added_bytes: None,
            changed_files: None,
            changed_bytes: None,
            verified: None,
            life: None,
            pressure: finished.pressure.map(PressureFigures::from),
            requests: None,
            requests_not_counted: None,
            stored_objects: None,
        }
    }
}

/// The files and bytes beneath the roots, as the lab walks a source.
fn source_tally(roots: &[PathBuf]) -> (u64, u64) {
    let mut tally = (0u64, 0u64);
    crate::engine::source::each_file(roots, |_, size| {
        tally.0 += 1;
        tally.1 += size;
        true
    });
    tally
}

/// Where each root lies in a copy made by `copy_tree`.
fn copied_roots(roots: &[PathBuf], copy: &Path) -> Result<Vec<PathBuf>, EngineError> {
    roots
        .iter()
        .map(|root| {
            RestoreLayout::AbsolutePaths
                .place(root, copy)
                .map_err(tree_error)
        })
        .collect()
}

/// What an S3 repository's placeholders stand for: the store's endpoint (or the relay's that
/// counts the requests to it), bucket and keys, and the run's key prefix.
fn s3_place(store: &ObjectStore, endpoint: String, key: &str) -> S3Place {
    let credentials = store.credentials.as_ref();
    S3Place {
        endpoint,
        bucket: store.bucket.name().to_string(),
        key: key.to_string(),
        access_key: credentials.map_or_else(String::new, |c| c.key().to_string()),
        secret_key: credentials.map_or_else(String::new, |c| c.secret().to_string()),
        region: store.bucket.region().to_string(),
    }
}

fn tree_error(error: tree::TreeError) -> EngineError {
    EngineError::Tool(error.to_string())
}

/// A run's outcome when no pipeline ran: the tool's own wall time (a life's, its nights'
/// backups together) and the bytes it handled.
fn process_outcome(
    wall: Duration,
    bytes: u64,
    files: u64,
    samples: Vec<crate::engine::result::Sample>,
) -> Outcome {
    Outcome {
        pass_s: None,
        bytes,
        files,
        wall,
        readers: StageClock::default(),
        reader_threads: 0,
        writers: StageClock::default(),
        writer_threads: 0,
        latency: LatencyRecorder::new(),
        samples,
        cancelled: false,
        overran: false,
        failure: None,
        sink_figures: Vec::new(),
        tally_samples: Vec::new(),
    }
}

/// What a lab stopped by a crash left of its tool runs, taken back at start-up: every process
/// carrying the lab's marker is killed, and every process in a cage of a lab no longer running
/// (however it hid: a new session, a cleared environment), and every memory directory whose run's process is gone
/// is removed (the run directories beside targets and in the data dir go with the lab's other
/// files, `target::sweep_lab_files`). Returns (processes killed, directories removed).
pub fn sweep_left_behind(owner: &str) -> (usize, usize) {
    let killed = super::process::sweep_leftovers(MARKER, &format!("{owner}:"))
        + super::process::sweep_cages();
    let mut removed = 0;
    if let Ok(entries) = std::fs::read_dir(MEMORY_BASE) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name
                .to_str()
                .and_then(|name| name.strip_prefix(tree::MEMORY_DIR_PREFIX))
            else {
                continue;
            };
            let alive = rest
                .split('-')
                .next()
                .and_then(|pid| pid.parse::<i32>().ok())
                .is_some_and(|pid| {
                    rustix::process::Pid::from_raw(pid)
                        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
                });
            if !alive && tree::remove_tree(&entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    (killed, removed)
}
