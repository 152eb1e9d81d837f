//! An object store as a backup target, against a real S3 server (s3s-fs, started here): a
//! campaign writes, backs up and restores through multipart uploads and ranged reads; the
//! store's figures reach the page; nothing is left in the bucket after the campaign, after a
//! kill -9 of the lab mid-upload, and a store that cannot be used is refused at submission.

use std::time::Duration;

use rustix::process::Signal;
use serde_json::{Value, json};

use crate::support::csv_table::CsvTable;
use crate::support::fixtures::{create_dataset, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::s3::{BUCKET, S3Server};

/// A lab that knows the server's bucket as store `lab` (with the right credentials, or not),
/// and a bucket that does not exist as store `nobucket`.
fn options(server: &S3Server, right_credentials: bool) -> LabOptions {
    let mut extra = Vec::new();
    extra.extend(server.store_flag("lab", BUCKET));
    extra.extend(server.store_flag("nobucket", "no-such-bucket"));
    LabOptions {
        extra,
        env: server.credentials(right_credentials),
        ..LabOptions::default()
    }
}

/// What a second client, rclone, lists in the bucket; `None` where rclone is not installed.
fn rclone_listing(server: &S3Server) -> Option<Vec<String>> {
    let output = std::process::Command::new("rclone")
        .args(["lsf", "-R", "--files-only", &format!("probe:{BUCKET}")])
        // A CA bundle for TLS the machine may name is of no use on plain HTTP, and rclone
        // refuses to start with one on a plain transport.
        .env_remove("AWS_CA_BUNDLE")
        .env("RCLONE_CONFIG_PROBE_TYPE", "s3")
        .env("RCLONE_CONFIG_PROBE_PROVIDER", "Other")
        .env(
            "RCLONE_CONFIG_PROBE_ENDPOINT",
            format!("http://{}", server.addr),
        )
        .env(
            "RCLONE_CONFIG_PROBE_ACCESS_KEY_ID",
            crate::support::s3::ACCESS_KEY,
        )
        .env(
            "RCLONE_CONFIG_PROBE_SECRET_ACCESS_KEY",
            crate::support::s3::SECRET_KEY,
        )
        .env("RCLONE_CONFIG_PROBE_FORCE_PATH_STYLE", "true")
        .output()
        .ok()?;
    assert!(
        output.status.success(),
        "rclone lsf: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .filter(|line| !line.is_empty())
            .collect(),
    )
}

/// Nothing of the lab's in the bucket: no object, no upload under way, as the server's own
/// directory and a second client see it.
fn assert_nothing_left(server: &S3Server, when: &str) {
    assert_eq!(
        server.uploads(),
        Vec::<String>::new(),
        "uploads left {when}"
    );
    assert_eq!(
        server.objects(),
        Vec::<String>::new(),
        "objects left {when}"
    );
    if let Some(listing) = rclone_listing(server) {
        assert_eq!(listing, Vec::<String>::new(), "rclone lists objects {when}");
    }
}

/// A run into the bucket that lasts a while: `size` of generated data written as objects of
/// `object_size` in 5 MiB parts, two in flight, cut at `duration_s`.
fn upload_spec(object_size: &str, size: &str, duration_s: u32) -> Value {
    json!({
        "source": {"generated": {"size": size}},
        "target": {"kind": "s3", "store": "lab", "part_size": "5M", "concurrency": 2,
                   "object_size": object_size},
        "tests": ["tape_write"],
        "params": {"buffers": 4, "block_size": "1M", "streams": 1,
                   "duration_s": duration_s, "size": size, "time_based": false}
    })
}

/// Submits `spec` and kills the lab (SIGKILL) once the server holds a part of its upload: the
/// lab leaves an upload under way that it never aborted. Returns the campaign's id.
async fn kill_mid_upload(mut lab: Lab, server: &S3Server, spec: &Value) -> String {
    let id = lab.submit(spec).await;
    crate::support::wait::wait_until(
        "a part on the server",
        Duration::from_secs(60),
        Duration::from_millis(20),
        async || {
            let uploads = server.uploads();
            if uploads.iter().any(|file| file.contains(".part-")) {
                Ok(())
            } else {
                Err(format!("{uploads:?}"))
            }
        },
    )
    .await;
    lab.signal(Signal::KILL);
    let _ = lab.wait_exit(Duration::from_secs(5)).await;
    id
}

#[tokio::test]
async fn a_campaign_into_an_object_store_writes_backs_up_and_restores_and_leaves_nothing() {
    let server = S3Server::start();
    let lab = Lab::fresh(&options(&server, true));
    let source = lab.data_dir.join("src");
    create_dataset(&source, "48M");
    let spec = json!({
        "name": "s3",
        "source": {"paths": [source]},
        "target": {"kind": "s3", "store": "lab", "prefix": "nightly/", "part_size": "5M",
                   "concurrency": 4, "object_size": "20M"},
        "tests": ["tape_write", "full_backup", "restore"],
        "params": {"buffers": 8, "block_size": "1M", "streams": 2, "size": "48M",
                   "duration_s": 30, "time_based": false}
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(240))
        .await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3);
    for run in runs {
        let result = &run["result"];
        assert_eq!(run["status"], "done", "{run}");
        assert!(
            result["bytes"].as_u64().unwrap_or(0) >= 40 << 20,
            "{result}"
        );
        let s3 = &result["s3"];
        assert!(s3["requests"].as_u64().unwrap_or(0) > 0, "{run}");
        assert!(s3["requests_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{s3}");
        assert_eq!(s3["part_size"], 5 << 20);
        assert_eq!(s3["concurrency"], 4);
        if result["test"] == "restore" {
            let gets = &s3["ranged_gets"];
            // 48 MiB in 5 MiB ranges: ten reads.
            assert_eq!(gets["requests"], 10, "{s3}");
            assert!(
                gets["p99_ms"].as_f64().unwrap_or(0.0) >= gets["p50_ms"].as_f64().unwrap_or(0.0)
            );
        } else {
            // 48 MiB over two streams, 20 MiB objects of 5 MiB parts.
            let parts = s3["part_uploads"]["requests"].as_u64().unwrap_or(0);
            assert!(parts >= 10, "{s3}");
            assert!(
                s3["completions"]["requests"].as_u64().unwrap_or(0) >= 2,
                "{s3}"
            );
            assert!(
                s3["part_uploads"]["max_ms"].as_f64().unwrap_or(0.0) > 0.0,
                "{s3}"
            );
            assert!(s3["completing_s"].as_f64().unwrap_or(-1.0) >= 0.0, "{s3}");
            assert_eq!(s3["throttled"], 0);
        }
    }
    // Each run's own client counted its requests by operation, and together they are what the
    // server saw from the lab's run clients (its check at submission, a restore's image laid
    // down and the cleanups name themselves apart).
    let mut counted: std::collections::BTreeMap<String, u64> = Default::default();
    for run in runs {
        let operations = run["result"]["s3"]["counted"]["operations"]
            .as_array()
            .unwrap_or_else(|| panic!("no counts: {run}"));
        for operation in operations {
            *counted
                .entry(operation["operation"].as_str().expect("a name").to_string())
                .or_default() += operation["requests"].as_u64().expect("a count");
        }
    }
    assert_eq!(counted, server.operations_from("backlab/"));
    assert!(
        counted.get("UploadPart").is_some_and(|parts| *parts >= 20),
        "{counted:?}"
    );
    // 48 MiB in 5 MiB ranges: ten reads.
    assert_eq!(counted.get("GetObject"), Some(&10), "{counted:?}");
    // Each run is billed: the writes by what they stored, the restore by what it read.
    let document = lab
        .get_json(&format!("/api/campaigns/{id}/bottleneck"))
        .await;
    let billed: Vec<u64> = document["bills"]
        .as_array()
        .expect("bills")
        .iter()
        .filter_map(|bill| bill["run"].as_u64())
        .collect();
    assert_eq!(billed, [1, 2, 3], "{document}");
    let s3_standard = document["campaign_bills"]
        .as_array()
        .expect("the campaign's bills")
        .iter()
        .find(|bill| bill["sheet"] == "aws-s3-standard")
        .expect("by S3 Standard")
        .clone();
    // A full restore at $0.09 a GB of 2^30 bytes: of what each write stored, and of what the
    // restore read back.
    let read_back: u64 = runs
        .iter()
        .map(|run| match run["result"]["test"].as_str() {
            Some("restore") => run["result"]["s3"]["counted"]["operations"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|operation| operation["operation"] == "GetObject")
                .filter_map(|operation| operation["bytes_down"].as_u64())
                .sum(),
            _ => run["result"]["bytes"].as_u64().expect("bytes"),
        })
        .sum();
    let restore = s3_standard["restore_cost"]
        .as_f64()
        .expect("a restore cost");
    assert!(
        (restore - read_back as f64 / (1u64 << 30) as f64 * 0.09).abs() < 1e-12,
        "{s3_standard}"
    );
    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("S3 client</td>"),
        "the requests' rows name the lab's client"
    );
    for words in [
        "S3 store lab",
        "parts of 5 MiB uploaded",
        "p99",
        "ranged reads",
        "throttled",
    ] {
        assert!(page.contains(words), "the page shows {words:?}");
    }
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    assert!(
        csv.lines().next().unwrap_or("").contains("s3_part_p99_ms"),
        "{csv}"
    );
    let report = lab.get_text(&format!("/campaigns/{id}/report.html")).await;
    assert!(!report.contains(crate::support::s3::SECRET_KEY));
    assert!(!lab.log().contains(crate::support::s3::SECRET_KEY));
    assert!(
        !lab.log().contains(crate::support::s3::ACCESS_KEY),
        "no key id in the log"
    );
    assert_nothing_left(&server, "after the campaign");
}

/// A sweep of part size × parts in flight into the store: a point per pair, each run at its
/// own pair, a heat map of parts in flight by part size, and a sweep sentence that names the
/// best pair or says that none stands out of the noise.
#[tokio::test]
async fn a_part_size_by_concurrency_sweep_is_mapped_and_judged() {
    let server = S3Server::start();
    let lab = Lab::fresh(&options(&server, true));
    let spec = json!({
        "name": "s3 sweep",
        "source": {"generated": {"size": "20M"}},
        "target": {"kind": "s3", "store": "lab", "object_size": "20M"},
        "tests": ["full_backup"],
        // Valid runs (4 s, steady: the source is held to 20 MB/s) that move little data.
        "params": {"buffers": 4, "block_size": "1M", "streams": 1, "duration_s": 4,
                   "time_based": true, "source_rate_mb_s": 20},
        "matrix": {"part_size": ["5M", "10M"], "concurrency": [1, 4]},
        "repeat": 2
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(240))
        .await;
    let runs = campaign["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 8, "4 pairs × 2 repeats");
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
        let s3 = &run["result"]["s3"];
        let pair = (
            s3["part_size"].as_u64().unwrap_or(0),
            s3["concurrency"].as_u64().unwrap_or(0),
        );
        // Each run uploaded at its own pair: what it moved in parts of its size.
        let parts = s3["part_uploads"]["requests"].as_u64().unwrap_or(0);
        let bytes = run["result"]["bytes"].as_u64().unwrap_or(0);
        assert_eq!(parts, bytes.div_ceil(pair.0), "{s3}");
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    pairs.sort_unstable();
    assert_eq!(
        pairs,
        vec![(5 << 20, 1), (5 << 20, 4), (10 << 20, 1), (10 << 20, 4)]
    );
    // The CSV gives each run's pair.
    let csv = lab
        .get_text(&format!("/api/campaigns/{id}/results.csv"))
        .await;
    let table = CsvTable::parse(&csv);
    assert_eq!(table.rows.len(), runs.len(), "{csv}");
    let (part_size, concurrency) = (table.column("part_size"), table.column("concurrency"));
    for (cells, run) in table.rows.iter().zip(runs) {
        let s3 = &run["result"]["s3"];
        assert_eq!(cells[part_size], s3["part_size"].to_string(), "{s3}");
        assert_eq!(cells[concurrency], s3["concurrency"].to_string(), "{s3}");
    }

    let page = lab.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("Parts × in flight"),
        "the sweep table's column"
    );
    for pair in ["5 MiB × 1", "5 MiB × 4", "10 MiB × 1", "10 MiB × 4"] {
        assert!(page.contains(pair), "the sweep table shows {pair}");
    }
    // Which of the sweep's answers depends on the machine: a loaded one makes the runs not
    // valid, and the sweep then says so instead of choosing. Each answer names pairs.
    let answers = [
        "Best: 4 × 1 MiB with 1 stream, ",
        "No point stands out: the best, 4 × 1 MiB with 1 stream, ",
        "No run of the sweep is valid: redo it before choosing",
        "Only one point of the sweep is valid, ",
    ];
    let given: Vec<&&str> = answers.iter().filter(|a| page.contains(**a)).collect();
    assert_eq!(given.len(), 1, "one answer of the sweep: {page}");
    assert!(
        page.contains("MiB parts, 4 in flight") || page.contains("MiB parts, 1 in flight"),
        "the answer names the pairs"
    );
    let heatmap = lab
        .get_text(&format!("/campaigns/{id}/charts/heatmap.svg"))
        .await;
    assert!(
        heatmap.contains("rows are parts in flight, columns part sizes"),
        "{heatmap}"
    );
    for label in ["5 MiB", "10 MiB", "1 fly", "4 fly"] {
        assert!(heatmap.contains(label), "the heat map shows {label}");
    }
    assert_nothing_left(&server, "after the sweep");
}

/// An adaptive search over part size × parts in flight: it runs some of the nine pairs, each
/// run at its own pair, within its budget, says why it stopped, and the heat map marks the
/// pairs it skipped as unexplored.
#[tokio::test]
async fn an_adaptive_search_over_part_size_and_parts_in_flight_stays_in_its_budget() {
    let server = S3Server::start();
    let lab = Lab::fresh(&options(&server, true));
    let spec = json!({
        "name": "s3 search",
        "source": {"generated": {"size": "20M"}},
        "target": {"kind": "s3", "store": "lab", "object_size": "20M"},
        "tests": ["full_backup"],
        "params": {"buffers": 4, "block_size": "1M", "streams": 1, "duration_s": 3,
                   "time_based": true, "source_rate_mb_s": 20},
        "matrix": {"part_size": ["5M", "10M", "20M"], "concurrency": [1, 2, 4],
                   "search": {"strategy": "adaptive", "seed": 2}},
        "repeat": 2
    });
    let id = lab.submit(&spec).await;
    let campaign = lab
        .wait_status(
            &id,
            &["done", "failed", "cancelled"],
            Duration::from_secs(240),
        )
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let campaign = lab.get_json(&format!("/api/campaigns/{id}")).await;
    let search = &campaign["search"];
    assert_eq!(search["points_total"], 9, "{search}");
    assert_eq!(search["full_runs"], 18, "{search}");
    assert_eq!(
        search["budget_runs"], 7,
        "40 % of 18 runs, rounded down: {search}"
    );
    assert!(search["why"].is_string(), "{search}");
    let runs = campaign["runs"].as_array().expect("runs");
    assert!(runs.len() <= 7, "{} runs past a budget of 7", runs.len());
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
        let s3 = &run["result"]["s3"];
        let pair = (
            s3["part_size"].as_u64().unwrap_or(0),
            s3["concurrency"].as_u64().unwrap_or(0),
        );
        let parts = s3["part_uploads"]["requests"].as_u64().unwrap_or(0);
        let bytes = run["result"]["bytes"].as_u64().unwrap_or(0);
        assert_eq!(
            parts,
            bytes.div_ceil(pair.0),
            "each run at its own pair: {s3}"
        );
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    assert!(pairs.len() >= 2, "more than one pair tried: {pairs:?}");
    assert!(pairs.len() < 9, "not every pair run: {pairs:?}");
    assert_eq!(search["points_run"], pairs.len(), "{search}");
    let heatmap = lab
        .get_text(&format!("/campaigns/{id}/charts/heatmap.svg"))
        .await;
    assert!(
        heatmap.contains("unexplored"),
        "skipped pairs marked unexplored"
    );
    assert_nothing_left(&server, "after the search");
}

#[tokio::test]
async fn a_store_that_cannot_be_used_is_refused_at_submission_naming_the_field() {
    let server = S3Server::start();
    let lab = Lab::fresh(&options(&server, true));
    let wrong = Lab::fresh(&options(&server, false));
    let spec = |target: Value| {
        json!({
            "name": "refused",
            "source": {"generated": {"size": "16M"}},
            "target": target,
            "tests": ["tape_write"],
        })
    };
    let refused = async |lab: &Lab, target: Value, field: &str, words: &str| {
        let response = lab.post_json("/api/campaigns", &spec(target)).await;
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("JSON");
        assert!((400..500).contains(&status), "{status}: {body}");
        let message = body["fields"][field]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(words), "{field}: {body}");
        assert!(!body.to_string().contains(crate::support::s3::SECRET_KEY));
    };
    refused(
        &lab,
        json!({"kind": "s3", "store": "elsewhere"}),
        "target.store",
        "no store named elsewhere",
    )
    .await;
    refused(
        &lab,
        json!({"kind": "s3", "store": "nobucket"}),
        "target.store",
        "does not exist",
    )
    .await;
    refused(
        &wrong,
        json!({"kind": "s3", "store": "lab"}),
        "target.store",
        "refused the lab's credentials",
    )
    .await;
    refused(
        &lab,
        json!({"kind": "s3", "store": "lab", "endpoint": "http://169.254.169.254/"}),
        "target.endpoint",
        "cannot be given in a spec",
    )
    .await;
    assert!(server.files().is_empty(), "{:?}", server.files());
}

#[tokio::test]
async fn a_lab_killed_mid_upload_aborts_the_upload_at_restart_and_runs_it_again() {
    let server = S3Server::start();
    let root = scratch();
    let lab = Lab::start(root.path(), &options(&server, true));
    let id = kill_mid_upload(lab, &server, &upload_spec("4G", "4G", 2)).await;
    assert!(
        !server.uploads().is_empty(),
        "a killed lab cannot abort its upload"
    );

    let lab = Lab::start(root.path(), &options(&server, true));
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(120))
        .await;
    assert_eq!(campaign["runs"][0]["status"], "done", "{campaign}");
    assert!(
        lab.log()
            .contains("removed what an interrupted run left in object stores"),
        "{}",
        lab.log()
    );
    assert_nothing_left(&server, "after the restart");
}

