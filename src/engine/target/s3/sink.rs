//! One stream's writer into an object store: blocks from the ring fill a part; a full part
//! goes to one of `concurrency` uploader threads while the next fills; an object of
//! `object_size` is completed once all its parts are in, inside the timed window. Every
//! object completed is removed, and an upload under way aborted, when the sink is dropped.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::client::{S3Client, S3Failure, Upload};
use super::journal::{Entry, Journal};
use super::{S3Config, S3Figures, lab_key_start, shown};
use crate::engine::error::EngineError;
use crate::engine::target::{Sink, SinkFigures};

/// Longest wait between looks at the run's give-up flag.
const POLL: Duration = Duration::from_millis(50);
/// Longest a dropped sink waits for its uploaders' requests under way before it aborts the
/// upload; stragglers are waited for, and the upload aborted again, on a thread of its own.
const DROP_WAIT: Duration = Duration::from_secs(2);
/// Never raised: for the requests that clean up after a run, which must not be given up.
static NEVER: AtomicBool = AtomicBool::new(false);

/// Where one run's objects go: `PREFIX` `backlab-run-OWNER-` `TAG/`.
#[derive(Debug)]
pub struct RunKeys {
    pub base: String,
}

impl RunKeys {
    /// The keys of one run, tagged as no other run's are.
    pub fn new(config: &S3Config, owner: &str, tag: &str) -> Self {
        Self {
            base: format!("{}{tag}/", lab_key_start(&config.prefix, owner)),
        }
    }
}

struct PartJob {
    upload: Arc<Upload>,
    number: u16,
    data: Vec<u8>,
}

struct PartDone {
    number: u16,
    result: Result<String, S3Failure>,
    data: Vec<u8>,
}

/// The object whose parts are being sent.
struct InFlight {
    upload: Arc<Upload>,
    etags: Vec<Option<String>>,
    /// Bytes handed to uploaders so far.
    sent: u64,
}

/// One stream's multipart uploads.
pub struct S3Sink {
    client: S3Client,
    /// The same store with clean-up's deadlines (`S3Client::for_cleanup`), made once.
    cleanup: S3Client,
    config: S3Config,
    /// The start of this stream's keys: `…/s00-`.
    stream_keys: String,
    shown: PathBuf,
    filling: Vec<u8>,
    spare: Vec<Vec<u8>>,
    allocated: usize,
    object: Option<InFlight>,
    next_object: u64,
    in_flight: usize,
    jobs: Option<Sender<PartJob>>,
    done: Receiver<PartDone>,
    workers: Vec<JoinHandle<()>>,
    /// Raised when the sink goes away or the run gives up: uploaders stop trying.
    stop: Arc<AtomicBool>,
    /// Objects completed, with their lengths.
    made: Vec<(String, u64)>,
    /// An image for a restore: its objects outlive the sink.
    keep: bool,
    tally_settings: S3Figures,
    tally: Arc<super::figures::RequestTally>,
    journal: Option<Journal>,
}

impl S3Sink {
    /// A stream's sink with its `concurrency` uploader threads.
    pub fn open(
        client: S3Client,
        config: &S3Config,
        run: &RunKeys,
        stream: u32,
        journal: Option<Journal>,
    ) -> Result<Self, EngineError> {
        Self::named(
            client,
            config,
            format!("{}s{stream:02}-", run.base),
            journal,
        )
    }

