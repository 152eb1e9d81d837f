//! An emulated striped volume that runs in real time: a logical volume over `disks` disks, each
//! taking `stripe_unit` bytes in turn, behind controllers that share their bandwidth among the
//! disks on them. Every block the writer hands over is one synchronous request: it keeps busy
//! only the disks its span covers, each for its bytes at the disk's rate, and on writes each
//! stripe unit costs a rotational delay first (the head waits for the start of the track);
//! a controller carries its disks' bytes no faster than its own rate. The request ends when its
//! last disk and controller are done, and the writer waits until then.
//!
//! This is the layout arithmetic of a striped volume as backup-server guides give it: a request
//! smaller than the stripe width leaves disks idle, one-track stripe units write at half the
//! read rate (k-track units at k/(k+1)), and four 5 MB/s disks fill one 20 MB/s controller.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{
    Capabilities, FieldInput, Kind, Opening, Settings, SettingsText, SettingsType, Sink,
    SinkFigures, Target, TypedField, no_path, read_settings, settings_of,
};
use crate::engine::error::EngineError;
use crate::engine::target::TargetPlan;
use crate::engine::target::TargetReport;
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;
use crate::size::{ByteSize, format_bytes};

/// Longest single sleep while waiting for the disks, so a cancel is seen quickly.
const MAX_NAP: Duration = Duration::from_millis(50);
/// A request that arrives this soon after the writer's previous one ended counts as queued
/// behind it (a disk's command queue): the host's scheduling jitter is not disk idle time.
const QUEUED_WITHIN_S: f64 = 0.005;
/// Most disks one emulated volume may have.
pub const MAX_DISKS: u32 = 256;
/// Slowest disk or controller rate, MB/s.
pub const MIN_RATE_MB_S: f64 = 0.1;

/// A striped volume's settings as a spec gives them; every one has a default from the
/// seed's example (4 disks of 5 MB/s, 64 KiB tracks, one 20 MB/s controller per four disks).
/// Each field's comment and bounds are what the OpenAPI document says of it.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StripedSettings {
    /// Emulated striped volume: disks in the stripe (default 4).
    #[schema(minimum = 1, maximum = 256)]
    pub disks: Option<u32>,
    /// Emulated striped volume: one disk's rate (default 5).
    #[schema(minimum = 0.1, maximum = 100_000.0)]
    pub disk_mb_s: Option<f64>,
    /// Emulated striped volume: bytes under the head in one revolution (default 64K).
    pub track: Option<ByteSize>,
    /// Emulated striped volume: bytes on one disk before the next, whole tracks (default one).
    pub stripe_unit: Option<ByteSize>,
    /// Emulated striped volume: controllers, the disks split among them in order (default one
    /// per four disks).
    #[schema(minimum = 1, maximum = 256)]
    pub controllers: Option<u32>,
    /// Emulated striped volume: one controller's bandwidth (default 20).
    #[schema(minimum = 0.1, maximum = 100_000.0)]
    pub controller_mb_s: Option<f64>,
    /// Emulated striped volume: the wait before each stripe unit a write puts on a disk
    /// (default one revolution).
    #[schema(minimum = 0.0, maximum = 1000.0)]
    pub rotational_delay_ms: Option<f64>,
}

/// A validated striped volume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StripedConfig {
    pub disks: u32,
    pub disk_mb_s: f64,
    pub track_bytes: u64,
    pub stripe_unit_bytes: u64,
    pub controllers: u32,
    pub controller_mb_s: f64,
    pub rotational_delay_ms: f64,
}

impl StripedConfig {
    /// Bytes one full stripe holds: the transfer size that keeps every disk working.
    pub fn stripe_width(&self) -> u64 {
        self.stripe_unit_bytes * u64::from(self.disks)
    }

    /// The controller a disk hangs on: the disks are split among them in order.
    fn controller_of(&self, disk: usize) -> usize {
        let per = (self.disks as usize).div_ceil(self.controllers as usize);
        disk / per.max(1)
    }
}

