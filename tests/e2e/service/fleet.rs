//! A fleet: lab processes on one PostgreSQL database, each a lab host of its own name. They
//! share one queue without running a run twice, each taking only its own campaigns; a host
//! killed mid-run gets its run back when it restarts and finishes it; a campaign running on one
//! host is followed live from another; a campaign for a host is held to that host's roots; and
//! a second lab cannot serve under a name already serving; a host whose relay from the others
//! died silently notices, listens again and catches up.

use std::collections::HashMap;
use std::time::Duration;

use rustix::process::Signal;
use serde_json::{Value, json};

use crate::support::cli::backlab;
use crate::support::fixtures::{create_dataset, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::postgres::Postgres;
use crate::support::silent_link::SilentLink;
use crate::support::wait::wait_until;

/// A lab host on the test's database, with a short lease.
fn host(cluster: &Postgres, name: &str) -> LabOptions {
    LabOptions {
        db: Some(cluster.url.clone()),
        host_name: Some(name.to_string()),
        extra: vec!["--lease".into(), "3".into(), "--lanes".into(), "2".into()],
        ..LabOptions::default()
    }
}

/// Two lab hosts, lab-a and lab-b, on one new database, each with a root of its own. Bound in
/// this order, the labs stop before their roots go.
fn two_hosts() -> (Postgres, [tempfile::TempDir; 2], Lab, Lab) {
    let cluster = Postgres::database();
    let roots = [scratch(), scratch()];
    let a = Lab::start(roots[0].path(), &host(&cluster, "lab-a"));
    let b = Lab::start(roots[1].path(), &host(&cluster, "lab-b"));
    (cluster, roots, a, b)
}

/// A short null-sink campaign of `runs` runs for `host`.
fn quick(host: &str, runs: u32) -> Value {
    json!({
        "name": format!("for {host}"),
        "host": host,
        "source": {"generated": {"size": "8M"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"block_size": "256K", "size": "8M"},
        "repeat": runs
    })
}

/// A null-sink run of generated data that lasts `seconds` at `mb_s`, reporting progress all
/// the while.
fn steady(name: &str, seconds: u32, mb_s: u32) -> Value {
    json!({
        "name": name,
        "source": {"generated": {"size": "64G"}},
        "target": {"kind": "null"},
        "tests": ["null_sink"],
        "params": {"block_size": "256K", "size": "64G", "duration_s": seconds,
                   "time_based": true, "source_rate_mb_s": mb_s}
    })
}

/// `backlab serve` on the test's database beside the labs of a test, under `name` and with
/// `token`, in a scratch dir of its own: run to its end (a refusal), its output returned.
fn serve_beside(cluster: &Postgres, name: &str, token: Option<&str>) -> std::process::Output {
    let other = scratch();
    let mut command = backlab();
    command
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--data-bind",
            "127.0.0.1:0",
        ])
        .args(["--demo-size", "0", "--lease", "1", "--host-name", name])
        .arg("--db")
        .arg(&cluster.url)
        .arg("--data-dir")
        .arg(other.path().join("data"))
        .env_remove("BACKLAB_TOKEN");
    if let Some(token) = token {
        command.args(["--token", token]);
    }
    command.output().expect("backlab serve runs")
}

