//! Three backup tools compared through the form, run for real (restic, borg, tar-zstd), and
//! every view a team shares read back: each shows one line per tool with the same numbers,
//! names each row by its tool, and judges each tool against its own ceiling, never another's.

use std::time::Duration;

use backlab::analysis::tools::ToolLine;
use backlab::views::report::ToolCells;
use serde_json::{Value, json};

use crate::support::csv_table::CsvTable;
use crate::support::fixtures::create_dataset_with;
use crate::support::lab::{Lab, LabOptions};

const TOOLS: [&str; 3] = ["restic", "borg", "tar-zstd"];

/// Posts the form with the three tools checked and the tool's table of tests; the campaign's id.
async fn submit_three_tools(lab: &Lab) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let body = "name=three+tools&source_kind=paths&source_paths=src&target_kind=dir\
                &target_path=out&tests=tape_write&tests=read_parallel&tests=tool_ceiling\
                &tests=tool_backup&tests=tool_incremental&tests=tool_restore\
                &tool=restic&tool=borg&tool=tar-zstd&buffers=8&block_size=256K&streams=2\
                &duration_s=5&compress_ratio=2&repeat=1";
    let response = client
        .post(lab.url("/campaigns/new"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("POST");
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .and_then(|location| location.to_str().ok())
        .map(str::to_string);
    let page = response.text().await.unwrap_or_default();
    assert_eq!(status, 303, "the form was refused: {page}");
    location
        .as_deref()
        .and_then(|location| location.strip_prefix("/campaigns/"))
        .expect("the report's URL")
        .to_string()
}

/// The text between `<tr data-tool="NAME">` and its `</tr>` in `page`, cells stripped of tags.
fn tool_row(page: &str, name: &str) -> Vec<String> {
    let start = page
        .find(&format!("<tr data-tool=\"{name}\">"))
        .unwrap_or_else(|| panic!("no row for {name} in the tools table"));
    let row = &page[start..];
    let row = &row[..row.find("</tr>").expect("the row ends")];
    row.split("<td")
        .skip(1)
        .map(|cell| {
            let text = &cell[cell.find('>').map_or(0, |at| at + 1)..];
            text[..text.find("</td>").unwrap_or(text.len())].to_string()
        })
        .collect()
}

/// The cells every view must show for `line`, in the tools table's column order.
fn cells(line: &ToolLine) -> Vec<String> {
    let cells = ToolCells::of(line);
    vec![
        cells.tool,
        cells.backup,
        cells.alone,
        cells.incremental,
        cells.restore,
        cells.cpu_s_per_gib,
        cells.peak_memory,
        cells.stored,
        cells.ratio,
        cells.verified,
        cells.limited_by,
        cells.version,
    ]
}

#[tokio::test]
async fn three_tools_through_the_form_show_a_line_each_in_every_view_never_mixed() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset_with(&lab.data_dir.join("src"), "typical", "8M", 31);
    lab.empty_dir("out");

    let id = submit_three_tools(&lab).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(400))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    assert_eq!(campaign["runs"].as_array().map(Vec::len), Some(14));

    // The JSON: one line per tool, and each tool's own verdict.
    let answer = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let verdict = &answer["bottleneck"];
    let lines: Vec<ToolLine> =
        serde_json::from_value(verdict["tools"].clone()).expect("the tools' lines");
    let names: Vec<&str> = lines.iter().map(|line| line.label.as_str()).collect();
    assert_eq!(names, TOOLS, "{verdict}");
    let by_tool = verdict["by_tool"].as_array().expect("a verdict per tool");
    assert_eq!(by_tool.len(), 3);
    for line in &lines {
        assert!(line.backup_mb_s.is_some(), "{line:?}");
        assert!(line.ceiling_mb_s.is_some(), "{line:?}");
        assert!(line.incremental_mb_s.is_some(), "{line:?}");
        assert!(line.restore_mb_s.is_some(), "{line:?}");
        assert!(line.cpu_s_per_gib.is_some_and(|cpu| cpu > 0.0), "{line:?}");
        assert!(line.peak_rss_bytes.is_some_and(|peak| peak > 0), "{line:?}");
        assert!(line.stored_bytes.is_some(), "{line:?}");
        assert_eq!(line.restore_verified, Some(true), "{line:?}");
        assert_eq!(line.verified_bytes, Some(8 << 20), "{line:?}");
        assert!(line.version.is_some(), "{line:?}");
    }
    // Each tool's verdict rests on its own tool's runs: its rows name it alone, its
    // figures are its line's, and its restore is set beside its own backup.
    for (line, own) in lines.iter().zip(by_tool) {
        let name = line.label.as_str();
        let rows = own["rows"].as_array().expect("rows");
        for row in rows {
            let label = row["label"].as_str().unwrap_or("");
            let test = row["test"].as_str().unwrap_or("");
            if test.starts_with("tool_") {
                assert!(label.contains(&format!("({name}")), "{name}: {label}");
            }
        }
        let figure = |test: &str| {
            rows.iter()
                .find(|row| row["test"] == test)
                .and_then(|row| row["mb_per_s"].as_f64())
        };
        assert_eq!(figure("tool_ceiling"), line.ceiling_mb_s, "{name}");
        assert_eq!(figure("tool_backup"), line.backup_mb_s, "{name}");
        assert_eq!(
            own["restore"]["mb_per_s"].as_f64(),
            line.restore_mb_s,
            "{name}"
        );
        assert_eq!(
            own["restore"]["backup"][1].as_f64(),
            line.backup_mb_s,
            "{name}"
        );
        let sentence = own["verdict"].as_str().unwrap_or("");
        for other in TOOLS.iter().filter(|other| **other != name) {
            assert!(
                !sentence.to_lowercase().contains(&format!("{other}'s")),
                "{name}'s verdict speaks of {other}: {sentence}"
            );
        }
    }
    // The campaign's sentence compares the tools; it names no component for all of them.
    let sentence = verdict["verdict"].as_str().unwrap_or("");
    assert!(sentence.contains("3 tools compared"), "{sentence}");
    assert_eq!(verdict["component"], Value::Null, "{verdict}");
    assert!(verdict.get("restore").is_none(), "no restore across tools");
    // Each tool's rows in the campaign's table carry its name: four each.
    let labels: Vec<&str> = verdict["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["label"].as_str())
        .collect();
    for name in TOOLS {
        let own = labels
            .iter()
            .filter(|label| label.ends_with(&format!("({name})")))
            .count();
        assert_eq!(own, 4, "{name}: {labels:?}");
    }

    // The campaign list gives each tool's backup, none standing for the others.
    let list = lab.get_text("/").await;
    for line in &lines {
        let backup = format!(
            "{} {:.1} MB/s",
            line.label,
            line.backup_mb_s.unwrap_or_default()
        );
        assert!(list.contains(&backup), "the list gives {backup}");
    }
    assert!(!list.contains("no backup measured"), "{list}");

    // The page and its download: the tools table, each line the JSON's in the same words.
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    let download = lab.get_text(&format!("/campaigns/{id}/report.html")).await;
    for (view, html) in [("page", &page), ("report.html", &download)] {
        assert!(
            html.contains("id=\"tools-table\""),
            "{view}: no tools table"
        );
        for line in &lines {
            assert_eq!(tool_row(html, &line.label), cells(line), "{view}");
            assert!(
                html.contains(&format!("data-tool=\"{}\"", line.label)),
                "{view}: no verdict of {}",
                line.label
            );
        }
        assert!(
            !html.contains("id=\"sweep-best\""),
            "{view}: tools are not a sweep"
        );
    }

    // tools.csv: a line per tool with the JSON's figures.
    let tools_csv = CsvTable::parse(
        &lab.get_text(&format!("/api/campaigns/{id}/tools.csv"))
            .await,
    );
    assert_eq!(tools_csv.rows.len(), 3);
    let column = |name: &str| tools_csv.column(name);
    for (row, line) in tools_csv.rows.iter().zip(&lines) {
        assert_eq!(row[column("tool")], line.label);
        let number = |name: &str| row[column(name)].parse::<f64>().ok();
        assert_eq!(number("backup_mb_s"), line.backup_mb_s);
        assert_eq!(number("alone_mb_s"), line.ceiling_mb_s);
        assert_eq!(number("incremental_mb_s"), line.incremental_mb_s);
        assert_eq!(number("restore_mb_s"), line.restore_mb_s);
        assert_eq!(number("cpu_s_per_gib"), line.cpu_s_per_gib);
        assert_eq!(number("ratio"), line.reduction);
        assert_eq!(
            number("peak_rss_bytes").map(|v| v as u64),
            line.peak_rss_bytes
        );
        assert_eq!(number("stored_bytes").map(|v| v as u64), line.stored_bytes);
        assert_eq!(
            number("verified_files").map(|v| v as u64),
            line.verified_files
        );
        assert_eq!(row[column("limited_by")], line.limited_by());
    }

    // results.csv: every tool run names its tool, so three tool_backup rows are told apart.
    let results = CsvTable::parse(
        &lab.get_text(&format!("/api/campaigns/{id}/results.csv"))
            .await,
    );
    let (test, tool) = (results.column("test"), results.column("tool"));
    let backups: Vec<&str> = results
        .rows
        .iter()
        .filter(|row| row[test] == "tool_backup")
        .map(|row| row[tool].as_str())
        .collect();
    assert_eq!(backups, TOOLS);
    for row in results
        .rows
        .iter()
        .filter(|row| row[test].starts_with("tool_"))
    {
        assert!(!row[results.column("tool_version")].is_empty(), "{row:?}");
    }

    // The same campaign again: its page sets each tool's backup beside its own before.
    let rerun = lab
        .post_json(&format!("/api/campaigns/{id}/rerun"), &json!({}))
        .await;
    assert_eq!(rerun.status(), 201);
    let rerun: Value = rerun.json().await.expect("the rerun's answer");
    let again = rerun["id"].as_str().expect("the rerun's id").to_string();
    let campaign = lab
        .wait_status(&again, &["done", "failed"], Duration::from_secs(400))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let page = lab.get_text(&format!("/campaigns/{again}")).await;
    let previous = page
        .split("id=\"previous\"")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("the previous campaign's line");
    for name in TOOLS {
        assert!(
            previous.contains(&format!("Tool backup at {name}:")),
            "the previous campaign's line gives {name}'s backup: {previous}"
        );
    }

    // /compare: each tool's rows named by it.
    let compare = lab.get_text(&format!("/compare?a={id}&b={again}")).await;
    for name in TOOLS {
        assert!(
            compare.matches(&format!(">{name}<")).count() >= 4,
            "/compare names {name} on each of its rows: {compare}"
        );
    }
    // The chart of tests names each tool's bars.
    let chart = lab
        .get_text(&format!("/campaigns/{id}/charts/tests.svg"))
        .await;
    for name in TOOLS {
        assert!(chart.contains(name), "the tests chart names {name}");
    }
}
