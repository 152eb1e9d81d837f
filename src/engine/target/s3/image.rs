//! A restore from an object store: a backup image laid down as the lab's own multipart
//! uploads before the timed window, then read back in order with ranged GETs of `part_size`,
//! `concurrency` of them under way at once ahead of the reader. The image's objects are
//! removed when the restore's stream is dropped.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::S3Client;
use super::figures::RequestTally;
use super::journal::Journal;
use super::sink::{RunKeys, S3Sink, clean_up, interruptible};
use super::{ObjectStore, S3Config, S3Figures};
use crate::engine::buffer::AlignedBuf;
use crate::engine::error::EngineError;
use crate::engine::measure::LatencyRecorder;
use crate::engine::source::StreamSource;
use crate::engine::target::SinkFigures;
use crate::engine::target::image::{ImageRequest, RestoreImage, write_image};

/// Longest wait between looks at the run's give-up flag.
const POLL: Duration = Duration::from_millis(50);
/// Longest a dropped reader waits for its fetchers before it removes the image. A fetcher's
/// request waits on a thread of its own and the fetcher leaves it at a stop within `POLL`, so
/// this bounds only a fetcher that could not be given a thread.
const DROP_WAIT: Duration = Duration::from_secs(2);
/// Never raised: the image's removal must not be given up.
static NEVER: AtomicBool = AtomicBool::new(false);

/// Writes the image the request asks for into the store and returns the stream that reads
/// it back; the image's writes are not counted in the run's figures.
pub fn lay_down(
    store: &ObjectStore,
    config: &S3Config,
    request: &ImageRequest<'_>,
    journal: Option<Journal>,
) -> Result<RestoreImage, EngineError> {
    let writer = S3Client::for_setup(store, Arc::new(RequestTally::default()));
    let run = RunKeys::new(config, &request.settings.object_owner, request.tag);
    let mut sink = S3Sink::named(
        writer,
        config,
        format!("{}image-", run.base),
        journal.clone(),
    )?;
    // Objects of whole parts, as the restore reads them; the last may be shorter.
    let laid = write_image(&mut sink, request, request.bytes);
    let objects = sink.keep();
    let tally = Arc::new(RequestTally::default());
    let reader = S3Client::new(store, Arc::clone(&tally));
    // From here the reader owns the objects, and removes them when dropped, on any path.
    let stream = RangedReader::start(reader, config, objects, journal)?;
    drop(sink);
    laid?;
    let settings = S3Figures {
        store: store.words(),
        part_size: config.part_size,
        concurrency: config.concurrency,
        object_size: config.object_size,
        ..S3Figures::default()
    };
    Ok(RestoreImage {
        stream: Box::new(stream),
        from: store.words(),
        interleaved: 1,
        positioning_s: 0.0,
        figures: Some(Box::new(move || {
            SinkFigures::S3(tally.figures(&settings, 0.0, true))
        })),
    })
}

/// One ranged read: bytes `offset..offset + len` of object `object`.
#[derive(Debug, Clone, Copy)]
struct Range {
    object: usize,
    offset: u64,
    len: usize,
}

#[derive(Default)]
struct Fetched {
    ready: BTreeMap<usize, Vec<u8>>,
    /// The next range a fetcher takes.
    next_to_fetch: usize,
    /// The range the reader is at.
    reading: usize,
    spare: Vec<Vec<u8>>,
    failure: Option<String>,
    stop: bool,
}

struct Shared {
    state: Mutex<Fetched>,
    changed: Condvar,
    stop: AtomicBool,
}

/// Reads an image's objects in order, fetching ahead.
pub struct RangedReader {
    client: S3Client,
    objects: Vec<(String, u64)>,
    ranges: Arc<Vec<Range>>,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    current: Option<Vec<u8>>,
    at: usize,
    objects_done: u64,
    journal: Option<Journal>,
}

