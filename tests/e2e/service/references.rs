//! Another tool's result beside a campaign: fio writing the same workload as the campaign's
//! target test, imported with `backlab import`, shown in the report's table and on one chart
//! with backlab's figure.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli::backlab;
use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};

#[tokio::test]
async fn a_fio_result_is_drawn_beside_the_campaign_of_the_same_workload() {
    let lab = Lab::fresh(&LabOptions::default());
    let target = lab.empty_dir("written");
    // The same workload for both: 256 MiB written sequentially in 1 MiB blocks, O_DIRECT.
    let spec = json!({
        "name": "write beside fio",
        "source": {"generated": {"size": "256M"}},
        "target": {"kind": "dir", "path": target},
        "tests": ["tape_write"],
        "params": {"block_size": "1M", "direct": true, "size": "256M", "buffers": 8}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");

    let fio_dir = scratch();
    let fio = std::process::Command::new("fio")
        .args([
            "--name=seqwrite",
            "--rw=write",
            "--bs=1M",
            "--size=256M",
            "--direct=1",
            "--ioengine=psync",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", fio_dir.path().display()))
        .output()
        .expect("fio runs (Debian package fio)");
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let result = fio_dir.path().join("fio.json");
    std::fs::write(&result, &fio.stdout).expect("fio's output kept");

    let imported = backlab()
        .args(["import", "fio"])
        .arg(&result)
        .args(["--campaign", &id, "--lab", &lab.url("")])
        .output()
        .expect("backlab import");
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let references = lab
        .get_json(&format!("/api/campaigns/{id}/references"))
        .await;
    let kept = references.as_array().expect("references");
    assert_eq!(kept.len(), 1, "{references}");
    assert_eq!(kept[0]["workload"], "write", "{references}");
    assert!(
        kept[0]["mb_per_s"].as_f64().unwrap_or(0.0) > 0.0,
        "{references}"
    );

    // The report: the table names both figures, the chart draws both bars.
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("Other tools beside backlab"), "the section");
    assert!(page.contains("fio-"), "the tool and its version");
    assert!(
        page.contains("bs=1M") && page.contains("direct=1"),
        "its conditions"
    );
    let bar = |class: &str| {
        let at = page
            .find(&format!("class=\"{class}\""))
            .unwrap_or_else(|| panic!("no {class} on the chart"));
        let width = page[at..]
            .split("width=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|width| width.parse::<f64>().ok())
            .unwrap_or(0.0);
        assert!(width > 0.0, "{class} has no length");
    };
    bar("backlab-bar");
    bar("reference-bar");

    // The campaign's series draws fio's figure beside backlab's, on the target write's line.
    let series = lab.get_json(&format!("/api/campaigns/{id}")).await["series"]
        .as_str()
        .expect("a series")
        .to_string();
    let history = lab.get_json(&format!("/api/series/{series}")).await;
    let line = history["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .find(|line| line["test"] == "tape_write")
        .expect("the target write's line");
    assert_eq!(line["references"][0]["campaign"], id.as_str(), "{line}");
    assert_eq!(
        line["references"][0]["mb_per_s"], kept[0]["mb_per_s"],
        "{line}"
    );
    let page = lab.get_text(&format!("/series/{series}")).await;
    assert!(
        page.contains("class=\"reference-mark\""),
        "the diamond on the series chart"
    );
    assert!(page.contains("fio-"), "named on the series chart");

    // Another tool's output under the wrong name, and an unknown campaign, are refused.
    let fio_json: Value = serde_json::from_slice(&fio.stdout).expect("fio JSON");
    let wrong = lab
        .post_json(
            &format!("/api/campaigns/{id}/references"),
            &json!({"tool": "iperf3", "result": fio_json}),
        )
        .await;
    assert_eq!(wrong.status().as_u16(), 422);
    let body: Value = wrong.json().await.expect("JSON");
    assert!(body["fields"]["result"].is_string(), "{body}");
    let missing = lab
        .post_json(
            "/api/campaigns/AAAAAAAAAAAA/references",
            &json!({"tool": "fio", "result": fio_json}),
        )
        .await;
    assert_eq!(missing.status().as_u16(), 404);
}
