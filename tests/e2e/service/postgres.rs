//! The lab on a shared PostgreSQL store: a campaign submitted to one lab process runs to its
//! verdict, and a second lab process on the same database serves its report, its runs and its
//! list entry as the first does.

use std::time::Duration;

use serde_json::json;

use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};
use crate::support::postgres::Postgres;

#[tokio::test]
async fn a_campaign_on_postgres_is_served_by_every_lab_on_it() {
    let cluster = Postgres::database();
    let options = LabOptions {
        db: Some(cluster.url.clone()),
        ..LabOptions::default()
    };
    let (root_a, root_b) = (scratch(), scratch());
    let lab_a = Lab::start(
        root_a.path(),
        &LabOptions {
            host_name: Some("lab-a".into()),
            ..options.clone()
        },
    );
    let spec = json!({
        "name": "shared store",
        "source": {"generated": {"size": "32M"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"block_size": "256K", "size": "32M"}
    });
    let id = lab_a.submit(&spec).await;
    let campaign = lab_a
        .wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    assert_eq!(campaign["runs"][0]["status"], "done", "{campaign}");

    let lab_b = Lab::start(
        root_b.path(),
        &LabOptions {
            host_name: Some("lab-b".into()),
            ..options
        },
    );
    let seen_by_b = lab_b.get_json(&format!("/api/campaigns/{id}")).await;
    assert_eq!(seen_by_b["status"], "done", "{seen_by_b}");
    assert_eq!(
        seen_by_b["runs"][0]["mb_per_s"], campaign["runs"][0]["mb_per_s"],
        "the same stored figure"
    );
    let report = lab_b.get(&format!("/campaigns/{id}")).await;
    assert_eq!(report.status(), 200);
    let page = report.text().await.expect("page");
    assert!(
        page.contains("shared store"),
        "the report names the campaign"
    );
    let list = lab_b.get_text("/").await;
    assert!(list.contains(&id), "the list shows the campaign");
}
