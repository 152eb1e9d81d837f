//! What a finished program left: each stage's exit or signal, how it ended (done, stopped,
//! over its deadline), and the figures sampled from its process tree while it ran.

use std::fmt::Write as _;
use std::time::Duration;

/// The process tree's cumulative figures at one moment of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeSample {
    /// Seconds after the spawn.
    pub t_s: f64,
    /// Bytes the tree fetched from storage.
    pub read_bytes: u64,
    /// Bytes the tree sent to storage.
    pub write_bytes: u64,
    /// Bytes the tree read through read-like calls: files, pipes, devices, sockets, cached or
    /// not.
    pub rchar: u64,
    /// Bytes the tree passed to write-like calls.
    pub wchar: u64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// The resident memory of the live members, summed (shared pages count once per member).
    pub rss_bytes: u64,
    /// The live members' threads.
    pub threads: u64,
}

/// The machine's pressure stall figures over a run: the share of its wall time in which some
/// task waited for a CPU, some task waited for I/O, and every non-idle task did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pressure {
    pub cpu_some_pct: f64,
    pub io_some_pct: f64,
    pub io_full_pct: f64,
}

/// How one stage ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageExit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// The lab could not learn how (it did not end after SIGKILL, stuck in the kernel).
    Unknown,
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every stage ended by itself; how, stage by stage.
    Exited { codes: Vec<StageExit> },
    /// The caller cancelled it.
    Cancelled,
    /// Its deadline passed.
    Deadline,
}

/// What a run did and used, measured from outside.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    pub ended: Ended,
    /// Each stage's program as its argv[0] named it.
    pub programs: Vec<String>,
    /// From the spawn to the last stage's exit, on the lab's clock.
    pub wall: Duration,
    /// CPU of the whole tree: every stage with the children it waited for, and members that
    /// were collected by another process.
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// The most resident memory the tree held: the largest sum over the members at a sample,
    /// or the largest single stage's peak, whichever is higher.
    pub peak_rss_bytes: u64,
    /// The CPU seconds of the busiest single thread: a tool held back by one thread shows
    /// as this close to `wall`.
    pub busiest_thread_cpu_s: f64,
    /// The most cores the tree used over a sampling interval.
    pub max_cores_used: f64,
    /// The tree's figures at each sample, the last one at `wall` with the run's totals (and
    /// no live member: its memory and threads are 0).
    pub samples: Vec<TreeSample>,
    /// `None` where the kernel has no pressure stall information.
    pub pressure: Option<Pressure>,
    /// The last lines of the last stage's standard output (with `Output::Lines`; else empty).
    pub stdout_tail: String,
    /// The last lines of every stage's standard error, stage after stage.
    pub stderr_tail: String,
    /// The last lines of each stage's standard error, one per stage.
    pub stage_stderr_tails: Vec<String>,
    /// Processes of the group still alive when `wait` gave up on them: 0 unless one could not
    /// be killed (stuck in the kernel).
    pub survivors: usize,
}

/// ` (SIGKILL)` and the like, for the signals a tool commonly dies of.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGQUIT => " (SIGQUIT)",
        libc::SIGILL => " (SIGILL)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGFPE => " (SIGFPE)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGXCPU => " (SIGXCPU)",
        libc::SIGXFSZ => " (SIGXFSZ)",
        _ => "",
    }
}

impl Finished {
    /// Whether every stage ran to its end and exited with status 0.
    pub fn succeeded(&self) -> bool {
        match &self.ended {
            Ended::Exited { codes } => codes.iter().all(|code| *code == StageExit::Code(0)),
            Ended::Cancelled | Ended::Deadline => false,
        }
    }

    /// The failure in one sentence with the end of the failing stage's error output
    /// ("restic exited with status 1: Fatal: …"); `None` when the run succeeded. In a pipeline
    /// the stage blamed is the first with a non-zero status, since a stage before it then
    /// dies of a broken pipe.
    pub fn failure(&self) -> Option<String> {
        let command = self.programs.join(" | ");
        let codes = match &self.ended {
            Ended::Cancelled => return Some(format!("{command} was cancelled")),
            Ended::Deadline => {
                return Some(format!(
                    "{command} was stopped at its deadline, after {:.1} s",
                    self.wall.as_secs_f64()
                ));
            }
            Ended::Exited { codes } => codes,
        };
        let failing = |wanted: fn(&StageExit) -> bool| codes.iter().position(wanted);
        let stage = failing(|exit| matches!(exit, StageExit::Code(code) if *code != 0))
            .or_else(|| {
                failing(
                    |exit| matches!(exit, StageExit::Signal(signal) if *signal != libc::SIGPIPE),
                )
            })
            .or_else(|| failing(|exit| *exit != StageExit::Code(0)))?;
        let program = self
            .programs
            .get(stage)
            .map_or("the program", String::as_str);
        let mut sentence = match codes[stage] {
            StageExit::Code(code) => format!("{program} exited with status {code}"),
            StageExit::Signal(signal) => {
                format!(
                    "{program} was ended by signal {signal}{}",
                    signal_name(signal)
                )
            }
            StageExit::Unknown => format!("{program} ended, but how is not known"),
        };
        match self.stage_stderr_tails.get(stage).map(|tail| tail.trim()) {
            Some(tail) if !tail.is_empty() => {
                let _ = write!(sentence, ": {tail}");
            }
            _ => sentence.push_str(" (it wrote no error output)"),
        }
        Some(sentence)
    }
}
