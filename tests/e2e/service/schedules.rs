//! Schedules: created, listed, paused, edited and deleted through the API and the page, their
//! mistakes named by field; and, on a fleet, fired every minute by two labs with each
//! occurrence queued exactly once; a lab that was down across occurrences counts them as
//! missed and fires none of them late.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::process::Signal;

use serde_json::{Value, json};

use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};
use crate::support::postgres::Postgres;
use crate::support::wait::wait_until;

/// A short null-sink campaign, for a schedule to queue.
fn quick(name: &str) -> Value {
    json!({
        "name": name,
        "source": {"generated": {"size": "8M"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"block_size": "256K", "size": "8M"}
    })
}

/// A request with a JSON body and no token, as a script would send it.
async fn send(
    lab: &Lab,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut request = client.request(method, lab.url(path));
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("a request");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_schedule_is_created_paused_edited_and_deleted_and_its_mistakes_are_named() {
    let lab = Lab::fresh(&LabOptions::default());
    // Every mistake at once, by field: the pattern, and the spec's own fields under `spec.`.
    let bad = json!({"cron": "0 2 * *", "spec": {"source": {"generated": {"size": "8M"}},
                     "target": {"kind": "null"}, "tests": ["no_such_test"]}});
    let (status, body) = send(&lab, reqwest::Method::POST, "/api/schedules", Some(&bad)).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["fields"]["cron"]
            .as_str()
            .is_some_and(|m| m.contains("five fields")),
        "{body}"
    );
    assert!(body["fields"]["spec.tests[0]"].is_string(), "{body}");
    let (status, body) = send(
        &lab,
        reqwest::Method::POST,
        "/api/schedules",
        Some(&json!({"cron": "0 2 * * *"})),
    )
    .await;
    assert_eq!(status, 422, "a missing spec is named: {body}");

    let good = json!({"name": "nightly", "cron": "0 2 * * *", "spec": quick("")});
    let (status, created) = send(&lab, reqwest::Method::POST, "/api/schedules", Some(&good)).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("an id").to_string();
    assert!(
        created["next"]
            .as_str()
            .is_some_and(|next| next.contains("T02:00:00")),
        "{created}"
    );
    assert_eq!(created["paused"], false);

    let path = format!("/api/schedules/{id}");
    let (status, paused) = send(
        &lab,
        reqwest::Method::PATCH,
        &path,
        Some(&json!({"paused": true})),
    )
    .await;
    assert_eq!((status, &paused["paused"]), (200, &json!(true)), "{paused}");
    let (status, edited) = send(
        &lab,
        reqwest::Method::PATCH,
        &path,
        Some(&json!({"cron": "30 3 * * 1"})),
    )
    .await;
    assert_eq!(status, 200, "{edited}");
    assert_eq!(edited["cron"], "30 3 * * 1");
    let (status, refused) = send(
        &lab,
        reqwest::Method::PATCH,
        &path,
        Some(&json!({"cron": "every night"})),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    let listed = lab.get_json("/api/schedules").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");

    // The page lists it with its forms, and pauses, resumes and deletes it without JavaScript.
    let page = lab.get_text("/schedules").await;
    assert!(
        page.contains("30 3 * * 1") && page.contains("nightly"),
        "the page lists it"
    );
    assert!(
        page.contains(&format!("action=\"/schedules/{id}/resume\"")),
        "it is paused"
    );
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let post = |action: String, form: Vec<(&'static str, String)>| {
        let client = client.clone();
        let url = lab.url(&action);
        async move {
            let body = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form)
                .finish();
            client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await
                .expect("a form post")
                .status()
                .as_u16()
        }
    };
    assert_eq!(post(format!("/schedules/{id}/resume"), vec![]).await, 303);
    assert_eq!(lab.get_json(&path).await["paused"], false);
    let refused_form = post(
        "/schedules/new".into(),
        vec![
            ("name", "bad".into()),
            ("cron", "* *".into()),
            ("spec", "{not json".into()),
        ],
    )
    .await;
    assert_eq!(refused_form, 422);
    assert_eq!(post(format!("/schedules/{id}/delete"), vec![]).await, 303);
    let (status, _) = send(&lab, reqwest::Method::GET, &path, None).await;
    assert_eq!(status, 404);
    let (status, _) = send(&lab, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(status, 404);
}

/// A schedule firing every minute, on two lab hosts sharing one database, for five minutes:
/// five campaigns, none queued twice, each occurrence fired by one host.
#[tokio::test]
async fn a_schedule_on_two_fleet_hosts_fires_each_minute_once() {
    let cluster = Postgres::start();
    let roots = [scratch(), scratch()];
    let host = |name: &str| LabOptions {
        db: Some(cluster.url.clone()),
        host_name: Some(name.to_string()),
        extra: vec!["--lease".into(), "3".into()],
        ..LabOptions::default()
    };
    let a = Lab::start(roots[0].path(), &host("lab-a"));
    let b = Lab::start(roots[1].path(), &host("lab-b"));
    let request = json!({"name": "every minute", "cron": "* * * * *", "spec": quick("")});
    let (status, created) = send(&a, reqwest::Method::POST, "/api/schedules", Some(&request)).await;
    assert_eq!(status, 201, "{created}");
    let path = format!("/api/schedules/{}", created["id"].as_str().expect("an id"));

    wait_until(
        "five firings",
        Duration::from_secs(420),
        Duration::from_millis(500),
        async || {
            let schedule = b.get_json(&path).await;
            if schedule["fired"].as_i64().unwrap_or(0) >= 5 {
                Ok(())
            } else {
                Err(schedule)
            }
        },
    )
    .await;
    let (status, _) = send(
        &b,
        reqwest::Method::PATCH,
        &path,
        Some(&json!({"paused": true})),
    )
    .await;
    assert_eq!(status, 200);
    // Read from the other host: both see one schedule.
    let schedule = a.get_json(&path).await;
    assert_eq!(schedule["fired"], 5, "{schedule}");
    assert_eq!(schedule["missed"], 0, "{schedule}");
    let firings = schedule["firings"].as_array().expect("firings");
    assert_eq!(firings.len(), 5, "{schedule}");
    let mut occurrences: Vec<i64> = firings
        .iter()
        .map(|f| f["occurrence_ms"].as_i64().unwrap_or(0))
        .collect();
    occurrences.sort_unstable();
    for pair in occurrences.windows(2) {
        assert_eq!(pair[1] - pair[0], 60_000, "one a minute: {occurrences:?}");
    }
    let mut campaigns: Vec<&str> = firings
        .iter()
        .map(|f| {
            f["campaign_id"]
                .as_str()
                .expect("each firing queued a campaign")
        })
        .collect();
    campaigns.sort_unstable();
    campaigns.dedup();
    assert_eq!(campaigns.len(), 5, "none twice: {schedule}");
    // The page, read from the other host, lists each firing's campaign under its schedule.
    let page = b.get_text("/schedules").await;
    for campaign in &campaigns {
        assert!(
            page.contains(&format!("href=\"/campaigns/{campaign}\"")),
            "the page lists the firing that queued {campaign}"
        );
    }
    // The campaigns on the shared database: five of the schedule's name, no more.
    let listed = a.get_json("/api/campaigns?limit=200").await;
    let named = listed["campaigns"]
        .as_array()
        .expect("campaigns")
        .iter()
        .filter(|c| c["name"] == "every minute")
        .count();
    assert_eq!(named, 5, "{listed}");
    for id in campaigns {
        let campaign = a
            .wait_status(id, &["done", "failed"], Duration::from_secs(60))
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
    }
}

/// A lab stopped across a minute's occurrence and started again more than a minute after it:
/// the occurrence it slept through is counted as missed, not fired late, and only the one now
/// due is fired: no burst.
#[tokio::test]
async fn a_lab_that_was_down_counts_the_occurrences_it_missed_and_fires_no_burst() {
    let root = scratch();
    let mut lab = Lab::start(root.path(), &LabOptions::default());
    let request = json!({"name": "while down", "cron": "* * * * *", "spec": quick("")});
    let (status, created) = send(
        &lab,
        reqwest::Method::POST,
        "/api/schedules",
        Some(&request),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let path = format!("/api/schedules/{}", created["id"].as_str().expect("an id"));
    lab.signal(Signal::TERM);
    let (_, exit) = lab.wait_exit(Duration::from_secs(30)).await;
    assert!(exit.success(), "{exit:?}");
    let stopped_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_millis() as u64;
    drop(lab);
    // The first occurrence after the stop, and 65 s past it: more than the minute's grace.
    let first_missed_ms = stopped_ms.div_ceil(60_000) * 60_000;
    let wake_ms = first_missed_ms + 65_000;
    tokio::time::sleep(Duration::from_millis(wake_ms - stopped_ms)).await;

    let lab = Lab::start(root.path(), &LabOptions::default());
    // The occurrence now due is 5 s late, within its grace: fired once the lab ticks.
    let due_ms = first_missed_ms + 60_000;
    let occurrences = |schedule: &Value| -> Vec<u64> {
        schedule["firings"]
            .as_array()
            .map(|firings| {
                firings
                    .iter()
                    .filter_map(|f| f["occurrence_ms"].as_u64())
                    .collect()
            })
            .unwrap_or_default()
    };
    let schedule = wait_until(
        "the occurrence now due fired",
        Duration::from_secs(20),
        Duration::from_millis(200),
        async || {
            let schedule = lab.get_json(&path).await;
            if occurrences(&schedule).contains(&due_ms) {
                Ok(schedule)
            } else {
                Err(schedule)
            }
        },
    )
    .await;
    // A stop a moment before the lab ticked may leave the minute before unfired too.
    let missed = schedule["missed"].as_i64().unwrap_or(0);
    assert!(
        (1..=2).contains(&missed),
        "the minutes slept through: {schedule}"
    );
    assert!(schedule["last_missed"].is_string(), "{schedule}");
    assert!(
        occurrences(&schedule)
            .iter()
            .all(|&at| at < first_missed_ms - 60_000 * (missed as u64 - 1) || at == due_ms),
        "no missed minute fired late: {schedule}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let schedule = lab.get_json(&path).await;
    let fired = schedule["fired"].as_i64().unwrap_or(0);
    assert!(fired <= 2, "no burst of late firings: {schedule}");
    let listed = lab.get_json("/api/campaigns?limit=200").await;
    let queued = listed["campaigns"]
        .as_array()
        .expect("campaigns")
        .iter()
        .filter(|c| c["name"] == "while down")
        .count();
    assert_eq!(queued as i64, fired, "one campaign a firing: {listed}");
    assert!(
        lab.log().contains("counted as missed"),
        "the lab says it missed them"
    );
}
