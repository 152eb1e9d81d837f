//! Refusals that say everything at once and say it right: every bad field of a readable body in
//! one 422, ranges worded as they are checked, one bound for a run's length, a form banner that
//! counts what is wrong, an unknown preset named, a body that is not JSON said in plain words.

use serde_json::{Value, json};

use crate::support::cli::{backlab, output, stderr};
use crate::support::fixtures::{create_dataset, scratch};
use crate::support::lab::{Lab, LabOptions};

/// Posts a raw body to the campaigns API: the status and the JSON answer.
async fn post_raw(lab: &Lab, body: &str) -> (u16, Value) {
    let response = lab
        .client
        .post(lab.url("/api/campaigns"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON answer"))
}

fn field_names(body: &Value) -> Vec<String> {
    body["fields"]
        .as_object()
        .map(|fields| fields.keys().cloned().collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_readable_body_gets_every_bad_field_in_one_422() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset(&lab.data_dir.join("src"), "2M");
    // An unknown target kind and a size that is not one are found while reading; the test
    // that does not exist is found by the rules, in the same answer.
    let (status, body) = post_raw(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": {"kind": "disk", "path": "out"},
                "tests": ["full_backup", "fast_test"],
                "params": {"block_size": "lots", "buffers": 0}})
        .to_string(),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        field_names(&body),
        [
            "params.block_size",
            "params.buffers",
            "target.kind",
            "tests[1]"
        ],
        "{body}"
    );
    assert!(
        body["fields"]["target.kind"]
            .as_str()
            .is_some_and(
                |message| message.contains("'disk' is not one of") && message.contains("dir")
            ),
        "{body}"
    );
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|message| message.contains("4 fields")),
        "{body}"
    );
    // A required section of the wrong type: the rest is still checked.
    let (status, body) = post_raw(
        &lab,
        &json!({"source": {"paths": ["src"]}, "target": "null", "repeat": 0}).to_string(),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(field_names(&body), ["repeat", "target"], "{body}");
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn ranges_are_worded_as_they_are_checked() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset(&lab.data_dir.join("src"), "2M");
    let base = json!({"source": {"paths": ["src"]}, "target": {"kind": "null"},
                      "tests": ["read_single"]});
    let with = |field: &str, value: Value| {
        let mut spec = base.clone();
        match field.split_once('.') {
            Some((section, key)) => {
                spec[section] = json!({ key: value });
            }
            None => spec[field] = value,
        }
        spec.to_string()
    };
    for (field, value, path, words) in [
        (
            "params.buffers",
            json!(-4),
            "params.buffers",
            "from 1 to 1024",
        ),
        (
            "params.buffers",
            json!(0),
            "params.buffers",
            "between 1 and 1024",
        ),
        (
            "params.streams",
            json!("four"),
            "params.streams",
            "from 1 to 256",
        ),
        (
            "params.streams",
            json!(0),
            "params.streams",
            "between 1 and 256",
        ),
        ("repeat", json!(-1), "repeat", "from 1 to 100"),
        (
            "matrix.buffers",
            json!([8, -2]),
            "matrix.buffers[1]",
            "from 1 to 1024",
        ),
    ] {
        let (status, body) = post_raw(&lab, &with(field, value.clone())).await;
        assert_eq!(status, 422, "{field} {value}: {body}");
        let message = body["fields"][path].as_str().unwrap_or_default();
        assert!(message.contains(words), "{field} {value}: {body}");
        assert!(!body.to_string().contains("0 or more"), "{field}: {body}");
    }
}

#[tokio::test]
async fn a_runs_length_has_one_bound_said_the_same_way() {
    let options = LabOptions {
        extra: vec!["--max-duration".into(), "120".into()],
        ..LabOptions::default()
    };
    let lab = Lab::fresh(&options);
    create_dataset(&lab.data_dir.join("src"), "2M");
    let mut said = Vec::new();
    for duration in [json!(600), json!(100_000), json!(0), json!(-3)] {
        let spec = json!({"source": {"paths": ["src"]}, "target": {"kind": "null"},
                          "tests": ["read_single"], "params": {"duration_s": duration}});
        let (status, body) = post_raw(&lab, &spec.to_string()).await;
        assert_eq!(status, 422, "{duration}: {body}");
        let message = body["fields"]["params.duration_s"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains("at most 120 s"), "{duration}: {body}");
        assert!(!message.contains("86400"), "{duration}: {body}");
        said.push(message);
    }
    said.dedup();
    assert_eq!(said.len(), 1, "one bound, said once: {said:?}");
}

