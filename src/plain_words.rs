//! serde's messages about a spec, in words a user of the form or the API reads without
//! knowing Rust: `invalid type: floating point `-4.0`, expected u32 at line 1 column 81`
//! becomes `is -4.0; it must be a whole number, not negative` (or, where the field's range is
//! known, `a whole number from 1 to 1024`).

/// A serde error message about one field, in plain words.
pub fn plain_words(message: &str) -> String {
    plain_words_expecting(message, None)
}

/// A serde error message about one field, in plain words; a value of the wrong type or form
/// is said to need `expected` when given (the field's own range, `a whole number from 1 to
/// 1024`), in place of what its type alone allows.
pub fn plain_words_expecting(message: &str, expected: Option<&str>) -> String {
    let message = strip_position(message);
    if let Some(rest) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        && let Some((found, wanted)) = rest.split_once(", expected ")
    {
        return format!(
            "is {}; it must be {}",
            found_words(found),
            expected.map_or_else(|| expected_words(wanted), str::to_string)
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

/// Why a text is not JSON, in plain words and where: `the body is not JSON: at line 1, column
/// 12, a value was expected (text in double quotes, a number, true, false, null, an object or
/// a list)` for serde_json's `expected value at line 1 column 12`.
pub fn not_json(error: &serde_json::Error) -> String {
    let what = match strip_position(&error.to_string()) {
        "expected value" | "expected ident" => "a value was expected (text in double quotes, \
             a number, true, false, null, an object in {} or a list in [])"
            .to_string(),
        "expected `:`" => "a ':' was expected after the field's name".to_string(),
        "expected `,` or `}`" => "a ',' before the next field or a '}' closing the object \
             was expected"
            .to_string(),
        "expected `,` or `]`" => "a ',' before the next item or a ']' closing the list \
             was expected"
            .to_string(),
        "key must be a string" => "a field's name must be text in double quotes".to_string(),
        "trailing comma" => "a ',' is followed by no field or item".to_string(),
        "trailing characters" => "more follows the end of the JSON value".to_string(),
        "invalid number" | "number out of range" => "a number cannot be read".to_string(),
        "invalid escape" | "invalid unicode code point" | "unexpected end of hex escape" => {
            "text holds a '\\' escape that JSON does not have".to_string()
        }
        other if other.starts_with("EOF while parsing") => {
            "the body ends before its JSON does (something is not closed)".to_string()
        }
        other if other.starts_with("control character") => {
            "text holds a line break or other control character; write it as \\n".to_string()
        }
        other => other.to_string(),
    };
    if error.line() == 0 {
        format!("the body is not JSON: {what}")
    } else {
        format!(
            "the body is not JSON: at line {}, column {}, {what}",
            error.line(),
            error.column()
        )
    }
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
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, not negative".to_string(),
        "i32" | "i64" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a string" => "text".to_string(),
        "a sequence" => "a list".to_string(),
        other if other.starts_with("struct ") => "an object".to_string(),
        other => list_words(other),
    }
}

/// serde's "one of `a`, `b`, `c`" (or "`a` or `b`" for two) as `a, b, c`.
fn list_words(list: &str) -> String {
    list.trim_start_matches("one of ")
        .replace("` or `", "`, `")
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
            "is -4.0; it must be a whole number, not negative"
        );
        assert_eq!(
            plain_words("invalid type: string \"eight\", expected u32 at line 1 column 9"),
            "is \"eight\"; it must be a whole number, not negative"
        );
        assert_eq!(
            plain_words("invalid value: integer `-4`, expected u32 at line 1 column 3"),
            "is -4; it must be a whole number, not negative"
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
        assert_eq!(
            plain_words("unknown variant `dd`, expected `fio` or `iperf3`"),
            "'dd' is not one of: fio, iperf3"
        );
    }

    #[test]
    fn a_body_that_is_not_json_says_where_and_what_was_expected() {
        let error =
            serde_json::from_str::<serde_json::Value>("{\"source\": nope}").expect_err("not JSON");
        assert_eq!(
            super::not_json(&error),
            "the body is not JSON: at line 1, column 13, a value was expected (text in double \
             quotes, a number, true, false, null, an object in {} or a list in [])"
        );
        let error = serde_json::from_str::<serde_json::Value>("{\"a\": 1").expect_err("open");
        assert!(super::not_json(&error).contains("ends before its JSON does"));
    }
}
