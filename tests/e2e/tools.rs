//! Backup tools run for real (restic, borg, tar with zstd, and operator definitions of them):
//! from the command line, through the service, cancelled, after a killed lab, into an emulated
//! tape drive, compared, and a restore checked file by file. Data stays small (8–64 MiB), so
//! the figures here are never judged, only that each is there and is the run's own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use backlab::analysis::points::Basis;
use backlab::engine::result::{RunResult, RunStatus};
use backlab::engine::tool::Tools;
use backlab::engine::tool::run::{MARKER, TOOL_DIR_SUFFIX};
use backlab::engine::{EngineSettings, RunControl, execute};
use backlab::spec::{RunParams, RunPlan, SourcePlan, TargetPlan, TestKind, ToolRun};
use backlab::views::report::{CampaignReport, render_table};
use rustix::process::Signal;
use serde_json::{Value, json};

use crate::support::cli::{backlab, json, output, stderr, stdout};
use crate::support::fixtures::{create_dataset_with, entries, run_params, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;

/// The processes carrying the tool-run marker of the lab (or `backlab run`) whose process is
/// `lab_pid`, as (pid, command line): a run's tag starts with its lab's pid, so the tools of
/// tests running beside this one are not counted.
pub(crate) fn marked_processes(lab_pid: u32) -> Vec<(u32, String)> {
    let wanted = format!("{MARKER}=");
    let tag = format!(":{lab_pid}-");
    let mut found = Vec::new();
    let Ok(listing) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in listing.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        // A process that ended meanwhile, or a zombie, has no environment to read.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let carries = environ.split(|byte| *byte == 0).any(|pair| {
            String::from_utf8_lossy(pair)
                .strip_prefix(&wanted)
                .is_some_and(|value| value.contains(&tag))
        });
        if carries {
            let command = std::fs::read(entry.path().join("cmdline"))
                .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
                .unwrap_or_default();
            found.push((pid, command));
        }
    }
    found
}

/// A tool run's directories (`backlab-run-*.tool`) directly in `dir`.
pub(crate) fn tool_dirs(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|name| name.starts_with("backlab-run-") && name.ends_with(TOOL_DIR_SUFFIX))
        .collect()
}

/// The files beneath `root`, counted as a backup counts them.
fn files_beneath(root: &Path) -> u64 {
    let mut count = 0;
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("list").flatten() {
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                dirs.push(entry.path());
            } else if kind.is_file() {
                count += 1;
            }
        }
    }
    count
}

/// `backlab run` with its restore directory in `scratch` (a tool run keeps its home and
/// restore there), never in the working directory.
fn run_command(scratch: &Path) -> std::process::Command {
    let mut command = backlab();
    command
        .arg("run")
        .arg("--restore-to")
        .arg(scratch)
        .arg("--no-follow-up");
    command
}

#[test]
fn restic_from_the_command_line_prints_its_table_and_a_verdict() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let target = scratch.path().join("target");
    let restore = scratch.path().join("restore");
    std::fs::create_dir(&target).expect("target dir");
    std::fs::create_dir(&restore).expect("restore dir");
    create_dataset_with(&source, "typical", "16M", 21);

    // No --tests: the tool's table, the target's and the source's ceilings beside the tool's.
    // The paths are given as a user in that directory gives them, relative to it: the tool,
    // which runs in a directory of its own, still finds them.
    let out = output(
        run_command(Path::new("restore"))
            .current_dir(scratch.path())
            .args(["--source", "source", "--target", "target"])
            .args(["--tool", "restic", "--size", "16M", "--duration", "60"]),
    );
    let table = stdout(&out);
    assert!(
        out.status.success(),
        "run failed: {table}\n{}",
        stderr(&out)
    );
    for label in [
        "Target write",
        "Read, parallel",
        "Tool alone, in memory (restic)",
        "Tool backup (restic)",
        "Tool incremental (restic)",
        "Tool restore, verified (restic)",
    ] {
        let row = table
            .lines()
            .find(|line| line.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label:?} in:\n{table}"));
        let figure: f64 = row[label.len()..]
            .split_whitespace()
            .next()
            .and_then(|word| word.parse().ok())
            .unwrap_or_else(|| panic!("the row has no figure: {row}"));
        assert!(figure > 0.0, "{row}");
    }
    let verdict = table
        .lines()
        .find_map(|line| line.strip_prefix("Verdict: "))
        .unwrap_or_else(|| panic!("no verdict line in:\n{table}"));
    assert!(verdict.len() > 20, "{verdict}");
    // The restore is timed and then verified: its line says so.
    assert!(table.contains("A restore of 16 MiB"), "{table}");
    // The tool's line: its four figures, what it kept, its verified restore, its version.
    let line = table
        .lines()
        .find(|line| line.starts_with("restic "))
        .unwrap_or_else(|| panic!("no line for restic in:\n{table}"));
    let verified = format!(" verified: {} files, 16 MiB ", files_beneath(&source));
    assert!(line.contains(&verified), "{line}");
    assert!(!line.contains(" - "), "every figure is there: {line}");
    assert!(table.contains("Versions: restic: restic 0."), "{table}");
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    assert!(entries(&restore).is_empty(), "{:?}", entries(&restore));
}

