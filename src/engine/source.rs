//! Sources: what a stream reads. File trees are walked by a walker thread per path and shared
//! out to the streams file by file; generated data is produced in place.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use rustix::fs::{CWD, FileType, Mode, OFlags, ResolveFlags, fcntl_getfl, fcntl_setfl};
use walkdir::WalkDir;

use super::buffer::{AlignedBuf, PAGE};
use super::cache;
use super::data::{DataGenerator, DataPool};
use super::error::EngineError;
use super::measure::LatencyRecorder;

/// One reader's share of the source.
pub trait StreamSource: Send {
    /// Places up to `want` bytes (`want <= buf.len()`) at the start of `buf`, packing several
    /// files into one block the way a backup stream does. Returns 0 when the stream is done.
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError>;
    /// Like `fill`, for sources that can block for long (a network stream): they return
    /// early, with what they have, once `give_up` is set.
    fn fill_or_give_up(
        &mut self,
        buf: &mut AlignedBuf,
        want: usize,
        give_up: &std::sync::atomic::AtomicBool,
    ) -> Result<usize, EngineError> {
        let _ = give_up;
        self.fill(buf, want)
    }
    /// Where files began within the bytes the last fill placed (offsets into the block, in
    /// order): a sink that chunks each file's stream apart, as restic and borg do, cuts there.
    /// Sources of one stream of bytes (generated data, a network stream) report none.
    fn file_starts(&self) -> &[usize] {
        &[]
    }
    /// Files read to their end so far.
    fn files_done(&self) -> u64;
    /// Latency of each read call, if this source makes any.
    fn read_latency(&self) -> Option<&LatencyRecorder>;
}

/// Problems a walk or a stream stepped over without failing the run, like a backup's
/// "file skipped" messages.
#[derive(Debug, Default)]
pub struct Skipped {
    count: AtomicU64,
    first: Mutex<Option<String>>,
}

impl Skipped {
    /// Notes one thing stepped over; the first is kept for the warning.
    pub fn record(&self, what: String) {
        if self.count.fetch_add(1, Ordering::Relaxed) == 0
            && let Ok(mut first) = self.first.lock()
        {
            *first = Some(what);
        }
    }

    /// Entries stepped over so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// A warning line when anything was skipped.
    pub fn warning(&self) -> Option<String> {
        let count = self.count.load(Ordering::Relaxed);
        if count == 0 {
            return None;
        }
        let first = self
            .first
            .lock()
            .ok()
            .and_then(|first| first.clone())
            .unwrap_or_default();
        Some(format!(
            "skipped {count} unreadable entries of the source; the first: {first}"
        ))
    }
}

/// One source path, held open while its files are read: every file under it is opened
/// relative to it, so a directory on the way swapped for a link during the run cannot lead
/// outside it.
#[derive(Debug)]
pub struct SourceRoot {
    path: PathBuf,
    /// The directory (`O_PATH`), or `None` when the source path is one file.
    dir: Option<OwnedFd>,
}

/// The kernel's pseudo file systems, by their magic numbers: their files are views of the
/// kernel (`/proc/self/pagemap` reads as many gigabytes, a sysfs file never ends as data
/// does), not data anyone backs up.
const PSEUDO_FILE_SYSTEMS: [(i64, &str); 13] = [
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x0027_e0eb, "cgroupfs"),
    (0x6367_7270, "cgroup2"),
    (0x7363_6673, "securityfs"),
    (0x1cd1, "devpts"),
    (0xcafe_4a11, "bpffs"),
    (0x6265_6570, "configfs"),
    (0x6165_676c, "pstore"),
    (0xde5e_81e4, "efivarfs"),
    (0x6573_5543, "fusectl"),
];

/// The pseudo file system `fd` lies on, if it does.
fn pseudo_file_system(fd: &impl rustix::fd::AsFd) -> Option<&'static str> {
    let statfs = rustix::fs::fstatfs(fd).ok()?;
    let kind = statfs.f_type as i64;
    PSEUDO_FILE_SYSTEMS
        .iter()
        .find(|(magic, _)| *magic == kind)
        .map(|(_, name)| *name)
}

