//! Schedules: a campaign spec queued at the times a cron pattern names (`0 2 * * *`, every night
//! at two, UTC). This module knows the times; the lab fires them and the store keeps them.
//!
//! An occurrence is fired when a lab sees it within [`GRACE_MS`] of its time. One seen later (the
//! labs were down, or busy past it) is counted as missed and not fired: a lab that comes back
//! after a night away queues no burst of stale campaigns, it says what it missed.

use std::str::FromStr;

use croner::Cron;
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// How late an occurrence may still be fired.
pub const GRACE_MS: i64 = 60_000;

/// The most missed occurrences counted one by one; beyond, the count says "at least".
const MAX_COUNTED: u32 = 100_000;

/// A parsed cron pattern: five fields (minute, hour, day of month, month, day of week), UTC.
#[derive(Debug, Clone)]
pub struct Pattern(Cron);

impl Pattern {
    /// Reads a pattern; the error says what is wrong with it in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.split_whitespace().count() != 5 {
            return Err(format!(
                "'{text}' is not a cron pattern of five fields: minute hour day-of-month month \
                 day-of-week, e.g. '0 2 * * *' for every night at 02:00 UTC"
            ));
        }
        let cron = Cron::from_str(text).map_err(|error| format!("'{text}': {error}"))?;
        let pattern = Self(cron);
        if pattern.next_after(0).is_none() {
            return Err(format!("'{text}' never occurs"));
        }
        Ok(pattern)
    }

    /// The first occurrence strictly after `ms` (milliseconds since the epoch).
    pub fn next_after(&self, ms: i64) -> Option<i64> {
        let at = Timestamp::from_millisecond(ms)
            .ok()?
            .to_zoned(TimeZone::UTC);
        self.0
            .find_next_occurrence(&at, false)
            .ok()
            .map(|next| next.timestamp().as_millisecond())
    }
}

/// What a schedule whose next occurrence is `next_ms` does at `now_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The occurrence to fire now, if one is due and recent enough.
    pub fire: Option<i64>,
    /// Occurrences that passed unfired, too long ago to fire.
    pub missed: u32,
    /// The latest of the missed ones.
    pub last_missed: Option<i64>,
    /// The schedule's next occurrence after this.
    pub next_ms: i64,
}

impl Due {
    /// Whether anything changes: an occurrence fired or missed.
    pub fn is_due(&self) -> bool {
        self.fire.is_some() || self.missed > 0
    }
}

/// Works out what is due at `now_ms` for a schedule whose next occurrence is `next_ms`.
pub fn due(pattern: &Pattern, next_ms: i64, now_ms: i64) -> Option<Due> {
    let mut due = Due {
        fire: None,
        missed: 0,
        last_missed: None,
        next_ms,
    };
    let mut occurrence = next_ms;
    while occurrence <= now_ms {
        let following = pattern.next_after(occurrence)?;
        if following <= now_ms || now_ms - occurrence > GRACE_MS {
            if due.missed < MAX_COUNTED {
                due.missed += 1;
            }
            due.last_missed = Some(occurrence);
            if due.missed >= MAX_COUNTED {
                // Far behind: skip to now without counting each occurrence.
                occurrence = pattern.next_after(now_ms)?;
                break;
            }
        } else {
            due.fire = Some(occurrence);
        }
        occurrence = following;
    }
    due.next_ms = occurrence;
    Some(due)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000;
    /// 2026-12-03 02:00:00 UTC.
    const TWO_AM: i64 = 1_796_263_200_000;

    #[test]
    fn a_pattern_gives_its_next_occurrence_and_bad_ones_say_why() {
        let nightly = Pattern::parse("0 2 * * *").expect("a pattern");
        assert_eq!(nightly.next_after(TWO_AM - 1), Some(TWO_AM));
        assert_eq!(nightly.next_after(TWO_AM), Some(TWO_AM + 24 * 60 * MINUTE));
        assert!(
            Pattern::parse("0 2 * *")
                .unwrap_err()
                .contains("five fields")
        );
        assert!(Pattern::parse("61 * * * *").is_err());
        assert!(
            Pattern::parse("0 0 31 2 *").is_err(),
            "February 31st never occurs"
        );
    }

    #[test]
    fn an_occurrence_is_fired_once_on_time_and_missed_when_long_past() {
        let every_minute = Pattern::parse("* * * * *").expect("a pattern");
        // Not yet.
        let early = due(&every_minute, TWO_AM, TWO_AM - 1).expect("due");
        assert!(!early.is_due());
        // On time, or a little late: fired, and the next is a minute on.
        let on_time = due(&every_minute, TWO_AM, TWO_AM + 5_000).expect("due");
        assert_eq!(on_time.fire, Some(TWO_AM));
        assert_eq!((on_time.missed, on_time.next_ms), (0, TWO_AM + MINUTE));
        // A lab back after an hour: 60 missed, the one now fired, no burst.
        let back = due(&every_minute, TWO_AM, TWO_AM + 60 * MINUTE + 1_000).expect("due");
        assert_eq!(back.fire, Some(TWO_AM + 60 * MINUTE));
        assert_eq!(back.missed, 60);
        assert_eq!(back.last_missed, Some(TWO_AM + 59 * MINUTE));
        // A nightly schedule seen at noon: last night's is missed, nothing fired.
        let nightly = Pattern::parse("0 2 * * *").expect("a pattern");
        let noon = due(&nightly, TWO_AM, TWO_AM + 10 * 60 * MINUTE).expect("due");
        assert_eq!((noon.fire, noon.missed), (None, 1));
        assert_eq!(noon.next_ms, TWO_AM + 24 * 60 * MINUTE);
    }
}
