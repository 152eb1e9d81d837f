//! The pages over plain HTTP, as a browser without JavaScript sees them: the list, the form
//! posted as a form, the report, charts, compare, and error pages.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::lab::{Lab, LabOptions};

fn quick(name: &str, buffers: &[u32]) -> serde_json::Value {
    json!({
        "name": name,
        "source": {"generated": {"size": "8M"}},
        "target": {"kind": "null"},
        "tests": ["null_sink", "tape_write"],
        "matrix": {"buffers": buffers},
        "repeat": 2
    })
}

#[tokio::test]
async fn pages_list_report_chart_and_compare_campaigns() {
    let lab = Lab::fresh(&LabOptions::default());

    // First run: the list points to the demo dataset and the preset.
    let first = lab.get_text("/").await;
    assert!(first.contains("No campaign yet"), "{first}");
    assert!(first.contains("/campaigns/new?preset=bottleneck"));

    let a = lab.submit(&quick("<b>first</b> & co", &[4, 8])).await;
    let b = lab.submit(&quick("second", &[4, 8])).await;
    lab.wait_status(&a, &["done"], Duration::from_secs(60))
        .await;
    lab.wait_status(&b, &["done"], Duration::from_secs(60))
        .await;

    let list = lab.get_text("/").await;
    assert!(!list.contains("<b>first</b>"), "names are escaped");
    assert!(
        list.contains("first&#60;/b&#62; &#38; co") || list.contains("first&lt;/b&gt; &amp; co")
    );
    assert!(list.find("second").unwrap_or(usize::MAX) < list.find("first").unwrap_or(0));
    let done = lab.get_text("/?status=done").await;
    assert!(done.contains(&a) && done.contains(&b));
    let running = lab.get_text("/?status=running").await;
    assert!(!running.contains(&a));

    let report = lab.get(&format!("/campaigns/{a}")).await;
    assert_eq!(report.status(), 200);
    let report = report.text().await.expect("html");
    for needle in [
        "id=\"verdict\"",
        "id=\"bottleneck-table\"",
        "Every point of the sweep",
        "id=\"sweep-best\">",
        &format!("/campaigns/{a}/charts/matrix.svg"),
        &format!("/campaigns/{a}/charts/heatmap.svg"),
        &format!("/api/campaigns/{a}/results.csv"),
        &format!("/campaigns/{a}/report.html"),
    ] {
        assert!(report.contains(needle), "report lacks {needle}");
    }
    assert!(
        !report.contains("live.js"),
        "a finished report needs no live script"
    );

    for name in ["tests", "throughput", "stages", "matrix", "heatmap"] {
        let response = lab.get(&format!("/campaigns/{a}/charts/{name}.svg")).await;
        assert_eq!(response.status(), 200, "{name}");
        assert_eq!(response.headers()["content-type"], "image/svg+xml");
        let svg = response.text().await.expect("svg");
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(
        lab.get(&format!("/campaigns/{a}/charts/pie.svg"))
            .await
            .status(),
        404
    );

    let compare = lab.get(&format!("/compare?a={a}&b={b}")).await;
    assert_eq!(compare.status(), 200);
    let compare = compare.text().await.expect("html");
    assert!(compare.contains("table class=\"compare\""), "{compare}");
    // Two tests × two buffer counts, matched on both sides.
    assert_eq!(compare.matches("<tr class=").count(), 4, "{compare}");
    assert!(compare.contains(" %</td>"), "deltas in percent");
    let chart = lab.get(&format!("/compare/chart.svg?a={a}&b={b}")).await;
    assert_eq!(chart.status(), 200);
    roxmltree::Document::parse(&chart.text().await.expect("svg")).expect("compare chart is XML");
    let picker = lab.get_text("/compare").await;
    assert!(
        picker.contains(&a) && picker.contains(&b),
        "the picker lists campaigns"
    );

    for asset in ["style.css", "live.js", "new.js"] {
        let response = lab.get(&format!("/static/{asset}")).await;
        assert_eq!(response.status(), 200, "{asset}");
    }
}

#[tokio::test]
async fn compare_rows_say_what_each_figure_is_and_what_tells_them_apart() {
    let lab = Lab::fresh(&LabOptions::default());
    let spec = |name: &str, duration_s: u32| {
        json!({
            "name": name,
            "source": {"generated": {"size": "8M"}},
            "target": {"kind": "null"},
            "tests": ["null_sink"],
            "params": {"duration_s": duration_s}
        })
    };
    let a = lab.submit(&spec("two seconds", 2)).await;
    let b = lab.submit(&spec("three seconds", 3)).await;
    for id in [&a, &b] {
        lab.wait_status(id, &["done"], Duration::from_secs(60))
            .await;
    }
    let compare = lab.get_text(&format!("/compare?a={a}&b={b}")).await;
    let cells = |class: &str| -> Vec<String> {
        compare
            .split(&format!("<td class=\"{class}\">"))
            .skip(1)
            .filter_map(|cell| cell.split("</td>").next())
            .map(str::to_string)
            .collect()
    };
    // The two campaigns' points differ only in their length: two rows, each saying which.
    let params = cells("params");
    assert_eq!(params.len(), 2, "{compare}");
    assert_ne!(params[0], params[1], "rows that differ read differently");
    assert!(params.iter().any(|p| p.contains("2.0 s")), "{params:?}");
    assert!(params.iter().any(|p| p.contains("3.0 s")), "{params:?}");
    // Each figure says whether it is steady or whole run, and how many runs are valid.
    for figure in cells("num").iter().filter(|cell| cell.contains("valid")) {
        assert!(
            figure.contains(" steady, ") || figure.contains(" whole run, "),
            "{figure}"
        );
        assert!(figure.contains(" of 1 valid"), "{figure}");
    }
    assert_eq!(
        cells("num")
            .iter()
            .filter(|cell| cell.contains("valid"))
            .count(),
        2,
        "{compare}"
    );
    // The report's tables say the same of each figure.
    let report = lab.get_json(&format!("/api/campaigns/{a}")).await;
    let figure = &report["points"][0]["figure"];
    let word = if figure["basis"] == "steady" {
        "steady"
    } else {
        "whole run"
    };
    let page = lab.get_text(&format!("/campaigns/{a}")).await;
    let shown = format!("{:.1} {word}", figure["mb_per_s"].as_f64().unwrap_or(0.0));
    assert!(page.contains(&shown), "the page shows {shown}");
}

#[tokio::test]
async fn the_form_works_without_javascript_and_errors_have_pages() {
    let lab = Lab::fresh(&LabOptions::default());
    let form = lab.get_text("/campaigns/new?preset=tuning").await;
    assert!(
        form.contains("value=\"8, 16, 32\""),
        "the preset fills the matrix"
    );
    assert!(form.contains("value=\"64K, 128K, 256K\""));
    // Seed 001's preset: a block-size sweep with direct I/O on a directory target.
    let storage = lab.get_text("/campaigns/new?preset=storage").await;
    assert!(storage.contains("value=\"64K, 128K, 256K, 512K, 1M, 2M, 4M, 8M\""));
    assert!(storage.contains("name=\"direct\" value=\"true\" checked"));
    assert!(storage.contains("name=\"target_kind\" value=\"dir\" checked"));

    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let body = "name=plain+form&source_kind=generated&generated_size=8M&target_kind=null\
                &tests=null_sink&buffers=8&block_size=64K&duration_s=5&compress_ratio=2&repeat=1";
    let response = client
        .post(lab.url("/campaigns/new"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 303);
    let location = response.headers()["location"]
        .to_str()
        .expect("location")
        .to_string();
    let id = location
        .strip_prefix("/campaigns/")
        .expect("report URL")
        .to_string();
    lab.wait_status(&id, &["done"], Duration::from_secs(30))
        .await;

    let bad = "name=x&source_kind=paths&source_paths=..%2F..&target_kind=null&tests=null_sink\
               &buffers=8&block_size=64K&duration_s=5&compress_ratio=2&repeat=1";
    let response = client
        .post(lab.url("/campaigns/new"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(bad)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 403);
    let page = response.text().await.expect("html");
    assert!(page.contains("outside the allowed roots"), "{page}");
    assert!(
        page.contains("value=\"x\""),
        "the form keeps what was typed"
    );

    // The page's script posts the same form and asks for JSON: the API's answers.
    let post_json = |body: &'static str| {
        client
            .post(lab.url("/campaigns/new"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body)
            .send()
    };
    let refused = post_json(bad).await.expect("POST");
    assert_eq!(refused.status(), 403);
    let refused: serde_json::Value = refused.json().await.expect("JSON");
    assert!(
        refused["fields"]["source.paths[0]"]
            .as_str()
            .is_some_and(|m| m.contains("outside the allowed roots")),
        "{refused}"
    );
    let accepted = post_json(body).await.expect("POST");
    assert_eq!(accepted.status(), 201);
    let accepted: serde_json::Value = accepted.json().await.expect("JSON");
    let url = accepted["url"].as_str().expect("url");
    assert!(url.starts_with("/campaigns/"), "{accepted}");

    for path in [
        "/campaigns/AAAAAAAAAAAA",
        "/campaigns/nope",
        "/no/such/page",
    ] {
        let response = lab.get(path).await;
        assert_eq!(response.status(), 404, "{path}");
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap_or("")
                .starts_with("text/html")
        );
        let page = response.text().await.expect("html");
        assert!(
            page.contains("not found") || page.contains("no page"),
            "{path}: {page}"
        );
    }
    let unknown = lab.get("/?status=sleeping").await;
    assert_eq!(unknown.status(), 400);
}

#[tokio::test]
async fn with_a_token_the_plain_form_asks_for_it() {
    let options = LabOptions {
        token: Some("form-token".into()),
        ..LabOptions::default()
    };
    let lab = Lab::fresh(&options);
    let form = lab.get_text("/campaigns/new").await;
    assert!(
        form.contains("name=\"token\""),
        "the form asks for the token"
    );
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let body = "name=t&source_kind=generated&generated_size=4M&target_kind=null&tests=null_sink\
                &buffers=8&block_size=64K&duration_s=5&compress_ratio=2&repeat=1";
    for (token, status) in [("", 401), ("&token=wrong", 401), ("&token=form-token", 303)] {
        let response = client
            .post(lab.url("/campaigns/new"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("{body}{token}"))
            .send()
            .await
            .expect("POST");
        assert_eq!(response.status(), status, "{token:?}");
    }
}

#[tokio::test]
async fn emulated_tape_figures_survive_the_store_and_say_emulated_everywhere() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&json!({
            "name": "tape",
            "source": {"generated": {"size": "80M", "compress_ratio": 1.0}},
            "target": {"kind": "tape", "model": "lto-3", "buffer_mb": 16},
            "tests": ["tape_write"]
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    let tape = &campaign["runs"][0]["result"]["tape"];
    assert_eq!(tape["emulated"], true, "{campaign}");
    assert_eq!(tape["model"], "LTO-3");
    let rate = campaign["runs"][0]["result"]["mb_per_s"]
        .as_f64()
        .unwrap_or(0.0);
    // The drive's exact pace is tests/realtime/tape.rs's business; here other tests share the
    // cores.
    assert!(rate > 0.0 && rate <= 84.0, "{rate}");
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    assert!(
        csv.lines().next().unwrap_or("").contains("emulated_tape"),
        "{csv}"
    );
    assert!(csv.contains(",LTO-3,"), "{csv}");
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("emulated LTO-3"), "the page says emulated");
    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let label = verdict["bottleneck"]["rows"][0]["label"]
        .as_str()
        .unwrap_or("");
    assert!(label.contains("emulated"), "{label}");
}

/// A target kind added as one file shows on every page without the pages knowing it: the
/// striped volume's words, its own figures and its row label come from the kind.
#[tokio::test]
async fn an_emulated_striped_volume_names_itself_and_its_figures_everywhere() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&json!({
            "name": "stripe",
            "source": {"generated": {"size": "20M"}},
            "target": {"kind": "striped", "disks": 10, "disk_mb_s": 50, "stripe_unit": "64K",
                       "controllers": 10},
            "tests": ["tape_write"],
            "params": {"block_size": "320K", "streams": 1, "duration_s": 2}
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    let volume = &campaign["runs"][0]["result"]["striped"];
    assert_eq!(volume["emulated"], true, "{campaign}");
    assert_eq!(volume["disks_per_request"], 5.0, "{volume}");
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    for words in [
        "emulated striped volume, 10 × 50 MB/s disks, 64 KiB stripe unit (640 KiB wide)",
        "5.0 of 10 disks per request",
        "Target write (emulated striped volume)",
    ] {
        assert!(page.contains(words), "the page says {words:?}");
    }
    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    assert_eq!(
        verdict["bottleneck"]["rows"][0]["label"], "Target write (emulated striped volume)",
        "{verdict}"
    );
    // A setting of another kind is named, with the kind it does not belong to.
    let response = lab
        .post_json(
            "/api/campaigns",
            &json!({"source": {"generated": {"size": "1M"}},
                    "target": {"kind": "striped", "model": "lto-4", "disks": 0}}),
        )
        .await;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.expect("JSON body");
    assert_eq!(
        body["fields"]["target.model"], "is not a setting of kind striped",
        "{body}"
    );
}

/// A restore gets its row in the table and its own line in the verdict box, and leaves no
/// file in the data dir it restored into.
#[tokio::test]
async fn a_restore_has_its_row_and_its_line_on_the_report() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&json!({
            "name": "restore",
            "source": {"generated": {"size": "16M"}},
            "target": {"kind": "dir", "path": "."},
            "tests": ["full_backup", "restore"],
            "params": {"block_size": "256K", "streams": 2, "duration_s": 5}
        }))
        .await;
    lab.wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("Restore, one stream"),
        "the table has the row"
    );
    assert!(
        page.contains("id=\"restore-line\""),
        "the verdict box has the line"
    );
    assert!(
        page.contains("A restore of 16 MiB takes about"),
        "the line says it"
    );
    let left: Vec<String> = std::fs::read_dir(&lab.data_dir)
        .expect("data dir")
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("backlab-"))
        .collect();
    assert!(left.is_empty(), "left in the data dir: {left:?}");
}

