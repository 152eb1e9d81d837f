//! What the API takes that the spec's types do not describe, as the OpenAPI document shows
//! it: a schedule's bodies (the lab reads their spec as a campaign's), another tool's result
//! to import, and the shape of a live event. They only describe; the lab reads the bodies.

// Described, never built: the lab reads these bodies itself.
#![allow(dead_code)]

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::spec::CampaignSpec;
use crate::spec::schema::or_null;

/// A new schedule: a campaign spec and the times to queue it.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewSchedule)]
pub struct NewScheduleRequest {
    /// A name to recognise it by; unnamed, it goes by its spec's name, else by its pattern.
    #[schema(max_length = 200)]
    name: Option<String>,
    #[schema(schema_with = cron_schema)]
    cron: String,
    /// The campaign queued at each occurrence, checked as a campaign's is (its paths against
    /// the lab's roots, its durations against the lab's limits).
    spec: CampaignSpec,
    /// Kept without firing until resumed.
    #[serde(default)]
    #[schema(default = false)]
    paused: bool,
}

/// A change to a schedule: any of its name, pattern, spec and pause (`null` or left out:
/// unchanged).
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ScheduleChange)]
pub struct ScheduleChangeRequest {
    #[schema(max_length = 200)]
    name: Option<String>,
    #[schema(schema_with = cron_change_schema)]
    cron: Option<String>,
    spec: Option<CampaignSpec>,
    paused: Option<bool>,
}

/// A cron pattern as `schedule::Pattern` reads it: five fields (minute, hour, day of month,
/// month, day of week), each `*`, a value, a range or a list of them, with an optional step;
/// months and days may be named (`JAN`, `MON`). UTC. A pattern that never occurs (`0 0 31 2
/// *`) is refused too, which no pattern can say.
pub fn cron_pattern() -> String {
    fn field(value: &str) -> String {
        let item = format!("(?:\\*|(?:{value})(?:-(?:{value}))?)(?:/0*[1-9][0-9]{{0,2}})?");
        format!("{item}(?:,{item})*")
    }
    let minute = "0?[0-9]|[1-5][0-9]";
    let hour = "0?[0-9]|1[0-9]|2[0-3]";
    let day = "0?[1-9]|[12][0-9]|3[01]";
    let month = "0?[1-9]|1[0-2]|[Jj][Aa][Nn]|[Ff][Ee][Bb]|[Mm][Aa][Rr]|[Aa][Pp][Rr]|[Mm][Aa][Yy]|\
                 [Jj][Uu][Nn]|[Jj][Uu][Ll]|[Aa][Uu][Gg]|[Ss][Ee][Pp]|[Oo][Cc][Tt]|[Nn][Oo][Vv]|\
                 [Dd][Ee][Cc]";
    let weekday = "[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|\
                   [Ff][Rr][Ii]|[Ss][Aa][Tt]";
    let fields: Vec<String> = [minute, hour, day, month, weekday]
        .into_iter()
        .map(field)
        .collect();
    format!("^[ \\t]*{}[ \\t]*$", fields.join("[ \\t]+"))
}

pub(crate) fn cron_string() -> ObjectBuilder {
    ObjectBuilder::new()
        .min_length(Some(9))
        .max_length(Some(crate::lab::MAX_CRON_CHARS))
        .pattern(Some(cron_pattern()))
        .description(Some(
            "Five fields in UTC: minute hour day-of-month month day-of-week, e.g. `0 2 * * *` \
             for every night at 02:00; a pattern that never occurs is refused",
        ))
}

fn cron_schema() -> ObjectBuilder {
    cron_string().schema_type(Type::String)
}

fn cron_change_schema() -> ObjectBuilder {
    cron_string().schema_type(or_null(Type::String))
}

/// A tool's result to keep beside a campaign's figures: fio's `--output-format=json` with a
/// job that read or wrote at a rate from a byte per second to 10 TB/s, or iperf3's `-J` with
/// a received rate in that range.
pub struct ReferenceImport;

impl PartialSchema for ReferenceImport {
    fn schema() -> RefOr<Schema> {
        let import = |tool: &str, result: ObjectBuilder| {
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(
                    "tool",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some([tool])),
                )
                .property("result", result)
                .required("tool")
                .required("result")
                .additional_properties(Some(
                    utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
                ))
        };
        let number = |minimum: f64, maximum: f64| {
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .exclusive_minimum(Some(0.0))
                .minimum(Some(minimum))
                .maximum(Some(maximum))
        };
        let fio = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "fio version",
                ObjectBuilder::new().schema_type(Type::String),
            )
            .property(
                "jobs",
                ArrayBuilder::new().min_items(Some(1)).items(
                    ObjectBuilder::new()
                        .schema_type(Type::Object)
                        .description(Some(
                            "A job; at least one has `read.bw_bytes` or `write.bw_bytes` from 1 \
                         to 1e13 bytes per second",
                        )),
                ),
            )
            .required("fio version")
            .required("jobs");
        let iperf3 = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "end",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .property(
                        "sum_received",
                        ObjectBuilder::new()
                            .schema_type(Type::Object)
                            .property("bits_per_second", number(8.0, 8e13))
                            .required("bits_per_second"),
                    )
                    .required("sum_received"),
            )
            .required("end");
        OneOfBuilder::new()
            .item(import("fio", fio))
            .item(import("iperf3", iperf3))
            .description(Some(
                "`{\"tool\": \"fio\", \"result\": <fio --output-format=json>}` or \
                 `{\"tool\": \"iperf3\", \"result\": <iperf3 -J>}`",
            ))
            .into()
    }
}

impl ToSchema for ReferenceImport {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ReferenceImport")
    }
}

/// One event of a campaign's stream (`text/event-stream`): its name and its data.
#[derive(ToSchema)]
#[schema(as = CampaignEvent)]
pub struct EventBody {
    /// `state`, `run_started`, `progress`, `run_finished` or `campaign_finished`.
    event: String,
    /// The event as JSON; its `type` repeats the name.
    data: String,
}
