//! serde's messages about a spec, in words a user of the form or the API reads without
//! knowing Rust: `invalid type: floating point `-4.0`, expected u32 at line 1 column 81`
//! becomes `is -4.0; it must be a whole number (0 or more)`.

/// A serde error message about one field, in plain words.
pub fn plain_words(message: &str) -> String {
    let message = strip_position(message);
    if let Some(rest) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "is {}; it must be {}",
            found_words(found),
            expected_words(expected)
        );
    }
    if let Some(rest) = message.strip_prefix("unknown field ")
        && let Some((field, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "{} is not a field here (the fields are: {})",
            unquote(field),
            list_words(expected)
        );
    }
    if let Some(rest) = message.strip_prefix("unknown variant ")
        && let Some((value, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "'{}' is not one of: {}",
            unquote(value),
            list_words(expected)
        );
    }
    if let Some(field) = message.strip_prefix("missing field ") {
        return format!("{} is missing", unquote(field));
    }
    if message.contains("untagged enum DurationInput") {
        return "must be a number of seconds, such as 10, or \"auto\"".to_string();
    }
    message.to_string()
}

/// The message without serde_json's ` at line 1 column 81`.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => &message[..at],
        _ => message,
    }
}

/// What was given: `floating point `-4.0`` → `-4.0`, `string "x"` → `"x"`.
fn found_words(found: &str) -> String {
    for prefix in [
        "floating point ",
        "integer ",
        "string ",
        "boolean ",
        "character ",
    ] {
        if let Some(value) = found.strip_prefix(prefix) {
            return unquote(value).to_string();
        }
    }
    match found {
        "sequence" => "a list".to_string(),
        "map" => "an object".to_string(),
        "null" | "unit value" => "empty".to_string(),
        other => other.to_string(),
    }
}

/// What serde wanted, in words.
fn expected_words(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)".to_string(),
        "i32" | "i64" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a string" => "text".to_string(),
        "a sequence" => "a list".to_string(),
        other if other.starts_with("struct ") => "an object".to_string(),
        other => list_words(other),
    }
}

/// serde's "one of `a`, `b`" as `a, b`.
fn list_words(list: &str) -> String {
    list.trim_start_matches("one of ")
        .split(", ")
        .map(unquote)
        .collect::<Vec<_>>()
        .join(", ")
}

fn unquote(text: &str) -> &str {
    text.trim().trim_matches('`')
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn serde_messages_read_as_words() {
        assert_eq!(
            plain_words("invalid type: floating point `-4.0`, expected u32 at line 1 column 81"),
            "is -4.0; it must be a whole number (0 or more)"
        );
        assert_eq!(
            plain_words("invalid type: string \"eight\", expected u32 at line 1 column 9"),
            "is \"eight\"; it must be a whole number (0 or more)"
        );
        assert_eq!(
            plain_words("invalid value: integer `-4`, expected u32 at line 1 column 3"),
            "is -4; it must be a whole number (0 or more)"
        );
        assert_eq!(
            plain_words("unknown variant `disk`, expected one of `dir`, `null`, `device`, `tape`"),
            "'disk' is not one of: dir, null, device, tape"
        );
        assert_eq!(
            plain_words("unknown field `bufers`, expected one of `buffers`, `block_size`"),
            "bufers is not a field here (the fields are: buffers, block_size)"
        );
        assert_eq!(plain_words("missing field `target`"), "target is missing");
    }
}