/// A spec's striped target: no path; every setting in range, the stripe unit a whole number
/// of tracks.
fn plan(path: Option<&Path>, settings: &Settings, errors: &mut FieldErrors) -> Option<TargetPlan> {
    let no_path = no_path(&FACTS, path, errors);
    let settings: StripedSettings = read_settings(&FACTS, settings, errors)?;
    let before = errors.0.len();
    let disks = settings.disks.unwrap_or(4);
    if !(1..=MAX_DISKS).contains(&disks) {
        errors.add("target.disks", format!("must be between 1 and {MAX_DISKS}"));
    }
    // A lower bound keeps the volume able to take a run's data in its duration: the model runs
    // in real time.
    let mut rate = |name: &str, value: Option<f64>, default: f64| {
        let value = value.unwrap_or(default);
        if !(value.is_finite() && (MIN_RATE_MB_S..=100_000.0).contains(&value)) {
            errors.add(
                format!("target.{name}"),
                format!("must be between {MIN_RATE_MB_S} and 100000 MB/s"),
            );
            return None;
        }
        Some(value)
    };
    let disk_mb_s = rate("disk_mb_s", settings.disk_mb_s, 5.0);
    let controller_mb_s = rate("controller_mb_s", settings.controller_mb_s, 20.0);
    let mut size = |name: &str, value: Option<&ByteSize>| match value.map(ByteSize::bytes) {
        None => None,
        Some(bytes) if (512..=(64 << 20)).contains(&bytes) && bytes % 512 == 0 => Some(bytes),
        Some(_) => {
            errors.add(
                format!("target.{name}"),
                "must be a multiple of 512 bytes between 512 and 64M",
            );
            None
        }
    };
    let track_bytes = size("track", settings.track.as_ref()).unwrap_or(64 << 10);
    let stripe_unit_bytes =
        size("stripe_unit", settings.stripe_unit.as_ref()).unwrap_or(track_bytes);
    if stripe_unit_bytes % track_bytes != 0 {
        errors.add(
            "target.stripe_unit",
            format!(
                "must be a whole number of tracks ({} each)",
                format_bytes(track_bytes)
            ),
        );
    }
    let controllers = settings.controllers.unwrap_or(disks.div_ceil(4).max(1));
    if !(1..=disks.max(1)).contains(&controllers) {
        errors.add(
            "target.controllers",
            "must be between 1 and the number of disks",
        );
    }
    let (disk_mb_s, controller_mb_s) = (disk_mb_s.unwrap_or(0.0), controller_mb_s.unwrap_or(0.0));
    // Without a usable disk rate there is no revolution to default to: only a delay the spec
    // gave is checked.
    let revolution_ms = if disk_mb_s > 0.0 {
        track_bytes as f64 / (disk_mb_s * 1e6) * 1e3
    } else {
        0.0
    };
    let rotational_delay_ms = settings.rotational_delay_ms.unwrap_or(revolution_ms);
    if !(rotational_delay_ms.is_finite() && (0.0..=1000.0).contains(&rotational_delay_ms)) {
        if settings.rotational_delay_ms.is_some() {
            errors.add("target.rotational_delay_ms", "must be between 0 and 1000");
        } else {
            errors.add(
                "target.disk_mb_s",
                format!(
                    "a track of {} at {disk_mb_s} MB/s takes {revolution_ms:.0} ms a \
                     revolution, more than 1000: give a faster disk, a smaller track, or \
                     rotational_delay_ms",
                    format_bytes(track_bytes)
                ),
            );
        }
    }
    let config = StripedConfig {
        disks,
        disk_mb_s,
        track_bytes,
        stripe_unit_bytes,
        controllers,
        controller_mb_s,
        rotational_delay_ms,
    };
    (no_path && errors.0.len() == before).then(|| TargetPlan::new(StripedTarget(config)))
}

/// How long one request keeps the volume, written and (for comparison) read, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestTimes {
    pub write_s: f64,
    pub read_s: f64,
    /// Disks the request kept busy.
    pub disks: u32,
    /// Stripe units written, each after a rotational delay.
    pub units: u64,
    /// A controller, not a disk, ended the write last.
    pub controller_bound: bool,
}

