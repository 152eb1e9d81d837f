//! Field errors: every bad field of a request, by its path. Shared by the campaign checks and
//! the engine's checks against the machine (preflight), and answered as one 422 by the HTTP side.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// Field-level validation errors, keyed by the field's path (`params.block_size`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FieldErrors(pub BTreeMap<String, String>);

impl FieldErrors {
    /// Records a problem with one field; a second problem with the same field is appended.
    pub fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let message = message.into();
        self.0
            .entry(path.into())
            .and_modify(|existing| {
                existing.push_str("; ");
                existing.push_str(&message);
            })
            .or_insert(message);
    }

    /// Whether no field has a problem.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds every error of another set.
    pub fn extend(&mut self, other: FieldErrors) {
        for (path, message) in other.0 {
            self.add(path, message);
        }
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (path, message)) in self.0.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{path}: {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldErrors {}
