//! How well data reduces, estimated from a stream of its bytes: content-defined chunks
//! (FastCDC), each named by its BLAKE3 hash, and a distinct sample of them (Gibbons' distinct
//! sampling: a chunk is kept when its hash falls under a threshold, halved whenever the sample
//! outgrows its room). Every distinct chunk is in the sample with the same chance whatever its
//! count of copies, so the sampled chunks stand for the distinct data: its share of the
//! logical bytes gives the dedup ratio, and LZ4 over them how well what a dedup store keeps
//! compresses. The room is sized from the error asked for.

use std::collections::HashMap;
use std::io::{self, Read};

use serde::{Deserialize, Serialize};

/// The chunker's sizes: FastCDC's minimum and maximum around an average.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ChunkSizes {
    pub min: u32,
    pub avg: u32,
    pub max: u32,
}

impl ChunkSizes {
    /// Chunks around `avg` bytes (a quarter of it at least, four times at most), within what
    /// FastCDC takes.
    pub fn around(avg: u32) -> Self {
        use fastcdc::v2020::{AVERAGE_MAX, AVERAGE_MIN, MAXIMUM_MAX, MINIMUM_MIN};
        let avg = (avg as usize).clamp(AVERAGE_MIN, AVERAGE_MAX);
        let bytes = |value: usize| u32::try_from(value).unwrap_or(u32::MAX);
        Self {
            min: bytes((avg / 4).max(MINIMUM_MIN)),
            avg: bytes(avg),
            max: bytes((avg * 4).min(MAXIMUM_MAX)),
        }
    }
}

/// The relative error (95 %) an estimate is sized for by default: 2 %.
pub const DEFAULT_ERROR: f64 = 0.02;

/// A running estimate of a stream's reduction.
pub struct ReductionScan {
    sizes: ChunkSizes,
    /// Distinct sampled chunks: hash → (length, LZ4 length).
    sample: HashMap<u128, (u32, u32)>,
    /// Chunks are sampled when their hash's top `level` bits are 0: a chance of 2^-level.
    level: u32,
    room: usize,
    logical_bytes: u64,
    chunks: u64,
    compress_scratch: Vec<u8>,
}

/// What a scan found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReductionEstimate {
    /// Bytes scanned.
    pub logical_bytes: u64,
    pub chunks: u64,
    pub chunk_sizes: ChunkSizes,
    /// Logical bytes ÷ distinct bytes (at least 1).
    pub dedup_ratio: f64,
    /// Half the 95 % interval of the dedup ratio, as a share of it (0.02: ±2 %).
    pub dedup_error: f64,
    /// How the distinct data compresses with LZ4 (raw ÷ compressed, at least 1).
    pub compress_ratio: f64,
    /// Dedup × compression: logical bytes over what a store that does both keeps.
    pub reduction_ratio: f64,
    /// Distinct chunks the estimate rests on, and the chance each distinct chunk had.
    pub sampled_chunks: u64,
    pub sample_rate: f64,
}

impl ReductionScan {
    /// A scan chunking around `sizes`, its sample room sized so the dedup ratio's 95 % error
    /// stays under `error` (a share: 0.02 for ±2 %).
    pub fn new(sizes: ChunkSizes, error: f64) -> Self {
        // The relative error of a sample of n distinct chunks whose lengths vary by a share cv
        // is about 1.96 × sqrt((1 + cv²) / n); FastCDC's lengths vary by about 0.6. The sample
        // holds between half its room and all of it, so the room is twice the n needed.
        let error = error.clamp(0.001, 0.5);
        let needed = (1.96 / error).powi(2) * (1.0 + 0.6 * 0.6);
        let room = (2.0 * needed).ceil() as usize;
        Self {
            sizes,
            sample: HashMap::with_capacity(room.min(1 << 20)),
            level: 0,
            room,
            logical_bytes: 0,
            chunks: 0,
            compress_scratch: Vec::new(),
        }
    }

    /// Chunks everything `reader` gives, to its end.
    pub fn read(&mut self, reader: impl Read) -> io::Result<()> {
        let chunker = fastcdc::v2020::StreamCDC::new(
            reader,
            self.sizes.min as usize,
            self.sizes.avg as usize,
            self.sizes.max as usize,
        );
        for chunk in chunker {
            let chunk = chunk.map_err(io::Error::from)?;
            self.chunk(&chunk.data);
        }
        Ok(())
    }

    /// Bytes chunked so far.
    pub fn logical_bytes(&self) -> u64 {
        self.logical_bytes
    }

