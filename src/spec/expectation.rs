//! A campaign's plan judged before it runs, in the spec's own terms: the fields whose values
//! cannot give a valid figure, with the minimum each needs, and how long the campaign takes.

use std::path::PathBuf;

use serde::Serialize;

use super::RunPlan;
use crate::engine::expect;

/// A value a spec gave that cannot give a valid run, with what it needs: the campaign still
/// runs as asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanWarning {
    /// The field to change, as errors name fields.
    pub field: String,
    pub message: String,
}

/// What a campaign's runs need and how long they take, before any of them runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expectation {
    /// Seconds the whole campaign is likely to take, run after run (for an adaptive search,
    /// its likely runs).
    pub expected_s: f64,
    /// Whether some runs end with their data at a rate not known before: the figure is then
    /// the longest they may take.
    pub at_most: bool,
    /// The longest the campaign may take: every run that ends once steady running to its cap
    /// (for an adaptive search, every run of its budget).
    pub longest_s: f64,
    /// For an adaptive search: how many runs it likely takes and how many its budget allows,
    /// since it stops once a point stands out, well before its budget as a rule.
    #[serde(flatten)]
    pub search: Option<SearchRuns>,
    /// Each distinct problem once.
    pub warnings: Vec<PlanWarning>,
}

/// The runs an adaptive search is expected to take: the likely count and its budget's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SearchRuns {
    /// Runs it likely takes: one pass along each list through its start and the repeats that
    /// settle the leader against one contender.
    pub likely_runs: usize,
    /// The most runs it may take.
    pub budget_runs: usize,
}

impl Expectation {
    /// The expectation in one line, for the CLI and the form: how long `runs` runs take, and
    /// the longest they may.
    pub fn summary(&self, runs: usize) -> String {
        let count = match self.search {
            Some(search) => format!(
                "{} of {runs} runs likely (an adaptive search; its budget allows {})",
                search.likely_runs, search.budget_runs
            ),
            None => format!("{runs} run(s)"),
        };
        format!(
            "{count}, expected to take {}",
            duration_words(self.expected_s, self.at_most, self.longest_s)
        )
    }
}

/// A campaign's length in words, the likely time and its bound: "about 35.0 s, at most 5m 03s
/// if runs must go on to their cap to settle"; the bound alone when the likely time is not
/// known before the runs ("at most 1m 00s"). Every view that states an expectation words it
/// here.
pub fn duration_words(expected_s: f64, at_most: bool, longest_s: f64) -> String {
    let format = crate::duration::format_duration;
    if at_most {
        return format!("at most {}", format(longest_s.max(expected_s)));
    }
    let mut words = format!("about {}", format(expected_s));
    // Only a bound that says more than the likely time: a second is within the overheads.
    if longest_s > expected_s + 1.0 {
        words.push_str(&format!(
            ", at most {} if runs must go on to their cap to settle",
            format(longest_s)
        ));
    }
    words
}

/// The smallest source over which a backup tool's incremental is a job long enough to time
/// (`too_short` is a job under [`crate::engine::validity::MIN_JOB_S`]): an incremental reads
/// the unchanged files as fast as the tool can tell them unchanged.
pub const TOOL_INCREMENTAL_SOURCE: u64 = 1 << 30;

/// What the plans would meet on this machine that the spec alone cannot say, from a quick walk
/// of a source of paths: a source that fits in memory read without eviction (every read after
/// the first measures the page cache), a source too small for a tool's incremental to be
/// timed, a source of sparse files. Walks the file system: not on an async worker.
pub fn machine_warnings(plans: &[RunPlan]) -> Vec<PlanWarning> {
    SourceQuestions::of(plans).warnings()
}

/// The sources [`machine_warnings`] walks, taken from the plans without the file system: each
/// path once, however many runs read it, so a wide campaign is asked about cheaply and the
/// walk can run elsewhere.
#[derive(Debug, Clone, Default)]
pub struct SourceQuestions {
    /// The paths of the first run that reads its source through the page cache.
    cached: Option<Vec<PathBuf>>,
    /// The paths of the first tool incremental.
    incremental: Option<Vec<PathBuf>>,
    /// Every path a run reads, once.
    read: Vec<PathBuf>,
}