    /// A sink whose keys start with `stream_keys`, noting its uploads in `journal`.
    pub fn named(
        client: S3Client,
        config: &S3Config,
        stream_keys: String,
        journal: Option<Journal>,
    ) -> Result<Self, EngineError> {
        let (jobs_tx, jobs_rx) = crossbeam_channel::bounded::<PartJob>(config.concurrency as usize);
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<PartDone>();
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for index in 0..config.concurrency {
            let jobs = jobs_rx.clone();
            let done = done_tx.clone();
            let client = client.clone();
            let stop = Arc::clone(&stop);
            let worker = std::thread::Builder::new()
                .name(format!("backlab-s3-{index}"))
                .spawn(move || {
                    for job in jobs {
                        let result = client.upload_part(&job.upload, job.number, &job.data, &stop);
                        let _ = done.send(PartDone {
                            number: job.number,
                            result,
                            data: job.data,
                        });
                    }
                })
                .map_err(EngineError::Thread)?;
            workers.push(worker);
        }
        let tally = client.tally();
        Ok(Self {
            shown: shown(config, &stream_keys),
            tally_settings: S3Figures {
                store: client.store().words(),
                part_size: config.part_size,
                concurrency: config.concurrency,
                object_size: config.object_size,
                ..S3Figures::default()
            },
            tally,
            cleanup: client.cleanup(),
            client,
            config: config.clone(),
            stream_keys,
            filling: Vec::new(),
            spare: Vec::new(),
            allocated: 0,
            object: None,
            next_object: 0,
            in_flight: 0,
            jobs: Some(jobs_tx),
            done: done_rx,
            workers,
            stop,
            made: Vec::new(),
            keep: false,
            journal,
        })
    }

    /// The objects written, which the caller now owns: the sink no longer removes them.
    pub fn keep(&mut self) -> Vec<(String, u64)> {
        self.keep = true;
        self.made.clone()
    }

    /// Bytes the part being filled is to hold: a whole part, or what is left of the object.
    fn part_target(&self) -> usize {
        let sent = self.object.as_ref().map_or(0, |object| object.sent);
        (self.config.object_size - sent).min(self.config.part_size) as usize
    }

    /// A buffer for the next part: a spare one, a new one while fewer than `concurrency + 1`
    /// exist, or the next one an uploader gives back.
    fn next_buffer(&mut self, give_up: &AtomicBool) -> io::Result<Vec<u8>> {
        if let Some(mut buffer) = self.spare.pop() {
            buffer.clear();
            return Ok(buffer);
        }
        if self.allocated <= self.config.concurrency as usize {
            self.allocated += 1;
            return Ok(Vec::with_capacity(self.config.part_size as usize));
        }
        self.wait_one(give_up)?;
        Ok(self
            .spare
            .pop()
            .map(|mut buffer| {
                buffer.clear();
                buffer
            })
            .unwrap_or_default())
    }