    /// One chunk of the stream.
    pub fn chunk(&mut self, data: &[u8]) {
        self.logical_bytes += data.len() as u64;
        self.chunks += 1;
        let hash = u128::from_le_bytes(
            blake3::hash(data).as_bytes()[..16]
                .try_into()
                .unwrap_or([0; 16]),
        );
        if !sampled(hash, self.level) || self.sample.contains_key(&hash) {
            return;
        }
        let compressed = compressed_len(data, &mut self.compress_scratch);
        self.sample
            .insert(hash, (data.len() as u32, compressed as u32));
        while self.sample.len() > self.room {
            self.level += 1;
            let level = self.level;
            self.sample.retain(|hash, _| sampled(*hash, level));
        }
    }

    /// The estimate so far.
    pub fn estimate(&self) -> ReductionEstimate {
        let rate = 0.5f64.powi(self.level as i32);
        let (mut bytes, mut squares, mut compressed) = (0f64, 0f64, 0f64);
        for (len, lz4) in self.sample.values() {
            let len = f64::from(*len);
            bytes += len;
            squares += len * len;
            compressed += f64::from(*lz4);
        }
        let distinct = bytes / rate;
        let dedup_ratio = if distinct > 0.0 {
            (self.logical_bytes as f64 / distinct).max(1.0)
        } else {
            1.0
        };
        let dedup_error = if bytes > 0.0 {
            1.96 * ((1.0 - rate) * squares).sqrt() / bytes
        } else {
            0.0
        };
        let compress_ratio = if compressed > 0.0 {
            (bytes / compressed).max(1.0)
        } else {
            1.0
        };
        ReductionEstimate {
            logical_bytes: self.logical_bytes,
            chunks: self.chunks,
            chunk_sizes: self.sizes,
            dedup_ratio: round(dedup_ratio, 3),
            dedup_error: round(dedup_error, 4),
            compress_ratio: round(compress_ratio, 3),
            reduction_ratio: round(dedup_ratio * compress_ratio, 3),
            sampled_chunks: self.sample.len() as u64,
            sample_rate: rate,
        }
    }
}

/// Whether a chunk of this hash is in the sample at `level`: its top `level` bits are 0.
fn sampled(hash: u128, level: u32) -> bool {
    level == 0 || hash >> (128 - level.min(127)) == 0
}

/// LZ4's output length for `data`.
fn compressed_len(data: &[u8], scratch: &mut Vec<u8>) -> usize {
    scratch.resize(lz4_flex::block::get_maximum_output_size(data.len()), 0);
    lz4_flex::block::compress_into(data, scratch)
        .unwrap_or(data.len())
        .max(1)
}

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(bytes: usize, seed: u64) -> Vec<u8> {
        let mut data = vec![0u8; bytes];
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut data);
        data
    }

    #[test]
    fn the_same_data_twice_dedups_two_to_one_and_random_data_not_at_all() {
        let data = random(8 << 20, 1);
        let mut once = ReductionScan::new(ChunkSizes::around(16 << 10), DEFAULT_ERROR);
        once.read(&data[..]).expect("read");
        let estimate = once.estimate();
        assert_eq!(estimate.dedup_ratio, 1.0, "{estimate:?}");
        assert!(estimate.compress_ratio < 1.01, "{estimate:?}");

        let mut twice = ReductionScan::new(ChunkSizes::around(16 << 10), DEFAULT_ERROR);
        twice.read(&data[..]).expect("read");
        twice.read(&data[..]).expect("read");
        let estimate = twice.estimate();
        assert_eq!(estimate.logical_bytes, 16 << 20);
        assert!((estimate.dedup_ratio - 2.0).abs() < 0.01, "{estimate:?}");
    }

    #[test]
    fn a_small_room_samples_and_states_its_error() {
        // 64 MiB of random data in three copies, with room for a few hundred chunks: the
        // sample thins out, and the estimate is right within the error it states.
        let data = random(64 << 20, 2);
        let mut scan = ReductionScan::new(ChunkSizes::around(8 << 10), 0.15);
        for _ in 0..3 {
            scan.read(&data[..]).expect("read");
        }
        let estimate = scan.estimate();
        assert!(estimate.sample_rate < 0.5, "{estimate:?}");
        assert!(
            estimate.dedup_error > 0.0 && estimate.dedup_error < 0.15,
            "{estimate:?}"
        );
        assert!(
            (estimate.dedup_ratio - 3.0).abs() <= 3.0 * estimate.dedup_error,
            "{estimate:?}"
        );
    }
}