/// Two labs on one machine, under the same machine name but with databases and data dirs of
/// their own, write to one store. The restart of one sweeps only what it left itself: the
/// objects the other has written so far, in the middle of its run, stay, and its run ends done.
#[tokio::test]
async fn a_restarted_lab_sweeps_only_its_own_objects_not_another_labs_on_the_same_machine() {
    let server = S3Server::start();
    let (root_a, root_b) = (scratch(), scratch());
    let lab_a = Lab::start(root_a.path(), &options(&server, true));
    let lab_b = Lab::start(root_b.path(), &options(&server, true));
    // Lab B is killed in the middle of an upload: it has something of its own to sweep.
    let left = kill_mid_upload(lab_b, &server, &upload_spec("4G", "4G", 2)).await;
    assert_eq!(
        server.objects(),
        Vec::<String>::new(),
        "lab B completed no object"
    );

    // Lab A writes objects of 16 MiB for a while; lab B comes back and sweeps meanwhile.
    let going = lab_a.submit(&upload_spec("16M", "16G", 40)).await;
    crate::support::wait::wait_until(
        "lab A's first objects",
        Duration::from_secs(60),
        Duration::from_millis(50),
        async || {
            let objects = server.objects();
            if objects.len() >= 2 {
                Ok(())
            } else {
                Err(format!("{objects:?}"))
            }
        },
    )
    .await;
    let before = server.objects();
    // Lab B runs its interrupted run again only once its sweep is over.
    let lab_b = Lab::start(root_b.path(), &options(&server, true));
    let swept = lab_b
        .wait_status(&left, &["done", "failed"], Duration::from_secs(120))
        .await;
    assert_eq!(swept["runs"][0]["status"], "done", "{swept}");
    assert!(
        lab_b
            .log()
            .contains("removed what an interrupted run left in object stores"),
        "{}",
        lab_b.log()
    );
    let written = server.objects();
    let campaign = lab_a.get_json(&format!("/api/campaigns/{going}")).await;
    assert_eq!(
        campaign["status"], "running",
        "lab A's run must still be going for this to show anything: {campaign}"
    );
    // Lab A's objects so far are all there: none was taken by lab B's sweep. (Lab A removes
    // its own only when its run ends.)
    let taken: Vec<&String> = before.iter().filter(|key| !written.contains(key)).collect();
    assert!(
        taken.is_empty(),
        "lab B's sweep removed lab A's objects: {taken:?}"
    );
    lab_a.cancel(&going).await;
    lab_a
        .wait_status(
            &going,
            &["cancelled", "done", "failed"],
            Duration::from_secs(60),
        )
        .await;
    assert_nothing_left(&server, "after both labs' runs");
}

