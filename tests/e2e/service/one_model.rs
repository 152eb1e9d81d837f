//! One campaign, every view: a 2 × 2 sweep with repeats, runs that are not valid and a run
//! cancelled part way, read back through the report page, `report.html`, `/compare`, the
//! list, the CSV and the JSON. Every point's figure, its count of valid runs and the runs'
//! numbers must be the same string in all of them; and reading a finished campaign writes
//! nothing to the database.

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};

use crate::support::csv_table::CsvTable;
use crate::support::lab::{Lab, LabOptions};

/// Eight full backups at four points: one stream at 10 MB/s runs its whole 3 s and is valid;
/// four streams read the 64 MB in 1.6 s and are too short to judge, so never valid. Each point
/// has at least four buffers: a ring of two keeps only two of the four streams reading (20 MB/s,
/// 3.2 s for the 64 MB), which ends at the 3 s duration and is valid or not by a hair.
fn sweep() -> Value {
    json!({
        "name": "one model",
        "source": {"generated": {"size": "64M"}},
        "target": {"kind": "null"},
        "tests": ["full_backup"],
        "params": {"duration_s": 3, "time_based": false, "source_rate_mb_s": 10},
        "matrix": {"buffers": [4, 8], "streams": [1, 4]},
        "repeat": 2
    })
}

/// What every view must show of a point: its figure, what it measures (steady or whole run),
/// "k of n valid", and its runs' numbers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Shown {
    figure: String,
    basis: String,
    valid: String,
    runs: String,
}

/// The words a view writes for a figure's basis as the JSON and the CSV name it.
fn basis_word(id: &str) -> String {
    match id {
        "steady" => "steady".to_string(),
        "whole_run" => "whole run".to_string(),
        _ => String::new(),
    }
}

/// A table cell `239.4 steady` as its figure and its basis.
fn figure_and_basis(cell: &str) -> (String, String) {
    match cell.split_once(' ') {
        Some((figure, basis)) if figure.parse::<f64>().is_ok() => {
            (figure.to_string(), basis.to_string())
        }
        _ => (cell.to_string(), String::new()),
    }
}

/// The points as the JSON has them, keyed by their runs' numbers (`#1, #2`).
fn points_of(campaign: &Value) -> BTreeMap<String, Shown> {
    campaign["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|point| {
            let runs: Vec<String> = point["runs"]
                .as_array()
                .expect("runs")
                .iter()
                .map(|run| format!("#{}", run["number"]))
                .collect();
            let figure = match point["figure"]["mb_per_s"].as_f64() {
                Some(mb) => format!("{mb:.1}"),
                None => "cancelled".to_string(),
            };
            let shown = Shown {
                figure,
                basis: basis_word(point["figure"]["basis"].as_str().unwrap_or_default()),
                valid: format!(
                    "{} of {} valid",
                    point["runs_valid"],
                    point["runs"].as_array().map_or(0, Vec::len)
                ),
                runs: runs.join(", "),
            };
            (shown.runs.clone(), shown)
        })
        .collect()
}

