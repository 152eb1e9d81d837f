//! The service's own surface: first start on a fresh machine, the OpenAPI document, health and
//! metrics.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fixtures::{create_dataset, five_tests, fixture, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::openapi::{answer_schema, answer_violation};
use crate::support::wait::wait_until;

/// The dry run's answer to `spec`: its plan, expected duration and warnings.
async fn dry_run(lab: &Lab, spec: &Value) -> Value {
    let answer = lab.post_json("/api/campaigns?dry_run=true", spec).await;
    assert_eq!(answer.status(), 200);
    answer.json().await.expect("JSON")
}

/// Whether a plan warns under `field` with a message containing `words`.
fn warns(planned: &Value, field: &str, words: &str) -> bool {
    planned["warnings"].as_array().is_some_and(|warnings| {
        warnings.iter().any(|w| {
            w["field"] == field && w["message"].as_str().is_some_and(|m| m.contains(words))
        })
    })
}

/// The flag codes a run's result carries.
fn flag_codes(result: &Value) -> Vec<&str> {
    result["validity"]["flags"]
        .as_array()
        .map(|flags| flags.iter().filter_map(|f| f["code"].as_str()).collect())
        .unwrap_or_default()
}

/// Every `$ref` in a JSON document.
fn references(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                match (key.as_str(), field.as_str()) {
                    ("$ref", Some(reference)) => found.push(reference.to_string()),
                    _ => references(field, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, found)),
        _ => {}
    }
}

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
        ("get", "/api/campaigns/{id}/tools.csv"),
        ("get", "/api/campaigns/{id}/life.csv"),
        ("get", "/api/campaigns/{id}/requests.csv"),
        ("get", "/api/campaigns/{id}/bills.csv"),
        ("get", "/api/campaigns/{id}/events"),
        ("post", "/api/campaigns/{id}/cancel"),
        ("post", "/api/campaigns/{id}/rerun"),
        ("get", "/api/openapi.json"),
        ("get", "/healthz"),
        ("get", "/metrics"),
        ("get", "/api/agents"),
        ("get", "/api/hosts"),
        ("get", "/api/series/{key}"),
        ("get", "/api/series/{key}/figures.csv"),
        ("post", "/api/schedules"),
        ("get", "/api/schedules"),
        ("get", "/api/schedules/{id}"),
        ("patch", "/api/schedules/{id}"),
        ("delete", "/api/schedules/{id}"),
        ("post", "/api/campaigns/{id}/references"),
        ("get", "/api/campaigns/{id}/references"),
        ("get", "/api/tools"),
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

    // Every schema it refers to is in it, and every one it holds is referred to.
    let mut refs = Vec::new();
    references(&doc, &mut refs);
    let schemas = doc["components"]["schemas"]
        .as_object()
        .expect("components");
    for reference in &refs {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a reference outside the components: {reference}"));
        assert!(
            schemas.contains_key(name),
            "{reference} is not in the document"
        );
    }
    for name in schemas.keys() {
        let reference = format!("#/components/schemas/{name}");
        assert!(
            refs.contains(&reference),
            "{name} is described but never used"
        );
    }

    // And every documented route answers (not 404/405) on the real server.
    for (method, path) in routes {
        let path = path
            .replace("{id}", "AAAAAAAAAAAA")
            .replace("{key}", "AAAAAAAAAAAA");
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

/// Sends a request with an optional JSON body and checks its answer against the schema the
/// document gives for its route, method and status; returns the answer's status and JSON.
async fn documented(
    lab: &Lab,
    document: &Value,
    method: &str,
    (route, path): (&str, &str),
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = lab.client.request(
        method.to_uppercase().parse().expect("method"),
        lab.url(path),
    );
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let answer: Value = serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("{method} {path}: {status} is not JSON ({error}): {text}"));
    let schema = answer_schema(document, route, method, status);
    assert!(
        schema.is_object(),
        "{method} {route}: no JSON schema documented for {status}"
    );
    if let Some(why) = answer_violation(document, &schema, &answer) {
        panic!("{method} {path} answered {status} outside its documented schema: {why}\n{answer}");
    }
    (status, answer)
}