/// A store that stops answering in the middle of a run: the run is cut at its drain deadline
/// (not the requests' ten minutes) and fails saying why; a cancel while the store hangs ends
/// the run at once, recorded cancelled, its objects removed behind it (or by the next start's
/// sweep); the lab stays healthy.
#[tokio::test]
async fn a_store_that_stops_answering_holds_neither_the_run_nor_its_cancel() {
    let server = S3Server::start();
    let relay = crate::support::s3::StallingProxy::start(server.addr);
    let lab = Lab::fresh(&LabOptions {
        extra: relay.store_flag("lab", BUCKET).to_vec(),
        env: server.credentials(true),
        ..LabOptions::default()
    });
    let spec = json!({
        "source": {"generated": {"size": "64G"}},
        "target": {"kind": "s3", "store": "lab", "part_size": "5M", "concurrency": 2,
                   "object_size": "20M"},
        "tests": ["tape_write"],
        "params": {"buffers": 4, "block_size": "1M", "streams": 1, "duration_s": 4,
                   "time_based": true}
    });
    let hung = lab.submit(&spec).await;
    lab.wait_status(&hung, &["running"], Duration::from_secs(30))
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    relay.stall();
    let stalled = std::time::Instant::now();
    let campaign = lab
        .wait_status(
            &hung,
            &["done", "failed", "cancelled"],
            Duration::from_secs(120),
        )
        .await;
    let took = stalled.elapsed();
    let run = &campaign["runs"][0];
    assert_eq!(run["status"], "failed", "{campaign}");
    let error = run["result"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("stopped answering"), "{error}");
    // Its duration (4 s, 3 of them left) and 30 s to drain, then the clean-up's own deadlines.
    assert!(
        took < Duration::from_secs(60),
        "the hung store held the run {took:?}"
    );

    relay.resume();
    let cancelled = lab.submit(&spec).await;
    lab.wait_status(&cancelled, &["running"], Duration::from_secs(30))
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    relay.stall();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = std::time::Instant::now();
    lab.cancel(&cancelled).await;
    let campaign = lab
        .wait_status(
            &cancelled,
            &["done", "failed", "cancelled"],
            Duration::from_secs(60),
        )
        .await;
    let took = asked.elapsed();
    assert_eq!(campaign["runs"][0]["status"], "cancelled", "{campaign}");
    // Within a second here; a loaded machine is given five, still short of a cleanup
    // request's own deadline against the hung store.
    assert!(took < Duration::from_secs(5), "the cancel took {took:?}");
    assert_eq!(lab.get_json("/healthz").await["status"], "ok");
}