#[tokio::test]
async fn a_finished_report_is_kept_revalidated_by_etag_and_forgotten_when_deleted() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab.submit(&quick("kept", &[4])).await;
    lab.wait_status(&id, &["done"], Duration::from_secs(60))
        .await;
    for path in [
        format!("/campaigns/{id}"),
        format!("/campaigns/{id}/charts/tests.svg"),
        format!("/campaigns/{id}/report.html"),
    ] {
        let first = lab.get(&path).await;
        assert_eq!(first.status(), 200, "{path}");
        let etag = first
            .headers()
            .get("etag")
            .unwrap_or_else(|| panic!("{path}: no ETag"))
            .clone();
        let body = first.text().await.expect("body");
        let again = lab.get(&path).await;
        assert_eq!(again.headers().get("etag"), Some(&etag), "{path}");
        assert_eq!(
            again.text().await.expect("body"),
            body,
            "{path}: same answer"
        );
        let revalidated = lab
            .client
            .get(lab.url(&path))
            .header("If-None-Match", etag.clone())
            .send()
            .await
            .expect("GET");
        assert_eq!(revalidated.status(), 304, "{path}");
    }
    let deleted = lab
        .client
        .delete(lab.url(&format!("/api/campaigns/{id}")))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(deleted.status(), 204);
    for path in [
        format!("/campaigns/{id}"),
        format!("/campaigns/{id}/charts/tests.svg"),
    ] {
        assert_eq!(lab.get(&path).await.status(), 404, "{path} after delete");
    }
}