    /// Waits for one part under way to be answered.
    fn wait_one(&mut self, give_up: &AtomicBool) -> io::Result<()> {
        loop {
            if give_up.load(Ordering::Relaxed) {
                self.stop.store(true, Ordering::Relaxed);
                return Err(io::Error::other("cancelled"));
            }
            match self.done.recv_timeout(POLL) {
                Ok(done) => {
                    self.in_flight -= 1;
                    self.spare.push(done.data);
                    let etag = done
                        .result
                        .map_err(|failure| io::Error::other(failure.message))?;
                    if let Some(object) = self.object.as_mut()
                        && let Some(slot) = object.etags.get_mut(usize::from(done.number) - 1)
                    {
                        *slot = Some(etag);
                    }
                    return Ok(());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("the uploader threads ended"));
                }
            }
        }
    }

    /// Hands the filled part to an uploader, starting the object's upload first if needed,
    /// and completes the object once it is whole.
    fn send_part(&mut self, give_up: &AtomicBool) -> io::Result<()> {
        if self.object.is_none() {
            let key = format!("{}o{:04}", self.stream_keys, self.next_object);
            self.next_object += 1;
            let client = self.client.clone();
            let (store, journal) = (self.client.store().name.clone(), self.journal.clone());
            let cleanup = self.cleanup.clone();
            let answer = interruptible(
                give_up,
                move || client.create_upload(&key, &NEVER),
                // An upload the store started after the run gave up waiting: noted, so the
                // start-up sweep finds it if this abort does not take.
                move |late| {
                    if let Ok(upload) = late {
                        if let Some(journal) = &journal {
                            journal.note(&Entry {
                                store: store.clone(),
                                key: upload.key.clone(),
                                upload_id: Some(upload.upload_id.clone()),
                            });
                        }
                        if cleanup.abort(&upload, &NEVER).is_ok()
                            && let Some(journal) = &journal
                        {
                            journal.forget(&store, &upload.key);
                        }
                    }
                },
            );
            let Some(answer) = answer else {
                self.stop.store(true, Ordering::Relaxed);
                return Err(io::Error::other("cancelled"));
            };
            let upload = answer.map_err(|failure| io::Error::other(failure.message))?;
            self.note(&upload.key, Some(&upload.upload_id));
            self.object = Some(InFlight {
                upload: Arc::new(upload),
                etags: Vec::new(),
                sent: 0,
            });
        }
        let next = self.next_buffer(give_up)?;
        let data = std::mem::replace(&mut self.filling, next);
        let Some(object) = self.object.as_mut() else {
            return Err(io::Error::other("no upload under way"));
        };
        object.sent += data.len() as u64;
        object.etags.push(None);
        let job = PartJob {
            upload: Arc::clone(&object.upload),
            number: object.etags.len() as u16,
            data,
        };
        let whole = object.sent >= self.config.object_size;
        self.queue(job, give_up)?;
        if whole {
            self.complete(give_up)?;
        }
        Ok(())
    }

    /// Queues a part for the uploaders, waiting while `concurrency` are under way.
    fn queue(&mut self, mut job: PartJob, give_up: &AtomicBool) -> io::Result<()> {
        let Some(jobs) = self.jobs.clone() else {
            return Err(io::Error::other("the uploader threads ended"));
        };
        loop {
            match jobs.send_timeout(job, POLL) {
                Ok(()) => {
                    self.in_flight += 1;
                    return Ok(());
                }
                Err(crossbeam_channel::SendTimeoutError::Timeout(back)) => {
                    if give_up.load(Ordering::Relaxed) {
                        self.stop.store(true, Ordering::Relaxed);
                        return Err(io::Error::other("cancelled"));
                    }
                    job = back;
                }
                Err(crossbeam_channel::SendTimeoutError::Disconnected(_)) => {
                    return Err(io::Error::other("the uploader threads ended"));
                }
            }
        }
    }

    /// Waits for every part of the object and completes its upload.
    fn complete(&mut self, give_up: &AtomicBool) -> io::Result<()> {
        while self.in_flight > 0 {
            self.wait_one(give_up)?;
        }
        let Some(object) = self.object.take() else {
            return Ok(());
        };
        let etags: Option<Vec<String>> = object.etags.iter().cloned().collect();
        let Some(etags) = etags else {
            self.object = Some(object);
            return Err(io::Error::other("a part of the upload has no ETag"));
        };
        let client = self.client.clone();
        let upload = Arc::clone(&object.upload);
        let (store, journal) = (self.client.store().name.clone(), self.journal.clone());
        let cleanup = self.cleanup.clone();
        let key = object.upload.key.clone();
        let answer = interruptible(
            give_up,
            move || client.complete(&upload, &etags, &NEVER),
            // An object the store completed after the run gave up waiting: removed (the
            // journal still holds its upload for the start-up sweep if this does not take).
            move |late| {
                if late.is_ok()
                    && cleanup.delete(&key, &NEVER).is_ok()
                    && let Some(journal) = &journal
                {
                    journal.forget(&store, &key);
                }
            },
        );
        match answer {
            None => {
                self.stop.store(true, Ordering::Relaxed);
                self.object = Some(object);
                return Err(io::Error::other("cancelled"));
            }
            Some(Err(failure)) => {
                self.object = Some(object);
                return Err(io::Error::other(failure.message));
            }
            Some(Ok(())) => {}
        }
        self.note(&object.upload.key, None);
        self.made.push((object.upload.key.clone(), object.sent));
        Ok(())
    }

    /// Notes an upload under way (`Some` id) or an object completed in the journal.
    fn note(&self, key: &str, upload_id: Option<&str>) {
        if let Some(journal) = &self.journal {
            journal.note(&Entry {
                store: self.client.store().name.clone(),
                key: key.to_string(),
                upload_id: upload_id.map(str::to_string),
            });
        }
    }

    fn write_with(&mut self, mut data: &[u8], give_up: &AtomicBool) -> io::Result<()> {
        while !data.is_empty() {
            let room = self.part_target() - self.filling.len();
            let take = room.min(data.len());
            self.filling.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.filling.len() == self.part_target() {
                self.send_part(give_up)?;
            }
        }
        Ok(())
    }

    fn finish_with(&mut self, give_up: &AtomicBool) -> io::Result<()> {
        if !self.filling.is_empty() {
            // The object's last part: S3 takes it shorter than the others.
            let target = self.filling.len() as u64;
            let sent = self.object.as_ref().map_or(0, |object| object.sent);
            self.config.object_size = self.config.object_size.min(sent + target);
            self.send_part(give_up)?;
        }
        self.complete(give_up)
    }
}

