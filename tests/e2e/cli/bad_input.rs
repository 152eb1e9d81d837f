//! `backlab run` given bad specs, unusable targets, a full file system and Ctrl-C: the exit
//! code, the message, and no file left behind.

use std::time::{Duration, Instant};

use crate::support::cli::{backlab, json, output, stderr};
use crate::support::fixtures::{entries, scratch};
use crate::support::wait::wait_until;

const BAD_SPEC: i32 = 2;
const RUN_FAILED: i32 = 1;

#[test]
fn a_missing_source_is_a_bad_spec() {
    let target = scratch();
    let out = output(
        backlab()
            .args(["run", "--source", "/nonexistent/backlab/fs1", "--target"])
            .arg(target.path()),
    );
    assert_eq!(out.status.code(), Some(BAD_SPEC));
    assert!(
        stderr(&out).contains("source.paths[0]: /nonexistent/backlab/fs1 does not exist"),
        "{}",
        stderr(&out)
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn an_unwritable_target_is_a_bad_spec() {
    let source = scratch();
    // sysfs refuses new files even to root, which permission bits would not.
    let out = output(
        backlab()
            .args(["run", "--tests", "full_backup", "--source"])
            .arg(source.path())
            .args(["--target", "/sys/kernel"]),
    );
    assert_eq!(out.status.code(), Some(BAD_SPEC));
    assert!(
        stderr(&out).contains("target.path: cannot create files in /sys/kernel"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_target_that_does_not_exist_is_a_bad_spec() {
    let source = scratch();
    let missing = source.path().join("nope");
    let out = output(
        backlab()
            .args(["run", "--tests", "tape_write", "--source"])
            .arg(source.path())
            .arg("--target")
            .arg(&missing),
    );
    assert_eq!(out.status.code(), Some(BAD_SPEC));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
}

#[test]
fn a_block_size_that_breaks_direct_io_alignment_is_a_bad_spec() {
    let source = scratch();
    let out = output(
        backlab()
            .args([
                "run",
                "--direct",
                "--block-size",
                "6000",
                "--target",
                "null",
                "--source",
            ])
            .arg(source.path()),
    );
    assert_eq!(out.status.code(), Some(BAD_SPEC));
    assert!(
        stderr(&out).contains("params.block_size: must be a multiple of 4096 when direct is true"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_bad_field_is_printed() {
    let out = output(backlab().args([
        "run",
        "--source",
        "/x",
        "--target",
        "null",
        "--buffers",
        "0",
        "--block-size",
        "12Q",
        "--tests",
        "tape_write,warp_speed",
        "--compress-ratio",
        "0.2",
        "--duration=-3",
    ]));
    assert_eq!(out.status.code(), Some(BAD_SPEC));
    let text = stderr(&out);
    for field in [
        "params.buffers:",
        "params.block_size:",
        "tests[1]: unknown test 'warp_speed'",
        "params.compress_ratio:",
        "params.duration_s:",
    ] {
        assert!(text.contains(field), "{field} missing from:\n{text}");
    }
}

#[test]
fn a_device_target_needs_permission() {
    let source = scratch();
    let run = |allow: bool| {
        let mut command = backlab();
        command
            .args([
                "run",
                "--json",
                "--tests",
                "tape_write",
                "--size",
                "8M",
                "--source",
            ])
            .arg(source.path())
            .args(["--target", "device:/dev/null"]);
        if allow {
            command.args(["--allow-device", "/dev/null"]);
        }
        output(&mut command)
    };
    let denied = run(false);
    assert_eq!(denied.status.code(), Some(BAD_SPEC));
    assert!(
        stderr(&denied).contains("--allow-device /dev/null"),
        "{}",
        stderr(&denied)
    );
    let allowed = run(true);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(json(&allowed)["runs"][0]["bytes"], 8 << 20);
}

/// Runs `backlab run` inside a private mount namespace with a 4 MiB tmpfs as the target.
#[test]
fn a_small_target_is_written_up_to_its_room_and_left_empty() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let target = scratch.path().join("target");
    std::fs::create_dir(&source).expect("source");
    std::fs::create_dir(&target).expect("target");
    let script = r#"mount -t tmpfs -o size=4m backlab-full "$1" || exit 99
"$2" run --json --tests tape_write --size 64M --source "$3" --target "$1" > "$4"
echo "exit=$?" > "$5"
ls -A "$1" >> "$5""#;
    let report = scratch.path().join("report");
    let json_out = scratch.path().join("result.json");
    let root = rustix::process::geteuid().is_root();
    let mut command = std::process::Command::new("unshare");
    // As root a mount namespace is enough; otherwise map the user to root in a user namespace.
    command.args(if root {
        vec!["--mount"]
    } else {
        vec!["--user", "--map-root-user", "--mount"]
    });
    command
        .args(["sh", "-c", script, "sh"])
        .arg(&target)
        .arg(env!("CARGO_BIN_EXE_backlab"))
        .arg(&source)
        .arg(&json_out)
        .arg(&report);
    let status = command.status().expect("unshare runs (util-linux)");
    assert!(
        status.success(),
        "could not mount a tmpfs in a private namespace: {status}"
    );
    let report = std::fs::read_to_string(&report).expect("report");
    let mut lines = report.lines();
    assert!(
        lines.next().is_some_and(|line| line.starts_with("exit=")),
        "{report}"
    );
    assert_eq!(
        lines.next(),
        None,
        "lab files left in the small target: {report}"
    );

    // The run never fills the file system: it stops at the room left less a reserve, and says
    // so; what it wrote is measured.
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_out).expect("json")).expect("valid json");
    let run = &result["runs"][0];
    assert_eq!(run["status"], "done", "{run}");
    let bytes = run["bytes"].as_u64().unwrap_or(0);
    assert!(bytes > 0 && bytes < 4 << 20, "{run}");
    let warned = run["warnings"].as_array().and_then(|warnings| {
        warnings
            .iter()
            .filter_map(|w| w.as_str())
            .find(|w| w.contains("rather than fill it"))
    });
    let warned = warned.unwrap_or_else(|| panic!("no warning of the room: {run}"));
    // The room it had when it began, in plain words: never the none left after its own file
    // took it, never a gap of stray spaces.
    assert!(!warned.contains("room for 0 B"), "{warned}");
    assert!(!warned.contains("  "), "{warned}");
}

/// Ctrl-C stops a run within a second and removes its files; so does a `kill` (SIGTERM), as a
/// service manager or a `timeout` stops the command, and a hang-up (a closed terminal).
#[tokio::test]
async fn ctrl_c_stops_a_run_within_a_second_and_removes_its_files() {
    use rustix::process::Signal;
    for signal in [Signal::INT, Signal::TERM, Signal::HUP] {
        a_signal_stops_a_run_and_removes_its_files(signal).await;
    }
}

async fn a_signal_stops_a_run_and_removes_its_files(signal: rustix::process::Signal) {
    let scratch = scratch();
    let (source, target) = (scratch.path().join("source"), scratch.path().join("target"));
    std::fs::create_dir(&source).expect("source");
    std::fs::create_dir(&target).expect("target");
    let mut child = backlab()
        .args([
            "run",
            "--json",
            "--tests",
            "tape_write",
            "--size",
            "500G",
            "--duration",
            "60",
        ])
        .args(["--fsync=false", "--source"])
        .arg(&source)
        .arg("--target")
        .arg(&target)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_until(
        "the run to create its file",
        Duration::from_secs(10),
        Duration::from_millis(20),
        async || match entries(&target) {
            files if files.is_empty() => Err("no file yet"),
            _ => Ok(()),
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (reported_at, stdout) = watch_report(&mut child);
    let signalled = Instant::now();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, signal).expect("signal");
    let out = child.wait_with_output().expect("wait");
    let exited = signalled.elapsed();
    let reported = reported_at
        .recv()
        .expect("the report was printed")
        .duration_since(signalled);
    // The run stops and reports within a second (plus the signal's and the process's own
    // latency). The process exits once the kernel has freed the removed file's pages, which
    // waits for any already under writeback: longer behind a busy disk, so bounded apart.
    assert!(
        reported < Duration::from_millis(1500),
        "took {reported:?} to stop after {signal:?}"
    );
    assert!(
        exited < Duration::from_secs(10),
        "exited {exited:?} after {signal:?}"
    );
    assert_eq!(out.status.code(), Some(RUN_FAILED), "after {signal:?}");
    let stdout = stdout.join().expect("stdout");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(report["runs"][0]["status"], "cancelled");
    assert!(
        entries(&target).is_empty(),
        "left after {signal:?}: {:?}",
        entries(&target)
    );
}

/// Reads the child's stdout on a thread: sends the instant the JSON report is complete (its
/// closing brace), and returns the whole text when the child closes it.
fn watch_report(
    child: &mut std::process::Child,
) -> (
    std::sync::mpsc::Receiver<Instant>,
    std::thread::JoinHandle<String>,
) {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line == "}" {
                let _ = tx.send(Instant::now());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    (rx, reader)
}

#[test]
fn a_database_url_is_refused_and_nothing_is_created() {
    let dir = scratch();
    let out = output(backlab().current_dir(dir.path()).args([
        "serve",
        "--db",
        "mysql://lab@db.example/backlab",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("'mysql://…' is a database URL the lab does not speak"),
        "{}",
        stderr(&out)
    );
    // A PostgreSQL URL is taken, and a database that cannot be reached is named, without
    // its password.
    let out = output(backlab().current_dir(dir.path()).args([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data-bind",
        "127.0.0.1:0",
        "--db",
        "postgres://lab:s3cret@127.0.0.1:1/backlab",
    ]));
    assert!(!out.status.success());
    let message = stderr(&out);
    assert!(
        message.contains("postgres://lab:…@127.0.0.1:1/backlab"),
        "{message}"
    );
    assert!(!message.contains("s3cret"), "{message}");
    let created: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .filter(|name| name != "backlab-data")
        .collect();
    assert!(created.is_empty(), "{created:?}");
}

/// A price sheet with a bad figure stops `serve` and `run` before anything starts, naming the
/// sheet and the field.
#[test]
fn a_bad_price_sheet_stops_the_lab_naming_its_sheet_and_field() {
    let dir = scratch();
    let sheet = dir.path().join("prices.json");
    std::fs::write(
        &sheet,
        r#"{"sheets": [{"id": "ours", "name": "Ours", "currency": "USD", "date": "2026-01-01",
            "source": "contract", "storage_per_gb_month": -0.01, "egress_per_gb": 0,
            "classes": [{"name": "all", "per_1000": 0, "others": true, "operations": []}]}]}"#,
    )
    .expect("a sheet");
    let out = output(
        backlab()
            .args(["serve", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--bind", "127.0.0.1:0", "--price-sheet"])
            .arg(&sheet),
    );
    assert_eq!(out.status.code(), Some(BAD_SPEC), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sheet ours: storage_per_gb_month: negative"),
        "{}",
        stderr(&out)
    );
    let out = output(
        backlab()
            .args([
                "run",
                "--tests",
                "null_sink",
                "--generated",
                "1M",
                "--price-sheet",
            ])
            .arg(&sheet),
    );
    assert_eq!(out.status.code(), Some(BAD_SPEC), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sheet ours: storage_per_gb_month: negative"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("data").exists(), "nothing made");
}
