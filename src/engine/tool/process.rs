//! Running a program the lab did not write, and measuring it from outside.
//!
//! One function starts it ([`Running::spawn`]) and one ends it ([`Running::wait`]), so no caller
//! can forget the deadline, the cancel or the clean-up. The program runs without a shell, in a
//! process group of its own, with exactly the environment it is given, and dies with the lab.
//! While it runs, a sampler reads the whole process tree's I/O, CPU and memory from /proc on the
//! lab's clock; its output is read in bounded memory. Linux only.
//!
//! What a finished program left is in `finished`; its process group (resolved, signalled,
//! reaped, swept) in `group`; its output lines in `lines`; the /proc readings in `procfs` and
//! `tree`.

mod cage;
mod finished;
mod group;
mod lines;
mod procfs;
mod tree;

pub use cage::sweep_cages;
pub use finished::{Ended, Finished, Pressure, StageExit, TreeSample};
pub use group::sweep_leftovers;

/// Whether this machine lets the lab cage a tool's processes in a cgroup of their own, so
/// that none can outlive its run (else a run's process group and marker are all it has).
pub fn caged() -> bool {
    cage::Cage::available()
}

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

use cage::Cage;
use group::{
    die_with, display_name, group_gone, live_members, pressure_over, reap, resolve, signal_group,
};
use lines::Tail;
use tree::{Tree, Usage};

/// How often `wait` looks at the stages, the cancel and the deadline.
const POLL: Duration = Duration::from_millis(10);
/// The shortest sampling interval taken, whatever was asked.
const MIN_SAMPLE_EVERY: Duration = Duration::from_millis(10);
/// How long `wait` waits, after the kill, for the group to be gone before it gives up and
/// reports the processes still there.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long `wait` waits for the output readers once the group is gone: a process that left
/// the group may still hold the pipes open.
const READER_WAIT: Duration = Duration::from_secs(1);

/// A failure to start a program.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("nothing to run: a launch needs at least one program")]
    NoStages,
    #[error("program {stage} of the pipeline has no name (an empty argument list)")]
    EmptyArgv { stage: usize },
    #[error("the program {program} was not found on PATH ({search_path})")]
    NotFound {
        program: String,
        search_path: String,
    },
    #[error("{} is not an executable file", .path.display())]
    NotExecutable { path: PathBuf },
    #[error("the working directory {} cannot be used: {source}", .dir.display())]
    Dir { dir: PathBuf, source: io::Error },
    #[error("cannot start {program}: {source}")]
    Spawn { program: String, source: io::Error },
    #[error("cannot start a thread to watch {program}: {source}")]
    Thread { program: String, source: io::Error },
}

/// One program of a launch. `argv[0]` names it: a name is looked up on the PATH of the
/// launch's environment, a name with a `/` is taken as a path (relative to the launch's
/// directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    pub argv: Vec<OsString>,
}

impl Stage {
    /// A stage from its arguments, the program first.
    pub fn new<I, S>(argv: I) -> Stage
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Stage {
            argv: argv.into_iter().map(Into::into).collect(),
        }
    }
}

/// Where the last stage's standard output goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// To /dev/null.
    Discard,
    /// Read line by line: each line to `on_line(Stream::Stdout, …)`, the last ones kept in
    /// `Finished::stdout_tail` (a tool's progress or its report).
    Lines,
    /// To the caller, who takes it with [`Running::take_stdout`] and reads it to its end (a
    /// stream tool's output fed into the lab's own pipeline).
    Hand,
}

/// Which output a line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What is called with each line a launch's programs write (serialised: one call at a time,
/// from the threads that read the output). While it runs, the program writing the line may
/// wait, so it should be quick.
pub type LineHandler = Box<dyn FnMut(Stream, &str) + Send>;