#[tokio::test]
async fn two_labs_share_one_queue_each_running_only_its_own_runs_once() {
    let (_cluster, _roots, a, b) = two_hosts();
    // Every campaign is submitted to lab-a; half of them name lab-b.
    let mut ids = Vec::new();
    for index in 0..8 {
        let runs_on = if index % 2 == 0 { "lab-a" } else { "lab-b" };
        ids.push((runs_on, a.submit(&quick(runs_on, 4)).await));
    }
    for (runs_on, id) in &ids {
        let campaign = b
            .wait_status(id, &["done", "failed"], Duration::from_secs(120))
            .await;
        assert_eq!(campaign["status"], "done", "{campaign}");
        assert_eq!(campaign["host"], *runs_on, "{campaign}");
        for run in campaign["runs"].as_array().expect("runs") {
            assert_eq!(run["attempts"], 1, "ran once: {run}");
            assert_eq!(run["host"], *runs_on, "ran on its campaign's host: {run}");
        }
    }
    // Any host's report names the host a campaign ran on.
    let (runs_on, id) = &ids[0];
    let page = b.get_text(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains(&format!(r#"on host <code class="host">{runs_on}</code>"#)),
        "{page}"
    );
    let hosts = a.get_json("/api/hosts").await;
    let alive: HashMap<&str, bool> = hosts
        .as_array()
        .expect("hosts")
        .iter()
        .map(|host| (host["name"].as_str().unwrap_or(""), host["alive"] == true))
        .collect();
    assert_eq!(
        alive,
        HashMap::from([("lab-a", true), ("lab-b", true)]),
        "{hosts}"
    );
    // The form offers both live hosts, this one chosen.
    let form = b.get_text("/campaigns/new").await;
    assert!(
        form.contains(r#"<option value="lab-b" selected>lab-b (this lab)</option>"#),
        "{form}"
    );
    assert!(
        form.contains(r#"<option value="lab-a">lab-a</option>"#),
        "{form}"
    );
}

#[tokio::test]
async fn a_host_killed_mid_run_gets_its_run_back_and_finishes_it() {
    let (cluster, roots, mut a, b) = two_hosts();
    let mut spec = steady("killed host", 2, 200);
    spec["host"] = json!("lab-a");
    // Submitted to lab-b, for lab-a.
    let id = b.submit(&spec).await;
    a.wait_campaign(
        &id,
        "the run to be going on lab-a",
        Duration::from_secs(30),
        |c| {
            c["runs"][0]["status"] == "running"
                && c["runs"][0]["host"] == "lab-a"
                && c["runs"][0]["samples"].as_array().map_or(0, Vec::len) >= 2
        },
    )
    .await;
    a.signal(Signal::KILL);
    let (_, status) = a.wait_exit(Duration::from_secs(5)).await;
    assert!(!status.success());
    drop(a);

    // lab-b's heartbeat takes the run back when lab-a's lease lapses, and keeps it lab-a's.
    let waiting = b
        .wait_campaign(
            &id,
            "the run to be queued again",
            Duration::from_secs(20),
            |c| c["runs"][0]["status"] == "queued",
        )
        .await;
    assert_eq!(waiting["runs"][0]["attempts"], 1, "{waiting}");
    // lab-b takes the oldest queued run it may run: once it has run a newer one of its own,
    // it has passed lab-a's by.
    let own = b.submit(&quick("lab-b", 1)).await;
    let own = b
        .wait_status(&own, &["done", "failed"], Duration::from_secs(30))
        .await;
    assert_eq!(own["status"], "done", "{own}");
    let still = b.get_json(&format!("/api/campaigns/{id}")).await;
    assert_eq!(
        still["runs"][0]["status"], "queued",
        "no other host took it: {still}"
    );

    let a = Lab::start(roots[0].path(), &host(&cluster, "lab-a"));
    let campaign = b
        .wait_status(&id, &["done", "failed"], Duration::from_secs(60))
        .await;
    assert_eq!(campaign["status"], "done", "{campaign}");
    let run = &campaign["runs"][0];
    assert_eq!(run["attempts"], 2, "{run}");
    assert_eq!(run["host"], "lab-a", "{run}");
    assert!(
        run["result"]["seconds"].as_f64().unwrap_or(0.0) >= 1.5,
        "the second attempt's own whole run: {run}"
    );
    drop(a);
}

#[tokio::test]
async fn a_campaign_on_one_host_is_followed_live_from_another() {
    let (_cluster, _roots, a, b) = two_hosts();
    let spec = steady("followed", 2, 200);
    let id = a.submit(&spec).await;
    let seen = b.follow(&id, Duration::from_secs(60)).await;
    let names: Vec<&str> = seen.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"state"), "{names:?}");
    assert!(
        names.iter().filter(|name| **name == "progress").count() >= 2,
        "live progress reached lab-b: {names:?}"
    );
    assert!(names.contains(&"run_finished"), "{names:?}");
    assert_eq!(names.last(), Some(&"campaign_finished"), "{names:?}");
    let finished = &seen.last().expect("an event").1;
    assert_eq!(finished["status"], "done", "{finished}");
}

#[tokio::test]
async fn a_campaign_for_a_host_is_held_to_that_hosts_roots() {
    let cluster = Postgres::database();
    let (root_a, root_b) = (scratch(), scratch());
    let a = Lab::start(root_a.path(), &host(&cluster, "lab-a"));
    // lab-b may read a directory of its own that lab-a may not.
    let only_b = root_b.path().join("only-b");
    create_dataset(&only_b, "4M");
    let mut options = host(&cluster, "lab-b");
    options
        .extra
        .extend(["--allow-source".to_string(), only_b.display().to_string()]);
    let b = Lab::start(root_b.path(), &options);
    let spec = |runs_on: &str| {
        json!({
            "name": "roots",
            "host": runs_on,
            "source": {"paths": [only_b]},
            "target": {"kind": "null"},
            "tests": ["null_sink"],
            "params": {"block_size": "256K", "size": "4M"}
        })
    };
    // Here it is allowed; for lab-a, submitted here, it is refused by lab-a's roots.
    b.submit(&spec("lab-b")).await;
    let refused = b.post_json("/api/campaigns", &spec("lab-a")).await;
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.expect("JSON");
    let message = body["fields"]["source.paths[0]"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("outside the allowed roots")
            && message.contains(&a.data_dir.display().to_string()),
        "named by lab-a's roots: {body}"
    );
    // A host that is not on the database is named as such.
    let unknown = b.post_json("/api/campaigns", &quick("lab-z", 1)).await;
    assert_eq!(unknown.status(), 422);
    let body: Value = unknown.json().await.expect("JSON");
    let message = body["fields"]["host"].as_str().unwrap_or_default();
    assert!(
        message.contains("no lab host named 'lab-z'") && message.contains("lab-a"),
        "{body}"
    );
}

#[test]
fn a_second_lab_cannot_serve_under_a_name_already_serving() {
    let cluster = Postgres::database();
    let root = scratch();
    let _first = Lab::start(root.path(), &host(&cluster, "lab-a"));
    let out = serve_beside(&cluster, "lab-a", None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("a lab named 'lab-a' is already serving on this database"),
        "{stderr}"
    );
}

#[test]
fn a_lab_with_another_token_than_the_fleets_is_refused() {
    let cluster = Postgres::database();
    let root = scratch();
    let _first = Lab::start(
        root.path(),
        &LabOptions {
            token: Some("fleet-secret".into()),
            ..host(&cluster, "lab-a")
        },
    );
    for token in [Some("another-secret"), None] {
        let out = serve_beside(&cluster, "lab-b", token);
        assert!(!out.status.success(), "{token:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("lab host 'lab-a' on this database serves with another token"),
            "{token:?}: {stderr}"
        );
    }
}

#[tokio::test]
async fn a_cancel_on_one_host_stops_the_run_where_it_runs() {
    let (_cluster, _roots, a, b) = two_hosts();
    let spec = steady("cancelled elsewhere", 60, 100);
    let id = a.submit(&spec).await;
    a.wait_campaign(
        &id,
        "the run to be going on lab-a",
        Duration::from_secs(30),
        |c| c["runs"][0]["status"] == "running",
    )
    .await;
    b.cancel(&id).await;
    let campaign = b
        .wait_status(&id, &["cancelled"], Duration::from_secs(15))
        .await;
    let seconds = campaign["runs"][0]["result"]["seconds"]
        .as_f64()
        .unwrap_or(f64::MAX);
    assert!(seconds < 30.0, "stopped on lab-a, not run out: {campaign}");
}

/// The session of a lab's relay that came through `link` (other than session `ended`), as
/// the server sees it: its process id and the port it comes from.
async fn relay_session(
    server: &mut sqlx::PgConnection,
    link: &SilentLink,
    ended: Option<i32>,
) -> Result<(i32, u16), String> {
    let listening: Vec<(i32, Option<i32>)> = sqlx::query_as(
        "SELECT pid, client_port FROM pg_stat_activity
         WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
    )
    .fetch_all(&mut *server)
    .await
    .map_err(|error| error.to_string())?;
    let through = link.ports();
    listening
        .iter()
        .find_map(|&(pid, port)| {
            let port = u16::try_from(port?).ok()?;
            (through.contains(&port) && Some(pid) != ended).then_some((pid, port))
        })
        .ok_or_else(|| format!("listening: {listening:?}, through the link: {through:?}"))
}

#[tokio::test]
async fn a_relay_cut_silently_is_noticed_and_its_followers_catch_up() {
    use sqlx::Connection;
    let cluster = Postgres::database();
    let link = SilentLink::before(&cluster.url);
    let roots = [scratch(), scratch()];
    // lab-a reaches the database through the link, lab-b directly.
    let a = Lab::start(
        roots[0].path(),
        &LabOptions {
            db: Some(link.url.clone()),
            ..host(&cluster, "lab-a")
        },
    );
    let b = Lab::start(roots[1].path(), &host(&cluster, "lab-b"));
    let mut server = sqlx::PgConnection::connect(&cluster.url)
        .await
        .expect("the database, beside the labs");
    let (pid, port) = wait_until(
        "lab-a's relay to listen",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || relay_session(&mut server, &link, None).await,
    )
    .await;

    // A campaign running on lab-b, followed from lab-a.
    let id = b.submit(&steady("followed through a cut", 4, 100)).await;
    let mut events = a.events(&id).await;
    let (first, _) = events.next().await.expect("the stream").expect("an event");
    assert_eq!(first, "state");
    // lab-a's relay dies without a word: its server session ends (as its side of the link
    // closes, or by this termination, whichever comes first), and lab-a hears nothing.
    link.cut(port);
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .execute(&mut server)
        .await
        .expect("the relay's session is ended");
    // The follower on lab-a hears the campaign end, whether live or caught up.
    let mut seen = Vec::new();
    let followed = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(event) = events.next().await.expect("the stream") {
            let last = event.0 == "campaign_finished";
            seen.push(event);
            if last {
                return;
            }
        }
    })
    .await;
    assert!(followed.is_ok(), "no campaign_finished on lab-a: {seen:?}");
    let (_, finished) = seen.last().expect("an event");
    assert_eq!(finished["status"], "done", "{seen:?}");

    // lab-a listens again, and the events of the next campaign reach it live.
    wait_until(
        "lab-a's relay to listen again",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || relay_session(&mut server, &link, Some(pid)).await,
    )
    .await;
    let next = b.submit(&steady("after the cut", 4, 100)).await;
    let seen = a.follow(&next, Duration::from_secs(60)).await;
    let names: Vec<&str> = seen.iter().map(|(name, _)| name.as_str()).collect();
    assert!(
        names.contains(&"progress"),
        "live events reached lab-a: {names:?}"
    );
    assert_eq!(names.last(), Some(&"campaign_finished"), "{names:?}");
}
