//! The object-lock probe against a real S3 server that implements versioning and object lock
//! (moto's server mode): a bucket in compliance mode, one in governance mode and a plain one.
//! Each step the lab shows is the answer the server logged for the same request; the answer
//! reaches the JSON, the page, report.html and the CSV; the probe leaves nothing it could
//! delete; and the store's secret is nowhere the lab writes.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fixtures::create_dataset;
use crate::support::lab::{Lab, LabOptions};
use crate::support::moto::Moto;

const ACCESS_KEY: &str = "backlab-lock-test";
const SECRET_KEY: &str = "backlab-lock-test-secret-1f2e3d";

/// The probe's run of a finished campaign, and the campaign.
async fn probe_of(lab: &Lab, spec: &Value) -> (String, Value, Value) {
    let id = lab.submit(spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(180))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let run = campaign["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|run| run["test"] == "object_lock")
        .expect("the probe's run")["result"]
        .clone();
    assert_eq!(run["status"], "done", "{run}");
    (id, campaign, run)
}

fn spec(store: &str, tests: &[&str]) -> Value {
    let mut spec = json!({
        "name": format!("lock of {store}"),
        "source": {"paths": ["tree"]},
        "target": {"kind": "s3", "store": store},
        "tests": tests,
    });
    if tests.contains(&"tool_backup") {
        spec["tool"] = json!({"name": "restic"});
    }
    spec
}

/// The step whose `tried` starts with `what`.
fn step<'a>(lock: &'a Value, what: &str) -> &'a Value {
    lock["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|step| {
            step["tried"]
                .as_str()
                .is_some_and(|tried| tried.starts_with(what))
        })
        .unwrap_or_else(|| panic!("no step {what:?}: {lock}"))
}

