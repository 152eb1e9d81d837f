//! Faults under the lab's database: its disk filling up and freed again, a second lab started
//! on the same SQLite file, a file with a damaged page. Each is refused or healed, never left
//! half-working.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::cli::backlab;
use crate::support::fixtures::scratch;
use crate::support::lab::{Lab, LabOptions};

/// A short backup into the null sink: `runs` runs of 1 s.
fn short_runs(runs: u32) -> Value {
    json!({
        "source": {"generated": {"size": "1G"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"duration_s": 1, "time_based": true},
        "repeat": runs,
    })
}

/// A campaign of 1,000 queued runs: its insert alone needs room on the database's disk.
fn wide_campaign() -> Value {
    let buffers: Vec<u32> = (1..=40).collect();
    json!({
        "source": {"generated": {"size": "1G"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"duration_s": 1},
        "matrix": {"buffers": buffers, "streams": [1, 2, 3, 4, 5]},
        "repeat": 5,
    })
}

/// How many times the lab's log says each run started.
fn starts_by_run(log: &str) -> BTreeMap<String, usize> {
    let mut starts = BTreeMap::new();
    for line in log.lines().filter(|line| line.contains("run started")) {
        if let Some(id) = line
            .split_whitespace()
            .find_map(|word| word.strip_prefix("run_id="))
        {
            *starts.entry(id.to_string()).or_default() += 1;
        }
    }
    starts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_database_heals_once_there_is_room_again() {
    let lab = Lab::fresh(&LabOptions {
        db_tmpfs_mib: Some(4),
        ..LabOptions::default()
    });
    let before = lab.submit(&short_runs(2)).await;
    lab.wait_status(&before, &["running"], Duration::from_secs(30))
        .await;
    let disk = lab.root.join("dbfs");
    let disk = disk.display();
    lab.in_its_mounts(&format!("cat /dev/zero > '{disk}/filler' 2>/dev/null"));
    assert!(
        lab.in_its_mounts(&format!(
            "test \"$(df --output=avail '{disk}' | tail -1)\" -lt 64"
        )),
        "the database's disk is not full"
    );
    // What needs room fails, with the cause named, and changes nothing.
    for _ in 0..4 {
        let answer = lab.post_json("/api/campaigns", &wide_campaign()).await;
        let status = answer.status().as_u16();
        let body: Value = answer.json().await.unwrap_or(Value::Null);
        assert_eq!(status, 503, "{body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|error| error.contains("disk is full")),
            "{body}"
        );
    }
    let health = lab.get("/healthz").await;
    assert!(
        [200, 503].contains(&health.status().as_u16()),
        "{}",
        health.status()
    );

    // Room again: the same lab, not restarted, takes submissions, deletes and reruns.
    assert!(lab.in_its_mounts(&format!("rm '{disk}/filler'")));
    let mut ids = vec![before.clone()];
    for _ in 0..3 {
        let answer = lab.post_json("/api/campaigns", &short_runs(1)).await;
        let status = answer.status().as_u16();
        let body: Value = answer.json().await.unwrap_or(Value::Null);
        assert_eq!(status, 201, "{body}\n{}", lab.log_tail());
        ids.push(body["id"].as_str().expect("id").to_string());
    }
    for id in &ids {
        let campaign = lab
            .wait_status(
                id,
                &["done", "failed", "cancelled"],
                Duration::from_secs(90),
            )
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
    }
    let rerun = lab
        .post_json(&format!("/api/campaigns/{}/rerun", ids[1]), &json!({}))
        .await;
    assert_eq!(rerun.status(), 201);
    let deleted = lab
        .client
        .delete(lab.url(&format!("/api/campaigns/{}", ids[2])))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(deleted.status(), 204);
    let health = lab.get_json("/healthz").await;
    assert_eq!(health["status"], "ok", "{health}");
    assert_eq!(health["database"], "writable", "{health}");

    // Every run was executed once, whatever its result's write met.
    let starts = starts_by_run(&lab.plain_log());
    assert!(starts.len() >= 5, "{starts:?}");
    assert!(
        starts.values().all(|&count| count == 1),
        "runs executed more than once: {starts:?}"
    );
    assert!(!lab.log().contains("non-zero transaction depth"));
}

/// SHA-256 of a file, as hex.
fn checksum(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read");
    Sha256::digest(&bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `backlab serve` on `db`, which must refuse to start: its exit status and what it said. A
/// lab that starts after all is killed after 20 s, and the test fails.
fn serve_once(root: &Path, db: &Path) -> (std::process::ExitStatus, String) {
    serve_once_on(&root.join("data"), db)
}

/// [`serve_once`] with its data dir at `data_dir`.
fn serve_once_on(data_dir: &Path, db: &Path) -> (std::process::ExitStatus, String) {
    let mut child = backlab()
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--data-bind",
            "127.0.0.1:0",
        ])
        .args(["--demo-size", "0", "--db"])
        .arg(db)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("BACKLAB_TOKEN")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("backlab serve starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("try_wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the lab started on {} and did not stop", db.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("its output");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_second_lab_on_the_same_file_by_any_name_is_refused_and_the_first_is_undisturbed() {
    let scratch = scratch();
    let first = Lab::start(scratch.path(), &LabOptions::default());
    let running = first.submit(&short_runs(2)).await;
    first
        .wait_status(&running, &["running"], Duration::from_secs(30))
        .await;

    let (status, said) = serve_once(scratch.path(), &scratch.path().join("lab.db"));
    assert!(!status.success(), "the second lab started: {said}");
    assert!(
        said.contains("another lab is using this database")
            && said.contains(&format!("process {}", first.pid())),
        "{said}"
    );
    // The same file under other names: a symbolic link, in another directory, and a hard link.
    let elsewhere = scratch.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("a directory");
    let symlink = elsewhere.join("linked.db");
    std::os::unix::fs::symlink(scratch.path().join("lab.db"), &symlink).expect("a symlink");
    let (status, said) = serve_once(&elsewhere, &symlink);
    assert!(
        !status.success(),
        "a second lab started through a symlink: {said}"
    );
    assert!(
        said.contains("another lab is using this database")
            && said.contains(&format!("process {}", first.pid())),
        "{said}"
    );
    let hard_link = elsewhere.join("hard.db");
    std::fs::hard_link(scratch.path().join("lab.db"), &hard_link).expect("a hard link");
    let (status, said) = serve_once(&elsewhere, &hard_link);
    assert!(
        !status.success(),
        "a second lab started through a hard link: {said}"
    );
    assert!(
        said.contains("another lab is using this database") && said.contains("hard link"),
        "{said}"
    );
    assert!(
        !elsewhere.join("hard.db-wal").exists(),
        "the refused lab left a WAL of its own"
    );
    // The first lab goes on as if nothing happened: its runs each run once, here.
    let campaign = first
        .wait_status(&running, &["done", "failed"], Duration::from_secs(60))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let starts = starts_by_run(&first.plain_log());
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert!(starts.values().all(|&count| count == 1), "{starts:?}");
    assert_eq!(first.get_json("/healthz").await["status"], "ok");
}

#[tokio::test]
async fn a_database_with_a_damaged_page_is_refused_at_start_and_left_unchanged() {
    let scratch = scratch();
    let db = scratch.path().join("lab.db");
    {
        let mut lab = Lab::start(scratch.path(), &LabOptions::default());
        // Pages enough to damage one in the middle: queued runs, which nothing here starts
        // before the lab stops.
        for _ in 0..3 {
            let answer = lab.post_json("/api/campaigns", &wide_campaign()).await;
            assert_eq!(answer.status(), 201);
        }
        lab.signal(rustix::process::Signal::TERM);
        let (_, status) = lab.wait_exit(Duration::from_secs(30)).await;
        assert!(status.success(), "{status}");
    }
    let size = std::fs::metadata(&db).expect("db").len();
    assert!(size > 64 * 4096, "only {size} bytes");
    {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&db)
            .expect("open");
        let middle = size / 2 / 4096 * 4096;
        file.seek(SeekFrom::Start(middle)).expect("seek");
        let garbage: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        file.write_all(&garbage).expect("damage");
        file.sync_all().expect("sync");
    }
    let before = checksum(&db);
    let (status, said) = serve_once(scratch.path(), &db);
    assert!(
        !status.success(),
        "the lab started on a damaged file: {said}"
    );
    assert!(
        said.contains("damaged") && said.contains(".recover") && said.contains("unchanged"),
        "{said}"
    );
    assert_eq!(checksum(&db), before, "the damaged file was changed");
}

/// A second lab with a database of its own on the first lab's data dir, reached through a
/// symbolic link, is refused before it sweeps anything: the first lab's runs go on.
#[tokio::test]
async fn a_second_lab_on_the_same_data_dir_by_any_name_is_refused_before_it_sweeps() {
    let scratch = scratch();
    let first = Lab::start(scratch.path(), &LabOptions::default());
    let running = first.submit(&short_runs(2)).await;
    first
        .wait_status(&running, &["running"], Duration::from_secs(30))
        .await;
    let elsewhere = scratch.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("a directory");
    let linked = elsewhere.join("data");
    std::os::unix::fs::symlink(&first.data_dir, &linked).expect("a symlink");
    let (status, said) = serve_once_on(&linked, &elsewhere.join("other.db"));
    assert!(!status.success(), "the second lab started: {said}");
    assert!(
        said.contains("another lab is using this data dir"),
        "{said}"
    );
    let campaign = first
        .wait_status(&running, &["done", "failed"], Duration::from_secs(60))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
}
