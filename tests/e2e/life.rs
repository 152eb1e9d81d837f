//! A backup's life through the service with the real restic and borg: ten nights of 64 MiB,
//! retention every three nights, checks after the last, both restores verified, and the page,
//! the JSON and `life.csv` giving each night the same figures; then a life cancelled in the
//! middle of its retention, and a lab killed in the middle of a check, leaving no process, no
//! repository and no copy behind.

use std::path::Path;
use std::time::Duration;

use rustix::process::Signal;
use serde_json::{Value, json};

use crate::support::fixtures::{create_dataset_with, entries, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;
use crate::tools::{marked_processes, tool_dirs, wait_all_gone, wait_for_tool};

/// A size as every view formats it.
fn formatted(bytes: &Value) -> String {
    bytes
        .as_u64()
        .map_or_else(|| "-".to_string(), backlab::size::format_bytes)
}

/// The cells of each row of the nights table of the life section of run `run` on the page,
/// by night and field.
fn page_nights(page: &str, run: u64) -> Vec<(u64, Vec<(String, String)>)> {
    let section_start = page
        .find(&format!("id=\"life-{run}\""))
        .unwrap_or_else(|| panic!("the page has no life section for run {run}"));
    let section = &page[section_start..];
    let section = &section[..section.find("</section>").expect("the section ends")];
    let table = &section[..section.find("<h3>Maintenance").expect("the nights table")];
    let row = regex::Regex::new(r#"<tr data-night="(\d+)">(.*?)</tr>"#).expect("regex");
    let cell = regex::Regex::new(r#"data-field="(\w+)">([^<]*)<"#).expect("regex");
    row.captures_iter(table)
        .map(|row| {
            let night: u64 = row[1].parse().expect("a night");
            let cells = cell
                .captures_iter(&row[2])
                .map(|cell| (cell[1].to_string(), cell[2].to_string()))
                .collect();
            (night, cells)
        })
        .collect()
}

#[tokio::test]
async fn restic_and_borg_live_ten_nights_and_every_view_agrees() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "64M", 55);
    let target = lab.empty_dir("out");
    let id = lab
        .submit(&json!({
            "name": "ten nights",
            "source": {"paths": [source]},
            "target": {"kind": "dir", "path": target},
            "tests": ["tool_life"],
            "matrix": {"tool": [{"name": "restic"}, {"name": "borg"}]},
            "life": {"nights": 10, "retention_every": 3, "keep": 3}
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(600))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    // The verdict of a campaign of lives points at them, not at tests it never asked for.
    assert!(page.contains("life names no bottleneck"), "the verdict");
    assert!(!page.contains("Not enough finished tests"), "the verdict");
    assert!(
        !page.contains("Verdict — inconclusive"),
        "the verdict's heading"
    );
    let csv = lab.get_text(&format!("/api/campaigns/{id}/life.csv")).await;
    let mut csv_rows = csv.lines();
    let header: Vec<&str> = csv_rows.next().expect("a header").split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|field| *field == name)
            .unwrap_or_else(|| panic!("life.csv has no column {name}: {header:?}"))
    };
    let csv_rows: Vec<Vec<&str>> = csv_rows.map(|row| row.split(',').collect()).collect();

    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{campaign}");
    for run in runs {
        let number = run["number"].as_u64().expect("a run number");
        let tool = run["result"]["tool"]["name"].as_str().expect("a tool");
        let life = &run["result"]["tool"]["life"];
        let nights = life["nights"].as_array().expect("nights");
        assert_eq!(nights.len(), 10, "{tool}: {life}");

        // Retention after nights 3, 6 and 9 (borg's prune, then its compact), the checks
        // after the last; the snapshots the tool lists follow.
        for night in nights {
            let n = night["night"].as_u64().expect("night");
            let commands: Vec<&str> = night["commands"]
                .as_array()
                .expect("commands")
                .iter()
                .map(|command| command["command"].as_str().expect("command"))
                .collect();
            let mut wanted = vec!["backup"];
            if n % 3 == 0 {
                wanted.extend(if tool == "borg" {
                    vec!["retention", "retention"]
                } else {
                    vec!["retention"]
                });
            }
            if n == 10 {
                wanted.extend(["check", "check_data"]);
            }
            assert_eq!(commands, wanted, "{tool} night {n}: {night}");
            // One more a night; the retention after nights 3, 6 and 9 keeps 3.
            let kept = (1..=n).fold(0, |kept, night| {
                if night % 3 == 0 {
                    (kept + 1).min(3)
                } else {
                    kept + 1
                }
            });
            assert_eq!(night["snapshots"].as_u64(), Some(kept), "{tool} night {n}");
            for command in night["commands"].as_array().expect("commands") {
                assert!(command["error"].is_null(), "{tool} night {n}: {command}");
                assert!(
                    command["peak_rss_bytes"].as_u64() > Some(1 << 20),
                    "{command}"
                );
            }
            assert!(night["index_bytes"].as_u64() > Some(0), "{tool} night {n}");
            assert!(
                night["index_bytes"].as_u64() < night["repository_bytes"].as_u64(),
                "{tool} night {n}: {night}"
            );
        }
        // Both restores verified: the latest, and night 7, the oldest the last retention
        // (after night 9, keeping 3) left.
        let restores = life["restores"].as_array().expect("restores");
        let restored: Vec<(&str, u64)> = restores
            .iter()
            .map(|restore| {
                assert_eq!(restore["verified"]["missing_count"], 0, "{restore}");
                assert_eq!(restore["verified"]["differ_count"], 0, "{restore}");
                assert!(restore["verified"]["files"].as_u64() > Some(0), "{restore}");
                (
                    restore["which"].as_str().expect("which"),
                    restore["night"].as_u64().expect("night"),
                )
            })
            .collect();
        assert_eq!(
            restored,
            [("latest", 10), ("one file", 10), ("oldest kept", 7)],
            "{tool}"
        );
        // The one file: the last in name order, alone, and its content checked.
        let one = &restores[1];
        assert_eq!(one["verified"]["files"], 1, "{one}");
        assert_eq!(
            one["verified"]["extra"], 0,
            "{tool}: only the one file: {one}"
        );
        assert!(
            one["file"]
                .as_str()
                .is_some_and(|file| !file.is_empty() && !file.starts_with('/')),
            "{one}"
        );

        // The page's table, night by night, as the JSON has it.
        let shown = page_nights(&page, number);
        assert_eq!(shown.len(), 10, "{tool}: the page's nights");
        for ((night, cells), json_night) in shown.iter().zip(nights) {
            assert_eq!(Some(*night), json_night["night"].as_u64());
            let backup = &json_night["commands"][0];
            let cell = |name: &str| {
                cells
                    .iter()
                    .find(|(field, _)| field == name)
                    .map(|(_, value)| value.clone())
                    .unwrap_or_else(|| panic!("no {name} cell: {cells:?}"))
            };
            assert_eq!(
                cell("backup_s"),
                format!("{:.2}", backup["seconds"].as_f64().expect("seconds"))
            );
            assert_eq!(
                cell("mb_per_s"),
                format!("{:.1}", backup["mb_per_s"].as_f64().expect("MB/s"))
            );
            assert_eq!(
                cell("repository"),
                formatted(&json_night["repository_bytes"])
            );
            assert_eq!(cell("added"), formatted(&json_night["added_bytes"]));
            assert_eq!(cell("index"), formatted(&json_night["index_bytes"]));
            assert_eq!(cell("snapshots"), json_night["snapshots"].to_string());
            assert_eq!(cell("peak_memory"), formatted(&backup["peak_rss_bytes"]));
        }

        // life.csv: a row per night and command, each with the JSON's figures.
        let run_rows: Vec<&Vec<&str>> = csv_rows
            .iter()
            .filter(|row| row[column("run")] == number.to_string())
            .collect();
        let commands: Vec<(u64, &Value)> = nights
            .iter()
            .flat_map(|night| {
                let n = night["night"].as_u64().expect("night");
                night["commands"]
                    .as_array()
                    .expect("commands")
                    .iter()
                    .map(move |command| (n, command))
            })
            .collect();
        assert_eq!(run_rows.len(), commands.len() + 3, "{tool}: {csv}");
        for (row, (night, command)) in run_rows.iter().zip(&commands) {
            assert_eq!(row[column("tool")], tool);
            assert_eq!(row[column("night")], night.to_string());
            assert_eq!(
                row[column("command")],
                command["command"].as_str().expect("id")
            );
            assert_eq!(row[column("seconds")], command["seconds"].to_string());
            assert_eq!(
                row[column("peak_rss_bytes")],
                command["peak_rss_bytes"].to_string()
            );
            let json_night = &nights[(*night - 1) as usize];
            assert_eq!(
                row[column("repository_bytes")],
                json_night["repository_bytes"].to_string()
            );
            assert_eq!(
                row[column("snapshots")],
                json_night["snapshots"].to_string()
            );
        }
        let restore_rows: Vec<(&str, &str)> = run_rows[commands.len()..]
            .iter()
            .map(|row| (row[column("command")], row[column("verified")]))
            .collect();
        assert_eq!(
            restore_rows,
            [
                ("restore_latest", "true"),
                ("restore_one_file", "true"),
                ("restore_oldest_kept", "true")
            ]
        );
    }
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

/// A repository tool of shell lines whose retention (or check) waits a minute, started and
/// ended as the lab's: the lab's cleanup is what is tested, not the tool.
fn slow_maintenance_tools(file: &Path) {
    std::fs::write(
        file,
        json!([{
            "name": "slowkeeper",
            "shape": "repository",
            "version": [["sleep", "--version"]],
            "init": [["mkdir -p \"$1\"", "{repo}"]],
            "backup": [["cp -R \"$2\" \"$1/$3\"", "{repo}", "{source}", "{archive}"]],
            "restore": [["true"]],
            "retention": [["sleep 61 & wait"]],
            "check": [["sleep 62 & wait"]],
            "progress": "process_io",
            "shell": true
        }])
        .to_string(),
    )
    .expect("tools file");
}

fn slow_life(source: &Path, target: &Path, retention_every: u32) -> Value {
    json!({
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "tool": {"name": "slowkeeper"},
        "life": {"nights": 3, "retention_every": retention_every, "keep": 1}
    })
}

#[tokio::test]
async fn a_life_cancelled_in_its_retention_leaves_no_process_repository_or_copy() {
    let root = scratch();
    let tools_file = root.path().join("tools.json");
    slow_maintenance_tools(&tools_file);
    let options = LabOptions {
        extra: vec!["--tools".to_string(), tools_file.display().to_string()],
        ..LabOptions::default()
    };
    let lab = Lab::start(root.path(), &options);
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 56);
    let target = lab.empty_dir("out");
    let id = lab.submit(&slow_life(&source, &target, 2)).await;

    wait_for_tool(lab.pid(), "sleep 61").await;
    assert_eq!(tool_dirs(&target).len(), 1, "the repository is there");
    assert_eq!(tool_dirs(&lab.data_dir).len(), 1, "the copy is there");
    lab.cancel(&id).await;
    wait_all_gone(lab.pid(), &[&target, &lab.data_dir]).await;
    let campaign = lab
        .wait_status(&id, &["cancelled"], Duration::from_secs(30))
        .await;
    assert_eq!(campaign["runs"][0]["status"], "cancelled", "{campaign}");
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

#[tokio::test]
async fn a_lab_killed_in_a_lifes_check_is_swept_at_its_next_start() {
    let root = scratch();
    let tools_file = root.path().join("tools.json");
    slow_maintenance_tools(&tools_file);
    let options = LabOptions {
        extra: vec!["--tools".to_string(), tools_file.display().to_string()],
        ..LabOptions::default()
    };
    let mut lab = Lab::start(root.path(), &options);
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 57);
    let target = lab.empty_dir("out");
    // No retention within the three nights: the check after the last is the first wait.
    let id = lab.submit(&slow_life(&source, &target, 5)).await;
    let first_pid = lab.pid();
    wait_for_tool(first_pid, "sleep 62").await;
    let left: Vec<String> = tool_dirs(&target)
        .into_iter()
        .chain(tool_dirs(&lab.data_dir))
        .collect();
    assert_eq!(left.len(), 2, "a repository and a copy: {left:?}");

    lab.signal(Signal::KILL);
    let (_, status) = lab.wait_exit(Duration::from_secs(10)).await;
    assert!(!status.success());
    drop(lab);

    let lab = Lab::start(root.path(), &options);
    wait_all_gone(first_pid, &[]).await;
    wait_until(
        "the killed lab's repository and copy to be swept",
        Duration::from_secs(30),
        Duration::from_millis(50),
        async || {
            let still: Vec<String> = tool_dirs(&target)
                .into_iter()
                .chain(tool_dirs(&lab.data_dir))
                .filter(|name| left.contains(name))
                .collect();
            if still.is_empty() {
                Ok(())
            } else {
                Err(format!("{still:?}"))
            }
        },
    )
    .await;
    assert!(marked_processes(first_pid).is_empty());
    // The run was queued again on the new lab; cancelled, it too leaves nothing.
    lab.cancel(&id).await;
    wait_all_gone(lab.pid(), &[&target, &lab.data_dir]).await;
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(30))
        .await;
}