/// Each step of the probe is a request the server logged, in the same order, with the same
/// status.
fn assert_steps_are_the_servers(moto: &Moto, bucket: &str, lock: &Value) {
    let key = lock["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find_map(|step| {
            step["request"]
                .as_str()?
                .split_whitespace()
                .nth(1)
                .filter(|key| key.contains("backlab-lock-probe-"))
        })
        .expect("the probe's key");
    let key = key.split('?').next().unwrap_or(key);
    let logged = moto.requests(&format!("/{bucket}"));
    let mut from = 0;
    for step in lock["steps"].as_array().expect("steps") {
        let request = step["request"].as_str().expect("a request");
        let (method, rest) = request.split_once(' ').expect("method and path");
        let path = rest.split(' ').next().unwrap_or(rest);
        let (on, query) = path.split_once('?').unwrap_or((path, ""));
        let status: u16 = step["answer"]
            .as_str()
            .and_then(|answer| answer.split_whitespace().next())
            .and_then(|status| status.parse().ok())
            .unwrap_or_else(|| panic!("a status in {step}"));
        let want_path = if on == "(bucket)" {
            format!("/{bucket}")
        } else {
            format!("/{bucket}/{key}")
        };
        let subresource = query.split('&').next().unwrap_or("");
        let found = logged[from..]
            .iter()
            .position(|(m, p, _)| {
                m == method
                    && p.split('?').next().map(|p| p.trim_end_matches('/')) == Some(&want_path)
                    && (subresource.is_empty() || p.contains(subresource))
                    && (!subresource.is_empty() || on == "(bucket)" || !p.contains("versionId"))
            })
            .unwrap_or_else(|| panic!("the server logged no {request} after {from}: {logged:?}"));
        assert_eq!(
            logged[from + found].2,
            status,
            "{request}: the lab says {status}, the server logged {:?}",
            logged[from + found]
        );
        from += found + 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lock_probe_tells_a_locked_bucket_from_a_plain_one_as_the_server_answered() {
    let moto = Moto::start();
    moto.bucket("locked", Some(("COMPLIANCE", 30)));
    moto.bucket("governed", Some(("GOVERNANCE", 7)));
    moto.bucket("plain", None);
    let mut extra = Vec::new();
    for bucket in ["locked", "governed", "plain"] {
        extra.push("--s3-store".to_string());
        extra.push(format!("{bucket}={}", moto.url(&format!("/{bucket}"))));
    }
    let lab = Lab::fresh(&LabOptions {
        extra,
        env: vec![
            ("AWS_ACCESS_KEY_ID".to_string(), ACCESS_KEY.to_string()),
            ("AWS_SECRET_ACCESS_KEY".to_string(), SECRET_KEY.to_string()),
        ],
        ..LabOptions::default()
    });
    create_dataset(&lab.data_dir.join("tree"), "8M");

    // A plain bucket: the probe's delete is the end of it, and nothing is left.
    let logged_before = moto.requests("/plain").len();
    let (plain_id, _, plain) = probe_of(&lab, &spec("plain", &["object_lock"])).await;
    let logged = moto.requests("/plain").len() - logged_before;
    let lock = &plain["lock"];
    assert_eq!(lock["verdict"], "not_immutable", "{lock}");
    assert_eq!(
        lock["answer"], "NOT immutable: the probe object was deleted",
        "{lock}"
    );
    assert_eq!(lock["versioning"], "off", "{lock}");
    // The probe's two writes, 1 KiB each, are what the run moved.
    assert_eq!(lock["written_bytes"], 2048, "{lock}");
    assert_eq!(plain["bytes"], 2048, "{plain}");
    assert_eq!(lock["lock_enabled"], false, "{lock}");
    assert_eq!(
        step(lock, "delete the probe object")["answer"],
        "204",
        "{lock}"
    );
    assert_steps_are_the_servers(&moto, "plain", lock);
    // Every request the probe sent is counted, as many as the server logged, and billed as
    // a run's are: in requests.csv and bills.csv.
    let counted: u64 = lock["requests"]["operations"]
        .as_array()
        .expect("the probe's requests")
        .iter()
        .map(|operation| operation["requests"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(counted as usize, logged, "{lock}");
    let requests_csv = lab
        .get_text(&format!("/api/campaigns/{plain_id}/requests.csv"))
        .await;
    let table = crate::support::csv_table::CsvTable::parse(&requests_csv);
    let at = table.column("requests");
    let in_csv: u64 = table
        .rows
        .iter()
        .map(|row| row[at].parse::<u64>().expect("a count"))
        .sum();
    assert_eq!(in_csv, counted, "{requests_csv}");
    let bills_csv = lab
        .get_text(&format!("/api/campaigns/{plain_id}/bills.csv"))
        .await;
    let bills = crate::support::csv_table::CsvTable::parse(&bills_csv);
    let (run, sheet, class, requests) = (
        bills.column("run"),
        bills.column("sheet"),
        bills.column("class"),
        bills.column("requests"),
    );
    let puts = bills
        .rows
        .iter()
        .find(|row| {
            row[run] == "1" && row[sheet] == "aws-s3-standard" && row[class].starts_with("PUT")
        })
        .unwrap_or_else(|| panic!("no PUT class billed: {bills_csv}"));
    let put_object = lock["requests"]["operations"]
        .as_array()
        .and_then(|operations| operations.iter().find(|op| op["operation"] == "PutObject"))
        .and_then(|op| op["requests"].as_u64())
        .expect("the probe's writes");
    assert_eq!(puts[requests], put_object.to_string(), "{bills_csv}");
    let page = lab.get_text(&format!("/campaigns/{plain_id}")).await;
    let row = page
        .split("<tr data-run=\"1\">")
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .expect("the probe's row of the requests table");
    assert!(
        row.contains(&format!("<td class=\"num\">{counted}</td>")),
        "{row}"
    );
    // A campaign of the probe alone is answered by it, not inconclusive.
    let verdict = page
        .split("<p class=\"verdict-text\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("the verdict");
    assert!(
        verdict.starts_with("The object-lock probe names no bottleneck: its answer, below, is"),
        "{verdict}"
    );
    assert!(page.contains("<h2>Verdict</h2>"), "not headed inconclusive");
    assert_eq!(moto.versions("plain"), Vec::<(String, String)>::new());
    assert_eq!(lock["kept"], json!([]));

    // Governance mode: credentials that may bypass it delete the version, and the probe's
    // versions are all gone afterwards.
    let (_, _, governed) = probe_of(&lab, &spec("governed", &["object_lock"])).await;
    let lock = &governed["lock"];
    assert_eq!(lock["verdict"], "not_immutable", "{lock}");
    assert!(
        lock["answer"]
            .as_str()
            .is_some_and(|answer| answer.starts_with("NOT immutable: the probe object was deleted")),
        "{lock}"
    );
    assert_eq!(lock["default_retention"]["mode"], "GOVERNANCE", "{lock}");
    assert_eq!(
        step(lock, "delete the probe's first version")["request"]
            .as_str()
            .map(|request| request.ends_with("(bypassing governance)")),
        Some(true),
        "{lock}"
    );
    assert_steps_are_the_servers(&moto, "governed", lock);
    assert_eq!(moto.versions("governed"), Vec::<(String, String)>::new());

    // Compliance mode, with restic's repository in the same bucket: the delete of the
    // probe's version is refused (403, as the server logged it). moto lets the retention be
    // shortened, which S3 refuses in compliance mode: the probe says so, and NOT immutable.
    let (id, campaign, locked) =
        probe_of(&lab, &spec("locked", &["tool_backup", "object_lock"])).await;
    let lock = &locked["lock"];
    assert_eq!(lock["versioning"], "Enabled", "{lock}");
    assert_eq!(lock["lock_enabled"], true, "{lock}");
    assert_eq!(
        lock["default_retention"],
        json!({"mode": "COMPLIANCE", "days": 30, "years": null}),
        "{lock}"
    );
    let refused = step(lock, "delete the probe's first version");
    assert_eq!(refused["answer"], "403 AccessDenied", "{lock}");
    assert_eq!(refused["accepted"], false, "{lock}");
    assert_eq!(refused["meaning"], "refused: the version is kept", "{lock}");
    assert_eq!(
        step(lock, "delete the probe object")["meaning"],
        "accepted: a delete marker; the versions are kept",
        "{lock}"
    );
    assert_eq!(
        step(lock, "overwrite the probe object")["meaning"],
        "accepted: a new version; the first is kept",
        "{lock}"
    );
    let shortened = step(lock, "shorten the first version's retention");
    assert_eq!(shortened["accepted"], true, "{lock}");
    assert_eq!(lock["verdict"], "not_immutable", "{lock}");
    assert!(
        lock["answer"]
            .as_str()
            .is_some_and(|answer| answer
                .starts_with("NOT immutable: the probe's retention was shortened from ")),
        "{lock}"
    );
    assert_steps_are_the_servers(&moto, "locked", lock);
    // What the lock keeps is what the server still holds of the probe: both versions, 1 KiB
    // each, with until when; the delete marker is gone.
    let kept: Vec<(String, String)> = lock["kept"]
        .as_array()
        .expect("kept")
        .iter()
        .map(|kept| {
            assert_eq!(kept["bytes"], 1024, "{kept}");
            assert!(kept["until"].is_string(), "{kept}");
            (
                kept["key"].as_str().unwrap_or("").to_string(),
                kept["version"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(kept.len(), 2, "{lock}");
    let mut held: Vec<(String, String)> = moto
        .versions("locked")
        .into_iter()
        .filter(|(key, _)| key.contains("backlab-lock-probe-"))
        .collect();
    held.sort();
    let mut kept_sorted = kept.clone();
    kept_sorted.sort();
    assert_eq!(
        held, kept_sorted,
        "the server holds what the probe says it kept"
    );

    // Every view says the same.
    let answer = lock["answer"].as_str().expect("the answer").to_string();
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    let report = lab.get_text(&format!("/campaigns/{id}/report.html")).await;
    for (what, html) in [("the page", &page), ("report.html", &report)] {
        assert!(
            html.contains("data-verdict=\"not_immutable\""),
            "{what} holds the probe's section"
        );
        let escaped = answer.replace('\'', "&#39;");
        assert!(html.contains(&escaped), "{what} says {answer:?}");
        assert!(
            html.contains("403 AccessDenied"),
            "{what} shows the refusal"
        );
        assert!(
            html.contains("The lock keeps the probe&#39;s 2 versions (2 KiB) in the bucket until"),
            "{what} says what the lock keeps: {}",
            html.split("lock-kept").nth(1).unwrap_or("")
        );
        assert!(
            html.contains(
                "restic&#39;s repository in this bucket could be deleted with the same credentials"
            ),
            "{what} says what it means for restic's repository"
        );
    }
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    let table = crate::support::csv_table::CsvTable::parse(&csv);
    let (test, verdict, said, rate) = (
        table.column("test"),
        table.column("lock_verdict"),
        table.column("lock_answer"),
        table.column("whole_run_mb_per_s"),
    );
    let rows: Vec<&Vec<String>> = table
        .rows
        .iter()
        .filter(|row| row[test] == "object_lock")
        .collect();
    assert_eq!(rows.len(), 1, "{csv}");
    assert_eq!(rows[0][verdict], "not_immutable", "{csv}");
    assert_eq!(rows[0][said], answer, "{csv}");
    assert_eq!(rows[0][rate], "", "{csv}");
    // The probe is no point of the verdict: the bottleneck table has restic's backup alone.
    let document = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let points: Vec<&str> = document["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|point| point["test"].as_str())
        .collect();
    assert_eq!(points, ["tool_backup"], "{}", document["points"]);
    assert!(
        !document["bottleneck"].to_string().contains("object_lock"),
        "{}",
        document["bottleneck"]
    );

    // The store's secret is in no answer, page or log line, nor in any file the lab keeps.
    for (what, text) in [
        ("the page", page.clone()),
        ("report.html", report.clone()),
        ("results.csv", csv.clone()),
        ("the campaign", campaign.to_string()),
        ("the log", lab.log()),
    ] {
        assert!(
            !text.contains(SECRET_KEY),
            "{what} holds the store's secret"
        );
        assert!(
            !text.contains("X-Amz-Signature"),
            "{what} holds a signature"
        );
    }
    lab.assert_no_file_holds(SECRET_KEY);
}

/// A probe asks an object store: any other target is refused at submission, the test named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_probe_of_a_directory_is_refused_naming_the_test() {
    let lab = Lab::fresh(&LabOptions::default());
    let response = lab
        .post_json(
            "/api/campaigns",
            &json!({
                "source": {"generated": {"size": "1M"}},
                "target": {"kind": "dir", "path": "out"},
                "tests": ["tape_write", "object_lock"],
            }),
        )
        .await;
    assert_eq!(response.status().as_u16(), 422);
    let body: Value = response.json().await.expect("a JSON error");
    assert!(
        body["fields"]["tests[1]"]
            .as_str()
            .is_some_and(|why| why.starts_with("object_lock probes an object store's bucket")),
        "{body}"
    );
}
