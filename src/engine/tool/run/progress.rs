//! How far a tool has come, read from its own output (restic's and borg's JSON lines) or
//! from the bytes its processes have read.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::measure::Sampler;
use crate::engine::tool::definition::ProgressFrom;
use crate::engine::tool::process::{Finished, LineHandler, Stream, TreeSample};

/// A tool's progress as it reported it: (seconds since the spawn, bytes done).
pub(super) struct Progress {
    from: ProgressFrom,
    points: Arc<Mutex<Vec<(f64, u64)>>>,
    started: Instant,
}

/// A number from a tool's JSON progress line of the given kind.
fn json_number(line: &str, kind: &str, kind_key: &str, key: &str) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if value.get(kind_key)?.as_str()? != kind {
        return None;
    }
    value.get(key)?.as_u64()
}

impl Progress {
    pub(super) fn new(from: ProgressFrom) -> Progress {
        Progress {
            from,
            points: Arc::new(Mutex::new(Vec::new())),
            started: Instant::now(),
        }
    }

    /// The handler that reads the tool's own progress lines.
    pub(super) fn handler(&self) -> LineHandler {
        let points = Arc::clone(&self.points);
        let started = Instant::now();
        let from = self.from;
        Box::new(move |stream, line| {
            let bytes = match (from, stream) {
                (ProgressFrom::ResticJson, Stream::Stdout) => {
                    json_number(line, "status", "message_type", "bytes_done")
                }
                (ProgressFrom::BorgJson, Stream::Stderr) => {
                    json_number(line, "archive_progress", "type", "original_size")
                }
                _ => None,
            };
            if let (Some(bytes), Ok(mut points)) = (bytes, points.lock()) {
                points.push((started.elapsed().as_secs_f64(), bytes));
            }
        })
    }

    /// Throughput samples: from the tool's own lines where it gave them, else from the bytes
    /// its process tree read (a backup) or wrote (a restore), scaled so the last equals
    /// `total`: a pipeline's stages pass the same data along in step through their pipes, so
    /// the tree counts each byte once per stage, at the same time.
    pub(super) fn samples(
        &self,
        finished: &Finished,
        backup: bool,
        total: u64,
    ) -> Vec<crate::engine::result::Sample> {
        let _ = self.started;
        let mut points: Vec<(f64, u64)> = self.points.lock().map(|p| p.clone()).unwrap_or_default();
        if points.len() < 2 {
            let counted = |sample: &TreeSample| {
                if backup { sample.rchar } else { sample.wchar }
            };
            let last = finished.samples.last().map_or(0, counted);
            points = finished
                .samples
                .iter()
                .map(|sample| {
                    let share = if last > 0 {
                        counted(sample) as f64 / last as f64
                    } else {
                        0.0
                    };
                    (sample.t_s, (share * total as f64) as u64)
                })
                .collect();
        }
        let base = Instant::now();
        let mut sampler = Sampler::new(base);
        let mut last_t = 0.0;
        for (t, bytes) in points {
            if t - last_t < 0.2 {
                continue;
            }
            last_t = t;
            sampler.sample(base + Duration::from_secs_f64(t), bytes);
        }
        sampler.into_samples()
    }
}
