//! A stream tool's output carried into a file, or through the lab's pipeline into the
//! campaign's target, so its figure is the target's as much as the tool's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::engine::buffer::AlignedBuf;
use crate::engine::error::EngineError;
use crate::engine::measure::LatencyRecorder;
use crate::engine::pipeline::{self, Job, Limits, Outcome};
use crate::engine::source::StreamSource;
use crate::engine::target::Sink;
use crate::engine::tool::definition::{Places, ProgressFrom};
use crate::engine::tool::process::{Finished, Launch, Output, Running};

use super::{Context, Progress, ToolOutcome, Where};

/// The standard output of a stream tool as the one stream of the lab's pipeline.
struct ChildStream<'a> {
    stdout: std::process::ChildStdout,
    done: bool,
    /// Set once the tool's programs have ended: a stream still open then is held by a
    /// process the lab could not end, and is read no longer than [`HELD_OPEN`] more.
    tool_ended: &'a AtomicBool,
    quiet_since: Option<Instant>,
}

/// How long the lab reads a stream that stays open, silent, after the tool's programs ended.
const HELD_OPEN: Duration = Duration::from_secs(1);

impl Context<'_> {
    /// A stream tool's backup written into a file, for a restore or as a life's night;
    /// `what` names it in a failure (`the backup to restore`).
    pub(super) fn stream_into_file(
        &self,
        places: &Places,
        at: &Where,
        what: &str,
    ) -> Result<Finished, EngineError> {
        let launch = self.launch(
            self.stages(&self.definition.backup, places),
            places,
            &at.home,
            Output::Hand,
            None,
        );
        let mut file = std::fs::File::create(&places.stream).map_err(|error| {
            EngineError::Tool(format!("cannot make {}: {error}", places.stream.display()))
        })?;
        let deadline = self.step_deadline(false);
        let kept_in = places.stream.parent().unwrap_or(&at.home).to_path_buf();
        let began = std::time::SystemTime::now();
        let finished = std::thread::scope(|scope| -> Result<Finished, EngineError> {
            let (handed, stdout) = std::sync::mpsc::channel();
            let runner = scope.spawn(move || -> Result<Finished, EngineError> {
                let mut running =
                    Running::spawn(launch).map_err(|error| EngineError::Tool(error.to_string()))?;
                let _ = handed.send(running.take_stdout());
                // The watch on room stops the tool as soon as a file system it writes is down
                // to the reserve; the stream kept below stops there too.
                self.within_room(places, |stop| running.wait(stop, Some(deadline)))
            });
            let kept = match stdout.recv() {
                Ok(Some(mut stdout)) => keep_within_room(&mut stdout, &mut file, &kept_in),
                _ => Ok(()),
            };
            let finished = runner
                .join()
                .map_err(|_| EngineError::Tool("the tool's runner failed".to_string()))?;
            kept?;
            finished
        })?;
        self.fail_unless_backed_up(&finished, what, &at.roots, began)?;
        file.sync_all()
            .map_err(|error| EngineError::Tool(format!("keeping the stream failed: {error}")))?;
        Ok(finished)
    }

    /// A stream tool's output taken into the lab's pipeline as the one stream of the run.
    pub(super) fn stream_through_pipeline(
        &self,
        places: &Places,
        at: &Where,
        tally: (u64, u64),
    ) -> Result<ToolOutcome, EngineError> {
        let launch = self.launch(
            self.stages(&self.definition.backup, places),
            places,
            &at.home,
            Output::Hand,
            None,
        );
        let deadline = self.step_deadline(true);
        let sinks = crate::engine::job::target_sinks(
            self.plan,
            self.settings,
            None,
            self.control.cancel,
            None,
        )?;
        // Into a file system, the stream stops at its room less the reserve, as the lab's own
        // writes do; the run then fails saying so rather than give a cut stream's figure.
        let room = crate::engine::job::target_room(&self.plan.target);
        let spawned = Instant::now();
        let began = std::time::SystemTime::now();
        let (finished, outcome, ended) = self.tool_into_pipeline(launch, deadline, sinks, room)?;
        if let Some(room) = room
            && outcome.bytes >= room
        {
            return Err(EngineError::Tool(format!(
                "{}'s stream was stopped at {}: the target's file system had no more room above \
                 the lab's reserve (a twentieth of it, 1 GiB at most), which a run never takes",
                self.definition.name,
                crate::size::format_bytes(room)
            )));
        }
        if !outcome.cancelled && outcome.failure.is_none() {
            self.fail_unless_backed_up(&finished, "the backup", &at.roots, began)?;
        }
        let wall = ended.duration_since(spawned).max(finished.wall);
        Ok(self.stream_outcome(&finished, outcome, tally, at.in_memory, wall))
    }

    /// Runs the tool and the lab's pipeline together, the tool's standard output the
    /// pipeline's one stream into `sinks`, stopping at `room` bytes: a cancel reaches the tool
    /// at once, and a pipeline that stops taking the stream ends it. Returns what the tool
    /// left, what the pipeline measured, and when the pipeline ended.
    fn tool_into_pipeline(
        &self,
        launch: Launch,
        deadline: Instant,
        sinks: Vec<Box<dyn Sink>>,
        room: Option<u64>,
    ) -> Result<(Finished, Outcome, Instant), EngineError> {
        let stop = AtomicBool::new(false);
        let watched = AtomicBool::new(false);
        let tool_ended = AtomicBool::new(false);
        let cancel = self.control.cancel;
        std::thread::scope(
            |scope| -> Result<(Finished, Outcome, Instant), EngineError> {
                let (handed, stdout) = std::sync::mpsc::channel();
                let (stop, watched, tool_ended) = (&stop, &watched, &tool_ended);
                let runner = scope.spawn(move || -> Result<Finished, EngineError> {
                    let mut running = Running::spawn(launch)
                        .map_err(|error| EngineError::Tool(error.to_string()))?;
                    let _ = handed.send(running.take_stdout());
                    let finished = running.wait(stop, Some(deadline));
                    tool_ended.store(true, Ordering::Relaxed);
                    Ok(finished)
                });
                // A cancel reaches the tool at once: its stream then ends, and the pipeline.
                let watcher = scope.spawn(move || {
                    while !watched.load(Ordering::Relaxed) {
                        if cancel.load(Ordering::Relaxed) {
                            stop.store(true, Ordering::Relaxed);
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                });
                let outcome = match stdout.recv() {
                    Ok(Some(stdout)) => {
                        let job = self.stream_job(stdout, tool_ended, sinks, room);
                        Some(pipeline::run(job, self.control))
                    }
                    _ => None,
                };
                let ended = Instant::now();
                // A pipeline that stopped taking the stream (a failed sink, a cancel) ends the
                // tool; one that read it to its end lets the tool exit by itself.
                if outcome.as_ref().is_none_or(|outcome| {
                    outcome.cancelled
                        || outcome.failure.is_some()
                        || room.is_some_and(|room| outcome.bytes >= room)
                }) {
                    stop.store(true, Ordering::Relaxed);
                }
                let finished = runner
                    .join()
                    .map_err(|_| EngineError::Tool("the tool's runner failed".to_string()));
                watched.store(true, Ordering::Relaxed);
                let finished = finished??;
                let _ = watcher.join();
                let outcome = outcome.ok_or_else(|| {
                    EngineError::Tool(
                        finished
                            .failure()
                            .unwrap_or_else(|| "the tool gave no stream to read".to_string()),
                    )
                })?;
                Ok((finished, outcome, ended))
            },
        )
    }

    /// The pipeline's job for a tool's stream: the tool's standard output its one stream,
    /// into `sinks` with the run's buffers and blocks, up to `room` bytes.
    fn stream_job<'a>(
        &self,
        stdout: std::process::ChildStdout,
        tool_ended: &'a AtomicBool,
        sinks: Vec<Box<dyn Sink>>,
        room: Option<u64>,
    ) -> Job<'a> {
        let params = &self.plan.params;
        Job {
            streams: vec![Box::new(ChildStream {
                stdout,
                done: false,
                tool_ended,
                quiet_since: None,
            })],
            feeders: Vec::new(),
            sinks,
            buffers: params.buffers as usize,
            block_size: params.block_size as usize,
            fsync: params.fsync,
            limits: Limits {
                bytes: room,
                duration: None,
                until_steady: false,
                steady_after: Duration::ZERO,
                drain: None,
            },
            tallies: Vec::new(),
            passes: None,
        }
    }

    /// The run's outcome from the tool's stream: the tool's own figures with the bytes the
    /// stream carried as what it stored, and the tool's tally (files and bytes read) and wall
    /// time in place of the pipeline's.
    fn stream_outcome(
        &self,
        finished: &Finished,
        mut outcome: Outcome,
        tally: (u64, u64),
        in_memory: bool,
        wall: Duration,
    ) -> ToolOutcome {
        let stream_bytes = outcome.bytes;
        let mut figures = self.figures(finished, tally, in_memory);
        figures.stored_bytes = Some(stream_bytes);
        let progress = Progress::new(ProgressFrom::ProcessIo);
        outcome.samples = progress.samples(finished, true, tally.1);
        outcome.bytes = tally.1;
        outcome.files = tally.0;
        outcome.wall = wall;
        ToolOutcome {
            outcome,
            figures,
            warnings: Vec::new(),
        }
    }
}

