//! The runs table: each run's figures, flags and warnings, already in words.

use super::*;

/// One run in the runs table.
pub struct RunRow {
    /// Its number, from 1.
    pub position: usize,
    pub test: String,
    pub status: String,
    pub attempts: i64,
    pub params: String,
    pub mb_per_s: String,
    pub moved: String,
    pub seconds: String,
    pub cpu: String,
    pub readers: String,
    pub writer: String,
    pub latency: String,
    /// Steady-state MB/s and its window, when found.
    pub steady: String,
    /// "valid", or "not valid", with a line per flag.
    pub validity: String,
    pub flags: Vec<String>,
    pub warnings: Vec<String>,
    pub error: Option<String>,
    /// The target's own figures, when it reports any (emulated drives do).
    pub target: Option<String>,
    /// A network backup's clients, one line each.
    pub clients: Vec<String>,
}

pub(super) fn run_row(run: &RunView<'_>, points: &[Point]) -> RunRow {
    let dash = || "–".to_string();
    // Only a finished run's figures are results; a run that failed or was cancelled part way
    // shows what it moved and for how long, and that it was cut, never its rate.
    let ran = run.result;
    let result = ran.filter(|r| r.status == RunStatus::Done);
    let cut = ran.filter(|r| r.status != RunStatus::Done && (r.bytes > 0 || r.seconds > 0.0));
    let moved = |r: &RunResult| {
        if r.files > 0 {
            format!(
                "{} in {}",
                format_bytes(r.bytes),
                counted(r.files, "file", "files")
            )
        } else {
            format_bytes(r.bytes)
        }
    };
    let was_cut = cut.is_some_and(|r| r.status == RunStatus::Cancelled);
    RunRow {
        position: run.number,
        test: run.test.label().to_string(),
        status: if result.is_some_and(|r| r.partial) {
            "partial".to_string()
        } else {
            run.phase.id().to_string()
        },
        attempts: run.attempts,
        params: params_line(run.params),
        mb_per_s: if was_cut {
            "cancelled".to_string()
        } else {
            result
                .filter(|r| r.test.measures_rate())
                .map_or_else(dash, |r| format!("{:.1}", r.mb_per_s))
        },
        moved: result.or(cut).map_or_else(dash, moved),
        seconds: result
            .or(cut)
            .map_or_else(dash, |r| format!("{:.2}\u{a0}s", r.seconds)),
        cpu: result.map_or_else(dash, |r| {
            format!(
                "{:.0}\u{a0}% / {:.0}\u{a0}%",
                r.cpu.process_pct, r.cpu.system_pct
            )
        }),
        readers: result.map_or_else(dash, |r| {
            format!(
                "{:.0}\u{a0}% / {:.0}\u{a0}%",
                r.stages.reader_busy_pct, r.stages.reader_wait_pct
            )
        }),
        writer: result.map_or_else(dash, |r| {
            if r.stages.writer_busy_pct == 0.0 && r.stages.writer_waits == 0 {
                "–".to_string()
            } else {
                format!(
                    "{:.0}\u{a0}% / {:.0}\u{a0}%",
                    r.stages.writer_busy_pct, r.stages.writer_wait_pct
                )
            }
        }),
        latency: result
            .and_then(|r| r.latency_us)
            .map_or_else(dash, |l| format!("{} / {} µs", l.p50, l.p99)),
        steady: result.map_or_else(dash, steady_words),
        // How the run stands at its point, by the rule every count of valid runs uses.
        validity: crate::analysis::points::standing_of(points, run.number)
            .filter(|standing| matches!(standing, RunStanding::Valid | RunStanding::NotValid))
            .map_or_else(dash, |standing| standing.word().to_string()),
        flags: result.map(flag_lines).unwrap_or_default(),
        warnings: ran.map(|r| r.warnings.clone()).unwrap_or_default(),
        error: if was_cut {
            cut.map(|r| {
                format!(
                    "cancelled after {:.2} s with {} moved: what it measured is not a result",
                    r.seconds,
                    format_bytes(r.bytes)
                )
            })
        } else {
            ran.and_then(|r| r.error.clone())
        },
        target: result
            .and_then(crate::engine::target::figures::target_report)
            .map(|report| report.to_string())
            .or_else(|| result.and_then(|r| Some(r.lock.as_ref()?.answer.clone()))),
        clients: result
            .and_then(|r| r.clients.as_ref())
            .map(|clients| clients.iter().map(client_line).collect())
            .unwrap_or_default(),
    }
}

/// One client of a network run: what the lab received, and what the client says it sent.
pub(super) fn client_line(client: &crate::engine::result::ClientFigures) -> String {
    let reported = client.reported_bytes.map_or_else(String::new, |bytes| {
        format!("; the client counted {} sent", format_bytes(bytes))
    });
    let status = match &client.error {
        Some(error) => format!("failed: {error}"),
        None => "done".to_string(),
    };
    format!(
        "client {} ({}): {} at {:.1} MB/s, {status}{reported}",
        client.name,
        counted(u64::from(client.streams), "stream", "streams"),
        format_bytes(client.bytes),
        client.mb_per_s
    )
}

/// The run's steady MB/s and window, with the spread and any flush charged to it; a dash
/// when no steady state was found.
fn steady_words(result: &RunResult) -> String {
    let Some(steady) = result.steady.filter(|s| s.steady) else {
        return "–".to_string();
    };
    let flush = if steady.flush_s > 0.0 {
        format!(", flush {:.1}\u{a0}s charged", steady.flush_s)
    } else {
        String::new()
    };
    // A spread that was not measured is left out, never written as ±0.0 %.
    let cv = steady
        .cv_pct
        .map_or_else(String::new, |cv| format!(", ±{cv:.1}\u{a0}%"));
    format!(
        "{:.1} ({:.1}–{:.1}\u{a0}s{cv}{flush})",
        steady.mb_per_s, steady.from_s, steady.to_s,
    )
}

/// A line per validity flag: its code, what was seen, and what to change.
fn flag_lines(result: &RunResult) -> Vec<String> {
    result
        .validity
        .iter()
        .flat_map(|validity| &validity.flags)
        .map(|flag| {
            format!(
                "{}: {} — {}",
                flag.code.id(),
                flag.detail,
                flag.code.remedy()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::steady::SteadyFigures;

    /// The runs table's steady cell leaves out a spread that was not measured, never writing
    /// "±0.0 %", and says one that was.
    #[test]
    fn a_spread_not_measured_is_left_out_of_the_steady_cell() {
        let mut result = RunResult::failed(
            crate::engine::test_kind::TestKind::TapeWrite,
            crate::spec::RunParams::example(),
            String::new(),
        );
        result.steady = Some(SteadyFigures::example(None));
        let cell = steady_words(&result);
        assert_eq!(cell, "380.0 (1.0–6.0\u{a0}s)");
        result.steady = Some(SteadyFigures::example(Some(3.2)));
        assert!(steady_words(&result).contains("±3.2"));
    }
}
