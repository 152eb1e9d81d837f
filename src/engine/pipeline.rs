//! The pipeline of a backup application: reader streams fill blocks of a ring allocated once,
//! writers drain them into sinks; a ring of one buffer between one stream and one sink is
//! filled and written in turn on one thread. Also the plain read loop of the read tests. All of
//! it on OS threads doing blocking I/O, with a monitor thread that samples, reports and
//! enforces limits.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, bounded};

use super::buffer::AlignedBuf;
use super::error::EngineError;
use super::measure::{LatencyRecorder, Sampler, StageClock};
use super::result::{Progress, Sample};
use super::source::{Passes, StreamSource};
use super::target::{Sink, SinkFigures};

pub use super::measure::SAMPLE_INTERVAL;
/// How long a blocked thread sleeps before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(50);

/// How a caller steers a running measurement.
pub struct RunControl<'a> {
    /// Set by the caller to cancel; the run stops within a second and removes its files.
    pub cancel: &'a AtomicBool,
    /// Called a few times a second with the run's progress.
    pub progress: &'a (dyn Fn(&Progress) + Sync),
}

/// Limits of one run: bytes moved and wall time, whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub bytes: Option<u64>,
    pub duration: Option<Duration>,
    /// End the run as soon as its throughput is steady (the duration is then the longest),
    /// but not before `steady_after`.
    pub until_steady: bool,
    pub steady_after: Duration,
    /// How long after the duration the writers may take to drain the ring and close the
    /// target; past it they give up and the run is cut (`Outcome::overran`). Set for emulated
    /// targets, whose waits are their model's; a real flush is part of the measurement.
    pub drain: Option<Duration>,
}

/// A byte budget shared by several readers so together they move exactly `limit` bytes (a
/// run's readers, or one network client's streams).
pub struct Budget {
    limit: Option<u64>,
    claimed: AtomicU64,
}

impl Budget {
    /// A budget of `limit` bytes; without one, every claim is granted.
    pub fn new(limit: Option<u64>) -> Self {
        Self {
            limit,
            claimed: AtomicU64::new(0),
        }
    }

    /// Reserves up to `want` bytes; 0 when the budget is spent.
    pub fn claim(&self, want: usize) -> usize {
        let Some(limit) = self.limit else {
            return want;
        };
        let mut claimed = self.claimed.load(Ordering::Relaxed);
        loop {
            let grant = limit.saturating_sub(claimed).min(want as u64);
            if grant == 0 {
                return 0;
            }
            match self.claimed.compare_exchange_weak(
                claimed,
                claimed + grant,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return grant as usize,
                Err(actual) => claimed = actual,
            }
        }
    }

    /// Returns bytes that were reserved but not read.
    pub fn release(&self, unused: usize) {
        if self.limit.is_some() && unused > 0 {
            self.claimed.fetch_sub(unused as u64, Ordering::Relaxed);
        }
    }
}

/// State every thread of a run shares.
struct Shared {
    stop: AtomicBool,
    cancelled: AtomicBool,
    /// The writers stop waiting for the target and drop what the ring holds: a cancel, or a
    /// target still draining at the run's deadline.
    abandon: AtomicBool,
    overran: AtomicBool,
    moved: AtomicU64,
    budget: Budget,
    failure: Mutex<Option<EngineError>>,
}

