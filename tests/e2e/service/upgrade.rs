//! A database written before a run's result was stored as one document opens, is migrated,
//! and shows its campaigns exactly as the version that wrote it did.

use crate::support::fixtures::{fixture, scratch};
use crate::support::lab::{Lab, LabOptions};

/// A file of the fixture database's directory, as text.
fn read(name: &str) -> String {
    let path = fixture(&format!("db-0005/{name}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test]
async fn a_database_from_before_run_documents_shows_its_campaigns_unchanged() {
    let root = scratch();
    std::fs::copy(fixture("db-0005/lab.db"), root.path().join("lab.db")).expect("copy the fixture");
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
