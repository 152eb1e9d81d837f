//! The object-lock probe's answer as every view shows it: the verdict in a sentence, the
//! bucket's settings, each step with the store's answer, what the lock keeps of the probe,
//! and what the answer means for the repositories the campaign's tools kept in that bucket.

use std::fmt::Write as _;

use crate::engine::result::RunResult;
use crate::engine::target::s3::lock::{LockFigures, LockVerdict};

/// One step of the probe, in cells.
pub struct LockStepRow {
    pub tried: String,
    pub request: String,
    pub answer: String,
    pub meaning: String,
}

/// One probe's answer.
pub struct LockView {
    /// The run's number, as every view numbers it.
    pub run: usize,
    /// `immutable`, `not_immutable` or `cannot_tell`: the page's class and data attribute.
    pub verdict: &'static str,
    /// `immutable: a delete of its version was refused, …`.
    pub answer: String,
    pub store: String,
    /// The bucket's versioning and object lock, in words.
    pub settings: String,
    pub steps: Vec<LockStepRow>,
    /// What the lock keeps of the probe, its size and until when.
    pub kept: Option<String>,
    /// For each tool whose repository the campaign kept in that bucket, whether it could be
    /// deleted with the same credentials.
    pub repositories: Vec<String>,
}

impl LockView {
    /// Every probe among a campaign's runs, numbered as every view numbers them.
    pub fn all<'a>(runs: impl IntoIterator<Item = (usize, &'a RunResult)> + Clone) -> Vec<Self> {
        let tools = tools_in_bucket(runs.clone());
        runs.into_iter()
            .filter_map(|(number, result)| {
                let lock = result.lock.as_ref()?;
                Some(LockView {
                    run: number,
                    verdict: lock.verdict.id(),
                    answer: lock.answer.clone(),
                    store: lock.store.clone(),
                    settings: settings_words(lock),
                    steps: lock
                        .steps
                        .iter()
                        .map(|step| LockStepRow {
                            tried: step.tried.clone(),
                            request: step.request.clone(),
                            answer: step.answer.clone(),
                            meaning: step.meaning.clone(),
                        })
                        .collect(),
                    kept: kept_words(lock),
                    repositories: tools
                        .iter()
                        .map(|tool| repository_words(tool, lock))
                        .collect(),
                })
            })
            .collect()
    }
}

/// What the probe leaves in the bucket, in words; `None` when it left nothing.
fn kept_words(lock: &LockFigures) -> Option<String> {
    if lock.kept.is_empty() {
        return None;
    }
    let bytes: u64 = lock.kept.iter().map(|kept| kept.bytes).sum();
    let until = lock
        .kept
        .iter()
        .filter_map(|kept| kept.until.as_deref())
        .max()
        .map_or_else(
            || "for as long as the store keeps it".to_string(),
            |until| format!("until {until}"),
        );
    Some(format!(
        "The lock keeps the probe's {} ({}) in the bucket {until}.",
        crate::analysis::counted(lock.kept.len() as u64, "version", "versions"),
        crate::size::format_bytes(bytes)
    ))
}

/// The tools of the campaign's runs that kept their repository in the bucket, each once.
fn tools_in_bucket<'a>(runs: impl IntoIterator<Item = (usize, &'a RunResult)>) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for (_, result) in runs {
        let (Some(figures), Some(tool)) = (&result.tool, &result.params.tool) else {
            continue;
        };
        let in_bucket = figures.requests.is_some() || figures.requests_not_counted.is_some();
        let label = tool.label();
        if in_bucket && !tools.contains(&label) {
            tools.push(label);
        }
    }
    tools
}

/// Whether a tool's repository in the probed bucket could be deleted with the lab's
/// credentials, as the probe's answer says.
fn repository_words(tool: &str, lock: &LockFigures) -> String {
    match lock.verdict {
        LockVerdict::Immutable => format!(
            "{tool}'s repository in this bucket could not be deleted with the same \
             credentials: what it writes is locked as the probe was."
        ),
        LockVerdict::NotImmutable => format!(
            "{tool}'s repository in this bucket could be deleted with the same credentials: {}.",
            lock.answer
                .split_once(": ")
                .map_or(lock.answer.as_str(), |(_, why)| why)
        ),
        LockVerdict::CannotTell => format!(
            "Whether {tool}'s repository in this bucket could be deleted with the same \
             credentials cannot be told from the probe."
        ),
    }
}

/// The bucket's versioning and object lock in words.
fn settings_words(lock: &LockFigures) -> String {
    let versioning = match lock.versioning.as_str() {
        "Enabled" => "versioning enabled".to_string(),
        "Suspended" => "versioning suspended".to_string(),
        "off" => "no versioning".to_string(),
        _ => "versioning not known".to_string(),
    };
    let locked = match (lock.lock_enabled, &lock.default_retention) {
        (Some(true), Some(retention)) => {
            format!("object lock, default retention {}", retention.words())
        }
        (Some(true), None) => "object lock without a default retention".to_string(),
        (Some(false), _) => "no object lock".to_string(),
        (None, _) => "object lock not known".to_string(),
    };
    format!("{versioning}; {locked}")
}

/// The probes as text, for the terminal and the report's text.
pub fn lock_text(views: &[LockView]) -> String {
    let mut out = String::new();
    for view in views {
        let _ = writeln!(out, "Object lock ({}, run {}):", view.store, view.run);
        let _ = writeln!(out, "  {}", view.answer);
        let _ = writeln!(out, "  The bucket: {}.", view.settings);
        for step in &view.steps {
            let _ = writeln!(
                out,
                "  - {}: {} -> {} ({})",
                step.tried, step.request, step.answer, step.meaning
            );
        }
        if let Some(kept) = &view.kept {
            let _ = writeln!(out, "  {kept}");
        }
        for repository in &view.repositories {
            let _ = writeln!(out, "  {repository}");
        }
    }
    out
}