/// Everything needed to start a program, or a pipeline of programs.
pub struct Launch {
    /// The programs; more than one is a pipeline: each stage's standard output is the next
    /// one's standard input (as `tar -cf - SRC | zstd -3`). The first reads /dev/null.
    pub stages: Vec<Stage>,
    /// The working directory of every stage.
    pub dir: PathBuf,
    /// The whole environment of every stage: nothing of the lab's own is passed on. The lab
    /// puts a marker here that `sweep_leftovers` finds after a crash.
    pub env: Vec<(OsString, OsString)>,
    /// Where the last stage's standard output goes.
    pub stdout: Output,
    /// Called with each line of the standard error of every stage (and of the last stage's
    /// standard output with `Output::Lines`).
    pub on_line: Option<LineHandler>,
    /// How often the process tree is sampled (the lab uses 250 ms).
    pub sample_every: Duration,
    /// How long the programs have to end after SIGTERM before they are killed.
    pub grace: Duration,
    /// Values never kept as the programs printed them: each is redacted from the output the
    /// launch keeps (with every secret the lab knows, [`crate::secrets`]).
    pub secrets: Vec<String>,
}

/// One stage as the lab tracks it.
#[derive(Debug)]
struct StageProcess {
    pid: i32,
    program: String,
    exit: Option<StageExit>,
    /// The largest resident memory of the stage and the children it waited for.
    max_rss_bytes: u64,
}

/// The threads that read the programs' output, and what they keep.
#[derive(Default)]
struct Readers {
    threads: Vec<JoinHandle<()>>,
    stdout_tail: Arc<Mutex<Tail>>,
    stderr_tails: Vec<Arc<Mutex<Tail>>>,
}

/// A program (or pipeline) started by [`Running::spawn`] and not yet waited for. Dropping it
/// without `wait` kills the group and reaps the stages.
pub struct Running {
    pgid: i32,
    started: Instant,
    stages: Vec<StageProcess>,
    last_exit: Option<Instant>,
    stdout: Option<ChildStdout>,
    grace: Duration,
    tree: Arc<Mutex<Tree>>,
    /// Dropping the sender stops the sampler.
    sampler: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
    readers: Readers,
    pressure_at_start: Option<procfs::PressureTotals>,
    waited: bool,
    /// The cgroup every stage and all they start are in, where the machine gives one.
    cage: Option<Cage>,
    /// Redacted from the output kept.
    secrets: Vec<String>,
}

/// Every stage's program, looked up before any starts (so a missing one starts nothing): a
/// name on the PATH of the launch's environment `env`, a path relative to `dir`.
fn look_up_programs(
    stages: &[Stage],
    env: &[(OsString, OsString)],
    dir: &Path,
) -> Result<Vec<PathBuf>, ProcessError> {
    if stages.is_empty() {
        return Err(ProcessError::NoStages);
    }
    let search_path = env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.clone());
    stages
        .iter()
        .enumerate()
        .map(|(index, stage)| {
            let name = stage
                .argv
                .first()
                .ok_or(ProcessError::EmptyArgv { stage: index + 1 })?;
            resolve(name, search_path.as_deref(), dir)
        })
        .collect()
}

/// Whether the launch's working directory is one: a stage started elsewhere would fail in
/// the child, where the lab cannot say why.
fn usable_dir(dir: &Path) -> Result<(), ProcessError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(ProcessError::Dir {
            dir: dir.to_path_buf(),
            source: io::Error::from(io::ErrorKind::NotADirectory),
        }),
        Err(source) => Err(ProcessError::Dir {
            dir: dir.to_path_buf(),
            source,
        }),
    }
}

