//! Generated data of a chosen dedup ratio, as vdbench's `dedupratio` and `dedupunit` make it:
//! a stream of `unit`-byte units, each either new or a copy of a unit the stream made before.
//! Units come in runs, as a night's backup meets its data: a run of copies of consecutive
//! earlier units (an unchanged stretch, up to 64 units on average), then a run of new units
//! for as long as the stream has made fewer than 1 ÷ ratio new units. A run of copies ends
//! early once the stream lacks a few new units, so the ratio holds within a few units at any
//! point, not only on average. A unit's bytes
//! follow from its number alone: the compressibility pool's chunks from an offset the number
//! picks, each 4 KiB chunk stamped with the number and its place, so no two units share a chunk
//! and a copy is byte for byte its original. What was made is counted as it is made.

use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::engine::data::{DataPool, POOL_CHUNK};

/// The unit that repeats, unless a spec says.
pub const DEFAULT_DEDUP_UNIT: u64 = 128 << 10;
/// Distinct units that change together from one generation to the next: an edit reaches a
/// stretch of data, not scattered units, so a store's chunks straddling a change's ends are
/// a small part of what it changed.
const CHANGE_SPAN: u64 = 8;
/// Mean units in a run of copies, unless it ends early (`MAX_DEFICIT`).
const RUN_UNITS: f64 = 64.0;
/// New units a stream may lack before a run of copies ends: the ratio made holds within
/// this many units at any point.
const MAX_DEFICIT: f64 = 16.0;
/// Bytes of each 4 KiB chunk a unit's stamp replaces (never more than its random bytes).
const STAMP: usize = 16;

/// How much a generated stream repeats itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DedupSettings {
    /// Units made ÷ distinct units; 1.0 makes every unit new.
    pub ratio: f64,
    /// Bytes in a unit: what repeats, whole.
    pub unit: u64,
}

/// Successive full backups of one dataset, as a week of nightly fulls reaches a dedup store:
/// how many, and the share of the dataset's distinct units that changes from one to the next.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Generations {
    pub count: u32,
    /// 0.05: one distinct unit in twenty has new contents in each generation after the first.
    pub change_rate: f64,
}

/// Units a stream made, and how many of them were new.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitTally {
    pub units: u64,
    pub new_units: u64,
    /// New units whose contents changed in this generation (none in the first).
    #[serde(default)]
    pub changed_units: u64,
}

impl UnitTally {
    /// Units made ÷ new units: the dedup ratio a store with the unit as its chunk achieves.
    pub fn ratio(&self) -> Option<f64> {
        (self.new_units > 0).then(|| self.units as f64 / self.new_units as f64)
    }
}

/// What every stream of a run made, summed as they make it.
#[derive(Debug, Default)]
pub struct UnitsMade(std::sync::Mutex<UnitTally>);

impl UnitsMade {
    /// Adds a stream's units since it last said.
    pub fn add(&self, units: UnitTally) {
        let mut tally = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tally.units += units.units;
        tally.new_units += units.new_units;
        tally.changed_units += units.changed_units;
    }

