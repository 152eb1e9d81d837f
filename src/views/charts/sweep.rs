//! What the two sweep charts (matrix and heat map) share: a point as they draw it.

use super::*;

/// A sweep's point as its charts draw it: the setting, the figure and how far to trust it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Drawn {
    pub(super) setting: Setting,
    pub(super) median: f64,
    pub(super) min: f64,
    pub(super) max: f64,
    /// Runs the figure rests on.
    pub(super) runs: usize,
    pub(super) valid: bool,
    pub(super) best: bool,
    pub(super) stands_out: bool,
    pub(super) spread_pct: Option<f64>,
}

/// The points of `test` that have a figure, as the sweep charts draw them.
pub(super) fn points_of(points: &[Point], test: Option<TestKind>) -> Vec<Drawn> {
    let Some(test) = test else {
        return Vec::new();
    };
    points
        .iter()
        .filter(|p| p.test == test)
        .filter_map(|p| {
            let figure = p.figure.as_ref()?;
            Some(Drawn {
                setting: setting_of(p),
                median: figure.mb_per_s,
                min: figure.min,
                max: figure.max,
                runs: figure.n,
                valid: figure.valid,
                best: p.best,
                stands_out: p.stands_out,
                spread_pct: figure.spread_pct,
            })
        })
        .collect()
}

/// The parameters a heat map places a point by; `part_size` and `concurrency` are 0 for
/// targets other than an object store.
#[derive(Debug, Clone, Copy)]
pub(super) struct Setting {
    pub(super) buffers: u32,
    pub(super) block_size: u64,
    pub(super) streams: u32,
    pub(super) clients: u32,
    pub(super) part_size: u64,
    pub(super) concurrency: u32,
}

/// A point's setting as the heat map places it, whether or not it has a figure.
pub(super) fn setting_of(point: &Point) -> Setting {
    setting_of_params(&point.params)
}

/// The setting of a run's parameters.
pub(super) fn setting_of_params(params: &RunParams) -> Setting {
    Setting {
        buffers: params.buffers,
        block_size: params.block_size,
        streams: params.streams,
        clients: params.clients.unwrap_or(0),
        part_size: params.part_size.unwrap_or(0),
        concurrency: params.concurrency.unwrap_or(0),
    }
}