/// A lab restarted with uploads in its journal and a store that has stopped answering listens
/// at once, runs what it can once the sweep's deadline passes, and keeps the journal's entries
/// for a later start.
#[tokio::test]
async fn a_start_never_waits_on_a_store_that_does_not_answer() {
    let server = S3Server::start();
    let relay = crate::support::s3::StallingProxy::start(server.addr);
    let root = scratch();
    let options = LabOptions {
        extra: relay.store_flag("lab", BUCKET).to_vec(),
        env: server.credentials(true),
        ..LabOptions::default()
    };
    let lab = Lab::start(root.path(), &options);
    kill_mid_upload(lab, &server, &upload_spec("4G", "4G", 2)).await;
    let journal = root.path().join("data/.backlab-uploads");
    let entries = std::fs::read_dir(&journal).map_or(0, |dir| dir.count());
    assert!(entries > 0, "the killed lab journaled its upload");

    relay.stall();
    let started = std::time::Instant::now();
    let lab = Lab::start(root.path(), &options);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the start waited on the store: {:?}",
        started.elapsed()
    );
    assert_eq!(lab.get_json("/healthz").await["status"], "ok");
    // Each request of the sweep gives up at its own deadline; what it could not remove stays
    // in the journal for a later start.
    crate::support::wait::wait_until(
        "the sweep to give up on the store",
        Duration::from_secs(60),
        Duration::from_millis(200),
        async || {
            let log = lab.log();
            if log.contains("cannot remove what an interrupted run left in an object store")
                || log.contains("did not finish the start-up sweep in time")
            {
                Ok(())
            } else {
                Err(log)
            }
        },
    )
    .await;
    let entries = std::fs::read_dir(&journal).map_or(0, |dir| dir.count());
    assert!(
        entries > 0,
        "the journal keeps what the sweep could not remove"
    );
    relay.resume();
}