#[test]
fn restic_borg_and_tar_zstd_compared_give_a_line_each_with_their_own_figures() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let target = scratch.path().join("target");
    let restore = scratch.path().join("restore");
    std::fs::create_dir(&target).expect("target dir");
    std::fs::create_dir(&restore).expect("restore dir");
    create_dataset_with(&source, "typical", "8M", 22);
    let files = files_beneath(&source);

    let out = output(
        run_command(&restore)
            .arg("--json")
            .arg("--source")
            .arg(&source)
            .arg("--target")
            .arg(&target)
            .args(["--tool", "restic", "--tool", "borg", "--tool", "tar-zstd"])
            .args(["--tests", "tool_backup,tool_restore", "--duration", "60"]),
    );
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    let document = json(&out);
    let report: CampaignReport =
        serde_json::from_value(document.clone()).expect("the report reads back");
    assert_eq!(report.runs.len(), 6, "two tests for each of three tools");

    let tools = ["restic", "borg", "tar-zstd"];
    let run_of = |test: TestKind, tool: &str| -> &RunResult {
        let mut found = report.runs.iter().filter(|run| {
            run.test == test && run.params.tool.as_ref().is_some_and(|run| run.name == tool)
        });
        let run = found
            .next()
            .unwrap_or_else(|| panic!("no {test} of {tool}"));
        assert!(found.next().is_none(), "{test} of {tool} ran once");
        run
    };
    let mut stored = BTreeSet::new();
    for tool in tools {
        for test in [TestKind::ToolBackup, TestKind::ToolRestore] {
            let run = run_of(test, tool);
            assert_eq!(run.status, RunStatus::Done, "{tool}: {:?}", run.error);
            assert_eq!(run.bytes, 8 << 20, "{tool} {test}");
            let figures = run.tool.as_ref().expect("a tool run's figures");
            assert_eq!(figures.name, tool);
            // The version is the program's own: tar-zstd's begins with tar's.
            let program = tool.split('-').next().unwrap_or(tool);
            assert!(
                figures.version.to_lowercase().contains(program),
                "{tool}: {}",
                figures.version
            );
            assert!(
                figures.cpu_user_s + figures.cpu_system_s > 0.0,
                "the tool's process tree used CPU: {figures:?}"
            );
            assert!(figures.peak_rss_bytes > 0, "{figures:?}");
            assert_eq!(
                (figures.source_files, figures.source_bytes),
                (files, 8 << 20),
                "{tool} {test}"
            );
        }
        // The data compresses 2:1 and every tool compresses by default: what each stored is
        // a figure of its own, below the source's size.
        let kept = run_of(TestKind::ToolBackup, tool)
            .tool
            .as_ref()
            .and_then(|figures| figures.stored_bytes)
            .expect("the backup's stored size");
        assert!(kept > 0 && kept < 8 << 20, "{tool}: stored {kept}");
        stored.insert(kept);
        let verified = run_of(TestKind::ToolRestore, tool)
            .tool
            .as_ref()
            .and_then(|figures| figures.verified.as_ref())
            .expect("the restore was verified");
        assert!(verified.ok(), "{tool}: {verified:?}");
        assert_eq!((verified.files, verified.bytes), (files, 8 << 20), "{tool}");
        // The JSON says the same.
        let restored = document["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .find(|run| run["test"] == "tool_restore" && run["params"]["tool"]["name"] == tool)
            .expect("the restore in the JSON");
        assert_eq!(restored["tool"]["verified"]["files"], files, "{restored}");
    }
    assert_eq!(
        stored.len(),
        3,
        "three tools, three stored sizes: {stored:?}"
    );

    // The comparison: one line per tool, each with its own runs' figures.
    let lines = &report.bottleneck.tools;
    let names: Vec<&str> = lines.iter().map(|line| line.tool.name.as_str()).collect();
    assert_eq!(names, tools);
    // A line shows its test's point, and a point of one run is that run's own figure: its
    // steady one where it found it, else the whole run's.
    let shown = |figure: Option<f64>, run: &RunResult| {
        let figure = figure.expect("a figure");
        let point = report
            .points
            .iter()
            .find(|point| point.test == run.test && point.params == run.params)
            .and_then(|point| point.figure.as_ref())
            .expect("the run's point has a figure");
        assert_eq!(figure, point.mb_per_s, "the line shows the point's figure");
        let own = match (&run.steady, point.basis) {
            (Some(steady), Basis::Steady) => steady.mb_per_s,
            _ => run.mb_per_s,
        };
        assert!(
            (figure - own).abs() < 0.051,
            "{}: {figure} vs {own}",
            run.test
        );
    };
    for line in lines {
        let tool = line.tool.name.as_str();
        let backup = run_of(TestKind::ToolBackup, tool);
        let figures = backup.tool.as_ref().expect("figures");
        shown(line.backup_mb_s, backup);
        shown(line.restore_mb_s, run_of(TestKind::ToolRestore, tool));
        assert_eq!(line.stored_bytes, figures.stored_bytes, "{tool}");
        assert_eq!(line.peak_rss_bytes, Some(figures.peak_rss_bytes), "{tool}");
        assert_eq!(line.restore_verified, Some(true), "{tool}");
        assert_eq!(line.version.as_deref(), Some(figures.version.as_str()));
        assert!(line.cpu_s_per_gib.is_some_and(|cpu| cpu > 0.0), "{line:?}");
        assert_eq!(line.ceiling_mb_s, None, "no tool ran alone");
    }
    // The table the command line prints from this report sets them side by side.
    let table = render_table(&report);
    for tool in tools {
        assert!(
            table
                .lines()
                .any(|row| row.starts_with(tool) && row.contains("verified: ")),
            "no line for {tool}:\n{table}"
        );
    }
    assert!(table.contains("Versions: restic: restic 0.1"), "{table}");
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    assert!(entries(&restore).is_empty(), "{:?}", entries(&restore));
}

#[test]
fn a_stream_tool_feeds_an_emulated_tape_drive_through_the_pipeline() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let restore = scratch.path().join("restore");
    std::fs::create_dir(&restore).expect("restore dir");
    create_dataset_with(&source, "typical", "16M", 23);

    let out = output(
        run_command(&restore)
            .arg("--json")
            .arg("--source")
            .arg(&source)
            .args(["--target", "tape:LTO-3", "--tool", "tar-zstd:level=3"])
            .args(["--tests", "tool_backup"]),
    );
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    let report = json(&out);
    let run = &report["runs"][0];
    assert_eq!(run["status"], "done", "{run}");
    let tape = &run["tape"];
    assert_eq!(tape["emulated"], true, "{run}");
    assert_eq!(tape["model"], "LTO-3", "{run}");
    // The drive took the stream zstd wrote: what the tool stored is what reached the drive,
    // less what the drive's own compression saved.
    let stream = run["tool"]["stored_bytes"]
        .as_u64()
        .expect("the stream's bytes");
    let on_tape = tape["tape_bytes"].as_u64().expect("tape bytes");
    assert!(stream > 0 && stream < 16 << 20, "zstd compressed: {stream}");
    assert!(on_tape > 0 && on_tape <= stream, "{on_tape} of {stream}");
    assert!(tape["streaming_s"].as_f64().unwrap_or(0.0) > 0.0, "{tape}");
    // The pipeline ran: its writer's time is accounted as for the lab's own backups.
    assert!(
        run["stages"]["writer_busy_pct"].as_f64().unwrap_or(0.0) > 0.0,
        "{run}"
    );
    assert_eq!(run["bytes"], 16 << 20, "{run}");
    assert_eq!(run["tool"]["params"]["level"], 3, "{run}");
    assert!(entries(&restore).is_empty(), "{:?}", entries(&restore));
}

/// A campaign of restic's backup and restore on a dataset in the lab's data dir.
fn restic_campaign(source: &Path, target: &Path) -> Value {
    json!({
        "name": "restic",
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "tests": ["tool_backup", "tool_restore"],
        "tool": {"name": "restic", "params": {"compression": "auto"}},
        "params": {"duration_s": 30}
    })
}

#[tokio::test]
async fn a_restic_campaign_through_the_api_runs_to_a_verdict() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "8M", 24);
    let target = lab.empty_dir("out");

    let id = lab.submit(&restic_campaign(&source, &target)).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(180))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{campaign}");
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
        let figures = &run["result"]["tool"];
        assert_eq!(figures["name"], "restic", "{run}");
        assert_eq!(figures["params"]["compression"], "auto", "{run}");
        assert!(figures["cpu_user_s"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
    }
    let restored = &runs[1]["result"]["tool"]["verified"];
    assert_eq!(restored["bytes"], 8 << 20, "{restored}");
    assert_eq!(restored["files"], files_beneath(&source), "{restored}");

    let answer = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let verdict = &answer["bottleneck"];
    assert!(
        verdict["verdict"]
            .as_str()
            .is_some_and(|words| words.len() > 20),
        "{verdict}"
    );
    let labels: Vec<&str> = verdict["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|row| row["label"].as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "Tool backup (restic compression=auto)",
            "Tool restore, verified (restic compression=auto)"
        ]
    );
    // The verdict names the tool and its version, as its provenance.
    assert_eq!(verdict["tool"]["name"], "restic", "{verdict}");
    assert!(
        verdict["tool"]["version"]
            .as_str()
            .is_some_and(|version| version.starts_with("restic 0.")),
        "{verdict}"
    );
    // Its series keeps the version, so that a change after an upgrade can name it.
    let shown = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let key = shown["series"].as_str().expect("the campaign's series");
    let series = lab.get_json(&format!("/api/series/{key}")).await;
    assert_eq!(
        series["campaigns"][0]["tool_version"], verdict["tool"]["version"],
        "{series}"
    );
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    assert!(
        tool_dirs(&lab.data_dir).is_empty(),
        "{:?}",
        entries(&lab.data_dir)
    );
}