/// Refuses a path on one of the kernel's pseudo file systems (procfs, sysfs, …): reading it
/// as a tree of data never ends or measures nothing.
pub fn refuse_pseudo_file_system(path: &Path) -> io::Result<()> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let handle = rustix::fs::openat(CWD, path, flags, Mode::empty())?;
    match pseudo_file_system(&handle) {
        Some(name) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is on {name}, one of the kernel's pseudo file systems: its files are not data",
                path.display()
            ),
        )),
        None => Ok(()),
    }
}

impl SourceRoot {
    /// Opens a source path that was checked against the allow-lists (it is not followed if it
    /// became a link since); one on a kernel pseudo file system is refused.
    pub fn open(path: &Path) -> io::Result<Arc<Self>> {
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let handle = rustix::fs::openat(CWD, path, flags, Mode::empty())?;
        if let Some(name) = pseudo_file_system(&handle) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "on {name}, one of the kernel's pseudo file systems: its files are not data"
                ),
            ));
        }
        let dir = match FileType::from_raw_mode(rustix::fs::fstat(&handle)?.st_mode) {
            FileType::Directory => Some(handle),
            FileType::RegularFile => None,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "neither a directory nor a regular file (a link is not followed)",
                ));
            }
        };
        Ok(Arc::new(Self {
            path: path.to_path_buf(),
            dir,
        }))
    }
}

/// The passes made over a source read again and again ([`walk_until_hung_up`]). Within a pass
/// the mix of small and large files sets a single stream's pace, so a run's steadiness is judged
/// on buckets at least one pass long: shorter ones see the mix vary, not the disk.
#[derive(Debug)]
pub struct Passes {
    /// Passes walked to their end (every file handed to a stream), over all the walkers.
    done: AtomicU64,
    /// Walkers counting into it, one per source path.
    walkers: u64,
}

impl Passes {
    /// Passes of `walkers` walkers, none done yet.
    pub fn new(walkers: usize) -> Self {
        Self {
            done: AtomicU64::new(0),
            walkers: walkers.max(1) as u64,
        }
    }

    fn record(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Seconds one pass took on average, `elapsed_s` into the run; `None` before a pass ended.
    pub fn pass_s(&self, elapsed_s: f64) -> Option<f64> {
        match self.done.load(Ordering::Relaxed) {
            0 => None,
            done => Some(elapsed_s * self.walkers as f64 / done as f64),
        }
    }
}

/// A regular file a walker found under a source path.
#[derive(Debug, Clone)]
pub struct SourceFile {
    root: Arc<SourceRoot>,
    /// Where it is, for messages and for what only needs its name.
    pub path: PathBuf,
    /// Held until the file is read to its end, when a walk reads its tree again and again.
    reading: Option<Arc<Reading>>,
}

/// A file of a tree read again and again, queued or being read. The next pass hands the same
/// file to a stream only once this one is released: two streams reading the same file at once
/// would share its pages in the page cache, and the second would count memory's speed as the
/// disk's (four streams over a one-file tree read four times its device's rate).
#[derive(Debug, Default)]
struct Reading;

impl SourceFile {
    /// A regular file that a walk of its own found beneath `root` (one that also needs the
    /// directories and links [`each_file`] leaves out): it opens beneath the root as the
    /// walkers' files do.
    pub fn beneath(root: &Arc<SourceRoot>, path: PathBuf) -> Self {
        Self {
            reading: None,
            root: Arc::clone(root),
            path,
        }
    }

    /// Opens the file for reading without following any link and without blocking (a file
    /// swapped for a FIFO or a device is not waited on), beneath its source path, and checks
    /// on the open descriptor that it is still a regular file. With `direct`, O_DIRECT.
    pub fn open(&self, direct: bool) -> io::Result<File> {
        let mut flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        if direct {
            flags |= OFlags::DIRECT;
        }
        let relative = self.path.strip_prefix(&self.root.path).ok();
        let fd = match (&self.root.dir, relative) {
            (Some(dir), Some(relative)) => open_beneath(dir, relative, flags)?,
            _ => rustix::fs::openat(CWD, &self.path, flags, Mode::empty())?,
        };
        let stat = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no longer a regular file",
            ));
        }
        Ok(File::from(fd))
    }
}