/// The volume's arithmetic, without sleeping: what a request of `len` bytes at volume offset
/// `offset` costs.
pub fn request_times(config: &StripedConfig, offset: u64, len: u64) -> RequestTimes {
    let disks = config.disks as usize;
    let mut disk_bytes = vec![0u64; disks];
    let mut disk_units = vec![0u64; disks];
    let unit = config.stripe_unit_bytes;
    let mut at = offset;
    let end = offset + len;
    while at < end {
        let index = at / unit;
        let unit_end = (index + 1) * unit;
        let piece = unit_end.min(end) - at;
        let disk = (index % config.disks as u64) as usize;
        disk_bytes[disk] += piece;
        disk_units[disk] += 1;
        at += piece;
    }
    let rate = config.disk_mb_s * 1e6;
    let delay = config.rotational_delay_ms / 1e3;
    let mut controller_bytes = vec![0u64; config.controllers as usize];
    let last_controller = controller_bytes.len() - 1;
    for (disk, bytes) in disk_bytes.iter().enumerate() {
        controller_bytes[config.controller_of(disk).min(last_controller)] += bytes;
    }
    let read_disks = disk_bytes
        .iter()
        .map(|&bytes| bytes as f64 / rate)
        .fold(0.0, f64::max);
    let write_disks = disk_bytes
        .iter()
        .zip(&disk_units)
        .map(|(&bytes, &units)| bytes as f64 / rate + units as f64 * delay)
        .fold(0.0, f64::max);
    let controllers = controller_bytes
        .iter()
        .map(|&bytes| bytes as f64 / (config.controller_mb_s * 1e6))
        .fold(0.0, f64::max);
    RequestTimes {
        write_s: write_disks.max(controllers),
        read_s: read_disks.max(controllers),
        disks: disk_bytes.iter().filter(|&&bytes| bytes > 0).count() as u32,
        units: disk_units.iter().sum(),
        controller_bound: controllers > write_disks,
    }
}

/// The one writer of an emulated striped volume: appends each block as one request and sleeps
/// until the volume would have finished it.
pub struct StripedSink {
    config: StripedConfig,
    path: PathBuf,
    started: Option<Instant>,
    /// Where the next request lands on the volume.
    offset: u64,
    /// When the previous request ended, seconds since the first.
    free_at: f64,
    requests: u64,
    disk_slots: u64,
    units: u64,
    controller_bound: u64,
    write_s: f64,
    read_s: f64,
}

impl StripedSink {
    /// A volume with nothing written yet.
    pub fn new(config: &StripedConfig) -> Self {
        Self {
            path: PathBuf::from(format!("emulated striped volume ({} disks)", config.disks)),
            config: config.clone(),
            started: None,
            offset: 0,
            free_at: 0.0,
            requests: 0,
            disk_slots: 0,
            units: 0,
            controller_bound: 0,
            write_s: 0.0,
            read_s: 0.0,
        }
    }

    fn now(&mut self) -> f64 {
        self.started
            .get_or_insert_with(Instant::now)
            .elapsed()
            .as_secs_f64()
    }
}

impl Sink for StripedSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.write_block_or_give_up(data, &AtomicBool::new(false))
    }

    fn write_block_or_give_up(&mut self, data: &[u8], give_up: &AtomicBool) -> io::Result<()> {
        let now = self.now();
        let arrival = if now - self.free_at <= QUEUED_WITHIN_S {
            self.free_at.max(0.0)
        } else {
            now
        };
        let times = request_times(&self.config, self.offset, data.len() as u64);
        self.offset += data.len() as u64;
        self.requests += 1;
        self.disk_slots += u64::from(times.disks);
        self.units += times.units;
        self.controller_bound += u64::from(times.controller_bound);
        self.write_s += times.write_s;
        self.read_s += times.read_s;
        self.free_at = arrival + times.write_s;
        loop {
            let left = self.free_at - self.now();
            if left <= 0.0 || give_up.load(Ordering::Relaxed) {
                return Ok(());
            }
            std::thread::sleep(
                Duration::try_from_secs_f64(left).map_or(MAX_NAP, |left| left.min(MAX_NAP)),
            );
        }
    }

    fn finish(&mut self, _fsync: bool) -> io::Result<()> {
        Ok(())
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn figures(&self) -> Option<SinkFigures> {
        let requests = self.requests.max(1) as f64;
        let bytes = self.offset as f64;
        let rate = |seconds: f64| {
            if seconds > 0.0 {
                (bytes / seconds / 1e6 * 10.0).round() / 10.0
            } else {
                0.0
            }
        };
        Some(SinkFigures::Striped(StripedFigures {
            emulated: true,
            disks: self.config.disks,
            disk_mb_s: self.config.disk_mb_s,
            stripe_unit: self.config.stripe_unit_bytes,
            controllers: self.config.controllers,
            controller_mb_s: self.config.controller_mb_s,
            requests: self.requests,
            disks_per_request: (self.disk_slots as f64 / requests * 100.0).round() / 100.0,
            rotational_delays: self.units,
            controller_bound_pct: (self.controller_bound as f64 / requests * 1000.0).round() / 10.0,
            write_mb_s: rate(self.write_s),
            read_mb_s: rate(self.read_s),
        }))
    }
}