#[tokio::test]
async fn requests_that_give_a_command_or_a_bad_tool_are_refused_naming_the_field() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 25);
    let target = lab.empty_dir("out");
    let good = restic_campaign(&source, &target);
    // The good spec with the value at `path` set (or, for null, the key taken out).
    let with = |path: &[&str], value: Value| {
        let mut spec = good.clone();
        let (last, parents) = path.split_last().expect("a path");
        let mut at = &mut spec;
        for key in parents {
            at = &mut at[*key];
        }
        match at.as_object_mut() {
            Some(object) if value.is_null() => {
                object.remove(*last);
            }
            _ => at[*last] = value,
        }
        spec
    };
    let mut compared = with(&["tool"], Value::Null);
    compared["matrix"] = json!({"tool": [
        {"name": "restic"},
        {"name": "tar-zstd", "params": {"level": 99}}
    ]});
    // Each bad request, the one field its answer names, and what the message says.
    let cases = [
        (
            with(
                &["tool", "command"],
                json!(["sh", "-c", "touch /tmp/owned"]),
            ),
            "tool.command",
            "not a field",
        ),
        (
            with(&["tool", "args"], json!(["--insecure"])),
            "tool.args",
            "not a field",
        ),
        (
            with(&["tool", "env"], json!({"LD_PRELOAD": "/tmp/x.so"})),
            "tool.env",
            "not a field",
        ),
        (
            with(&["tool", "name"], json!("rsync-ng")),
            "tool.name",
            "unknown tool 'rsync-ng'",
        ),
        (
            with(&["tool", "params", "pack_size"], json!(1000)),
            "tool.params.pack_size",
            "from 4 to 128",
        ),
        (
            with(&["tool", "params", "threads"], json!(4)),
            "tool.params.threads",
            "restic takes compression, pack_size",
        ),
        (
            with(&["target"], json!({"kind": "null"})),
            "target.kind",
            "restic keeps a repository in a directory",
        ),
        (
            with(&["tool"], Value::Null),
            "tool",
            "'tool_backup' runs a backup tool",
        ),
        (compared, "matrix.tool[1].params.level", "from 1 to 19"),
    ];
    for (spec, field, says) in &cases {
        let response = lab.post_json("/api/campaigns", spec).await;
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("the error is JSON");
        assert_eq!(status, 422, "{spec} -> {body}");
        let fields = body["fields"].as_object().expect("fields");
        let names: Vec<&String> = fields.keys().collect();
        assert_eq!(names, [field], "{body}");
        let message = fields[*field].as_str().unwrap_or("");
        assert!(message.contains(says), "{field}: {message}");
    }
    // The lab's own directory as the source: the tool's run would back up its own files.
    let own = with(&["source"], json!({"paths": [lab.data_dir]}));
    let response = lab.post_json("/api/campaigns", &own).await;
    assert_eq!(response.status().as_u16(), 422);
    let body: Value = response.json().await.expect("the error is JSON");
    let message = body["fields"]["source.paths[0]"].as_str().unwrap_or("");
    assert!(message.contains("holds the lab's own directory"), "{body}");
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(
        listed["campaigns"].as_array().map(Vec::len),
        Some(0),
        "nothing was queued: {listed}"
    );
    assert!(!Path::new("/tmp/owned").exists());
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

/// Waits until a process with the lab's marker runs a command line that starts with `start`
/// (`restic backup`), and returns the lab's marked processes.
pub(crate) async fn wait_for_tool(lab_pid: u32, start: &str) -> Vec<(u32, String)> {
    wait_until(
        &format!("a tool process running `{start}`"),
        Duration::from_secs(60),
        Duration::from_millis(20),
        async || {
            let found = marked_processes(lab_pid);
            if found.iter().any(|(_, command)| command.starts_with(start)) {
                Ok(found)
            } else {
                Err(format!("{found:?}"))
            }
        },
    )
    .await
}

/// Waits until no process of the lab's tool runs exists and no run directory is left in
/// `dirs`.
pub(crate) async fn wait_all_gone(lab_pid: u32, dirs: &[&Path]) {
    wait_until(
        "every tool process and run directory to be gone",
        Duration::from_secs(30),
        Duration::from_millis(50),
        async || {
            let processes = marked_processes(lab_pid);
            let left: Vec<String> = dirs.iter().flat_map(|dir| tool_dirs(dir)).collect();
            if processes.is_empty() && left.is_empty() {
                Ok(())
            } else {
                Err(format!("processes {processes:?}, directories {left:?}"))
            }
        },
    )
    .await;
}

#[tokio::test]
async fn a_cancel_during_the_backup_leaves_no_process_and_no_repository() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "64M", 26);
    let target = lab.empty_dir("out");
    // The heaviest compression: restic takes many seconds over 64 MiB.
    let mut spec = restic_campaign(&source, &target);
    spec["tests"] = json!(["tool_backup"]);
    spec["tool"]["params"]["compression"] = json!("max");
    let id = lab.submit(&spec).await;

    wait_for_tool(lab.pid(), "restic backup").await;
    assert_eq!(
        tool_dirs(&target).len(),
        1,
        "the repository is being written"
    );
    lab.cancel(&id).await;
    wait_all_gone(lab.pid(), &[&target, &lab.data_dir]).await;
    let campaign = lab
        .wait_status(&id, &["cancelled"], Duration::from_secs(30))
        .await;
    assert_eq!(campaign["runs"][0]["status"], "cancelled", "{campaign}");
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

