//! The backup-window planner on a report, and the link to the earlier campaign of the same
//! spec with how the figure changed.

use super::*;
use crate::analysis::planner;

/// The backup-window planner: the question as the form shows it, and the answer.
pub struct PlannerView {
    /// The campaign the planner answers from.
    pub campaign_id: String,
    /// The data size and the window as the form shows them.
    pub data: String,
    pub window: String,
    /// The answer, when the question could be read.
    pub answer: Option<Plan>,
    /// Why the question cannot be answered: a size or window that cannot be read.
    pub errors: Vec<String>,
}

impl PlannerView {
    /// The planner for `asked` (data and window as typed), or, when nothing was asked, for the
    /// campaign's own source size in an 8-hour window.
    pub fn of(view: &CampaignShown<'_>, asked: Option<(&str, &str)>) -> Self {
        let verdict = view.verdict;
        let source_bytes = view
            .survey
            .map(|survey| survey.source_bytes)
            .filter(|bytes| *bytes > 0)
            .or_else(|| {
                let generated = view.spec.source.generated.as_ref()?;
                Some(generated.size.bytes())
            });
        let (data, window) = match asked {
            Some((data, window)) => (data.trim().to_string(), window.trim().to_string()),
            // As the form reads sizes back: a whole number of units (`256M`), else bytes.
            None => (
                source_bytes.map_or_else(String::new, |bytes| {
                    let size = format_size(bytes);
                    if size.contains('.') {
                        bytes.to_string()
                    } else {
                        size
                    }
                }),
                "8h".to_string(),
            ),
        };
        let campaign_id = view.id.to_string();
        // The planner's own question is asked only when its answer is a rate a person plans
        // by; a small source in 8 hours needs next to nothing, so the form asks instead.
        let data = match (asked, PlanQuestion::parse(&data, &window)) {
            (None, Ok(question)) if question.needed_mb_s() < planner::DEFAULT_QUESTION_MIN_MB_S => {
                String::new()
            }
            _ => data,
        };
        if data.is_empty() {
            return Self {
                campaign_id,
                data,
                window,
                answer: None,
                errors: Vec::new(),
            };
        }
        match PlanQuestion::parse(&data, &window) {
            Ok(question) => {
                let runs: Vec<&RunResult> = view.runs.iter().filter_map(|run| run.result).collect();
                Self {
                    campaign_id,
                    answer: Some(planner::plan(
                        question,
                        verdict,
                        view.points,
                        &runs,
                        view.survey,
                    )),
                    data,
                    window,
                    errors: Vec::new(),
                }
            }
            Err(errors) => Self {
                campaign_id,
                data,
                window,
                answer: None,
                errors: errors
                    .into_iter()
                    .map(|(field, message)| format!("{field}: {message}"))
                    .collect(),
            },
        }
    }
}

/// The earlier campaign of the same spec, as the report links to it.
pub struct PreviousView {
    pub id: String,
    /// `Full backup, parallel: 412.0 → 433.1 MB/s (+5.1 %, better, more than noise)`; empty
    /// when the two share no finished point.
    pub change: String,
    /// `better`, `worse` or empty: how the change is coloured.
    pub direction: &'static str,
}

impl PreviousView {
    /// How `now` compares with the earlier campaign `before` of the same spec: its backup's
    /// change, or each tool's.
    pub fn of(before_id: &str, before: &[Point], now: &[Point]) -> Self {
        let rows = crate::views::compare::headline_rows(before, now);
        let changes: Vec<String> = rows
            .iter()
            .filter_map(|row| {
                Some(format!(
                    "{} at {}: {:.1} → {:.1} MB/s {} ({})",
                    row.test.label(),
                    params_line(&row.params),
                    row.a?.stat.median,
                    row.b?.stat.median,
                    row.b_tally.map_or("", |tally| tally.basis.word()),
                    row.change_words()?
                ))
            })
            .collect();
        // One colour for the line only when every change it gives goes the same way.
        let directions: Vec<Option<&'static str>> = rows
            .iter()
            .map(crate::views::compare::Row::direction)
            .collect();
        let direction = match directions.first() {
            Some(first) if directions.iter().all(|other| other == first) => first.unwrap_or(""),
            _ => "",
        };
        Self {
            id: before_id.to_string(),
            change: changes.join("; "),
            direction,
        }
    }
}
