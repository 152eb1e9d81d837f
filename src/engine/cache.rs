//! The page cache: how much of a file is resident (mincore) and how to evict it (fadvise).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

use rustix::fs::{Advice, fadvise};

use super::buffer::PAGE;

/// Largest window mapped at once when counting resident pages.
const WINDOW: u64 = 1 << 30;

/// Asks the kernel to drop the file's clean pages from the page cache.
pub fn evict(file: &File) -> io::Result<()> {
    fadvise(file, 0, None, Advice::DontNeed)?;
    Ok(())
}

/// Flushes the dirty pages of the file system holding `path`, so that eviction can drop them.
pub fn sync_filesystem(path: &Path) -> io::Result<()> {
    let file = File::open(path)?;
    rustix::fs::syncfs(&file)?;
    Ok(())
}

/// Bytes of the file's first `len` bytes that are in the page cache.
pub fn resident_bytes(file: &File, len: u64) -> io::Result<u64> {
    let mut resident_pages = 0u64;
    let mut offset = 0u64;
    let mut vector = Vec::new();
    while offset < len {
        let window = (len - offset).min(WINDOW) as usize;
        let pages = window.div_ceil(PAGE);
        vector.clear();
        vector.resize(pages, 0u8);
        // SAFETY: the mapping is private to this function: created read-only, inspected only by
        // mincore (which never touches the pages), and unmapped before returning. `vector` has
        // one byte per page of the window, as mincore requires.
        let counted = unsafe {
            let address = libc::mmap(
                std::ptr::null_mut(),
                window,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset as libc::off_t,
            );
            if address == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let status = libc::mincore(address, window, vector.as_mut_ptr());
            let error = io::Error::last_os_error();
            libc::munmap(address, window);
            if status != 0 {
                return Err(error);
            }
            vector.iter().filter(|&&page| page & 1 == 1).count() as u64
        };
        resident_pages += counted;
        offset += window as u64;
    }
    Ok((resident_pages * PAGE as u64).min(len))
}

/// Entries a plan check walks at most to size a source; past that the source is taken to be
/// larger than any page cache it is compared with.
const WALK_BUDGET: usize = 100_000;

/// A source of paths small enough to sit in this machine's memory: its bytes and the memory's,
/// when it is. A buffered read of it without eviction measures the page cache, not the disks,
/// once it has been read.
pub fn fits_in_memory(paths: &[std::path::PathBuf]) -> Option<(u64, u64)> {
    let memory = super::provenance::memory_bytes()?;
    tree_bytes_below(paths, memory).map(|bytes| (bytes, memory))
}

/// The bytes of the regular files under `paths`, when they are fewer than `limit`; `None`
/// when they are not, or when the tree has more entries than a quick walk looks at.
pub fn tree_bytes_below(paths: &[std::path::PathBuf], limit: u64) -> Option<u64> {
    let mut bytes = 0u64;
    let whole = each_file(paths, |metadata| {
        bytes += metadata.len();
        bytes < limit
    });
    whole.then_some(bytes)
}

/// How long a tree's bytes counted for an estimate are taken as still true.
const TREE_BYTES_KEPT: std::time::Duration = std::time::Duration::from_secs(60);

/// The bytes of the regular files under `paths` (`None` past a quick walk's budget), counted
/// at most once a minute for the same paths: an estimate asks for them once per run of a
/// campaign and again each time its page is drawn, and a walk of a large tree takes seconds.
pub fn tree_bytes_recent(paths: &[std::path::PathBuf]) -> Option<u64> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    use std::time::Instant;
    type Counted = HashMap<Vec<std::path::PathBuf>, (Instant, Option<u64>)>;
    static COUNTED: OnceLock<Mutex<Counted>> = OnceLock::new();
    let counted = COUNTED.get_or_init(|| Mutex::new(HashMap::new()));
    let now = Instant::now();
    if let Ok(mut counted) = counted.lock() {
        counted.retain(|_, (at, _)| now.duration_since(*at) < TREE_BYTES_KEPT);
        if let Some((_, bytes)) = counted.get(paths) {
            return *bytes;
        }
    }
    let bytes = tree_bytes_below(paths, u64::MAX);
    if let Ok(mut counted) = counted.lock() {
        counted.insert(paths.to_vec(), (now, bytes));
    }
    bytes
}

/// Hands the metadata of each regular file under `paths` to `visit`, links not followed and on
/// each root's file system, until `visit` says stop or the walk has looked at
/// [`WALK_BUDGET`] entries; whether it went through them all.
fn each_file(
    paths: &[std::path::PathBuf],
    mut visit: impl FnMut(&std::fs::Metadata) -> bool,
) -> bool {
    let mut entries = 0usize;
    for root in paths {
        let walker = walkdir::WalkDir::new(root)
            .follow_links(false)
            .same_file_system(true);
        for entry in walker.into_iter().flatten() {
            entries += 1;
            if entries > WALK_BUDGET {
                return false;
            }
            if entry.file_type().is_file()
                && let Ok(metadata) = entry.metadata()
                && !visit(&metadata)
            {
                return false;
            }
        }
    }
    true
}

/// The holes in the sparse files under `paths`, when they add up to `at_least` or more:
/// their apparent and allocated bytes. A read of a hole reads no disk, and a tool that does
/// not keep holes stores and restores them as data, so a sparse source measures neither its
/// disks nor its size. `None` when the holes are fewer, or past a quick walk's budget.
pub fn sparse_files(paths: &[std::path::PathBuf], at_least: u64) -> Option<SparseFiles> {
    use std::os::unix::fs::MetadataExt;
    let mut sparse = SparseFiles::default();
    each_file(paths, |metadata| {
        let allocated = metadata.blocks().saturating_mul(512);
        if allocated < metadata.len() {
            sparse.files += 1;
            sparse.apparent_bytes += metadata.len();
            sparse.allocated_bytes += allocated;
        }
        true
    });
    (sparse.hole_bytes() >= at_least).then_some(sparse)
}

/// The sparse files of a source: how many, and their apparent and allocated sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SparseFiles {
    pub files: u64,
    pub apparent_bytes: u64,
    pub allocated_bytes: u64,
}

impl SparseFiles {
    /// The bytes of their holes: read as zeros, written by no disk.
    pub fn hole_bytes(&self) -> u64 {
        self.apparent_bytes.saturating_sub(self.allocated_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn written_pages_are_resident_until_evicted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let mut file = File::create(&path).expect("create");
        file.write_all(&vec![1u8; 1 << 20]).expect("write");
        file.sync_all().expect("sync");
        let file = File::open(&path).expect("open");
        assert_eq!(resident_bytes(&file, 1 << 20).expect("mincore"), 1 << 20);
        evict(&file).expect("evict");
        assert!(resident_bytes(&file, 1 << 20).expect("mincore") < 1 << 18);
    }
}