#[tokio::test]
async fn a_killed_lab_takes_back_its_tool_runs_at_the_next_start() {
    // A tool whose program starts one of its own that writes nothing and never ends by
    // itself: the program dies with its lab, and only the sweep can end what it started (a
    // tool writing to its lab would die of the broken pipe).
    let root = scratch();
    let tools_file = root.path().join("tools.json");
    std::fs::write(
        &tools_file,
        json!([{
            "name": "sleeper",
            "shape": "repository",
            "version": [["sleep", "--version"]],
            "backup": [["sleep 90 & wait"]],
            "restore": [["true"]],
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
    let mut lab = Lab::start(root.path(), &options);
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 27);
    let target = lab.empty_dir("out");
    let spec = json!({
        "source": {"paths": [source]},
        "target": {"kind": "dir", "path": target},
        "tests": ["tool_backup"],
        "tool": {"name": "sleeper"},
        "params": {"duration_s": 60}
    });
    let id = lab.submit(&spec).await;
    let first_pid = lab.pid();
    wait_for_tool(first_pid, "sleep 90").await;
    let left_in_target = tool_dirs(&target);
    let left_in_data = tool_dirs(&lab.data_dir);
    assert_eq!(left_in_target.len(), 1, "{:?}", entries(&target));
    assert_eq!(left_in_data.len(), 1, "{:?}", entries(&lab.data_dir));

    lab.signal(Signal::KILL);
    let (_, status) = lab.wait_exit(Duration::from_secs(10)).await;
    assert!(!status.success());
    let survivors = marked_processes(first_pid);
    assert!(
        survivors
            .iter()
            .any(|(_, command)| command.starts_with("sleep 90")),
        "what the tool started outlives a killed lab: {survivors:?}"
    );
    drop(lab);

    let lab = Lab::start(root.path(), &options);
    wait_all_gone(first_pid, &[]).await;
    wait_until(
        "the killed lab's run directories to be swept",
        Duration::from_secs(30),
        Duration::from_millis(50),
        async || {
            let still: Vec<String> = tool_dirs(&target)
                .into_iter()
                .chain(tool_dirs(&lab.data_dir))
                .filter(|name| left_in_target.contains(name) || left_in_data.contains(name))
                .collect();
            if still.is_empty() {
                Ok(())
            } else {
                Err(format!("{still:?}"))
            }
        },
    )
    .await;
    assert!(
        lab.log().contains("ended the backup tool processes"),
        "{}",
        lab.log_tail()
    );
    // The run was queued again and runs on the new lab; cancelled, it too leaves nothing.
    lab.cancel(&id).await;
    wait_all_gone(lab.pid(), &[&target, &lab.data_dir]).await;
    lab.wait_status(&id, &["cancelled"], Duration::from_secs(30))
        .await;
}

/// Files of known content: a.bin, b.txt and sub/c.bin, 600 000 bytes that do not compress.
fn three_files(root: &Path) {
    std::fs::create_dir_all(root.join("sub")).expect("source dirs");
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut bytes = |count: usize| -> Vec<u8> {
        (0..count)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    };
    std::fs::write(root.join("a.bin"), bytes(300_000)).expect("a.bin");
    std::fs::write(root.join("b.txt"), bytes(200_000)).expect("b.txt");
    std::fs::write(root.join("sub/c.bin"), bytes(100_000)).expect("c.bin");
}

/// A definition in the shape of `--tools`: tar whose restore then runs `then`, shell code that
/// changes what it restored (the restore directory is "$2", the source "$3").
fn tar_restoring(name: &str, then: &str) -> Value {
    json!({
        "name": name,
        "shape": "stream",
        "version": [["tar", "--version"]],
        "backup": [["exec tar --create --file - \"$@\"", "{source}"]],
        "restore": [[
            format!("tar --extract --file \"$1\" --directory \"$2\" && {then}"),
            "{stream}", "{restore}", "{source}"
        ]],
        "progress": "process_io",
        "shell": true
    })
}

/// restic, whose restore first damages one byte of the repository's data.
fn restic_damaging() -> Value {
    json!({
        "name": "restic-damaged",
        "shape": "repository",
        "version": [["restic", "version"]],
        "env": {"RESTIC_PASSWORD": "{password}", "RESTIC_CACHE_DIR": "{home}/cache"},
        "init": [["exec restic init --quiet --repo \"$1\" --repository-version 2", "{repo}"]],
        "backup": [[
            "repo=$1; shift; exec restic backup --json --repo \"$repo\" --host backlab \"$@\"",
            "{repo}", "{source}"
        ]],
        "restore": [[
            "pack=$(find \"$1/data\" -type f -size +100k) && chmod u+w \"$pack\" && \
             printf XXXX | dd of=\"$pack\" bs=1 seek=1000 conv=notrunc 2>/dev/null && \
             restic restore latest --repo \"$1\" --target \"$2\"",
            "{repo}", "{restore}"
        ]],
        "progress": "restic_json",
        "shell": true
    })
}

/// One run of `test` by `tool` on `source` through the engine, into a dir target under
/// `data`, the lab's data dir; afterwards neither holds anything of the run.
fn run_tool(
    tools: &Arc<Tools>,
    (tool, test): (&str, TestKind),
    source: &Path,
    data: &Path,
    duration_s: f64,
) -> RunResult {
    run_tool_within(tools, (tool, test), source, data, duration_s, None)
}

/// [`run_tool`] on a lab whose longest run is `max_run`.
fn run_tool_within(
    tools: &Arc<Tools>,
    (tool, test): (&str, TestKind),
    source: &Path,
    data: &Path,
    duration_s: f64,
    max_run: Option<Duration>,
) -> RunResult {
    let target = data.join("target");
    std::fs::create_dir_all(&target).expect("target dir");
    let plan = RunPlan {
        test,
        params: RunParams {
            duration_s: Some(duration_s),
            tool: Some(ToolRun {
                name: tool.to_string(),
                params: BTreeMap::new(),
            }),
            ..run_params()
        },
        source: SourcePlan::Paths(vec![source.to_path_buf()]),
        target: TargetPlan::new(backlab::engine::target::dir::DirTarget(target.clone())),
        agents: Vec::new(),
    };
    let settings = EngineSettings {
        restore_dir: data.to_path_buf(),
        tools: Arc::clone(tools),
        max_run,
        ..EngineSettings::default()
    };
    let cancel = AtomicBool::new(false);
    let control = RunControl {
        cancel: &cancel,
        progress: &|_| {},
    };
    let result = execute(&plan, &settings, &control);
    assert!(
        entries(&target).is_empty(),
        "{tool}: {:?}",
        entries(&target)
    );
    assert!(tool_dirs(data).is_empty(), "{tool}: {:?}", entries(data));
    result
}

/// One restore of `source` by `tool`, checked against it.
fn restore_with(tools: &Arc<Tools>, tool: &str, source: &Path, data: &Path) -> RunResult {
    run_tool(tools, (tool, TestKind::ToolRestore), source, data, 60.0)
}

/// Tools defined in a `--tools` file at `file`, each of them found on PATH.
fn tools_from(file: &Path, definitions: &Value) -> Arc<Tools> {
    std::fs::write(file, definitions.to_string()).expect("tools file");
    let tools = Tools::find(Some(file)).expect("the definitions hold");
    for definition in definitions.as_array().expect("a list") {
        let name = definition["name"].as_str().expect("a name");
        if let Err(reason) = tools.get(name) {
            panic!("{name}: {reason}");
        }
    }
    Arc::new(tools)
}

#[test]
fn a_run_s_duration_bounds_the_timed_step_and_not_the_preparation() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tar_create = json!(["tar", "--create", "--file", "-", "{source}"]);
    let tar_extract = json!([
        "tar",
        "--extract",
        "--file",
        "{stream}",
        "--directory",
        "{restore}"
    ]);
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([
            {
                "name": "slow-to-start",
                "shape": "stream",
                "version": [["tar", "--version"]],
                "init": [["sleep", "3"]],
                "backup": [tar_create],
                "restore": [tar_extract],
                "progress": "process_io"
            },
            {
                "name": "slow-to-back-up",
                "shape": "stream",
                "version": [["tar", "--version"]],
                "backup": [["sleep 5 && exec tar --create --file - \"$@\"", "{source}"]],
                "restore": [["exec tar --extract --file \"$1\"", "{stream}"]],
                "progress": "process_io",
                "shell": true
            }
        ]),
    );
    // Making the repository is not timed: it may take longer than the run's 2 s.
    let prepared = run_tool(
        &tools,
        ("slow-to-start", TestKind::ToolBackup),
        &source,
        &data,
        2.0,
    );
    assert_eq!(prepared.status, RunStatus::Done, "{:?}", prepared.error);
    assert_eq!(prepared.bytes, 600_000);
    assert!(
        prepared.seconds < 3.0,
        "the 3 s start is not timed: {}",
        prepared.seconds
    );
    // The backup is: past the run's 2 s it is stopped, and the run fails saying so.
    let stopped = run_tool(
        &tools,
        ("slow-to-back-up", TestKind::ToolBackup),
        &source,
        &data,
        2.0,
    );
    assert_eq!(stopped.status, RunStatus::Failed, "{stopped:?}");
    let error = stopped.error.unwrap_or_default();
    assert!(
        error.contains("deadline") && error.contains("params.duration_s, 2 s"),
        "{error}"
    );
}

#[test]
fn a_restore_is_verified_file_by_file_and_one_that_differs_fails_naming_the_file() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([
            tar_restoring("tar-garbling", "printf x >> \"$2$3/b.txt\""),
            tar_restoring("tar-losing", "rm \"$2$3/sub/c.bin\""),
            restic_damaging(),
        ]),
    );
    // Intact: every file, every byte.
    let intact = restore_with(&tools, "tar", &source, &data);
    assert_eq!(intact.status, RunStatus::Done, "{:?}", intact.error);
    let verified = intact
        .tool
        .as_ref()
        .and_then(|tool| tool.verified.as_ref())
        .expect("the restore was verified");
    assert_eq!(
        (verified.files, verified.bytes),
        (3, 600_000),
        "{verified:?}"
    );
    assert!(verified.ok(), "{verified:?}");
    assert_eq!(verified.sentence(), "verified: 3 files, 600 000 bytes");

    // One file's content changed after the restore: the run fails, naming it.
    let garbled = restore_with(&tools, "tar-garbling", &source, &data);
    assert_eq!(garbled.status, RunStatus::Failed, "{garbled:?}");
    let error = garbled.error.clone().unwrap_or_default();
    assert!(error.contains("b.txt"), "{error}");
    let verified = garbled
        .tool
        .as_ref()
        .and_then(|tool| tool.verified.as_ref())
        .expect("the restore was verified");
    assert_eq!(verified.differ, ["b.txt"], "{verified:?}");
    assert_eq!(
        (verified.files, verified.missing_count),
        (2, 0),
        "{verified:?}"
    );
    assert_eq!(garbled.mb_per_s, 0.0, "a failed run has no rate");

    // One file missing after the restore.
    let lost = restore_with(&tools, "tar-losing", &source, &data);
    assert_eq!(lost.status, RunStatus::Failed, "{lost:?}");
    let error = lost.error.clone().unwrap_or_default();
    assert!(
        error.contains("sub/c.bin") && error.contains("missing"),
        "{error}"
    );

    // A damaged repository: restic's own error says which file it could not restore.
    let damaged = restore_with(&tools, "restic-damaged", &source, &data);
    assert_eq!(damaged.status, RunStatus::Failed, "{damaged:?}");
    let error = damaged.error.clone().unwrap_or_default();
    let source_text = source.display().to_string();
    assert!(
        ["a.bin", "b.txt", "sub/c.bin"]
            .iter()
            .any(|name| error.contains(&format!("{source_text}/{name}"))),
        "{error}"
    );
}

