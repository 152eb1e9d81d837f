//! A run's content-addressed store on disk: a directory of the lab's under the target path
//! (`backlab-run-TAG.dedup`), holding containers (files of chunks, appended to, one writer
//! each) and the index (a log of 32-byte records: chunk hash, container, offset, length), with
//! the index also held in memory and shared by the run's writers. The directory is removed when
//! the store is dropped, whatever became of the run.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{Mode, OFlags};

use super::DedupFigures;
use crate::engine::error::EngineError;
use crate::engine::target::files::{
    LAB_FILE_PREFIX, NoFollowError, create_file_in, open_dir_no_follow,
};

/// Bytes a container holds before its writer starts the next.
pub const CONTAINER_BYTES: u64 = 64 << 20;
/// Bytes of one index record.
pub const RECORD: usize = 32;
/// Distinct chunks the index holds at most (about 1 GiB of memory): a run that would store
/// more fails, saying so, instead of taking the lab's memory.
pub const MAX_CHUNKS: usize = 1 << 24;

/// Where a stored chunk lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub container: u32,
    pub offset: u64,
    pub len: u32,
}

/// The store of one run.
pub struct Store {
    /// The store's directory, for messages and for its removal.
    root: PathBuf,
    dir: OwnedFd,
    index: Mutex<HashMap<u128, Place>>,
    index_log: Mutex<File>,
    next_container: AtomicU32,
    /// The writers' figures, summed as each one finishes.
    figures: Mutex<DedupFigures>,
}

impl Store {
    /// Creates the store's directory under `target` (following no link on the way), with an
    /// empty index.
    pub fn create(
        target: &Path,
        tag: &str,
        words: String,
        avg_chunk: u32,
    ) -> Result<Self, EngineError> {
        let create_error = |source: io::Error| EngineError::TargetCreate {
            path: target.to_path_buf(),
            source,
        };
        let parent = open_dir_no_follow(target).map_err(|error| match error {
            NoFollowError::Link => EngineError::TargetLink {
                path: target.to_path_buf(),
            },
            NoFollowError::Io(source) => create_error(source),
        })?;
        let name = format!("{LAB_FILE_PREFIX}{tag}.dedup");
        rustix::fs::mkdirat(&parent, name.as_str(), Mode::from_raw_mode(0o700))
            .map_err(|error| create_error(error.into()))?;
        let root = target.join(&name);
        let dir = rustix::fs::openat(
            &parent,
            name.as_str(),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|error| create_error(error.into()));
        let dir = match dir {
            Ok(dir) => dir,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&root);
                return Err(error);
            }
        };
        let index_log = match create_file_in(&dir, "index.log", false) {
            Ok(file) => file,
            Err(source) => {
                let _ = std::fs::remove_dir_all(&root);
                return Err(create_error(source));
            }
        };
        Ok(Self {
            root,
            dir,
            index: Mutex::new(HashMap::new()),
            index_log: Mutex::new(index_log),
            next_container: AtomicU32::new(0),
            figures: Mutex::new(DedupFigures {
                store: words,
                avg_chunk,
                ..DedupFigures::default()
            }),
        })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A new container file, and its number.
    pub fn new_container(&self) -> io::Result<(u32, File)> {
        let id = self.next_container.fetch_add(1, Ordering::Relaxed);
        let file = create_file_in(&self.dir, &container_name(id), false)?;
        Ok((id, file))
    }

    /// A container opened for reading.
    pub fn open_container(&self, id: u32) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.dir,
            container_name(id).as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }

    /// Records `place` for `hash` unless the store has the chunk already: true when it is new
    /// and its bytes must be written there. Fails once the index is full (`MAX_CHUNKS`).
    pub fn claim(&self, hash: u128, place: Place) -> io::Result<bool> {
        let mut index = self.index.lock().unwrap_or_else(PoisonError::into_inner);
        let full = index.len() >= MAX_CHUNKS;
        match index.entry(hash) {
            std::collections::hash_map::Entry::Occupied(_) => Ok(false),
            std::collections::hash_map::Entry::Vacant(_) if full => Err(io::Error::other(format!(
                "the dedup store's index holds {MAX_CHUNKS} distinct chunks, all it may; give \
                 target.avg_chunk a larger size or the run a smaller params.size"
            ))),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(place);
                Ok(true)
            }
        }
    }

    /// Where the chunk of `hash` lies.
    pub fn place(&self, hash: u128) -> Option<Place> {
        self.index
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&hash)
            .copied()
    }

    /// Appends index records (`RECORD` bytes each) to the log; flushed with `sync`.
    pub fn log(&self, records: &[u8], sync: bool) -> io::Result<()> {
        let mut log = self
            .index_log
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        log.write_all(records)?;
        if sync {
            log.sync_data()?;
        }
        Ok(())
    }

    /// Adds one writer's figures to the store's.
    pub fn add(&self, writer: &DedupFigures) {
        self.figures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(writer);
    }

    /// Starts the run's own figures once the store holds the earlier generations of its
    /// dataset: what they left is kept as the store's holding, every count starts again.
    pub fn begin_run(&self, earlier_generations: u32) {
        let mut figures = self.figures.lock().unwrap_or_else(PoisonError::into_inner);
        *figures = DedupFigures {
            store: std::mem::take(&mut figures.store),
            avg_chunk: figures.avg_chunk,
            held_bytes: figures.held_bytes + figures.stored_bytes,
            earlier_generations,
            ..DedupFigures::default()
        };
    }

    /// The figures of every writer that has finished.
    pub fn figures(&self) -> DedupFigures {
        self.figures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // The directory and all in it are the lab's; what cannot be removed is left for the
        // start-up sweep. remove_dir_all does not follow links.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn container_name(id: u32) -> String {
    format!("container-{id:06}.bin")
}

/// One index record: the hash, the container, the offset and the length, little-endian.
pub fn record(hash: u128, place: Place) -> [u8; RECORD] {
    let mut bytes = [0u8; RECORD];
    bytes[..16].copy_from_slice(&hash.to_le_bytes());
    bytes[16..20].copy_from_slice(&place.container.to_le_bytes());
    bytes[20..28].copy_from_slice(&place.offset.to_le_bytes());
    bytes[28..].copy_from_slice(&place.len.to_le_bytes());
    bytes
}
