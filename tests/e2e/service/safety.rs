//! The safety rules: allow-listed roots that `..` and symlinks cannot escape, devices, the
//! token, body size, malformed input, limits. Every refusal is a 4xx naming the problem.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli::{backlab, stderr};
use crate::support::fixtures::{create_dataset, scratch};
use crate::support::lab::{Lab, LabOptions};

/// Posts a spec, checks the status and that the error names `field`; returns the body.
async fn refused(lab: &Lab, spec: &Value, status: u16, field: &str) -> Value {
    let response = lab.post_json("/api/campaigns", spec).await;
    let got = response.status().as_u16();
    let body: Value = response.json().await.expect("error body is JSON");
    assert_eq!(got, status, "{spec} -> {body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    assert!(
        body["fields"].get(field).is_some(),
        "the error must name {field}: {body}"
    );
    body
}

#[tokio::test]
async fn paths_outside_the_allowed_roots_are_refused_however_they_are_written() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset(&source, "4M");
    let outside = scratch();
    std::fs::write(outside.path().join("secret"), b"not yours").expect("write");
    let link = lab.data_dir.join("escape");
    std::os::unix::fs::symlink(outside.path(), &link).expect("symlink");
    let data_dir = lab.data_dir.display().to_string();

    let spec = |path: Value| {
        json!({"source": {"paths": [path]}, "target": {"kind": "null"}, "tests": ["read_single"],
               "params": {"duration_s": 2}})
    };
    // `..` relative to the data dir, `..` inside an absolute path, an absolute path, a symlink.
    let dotdot = format!("{}/src/../../", lab.data_dir.display());
    for path in [
        json!("../.."),
        json!(dotdot),
        json!(outside.path()),
        json!("escape"),
        json!(format!("{}/escape/secret", lab.data_dir.display())),
    ] {
        let body = refused(&lab, &spec(path.clone()), 403, "source.paths[0]").await;
        let message = body["fields"]["source.paths[0]"].as_str().unwrap_or("");
        assert!(
            message.contains("outside the allowed roots"),
            "{path}: {message}"
        );
        assert!(
            message.contains(&data_dir),
            "{path}: names the roots: {message}"
        );
    }
    // The symlink's message says that a link leads out, never where to.
    let body = refused(&lab, &spec(json!("escape")), 403, "source.paths[0]").await;
    let message = body["fields"]["source.paths[0]"].as_str().unwrap_or("");
    assert!(message.contains("symbolic link"), "{message}");
    assert!(
        !message.contains(&outside.path().display().to_string()),
        "{message}"
    );

    // Targets follow the same rule.
    let body = refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "dir", "path": outside.path()}}),
        403,
        "target.path",
    )
    .await;
    assert!(
        body["error"].as_str().unwrap_or("").contains("target.path"),
        "{body}"
    );

    // Devices need --allow-device.
    refused(
        &lab,
        &json!({"source": {"generated": {"size": "1M"}}, "target": {"kind": "device", "path": "/dev/null"}, "tests": ["tape_write"]}),
        403,
        "target.path",
    )
    .await;

    // A missing path inside the roots is a plain validation error.
    refused(&lab, &spec(json!("nothing-here")), 422, "source.paths[0]").await;

    // Nothing was queued, and a good spec still goes through.
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(0));
    let id = lab.submit(&spec(json!("src"))).await;
    lab.wait_status(&id, &["done"], Duration::from_secs(30))
        .await;
    assert!(outside.path().join("secret").exists());
}

#[tokio::test]
async fn an_extra_allowed_root_opens_only_itself() {
    let allowed = scratch();
    create_dataset(&allowed.path().join("src"), "2M");
    let options = LabOptions {
        extra: vec![
            "--allow-source".into(),
            allowed.path().display().to_string(),
        ],
        ..LabOptions::default()
    };
    let lab = Lab::fresh(&options);
    let ok = json!({"source": {"paths": [allowed.path().join("src")]}, "target": {"kind": "null"},
                    "tests": ["read_single"], "params": {"duration_s": 2}});
    let id = lab.submit(&ok).await;
    lab.wait_status(&id, &["done"], Duration::from_secs(30))
        .await;
    // A source root is not a target root.
    refused(
        &lab,
        &json!({"source": {"paths": [allowed.path().join("src")]}, "target": {"kind": "dir", "path": allowed.path()}, "tests": ["full_backup"]}),
        403,
        "target.path",
    )
    .await;
}

#[tokio::test]
async fn with_a_token_every_change_needs_it_and_reading_does_not() {
    let options = LabOptions {
        token: Some("s3cret-token".into()),
        ..LabOptions::default()
    };
    let lab = Lab::fresh(&options);
    let spec = json!({"source": {"generated": {"size": "4M"}}, "target": {"kind": "null"}, "tests": ["null_sink"]});

    let missing = lab.post_json("/api/campaigns", &spec).await;
    assert_eq!(missing.status(), 401);
    assert!(missing.headers().contains_key("www-authenticate"));
    let body: Value = missing.json().await.expect("JSON");
    assert!(
        body["error"].as_str().unwrap_or("").contains("token"),
        "{body}"
    );

    let wrong = lab
        .client
        .post(lab.url("/api/campaigns"))
        .bearer_auth("s3cret-tokem")
        .json(&spec)
        .send()
        .await
        .expect("POST");
    assert_eq!(wrong.status(), 401);
    let body: Value = wrong.json().await.expect("JSON");
    assert!(
        body["error"].as_str().unwrap_or("").contains("not valid"),
        "{body}"
    );

    let right = lab
        .client
        .post(lab.url("/api/campaigns"))
        .bearer_auth("s3cret-token")
        .json(&spec)
        .send()
        .await
        .expect("POST");
    assert_eq!(right.status(), 201);
    let id = right.json::<Value>().await.expect("JSON")["id"]
        .as_str()
        .expect("id")
        .to_string();
    lab.wait_status(&id, &["done"], Duration::from_secs(30))
        .await;

    // Reading needs no token: report links are shared.
    assert_eq!(lab.get(&format!("/api/campaigns/{id}")).await.status(), 200);
    assert_eq!(lab.get("/api/campaigns").await.status(), 200);
    for (method, path) in [
        (reqwest::Method::POST, format!("/api/campaigns/{id}/cancel")),
        (reqwest::Method::POST, format!("/api/campaigns/{id}/rerun")),
        (reqwest::Method::DELETE, format!("/api/campaigns/{id}")),
    ] {
        let response = lab
            .client
            .request(method.clone(), lab.url(&path))
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 401, "{method} {path}");
    }
    assert_eq!(lab.get(&format!("/api/campaigns/{id}")).await.status(), 200);
}