/// restic with its repository in the lab's S3 store: the backup and the restore go through the
/// bucket (restic's own S3 client, given the store's address and keys), the restore is verified
/// file by file, what the repository took is read from the bucket, and no key of the runs is
/// left in it; borg, which cannot keep a repository there, is refused naming the target.
#[tokio::test]
async fn restic_keeps_its_repository_in_the_labs_s3_store_and_leaves_no_key_behind() {
    let server = crate::support::s3::S3Server::start();
    let lab = Lab::fresh(&server.lab_options());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "8M", 26);
    let spec = |tool: &str| {
        json!({
            "name": "restic into a bucket",
            "source": {"paths": [source]},
            "target": {"kind": "s3", "store": "lab", "prefix": "tools/"},
            "tests": ["tool_backup", "tool_restore"],
            "tool": {"name": tool},
            "params": {"duration_s": 60}
        })
    };
    let id = lab.submit(&spec("restic")).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(180))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let runs = campaign["runs"].as_array().expect("runs");
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
    }
    let backup = &runs[0]["result"]["tool"];
    let stored = backup["stored_bytes"].as_u64().unwrap_or(0);
    // The demo data compresses 2:1 and restic compresses by default: the bucket holds less
    // than the source, and not nothing.
    assert!(stored > 1 << 20 && stored < 8 << 20, "{backup}");
    let restored = &runs[1]["result"]["tool"]["verified"];
    assert_eq!(restored["bytes"], 8 << 20, "{restored}");
    assert_eq!(restored["files"], files_beneath(&source), "{restored}");
    // Every request restic made went through the lab's relay and was counted as the server
    // itself counted it, operation by operation (the lab's own check, listing and cleanup
    // are its own, not restic's).
    let mut counted: std::collections::BTreeMap<String, u64> = Default::default();
    for run in runs {
        add_counts(&mut counted, &run["result"]["tool"]["requests"]);
    }
    // restic's S3 client says it is minio-go; the lab's own client does not.
    assert_eq!(
        counted,
        server.operations_from("minio-go"),
        "relay against server (every client's: {:?})",
        server.operations_from("")
    );
    // The CSV and the page give the same counts.
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/requests.csv"))
        .await;
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().expect("a header").split(',').collect();
    let at = |name: &str| header.iter().position(|field| *field == name).expect(name);
    let mut from_csv: std::collections::BTreeMap<String, u64> = Default::default();
    for row in rows {
        let cells: Vec<&str> = row.split(',').collect();
        *from_csv
            .entry(cells[at("operation")].to_string())
            .or_default() += cells[at("requests")].parse::<u64>().expect("a count");
    }
    assert_eq!(from_csv, counted, "{csv}");
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    let total: u64 = counted.values().sum();
    let backup_total: u64 = runs[0]["result"]["tool"]["requests"]["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .map(|operation| operation["requests"].as_u64().expect("count"))
        .sum();
    assert!(total > backup_total, "the restore's run made requests too");
    assert!(
        page.contains(&format!("<td class=\"num\">{backup_total}</td>")),
        "the page's requests table"
    );
    assert!(page.contains("What run 1 would cost"), "the page's bill");

    for operation in ["PutObject", "GetObject", "ListObjectsV2"] {
        assert!(
            counted.get(operation) > Some(&0),
            "{operation}: {counted:?}"
        );
    }
    let backup_requests = &runs[0]["result"]["tool"]["requests"]["operations"];
    let put = backup_requests
        .as_array()
        .expect("operations")
        .iter()
        .find(|operation| operation["operation"] == "PutObject")
        .expect("restic's backup puts objects");
    // What restic sent is what the bucket holds (the packs, index, snapshot, config and
    // keys), and its lock files, put and removed again (its DeleteObjects): a few KiB.
    let sent = put["bytes_up"].as_u64().expect("bytes up");
    assert!(
        sent >= stored && sent - stored < 64 << 10,
        "sent {sent}, stored {stored}: {put}"
    );
    // The backup's bill by S3 Standard and by B2, as computed here by hand from the same
    // counts (which the server's own equal, above) and the sheets' published prices.
    let of = |name: &str| {
        backup_requests
            .as_array()
            .expect("operations")
            .iter()
            .filter(|operation| operation["operation"] == name)
            .map(|operation| operation["requests"].as_u64().expect("count"))
            .sum::<u64>() as f64
    };
    let all = backup_total as f64;
    let s3_put_list: f64 = [
        "PutObject",
        "CopyObject",
        "UploadPart",
        "CreateMultipartUpload",
        "CompleteMultipartUpload",
        "ListObjects",
        "ListObjectsV2",
        "CreateBucket",
    ]
    .iter()
    .map(|name| of(name))
    .sum();
    let deletes = of("DeleteObject") + of("DeleteObjects") + of("AbortMultipartUpload");
    let s3_requests =
        s3_put_list / 1000.0 * 0.005 + (all - s3_put_list - deletes) / 1000.0 * 0.0004;
    let gib = (1u64 << 30) as f64;
    let stored = stored as f64;
    let b2_class_a: f64 = [
        "PutObject",
        "UploadPart",
        "CreateMultipartUpload",
        "CompleteMultipartUpload",
        "AbortMultipartUpload",
        "DeleteObject",
        "DeleteObjects",
    ]
    .iter()
    .map(|name| of(name))
    .sum();
    let b2_class_b = of("GetObject") + of("HeadObject");
    let b2_requests =
        b2_class_b / 1000.0 * 0.0004 + (all - b2_class_a - b2_class_b) / 1000.0 * 0.004;
    let document = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let bill = &document["bills"][0];
    assert_eq!(bill["run"], 1, "{bill}");
    let sheet = |id: &str| {
        bill["bills"]
            .as_array()
            .expect("bills")
            .iter()
            .find(|sheet| sheet["sheet"] == id)
            .unwrap_or_else(|| panic!("no bill by {id}: {bill}"))
            .clone()
    };
    for (id, requests, storage, restore) in [
        (
            "aws-s3-standard",
            s3_requests,
            stored / gib * 0.023,
            stored / gib * 0.09,
        ),
        (
            "backblaze-b2",
            b2_requests,
            stored / 1e9 * 0.006,
            stored / 1e9 * 0.01,
        ),
    ] {
        let said = sheet(id);
        for (field, hand) in [
            ("requests_cost", requests),
            ("storage_per_month", storage),
            ("restore_cost", restore),
        ] {
            let figure = said[field].as_f64().expect(field);
            assert!(
                (figure - hand).abs() < 1e-9,
                "{id} {field}: {figure} against {hand}"
            );
        }
        assert!(
            said["sheet_words"]
                .as_str()
                .is_some_and(|words| words.contains("prices of 20")),
            "every cost names its sheet and its date: {said}"
        );
    }
    // bills.csv gives the same bill, class by class.
    let bills_csv = lab
        .get_text(&format!("/api/campaigns/{id}/bills.csv"))
        .await;
    let mut reader = csv::Reader::from_reader(bills_csv.as_bytes());
    let header = reader.headers().expect("a header").clone();
    let at = |name: &str| header.iter().position(|field| field == name).expect(name);
    let from_csv: f64 = reader
        .records()
        .map(|record| record.expect("a row"))
        .filter(|row| &row[at("run")] == "1" && &row[at("sheet")] == "aws-s3-standard")
        .map(|row| row[at("requests_cost")].parse::<f64>().expect("a cost"))
        .sum();
    assert!((from_csv - s3_requests).abs() < 1e-9, "{bills_csv}");
    // The campaign's bill is its two runs' (the backup's, the restore's) added up, sheet by
    // sheet, in the JSON, on the page and in the CSV (its rows without a run).
    let run_cost = |run: usize, sheet: &str, field: &str| {
        document["bills"]
            .as_array()
            .expect("bills")
            .iter()
            .find(|bill| bill["run"] == run)
            .and_then(|bill| {
                bill["bills"]
                    .as_array()?
                    .iter()
                    .find(|bill| bill["sheet"] == sheet)
            })
            .and_then(|bill| bill[field].as_f64())
            .unwrap_or_else(|| panic!("run {run} has no {field} by {sheet}: {document}"))
    };
    for sheet in ["aws-s3-standard", "backblaze-b2"] {
        let together = document["campaign_bills"]
            .as_array()
            .expect("the campaign's bills")
            .iter()
            .find(|bill| bill["sheet"] == sheet)
            .unwrap_or_else(|| panic!("no campaign bill by {sheet}: {document}"))
            .clone();
        for field in ["requests_cost", "storage_per_month", "restore_cost"] {
            let sum = run_cost(1, sheet, field) + run_cost(2, sheet, field);
            let said = together[field].as_f64().expect(field);
            assert!(
                (said - sum).abs() < 1e-12,
                "{sheet} {field}: {said} against {sum}"
            );
        }
    }
    assert!(
        page.contains("What the campaign would cost"),
        "the page's campaign bill"
    );
    // A table a bill, each with its cheapest sheet marked: the two runs' and the campaign's.
    assert_eq!(page.matches("<tr class=\"cheapest\">").count(), 3);
    let mut reader = csv::Reader::from_reader(bills_csv.as_bytes());
    let campaign_requests: f64 = reader
        .records()
        .map(|record| record.expect("a row"))
        .filter(|row| row[at("run")].is_empty() && &row[at("sheet")] == "aws-s3-standard")
        .map(|row| row[at("requests_cost")].parse::<f64>().expect("a cost"))
        .sum();
    let json_requests = run_cost(1, "aws-s3-standard", "requests_cost")
        + run_cost(2, "aws-s3-standard", "requests_cost");
    assert!(
        (campaign_requests - json_requests).abs() < 1e-9,
        "{bills_csv}"
    );
    // The tool's line has its backup's requests per GiB backed up, the same in the JSON, in
    // tools.csv and in the sentence under the page's table.
    let source_bytes = backup["source_bytes"]
        .as_u64()
        .expect("the backup's source bytes");
    let per_gib = backup_total as f64 / (source_bytes as f64 / (1u64 << 30) as f64);
    let line = &document["bottleneck"]["tools"][0];
    let said = line["requests_per_gib"].as_f64().expect("requests per GiB");
    assert!((said - per_gib).abs() <= 0.05, "{said} against {per_gib}");
    let tools_csv = lab
        .get_text(&format!("/api/campaigns/{id}/tools.csv"))
        .await;
    let mut reader = csv::Reader::from_reader(tools_csv.as_bytes());
    let header = reader.headers().expect("a header").clone();
    let column = header
        .iter()
        .position(|field| field == "requests_per_gib")
        .expect("a requests_per_gib column");
    let row = reader.records().next().expect("a row").expect("a row");
    assert_eq!(row[column].parse::<f64>().ok(), Some(said), "{tools_csv}");
    let sentence = page
        .split("<p class=\"window\" id=\"tools-requests\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("the requests per GiB under the page's tools table");
    assert!(
        sentence.ends_with(&format!("restic {said:.1}.")),
        "{sentence}"
    );
    // The store's secret is in no answer, page or log line, nor in any file the lab keeps
    // (its database among them).
    let secret = crate::support::s3::SECRET_KEY;
    for (what, text) in [
        ("the page", page.clone()),
        ("requests.csv", csv.clone()),
        ("the bottleneck document", document.to_string()),
        ("the campaign", campaign.to_string()),
        ("the log", lab.log()),
    ] {
        assert!(!text.contains(secret), "{what} holds the store's secret");
    }
    lab.assert_no_file_holds(secret);
    assert!(
        server.objects().is_empty(),
        "keys left in the bucket: {:?}",
        server.objects()
    );

    let refused = lab.post_json("/api/campaigns", &spec("borg")).await;
    assert_eq!(refused.status().as_u16(), 422);
    let body: Value = refused.json().await.expect("JSON");
    assert!(body["fields"]["target.kind"].is_string(), "{body}");
}

/// A shell definition written as docs/tools.md shows it, over a source whose path holds shell
/// syntax and spaces: the path reaches the line as an argument and is never run as code, and
/// the run backs up and restores it, verified, as any other path.
#[test]
fn a_shell_definition_never_runs_a_path_as_code() {
    let scratch = scratch();
    let source = scratch
        .path()
        .join("a b;touch PWNED;$(touch PWNED)`touch PWNED`");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([{
            "name": "tar-shell",
            "shape": "stream",
            "version": [["tar", "--version"]],
            "backup": [["date > /dev/null; exec tar --create --file - \"$@\"", "{source}"]],
            "restore": [["exec tar --extract --file \"$1\"", "{stream}"]],
            "progress": "process_io",
            "shell": true
        }]),
    );
    let restored = restore_with(&tools, "tar-shell", &source, &data);
    assert_eq!(restored.status, RunStatus::Done, "{:?}", restored.error);
    let verified = restored
        .tool
        .as_ref()
        .and_then(|tool| tool.verified.as_ref())
        .expect("the restore was verified");
    assert_eq!(
        (verified.files, verified.bytes),
        (3, 600_000),
        "{verified:?}"
    );
    let planted: Vec<_> = walkdir::WalkDir::new(scratch.path())
        .into_iter()
        .flatten()
        .filter(|entry| entry.file_name() == "PWNED")
        .map(|entry| entry.into_path())
        .collect();
    assert!(planted.is_empty(), "{planted:?}");
}

