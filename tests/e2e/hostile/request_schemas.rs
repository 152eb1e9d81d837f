//! The API document's request schemas against what the lab takes: for the schedule and
//! reference bodies and the campaign list's `before`, every value the schema permits is
//! accepted, and every value the lab refuses the schema refuses too. The schemas are read from
//! `/api/openapi.json` and applied by a small JSON Schema check of the keywords they use.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::fixtures::fixture;
use crate::support::in_process::App;
use crate::support::openapi::violation;

/// The request body schema of an operation.
fn body_schema(document: &Value, path: &str, method: &str) -> Value {
    document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"].clone()
}

/// A spec the in-process lab takes: generated data to the null target, one short test.
fn spec() -> Value {
    json!({"source": {"generated": {"size": "4M"}}, "target": {"kind": "null"},
           "tests": ["null_sink"], "params": {"duration_s": 5}})
}

/// Checks each body against the schema and the lab: what the schema permits is accepted
/// (2xx), what the lab refuses (4xx) the schema refuses. Every body must fall in one of the
/// two: a test of a body both permit or both refuse is what is asked.
async fn agree(
    app: &App,
    document: &Value,
    schema: &Value,
    method: &str,
    path: &dyn Fn() -> String,
    bodies: &[Value],
) -> BTreeMap<String, u16> {
    let mut answers = BTreeMap::new();
    for body in bodies {
        let permitted = violation(document, schema, body, "body");
        let answer = app.send(method, &path(), Some(&body.to_string())).await;
        let status = answer.status.as_u16();
        match (&permitted, answer.status.is_success()) {
            (None, false) => panic!(
                "the schema permits {body} and the lab refuses it: {status} {}",
                answer.body
            ),
            (Some(_), true) => panic!(
                "the lab accepts {body} and the schema refuses it: {}",
                permitted.unwrap_or_default()
            ),
            _ => {}
        }
        assert!(status < 500, "{body}: {status} {}", answer.body);
        answers.insert(body.to_string(), status);
    }
    answers
}

#[tokio::test]
async fn the_schedule_bodies_schemas_refuse_what_the_lab_refuses() {
    let app = App::new().await;
    let document = app.send("GET", "/api/openapi.json", None).await.json();
    let create = body_schema(&document, "/api/schedules", "post");
    let long_cron = format!("0 2 * * {}", vec!["1"; 60].join(","));
    let bodies = [
        json!({"cron": "0 2 * * *", "spec": spec()}),
        json!({"cron": " */15 0-6 1,15 JAN-mar mon-FRI ", "spec": spec(), "name": "night",
               "paused": true}),
        json!({"cron": "0 2 * * *", "spec": spec(), "name": "é".repeat(200)}),
        json!({"cron": "0 2 * * *", "spec": spec(), "name": "é".repeat(201)}),
        json!({"cron": "0 2 * * *"}),
        json!({"spec": spec()}),
        json!({"cron": "", "spec": spec()}),
        json!({"cron": "0 2 * *", "spec": spec()}),
        json!({"cron": "61 2 * * *", "spec": spec()}),
        json!({"cron": "0 24 * * *", "spec": spec()}),
        json!({"cron": "0 2 * * 8", "spec": spec()}),
        json!({"cron": "0 2 * * * *", "spec": spec()}),
        json!({"cron": long_cron, "spec": spec()}),
        json!({"cron": "0 2 * * *", "spec": spec(), "every": "night"}),
        json!({"cron": "0 2 * * *", "spec": spec(), "paused": "yes"}),
        json!({"cron": "0 2 * * *", "spec": {"source": {"generated": {"size": "4M"}}}}),
        json!({"cron": "0 2 * * *", "spec": {"source": {"generated": {"size": "4M"}},
               "target": {"kind": "null"}, "params": {"buffers": 0}}}),
    ];
    let answers = agree(
        &app,
        &document,
        &create,
        "POST",
        &|| "/api/schedules".to_string(),
        &bodies,
    )
    .await;
    let accepted = answers.values().filter(|status| **status == 201).count();
    assert_eq!(accepted, 3, "{answers:?}");

    let listed = app.send("GET", "/api/schedules", None).await.json();
    let id = listed[0]["id"].as_str().expect("a schedule").to_string();
    let change = body_schema(&document, "/api/schedules/{id}", "patch");
    let changes = [
        json!({"paused": true}),
        json!({"cron": "30 3 * * SUN", "name": null}),
        json!({"cron": "30 3 * *"}),
        json!({"cron": "30 3 * * SUN", "when": 1}),
        json!({"name": "x".repeat(201)}),
        json!({"spec": {"target": {"kind": "null"}}}),
    ];
    let answers = agree(
        &app,
        &document,
        &change,
        "PATCH",
        &|| format!("/api/schedules/{id}"),
        &changes,
    )
    .await;
    assert_eq!(
        answers.values().filter(|status| **status == 200).count(),
        2,
        "{answers:?}"
    );
}

