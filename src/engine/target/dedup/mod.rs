//! A deduplicating target: a real content-addressed store on disk under a directory of the
//! lab's (`{"kind": "dedup", "path": DIR, "avg_chunk": "64K"}`). Each writer cuts what it is
//! handed into content-defined chunks, hashes them and writes only the chunks the store has not
//! seen, into containers, with an index of where each lies; the costs are real CPU and I/O. A
//! restore reads a backup image back through the index (rehydration). The store lives for one
//! run and is removed after it.

mod sink;
mod store;

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use self::sink::DedupSink;
use self::store::Store;
use super::{
    Capabilities, FieldInput, Kind, Opening, Settings, SettingsText, SettingsType, Sink, Target,
    TypedField, read_settings, settings_of,
};
use crate::engine::EngineSettings;
use crate::engine::buffer::AlignedBuf;
use crate::engine::cache;
use crate::engine::error::EngineError;
use crate::engine::measure::LatencyRecorder;
use crate::engine::reduction::{ChunkSizes, DatasetStreams};
use crate::engine::source::StreamSource;
use crate::engine::target::TargetPlan;
use crate::engine::target::TargetReport;
use crate::engine::target::image::{ImageRequest, RestoreImage, write_image};
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;
use crate::size::{ByteSize, format_bytes};

/// The average chunk unless the spec says.
const DEFAULT_AVG_CHUNK: u64 = 64 << 10;

/// A dedup target's settings as a spec gives them. Each field's comment is what the OpenAPI
/// document says of it.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DedupSettings {
    /// Dedup store: the content-defined chunker's average chunk, 1K to 1M (default 64K).
    pub avg_chunk: Option<ByteSize>,
}

/// A validated dedup target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedupConfig {
    pub path: PathBuf,
    pub avg_chunk: u32,
}

impl DedupConfig {
    fn sizes(&self) -> ChunkSizes {
        ChunkSizes::around(self.avg_chunk)
    }
}

/// A spec's dedup target: a directory and the average chunk.
fn plan(path: Option<&Path>, settings: &Settings, errors: &mut FieldErrors) -> Option<TargetPlan> {
    let path = super::required_path(&FACTS, path, errors);
    let settings: DedupSettings = read_settings(&FACTS, settings, errors)?;
    let avg_chunk = settings
        .avg_chunk
        .map_or(DEFAULT_AVG_CHUNK, |size| size.bytes());
    if !(1 << 10..=1 << 20).contains(&avg_chunk) {
        errors.add(
            "target.avg_chunk",
            format!(
                "{} is not an average chunk from 1K to 1M",
                format_bytes(avg_chunk)
            ),
        );
        return None;
    }
    Some(TargetPlan::new(DedupTarget(DedupConfig {
        path: path?,
        avg_chunk: avg_chunk as u32,
    })))
}

/// What a dedup store did in a run: what it was sent, what it kept, and where its time went
/// (summed over its writers).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DedupFigures {
    /// The store in words: `dedup store /srv/backup (64 KiB chunks)`.
    pub store: String,
    pub avg_chunk: u32,
    /// Bytes the backup sent, and bytes the store wrote: only chunks it had not seen.
    pub logical_bytes: u64,
    pub stored_bytes: u64,
    pub chunks: u64,
    pub new_chunks: u64,
    pub containers: u64,
    /// Logical ÷ stored bytes.
    pub dedup_ratio: f64,
    /// Stored bytes per second of the run: what reached the disk.
    pub physical_mb_s: f64,
    pub chunking_s: f64,
    pub hashing_s: f64,
    pub index_s: f64,
    pub writing_s: f64,
    /// Bytes the store held before the run: the earlier generations of the run's dataset,
    /// taken in before the timed window.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub held_bytes: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub earlier_generations: u32,
}

fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl DedupFigures {
    fn add(&mut self, writer: &DedupFigures) {
        self.logical_bytes += writer.logical_bytes;
        self.stored_bytes += writer.stored_bytes;
        self.chunks += writer.chunks;
        self.new_chunks += writer.new_chunks;
        self.containers += writer.containers;
        self.chunking_s += writer.chunking_s;
        self.hashing_s += writer.hashing_s;
        self.index_s += writer.index_s;
        self.writing_s += writer.writing_s;
        self.dedup_ratio = if self.stored_bytes > 0 {
            (self.logical_bytes as f64 / self.stored_bytes as f64 * 1000.0).round() / 1000.0
        } else {
            1.0
        };
    }

    /// How much the run grew the store, % of what it held before; `None` for an empty store.
    pub fn growth_pct(&self) -> Option<f64> {
        (self.held_bytes > 0)
            .then(|| (self.stored_bytes as f64 / self.held_bytes as f64 * 1000.0).round() / 10.0)
    }

    /// Sets the physical rate from the run's length.
    pub fn over(&mut self, seconds: f64) {
        if seconds > 0.0 {
            self.physical_mb_s = (self.stored_bytes as f64 / seconds / 1e5).round() / 10.0;
        }
    }

    /// What took most of the store's time, and its share of it (%): hashing (the rolling hash
    /// that cuts chunks and the BLAKE3 hash that names them, both CPU work), the index, or
    /// writing to its disk.
    pub fn limit(&self) -> Option<DedupLimit> {
        let hashing = self.chunking_s + self.hashing_s;
        let total = hashing + self.index_s + self.writing_s;
        if total <= 0.0 {
            return None;
        }
        let pct = |seconds: f64| (seconds / total * 1000.0).round() / 10.0;
        let (work, seconds) = [
            (DedupWork::Hashing, hashing),
            (DedupWork::Index, self.index_s),
            (DedupWork::Writing, self.writing_s),
        ]
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(DedupLimit {
            work,
            share_pct: pct(seconds),
            chunking_pct: pct(self.chunking_s),
            fingerprint_pct: pct(self.hashing_s),
        })
    }

    /// The figures as the pages and reports show them.
    pub fn report(&self) -> TargetReport {
        let mut figures = vec![
            format!(
                "dedup {:.2}:1: {} sent, {} stored ({:.1} MB/s to disk)",
                self.dedup_ratio,
                format_bytes(self.logical_bytes),
                format_bytes(self.stored_bytes),
                self.physical_mb_s
            ),
            format!(
                "{} chunks, {} new, in {} containers",
                self.chunks, self.new_chunks, self.containers
            ),
            format!(
                "time: chunking {:.2} s, hashing {:.2} s, index {:.2} s, writing {:.2} s",
                self.chunking_s, self.hashing_s, self.index_s, self.writing_s
            ),
        ];
        if let Some(growth) = self.growth_pct() {
            figures.push(format!(
                "the store held {} from {} earlier generation{} of the data; this one added \
                 {growth:.1} %",
                format_bytes(self.held_bytes),
                self.earlier_generations,
                if self.earlier_generations == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        if let Some(limit) = self.limit() {
            figures.push(format!("{} of the store's time", limit.words()));
        }
        TargetReport {
            reporter: self.store.clone(),
            device: self.store.clone(),
            figures,
        }
    }
}

/// What a dedup store spends its time on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DedupWork {
    /// Cutting chunks (a rolling hash over every byte) and naming them (BLAKE3): the CPU's.
    Hashing,
    /// Looking chunks up in the index and logging new ones.
    Index,
    /// Writing new chunks to its containers, and the flush: the disk's.
    Writing,
}

/// The work that took most of a dedup store's time: what a faster store needs more of.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DedupLimit {
    pub work: DedupWork,
    /// Its share of the store's time, %.
    pub share_pct: f64,
    /// The two parts of hashing, % of the store's time: cutting chunks and naming them.
    pub chunking_pct: f64,
    pub fingerprint_pct: f64,
}

impl DedupLimit {
    /// "hashing (chunking 52 %, fingerprints 38 %: CPU work) took 90 %".
    pub fn words(&self) -> String {
        match self.work {
            DedupWork::Hashing => format!(
                "hashing (cutting chunks {:.0} %, naming them {:.0} %: CPU work, which a faster \
                 disk would not speed up) took {:.0} %",
                self.chunking_pct, self.fingerprint_pct, self.share_pct
            ),
            DedupWork::Index => format!("the index took {:.0} %", self.share_pct),
            DedupWork::Writing => format!("writing to its disk took {:.0} %", self.share_pct),
        }
    }
}

/// A dedup store under a directory on a real file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedupTarget(pub DedupConfig);

impl DedupTarget {
    fn store(&self, tag: &str) -> Result<Arc<Store>, EngineError> {
        Ok(Arc::new(Store::create(
            &self.0.path,
            tag,
            self.words(),
            self.0.avg_chunk,
        )?))
    }
}

/// What this kind is before its settings are read. A store the lab builds under a directory of its own.
pub const FACTS: KindFacts = KindFacts {
    id: "dedup",
    label: "dedup store",
    takes_path: true,
    writes: Writes::FilesUnder,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

/// The dedup store kind.
pub struct Dedup;

impl Kind for Dedup {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        plan(path, settings, errors)
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<DedupTarget>(value)
    }

    fn settings_type(&self) -> Option<SettingsType> {
        Some(SettingsType::of::<DedupSettings>())
    }

    fn typed_fields(&self) -> &'static [TypedField] {
        &[TypedField {
            setting: "avg_chunk",
            label: "Average chunk",
            input: FieldInput::Size,
            default: "64K",
        }]
    }

    fn settings_from_text(&self, text: &mut dyn SettingsText) -> Settings {
        settings_of(&DedupSettings {
            avg_chunk: text.size("avg_chunk"),
        })
    }
}