/// A shell line that holds a place, or is given arguments it never reads, is refused when the
/// tools file is read, naming the tool and saying how to write it.
#[test]
fn a_shell_line_holding_a_place_or_ignoring_its_arguments_is_refused() {
    let scratch = scratch();
    let file = scratch.path().join("tools.json");
    for (backup, said) in [
        (
            json!([["exec tar --create --file - {source}"]]),
            "holds {source}",
        ),
        (
            json!([["exec tar --create --file -", "{source}"]]),
            "reads none",
        ),
    ] {
        let definitions = json!([{
            "name": "tar-shell",
            "shape": "stream",
            "version": [["tar", "--version"]],
            "backup": backup,
            "restore": [["exec tar --extract --file \"$1\"", "{stream}"]],
            "progress": "process_io",
            "shell": true
        }]);
        std::fs::write(&file, definitions.to_string()).expect("tools file");
        let error = Tools::find(Some(&file))
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("tar-shell") && error.contains(said),
            "{backup}: {error}"
        );
    }
}

/// Live processes whose command line holds `text`.
fn running_with(text: &str) -> usize {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(text))
        })
        .count()
}

/// A stream tool whose program leaves a daemon in a session of its own holding the stream
/// open, and one that leaves it with a cleared environment writing nowhere: each run ends (the
/// stream is read to the tool's end, not the daemon's) and no daemon outlives it.
#[test]
fn a_daemon_a_tool_leaves_neither_holds_the_run_nor_outlives_it() {
    if !backlab::engine::tool::process::caged() {
        eprintln!("this machine gives the lab no cgroup: a tool's new session can escape");
        return;
    }
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let holding = format!("3003.{}", rand::random::<u32>());
    let hidden = format!("3004.{}", rand::random::<u32>());
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([
            {
                "name": "tar-daemon",
                "shape": "stream",
                "version": [["tar", "--version"]],
                "backup": [["sh", "-c",
                    format!("setsid sleep {holding} & exec tar --create --file - \"$@\""),
                    "sh", "{source}"]],
                "restore": [["tar", "--extract", "--file", "{stream}"]],
                "progress": "process_io"
            },
            {
                "name": "tar-hidden",
                "shape": "stream",
                "version": [["tar", "--version"]],
                "backup": [["sh", "-c",
                    format!("setsid env -i sleep {hidden} >/dev/null 2>&1 & exec tar --create --file - \"$@\""),
                    "sh", "{source}"]],
                "restore": [["tar", "--extract", "--file", "{stream}"]],
                "progress": "process_io"
            }
        ]),
    );
    for (tool, daemon) in [("tar-daemon", &holding), ("tar-hidden", &hidden)] {
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let (tools, source, data) = (Arc::clone(&tools), source.clone(), data.clone());
        let tool_name = tool.to_string();
        std::thread::spawn(move || {
            let result = run_tool(
                &tools,
                (&tool_name, TestKind::ToolBackup),
                &source,
                &data,
                30.0,
            );
            let _ = done_tx.send(result);
        });
        let result = done_rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{tool}: the run never ended"));
        assert_eq!(result.status, RunStatus::Done, "{tool}: {:?}", result.error);
        assert_eq!(
            running_with(daemon),
            0,
            "{tool}: its daemon outlived the run"
        );
    }
}

