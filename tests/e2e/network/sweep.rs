//! Seed 000's experiment: six to eight clients × two streams into two LTO-4 drives, for each
//! buffers × block size combination, drawn as throughput by client count.

use std::time::Duration;

use serde_json::json;

use crate::support::lab::{Lab, LabOptions};
use crate::support::runs::all_done;

#[tokio::test]
async fn a_client_sweep_draws_the_seed_000_chart() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&json!({
            "name": "seed 000 sweep",
            "source": {"generated": {"size": "192M", "compress_ratio": 2.0}},
            "target": {"kind": "tape", "model": "lto-4", "drives": 2},
            "tests": ["network_backup"],
            "params": {"streams": 2},
            "matrix": {"clients": [6, 7, 8], "buffers": [16, 32], "block_size": ["128K", "256K"]}
        }))
        .await;
    lab.follow(&id, Duration::from_secs(600)).await;
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    // 3 client counts × 2 buffers × 2 block sizes.
    let runs = all_done(&campaign, 12);
    for run in runs {
        let result = &run["result"];
        assert_eq!(result["status"], "done", "{result}");
        let clients = run["params"]["clients"].as_u64().expect("clients");
        assert!((6..=8).contains(&clients));
        assert_eq!(
            result["clients"].as_array().map(Vec::len),
            Some(clients as usize)
        );
        assert!(result["mb_per_s"].as_f64().unwrap_or(0.0) > 0.0);
    }

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("chart-matrix") && page.contains("chart-clients"));
    assert!(
        page.contains("8 clients × 2"),
        "the sweep table names the client counts"
    );
    let chart = lab
        .get_text(&format!("/campaigns/{id}/charts/matrix.svg"))
        .await;
    let svg = roxmltree::Document::parse(&chart).expect("the chart is well-formed SVG");
    let texts: Vec<&str> = svg
        .descendants()
        .filter_map(|node| node.text())
        .map(str::trim)
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Network backup by clients (median MB/s")),
        "{texts:?}"
    );
    assert!(texts.contains(&"clients"));
    for combination in [
        "16 × 128 KiB",
        "16 × 256 KiB",
        "32 × 128 KiB",
        "32 × 256 KiB",
    ] {
        assert!(
            texts.contains(&combination),
            "legend {combination}: {texts:?}"
        );
    }
    for clients in ["6", "7", "8"] {
        assert!(texts.contains(&clients), "x axis tick {clients}");
    }
}
