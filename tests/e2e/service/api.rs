//! The service's own surface: first start on a fresh machine, the OpenAPI document, health and
//! metrics.

use std::time::Duration;

use serde_json::json;

use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;

#[tokio::test]
async fn the_openapi_document_describes_every_route() {
    let lab = Lab::fresh(&LabOptions::default());
    let doc = lab.get_json("/api/openapi.json").await;
    assert!(
        doc["openapi"].as_str().unwrap_or("").starts_with("3."),
        "{doc}"
    );
    let routes = [
        ("post", "/api/campaigns"),
        ("get", "/api/campaigns"),
        ("get", "/api/campaigns/{id}"),
        ("delete", "/api/campaigns/{id}"),
        ("get", "/api/campaigns/{id}/bottleneck"),
        ("get", "/api/campaigns/{id}/results.csv"),
        ("get", "/api/campaigns/{id}/events"),
        ("post", "/api/campaigns/{id}/cancel"),
        ("post", "/api/campaigns/{id}/rerun"),
        ("get", "/api/openapi.json"),
        ("get", "/healthz"),
        ("get", "/metrics"),
        ("get", "/api/agents"),
        ("get", "/api/hosts"),
    ];
    for (method, path) in routes {
        let operation = &doc["paths"][path][method];
        assert!(
            operation.is_object(),
            "{method} {path} is not in the OpenAPI document"
        );
        assert!(
            operation["responses"].is_object(),
            "{method} {path} has no responses"
        );
    }
    let documented: usize = doc["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().map_or(0, |ops| ops.len()))
        .sum();
    assert_eq!(
        documented,
        routes.len(),
        "every documented route is tested here"
    );

    // And every documented route answers (not 404/405) on the real server.
    for (method, path) in routes {
        let path = path.replace("{id}", "AAAAAAAAAAAA");
        let response = lab
            .client
            .request(
                method.to_uppercase().parse().expect("method"),
                lab.url(&path),
            )
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        assert_ne!(status, 405, "{method} {path}");
        if !path.contains("AAAAAAAAAAAA") {
            assert_ne!(status, 404, "{method} {path}");
        }
        assert!(status < 500, "{method} {path}: {status}");
    }
}

#[tokio::test]
async fn health_and_metrics_answer() {
    let lab = Lab::fresh(&LabOptions::default());
    let health = lab.get_json("/healthz").await;
    assert_eq!(
        health,
        json!({"status": "ok", "database": "writable", "queued": 0, "running": 0})
    );
    let response = lab.get("/metrics").await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("text");
    for line in [
        "# TYPE backlab_runs gauge",
        "backlab_runs{status=\"queued\"} 0",
        "backlab_queue_depth 0",
        "backlab_bytes_moved 0",
        "# TYPE backlab_run_duration_seconds histogram",
        "backlab_run_duration_seconds_bucket{le=\"+Inf\"} 0",
        "backlab_run_duration_seconds_count 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

/// `backlab serve` with no flags but the port: database, data dir and demo dataset appear in
/// the working directory, and a campaign against the demo runs at once.
#[tokio::test]
async fn a_fresh_start_creates_everything_and_the_demo_is_usable() {
    let root = scratch();
    let lab = Lab::start_unconfigured(
        root.path(),
        &[
            ("BACKLAB_BIND", "127.0.0.1:0"),
            ("BACKLAB_DATA_BIND", "127.0.0.1:0"),
            ("BACKLAB_DEMO_SIZE", "24M"),
        ],
    );
    assert!(root.path().join("backlab.db").is_file());
    assert!(root.path().join("backlab-data").is_dir());
    let demo = root.path().join("backlab-data/demo");
    wait_until(
        "the demo dataset",
        Duration::from_secs(60),
        Duration::from_millis(100),
        async || {
            if demo.is_dir() {
                Ok(())
            } else {
                Err("not yet")
            }
        },
    )
    .await;
    let id = lab
        .submit(&json!({"source": {"paths": ["demo"]}, "target": {"kind": "null"}, "tests": ["read_parallel"]}))
        .await;
    let campaign = lab
        .wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    assert_eq!(campaign["runs"][0]["result"]["bytes"], 24 << 20);
    let resolved = campaign["spec"]["source"]["paths"][0]
        .as_str()
        .unwrap_or("");
    assert!(
        resolved.starts_with('/') && resolved.ends_with("backlab-data/demo"),
        "{resolved}"
    );
}