#[tokio::test]
async fn a_forecast_runs_its_ladder_and_answers_at_the_users_size_with_its_basis() {
    let lab = Lab::fresh(&LabOptions::default());
    let target = lab.empty_dir("out");
    // 4 rungs of 2 to 16 MiB in files of 32 KiB, borg for two nights each, for a user of
    // 64 MiB (4× the largest rung). An answer past 1000× the largest rung is words, not a
    // number: `forecast::tests` and `analysis::life_forecast::tests` show it.
    let spec = |size: &str, files: u64| {
        json!({
            "source": {"generated": {"size": "2M"}},
            "target": {"kind": "dir", "path": target},
            "tool": {"name": "borg"},
            "life": {"nights": 2, "retention_every": 2, "keep": 1},
            "forecast": {"size": size, "files": files, "keep": 1, "ladder_from": "2M"}
        })
    };
    let id = lab.submit(&spec("64M", 2048)).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let runs = campaign["runs"].as_array().expect("runs");
    let rungs: Vec<(u64, u64)> = runs
        .iter()
        .map(|run| {
            let night = &run["result"]["tool"]["life"]["nights"][0];
            assert_eq!(
                run["params"]["ladder"]["mean_file_bytes"],
                32 << 10,
                "{run}"
            );
            (
                night["source_bytes"].as_u64().expect("bytes"),
                night["source_files"].as_u64().expect("files"),
            )
        })
        .collect();
    // Each rung double the last, in files of about the user's mean size.
    let bytes: Vec<u64> = rungs.iter().map(|(bytes, _)| *bytes).collect();
    assert_eq!(bytes, [2 << 20, 4 << 20, 8 << 20, 16 << 20]);
    for (bytes, files) in &rungs {
        let mean = bytes / files;
        assert!(
            (16 << 10..=64 << 10).contains(&mean),
            "a rung of {bytes} bytes in {files} files"
        );
    }
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    let section = &page[page.find("id=\"forecast\"").expect("a forecast section")..];
    let section = &section[..section.find("</section>").expect("its end")];
    for figure in [
        "nightly backup, seconds",
        "retention (prune), peak memory",
        "check (all data), seconds",
        "repository after 1 kept backups, bytes",
        "full restore, seconds",
    ] {
        let row = section
            .find(figure)
            .map(|at| &section[at..at + section[at..].find("</tr>").expect("row end")])
            .unwrap_or_else(|| panic!("no row for {figure}: {section}"));
        // Every answer is a number with its range, or says why there is none; every one
        // names its basis.
        assert!(
            row.contains("about ") || row.contains("not measurable") || row.contains("no number"),
            "{row}"
        );
        assert!(row.contains(" over 4 sizes up to "), "{row}");
    }
    assert!(section.contains("64 MiB in 2048 files"), "{section}");
    // The API gives the same answers, each with its key, its range and its basis.
    let document = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let forecasts = document["forecasts"].as_array().expect("forecasts");
    assert_eq!(forecasts.len(), 1, "{document}");
    assert!(
        forecasts[0]["tool"]
            .as_str()
            .is_some_and(|tool| tool.starts_with("borg")),
        "{}",
        forecasts[0]
    );
    let lines = forecasts[0]["lines"].as_array().expect("lines");
    for line in lines {
        let figure = line["figure"].as_str().expect("figure");
        assert!(
            section.contains(&format!(
                "{figure}</td><td>{}",
                line["said"].as_str().expect("said")
            )),
            "{figure}: the page and the API differ: {line}"
        );
        if line["answer"]["kind"] == "estimate" {
            let value = line["answer"]["value"].as_f64().expect("value");
            assert!(line["answer"]["low"].as_f64() <= Some(value), "{line}");
            assert!(line["answer"]["high"].as_f64() >= Some(value), "{line}");
        }
    }
    // One file's restore is measured on every rung, and forecast from them.
    let one = lines
        .iter()
        .find(|line| line["key"] == "one_file_restore_seconds")
        .expect("one file's restore");
    assert!(one["answer"]["kind"].is_string(), "{one}");
    assert!(
        one["basis"]
            .as_str()
            .is_some_and(|basis| basis.contains("over 4 sizes")),
        "{one}"
    );
    // The repository grows with the source: at 4× the ladder's largest it is a number.
    let repository = &section[section.find("repository after").expect("repository")..];
    assert!(
        repository.starts_with("repository after 1 kept backups, bytes</td><td>about "),
        "{repository}"
    );
}