impl SourceQuestions {
    /// The questions of `plans` (local sources of paths only: an agent's lie elsewhere).
    pub fn of(plans: &[RunPlan]) -> SourceQuestions {
        fn local_paths(plan: &RunPlan) -> Option<&Vec<PathBuf>> {
            match &plan.source {
                super::SourcePlan::Paths(paths) if plan.agents.is_empty() => Some(paths),
                _ => None,
            }
        }
        let cached = plans.iter().find_map(|plan| {
            (plan.test.reads_source() && !plan.params.cold_cache && !plan.params.direct)
                .then(|| local_paths(plan).cloned())
                .flatten()
        });
        let incremental = plans.iter().find_map(|plan| {
            (plan.test == super::TestKind::ToolIncremental)
                .then(|| local_paths(plan).cloned())
                .flatten()
        });
        let mut read = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for paths in plans
            .iter()
            .filter(|plan| plan.test.reads_source())
            .filter_map(local_paths)
        {
            for path in paths {
                if seen.insert(path.as_path()) {
                    read.push(path.clone());
                }
            }
        }
        SourceQuestions {
            cached,
            incremental,
            read,
        }
    }

    /// The warnings, from a walk of each source.
    pub fn warnings(&self) -> Vec<PlanWarning> {
        let mut warnings = Vec::new();
        if let Some((bytes, memory)) = self
            .cached
            .as_deref()
            .and_then(crate::engine::cache::fits_in_memory)
        {
            warnings.push(PlanWarning {
                field: "params.cold_cache".to_string(),
                message: format!(
                    "the source ({}) fits in this machine's memory ({}): without cold_cache or \
                     direct, every read after the first measures the page cache, not the disks; \
                     set cold_cache (--cold-cache) or direct",
                    crate::size::format_bytes(bytes),
                    crate::size::format_bytes(memory)
                ),
            });
        }
        if let Some(bytes) = self.incremental.as_deref().and_then(|paths| {
            crate::engine::cache::tree_bytes_below(paths, TOOL_INCREMENTAL_SOURCE)
        }) {
            warnings.push(PlanWarning {
                field: "source.paths".to_string(),
                message: format!(
                    "the source holds {}: a tool's incremental over it likely ends within {} s, \
                     too short to time (too_short); a source of {} or more gives it a job the \
                     lab can time",
                    crate::size::format_bytes(bytes),
                    crate::engine::validity::MIN_JOB_S,
                    crate::size::format_bytes(TOOL_INCREMENTAL_SOURCE)
                ),
            });
        }
        if let Some(sparse) = crate::engine::cache::sparse_files(&self.read, SPARSE_HOLES) {
            warnings.push(PlanWarning {
                field: "source.paths".to_string(),
                message: format!(
                    "the source holds {} of holes in {} sparse {} ({} apparent, {} on disk): a \
                     hole is read as zeros without touching a disk, so a read or backup over it \
                     measures memory, not the disks, and a tool or stream that does not keep \
                     holes stores and restores {} as data; leave the sparse files out of the \
                     source",
                    crate::size::format_bytes(sparse.hole_bytes()),
                    sparse.files,
                    if sparse.files == 1 { "file" } else { "files" },
                    crate::size::format_bytes(sparse.apparent_bytes),
                    crate::size::format_bytes(sparse.allocated_bytes),
                    crate::size::format_bytes(sparse.apparent_bytes),
                ),
            });
        }
        warnings
    }
}

/// Holes in a source's sparse files past which a plan is warned: a read of them measures no
/// disk.
pub const SPARSE_HOLES: u64 = 1 << 30;

