//! The one step the lab takes itself when a verdict cannot stand as measured: a full backup
//! that ran faster than an isolated ceiling, measured once each, cannot tell a ceiling that
//! did not measure what the backup met from run-to-run noise of the device (a file system's
//! write-back varies by a tenth and more between two short runs). The lab then measures the
//! ceiling and the backup again, in turn, so both meet the same conditions, and judges the
//! medians.

use super::Verdict;
use super::findings::Finding;
use crate::spec::TestKind;

/// How many runs each of the two tests rests on once the follow-up has run.
pub const FOLLOW_UP_RUNS: usize = 3;

/// Tests to run again, in turn (each test once per round), before the verdict is drawn anew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    /// The ceiling the backup outran, then the backup.
    pub tests: [TestKind; 2],
    /// Rounds to run: each test's runs then number [`FOLLOW_UP_RUNS`].
    pub rounds: usize,
}

impl FollowUp {
    /// The follow-up `verdict` asks for: only when the full backup outran a ceiling, either
    /// figure rests on fewer than [`FOLLOW_UP_RUNS`] runs, and neither carries a flag the same
    /// settings would raise again (the verdict's redo then says what to change); none for any
    /// other verdict.
    pub fn of(verdict: &Verdict) -> Option<FollowUp> {
        let Finding::FullOutranCeiling { ceiling, .. } = &verdict.finding else {
            return None;
        };
        let tests = [ceiling.test, TestKind::FullBackup];
        let rows: Vec<_> = tests
            .iter()
            .filter_map(|test| verdict.rows.iter().find(|row| row.test == *test))
            .collect();
        if rows.len() < tests.len()
            || rows
                .iter()
                .flat_map(|row| &row.flags)
                .any(|flag| !flag.a_repeat_may_clear())
        {
            return None;
        }
        let fewest = rows.iter().map(|row| row.repeats).min().unwrap_or(0);
        (fewest > 0 && fewest < FOLLOW_UP_RUNS).then(|| FollowUp {
            tests,
            rounds: FOLLOW_UP_RUNS - fewest,
        })
    }

    /// What the lab is about to do, in a line: "measuring the target write and the full
    /// backup twice more each, in turn".
    pub fn words(&self) -> String {
        let times = match self.rounds {
            1 => "once more".to_string(),
            2 => "twice more".to_string(),
            n => format!("{n} times more"),
        };
        format!(
            "measuring {} and {} {times} each, in turn, so both meet the same conditions",
            self.tests[0].name(),
            self.tests[1].name()
        )
    }
}
