//! The OpenAPI document against the types it describes: the spec's schemas have the fields,
//! required fields and closed objects the spec's serde definitions have, and its patterns
//! accept what the spec's parsers read; and the document as a whole is the one committed in
//! `tests/fixtures/openapi.json`, so no shape changes unseen.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::spec;
use crate::spec::TestKind;
use crate::spec::field_names::names_of;
use crate::spec::schema::{size_pattern, tape_model_pattern};

/// The committed OpenAPI document, which `the_document_is_the_one_committed` holds the
/// generated one to.
const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openapi.json");

/// Set (to anything) to write the generated document over the committed one.
const ACCEPT: &str = "BACKLAB_ACCEPT_OPENAPI";

fn document() -> Value {
    let (_, api) = super::router().split_for_parts();
    serde_json::to_value(&api).expect("the document serializes")
}

fn component<'a>(document: &'a Value, name: &str) -> &'a Value {
    &document["components"]["schemas"][name]
}

fn property_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {schema}"))
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

/// A spec with every field given, each struct's part valid on its own.
fn everything() -> Value {
    json!({
        "name": "all",
        "source": {"paths": ["/a"], "generated": {"size": "1M", "compress_ratio": 2.0,
                                     "dedup_ratio": 3.0, "dedup_unit": "128K",
                                     "generations": 5, "change_rate": 0.05},
                   "agents": ["a1"]},
        "target": {"kind": "tape", "path": "/t", "model": "lto-4", "drives": 1,
                   "native_mb_s": 120.0, "min_mb_s": 40.0, "buffer_mb": 128.0,
                   "reposition_s": 2.0, "max_compression": 2.0, "capacity": "1G",
                   "load_s": 10.0, "locate_s": 30.0},
        "tests": ["null_sink"],
        "params": {"buffers": 8, "block_size": "64K", "streams": 2, "direct": false,
                   "cold_cache": false, "fsync": false, "compress_ratio": 2.0,
                   "size": 1024, "duration_s": 1.0, "source_rate_mb_s": 10.0,
                   "clients": 1, "link_mb_s": 10.0},
        "matrix": {"buffers": [1], "block_size": ["4K"], "streams": [1], "clients": [1],
                   "part_size": ["16M"], "concurrency": [8],
                   "search": {"strategy": "full", "budget_runs": 10, "seed": 1}},
        "repeat": 1
    })
}

/// Each spec struct: its component name, how to parse a value as the real type, and
/// where its full example sits in `everything()`.
type Parse = fn(Value) -> Result<(), String>;

fn parse<T: for<'de> Deserialize<'de>>(value: Value) -> Result<(), String> {
    serde_json::from_value::<T>(value)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A target parses when its kind has every setting given: the spec keeps a kind's
/// settings open until the kind reads them.
fn parse_target(value: Value) -> Result<(), String> {
    let target: spec::TargetSpec = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let mut errors = crate::field_errors::FieldErrors::default();
    target.plan(&mut errors);
    match errors
        .0
        .iter()
        .find(|(_, message)| message.contains("is not a setting of kind"))
    {
        Some((field, message)) => Err(format!("{field} {message}")),
        None => Ok(()),
    }
}

/// A kind's settings as its settings type's schema names them.
fn settings_names(kind: spec::TargetKind) -> Vec<String> {
    match kind
        .as_kind()
        .settings_type()
        .map(|settings| (settings.schema)())
    {
        Some(utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(object))) => {
            object.properties.into_keys().collect()
        }
        _ => Vec::new(),
    }
}

#[test]
fn each_kinds_settings_schema_names_its_settings_types_fields() {
    use crate::engine::target::dedup::DedupSettings;
    use crate::engine::target::s3::S3Settings;
    use crate::engine::target::striped::StripedSettings;
    use crate::engine::target::tape::TapeSettings;
    let sorted = |mut names: Vec<String>| {
        names.sort();
        names
    };
    for (id, fields) in [
        ("tape", names_of::<TapeSettings>()),
        ("striped", names_of::<StripedSettings>()),
        ("s3", names_of::<S3Settings>()),
        ("dedup", names_of::<DedupSettings>()),
        ("dir", Vec::new()),
        ("null", Vec::new()),
        ("device", Vec::new()),
    ] {
        let kind = spec::TargetKind::from_id(id).expect("a kind");
        assert_eq!(sorted(settings_names(kind)), sorted(fields), "{id}");
    }
}