/// Five mistakes of three kinds (a count and a duration that are not numbers, a size with an
/// unknown unit, a target directory that does not exist, a matrix value below the minimum)
/// come back in one answer, each in plain words next to its field and outlined, as a page
/// without JavaScript and as JSON for the page's script; nothing is queued.
#[tokio::test]
async fn the_form_names_every_mistake_at_once_in_plain_words() {
    let lab = Lab::fresh(&LabOptions::default());
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let body = "name=mistakes&source_kind=generated&generated_size=8M&target_kind=dir\
                &target_path=no-such-dir&tests=tape_write&buffers=-4&block_size=64Q\
                &duration_s=ten&matrix_buffers=0%2C+8&repeat=1";
    let post = |accept: &'static str| {
        client
            .post(lab.url("/campaigns/new"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", accept)
            .body(body)
            .send()
    };
    let page = post("text/html").await.expect("POST");
    assert_eq!(page.status(), 422);
    let page = page
        .text()
        .await
        .expect("html")
        .replace("&#39;", "'")
        .replace("&#x27;", "'");
    for (field, words) in [
        ("buffers", "'-4' is not a whole number from 1 to 1024"),
        ("block_size", "'64Q' has an unknown unit 'Q'"),
        (
            "duration_s",
            "'ten' is not a number (write e.g. 10, or auto)",
        ),
        ("target_path", "does not exist"),
        ("matrix_buffers", "must be between 1 and 1024"),
    ] {
        let at = page
            .find(&format!("name=\"{field}\""))
            .unwrap_or_else(|| panic!("{field} is on the page"));
        let label_start = page[..at].rfind("<label").expect("its label");
        let label = &page[label_start..];
        let label = &label[..label.find("</label>").expect("label end")];
        assert!(label.contains("invalid"), "{field} is outlined: {label}");
        assert!(label.contains(words), "{field} says {words:?}: {label}");
    }
    assert!(!page.contains("expected u32") && !page.contains("line 1 column"));

    let answer = post("application/json").await.expect("POST");
    assert_eq!(answer.status(), 422);
    let answer: serde_json::Value = answer.json().await.expect("JSON");
    let fields = answer["fields"].as_object().expect("fields");
    for path in [
        "params.buffers",
        "params.block_size",
        "params.duration_s",
        "target.path",
        "matrix.buffers[0]",
    ] {
        assert!(fields.contains_key(path), "{path} in {answer}");
    }
    let list = lab.get_json("/api/campaigns").await;
    assert_eq!(
        list["campaigns"].as_array().map(Vec::len),
        Some(0),
        "{list}"
    );
}

/// A report links to the previous campaign of its spec (its name aside) with the change of its
/// figure; "Compare with…" picks that pair by default and never a campaign with itself; a
/// comparison of campaigns with different targets says so before any figure.
#[tokio::test]
async fn a_report_links_to_the_previous_campaign_of_its_spec_and_compare_says_what_differs() {
    let lab = Lab::fresh(&LabOptions::default());
    let spec = |name: &str, target: serde_json::Value| {
        json!({
            "name": name,
            "source": {"generated": {"size": "8M"}},
            "target": target,
            "tests": ["null_sink"],
            "params": {"duration_s": 1},
            "repeat": 2
        })
    };
    let first = lab.submit(&spec("first", json!({"kind": "null"}))).await;
    let other = lab
        .submit(&spec("to tape", json!({"kind": "tape", "model": "lto-5"})))
        .await;
    let second = lab.submit(&spec("second", json!({"kind": "null"}))).await;
    for id in [&first, &other, &second] {
        lab.wait_status(id, &["done"], Duration::from_secs(60))
            .await;
    }

    let page = lab.get_text(&format!("/campaigns/{second}")).await;
    let at = page.find("id=\"previous\"").expect("a previous campaign");
    let line = &page[at..at + page[at..].find("</p>").expect("end")];
    assert!(
        line.contains(&format!("href=\"/campaigns/{first}\"")),
        "the previous of the same spec, not the other target: {line}"
    );
    assert!(
        line.contains("Backup to null, parallel at ")
            && (line.contains(" MB/s steady (") || line.contains(" MB/s whole run ("))
            && line.contains(" %, "),
        "with its change: {line}"
    );
    assert!(line.contains(&format!("/compare?a={first}&amp;b={second}")));
    let first_page = lab.get_text(&format!("/campaigns/{first}")).await;
    assert!(
        !first_page.contains("id=\"previous\""),
        "the first has none"
    );

    let compare = lab.get_text(&format!("/compare?a={first}")).await;
    let b_select = &compare[compare.find("name=\"b\"").expect("B")..];
    assert!(
        b_select.contains(&format!("<option value=\"{second}\" selected")),
        "B defaults to the next campaign of the same spec: {b_select}"
    );
    let same = lab.get_text(&format!("/compare?a={first}&b={first}")).await;
    assert!(same.contains("A and B are the same campaign"), "{same}");
    assert!(!same.contains("<table class=\"compare\""));
    let differ = lab.get_text(&format!("/compare?a={first}&b={other}")).await;
    assert!(
        differ
            .contains("The targets differ: A wrote to null (discarded), B to 1 × emulated LTO-5."),
        "{differ}"
    );
    let alike = lab
        .get_text(&format!("/compare?a={first}&b={second}"))
        .await;
    assert!(!alike.contains("differ:"), "{alike}");
}
