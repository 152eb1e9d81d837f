//! Page-aligned I/O buffers: O_DIRECT needs the memory itself aligned, not just the length.

use bytemuck::{Pod, Zeroable};

/// The alignment of every buffer: one page, which satisfies O_DIRECT on Linux file systems.
pub const PAGE: usize = 4096;

/// A transparent huge page: buffers of a megabyte or more are made of these, so O_DIRECT pins
/// one page table entry per 2 MiB instead of 512.
const HUGE: usize = 2 << 20;
/// Buffers at least this large are backed by huge pages.
const HUGE_FROM: usize = 1 << 20;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(4096))]
struct Page([u8; PAGE]);

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(2097152))]
struct HugePage([u8; HUGE]);

enum Storage {
    Pages(Vec<Page>),
    Huge(Vec<HugePage>),
}

/// A heap buffer whose start is 4096-aligned, allocated once and reused for every block.
pub struct AlignedBuf {
    storage: Storage,
    len: usize,
    generated_len: usize,
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes; the capacity is rounded up to whole pages (to whole
    /// 2 MiB huge pages from 1 MiB up, which the kernel is asked to back with huge pages).
    pub fn new(len: usize) -> Self {
        let storage = if len >= HUGE_FROM {
            Storage::Huge(huge_pages(len.div_ceil(HUGE)))
        } else {
            Storage::Pages(bytemuck::allocation::zeroed_vec(len.div_ceil(PAGE).max(1)))
        };
        Self {
            storage,
            len,
            generated_len: 0,
        }
    }

    /// The usable length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole page-rounded capacity, for callers that must pad a write to a page.
    ///
    /// Any writable access forgets the generated prefix: the caller may overwrite it.
    pub fn capacity_mut(&mut self) -> &mut [u8] {
        self.generated_len = 0;
        match &mut self.storage {
            Storage::Pages(pages) => bytemuck::cast_slice_mut(pages),
            Storage::Huge(pages) => bytemuck::cast_slice_mut(pages),
        }
    }

    /// How many leading bytes still hold a data generator's output from an earlier fill, so a
    /// generator can refresh them instead of copying every byte again.
    pub fn generated_len(&self) -> usize {
        self.generated_len
    }

    /// Records that the leading `len` bytes hold a data generator's output.
    pub fn set_generated_len(&mut self, len: usize) {
        self.generated_len = len.min(self.len);
    }

    /// The buffer's bytes.
    pub fn as_slice(&self) -> &[u8] {
        let all: &[u8] = match &self.storage {
            Storage::Pages(pages) => bytemuck::cast_slice(pages),
            Storage::Huge(pages) => bytemuck::cast_slice(pages),
        };
        &all[..self.len]
    }

    /// The buffer's bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut self.capacity_mut()[..len]
    }
}

/// `count` zeroed huge pages. The kernel is asked for transparent huge pages before the memory
/// is first touched, since pages faulted in before the advice would stay small.
fn huge_pages(count: usize) -> Vec<HugePage> {
    let mut pages: Vec<HugePage> = Vec::with_capacity(count);
    let start = pages.spare_capacity_mut().as_mut_ptr().cast::<u8>();
    let bytes = count * HUGE;
    // SAFETY: `start` points at `bytes` bytes of capacity this Vec owns, aligned to 2 MiB by
    // HugePage's alignment. MADV_HUGEPAGE only changes how the kernel backs those pages (a
    // refusal, with THP disabled, is ignored). Every byte is then written with zero, a valid
    // HugePage (it is Pod), before the length covers them.
    unsafe {
        let _ = rustix::mm::madvise(start.cast(), bytes, rustix::mm::Advice::LinuxHugepage);
        std::ptr::write_bytes(start, 0, bytes);
        pages.set_len(count);
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_sized() {
        let mut buf = AlignedBuf::new(10_000);
        assert_eq!(buf.len(), 10_000);
        assert_eq!(buf.as_slice().as_ptr() as usize % PAGE, 0);
        assert_eq!(buf.capacity_mut().len(), 3 * PAGE);
        buf.as_mut_slice()[9_999] = 7;
        assert_eq!(buf.as_slice()[9_999], 7);
        buf.set_generated_len(20_000);
        assert_eq!(buf.generated_len(), 10_000);
        buf.as_mut_slice();
        assert_eq!(buf.generated_len(), 0);
    }
}