/// The cells of each row of the table whose `<table class=…>` is `class`.
fn table_rows(page: &str, class: &str) -> Vec<Vec<String>> {
    let table =
        Regex::new(&format!(r#"(?s)<table class="{class}"[^>]*>(.*?)</table>"#)).expect("regex");
    let row = Regex::new(r"(?s)<tr[^>]*>(.*?)</tr>").expect("regex");
    let cell = Regex::new(r"(?s)<td[^>]*>(.*?)</td>").expect("regex");
    let tag = Regex::new(r"<[^>]+>").expect("regex");
    let Some(body) = table.captures(page) else {
        panic!("no table {class}: {page}");
    };
    row.captures_iter(&body[1])
        .map(|r| {
            cell.captures_iter(&r[1])
                .map(|c| tag.replace_all(&c[1], "").trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|cells| !cells.is_empty())
        .collect()
}

/// The points as a page's sweep table shows them.
fn sweep_table(page: &str) -> BTreeMap<String, Shown> {
    table_rows(page, "points")
        .into_iter()
        .map(|cells| {
            let (figure, basis) = figure_and_basis(&cells[3]);
            let shown = Shown {
                figure,
                basis,
                valid: cells[4].clone(),
                runs: cells[7].clone(),
            };
            (shown.runs.clone(), shown)
        })
        .collect()
}

#[tokio::test]
async fn every_view_shows_each_point_with_the_same_figure_count_and_run_numbers() {
    let lab = Lab::fresh(&LabOptions {
        env: vec![("RUST_LOG".into(), "info,sqlx::query=debug".into())],
        ..LabOptions::default()
    });
    let id = lab.submit(&sweep()).await;
    // Cancelled while its last run runs: that run is cut, and a cut run is no figure.
    lab.wait_campaign(
        &id,
        "the eighth run to start",
        Duration::from_secs(120),
        |c| c["runs"][7]["status"] == "running",
    )
    .await;
    lab.cancel(&id).await;
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(60))
        .await;
    // Judged once, when its last run ended: the list's headline is kept with it.
    let campaign = lab
        .wait_campaign(
            &id,
            "the verdict to be kept",
            Duration::from_secs(30),
            |c| c["headline"].is_object(),
        )
        .await;
    let points = points_of(&campaign);
    assert_eq!(points.len(), 4, "a 2 × 2 sweep: {points:?}");
    // The four-stream points are never valid; the one-stream points are unless other work
    // on a loaded machine flags them (busy_machine), which changes no agreement below.
    let counts: Vec<&str> = points.values().map(|p| p.valid.as_str()).collect();
    assert!(
        counts
            .iter()
            .filter(|count| **count == "0 of 2 valid")
            .count()
            >= 2,
        "{points:?}"
    );
    let cut = points
        .get("#7, #8")
        .expect("the last point holds runs 7 and 8");
    assert_eq!(cut.valid, "0 of 2 valid", "{cut:?}");
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs[7]["status"], "cancelled");
    for (index, run) in runs.iter().enumerate() {
        assert_eq!(run["number"], index + 1, "runs are numbered from 1");
    }

    // The report page and the self-contained download: the sweep table, point by point.
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert_eq!(sweep_table(&page), points, "the page's sweep table");
    let download = lab.get_text(&format!("/campaigns/{id}/report.html")).await;
    assert_eq!(sweep_table(&download), points, "report.html's sweep table");
    let run_numbers: Vec<String> = table_rows(&page, "runs")
        .into_iter()
        .filter(|cells| cells.len() > 2)
        .map(|cells| cells[0].clone())
        .collect();
    assert_eq!(
        run_numbers,
        (1..=8).map(|n| n.to_string()).collect::<Vec<_>>(),
        "the runs table numbers runs as the JSON does"
    );

    // The bottleneck table, the verdict JSON and the list all give the best point's figure.
    let best = campaign["points"]
        .as_array()
        .and_then(|points| points.iter().find(|p| p["best"] == true))
        .expect("a best point");
    let best_figure = format!(
        "{:.1}",
        best["figure"]["mb_per_s"].as_f64().expect("figure")
    );
    let best_count = format!(
        "{} of {} valid",
        best["runs_valid"],
        best["runs"].as_array().map_or(0, Vec::len)
    );
    let table = table_rows(&page, "bottleneck");
    let backup = table
        .iter()
        .find(|cells| cells[0].starts_with("Full backup"))
        .expect("a full backup row");
    let best_basis = basis_word(best["figure"]["basis"].as_str().unwrap_or_default());
    assert_eq!(
        figure_and_basis(&backup[1]),
        (best_figure.clone(), best_basis.clone()),
        "{backup:?}"
    );
    assert!(
        backup[3].starts_with(&best_count),
        "{backup:?} vs {best_count}"
    );
    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let row = verdict["bottleneck"]["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["test"] == "full_backup"))
        .expect("the full backup's row");
    assert_eq!(
        format!("{:.1}", row["mb_per_s"].as_f64().expect("figure")),
        best_figure
    );
    assert_eq!(
        format!("{} of {} valid", row["runs_valid"], row["runs_total"]),
        best_count
    );
    assert_eq!(
        basis_word(row["basis"].as_str().unwrap_or_default()),
        best_basis
    );
    assert_eq!(verdict["points"], campaign["points"], "the report's points");
    let list = lab.get_json("/api/campaigns").await;
    let summary = list["campaigns"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["id"] == id.as_str()))
        .expect("the campaign in the list");
    assert_eq!(
        format!(
            "{:.1}",
            summary["headline"]["backup_mb_per_s"]
                .as_f64()
                .expect("the backup's figure")
        ),
        best_figure,
        "{summary}"
    );
    let list_page = lab.get_text("/").await;
    assert!(
        list_page.contains(&format!("{best_figure} MB/s")),
        "the list page shows the backup's figure {best_figure}"
    );

    // The CSV: every run numbered as on the page, with its point's figure and count.
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    let table = CsvTable::parse(&csv);
    let (run, figure, basis, valid) = (
        table.column("run"),
        table.column("point_mb_per_s"),
        table.column("point_basis"),
        table.column("point_valid"),
    );
    let mut csv_runs = Vec::new();
    for cells in &table.rows {
        let number = format!("#{}", &cells[run]);
        let point = points
            .values()
            .find(|p| p.runs.split(", ").any(|n| n == number))
            .unwrap_or_else(|| panic!("run {number} is at no point"));
        assert_eq!(cells[figure], point.figure, "CSV run {number}");
        assert_eq!(basis_word(&cells[basis]), point.basis, "CSV run {number}");
        assert_eq!(cells[valid], point.valid, "CSV run {number}");
        csv_runs.push(cells[run].to_string());
    }
    assert_eq!(csv_runs, (1..=8).map(|n| n.to_string()).collect::<Vec<_>>());

    // `/compare`: against a rerun, the A column gives each point's figure as above.
    let rerun: Value = lab
        .post_json(&format!("/api/campaigns/{id}/rerun"), &json!({}))
        .await
        .json()
        .await
        .expect("JSON");
    let rerun = rerun["id"].as_str().expect("the rerun's id").to_string();
    lab.wait_status(&rerun, &["done"], Duration::from_secs(120))
        .await;
    let compare = lab.get_text(&format!("/compare?a={id}&b={rerun}")).await;
    let mut compared: Vec<String> = table_rows(&compare, "compare")
        .into_iter()
        .map(|cells| cells[2].split(' ').next().unwrap_or_default().to_string())
        .filter(|figure| figure != "–")
        .collect();
    compared.sort();
    let mut measured: Vec<String> = points
        .values()
        .map(|p| p.figure.clone())
        .filter(|figure| figure.parse::<f64>().is_ok())
        .collect();
    measured.sort();
    assert_eq!(compared, measured, "/compare's A column");

    // Reading the finished campaign writes nothing: no statement that changes a campaign or
    // a run reaches the database while its page, download, charts, CSV and JSON are served.
    let before = lab.plain_log().len();
    for path in [
        format!("/campaigns/{id}"),
        format!("/campaigns/{id}/report.html"),
        format!("/campaigns/{id}/charts/heatmap.svg"),
        format!("/api/campaigns/{id}/results.csv"),
        format!("/api/campaigns/{id}/bottleneck"),
        "/".to_string(),
        "/api/campaigns".to_string(),
    ] {
        lab.get_text(&path).await;
    }
    let log = lab.plain_log();
    let during = &log[before..];
    assert!(
        during.contains("SELECT"),
        "the query log records the reads: {during}"
    );
    // The lab's own heartbeat may fall in the window: its lease takeback runs an UPDATE that
    // changes nothing here. A statement that changed rows is a write.
    for write in [
        "UPDATE campaigns",
        "UPDATE runs",
        "INSERT INTO",
        "DELETE FROM",
    ] {
        let changed = during
            .lines()
            .find(|line| line.contains(write) && !line.contains("rows_affected=0"));
        assert!(
            changed.is_none(),
            "a read wrote to the database ({write}): {changed:?}"
        );
    }
}
