//! A series' requests to the bucket: each tool's requests per GiB backed up, campaign by
//! campaign, as each campaign's verdict kept it (`ToolLine::requests_per_gib`), and the changes
//! in it. A bill follows its requests, so a tool upgrade that doubles them is a change the
//! watch raises as it raises a slower backup.
//!
//! Counts barely vary from one campaign to the next on the same data (the same files give the
//! same packs), so the rule is plain: a change is where at least
//! [`MIN_CAMPAIGNS_EACH_SIDE`] campaigns after it each differ from the median of those before
//! it by more than [`REQUEST_CHANGE_PCT`], all the same way, while every campaign before it
//! stood within that share of their median.

use serde::Serialize;

use super::MIN_CAMPAIGNS_EACH_SIDE;
use crate::analysis::tools::ToolLine;

/// The least a tool's requests per GiB must move for a change, in percent of the median
/// before it.
pub const REQUEST_CHANGE_PCT: f64 = 20.0;

/// One campaign's requests per GiB for a tool.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RequestPoint {
    pub campaign: String,
    /// The campaign's place in the series, from 1.
    pub number: usize,
    pub requests_per_gib: f64,
    /// The tool's version in that campaign, as it printed it.
    pub version: Option<String>,
}

/// A change in a tool's requests to the bucket per GiB backed up.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RequestChange {
    /// The tool, with its parameters.
    pub tool: String,
    /// The first campaign after the change, and its place in the series (from 1).
    pub first_campaign: String,
    pub first_number: usize,
    /// Medians of the campaigns before (since the previous change) and after (up to the
    /// next).
    pub before_per_gib: f64,
    pub after_per_gib: f64,
    pub change_pct: f64,
    pub campaigns_before: usize,
    pub campaigns_after: usize,
    /// The tool's version in the last campaign before the change and the first after.
    pub tool_before: Option<String>,
    pub tool_after: Option<String>,
}

impl RequestChange {
    /// "more" or "fewer".
    pub fn direction(&self) -> &'static str {
        if self.after_per_gib > self.before_per_gib {
            "more"
        } else {
            "fewer"
        }
    }

    /// The change in one sentence.
    pub fn words(&self) -> String {
        let upgrade = match (&self.tool_before, &self.tool_after) {
            (Some(before), Some(after)) if before != after => {
                format!("; the tool changed with it, from {before} to {after}")
            }
            _ => String::new(),
        };
        format!(
            "{}'s requests to the bucket per GiB backed up became {:.0} % {} from campaign {} on: \
             {:.1} → {:.1} ({} campaigns before, {} after, each beyond {:.0} % of the median \
             before){upgrade}; its bill follows them",
            self.tool,
            self.change_pct.abs(),
            self.direction(),
            self.first_number,
            self.before_per_gib,
            self.after_per_gib,
            self.campaigns_before,
            self.campaigns_after,
            REQUEST_CHANGE_PCT,
        )
    }
}

/// One tool's requests per GiB over the series, and the changes in them.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RequestLine {
    pub tool: String,
    pub points: Vec<RequestPoint>,
    pub changes: Vec<RequestChange>,
}

/// Each tool's line, in the order the tools first appear, from the series' campaigns (each
/// its id and its verdict's tool lines, oldest first): every campaign whose verdict kept
/// requests per GiB for it.
pub fn request_lines<'a>(
    campaigns: impl IntoIterator<Item = (&'a str, &'a [ToolLine])>,
) -> Vec<RequestLine> {
    let mut lines: Vec<RequestLine> = Vec::new();
    for (index, (id, tools)) in campaigns.into_iter().enumerate() {
        for tool in tools {
            let Some(requests_per_gib) = tool.requests_per_gib else {
                continue;
            };
            let point = RequestPoint {
                campaign: id.to_string(),
                number: index + 1,
                requests_per_gib,
                version: tool.version.clone(),
            };
            match lines.iter_mut().find(|line| line.tool == tool.label) {
                Some(line) => line.points.push(point),
                None => lines.push(RequestLine {
                    tool: tool.label.clone(),
                    points: vec![point],
                    changes: Vec::new(),
                }),
            }
        }
    }
    for line in &mut lines {
        line.changes = changes(&line.tool, &line.points);
    }
    lines
}

