//! Emulated LTO drives that run in real time: a drive takes data at its native speed times the
//! compression the data really achieves, through an internal buffer; it matches its speed to
//! the host down to its lowest step, and below that it runs dry, stops and repositions
//! (a backhitch) before it streams again. The pipeline in front of it fills and drains exactly
//! as it would in front of the real drive. The models it emulates, and the checks a drive's
//! configuration must pass, are in `catalogue`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{
    Capabilities, FieldInput, Kind, Opening, Settings, SettingsText, SettingsType, Sink,
    SinkFigures, Target, TypedField, no_path, read_settings, settings_of,
};
use crate::engine::data::DataPool;
use crate::engine::error::EngineError;
use crate::engine::source::{GeneratedStream, Renewal, Throttled};
use crate::engine::target::TargetPlan;
use crate::engine::target::TargetReport;
use crate::engine::target::image::{ImageRequest, RestoreImage};
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;

pub mod catalogue;

pub use catalogue::{TapeConfig, TapeSettings};

/// A spec's tape target: no path; the model and its overrides checked against the catalogue.
fn plan(path: Option<&Path>, settings: &Settings, errors: &mut FieldErrors) -> Option<TargetPlan> {
    let no_path = no_path(&FACTS, path, errors);
    let settings: TapeSettings = read_settings(&FACTS, settings, errors)?;
    let config = settings.resolve("target", errors)?;
    no_path.then(|| TargetPlan::new(TapeTarget(config)))
}

/// The settings type's schema, its `model` given the pattern `catalogue::tape_model` reads,
/// which the derive cannot say.
fn settings_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::{RefOr, schema::Schema};
    let mut schema = <TapeSettings as utoipa::PartialSchema>::schema();
    if let RefOr::T(Schema::Object(object)) = &mut schema {
        object
            .properties
            .insert("model".into(), catalogue::model_schema().into());
    }
    schema
}

/// The seed of the data an emulated drive reads back.
const RESTORE_SEED: u64 = 0x7a9e;

/// Bytes of each block compressed to measure how well the data compresses.
const SAMPLE: usize = 64 << 10;
/// Longest single sleep while waiting for the drive, so the wait stays responsive.
const MAX_NAP: Duration = Duration::from_millis(50);

/// What a drive is doing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Loaded and not moving yet: the drive starts once an eighth of its buffer is filled
    /// (or the host closes), without a backhitch.
    Loaded,
    /// Moving tape at `speed` native MB/s.
    Streaming { speed: f64 },
    /// Ran dry: stopped, waiting for the buffer to fill.
    Stopped,
    /// Backhitching until the given time (seconds since the drive started).
    Repositioning { until: f64 },
}

/// The drive model, on its own clock (seconds since the first write), without sleeping.
#[derive(Debug, Clone)]
pub struct DriveModel {
    config: TapeConfig,
    mode: Mode,
    /// Native bytes in the buffer.
    level: f64,
    clock: f64,
    /// The host's recent rate into the buffer, native bytes per second.
    host_rate: f64,
    last_offer: f64,
    figures: Figures,
}

#[derive(Debug, Clone, Default)]
struct Figures {
    host_bytes: f64,
    tape_bytes: f64,
    streaming_s: f64,
    repositioning_s: f64,
    idle_s: f64,
    backhitches: u64,
    buffer_filled: bool,
}

impl DriveModel {
    /// A loaded drive.
    pub fn new(config: TapeConfig) -> Self {
        Self {
            config,
            mode: Mode::Loaded,
            level: 0.0,
            clock: 0.0,
            host_rate: 0.0,
            last_offer: 0.0,
            figures: Figures::default(),
        }
    }

    fn buffer(&self) -> f64 {
        self.config.buffer_bytes.max(1) as f64
    }

    /// The speed the drive picks: native when its buffer is half full, else the host's rate,
    /// no slower than its lowest step.
    fn matched_speed(&self) -> f64 {
        let native = self.config.native_mb_s;
        if self.level >= self.buffer() / 2.0 || self.host_rate <= 0.0 {
            native
        } else {
            (self.host_rate / 1e6).clamp(self.config.min_mb_s, native)
        }
    }

