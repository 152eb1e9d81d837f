use super::*;
use crate::spec::field_names::names_of;
use serde_json::json;

/// The spec's fields the form does not offer, and why.
const NOT_IN_THE_FORM: &[(&str, &str)] = &[
    (
        "params.source_rate_mb_s",
        "a what-if the verdict's advice gives as a spec or a flag",
    ),
    (
        "forecast",
        "a forecast's size, files, change and kept backups are asked by the spec or \
         `backlab run --forecast`",
    ),
    (
        "matrix.tool",
        "the *Backup tool* choices: several checked are the comparison",
    ),
];

/// The spec's shape is written once, in `crate::spec`: every field of its parameters,
/// matrix and source has a form field that names it (`data-path`), or is listed in
/// `NOT_IN_THE_FORM` with why; a field added to the spec without its place in the form
/// fails here.
#[test]
fn every_spec_field_has_a_form_field() {
    let template = include_str!("../../../../templates/new.html");
    let path = regex::Regex::new(r#"data-path="([^"]+)""#).expect("regex");
    let offered: Vec<&str> = path
        .captures_iter(template)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    let sections = [
        ("params", names_of::<crate::spec::ParamsSpec>()),
        ("matrix", names_of::<crate::spec::MatrixSpec>()),
        ("source", names_of::<crate::spec::SourceSpec>()),
        ("", names_of::<crate::spec::CampaignSpec>()),
    ];
    for (section, fields) in sections {
        for field in fields {
            let path = if section.is_empty() {
                field.clone()
            } else {
                format!("{section}.{field}")
            };
            // A section of its own (params, source…) is offered through its fields.
            let offered_here = offered
                .iter()
                .any(|p| *p == path || p.starts_with(&format!("{path}.")));
            assert!(
                offered_here || NOT_IN_THE_FORM.iter().any(|(name, _)| *name == path),
                "{path} has no field in the form: add one, or say why in NOT_IN_THE_FORM"
            );
        }
    }
    for (path, _) in NOT_IN_THE_FORM {
        assert!(
            !offered.contains(path),
            "{path} is in the form now: take it out of NOT_IN_THE_FORM"
        );
    }
}

#[test]
fn every_preset_is_a_valid_spec() {
    for (id, _) in PRESETS {
        let FormSpec { spec, errors } = CampaignForm::preset(id).to_spec();
        assert!(errors.is_empty(), "{id}: {errors}");
        let parsed = crate::spec::parse_json(&spec.to_string()).expect("parses");
        parsed.plan().expect("valid");
    }
    let tuning = CampaignForm::preset("tuning").to_spec().spec;
    assert_eq!(
        tuning["matrix"]["block_size"],
        json!(["64K", "128K", "256K"])
    );
}

/// Every built-in tool, as a lab that has them all offers it.
fn every_built_in_tool() -> Tools {
    Tools {
        available: crate::engine::tool::builtin::definitions()
            .into_iter()
            .map(|definition| crate::engine::tool::AvailableTool {
                definition,
                version: "1.0".to_string(),
                origin: "built-in".to_string(),
            })
            .collect(),
        ..Tools::default()
    }
}

fn posted(pairs: &[(&str, &str)]) -> CampaignForm {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut form = CampaignForm::from_pairs(&pairs);
    form.offer_tools(&every_built_in_tool());
    form
}

#[test]
fn the_chosen_tool_and_its_parameters_set_apart_from_their_defaults_make_the_specs_tool() {
    let common = [
        ("name", "x"),
        ("source_kind", "paths"),
        ("source_paths", "demo"),
        ("target_kind", "null"),
        ("tests", "tool_backup"),
        // Every tool's fields are posted; only the chosen one's count.
        ("tool.tar-gzip.level", "9"),
        ("tool.restic.compression", "max"),
        ("tool.restic.pack_size", "16"),
    ];
    let mut pairs = common.to_vec();
    pairs.extend([
        ("tool", "tar-zstd"),
        ("tool.tar-zstd.level", "19"),
        ("tool.tar-zstd.threads", "1"),
    ]);
    let FormSpec { spec, errors } = posted(&pairs).to_spec();
    assert!(errors.is_empty(), "{errors}");
    assert_eq!(
        spec["tool"],
        json!({"name": "tar-zstd", "params": {"level": 19}})
    );
    let parsed = crate::spec::parse_json(&spec.to_string()).expect("parses");
    parsed.plan().expect("valid");

    let mut pairs = common.to_vec();
    pairs.push(("tool", "restic"));
    let FormSpec { spec, .. } = posted(&pairs).to_spec();
    assert_eq!(
        spec["tool"],
        json!({"name": "restic", "params": {"compression": "max"}}),
        "a choice is its word; a value at its default is left to it"
    );

    let mut pairs = common.to_vec();
    pairs.push(("tool", ""));
    let FormSpec { spec, .. } = posted(&pairs).to_spec();
    assert!(spec.get("tool").is_none(), "none chosen: {spec}");

    let mut pairs = common.to_vec();
    pairs.extend([("tool", "tar-zstd"), ("tool.tar-zstd.level", "fast")]);
    let mut form = posted(&pairs);
    let FormSpec { spec, errors } = form.to_spec();
    assert_eq!(spec["tool"], json!({"name": "tar-zstd"}));
    assert_eq!(
        errors.0["tool.params.level"],
        "'fast' is not a whole number from 1 to 19 (write e.g. 3)"
    );
    form.set_errors(&errors.0);
    assert_eq!(
        form.error("tool.tar-zstd.level"),
        "'fast' is not a whole number from 1 to 19 (write e.g. 3)",
        "the error sits by the chosen tool's field"
    );
    assert_eq!(form.error("tool.tar-gzip.level"), "");
    let mut names = BTreeMap::new();
    names.insert("tool.name".to_string(), "unknown tool".to_string());
    form.set_errors(&names);
    assert_eq!(form.error("tool"), "unknown tool");
}

#[test]
fn posted_pairs_round_trip_and_errors_find_their_fields() {
    let pairs: Vec<(String, String)> = [
        ("name", "x"),
        ("source_kind", "paths"),
        ("source_paths", "a\n b \n"),
        ("target_kind", "null"),
        ("tests", "null_sink"),
        ("tests", "read_single"),
        ("buffers", "eight"),
        ("block_size", "64K"),
        ("fsync", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut form = CampaignForm::from_pairs(&pairs);
    let FormSpec { spec, errors } = form.to_spec();
    assert_eq!(spec["source"]["paths"], json!(["a", "b"]));
    assert_eq!(spec["tests"], json!(["null_sink", "read_single"]));
    assert_eq!(spec["params"]["buffers"], json!(32), "left to its default");
    assert_eq!(
        errors.0["params.buffers"],
        "'eight' is not a whole number from 1 to 1024 (write e.g. 4)"
    );
    assert!(spec["target"].get("path").is_none());
    let mut fields = BTreeMap::new();
    fields.insert("params.buffers".to_string(), "bad".to_string());
    fields.insert("matrix.block_size[1]".to_string(), "odd".to_string());
    fields.insert("source.paths[0]".to_string(), "outside".to_string());
    form.set_errors(&fields);
    assert_eq!(form.error("buffers"), "bad");
    assert_eq!(form.error("matrix_block_size"), "odd");
    assert_eq!(form.error("source_paths"), "outside");
    assert_eq!(form.error("name"), "");
}