/// The changes in one tool's points, oldest first.
fn changes(tool: &str, points: &[RequestPoint]) -> Vec<RequestChange> {
    let each = MIN_CAMPAIGNS_EACH_SIDE;
    let values: Vec<f64> = points.iter().map(|point| point.requests_per_gib).collect();
    let mut starts = vec![0];
    let mut at = each;
    while at + each <= values.len() {
        let start = starts.last().copied().unwrap_or(0);
        if changed_at(&values[start..at], &values[at..at + each]) {
            starts.push(at);
            at += each;
        } else {
            at += 1;
        }
    }
    starts.push(values.len());
    starts
        .windows(3)
        .map(|bounds| {
            let (start, first, end) = (bounds[0], bounds[1], bounds[2]);
            let before = median(&values[start..first]);
            let after = median(&values[first..end]);
            RequestChange {
                tool: tool.to_string(),
                first_campaign: points[first].campaign.clone(),
                first_number: points[first].number,
                before_per_gib: before,
                after_per_gib: after,
                change_pct: (after - before) / before * 100.0,
                campaigns_before: first - start,
                campaigns_after: end - first,
                tool_before: points[first - 1].version.clone(),
                tool_after: points[first].version.clone(),
            }
        })
        .collect()
}

/// Whether `after` changed from `before`: every one of `after` beyond the share of the
/// median of `before`, the same way, and every one of `before` within it.
fn changed_at(before: &[f64], after: &[f64]) -> bool {
    let median = median(before);
    if median <= 0.0 {
        return false;
    }
    let share = |value: f64| (value - median) / median * 100.0;
    let steady = before
        .iter()
        .all(|value| share(*value).abs() <= REQUEST_CHANGE_PCT);
    let up = after.iter().all(|value| share(*value) > REQUEST_CHANGE_PCT);
    let down = after
        .iter()
        .all(|value| share(*value) < -REQUEST_CHANGE_PCT);
    steady && (up || down)
}

/// The median of `values`, in any order ([`crate::noise::median`] takes them sorted).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    crate::noise::median(&sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(values: &[(f64, &str)]) -> Vec<RequestPoint> {
        values
            .iter()
            .enumerate()
            .map(|(index, (value, version))| RequestPoint {
                campaign: format!("c{}", index + 1),
                number: index + 1,
                requests_per_gib: *value,
                version: Some((*version).to_string()),
            })
            .collect()
    }

    /// An upgrade that doubles the requests is one change, named with the versions, its
    /// medians those of each side.
    #[test]
    fn an_upgrade_that_doubles_the_requests_is_a_change() {
        let found = changes(
            "restic",
            &points(&[
                (400.0, "0.14"),
                (410.0, "0.14"),
                (405.0, "0.14"),
                (400.0, "0.14"),
                (820.0, "0.16"),
                (800.0, "0.16"),
                (810.0, "0.16"),
            ]),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let change = &found[0];
        assert_eq!(change.first_number, 5);
        assert_eq!(change.before_per_gib, 402.5);
        assert_eq!(change.after_per_gib, 810.0);
        assert_eq!((change.campaigns_before, change.campaigns_after), (4, 3));
        assert_eq!(
            change.words(),
            "restic's requests to the bucket per GiB backed up became 101 % more from campaign 5 \
             on: 402.5 → 810.0 (4 campaigns before, 3 after, each beyond 20 % of the median \
             before); the tool changed with it, from 0.14 to 0.16; its bill follows them"
        );
    }

    /// One campaign out of line is no change, nor is a drift within the share, nor a change
    /// with fewer than three campaigns after it.
    #[test]
    fn an_outlier_a_drift_or_too_few_campaigns_after_is_no_change() {
        let outlier = points(&[
            (400.0, "a"),
            (400.0, "a"),
            (400.0, "a"),
            (900.0, "a"),
            (400.0, "a"),
            (400.0, "a"),
        ]);
        assert!(changes("t", &outlier).is_empty());
        let drift = points(&[
            (400.0, "a"),
            (420.0, "a"),
            (440.0, "a"),
            (460.0, "a"),
            (470.0, "a"),
            (475.0, "a"),
        ]);
        assert!(changes("t", &drift).is_empty());
        let late = points(&[
            (400.0, "a"),
            (400.0, "a"),
            (400.0, "a"),
            (800.0, "b"),
            (800.0, "b"),
        ]);
        assert!(changes("t", &late).is_empty());
    }

    /// Two changes in a row are both found, each against the campaigns since the last.
    #[test]
    fn a_change_and_its_return_are_both_found() {
        let found = changes(
            "t",
            &points(&[
                (400.0, "a"),
                (400.0, "a"),
                (400.0, "a"),
                (200.0, "b"),
                (200.0, "b"),
                (200.0, "b"),
                (400.0, "c"),
                (400.0, "c"),
                (400.0, "c"),
            ]),
        );
        let firsts: Vec<usize> = found.iter().map(|change| change.first_number).collect();
        assert_eq!(firsts, [4, 7]);
        assert_eq!(found[0].direction(), "fewer");
        assert_eq!(found[1].direction(), "more");
        assert_eq!(found[1].before_per_gib, 200.0);
    }
}