#[tokio::test]
async fn a_bad_life_or_forecast_is_refused_naming_every_field() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 58);
    let target = lab.empty_dir("out");
    let answer = lab
        .post_json(
            "/api/campaigns",
            &json!({
                "source": {"paths": [source]},
                "target": {"kind": "dir", "path": target},
                "tool": {"name": "restic"},
                "life": {
                    "nights": 1001, "retention_every": 0, "keep": 0,
                    "change": {"edited": 1.5, "deleted": -0.1}
                },
                "forecast": {"size": "2E", "files": 0, "change": 2.0, "keep": 0, "rungs": 3}
            }),
        )
        .await;
    assert_eq!(answer.status(), 422);
    let body: Value = answer.json().await.expect("JSON");
    let text = body.to_string();
    for field in [
        "life.nights",
        "life.retention_every",
        "life.keep",
        "life.change.edited",
        "life.change.deleted",
        "forecast.size",
        "forecast.files",
        "forecast.change",
        "forecast.keep",
        "forecast.rungs",
    ] {
        assert!(
            text.contains(&format!("\"{field}\"")),
            "{field} not named: {text}"
        );
    }
}

#[tokio::test]
async fn a_failing_check_is_a_finding_of_its_night_not_a_lost_life() {
    let root = scratch();
    let tools_file = root.path().join("tools.json");
    std::fs::write(
        &tools_file,
        json!([{
            "name": "brittle",
            "shape": "repository",
            "version": [["cp", "--version"]],
            "init": [["mkdir -p \"$1\"", "{repo}"]],
            "backup": [["cp -R \"$2\" \"$1/$3\"", "{repo}", "{source}", "{archive}"]],
            "restore": [[
                "mkdir -p \"$3$4\" && cp -R \"$1/$2/.\" \"$3$4\"",
                "{repo}", "{archive}", "{restore}", "{source}"
            ]],
            "check": [["echo 'index damaged: pack 3f2a missing' >&2; exit 3"]],
            "progress": "process_io",
            "shell": true
        }])
        .to_string(),
    )
    .expect("tools file");
    let options = LabOptions {
        extra: vec!["--tools".to_string(), tools_file.display().to_string()],
        ..LabOptions::default()
    };
    let lab = Lab::start(root.path(), &options);
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 59);
    let target = lab.empty_dir("out");
    let id = lab
        .submit(&json!({
            "source": {"paths": [source]},
            "target": {"kind": "dir", "path": target},
            "tool": {"name": "brittle"},
            "life": {"nights": 2, "retention_every": 5}
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(120))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let life = &campaign["runs"][0]["result"]["tool"]["life"];
    let check = &life["nights"][1]["commands"][1];
    assert_eq!(check["command"], "check", "{life}");
    let error = check["error"].as_str().expect("the check's error");
    assert!(error.contains("exited with status 3"), "{error}");
    assert!(
        error.contains("index damaged: pack 3f2a missing"),
        "{error}"
    );
    assert!(check["peak_rss_bytes"].as_u64().is_some(), "{check}");
    // The restores still ran and were verified; the page shows the failure in its night.
    let restores = life["restores"].as_array().expect("restores");
    assert_eq!(restores.len(), 2, "{life}");
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("failed: sh exited with status 3"),
        "the page names the failure"
    );
    assert!(
        page.contains("Night 2: check (metadata)"),
        "the summary names its night"
    );
}

