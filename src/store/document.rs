//! What the store keeps for the layers above it without reading it: a campaign's judgement and
//! headline, its adaptive search's state, other tools' figures.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::StoreError;

/// A document kept as its writer encoded it (JSON text) and handed back the same. The store
/// neither reads nor checks what is inside: whoever reads it back decodes it and decides what
/// a shape or a version it no longer reads means (judge again, show nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document(String);

impl Document {
    /// `value` as a document.
    pub fn encode<T: Serialize>(value: &T) -> Result<Self, StoreError> {
        serde_json::to_string(value)
            .map(Document)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode: {e}")))
    }

    /// What the document holds, read as a `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// Its text, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A document read back from the database.
    pub(super) fn kept(text: String) -> Self {
        Document(text)
    }
}