/// Copies a tool's stream into the file that keeps it, until its end or until the file
/// system of `dir` is down to the lab's reserve ([`crate::engine::room`]): then it stops,
/// saying so, and the stream is no longer read (its tool then ends on a closed pipe).
fn keep_within_room(
    stream: &mut impl std::io::Read,
    file: &mut std::fs::File,
    dir: &std::path::Path,
) -> Result<(), EngineError> {
    use std::io::Write;
    let failed =
        |error: std::io::Error| EngineError::Tool(format!("keeping the stream failed: {error}"));
    let mut buffer = vec![0u8; 1 << 20];
    let mut since_look = 0usize;
    loop {
        let read = match stream.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(failed(error)),
        };
        since_look += read;
        if since_look >= 16 << 20 {
            since_look = 0;
            if crate::engine::room::room_at(dir) == Some(0) {
                return Err(EngineError::Tool(format!(
                    "keeping the stream stopped: the file system of {} came down to the lab's \
                     reserve (a twentieth of it, 1 GiB at most), which a run never takes",
                    dir.display()
                )));
            }
        }
        file.write_all(&buffer[..read]).map_err(failed)?;
    }
}

impl ChildStream<'_> {
    /// Whether the stream has data or its end to read, looked at for up to 100 ms.
    fn readable(&self) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let mut fds = [PollFd::new(&self.stdout, PollFlags::IN)];
        let wait = Timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        match rustix::event::poll(&mut fds, Some(&wait)) {
            Ok(ready) => ready > 0,
            // An interrupted look is looked at again; another failure leaves it to the read.
            Err(rustix::io::Errno::INTR) => false,
            Err(_) => true,
        }
    }
}

impl StreamSource for ChildStream<'_> {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        use std::io::Read;
        if self.done {
            return Ok(0);
        }
        let want = want.min(buf.len());
        let bytes = &mut buf.as_mut_slice()[..want];
        let mut filled = 0;
        while filled < want {
            if !self.readable() {
                if self.tool_ended.load(Ordering::Relaxed)
                    && self.quiet_since.get_or_insert_with(Instant::now).elapsed() >= HELD_OPEN
                {
                    self.done = true;
                    break;
                }
                continue;
            }
            self.quiet_since = None;
            match self.stdout.read(&mut bytes[filled..]) {
                Ok(0) => {
                    self.done = true;
                    break;
                }
                Ok(read) => filled += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    return Err(EngineError::Tool(format!(
                        "reading the tool's stream failed: {error}"
                    )));
                }
            }
        }
        Ok(filled)
    }

    fn files_done(&self) -> u64 {
        0
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        None
    }
}