#[tokio::test]
async fn the_reference_bodys_schema_refuses_what_the_lab_refuses() {
    let app = App::new().await;
    let document = app.send("GET", "/api/openapi.json", None).await.json();
    let submitted = app
        .send("POST", "/api/campaigns", Some(&spec().to_string()))
        .await;
    assert_eq!(submitted.status, 201, "{}", submitted.body);
    let id = submitted.json()["id"].as_str().expect("id").to_string();
    let read = |name: &str| -> Value {
        let text =
            std::fs::read_to_string(fixture(&format!("references/{name}"))).expect("the fixture");
        serde_json::from_str(&text).expect("the fixture is JSON")
    };
    let fio = read("fio-write.json");
    let iperf3 = read("iperf3.json");
    let schema = body_schema(&document, "/api/campaigns/{id}/references", "post");
    let mut zero_rate = iperf3.clone();
    zero_rate["end"]["sum_received"]["bits_per_second"] = json!(0);
    let mut no_jobs = fio.clone();
    no_jobs["jobs"] = json!([]);
    let bodies = [
        json!({"tool": "fio", "result": fio}),
        json!({"tool": "iperf3", "result": iperf3}),
        json!({"tool": "dd", "result": fio}),
        json!({"tool": "fio"}),
        json!({"result": fio}),
        json!({"tool": "fio", "result": "fio-write.json"}),
        json!({"tool": "fio", "result": iperf3}),
        json!({"tool": "iperf3", "result": fio}),
        json!({"tool": "iperf3", "result": zero_rate}),
        json!({"tool": "fio", "result": no_jobs}),
        json!({"tool": "fio", "result": fio, "note": "x"}),
    ];
    let answers = agree(
        &app,
        &document,
        &schema,
        "POST",
        &|| format!("/api/campaigns/{id}/references"),
        &bodies,
    )
    .await;
    assert_eq!(
        answers.values().filter(|status| **status == 201).count(),
        2,
        "{answers:?}"
    );
}

#[tokio::test]
async fn the_list_before_schema_matches_what_the_lab_takes() {
    let app = App::new().await;
    let document = app.send("GET", "/api/openapi.json", None).await.json();
    let submitted = app
        .send("POST", "/api/campaigns", Some(&spec().to_string()))
        .await;
    let id = submitted.json()["id"].as_str().expect("id").to_string();
    let parameters = document["paths"]["/api/campaigns"]["get"]["parameters"]
        .as_array()
        .expect("parameters");
    let before = parameters
        .iter()
        .find(|parameter| parameter["name"] == "before")
        .expect("a before parameter")["schema"]
        .clone();
    for (value, accepted) in [
        (String::new(), true),
        (id.clone(), true),
        ("short".to_string(), false),
        ("../../etc/pw".to_string(), false),
        (format!("{id}x"), false),
    ] {
        let permitted = violation(&document, &before, &json!(value), "before");
        assert_eq!(permitted.is_none(), accepted, "{value:?}: {permitted:?}");
        let answer = app
            .send("GET", &format!("/api/campaigns?before={value}"), None)
            .await;
        if accepted {
            assert_eq!(answer.status, 200, "{value:?}: {}", answer.body);
        } else {
            assert_eq!(answer.status, 422, "{value:?}: {}", answer.body);
            assert!(
                answer.json()["fields"]["before"].is_string(),
                "{}",
                answer.body
            );
        }
    }
    // Empty is the same as left out: the whole list.
    let empty = app.send("GET", "/api/campaigns?before=", None).await.json();
    assert_eq!(empty["campaigns"][0]["id"], id.as_str(), "{empty}");
}