    /// Runs the drive forward to time `now`.
    pub fn advance(&mut self, now: f64) {
        while self.clock < now {
            let dt = now - self.clock;
            match self.mode {
                Mode::Loaded | Mode::Stopped => {
                    self.figures.idle_s += dt;
                    self.clock = now;
                }
                Mode::Repositioning { until } => {
                    let step = dt.min(until - self.clock).max(0.0);
                    self.figures.repositioning_s += step;
                    self.clock += step;
                    if self.clock >= until {
                        self.mode = Mode::Streaming {
                            speed: self.matched_speed(),
                        };
                    }
                }
                Mode::Streaming { speed } => {
                    let rate = speed * 1e6;
                    let empties_in = self.level / rate;
                    if empties_in <= dt {
                        self.figures.streaming_s += empties_in;
                        self.figures.tape_bytes += self.level;
                        self.level = 0.0;
                        self.clock += empties_in;
                        self.mode = Mode::Stopped;
                    } else {
                        self.figures.streaming_s += dt;
                        self.figures.tape_bytes += rate * dt;
                        self.level -= rate * dt;
                        self.clock = now;
                        self.mode = Mode::Streaming {
                            speed: self.matched_speed(),
                        };
                    }
                }
            }
        }
    }

    /// Offers `native` bytes at time `now`: `Ok(())` when they fit in the buffer, else how
    /// many seconds to wait before offering again. A drive that ran dry and now has a full
    /// buffer starts to reposition.
    pub fn offer(&mut self, native: f64, now: f64) -> Result<(), f64> {
        self.advance(now);
        if self.level + native <= self.buffer() || self.level == 0.0 {
            self.level += native;
            self.figures.host_bytes += native;
            // The host's recent rate: a moving average of each offer's instantaneous rate,
            // from the second offer on (the first has no gap before it).
            if self.figures.host_bytes > native {
                let gap = (now - self.last_offer).max(1e-4);
                self.host_rate = 0.8 * self.host_rate + 0.2 * (native / gap);
            }
            self.last_offer = now;
            // A loaded drive starts once an eighth of its buffer is in, at the speed it
            // matches to the host, as a drive that has watched its buffer fill does: started
            // at native speed on a slower feed it would run dry and stop once at every start,
            // a stop no feed above its lowest step ever causes again.
            if self.mode == Mode::Loaded && self.level >= self.buffer() / 8.0 {
                self.mode = Mode::Streaming {
                    speed: self.matched_speed(),
                };
            }
            return Ok(());
        }
        match self.mode {
            Mode::Loaded => {
                self.mode = Mode::Streaming {
                    speed: self.config.native_mb_s,
                };
                Err(1e-4)
            }
            Mode::Stopped => {
                self.figures.backhitches += 1;
                let until = self.clock + self.config.reposition_s;
                self.mode = Mode::Repositioning { until };
                Err(self.config.reposition_s.max(1e-3))
            }
            Mode::Repositioning { until } => Err((until - self.clock).max(1e-3)),
            Mode::Streaming { speed } => {
                self.figures.buffer_filled = true;
                let needed = self.level + native - self.buffer();
                Err((needed / (speed * 1e6)).max(1e-4))
            }
        }
    }

    /// Seconds until the buffer is on tape from `now` (starting the drive if it stopped).
    pub fn drain_time(&mut self, now: f64) -> f64 {
        self.advance(now);
        if self.level <= 0.0 {
            return 0.0;
        }
        match self.mode {
            Mode::Stopped => {
                self.figures.backhitches += 1;
                self.mode = Mode::Repositioning {
                    until: self.clock + self.config.reposition_s,
                };
                self.config.reposition_s + self.level / (self.config.min_mb_s * 1e6)
            }
            Mode::Repositioning { until } => {
                (until - self.clock) + self.level / (self.matched_speed() * 1e6)
            }
            Mode::Streaming { speed } => self.level / (speed * 1e6),
            Mode::Loaded => {
                let speed = self.config.native_mb_s;
                self.mode = Mode::Streaming { speed };
                self.level / (speed * 1e6)
            }
        }
    }

    /// Native bytes accepted so far.
    pub fn host_bytes(&self) -> f64 {
        self.figures.host_bytes
    }
}

/// A sink that is one emulated drive; it sleeps as long as the drive would make the host wait.
pub struct TapeSink {
    model: DriveModel,
    started: Option<Instant>,
    path: PathBuf,
    /// Compressed and raw bytes of the samples measured.
    sampled_raw: u64,
    sampled_compressed: u64,
    /// Bytes of the last block that fitted, when the cartridge filled during it.
    last_fitted: Option<usize>,
    end_of_tape: bool,
}