/// The banner of the new-campaign page after a form is posted without JavaScript.
async fn banner(lab: &Lab, form: &[(&str, &str)]) -> (u16, String) {
    let response = lab
        .client
        .post(lab.url("/campaigns/new"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form)
                .finish(),
        )
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    let page = response.text().await.expect("html");
    let start = page
        .find("id=\"form-error\">")
        .map(|at| at + "id=\"form-error\">".len())
        .unwrap_or_else(|| panic!("a banner: {page}"));
    let end = start + page[start..].find("</p>").expect("banner end");
    (status, page[start..end].replace("&#39;", "'"))
}

#[tokio::test]
async fn the_form_banner_counts_what_is_wrong() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset(&lab.data_dir.join("src"), "2M");
    let bad_fields = [
        ("source_kind", "paths"),
        ("target_kind", "null"),
        ("tests", "read_single"),
        ("repeat", "0"),
        ("buffers", "0"),
        ("streams", "0"),
        ("block_size", "1"),
        ("duration_s", "-5"),
    ];
    // One path outside the allowed roots beside six bad values.
    let mut form = bad_fields.to_vec();
    form.push(("source_paths", "/etc"));
    form.push(("size", "0"));
    let (status, said) = banner(&lab, &form).await;
    assert_eq!(status, 403, "{said}");
    assert!(said.contains("7 fields have problems"), "{said}");
    assert!(said.contains("1 path is outside"), "{said}");
    assert!(said.contains("6 are not valid"), "{said}");
    // The same bad values with a path the lab may read: nothing is said of paths.
    let mut form = bad_fields.to_vec();
    form.push(("source_paths", "src"));
    let (status, said) = banner(&lab, &form).await;
    assert_eq!(status, 422, "{said}");
    assert!(said.contains("5 fields have problems"), "{said}");
    assert!(!said.contains("path"), "{said}");
}

#[tokio::test]
async fn an_unknown_preset_is_named_with_the_ones_there_are() {
    let lab = Lab::fresh(&LabOptions::default());
    let response = lab.get("/campaigns/new?preset=nonsense").await;
    assert_eq!(response.status(), 404);
    let page = response.text().await.expect("html").replace("&#39;", "'");
    assert!(page.contains("there is no preset 'nonsense'"), "{page}");
    assert!(
        page.contains("bottleneck, tuning, direct, network, storage, striped"),
        "{page}"
    );
    assert!(page.contains("<form"), "the form is still there to use");
    let response = lab.get("/campaigns/new?preset=tuning").await;
    assert_eq!(response.status(), 200);
    let page = response.text().await.expect("html");
    assert!(!page.contains("there is no preset"), "{page}");
    assert!(
        page.contains("form-error\" hidden"),
        "no banner for a known preset"
    );
}

#[tokio::test]
async fn a_body_that_is_not_json_is_said_where_and_how() {
    let lab = Lab::fresh(&LabOptions::default());
    for (body, line_column, what) in [
        (
            "{\"source\": nope}",
            "at line 1, column 13",
            "a value was expected",
        ),
        (
            "{\"source\": {\"paths\": [\"src\"]}\n \"target\": 1}",
            "at line 2, column 2",
            "a ',' before the next field",
        ),
        (
            "{source: 1}",
            "at line 1, column 2",
            "a field's name must be text",
        ),
    ] {
        let (status, answer) = post_raw(&lab, body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        let message = answer["error"].as_str().unwrap_or_default();
        assert!(message.contains("the body is not JSON"), "{answer}");
        assert!(message.contains(line_column), "{body}: {answer}");
        assert!(message.contains(what), "{body}: {answer}");
        assert!(!message.contains("expected ident"), "{answer}");
    }
    // The schedules' bodies are read by the same rule.
    let response = lab
        .client
        .post(lab.url("/api/schedules"))
        .header("content-type", "application/json")
        .body("{\"cron\": tru}")
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 400);
    let answer: Value = response.json().await.expect("JSON");
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|message| message.contains("the body is not JSON: at line 1, column")),
        "{answer}"
    );
}

#[test]
fn a_dataset_that_cannot_be_made_is_said_as_the_datasets_problem() {
    let root = scratch();
    let out = output(
        backlab()
            .args(["dataset", "create"])
            .arg(root.path().join("twin"))
            .arg("--like")
            .arg(root.path().join("nowhere")),
    );
    assert_eq!(out.status.code(), Some(2));
    let said = stderr(&out);
    assert!(said.contains("the dataset cannot be made"), "{said}");
    assert!(said.contains("--like:"), "{said}");
    assert!(!said.contains("campaign"), "{said}");
    let out = output(
        backlab()
            .args(["dataset", "scan"])
            .arg(root.path())
            .args(["--error-pct", "0"]),
    );
    let said = stderr(&out);
    assert!(said.contains("the dataset cannot be scanned"), "{said}");
    assert!(!said.contains("campaign"), "{said}");
}
