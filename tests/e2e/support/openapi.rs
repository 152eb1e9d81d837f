//! The API's OpenAPI document applied to what crosses the wire: a small JSON Schema check of
//! the keywords the lab's document uses, for request bodies (what a schema permits) and for
//! answers (what an endpoint sends fits what it documents, no field more or less).

use serde_json::{Value, json};

/// The schema of an operation's answer with `status`, as JSON.
pub fn answer_schema(document: &Value, path: &str, method: &str, status: u16) -> Value {
    document["paths"][path][method]["responses"][status.to_string()]["content"]["application/json"]
        ["schema"]
        .clone()
}

/// The keywords of JSON Schema 2020-12 the lab's document uses, checked; `$ref` into the
/// document's components. Returns why `value` does not fit, or `None`.
pub fn violation(document: &Value, schema: &Value, value: &Value, at: &str) -> Option<String> {
    check(document, schema, value, at, false)
}

/// Why an answer does not fit its documented schema, or `None`. Stricter than
/// [`violation`]: an object described by properties (its own and its `allOf` parts') holds
/// no other field unless its schema says `additionalProperties`, so a field an answer gains
/// without its schema gaining it is found too.
pub fn answer_violation(document: &Value, schema: &Value, value: &Value) -> Option<String> {
    check(document, schema, value, "answer", true)
}

/// A component by its `$ref`.
fn resolve<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap_or_default();
            resolve(document, &document["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// The properties and required fields of an object schema, its `allOf` parts' merged in.
fn fields_of(
    document: &Value,
    schema: &Value,
    properties: &mut serde_json::Map<String, Value>,
    required: &mut Vec<String>,
) {
    let schema = resolve(document, schema);
    if let Some(own) = schema["properties"].as_object() {
        properties.extend(
            own.iter()
                .map(|(name, field)| (name.clone(), field.clone())),
        );
    }
    required.extend(
        schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string),
    );
    for part in schema["allOf"].as_array().into_iter().flatten() {
        fields_of(document, part, properties, required);
    }
}

fn check(
    document: &Value,
    schema: &Value,
    value: &Value,
    at: &str,
    strict: bool,
) -> Option<String> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or_default();
        return check(
            document,
            &document["components"]["schemas"][name],
            value,
            at,
            strict,
        );
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fits = types.iter().any(|kind| match *kind {
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            "string" => value.is_string(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            _ => false,
        });
        if !fits {
            return Some(format!("{at}: {value} is not of type {types:?}"));
        }
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        return Some(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(options) = schema["oneOf"].as_array() {
        let misfits: Vec<String> = options
            .iter()
            .filter_map(|option| check(document, option, value, at, strict))
            .collect();
        let fitting = options.len() - misfits.len();
        if fitting != 1 {
            return Some(format!(
                "{at}: {value} fits {fitting} of oneOf ({})",
                misfits.join("; ")
            ));
        }
    }
    if strict && schema.get("allOf").is_some() && value.is_object() {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        fields_of(document, schema, &mut properties, &mut required);
        let merged = json!({"type": "object", "properties": properties, "required": required});
        if let Some(why) = check(document, &merged, value, at, strict) {
            return Some(why);
        }
        // Each part's own constraints too, its fields apart from the others' open.
        for part in schema["allOf"].as_array().into_iter().flatten() {
            if let Some(why) = check(document, part, value, at, false) {
                return Some(why);
            }
        }
        return None;
    }
    for option in schema["allOf"].as_array().into_iter().flatten() {
        if let Some(why) = check(document, option, value, at, strict) {
            return Some(why);
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if schema["minLength"]
            .as_u64()
            .is_some_and(|least| length < least)
        {
            return Some(format!("{at}: shorter than minLength"));
        }
        if schema["maxLength"]
            .as_u64()
            .is_some_and(|most| length > most)
        {
            return Some(format!("{at}: longer than maxLength"));
        }
        if let Some(pattern) = schema["pattern"].as_str() {
            let pattern = regex::Regex::new(pattern).expect("the schema's pattern compiles");
            if !pattern.is_match(text) {
                return Some(format!("{at}: {text:?} does not match {pattern}"));
            }
        }
    }
    if let Some(number) = value.as_f64() {
        if schema["minimum"]
            .as_f64()
            .is_some_and(|least| number < least)
        {
            return Some(format!("{at}: {number} is under minimum"));
        }
        if schema["maximum"].as_f64().is_some_and(|most| number > most) {
            return Some(format!("{at}: {number} is over maximum"));
        }
        if schema["exclusiveMinimum"]
            .as_f64()
            .is_some_and(|least| number <= least)
        {
            return Some(format!("{at}: {number} is not over exclusiveMinimum"));
        }
    }
    if let Some(items) = value.as_array() {
        if schema["minItems"]
            .as_u64()
            .is_some_and(|least| (items.len() as u64) < least)
        {
            return Some(format!("{at}: fewer items than minItems"));
        }
        if schema["maxItems"]
            .as_u64()
            .is_some_and(|most| items.len() as u64 > most)
        {
            return Some(format!("{at}: more items than maxItems"));
        }
        if let Some(item_schema) = schema.get("items") {
            for (index, item) in items.iter().enumerate() {
                if let Some(why) = check(
                    document,
                    item_schema,
                    item,
                    &format!("{at}[{index}]"),
                    strict,
                ) {
                    return Some(why);
                }
            }
        }
    }
    if let Some(fields) = value.as_object() {
        for required in schema["required"].as_array().into_iter().flatten() {
            let name = required.as_str().unwrap_or_default();
            if !fields.contains_key(name) {
                return Some(format!("{at}: {name} is required"));
            }
        }
        let properties = schema["properties"].as_object();
        for (name, field) in fields {
            let path = format!("{at}.{name}");
            match properties.and_then(|properties| properties.get(name)) {
                Some(field_schema) => {
                    if let Some(why) = check(document, field_schema, field, &path, strict) {
                        return Some(why);
                    }
                }
                None if schema["additionalProperties"].is_object() => {
                    let values = &schema["additionalProperties"];
                    if let Some(why) = check(document, values, field, &path, strict) {
                        return Some(why);
                    }
                }
                None if schema["additionalProperties"] == json!(false) => {
                    return Some(format!("{path} is not a property"));
                }
                None if strict
                    && properties.is_some()
                    && schema["additionalProperties"] != json!(true) =>
                {
                    return Some(format!("{path} is not in the documented schema"));
                }
                None => {}
            }
        }
    }
    None
}