impl TapeSink {
    /// One drive of the given configuration.
    pub fn new(config: &TapeConfig, index: usize) -> Self {
        Self {
            path: PathBuf::from(format!("emulated {} drive {}", config.model, index + 1)),
            model: DriveModel::new(config.clone()),
            started: None,
            sampled_raw: 0,
            sampled_compressed: 0,
            last_fitted: None,
            end_of_tape: false,
        }
    }

    fn now(&mut self) -> f64 {
        self.started
            .get_or_insert_with(Instant::now)
            .elapsed()
            .as_secs_f64()
    }

    /// The compression this block achieves with a fast real compressor, capped by the drive.
    fn compression_of(&mut self, data: &[u8]) -> f64 {
        let sample = &data[..data.len().min(SAMPLE)];
        if !sample.is_empty() {
            let compressed = lz4_flex::block::compress(sample).len();
            self.sampled_raw += sample.len() as u64;
            self.sampled_compressed += compressed.max(1) as u64;
        }
        self.achieved()
    }

    fn achieved(&self) -> f64 {
        if self.sampled_compressed == 0 {
            return 1.0;
        }
        (self.sampled_raw as f64 / self.sampled_compressed as f64)
            .clamp(1.0, self.model.config.max_compression)
    }

    fn wait(seconds: f64) {
        let nap =
            Duration::try_from_secs_f64(seconds.max(0.0)).map_or(MAX_NAP, |nap| nap.min(MAX_NAP));
        std::thread::sleep(nap);
    }
}

impl Sink for TapeSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.write_block_or_give_up(data, &AtomicBool::new(false))
    }

    fn write_block_or_give_up(&mut self, data: &[u8], give_up: &AtomicBool) -> io::Result<()> {
        if self.end_of_tape {
            return Ok(());
        }
        let ratio = self.compression_of(data);
        let capacity = self.model.config.capacity_bytes as f64;
        let mut host = data.len() as f64;
        let room = (capacity - self.model.host_bytes()) * ratio;
        if host >= room {
            host = room.max(0.0);
            self.end_of_tape = true;
            self.last_fitted = Some(host as usize);
        }
        let native = host / ratio;
        loop {
            let now = self.now();
            match self.model.offer(native, now) {
                Ok(()) => break,
                Err(_) if give_up.load(Ordering::Relaxed) => return Ok(()),
                Err(seconds) => Self::wait(seconds),
            }
        }
        Ok(())
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        self.finish_or_give_up(fsync, &AtomicBool::new(false))
    }

    fn finish_or_give_up(&mut self, _fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        // Closing a tape writes out the buffer: the host waits for the drive.
        loop {
            let now = self.now();
            let left = self.model.drain_time(now);
            if left <= 0.0 || give_up.load(Ordering::Relaxed) {
                return Ok(());
            }
            Self::wait(left);
        }
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn fitted(&self) -> Option<usize> {
        self.last_fitted
    }

    fn full(&self) -> bool {
        self.end_of_tape
    }

    fn figures(&self) -> Option<SinkFigures> {
        self.drive_figures().map(SinkFigures::Tape)
    }
}

impl TapeSink {
    /// The drive's figures so far.
    fn drive_figures(&self) -> Option<TapeFigures> {
        let f = &self.model.figures;
        let config = &self.model.config;
        Some(TapeFigures {
            emulated: true,
            model: config.model.clone(),
            drives: 1,
            native_mb_s: config.native_mb_s,
            min_mb_s: config.min_mb_s,
            compression: round2(self.achieved()),
            streaming_s: round3(f.streaming_s),
            repositioning_s: round3(f.repositioning_s),
            idle_s: round3(f.idle_s),
            backhitches: f.backhitches,
            tape_mb_s: if f.streaming_s > 0.0 {
                round1(f.tape_bytes / f.streaming_s / 1e6)
            } else {
                0.0
            },
            tape_bytes: f.tape_bytes as u64,
            end_of_tape: self.end_of_tape,
            buffer_bytes: config.buffer_bytes,
            buffer_filled: f.buffer_filled,
        })
    }
}

