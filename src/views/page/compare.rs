//! Two campaigns side by side, as the compare page and its chart show them: each matched
//! point's figures, the change and whether it stands out of the noise, and what differs
//! between the two besides what was tuned.

use super::{display_name, distinct_params_lines, source_words, target_words};
use crate::analysis::points::Point;
use crate::spec::CampaignSpec;
use crate::views::compare::{self, Side, Tally};

/// One side of a comparison, as the page reads it.
pub struct CompareSide<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub spec: &'a CampaignSpec,
    pub points: &'a [Point],
    /// The host it was measured on, when its survey says.
    pub host: Option<&'a str>,
}

/// The comparison of two campaigns.
pub struct ComparisonView {
    /// What differs between the two besides what was tuned.
    pub differences: Vec<String>,
    pub a_id: String,
    pub a_name: String,
    pub b_id: String,
    pub b_name: String,
    pub rows: Vec<CompareRow>,
    pub chart_url: String,
}

/// One matched point of a comparison.
pub struct CompareRow {
    /// `changed better`, `changed worse`, or empty.
    pub class: &'static str,
    pub test: String,
    pub params: String,
    pub a: String,
    pub b: String,
    pub delta: String,
    pub spread: String,
}

impl ComparisonView {
    /// A compared with B.
    pub fn of(a: &CompareSide<'_>, b: &CompareSide<'_>) -> Self {
        let rows = compare::rows(a.points, b.points);
        let params = params_lines(&rows);
        ComparisonView {
            differences: differences(a, b),
            a_name: display_name(a.name),
            b_name: display_name(b.name),
            a_id: a.id.to_string(),
            b_id: b.id.to_string(),
            rows: rows
                .iter()
                .zip(params)
                .map(|(row, params)| compare_row(row, params))
                .collect(),
            chart_url: format!("/compare/chart.svg?a={}&b={}", a.id, b.id),
        }
    }
}

fn compare_row(row: &compare::Row, params: String) -> CompareRow {
    CompareRow {
        class: match row.direction() {
            Some("better") => "changed better",
            Some(_) => "changed worse",
            None => "",
        },
        test: row.test.label().to_string(),
        params,
        a: side_words(row.a, row.a_tally),
        b: side_words(row.b, row.b_tally),
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
    }
}

/// A side's figure: its median, its runs' range, how many are valid, and whether it is.
fn side_words(side: Option<Side>, tally: Option<Tally>) -> String {
    side.map_or_else(
        || "–".to_string(),
        |side| {
            let s = side.stat;
            let range = if s.runs > 1 {
                format!(" ({:.1}–{:.1})", s.min, s.max)
            } else {
                String::new()
            };
            let tally = tally.map_or_else(String::new, |tally| tally.words());
            let figure = format!("{:.1}{range} {tally}", s.median);
            if side.valid {
                figure
            } else {
                format!("{figure}, not valid")
            }
        },
    )
}

/// The comparison chart's rows: each matched point's label and its two medians.
pub fn chart_rows(a: &[Point], b: &[Point]) -> Vec<(String, Option<f64>, Option<f64>)> {
    let rows = compare::rows(a, b);
    let params = params_lines(&rows);
    rows.iter()
        .zip(params)
        .map(|(row, params)| {
            (
                format!("{} · {params}", row.test.label()),
                row.a.map(|s| s.stat.median),
                row.b.map(|s| s.stat.median),
            )
        })
        .collect()
}

/// What differs between two campaigns besides what was tuned, in plain words: a change in
/// their figures may come from these.
fn differences(a: &CompareSide<'_>, b: &CompareSide<'_>) -> Vec<String> {
    let mut differences = Vec::new();
    let (a_target, b_target) = (target_words(a.spec), target_words(b.spec));
    if a_target != b_target {
        differences.push(format!(
            "The targets differ: A wrote to {a_target}, B to {b_target}. A change may be the \
             target's."
        ));
    }
    let (a_source, b_source) = (source_words(a.spec), source_words(b.spec));
    if a_source != b_source {
        differences.push(format!(
            "The sources differ: A read {a_source}, B {b_source}. A change may be the source's."
        ));
    }
    if let (Some(a_host), Some(b_host)) = (a.host, b.host)
        && a_host != b_host
    {
        differences.push(format!(
            "They were measured on different hosts: A on {a_host}, B on {b_host}."
        ));
    }
    differences
}

/// Each row's parameters, with what tells it apart from a row that would read the same.
fn params_lines(rows: &[compare::Row]) -> Vec<String> {
    distinct_params_lines(
        &rows
            .iter()
            .map(|row| (row.test, &row.params))
            .collect::<Vec<_>>(),
    )
}