/// Opens `relative` beneath `dir`, refusing any link on the way (`openat2`); on a kernel
/// without `openat2` (before 5.6), the last component alone is kept from being a link.
fn open_beneath(dir: &OwnedFd, relative: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(dir, relative, flags, Mode::empty(), resolve) {
        Err(rustix::io::Errno::NOSYS) => {
            Ok(rustix::fs::openat(dir, relative, flags, Mode::empty())?)
        }
        opened => Ok(opened?),
    }
}

/// Walks one source path in name order and hands its regular files to the streams.
/// Stays on the path's file system, never follows symlinks, and ends when the streams hang up.
pub fn walk_into(root: &Path, files: &Sender<SourceFile>, skipped: &Skipped) {
    if let Some(root) = open_root(root, skipped) {
        walk_once(&root, Some(skipped), |file| files.send(file).is_ok());
    }
}

/// Walks one source path again and again until the streams hang up (they do at the run's
/// duration): a small source read repeatedly still gives a run of the length asked. Entries
/// skipped are counted on the first pass only; a pass that finds no file ends the walk. A file
/// is handed over again only once its previous reading ended ([`Reading`]); the walk ends
/// while waiting for it when no stream is left (`streams` counts the living [`FileStream`]s).
pub fn walk_until_hung_up(
    root: &Path,
    files: &Sender<SourceFile>,
    skipped: &Skipped,
    streams: &Weak<()>,
    passes: &Passes,
) {
    let Some(root) = open_root(root, skipped) else {
        return;
    };
    let mut first = true;
    // The readings of the previous pass, in walk order: its i-th file is the next pass's i-th
    // while the tree is unchanged (and some file of the same place in the walk when not).
    let mut previous: Vec<Weak<Reading>> = Vec::new();
    loop {
        let mut current = Vec::with_capacity(previous.len());
        let walked = walk_once(&root, first.then_some(skipped), |mut file| {
            if let Some(before) = previous.get(current.len())
                && !released(before, streams)
            {
                return false;
            }
            let reading = Arc::new(Reading);
            current.push(Arc::downgrade(&reading));
            file.reading = Some(reading);
            files.send(file).is_ok()
        });
        match walked {
            Some(sent) if sent > 0 => first = false,
            _ => return,
        }
        passes.record();
        previous = current;
    }
}

