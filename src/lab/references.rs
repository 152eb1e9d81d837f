//! Other tools' results imported beside a campaign's own figures.

use serde::Deserialize;

use super::{Campaigns, LabError, check_id, not_found, read_json};
use crate::clock::now_ms;
use crate::field_errors::FieldErrors;
use crate::reference::{self, Reference, Tool};
use crate::store::{Document, MAX_REFERENCES};

/// An import: which tool's output, and the output itself.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Import {
    tool: Tool,
    result: serde_json::Value,
}

impl Campaigns<'_> {
    /// Reads a tool's result (`{"tool": "fio" | "iperf3", "result": …}`) and keeps its figures
    /// with campaign `id`; answers every reference the campaign holds.
    pub async fn import_references(
        &self,
        id: &str,
        body: &[u8],
    ) -> Result<Vec<Reference>, LabError> {
        check_id(id)?;
        let import: Import = read_json(body)?;
        let references = reference::read(import.tool, &import.result).map_err(|error| {
            let mut errors = FieldErrors::default();
            errors.add("result", error.to_string());
            LabError::Invalid(errors)
        })?;
        let documents: Vec<Document> = references
            .iter()
            .map(Document::encode)
            .collect::<Result<_, _>>()?;
        match self
            .lab
            .store
            .add_references(id, &documents, now_ms())
            .await?
        {
            None => Err(not_found(id)),
            Some(false) => Err(LabError::Conflict(format!(
                "a campaign keeps at most {MAX_REFERENCES} reference figures"
            ))),
            Some(true) => self.references(id).await,
        }
    }

    /// The reference figures kept with campaign `id`, in the order they were imported (any
    /// that no longer reads left out).
    pub async fn references(&self, id: &str) -> Result<Vec<Reference>, LabError> {
        check_id(id)?;
        let kept = self
            .lab
            .store
            .references(id)
            .await?
            .ok_or_else(|| not_found(id))?;
        Ok(kept.iter().filter_map(|kept| kept.decode().ok()).collect())
    }
}