impl Running {
    /// Starts the launch's stages, each in the process group of the first, and the threads that
    /// read their output and sample the tree.
    ///
    /// Each stage dies with SIGKILL when the thread that spawned it ends (Linux's parent-death
    /// signal follows the spawning *thread*, not the process): spawn and [`Running::wait`] on
    /// the same thread, and keep that thread alive until `wait` returns. Every program is
    /// looked up before any is started, so a missing one starts nothing.
    pub fn spawn(launch: Launch) -> Result<Running, ProcessError> {
        let Launch {
            stages,
            dir,
            env,
            stdout,
            on_line,
            sample_every,
            grace,
            secrets,
        } = launch;
        let programs = look_up_programs(&stages, &env, &dir)?;
        usable_dir(&dir)?;

        let sample_every = sample_every.max(MIN_SAMPLE_EVERY);
        let on_line = Arc::new(Mutex::new(on_line));
        // From here on, an early return drops `running`, which kills and reaps what started.
        let mut running = Running::starting(stages.len(), grace, sample_every, secrets);
        let last = stages.len() - 1;
        let mut previous_stdout: Option<ChildStdout> = None;
        for (index, (stage, program)) in stages.iter().zip(&programs).enumerate() {
            let mut command = Command::new(program);
            command
                .arg0(&stage.argv[0])
                .args(&stage.argv[1..])
                .current_dir(&dir)
                .env_clear()
                .envs(env.iter().map(|(name, value)| (name, value)))
                .process_group(running.pgid)
                .stdin(previous_stdout.take().map_or_else(Stdio::null, Stdio::from))
                .stdout(if index < last || stdout != Output::Discard {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stderr(Stdio::piped());
            running.bind_to_lab(&mut command);
            previous_stdout = running.start_stage(index, &stage.argv[0], command, &on_line)?;
        }
        running.send_last_output(stdout, previous_stdout, on_line)?;
        running.start_sampler(sample_every)?;
        Ok(running)
    }

    /// A launch's state before its first stage starts: the clock and the pressure it is
    /// measured from, an empty tree sampled every `sample_every`, and the cage, where the
    /// machine gives one.
    fn starting(
        stage_count: usize,
        grace: Duration,
        sample_every: Duration,
        secrets: Vec<String>,
    ) -> Running {
        let pressure_at_start = procfs::read_pressure();
        let started = Instant::now();
        Running {
            pgid: 0,
            started,
            stages: Vec::with_capacity(stage_count),
            last_exit: None,
            stdout: None,
            grace,
            tree: Arc::new(Mutex::new(Tree::new(sample_every.as_secs_f64()))),
            sampler: None,
            readers: Readers::default(),
            pressure_at_start,
            waited: false,
            cage: Cage::new(),
            secrets,
        }
    }

    /// Makes a stage's command, between fork and exec, die with the lab and join the launch's
    /// cage, where there is one, so that no stage outlives the lab or escapes the cage.
    fn bind_to_lab(&self, command: &mut Command) {
        let lab = rustix::process::getpid();
        let door = self.cage.as_ref().map(|cage| cage.door().as_raw_fd());
        // SAFETY: the closure runs in the child between fork and exec, and only makes
        // system calls (prctl, getppid, getpid, write) and formats on the stack; it
        // allocates nothing and takes no lock. The cage's descriptor stays open in the
        // parent until the child has exec'd (spawn returns after exec).
        unsafe {
            command.pre_exec(move || {
                die_with(lab)?;
                match door {
                    Some(fd) => Cage::join(BorrowedFd::borrow_raw(fd)),
                    None => Ok(()),
                }
            });
        }
    }

    /// Starts stage `index` (named by `argv0`) and tracks it: its pid (the first one's is the
    /// group's), its place in the sampled tree, and a thread reading its standard error.
    /// Returns its standard output, for the next stage or for the launch's own output.
    fn start_stage(
        &mut self,
        index: usize,
        argv0: &OsStr,
        mut command: Command,
        on_line: &Arc<Mutex<Option<LineHandler>>>,
    ) -> Result<Option<ChildStdout>, ProcessError> {
        let name = display_name(argv0);
        let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
            program: name.clone(),
            source,
        })?;
        let pid = child.id() as i32;
        if index == 0 {
            self.pgid = pid;
        }
        lock(&self.tree).add_stage(pid);
        self.stages.push(StageProcess {
            pid,
            program: name.clone(),
            exit: None,
            max_rss_bytes: 0,
        });
        let stdout = child.stdout.take();
        let tail = Arc::new(Mutex::new(Tail::default()));
        self.readers.stderr_tails.push(tail.clone());
        if let Some(stderr) = child.stderr.take() {
            let on_line = on_line.clone();
            let reader = thread::Builder::new()
                .name(format!("tool-stderr-{}", index + 1))
                .spawn(move || read_into(stderr, Stream::Stderr, &tail, &on_line))
                .map_err(|source| ProcessError::Thread {
                    program: name.clone(),
                    source,
                })?;
            self.readers.threads.push(reader);
        }
        Ok(stdout)
    }