/// Waits until `reading` is released: true then, false once no stream is left.
fn released(reading: &Weak<Reading>, streams: &Weak<()>) -> bool {
    while reading.strong_count() > 0 {
        if streams.strong_count() == 0 {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn open_root(root: &Path, skipped: &Skipped) -> Option<Arc<SourceRoot>> {
    match SourceRoot::open(root) {
        Ok(root) => Some(root),
        Err(error) => {
            skipped.record(format!("{}: {error}", root.display()));
            None
        }
    }
}

/// One walk, each regular file handed to `send`: the files sent, or `None` once `send` says
/// the streams hung up (false).
fn walk_once(
    root: &Arc<SourceRoot>,
    skipped: Option<&Skipped>,
    mut send: impl FnMut(SourceFile) -> bool,
) -> Option<u64> {
    let mut sent = 0;
    let walker = WalkDir::new(&root.path)
        .follow_links(false)
        .same_file_system(true)
        .sort_by_file_name();
    for entry in walker {
        match entry {
            Ok(entry) if entry.file_type().is_file() => {
                let file = SourceFile {
                    root: Arc::clone(root),
                    path: entry.into_path(),
                    reading: None,
                };
                if !send(file) {
                    return None;
                }
                sent += 1;
            }
            Ok(_) => {}
            Err(error) => {
                if let Some(skipped) = skipped {
                    skipped.record(error.to_string());
                }
            }
        }
    }
    Some(sent)
}

/// The regular files under the source paths, in walk order, up to `limit` of them; a source
/// path that cannot be opened gives none.
pub fn list_files(roots: &[PathBuf], limit: usize) -> Vec<SourceFile> {
    let mut files = Vec::new();
    each_file(roots, |file, _| {
        if files.len() >= limit {
            return false;
        }
        files.push(file);
        true
    });
    files
}

/// Hands each regular file under the source paths to `visit` in walk order, with its length
/// as the walk saw it, until `visit` says stop (false); a source path that cannot be opened
/// gives none. The files open beneath their source path ([`SourceFile::open`]).
pub fn each_file(roots: &[PathBuf], mut visit: impl FnMut(SourceFile, u64) -> bool) {
    for root_path in roots {
        let Ok(root) = SourceRoot::open(root_path) else {
            continue;
        };
        let walker = WalkDir::new(root_path)
            .follow_links(false)
            .same_file_system(true)
            .sort_by_file_name();
        for entry in walker.into_iter().flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            let len = entry.metadata().map_or(0, |metadata| metadata.len());
            let file = SourceFile {
                root: Arc::clone(&root),
                path: entry.into_path(),
                reading: None,
            };
            if !visit(file, len) {
                return;
            }
        }
    }
}

struct OpenSourceFile {
    path: PathBuf,
    /// Held until the file is read to its end.
    _reading: Option<Arc<Reading>>,
    file: File,
    offset: u64,
    /// End of the part that O_DIRECT may read: the size rounded down to a page.
    direct_end: u64,
    direct_on: bool,
}

/// A stream over files taken one by one from a shared queue.
pub struct FileStream<'a> {
    files: Receiver<SourceFile>,
    current: Option<OpenSourceFile>,
    direct: bool,
    cold_cache: bool,
    files_done: u64,
    /// Where files began within the last fill.
    file_starts: Vec<usize>,
    latency: LatencyRecorder,
    skipped: &'a Skipped,
    /// Tells a walker reading the tree again ([`walk_until_hung_up`]) that this stream lives.
    _alive: Option<Arc<()>>,
}

impl<'a> FileStream<'a> {
    /// The stream, counted among those `alive` tells a walker of.
    pub fn counted_in(mut self, alive: &Arc<()>) -> Self {
        self._alive = Some(Arc::clone(alive));
        self
    }

    /// A stream over the files its walkers send, reading into the ring's blocks.
    pub fn new(
        files: Receiver<SourceFile>,
        direct: bool,
        cold_cache: bool,
        skipped: &'a Skipped,
    ) -> Self {
        Self {
            files,
            current: None,
            direct,
            cold_cache,
            files_done: 0,
            file_starts: Vec::new(),
            latency: LatencyRecorder::new(),
            skipped,
            _alive: None,
        }
    }

    /// Opens the next file of the queue; false when the queue is finished.
    fn open_next(&mut self) -> bool {
        while let Ok(found) = self.files.recv() {
            let path = found.path.clone();
            let reading = found.reading.clone();
            let opened = found.open(self.direct).and_then(|file| {
                let size = file.metadata()?.len();
                if self.cold_cache {
                    cache::evict(&file)?;
                }
                Ok((file, size))
            });
            match opened {
                Ok((file, size)) => {
                    self.current = Some(OpenSourceFile {
                        path,
                        _reading: reading,
                        file,
                        offset: 0,
                        direct_end: size / PAGE as u64 * PAGE as u64,
                        direct_on: self.direct,
                    });
                    return true;
                }
                // A file that vanished, cannot be opened or is no longer a regular file is
                // skipped, as backup apps do.
                Err(error) => self.skipped.record(format!("{}: {error}", path.display())),
            }
        }
        false
    }
}

impl StreamSource for FileStream<'_> {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        let want = want.min(buf.len());
        let mut filled = 0;
        self.file_starts.clear();
        while filled < want {
            if self.current.is_none() {
                if !self.open_next() {
                    break;
                }
                self.file_starts.push(filled);
            }
            let Some(open) = self.current.as_mut() else {
                break;
            };
            let room = want - filled;
            // O_DIRECT only where memory, file offset and length are all page-aligned; the
            // unaligned tail of a file (or of a packed block) is read through the page cache.
            let direct_len = if self.direct && filled % PAGE == 0 && open.offset % PAGE as u64 == 0
            {
                let aligned_left = open.direct_end.saturating_sub(open.offset);
                (room.min(aligned_left.min(usize::MAX as u64) as usize) / PAGE) * PAGE
            } else {
                0
            };
            let (use_direct, len) = if direct_len > 0 {
                (true, direct_len)
            } else {
                (false, room)
            };
            if self.direct && use_direct != open.direct_on {
                set_direct(&open.file, use_direct).map_err(|source| EngineError::SourceRead {
                    path: open.path.clone(),
                    source,
                })?;
                open.direct_on = use_direct;
            }
            let target = &mut buf.as_mut_slice()[filled..filled + len];
            let started = Instant::now();
            let read = open.file.read_at(target, open.offset);
            self.latency.record(started.elapsed());
            match read {
                Ok(0) => {
                    self.files_done += 1;
                    self.current = None;
                }
                Ok(count) => {
                    filled += count;
                    open.offset += count as u64;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(EngineError::SourceRead {
                        path: open.path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(filled)
    }

    fn file_starts(&self) -> &[usize] {
        &self.file_starts
    }

    fn files_done(&self) -> u64 {
        self.files_done
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        Some(&self.latency)
    }
}

fn set_direct(file: &File, on: bool) -> io::Result<()> {
    let mut flags = fcntl_getfl(file)?;
    flags.set(OFlags::DIRECT, on);
    fcntl_setfl(file, flags)?;
    Ok(())
}

/// How a generated stream renews a block that already holds generated bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// Every byte produced again, as a read of a source would copy it.
    Full,
    /// The block refreshed in place: no two blocks repeat, at a small fraction of a copy.
    Refresh,
    /// The block left as it is, so it is written again as it was: lmdd's internal input.
    Repeat,
}

/// A stream of generated data at memory speed; the run's byte budget ends it.
pub struct GeneratedStream {
    generator: DataGenerator,
    renewal: Renewal,
}

impl GeneratedStream {
    /// A stream of generated data; a block is produced in full the first time, and renewed
    /// as `renewal` says after that.
    pub fn new(pool: std::sync::Arc<DataPool>, seed: u64, renewal: Renewal) -> Self {
        Self {
            generator: DataGenerator::new(pool, seed),
            renewal,
        }
    }
}

impl StreamSource for GeneratedStream {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        let want = want.min(buf.len());
        let known = buf.generated_len();
        let bytes = &mut buf.as_mut_slice()[..want];
        match self.renewal {
            Renewal::Repeat if known >= want => {}
            Renewal::Refresh if known >= want => self.generator.refresh(bytes),
            _ => self.generator.fill(bytes),
        }
        buf.set_generated_len(known.max(want));
        Ok(want)
    }

    fn files_done(&self) -> u64 {
        0
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        None
    }
}

/// Generated data of a chosen dedup ratio: a stream of units, what it makes added to the run's
/// tally as it goes. A stream with a share of a dataset ends once it has given its share.
pub struct UnitSource<'a> {
    units: crate::engine::reduction::units::UnitStream,
    made: &'a crate::engine::reduction::units::UnitsMade,
    told: crate::engine::reduction::units::UnitTally,
    /// Bytes left of the stream's share; `None`: endless.
    left: Option<u64>,
}

impl<'a> UnitSource<'a> {
    /// A stream of `units`, counted into `made`; with `share`, it ends after that many bytes.
    pub fn new(
        units: crate::engine::reduction::units::UnitStream,
        made: &'a crate::engine::reduction::units::UnitsMade,
        share: Option<u64>,
    ) -> Self {
        Self {
            units,
            made,
            told: Default::default(),
            left: share,
        }
    }
}

impl StreamSource for UnitSource<'_> {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        let mut want = want.min(buf.len());
        if let Some(left) = self.left {
            want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
            self.left = Some(left - want as u64);
        }
        if want == 0 {
            return Ok(0);
        }
        self.units.fill(&mut buf.as_mut_slice()[..want]);
        let now = self.units.tally();
        self.made.add(crate::engine::reduction::units::UnitTally {
            units: now.units - self.told.units,
            new_units: now.new_units - self.told.new_units,
            changed_units: now.changed_units - self.told.changed_units,
        });
        self.told = now;
        Ok(want)
    }

    fn files_done(&self) -> u64 {
        0
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        None
    }
}