impl Sink for S3Sink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.write_with(data, &NEVER)
    }

    fn write_block_or_give_up(&mut self, data: &[u8], give_up: &AtomicBool) -> io::Result<()> {
        self.write_with(data, give_up)
    }

    fn finish(&mut self, _fsync: bool) -> io::Result<()> {
        self.finish_with(&NEVER)
    }

    fn finish_or_give_up(&mut self, _fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        self.finish_with(give_up)
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        &self.shown
    }

    fn figures(&self) -> Option<SinkFigures> {
        Some(SinkFigures::S3(self.tally.figures(
            &self.tally_settings,
            0.0,
            false,
        )))
    }
}

/// An answer handed from a request's own thread to the sink that waits for it.
struct Handoff<T> {
    answer: Option<Result<T, S3Failure>>,
    /// The sink stopped waiting: the answer goes to the request's `late` instead.
    abandoned: bool,
}

/// Sends `request` on a thread of its own and waits for its answer, looking at `give_up`
/// every `POLL`: a store that stopped answering holds the request (until its own deadline),
/// never the run's writer. `None` when the run gave up first; the answer then goes to `late`
/// on the request's thread, whenever it comes, to undo what it did.
pub(super) fn interruptible<T: Send + 'static>(
    give_up: &AtomicBool,
    request: impl FnOnce() -> Result<T, S3Failure> + Send + 'static,
    late: impl FnOnce(Result<T, S3Failure>) + Send + 'static,
) -> Option<Result<T, S3Failure>> {
    let slot = Arc::new((
        std::sync::Mutex::new(Handoff {
            answer: None,
            abandoned: false,
        }),
        std::sync::Condvar::new(),
    ));
    let theirs = Arc::clone(&slot);
    let (request, late) = (
        Arc::new(std::sync::Mutex::new(Some(request))),
        std::sync::Mutex::new(Some(late)),
    );
    let run_request = Arc::clone(&request);
    let spawned = std::thread::Builder::new()
        .name("backlab-s3-request".to_string())
        .spawn(move || {
            let Some(request) = run_request.lock().ok().and_then(|mut taken| taken.take()) else {
                return;
            };
            let answer = request();
            let (lock, changed) = &*theirs;
            let mut handoff = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if handoff.abandoned {
                drop(handoff);
                if let Some(late) = late.lock().ok().and_then(|mut taken| taken.take()) {
                    late(answer);
                }
            } else {
                handoff.answer = Some(answer);
                changed.notify_all();
            }
        });
    if spawned.is_err() {
        // No thread to spare: the request is sent here, as it was before it had one.
        let request = request.lock().ok().and_then(|mut taken| taken.take())?;
        return Some(request());
    }
    let (lock, changed) = &*slot;
    let mut handoff = lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        if let Some(answer) = handoff.answer.take() {
            return Some(answer);
        }
        if give_up.load(Ordering::Relaxed) {
            handoff.abandoned = true;
            return None;
        }
        handoff = changed
            .wait_timeout(handoff, POLL)
            .map(|(guard, _)| guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner().0);
    }
}