impl Shared {
    fn new(limits: Limits) -> Self {
        Self {
            stop: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            abandon: AtomicBool::new(false),
            overran: AtomicBool::new(false),
            moved: AtomicU64::new(0),
            budget: Budget::new(limits.bytes),
            failure: Mutex::new(None),
        }
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Records the first failure and stops every thread.
    fn fail(&self, error: EngineError) {
        if let Ok(mut failure) = self.failure.lock()
            && failure.is_none()
        {
            *failure = Some(error);
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What the threads of a run measured.
pub struct Outcome {
    pub bytes: u64,
    pub files: u64,
    pub wall: Duration,
    pub readers: StageClock,
    pub reader_threads: usize,
    pub writers: StageClock,
    pub writer_threads: usize,
    pub latency: LatencyRecorder,
    pub samples: Vec<Sample>,
    pub cancelled: bool,
    /// The target was still draining at the run's deadline (duration + drain): what the
    /// ring held was dropped, and the figure covers only what was written.
    pub overran: bool,
    pub failure: Option<EngineError>,
    /// What each writer's sink reported of itself (an emulated drive's figures).
    pub sink_figures: Vec<SinkFigures>,
    /// Samples of each of the job's tallies, on the run's clock.
    pub tally_samples: Vec<Vec<Sample>>,
    /// Seconds one pass over a source read again and again took ([`Passes`]).
    pub pass_s: Option<f64>,
}

/// Report of one reader thread.
struct ReaderReport {
    clock: StageClock,
    files: u64,
    latency: LatencyRecorder,
    ended: Instant,
}

/// Report of one writer thread.
struct WriterReport {
    clock: StageClock,
    latency: LatencyRecorder,
    ended: Instant,
    figures: Option<SinkFigures>,
}

/// A block of the ring travelling between readers and writers.
struct Block {
    buf: AlignedBuf,
    len: usize,
    /// The reader (stream) that filled it.
    stream: usize,
    /// Where files began within it, as its stream reported them.
    file_starts: Vec<usize>,
}

/// Everything one run executes: the streams, the threads that feed them, and the sinks.
pub struct Job<'a> {
    /// One reader thread each.
    pub streams: Vec<Box<dyn StreamSource + 'a>>,
    /// Background work the streams depend on, such as tree walkers; run beside the readers.
    pub feeders: Vec<Box<dyn FnOnce() + Send + 'a>>,
    /// One writer thread each. Without sinks the readers discard what they read (read tests).
    pub sinks: Vec<Box<dyn Sink + 'a>>,
    pub buffers: usize,
    pub block_size: usize,
    pub fsync: bool,
    pub limits: Limits,
    /// Byte counters sampled at the same instants as the run's throughput (a network run's
    /// clients).
    pub tallies: Vec<Arc<AtomicU64>>,
    /// The passes over a source read again and again, when the job reads one.
    pub passes: Option<Arc<Passes>>,
}

/// Runs a job to its end: the source is exhausted, a limit is reached, it fails or it is
/// cancelled. The clock runs from the threads' start to the last one's end, fsync included.
pub fn run(job: Job<'_>, control: &RunControl<'_>) -> Outcome {
    let shared = Shared::new(job.limits);
    let shared = &shared;
    // The ring is allocated (and its pages touched) before the clock starts, as any backup
    // application sets its buffers up before it moves data.
    let blocks: Vec<Block> = if job.sinks.is_empty() {
        Vec::new()
    } else {
        ring(job.buffers, job.block_size).collect()
    };
    std::thread::scope(|scope| {
        let start = Instant::now();
        let (finished_tx, finished_rx) = bounded::<()>(0);
        let limits = job.limits;
        let tallies = job.tallies;
        let passes = job.passes;
        let watched = passes.clone();
        let monitor = spawn(scope, "backlab-monitor", shared, move || {
            monitor(
                shared,
                control,
                limits,
                &tallies,
                watched.as_deref(),
                start,
                finished_rx,
            )
        });
        let feeders: Vec<_> = job
            .feeders
            .into_iter()
            .enumerate()
            .filter_map(|(index, feeder)| {
                spawn(scope, &format!("backlab-walk-{index}"), shared, feeder)
            })
            .collect();
        let reader_threads = job.streams.len();
        let writer_threads = job.sinks.len();
        let (reader_reports, writer_reports) = if job.sinks.is_empty() {
            let readers = read_and_discard(scope, job.streams, job.block_size, shared);
            (readers, Vec::new())
        } else if job.streams.len() == 1 && job.sinks.len() == 1 && blocks.len() == 1 {
            copy_in_turn(scope, job.streams, job.sinks, blocks, job.fsync, shared)
        } else {
            copy_through_ring(scope, job.streams, job.sinks, blocks, job.fsync, shared)
        };
        drop(finished_tx);
        let (samples, tally_samples) = monitor
            .and_then(|handle| handle.join().ok())
            .unwrap_or_default();
        join_all(feeders);
        let latency = merged_latency(&reader_reports, &writer_reports);
        let elapsed_s = start.elapsed().as_secs_f64();
        let pass_s = passes.and_then(|passes| passes.pass_s(elapsed_s));
        outcome(
            shared,
            start,
            OutcomeParts {
                readers: &reader_reports,
                reader_threads,
                writers: &writer_reports,
                writer_threads,
                latency,
                samples,
                tally_samples,
                pass_s,
            },
        )
    })
}

/// A read test: each stream read on a thread of its own into its own buffer, and what it read
/// discarded. Returns once every reader has ended.
fn read_and_discard<'scope, 'a: 'scope>(
    scope: &'scope Scope<'scope, '_>,
    streams: Vec<Box<dyn StreamSource + 'a>>,
    block_size: usize,
    shared: &'scope Shared,
) -> Vec<ReaderReport> {
    let readers: Vec<_> = streams
        .into_iter()
        .enumerate()
        .filter_map(|(index, stream)| {
            spawn(scope, &format!("backlab-read-{index}"), shared, move || {
                discard_loop(stream, block_size, shared)
            })
        })
        .collect();
    join_all(readers)
}

/// One stream into one sink through a ring of one block, filled and written in turn on one
/// thread ([`turn_loop`]). Returns once it has ended.
fn copy_in_turn<'scope, 'a: 'scope>(
    scope: &'scope Scope<'scope, '_>,
    streams: Vec<Box<dyn StreamSource + 'a>>,
    sinks: Vec<Box<dyn Sink + 'a>>,
    blocks: Vec<Block>,
    fsync: bool,
    shared: &'scope Shared,
) -> (Vec<ReaderReport>, Vec<WriterReport>) {
    let turns: Vec<_> = streams
        .into_iter()
        .zip(sinks)
        .zip(blocks)
        .filter_map(|((stream, sink), block)| {
            spawn(scope, "backlab-copy-0", shared, move || {
                turn_loop(stream, sink, block, fsync, shared)
            })
        })
        .collect();
    join_all(turns).into_iter().unzip()
}

/// Streams into sinks through the ring: a reader thread per stream fills empty blocks, a
/// writer thread per sink writes full ones and hands them back. Returns once every reader and
/// writer has ended.
fn copy_through_ring<'scope, 'a: 'scope>(
    scope: &'scope Scope<'scope, '_>,
    streams: Vec<Box<dyn StreamSource + 'a>>,
    sinks: Vec<Box<dyn Sink + 'a>>,
    blocks: Vec<Block>,
    fsync: bool,
    shared: &'scope Shared,
) -> (Vec<ReaderReport>, Vec<WriterReport>) {
    let (empty_tx, empty_rx) = bounded::<Block>(blocks.len());
    let (full_tx, full_rx) = bounded::<Block>(blocks.len());
    for block in blocks {
        let _ = empty_tx.send(block);
    }
    let writers: Vec<_> = sinks
        .into_iter()
        .enumerate()
        .filter_map(|(index, sink)| {
            let (full_rx, empty_tx) = (full_rx.clone(), empty_tx.clone());
            spawn(
                scope,
                &format!("backlab-write-{index}"),
                shared,
                move || write_loop(sink, full_rx, empty_tx, fsync, shared),
            )
        })
        .collect();
    let readers: Vec<_> = streams
        .into_iter()
        .enumerate()
        .filter_map(|(index, stream)| {
            let ring = ReaderRing {
                empty: empty_rx.clone(),
                recycle: empty_tx.clone(),
                full: full_tx.clone(),
            };
            spawn(scope, &format!("backlab-read-{index}"), shared, move || {
                read_loop(index, stream, ring, shared)
            })
        })
        .collect();
    // Only the threads hold channel ends now, so each side sees the other finish.
    drop((empty_tx, empty_rx, full_tx, full_rx));
    (join_all(readers), join_all(writers))
}

