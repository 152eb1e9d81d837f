//! The commands that talk to a running lab over its REST API: `backlab submit` and
//! `backlab import`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use crate::duration::format_duration;

#[derive(Args)]
pub(super) struct SubmitArgs {
    /// The campaign spec, as `POST /api/campaigns` takes it.
    file: PathBuf,
    /// Explore the spec's matrix fully, or adaptively (the points that decide the best).
    #[arg(long, value_enum)]
    search: Option<SearchFlag>,
    /// Most runs an adaptive search may queue (40 % of the full sweep's when not given).
    #[arg(long)]
    budget_runs: Option<u32>,
    /// Where an adaptive search starts.
    #[arg(long)]
    seed: Option<u64>,
    /// Wait until the campaign ends and print its answer.
    #[arg(long)]
    wait: bool,
    /// How long `--wait` waits (`90s`, `20m`, `2h`, or seconds) before it gives up, exiting
    /// with status 3 and where to follow the campaign, which goes on [default: twice the
    /// longest the lab expects the campaign to take, plus 10 minutes].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// The lab's URL.
    #[arg(long, env = "BACKLAB_SERVER", default_value = "http://127.0.0.1:8080")]
    lab: String,
    /// The lab's token, when it has one.
    #[arg(long, env = "BACKLAB_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SearchFlag {
    Full,
    Adaptive,
}

#[derive(Args)]
pub(super) struct ImportArgs {
    /// Which tool's output the file is.
    #[arg(value_enum)]
    tool: ImportTool,
    /// The tool's JSON output.
    file: PathBuf,
    /// The campaign to keep it beside.
    #[arg(long)]
    campaign: String,
    /// The lab's URL.
    #[arg(long, env = "BACKLAB_SERVER", default_value = "http://127.0.0.1:8080")]
    lab: String,
    /// The lab's token, when it has one.
    #[arg(long, env = "BACKLAB_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ImportTool {
    Fio,
    Iperf3,
}

/// `backlab import`: reads the tool's output, checks it here, and posts it to the lab.
pub(super) fn import(args: ImportArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("backlab import: {message}");
        ExitCode::FAILURE
    };
    let text = match std::fs::read_to_string(&args.file) {
        Ok(text) => text,
        Err(error) => return fail(format!("cannot read {}: {error}", args.file.display())),
    };
    let result: serde_json::Value = match serde_json::from_str(&text) {
        Ok(result) => result,
        Err(error) => return fail(format!("{} is not JSON: {error}", args.file.display())),
    };
    let (tool, name) = match args.tool {
        ImportTool::Fio => (crate::reference::Tool::Fio, "fio"),
        ImportTool::Iperf3 => (crate::reference::Tool::Iperf3, "iperf3"),
    };
    if let Err(error) = crate::reference::read(tool, &result) {
        return fail(format!("{}: {error}", args.file.display()));
    }
    let url = format!(
        "{}/api/campaigns/{}/references",
        args.lab.trim_end_matches('/'),
        args.campaign
    );
    let body = serde_json::json!({ "tool": name, "result": result });
    let answer = match LabClient::new(args.token.clone()).post(&url, &body) {
        Ok(answer) => answer,
        Err(message) => return fail(message),
    };
    let references: Vec<crate::reference::Reference> =
        serde_json::from_str(&answer).unwrap_or_default();
    println!(
        "kept beside campaign {}: {} reference figure(s); {}/campaigns/{} shows them",
        args.campaign,
        references.len(),
        args.lab.trim_end_matches('/'),
        args.campaign
    );
    ExitCode::SUCCESS
}

/// The spec of `args.file` with the search the flags ask for set on its matrix.
fn submitted_spec(args: &SubmitArgs) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|error| format!("cannot read {}: {error}", args.file.display()))?;
    let mut spec: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| format!("{} is not JSON: {error}", args.file.display()))?;
    let searching = args.search.is_some() || args.budget_runs.is_some() || args.seed.is_some();
    if searching {
        let Some(matrix) = spec.get_mut("matrix").and_then(|m| m.as_object_mut()) else {
            return Err(format!(
                "{} has no matrix to search: --search, --budget-runs and --seed explore one",
                args.file.display()
            ));
        };
        let search = matrix
            .entry("search")
            .or_insert_with(|| serde_json::json!({}));
        let Some(search) = search.as_object_mut() else {
            return Err("matrix.search must be an object".to_string());
        };
        if let Some(strategy) = args.search {
            let name = match strategy {
                SearchFlag::Full => "full",
                SearchFlag::Adaptive => "adaptive",
            };
            search.insert("strategy".into(), name.into());
        }
        if let Some(budget) = args.budget_runs {
            search.insert("budget_runs".into(), budget.into());
        }
        if let Some(seed) = args.seed {
            search.insert("seed".into(), seed.into());
        }
    }
    Ok(spec)
}