/// The lab's threads whose name starts with `prefix`, as the kernel lists them.
fn threads_named(pid: u32, prefix: &str) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .filter(|name| name.starts_with(prefix))
        .collect()
}

/// A store that stops answering in the middle of a restore's ranged reads: a cancel ends the
/// run at once, recorded cancelled, and the readers have left their reads (none is still
/// waiting on the store for its minute); the lab stays healthy.
#[tokio::test]
async fn a_store_that_stops_answering_mid_restore_holds_neither_the_run_nor_its_readers() {
    let server = S3Server::start();
    let relay = crate::support::s3::StallingProxy::start(server.addr);
    let lab = Lab::fresh(&LabOptions {
        extra: relay.store_flag("lab", BUCKET).to_vec(),
        env: server.credentials(true),
        ..LabOptions::default()
    });
    let source = lab.data_dir.join("src");
    create_dataset(&source, "48M");
    let spec = json!({
        "source": {"paths": [source]},
        "target": {"kind": "s3", "store": "lab", "part_size": "5M", "concurrency": 2,
                   "object_size": "20M"},
        "tests": ["restore"],
        "params": {"buffers": 4, "block_size": "1M", "streams": 1, "size": "48M",
                   "duration_s": 30, "time_based": false}
    });
    // Laying the image down carries little back; the reads carry its bytes: the relay
    // stalls after the first of them, part way through the second.
    relay.stall_after_answering(7 << 20);
    let hung = lab.submit(&spec).await;
    crate::support::wait::wait_until(
        "the relay to stall mid-read",
        Duration::from_secs(120),
        Duration::from_millis(20),
        async || {
            if relay.is_stalled() {
                Ok(())
            } else {
                Err(lab
                    .get_json(&format!("/api/campaigns/{hung}"))
                    .await
                    .to_string())
            }
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        lab.get_json(&format!("/api/campaigns/{hung}")).await["status"],
        "running"
    );
    let asked = std::time::Instant::now();
    lab.cancel(&hung).await;
    let campaign = lab
        .wait_status(
            &hung,
            &["done", "failed", "cancelled"],
            Duration::from_secs(120),
        )
        .await;
    let took = asked.elapsed();
    assert_eq!(campaign["runs"][0]["status"], "cancelled", "{campaign}");
    // Within a second here; a loaded machine is given five, still short of a cleanup
    // request's own deadline against the hung store.
    assert!(took < Duration::from_secs(5), "the cancel took {took:?}");
    let readers = threads_named(lab.pid(), "backlab-s3-get");
    assert!(
        readers.is_empty(),
        "readers still wait on the store: {readers:?}"
    );
    assert_eq!(lab.get_json("/healthz").await["status"], "ok");
    relay.resume();
}
