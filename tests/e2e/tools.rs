//! Backup tools run for real (restic, borg, tar with zstd, and operator definitions of them):
//! from the command line, through the service, cancelled, after a killed lab, into an emulated
//! tape drive, compared, and a restore checked file by file. Data stays small (8–64 MiB), so
//! the figures here are never judged, only that each is there and is the run's own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use backlab::engine::result::{RunResult, RunStatus};
use backlab::engine::tool::run::{MARKER, TOOL_DIR_SUFFIX};
use backlab::engine::tool::Tools;
use backlab::engine::{EngineSettings, RunControl, execute};
use backlab::spec::{RunParams, RunPlan, SourcePlan, TargetPlan, TestKind, ToolRun};
use rustix::process::Signal;
use serde_json::{Value, json};

use crate::support::cli::{backlab, json, output, stderr, stdout};
use crate::support::fixtures::{create_dataset_with, entries, run_params, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;

/// The processes carrying the tool-run marker of the lab (or `backlab run`) of process `pid`,
/// as (pid, command line): a run's tag starts with its lab's pid, so another test's tools are
/// not counted.
fn marked_processes(lab_pid: u32) -> Vec<(u32, String)> {
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
fn tool_dirs(dir: &Path) -> Vec<String> {
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
    let out = output(
        run_command(&restore)
            .arg("--source")
            .arg(&source)
            .arg("--target")
            .arg(&target)
            .args(["--tool", "restic", "--duration", "2"]),
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
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    assert!(entries(&restore).is_empty(), "{:?}", entries(&restore));
}

#[test]
fn restic_borg_and_tar_zstd_compared_give_a_row_each_with_their_own_figures() {
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
            .args(["--tests", "tool_backup,tool_restore", "--duration", "5"]),
    );
    assert!(out.status.success(), "run failed: {}", stderr(&out));
    let report = json(&out);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "two tests for each of three tools: {report}");

    let tools = ["restic", "borg", "tar-zstd"];
    let mut stored = BTreeSet::new();
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
        let name = run["params"]["tool"]["name"].as_str().expect("the run's tool");
        assert!(tools.contains(&name), "{run}");
        let figures = &run["tool"];
        assert_eq!(figures["name"], name, "{run}");
        // The version is the program's own: tar-zstd's begins with tar's.
        let program = name.split('-').next().unwrap_or(name);
        let version = figures["version"].as_str().unwrap_or("");
        assert!(version.to_lowercase().contains(program), "{version}");
        let cpu_s = figures["cpu_user_s"].as_f64().unwrap_or(0.0)
            + figures["cpu_system_s"].as_f64().unwrap_or(0.0);
        assert!(cpu_s > 0.0, "the tool's process tree used CPU: {figures}");
        assert!(figures["peak_rss_bytes"].as_u64().unwrap_or(0) > 0, "{figures}");
        assert_eq!(figures["source_files"], files, "{figures}");
        assert_eq!(figures["source_bytes"], 8 << 20, "{figures}");
        assert_eq!(run["bytes"], 8 << 20, "{run}");
        match run["test"].as_str() {
            Some("tool_backup") => {
                // The data compresses 2:1 and every tool compresses by default: what each
                // stored is a figure of its own, below the source's size.
                let kept = figures["stored_bytes"].as_u64().unwrap_or(0);
                assert!(kept > 0 && kept < 8 << 20, "{name}: stored {kept}");
                stored.insert(kept);
            }
            Some("tool_restore") => {
                let verified = &figures["verified"];
                assert_eq!(verified["files"], files, "{name}: {verified}");
                assert_eq!(verified["bytes"], 8 << 20, "{name}: {verified}");
                assert_eq!(verified["missing_count"], 0, "{name}: {verified}");
                assert_eq!(verified["differ_count"], 0, "{name}: {verified}");
            }
            other => panic!("unexpected test {other:?}"),
        }
    }
    assert_eq!(stored.len(), 3, "three tools, three stored sizes: {stored:?}");

    // One row per tool per test, each showing its own run's figure.
    let rows = report["bottleneck"]["rows"].as_array().expect("rows");
    let mut labels = BTreeSet::new();
    for row in rows {
        let label = row["label"].as_str().expect("label").to_string();
        let test = row["test"].as_str().expect("test");
        let tool = tools
            .iter()
            .find(|tool| label.ends_with(&format!("({tool})")))
            .unwrap_or_else(|| panic!("the row names no tool: {row}"));
        let run = runs
            .iter()
            .find(|run| run["test"] == test && run["params"]["tool"]["name"] == *tool)
            .unwrap_or_else(|| panic!("no run for {label}"));
        let own = if row["basis"] == "steady" {
            run["steady"]["mb_per_s"].as_f64()
        } else {
            run["mb_per_s"].as_f64()
        }
        .expect("the run's figure");
        let shown = row["mb_per_s"].as_f64().expect("the row's figure");
        assert!(
            (shown - own).abs() < 0.051,
            "{label}: row {shown}, run {own}"
        );
        assert!(labels.insert(label), "a row given twice: {row}");
    }
    let expected: BTreeSet<String> = tools
        .iter()
        .flat_map(|tool| {
            [
                format!("Tool backup ({tool})"),
                format!("Tool restore, verified ({tool})"),
            ]
        })
        .collect();
    assert_eq!(labels, expected);
    assert!(
        report["bottleneck"]["verdict"]
            .as_str()
            .is_some_and(|verdict| verdict.len() > 20),
        "{}",
        report["bottleneck"]
    );
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
    let stream = run["tool"]["stored_bytes"].as_u64().expect("the stream's bytes");
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

    // The lab offers restic with its version.
    let tools = lab.get_json("/api/tools").await;
    assert!(tools.to_string().contains("restic 0.1"), "{tools}");

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

    let verdict = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    assert!(
        verdict["verdict"].as_str().is_some_and(|words| words.len() > 20),
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
        ["Tool backup (restic)", "Tool restore, verified (restic)"]
    );
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    assert!(tool_dirs(&lab.data_dir).is_empty(), "{:?}", entries(&lab.data_dir));
}

