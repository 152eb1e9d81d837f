//! The null target: discards everything, the ceiling of the pipeline itself.

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Capabilities, Kind, Opening, Settings, Sink, Target, no_path, no_settings};
use crate::engine::error::EngineError;
use crate::engine::target::TargetPlan;
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;

/// The null kind: no path, no settings.
pub struct Null;

impl Kind for Null {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        let no_path = no_path(&FACTS, path, errors);
        let no_settings = no_settings(&FACTS, settings, errors);
        (no_path && no_settings).then(|| TargetPlan::new(NullTarget))
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<NullTarget>(value)
    }
}

/// Discards everything: the ceiling of the pipeline itself.
pub struct NullSink;

impl Sink for NullSink {
    fn write_block(&mut self, _data: &[u8]) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self, _fsync: bool) -> io::Result<()> {
        Ok(())
    }

    fn alignment(&self) -> usize {
        1
    }

    fn path(&self) -> &Path {
        Path::new("null")
    }
}

/// The null target: one sink that keeps nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NullTarget;

/// What this kind is before its settings are read. Discards everything: writes nothing on the host.
pub const FACTS: KindFacts = KindFacts {
    id: "null",
    label: "null (discard)",
    takes_path: false,
    writes: Writes::Nothing,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

impl Target for NullTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    fn open(&self, _how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        Ok(vec![Box::new(NullSink)])
    }

    fn words(&self) -> String {
        "null (discarded)".to_string()
    }
}
