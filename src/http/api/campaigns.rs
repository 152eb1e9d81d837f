//! `/api/campaigns`: submit, list, read, cancel, rerun and delete campaigns, and read their
//! verdicts and CSV.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::views::{CampaignBody, CampaignListBody, PlannedBody, SubmittedBody};
use super::wire::{BottleneckBody, CancelledBody};
use crate::http::AppState;
use crate::http::error::{ApiError, ErrorBody};
use crate::spec::CampaignSpec;
use crate::store::RunState;
use crate::views::report;

/// Adds this resource's routes.
pub(super) fn routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router
        .routes(routes!(create_campaign, list_campaigns))
        .routes(routes!(get_campaign, delete_campaign))
        .routes(routes!(get_bottleneck))
        .routes(routes!(get_results_csv))
        .routes(routes!(get_tools_csv))
        .routes(routes!(get_life_csv))
        .routes(routes!(get_requests_csv))
        .routes(routes!(get_bills_csv))
        .routes(routes!(cancel_campaign))
        .routes(routes!(rerun_campaign))
}

/// Queues a campaign. The body is a campaign spec. The answer says how long the campaign is
/// expected to take (`expected_s`) and names each value that cannot give a valid run
/// (`warnings`: the field and what it needs); with `?dry_run=true` nothing is queued and the
/// answer is the plan.
#[utoipa::path(
    post, path = "/api/campaigns", tag = "campaigns",
    params(CreateQuery),
    request_body(content = CampaignSpec, description = "A campaign spec", content_type = "application/json"),
    responses(
        (status = 200, description = "A dry run: the plan, its expected duration and its warnings; nothing queued", body = PlannedBody),
        (status = 201, description = "Queued; `Location` names the campaign", body = SubmittedBody,
            headers(("Location" = String, description = "The campaign's API path")),
            links(
                ("get" = (operation_id = "get_campaign", parameters(("id" = "$response.body#/id")))),
                ("bottleneck" = (operation_id = "get_bottleneck", parameters(("id" = "$response.body#/id")))),
                ("results" = (operation_id = "get_results_csv", parameters(("id" = "$response.body#/id")))),
                ("cancel" = (operation_id = "cancel_campaign", parameters(("id" = "$response.body#/id")))),
                ("rerun" = (operation_id = "rerun_campaign", parameters(("id" = "$response.body#/id")))),
                ("delete" = (operation_id = "delete_campaign", parameters(("id" = "$response.body#/id")))),
            )),
        (status = 400, description = "The body is not JSON (or not UTF-8)", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 403, description = "A path outside the allowed roots", body = ErrorBody),
        (status = 413, description = "Body larger than 1 MiB", body = ErrorBody),
        (status = 422, description = "Every bad field at once: wrong types, unknown fields or values, rules and limits", body = ErrorBody),
        (status = 429, description = "The queue holds as many runs as it may", body = ErrorBody),
    )
)]
async fn create_campaign(
    State(state): State<AppState>,
    query: Result<Query<CreateQuery>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let body = body?;
    if query.dry_run == Some(true) {
        let planned = state.lab.campaigns().check(&body).await?;
        return Ok((StatusCode::OK, Json(PlannedBody::from(&planned))).into_response());
    }
    let submitted = state.lab.campaigns().submit(&body).await?;
    created(submitted)
}

/// Query of a submission.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct CreateQuery {
    /// Check and plan the campaign, queueing nothing: the answer (200) is the plan, how long
    /// it would take and what in it cannot give a valid run.
    dry_run: Option<bool>,
}

fn created(submitted: crate::lab::Submitted) -> Result<Response, ApiError> {
    let location = format!("/api/campaigns/{}", submitted.id);
    let mut response = (StatusCode::CREATED, Json(SubmittedBody::from(&submitted))).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// Query of the campaign list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only campaigns in this status: queued, running, done, failed, cancelled, interrupted.
    #[param(pattern = "^(queued|running|done|failed|cancelled|interrupted)?$")]
    status: Option<String>,
    /// At most this many (1 to 200, default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<u32>,
    /// Only campaigns older than this campaign id (the `next_before` of the previous page);
    /// empty is the same as left out. An id of no campaign is refused (422).
    #[param(pattern = "^([A-Za-z0-9]{12})?$")]
    before: Option<String>,
}

/// Campaigns, newest first, in pages.
#[utoipa::path(
    get, path = "/api/campaigns", tag = "campaigns", params(ListQuery),
    responses(
        (status = 200, description = "A page of campaigns", body = CampaignListBody),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 422, description = "Unknown status or `before`", body = ErrorBody),
    )
)]
async fn list_campaigns(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let status = match query.status.as_deref() {
        None | Some("") => None,
        Some(text) => Some(text.parse::<RunState>().map_err(|message| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("status: {message}"),
            )
            .with_field("status", message)
        })?),
    };
    let limit = super::page::page_limit(query.limit)?;
    let page = state
        .lab
        .campaigns()
        .list(
            status,
            query.before.as_deref().filter(|before| !before.is_empty()),
            limit,
        )
        .await?;
    let kept: Vec<(&str, &str)> = query
        .status
        .as_deref()
        .filter(|status| !status.is_empty())
        .map(|status| ("status", status))
        .into_iter()
        .collect();
    Ok(super::page::link_next(
        Json(CampaignListBody::from(&page)).into_response(),
        "/api/campaigns",
        &kept,
        limit,
        "before",
        page.next_before.as_deref(),
    ))
}

