//! The commands that talk to a running lab over its REST API: `backlab submit` and
//! `backlab import`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

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
    loop {
        std::thread::sleep(Duration::from_secs(1));
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