pub(super) fn submit(args: SubmitArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("backlab submit: {message}");
        ExitCode::FAILURE
    };
    let spec = match submitted_spec(&args) {
        Ok(spec) => spec,
        Err(message) => return fail(message),
    };
    let lab = args.lab.trim_end_matches('/').to_string();
    let client = LabClient::new(args.token.clone());
    let answer = match client.post(&format!("{lab}/api/campaigns"), &spec) {
        Ok(answer) => answer,
        Err(message) => return fail(message),
    };
    let submitted: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
    let id = submitted["id"].as_str().unwrap_or_default().to_string();
    println!("queued campaign {id}: {lab}/campaigns/{id}");
    if !args.wait {
        return ExitCode::SUCCESS;
    }
    let url = format!("{lab}/api/campaigns/{id}");
    let timeout = args
        .timeout
        .unwrap_or_else(|| default_timeout(submitted["longest_s"].as_f64()));
    // A timeout past what the clock can count is no deadline.
    let deadline = Instant::now().checked_add(timeout);
    loop {
        let left = deadline.map_or(POLL_EVERY, |deadline| {
            deadline.saturating_duration_since(Instant::now())
        });
        if left.is_zero() {
            eprintln!(
                "backlab submit: campaign {id} is still running after {} (the lab goes on \
                 with it); follow it at {lab}/campaigns/{id} (live events: \
                 {lab}/api/campaigns/{id}/events)",
                format_duration(timeout.as_secs_f64())
            );
            return ExitCode::from(EXIT_STILL_RUNNING);
        }
        std::thread::sleep(left.min(POLL_EVERY));
        let campaign: serde_json::Value = match client.get(&url) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_default(),
            Err(message) => return fail(message),
        };
        let status = campaign["status"].as_str().unwrap_or_default();
        if !["done", "failed", "cancelled"].contains(&status) {
            continue;
        }
        println!("campaign {id} {status}");
        if let Some(search) = campaign.get("search") {
            println!(
                "search: {} of {} points, {} of the full sweep's {} runs; stopped: {}",
                search["points_run"],
                search["points_total"],
                search["runs"],
                search["full_runs"],
                search["why"].as_str().unwrap_or("-")
            );
            println!("{}", search["sureness"].as_str().unwrap_or(""));
        }
        return if status == "done" {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
}

/// Exit status of `submit --wait` when its timeout passed with the campaign still running.
const EXIT_STILL_RUNNING: u8 = 3;

/// How often `submit --wait` asks the lab how the campaign stands.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// What `submit --wait` adds to twice the campaign's longest expected time when no
/// `--timeout` is given: the runs queued before it and its judgement take time too.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(600);

/// How long `submit --wait` waits when no `--timeout` is given: twice the longest the lab
/// expects the campaign to take (its answer's `longest_s`), plus [`TIMEOUT_MARGIN`]; a lab
/// that did not say gets an hour.
fn default_timeout(longest_s: Option<f64>) -> Duration {
    match longest_s
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds * 2.0).ok())
    {
        Some(twice) => twice.saturating_add(TIMEOUT_MARGIN),
        None => Duration::from_secs(3600),
    }
}

/// `--timeout`: seconds, or a number with `s`, `m` or `h`; more than zero.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let (number, unit) = match trimmed.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => trimmed.split_at(at),
        None => (trimmed, "s"),
    };
    let scale = match unit.trim() {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "'{text}' is not a duration: give 90s, 20m, 2h or seconds"
            ));
        }
    };
    let seconds = number
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
        .ok_or_else(|| format!("'{text}' is not a duration: give 90s, 20m, 2h or seconds"))?;
    Duration::try_from_secs_f64(seconds * scale)
        .map_err(|_| format!("'{text}' is longer than a wait can be"))
}

/// The commands' way to a lab's API: one agent, the token on every request, and any answer
/// but a success turned into the message a command prints.
struct LabClient {
    agent: ureq::Agent,
    token: Option<String>,
}

impl LabClient {
    fn new(token: Option<String>) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .new_agent();
        Self { agent, token }
    }

    /// The body of the answer to a GET of `url`, or why there is none.
    fn get(&self, url: &str) -> Result<String, String> {
        let mut request = self.agent.get(url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        Self::answer(url, request.call())
    }

    /// The body of the answer to `body` posted as JSON to `url`, or why there is none.
    fn post(&self, url: &str, body: &serde_json::Value) -> Result<String, String> {
        let mut request = self.agent.post(url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        Self::answer(url, request.send_json(body))
    }

    fn answer(
        url: &str,
        sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<String, String> {
        let mut response = sent.map_err(|error| format!("{url}: {error}"))?;
        let status = response.status();
        let answer = response.body_mut().read_to_string().unwrap_or_default();
        if status.is_success() {
            Ok(answer)
        } else {
            Err(format!("{url} answered {status}: {answer}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_seconds_or_a_number_with_its_unit() {
        assert_eq!(parse_timeout("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_timeout("20m"), Ok(Duration::from_secs(1200)));
        assert_eq!(parse_timeout("1.5h"), Ok(Duration::from_secs(5400)));
        for refused in ["", "soon", "0", "-5m", "10d", "NaN"] {
            assert!(parse_timeout(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn the_default_timeout_is_twice_the_longest_expected_plus_a_margin() {
        assert_eq!(default_timeout(Some(60.0)), Duration::from_secs(720));
        assert_eq!(default_timeout(None), Duration::from_secs(3600));
        assert_eq!(default_timeout(Some(f64::NAN)), Duration::from_secs(3600));
    }
}
