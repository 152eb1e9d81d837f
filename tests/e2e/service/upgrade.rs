//! A database written before a run's result was stored as one document opens, is migrated,
//! and shows its campaigns as the version that wrote it did: every field that version showed
//! keeps its value (fields added since may appear beside them), and the CSV keeps every cell
//! of every column (brought to today's names, see the fixture's README; columns added since
//! may appear beside them). Campaigns judged before their judgement was kept are judged once,
//! in the background, when the lab starts; campaigns stored before series had keys are keyed.

use crate::support::csv_table::CsvTable;
use crate::support::fixtures::{fixture, scratch};
use crate::support::lab::{Lab, LabOptions};

/// A file of the fixture database's directory, as text.
fn read(name: &str) -> String {
    let path = fixture(&format!("db-0005/{name}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test]
async fn a_database_from_before_run_documents_shows_its_campaigns_unchanged() {
    let root = scratch();
    std::fs::copy(fixture("db-0005/lab.db"), root.path().join("lab.db")).expect("copy the fixture");
    let lab = Lab::start(root.path(), &sqlite_file(root.path()));
    let ids = read("ids");
    let ids: Vec<&str> = ids.split_whitespace().collect();
    assert_eq!(ids.len(), 3);
    for id in &ids {
        for (path, file) in [
            (
                format!("/api/campaigns/{id}"),
                format!("{id}.campaign.json"),
            ),
            (
                format!("/api/campaigns/{id}/bottleneck"),
                format!("{id}.report.json"),
            ),
        ] {
            let then: serde_json::Value = serde_json::from_str(&read(&file)).expect("json");
            let now = lab.get_json(&path).await;
            if let Err(difference) = shows_as_before(&then, &now, "") {
                panic!("{path}: {difference}\nnow: {now}");
            }
        }
        let csv = lab
            .get_text(&format!("/api/campaigns/{id}/results.csv"))
            .await;
        if let Err(difference) = csv_shows_as_before(&read(&format!("{id}.csv")), &csv) {
            panic!("{id}: CSV: {difference}\nnow: {csv}");
        }
    }
    let list = lab.get_text("/").await;
    for id in &ids {
        assert!(list.contains(id), "the list shows {id}");
    }
    // The fixture kept no verdicts: the lab judged each finished campaign once at start, and
    // the list now shows what was kept.
    for id in &ids {
        let campaign = lab
            .wait_campaign(
                id,
                "the campaign to be judged at start",
                std::time::Duration::from_secs(30),
                |campaign| campaign["headline"].is_object(),
            )
            .await;
        assert_eq!(
            campaign["headline"]["version"],
            backlab::analysis::JUDGEMENT_VERSION,
            "{campaign}"
        );
        // Stored before series had keys, each is keyed by its spec at start, and its series
        // reads the judgement kept for it.
        let key = campaign["series"]
            .as_str()
            .unwrap_or_else(|| panic!("campaign {id} has no series key"));
        assert!(key.starts_with("spec-"), "campaign {id}'s series: {key}");
        let series = lab.get_json(&format!("/api/series/{key}")).await;
        assert!(
            series["campaigns"]
                .as_array()
                .is_some_and(|campaigns| campaigns.iter().any(|c| c["id"] == *id)),
            "{series}"
        );
    }
    assert!(
        lab.plain_log()
            .contains("judged the campaigns kept under older judging rules"),
        "{}",
        lab.plain_log()
    );
}

/// Whether CSV `now` has every column of `then`, with the same cells row by row: columns may
/// have been added, none lost or changed. The error names the first difference.
fn csv_shows_as_before(then: &str, now: &str) -> Result<(), String> {
    let (then, now) = (CsvTable::parse(then), CsvTable::parse(now));
    if then.rows.len() != now.rows.len() {
        return Err(format!("{} rows, then {}", now.rows.len(), then.rows.len()));
    }
    for (then_at, column) in then.header.iter().enumerate() {
        let Some(now_at) = now.position(column) else {
            return Err(format!("column {column} lost"));
        };
        for (row, (then_row, now_row)) in then.rows.iter().zip(&now.rows).enumerate() {
            if then_row[then_at] != now_row[now_at] {
                return Err(format!(
                    "row {}, {column}: {:?}, then {:?}",
                    row + 1,
                    now_row[now_at],
                    then_row[then_at]
                ));
            }
        }
    }
    Ok(())
}

/// Whether `now` shows everything `then` did, with the same values: objects may have gained
/// keys, nothing else may differ. The error names the first difference by its path.
fn shows_as_before(
    then: &serde_json::Value,
    now: &serde_json::Value,
    at: &str,
) -> Result<(), String> {
    use serde_json::Value;
    match (then, now) {
        (Value::Object(then), Value::Object(now)) => {
            for (key, old) in then {
                let path = format!("{at}/{key}");
                let new = now.get(key).ok_or_else(|| format!("{path} is gone"))?;
                shows_as_before(old, new, &path)?;
            }
            Ok(())
        }
        (Value::Array(then), Value::Array(now)) if then.len() == now.len() => then
            .iter()
            .zip(now)
            .enumerate()
            .try_for_each(|(index, (old, new))| {
                shows_as_before(old, new, &format!("{at}/{index}"))
            }),
        _ if then == now => Ok(()),
        _ => Err(format!("{at} was {then}, is {now}")),
    }
}

#[test]
fn added_fields_pass_and_changed_or_lost_ones_do_not() {
    use serde_json::json;
    let then = json!({"a": 1, "rows": [{"b": "x"}]});
    assert!(
        shows_as_before(
            &then,
            &json!({"a": 1, "rows": [{"b": "x", "c": 2}], "d": 3}),
            ""
        )
        .is_ok()
    );
    assert_eq!(
        shows_as_before(&then, &json!({"a": 2, "rows": [{"b": "x"}]}), ""),
        Err("/a was 1, is 2".to_string())
    );
    assert!(shows_as_before(&then, &json!({"rows": [{"b": "x"}]}), "").is_err());
    assert!(shows_as_before(&then, &json!({"a": 1, "rows": []}), "").is_err());
    // The CSV's rule: columns may be added, never lost or changed.
    let then = "a,b\n1,x\n2,y\n";
    assert!(csv_shows_as_before(then, "a,new,b\n1,,x\n2,3,y\n").is_ok());
    assert_eq!(
        csv_shows_as_before(then, "a,b\n1,x\n2,z\n"),
        Err("row 2, b: \"z\", then \"y\"".to_string())
    );
    assert!(csv_shows_as_before(then, "a\n1\n2\n").is_err());
    assert!(csv_shows_as_before(then, "a,b\n1,x\n").is_err());
}

/// The fixture's cancelled campaign was cut mid-way through its first run (11 090.3 MB/s over
/// 3.3 s before the cut); the page says it was cancelled, and when, and never shows that rate
/// as a result; the bottleneck table and the tests chart say "cancelled" too, not "failed".
#[tokio::test]
async fn a_run_cut_by_a_cancel_is_shown_as_cancelled_and_never_as_a_result() {
    let root = scratch();
    std::fs::copy(fixture("db-0005/lab.db"), root.path().join("lab.db")).expect("copy the fixture");
    let lab = Lab::start(root.path(), &sqlite_file(root.path()));
    let page = lab.get_text("/campaigns/QkzcB1Twsyjk").await;
    assert!(!page.contains("11090"), "the cut run's rate is not shown");
    assert!(
        page.contains("<span class=\"status cancelled\">cancelled</span>"),
        "{page}"
    );
    assert!(
        page.contains(
            "cancelled after 3.30 s with 34.1 GiB moved: what it measured is not a result"
        ),
        "{page}"
    );
    assert!(page.contains("cancelled before it started"));
    assert!(!page.contains(">failed<"), "nothing failed here");
    let table = lab.get_json("/api/campaigns/QkzcB1Twsyjk/bottleneck").await;
    let rows = table["bottleneck"]["rows"].as_array().expect("rows");
    assert!(
        rows.iter().all(|row| row["no_figure"] == "cancelled"),
        "{rows:?}"
    );
    // The tests chart uses the table's word for it.
    let chart = lab
        .get_text("/campaigns/QkzcB1Twsyjk/charts/tests.svg")
        .await;
    assert!(chart.contains(": cancelled"), "{chart}");
    assert!(!chart.contains(": failed"), "{chart}");
    assert!(
        !page.contains("read_single") && !page.contains("null_sink"),
        "tests are named in words"
    );
}

/// The lab on the copied SQLite file, whichever store the binary's labs use otherwise: what
/// is upgraded here is a SQLite file from an older lab.
fn sqlite_file(root: &std::path::Path) -> LabOptions {
    LabOptions {
        db: Some(root.join("lab.db").display().to_string()),
        ..LabOptions::default()
    }
}