#[tokio::test]
async fn every_answer_fits_its_documented_schema() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    let target = lab.empty_dir("out");
    create_dataset(&source, "24M");
    let doc = lab.get_json("/api/openapi.json").await;
    let spec = five_tests(&source, &target);

    let campaigns = ("/api/campaigns", "/api/campaigns");
    let (status, _) = documented(
        &lab,
        &doc,
        "post",
        ("/api/campaigns", "/api/campaigns?dry_run=true"),
        Some(&spec),
    )
    .await;
    assert_eq!(status, 200);
    let (status, created) = documented(&lab, &doc, "post", campaigns, Some(&spec)).await;
    assert_eq!(status, 201);
    let id = created["id"].as_str().expect("id").to_string();
    let campaign = lab
        .wait_status(&id, &["done"], Duration::from_secs(180))
        .await;
    let one = |tail: &str| format!("/api/campaigns/{id}{tail}");

    let (status, _) = documented(&lab, &doc, "get", campaigns, None).await;
    assert_eq!(status, 200);
    let (status, read) =
        documented(&lab, &doc, "get", ("/api/campaigns/{id}", &one("")), None).await;
    assert_eq!(
        (status, read["runs"].as_array().map(Vec::len)),
        (200, Some(5))
    );
    assert!(read["points"][0]["figure"].is_object(), "{read}");
    let (status, report) = documented(
        &lab,
        &doc,
        "get",
        ("/api/campaigns/{id}/bottleneck", &one("/bottleneck")),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(report["bottleneck"]["rows"].is_array(), "{report}");
    let fio = std::fs::read_to_string(fixture("references/fio-write.json")).expect("fixture");
    let fio: Value = serde_json::from_str(&fio).expect("fixture JSON");
    let references = ("/api/campaigns/{id}/references", one("/references"));
    let (status, imported) = documented(
        &lab,
        &doc,
        "post",
        (references.0, &references.1),
        Some(&json!({"tool": "fio", "result": fio})),
    )
    .await;
    assert_eq!((status, imported.as_array().map(Vec::len)), (201, Some(1)));
    let (status, _) = documented(&lab, &doc, "get", (references.0, &references.1), None).await;
    assert_eq!(status, 200);
    let series = campaign["series"].as_str().expect("a series").to_string();
    // A campaign reads done a moment before its judgement is kept and its figure joins the
    // series.
    wait_until(
        "the campaign's figure in its series",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || match lab.get(&format!("/api/series/{series}")).await.status() {
            reqwest::StatusCode::OK => Ok(()),
            status => Err(status),
        },
    )
    .await;
    let (status, history) = documented(
        &lab,
        &doc,
        "get",
        ("/api/series/{key}", &format!("/api/series/{series}")),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(history["lines"][0]["points"][0].is_object(), "{history}");
    assert!(
        history["lines"]
            .as_array()
            .is_some_and(|lines| lines.iter().any(|line| line["references"][0].is_object())),
        "{history}"
    );

    let (status, _) = documented(
        &lab,
        &doc,
        "post",
        ("/api/campaigns/{id}/cancel", &one("/cancel")),
        None,
    )
    .await;
    assert_eq!(status, 202);
    let (status, rerun) = documented(
        &lab,
        &doc,
        "post",
        ("/api/campaigns/{id}/rerun", &one("/rerun")),
        None,
    )
    .await;
    assert_eq!(status, 201);
    lab.cancel(rerun["id"].as_str().expect("the rerun's id"))
        .await;
    let (status, _) = documented(
        &lab,
        &doc,
        "get",
        ("/api/campaigns/{id}", "/api/campaigns/AAAAAAAAAAAA"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = documented(
        &lab,
        &doc,
        "post",
        campaigns,
        Some(&json!({"source": {}, "target": {"kind": "nowhere"}})),
    )
    .await;
    assert_eq!(status, 422);

    let schedules = ("/api/schedules", "/api/schedules");
    let schedule = json!({"cron": "0 2 * * *", "spec": spec, "name": "nightly"});
    let (status, created) = documented(&lab, &doc, "post", schedules, Some(&schedule)).await;
    assert_eq!(status, 201);
    let path = created["url"].as_str().expect("url").to_string();
    let (status, listed) = documented(&lab, &doc, "get", schedules, None).await;
    assert_eq!((status, listed.as_array().map(Vec::len)), (200, Some(1)));
    let (status, _) = documented(&lab, &doc, "get", ("/api/schedules/{id}", &path), None).await;
    assert_eq!(status, 200);
    let (status, changed) = documented(
        &lab,
        &doc,
        "patch",
        ("/api/schedules/{id}", &path),
        Some(&json!({"paused": true})),
    )
    .await;
    assert_eq!((status, &changed["paused"]), (200, &json!(true)));
    assert_eq!(changed["spec"]["source"], spec["source"], "{changed}");

    for route in ["/healthz", "/api/openapi.json", "/api/agents", "/api/hosts"] {
        let (status, _) = documented(&lab, &doc, "get", (route, route), None).await;
        assert_eq!(status, 200, "{route}");
    }
    // tar is on every machine the tests run on; its answer holds a tool with parameters of
    // both types (tar-zstd's whole numbers, restic's choice) wherever those are installed.
    let (status, tools) = documented(&lab, &doc, "get", ("/api/tools", "/api/tools"), None).await;
    assert_eq!(status, 200);
    let tar = tools["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == "tar"))
        .unwrap_or_else(|| panic!("tar is offered: {tools}"));
    assert_eq!(tar["shape"], "stream", "{tar}");
    assert_eq!(tar["origin"], "built-in", "{tar}");
    assert!(
        tar["version"].as_str().is_some_and(|v| v.contains("tar")),
        "{tar}"
    );
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

/// `backlab serve` started as on a fresh machine (configured by its environment alone, in a
/// scratch dir), once its demo dataset of `size` is written.
async fn first_start_with_demo(size: &str) -> (tempfile::TempDir, Lab) {
    let root = scratch();
    let lab = Lab::start_unconfigured(
        root.path(),
        &[
            ("BACKLAB_BIND", "127.0.0.1:0"),
            ("BACKLAB_DATA_BIND", "127.0.0.1:0"),
            ("BACKLAB_DEMO_SIZE", size),
        ],
    );
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
    (root, lab)
}

/// `backlab serve` with no flags but the port: database, data dir and demo dataset appear in
/// the working directory, and a campaign against the demo runs at once.
#[tokio::test]
async fn a_fresh_start_creates_everything_and_the_demo_is_usable() {
    let (root, lab) = first_start_with_demo("24M").await;
    assert!(root.path().join("backlab.db").is_file());
    assert!(root.path().join("backlab-data").is_dir());
    let id = lab
        .submit(
            &json!({"source": {"paths": ["demo"]}, "target": {"kind": "null"},
                         "tests": ["read_parallel"], "params": {"duration_s": 3}}),
        )
        .await;
    let campaign = lab
        .wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    // A spec that sets no size is time-based and ends once steady: the small demo is read
    // again, and the run is valid on the first try.
    let result = &campaign["runs"][0]["result"];
    assert!(
        result["bytes"]
            .as_u64()
            .is_some_and(|bytes| bytes > 24 << 20),
        "{result}"
    );
    assert_eq!(result["params"]["time_based"], true, "{result}");
    let resolved = campaign["spec"]["source"]["paths"][0]
        .as_str()
        .unwrap_or("");
    assert!(
        resolved.starts_with('/') && resolved.ends_with("backlab-data/demo"),
        "{resolved}"
    );
}

/// The campaign the README's REST example submits, as written there.
fn readme_rest_example() -> Value {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("/api/campaigns -d '")
        .expect("the README's curl example")
        + "/api/campaigns -d '".len();
    let end = start + readme[start..].find('\'').expect("the example's end");
    serde_json::from_str(&readme[start..end]).expect("the example is JSON")
}

/// The README's REST example, on a lab started as the README says (its demo dataset, smaller):
/// every run valid on the first try, and the verdict conclusive.
#[tokio::test]
async fn the_readme_rest_example_gives_valid_runs_as_written() {
    let (_root, lab) = first_start_with_demo("64M").await;
    let id = lab.submit(&readme_rest_example()).await;
    let campaign = lab
        .wait_status(
            &id,
            &["done", "failed", "cancelled"],
            Duration::from_secs(600),
        )
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 5);
    // Beside other tests a run may be flagged for the machine's other work; never for its
    // own shape (too short, data smaller than the run, a drive's buffer not filled). A target
    // test into a directory runs at the disk's pace, which on two cores shared with other
    // tests can fill the CPUs with the lab's generating and writing (cpu_saturated).
    let machine = ["busy_machine", "unsteady", "cpu_saturated"];
    let mut all_valid = true;
    for run in runs {
        let result = &run["result"];
        let flags = flag_codes(result);
        assert!(
            flags.iter().all(|code| machine.contains(code)),
            "{}: {flags:?}",
            result["test"]
        );
        all_valid &= flags.is_empty();
    }
    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    // Valid runs give a conclusive verdict, unless other tests beside this one slowed an
    // isolated test below the backup (the machine's doing, said as such: an outran ceiling).
    let outran = verdict["bottleneck"]["finding"]["kind"] == "full_outran_ceiling";
    if all_valid && !outran {
        assert_eq!(verdict["bottleneck"]["conclusive"], true, "{verdict}");
    }
    // The page says what was expected, the likely time and the bound its runs that end once
    // steady may reach, as the submission said it, and what it took.
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    let expected = page
        .split("<span id=\"expected\">")
        .nth(1)
        .and_then(|rest| rest.split("</span>").next())
        .unwrap_or_else(|| panic!("no expected duration on the page"));
    assert!(
        expected.starts_with("expected to take about ")
            && expected.contains(", at most ")
            && expected.contains(" if runs must go on to their cap to settle; took "),
        "{expected}"
    );
    // The report to download says the same.
    let report = lab.get_text(&format!("/campaigns/{id}/report.html")).await;
    assert!(report.contains(expected), "{expected}");
}

/// The README's REST example and the form's default fields for the same source and target
/// plan the same runs: one set of defaults, and the dry run says so before anything is queued.
#[tokio::test]
async fn the_api_and_the_form_plan_the_same_runs_from_the_same_spec() {
    let lab = Lab::fresh(&LabOptions::default());
    crate::support::fixtures::create_dataset(&lab.data_dir.join("demo"), "4M");
    let api = dry_run(&lab, &readme_rest_example()).await;
    let mut fields: Vec<(&str, &str)> = vec![
        ("name", "demo to scratch"),
        ("source_kind", "paths"),
        ("source_paths", "demo"),
        ("target_kind", "dir"),
        ("target_path", "."),
        ("buffers", "32"),
        ("block_size", "256K"),
        ("streams", "4"),
        ("duration_s", "auto"),
        ("cold_cache", "true"),
        ("fsync", "true"),
        ("time_based", "true"),
        ("repeat", "1"),
        ("dry_run", "true"),
    ];
    for test in [
        "tape_write",
        "read_single",
        "read_parallel",
        "null_sink",
        "full_backup",
    ] {
        fields.push(("tests", test));
    }
    let form = lab
        .client
        .post(lab.url("/campaigns/new"))
        .header("accept", "application/json")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&fields)
                .finish(),
        )
        .send()
        .await
        .expect("POST the form");
    assert_eq!(form.status(), 200);
    let form: Value = form.json().await.expect("JSON");
    assert_eq!(api["plan"], form["plan"], "API {api}\nform {form}");
    assert_eq!(api["expected_s"], form["expected_s"]);
    assert_eq!(api["runs"], 5);
    assert!(
        api["expected_s"].as_f64().is_some_and(|s| s > 25.0),
        "{api}"
    );
    assert!(
        form["summary"]
            .as_str()
            .is_some_and(|s| s.contains("5 run(s)"))
    );
    // A dry run queues nothing.
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(0));
}

/// A drive's buffer known at submission: an explicit duration too short to fill it is warned
/// about, naming the field and the minimum, in the answer that queues it.
#[tokio::test]
async fn a_duration_too_short_for_a_drive_is_warned_about_at_submission() {
    let lab = Lab::fresh(&LabOptions::default());
    let spec = |duration: Value| {
        json!({"source": {"generated": {"size": "64G"}},
               "target": {"kind": "tape", "model": "lto-9"},
               "tests": ["tape_write"],
               "params": {"duration_s": duration, "time_based": true}})
    };
    let answer = dry_run(&lab, &spec(json!(4))).await;
    let warnings = answer["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1, "{answer}");
    assert_eq!(warnings[0]["field"], "params.duration_s");
    let message = warnings[0]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("LTO-9") && message.contains("at least 6 s"),
        "{message}"
    );
    let queued = lab.post_json("/api/campaigns", &spec(json!(4))).await;
    assert_eq!(queued.status(), 201);
    let queued: Value = queued.json().await.expect("JSON");
    assert_eq!(queued["warnings"], answer["warnings"]);
    assert!(
        queued["expected_s"].as_f64().is_some_and(|s| s >= 4.0),
        "{queued}"
    );
    // With "auto" the run is planned long enough: no warning.
    let auto = dry_run(&lab, &spec(json!("auto"))).await;
    assert_eq!(auto["warnings"], json!([]), "{auto}");
    // The campaign's page says it too.
    let queued_id = queued["id"].as_str().expect("id");
    let page = lab.get_text(&format!("/campaigns/{queued_id}")).await;
    assert!(
        page.contains("id=\"plan-warnings\"")
            && page.contains("params.duration_s: an emulated LTO-9"),
        "{page}"
    );
    lab.cancel(queued_id).await;
    // And run so, the target write takes the drive's buffer often enough to be valid.
    let id = lab.submit(&spec(json!("auto"))).await;
    // While it runs (its one run lasts at least the drive's 6 s), the page says what is left
    // of what was expected.
    lab.wait_status(&id, &["running"], Duration::from_secs(60))
        .await;
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("id=\"live-left\""), "{page}");
    assert!(page.contains(" left</span>"), "{page}");
    let campaign = lab
        .wait_status(
            &id,
            &["done", "failed", "cancelled"],
            Duration::from_secs(300),
        )
        .await;
    let result = &campaign["runs"][0]["result"];
    let flags = flag_codes(result);
    assert!(
        !flags.contains(&"drive_buffer_not_filled") && !flags.contains(&"too_short"),
        "{flags:?}: {result}"
    );
}

