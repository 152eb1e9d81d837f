//! A series watched over time: campaigns of one series drawn as a history, a step in their
//! figures found where it began, told on the series page, the report and `/metrics`, and posted
//! once to the operator's webhook.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

use crate::support::lab::{Lab, LabOptions};
use crate::support::machine;
use crate::support::wait::wait_until;

/// A local HTTP listener standing in for the operator's webhook: every JSON body posted to
/// `/hook` is kept.
async fn webhook_listener() -> (String, Arc<Mutex<Vec<Value>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let router = Router::new()
        .route(
            "/hook",
            post(
                |State(received): State<Arc<Mutex<Vec<Value>>>>, Json(body): Json<Value>| async move {
                    received.lock().expect("the list of posts").push(body);
                    "ok"
                },
            ),
        )
        .with_state(Arc::clone(&received));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port for the webhook");
    let url = format!(
        "http://{}/hook",
        listener.local_addr().expect("its address")
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, received)
}

/// The series `key` once its first line has `points` points: a campaign reads done a moment
/// before its judgement is kept, and its figure joins the series then.
async fn series_with_points(lab: &Lab, key: &str, points: usize) -> Value {
    wait_until(
        "every campaign's figure in the series",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            let series = lab.get_json(&format!("/api/series/{key}")).await;
            match series["lines"][0]["points"].as_array().map(Vec::len) {
                Some(count) if count == points => Ok(series),
                _ => Err(series.to_string()),
            }
        },
    )
    .await
}

/// How many campaigns of the series run at 30 MB/s before the step, and at 20 MB/s after it.
const QUIET: usize = 30;
const AFTER: usize = 6;