/// The figures of several drives as one: times and counts summed, speeds averaged.
pub fn combine(drives: &[TapeFigures]) -> Option<TapeFigures> {
    let first = drives.first()?;
    let streaming: f64 = drives.iter().map(|d| d.streaming_s).sum();
    let tape_bytes: u64 = drives.iter().map(|d| d.tape_bytes).sum();
    let weighted: f64 = drives
        .iter()
        .map(|d| d.compression * d.tape_bytes as f64)
        .sum();
    Some(TapeFigures {
        emulated: true,
        model: first.model.clone(),
        drives: drives.len() as u32,
        native_mb_s: first.native_mb_s,
        min_mb_s: first.min_mb_s,
        compression: if tape_bytes > 0 {
            round2(weighted / tape_bytes as f64)
        } else {
            first.compression
        },
        streaming_s: round3(streaming),
        repositioning_s: round3(drives.iter().map(|d| d.repositioning_s).sum()),
        idle_s: round3(drives.iter().map(|d| d.idle_s).sum()),
        backhitches: drives.iter().map(|d| d.backhitches).sum(),
        tape_mb_s: if streaming > 0.0 {
            round1(tape_bytes as f64 / streaming / 1e6)
        } else {
            0.0
        },
        tape_bytes,
        end_of_tape: drives.iter().any(|d| d.end_of_tape),
        buffer_bytes: first.buffer_bytes,
        buffer_filled: drives.iter().all(|d| d.buffer_filled),
    })
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

impl TapeFigures {
    /// The drives' figures in words, as a page shows them under the run.
    pub fn report(&self) -> TargetReport {
        let mut figures = vec![
            format!("compression {:.2}:1", self.compression),
            format!("streaming {:.1} s", self.streaming_s),
            format!("repositioning {:.1} s", self.repositioning_s),
            format!("{} backhitches", self.backhitches),
            format!("tape {:.1} MB/s", self.tape_mb_s),
        ];
        if self.end_of_tape {
            figures.push("end of tape".to_string());
        }
        let device = if self.drives == 1 {
            format!("emulated {} drive", self.model)
        } else {
            format!("{} emulated {} drives", self.drives, self.model)
        };
        TargetReport {
            device,
            reporter: format!("emulated {} × {}", self.model, self.drives),
            figures,
        }
    }
}

/// Emulated drives: one writer, and one sink, per drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TapeTarget(pub TapeConfig);

/// What this kind is before its settings are read. Emulated drives: write nothing on the host.
pub const FACTS: KindFacts = KindFacts {
    id: "tape",
    label: "emulated tape",
    takes_path: false,
    writes: Writes::Nothing,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

/// The emulated tape kind.
pub struct Tape;

impl Kind for Tape {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        plan(path, settings, errors)
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<TapeTarget>(value)
    }

    fn settings_type(&self) -> Option<SettingsType> {
        Some(SettingsType {
            schema: settings_schema,
            parts: <TapeSettings as utoipa::ToSchema>::schemas,
        })
    }

    fn typed_fields(&self) -> &'static [TypedField] {
        &[
            TypedField {
                setting: "model",
                label: "Tape model",
                input: FieldInput::Choice(catalogue::model_choices),
                default: "lto-4",
            },
            TypedField {
                setting: "drives",
                label: "Drives",
                input: FieldInput::Count,
                default: "1",
            },
        ]
    }

    fn settings_from_text(&self, text: &mut dyn SettingsText) -> Settings {
        settings_of(&TapeSettings {
            model: text.text("model"),
            drives: text.count("drives"),
            ..Default::default()
        })
    }
}