/// The latency of the measured side's I/O calls: the writers' when there were sinks, else the
/// readers'.
fn merged_latency(readers: &[ReaderReport], writers: &[WriterReport]) -> LatencyRecorder {
    let mut latency = LatencyRecorder::new();
    let timed = if writers.is_empty() {
        readers
            .iter()
            .map(|report| &report.latency)
            .collect::<Vec<_>>()
    } else {
        writers.iter().map(|report| &report.latency).collect()
    };
    for recorded in timed {
        latency.merge(recorded);
    }
    latency
}

/// The ring: `buffers` blocks of `block_size` bytes, allocated once before the clock starts.
fn ring(buffers: usize, block_size: usize) -> impl Iterator<Item = Block> {
    (0..buffers).map(move |_| Block {
        buf: AlignedBuf::new(block_size),
        len: 0,
        stream: 0,
        file_starts: Vec::new(),
    })
}

/// A read-test stream: reads into its own buffer and discards the data.
fn discard_loop(
    mut stream: Box<dyn StreamSource + '_>,
    block_size: usize,
    shared: &Shared,
) -> ReaderReport {
    let mut buf = AlignedBuf::new(block_size);
    let mut clock = StageClock::default();
    while !shared.stopping() {
        let want = shared.budget.claim(block_size);
        if want == 0 {
            break;
        }
        let started = Instant::now();
        let filled = stream.fill_or_give_up(&mut buf, want, &shared.stop);
        clock.busy += started.elapsed();
        match filled {
            Ok(count) => {
                shared.budget.release(want - count);
                shared.moved.fetch_add(count as u64, Ordering::Relaxed);
                if count == 0 {
                    break;
                }
            }
            Err(error) => {
                shared.fail(error);
                break;
            }
        }
    }
    finish_reader(stream.as_ref(), clock)
}