#[tokio::test]
async fn requests_that_give_a_command_or_a_bad_tool_are_refused_naming_the_field() {
    let lab = Lab::fresh(&LabOptions::default());
    let source = lab.data_dir.join("src");
    create_dataset_with(&source, "typical", "1M", 25);
    let target = lab.empty_dir("out");
    let good = restic_campaign(&source, &target);
    let with = |path: &[&str], value: Value| {
        let mut spec = good.clone();
        let (last, parents) = path.split_last().expect("a path");
        let mut at = &mut spec;
        for key in parents {
            at = &mut at[*key];
        }
        at[*last] = value;
        spec
    };
    let cases = [
        (
            with(&["tool", "command"], json!(["sh", "-c", "touch /tmp/owned"])),
            "tool",
            "command",
        ),
        (with(&["tool", "args"], json!(["--insecure"])), "tool", "args"),
        (
            with(&["tool", "env"], json!({"LD_PRELOAD": "/tmp/x.so"})),
            "tool",
            "env",
        ),
        (
            with(&["tool", "name"], json!("rsync-ng")),
            "tool.name",
            "rsync-ng",
        ),
        (
            with(&["tool", "params", "pack_size"], json!(1000)),
            "tool.params.pack_size",
            "128",
        ),
        (
            with(&["tool", "params", "threads"], json!(4)),
            "tool.params.threads",
            "pack_size",
        ),
        (
            with(&["target"], json!({"kind": "null"})),
            "target.kind",
            "restic",
        ),
        (
            with(&["tool"], Value::Null),
            "tool",
            "tool_backup",
        ),
        (
            with(
                &["matrix"],
                json!({"tool": [{"name": "tar-zstd", "params": {"level": 99}}]}),
            ),
            "matrix.tool[0].params.level",
            "19",
        ),
    ];
    for (spec, field, named) in &cases {
        let mut spec = spec.clone();
        if spec["tool"].is_null() {
            spec.as_object_mut().expect("object").remove("tool");
        }
        let response = lab.post_json("/api/campaigns", &spec).await;
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("the error is JSON");
        assert_eq!(status, 422, "{spec} -> {body}");
        let fields = body["fields"].as_object().expect("fields");
        let message = fields
            .iter()
            .find(|(name, _)| name.as_str() == *field || name.starts_with(&format!("{field}.")))
            .map(|(_, message)| message.to_string())
            .unwrap_or_else(|| panic!("the error must name {field}: {body}"));
        assert!(
            message.contains(named) || body.to_string().contains(named),
            "{field}: {message} should mention {named}"
        );
    }
    let listed = lab.get_json("/api/campaigns").await;
    assert_eq!(
        listed["campaigns"].as_array().map(Vec::len),
        Some(0),
        "nothing was queued: {listed}"
    );
    assert!(!Path::new("/tmp/owned").exists());
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

/// Waits until the lab's restic (or other program) is at its timed backup: a process with the
/// lab's marker whose command line holds `word`.
async fn wait_for_tool(lab_pid: u32, word: &str) -> Vec<(u32, String)> {
    wait_until(
        &format!("a tool process running `{word}`"),
        Duration::from_secs(60),
        Duration::from_millis(20),
        async || {
            let found = marked_processes(lab_pid);
            if found.iter().any(|(_, command)| command.contains(word)) {
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
async fn wait_all_gone(lab_pid: u32, dirs: &[&Path]) {
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

    let running = wait_for_tool(lab.pid(), "backup").await;
    assert!(
        running.iter().any(|(_, command)| command.starts_with("restic")),
        "{running:?}"
    );
    assert_eq!(tool_dirs(&target).len(), 1, "the repository is being written");
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
    // A tool that writes nothing and never ends by itself: only the sweep can end it once its
    // lab is gone (a tool writing to its lab would die of the broken pipe).
    let root = scratch();
    let tools_file = root.path().join("tools.json");
    std::fs::write(
        &tools_file,
        json!([{
            "name": "sleeper",
            "shape": "repository",
            "version": [["sleep", "--version"]],
            "backup": [["sleep", "90"]],
            "restore": [["true"]],
            "progress": "process_io"
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
    let running = wait_for_tool(first_pid, "sleep").await;
    let left_in_target = tool_dirs(&target);
    let left_in_data = tool_dirs(&lab.data_dir);
    assert_eq!(left_in_target.len(), 1, "{:?}", entries(&target));
    assert_eq!(left_in_data.len(), 1, "{:?}", entries(&lab.data_dir));

    lab.signal(Signal::KILL);
    let (_, status) = lab.wait_exit(Duration::from_secs(10)).await;
    assert!(!status.success());
    assert_eq!(
        marked_processes(first_pid).len(),
        running.len(),
        "a killed lab cannot end its tool"
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
            if still.is_empty() { Ok(()) } else { Err(format!("{still:?}")) }
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

/// A definition in the shape of `--tools`: tar whose restore then changes what it restored.
fn tar_restoring(name: &str, then: &[&str]) -> Value {
    let mut restore = vec![
        "tar",
        "--extract",
        "--file",
        "{stream}",
        "--directory",
        "{restore}",
        "&&",
    ];
    restore.extend_from_slice(then);
    json!({
        "name": name,
        "shape": "stream",
        "version": [["tar", "--version"]],
        "backup": [["tar", "--create", "--file", "-", "{source}"]],
        "restore": [restore],
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
        "init": [["restic", "init", "--quiet", "--repo", "{repo}", "--repository-version", "2"]],
        "backup": [["restic", "backup", "--json", "--repo", "{repo}", "--host", "backlab", "{source}"]],
        "restore": [[
            "pack=$(find", "{repo}/data", "-type", "f", "-size", "+100k)", "&&",
            "chmod", "u+w", "\"$pack\"", "&&",
            "printf", "XXXX", "|", "dd", "of=\"$pack\"", "bs=1", "seek=1000", "conv=notrunc",
            "2>/dev/null", "&&",
            "restic", "restore", "latest", "--repo", "{repo}", "--target", "{restore}"
        ]],
        "progress": "restic_json",
        "shell": true
    })
}

/// One restore of `source` by `tool` through the engine, its data dir `data`.
fn restore_with(tools: &Arc<Tools>, tool: &str, source: &Path, data: &Path) -> RunResult {
    let target = data.join("target");
    std::fs::create_dir_all(&target).expect("target dir");
    let plan = RunPlan {
        test: TestKind::ToolRestore,
        params: RunParams {
            duration_s: Some(60.0),
            tool: Some(ToolRun {
                name: tool.to_string(),
                params: BTreeMap::new(),
            }),
            ..run_params()
        },
        source: SourcePlan::Paths(vec![source.to_path_buf()]),
        target: TargetPlan::Dir(target.clone()),
        agents: Vec::new(),
    };
    let settings = EngineSettings {
        restore_dir: data.to_path_buf(),
        tools: Arc::clone(tools),
        ..EngineSettings::default()
    };
    let cancel = AtomicBool::new(false);
    let control = RunControl {
        cancel: &cancel,
        progress: &|_| {},
    };
    let result = execute(&plan, &settings, &control);
    assert!(entries(&target).is_empty(), "{tool}: {:?}", entries(&target));
    assert!(tool_dirs(data).is_empty(), "{tool}: {:?}", entries(data));
    result
}

#[test]
fn a_restore_is_verified_file_by_file_and_one_that_differs_fails_naming_the_file() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    three_files(&source);
    let data = scratch.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let file = scratch.path().join("tools.json");
    let definitions = json!([
        tar_restoring(
            "tar-garbling",
            &["printf", "x", ">>", "{restore}{source}/b.txt"]
        ),
        tar_restoring("tar-losing", &["rm", "{restore}{source}/sub/c.bin"]),
        restic_damaging(),
    ]);
    std::fs::write(&file, definitions.to_string()).expect("tools file");
    let tools = Arc::new(Tools::find(Some(&file)).expect("the definitions hold"));
    for name in ["tar", "tar-garbling", "tar-losing", "restic-damaged"] {
        tools
            .get(name)
            .unwrap_or_else(|reason| panic!("{name}: {reason}"));
    }

    // Intact: every file, every byte.
    let intact = restore_with(&tools, "tar", &source, &data);
    assert_eq!(intact.status, RunStatus::Done, "{:?}", intact.error);
    let verified = intact
        .tool
        .as_ref()
        .and_then(|tool| tool.verified.as_ref())
        .expect("the restore was verified");
    assert_eq!((verified.files, verified.bytes), (3, 600_000), "{verified:?}");
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
    assert_eq!((verified.files, verified.missing_count), (2, 0), "{verified:?}");
    assert_eq!(garbled.mb_per_s, 0.0, "a failed run has no rate");

    // One file missing after the restore.
    let lost = restore_with(&tools, "tar-losing", &source, &data);
    assert_eq!(lost.status, RunStatus::Failed, "{lost:?}");
    let error = lost.error.clone().unwrap_or_default();
    assert!(error.contains("sub/c.bin") && error.contains("missing"), "{error}");

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
