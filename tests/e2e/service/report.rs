//! What a report page offers and tells, without JavaScript: forms that cancel, rerun and
//! delete (the lab's token asked in the form, other sites refused, deleting confirmed first),
//! where the campaign was measured, how busy each stage of the backup was, and a list that
//! counts what was really done.

use std::time::Duration;

use serde_json::json;

use crate::support::fixtures::create_dataset;
use crate::support::lab::{Lab, LabOptions};

const TOKEN: &str = "page-token";

/// A client that shows redirects instead of following them.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// Posts a page form (`application/x-www-form-urlencoded`) as a browser on the lab's own
/// page would.
async fn post_form(lab: &Lab, path: &str, body: &str) -> reqwest::Response {
    client()
        .post(lab.url(path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", &lab.base)
        .body(body.to_string())
        .send()
        .await
        .expect("POST")
}

fn location(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("location")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn the_page_cancels_reruns_and_deletes_with_the_token_in_the_form() {
    let lab = Lab::fresh(&LabOptions {
        token: Some(TOKEN.into()),
        ..LabOptions::default()
    });

    // A long run, cancelled from its page.
    let long = lab
        .submit(&json!({
            "name": "long",
            "source": {"generated": {"size": "8G"}},
            "target": {"kind": "tape", "model": "lto-3"},
            "tests": ["tape_write"],
            "params": {"duration_s": 60}
        }))
        .await;
    lab.wait_status(&long, &["running"], Duration::from_secs(60))
        .await;
    let page = lab.get_text(&format!("/campaigns/{long}")).await;
    assert!(
        page.contains(&format!("action=\"/campaigns/{long}/cancel\"")),
        "a running campaign's page has Cancel"
    );
    assert!(
        page.contains("name=\"token\""),
        "the form asks for the token"
    );
    let refused = post_form(&lab, &format!("/campaigns/{long}/cancel"), "").await;
    assert_eq!(refused.status(), 401, "no token, no cancel");
    let wrong = post_form(&lab, &format!("/campaigns/{long}/cancel"), "token=nope").await;
    assert_eq!(wrong.status(), 401, "a wrong token, no cancel");
    assert_eq!(
        lab.get_json(&format!("/api/campaigns/{long}")).await["status"],
        "running"
    );
    let cancelled = post_form(
        &lab,
        &format!("/campaigns/{long}/cancel"),
        &format!("token={TOKEN}"),
    )
    .await;
    assert_eq!(cancelled.status(), 303);
    assert_eq!(location(&cancelled), format!("/campaigns/{long}"));
    lab.wait_status(&long, &["cancelled"], Duration::from_secs(30))
        .await;
    let list = lab.get_text("/").await;
    assert!(
        list.contains("0 of 1 runs done, 1 cancelled"),
        "the list counts the cut run as cancelled, not as a result"
    );

    // A short one, rerun from its page.
    let short = lab
        .submit(&json!({
            "name": "short",
            "source": {"generated": {"size": "32M"}},
            "target": {"kind": "null"},
            "tests": ["tape_write"],
            "params": {"duration_s": 2}
        }))
        .await;
    lab.wait_status(&short, &["done"], Duration::from_secs(60))
        .await;
    let page = lab.get_text(&format!("/campaigns/{short}")).await;
    assert!(page.contains(&format!("action=\"/campaigns/{short}/rerun\"")));
    assert!(page.contains(&format!("href=\"/campaigns/{short}/delete\"")));
    let elsewhere = client()
        .post(lab.url(&format!("/campaigns/{short}/rerun")))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", "http://elsewhere.example")
        .body(format!("token={TOKEN}"))
        .send()
        .await
        .expect("POST");
    assert_eq!(elsewhere.status(), 403, "another site's form is refused");
    let rerun = post_form(
        &lab,
        &format!("/campaigns/{short}/rerun"),
        &format!("token={TOKEN}"),
    )
    .await;
    assert_eq!(rerun.status(), 303);
    let again = location(&rerun)
        .strip_prefix("/campaigns/")
        .expect("the rerun's page")
        .to_string();
    assert_ne!(again, short);
    let rerun_page = lab.get_text(&format!("/campaigns/{again}")).await;
    assert!(
        rerun_page.contains(&format!("rerun of <a href=\"/campaigns/{short}\">")),
        "the rerun links to its original"
    );
    let original = lab.get_text(&format!("/campaigns/{short}")).await;
    assert!(
        original.contains(&format!("href=\"/campaigns/{again}\" class=\"rerun-link\"")),
        "the original lists its rerun"
    );

    // Deleting asks first, then removes the rerun and its mention on the original.
    lab.wait_status(&again, &["done"], Duration::from_secs(60))
        .await;
    let confirm = lab.get_text(&format!("/campaigns/{again}/delete")).await;
    assert!(confirm.contains("cannot be undone"), "{confirm}");
    assert!(confirm.contains(&format!("action=\"/campaigns/{again}/delete\"")));
    let kept = post_form(&lab, &format!("/campaigns/{again}/delete"), "").await;
    assert_eq!(kept.status(), 401, "no token, no delete");
    let deleted = post_form(
        &lab,
        &format!("/campaigns/{again}/delete"),
        &format!("token={TOKEN}"),
    )
    .await;
    assert_eq!(deleted.status(), 303);
    assert_eq!(location(&deleted), "/");
    assert_eq!(lab.get(&format!("/campaigns/{again}")).await.status(), 404);
    let original = lab.get_text(&format!("/campaigns/{short}")).await;
    assert!(
        !original.contains(&again),
        "the original no longer lists a deleted rerun"
    );
}

#[tokio::test]
async fn a_finished_report_says_where_it_was_measured_and_how_busy_each_stage_was() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("source");
    create_dataset(&source, "16M");
    let target = lab.empty_dir("target");
    let id = lab
        .submit(&json!({
            "name": "provenance",
            "source": {"paths": [source]},
            "target": {"kind": "dir", "path": target},
            "tests": ["tape_write", "full_backup"],
            "params": {"duration_s": 2, "size": "16M"}
        }))
        .await;
    lab.wait_status(&id, &["done"], Duration::from_secs(90))
        .await;

    let report = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let provenance = &report["survey"]["provenance"];
    assert!(
        provenance["hostname"]
            .as_str()
            .is_some_and(|host| !host.is_empty()),
        "{provenance}"
    );
    assert!(
        provenance["kernel"]
            .as_str()
            .is_some_and(|kernel| kernel.starts_with("Linux ")),
        "{provenance}"
    );
    assert!(provenance["cpus"].as_u64().is_some_and(|cpus| cpus >= 1));
    assert!(
        provenance["memory_bytes"]
            .as_u64()
            .is_some_and(|bytes| bytes > 0)
    );
    assert_eq!(provenance["backlab_version"], env!("CARGO_PKG_VERSION"));
    let places = provenance["places"].as_array().expect("places");
    let roles: Vec<&str> = places.iter().filter_map(|p| p["role"].as_str()).collect();
    assert_eq!(roles, ["source", "target"]);
    for place in places {
        assert!(
            place["fs_type"].as_str().is_some_and(|fs| !fs.is_empty()),
            "{place}"
        );
    }
    let hostname = provenance["hostname"].as_str().unwrap_or_default();

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    for shown in [
        "Measured on",
        hostname,
        "Measured with",
        "Source storage",
        "Target storage",
    ] {
        assert!(page.contains(shown), "the page shows {shown:?}");
    }
    let download = lab.get_text(&format!("/campaigns/{id}/report.html")).await;
    assert!(download.contains("Measured on") && download.contains(hostname));

    assert!(
        page.contains("id=\"stage-bar\""),
        "the stage bar leads the report"
    );
    for stage in ["Source", "Pipeline (CPU)", "Target"] {
        assert!(
            page.contains(&format!("<span class=\"stage-name\">{stage}</span>")),
            "the stage bar shows {stage}"
        );
    }

    // The list shows the backup's own figure, named as the full backup's, once the campaign
    // has been judged (just after its last run: its source's reduction is estimated first).
    lab.wait_campaign(
        &id,
        "the campaign's headline",
        Duration::from_secs(60),
        |campaign| campaign["headline"].is_object(),
    )
    .await;
    let list = lab.get_text("/").await;
    let row = list
        .split("<tr>")
        .find(|row| row.contains(&id))
        .expect("the campaign's row");
    let cell = row.split("backup-cell\">").nth(1).expect("the backup cell");
    assert!(cell.contains(" MB/s"), "{cell}");
    assert!(cell.contains("full backup"), "{cell}");
    // It says what the figure is: steady or whole run, and how many runs are valid.
    assert!(
        cell.contains(", steady, ") || cell.contains(", whole run, "),
        "{cell}"
    );
    assert!(cell.contains(" valid</div>"), "{cell}");
}

/// Every finished report has a backup-window planner: by default the campaign's own source
/// in 8 hours, unless that needs next to nothing (64 MiB in 8 hours: it then asks for the
/// size, never answering "needs 0.0 MB/s"); asked (`/campaigns/ID/plan`) for 12 TiB in 8
/// hours it gives the rate needed (458.1 MB/s), for 12 TB (decimal) 416.7 MB/s, and what the
/// measurements say of it; a size or window it cannot read is named, and the page still
/// answers.
#[tokio::test]
async fn the_report_plans_a_backup_window_from_its_measurements() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&json!({
            "name": "planner",
            "source": {"generated": {"size": "64M"}},
            "target": {"kind": "null"},
            "tests": ["read_parallel", "null_sink", "full_backup"],
            "params": {"duration_s": 1}
        }))
        .await;
    lab.wait_status(&id, &["done"], Duration::from_secs(60))
        .await;

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    let planner = &page[page.find("id=\"planner\"").expect("a planner")..];
    assert!(planner.contains("name=\"data\" value=\"\""), "{planner}");
    assert!(planner.contains(&format!("action=\"/campaigns/{id}/plan\"")));
    assert!(planner.contains("name=\"window\" value=\"8h\""));
    assert!(!planner.contains("needs 0.0 MB/s"), "{planner}");
    assert!(
        planner.contains("Give the data size and the window"),
        "{planner}"
    );
    let small = lab
        .get_text(&format!("/campaigns/{id}/plan?data=1G&window=8h"))
        .await;
    let planner = &small[small.find("id=\"planner\"").expect("a planner")..];
    assert!(
        planner.contains("1 GiB in 8h 00m needs 0.04 MB/s; the measured backup"),
        "{planner}"
    );
    let decimal = lab
        .get_text(&format!("/campaigns/{id}/plan?data=12TB&window=8h"))
        .await;
    let planner = &decimal[decimal.find("id=\"planner\"").expect("a planner")..];
    assert!(
        planner.contains("10.9 TiB in 8h 00m needs 416.7 MB/s;"),
        "{planner}"
    );

    let asked = lab
        .get_text(&format!("/campaigns/{id}/plan?data=12T&window=8h"))
        .await;
    let planner = &asked[asked.find("id=\"planner\"").expect("a planner")..];
    assert!(
        planner.contains("12 TiB in 8h 00m needs 458.1 MB/s;"),
        "{planner}"
    );
    assert!(planner.contains("name=\"data\" value=\"12T\""));
    // Far past anything measured: the components short of it are named.
    let beyond = lab
        .get_text(&format!("/campaigns/{id}/plan?data=1000T&window=1s"))
        .await;
    let planner = &beyond[beyond.find("id=\"planner\"").expect("a planner")..];
    assert!(
        planner.contains("and no measured change gets there"),
        "{planner}"
    );
    assert!(planner.contains("The parallel read reached "), "{planner}");
    assert!(planner.contains("The backup to null reached "), "{planner}");

    let bad = lab
        .get(&format!("/campaigns/{id}/plan?data=12X&window=soon"))
        .await;
    assert_eq!(bad.status(), 200);
    let bad = bad.text().await.expect("html").replace("&#39;", "'");
    assert!(bad.contains("data: '12X' has an unknown unit 'X'"), "{bad}");
    assert!(bad.contains("window: 'soon' is not a window"));

    // Asked on a page of its own: the report is still the kept one.
    let again = lab.get_text(&format!("/campaigns/{id}")).await;
    assert_eq!(again, page);
}
