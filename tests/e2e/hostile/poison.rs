//! A figure that could not be computed must cost its run, never its campaign. A run stored
//! with an infinite spread (kept as `null`, as an earlier version wrote a steady window with a
//! mean of zero) and a run whose stored document cannot be read at all: every view of the
//! campaign still answers, the unreadable run says why, and the campaign can be deleted from
//! its page.

use std::time::Duration;

use rustix::process::Signal;
use sqlx::Row;

use crate::support::fixtures::{fixture, scratch};
use crate::support::lab::{Lab, LabOptions};

/// The fixture's tape campaign (eight runs) and its network campaign, to compare with.
const TAPE: &str = "NwB7iB3ZAr2L";
const NETWORK: &str = "VEvhBCFnzT45";

#[tokio::test]
async fn a_run_that_cannot_be_read_costs_that_run_and_every_view_still_answers() {
    let root = scratch();
    let db = root.path().join("lab.db");
    std::fs::copy(fixture("db-0005/lab.db"), &db).expect("copy the fixture");
    let options = LabOptions {
        db: Some(db.display().to_string()),
        ..LabOptions::default()
    };
    // A first start brings the fixture to today's tables, with each run's result as a document.
    let mut lab = Lab::start(root.path(), &options);
    lab.wait_campaign(TAPE, "judged at start", Duration::from_secs(30), |c| {
        c["headline"].is_object()
    })
    .await;
    let said = lab
        .get_json(&format!("/api/campaigns/{TAPE}/bottleneck"))
        .await;
    let line = said["bottleneck"]["verdict"]
        .as_str()
        .expect("the verdict in words")
        .to_string();
    lab.signal(Signal::TERM);
    lab.wait_exit(Duration::from_secs(10)).await;

    // Damage two stored runs as the fault left them: a spread stored as null (the window
    // moved no data), and a figure stored as null where a number belongs.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .expect("open the database");
    let documents: Vec<(i64, String)> = sqlx::query(
        "SELECT runs.id, runs.result FROM runs JOIN campaigns ON campaigns.seq = runs.campaign_seq
         WHERE campaigns.id = ?1 ORDER BY runs.position",
    )
    .bind(TAPE)
    .fetch_all(&pool)
    .await
    .expect("the tape campaign's runs")
    .into_iter()
    .map(|row| (row.get(0), row.get(1)))
    .collect();
    assert_eq!(documents.len(), 8);
    // The verdict's words are rendered from the kept judgement when shown, the list's line
    // too: the line the fixture's version kept is gone, and the judgement kept anew holds
    // no sentence.
    let (kept_line, judgement): (Option<String>, String) =
        sqlx::query("SELECT verdict, judgement FROM campaigns WHERE id = ?1")
            .bind(TAPE)
            .fetch_one(&pool)
            .await
            .map(|row| (row.get(0), row.get(1)))
            .expect("the tape campaign");
    assert_eq!(kept_line, None);
    assert!(!judgement.contains(&line), "{line} is kept in {judgement}");
    let mut spread: serde_json::Value = serde_json::from_str(&documents[0].1).expect("json");
    spread["steady"]["cv_pct"] = serde_json::Value::Null;
    spread["validity"]["flags"][0]["detail"] =
        "no 3 s window covering half the run held within 10 %; the second half varied inf %".into();
    let mut unreadable: serde_json::Value = serde_json::from_str(&documents[2].1).expect("json");
    unreadable["mb_per_s"] = serde_json::Value::Null;
    for (id, document) in [(documents[0].0, spread), (documents[2].0, unreadable)] {
        sqlx::query("UPDATE runs SET result = ?1 WHERE id = ?2")
            .bind(document.to_string())
            .bind(id)
            .execute(&pool)
            .await
            .expect("damage a run");
    }
    pool.close().await;

    let lab = Lab::start(root.path(), &options);
    for path in [
        format!("/campaigns/{TAPE}"),
        format!("/campaigns/{TAPE}/report.html"),
        format!("/campaigns/{TAPE}/delete"),
        format!("/api/campaigns/{TAPE}"),
        format!("/api/campaigns/{TAPE}/results.csv"),
        format!("/api/campaigns/{TAPE}/bottleneck"),
        format!("/compare?a={TAPE}&b={NETWORK}"),
        "/".to_string(),
    ] {
        let response = lab.get(&path).await;
        assert_eq!(
            response.status(),
            200,
            "{path}: {}",
            response.text().await.unwrap_or_default()
        );
    }
    let campaign = lab.get_json(&format!("/api/campaigns/{TAPE}")).await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 8, "{campaign}");
    // The run with the null spread reads, its spread none; the unreadable one is failed with
    // the reason, and the others keep their figures.
    assert!(
        runs[0]["result"]["steady"]["cv_pct"].is_null(),
        "{}",
        runs[0]
    );
    assert_eq!(runs[0]["result"]["mb_per_s"], 157.8, "{}", runs[0]);
    let error = runs[2]["result"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("stored result cannot be read"),
        "the unreadable run says why: {}",
        runs[2]
    );
    assert_eq!(runs[2]["result"]["status"], "failed", "{}", runs[2]);
    assert_eq!(runs[3]["result"]["mb_per_s"], 10911.4, "{}", runs[3]);
    let page = lab.get_text(&format!("/campaigns/{TAPE}")).await;
    assert!(
        page.contains("stored result cannot be read"),
        "the page says why"
    );
    let events = lab
        .client
        .get(lab.url(&format!("/api/campaigns/{TAPE}/events")))
        .send()
        .await
        .expect("events");
    assert_eq!(events.status(), 200);
    drop(events);

    // Deleted from its page's form.
    let delete = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
        .post(lab.url(&format!("/campaigns/{TAPE}/delete")))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", &lab.base)
        .body("")
        .send()
        .await
        .expect("delete");
    assert_eq!(delete.status(), 303);
    assert_eq!(
        lab.get(&format!("/api/campaigns/{TAPE}")).await.status(),
        404
    );
}
