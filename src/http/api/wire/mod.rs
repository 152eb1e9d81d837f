//! What the API answers beyond a campaign's own documents (those are in `views`): each
//! answer a type of its own, built from the lab's types in one `From` each, and described to
//! the OpenAPI document by its derive (the small parts several answers share are in `small`). A rename inside the lab changes a conversion here, not
//! the JSON a client reads.

mod report;
mod schedules;
mod search;
mod series;
mod service;
mod small;
mod tools;

pub use report::BottleneckBody;
pub use schedules::{ScheduleBody, ScheduleListBody};
pub use search::SearchBody;
pub use series::{ReferenceBody, SeriesBody};
pub use service::{CancelledBody, HealthBody, HealthStatus, OpenApiBody};
pub use small::{HeadlineBody, PlanWarningBody, StatusBody};
pub use tools::ToolsBody;
