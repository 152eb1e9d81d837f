//! A campaign's report page, its self-contained download, and its charts.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use crate::http::AppState;
use crate::http::cache::CachedPage;
use crate::lab::{CampaignView, LabError};
use crate::views::charts::{Chart, Width};

use super::assets::STYLE;
use super::render::{HTML, SVG, error_page, html, internal, lab_error_page};
use crate::views::page::{
    self as views, CampaignPageView, CampaignShown, ChartsShown, SearchShown,
};

#[derive(Template)]
#[template(path = "campaign.html")]
pub(super) struct CampaignTemplate {
    standalone: bool,
    css: &'static str,
    c: CampaignPageView,
}

pub(super) async fn load(state: &AppState, id: &str) -> Result<CampaignView, LabError> {
    state.lab.campaigns().view(id).await
}

/// A question to the report's backup-window planner: `?data=12T&window=8h`.
#[derive(Deserialize)]
pub(super) struct PlanQuery {
    data: Option<String>,
    window: Option<String>,
}

pub(super) async fn campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
    request: HeaderMap,
) -> Response {
    // A kept page already lists its reruns (it is forgotten when one is queued or deleted):
    // served without a query.
    if let Some(kept) = state.pages.get(&id, "page") {
        return kept.respond(&request);
    }
    let reruns = match state.lab.campaigns().reruns(&id).await {
        Ok(reruns) => reruns,
        Err(error) => return lab_error_page(error),
    };
    let previous = match previous_campaign(&state, &id).await {
        Ok(previous) => previous,
        Err(error) => return lab_error_page(error),
    };
    let (series, series_changes) = match state.lab.series().changes_found_by(&id).await {
        Ok(found) => found,
        Err(error) => return lab_error_page(error),
    };
    let references = match state.lab.campaigns().references(&id).await {
        Ok(references) => references,
        Err(error) => return lab_error_page(error),
    };
    let needs_token = state.token.is_some();
    // A comparison with a campaign still running changes: such a page is not kept.
    let keep = previous
        .as_ref()
        .is_none_or(|previous| previous.campaign.status.is_final());
    serve_kept(&state, &id, "page", keep, &request, |view| {
        let mut c = views::campaign_page(&shown(view), false).map_err(|e| e.to_string())?;
        c.reruns = reruns;
        c.previous = previous.as_ref().map(|previous| {
            views::PreviousView::of(&previous.campaign.record.id, &previous.points, &view.points)
        });
        c.needs_token = needs_token;
        c.references = crate::views::page::references::rows(&references, &view.verdict);
        if c.is_final {
            c.series = series;
            c.series_changes = series_changes.words();
        }
        let body = (CampaignTemplate {
            standalone: false,
            css: "",
            c,
        })
        .render()
        .map_err(|e| e.to_string())?;
        Ok(CachedPage::new(body, HTML, None))
    })
    .await
}

#[derive(Template)]
#[template(path = "plan.html")]
pub(super) struct PlanTemplate {
    standalone: bool,
    css: &'static str,
    name: String,
    planner: views::PlannerView,
}

/// The planner's answer to a question (`?data=12T&window=8h`) about a finished campaign, on a
/// page of its own: the report it was asked from stays the kept one.
pub(super) async fn plan(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(plan): Query<PlanQuery>,
) -> Response {
    let view = match load(&state, &id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    if !view.campaign.status.is_final() {
        return error_page(
            StatusCode::CONFLICT,
            "Still running",
            "The planner answers from a finished campaign's figures; this one is still running.",
        );
    }
    let planner = views::PlannerView::of(
        &shown(&view),
        Some((
            plan.data.as_deref().unwrap_or_default(),
            plan.window.as_deref().unwrap_or_default(),
        )),
    );
    html(PlanTemplate {
        standalone: false,
        css: "",
        name: views::display_name(&view.campaign.record.name),
        planner,
    })
}

/// The campaign as its page is drawn from it.
fn shown(view: &CampaignView) -> CampaignShown<'_> {
    let (expected_by_run, plan_warnings) = view.expectation();
    CampaignShown {
        id: &view.campaign.record.id,
        name: &view.campaign.record.name,
        status: view.campaign.status.id(),
        is_final: view.campaign.status.is_final(),
        created: view.campaign.created(),
        host: view.campaign.record.host.as_deref(),
        rerun_of: view.campaign.record.rerun_of.as_deref(),
        spec: view.spec(),
        runs: crate::lab::run_views(&view.runs),
        points: &view.points,
        verdict: &view.verdict,
        provisional: view.provisional,
        survey: view.survey(),
        search: view.search.as_ref().map(|search| SearchShown {
            words: search.words(),
            sureness: &search.sureness,
            unexplored: &search.unexplored,
        }),
        expected_by_run,
        plan_warnings,
        expected: view.expected(),
        prices: &view.prices,
    }
}