fn target_names() -> Vec<String> {
    let mut names = vec!["kind".to_string(), "path".to_string()];
    for kind in spec::TargetKind::all() {
        names.extend(settings_names(kind));
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn a_striped_target_with_every_setting_parses() {
    let target = json!({"kind": "striped", "disks": 10, "disk_mb_s": 5.0, "track": "64K",
        "stripe_unit": "128K", "controllers": 3, "controller_mb_s": 20.0,
        "rotational_delay_ms": 13.1});
    parse_target(target).expect("every striped setting");
}

#[test]
fn an_object_store_target_with_every_setting_parses() {
    let target = json!({"kind": "s3", "store": "lab", "prefix": "backlab/",
        "part_size": "16M", "concurrency": 8, "object_size": "1G"});
    parse_target(target).expect("every s3 setting");
}

fn structs() -> Vec<(&'static str, Vec<String>, Parse, &'static str)> {
    vec![
        (
            "CampaignSpec",
            names_of::<spec::CampaignSpec>(),
            parse::<spec::CampaignSpec>,
            "",
        ),
        (
            "SourceSpec",
            names_of::<spec::SourceSpec>(),
            parse::<spec::SourceSpec>,
            "/source",
        ),
        (
            "GeneratedSpec",
            names_of::<spec::GeneratedSpec>(),
            parse::<spec::GeneratedSpec>,
            "/source/generated",
        ),
        ("TargetSpec", target_names(), parse_target, "/target"),
        (
            "ParamsSpec",
            names_of::<spec::ParamsSpec>(),
            parse::<spec::ParamsSpec>,
            "/params",
        ),
        (
            "MatrixSpec",
            names_of::<spec::MatrixSpec>(),
            parse::<spec::MatrixSpec>,
            "/matrix",
        ),
        (
            "SearchSpec",
            names_of::<spec::SearchSpec>(),
            parse::<spec::SearchSpec>,
            "/matrix/search",
        ),
    ]
}

#[test]
fn the_document_says_what_it_describes() {
    let document = document();
    assert_eq!(document["info"]["title"], "backlab");
    assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        document["info"]["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    let body = &document["paths"]["/api/campaigns"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(body["$ref"], "#/components/schemas/CampaignSpec", "{body}");
    // The example is a campaign the lab accepts.
    let example = component(&document, "CampaignSpec")["example"].to_string();
    let spec = spec::parse_json(&example).expect("the example parses");
    assert!(spec.plan().is_ok(), "{example}");
}

#[test]
fn the_spec_schemas_have_the_fields_the_spec_accepts() {
    let document = document();
    let everything = everything();
    for (name, fields, parse, at) in structs() {
        let schema = component(&document, name);
        assert!(!fields.is_empty(), "{name}: no fields recorded");
        assert_eq!(property_names(schema), fields, "{name}: properties");

        // Exactly the required fields: with only them the real type parses; without any
        // one of them it does not.
        let full = everything.pointer(at).expect("example part").clone();
        parse(full.clone()).unwrap_or_else(|e| panic!("{name}: the full example: {e}"));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let only_required: serde_json::Map<String, Value> = full
            .as_object()
            .expect("object")
            .iter()
            .filter(|(key, _)| required.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        parse(Value::Object(only_required.clone()))
            .unwrap_or_else(|e| panic!("{name}: only {required:?} given: {e}"));
        for field in &required {
            let mut without = only_required.clone();
            without.remove(*field);
            assert!(
                parse(Value::Object(without)).is_err(),
                "{name}: {field} is not required by the spec"
            );
        }

        // Closed objects exactly where the spec denies unknown fields.
        let mut extra = full.clone();
        extra["surplus"] = json!(1);
        let closed = parse(extra).is_err();
        assert_eq!(
            schema["additionalProperties"] == json!(false),
            closed,
            "{name}: additionalProperties"
        );
    }
}

#[test]
fn the_enums_list_what_the_spec_knows() {
    let document = document();
    let kinds: Vec<String> = component(&document, "TargetKind")["enum"]
        .as_array()
        .expect("target kinds")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let registered: Vec<&str> = spec::TargetKind::all().map(spec::TargetKind::id).collect();
    assert_eq!(kinds, registered);
    for kind in &kinds {
        let read: spec::TargetKind = serde_json::from_value(json!(kind)).expect("a kind");
        assert_eq!(read.id(), kind);
    }
    let unknown = serde_json::from_value::<spec::TargetKind>(json!("tapes"))
        .expect_err("not a kind")
        .to_string();
    assert!(
        unknown.contains("expected one of `dir`, `null`"),
        "{unknown}"
    );

    let tests = &component(&document, "CampaignSpec")["properties"]["tests"];
    let listed: Vec<&str> = tests["items"]["enum"]
        .as_array()
        .expect("test ids")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let known: Vec<&str> = TestKind::ALL.iter().map(|t| t.id()).collect();
    assert_eq!(listed, known);
}

#[test]
fn the_size_pattern_accepts_what_the_spec_parses() {
    let pattern = regex::Regex::new(&size_pattern()).expect("a valid pattern");
    let cases = [
        "0", "65536", "64K", "64k", "64KB", "64KiB", "64kib", "1M", "2G", "1T", "1 G", " 3M ",
        "\t7b", "8B", "5\u{a0}K", "2X", "K", "", "1.5M", "-1", "1 K B", "1MiBs", "١٢", "12 KIB",
    ];
    for case in cases {
        assert_eq!(
            pattern.is_match(case),
            spec::parse_size(case).is_ok(),
            "{case:?}"
        );
    }
}

#[test]
fn the_tape_model_pattern_accepts_what_the_spec_knows() {
    let pattern = regex::Regex::new(&tape_model_pattern()).expect("a valid pattern");
    for case in [
        "lto-3",
        "LTO-9",
        " Lto-5 ",
        "ultrium-960",
        "lto-2",
        "lto-10",
        "lto3",
        "",
    ] {
        assert_eq!(
            pattern.is_match(case),
            spec::tape_model(case).is_some(),
            "{case:?}"
        );
    }
}

/// The document as it is compared with the committed one: the crate's version (checked
/// against Cargo.toml above) is left out, since a release changes no shape.
fn document_without_version() -> Value {
    let mut document = document();
    document["info"]["version"] = json!("");
    document
}

#[test]
fn the_document_is_the_one_committed() {
    let generated = document_without_version();
    let text = serde_json::to_string_pretty(&generated).expect("the document serializes") + "\n";
    let accept = format!(
        "If the change is meant, write the generated document over the committed one and \
         commit it with the change:\n  {ACCEPT}=1 cargo test --lib \
         http::api::tests::the_document_is_the_one_committed"
    );
    if std::env::var_os(ACCEPT).is_some() {
        std::fs::write(SNAPSHOT, &text).unwrap_or_else(|e| panic!("writing {SNAPSHOT}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(SNAPSHOT)
        .unwrap_or_else(|e| panic!("{SNAPSHOT} cannot be read ({e}).\n{accept}"));
    let committed: Value = serde_json::from_str(&committed)
        .unwrap_or_else(|e| panic!("{SNAPSHOT} is not JSON ({e}).\n{accept}"));
    let differences = differences(&committed, &generated);
    const SHOWN: usize = 40;
    let mut listed: Vec<String> = differences.iter().take(SHOWN).cloned().collect();
    if differences.len() > SHOWN {
        listed.push(format!("… and {} more", differences.len() - SHOWN));
    }
    assert!(
        differences.is_empty(),
        "the OpenAPI document differs from tests/fixtures/openapi.json in {} place(s) \
         (- committed, + generated):\n  {}\n{accept}",
        differences.len(),
        listed.join("\n  ")
    );
}

/// Where `generated` differs from `committed`, one line each: a part removed (`-`), added
/// (`+`) or changed (`~`, with both values), named by its path in the document.
fn differences(committed: &Value, generated: &Value) -> Vec<String> {
    let mut found = Vec::new();
    differ(committed, generated, String::new(), &mut found);
    found
}

fn differ(committed: &Value, generated: &Value, at: String, found: &mut Vec<String>) {
    match (committed, generated) {
        (Value::Object(before), Value::Object(after)) => {
            for (key, value) in before {
                let path = format!("{at}{}", step(key));
                match after.get(key) {
                    Some(now) => differ(value, now, path, found),
                    None => found.push(format!("- {path}: {}", brief(value))),
                }
            }
            for (key, value) in after {
                if !before.contains_key(key) {
                    found.push(format!("+ {at}{}: {}", step(key), brief(value)));
                }
            }
        }
        (Value::Array(before), Value::Array(after)) => {
            for (index, value) in before.iter().enumerate() {
                let path = format!("{at}[{index}]");
                match after.get(index) {
                    Some(now) => differ(value, now, path, found),
                    None => found.push(format!("- {path}: {}", brief(value))),
                }
            }
            for (index, value) in after.iter().enumerate().skip(before.len()) {
                found.push(format!("+ {at}[{index}]: {}", brief(value)));
            }
        }
        _ if committed != generated => found.push(format!(
            "~ {at}: {} -> {}",
            brief(committed),
            brief(generated)
        )),
        _ => {}
    }
}

/// A key as a step of a path: `.name`, or `["/api/x"]` when it is no plain name.
fn step(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_') {
        format!(".{key}")
    } else {
        format!("[{}]", Value::from(key))
    }
}

/// A value in at most 80 characters.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

#[test]
fn the_differences_name_what_was_removed_added_and_changed() {
    let committed = json!({"paths": {"/api/a": {"get": 1}}, "list": [1, 2], "same": true});
    let generated = json!({"paths": {"/api/a": {"get": 2, "put": 3}}, "list": [1], "same": true});
    assert_eq!(
        differences(&committed, &generated),
        vec![
            "- .list[1]: 2".to_string(),
            "~ .paths[\"/api/a\"].get: 1 -> 2".to_string(),
            "+ .paths[\"/api/a\"].put: 3".to_string(),
        ]
    );
    assert!(differences(&committed, &committed).is_empty());
}