    /// The name of the last stage started: the program a failure to watch the launch names.
    fn last_program(&self) -> String {
        self.stages
            .last()
            .map(|stage| stage.program.clone())
            .unwrap_or_default()
    }

    /// Sends the last stage's standard output where the launch asked: nowhere, to the caller,
    /// or line by line to `on_line` and the kept tail.
    fn send_last_output(
        &mut self,
        stdout: Output,
        last_stdout: Option<ChildStdout>,
        on_line: Arc<Mutex<Option<LineHandler>>>,
    ) -> Result<(), ProcessError> {
        match stdout {
            Output::Discard => {}
            Output::Hand => self.stdout = last_stdout,
            Output::Lines => {
                if let Some(out) = last_stdout {
                    let tail = self.readers.stdout_tail.clone();
                    let reader = thread::Builder::new()
                        .name("tool-stdout".to_string())
                        .spawn(move || read_into(out, Stream::Stdout, &tail, &on_line))
                        .map_err(|source| ProcessError::Thread {
                            program: self.last_program(),
                            source,
                        })?;
                    self.readers.threads.push(reader);
                }
            }
        }
        Ok(())
    }

    /// Starts the thread that samples the process tree every `sample_every` until the launch
    /// is waited for.
    fn start_sampler(&mut self, sample_every: Duration) -> Result<(), ProcessError> {
        let (stop, stopped) = mpsc::channel::<()>();
        let tree = self.tree.clone();
        let started = self.started;
        let sampler = thread::Builder::new()
            .name("tool-sampler".to_string())
            .spawn(move || sample(&tree, started, sample_every, &stopped))
            .map_err(|source| ProcessError::Thread {
                program: self.last_program(),
                source,
            })?;
        self.sampler = Some((stop, sampler));
        Ok(())
    }

    /// The last stage's standard output, with `Output::Hand`, once. Read it to its end (on
    /// another thread than the one that waits): a program whose output nobody reads stops.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// The process group of every stage (the first stage's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Waits for every stage to end, or ends them: on `cancel` or at `deadline`, SIGTERM to the
    /// group, SIGKILL after the grace. Processes of the group left after the stages exited are
    /// ended the same way. Looks at the stages, the cancel and the deadline every 10 ms;
    /// returns once every stage is reaped and no live process of the group is left (an
    /// orphan's zombie, waiting for init to collect it, is not alive), or, should a process
    /// not die after SIGKILL, 5 s after it (counted in `survivors`). A standard output handed
    /// over but never taken is closed first. Call it on the thread that spawned.
    pub fn wait(mut self, cancel: &AtomicBool, deadline: Option<Instant>) -> Finished {
        drop(self.stdout.take());
        let mut stop: Option<Stop> = None;
        let survivors = loop {
            let all_reaped = self.reap_exited();
            let now = Instant::now();
            if stop.is_none() {
                let why = if all_reaped {
                    Some(Why::Leftovers)
                } else if cancel.load(Ordering::Relaxed) {
                    Some(Why::Cancelled)
                } else if deadline.is_some_and(|deadline| now >= deadline) {
                    Some(Why::Deadline)
                } else {
                    None
                };
                if let Some(why) = why {
                    if why == Why::Leftovers && self.all_gone() {
                        break 0;
                    }
                    self.signal_all(Signal::TERM);
                    stop = Some(Stop {
                        why,
                        term_at: now,
                        kill_at: None,
                    });
                }
            }
            if let Some(stop) = &mut stop {
                if all_reaped && self.all_gone() {
                    break 0;
                }
                match stop.kill_at {
                    None if now >= stop.term_at + self.grace => {
                        self.signal_all(Signal::KILL);
                        stop.kill_at = Some(now);
                    }
                    Some(kill_at) if now >= kill_at + KILL_WAIT => {
                        break self.live_count();
                    }
                    Some(_) => self.signal_all(Signal::KILL),
                    _ => {}
                }
            }
            thread::sleep(POLL);
        };
        self.finish(stop.map(|stop| stop.why), survivors)
    }