impl Target for DedupTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::HARDWARE
    }

    fn words(&self) -> String {
        format!(
            "dedup store {} ({} chunks)",
            self.0.path.display(),
            format_bytes(u64::from(self.0.avg_chunk))
        )
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.0.path)
    }

    fn device_id(&self) -> Option<u64> {
        std::fs::metadata(&self.0.path)
            .ok()
            .map(|metadata| metadata.dev())
    }

    fn preflight(&self, _direct: bool, _settings: &EngineSettings, errors: &mut FieldErrors) {
        if let Err((field, message)) = super::dir::check_target_dir(&self.0.path, false) {
            errors.add(field, message);
        }
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        // One writer, which keeps each stream's bytes apart and in order: chunks are cut as
        // the backup sent each stream, never across two.
        let store = self.store(how.tag)?;
        if let Some(history) = how.history {
            take_in_history(
                &store,
                self.0.sizes(),
                history,
                how.cancel,
                how.deadline,
                how.params.duration_s,
            )?;
        }
        Ok(vec![Box::new(DedupSink::new(store, self.0.sizes(), false))])
    }

    fn dedups_at(&self) -> Option<u32> {
        Some(self.0.avg_chunk)
    }

    fn restores(&self) -> bool {
        true
    }

    fn restore_image(&self, request: &ImageRequest<'_>) -> Result<RestoreImage, EngineError> {
        let store = self.store(request.tag)?;
        let mut sink = DedupSink::new(Arc::clone(&store), self.0.sizes(), true);
        write_image(&mut sink, request, request.bytes)?;
        let recipe = sink.recipe().to_vec();
        drop(sink);
        Ok(RestoreImage {
            stream: Box::new(Rehydration::new(store, recipe)?),
            from: self.words(),
            interleaved: 1,
            positioning_s: 0.0,
            figures: None,
        })
    }
}

/// Bytes of a dataset made at a time while the store takes in its earlier generations.
const HISTORY_PIECE: usize = 1 << 20;