/// One campaign with its spec and runs (results included once finished).
#[utoipa::path(
    get, path = "/api/campaigns/{id}", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "The campaign", body = CampaignBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state.lab.campaigns().view(&id).await?;
    Ok(Json(CampaignBody::from(&view)).into_response())
}

/// Deletes a campaign and its results; refused while one of its runs executes.
#[utoipa::path(
    delete, path = "/api/campaigns/{id}", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
        (status = 409, description = "The campaign is running", body = ErrorBody),
    )
)]
async fn delete_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.delete(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The bottleneck verdict with the runs it rests on: the document `backlab run --json` prints.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/bottleneck", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "Campaign, runs and the `bottleneck` verdict", body = BottleneckBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_bottleneck(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let report = state.lab.campaigns().report(&id).await?;
    Ok(Json(BottleneckBody::from(&report)).into_response())
}

/// One row per run, every figure a column.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/results.csv", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_results_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state.lab.campaigns().view(&id).await?;
    let runs = crate::lab::run_views(&view.runs);
    let csv = report::runs_csv(&view.campaign.record.id, &runs, &view.points);
    super::csv_download(csv, &format!("backlab-{}.csv", view.campaign.record.id))
}

/// The backup tools the campaign compared, one line per tool (and parameters), as the
/// report's table gives them; empty for a campaign that ran no tool.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/tools.csv", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_tools_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state.lab.campaigns().view(&id).await?;
    let csv = report::tools_csv(&view.campaign.record.id, &view.verdict.tools);
    super::csv_download(
        csv,
        &format!("backlab-{}-tools.csv", view.campaign.record.id),
    )
}

/// The backups' lives the campaign ran, a row per night and command (`backup`, `retention`,
/// `check`, `check_data`) and per verified restore; empty for a campaign that ran none.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/life.csv", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_life_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state.lab.campaigns().view(&id).await?;
    let runs = crate::lab::run_views(&view.runs);
    let csv = crate::views::life::life_csv(&view.campaign.record.id, &runs);
    super::csv_download(
        csv,
        &format!("backlab-{}-life.csv", view.campaign.record.id),
    )
}

/// The requests the campaign's runs made of buckets (a tool's repository, counted by the lab's
/// relay; the lab's own S3 target tests, by its client): a row per run and S3 operation
/// (`PutObject`, `ListObjectsV2`, …) with its answers and bytes; empty for a campaign that
/// used no bucket.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/requests.csv", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_requests_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state.lab.campaigns().view(&id).await?;
    let runs = crate::lab::run_views(&view.runs);
    let csv = crate::views::requests::requests_csv(&view.campaign.record.id, &runs);
    super::csv_download(
        csv,
        &format!("backlab-{}-requests.csv", view.campaign.record.id),
    )
}

/// What each run's use of a bucket would cost by each price sheet: a row per run, sheet and
/// class of request, with the sheet's date, the class's requests and cost, and the run's
/// storage a month and full restore by that sheet; empty for a campaign that kept no
/// repository in a bucket.
#[utoipa::path(
    get, path = "/api/campaigns/{id}/bills.csv", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn get_bills_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state.lab.campaigns().view(&id).await?;
    let runs = crate::lab::run_views(&view.runs);
    let bills = crate::analysis::bill::run_bills(
        &view.prices,
        runs.iter()
            .filter_map(|run| Some((run.number, run.result?))),
    );
    let csv = crate::views::requests::bills_csv(&view.campaign.record.id, &bills, &view.prices);
    super::csv_download(
        csv,
        &format!("backlab-{}-bills.csv", view.campaign.record.id),
    )
}

/// Cancels the queued runs and stops the running one (within a second; its files are removed).
#[utoipa::path(
    post, path = "/api/campaigns/{id}/cancel", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 202, description = "Cancelling; the answer gives the status now", body = CancelledBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
    )
)]
async fn cancel_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let status = state.lab.campaigns().cancel(&id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(CancelledBody {
            id: &id,
            status: status.into(),
        }),
    )
        .into_response())
}

/// Queues a new campaign with the same spec, linked to this one by `rerun_of`.
#[utoipa::path(
    post, path = "/api/campaigns/{id}/rerun", tag = "campaigns",
    params(("id" = String, Path, description = "Campaign id: 12 letters and digits")),
    responses(
        (status = 201, description = "Queued", body = SubmittedBody,
            headers(("Location" = String, description = "The new campaign's API path")),
            links(
                ("get" = (operation_id = "get_campaign", parameters(("id" = "$response.body#/id")))),
                ("bottleneck" = (operation_id = "get_bottleneck", parameters(("id" = "$response.body#/id")))),
                ("results" = (operation_id = "get_results_csv", parameters(("id" = "$response.body#/id")))),
                ("cancel" = (operation_id = "cancel_campaign", parameters(("id" = "$response.body#/id")))),
                ("rerun" = (operation_id = "rerun_campaign", parameters(("id" = "$response.body#/id")))),
                ("delete" = (operation_id = "delete_campaign", parameters(("id" = "$response.body#/id")))),
            )),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 403, description = "A path outside the allowed roots now", body = ErrorBody),
        (status = 404, description = "No such campaign", body = ErrorBody),
        (status = 422, description = "The spec no longer passes the checks", body = ErrorBody),
        (status = 429, description = "The queue holds as many runs as it may", body = ErrorBody),
    )
)]
async fn rerun_campaign(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    created(state.rerun(&id).await?)
}