    /// The units made so far.
    pub fn tally(&self) -> UnitTally {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The dedup ratio generated data achieved, counted as it was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GeneratedDedup {
    /// The ratio asked for, and the one made: units ÷ new units.
    pub asked: f64,
    pub achieved: f64,
    pub unit: u64,
    pub units: u64,
    pub new_units: u64,
    /// The generation the data was (1 = the first full backup), when the source has several,
    /// with the change rate asked for and the one made: changed ÷ new units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<GenerationMade>,
}

/// One generation of a dataset as it was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GenerationMade {
    pub generation: u32,
    pub of: u32,
    pub change_rate_asked: f64,
    pub change_rate_achieved: f64,
}

/// An endless stream of units; its bytes depend only on the pool, the settings and the seed.
pub struct UnitStream {
    pool: Arc<DataPool>,
    unit: usize,
    new_chance: f64,
    rng: ChaCha8Rng,
    /// Distinguishes this stream's units from every other stream's.
    tag: u64,
    /// The unit being given out (its number, and the key its bytes follow from: the number
    /// itself until a generation changes it), and how many of its bytes are out.
    current: u64,
    content: u64,
    at: usize,
    started: bool,
    next_new: u64,
    run: Run,
    tally: UnitTally,
    /// Which full backup of the dataset this is (1 = the first), and the share of distinct
    /// units each later one changes.
    generation: u32,
    change_rate: f64,
    /// Bytes made beside the stream that count in its ratio (a tree's small files and file
    /// tails), and how many of them were new.
    outside_bytes: u64,
    outside_new_bytes: u64,
    /// New bytes the stream may make beyond its ratio before it makes copies.
    lead: f64,
    /// The first unit a copy may repeat.
    copy_floor: u64,
}

/// The run the stream is in: units left in it, and for a run of copies the next unit copied.
#[derive(Debug, Clone, Copy)]
struct Run {
    left: u32,
    copy_of: Option<u64>,
}

impl UnitStream {
    /// A stream of `settings.unit`-byte units over `pool`; `seed` sets its choices and its
    /// units' stamps.
    pub fn new(pool: Arc<DataPool>, settings: DedupSettings, seed: u64) -> Self {
        let unit = (settings.unit as usize).max(POOL_CHUNK) / POOL_CHUNK * POOL_CHUNK;
        let ratio = if settings.ratio.is_finite() {
            settings.ratio.max(1.0)
        } else {
            1.0
        };
        Self {
            pool,
            unit,
            new_chance: 1.0 / ratio,
            rng: ChaCha8Rng::seed_from_u64(seed),
            tag: mix(seed ^ 0x005e_ed0f_d1ff),
            current: 0,
            content: 0,
            at: 0,
            started: false,
            next_new: 0,
            run: Run {
                left: 0,
                copy_of: None,
            },
            tally: UnitTally::default(),
            generation: 1,
            change_rate: 0.0,
            outside_bytes: 0,
            outside_new_bytes: 0,
            lead: 0.0,
            copy_floor: 0,
        }
    }

    /// Bytes in a unit.
    pub fn unit(&self) -> u64 {
        self.unit as u64
    }

    /// Counts `bytes` made beside the stream in its ratio, `new` or copies of data made
    /// before: the stream then makes as many more or fewer new units as it takes for the
    /// whole to hold the ratio.
    pub fn count_outside(&mut self, bytes: u64, new: bool) {
        self.outside_bytes += bytes;
        if new {
            self.outside_new_bytes += bytes;
        }
    }

    /// Lets the stream make up to `bytes` more new bytes than its ratio asks before it makes
    /// copies: a tree whose files are copied whole makes its repeats so, and the stream's own
    /// copies only hold the ratio where whole copies fall short.
    pub fn set_lead(&mut self, bytes: f64) {
        self.lead = bytes.max(0.0);
    }

    /// Copies made from here on repeat only units made from here on: a tree's file repeats
    /// its own data, so a chunker that starts afresh at each file meets each copied stretch
    /// as it was written, not stretches of several files run together.
    pub fn repeat_only_from_here(&mut self) {
        self.copy_floor = self.next_new;
        self.run.left = 0;
    }

    /// Ends the unit being given out: the next byte starts a unit. What was not given out of
    /// it is never given out, so a stream aligned before each file and given whole units
    /// only makes whole units.
    pub fn align(&mut self) {
        if self.started {
            self.at = self.unit;
        }
    }

    /// New bytes made beyond what the ratio asks of everything made so far (negative: fewer).
    pub fn new_bytes_ahead(&self) -> f64 {
        let unit = self.unit as f64;
        let made = self.tally.units as f64 * unit + self.outside_bytes as f64;
        let new = self.tally.new_units as f64 * unit + self.outside_new_bytes as f64;
        new - self.new_chance * made
    }