impl Target for TapeTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::EMULATED
    }

    /// Every drive at its native speed times the compression the data allows.
    fn takes_mb_s(&self, compress_ratio: f64) -> Option<f64> {
        let config = &self.0;
        let compression = compress_ratio.clamp(1.0, config.max_compression);
        Some(config.native_mb_s * compression * f64::from(config.drives))
    }

    fn open(&self, _how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        Ok((0..self.0.drives)
            .map(|index| Box::new(TapeSink::new(&self.0, index as usize)) as Box<dyn Sink>)
            .collect())
    }

    fn words(&self) -> String {
        format!(
            "{} × emulated {}",
            self.0.drives,
            self.0.model.to_uppercase()
        )
    }

    fn restores(&self) -> bool {
        true
    }

    /// Reads one stream's data back from one drive: the drive reads at its native speed times
    /// the data's compression, through every stream the backup interleaved on that drive
    /// (streams spread over the drives), after loading the cartridge and locating the backup.
    fn restore_image(&self, request: &ImageRequest<'_>) -> Result<RestoreImage, EngineError> {
        let config = &self.0;
        let interleaved = request.streams.div_ceil(config.drives.max(1)).max(1);
        let compression = request.compress_ratio.clamp(1.0, config.max_compression);
        let rate = config.native_mb_s * compression / f64::from(interleaved);
        let data = GeneratedStream::new(
            DataPool::new(RESTORE_SEED, request.compress_ratio),
            1,
            Renewal::Refresh,
        );
        Ok(RestoreImage {
            stream: Box::new(Throttled::new(Box::new(data), rate)),
            from: format!("emulated {} drive", config.model),
            interleaved,
            positioning_s: config.load_s + config.locate_s,
            figures: None,
        })
    }
}

/// What emulated tape drives report about a run: always marked emulated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct TapeFigures {
    /// Always true: these figures come from a model, not a drive.
    pub emulated: bool,
    pub model: String,
    pub drives: u32,
    /// Native speed and lowest speed-matching step of one drive, MB/s.
    pub native_mb_s: f64,
    pub min_mb_s: f64,
    /// Compression achieved on the bytes written (host bytes ÷ tape bytes).
    pub compression: f64,
    /// Seconds the drives spent streaming, repositioning (backhitches) and idle, summed over
    /// drives.
    pub streaming_s: f64,
    pub repositioning_s: f64,
    pub idle_s: f64,
    pub backhitches: u64,
    /// Average tape speed while streaming, native MB/s per drive.
    pub tape_mb_s: f64,
    /// Native bytes written to tape.
    pub tape_bytes: u64,
    /// A cartridge filled up and the run ended there.
    pub end_of_tape: bool,
    /// One drive's buffer, native bytes.
    #[serde(default)]
    pub buffer_bytes: u64,
    /// A drive's buffer was full at least once, so the host waited for the drive: its pace,
    /// not the feed's, set the figure.
    #[serde(default)]
    pub buffer_filled: bool,
}

impl TapeFigures {
    /// Whether the drives shoe-shined: stopped and restarted while fed below their lowest
    /// speed step (`feed_mb_s`, the host's rate into all of them). A stop while fed faster
    /// (the last buffer drained at the end) is not shoe-shining.
    pub fn shoe_shined(&self, feed_mb_s: f64) -> bool {
        self.backhitches > 0
            && feed_mb_s < self.min_mb_s * self.compression * f64::from(self.drives.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lto3(buffer_mb: f64) -> TapeConfig {
        TapeConfig {
            model: "LTO-3".into(),
            drives: 1,
            native_mb_s: 80.0,
            min_mb_s: 40.0,
            buffer_bytes: (buffer_mb * 1e6) as u64,
            reposition_s: 0.5,
            max_compression: 2.0,
            capacity_bytes: 400_000_000_000,
            load_s: 0.0,
            locate_s: 0.0,
        }
    }

    /// Feeds `block` native bytes every `interval` seconds for `seconds`, then drains.
    fn feed(model: &mut DriveModel, block: f64, interval: f64, seconds: f64) -> f64 {
        let mut now = 0.0;
        while now < seconds {
            let mut t = now;
            while let Err(wait) = model.offer(block, t) {
                t += wait;
            }
            now = (t).max(now + interval);
        }
        now + model.drain_time(now)
    }

    #[test]
    fn a_fast_host_gets_the_native_speed() {
        let mut model = DriveModel::new(lto3(16.0));
        let end = feed(&mut model, 1e6, 0.0, 4.0);
        let rate = model.host_bytes() / end / 1e6;
        assert!((rate - 80.0).abs() < 2.0, "{rate}");
        assert_eq!(model.figures.backhitches, 0);
    }

    #[test]
    fn a_feed_below_the_lowest_step_shoe_shines() {
        let mut model = DriveModel::new(lto3(4.0));
        // 20 MB/s in 1 MB blocks, below the 40 MB/s step.
        let end = feed(&mut model, 1e6, 0.05, 10.0);
        let rate = model.host_bytes() / end / 1e6;
        assert!(model.figures.backhitches > 0);
        assert!(rate < 20.0, "{rate}");
    }
}
