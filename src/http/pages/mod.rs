//! The browser side: server-rendered pages (askama), charts as SVG, static assets embedded in
//! the binary. Pages work without JavaScript, actions included (forms that POST); only the live
//! progress needs it. One module per
//! page group; `render` holds what they share.

mod actions;
mod agents;
mod assets;
mod campaign;
mod compare;
mod form;
mod list;
mod new;
mod render;
mod schedules;
mod series;

use axum::Router;
use axum::routing::{get, post};

use crate::http::AppState;

pub use render::not_found_page;

/// Every page route.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(list::index))
        .route(
            "/campaigns/new",
            get(new::new_form).post(new::create_from_form),
        )
        .route("/campaigns/{id}", get(campaign::campaign))
        .route("/campaigns/{id}/charts/{file}", get(campaign::chart))
        .route("/campaigns/{id}/plan", get(campaign::plan))
        .route("/campaigns/{id}/cancel", post(actions::cancel))
        .route("/campaigns/{id}/rerun", post(actions::rerun))
        .route(
            "/campaigns/{id}/delete",
            get(actions::confirm_delete).post(actions::delete),
        )
        .route(
            "/campaigns/{id}/report.html",
            get(campaign::report_download),
        )
        .route("/compare", get(compare::compare_page))
        .route("/agents", get(agents::agents_page))
        .route("/series/{key}", get(series::series_page))
        .route("/schedules", get(schedules::schedules_page))
        .route("/schedules/new", post(schedules::create))
        .route("/schedules/{id}/edit", post(schedules::edit))
        .route("/schedules/{id}/pause", post(schedules::pause))
        .route("/schedules/{id}/resume", post(schedules::resume))
        .route("/schedules/{id}/delete", post(schedules::delete))
        .route("/compare/chart.svg", get(compare::compare_chart))
        .route("/static/{file}", get(assets::asset))
}