impl StripedFigures {
    /// The volume's figures in words.
    pub fn report(&self) -> TargetReport {
        let mut figures = vec![format!(
            "{:.1} of {} disks per request",
            self.disks_per_request, self.disks
        )];
        if self.read_mb_s > 0.0 {
            figures.push(format!(
                "writes at {:.2} of the read rate ({:.1} of {:.1} MB/s)",
                self.write_mb_s / self.read_mb_s,
                self.write_mb_s,
                self.read_mb_s
            ));
        }
        if self.controller_bound_pct > 0.0 {
            figures.push(format!(
                "controllers set the pace of {:.0} % of requests",
                self.controller_bound_pct
            ));
        }
        TargetReport {
            device: "emulated striped volume".to_string(),
            reporter: format!(
                "emulated striped volume, {} × {} MB/s disks, {} units",
                self.disks,
                self.disk_mb_s,
                format_bytes(self.stripe_unit)
            ),
            figures,
        }
    }
}

/// The emulated striped volume kind.
pub struct Striped;

impl Kind for Striped {
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
        super::stored_as::<StripedTarget>(value)
    }

    fn settings_type(&self) -> Option<SettingsType> {
        Some(SettingsType::of::<StripedSettings>())
    }

    fn typed_fields(&self) -> &'static [TypedField] {
        &[
            TypedField {
                setting: "disks",
                label: "Disks",
                input: FieldInput::Count,
                default: "10",
            },
            TypedField {
                setting: "disk_mb_s",
                label: "MB/s per disk",
                input: FieldInput::Number,
                default: "5",
            },
            TypedField {
                setting: "stripe_unit",
                label: "Stripe unit",
                input: FieldInput::Size,
                default: "64K",
            },
            TypedField {
                setting: "controllers",
                label: "Controllers",
                input: FieldInput::Count,
                default: "3",
            },
            TypedField {
                setting: "controller_mb_s",
                label: "MB/s per controller",
                input: FieldInput::Number,
                default: "20",
            },
        ]
    }

    fn settings_from_text(&self, text: &mut dyn SettingsText) -> Settings {
        settings_of(&StripedSettings {
            disks: text.count("disks"),
            disk_mb_s: text.number("disk_mb_s"),
            stripe_unit: text.size("stripe_unit"),
            controllers: text.count("controllers"),
            controller_mb_s: text.number("controller_mb_s"),
            ..Default::default()
        })
    }
}

/// An emulated striped volume: one writer, one sink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StripedTarget(pub StripedConfig);

/// What this kind is before its settings are read. An emulated volume: writes nothing on the host.
pub const FACTS: KindFacts = KindFacts {
    id: "striped",
    label: "emulated striped volume",
    takes_path: false,
    writes: Writes::Nothing,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

impl Target for StripedTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::EMULATED
    }

    /// Its disks together, or its controllers, whichever are slower.
    fn takes_mb_s(&self, _compress_ratio: f64) -> Option<f64> {
        let config = &self.0;
        Some(
            (config.disk_mb_s * f64::from(config.disks))
                .min(config.controller_mb_s * f64::from(config.controllers)),
        )
    }

    fn open(&self, _how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        Ok(vec![Box::new(StripedSink::new(&self.0))])
    }

    fn words(&self) -> String {
        let config = &self.0;
        format!(
            "emulated striped volume, {} × {} MB/s disks, {} stripe unit ({} wide), {} × {} MB/s controllers",
            config.disks,
            config.disk_mb_s,
            format_bytes(config.stripe_unit_bytes),
            format_bytes(config.stripe_width()),
            config.controllers,
            config.controller_mb_s
        )
    }
}