/// A 30 MB/s source into an LTO-9 drive: the plan check says before the first byte that the
/// drive will shoe-shine in cycles too long for the run, and the verdict still names the feed
/// conclusively, since no flag on the backup can make a 30 MB/s source feed the drive.
#[tokio::test]
async fn a_slow_source_into_a_fast_drive_is_named_conclusively() {
    let lab = Lab::fresh(&LabOptions::default());
    let spec = json!({"name": "30 MB/s into LTO-9",
                      "source": {"generated": {"size": "64G", "compress_ratio": 2.0}},
                      "target": {"kind": "tape", "model": "lto-9"},
                      "tests": ["tape_write", "read_parallel", "full_backup"],
                      "params": {"source_rate_mb_s": 30, "streams": 1, "duration_s": 10,
                                 "time_based": true}});
    let planned = dry_run(&lab, &spec).await;
    assert!(
        warns(&planned, "params.duration_s", "shoe-shines"),
        "{planned}"
    );
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(
            &id,
            &["done", "failed", "cancelled"],
            Duration::from_secs(300),
        )
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let bottleneck = &verdict["bottleneck"];
    assert_eq!(bottleneck["component"], "source", "{bottleneck}");
    assert_eq!(bottleneck["conclusive"], true, "{bottleneck}");
}

