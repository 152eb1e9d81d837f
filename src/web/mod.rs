//! The browser side: server-rendered pages (askama), charts as SVG, static assets embedded in
//! the binary (no CDN: labs often sit on isolated networks). Pages work without JavaScript;
//! only the live progress needs it.

mod form;
mod views;

use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::charts;
use crate::compare;
use crate::lab::{CampaignView, LabError};
use crate::matrix;
use crate::spec::TestKind;
use crate::store::RunState;

use super::server::AppState;
use super::server::error::ApiError;
use form::{CampaignForm, PRESETS};
use views::{CampaignPageView, display_name, params_line};

const STYLE: &str = include_str!("../../static/style.css");
const LIVE_JS: &str = include_str!("../../static/live.js");
const NEW_JS: &str = include_str!("../../static/new.js");
/// Campaigns per page of the list.
const PAGE_SIZE: u32 = 25;

/// Every page route.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/campaigns/new", get(new_form).post(create_from_form))
        .route("/campaigns/{id}", get(campaign))
        .route("/campaigns/{id}/charts/{file}", get(chart))
        .route("/campaigns/{id}/report.html", get(report_download))
        .route("/compare", get(compare_page))
        .route("/agents", get(agents_page))
        .route("/compare/chart.svg", get(compare_chart))
        .route("/static/{file}", get(asset))
}

