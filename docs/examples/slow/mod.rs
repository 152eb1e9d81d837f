//! A slow directory: files under a directory, written as `dir` writes them, at no more than a
//! set rate (a slow disk or a throttled share, played on a fast one). An example of a target
//! kind: copied to `src/engine/target/slow/mod.rs`, declared (`pub mod slow;`) and listed
//! (`&slow::Slow,`) with the other kinds in `src/engine/target/mod.rs`, it is planned, checked against the lab's target
//! roots, given the room check and the start-up sweep, offered by the form and described by
//! the OpenAPI document, with no other file touched. The lab's unit tests compile and run it
//! as it is here (`engine::target::slow_example`), so it stays one that builds.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::dir::DirSink;
use super::{
    Capabilities, FieldInput, Kind, KindFacts, Opening, Settings, SettingsText, SettingsType, Sink,
    Target, TargetPlan, ToolRepository, TypedField, Writes, read_settings, settings_of,
};
use crate::engine::error::EngineError;
use crate::field_errors::FieldErrors;

/// What this kind is before its settings are read: files the lab makes under a directory.
pub const FACTS: KindFacts = KindFacts {
    id: "slow",
    label: "slow directory",
    takes_path: true,
    writes: Writes::FilesUnder,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

/// The rate unless a spec says, MB/s.
const DEFAULT_RATE_MB_S: f64 = 50.0;

/// A slow directory's settings as a spec gives them.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowSettings {
    /// Slow directory: the most it takes, MB/s (default 50).
    #[schema(minimum = 1.0, maximum = 100_000.0)]
    pub rate_mb_s: Option<f64>,
}

/// The slow directory kind.
pub struct Slow;

impl Kind for Slow {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        let path = path.filter(|path| !path.as_os_str().is_empty());
        if path.is_none() {
            errors.add("target.path", "is required with kind slow");
        }
        let settings: SlowSettings = read_settings(&FACTS, settings, errors)?;
        let rate_mb_s = settings.rate_mb_s.unwrap_or(DEFAULT_RATE_MB_S);
        if !(1.0..=100_000.0).contains(&rate_mb_s) {
            errors.add("target.rate_mb_s", "must be between 1 and 100000");
            return None;
        }
        Some(TargetPlan::new(SlowTarget {
            path: path?.to_path_buf(),
            rate_mb_s,
        }))
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<SlowTarget>(value)
    }

    fn settings_type(&self) -> Option<SettingsType> {
        Some(SettingsType::of::<SlowSettings>())
    }

    fn typed_fields(&self) -> &'static [TypedField] {
        &[TypedField {
            setting: "rate_mb_s",
            label: "MB/s at most",
            input: FieldInput::Number,
            default: "50",
        }]
    }

    fn settings_from_text(&self, text: &mut dyn SettingsText) -> Settings {
        settings_of(&SlowSettings {
            rate_mb_s: text.number("rate_mb_s"),
        })
    }
}

/// A directory written at no more than a rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowTarget {
    /// The directory the run's file is made in.
    pub path: PathBuf,
    /// The most it takes, MB/s.
    pub rate_mb_s: f64,
}

impl Target for SlowTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::HARDWARE
    }

    fn takes_mb_s(&self, _compress_ratio: f64) -> Option<f64> {
        Some(self.rate_mb_s)
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        Some(&mut self.path)
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        let sink = DirSink::create(&self.path, how.tag, how.direct)?.at_the_disks_pace();
        Ok(vec![Box::new(SlowSink {
            inner: sink,
            bytes_per_s: self.rate_mb_s * 1e6,
            started: None,
            written: 0,
        })])
    }

    fn words(&self) -> String {
        format!(
            "slow directory {} ({} MB/s)",
            self.path.display(),
            self.rate_mb_s
        )
    }
}

/// A directory's sink that waits after each block until the rate allows the bytes so far.
struct SlowSink {
    inner: DirSink,
    bytes_per_s: f64,
    started: Option<Instant>,
    written: u64,
}

impl Sink for SlowSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        let started = *self.started.get_or_insert_with(Instant::now);
        self.inner.write_block(data)?;
        self.written += data.len() as u64;
        let due = Duration::from_secs_f64(self.written as f64 / self.bytes_per_s);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
        Ok(())
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        self.inner.finish(fsync)
    }

    fn alignment(&self) -> usize {
        self.inner.alignment()
    }

    fn path(&self) -> &Path {
        self.inner.path()
    }
}