impl RangedReader {
    fn start(
        client: S3Client,
        config: &S3Config,
        objects: Vec<(String, u64)>,
        journal: Option<Journal>,
    ) -> Result<Self, EngineError> {
        let chunk = config.part_size;
        let mut ranges = Vec::new();
        for (object, (_, len)) in objects.iter().enumerate() {
            let mut offset = 0;
            while offset < *len {
                let take = chunk.min(len - offset);
                ranges.push(Range {
                    object,
                    offset,
                    len: take as usize,
                });
                offset += take;
            }
        }
        let ranges = Arc::new(ranges);
        let shared = Arc::new(Shared {
            state: Mutex::new(Fetched::default()),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let keys: Arc<Vec<String>> = Arc::new(objects.iter().map(|(key, _)| key.clone()).collect());
        let window = config.concurrency as usize;
        let mut reader = Self {
            client: client.clone(),
            objects,
            ranges: Arc::clone(&ranges),
            shared: Arc::clone(&shared),
            workers: Vec::new(),
            current: None,
            at: 0,
            objects_done: 0,
            journal,
        };
        for index in 0..config.concurrency {
            let (client, ranges, shared, keys) = (
                client.clone(),
                Arc::clone(&ranges),
                Arc::clone(&shared),
                Arc::clone(&keys),
            );
            let worker = std::thread::Builder::new()
                .name(format!("backlab-s3-get-{index}"))
                .spawn(move || fetch(&client, &ranges, &keys, &shared, window))
                .map_err(EngineError::Thread)?;
            reader.workers.push(worker);
        }
        Ok(reader)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Fetched> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A fetcher: takes the next range while it is within `window` of the reader, reads it, and
/// leaves it for the reader. Each read waits on a thread of its own, bounded by the client's
/// deadlines, and the fetcher leaves it as soon as the reader stops (a cancel, the run's end,
/// a dropped stream): a store that stopped answering holds the request, never the run.
fn fetch(
    client: &S3Client,
    ranges: &[Range],
    keys: &[String],
    shared: &Arc<Shared>,
    window: usize,
) {
    loop {
        let (index, mut buffer) = {
            let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if state.stop || state.failure.is_some() || state.next_to_fetch >= ranges.len() {
                    return;
                }
                if state.next_to_fetch < state.reading + window {
                    break;
                }
                state = shared
                    .changed
                    .wait_timeout(state, POLL)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            let index = state.next_to_fetch;
            state.next_to_fetch += 1;
            (index, state.spare.pop().unwrap_or_default())
        };
        let range = ranges[index];
        buffer.resize(range.len, 0);
        let (request_client, key, request_shared) = (
            client.clone(),
            keys[range.object].clone(),
            Arc::clone(shared),
        );
        let answer = interruptible(
            &shared.stop,
            move || {
                request_client
                    .get_range(&key, range.offset, &mut buffer, &request_shared.stop)
                    .map(|()| buffer)
            },
            // A read that answers after the reader stopped is not wanted.
            drop,
        );
        let Some(result) = answer else {
            return;
        };
        let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(buffer) => {
                state.ready.insert(index, buffer);
            }
            Err(failure) => state.failure = Some(failure.message),
        }
        shared.changed.notify_all();
    }
}

impl RangedReader {
    fn fill_with(
        &mut self,
        buf: &mut AlignedBuf,
        want: usize,
        give_up: &AtomicBool,
    ) -> Result<usize, EngineError> {
        let want = want.min(buf.len());
        let mut placed = 0;
        while placed < want {
            if self
                .current
                .as_ref()
                .is_none_or(|chunk| self.at >= chunk.len())
            {
                if let Some(done) = self.current.take() {
                    let finished = self.ranges[self.lock().reading];
                    if finished.offset + finished.len as u64 >= self.objects[finished.object].1 {
                        self.objects_done += 1;
                    }
                    let mut state = self.lock();
                    state.spare.push(done);
                    state.reading += 1;
                    self.shared.changed.notify_all();
                }
                match self.next_chunk(give_up)? {
                    Some(chunk) => {
                        self.current = Some(chunk);
                        self.at = 0;
                    }
                    None => break,
                }
            }
            let Some(chunk) = self.current.as_ref() else {
                break;
            };
            let take = (chunk.len() - self.at).min(want - placed);
            buf.as_mut_slice()[placed..placed + take]
                .copy_from_slice(&chunk[self.at..self.at + take]);
            self.at += take;
            placed += take;
        }
        Ok(placed)
    }

    /// The chunk the reader is at, once fetched; `None` past the image's end.
    fn next_chunk(&mut self, give_up: &AtomicBool) -> Result<Option<Vec<u8>>, EngineError> {
        let mut state = self.lock();
        loop {
            if state.reading >= self.ranges.len() {
                return Ok(None);
            }
            let reading = state.reading;
            if let Some(chunk) = state.ready.remove(&reading) {
                return Ok(Some(chunk));
            }
            if let Some(failure) = &state.failure {
                return Err(EngineError::ObjectStore(failure.clone()));
            }
            if give_up.load(Ordering::Relaxed) {
                // The fetchers leave their reads too: nothing more is read for this run.
                state.stop = true;
                self.shared.stop.store(true, Ordering::Relaxed);
                self.shared.changed.notify_all();
                return Err(EngineError::Cancelled);
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl StreamSource for RangedReader {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        self.fill_with(buf, want, &NEVER)
    }

    fn fill_or_give_up(
        &mut self,
        buf: &mut AlignedBuf,
        want: usize,
        give_up: &AtomicBool,
    ) -> Result<usize, EngineError> {
        self.fill_with(buf, want, give_up)
    }

    fn files_done(&self) -> u64 {
        self.objects_done
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        None
    }
}

impl Drop for RangedReader {
    fn drop(&mut self) {
        let gave_up = self.shared.stop.swap(true, Ordering::Relaxed);
        self.lock().stop = true;
        self.shared.changed.notify_all();
        let workers = std::mem::take(&mut self.workers);
        let objects = std::mem::take(&mut self.objects);
        let (client, journal) = (self.client.clone(), self.journal.clone());
        clean_up(gave_up, move || {
            let started = Instant::now();
            while workers.iter().any(|worker| !worker.is_finished())
                && started.elapsed() < DROP_WAIT
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            let cleanup = client.cleanup();
            for (key, _) in &objects {
                match cleanup.delete(key, &NEVER) {
                    Ok(()) => {
                        if let Some(journal) = &journal {
                            journal.forget(&client.store().name, key);
                        }
                    }
                    Err(failure) => {
                        tracing::warn!(
                            %failure, "cannot remove an object; the next start-up sweeps it"
                        );
                        // A store that does not answer at all is not asked for each object.
                        if failure.status.is_none() {
                            break;
                        }
                    }
                }
            }
        });
    }
}