/// Thirty nightly campaigns of one series (a source paced at 30 MB/s, runs long enough to be
/// tested), then six at 20 MB/s (a what-if the series' name keeps together). The thirty are
/// drawn and no change is reported or posted, however their figures wander within their
/// noise; the step is then found at the 31st (the first tested one from there) with its size,
/// and the webhook hears of it exactly once.
#[tokio::test]
async fn thirty_identical_campaigns_report_no_change_and_a_step_after_them_is_posted_once() {
    let (hook, received) = webhook_listener().await;
    let lab = Lab::fresh(&LabOptions {
        extra: vec!["--webhook".to_string(), hook],
        ..LabOptions::default()
    });
    let spec = |rate: f64| {
        json!({
            "name": "nightly",
            "series": "nightly",
            "source": {"generated": {"size": "512M"}},
            "target": {"kind": "null"},
            "tests": ["null_sink"],
            "params": {"streams": 1, "duration_s": 4, "source_rate_mb_s": rate}
        })
    };
    let mut ids = Vec::new();
    for _ in 0..QUIET {
        ids.push(lab.submit(&spec(30.0)).await);
    }
    // The last campaign's live events, opened while it waits its turn: the lab runs one at a
    // time and tests each finished campaign against its series (posting any alert) before it
    // says `campaign_finished`, so once the last says so, every alert has been sent.
    let mut last = lab.events(&ids[QUIET - 1]).await;
    for id in &ids {
        let campaign = lab
            .wait_status(id, &["done", "failed"], Duration::from_secs(600))
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
        assert_eq!(campaign["series"], "nightly", "{campaign}");
        // Long enough to be tested: only other work on the machine may keep a run from it.
        let flags = campaign["runs"][0]["result"]["validity"]["flags"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            flags.iter().all(|flag| {
                ["busy_machine", "cpu_saturated", "unsteady"]
                    .contains(&flag["code"].as_str().unwrap_or(""))
            }),
            "{campaign}"
        );
    }
    let finished = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some((name, _)) = last.next().await.expect("the event stream") {
            if name == "campaign_finished" {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(finished, Ok(true), "the last campaign said it finished");
    let series = series_with_points(&lab, "nightly", QUIET).await;
    assert_eq!(
        series["lines"][0]["changes"],
        json!([]),
        "no change: {series}"
    );
    let page = lab.get_text("/series/nightly").await;
    assert!(
        !page.contains("series-change"),
        "no change told on the page"
    );
    assert!(
        received.lock().expect("the posts").is_empty(),
        "no alert for identical campaigns"
    );

    for _ in 0..AFTER {
        ids.push(lab.submit(&spec(20.0)).await);
    }
    for id in &ids[QUIET..] {
        let campaign = lab
            .wait_status(id, &["done", "failed"], Duration::from_secs(600))
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
    }
    let total = QUIET + AFTER;
    let series = series_with_points(&lab, "nightly", total).await;
    assert_eq!(
        series["campaigns"].as_array().map(Vec::len),
        Some(total),
        "{series}"
    );
    let line = &series["lines"][0];
    assert_eq!(line["test"], "null_sink", "{series}");
    let points = line["points"].as_array().expect("points");
    assert_eq!(points.len(), total, "{line}");
    // A run the machine's other work made not valid is drawn hollow; it is tested all the
    // same when it stands at its cap (other work can only slow a figure), else skipped: the
    // change begins at the first tested campaign after the thirty.
    let tested = |range: std::ops::RangeInclusive<u64>| {
        points
            .iter()
            .filter(|p| p["tested"] == true && range.contains(&p["number"].as_u64().unwrap_or(0)))
            .count()
    };
    let (quiet, total) = (QUIET as u64, total as u64);
    let (before, after) = (tested(1..=quiet), tested(quiet + 1..=total));
    if before < 3 || after < 3 {
        // Other work on the machine (a build beside the tests) flagged most runs: too few valid
        // campaigns on a side of the step to tell a change from noise, and none is claimed.
        eprintln!("only {before} and {after} valid campaigns on the sides of the step");
        assert_eq!(
            line["changes"],
            json!([]),
            "a change claimed on too few valid runs"
        );
        assert!(
            received.lock().expect("the posts").is_empty(),
            "an alert on too few valid runs"
        );
        let page = lab.get_text("/series/nightly").await;
        assert!(
            page.contains("class=\"invalid\""),
            "invalid points drawn hollow"
        );
        return;
    }
    let first = points
        .iter()
        .find(|p| p["tested"] == true && p["number"].as_u64().unwrap_or(0) > quiet)
        .expect("a tested campaign after the step");
    let first_number = first["number"].as_u64().unwrap_or(0);
    let changes = line["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "one change: {changes:?}");
    let change = &changes[0];
    assert_eq!(change["first_number"], first_number, "{change}");
    assert_eq!(change["first_campaign"], first["campaign"], "{change}");
    let size = change["change_pct"].as_f64().unwrap_or(0.0);
    assert!((-36.0..=-30.0).contains(&size), "a third slower: {change}");
    assert_eq!(change["campaigns_before"], before, "{change}");
    assert_eq!(change["campaigns_after"], after, "{change}");
    assert!(change["component_after"].is_string(), "{change}");

    // Posted once, by the campaign that made it stand out, naming where it began.
    let posts = wait_until(
        "the webhook to hear of the change",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            let posts = received.lock().expect("the posts").clone();
            if posts.is_empty() {
                Err("no post yet".to_string())
            } else {
                Ok(posts)
            }
        },
    )
    .await;
    assert_eq!(posts.len(), 1, "exactly one alert: {posts:?}");
    let alert = &posts[0];
    assert_eq!(alert["series"], "nightly", "{alert}");
    let by = alert["campaign"].as_str().unwrap_or_default();
    let found_at = ids
        .iter()
        .position(|id| id == by)
        .expect("a campaign of the series");
    assert!(
        found_at >= QUIET + 2,
        "found with three campaigns after the step: {alert}"
    );
    assert_eq!(
        alert["changes"][0]["first_campaign"],
        ids[QUIET].as_str(),
        "{alert}"
    );
    assert!(
        alert["changes"][0]["words"]
            .as_str()
            .is_some_and(|words| words.contains("slower") && words.contains("campaign 31")),
        "{alert}"
    );

    // The page draws every point as a link to its campaign and tells the change.
    let page = lab.get_text("/series/nightly").await;
    for id in [&ids[0], &ids[QUIET - 1], &ids[QUIET + AFTER - 1]] {
        assert!(page.contains(&format!("href=\"/campaigns/{id}\"")), "{id}");
    }
    assert!(page.contains("series-change"), "the change in words");
    assert!(page.contains("change-mark"), "the change on the chart");
    // The report that found it links to its series and tells the change.
    let report = lab.get_text(&format!("/campaigns/{by}")).await;
    assert!(
        report.contains("href=\"/series/nightly\""),
        "the report links its series"
    );
    assert!(
        report.contains("campaign 31"),
        "the report tells the change"
    );
    // The CSV has a row per campaign; /metrics the newest figure.
    let csv = lab.get_text("/api/series/nightly/figures.csv").await;
    assert_eq!(csv.lines().count(), QUIET + AFTER + 1, "{csv}");
    let metrics = lab.get_text("/metrics").await;
    let line = metrics
        .lines()
        .find(|line| line.starts_with("backlab_series_mb_per_s{series=\"nightly\""))
        .unwrap_or_else(|| panic!("no series figure in /metrics:\n{metrics}"));
    let value: f64 = line
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!((value - 20.0).abs() < 1.0, "{line}");

    // A series no campaign belongs to, and a key no series can have, are 404s.
    assert_eq!(lab.get("/api/series/weekly").await.status(), 404);
    assert_eq!(lab.get("/series/a%20b").await.status(), 404);
    let bad = json!({"series": "spec-1", "source": {"generated": {"size": "16M"}},
                     "target": {"kind": "null"}});
    let response = lab.post_json("/api/campaigns", &bad).await;
    assert_eq!(response.status().as_u16(), 422);
    let body: Value = response.json().await.expect("JSON");
    assert!(body["fields"]["series"].is_string(), "{body}");
}

/// Other work on the machine the whole time (two busy loops on its cores, at the lowest
/// priority, so that they take every idle moment and never the lab's: they cannot lower its
/// figures however loaded the machine is): every campaign of a series capped at 40 MB/s, then
/// at 30, is flagged busy_machine, yet each stands at its cap, which other work cannot raise
/// nor, here, lower: the points are tested, and the -25 % step is found and posted. Each run
/// lasts 8 s: a steady window of 3 s must fit in it beside a slow start on a loaded machine
/// (with 4 s, one run in a CI run found none, and with 6 s the first campaign's run in a run
/// of the suite on a slow machine: such a point stands on its whole run and is not tested).
#[tokio::test]
async fn a_step_under_a_cap_is_found_on_a_busy_machine() {
    let _alone = machine::loaded().await;
    let (hook, received) = webhook_listener().await;
    let lab = Lab::fresh(&LabOptions {
        extra: vec!["--webhook".to_string(), hook],
        ..LabOptions::default()
    });
    let busy: Vec<std::process::Child> = (0..2)
        .map(|_| {
            std::process::Command::new("nice")
                .args(["-n", "19", "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("a busy loop")
        })
        .collect();
    let spec = |rate: f64| {
        json!({
            "name": "capped",
            "series": "capped",
            "source": {"generated": {"size": "512M"}},
            "target": {"kind": "null"},
            "tests": ["null_sink"],
            "params": {"streams": 1, "duration_s": 8, "source_rate_mb_s": rate}
        })
    };
    let mut ids = Vec::new();
    for night in 0..8 {
        ids.push(lab.submit(&spec(if night < 4 { 40.0 } else { 30.0 })).await);
    }
    for id in &ids {
        let campaign = lab
            .wait_status(id, &["done", "failed"], Duration::from_secs(300))
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
    }
    for mut child in busy {
        let _ = child.kill();
        let _ = child.wait();
    }
    let series = series_with_points(&lab, "capped", 8).await;
    let line = &series["lines"][0];
    let points = line["points"].as_array().expect("points");
    let busy_points = points.iter().filter(|p| p["valid"] == false).count();
    assert!(
        busy_points >= 4,
        "the busy loops flagged too few points to show the rule: {line}"
    );
    assert!(
        points
            .iter()
            .all(|p| p["tested"] == true || p["basis"] == "whole_run"),
        "every point with a steady window stands at its cap and is tested: {line}"
    );
    let tested = |range: std::ops::RangeInclusive<u64>| {
        points
            .iter()
            .filter(|p| p["tested"] == true && range.contains(&p["number"].as_u64().unwrap_or(0)))
            .count()
    };
    assert!(
        tested(1..=4) >= 3 && tested(5..=8) >= 3,
        "too few points with a steady window to find a change: {line}"
    );
    let first_after = points
        .iter()
        .find(|p| p["tested"] == true && p["number"].as_u64().unwrap_or(0) > 4)
        .map(|p| p["number"].clone());
    let changes = line["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{line}");
    assert_eq!(
        Some(changes[0]["first_number"].clone()),
        first_after,
        "{line}"
    );
    let size = changes[0]["change_pct"].as_f64().unwrap_or(0.0);
    assert!((-27.0..=-23.0).contains(&size), "a quarter slower: {line}");
    let page = lab.get_text("/series/capped").await;
    assert!(page.contains("tested all the same"), "{page}");
    assert!(!page.contains("No change stands out"), "{page}");
    wait_until(
        "the webhook to hear of the change",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            if received.lock().expect("the posts").len() == 1 {
                Ok(())
            } else {
                Err("no post yet".to_string())
            }
        },
    )
    .await;
}

/// A tool whose "upgrade" writes smaller packs: restic run through a script that reads its
/// version and pack size from files the test rewrites between campaigns, its repository in the
/// lab's S3 store. Three campaigns at one version, three at the next: the series finds the
/// change in the tool's requests per GiB at the fourth, names both versions, the webhook hears
/// of it once, and the series page and the campaign page say it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_upgrade_that_multiplies_its_requests_is_raised_once() {
    let server = crate::support::s3::S3Server::start();
    let (hook, received) = webhook_listener().await;
    let root = crate::support::fixtures::scratch();
    let (version, pack) = (root.path().join("version"), root.path().join("pack"));
    let tools_file = root.path().join("tools.json");
    std::fs::write(
        &tools_file,
        json!([{
            "name": "packer",
            "shape": "repository",
            "version": [["cat", version]],
            "env": {"RESTIC_PASSWORD": "{password}", "RESTIC_CACHE_DIR": "{home}/cache"},
            "init": [["restic", "init", "--quiet", "--repo", "{repo}", "--repository-version", "2"]],
            "backup": [["sh", "-c",
                format!("exec restic backup --json --repo \"$0\" --host backlab --pack-size \"$(cat {})\" --tag \"$1\" \"$2\"", pack.display()),
                "{repo}", "{archive}", "{source}"]],
            "restore": [["restic", "restore", "latest", "--tag", "{archive}", "--repo", "{repo}", "--target", "{restore}"]],
            "progress": "restic_json",
            "s3": {
                "repo": "s3:{s3_endpoint}/{s3_bucket}/{s3_key}",
                "env": {"AWS_ACCESS_KEY_ID": "{s3_access_key}",
                        "AWS_SECRET_ACCESS_KEY": "{s3_secret_key}",
                        "AWS_DEFAULT_REGION": "{s3_region}"}
            }
        }])
        .to_string(),
    )
    .expect("the tools file");
    std::fs::write(&version, "packer 1.0\n").expect("the version file");
    std::fs::write(&pack, "64").expect("the pack size file");
    let mut options = server.lab_options();
    options.extra.extend([
        "--webhook".to_string(),
        hook,
        "--tools".to_string(),
        tools_file.display().to_string(),
    ]);
    let lab = Lab::start(root.path(), &options);
    // 48 MiB that does not compress: 1 pack of 64 MiB before the upgrade, 12 of 4 MiB after.
    let tree = lab.data_dir.join("tree");
    std::fs::create_dir_all(&tree).expect("the tree");
    for file in 0..12 {
        let mut bytes = vec![0u8; 4 << 20];
        rand::fill(&mut bytes[..]);
        std::fs::write(tree.join(format!("f{file:02}")), bytes).expect("a file");
    }
    let spec = json!({
        "series": "bills",
        "source": {"paths": ["tree"]},
        "target": {"kind": "s3", "store": "lab"},
        "tests": ["tool_backup"],
        "tool": {"name": "packer"},
    });
    let mut ids = Vec::new();
    for (campaign, (said, pack_mib)) in [("packer 1.0", 64), ("packer 2.0", 4)]
        .into_iter()
        .flat_map(|step| std::iter::repeat_n(step, 3))
        .enumerate()
    {
        std::fs::write(&version, format!("{said}\n")).expect("the version file");
        std::fs::write(&pack, pack_mib.to_string()).expect("the pack size file");
        let id = lab.submit(&spec).await;
        let done = lab
            .wait_status(&id, &["done", "failed"], Duration::from_secs(120))
            .await;
        assert_eq!(done["status"], "done", "campaign {}: {done}", campaign + 1);
        ids.push(id);
    }
    let series = wait_until(
        "six campaigns' requests in the series",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            let series = lab.get_json("/api/series/bills").await;
            match series["requests"][0]["points"].as_array().map(Vec::len) {
                Some(6) => Ok(series),
                _ => Err(series.to_string()),
            }
        },
    )
    .await;
    let line = &series["requests"][0];
    assert_eq!(line["tool"], "packer", "{line}");
    let per_gib: Vec<f64> = line["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|point| point["requests_per_gib"].as_f64())
        .collect();
    let changes = line["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{line}");
    let change = &changes[0];
    assert_eq!(change["first_number"], 4, "{change}");
    assert_eq!(change["first_campaign"], ids[3].as_str(), "{change}");
    assert_eq!(change["tool_before"], "packer 1.0", "{change}");
    assert_eq!(change["tool_after"], "packer 2.0", "{change}");
    assert!(
        per_gib[3..].iter().all(|after| *after > 1.2 * per_gib[0]),
        "more requests after the upgrade: {per_gib:?}"
    );

    // Posted once, by the sixth campaign, with the change in words.
    let posts = wait_until(
        "the webhook to hear of the change in requests",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            let posts = received.lock().expect("the posts").clone();
            let with_requests: Vec<Value> = posts
                .into_iter()
                .filter(|post| {
                    post["request_changes"]
                        .as_array()
                        .is_some_and(|changes| !changes.is_empty())
                })
                .collect();
            if with_requests.is_empty() {
                Err("no post of requests yet".to_string())
            } else {
                Ok(with_requests)
            }
        },
    )
    .await;
    assert_eq!(posts.len(), 1, "exactly one alert of requests: {posts:?}");
    assert_eq!(posts[0]["campaign"], ids[5].as_str(), "{}", posts[0]);
    let words = posts[0]["request_changes"][0]["words"]
        .as_str()
        .expect("words")
        .to_string();
    assert!(
        words.starts_with("packer's requests to the bucket per GiB backed up became")
            && words.contains("more from campaign 4 on")
            && words.contains("from packer 1.0 to packer 2.0"),
        "{words}"
    );
    let page = lab.get_text("/series/bills").await;
    assert!(
        page.contains(&words.replace('\'', "&#39;")),
        "the series page says it"
    );
    let campaign_page = lab.get_text(&format!("/campaigns/{}", ids[5])).await;
    assert!(
        campaign_page.contains(&words.replace('\'', "&#39;")),
        "the campaign that found it says it"
    );
}
