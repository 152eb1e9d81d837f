//! The lab's clock: milliseconds since the Unix epoch, as the store keeps timestamps, and
//! their RFC 3339 text as pages, reports and the API show them; and the calendar the schedules
//! read, which a test can set instead of waiting for it.

use std::path::PathBuf;
use std::sync::OnceLock;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Milliseconds since the Unix epoch, the store's clock.
pub fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// The environment variable naming a file that holds the schedules' "now" (milliseconds since
/// the Unix epoch, as text): tests set the calendar with it rather than wait minutes for an
/// occurrence. For tests only; unset, as in every real run, the schedules read [`now_ms`].
pub const TEST_CALENDAR_ENV: &str = "BACKLAB_TEST_CALENDAR_FILE";

/// Now as the schedules read it: [`now_ms`], unless [`TEST_CALENDAR_ENV`] names a file, whose
/// time then stands still until the file is written again (an unreadable file is warned of,
/// and the store's clock read instead).
pub fn calendar_ms() -> i64 {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    let file = FILE.get_or_init(|| std::env::var_os(TEST_CALENDAR_ENV).map(PathBuf::from));
    let Some(file) = file else {
        return now_ms();
    };
    let read = std::fs::read_to_string(file).map(|text| text.trim().parse::<i64>());
    match read {
        Ok(Ok(ms)) => ms,
        Ok(Err(error)) => {
            tracing::warn!(file = %file.display(), %error, "the test calendar holds no time");
            now_ms()
        }
        Err(error) => {
            tracing::warn!(file = %file.display(), %error, "cannot read the test calendar");
            now_ms()
        }
    }
}

/// A store timestamp as RFC 3339 text (empty when out of range).
pub fn format_ms(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|time| time.format(&Rfc3339).ok())
        .unwrap_or_default()
}