    /// The same stream as generation `generation` of its dataset: the same units in the same
    /// order, each distinct unit given new contents in each generation after the first with
    /// chance `change_rate`, so a generation differs from the one before in that share of its
    /// distinct units and their copies.
    pub fn at_generation(mut self, generation: u32, change_rate: f64) -> Self {
        self.generation = generation.max(1);
        self.change_rate = if change_rate.is_finite() {
            change_rate.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self
    }

    /// The key a unit's bytes follow from in this generation: its number until the last
    /// generation that changed it, a key of that generation after; and whether this very
    /// generation changed it. A generation changes a span of units when a Weyl sequence
    /// (the golden ratio's steps from an offset of its own) falls below the change rate, so
    /// any stretch of spans holds the rate's share of changes to within a span or two, not
    /// only on average.
    fn content_of(&self, unit: u64) -> (u64, bool) {
        const GOLDEN: f64 = 0.618_033_988_749_894_9;
        let span = (unit / CHANGE_SPAN) as f64;
        for generation in (2..=u64::from(self.generation)).rev() {
            let offset = (mix(self.tag ^ (generation << 40)) >> 11) as f64 / (1u64 << 53) as f64;
            if (span * GOLDEN + offset).fract() < self.change_rate {
                // Numbers of units stay far below 2^63: a changed key never meets one.
                let key = mix(unit.rotate_left(17) ^ generation) | 1 << 63;
                return (key, generation == u64::from(self.generation));
            }
        }
        (unit, false)
    }

    /// What the stream has made so far (a unit counts once any of it is out).
    pub fn tally(&self) -> UnitTally {
        self.tally
    }

    /// Fills `buf` with the stream's next bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut filled = 0;
        while filled < buf.len() {
            if !self.started || self.at == self.unit {
                self.current = self.next_unit();
                self.content = self.content_of(self.current).0;
                self.at = 0;
                self.started = true;
            }
            let take = (self.unit - self.at).min(buf.len() - filled);
            self.unit_bytes(&mut buf[filled..filled + take]);
            self.at += take;
            filled += take;
        }
    }

    /// The number of the next unit, new or a copy, counted.
    fn next_unit(&mut self) -> u64 {
        // New units the stream lacks, should this one be a copy (bytes made beside it count).
        let deficit = self.new_chance - (self.new_bytes_ahead() - self.lead) / self.unit as f64;
        let ends = match self.run.copy_of {
            // A run of new units lasts while the stream lacks new units.
            None => deficit <= 1e-9,
            // A run of copies ends early once the stream lacks a few new units.
            Some(_) => deficit >= MAX_DEFICIT,
        };
        if self.run.left == 0 || ends {
            let new = self.next_new == self.copy_floor || deficit > 1e-9;
            self.run = Run {
                left: run_length(&mut self.rng),
                copy_of: (!new).then(|| self.rng.random_range(self.copy_floor..self.next_new)),
            };
        }
        self.run.left -= 1;
        self.tally.units += 1;
        match self.run.copy_of {
            Some(original) => {
                // A run of copies that reaches the newest unit goes on from the first.
                let original = if original < self.next_new {
                    original
                } else {
                    self.copy_floor
                };
                self.run.copy_of = Some(original + 1);
                original
            }
            None => {
                self.tally.new_units += 1;
                self.next_new += 1;
                let unit = self.next_new - 1;
                if self.content_of(unit).1 {
                    self.tally.changed_units += 1;
                }
                unit
            }
        }
    }

