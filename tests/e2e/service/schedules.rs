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

/// The next page's path from a list answer's `Link` header (`<path>; rel="next"`).
fn next_link(response: &reqwest::Response) -> Option<String> {
    let link = response.headers().get("link")?.to_str().ok()?;
    let path = link.strip_prefix('<')?.split_once(">; rel=\"next\"")?.0;
    Some(path.to_string())
}

/// Every list answers one page: more schedules than a page are listed `limit` at a time,
/// the `Link` to the next page leads through the rest, each once, in creation order, and the
/// last page has no link; a limit out of range or a cursor naming nothing is refused by field,
/// as is an oversized text.
#[tokio::test]
async fn lists_answer_in_pages_and_oversized_texts_are_refused_by_field() {
    let lab = Lab::fresh(&LabOptions::default());
    let mut made = Vec::new();
    // One more than a page holds, and one more.
    for index in 0..52 {
        let request = json!({"name": format!("s{index}"), "cron": "0 2 * * *",
                             "spec": quick(""), "paused": true});
        let (status, created) = send(
            &lab,
            reqwest::Method::POST,
            "/api/schedules",
            Some(&request),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        made.push(created["id"].as_str().expect("an id").to_string());
    }
    let client = reqwest::Client::new();
    let first = client
        .get(lab.url("/api/schedules"))
        .send()
        .await
        .expect("the list");
    assert_eq!(first.status(), 200);
    assert!(
        next_link(&first).is_some(),
        "52 do not fit the default page"
    );
    let listed: Value = first.json().await.expect("JSON");
    assert_eq!(listed.as_array().map(Vec::len), Some(50), "a page of 50");
    let first_page: Vec<String> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|schedule| schedule["id"].as_str().unwrap_or_default().to_string())
        .collect();

    let mut path = Some("/api/schedules?limit=20".to_string());
    let (mut seen, mut pages) = (Vec::new(), Vec::new());
    while let Some(at) = path.take() {
        let response = client.get(lab.url(&at)).send().await.expect("a page");
        assert_eq!(response.status(), 200, "{at}");
        path = next_link(&response);
        let page: Value = response.json().await.expect("JSON");
        let ids: Vec<String> = page
            .as_array()
            .expect("a list")
            .iter()
            .map(|schedule| schedule["id"].as_str().unwrap_or_default().to_string())
            .collect();
        pages.push(ids.len());
        seen.extend(ids);
        assert!(pages.len() <= 3, "the pages end: {pages:?}");
    }
    assert_eq!(pages, vec![20, 20, 12]);
    // Oldest first (those made in one millisecond by id), each once, and the pages in the
    // order of one list.
    assert_eq!(seen[..50], first_page[..]);
    let (mut sorted_seen, mut sorted_made) = (seen.clone(), made.clone());
    sorted_seen.sort();
    sorted_made.sort();
    assert_eq!(sorted_seen, sorted_made, "each schedule once");

    // The page shows a page of them too, and links to the next, which shows the rest.
    let shown = |page: &str| {
        made.iter()
            .filter(|id| page.contains(&format!("action=\"/schedules/{id}/delete\"")))
            .count()
    };
    let page = lab.get_text("/schedules").await;
    assert_eq!(shown(&page), 50);
    let next = format!("/schedules?after={}", first_page[49]);
    assert!(
        page.contains(&format!("href=\"{next}\"")),
        "a link to the next page"
    );
    let rest = lab.get_text(&next).await;
    assert_eq!(shown(&rest), 2);
    assert!(
        !rest.contains("rel=\"next\""),
        "the last page links nowhere"
    );

    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("after=nosuchschedule", "after"),
        ("after=", "after"),
    ] {
        let (status, body) = send(
            &lab,
            reqwest::Method::GET,
            &format!("/api/schedules?{query}"),
            None,
        )
        .await;
        assert_eq!(status, 422, "{query}: {body}");
        assert!(body["fields"][field].is_string(), "{query}: {body}");
    }

    // The hosts and the campaigns page the same way.
    let hosts = client
        .get(lab.url("/api/hosts?limit=1"))
        .send()
        .await
        .expect("hosts");
    assert_eq!(hosts.status(), 200);
    assert!(next_link(&hosts).is_none(), "one host");
    let (status, body) = send(&lab, reqwest::Method::GET, "/api/hosts?limit=500", None).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["fields"]["limit"].is_string(), "{body}");
    for name in ["c1", "c2"] {
        let (status, created) = send(
            &lab,
            reqwest::Method::POST,
            "/api/campaigns",
            Some(&quick(name)),
        )
        .await;
        assert_eq!(status, 201, "{created}");
    }
    let campaigns = client
        .get(lab.url("/api/campaigns?limit=1"))
        .send()
        .await
        .expect("campaigns");
    let next = next_link(&campaigns).expect("a link to the second campaign");
    let body: Value = campaigns.json().await.expect("JSON");
    assert_eq!(body["campaigns"][0]["name"], "c2", "{body}");
    assert!(
        next.contains(&format!(
            "before={}",
            body["next_before"].as_str().unwrap_or("?")
        )),
        "{next}"
    );
    let rest = lab.get_json(&next).await;
    assert_eq!(rest["campaigns"][0]["name"], "c1", "{rest}");

    // Oversized texts are refused, the field named.
    let long = "x".repeat(201);
    let (status, body) = send(
        &lab,
        reqwest::Method::POST,
        "/api/schedules",
        Some(&json!({"name": long, "cron": "0 2 * * *", "spec": quick("")})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["fields"]["name"].is_string(), "{body}");
    let (status, body) = send(
        &lab,
        reqwest::Method::POST,
        "/api/schedules",
        Some(&json!({"cron": format!("0 2 * * *{}", " ".repeat(200)), "spec": quick("")})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["fields"]["cron"].is_string(), "{body}");
    let (status, body) = send(
        &lab,
        reqwest::Method::POST,
        "/api/campaigns",
        Some(&quick(&long)),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["fields"]["name"].is_string(), "{body}");
}
