//! The data of one generated dataset as a run's streams send it, in any of its generations:
//! each stream's seed and share. A run times its own generation; a target that keeps what it
//! was sent (a dedup store) takes the earlier generations in before the timed window, so the
//! run meets the store as the night's full backup meets it after the nights before.

use std::sync::Arc;

use super::units::{DedupSettings, UnitStream};
use crate::engine::data::DataPool;

/// A generated dataset's streams.
pub struct DatasetStreams {
    pool: Arc<DataPool>,
    settings: DedupSettings,
    change_rate: f64,
    /// Each stream's seed, and the bytes it sends of the dataset (`None`: endless).
    streams: Vec<(u64, Option<u64>)>,
    /// The run's own generation (1 = the first full backup).
    generation: u32,
}

impl DatasetStreams {
    /// `streams` streams of data made as `settings` says, at `generation` of a dataset whose
    /// distinct units change at `change_rate`; with `size`, the streams split it between them
    /// (the first ones a byte more where it does not divide), else each is endless.
    pub fn new(
        pool: Arc<DataPool>,
        settings: DedupSettings,
        seeds: impl Iterator<Item = u64>,
        size: Option<u64>,
        generation: u32,
        change_rate: f64,
    ) -> Self {
        let seeds: Vec<u64> = seeds.collect();
        let count = seeds.len().max(1) as u64;
        let streams = seeds
            .into_iter()
            .enumerate()
            .map(|(index, seed)| {
                let share =
                    size.map(|size| size / count + u64::from((index as u64) < size % count));
                (seed, share)
            })
            .collect();
        Self {
            pool,
            settings,
            change_rate,
            streams,
            generation: generation.max(1),
        }
    }

    /// How many streams send the dataset.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// Whether no stream sends it.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// The run's own generation.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Stream `index` as it is in `generation`, and its share of the dataset.
    pub fn stream(&self, index: usize, generation: u32) -> Option<(UnitStream, Option<u64>)> {
        let (seed, share) = *self.streams.get(index)?;
        let units = UnitStream::new(Arc::clone(&self.pool), self.settings, seed)
            .at_generation(generation, self.change_rate);
        Some((units, share))
    }
}