    /// Bytes `self.at ..` of the current unit into `out`.
    fn unit_bytes(&self, out: &mut [u8]) {
        let pool = self.pool.bytes();
        let chunks = pool.len() / POOL_CHUNK;
        let origin = (mix(self.tag ^ self.content) % chunks as u64) as usize * POOL_CHUNK;
        let start = (origin + self.at) % pool.len();
        let first = (pool.len() - start).min(out.len());
        out[..first].copy_from_slice(&pool[start..start + first]);
        let mut placed = first;
        while placed < out.len() {
            let take = pool.len().min(out.len() - placed);
            out[placed..placed + take].copy_from_slice(&pool[..take]);
            placed += take;
        }
        // Each 4 KiB chunk's stamp: the unit's number and the chunk's place in it.
        let stamp_len = STAMP.min(self.pool.random_bytes());
        let end = self.at + out.len();
        let mut chunk = self.at / POOL_CHUNK;
        while chunk * POOL_CHUNK < end {
            let stamp_start = chunk * POOL_CHUNK;
            let mut stamp = [0u8; STAMP];
            let key = mix(self.tag ^ self.content.rotate_left(20) ^ chunk as u64);
            stamp[..8].copy_from_slice(&key.to_le_bytes());
            stamp[8..].copy_from_slice(&mix(key).to_le_bytes());
            for (i, byte) in stamp[..stamp_len].iter().enumerate() {
                let at = stamp_start + i;
                if (self.at..end).contains(&at) {
                    out[at - self.at] = *byte;
                }
            }
            chunk += 1;
        }
    }
}

/// A run's length in units: geometric, `RUN_UNITS` on average, at least 1.
fn run_length(rng: &mut ChaCha8Rng) -> u32 {
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    let length = 1.0 + (u.ln() / (1.0 - 1.0 / RUN_UNITS).ln()).floor();
    length.clamp(1.0, 1e6) as u32
}

/// SplitMix64's finaliser: a well-spread 64-bit value from any other.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn stream(ratio: f64, unit: u64, seed: u64) -> UnitStream {
        UnitStream::new(DataPool::new(7, 2.0), DedupSettings { ratio, unit }, seed)
    }

    #[test]
    fn a_copy_is_its_original_byte_for_byte_and_the_ratio_is_what_was_asked() {
        let unit = 64 << 10;
        let mut units = stream(3.0, unit, 1);
        let mut data = vec![0u8; 4096 * unit as usize];
        // Odd pieces, so units are given out across calls.
        for piece in data.chunks_mut(100_003) {
            units.fill(piece);
        }
        let tally = units.tally();
        assert_eq!(tally.units, 4096);
        let ratio = tally.ratio().expect("new units");
        assert!((ratio - 3.0).abs() < 0.1, "{tally:?}");
        // The units' contents dedup exactly as counted.
        let mut distinct: HashMap<&[u8], usize> = HashMap::new();
        for content in data.chunks(unit as usize) {
            *distinct.entry(content).or_default() += 1;
        }
        assert_eq!(distinct.len() as u64, tally.new_units);
        // And no two distinct units share a 4 KiB chunk.
        let mut chunks = std::collections::HashSet::new();
        for content in distinct.keys() {
            for chunk in content.chunks(4096) {
                assert!(chunks.insert(chunk), "a 4 KiB chunk in two units");
            }
        }
    }

    #[test]
    fn the_same_seed_makes_the_same_stream() {
        let (mut a, mut b) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
        stream(2.0, 128 << 10, 5).fill(&mut a);
        stream(2.0, 128 << 10, 5).fill(&mut b);
        assert_eq!(a, b);
        stream(2.0, 128 << 10, 6).fill(&mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn a_generation_changes_its_share_of_distinct_units_and_keeps_the_rest() {
        let unit = 64 << 10;
        let make = |generation| {
            let mut units = stream(2.0, unit, 3).at_generation(generation, 0.05);
            let mut data = vec![0u8; 4096 * unit as usize];
            units.fill(&mut data);
            (data, units.tally())
        };
        let (first, _) = make(1);
        let (same, _) = {
            let mut units = stream(2.0, unit, 3);
            let mut data = vec![0u8; 4096 * unit as usize];
            units.fill(&mut data);
            (data, ())
        };
        assert_eq!(
            first, same,
            "the first generation is the data without generations"
        );
        let (second, tally) = make(2);
        let changed = first
            .chunks(unit as usize)
            .zip(second.chunks(unit as usize))
            .filter(|(a, b)| a != b)
            .count();
        // Copies of a changed unit change with it: the share holds over units made too.
        let share = changed as f64 / tally.units as f64;
        assert!(
            (share - 0.05).abs() < 0.01,
            "{changed} of {} changed",
            tally.units
        );
        let counted = tally.changed_units as f64 / tally.new_units as f64;
        assert!((counted - 0.05).abs() < 0.005, "{tally:?}");
        assert_eq!(make(1).1.changed_units, 0);
    }
}
