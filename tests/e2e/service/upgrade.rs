//! A database written before a run's result was stored as one document opens, is migrated,
//! and shows its campaigns exactly as the version that wrote it did.

use std::path::{Path, PathBuf};

use crate::support::lab::{Lab, LabOptions, scratch};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/db-0005")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[tokio::test]
async fn a_database_from_before_run_documents_shows_its_campaigns_unchanged() {
    let root = scratch();
    std::fs::copy(fixture("lab.db"), root.path().join("lab.db")).expect("copy the fixture");
    let lab = Lab::start(root.path(), &LabOptions::default());
    let ids = read("ids");
    let ids: Vec<&str> = ids.split_whitespace().collect();
    assert_eq!(ids.len(), 3);
    for id in &ids {
        for (path, file) in [
            (
                format!("/api/campaigns/{id}"),
                format!("{id}.campaign.json"),
            ),
            (
                format!("/api/campaigns/{id}/bottleneck"),
                format!("{id}.report.json"),
            ),
        ] {
            let then: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
            assert_eq!(lab.get_json(&path).await, then, "{path}");
        }
        let csv = lab
            .get_text(&format!("/api/campaigns/{id}/results.csv"))
            .await;
        assert_eq!(csv, read(&format!("{id}.csv")), "{id}: CSV");
    }
    let list = lab.get_text("/").await;
    for id in &ids {
        assert!(list.contains(id), "the list shows {id}");
    }
}
