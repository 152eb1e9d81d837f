//! `backlab submit --wait` against a real lab: it gives up waiting at its `--timeout`, saying
//! that the campaign is still running and where to follow it, and the campaign goes on.

use std::time::Duration;

use serde_json::json;

use crate::support::cli::{backlab, output, stderr, stdout};
use crate::support::lab::{Lab, LabOptions};

#[tokio::test]
async fn submit_wait_gives_up_at_its_timeout_and_says_where_to_follow_the_campaign() {
    let lab = Lab::fresh(&LabOptions::default());
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("long.json");
    // One run of a minute: far longer than the wait.
    let spec = json!({
        "name": "longer than the wait",
        "source": {"generated": {"size": "64G"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"block_size": "256K", "size": "64G", "duration_s": 60,
                   "time_based": true, "source_rate_mb_s": 50}
    });
    std::fs::write(&file, spec.to_string()).expect("the spec written");
    let out = output(backlab().arg("submit").arg(&file).args([
        "--wait",
        "--timeout",
        "2s",
        "--lab",
        &lab.base,
    ]));
    let (printed, said) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(3), "{printed}\n{said}");
    let id = printed
        .split_whitespace()
        .nth(2)
        .map(|id| id.trim_end_matches(':').to_string())
        .unwrap_or_else(|| panic!("no campaign id in {printed}"));
    let url = lab.url(&format!("/campaigns/{id}"));
    assert!(
        said.contains(&format!("campaign {id} is still running")) && said.contains(&url),
        "{said}"
    );
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    assert!(
        ["queued", "running"].contains(&campaign["status"].as_str().unwrap_or_default()),
        "the campaign goes on: {campaign}"
    );
    lab.cancel(&id).await;
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(30))
        .await;
}

#[test]
fn submit_refuses_a_timeout_that_is_not_a_duration() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("any.json");
    std::fs::write(&file, "{}").expect("a spec written");
    let out = output(backlab().arg("submit").arg(&file).args([
        "--wait",
        "--timeout",
        "soon",
        "--lab",
        "http://127.0.0.1:9",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--timeout"), "{}", stderr(&out));
}
