//! Network backup end to end: the real lab, real `backlab agent` processes, real TCP, and
//! when the machine allows it, a real rate-limited link between two network namespaces.

mod agents;
mod fuzz;
mod link;
mod sweep;

use std::time::Duration;

use serde_json::Value;

use crate::support::lab::Lab;

/// Waits until the campaign's first run is running.
async fn wait_running(lab: &Lab, id: &str) {
    lab.wait_campaign(id, "its run to start", Duration::from_secs(30), |c| {
        c["runs"][0]["status"] == "running"
    })
    .await;
}

/// The result of a finished campaign's only run.
async fn only_result(lab: &Lab, id: &str) -> Value {
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{campaign}");
    runs[0]["result"].clone()
}