#[tokio::test]
async fn bad_bodies_get_field_errors_and_never_a_server_error() {
    let options = LabOptions {
        extra: vec![
            "--max-size".into(),
            "1G".into(),
            "--max-duration".into(),
            "120".into(),
        ],
        ..LabOptions::default()
    };
    let lab = Lab::fresh(&options);
    create_dataset(&lab.data_dir.join("src"), "2M");

    // Malformed JSON.
    let response = lab
        .client
        .post(lab.url("/api/campaigns"))
        .header("content-type", "application/json")
        .body("{\"source\": {\"paths\": [\"src\"]},")
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("JSON");
    assert!(
        !body["fields"].as_object().expect("fields").is_empty(),
        "{body}"
    );

    // Wrong type, unknown field: JSON with bad values, the path of the field is named.
    let body = refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "null"}, "params": {"buffers": "many"}}),
        422,
        "params.buffers",
    )
    .await;
    assert!(
        body["error"]
            .as_str()
            .unwrap_or("")
            .contains("params.buffers: is \"many\"; it must be a whole number from 1 to 1024"),
        "types are said in words: {body}"
    );
    let body = refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "null"}, "params": {"bufers": 8}}),
        422,
        "params.bufers",
    )
    .await;
    assert!(
        body["error"]
            .as_str()
            .unwrap_or("")
            .contains("bufers is not a field here (the fields are: buffers, block_size,"),
        "unknown fields are said in words: {body}"
    );

    // Every bad field at once.
    let body = refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "null"},
                "tests": ["tape_write", "defrag"],
                "params": {"block_size": "6000", "direct": true, "buffers": 0}}),
        422,
        "tests[1]",
    )
    .await;
    let fields = body["fields"].as_object().expect("fields");
    assert!(fields.contains_key("params.block_size"), "{body}");
    assert!(fields.contains_key("params.buffers"), "{body}");

    // Too many runs.
    let many: Vec<u32> = (1..=11).collect();
    let body = refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "null"},
                "matrix": {"buffers": many, "streams": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]},
                "tests": ["read_parallel", "null_sink"], "repeat": 5}),
        422,
        "matrix",
    )
    .await;
    assert!(
        body["fields"]["matrix"]
            .as_str()
            .unwrap_or("")
            .contains("1000"),
        "{body}"
    );

    // Over the lab's limits.
    refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "null"}, "params": {"size": "2G"}}),
        422,
        "params.size",
    )
    .await;
    let body = refused(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "null"}, "params": {"duration_s": 600}}),
        422,
        "params.duration_s",
    )
    .await;
    assert!(
        body["fields"]["params.duration_s"]
            .as_str()
            .unwrap_or("")
            .contains("120")
    );
    refused(
        &lab,
        &json!({"source": {"generated": {"size": "5G"}}, "target": {"kind": "null"}, "tests": ["tape_write"]}),
        422,
        "source.generated.size",
    )
    .await;

    // A body over 1 MiB.
    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(2 << 20));
    // A client of its own: the lab answers 413 without reading the rest and closes the
    // connection, which a pooled client could otherwise try to reuse for the next request.
    let response = reqwest::Client::new()
        .post(lab.url("/api/campaigns"))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 413);
    let body: Value = response.json().await.expect("JSON");
    assert!(
        body["error"].as_str().unwrap_or("").contains("larger than"),
        "{body}"
    );

    // Not UTF-8, empty, unknown campaign, unknown route.
    let response = lab
        .client
        .post(lab.url("/api/campaigns"))
        .body(vec![0xff, 0xfe, 0x00])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 400);
    let response = lab
        .client
        .post(lab.url("/api/campaigns"))
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 400);
    for path in [
        "/api/campaigns/AAAAAAAAAAAA",
        "/api/campaigns/..%2F..%2Fetc",
        "/api/nothing",
    ] {
        let response = lab.get(path).await;
        assert_eq!(response.status(), 404, "{path}");
        let body: Value = response.json().await.expect("JSON");
        assert!(body["error"].is_string());
    }

    // Nothing was queued and the lab is healthy.
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(0));
    assert_eq!(lab.get_json("/healthz").await["status"], "ok");
    assert!(!lab.log().contains("panicked"), "{}", lab.log());
}

#[test]
fn an_open_bind_without_a_token_refuses_to_start() {
    let root = scratch();
    let out = backlab()
        .args(["serve", "--bind", "0.0.0.0:0", "--demo-size", "0"])
        .arg("--db")
        .arg(root.path().join("lab.db"))
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .env_remove("BACKLAB_TOKEN")
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = stderr(&out);
    assert!(stderr.contains("without a token"), "{stderr}");
    assert!(stderr.contains("--token"), "{stderr}");
    assert!(
        !root.path().join("lab.db").exists(),
        "nothing is created when refusing"
    );
}