/// Lives of one series are kept as any campaign's: each one's figure (its nights' backups
/// together, MB/s) is a point of the series' `tool_life` line, in the order they ran.
#[tokio::test]
async fn lives_of_one_series_are_a_line_of_the_series() {
    let lab = Lab::fresh(&LabOptions::default());
    let target = lab.empty_dir("out");
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "2M", 61);
    let spec = json!({
        "name": "restic's life",
        "series": "lives",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "tool": {"name": "restic"},
        "life": {"nights": 2, "retention_every": 2, "keep": 1}
    });
    let mut ids = Vec::new();
    for _ in 0..2 {
        let id = lab.submit(&spec).await;
        let campaign = lab
            .wait_status(&id, &["done", "failed"], Duration::from_secs(120))
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
        ids.push(id);
    }
    let series = wait_until(
        "both lives in the series",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            let series = lab.get_json("/api/series/lives").await;
            match series["lines"][0]["points"].as_array().map(Vec::len) {
                Some(2) => Ok(series),
                _ => Err(series.to_string()),
            }
        },
    )
    .await;
    let line = &series["lines"][0];
    assert_eq!(line["test"], "tool_life", "{series}");
    let points = line["points"].as_array().expect("points");
    let campaigns: Vec<&str> = points
        .iter()
        .map(|point| point["campaign"].as_str().expect("its campaign"))
        .collect();
    assert_eq!(campaigns, ids, "{series}");
    for point in points {
        assert!(point["mb_per_s"].as_f64() > Some(0.0), "{point}");
    }
}

