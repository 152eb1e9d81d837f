//! What a finished campaign's runs must show, the same through the API and the CLI.

use serde_json::Value;

/// The five tests of the bottleneck method, in the order a campaign runs them.
const BOTTLENECK_TESTS: [&str; 5] = [
    "tape_write",
    "read_single",
    "read_parallel",
    "null_sink",
    "full_backup",
];

/// The runs of a campaign (`/api/campaigns/ID`) or a report (`backlab run --json`), after
/// checking there are exactly `count` and every one is done.
pub fn all_done(body: &Value, count: usize) -> &[Value] {
    let runs = body["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), count, "{count} runs, each exactly once: {body}");
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
    }
    runs
}

/// The runs of a campaign of the five tests, after checking each ran once, in the method's
/// order, and is done.
pub fn five_tests_done(body: &Value) -> &[Value] {
    let runs = all_done(body, BOTTLENECK_TESTS.len());
    let tests: Vec<&str> = runs
        .iter()
        .map(|run| run["test"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(tests, BOTTLENECK_TESTS, "{body}");
    runs
}
