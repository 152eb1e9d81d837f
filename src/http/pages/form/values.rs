//! A form field's text read as a spec value: a count, a number, a size or seconds, each
//! problem named by its spec path; and a comma list split into its items.

use serde_json::{Value, json};

use crate::field_errors::FieldErrors;
use crate::size::ByteSize;

/// A list field's items: split at commas and white space, empty ones dropped.
pub(super) fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split([',', ' ', '\n', '\t'])
        .map(str::trim)
        .filter(|item| !item.is_empty())
}

/// What a form field holds, and how its text becomes a spec value.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Count,
    Number,
    Seconds,
    Size,
}

/// A whole number; one out of its field's range is left to the checks, which say the range.
pub(super) fn count(text: &str, path: &str, errors: &mut FieldErrors) -> Option<Value> {
    read_count(text, path, errors).map(|value| json!(value))
}

/// [`count`], as the number it is.
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

/// A number; with `auto_allowed`, also the word `auto`.
pub(super) fn number(
    text: &str,
    path: &str,
    errors: &mut FieldErrors,
    auto_allowed: bool,
) -> Option<Value> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if auto_allowed && text.eq_ignore_ascii_case("auto") {
        return Some(json!("auto"));
    }
    match read_finite(text) {
        Some(value) => Some(json!(value)),
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

/// A number that is one (not infinite, not NaN).
fn read_finite(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|value| value.is_finite())
}

/// A number, as the number it is.
pub(super) fn read_number(text: &str, path: &str, errors: &mut FieldErrors) -> Option<f64> {
    number(text, path, errors, false)?.as_f64()
}

/// A size: bytes, or a number with K, M, G or T.
pub(super) fn size(text: &str, path: &str, errors: &mut FieldErrors) -> Option<Value> {
    serde_json::to_value(read_size(text, path, errors)?).ok()
}

/// [`size`], as the size it is: a byte count typed as one stays a count.
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

impl Kind {
    /// The field's value, `None` when it is empty or cannot be read (then the problem is
    /// added to `errors` under `path`).
    pub(super) fn read(self, text: &str, path: &str, errors: &mut FieldErrors) -> Option<Value> {
        match self {
            Kind::Count => count(text, path, errors),
            Kind::Number => number(text, path, errors, false),
            Kind::Seconds => number(text, path, errors, true),
            Kind::Size => size(text, path, errors),
        }
    }
}