/// A buffered read of a source that fits in memory, not evicted first, measures the page cache
/// after its first pass: the plan check says so, naming `params.cold_cache`; evicted, it does
/// not.
#[tokio::test]
async fn a_source_that_fits_in_memory_read_without_eviction_is_warned_about() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset(&lab.data_dir.join("small"), "8M");
    let spec = |cold: bool| {
        json!({"source": {"paths": ["small"]}, "target": {"kind": "null"},
               "tests": ["read_single"], "params": {"cold_cache": cold, "duration_s": 6}})
    };
    let warned = dry_run(&lab, &spec(false)).await;
    assert!(
        warns(&warned, "params.cold_cache", "page cache"),
        "{warned}"
    );
    let evicted = dry_run(&lab, &spec(true)).await;
    assert_eq!(evicted["warnings"], json!([]), "{evicted}");
}

/// Two free neighbouring ports: a web port whose next port is free too.
fn free_pair() -> u16 {
    for _ in 0..100 {
        let web = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = web.local_addr().expect("its address").port();
        if port < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
    panic!("no two neighbouring free ports")
}

/// A second lab started with another `--bind` and no `--data-bind` takes the port beside its
/// own for its data listener instead of failing on the first lab's.
#[test]
fn a_second_lab_with_another_bind_starts_beside_the_first() {
    use std::io::{BufRead, BufReader};
    let root = scratch();
    let mut labs = Vec::new();
    for name in ["one", "two"] {
        let port = free_pair();
        let dir = root.path().join(name);
        let mut child = crate::support::cli::backlab()
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(dir.join("lab.db"))
            .arg("--data-dir")
            .arg(dir.join("data"))
            .env_remove("BACKLAB_DATA_BIND")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("backlab serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let first = BufReader::new(stdout).lines().next();
        let line = first.and_then(Result::ok).unwrap_or_default();
        assert!(
            line.contains(&format!("listening on http://127.0.0.1:{port}")),
            "{name}: {line}"
        );
        labs.push(child);
    }
    for mut lab in labs {
        let _ = lab.kill();
        let _ = lab.wait();
    }
}
