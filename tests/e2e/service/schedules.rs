//! Schedules: created, listed, paused, edited and deleted through the API and the page, their
//! mistakes named by field; and, on a fleet, fired every minute by two labs with each
//! occurrence queued exactly once; a lab that was down across occurrences counts them as
//! missed and fires none of them late.

use std::time::Duration;

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

/// 2030-01-01 00:00:00 UTC: the minute the schedule tests set their labs' calendar by.
const MINUTE_ZERO: i64 = 1_893_456_000_000;
const MINUTE: i64 = 60_000;

/// The file a lab's schedules read "now" from (`BACKLAB_TEST_CALENDAR_FILE`): a test moves
/// the calendar by writing it, rather than waiting minutes for it.
struct Calendar {
    dir: tempfile::TempDir,
}

impl Calendar {
    /// A calendar that reads `at_ms` until it is set again.
    fn at(at_ms: i64) -> Calendar {
        let calendar = Calendar { dir: scratch() };
        calendar.set(at_ms);
        calendar
    }

    fn file(&self) -> std::path::PathBuf {
        self.dir.path().join("now")
    }

    /// The environment that points a lab at this calendar.
    fn env(&self) -> (String, String) {
        (
            "BACKLAB_TEST_CALENDAR_FILE".to_string(),
            self.file().display().to_string(),
        )
    }

    /// Sets the time, whole at once: written beside the file, then renamed over it.
    fn set(&self, at_ms: i64) {
        let next = self.dir.path().join("now.next");
        std::fs::write(&next, at_ms.to_string()).expect("the calendar written");
        std::fs::rename(&next, self.file()).expect("the calendar set");
    }
}

/// The occurrences a schedule's firings fired, oldest first.
fn occurrences(schedule: &Value) -> Vec<i64> {
    let mut occurrences: Vec<i64> = schedule["firings"]
        .as_array()
        .map(|firings| {
            firings
                .iter()
                .filter_map(|f| f["occurrence_ms"].as_i64())
                .collect()
        })
        .unwrap_or_default();
    occurrences.sort_unstable();
    occurrences
}

/// A schedule firing every minute, on two lab hosts sharing one database, through five minutes
/// of their calendar: five campaigns, none queued twice, each occurrence fired by one host.
#[tokio::test]
async fn a_schedule_on_two_fleet_hosts_fires_each_minute_once() {
    let cluster = Postgres::database();
    let roots = [scratch(), scratch()];
    let calendar = Calendar::at(MINUTE_ZERO + 30_000);
    let host = |name: &str| LabOptions {
        db: Some(cluster.url.clone()),
        host_name: Some(name.to_string()),
        extra: vec!["--lease".into(), "3".into()],
        env: vec![calendar.env()],
        ..LabOptions::default()
    };
    let a = Lab::start(roots[0].path(), &host("lab-a"));
    let b = Lab::start(roots[1].path(), &host("lab-b"));
    let request = json!({"name": "every minute", "cron": "* * * * *", "spec": quick("")});
    let (status, created) = send(&a, reqwest::Method::POST, "/api/schedules", Some(&request)).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["next"], "2030-01-01T00:01:00Z", "{created}");
    let path = format!("/api/schedules/{}", created["id"].as_str().expect("an id"));

    // Each minute's occurrence a second after it, the labs ticking every second meanwhile.
    for minute in 1..=5 {
        calendar.set(MINUTE_ZERO + minute * MINUTE + 1_000);
        let schedule = wait_until(
            &format!("the firing of minute {minute}"),
            Duration::from_secs(30),
            Duration::from_millis(200),
            async || {
                let schedule = b.get_json(&path).await;
                if schedule["fired"].as_i64().unwrap_or(0) >= minute {
                    Ok(schedule)
                } else {
                    Err(schedule)
                }
            },
        )
        .await;
        assert_eq!(schedule["fired"], minute, "fired once: {schedule}");
        assert_eq!(schedule["missed"], 0, "{schedule}");
    }
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
    assert_eq!(
        occurrences(&schedule),
        (1..=5)
            .map(|minute| MINUTE_ZERO + minute * MINUTE)
            .collect::<Vec<_>>(),
        "one a minute: {schedule}"
    );
    assert!(
        firings
            .iter()
            .all(|f| f["host"] == "lab-a" || f["host"] == "lab-b"),
        "each fired by one of the hosts: {schedule}"
    );
    // A firing's campaign is queued beside the clock: wait until each has one.
    let schedule = wait_until(
        "a campaign for each firing",
        Duration::from_secs(30),
        Duration::from_millis(200),
        async || {
            let schedule = a.get_json(&path).await;
            let firings = schedule["firings"].as_array().cloned().unwrap_or_default();
            if firings.iter().all(|f| !f["campaign_id"].is_null()) {
                Ok(schedule)
            } else {
                Err(schedule)
            }
        },
    )
    .await;
    let firings = schedule["firings"].as_array().expect("firings");
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
/// due is fired: no burst. The minute after, it fires again as usual.
#[tokio::test]
async fn a_lab_that_was_down_counts_the_occurrences_it_missed_and_fires_no_burst() {
    let root = scratch();
    let calendar = Calendar::at(MINUTE_ZERO + 30_000);
    let options = LabOptions {
        env: vec![calendar.env()],
        ..LabOptions::default()
    };
    let mut lab = Lab::start(root.path(), &options);
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
    drop(lab);
    // While it is down: the first minute passes, and 65 s past it, more than its grace.
    let missed_ms = MINUTE_ZERO + MINUTE;
    let due_ms = missed_ms + MINUTE;
    calendar.set(missed_ms + 65_000);

    let lab = Lab::start(root.path(), &options);
    // The occurrence now due is 5 s late, within its grace: fired once the lab ticks.
    let fired = async |count: i64| {
        wait_until(
            &format!("{count} firing(s) with their campaigns"),
            Duration::from_secs(30),
            Duration::from_millis(200),
            async || {
                let schedule = lab.get_json(&path).await;
                let settled = schedule["firings"]
                    .as_array()
                    .is_some_and(|firings| firings.iter().all(|f| !f["campaign_id"].is_null()));
                if schedule["fired"].as_i64().unwrap_or(0) >= count && settled {
                    Ok(schedule)
                } else {
                    Err(schedule)
                }
            },
        )
        .await
    };
    let schedule = fired(1).await;
    assert_eq!(schedule["fired"], 1, "no burst of late firings: {schedule}");
    assert_eq!(
        schedule["missed"], 1,
        "the minute slept through: {schedule}"
    );
    assert_eq!(
        schedule["last_missed"], "2030-01-01T00:01:00Z",
        "{schedule}"
    );
    assert_eq!(
        occurrences(&schedule),
        vec![due_ms],
        "no missed minute fired late: {schedule}"
    );

    // The next minute fires as usual, and nothing more is counted missed.
    calendar.set(due_ms + MINUTE + 1_000);
    let schedule = fired(2).await;
    assert_eq!(schedule["fired"], 2, "{schedule}");
    assert_eq!(schedule["missed"], 1, "{schedule}");
    assert_eq!(occurrences(&schedule), vec![due_ms, due_ms + MINUTE]);
    let listed = lab.get_json("/api/campaigns?limit=200").await;
    let queued = listed["campaigns"]
        .as_array()
        .expect("campaigns")
        .iter()
        .filter(|c| c["name"] == "while down")
        .count();
    assert_eq!(queued, 2, "one campaign a firing: {listed}");
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
