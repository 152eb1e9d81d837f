//! Other tools' figures on a campaign's report: each beside the figure of the test that
//! measures the same thing, in a table and on one chart.

use crate::analysis::Verdict;
use crate::reference::Reference;

/// Width of the longest bar of the chart, in SVG units.
const BAR_WIDTH: f64 = 420.0;

/// A reference figure and backlab's beside it.
pub struct ReferenceRow {
    pub tool: String,
    pub job: String,
    pub conditions: String,
    pub mb_per_s: String,
    /// The backlab test that measures the same thing, and its figure; "–" when the campaign
    /// ran none.
    pub test: String,
    pub backlab: String,
    /// backlab's figure over the reference's, when both are known.
    pub ratio: String,
    /// Bar lengths on the chart.
    pub reference_bar: f64,
    pub backlab_bar: f64,
    /// The row's place on the chart (top of its pair of bars).
    pub y: f64,
}

/// The backlab test beside a reference: its label, its figure, whether that is valid.
type Beside<'a> = (&'a str, f64, bool);

/// The rows of `references`, each matched with the verdict's figure of its test.
pub fn rows(references: &[Reference], verdict: &Verdict) -> Vec<ReferenceRow> {
    let matched: Vec<(&Reference, Option<Beside>)> = references
        .iter()
        .map(|reference| {
            let figure = reference.workload.tests().iter().find_map(|test| {
                verdict
                    .rows
                    .iter()
                    .find(|row| row.test == *test)
                    .and_then(|row| {
                        Some((row.label.as_str(), row.mb_per_s?, row.valid == Some(true)))
                    })
            });
            (reference, figure)
        })
        .collect();
    let top = matched
        .iter()
        .flat_map(|(reference, figure)| [reference.mb_per_s, figure.map_or(0.0, |f| f.1)])
        .fold(1.0_f64, f64::max);
    matched
        .into_iter()
        .enumerate()
        .map(|(index, (reference, figure))| ReferenceRow {
            tool: reference.tool.clone(),
            job: reference.job.clone(),
            conditions: reference
                .conditions
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join(", "),
            mb_per_s: format!("{:.1}", reference.mb_per_s),
            test: figure.map_or("–".to_string(), |f| f.0.to_string()),
            // A figure resting on runs that are not valid says so here too.
            backlab: figure.map_or("–".to_string(), |f| {
                if f.2 {
                    format!("{:.1}", f.1)
                } else {
                    format!("{:.1} (not valid)", f.1)
                }
            }),
            ratio: figure
                .filter(|_| reference.mb_per_s > 0.0)
                .map_or("–".to_string(), |f| {
                    format!("{:.2}", f.1 / reference.mb_per_s)
                }),
            reference_bar: reference.mb_per_s / top * BAR_WIDTH,
            backlab_bar: figure.map_or(0.0, |f| f.1 / top * BAR_WIDTH),
            y: 10.0 + index as f64 * 56.0,
        })
        .collect()
}