/// Judges a campaign's runs: the sum of their expected lengths, and a warning for each value
/// too small to give a valid run.
pub fn expect(plans: &[RunPlan]) -> Expectation {
    let mut expected_s = 0.0;
    let mut longest_s = 0.0;
    let mut at_most = false;
    let mut warnings: Vec<PlanWarning> = Vec::new();
    for plan in plans {
        let expected = expect::expected(plan);
        expected_s += expected.seconds;
        longest_s += expected.longest_s;
        at_most |= expected.at_most;
        for warning in warnings_of(plan) {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    Expectation {
        expected_s: (expected_s * 10.0).round() / 10.0,
        at_most,
        longest_s: (longest_s * 10.0).round() / 10.0,
        search: None,
        warnings,
    }
}

/// Judges an adaptive search's runs: the likely time is that of its `likely_runs` first runs,
/// the bound that of every run its budget allows, each run at its cap.
pub fn expect_search(plans: &[RunPlan], likely_runs: usize, budget_runs: usize) -> Expectation {
    let budget_runs = budget_runs.min(plans.len());
    let likely_runs = likely_runs.min(budget_runs);
    let likely = expect(&plans[..likely_runs]);
    let mut whole = expect(&plans[..budget_runs]);
    whole.expected_s = likely.expected_s;
    whole.search = Some(SearchRuns {
        likely_runs,
        budget_runs,
    });
    whole
}

fn warnings_of(plan: &RunPlan) -> Vec<PlanWarning> {
    let params = &plan.params;
    let mut warnings = Vec::new();
    // A backup that will shoe-shine needs several cycles; "auto" stops at its cap before.
    if let Some(cycles) = expect::cycles_need(plan)
        && params
            .duration_s
            .is_some_and(|duration| duration < cycles.min_s)
    {
        warnings.push(PlanWarning {
            field: "params.duration_s".to_string(),
            message: format!("{}; give at least {:.0} s", cycles.why, cycles.min_s.ceil()),
        });
    }
    let Some(need) = expect::need(plan) else {
        return warnings;
    };
    match params.duration_s {
        Some(duration) if duration < need.min_s && (params.time_based || params.until_steady) => {
            warnings.push(PlanWarning {
                field: "params.duration_s".to_string(),
                message: format!(
                    "{}; give at least {:.0} s, or \"auto\"",
                    need.why,
                    need.min_s.ceil()
                ),
            });
        }
        _ => {}
    }
    if !params.time_based
        && let Some(bytes) = params.size
        && let Some(config) = plan.target.tape()
    {
        let needed = (crate::engine::validity::DRIVE_BUFFERS
            * config.buffer_bytes as f64
            * f64::from(config.drives)) as u64;
        if bytes < needed {
            warnings.push(PlanWarning {
                field: "params.size".to_string(),
                message: format!(
                    "{}; {} per run is less than {}: leave size out (time-based) or give more",
                    need.why,
                    crate::size::format_bytes(bytes),
                    crate::size::format_bytes(needed)
                ),
            });
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::expect::AUTO_MIN_S;

    fn plans(json: &str) -> Vec<RunPlan> {
        let spec = super::super::parse_json(json).expect("a spec");
        spec.plan().expect("valid")
    }

    /// Five runs that end once steady: likely each its shortest steady window, at most each
    /// its 60 s cap; both are said, in the one line every view shows.
    #[test]
    fn the_likely_time_and_the_bound_of_runs_that_end_once_steady() {
        let plans = plans(
            r#"{"source": {"paths": ["/srv/a"]}, "target": {"kind": "null"},
                "params": {"duration_s": "auto", "time_based": true}}"#,
        );
        assert_eq!(plans.len(), 5);
        let expectation = expect(&plans);
        // Each run: its window, half a second's judging on average, half a second's overhead.
        let likely_s = 5.0 * (AUTO_MIN_S + 0.5 + 0.5);
        let bound_s = 5.0 * (60.0 + 0.5);
        assert!(
            (expectation.expected_s - likely_s).abs() < 0.05,
            "{expectation:?}"
        );
        assert!(
            (expectation.longest_s - bound_s).abs() < 0.05,
            "{expectation:?}"
        );
        assert!(!expectation.at_most);
        assert_eq!(
            expectation.summary(5),
            format!(
                "5 run(s), expected to take about {}, at most 5m 03s if runs must go on to \
                 their cap to settle",
                crate::duration::format_duration(likely_s)
            )
        );
    }

    #[test]
    fn the_bound_is_said_only_when_it_says_more() {
        assert_eq!(
            duration_words(35.0, false, 198.6),
            "about 35.0 s, at most 3m 19s if runs must go on to their cap to settle"
        );
        assert_eq!(duration_words(35.0, false, 35.8), "about 35.0 s");
        assert_eq!(duration_words(60.0, true, 60.0), "at most 1m 00s");
    }

    /// An adaptive search: the likely time is its likely runs', the bound its budget's, and
    /// both counts are given apart.
    #[test]
    fn a_search_gives_its_likely_runs_and_its_budget_apart() {
        let plans = plans(
            r#"{"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"},
                "tests": ["tape_write"], "params": {"duration_s": 10, "time_based": true},
                "repeat": 3, "matrix": {"buffers": [8, 16, 32], "streams": [1, 2, 4]}}"#,
        );
        let one_run_s = crate::engine::expect::expected(&plans[0]).seconds;
        let expectation = expect_search(&plans, 7, 12);
        assert!((expectation.expected_s - 7.0 * one_run_s).abs() < 0.05);
        assert!((expectation.longest_s - 12.0 * one_run_s).abs() < 0.05);
        assert_eq!(
            expectation.search,
            Some(SearchRuns {
                likely_runs: 7,
                budget_runs: 12
            })
        );
        assert!(
            expectation
                .summary(plans.len())
                .starts_with("7 of 27 runs likely (an adaptive search; its budget allows 12)"),
            "{}",
            expectation.summary(plans.len())
        );
        // A likely count past the budget is the budget.
        assert_eq!(
            expect_search(&plans, 40, 12).search.map(|s| s.likely_runs),
            Some(12)
        );
    }

    /// A tool's incremental over a small tree is warned of before it runs, naming the source
    /// and the size that gives a timed job; over a large enough tree, or without the
    /// incremental, nothing is said.
    #[test]
    fn a_source_too_small_for_a_tools_incremental_is_warned_of() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("file"), vec![7u8; 1 << 20]).expect("a file");
        let spec = |tests: &str| {
            format!(
                r#"{{"source": {{"paths": [{:?}]}}, "target": {{"kind": "dir", "path": "/tmp"}},
                    "tool": {{"name": "tar"}}, "tests": [{tests}]}}"#,
                dir.path()
            )
        };
        let warned = machine_warnings(&plans(&spec(r#""tool_backup", "tool_incremental""#)));
        let said: Vec<_> = warned
            .iter()
            .filter(|warning| warning.field == "source.paths")
            .collect();
        assert_eq!(said.len(), 1, "{warned:?}");
        assert!(said[0].message.contains("1 MiB"), "{}", said[0].message);
        assert!(said[0].message.contains("too_short"), "{}", said[0].message);
        let quiet = machine_warnings(&plans(&spec(r#""tool_backup""#)));
        assert!(
            quiet.iter().all(|warning| warning.field != "source.paths"),
            "{quiet:?}"
        );
    }

    /// A tool test's expected length grows with the tree it backs up: each test's untimed
    /// steps and its timed one at the tool's measured pace per MB, not a fixed window; a
    /// restore (a backup, the restore, every file compared) takes longer than a backup.
    #[test]
    fn a_tool_tests_expected_length_grows_with_its_tree() {
        let expected_over = |bytes: u64| {
            let dir = tempfile::tempdir().expect("temp dir");
            // A file of that length: its bytes are what the estimate counts.
            std::fs::File::create(dir.path().join("file"))
                .and_then(|file| file.set_len(bytes))
                .expect("a file");
            let plans = plans(&format!(
                r#"{{"source": {{"paths": [{:?}]}}, "target": {{"kind": "dir", "path": "/tmp"}},
                    "tool": {{"name": "restic"}},
                    "tests": ["tool_backup", "tool_ceiling", "tool_incremental", "tool_restore"]}}"#,
                dir.path()
            ));
            let each: Vec<f64> = plans
                .iter()
                .map(|plan| expect::expected(plan).seconds)
                .collect();
            (each, expect(&plans))
        };
        let (small, small_whole) = expected_over(1_000_000);
        let (large, large_whole) = expected_over(1_000_000_000);
        assert!(!small_whole.at_most && !large_whole.at_most);
        // A gigabyte more: 4.2 s more for the backup, 10.5 s more for the restore.
        assert!(
            (large[0] - small[0] - 0.999 * 4.2).abs() < 0.01,
            "{small:?} {large:?}"
        );
        assert!(
            (large[3] - small[3] - 0.999 * 10.5).abs() < 0.01,
            "{small:?} {large:?}"
        );
        assert!(large[3] > large[0], "{large:?}");
        assert!(large_whole.expected_s > small_whole.expected_s + 30.0);
        assert!(large_whole.longest_s > large_whole.expected_s);
    }

    /// A source of sparse files is warned of, with its holes and its apparent and allocated
    /// sizes; a source whose files hold their data is not.
    #[test]
    fn a_sparse_source_is_warned_of() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sparse = std::fs::File::create(dir.path().join("disk.img")).expect("a file");
        sparse.set_len(1 << 40).expect("a 1 TiB sparse file");
        std::fs::write(dir.path().join("data"), vec![7u8; 1 << 20]).expect("a file");
        let spec = |tests: &str| {
            format!(
                r#"{{"source": {{"paths": [{:?}]}}, "target": {{"kind": "dir", "path": "/tmp"}},
                    "tests": [{tests}]}}"#,
                dir.path()
            )
        };
        let warned = machine_warnings(&plans(&spec(r#""read_single", "full_backup""#)));
        let said: Vec<_> = warned
            .iter()
            .filter(|warning| warning.message.contains("sparse"))
            .collect();
        assert_eq!(said.len(), 1, "{warned:?}");
        assert_eq!(said[0].field, "source.paths");
        for part in [
            "1 TiB of holes in 1 sparse file",
            "1 TiB apparent",
            "measures memory",
        ] {
            assert!(
                said[0].message.contains(part),
                "{part}: {}",
                said[0].message
            );
        }
        // A target test alone reads no source.
        let quiet = machine_warnings(&plans(&spec(r#""tape_write""#)));
        assert!(
            quiet
                .iter()
                .all(|warning| !warning.message.contains("sparse")),
            "{quiet:?}"
        );
        std::fs::remove_file(dir.path().join("disk.img")).expect("removed");
        let full = machine_warnings(&plans(&spec(r#""full_backup""#)));
        assert!(
            full.iter()
                .all(|warning| !warning.message.contains("sparse")),
            "{full:?}"
        );
    }
}
