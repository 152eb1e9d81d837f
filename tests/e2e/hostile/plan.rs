//! Requests that ask for huge expansions, and paths that change under a queued run.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};

/// The most memory the lab may reach while refusing any of these requests.
const PEAK_RSS_LIMIT_MIB: f64 = 100.0;

async fn post_raw(lab: &Lab, body: String) -> (u16, Value) {
    let response = lab
        .client
        .post(lab.url("/api/campaigns"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

async fn assert_healthy(lab: &Lab) {
    let health = lab.get_json("/healthz").await;
    assert_eq!(health["status"], "ok", "{health}");
}

#[tokio::test]
async fn a_matrix_bomb_is_refused_by_arithmetic_in_bounded_memory() {
    let lab = Lab::fresh(&LabOptions::default());
    for count in [5_000, 20_000] {
        let ones = vec!["1"; count].join(",");
        let body = format!(
            r#"{{"source": {{"generated": {{"size": "1M"}}}}, "target": {{"kind": "null"}},
                "params": {{"duration_s": 5}},
                "matrix": {{"buffers": [{ones}], "streams": [{ones}]}}}}"#
        );
        let (status, answer) = post_raw(&lab, body).await;
        assert_eq!(status, 422, "{answer}");
        let fields = &answer["fields"];
        let expected = format!("{count} values; at most 64");
        assert!(
            fields["matrix.buffers"]
                .as_str()
                .is_some_and(|m| m.contains(&expected)),
            "{answer}"
        );
        assert!(fields["matrix.streams"].is_string(), "{answer}");
    }
    // Lists within their bounds whose product is too large: refused before any run is built.
    let wide: Vec<u32> = (1..=64).collect();
    let spec = json!({
        "source": {"generated": {"size": "1M"}}, "target": {"kind": "null"},
        "params": {"duration_s": 5},
        "matrix": {"buffers": wide, "streams": wide, "block_size": vec!["64K"; 64]},
        "repeat": 100,
    });
    let (status, answer) = post_raw(&lab, spec.to_string()).await;
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["fields"]["matrix"]
            .as_str()
            .is_some_and(|m| m.contains("runs; at most 1000")),
        "{answer}"
    );
    // The HTML form's matrix fields take the same road.
    let ones = vec!["1"; 20_000].join("%2C");
    let form = format!(
        "preset=bottleneck&source_kind=generated&generated_size=1M&target_kind=null\
         &tests=null_sink&buffers=8&block_size=64K&duration_s=5&compress_ratio=2&repeat=1\
         &matrix_buffers={ones}&matrix_streams={ones}"
    );
    let response = lab
        .client
        .post(lab.url("/campaigns/new"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("POST form");
    let status = response.status().as_u16();
    let page = response.text().await.expect("page");
    let message = page
        .split("class=\"error")
        .nth(1)
        .map(|rest| rest.chars().take(400).collect::<String>())
        .unwrap_or_default();
    assert_eq!(status, 422, "{message}");
    assert!(page.contains("at most 64"), "{message}");

    let peak = lab.peak_rss_mib();
    eprintln!("peak RSS of the lab: {peak:.1} MiB");
    assert!(peak < PEAK_RSS_LIMIT_MIB, "peak RSS {peak:.1} MiB");
    assert_healthy(&lab).await;
    let list = lab.get_json("/api/campaigns").await;
    assert_eq!(list["campaigns"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn a_paths_bomb_is_refused_and_a_wide_campaign_stores_its_paths_once() {
    let lab = Lab::fresh(&LabOptions::default());
    for count in [10_000, 145_000] {
        let paths = vec![r#""demo""#; count].join(",");
        let body = format!(
            r#"{{"source": {{"paths": [{paths}]}}, "target": {{"kind": "null"}},
                "params": {{"duration_s": 5}}, "repeat": 100,
                "matrix": {{"buffers": [8, 16]}}}}"#
        );
        let (status, answer) = post_raw(&lab, body).await;
        assert!(status == 422 || status == 413, "{status} {answer}");
        if status == 422 {
            let expected = format!("{count} paths; at most 256");
            assert!(
                answer["fields"]["source.paths"]
                    .as_str()
                    .is_some_and(|m| m.contains(&expected)),
                "{answer}"
            );
        }
    }
    // The same path twice is named, not read twice.
    std::fs::create_dir_all(lab.data_dir.join("one")).expect("dir");
    let (status, answer) = post_raw(
        &lab,
        json!({"source": {"paths": ["one", "./one"]}, "target": {"kind": "null"},
               "params": {"duration_s": 5}})
        .to_string(),
    )
    .await;
    assert_eq!(status, 422, "{answer}");
    assert!(answer["fields"]["source.paths[1]"].is_string(), "{answer}");

    // The widest campaign allowed: 256 paths × 1000 runs. Accepted, claimed and cancelled in
    // bounded memory: no run copies the path list, no claim plans the whole campaign.
    let mut paths = Vec::new();
    for index in 0..256 {
        let dir = lab.data_dir.join(format!("fs-{index:03}"));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("file"), vec![7u8; 4096]).expect("file");
        paths.push(format!("fs-{index:03}"));
    }
    let spec = json!({
        "source": {"paths": paths}, "target": {"kind": "null"},
        "tests": ["read_parallel", "null_sink"], "params": {"duration_s": 1, "streams": 4},
        "matrix": {"buffers": [8, 16, 32, 64, 128]}, "repeat": 100,
    });
    let id = lab.submit(&spec).await;
    let view = lab.get_json(&format!("/api/campaigns/{id}")).await;
    assert_eq!(view["runs"].as_array().map(Vec::len), Some(1000));
    // Let a few runs be claimed and finish, then stop the rest.
    lab.wait_campaign(
        &id,
        "three runs to finish",
        Duration::from_secs(60),
        |view| view["runs_finished"].as_i64().unwrap_or(0) >= 3,
    )
    .await;
    lab.cancel(&id).await;
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(30))
        .await;

    let peak = lab.peak_rss_mib();
    eprintln!("peak RSS of the lab: {peak:.1} MiB");
    assert!(peak < PEAK_RSS_LIMIT_MIB, "peak RSS {peak:.1} MiB");
    assert_healthy(&lab).await;
}

/// A campaign that keeps the single lane busy, so the next one stays queued.
fn long_null_campaign() -> Value {
    json!({
        "name": "keeps the lane busy",
        "source": {"generated": {"size": "64G"}}, "target": {"kind": "null"},
        "tests": ["null_sink"], "params": {"duration_s": 120},
    })
}

fn dir_campaign(target: &str) -> Value {
    json!({
        "source": {"generated": {"size": "8M"}}, "target": {"kind": "dir", "path": target},
        "tests": ["tape_write"], "params": {"duration_s": 5, "fsync": false},
    })
}

fn run_errors(view: &Value) -> Vec<String> {
    view["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|run| run["result"]["error"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_target_replaced_by_a_link_after_queueing_is_not_written() {
    let outside = scratch();
    let lab = Lab::fresh(&LabOptions::default());
    let target = lab.empty_dir("scratch-target");

    let busy = lab.submit(&long_null_campaign()).await;
    lab.wait_status(&busy, &["running"], Duration::from_secs(30))
        .await;
    let queued = lab.submit(&dir_campaign("scratch-target")).await;
    // Swapped while queued: the directory becomes a link to one outside every root.
    std::fs::remove_dir(&target).expect("remove target");
    std::os::unix::fs::symlink(outside.path(), &target).expect("symlink");
    lab.cancel(&busy).await;

    let view = lab
        .wait_status(&queued, &["failed"], Duration::from_secs(60))
        .await;
    let errors = run_errors(&view);
    assert!(
        errors.iter().any(|e| e.contains("symbolic link")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .all(|e| !e.contains(&outside.path().display().to_string())),
        "a refusal must not say where the link leads: {errors:?}"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).expect("list").count(),
        0,
        "nothing written outside the roots"
    );
    assert_healthy(&lab).await;
}

#[tokio::test]
async fn a_run_queued_under_wider_roots_is_refused_after_a_restart_with_narrower_ones() {
    let root = scratch();
    let wide = scratch();
    let options = LabOptions {
        extra: vec!["--allow-target".into(), wide.path().display().to_string()],
        ..LabOptions::default()
    };
    let mut lab = Lab::start(root.path(), &options);
    let busy = lab.submit(&long_null_campaign()).await;
    lab.wait_status(&busy, &["running"], Duration::from_secs(30))
        .await;
    let queued = lab
        .submit(&dir_campaign(&wide.path().display().to_string()))
        .await;
    lab.signal(rustix::process::Signal::TERM);
    lab.wait_exit(Duration::from_secs(30)).await;
    drop(lab);

    // The same database, without --allow-target.
    let lab = Lab::start(root.path(), &LabOptions::default());
    lab.cancel(&busy).await;
    let view = lab
        .wait_status(&queued, &["failed"], Duration::from_secs(60))
        .await;
    let errors = run_errors(&view);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("no longer under the allowed roots")),
        "{errors:?}"
    );
    assert_eq!(std::fs::read_dir(wide.path()).expect("list").count(), 0);
    assert_healthy(&lab).await;
}

#[tokio::test]
async fn refusals_do_not_say_where_links_lead_and_devices_resolve_from_the_data_dir() {
    let options = LabOptions {
        extra: vec!["--allow-device".into(), "/dev/null".into()],
        ..LabOptions::default()
    };
    let lab = Lab::fresh(&options);
    let secret = scratch();
    std::os::unix::fs::symlink(secret.path(), lab.data_dir.join("escape")).expect("symlink");
    let (status, answer) = post_raw(
        &lab,
        json!({"source": {"paths": ["escape"]}, "target": {"kind": "null"},
               "params": {"duration_s": 5}})
        .to_string(),
    )
    .await;
    assert_eq!(status, 403, "{answer}");
    let shown = answer.to_string();
    assert!(shown.contains("symbolic link"), "{shown}");
    assert!(
        !shown.contains(&secret.path().display().to_string()),
        "{shown}"
    );

    // A relative device path is taken from the data dir, as every other spec path is.
    std::os::unix::fs::symlink("/dev/null", lab.data_dir.join("drive0")).expect("symlink");
    let id = lab
        .submit(&json!({
            "source": {"generated": {"size": "4M"}},
            "target": {"kind": "device", "path": "drive0"},
            "tests": ["tape_write"], "params": {"duration_s": 5},
        }))
        .await;
    let view = lab.get_json(&format!("/api/campaigns/{id}")).await;
    assert_eq!(view["spec"]["target"]["path"], "/dev/null", "{view}");
    lab.wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    assert_healthy(&lab).await;
}
