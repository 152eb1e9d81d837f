//! A forecast's request: the user's size (bytes, files, daily change, backups kept) and the
//! ladder of generated trees of the same shape, each double the last, whose lives the
//! forecast is fitted to.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{ByteSize, FieldErrors, format_size};
use crate::engine::tool::life::LadderRung;

/// The largest size a forecast answers for: 1 EiB.
pub const MAX_FORECAST_BYTES: u64 = 1 << 60;
/// The fewest rungs a ladder has: a power law fitted to fewer says little of its error.
pub const MIN_RUNGS: u32 = 4;
/// The most rungs a ladder has.
pub const MAX_RUNGS: u32 = 8;
/// The fewest files a rung holds, so the ladder moves what grows with files.
pub const MIN_RUNG_FILES: u64 = 16;
/// The first rung's bytes when the spec does not say.
pub const DEFAULT_LADDER_FROM: u64 = 32 << 20;

/// What the user's backup is, for the life to be forecast to: its source's bytes and files,
/// the share of bytes a day changes and the backups kept; and the ladder measured for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForecastSpec {
    /// The source's bytes, up to 1E (`20T`, `36TB`).
    #[schema(value_type = String, example = "20T")]
    pub size: ByteSize,
    /// The source's files.
    #[schema(minimum = 1)]
    pub files: u64,
    /// The share of its bytes a day changes, 0 to 1 (0.02 is 2 %); by default the life's
    /// edited share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub change: Option<f64>,
    /// The backups kept; by default the life's `keep`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 100000)]
    pub keep: Option<u32>,
    /// The first rung's bytes (default 32M); each rung after it is double.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "32M")]
    pub ladder_from: Option<ByteSize>,
    /// Rungs of the ladder, 4 to 8 (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 4, maximum = 8)]
    pub rungs: Option<u32>,
}

impl ForecastSpec {
    /// The user's mean file size, which every rung's files are drawn around.
    pub fn mean_file_bytes(&self) -> u64 {
        (self.size.bytes() / self.files.max(1)).max(1)
    }

    /// The ladder's rungs: its first size, doubled for each rung after it.
    pub fn ladder(&self) -> Vec<LadderRung> {
        let from = self
            .ladder_from
            .as_ref()
            .map_or(DEFAULT_LADDER_FROM, ByteSize::bytes);
        // Never more than the most rungs, whatever was asked: the check names a count beyond.
        (0..self.rungs.unwrap_or(MIN_RUNGS).min(MAX_RUNGS))
            .map(|rung| LadderRung {
                rung: rung + 1,
                bytes: from.saturating_mul(1 << rung),
                mean_file_bytes: self.mean_file_bytes(),
            })
            .collect()
    }

    /// Every field out of its bounds, named; `max_size` is the most a run may move (the
    /// lab's `--max-size`), which the largest rung must not pass.
    pub fn check(&self, errors: &mut FieldErrors, max_size: Option<u64>) {
        let size = self.size.bytes();
        let sized = size > 0 && size <= MAX_FORECAST_BYTES && (1..=size).contains(&self.files);
        if size == 0 || size > MAX_FORECAST_BYTES {
            errors.add(
                "forecast.size",
                format!(
                    "must be above 0 and at most {}",
                    format_size(MAX_FORECAST_BYTES)
                ),
            );
        }
        if self.files == 0 || self.files > size.max(1) {
            errors.add(
                "forecast.files",
                "must be at least 1 and at most one a byte of forecast.size",
            );
        }
        if let Some(change) = self.change
            && !(change.is_finite() && (0.0..=1.0).contains(&change))
        {
            errors.add(
                "forecast.change",
                format!("{change} is not a share from 0 to 1 (0.02 is 2 %)"),
            );
        }
        if self.keep.is_some_and(|keep| !(1..=100_000).contains(&keep)) {
            errors.add("forecast.keep", "must be from 1 to 100000");
        }
        let rungs = self.rungs.unwrap_or(MIN_RUNGS);
        if !(MIN_RUNGS..=MAX_RUNGS).contains(&rungs) {
            errors.add(
                "forecast.rungs",
                format!("must be from {MIN_RUNGS} to {MAX_RUNGS}"),
            );
            return;
        }
        // The ladder's shape comes from the size and the files: judged only when they hold.
        if !sized {
            return;
        }
        let Some(first) = self.ladder().first().copied() else {
            return;
        };
        if first.bytes / self.mean_file_bytes() < MIN_RUNG_FILES {
            errors.add(
                "forecast.ladder_from",
                format!(
                    "the first rung ({}) holds fewer than {MIN_RUNG_FILES} files of the mean \
                     size forecast.size ÷ forecast.files gives ({}): give a larger first rung",
                    format_size(first.bytes),
                    format_size(self.mean_file_bytes())
                ),
            );
        }
        if let Some(why) = max_size.and_then(|most| self.over_limit(most)) {
            errors.add("forecast.ladder_from", why);
        }
    }