/// A forecast whose lives keep restic's repository in a bucket: each night's and each
/// maintenance command's requests counted, the run's more than its commands' together (the
/// restores, the lab's own copies), nothing left in the bucket; the nightly backup's requests
/// forecast with their basis; and a year at the user's size priced from them or, where they
/// give no number (restic's nights make the same few requests at every rung this small), said
/// not to be, on the page and in the JSON (`analysis::life_forecast::tests` prices one).
#[tokio::test]
async fn a_forecast_in_a_bucket_counts_each_commands_requests_and_prices_a_year() {
    let server = crate::support::s3::S3Server::start();
    let lab = Lab::fresh(&server.lab_options());
    let id = lab
        .submit(&json!({
            "source": {"generated": {"size": "2M"}},
            "target": {"kind": "s3", "store": "lab", "prefix": "ladder/"},
            "tool": {"name": "restic"},
            "life": {"nights": 2, "retention_every": 2, "keep": 1},
            "forecast": {"size": "64M", "files": 2048, "keep": 1, "ladder_from": "2M"}
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let total = |requests: &Value| -> u64 {
        requests["operations"]
            .as_array()
            .map(|operations| {
                operations
                    .iter()
                    .map(|operation| operation["requests"].as_u64().unwrap_or(0))
                    .sum()
            })
            .unwrap_or(0)
    };
    let runs = campaign["runs"].as_array().expect("runs");
    for run in runs {
        let tool = &run["result"]["tool"];
        let mut by_commands = 0;
        for night in tool["life"]["nights"].as_array().expect("nights") {
            for command in night["commands"].as_array().expect("commands") {
                let made = total(&command["requests"]);
                assert!(
                    made > 0,
                    "every command asks the bucket something: {command}"
                );
                by_commands += made;
            }
        }
        let whole = total(&tool["requests"]);
        assert!(
            by_commands < whole,
            "{by_commands} by the commands, {whole} by the run"
        );
    }
    assert!(
        server.objects().is_empty(),
        "keys left in the bucket: {:?}",
        server.objects()
    );
    let document = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let forecast = &document["forecasts"][0];
    let nightly = forecast["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .find(|line| line["key"] == "nightly_requests")
        .unwrap_or_else(|| panic!("no nightly requests: {forecast}"));
    assert_eq!(nightly["unit"], "requests", "{nightly}");
    assert!(
        nightly["basis"]
            .as_str()
            .is_some_and(|basis| basis.contains("over 4 sizes")),
        "{nightly}"
    );
    let basis = forecast["year_basis"].as_str().expect("the year's basis");
    let priced = forecast["year"]
        .as_array()
        .is_some_and(|year| !year.is_empty());
    if nightly["answer"]["kind"] == "estimate" {
        assert!(
            priced && basis.contains("365 nightly backups"),
            "{forecast}"
        );
    } else {
        assert!(!priced && basis.starts_with("Not priced"), "{forecast}");
        assert!(
            basis.contains("nightly backup, requests to the bucket"),
            "{basis}"
        );
    }
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(page.contains("A year at your size"), "the page's year");
    assert!(page.contains("nightly backup, requests to the bucket"));
}
