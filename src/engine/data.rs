//! Generated data of a chosen compressibility, produced at memory speed.
//!
//! A pool of 4 KiB chunks is built once: each chunk holds `4096 / ratio` random bytes followed
//! by zeros, so a real compressor shrinks it by about `ratio`. Blocks are then assembled from
//! pieces of the pool at random chunk offsets, which costs a memory copy per byte.

use std::sync::Arc;

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CHUNK: usize = 4096;
const POOL_BYTES: usize = 16 << 20;
const PIECE: usize = 64 << 10;

/// 4 KiB chunks of a chosen compressibility, built once and shared by every stream of a run.
pub struct DataPool {
    bytes: Vec<u8>,
}

impl DataPool {
    /// A pool whose bytes depend only on `seed` and `compress_ratio`.
    pub fn new(seed: u64, compress_ratio: f64) -> Arc<Self> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let random_bytes = random_bytes_per_chunk(compress_ratio);
        let mut bytes = vec![0u8; POOL_BYTES];
        for chunk in bytes.chunks_mut(CHUNK) {
            rng.fill_bytes(&mut chunk[..random_bytes]);
        }
        Arc::new(Self { bytes })
    }
}

/// Produces an endless, seeded stream of bytes that compresses by about the pool's ratio.
pub struct DataGenerator {
    pool: Arc<DataPool>,
    rng: ChaCha8Rng,
}

impl DataGenerator {
    /// A generator whose output depends only on the pool and `seed`.
    pub fn new(pool: Arc<DataPool>, seed: u64) -> Self {
        Self {
            pool,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// Fills `buf` entirely with the next bytes of the stream.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let pool = &self.pool.bytes;
        let chunks = POOL_BYTES / CHUNK;
        for piece in buf.chunks_mut(PIECE) {
            let start = self.rng.random_range(0..chunks) * CHUNK;
            let available = POOL_BYTES - start;
            if piece.len() <= available {
                piece.copy_from_slice(&pool[start..start + piece.len()]);
            } else {
                piece[..available].copy_from_slice(&pool[start..]);
                let rest = piece.len() - available;
                piece[available..].copy_from_slice(&pool[..rest]);
            }
        }
    }
}

fn random_bytes_per_chunk(compress_ratio: f64) -> usize {
    let ratio = if compress_ratio.is_finite() {
        compress_ratio.max(1.0)
    } else {
        1.0
    };
    ((CHUNK as f64 / ratio).round() as usize).clamp(1, CHUNK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes() {
        let mut a = vec![0u8; 300_000];
        let mut b = vec![0u8; 300_000];
        let pool = DataPool::new(7, 2.0);
        DataGenerator::new(Arc::clone(&pool), 1).fill(&mut a);
        DataGenerator::new(DataPool::new(7, 2.0), 1).fill(&mut b);
        assert_eq!(a, b);
        DataGenerator::new(pool, 2).fill(&mut b);
        assert_ne!(a, b);
    }
}
