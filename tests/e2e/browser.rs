//! The pages in a real headless Chromium: a campaign started from the form runs live to its
//! verdict, and the downloaded report opens with no network request at all.
//!
//! Needs Debian's `chromium` (installed by `.ci/run`); `BACKLAB_CHROMIUM` names another binary.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

use crate::support::fixtures::{create_dataset, scratch};
use crate::support::lab::{Lab, LabOptions};
use crate::support::wait::wait_until;

fn chromium() -> PathBuf {
    if let Ok(path) = std::env::var("BACKLAB_CHROMIUM") {
        return PathBuf::from(path);
    }
    for candidate in [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ] {
        if Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!(
        "no Chromium found: install Debian's `chromium` (as .ci/run does) or set BACKLAB_CHROMIUM"
    );
}

fn browser() -> Browser {
    browser_sized(1280, 1800)
}

/// Chromium with a window of `width` × `height` pixels.
fn browser_sized(width: u32, height: u32) -> Browser {
    let options = LaunchOptions::default_builder()
        .path(Some(chromium()))
        .headless(true)
        // The tests run as root in CI, where Chromium's sandbox cannot start.
        .sandbox(false)
        .window_size(Some((width, height)))
        .idle_browser_timeout(Duration::from_secs(300))
        .args(vec![
            OsStr::new("--disable-gpu"),
            OsStr::new("--disable-dev-shm-usage"),
        ])
        .build()
        .expect("launch options");
    Browser::new(options).expect("Chromium starts")
}

/// Runs JavaScript in the page and returns its value.
fn eval(tab: &Tab, script: &str) -> Value {
    tab.evaluate(script, false)
        .unwrap_or_else(|error| panic!("{script}: {error}"))
        .value
        .unwrap_or(Value::Null)
}

/// Waits until `script` evaluates to `true` in the page.
async fn wait_for(tab: &Tab, script: &str, timeout: Duration) {
    wait_until(
        script,
        timeout,
        Duration::from_millis(100),
        async || match eval(tab, script) {
            Value::Bool(true) => Ok(()),
            other => Err(other),
        },
    )
    .await;
}

/// Submits the new-campaign form and waits for the campaign's own page.
async fn submit_to_the_campaign_page(tab: &Tab) {
    tab.find_element("#submit")
        .expect("submit")
        .click()
        .expect("click submit");
    wait_for(
        tab,
        "/\\/campaigns\\/[A-Za-z0-9]{12}$/.test(location.pathname)",
        Duration::from_secs(20),
    )
    .await;
}

fn screenshots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

fn save_screenshot(tab: &Tab, name: &str) -> PathBuf {
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .expect("screenshot");
    let path = screenshots().join(name);
    std::fs::write(&path, png).expect("write screenshot");
    path
}

#[tokio::test]
async fn a_campaign_from_the_form_runs_live_to_its_verdict() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset(&lab.data_dir.join("e2e"), "32M");
    let browser = browser();
    let tab = browser.new_tab().expect("tab");

    tab.navigate_to(&lab.url("/campaigns/new"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("form opens");
    tab.find_element("a[data-preset=bottleneck]")
        .expect("preset link")
        .click()
        .expect("click preset");
    wait_for(
        &tab,
        "location.search === '?preset=bottleneck' && document.readyState === 'complete'",
        Duration::from_secs(10),
    )
    .await;
    let ticked = eval(
        &tab,
        "document.querySelectorAll('input[name=tests]:checked').length",
    );
    assert_eq!(ticked, 5, "the preset ticks the five tests");

    // Point the preset at the generated dataset, discard the output, keep runs short.
    eval(
        &tab,
        "const f = document.getElementById('campaign-form').elements;
         f.name.value = 'Browser end-to-end';
         f.source_paths.value = 'e2e';
         f.target_kind.value = 'null';
         f.size.value = '64M';
         f.duration_s.value = '10';
         f.repeat.value = '1';
         true",
    );
    submit_to_the_campaign_page(&tab).await;
    // A marker that a reload would wipe: the report must arrive in place.
    eval(&tab, "window.__stayed = true; true");
    wait_for(
        &tab,
        "document.getElementById('verdict') !== null",
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(
        eval(&tab, "window.__stayed === true"),
        true,
        "the page was reloaded"
    );

    let rows = eval(
        &tab,
        "document.querySelectorAll('#bottleneck-table tbody tr').length",
    );
    assert_eq!(rows, 5);
    let yes = eval(
        &tab,
        "Array.from(document.querySelectorAll('#bottleneck-table td.answer'))
           .filter(td => td.textContent.trim() === 'Yes').length",
    );
    // 64 MiB read once runs out long before its 10 s: no figure is valid, so no row says Yes,
    // every row says why, and the verdict says it is inconclusive and what to redo.
    assert_eq!(yes, 0, "an inconclusive verdict names no row");
    let invalid = eval(
        &tab,
        "Array.from(document.querySelectorAll('#bottleneck-table td.validity.invalid'))
           .filter(td => td.textContent.includes('data_smaller_than_run')).length",
    );
    assert_eq!(invalid, 5, "each row says why its figure is not valid");
    let verdict = eval(
        &tab,
        "document.querySelector('#verdict.inconclusive .verdict-text').textContent",
    );
    assert!(
        verdict
            .as_str()
            .is_some_and(|v| v.starts_with("Inconclusive")),
        "{verdict}"
    );
    let redo = eval(
        &tab,
        "Array.from(document.querySelectorAll('#verdict .recommendations li'))
           .filter(li => li.textContent.startsWith('Redo ')).length",
    );
    assert!(redo.as_u64().is_some_and(|n| n >= 1), "{redo}");
    assert_eq!(
        eval(&tab, "document.getElementById('status').textContent"),
        "done"
    );

    // Every chart image loaded and was drawn.
    wait_for(
        &tab,
        "Array.from(document.querySelectorAll('figure.chart img'))
           .every(img => img.complete && img.naturalWidth > 0)",
        Duration::from_secs(20),
    )
    .await;
    let charts = eval(&tab, "document.querySelectorAll('figure.chart img').length");
    assert!(charts.as_u64().unwrap_or(0) >= 2, "charts: {charts}");
    let shot = save_screenshot(&tab, "report.png");
    assert!(
        std::fs::metadata(&shot)
            .map(|m| m.len() > 10_000)
            .unwrap_or(false)
    );

    // The list shows it, with its verdict.
    tab.navigate_to(&lab.url("/"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("list opens");
    let listed = eval(
        &tab,
        "document.querySelector('table.list tbody tr td.name a').textContent",
    );
    assert_eq!(listed, "Browser end-to-end");
    save_screenshot(&tab, "list.png");
}

#[tokio::test]
async fn the_network_preset_runs_a_client_sweep_with_its_charts() {
    let lab = Lab::fresh(&LabOptions::default());
    let browser = browser();
    let tab = browser.new_tab().expect("tab");
    tab.navigate_to(&lab.url("/campaigns/new?preset=network"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("form opens");
    assert_eq!(
        eval(
            &tab,
            "Array.from(document.querySelectorAll('input[name=tests]:checked')).map(c => c.value).join()"
        ),
        "network_backup"
    );
    assert_eq!(
        eval(
            &tab,
            "document.querySelector('input[name=matrix_clients]').value"
        ),
        "6, 7, 8"
    );
    // Shorter runs: less data, two client counts, one block size.
    eval(
        &tab,
        "const f = document.getElementById('campaign-form').elements;
         f.generated_size.value = '96M';
         f.time_based.checked = false;
         f.repeat.value = '1';
         f.matrix_clients.value = '6, 8';
         f.matrix_block_size.value = '256K';
         true",
    );
    submit_to_the_campaign_page(&tab).await;
    wait_for(
        &tab,
        "document.getElementById('verdict') !== null",
        Duration::from_secs(180),
    )
    .await;
    wait_for(
        &tab,
        "Array.from(document.querySelectorAll('figure.chart img'))
           .every(img => img.complete && img.naturalWidth > 0)",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(
        eval(
            &tab,
            "/^(Best: |No point stands out: )/.test(document.getElementById('sweep-best').textContent)"
        ),
        true,
        "a sweep leads with its best point, or says none stands out"
    );
    for chart in ["chart-matrix", "chart-clients", "chart-heatmap"] {
        assert_eq!(
            eval(
                &tab,
                &format!("document.getElementById('{chart}') !== null")
            ),
            true,
            "{chart} on the report"
        );
    }
    let client_rows = eval(&tab, "document.querySelectorAll('tr.client-row').length");
    assert_eq!(
        client_rows,
        2 * 6 + 2 * 8,
        "one line per client of every run"
    );
    save_screenshot(&tab, "network-report.png");
    let report_url = eval(&tab, "location.href");
    let narrow = browser_sized(420, 1600);
    let phone = narrow.new_tab().expect("tab");
    phone
        .navigate_to(report_url.as_str().expect("the report's URL"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("report opens at 420 px");
    eval(
        &phone,
        "document.querySelectorAll('figure.chart img').forEach(i => i.loading = 'eager'); true",
    );
    wait_for(
        &phone,
        "Array.from(document.querySelectorAll('figure.chart img'))
           .every(img => img.complete && img.naturalWidth === 360 && img.clientWidth >= 360)",
        Duration::from_secs(20),
    )
    .await;
    save_screenshot(&phone, "network-report-420.png");

    // The agents page explains how to start one, with this lab's address.
    tab.navigate_to(&lab.url("/agents"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("agents page opens");
    save_screenshot(&tab, "agents-1400.png");
    let hint = eval(&tab, "document.querySelector('main code').textContent");
    assert!(
        hint.as_str()
            .is_some_and(|h| h.starts_with("backlab agent --server http://127.0.0.1:")),
        "{hint}"
    );
}

#[tokio::test]
async fn the_form_shows_each_error_next_to_its_field() {
    let lab = Lab::fresh(&LabOptions::default());
    let browser = browser();
    let tab = browser.new_tab().expect("tab");
    tab.navigate_to(&lab.url("/campaigns/new?preset=tuning"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("form opens");
    eval(
        &tab,
        "const f = document.getElementById('campaign-form').elements;
         f.source_paths.value = '../../etc';
         true",
    );
    tab.find_element("#submit")
        .expect("submit")
        .click()
        .expect("click");
    wait_for(
        &tab,
        "!document.getElementById('form-error').hidden",
        Duration::from_secs(10),
    )
    .await;
    let message = eval(
        &tab,
        "document.querySelector('[data-path=\"source.paths\"] .error').textContent",
    );
    assert!(
        message
            .as_str()
            .is_some_and(|m| m.contains("outside the allowed roots")),
        "{message}"
    );
    eval(
        &tab,
        "const g = document.getElementById('campaign-form').elements;
         g.source_paths.value = 'nothing';
         g.block_size.value = '6000';
         g.direct.checked = true;
         g.matrix_block_size.value = '64K, 100';
         true",
    );
    tab.find_element("#submit")
        .expect("submit")
        .click()
        .expect("click");
    wait_for(
        &tab,
        "document.querySelector('[data-path=\"matrix.block_size\"]').classList.contains('invalid')",
        Duration::from_secs(10),
    )
    .await;
    let block = eval(
        &tab,
        "document.querySelector('[data-path=\"params.block_size\"] .error').textContent",
    );
    assert!(
        block.as_str().is_some_and(|m| m.contains("4096")),
        "{block}"
    );
    save_screenshot(&tab, "form-errors.png");
    assert_eq!(
        eval(&tab, "location.pathname"),
        "/campaigns/new",
        "a refused campaign stays on the form"
    );
}

/// The form shows the fields of the chosen target kind, source kind and tests only, by CSS
/// alone (the page's script plays no part), and reads at 420 px.
#[tokio::test]
async fn the_form_shows_only_the_fields_of_the_chosen_target_and_tests() {
    let lab = Lab::fresh(&LabOptions::default());
    let browser = browser();
    let tab = browser.new_tab().expect("tab");
    tab.navigate_to(&lab.url("/campaigns/new?preset=bottleneck"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("form opens");
    let shown = |name: &str| {
        eval(
            &tab,
            &format!(
                "(() => {{ const e = document.querySelector('[name={name}]');
                   return e.offsetParent !== null && getComputedStyle(e.closest('label')).display !== 'none'; }})()"
            ),
        ) == Value::Bool(true)
    };
    let choose = |kind: &str| {
        eval(
            &tab,
            &format!("document.querySelector('[name=target_kind][value={kind}]').click(); true"),
        );
    };
    // The preset writes to emulated tape, from paths, without a network backup.
    assert!(shown("tape_model") && shown("tape_drives"));
    assert!(!shown("target_path"), "no path for tape");
    assert!(shown("source_paths") && !shown("generated_size"));
    assert!(
        !shown("clients") && !shown("matrix_clients"),
        "no network test"
    );
    assert!(shown("compress_ratio"), "the target write is ticked");
    choose("dir");
    assert!(!shown("tape_model") && !shown("tape_drives"));
    assert!(shown("target_path"));
    choose("null");
    assert!(!shown("tape_model"), "null: no tape");
    assert!(!shown("target_path"), "null: no path");
    eval(
        &tab,
        "const f = document.getElementById('campaign-form').elements;
         document.querySelector('[name=tests][value=network_backup]').checked = true;
         document.querySelector('[name=tests][value=tape_write]').checked = false;
         document.querySelector('[name=source_kind][value=generated]').checked = true;
         true",
    );
    assert!(shown("clients") && shown("link_mb_s") && shown("matrix_clients"));
    assert!(!shown("compress_ratio"), "no target write");
    assert!(shown("generated_size") && !shown("source_paths"));
    save_screenshot(&tab, "form-1400.png");

    let narrow = browser_sized(420, 1600);
    let tab = narrow.new_tab().expect("tab");
    tab.navigate_to(&lab.url("/campaigns/new"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("form opens");
    assert_eq!(
        eval(
            &tab,
            "document.documentElement.scrollWidth <= window.innerWidth"
        ),
        Value::Bool(true),
        "the form does not scroll sideways at 420 px"
    );
    save_screenshot(&tab, "form-420.png");
}

/// The form offers this lab's backup tools with their versions, shows the chosen tool's
/// parameters within their bounds, and a campaign with one runs the tool.
#[tokio::test]
async fn a_backup_tool_chosen_in_the_form_runs_with_its_parameters() {
    let lab = Lab::fresh(&LabOptions::default());
    create_dataset(&lab.data_dir.join("tooled"), "16M");
    let browser = browser();
    let tab = browser.new_tab().expect("tab");
    tab.navigate_to(&lab.url("/campaigns/new?preset=bottleneck"))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("form opens");
    let tools = lab.get_json("/api/tools").await;
    let version = tools["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == "tar-zstd"))
        .and_then(|tool| tool["version"].as_str())
        .unwrap_or_else(|| panic!("tar-zstd is on this machine: {tools}"))
        .to_string();
    let label = eval(
        &tab,
        "document.querySelector('[name=tool][value=tar-zstd]').closest('label').textContent",
    );
    assert!(
        label.as_str().is_some_and(|l| l.contains(&version)),
        "tar-zstd offered with its programs' versions ({version}): {label}"
    );
    assert_eq!(
        eval(
            &tab,
            "document.querySelectorAll('[name=tool]:checked').length"
        ),
        0,
        "none is chosen at first"
    );
    let tool_tests = eval(
        &tab,
        "['tool_ceiling', 'tool_backup', 'tool_incremental', 'tool_restore']
           .filter(t => document.querySelector(`[name=tests][value=${t}]`)).length",
    );
    assert_eq!(tool_tests, 4, "the four tool tests can be ticked");
    let level_shown = "(() => { const e = document.querySelector('[name=\"tool.tar-zstd.level\"]');
                          return e.offsetParent !== null; })()";
    assert_eq!(eval(&tab, level_shown), false, "no tool, no parameters");
    eval(
        &tab,
        "document.querySelector('[name=tool][value=tar-zstd]').click(); true",
    );
    assert_eq!(
        eval(&tab, level_shown),
        true,
        "the chosen tool's parameters"
    );
    assert_eq!(
        eval(
            &tab,
            "(() => { const e = document.querySelector('[name=\"tool.tar-zstd.level\"]');
               return [e.min, e.max, e.value].join(' '); })()"
        ),
        "1 19 3",
        "bounded as its definition says, at its default"
    );
    save_screenshot(&tab, "form-tool.png");
    eval(
        &tab,
        "const f = document.getElementById('campaign-form').elements;
         f.name.value = 'A tool from the form';
         f.source_paths.value = 'tooled';
         f.target_kind.value = 'null';
         f.repeat.value = '1';
         f['tool.tar-zstd.level'].value = '5';
         document.querySelectorAll('[name=tests]').forEach(t => t.checked = t.value === 'tool_backup');
         true",
    );
    submit_to_the_campaign_page(&tab).await;
    let path = eval(&tab, "location.pathname");
    let id = path
        .as_str()
        .and_then(|p| p.rsplit('/').next())
        .expect("the campaign's id")
        .to_string();
    let campaign = lab
        .wait_status(&id, &["done", "failed"], Duration::from_secs(120))
        .await;
    assert_eq!(
        campaign["spec"]["tool"],
        serde_json::json!({"name": "tar-zstd", "params": {"level": 5}}),
        "{campaign}"
    );
    let run = &campaign["runs"][0];
    assert_eq!(
        (&run["test"], &run["status"]),
        (&Value::from("tool_backup"), &Value::from("done")),
        "{run}"
    );
    assert_eq!(run["result"]["tool"]["version"], version.as_str(), "{run}");
}

/// While a campaign runs, its page draws the running run's MB/s as progress arrives, fetches
/// its charts again as each run finishes, and ends with the final report's charts.
#[tokio::test]
async fn the_live_chart_follows_a_run_and_the_charts_follow_the_campaign() {
    let lab = Lab::fresh(&LabOptions::default());
    let id = lab
        .submit(&serde_json::json!({
            "name": "live chart",
            "source": {"generated": {"size": "1G"}},
            "target": {"kind": "tape", "model": "lto-3"},
            "tests": ["tape_write"],
            // Long enough that a browser slow to start on a loaded machine still finds the
            // campaign running.
            "params": {"duration_s": 8, "time_based": true},
            "repeat": 2
        }))
        .await;
    let browser = browser();
    let tab = browser.new_tab().expect("tab");
    tab.navigate_to(&lab.url(&format!("/campaigns/{id}")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("report opens");
    let points = "(document.getElementById('live-line')?.getAttribute('points') || '')
                    .split(' ').filter(p => p).length";
    wait_for(&tab, &format!("{points} >= 3"), Duration::from_secs(30)).await;
    let first = eval(&tab, points).as_u64().unwrap_or(0);
    wait_for(
        &tab,
        &format!("{points} > {first}"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(
        eval(
            &tab,
            "document.getElementById('live-run').textContent.includes('Target write')"
        ),
        Value::Bool(true),
        "the run is named in words"
    );
    save_screenshot(&tab, "live-1400.png");
    let narrow = browser_sized(420, 1200);
    let phone = narrow.new_tab().expect("tab");
    phone
        .navigate_to(&lab.url(&format!("/campaigns/{id}")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("report opens at 420 px");
    wait_for(&phone, &format!("{points} >= 2"), Duration::from_secs(20)).await;
    save_screenshot(&phone, "live-420.png");
    drop(narrow);
    wait_for(
        &tab,
        "Array.from(document.querySelectorAll('figure.chart img')).some(i => i.src.includes('v=live-1'))",
        Duration::from_secs(30),
    )
    .await;
    wait_for(
        &tab,
        "document.getElementById('verdict') !== null",
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(
        eval(
            &tab,
            "Array.from(document.querySelectorAll('figure.chart img')).every(i => i.src.includes('v=done-2'))"
        ),
        Value::Bool(true),
        "the final report's charts are the final ones"
    );
    assert_eq!(
        eval(&tab, "document.getElementById('live-chart') === null"),
        Value::Bool(true),
        "the live view is gone"
    );
}

#[tokio::test]
async fn the_downloaded_report_opens_with_no_network_request() {
    let root = scratch();
    let lab = Lab::start(root.path(), &LabOptions::default());
    let id = lab
        .submit(&serde_json::json!({
            "name": "offline report",
            "source": {"generated": {"size": "16M"}},
            "target": {"kind": "null"},
            "tests": ["tape_write", "null_sink"]
        }))
        .await;
    lab.wait_status(&id, &["done"], Duration::from_secs(30))
        .await;
    let response = lab.get(&format!("/campaigns/{id}/report.html")).await;
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("content-disposition")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("attachment")),
    );
    let html = response.text().await.expect("html");
    for reference in ["src=", "<link", "<script", "url(", "href=\"/", "@import"] {
        assert!(
            !html.contains(reference),
            "the report refers out: {reference}"
        );
    }
    let file = root.path().join("report.html");
    std::fs::write(&file, &html).expect("save report");

    let browser = browser();
    let tab = browser.new_tab().expect("tab");
    tab.navigate_to(&format!("file://{}", file.display()))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("report opens");
    assert_eq!(
        eval(&tab, "performance.getEntriesByType('resource').length"),
        0
    );
    let svgs = eval(&tab, "document.querySelectorAll('figure.chart svg').length");
    assert!(svgs.as_u64().unwrap_or(0) >= 2, "inline charts: {svgs}");
    assert_eq!(
        eval(
            &tab,
            "document.querySelectorAll('#bottleneck-table tbody tr').length"
        ),
        2
    );
    let styled = eval(
        &tab,
        "getComputedStyle(document.querySelector('header.top')).display",
    );
    assert_eq!(styled, "flex", "the inline stylesheet applies");
    save_screenshot(&tab, "report-download.png");
}

#[tokio::test]
async fn the_report_page_cancels_reruns_and_deletes_and_reads_at_420_px() {
    let lab = Lab::fresh(&LabOptions::default());
    let long = lab
        .submit(&serde_json::json!({
            "name": "Cancel me",
            "source": {"generated": {"size": "8G"}},
            "target": {"kind": "tape", "model": "lto-3"},
            "tests": ["tape_write"],
            "params": {"duration_s": 60}
        }))
        .await;
    let short = lab
        .submit(&serde_json::json!({
            "name": "Rerun me",
            "source": {"generated": {"size": "64M"}},
            "target": {"kind": "null"},
            "tests": ["tape_write", "full_backup"],
            "params": {"duration_s": 2}
        }))
        .await;
    lab.wait_status(&long, &["running"], Duration::from_secs(60))
        .await;
    let browser = browser_sized(1400, 1000);
    let tab = browser.new_tab().expect("tab");

    // Cancel from the running campaign's page.
    tab.navigate_to(&lab.url(&format!("/campaigns/{long}")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("page opens");
    tab.find_element("#cancel")
        .expect("a Cancel button")
        .click()
        .expect("click Cancel");
    wait_for(
        &tab,
        "document.getElementById('status').textContent === 'cancelled'",
        Duration::from_secs(60),
    )
    .await;
    lab.wait_status(&long, &["cancelled"], Duration::from_secs(10))
        .await;

    // Rerun the finished one from its page; the rerun links back.
    lab.wait_status(&short, &["done"], Duration::from_secs(120))
        .await;
    tab.navigate_to(&lab.url(&format!("/campaigns/{short}")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("page opens");
    wait_for(
        &tab,
        "document.getElementById('stage-bar') !== null",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(
        eval(
            &tab,
            "Array.from(document.querySelectorAll('dl.spec dt')).some(dt => dt.textContent === 'Measured on')"
        ),
        true,
        "the report says where it was measured"
    );
    save_screenshot(&tab, "report-1400.png");
    tab.find_element("#rerun")
        .expect("a Rerun button")
        .click()
        .expect("click Rerun");
    let moved = format!(
        "/^\\/campaigns\\/[A-Za-z0-9]{{12}}$/.test(location.pathname) && \
         location.pathname !== '/campaigns/{short}'"
    );
    wait_for(&tab, &moved, Duration::from_secs(20)).await;
    let rerun = eval(&tab, "location.pathname.split('/').pop()");
    let rerun = rerun.as_str().expect("the rerun's id").to_string();
    assert_eq!(
        eval(
            &tab,
            &format!("document.querySelector('p.sub a[href=\"/campaigns/{short}\"]') !== null")
        ),
        true,
        "the rerun links to its original"
    );

    // Delete the rerun once it has finished: a confirmation page first.
    wait_for(
        &tab,
        "document.getElementById('verdict') !== null",
        Duration::from_secs(120),
    )
    .await;
    // Same spec: the rerun's report links to its original as the previous campaign, and the
    // link compares the two.
    tab.navigate_to(&lab.url(&format!("/campaigns/{rerun}")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("the rerun's report");
    tab.find_element("#previous a[href^=\"/compare\"]")
        .expect("a compare link to the previous campaign")
        .click()
        .expect("click compare");
    wait_for(
        &tab,
        "location.pathname === '/compare' && document.readyState === 'complete'",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(
        eval(
            &tab,
            "document.querySelector('table.compare tbody tr') !== null"
        ),
        true,
        "the two are compared row by row"
    );
    save_screenshot(&tab, "compare-1400.png");
    tab.navigate_to(&lab.url(&format!("/campaigns/{rerun}/plan?data=12T&window=8h")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("the planner's answer");
    assert_eq!(
        eval(&tab, "document.querySelector('.plan-answer') !== null"),
        true,
        "the planner answers"
    );
    save_screenshot(&tab, "plan-1400.png");
    tab.navigate_to(&lab.url(&format!("/campaigns/{rerun}")))
        .and_then(|tab| tab.wait_until_navigated())
        .expect("back to the rerun");
    tab.find_element("#delete")
        .expect("a Delete link")
        .click()
        .expect("click Delete");
    wait_for(
        &tab,
        "location.pathname.endsWith('/delete') && document.readyState === 'complete'",
        Duration::from_secs(10),
    )
    .await;
    save_screenshot(&tab, "delete-1400.png");
    tab.find_element("button.danger")
        .expect("the confirming button")
        .click()
        .expect("confirm");
    wait_for(
        &tab,
        "location.pathname === '/' && document.readyState === 'complete'",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(
        eval(
            &tab,
            &format!("document.querySelector('a[href=\"/campaigns/{rerun}\"]') === null")
        ),
        true,
        "the deleted rerun is gone from the list"
    );
    save_screenshot(&tab, "list-1400.png");
    assert_eq!(lab.get(&format!("/campaigns/{rerun}")).await.status(), 404);

    // At 420 px the report and the list read without sideways scrolling.
    let narrow = browser_sized(420, 900);
    let tab = narrow.new_tab().expect("tab");
    for (path, shot) in [
        (format!("/campaigns/{short}"), "report-420.png"),
        ("/".to_string(), "list-420.png"),
        (format!("/compare?a={short}"), "compare-420.png"),
        (format!("/campaigns/{short}/delete"), "delete-420.png"),
        (
            format!("/campaigns/{short}/plan?data=12T&window=8h"),
            "plan-420.png",
        ),
        ("/agents".to_string(), "agents-420.png"),
    ] {
        tab.navigate_to(&lab.url(&path))
            .and_then(|tab| tab.wait_until_navigated())
            .expect("page opens");
        wait_for(
            &tab,
            "document.readyState === 'complete'",
            Duration::from_secs(10),
        )
        .await;
        let overflow = eval(
            &tab,
            "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        );
        assert!(
            overflow.as_f64().is_some_and(|px| px <= 1.0),
            "{path} scrolls sideways by {overflow} px at 420 px"
        );
        if path == format!("/campaigns/{short}") {
            // Charts are drawn for the phone's width, so their text is not shrunk.
            eval(
                &tab,
                "document.querySelectorAll('figure.chart img').forEach(i => i.loading = 'eager'); true",
            );
            wait_for(
                &tab,
                "Array.from(document.querySelectorAll('figure.chart img'))
                   .every(i => i.complete && i.naturalWidth > 0)",
                Duration::from_secs(10),
            )
            .await;
            let charts = eval(
                &tab,
                "(() => { const all = Array.from(document.querySelectorAll('figure.chart img'));
                   const narrow = all.filter(i => i.currentSrc.includes('.narrow.svg')
                                               && i.naturalWidth === 360);
                   return narrow.length + ' of ' + all.length; })()",
            );
            let charts = charts.as_str().unwrap_or_default().to_string();
            let (narrow, all) = charts.split_once(" of ").unwrap_or(("0", "0"));
            assert!(
                all != "0" && narrow == all,
                "narrow charts at 420 px: {charts}"
            );
        }
        save_screenshot(&tab, shot);
    }
}