/// The HTML answer to a path no route knows.
pub fn not_found_page(path: &str) -> Response {
    error_page(
        StatusCode::NOT_FOUND,
        "Page not found",
        &format!("There is no page at {path}."),
    )
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexTemplate {
    standalone: bool,
    css: &'static str,
    rows: Vec<ListRow>,
    status: String,
    status_options: Vec<String>,
    next_before: Option<String>,
    paged: bool,
    demo_dir: String,
    demo_ready: bool,
}

struct ListRow {
    id: String,
    name: String,
    status: String,
    runs: String,
    created: String,
    tests: String,
    best: String,
    verdict: String,
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    before: Option<String>,
}

async fn index(State(state): State<AppState>, Query(query): Query<ListQuery>) -> Response {
    let status_text = query.status.unwrap_or_default();
    let status = if status_text.is_empty() {
        None
    } else {
        match RunState::from_id(&status_text) {
            Some(status) => Some(status),
            None => {
                return error_page(
                    StatusCode::BAD_REQUEST,
                    "Unknown status",
                    &format!("There is no campaign status {status_text:?}."),
                );
            }
        }
    };
    let before = query.before.filter(|b| !b.is_empty());
    let page = match state.lab.list(status, before.as_deref(), PAGE_SIZE).await {
        Ok(page) => page,
        Err(error) => return lab_error_page(error),
    };
    let mut rows = Vec::with_capacity(page.campaigns.len());
    for summary in &page.campaigns {
        let verdict = if summary.status.is_final() {
            match state.lab.report(&summary.id).await {
                Ok(report) => shorten(&report.bottleneck.verdict, 160),
                Err(_) => String::new(),
            }
        } else {
            String::new()
        };
        rows.push(ListRow {
            id: summary.id.clone(),
            name: display_name(&summary.name),
            status: summary.status.id().to_string(),
            runs: format!("{} of {} runs", summary.runs_finished, summary.runs_total),
            created: summary
                .created
                .replace('T', " ")
                .trim_end_matches('Z')
                .chars()
                .take(16)
                .collect(),
            tests: summary.tests.join(", "),
            best: summary
                .best_mb_per_s
                .map_or_else(|| "–".to_string(), |v| format!("{v:.1} MB/s")),
            verdict,
        });
    }
    let demo = state.lab.policy.base_dir.join(super::server::DEMO_DIR);
    html(IndexTemplate {
        standalone: false,
        css: "",
        rows,
        status: status_text,
        status_options: RunState::ALL.iter().map(|s| s.id().to_string()).collect(),
        next_before: page.next_before,
        paged: before.is_some(),
        demo_ready: demo.is_dir(),
        demo_dir: demo.display().to_string(),
    })
}

#[derive(Template)]
#[template(path = "new.html")]
struct NewTemplate {
    standalone: bool,
    css: &'static str,
    form: CampaignForm,
    presets: Vec<(&'static str, &'static str)>,
    tests: Vec<(&'static str, &'static str)>,
    tape_models: Vec<(&'static str, String)>,
    error: Option<String>,
    needs_token: bool,
}

#[derive(Deserialize)]
struct NewQuery {
    preset: Option<String>,
}

fn new_page(form: CampaignForm, error: Option<String>, needs_token: bool) -> NewTemplate {
    NewTemplate {
        needs_token,
        standalone: false,
        css: "",
        form,
        presets: PRESETS.to_vec(),
        tests: TestKind::ALL.iter().map(|t| (t.id(), t.label())).collect(),
        tape_models: crate::spec::TAPE_MODELS
            .iter()
            .map(|m| {
                (
                    m.id,
                    format!(
                        "{} ({} MB/s native, {}:1)",
                        m.name, m.native_mb_s, m.max_compression
                    ),
                )
            })
            .collect(),
        error,
    }
}

async fn new_form(State(state): State<AppState>, Query(query): Query<NewQuery>) -> Response {
    html(new_page(
        CampaignForm::preset(query.preset.as_deref().unwrap_or("bottleneck")),
        None,
        state.token.is_some(),
    ))
}

/// The form posted without JavaScript: the same spec and checks as the API.
async fn create_from_form(State(state): State<AppState>, body: Bytes) -> Response {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let mut form = CampaignForm::from_pairs(&pairs);
    if let Some(token) = state.token.as_deref() {
        let given = pairs
            .iter()
            .find(|(key, _)| key == "token")
            .map_or("", |(_, value)| value.as_str());
        if !super::server::auth::same_secret(given.as_bytes(), token.as_bytes()) {
            let message = if given.is_empty() {
                "this lab requires its token to start a campaign"
            } else {
                "the token is not valid for this lab"
            };
            form.errors.insert("token".into(), message.into());
            let mut response = html(new_page(form, Some(message.to_string()), true));
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            return response;
        }
    }
    let spec = form.to_spec().to_string();
    match state.lab.submit(spec.as_bytes()).await {
        Ok(submitted) => Redirect::to(&submitted.url).into_response(),
        Err(error) => {
            let api = ApiError::from(error);
            form.set_errors(api.fields());
            let needs_token = state.token.is_some();
            let mut response = html(new_page(form, Some(api.message().to_string()), needs_token));
            *response.status_mut() = api.status();
            response
        }
    }
}

#[derive(Template)]
#[template(path = "campaign.html")]
struct CampaignTemplate {
    standalone: bool,
    css: &'static str,
    c: CampaignPageView,
}

async fn load(
    state: &AppState,
    id: &str,
) -> Result<(CampaignView, crate::analysis::Verdict), LabError> {
    state.lab.campaign_with_verdict(id).await
}

async fn campaign(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let (view, verdict) = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    match views::campaign_page(&view, &verdict, false) {
        Ok(c) => html(CampaignTemplate {
            standalone: false,
            css: "",
            c,
        }),
        Err(error) => internal(&error.to_string()),
    }
}

async fn report_download(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let (view, verdict) = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    match views::campaign_page(&view, &verdict, true) {
        Ok(c) => {
            let mut response = html(CampaignTemplate {
                standalone: true,
                css: STYLE,
                c,
            });
            if let Ok(value) = HeaderValue::from_str(&format!(
                "attachment; filename=\"backlab-{}.html\"",
                view.campaign.id
            )) {
                response
                    .headers_mut()
                    .insert(header::CONTENT_DISPOSITION, value);
            }
            response
        }
        Err(error) => internal(&error.to_string()),
    }
}

async fn chart(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
) -> Response {
    let Some(name) = file
        .strip_suffix(".svg")
        .filter(|name| charts::NAMES.contains(name))
    else {
        return error_page(
            StatusCode::NOT_FOUND,
            "No such chart",
            &format!("Charts are {}, each as NAME.svg.", charts::NAMES.join(", ")),
        );
    };
    let (view, verdict) = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    let points = matrix::points(&view.runs);
    match views::render_chart(name, &view.runs, &verdict, &points) {
        Ok(svg) => svg_response(svg),
        Err(error) => internal(&error.to_string()),
    }
}

fn svg_response(svg: String) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("image/svg+xml"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        svg,
    )
        .into_response()
}

#[derive(Template)]
#[template(path = "compare.html")]
struct CompareTemplate {
    standalone: bool,
    css: &'static str,
    choices: Vec<(String, String)>,
    a_id: String,
    b_id: String,
    comparison: Option<ComparisonView>,
}

struct ComparisonView {
    a_id: String,
    a_name: String,
    b_id: String,
    b_name: String,
    rows: Vec<CompareRow>,
    chart_url: String,
}

struct CompareRow {
    class: &'static str,
    test: String,
    params: String,
    a: String,
    b: String,
    delta: String,
    spread: String,
}

#[derive(Deserialize)]
struct CompareQuery {
    a: Option<String>,
    b: Option<String>,
}

async fn compare_page(
    State(state): State<AppState>,
    Query(query): Query<CompareQuery>,
) -> Response {
    let choices = match state.lab.list(None, None, 200).await {
        Ok(page) => page
            .campaigns
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    format!(
                        "{} ({}, {})",
                        display_name(&c.name),
                        c.id,
                        c.created.chars().take(16).collect::<String>()
                    ),
                )
            })
            .collect(),
        Err(error) => return lab_error_page(error),
    };
    let a_id = query.a.unwrap_or_default();
    let b_id = query.b.unwrap_or_default();
    let mut comparison = None;
    if !a_id.is_empty() && !b_id.is_empty() {
        let (a, b) = match load_pair(&state, &a_id, &b_id).await {
            Ok(pair) => pair,
            Err(error) => return lab_error_page(error),
        };
        let rows = compare::rows(&a.runs, &b.runs);
        let fmt = |side: Option<compare::Side>| {
            side.map_or_else(
                || "–".to_string(),
                |side| {
                    let s = side.stat;
                    let figure = if s.runs > 1 {
                        format!(
                            "{:.1} ({:.1}–{:.1}, {} runs)",
                            s.median, s.min, s.max, s.runs
                        )
                    } else {
                        format!("{:.1}", s.median)
                    };
                    if side.valid {
                        figure
                    } else {
                        format!("{figure} not valid")
                    }
                },
            )
        };
        comparison = Some(ComparisonView {
            a_name: display_name(&a.campaign.name),
            b_name: display_name(&b.campaign.name),
            a_id: a.campaign.id.clone(),
            b_id: b.campaign.id.clone(),
            rows: rows
                .iter()
                .map(|row| CompareRow {
                    class: if row.changed() { "changed" } else { "" },
                    test: row.test.label().to_string(),
                    params: params_line(&row.params),
                    a: fmt(row.a),
                    b: fmt(row.b),
                    delta: row
                        .delta_pct()
                        .map_or_else(|| "–".to_string(), |d| format!("{d:+.1} %")),
                    spread: match (row.caveat(), row.spread_pct()) {
                        (Some(caveat), _) => caveat.to_string(),
                        (None, Some(spread)) => match row.p_value() {
                            Some(p) => format!("±{spread:.1} % (p = {p:.2})"),
                            None => format!("±{spread:.1} %"),
                        },
                        (None, None) => "–".to_string(),
                    },
                })
                .collect(),
            chart_url: format!("/compare/chart.svg?a={}&b={}", a.campaign.id, b.campaign.id),
        });
    }
    html(CompareTemplate {
        standalone: false,
        css: "",
        choices,
        a_id,
        b_id,
        comparison,
    })
}

