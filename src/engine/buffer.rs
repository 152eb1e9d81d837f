//! Page-aligned I/O buffers: O_DIRECT needs the memory itself aligned, not just the length.

use bytemuck::{Pod, Zeroable};

/// The alignment of every buffer: one page, which satisfies O_DIRECT on Linux file systems.
pub const PAGE: usize = 4096;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(4096))]
struct Page([u8; PAGE]);

/// A heap buffer whose start is 4096-aligned, allocated once and reused for every block.
pub struct AlignedBuf {
    pages: Vec<Page>,
    len: usize,
    generated_len: usize,
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes; the capacity is rounded up to whole pages.
    pub fn new(len: usize) -> Self {
        let pages = vec![Page([0; PAGE]); len.div_ceil(PAGE).max(1)];
        Self {
            pages,
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
        bytemuck::cast_slice_mut(&mut self.pages)
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
        &bytemuck::cast_slice(&self.pages)[..self.len]
    }

    /// The buffer's bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut self.capacity_mut()[..len]
    }
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
