//! The Prometheus text exposition of the queue's figures and of each series' newest figures.

use std::fmt::Write;

use crate::series::history::Entry;
use crate::series::history::best_per_line;
use crate::store::{QueueFigures, RunState};

/// Renders runs by status, queue depth, bytes moved and the run-duration histogram.
pub fn render(figures: &QueueFigures) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# HELP backlab_runs Runs in the database, by status.");
    let _ = writeln!(out, "# TYPE backlab_runs gauge");
    let mut queued = 0;
    for (status, count) in &figures.runs_by_status {
        let _ = writeln!(out, "backlab_runs{{status=\"{}\"}} {count}", status.id());
        if *status == RunState::Queued {
            queued = *count;
        }
    }
    let _ = writeln!(out, "# HELP backlab_queue_depth Runs waiting for a worker.");
    let _ = writeln!(out, "# TYPE backlab_queue_depth gauge");
    let _ = writeln!(out, "backlab_queue_depth {queued}");
    let _ = writeln!(
        out,
        "# HELP backlab_bytes_moved Bytes moved by the finished runs in the database."
    );
    let _ = writeln!(out, "# TYPE backlab_bytes_moved gauge");
    let _ = writeln!(out, "backlab_bytes_moved {}", figures.bytes_moved);
    let _ = writeln!(
        out,
        "# HELP backlab_run_duration_seconds Measured time of finished runs."
    );
    let _ = writeln!(out, "# TYPE backlab_run_duration_seconds histogram");
    for (bound, count) in &figures.duration_buckets {
        let _ = writeln!(
            out,
            "backlab_run_duration_seconds_bucket{{le=\"{bound}\"}} {count}"
        );
    }
    let _ = writeln!(
        out,
        "backlab_run_duration_seconds_bucket{{le=\"+Inf\"}} {}",
        figures.duration_count
    );
    let _ = writeln!(
        out,
        "backlab_run_duration_seconds_sum {}",
        figures.duration_sum
    );
    let _ = writeln!(
        out,
        "backlab_run_duration_seconds_count {}",
        figures.duration_count
    );
    out
}

/// Renders the newest figure of each test of each series: what a dashboard draws over time.
pub fn render_series(latest: &[(String, Entry)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP backlab_series_mb_per_s The newest campaign's figure of each test in each series \
         (steady-state MB/s, the median of its best point)."
    );
    let _ = writeln!(out, "# TYPE backlab_series_mb_per_s gauge");
    for (key, entry) in latest {
        for (test, tool, best) in best_per_line(&entry.judgement.points) {
            let Some(figure) = best.and_then(|point| point.figure.as_ref()) else {
                continue;
            };
            // Series keys and test ids are letters, digits, '-', '_' and '.': no escaping. A
            // tool's label (its name and parameters) is escaped as the format asks.
            let tool = tool.map_or_else(String::new, |tool| {
                let escaped = tool
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n");
                format!(",tool=\"{escaped}\"")
            });
            let _ = writeln!(
                out,
                "backlab_series_mb_per_s{{series=\"{key}\",test=\"{}\"{tool},valid=\"{}\"}} {}",
                test.id(),
                figure.valid,
                figure.mb_per_s
            );
        }
    }
    out
}
