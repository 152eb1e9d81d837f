//! The secret values the lab holds (its token, an object store's keys, a run's repository
//! password): kept out of what a backup tool can read of the lab, and out of anything a tool
//! printed before it is stored or shown.
//!
//! A tool runs as the lab's user, so it can read the lab's environment in
//! `/proc/<lab>/environ`, which shows the environment the lab was started with, whatever the
//! lab later unsets. [`keep_out_of_environment`] blanks the values there once they are read,
//! and the lab marks itself not dumpable; every value it blanked, and every other secret it is
//! told of ([`know`]), is replaced in a tool's output by [`redact`].

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::sync::{Mutex, PoisonError};

/// The environment variables that hold secrets: the lab's token and an object store's keys.
pub const SECRET_VARIABLES: [&str; 4] = [
    "BACKLAB_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
];

/// What a secret becomes in a tool's output.
pub const REDACTED: &str = "[redacted]";

/// The shortest value taken as a secret to redact: a shorter one would blank ordinary words.
const SHORTEST: usize = 4;

static KNOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Adds a secret value to those [`redact`] replaces.
pub fn know(value: &str) {
    if value.len() < SHORTEST {
        return;
    }
    let mut known = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    if !known.iter().any(|kept| kept == value) {
        known.push(value.to_string());
    }
}

/// `text` with every known secret, and each of `also` (a run's own), replaced by
/// [`REDACTED`].
pub fn redact(text: &str, also: &[String]) -> String {
    let known = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    let mut out = text.to_string();
    // The longest first, so a secret holding another is replaced whole.
    let mut secrets: Vec<&String> = known
        .iter()
        .chain(also)
        .filter(|value| value.len() >= SHORTEST)
        .collect();
    secrets.sort_by_key(|value| std::cmp::Reverse(value.len()));
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// Blanks the values of `names` in the environment the process was started with (what
/// `/proc/self/environ` shows, and what `getenv` reads until the variable is set again),
/// knowing each value first ([`know`]), and marks the process not dumpable. Call it once the
/// values are read. Returns how many values were blanked; an environment it cannot reach
/// (no `/proc`) is left as it is.
pub fn keep_out_of_environment(names: &[&str]) -> usize {
    let blanked = blank(names);
    // Last: a process not dumpable may no longer write its own memory through /proc.
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    blanked
}

fn blank(names: &[&str]) -> usize {
    let Some((start, end)) = environment_span() else {
        return 0;
    };
    let Ok(block) = std::fs::read("/proc/self/environ") else {
        return 0;
    };
    let Ok(mut memory) = OpenOptions::new().write(true).open("/proc/self/mem") else {
        return 0;
    };
    let mut blanked = 0;
    let mut offset = 0usize;
    for entry in block.split(|&byte| byte == 0) {
        let here = offset;
        offset += entry.len() + 1;
        let Some(equals) = entry.iter().position(|&byte| byte == b'=') else {
            continue;
        };
        let (name, value) = (&entry[..equals], &entry[equals + 1..]);
        if value.is_empty() || !names.iter().any(|wanted| wanted.as_bytes() == name) {
            continue;
        }
        let at = start + (here + equals + 1) as u64;
        if at + value.len() as u64 > end {
            continue;
        }
        know(&String::from_utf8_lossy(value));
        let zeros = vec![0u8; value.len()];
        if memory.seek(SeekFrom::Start(at)).is_ok() && memory.write_all(&zeros).is_ok() {
            blanked += 1;
        }
    }
    blanked
}

/// Where the process's initial environment lies in its memory: `env_start` and `env_end`,
/// the 50th and 51st fields of `/proc/self/stat`.
fn environment_span() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name, which is in parentheses and may hold spaces.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3.
    let start = fields.get(50 - 3)?.parse().ok()?;
    let end = fields.get(51 - 3)?.parse().ok()?;
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_and_a_runs_own_are_redacted_the_longest_first() {
        know("s3cr3t-token-value");
        let text = "auth s3cr3t-token-value failed; password pw-of-the-run-12 and pw";
        let redacted = redact(text, &["pw-of-the-run-12".to_string(), "pw".to_string()]);
        assert_eq!(
            redacted,
            "auth [redacted] failed; password [redacted] and pw"
        );
    }
}
