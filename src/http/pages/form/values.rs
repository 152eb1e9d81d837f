//! A form field's text read as the spec value it stands for: a count, a number, seconds or a
//! size, each problem named by its spec path; and a comma list split into its items.

use crate::field_errors::FieldErrors;
use crate::size::ByteSize;
use crate::spec::{AutoWord, DurationInput};

/// A list field's items: split at commas and white space, empty ones dropped.
pub(super) fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split([',', ' ', '\n', '\t'])
        .map(str::trim)
        .filter(|item| !item.is_empty())
}

/// A whole number; one out of its field's range is left to the checks, which say the range.
pub(super) fn read_count(text: &str, path: &str, errors: &mut FieldErrors) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match text.parse::<u32>() {
        Ok(value) => Some(value),
        Err(_) => {
            let wanted = crate::spec::bounds::whole_range_at(path)
                .map_or_else(|| "a whole number".to_string(), |range| range.words());
            errors.add(path, format!("'{text}' is not {wanted} (write e.g. 4)"));
            None
        }
    }
}

/// A number; with `auto_allowed`, also the word `auto` (`Err(())` stands for it).
fn number(
    text: &str,
    path: &str,
    errors: &mut FieldErrors,
    auto_allowed: bool,
) -> Option<Result<f64, ()>> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if auto_allowed && text.eq_ignore_ascii_case("auto") {
        return Some(Err(()));
    }
    match text.parse::<f64>().ok().filter(|value| value.is_finite()) {
        Some(value) => Some(Ok(value)),
        None => {
            let example = if auto_allowed {
                "write e.g. 10, or auto"
            } else {
                "write e.g. 2 or 2.5"
            };
            errors.add(path, format!("'{text}' is not a number ({example})"));
            None
        }
    }
}

/// A number.
pub(super) fn read_number(text: &str, path: &str, errors: &mut FieldErrors) -> Option<f64> {
    number(text, path, errors, false)?.ok()
}

/// Seconds, or the word `auto`.
pub(super) fn read_duration(
    text: &str,
    path: &str,
    errors: &mut FieldErrors,
) -> Option<DurationInput> {
    Some(match number(text, path, errors, true)? {
        Ok(seconds) => DurationInput::Seconds(seconds),
        Err(()) => DurationInput::Auto(AutoWord::Auto),
    })
}

/// A size: bytes, or a number with K, M, G or T; a byte count typed as one stays a count.
pub(super) fn read_size(text: &str, path: &str, errors: &mut FieldErrors) -> Option<ByteSize> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match ByteSize::parse(text) {
        Ok(size) => Some(match text.parse::<u64>() {
            Ok(bytes) => ByteSize::new(bytes),
            Err(_) => size,
        }),
        Err(message) => {
            errors.add(path, message);
            None
        }
    }
}