impl Drop for S3Sink {
    fn drop(&mut self) {
        let gave_up = self.stop.swap(true, Ordering::Relaxed);
        self.jobs = None;
        let leftovers = Leftovers {
            cleanup: self.cleanup.clone(),
            object: self.object.take(),
            workers: std::mem::take(&mut self.workers),
            made: if self.keep {
                Vec::new()
            } else {
                std::mem::take(&mut self.made)
            },
            journal: self.journal.clone(),
        };
        clean_up(gave_up, move || leftovers.remove());
    }
}

/// Longest the end of a run that gave up waits for its objects' removal; the rest goes on
/// behind it.
const GAVE_UP_WAIT: Duration = Duration::from_millis(500);

/// Runs `remove`, the removal of what a run left in a store. A run that gave up (a cancel, a
/// cut) ends at once, whatever the store does: its removal runs on a thread of its own, waited
/// for only briefly, and what it has not removed stays in the journal for the start-up sweep.
pub(super) fn clean_up(gave_up: bool, remove: impl FnOnce() + Send + 'static) {
    if !gave_up {
        remove();
        return;
    }
    let (removed, done) = crossbeam_channel::bounded::<()>(1);
    let spawned = std::thread::Builder::new()
        .name("backlab-s3-cleanup".to_string())
        .spawn(move || {
            remove();
            let _ = removed.send(());
        });
    if spawned.is_ok() {
        let _ = done.recv_timeout(GAVE_UP_WAIT);
    }
}

/// What a sink leaves in the store when it goes: the upload under way, the objects it
/// completed, and the uploaders that may still be sending a part.
struct Leftovers {
    cleanup: S3Client,
    object: Option<InFlight>,
    workers: Vec<JoinHandle<()>>,
    /// Objects to remove (none for an image a restore keeps).
    made: Vec<(String, u64)>,
    journal: Option<Journal>,
}

impl Leftovers {
    /// Aborts the upload and removes the objects, each request with clean-up's deadlines: a
    /// store that stopped answering cannot hold this long; what is not removed stays in the
    /// journal for the start-up sweep.
    fn remove(self) {
        let Leftovers {
            cleanup,
            object,
            workers,
            made,
            journal,
        } = self;
        let forget = |key: &str| {
            if let Some(journal) = &journal {
                journal.forget(&cleanup.store().name, key);
            }
        };
        let started = Instant::now();
        while workers.iter().any(|worker| !worker.is_finished()) && started.elapsed() < DROP_WAIT {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut answering = true;
        if let Some(object) = object {
            match cleanup.abort(&object.upload, &NEVER) {
                Ok(()) if workers.iter().all(JoinHandle::is_finished) => {
                    forget(&object.upload.key);
                }
                Ok(()) => {}
                Err(failure) => {
                    answering = failure.status.is_some();
                    tracing::warn!(%failure, "cannot abort an upload; the next start-up sweeps it");
                }
            }
            if workers.iter().any(|worker| !worker.is_finished()) {
                // A part still under way may land after the abort: abort again once it has.
                let client = cleanup.clone();
                let journal = journal.clone();
                let _ = std::thread::Builder::new()
                    .name("backlab-s3-abort".to_string())
                    .spawn(move || {
                        for worker in workers {
                            let _ = worker.join();
                        }
                        if client.abort(&object.upload, &NEVER).is_ok()
                            && let Some(journal) = journal
                        {
                            journal.forget(&client.store().name, &object.upload.key);
                        }
                    });
            }
        }
        for (key, _) in &made {
            if !answering {
                break;
            }
            match cleanup.delete(key, &NEVER) {
                Ok(()) => forget(key),
                Err(failure) => {
                    // A store that does not answer at all is not asked for each object.
                    answering = failure.status.is_some();
                    tracing::warn!(%failure, "cannot remove an object; the next start-up sweeps it")
                }
            }
        }
    }
}