/// The two campaigns of a comparison.
async fn load_pair(
    state: &AppState,
    a: &str,
    b: &str,
) -> Result<(CampaignView, CampaignView), LabError> {
    Ok((state.lab.campaign(a).await?, state.lab.campaign(b).await?))
}

async fn compare_chart(
    State(state): State<AppState>,
    Query(query): Query<CompareQuery>,
) -> Response {
    let (Some(a_id), Some(b_id)) = (query.a, query.b) else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "Two campaigns needed",
            "Give both a and b.",
        );
    };
    let (a, b) = match load_pair(&state, &a_id, &b_id).await {
        Ok(pair) => pair,
        Err(error) => return lab_error_page(error),
    };
    let rows: Vec<(String, Option<f64>, Option<f64>)> = compare::rows(&a.runs, &b.runs)
        .iter()
        .map(|row| {
            (
                format!("{} · {}", row.test.label(), params_line(&row.params)),
                row.a.map(|s| s.stat.median),
                row.b.map(|s| s.stat.median),
            )
        })
        .collect();
    match charts::compare_chart(&rows) {
        Ok(svg) => svg_response(svg),
        Err(error) => internal(&error.to_string()),
    }
}

async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "style.css" => (STYLE, "text/css; charset=utf-8"),
        "live.js" => (LIVE_JS, "text/javascript; charset=utf-8"),
        "new.js" => (NEW_JS, "text/javascript; charset=utf-8"),
        _ => return not_found_page(&format!("/static/{file}")),
    };
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(kind))],
        body,
    )
        .into_response()
}

