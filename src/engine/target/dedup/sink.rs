//! The writer into a dedup store: each stream's blocks are gathered apart, in the order the
//! stream sent them, and cut into content-defined chunks (FastCDC), each named by its BLAKE3
//! hash and looked up in the store's index; only a chunk the store has not seen is appended to
//! the writer's container. Where the source said a file began, a chunk begins too: each file's
//! bytes are chunked apart, as restic and borg chunk each file (a stream that says nothing of
//! files, generated or from the network, is chunked as one). Its time is kept by stage:
//! chunking, hashing, the index, and writing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::DedupFigures;
use super::store::{CONTAINER_BYTES, Place, RECORD, Store, record};
use crate::engine::reduction::ChunkSizes;
use crate::engine::target::{Sink, SinkFigures};

/// Bytes gathered before they are cut: many chunks at a time, the last one held back until
/// more data (or the end) says where it ends.
const GATHER: usize = 4 << 20;

/// Bytes of new chunks gathered before they are written to their container in one write, as
/// a store packs chunks before they reach its disk.
const PACK: usize = 4 << 20;

/// One stream's bytes not yet cut, and where files began in them.
struct Gathered {
    bytes: Vec<u8>,
    /// Offsets into `bytes` where the source said a file began, in order.
    file_starts: Vec<usize>,
}

/// A writer's sink into a shared store.
pub struct DedupSink {
    store: Arc<Store>,
    path: PathBuf,
    sizes: ChunkSizes,
    /// Each stream's bytes not yet cut.
    pending: BTreeMap<usize, Gathered>,
    /// The container being filled, and its length with the pack counted in.
    container: Option<(u32, File, u64)>,
    /// New chunks not yet written to the container: they belong at its end.
    pack: Vec<u8>,
    records: Vec<u8>,
    /// The chunks of the stream in order, kept for a restore image only: what it reads back.
    recipe: Option<Vec<u128>>,
    figures: DedupFigures,
    /// Added to the store's figures once, when the stream ends.
    reported: bool,
}

impl DedupSink {
    /// A writer into `store`, chunking around `sizes`; with `recipe`, it keeps the order of
    /// its chunks for reading the stream back.
    pub fn new(store: Arc<Store>, sizes: ChunkSizes, recipe: bool) -> Self {
        Self {
            path: store.root().to_path_buf(),
            store,
            sizes,
            pending: BTreeMap::new(),
            container: None,
            pack: Vec::new(),
            records: Vec::new(),
            recipe: recipe.then(Vec::new),
            figures: DedupFigures::default(),
            reported: false,
        }
    }

    /// The chunks written, in order, for reading the stream back.
    pub fn recipe(&self) -> &[u128] {
        self.recipe.as_deref().unwrap_or_default()
    }

    /// Cuts what `stream` gathered into chunks and stores them, each file's bytes apart; at
    /// the end of the stream the last chunk too, else it stays gathered.
    fn cut(&mut self, stream: usize, end: bool) -> io::Result<()> {
        let Some(mut gathered) = self.pending.remove(&stream) else {
            return Ok(());
        };
        let started = Instant::now();
        let len = gathered.bytes.len();
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        let mut from = 0;
        let file_ends = gathered
            .file_starts
            .iter()
            .copied()
            .filter(|&at| at > 0 && at < len);
        for to in file_ends.chain(std::iter::once(len)) {
            if to <= from {
                continue;
            }
            let piece = fastcdc::v2020::FastCDC::new(
                &gathered.bytes[from..to],
                self.sizes.min as usize,
                self.sizes.avg as usize,
                self.sizes.max as usize,
            )
            .map(|chunk| (from + chunk.offset, chunk.length));
            cuts.extend(piece);
            from = to;
        }
        // The last chunk may go on in the stream's next block, unless the stream ends here.
        if !end {
            cuts.pop();
        }
        self.figures.chunking_s += started.elapsed().as_secs_f64();
        let mut done = 0;
        let mut result = Ok(());
        for (offset, length) in cuts {
            if let Err(error) = self.chunk(&gathered.bytes[offset..offset + length]) {
                result = Err(error);
                break;
            }
            done = offset + length;
        }
        gathered.bytes.drain(..done);
        gathered.file_starts.retain(|&at| at > done);
        for at in &mut gathered.file_starts {
            *at -= done;
        }
        self.pending.insert(stream, gathered);
        result
    }