/// Longest single sleep of a throttled stream, so a stop is seen within it.
const THROTTLE_NAP: Duration = Duration::from_millis(50);

/// Caps a stream's rate: a what-if for slow file servers ("each stream delivers 30 MB/s").
pub struct Throttled<'a> {
    inner: Box<dyn StreamSource + 'a>,
    bytes_per_s: f64,
    started: Option<std::time::Instant>,
    delivered: u64,
}

impl<'a> Throttled<'a> {
    /// Wraps a stream so it delivers at most `mb_per_s` MB/s.
    pub fn new(inner: Box<dyn StreamSource + 'a>, mb_per_s: f64) -> Self {
        Self {
            inner,
            bytes_per_s: mb_per_s * 1e6,
            started: None,
            delivered: 0,
        }
    }
}

impl StreamSource for Throttled<'_> {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        self.fill_or_give_up(buf, want, &AtomicBool::new(false))
    }

    fn fill_or_give_up(
        &mut self,
        buf: &mut AlignedBuf,
        want: usize,
        give_up: &AtomicBool,
    ) -> Result<usize, EngineError> {
        let started = *self.started.get_or_insert_with(Instant::now);
        let filled = self.inner.fill_or_give_up(buf, want, give_up)?;
        self.delivered += filled as u64;
        // A slow rate and a large block can mean a long wait: it is taken in naps, so a stop
        // is seen within one. A wait too long for a `Duration` is waited out nap by nap.
        let due_s = self.delivered as f64 / self.bytes_per_s;
        let due = Duration::try_from_secs_f64(due_s).unwrap_or(Duration::MAX);
        while let Some(ahead) = due.checked_sub(started.elapsed()) {
            if give_up.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(ahead.min(THROTTLE_NAP));
        }
        Ok(filled)
    }

    fn file_starts(&self) -> &[usize] {
        self.inner.file_starts()
    }

    fn files_done(&self) -> u64 {
        self.inner.files_done()
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        self.inner.read_latency()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-file tree read again and again: the walker hands the file over again only once
    /// the stream holding it has released it, and counts the passes it walked.
    #[test]
    fn a_file_is_handed_over_again_only_once_its_reading_ended() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("only"), b"data").expect("the file");
        let (files_tx, files_rx) = crossbeam_channel::bounded::<SourceFile>(8);
        let alive = Arc::new(());
        let streams = Arc::downgrade(&alive);
        let passes = Passes::new(1);
        let skipped = Skipped::default();
        std::thread::scope(|scope| {
            let walker = scope
                .spawn(|| walk_until_hung_up(dir.path(), &files_tx, &skipped, &streams, &passes));
            let first = files_rx.recv().expect("the first pass");
            // Held: no second handing over, though the queue has room for eight.
            let waited = files_rx.recv_timeout(Duration::from_millis(200));
            assert!(waited.is_err(), "the file was handed over twice at once");
            drop(first);
            let second = files_rx
                .recv_timeout(Duration::from_secs(10))
                .expect("the second pass once the first is released");
            assert_eq!(second.path, dir.path().join("only"));
            // The streams hang up while the walker waits on the second reading: it ends.
            drop(alive);
            drop(files_rx);
            walker.join().expect("the walker ends");
        });
        assert_eq!(passes.done.load(Ordering::Relaxed), 2);
    }
}
