//! The presentation layer: what a person reads, drawn from the results model (the points and
//! the verdict) and from a per-run view ([`RunView`]), never from a storage record. One file per
//! chart (`charts/`), the CLI table and CSV (`report`), two campaigns side by side (`compare`)
//! and the pages' view-models (`page`); the HTTP layer and the CLI only lay them out.

pub mod charts;
pub mod compare;
pub mod page;
pub mod report;
pub mod run;

pub use run::{RunPhase, RunView};

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every `.rs` file under `dir`, with its text.
    fn sources(dir: &Path, found: &mut Vec<(String, String)>) {
        let entries = std::fs::read_dir(dir).expect("the views' sources");
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                found.push((path.display().to_string(), text));
            }
        }
    }

    /// The views read the results model and run views: no storage record, no lab, no HTTP.
    #[test]
    fn the_views_import_nothing_from_the_store_the_lab_or_http() {
        let mut found = Vec::new();
        sources(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/views"),
            &mut found,
        );
        assert!(found.len() > 10, "the views' files: {}", found.len());
        // Spelt in parts, so that this test's own text does not name them.
        let above = ["store", "lab", "http"].map(|module| format!("crate::{module}"));
        let names = |text: &str, module: &str| {
            text.match_indices(module).any(|(at, _)| {
                text[at + module.len()..]
                    .chars()
                    .next()
                    .is_none_or(|next| !(next.is_alphanumeric() || next == '_'))
            })
        };
        let wrong: Vec<String> = found
            .iter()
            .flat_map(|(path, text)| {
                above
                    .iter()
                    .filter(|module| names(text, module))
                    .map(move |module| format!("{path} uses {module}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