    /// Stores one chunk unless the store has it.
    fn chunk(&mut self, data: &[u8]) -> io::Result<()> {
        let started = Instant::now();
        let hash = u128::from_le_bytes(
            blake3::hash(data).as_bytes()[..16]
                .try_into()
                .unwrap_or([0; 16]),
        );
        let hashed = Instant::now();
        self.figures.hashing_s += (hashed - started).as_secs_f64();
        if self
            .container
            .as_ref()
            .is_none_or(|(_, _, written)| *written >= CONTAINER_BYTES)
        {
            let started = Instant::now();
            self.write_pack()?;
            self.figures.writing_s += started.elapsed().as_secs_f64();
            let (id, file) = self.store.new_container()?;
            self.figures.containers += 1;
            self.container = Some((id, file, 0));
        }
        let Some((id, _, written)) = self.container.as_mut() else {
            return Err(io::Error::other("no container to write to"));
        };
        let place = Place {
            container: *id,
            offset: *written,
            len: data.len() as u32,
        };
        let new = self.store.claim(hash, place)?;
        let looked_up = Instant::now();
        self.figures.index_s += (looked_up - hashed).as_secs_f64();
        self.figures.logical_bytes += data.len() as u64;
        self.figures.chunks += 1;
        if let Some(recipe) = self.recipe.as_mut() {
            recipe.push(hash);
        }
        if new {
            *written += data.len() as u64;
            self.pack.extend_from_slice(data);
            if self.pack.len() >= PACK {
                self.write_pack()?;
            }
            self.records.extend_from_slice(&record(hash, place));
            self.figures.stored_bytes += data.len() as u64;
            self.figures.new_chunks += 1;
            self.figures.writing_s += looked_up.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// Writes the pack to the end of its container.
    fn write_pack(&mut self) -> io::Result<()> {
        if let Some((_, file, _)) = self.container.as_mut()
            && !self.pack.is_empty()
        {
            file.write_all(&self.pack)?;
        }
        self.pack.clear();
        Ok(())
    }

    /// What `stream` has gathered, made room for on its first block.
    fn gathered(&mut self, stream: usize) -> &mut Gathered {
        let capacity = GATHER + self.sizes.max as usize;
        self.pending.entry(stream).or_insert_with(|| Gathered {
            bytes: Vec::with_capacity(capacity),
            file_starts: Vec::new(),
        })
    }

    /// Ends `stream`: its last chunk is cut and stored, and what it gathered is let go.
    pub fn end_stream(&mut self, stream: usize) -> io::Result<()> {
        self.cut(stream, true)?;
        self.pending.remove(&stream);
        Ok(())
    }

    /// Writes the gathered index records to the store's log.
    fn log(&mut self, sync: bool) -> io::Result<()> {
        let started = Instant::now();
        self.store.log(&self.records, sync)?;
        self.records.clear();
        self.figures.index_s += started.elapsed().as_secs_f64();
        Ok(())
    }
}

impl Sink for DedupSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.write_stream_block(0, data, &std::sync::atomic::AtomicBool::new(false))
    }

    fn file_starts(&mut self, stream: usize, starts: &[usize]) {
        let gathered = self.gathered(stream);
        let at = gathered.bytes.len();
        gathered
            .file_starts
            .extend(starts.iter().map(|start| at + start));
    }

    fn write_stream_block(
        &mut self,
        stream: usize,
        data: &[u8],
        _give_up: &std::sync::atomic::AtomicBool,
    ) -> io::Result<()> {
        let gathered = self.gathered(stream);
        gathered.bytes.extend_from_slice(data);
        if gathered.bytes.len() >= GATHER + self.sizes.max as usize {
            self.cut(stream, false)?;
        }
        if self.records.len() >= 4096 * RECORD {
            self.log(false)?;
        }
        Ok(())
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        let streams: Vec<usize> = self.pending.keys().copied().collect();
        for stream in streams {
            self.cut(stream, true)?;
        }
        let started = Instant::now();
        self.write_pack()?;
        if fsync && let Some((_, file, _)) = self.container.as_ref() {
            file.sync_data()?;
        }
        self.figures.writing_s += started.elapsed().as_secs_f64();
        self.log(fsync)?;
        if !self.reported {
            self.store.add(&self.figures);
            self.reported = true;
        }
        Ok(())
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn figures(&self) -> Option<SinkFigures> {
        Some(SinkFigures::Dedup(self.store.figures()))
    }
}
