//! The bottleneck verdict: the full backup compared with the isolated ceilings, the way Data
//! Protector's method reads its Table 1. Pure functions over results: typed findings first
//! (`find`, `findings`), the advice derived from them (`advise`), the verdict put together
//! (`judge`, `verdict`), and words only at the edge (`words`, `said`): what is kept holds no
//! sentence, so a sentence's wording can change without judging anything again.

mod advise;
pub mod bill;
pub mod figures;
mod find;
pub mod findings;
pub mod follow_up;
mod headline;
mod judge;
pub mod life_forecast;
pub mod planner;
pub mod points;
pub mod prices;
pub mod remedy;
pub mod said;
pub mod tools;
mod verdict;
pub mod weight;
mod words;

use serde::{Deserialize, Serialize};

use crate::engine::result::RunResult;
use crate::engine::survey::Survey;
use crate::spec::TestKind;
pub use advise::LOCAL_OVER_NETWORK;
use figures::TestFigure;
pub use find::target_component;
pub use findings::{Advice, Component, Finding, Redo, Side, StageAttribution, stage_attribution};
pub use headline::Headline;
pub use judge::judge;
pub use said::{SaidRow, SaidStage, SaidVerdict};
pub use verdict::{NoFigure, RestoreLine, TargetName, Verdict, VerdictRow};
pub use words::{capitalize, component_word, counted};

/// Share of a ceiling the full backup must reach for that ceiling to be the bottleneck.
const REACHED: f64 = 0.9;
/// How far above a ceiling it reached, in percent, a full backup must run before the verdict
/// says why: closer than this, two measurements of one thing differ by no more than usual.
const ABOVE_PCT: f64 = 1.0;
/// Share of a stage's time spent waiting that marks the other side as behind.
const WAITING: f64 = 50.0;
/// System CPU above which the pipeline counts as CPU-bound.
const CPU_BOUND_PCT: f64 = 80.0;
/// Relative difference between two compression ratios that counts as a mismatch.
const COMPRESSIBILITY_MISMATCH: f64 = 0.15;

/// The figures a verdict reads, by test.
struct Figures<'a> {
    tests: Vec<(TestKind, Option<TestFigure<'a>>)>,
    /// The campaign ran the object-lock probe: it measures no rate, so has no figure above.
    probed: bool,
}

impl<'a> Figures<'a> {
    fn get(&self, test: TestKind) -> Option<&TestFigure<'a>> {
        self.tests
            .iter()
            .find(|(kind, _)| *kind == test)
            .and_then(|(_, figure)| figure.as_ref())
    }

    fn mb(&self, test: TestKind) -> Option<f64> {
        self.get(test).map(|figure| figure.mb_per_s)
    }

    fn run(&self, test: TestKind) -> Option<&'a RunResult> {
        self.get(test).map(|figure| figure.run)
    }
}

/// The version of the judging rules: a judgement kept under another version is judged again.
///
/// 3: the verdict keeps no sentence, and keeps what its sentences are rendered from (the
/// target's name, the network backup's shape, the source's size); a judgement of 2 lacks
/// those, so it is judged again rather than shown with less said.
///
/// 4: a tool whose own backup was held by its CPU (every core, or one thread) limits the
/// backup though its ceiling's run went faster; a tool run on a busy machine says so.
///
/// 5: a campaign of several tools is judged once per tool (`Verdict::by_tool`), each tool's
/// best points its own, and the verdict keeps the tools' comparison (`Verdict::tools`).
///
/// 6: a target test on data the drive compressed clearly less than the backup's is not
/// trusted once the backup reaches it (the drive takes the backup's data faster).
///
/// 7: a tool whose own backup was held by its CPU limits the backup though that backup ran
/// faster than its ceiling's run (the CPU gave more at another moment).
///
/// 8: each tool's line has the requests its backup made of a bucket per GiB.
///
/// 9: a campaign that ran the object-lock probe and too few tests to name a bottleneck says
/// the probe's answer is its own, not that it is inconclusive.
pub const JUDGEMENT_VERSION: u32 = 9;

/// A campaign judged: its points and the verdict drawn from them. Every view of a campaign
/// (page, report, `/compare`, CSV, JSON, list) reads one judgement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Judgement {
    /// The judging rules it was drawn under ([`JUDGEMENT_VERSION`]).
    pub version: u32,
    pub points: Vec<points::Point>,
    pub verdict: Verdict,
    /// Drawn while runs were still to come: the verdict may yet change.
    pub provisional: bool,
}

impl Judgement {
    /// Groups `runs` into points once and judges them.
    pub fn of(runs: &[points::RunEntry<'_>], survey: Option<&Survey>) -> Self {
        let points = points::points(runs);
        let verdict = judge(&points, runs, survey);
        Self {
            version: JUDGEMENT_VERSION,
            provisional: runs.iter().any(|run| run.ended.is_none()),
            points,
            verdict,
        }
    }
}

/// Builds the verdict from finished runs held in order (the command line's), numbered from 1.
pub fn verdict(runs: &[RunResult], survey: Option<&Survey>) -> Verdict {
    let entries = points::RunEntry::of_results(runs);
    judge(&points::points(&entries), &entries, survey)
}

#[cfg(test)]
mod tests;