    /// Why the ladder's largest rung is more than a run may move (`most`, the lab's
    /// `--max-size`), if it is.
    pub fn over_limit(&self, most: u64) -> Option<String> {
        let last = self.ladder().last()?.bytes;
        (last > most).then(|| {
            format!(
                "the largest rung ({}) is over the lab's largest run ({}, --max-size): start \
                 the ladder lower, or give fewer rungs",
                format_size(last),
                format_size(most)
            )
        })
    }

    /// The request in words: `20 TiB in 50 000 000 files, 2 % a day, 365 kept`.
    pub fn words(&self, change: f64, keep: u32) -> String {
        format!(
            "{} in {} files, {} % changed a day, {keep} backups kept",
            crate::size::format_bytes(self.size.bytes()),
            self.files,
            (change * 1000.0).round() / 10.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(size: &str, files: u64) -> ForecastSpec {
        ForecastSpec {
            size: ByteSize::parse(size).expect("a size"),
            files,
            change: None,
            keep: None,
            ladder_from: None,
            rungs: None,
        }
    }

    #[test]
    fn the_ladder_doubles_from_its_first_rung_in_the_users_shape() {
        let ladder = spec("20T", 50_000_000).ladder();
        let bytes: Vec<u64> = ladder.iter().map(|rung| rung.bytes).collect();
        assert_eq!(bytes, [32 << 20, 64 << 20, 128 << 20, 256 << 20]);
        assert!(ladder.iter().all(|rung| rung.mean_file_bytes == 439_804));
    }

    #[test]
    fn a_forecast_without_a_source_runs_a_life_on_each_rung() {
        let mut spec = crate::spec::parse_json(
            r#"{"source": {}, "target": {"kind": "null"}, "tool": {"name": "tar"},
                "forecast": {"size": "20T", "files": 50000000}}"#,
        )
        .expect("a spec");
        spec.settle_defaults();
        assert_eq!(spec.tests, ["tool_life"]);
        let plans = spec.plan().expect("plans");
        let rungs: Vec<u64> = plans
            .iter()
            .filter_map(|plan| plan.params.ladder.map(|rung| rung.bytes))
            .collect();
        assert_eq!(rungs, [32 << 20, 64 << 20, 128 << 20, 256 << 20]);
    }

    #[test]
    fn every_bad_field_is_named() {
        let mut bad = spec("2E", 0);
        bad.change = Some(1.5);
        bad.keep = Some(0);
        let mut errors = FieldErrors::default();
        bad.check(&mut errors, None);
        let named: Vec<&str> = errors.0.keys().map(String::as_str).collect();
        assert_eq!(
            named,
            [
                "forecast.change",
                "forecast.files",
                "forecast.keep",
                "forecast.size"
            ]
        );
        let mut errors = FieldErrors::default();
        spec("1E", 1_000).check(&mut errors, Some(64 << 20));
        // Files of 1 PiB each: no rung holds 16; the largest rung is over the lab's limit.
        let said = &errors.0["forecast.ladder_from"];
        assert!(said.contains("fewer than 16 files"), "{said}");
        assert!(said.contains("over the lab's largest run"), "{said}");
        let mut errors = FieldErrors::default();
        spec("36TB", 50_000_000).check(&mut errors, Some(1 << 30));
        assert!(errors.is_empty(), "{errors:?}");
    }
}