/// A reader's ends of the ring: where it takes empty blocks, gives back unused ones, and
/// sends full ones.
struct ReaderRing {
    empty: Receiver<Block>,
    recycle: Sender<Block>,
    full: Sender<Block>,
}

fn read_loop(
    index: usize,
    mut stream: Box<dyn StreamSource + '_>,
    ring: ReaderRing,
    shared: &Shared,
) -> ReaderReport {
    let mut clock = StageClock::default();
    while !shared.stopping() {
        let Some(mut block) = take(&ring.empty, &mut clock, &shared.stop) else {
            break;
        };
        block.stream = index;
        if !fill_block(stream.as_mut(), &mut block, &mut clock, shared) {
            // The block goes back so no other stream waits for it; the writer drains the ring.
            let _ = ring.recycle.send(block);
            break;
        }
        if ring.full.send(block).is_err() {
            break;
        }
    }
    finish_reader(stream.as_ref(), clock)
}

/// Fills a block from the stream within the run's byte budget. `false` when nothing was put
/// in it: the byte limit is reached (every stream then stops), this stream is done, or it
/// failed (the run then stops).
fn fill_block(
    stream: &mut (dyn StreamSource + '_),
    block: &mut Block,
    clock: &mut StageClock,
    shared: &Shared,
) -> bool {
    let want = shared.budget.claim(block.buf.len());
    if want == 0 {
        shared.stop.store(true, Ordering::Relaxed);
        return false;
    }
    let started = Instant::now();
    let filled = stream.fill_or_give_up(&mut block.buf, want, &shared.stop);
    clock.busy += started.elapsed();
    match filled {
        Ok(count) => {
            shared.budget.release(want - count);
            block.len = count;
            block.file_starts.clear();
            block
                .file_starts
                .extend(stream.file_starts().iter().filter(|&&at| at < count));
            count > 0
        }
        Err(error) => {
            shared.fail(error);
            false
        }
    }
}

fn finish_reader(stream: &(dyn StreamSource + '_), clock: StageClock) -> ReaderReport {
    let mut latency = LatencyRecorder::new();
    if let Some(recorded) = stream.read_latency() {
        latency.merge(recorded);
    }
    ReaderReport {
        clock,
        files: stream.files_done(),
        latency,
        ended: Instant::now(),
    }
}

fn write_loop(
    sink: Box<dyn Sink + '_>,
    full: Receiver<Block>,
    empty: Sender<Block>,
    fsync: bool,
    shared: &Shared,
) -> WriterReport {
    let mut writer = Writer::new(sink);
    // On a limit or a reader's failure the writer drains the ring; only a cancel or the run's
    // deadline drops it.
    while let Some(mut block) = take(&full, &mut writer.clock, &shared.abandon) {
        let more = writer.write(&mut block, shared);
        // Once every reader has finished nobody takes empty blocks; the ring still drains.
        let _ = empty.send(block);
        if !more {
            break;
        }
    }
    writer.finish(fsync, shared)
}

/// One stream into one sink through a ring of one buffer: there is nothing to overlap, so one
/// thread fills the block and writes it in turn, as dd and lmdd do, and no hand-over between
/// threads stands between two writes. The stage clocks read as they would for two threads
/// sharing the one buffer: the reader waits while the block is written, the writer while it
/// is filled.
fn turn_loop(
    mut stream: Box<dyn StreamSource + '_>,
    sink: Box<dyn Sink + '_>,
    mut block: Block,
    fsync: bool,
    shared: &Shared,
) -> (ReaderReport, WriterReport) {
    let mut reader = StageClock::default();
    let mut writer = Writer::new(sink);
    while !shared.stopping() {
        let started = Instant::now();
        let filled = fill_block(stream.as_mut(), &mut block, &mut reader, shared);
        // The writer waits through the last fill too, the one that finds the stream ended.
        writer.clock.wait += started.elapsed();
        if !filled {
            break;
        }
        writer.clock.waits += 1;
        let started = Instant::now();
        let more = writer.write(&mut block, shared);
        reader.wait += started.elapsed();
        reader.waits += 1;
        if !more {
            break;
        }
    }
    // The reader's report first: the writer's finish drops the sink, after the writer's clock
    // stopped, and the reader's end must not wait for that either.
    let reader = finish_reader(stream.as_ref(), reader);
    (reader, writer.finish(fsync, shared))
}

/// A writer thread's sink and what it has measured so far.
struct Writer<'s> {
    sink: Box<dyn Sink + 's>,
    clock: StageClock,
    latency: LatencyRecorder,
    written: u64,
    failed: bool,
}

impl<'s> Writer<'s> {
    fn new(sink: Box<dyn Sink + 's>) -> Self {
        Self {
            sink,
            clock: StageClock::default(),
            latency: LatencyRecorder::new(),
            written: 0,
            failed: false,
        }
    }

    /// Writes a full block and empties it. `false` when the writer must stop: the run is
    /// abandoned, the write failed (the run then stops) or the device is full (so is the run).
    fn write(&mut self, block: &mut Block, shared: &Shared) -> bool {
        if shared.abandon.load(Ordering::Relaxed) {
            return false;
        }
        // An aligned sink (O_DIRECT) gets whole pages: a short last block is zero-padded.
        let alignment = self.sink.alignment();
        let padded = block.len.div_ceil(alignment) * alignment;
        let bytes = if padded > block.len {
            let capacity = block.buf.capacity_mut();
            capacity[block.len..padded].fill(0);
            &capacity[..padded]
        } else {
            // Read-only access keeps what a generator knows about the block's bytes.
            &block.buf.as_slice()[..padded]
        };
        let started = Instant::now();
        if !block.file_starts.is_empty() {
            self.sink.file_starts(block.stream, &block.file_starts);
        }
        let result = self
            .sink
            .write_stream_block(block.stream, bytes, &shared.abandon);
        let elapsed = started.elapsed();
        self.clock.busy += elapsed;
        self.latency.record(elapsed);
        if let Err(source) = result {
            shared.fail(EngineError::TargetWrite {
                path: self.sink.path().to_path_buf(),
                written: self.written,
                source,
            });
            self.failed = true;
            return false;
        }
        let counted = self
            .sink
            .fitted()
            .map_or(block.len, |fitted| fitted.min(block.len)) as u64;
        self.written += counted;
        shared.moved.fetch_add(counted, Ordering::Relaxed);
        block.len = 0;
        if self.sink.full() {
            // The device is full: the run ends here, as a backup would at the end of a tape.
            shared.stop.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Ends the sink's stream (fsync inside the clock) unless the run failed or was abandoned.
    fn finish(mut self, fsync: bool, shared: &Shared) -> WriterReport {
        if !self.failed && !shared.abandon.load(Ordering::Relaxed) {
            let started = Instant::now();
            let result = self.sink.finish_or_give_up(fsync, &shared.abandon);
            self.clock.busy += started.elapsed();
            if let Err(source) = result {
                shared.fail(EngineError::TargetSync {
                    path: self.sink.path().to_path_buf(),
                    written: self.written,
                    source,
                });
            }
        }
        let ended = Instant::now();
        let figures = self.sink.figures();
        // The sink (and with it any file it created) goes away here, after the clock stopped; a
        // file's name is removed at once, its pages are freed in the background.
        drop(self.sink);
        WriterReport {
            clock: self.clock,
            latency: self.latency,
            ended,
            figures,
        }
    }
}

/// Takes the next block, counting a wait when none was ready. `None` when the other side has
/// finished, or `give_up` is set while waiting.
fn take(channel: &Receiver<Block>, clock: &mut StageClock, give_up: &AtomicBool) -> Option<Block> {
    match channel.try_recv() {
        Ok(block) => return Some(block),
        Err(TryRecvError::Disconnected) => return None,
        Err(TryRecvError::Empty) => {}
    }
    clock.waits += 1;
    let started = Instant::now();
    let block = loop {
        match channel.recv_timeout(POLL) {
            Ok(block) => break Some(block),
            Err(RecvTimeoutError::Disconnected) => break None,
            Err(RecvTimeoutError::Timeout) if give_up.load(Ordering::Relaxed) => break None,
            Err(RecvTimeoutError::Timeout) => {}
        }
    };
    clock.wait += started.elapsed();
    block
}

/// Samples throughput every interval, reports progress, and stops the run at its duration
/// limit or when cancelled (looked for every `POLL`). Returns when `finished` is hung up.
fn monitor(
    shared: &Shared,
    control: &RunControl<'_>,
    limits: Limits,
    tallies: &[Arc<AtomicU64>],
    passes: Option<&Passes>,
    start: Instant,
    finished: Receiver<()>,
) -> (Vec<Sample>, Vec<Vec<Sample>>) {
    let mut sampler = Sampler::new(start);
    let mut tally_samplers: Vec<Sampler> = tallies.iter().map(|_| Sampler::new(start)).collect();
    let mut next_tick = start + SAMPLE_INTERVAL;
    loop {
        let now = Instant::now();
        // A cancel is looked for every POLL, not only at the samples, so it is seen at once.
        let mut wake = next_tick.min(now + POLL);
        if let Some(duration) = limits.duration
            && !shared.stopping()
        {
            wake = wake.min(start + duration);
        }
        let deadline = limits
            .duration
            .zip(limits.drain)
            .map(|(duration, drain)| start + duration + drain);
        match finished.recv_timeout(wake.saturating_duration_since(now)) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
        let now = Instant::now();
        if control.cancel.load(Ordering::Relaxed) {
            shared.cancelled.store(true, Ordering::Relaxed);
            shared.abandon.store(true, Ordering::Relaxed);
            shared.stop.store(true, Ordering::Relaxed);
        }
        if deadline.is_some_and(|deadline| now >= deadline)
            && !shared.abandon.swap(true, Ordering::Relaxed)
        {
            shared.overran.store(true, Ordering::Relaxed);
            shared.stop.store(true, Ordering::Relaxed);
        }
        let elapsed = now.duration_since(start);
        if limits.duration.is_some_and(|duration| elapsed >= duration) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        if now >= next_tick {
            let bytes = shared.moved.load(Ordering::Relaxed);
            let mb_per_s = sampler.sample(now, bytes);
            for (tally, tally_sampler) in tallies.iter().zip(&mut tally_samplers) {
                tally_sampler.sample(now, tally.load(Ordering::Relaxed));
            }
            (control.progress)(&Progress {
                elapsed_s: elapsed.as_secs_f64(),
                bytes,
                mb_per_s,
                percent: percent(limits, elapsed, bytes),
            });
            if limits.until_steady
                && elapsed >= limits.steady_after
                && steady_enough(
                    sampler.samples(),
                    super::steady::bucket_for(
                        passes.and_then(|passes| passes.pass_s(elapsed.as_secs_f64())),
                        elapsed.as_secs_f64(),
                    ),
                )
            {
                shared.stop.store(true, Ordering::Relaxed);
            }
            // A monitor that woke late (a starved machine) skips the ticks it missed: one
            // sample covers the longer interval, instead of several taken at once.
            while next_tick <= now {
                next_tick += SAMPLE_INTERVAL;
            }
        }
    }
    (
        sampler.into_samples(),
        tally_samplers
            .into_iter()
            .map(Sampler::into_samples)
            .collect(),
    )
}

/// Whether a run that ends once steady has been steady long enough: judged once a second,
/// after twice the shortest steady window, on buckets `bucket_s` long, on a window that
/// reaches the latest sample.
fn steady_enough(samples: &[Sample], bucket_s: f64) -> bool {
    let Some(last) = samples.last() else {
        return false;
    };
    let per_second = (Duration::from_secs(1).as_millis() / SAMPLE_INTERVAL.as_millis()).max(1);
    let whole_second = (samples.len() as u128).is_multiple_of(per_second);
    if !whole_second || last.t < 2.0 * super::steady::MIN_STEADY_S {
        return false;
    }
    super::steady::find(samples, bucket_s).is_some_and(|window| {
        window.steady && window.to_s >= last.t - 2.0 * bucket_s.max(super::steady::BUCKET_S)
    })
}

fn percent(limits: Limits, elapsed: Duration, bytes: u64) -> Option<f64> {
    let by_size = limits
        .bytes
        .map(|limit| 100.0 * bytes as f64 / limit.max(1) as f64);
    let by_time = limits
        .duration
        .map(|limit| 100.0 * elapsed.as_secs_f64() / limit.as_secs_f64().max(1e-9));
    match (by_size, by_time) {
        (Some(a), Some(b)) => Some(a.max(b).min(100.0)),
        (Some(a), None) | (None, Some(a)) => Some(a.min(100.0)),
        (None, None) => None,
    }
}

struct OutcomeParts<'a> {
    readers: &'a [ReaderReport],
    reader_threads: usize,
    writers: &'a [WriterReport],
    writer_threads: usize,
    latency: LatencyRecorder,
    samples: Vec<Sample>,
    tally_samples: Vec<Vec<Sample>>,
    pass_s: Option<f64>,
}

fn outcome(shared: &Shared, start: Instant, parts: OutcomeParts<'_>) -> Outcome {
    let ended = parts
        .readers
        .iter()
        .map(|report| report.ended)
        .chain(parts.writers.iter().map(|report| report.ended))
        .max()
        .unwrap_or(start);
    let mut readers = StageClock::default();
    let mut files = 0;
    for report in parts.readers {
        readers.merge(&report.clock);
        files += report.files;
    }
    let mut writers = StageClock::default();
    for report in parts.writers {
        writers.merge(&report.clock);
    }
    let failure = shared
        .failure
        .lock()
        .ok()
        .and_then(|mut failure| failure.take());
    Outcome {
        bytes: shared.moved.load(Ordering::Relaxed),
        files,
        wall: ended.duration_since(start),
        readers,
        reader_threads: parts.reader_threads,
        writers,
        writer_threads: parts.writer_threads,
        latency: parts.latency,
        samples: parts.samples,
        tally_samples: parts.tally_samples,
        pass_s: parts.pass_s,
        cancelled: shared.cancelled.load(Ordering::Relaxed),
        overran: shared.overran.load(Ordering::Relaxed),
        failure,
        sink_figures: parts
            .writers
            .iter()
            .filter_map(|w| w.figures.clone())
            .collect(),
    }
}

/// Spawns a named thread in the run's scope; a failure to spawn fails the run.
fn spawn<'scope, 'env, T: Send + 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    name: &str,
    shared: &Shared,
    body: impl FnOnce() -> T + Send + 'scope,
) -> Option<ScopedJoinHandle<'scope, T>> {
    match std::thread::Builder::new()
        .name(name.to_string())
        .spawn_scoped(scope, body)
    {
        Ok(handle) => Some(handle),
        Err(error) => {
            shared.fail(EngineError::Thread(error));
            None
        }
    }
}

fn join_all<T>(handles: Vec<ScopedJoinHandle<'_, T>>) -> Vec<T> {
    handles
        .into_iter()
        .filter_map(|handle| handle.join().ok())
        .collect()
}
