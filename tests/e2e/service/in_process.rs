//! Answers that need no worker and no connection, from the application in this process: field
//! errors in plain words, every bad field at once, unknown ids and paths, the API document.

use axum::http::StatusCode;

use crate::support::in_process::App;

#[tokio::test]
async fn bad_specs_name_every_field_in_plain_words_and_queue_nothing() {
    let app = App::new().await;
    let typed = app
        .send(
            "POST",
            "/api/campaigns",
            Some(r#"{"source": {"paths": ["x"]}, "target": {"kind": "null"}, "params": {"buffers": -4}}"#),
        )
        .await;
    assert_eq!(typed.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        typed.json()["fields"]["params.buffers"],
        "is -4; it must be a whole number from 1 to 1024"
    );
    let rules = app
        .send(
            "POST",
            "/api/campaigns",
            Some(
                r#"{"source": {"paths": ["missing"]}, "target": {"kind": "dir", "path": "nowhere"},
                    "params": {"buffers": 0, "block_size": "6000", "direct": true}}"#,
            ),
        )
        .await;
    assert_eq!(
        rules.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        rules.body
    );
    let fields = rules.json()["fields"].clone();
    for path in [
        "source.paths[0]",
        "target.path",
        "params.buffers",
        "params.block_size",
    ] {
        assert!(fields.get(path).is_some(), "{path} in {fields}");
    }
    let list = app.send("GET", "/api/campaigns", None).await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.json()["campaigns"], serde_json::json!([]));
}

#[tokio::test]
async fn unknown_campaigns_and_paths_are_404_in_the_kind_asked_for() {
    let app = App::new().await;
    let api = app.send("GET", "/api/campaigns/AAAAAAAAAAAA", None).await;
    assert_eq!(api.status, StatusCode::NOT_FOUND);
    assert!(api.content_type.starts_with("application/json"));
    let page = app.send("GET", "/campaigns/AAAAAAAAAAAA", None).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.content_type.starts_with("text/html"));
    let endpoint = app.send("GET", "/api/nothing", None).await;
    assert_eq!(endpoint.status, StatusCode::NOT_FOUND);
    assert!(
        endpoint.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("/api/nothing"))
    );
    let plan = app
        .send(
            "GET",
            "/campaigns/AAAAAAAAAAAA/plan?data=1T&window=8h",
            None,
        )
        .await;
    assert_eq!(plan.status, StatusCode::NOT_FOUND);
    // The references of a campaign that is not there (never was, or was deleted): 404, not
    // an empty list.
    let references = app
        .send("GET", "/api/campaigns/AAAAAAAAAAAA/references", None)
        .await;
    assert_eq!(
        references.status,
        StatusCode::NOT_FOUND,
        "{}",
        references.body
    );
}

#[tokio::test]
async fn a_series_name_a_browser_would_read_as_a_directory_is_refused() {
    let app = App::new().await;
    for name in [".", "..", ".hidden", "-dash"] {
        let body = format!(
            r#"{{"source": {{"generated": {{"size": "64M"}}}}, "target": {{"kind": "null"}},
                "series": "{name}"}}"#
        );
        let answer = app
            .send("POST", "/api/campaigns?dry_run=true", Some(&body))
            .await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{name}: {}",
            answer.body
        );
        assert!(
            answer.json()["fields"]["series"]
                .as_str()
                .is_some_and(|said| said.contains("begin with a letter or a digit")),
            "{name}: {}",
            answer.body
        );
    }
    for key in ["..", "."] {
        let page = app.send("GET", &format!("/api/series/{key}"), None).await;
        assert_ne!(page.status, StatusCode::OK, "{key}");
    }
}

#[tokio::test]
async fn the_api_document_and_health_answer() {
    let app = App::new().await;
    let health = app.send("GET", "/healthz", None).await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(health.json()["status"], "ok");
    let document = app.send("GET", "/api/openapi.json", None).await;
    assert_eq!(document.status, StatusCode::OK);
    assert!(document.json()["paths"]["/api/campaigns"].is_object());
}

#[tokio::test]
async fn a_schedule_keeps_no_text_larger_than_it_needs() {
    let app = App::new().await;
    let minutes: Vec<String> = (0..60).map(|m| m.to_string()).collect();
    // A valid pattern of every minute spelled out, again and again: 950 KB in the issue.
    let long = format!("{} * * * *", vec![minutes.join(","); 40].join(","));
    let body = serde_json::json!({"cron": long,
        "spec": {"source": {"generated": {"size": "8M"}}, "target": {"kind": "null"}}})
    .to_string();
    let answer = app.send("POST", "/api/schedules", Some(&body)).await;
    assert_eq!(
        answer.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        answer.body
    );
    assert!(
        answer.json()["fields"]["cron"]
            .as_str()
            .is_some_and(|said| said.contains("at most 120 characters")),
        "{}",
        answer.body
    );
    let fine = serde_json::json!({"cron": "*/5 * * * *",
        "spec": {"source": {"generated": {"size": "8M"}}, "target": {"kind": "null"}}})
    .to_string();
    let answer = app.send("POST", "/api/schedules", Some(&fine)).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
}