/// The newest earlier campaign of the same spec, with its runs.
async fn previous_campaign(state: &AppState, id: &str) -> Result<Option<CampaignView>, LabError> {
    match state.lab.campaigns().previous_with_same_spec(id).await? {
        Some(previous) => Ok(Some(state.lab.campaigns().view(&previous).await?)),
        None => Ok(None),
    }
}

pub(super) async fn report_download(
    State(state): State<AppState>,
    Path(id): Path<String>,
    request: HeaderMap,
) -> Response {
    serve_kept(&state, &id, "report.html", true, &request, |view| {
        let c = views::campaign_page(&shown(view), true).map_err(|e| e.to_string())?;
        let body = (CampaignTemplate {
            standalone: true,
            css: STYLE,
            c,
        })
        .render()
        .map_err(|e| e.to_string())?;
        let disposition = HeaderValue::from_str(&format!(
            "attachment; filename=\"backlab-{}.html\"",
            view.campaign.record.id
        ))
        .ok();
        Ok(CachedPage::new(body, HTML, disposition))
    })
    .await
}

pub(super) async fn chart(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
    request: HeaderMap,
) -> Response {
    let Some((chart, width)) = Width::of_file(&file)
        .and_then(|(name, width)| Chart::from_id(name).map(|chart| (chart, width)))
    else {
        let names: Vec<&str> = Chart::ALL.into_iter().map(Chart::id).collect();
        return error_page(
            StatusCode::NOT_FOUND,
            "No such chart",
            &format!(
                "Charts are {}, each as NAME.svg (NAME.narrow.svg for a phone).",
                names.join(", ")
            ),
        );
    };
    serve_kept(&state, &id, &file, true, &request, |view| {
        let runs = crate::lab::run_views(&view.runs);
        let charts = ChartsShown {
            runs: &runs,
            points: &view.points,
            verdict: &view.verdict,
            unexplored: view
                .search
                .as_ref()
                .map_or(&[][..], |search| &search.unexplored),
        };
        let svg = views::render_chart(chart, &charts, width).map_err(|e| e.to_string())?;
        Ok(CachedPage::new(svg, SVG, None))
    })
    .await
}

/// Answers with `page` of a campaign: from the cache when the campaign has finished and the
/// page was rendered before; otherwise rendered by `make` from a fresh read, and kept (when
/// `keep` allows) once the campaign has finished and been judged (its data never changes
/// again; deleting it forgets the page).
async fn serve_kept(
    state: &AppState,
    id: &str,
    page: &str,
    keep: bool,
    request: &HeaderMap,
    make: impl FnOnce(&CampaignView) -> Result<CachedPage, String>,
) -> Response {
    if let Some(kept) = state.pages.get(id, page) {
        return kept.respond(request);
    }
    let view = match load(state, id).await {
        Ok(loaded) => loaded,
        Err(error) => return lab_error_page(error),
    };
    let rendered = match make(&view) {
        Ok(rendered) => rendered,
        Err(error) => return internal(&error),
    };
    // Final, and judged for good under today's rules: the judgement is kept once the survey
    // that the verdict may rest on has been taken, so a page rendered in between, or before
    // a judgement of older rules is judged again, is not kept.
    let judged = view
        .campaign
        .headline
        .as_ref()
        .is_some_and(|headline| headline.version == crate::analysis::JUDGEMENT_VERSION);
    if keep && view.campaign.status.is_final() && judged {
        state.pages.put(id, page, rendered).respond(request)
    } else {
        rendered.respond(request)
    }
}
