//! Where a tree's repeats go, so that a chunker that starts afresh at every file (the lab's
//! scan, restic, borg) finds the dedup ratio asked, as well as one that chunks a backup's
//! stream. A file that would take the tree past its share of new bytes (by more than a small
//! slack) is a byte-for-byte copy of an earlier file of its size class (a power of two), which
//! every chunker meets whole, as a real tree's duplicates mostly are. Any other file is whole
//! units of the tree's unit stream (the first starting with the file) and a tail of new bytes;
//! the bytes made beside the stream count in its ratio, so where no copy is at hand (the
//! tree's first file of a size, the lone largest one) the stream repeats units within and
//! across files to hold the ratio. Small files stay new while larger ones can carry the
//! repeats, since a chunker that cuts a stream cannot find a copy smaller than its chunks.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::data::DataPool;
use crate::engine::reduction::{DedupSettings, UnitStream};

/// New bytes a tree may run ahead of its ratio before its small files are copies: this share
/// of what it has written, and a unit besides.
const SLACK_SHARE: f64 = 0.005;

/// New bytes the unit stream may run ahead of the ratio before it repeats units itself: this
/// share of what the tree has written, and this many units besides. Whole-file copies make
/// the repeats; the stream's own hold the ratio where they cannot.
const LEAD_SHARE: f64 = 0.002;
const LEAD_UNITS: f64 = 8.0;

/// The data of a tree's files as they are written.
pub(super) struct Placement {
    /// Whole units of the files of at least a unit.
    units: UnitStream,
    /// New bytes never repeated: tails, and small files that are not copies.
    fresh: UnitStream,
    /// Files written from the streams, by size class (a power of two), for copies.
    originals: HashMap<u64, Vec<(PathBuf, u64)>>,
    /// The share of bytes the ratio wants new.
    new_share: f64,
    rng: ChaCha8Rng,
    written: u64,
    /// New bytes written beside the unit stream.
    new_outside: u64,
}

impl Placement {
    /// Data over `pool` repeating as `dedup` asks; `seed` sets every choice.
    pub(super) fn new(pool: Arc<DataPool>, dedup: DedupSettings, seed: u64) -> Self {
        use rand::SeedableRng;
        let fresh = DedupSettings {
            ratio: 1.0,
            unit: dedup.unit,
        };
        Self {
            units: UnitStream::new(Arc::clone(&pool), dedup, seed),
            fresh: UnitStream::new(pool, fresh, seed ^ 0x0f2e_5b17_a11e_0000),
            originals: HashMap::new(),
            new_share: 1.0 / dedup.ratio.max(1.0),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x005b_a11f_11e5),
            written: 0,
            new_outside: 0,
        }
    }

    /// Writes the file at `path` of about `size` bytes; gives the bytes it holds (a copy of an
    /// earlier file has that file's size, at most `room`).
    pub(super) fn write(
        &mut self,
        path: &Path,
        size: u64,
        room: u64,
        buffer: &mut [u8],
    ) -> io::Result<u64> {
        let unit = self.units.unit();
        let class = size.max(1).next_power_of_two();
        let slack = SLACK_SHARE * self.written as f64 + unit as f64;
        let ahead = self.units.new_bytes_ahead();
        let ahead_if_new = ahead + size as f64 * (1.0 - self.new_share);
        // A copy when new bytes would take the tree past its slack, and the copy leaves it
        // nearer its share of new bytes than new bytes would.
        let copy =
            ahead_if_new > slack && (ahead - size as f64 * self.new_share).abs() < ahead_if_new;
        let original = copy
            .then(|| self.originals.get(&class))
            .flatten()
            .and_then(|files| files.get(self.rng.random_range(0..files.len())).cloned())
            .filter(|(_, original_size)| *original_size <= room);
        if let Some((original, original_size)) = original {
            std::fs::copy(&original, path)?;
            self.units.count_outside(original_size, false);
            self.written += original_size;
            return Ok(original_size);
        }
        let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
        let body = size / unit * unit;
        if body > 0 {
            self.units
                .set_lead(LEAD_SHARE * self.written as f64 + LEAD_UNITS * unit as f64);
            self.units.align();
            self.units.repeat_only_from_here();
            copy_out(&mut self.units, body, &mut file, buffer)?;
        }
        let tail = size - body;
        self.fresh.align();
        copy_out(&mut self.fresh, tail, &mut file, buffer)?;
        self.units.count_outside(tail, true);
        self.originals
            .entry(class)
            .or_default()
            .push((path.to_path_buf(), size));
        self.written += size;
        self.new_outside += tail;
        Ok(size)
    }

    /// Bytes written new: the bytes written over these is the ratio a chunker that meets
    /// every copy whole finds.
    pub(super) fn new_bytes(&self) -> u64 {
        self.units.tally().new_units * self.units.unit() + self.new_outside
    }
}

/// `bytes` of `data` into `file`, through `buffer`.
pub(super) fn copy_out(
    data: &mut UnitStream,
    mut bytes: u64,
    file: &mut std::fs::File,
    buffer: &mut [u8],
) -> io::Result<()> {
    while bytes > 0 {
        let piece = bytes.min(buffer.len() as u64) as usize;
        data.fill(&mut buffer[..piece]);
        file.write_all(&buffer[..piece])?;
        bytes -= piece as u64;
    }
    Ok(())
}