/// A repository that is never made (an `init` that never ends) under a lab whose longest run
/// is 3 s: the run ends at 3 s and says why, though an untimed step alone may take 600 s.
#[test]
fn the_labs_longest_run_bounds_every_step_of_a_tool_run() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([{
            "name": "never-made",
            "shape": "repository",
            "version": [["tar", "--version"]],
            "init": [["sleep", "1000"]],
            "backup": [["tar", "--create", "--file", "/dev/null", "{source}"]],
            "restore": [["true"]],
            "progress": "process_io"
        }]),
    );
    let started = std::time::Instant::now();
    let result = run_tool_within(
        &tools,
        ("never-made", TestKind::ToolBackup),
        &source,
        &data,
        60.0,
        Some(Duration::from_secs(3)),
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result.status, RunStatus::Failed, "{result:?}");
    let error = result.error.unwrap_or_default();
    assert!(error.contains("--max-duration, 3 s"), "{error}");
}

/// A tool that prints the lab's environment (`/proc/$PPID/environ`, its parent being the lab)
/// and its own repository password, then fails: the error the lab keeps and serves holds
/// neither the lab's secrets nor the password, in the JSON, the CSV, the page or report.html;
/// and a definition may not set the lab's own variables.
#[tokio::test]
async fn a_tool_that_prints_the_labs_secrets_has_them_redacted_everywhere() {
    let root = scratch();
    let secret = format!("sekrit-{:016x}", rand::random::<u64>());
    let key_id = format!("AKIA{:016X}", rand::random::<u64>());
    let tools_file = root.path().join("tools.json");
    std::fs::write(
        &tools_file,
        json!([{
            "name": "leaky",
            "shape": "stream",
            "version": [["tar", "--version"]],
            "env": {"LEAKY_PASSWORD": "{password}"},
            "backup": [["sh", "-c",
                "tr '\\0' '\\n' < /proc/$PPID/environ | grep AWS_ >&2; \
                 echo \"password $LEAKY_PASSWORD\" >&2; exit 3"]],
            "restore": [["tar", "--extract", "--file", "{stream}"]],
            "progress": "process_io"
        }])
        .to_string(),
    )
    .expect("tools file");
    let options = LabOptions {
        extra: vec!["--tools".to_string(), tools_file.display().to_string()],
        env: vec![
            ("AWS_SECRET_ACCESS_KEY".to_string(), secret.clone()),
            ("AWS_ACCESS_KEY_ID".to_string(), key_id.clone()),
        ],
        ..LabOptions::default()
    };
    let lab = Lab::start(root.path(), &options);
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 27);
    let target = lab.empty_dir("out");
    let id = lab
        .submit(&json!({
            "source": {"paths": [source]},
            "target": {"kind": "dir", "path": target},
            "tests": ["tool_backup"],
            "tool": {"name": "leaky"},
            "params": {"duration_s": 30}
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(60))
        .await;
    let error = campaign["runs"][0]["result"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The tool did print the environment and its password: both are there, redacted.
    assert!(error.contains("AWS_SECRET_ACCESS_KEY="), "{error}");
    assert!(error.contains("password [redacted]"), "{error}");
    for (what, text) in [
        ("json", campaign.to_string()),
        (
            "csv",
            lab.get_text(&format!("/api/campaigns/{id}/results.csv"))
                .await,
        ),
        ("page", lab.get_text(&format!("/campaigns/{id}")).await),
        (
            "report",
            lab.get_text(&format!("/campaigns/{id}/report.html")).await,
        ),
    ] {
        assert!(!text.contains(&secret), "{what} holds the secret key");
        assert!(!text.contains(&key_id), "{what} holds the key id");
    }

    // The tools file's path is the operator's: the tools' list says where a tool comes from
    // in words alone.
    let listed = lab.get_text("/api/tools").await;
    assert!(!listed.contains(&*tools_file.to_string_lossy()), "{listed}");
    assert!(listed.contains("\"origin\":\"tools file\""), "{listed}");

    // A definition setting the lab's marker is refused at start.
    let marker_file = root.path().join("marker.json");
    std::fs::write(
        &marker_file,
        json!([{
            "name": "hiding",
            "shape": "stream",
            "version": [["tar", "--version"]],
            "env": {"BACKLAB_TOOL_RUN": "x"},
            "backup": [["tar", "--create", "--file", "-", "{source}"]],
            "restore": [["tar", "--extract", "--file", "{stream}"]],
            "progress": "process_io"
        }])
        .to_string(),
    )
    .expect("tools file");
    let refused = Tools::find(Some(&marker_file))
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
    assert!(refused.contains("BACKLAB_"), "{refused}");
}

/// A source file appended to while the tool restores: the run is not the tool's fault; the
/// file is said to have changed during the test, and the rest is verified.
#[test]
fn a_source_file_changed_during_the_restore_is_not_blamed_on_the_tool() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([tar_restoring(
            "tar-while-written",
            "printf x >> \"$3/b.txt\""
        )]),
    );
    let restored = restore_with(&tools, "tar-while-written", &source, &data);
    assert_eq!(restored.status, RunStatus::Done, "{:?}", restored.error);
    let verified = restored
        .tool
        .as_ref()
        .and_then(|tool| tool.verified.as_ref())
        .expect("the restore was verified");
    assert_eq!(
        (verified.files, verified.changed_count),
        (2, 1),
        "{verified:?}"
    );
    assert_eq!(verified.changed, ["b.txt"], "{verified:?}");
    assert!(
        verified
            .sentence()
            .contains("1 file changed during the test"),
        "{}",
        verified.sentence()
    );
}