    /// Whether no live process of the launch is left: none in its process group, none in its
    /// cage (where a process that left the group is still found).
    fn all_gone(&self) -> bool {
        group_gone(self.pgid) && self.cage.as_ref().is_none_or(|cage| cage.live().is_empty())
    }

    /// Sends `signal` to the process group and to everything in the cage.
    fn signal_all(&self, signal: Signal) {
        signal_group(self.pgid, signal);
        if let Some(cage) = &self.cage {
            cage.signal(signal);
        }
    }

    /// The live processes of the launch still there: the group's, and the cage's outside it.
    fn live_count(&self) -> usize {
        let caged = self.cage.as_ref().map_or(0, |cage| {
            cage.live()
                .into_iter()
                .filter(|&pid| {
                    rustix::process::getpgid(Pid::from_raw(pid))
                        .ok()
                        .map(|g| g.as_raw_nonzero().get())
                        != Some(self.pgid)
                })
                .count()
        });
        live_members(self.pgid) + caged
    }

    /// Reaps the stages that have exited, recording their final figures; whether all are.
    fn reap_exited(&mut self) -> bool {
        for stage in self.stages.iter_mut().filter(|stage| stage.exit.is_none()) {
            let Some(pid) = Pid::from_raw(stage.pid) else {
                continue;
            };
            let exited = rustix::process::waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
            );
            match exited {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(rustix::io::Errno::CHILD) => {
                    // Someone else reaped it: its figures are lost, its end unknown.
                    stage.exit = Some(StageExit::Unknown);
                    lock(&self.tree).reaped(stage.pid, Usage::default());
                    self.last_exit = Some(Instant::now());
                    continue;
                }
                Err(_) => continue,
            }
            // Exited and not yet reaped: its counters are still readable. The tree is locked
            // from the reading to the recording, so a sample sees the stage once.
            let mut tree = lock(&self.tree);
            let io = tree.read_before_reaping(stage.pid);
            let Some((status, rusage)) = reap(stage.pid) else {
                continue;
            };
            let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
            tree.reaped(
                stage.pid,
                Usage {
                    io: io.unwrap_or(procfs::ProcIo {
                        read_bytes: rusage.ru_inblock.max(0) as u64 * 512,
                        write_bytes: rusage.ru_oublock.max(0) as u64 * 512,
                        ..Default::default()
                    }),
                    user_s: seconds(rusage.ru_utime),
                    system_s: seconds(rusage.ru_stime),
                },
            );
            drop(tree);
            stage.max_rss_bytes = rusage.ru_maxrss.max(0) as u64 * 1024;
            stage.exit = Some(if libc::WIFEXITED(status) {
                StageExit::Code(libc::WEXITSTATUS(status))
            } else if libc::WIFSIGNALED(status) {
                StageExit::Signal(libc::WTERMSIG(status))
            } else {
                StageExit::Unknown
            });
            self.last_exit = Some(Instant::now());
        }
        self.stages.iter().all(|stage| stage.exit.is_some())
    }

    /// Puts the figures together once the group is gone.
    fn finish(&mut self, stopped: Option<Why>, survivors: usize) -> Finished {
        self.waited = true;
        let ended_at = match (self.last_exit, self.stages.iter().all(|s| s.exit.is_some())) {
            (Some(last_exit), true) => last_exit,
            _ => Instant::now(),
        };
        let wall = ended_at.saturating_duration_since(self.started);
        if let Some((stop, sampler)) = self.sampler.take() {
            drop(stop);
            let _ = sampler.join();
        }
        // A stage the kernel would not let die is reaped whenever it does, by a thread of
        // its own, so it never lingers as a zombie of the lab.
        for stage in self.stages.iter().filter(|stage| stage.exit.is_none()) {
            let pid = stage.pid;
            let _ = thread::Builder::new()
                .name("tool-reaper".to_string())
                .spawn(move || reap(pid));
        }
        let figures = lock(&self.tree).finish(wall.as_secs_f64());
        let pressure = self
            .pressure_at_start
            .zip(procfs::read_pressure())
            .and_then(|(before, after)| pressure_over(before, after, wall));

        let waited_since = Instant::now();
        while self
            .readers
            .threads
            .iter()
            .any(|reader| !reader.is_finished())
            && waited_since.elapsed() < READER_WAIT
        {
            thread::sleep(POLL);
        }
        for reader in std::mem::take(&mut self.readers.threads) {
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        let stage_stderr_tails: Vec<String> = self
            .readers
            .stderr_tails
            .iter()
            .map(|tail| crate::secrets::redact(&lock(tail).text(), &self.secrets))
            .collect();
        let stderr_tail = stage_stderr_tails
            .iter()
            .filter(|tail| !tail.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        let stage_peak = self.stages.iter().map(|s| s.max_rss_bytes).max();
        Finished {
            ended: match stopped {
                Some(Why::Cancelled) => Ended::Cancelled,
                Some(Why::Deadline) => Ended::Deadline,
                Some(Why::Leftovers) | None => Ended::Exited {
                    codes: self
                        .stages
                        .iter()
                        .map(|stage| stage.exit.unwrap_or(StageExit::Unknown))
                        .collect(),
                },
            },
            programs: self.stages.iter().map(|s| s.program.clone()).collect(),
            wall,
            cpu_user_s: figures.totals.user_s,
            cpu_system_s: figures.totals.system_s,
            peak_rss_bytes: figures.peak_rss_bytes.max(stage_peak.unwrap_or(0)),
            busiest_thread_cpu_s: figures.busiest_thread_cpu_s,
            max_cores_used: figures.max_cores_used,
            samples: figures.samples,
            pressure,
            stdout_tail: crate::secrets::redact(
                &lock(&self.readers.stdout_tail).text(),
                &self.secrets,
            ),
            stderr_tail,
            stage_stderr_tails,
            survivors,
        }
    }
}

impl Drop for Running {
    /// A run dropped without `wait` (an error on the caller's side, a panic) leaves nothing
    /// behind: its group is killed and its stages are reaped.
    fn drop(&mut self) {
        if self.waited {
            return;
        }
        drop(self.stdout.take());
        if self.pgid > 0 {
            signal_group(self.pgid, Signal::KILL);
        }
        let since = Instant::now();
        while !(self.reap_exited() && group_gone(self.pgid)) && since.elapsed() < KILL_WAIT {
            thread::sleep(POLL);
        }
        if let Some((stop, sampler)) = self.sampler.take() {
            drop(stop);
            let _ = sampler.join();
        }
    }
}

/// Why `wait` began to end the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Cancelled,
    Deadline,
    /// The stages exited, and processes of theirs were left in the group.
    Leftovers,
}

/// An ending under way.
struct Stop {
    why: Why,
    term_at: Instant,
    kill_at: Option<Instant>,
}

/// Samples the tree now and every `every` until `stopped` is disconnected.
fn sample(tree: &Mutex<Tree>, started: Instant, every: Duration, stopped: &mpsc::Receiver<()>) {
    let mut next = Instant::now();
    loop {
        lock(tree).scan(started.elapsed().as_secs_f64());
        next += every;
        let now = Instant::now();
        if next < now {
            // A scan that overran (a loaded machine) skips the ticks it missed.
            next = now + every;
        }
        match stopped.recv_timeout(next - now) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Reads an output to its end: each line to `on_line`, the last ones into `tail`.
fn read_into(
    from: impl io::Read,
    stream: Stream,
    tail: &Mutex<Tail>,
    on_line: &Mutex<Option<LineHandler>>,
) {
    lines::read_lines(from, |line| {
        if let Some(handler) = lock(on_line).as_mut() {
            handler(stream, line);
        }
        lock(tail).push(line);
    });
}

/// Locks a mutex, taking its value even if a thread panicked while holding it: the figures
/// and tails it guards stay meaningful.
fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
