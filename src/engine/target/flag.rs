//! The `--target` flag of `backlab run`: a kind and its settings in one word, as an operator
//! types them.

use std::path::PathBuf;

use super::{Settings, TargetKind, device, dir, null, tape};

/// A target from the flag: `null`; `device:PATH`; `tape:MODEL` or `tape:MODEL:DRIVES`;
/// `KIND:NAME=VALUE,…` for any kind's settings (`path=` its path); anything else a directory.
/// A bad value is left for the spec's validation to name.
pub fn read(text: &str) -> (TargetKind, Option<PathBuf>, Settings) {
    if text == "null" {
        (TargetKind::of(&null::Null), None, Settings::new())
    } else if let Some(path) = text.strip_prefix("device:") {
        (
            TargetKind::of(&device::Device),
            Some(PathBuf::from(path)),
            Settings::new(),
        )
    } else if let Some((kind, pairs)) = text
        .split_once(':')
        .and_then(|(kind, rest)| Some((TargetKind::from_id(kind)?, rest)))
        .filter(|(_, rest)| rest.contains('='))
    {
        let mut path = None;
        let mut settings = Settings::new();
        for (name, value) in pairs.split(',').filter_map(|pair| pair.split_once('=')) {
            if name.trim() == "path" {
                path = Some(PathBuf::from(value));
                continue;
            }
            let value = match (value.parse::<u64>(), value.parse::<f64>()) {
                (Ok(whole), _) => serde_json::Value::from(whole),
                (_, Ok(number)) => serde_json::Value::from(number),
                _ => serde_json::Value::from(value),
            };
            settings.insert(name.trim().to_string(), value);
        }
        (kind, path, settings)
    } else if let Some(tape) = text.strip_prefix("tape:") {
        let (model, drives) = tape.split_once(':').unwrap_or((tape, ""));
        let mut settings = Settings::new();
        settings.insert("model".to_string(), model.into());
        if !drives.is_empty() {
            settings.insert(
                "drives".to_string(),
                drives.parse::<u32>().unwrap_or(0).into(),
            );
        }
        (TargetKind::of(&tape::Tape), None, settings)
    } else {
        (
            TargetKind::of(&dir::Dir),
            Some(PathBuf::from(text)),
            Settings::new(),
        )
    }
}