/// Writes every generation of `history`'s dataset before the run's own into `store`, each
/// stream apart as the run will send it, then starts the run's figures: the timed window
/// meets a store that holds the nights before. A cancel stops it within a piece, and so does
/// the run's `deadline` (`deadline_s` after its start): the run then fails saying how much it
/// took in.
fn take_in_history(
    store: &Arc<Store>,
    sizes: ChunkSizes,
    history: &DatasetStreams,
    cancel: &AtomicBool,
    deadline: Option<Instant>,
    deadline_s: Option<f64>,
) -> Result<(), EngineError> {
    let fail = |source: std::io::Error| EngineError::TargetWrite {
        path: store.root().to_path_buf(),
        written: 0,
        source,
    };
    let earlier = 1..history.generation();
    // Every generation is the same streams with the same shares.
    let generation_bytes: u64 = (0..history.len())
        .filter_map(|index| history.stream(index, 1))
        .filter_map(|(_, share)| share)
        .sum();
    let history_bytes = generation_bytes * u64::from(history.generation() - 1);
    let started = Instant::now();
    let mut taken_bytes = 0u64;
    let mut sink = DedupSink::new(Arc::clone(store), sizes, false);
    let mut piece = vec![0u8; HISTORY_PIECE];
    for generation in earlier {
        for index in 0..history.len() {
            let Some((mut units, Some(mut left))) = history.stream(index, generation) else {
                continue;
            };
            while left > 0 {
                if cancel.load(Ordering::Relaxed) {
                    return Err(EngineError::Cancelled);
                }
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    return Err(EngineError::HistoryPastDeadline {
                        taken_bytes,
                        history_bytes,
                        generations: history.generation() - 1,
                        duration_s: deadline_s.unwrap_or_else(|| started.elapsed().as_secs_f64()),
                    });
                }
                let take =
                    usize::try_from(left).map_or(HISTORY_PIECE, |left| left.min(HISTORY_PIECE));
                units.fill(&mut piece[..take]);
                sink.write_stream_block(index, &piece[..take], cancel)
                    .map_err(fail)?;
                left -= take as u64;
                taken_bytes += take as u64;
            }
            sink.end_stream(index).map_err(fail)?;
        }
    }
    sink.finish(false).map_err(fail)?;
    drop(sink);
    store.begin_run(history.generation() - 1);
    Ok(())
}

/// A backup image read back from a dedup store chunk by chunk, each from its container.
struct Rehydration {
    store: Arc<Store>,
    recipe: Vec<u128>,
    next: usize,
    containers: HashMap<u32, File>,
    chunk: Vec<u8>,
    at: usize,
}

impl Rehydration {
    /// The reader of `recipe`; the store's containers dropped from the page cache first, so
    /// the restore reads from the disk.
    fn new(store: Arc<Store>, recipe: Vec<u128>) -> Result<Self, EngineError> {
        let mut containers = HashMap::new();
        let mut id = 0;
        while let Ok(file) = store.open_container(id) {
            cache::evict(&file).map_err(|source| EngineError::Source {
                path: store.root().to_path_buf(),
                source,
            })?;
            containers.insert(id, file);
            id += 1;
        }
        Ok(Self {
            store,
            recipe,
            next: 0,
            containers,
            chunk: Vec::new(),
            at: 0,
        })
    }

    /// Reads the next chunk of the recipe; false past its end.
    fn load(&mut self) -> Result<bool, EngineError> {
        let Some(hash) = self.recipe.get(self.next).copied() else {
            return Ok(false);
        };
        self.next += 1;
        let fail = |source: std::io::Error| EngineError::Source {
            path: self.store.root().to_path_buf(),
            source,
        };
        let place = self.store.place(hash).ok_or_else(|| {
            fail(std::io::Error::other(
                "a chunk of the image is not in the index",
            ))
        })?;
        let file = self
            .containers
            .get(&place.container)
            .ok_or_else(|| fail(std::io::Error::other("a container of the image is missing")))?;
        self.chunk.resize(place.len as usize, 0);
        file.read_exact_at(&mut self.chunk, place.offset)
            .map_err(fail)?;
        self.at = 0;
        Ok(true)
    }
}

impl StreamSource for Rehydration {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        let want = want.min(buf.len());
        let mut placed = 0;
        while placed < want {
            if self.at >= self.chunk.len() && !self.load()? {
                break;
            }
            let take = (self.chunk.len() - self.at).min(want - placed);
            buf.as_mut_slice()[placed..placed + take]
                .copy_from_slice(&self.chunk[self.at..self.at + take]);
            self.at += take;
            placed += take;
        }
        Ok(placed)
    }

    fn files_done(&self) -> u64 {
        0
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        None
    }
}
