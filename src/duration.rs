//! Durations as every view prints them: the spec's expectations, the verdict's backup window,
//! the planner, the pages and the CLI.

/// Seconds as `1h 02m`, `3m 20s` or `12.3 s`.
pub fn format_duration(seconds: f64) -> String {
    if seconds >= 3600.0 {
        let minutes = (seconds / 60.0).round() as u64;
        format!("{}h {:02}m", minutes / 60, minutes % 60)
    } else if seconds >= 60.0 {
        let whole = seconds.round() as u64;
        format!("{}m {:02}s", whole / 60, whole % 60)
    } else {
        format!("{seconds:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_reads_in_the_largest_unit_that_fits() {
        assert_eq!(format_duration(12.34), "12.3 s");
        assert_eq!(format_duration(200.0), "3m 20s");
        assert_eq!(format_duration(3725.0), "1h 02m");
    }
}