/// What an emulated striped volume reports about a run: always marked emulated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct StripedFigures {
    /// Always true: these figures come from a model, not a volume.
    pub emulated: bool,
    pub disks: u32,
    pub disk_mb_s: f64,
    /// Bytes on one disk before the next.
    pub stripe_unit: u64,
    pub controllers: u32,
    pub controller_mb_s: f64,
    pub requests: u64,
    /// Disks one request kept busy, on average.
    pub disks_per_request: f64,
    /// Stripe units written, each after a rotational delay.
    pub rotational_delays: u64,
    /// Requests a controller, not a disk, finished last.
    pub controller_bound_pct: f64,
    /// The rate the volume gave these requests, and would give the same requests read (no
    /// rotational delays), MB/s.
    pub write_mb_s: f64,
    pub read_mb_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volume(disks: u32, unit_kib: u64, controllers: u32, controller_mb_s: f64) -> StripedConfig {
        StripedConfig {
            disks,
            disk_mb_s: 5.0,
            track_bytes: 64 << 10,
            stripe_unit_bytes: unit_kib << 10,
            controllers,
            controller_mb_s,
            rotational_delay_ms: (64 << 10) as f64 / 5e6 * 1e3,
        }
    }

    /// MB/s of back-to-back requests of `len` bytes over `count` requests.
    fn rate(config: &StripedConfig, len: u64, write: bool) -> f64 {
        let count = 200;
        let seconds: f64 = (0..count)
            .map(|index| {
                let times = request_times(config, index * len, len);
                if write { times.write_s } else { times.read_s }
            })
            .sum();
        (count * len) as f64 / seconds / 1e6
    }

    #[test]
    fn a_transfer_of_half_the_stripe_width_keeps_half_the_disks_busy() {
        let config = volume(10, 64, 10, 1000.0);
        let full = request_times(&config, 0, 640 << 10);
        let half = request_times(&config, 0, 320 << 10);
        assert_eq!((full.disks, half.disks), (10, 5));
        let ratio = rate(&config, 320 << 10, false) / rate(&config, 640 << 10, false);
        assert!((ratio - 0.5).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn k_track_stripe_units_write_at_k_over_k_plus_one_of_the_read_rate() {
        for (tracks, expected) in [
            (1, 1.0 / 2.0),
            (2, 2.0 / 3.0),
            (3, 3.0 / 4.0),
            (4, 4.0 / 5.0),
        ] {
            let config = volume(4, 64 * tracks, 4, 1000.0);
            let width = config.stripe_width();
            let ratio = rate(&config, width, true) / rate(&config, width, false);
            assert!((ratio - expected).abs() < 1e-9, "{tracks} tracks: {ratio}");
        }
    }

    #[test]
    fn four_five_mb_disks_fill_one_twenty_mb_controller() {
        let four = volume(4, 64, 1, 20.0);
        let five = volume(5, 64, 1, 20.0);
        let five_on_two = volume(5, 64, 2, 20.0);
        let read = |config: &StripedConfig| rate(config, config.stripe_width(), false);
        assert!((read(&four) - 20.0).abs() < 0.01, "{}", read(&four));
        assert!(
            (read(&five) - 20.0).abs() < 0.01,
            "a fifth disk adds nothing"
        );
        assert!(
            (read(&five_on_two) - 25.0).abs() < 0.01,
            "{}",
            read(&five_on_two)
        );
    }

    #[test]
    fn the_settings_name_every_bad_field() {
        let mut errors = FieldErrors::default();
        let settings: Settings = serde_json::from_value(serde_json::json!({
            "disks": 0, "disk_mb_s": -1, "track": "64K", "stripe_unit": "96K",
            "rotational_delay_ms": 5000, "extra": 1
        }))
        .expect("an object");
        assert!(plan(None, &settings, &mut errors).is_none());
        assert_eq!(
            errors.0.keys().collect::<Vec<_>>(),
            ["target.extra"],
            "an unknown setting is named first: {errors}"
        );
        let mut errors = FieldErrors::default();
        let mut settings = settings;
        settings.remove("extra");
        assert!(plan(None, &settings, &mut errors).is_none());
        for field in ["disks", "disk_mb_s", "stripe_unit", "rotational_delay_ms"] {
            assert!(
                errors.0.contains_key(&format!("target.{field}")),
                "{field}: {errors}"
            );
        }
    }
}