/// tar's "file changed as we read it" (its status 1) over a file appended to all through the
/// backup: the lab saw the file change, so the run counts, with a warning naming the file, and
/// the restore check passes the file over as changed.
#[test]
fn tars_file_changed_as_we_read_it_is_a_warning_when_the_file_changed() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let growing = source.join("growing.log");
    std::fs::write(&growing, vec![b'x'; 64 << 20]).expect("a 64 MiB file");
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = Arc::new(Tools::find(None).expect("the built-in tools"));
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let (stop, growing) = (Arc::clone(&stop), growing.clone());
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&growing)
                .expect("the growing file");
            while !stop.load(Ordering::Relaxed) {
                std::io::Write::write_all(&mut file, b"line\n").expect("appended");
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let restored = restore_with(&tools, "tar", &source, &data);
    stop.store(true, Ordering::Relaxed);
    appender.join().expect("the appender ends");
    assert_eq!(restored.status, RunStatus::Done, "{:?}", restored.error);
    let warning = restored
        .warnings
        .iter()
        .find(|warning| warning.contains("changed while it read it"))
        .unwrap_or_else(|| panic!("no warning of tar's: {:?}", restored.warnings));
    for part in ["status 1", "growing.log", "may be torn"] {
        assert!(warning.contains(part), "{part:?} missing: {warning}");
    }
    let verified = restored
        .tool
        .as_ref()
        .and_then(|tool| tool.verified.as_ref())
        .expect("the restore was verified");
    assert_eq!(verified.changed, ["growing.log"], "{verified:?}");
    assert_eq!(verified.files, 3, "{verified:?}");
}

/// A tool's status for "a file changed" is a warning only where the lab saw a file change
/// during the backup: without a change, the same status fails the run, naming it.
#[test]
fn a_changed_status_without_a_changed_file_fails_the_run() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tar_then = |name: &str, then: &str| {
        json!({
            "name": name,
            "shape": "stream",
            "version": [["tar", "--version"]],
            "backup": [[format!("tar --create --file - \"$1\" && {then}"), "{source}"]],
            "restore": [[
                "exec tar --extract --file \"$1\" --directory \"$2\"", "{stream}", "{restore}"
            ]],
            "progress": "process_io",
            "changed_status": 1,
            "shell": true
        })
    };
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([
            tar_then("says-changed", "exit 1"),
            tar_then("changes", "printf x >> \"$1/b.txt\" && exit 1"),
        ]),
    );
    let unchanged = run_tool(
        &tools,
        ("says-changed", TestKind::ToolBackup),
        &source,
        &data,
        30.0,
    );
    assert_eq!(unchanged.status, RunStatus::Failed);
    let error = unchanged.error.unwrap_or_default();
    assert!(error.contains("exited with status 1"), "{error}");
    let changed = run_tool(
        &tools,
        ("changes", TestKind::ToolBackup),
        &source,
        &data,
        30.0,
    );
    assert_eq!(changed.status, RunStatus::Done, "{:?}", changed.error);
    assert!(
        changed.warnings.iter().any(|warning| warning
            .contains("1 file of the source changed during the backup")
            && warning.contains("b.txt")),
        "{:?}",
        changed.warnings
    );
}

/// A tmpfs of `mib` MiB mounted at `dir`, unmounted when dropped; `None` without root.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, mib: u64) -> Option<SmallDisk> {
        if !rustix::process::geteuid().is_root() {
            return None;
        }
        std::fs::create_dir_all(dir).expect("mount point");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|status| status.success());
        mounted.then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A tool that writes far more into its repository (1 000 MiB, at up to 50 MB/s) than the
/// target's disk holds (256 MiB) is stopped at the lab's reserve, and the run says so; the
/// disk is never filled. The reserve (12.8 MiB) is a quarter of a second of its writing: the
/// 50 ms watch has room to be late on a loaded machine.
#[test]
fn a_tool_filling_its_target_is_stopped_at_the_reserve() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let Some(disk) = SmallDisk::mount(&scratch.path().join("small"), 256) else {
        eprintln!("a small disk needs root");
        return;
    };
    let data = disk.0.join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = tools_from(
        &scratch.path().join("tools.json"),
        &json!([{
            "name": "filler",
            "shape": "repository",
            "version": [["dd", "--version"]],
            "backup": [["sh", "-c",
                "mkdir -p \"$1\" && for i in $(seq 1000); do \
                 head -c 1048576 /dev/zero >> \"$1/fill\" || exit 1; sleep 0.02; done",
                "sh", "{repo}"]],
            "restore": [["true"]],
            "progress": "process_io"
        }]),
    );
    let filled = run_tool(
        &tools,
        ("filler", TestKind::ToolBackup),
        &source,
        &data,
        60.0,
    );
    assert_eq!(filled.status, RunStatus::Failed, "{filled:?}");
    let error = filled.error.unwrap_or_default();
    assert!(error.contains("came down to the lab's reserve"), "{error}");
    assert!(!error.contains("No space left"), "{error}");
}

/// A restore of a source holding a sparse file needs room for its apparent size (a tool may
/// restore the holes as data): on a disk without that room it is refused before anything is
/// written, naming the sizes, and the disk is never filled.
#[test]
fn a_restore_without_room_for_the_source_is_refused_before_it_writes() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    std::fs::File::create(source.join("disk.img"))
        .and_then(|file| file.set_len(2 << 30))
        .expect("a 2 GiB sparse file");
    let Some(disk) = SmallDisk::mount(&scratch.path().join("small"), 256) else {
        eprintln!("a small disk needs root");
        return;
    };
    let data = disk.0.join("data");
    std::fs::create_dir(&data).expect("data dir");
    let tools = Arc::new(Tools::find(None).expect("the built-in tools"));
    let restored = restore_with(&tools, "tar", &source, &data);
    assert_eq!(restored.status, RunStatus::Failed, "{restored:?}");
    let error = restored.error.unwrap_or_default();
    assert!(
        error.contains("the restore needs 2.00 GiB") && error.contains("room for"),
        "{error}"
    );
    let free = rustix::fs::statvfs(&disk.0).expect("statvfs");
    assert!(
        free.f_bfree * free.f_frsize > 200 << 20,
        "the disk was written: {} bytes free",
        free.f_bfree * free.f_frsize
    );
}

/// A run's request counts (`tool.requests` of its result) added to `counted`, by operation.
fn add_counts(counted: &mut std::collections::BTreeMap<String, u64>, requests: &Value) {
    for operation in requests["operations"]
        .as_array()
        .expect("the run's requests")
    {
        *counted
            .entry(operation["operation"].as_str().expect("name").to_string())
            .or_default() += operation["requests"].as_u64().expect("a count");
    }
}

/// restic backing up the 256 MiB demo into the lab's bucket: every request it made is in the
/// run's counts, operation by operation as the S3 server itself counted them.
#[tokio::test]
async fn restic_backing_up_the_demo_into_a_bucket_is_counted_as_the_server_counts() {
    let server = crate::support::s3::S3Server::start();
    let lab = Lab::fresh(&server.lab_options());
    let source = lab.data_dir.join("demo");
    create_dataset_with(&source, "typical", "256M", 1);
    let id = lab
        .submit(&json!({
            "name": "the demo into a bucket",
            "source": {"paths": [source]},
            "target": {"kind": "s3", "store": "lab", "prefix": "demo/"},
            "tests": ["tool_backup"],
            "tool": {"name": "restic"}
        }))
        .await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(300))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let tool = &campaign["runs"][0]["result"]["tool"];
    let mut counted: std::collections::BTreeMap<String, u64> = Default::default();
    add_counts(&mut counted, &tool["requests"]);
    // restic's S3 client says it is minio-go; the lab's own client does not.
    assert_eq!(
        counted,
        server.operations_from("minio-go"),
        "relay against server"
    );
    let put = counted.get("PutObject").copied().unwrap_or(0);
    assert!(put >= 8, "256 MiB in packs of 16 MiB at most: {counted:?}");
    assert!(server.objects().is_empty(), "{:?}", server.objects());
}