#[derive(Template)]
#[template(path = "agents.html")]
struct AgentsTemplate {
    standalone: bool,
    css: &'static str,
    server: String,
    needs_token: bool,
    data_port: u16,
    agents: Vec<AgentRow>,
}

struct AgentRow {
    name: String,
    state: &'static str,
    state_class: &'static str,
    host: String,
    sources: String,
    version: String,
    connections: u32,
    last_seen: String,
}

/// The agents the lab knows and how to start one.
async fn agents_page(State(state): State<AppState>, headers: axum::http::HeaderMap) -> Response {
    let body = crate::server::routes::agents_body(&state);
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("LAB:8080");
    let agents = body
        .agents
        .iter()
        .map(|agent| {
            let (state, state_class) = match (agent.connected, agent.busy) {
                (true, true) => ("sending", "running"),
                (true, false) => ("connected", "done"),
                (false, _) => ("disconnected", "failed"),
            };
            AgentRow {
                name: agent.name.clone(),
                state,
                state_class,
                host: agent.host.clone(),
                sources: if agent.sources.is_empty() {
                    "generated data only".to_string()
                } else {
                    agent
                        .sources
                        .iter()
                        .map(|path| path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                version: agent.version.clone(),
                connections: agent.connections,
                last_seen: crate::lab::format_ms(agent.last_seen_ms),
            }
        })
        .collect();
    html(AgentsTemplate {
        standalone: false,
        css: STYLE,
        server: format!("http://{host}"),
        needs_token: state.token.is_some(),
        data_port: body.data_port,
        agents,
    })
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorTemplate {
    standalone: bool,
    css: &'static str,
    title: String,
    message: String,
}

fn error_page(status: StatusCode, title: &str, message: &str) -> Response {
    let mut response = html(ErrorTemplate {
        standalone: false,
        css: "",
        title: title.to_string(),
        message: message.to_string(),
    });
    *response.status_mut() = status;
    response
}

fn lab_error_page(error: LabError) -> Response {
    let api = ApiError::from(error);
    let title = match api.status() {
        StatusCode::NOT_FOUND => "Campaign not found",
        status if status.is_client_error() => "The request cannot be served",
        _ => "Something went wrong",
    };
    error_page(api.status(), title, api.message())
}

fn internal(message: &str) -> Response {
    tracing::error!(%message, "page failed");
    error_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        message,
    )
}

fn html<T: Template>(template: T) -> Response {
    match template.render() {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            )],
            body,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(%error, "template failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("page failed: {error}"),
            )
                .into_response()
        }
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{}…", cut.trim_end())
}
