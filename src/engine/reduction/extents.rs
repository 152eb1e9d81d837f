//! A file's data without its holes: a sparse file (a disk image, a database preallocated by
//! `set_len`) is as long as its length says but holds only what its data extents hold, and a
//! plan built on its length would read, copy or expect gigabytes of zeros that are not there.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;

/// A file that may hold fewer bytes than its length: fewer blocks allocated than its length
/// needs. Only such files are walked extent by extent (a compressed file system also
/// allocates fewer blocks: its walk then finds no holes).
pub fn may_be_sparse(metadata: &std::fs::Metadata) -> bool {
    metadata.blocks().saturating_mul(512) < metadata.len()
}

/// The next data extent at or after `at` (start and end, end at most `len`); `None` past the
/// last. A file system that cannot tell holes gives the rest of the file as data.
fn next_extent(file: &File, at: u64, len: u64) -> io::Result<Option<(u64, u64)>> {
    if at >= len {
        return Ok(None);
    }
    let start = match rustix::fs::seek(file, rustix::fs::SeekFrom::Data(at)) {
        Ok(start) => start,
        Err(rustix::io::Errno::NXIO) => return Ok(None),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::OPNOTSUPP) => return Ok(Some((at, len))),
        Err(error) => return Err(error.into()),
    };
    if start >= len {
        return Ok(None);
    }
    let end = match rustix::fs::seek(file, rustix::fs::SeekFrom::Hole(start)) {
        Ok(end) => end.min(len),
        Err(error) => return Err(error.into()),
    };
    Ok(Some((start, end.max(start))))
}

/// The bytes of `file` (of length `len`) that lie in data extents.
pub fn data_bytes(file: &File, len: u64) -> io::Result<u64> {
    let (mut at, mut data_bytes) = (0u64, 0u64);
    while let Some((start, end)) = next_extent(file, at, len)? {
        data_bytes += end - start;
        at = end;
    }
    Ok(data_bytes)
}

/// Reads a file's data extents one after another, skipping its holes, and counts what it
/// read; a file that is not sparse is read straight through.
pub struct DataReader {
    file: File,
    len_bytes: u64,
    sparse: bool,
    /// Where the next read starts, and the end of the extent it is in.
    at: u64,
    extent_end: u64,
    data_bytes: u64,
}

impl DataReader {
    /// A reader of `file`'s data from its start.
    pub fn new(file: File) -> io::Result<Self> {
        let metadata = file.metadata()?;
        Ok(Self {
            sparse: may_be_sparse(&metadata),
            len_bytes: metadata.len(),
            file,
            at: 0,
            extent_end: 0,
            data_bytes: 0,
        })
    }

    /// Bytes read so far: at the end, the file's data.
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Bytes of the file's length in holes (valid once read to the end).
    pub fn hole_bytes(&self) -> u64 {
        self.len_bytes.saturating_sub(self.data_bytes)
    }
}

impl Read for DataReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.sparse {
            let read = self.file.read(buf)?;
            self.data_bytes += read as u64;
            return Ok(read);
        }
        if self.at >= self.extent_end {
            match next_extent(&self.file, self.at, self.len_bytes)? {
                None => return Ok(0),
                Some((start, end)) => {
                    self.file.seek(SeekFrom::Start(start))?;
                    (self.at, self.extent_end) = (start, end);
                }
            }
        }
        let want = buf
            .len()
            .min(usize::try_from(self.extent_end - self.at).unwrap_or(usize::MAX));
        let read = self.file.read(&mut buf[..want])?;
        if read == 0 {
            // The file shrank under the reader: what is left is not there.
            self.extent_end = self.at;
            self.len_bytes = self.at;
            return Ok(0);
        }
        self.at += read as u64;
        self.data_bytes += read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_sparse_file_reads_as_its_data_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sparse");
        let mut file = File::create(&path).expect("file");
        file.set_len(1 << 30).expect("length");
        file.seek(SeekFrom::Start(512 << 20)).expect("seek");
        file.write_all(&[5u8; 1 << 20]).expect("data");
        file.sync_all().expect("sync");
        let file = File::open(&path).expect("open");
        assert!(may_be_sparse(&file.metadata().expect("metadata")));
        assert_eq!(data_bytes(&file, 1 << 30).expect("extents"), 1 << 20);
        let mut reader = DataReader::new(file).expect("reader");
        let mut read = Vec::new();
        reader.read_to_end(&mut read).expect("read");
        assert_eq!(read, vec![5u8; 1 << 20]);
        assert_eq!(reader.data_bytes(), 1 << 20);
        assert_eq!(reader.hole_bytes(), (1 << 30) - (1 << 20));
    }
}
