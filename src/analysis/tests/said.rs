//! What is kept of a verdict holds no sentence: every sentence is rendered from the typed
//! findings when it is shown, so a sentence's wording can change without a new judgement
//! version, and a judgement kept with its sentences by an earlier version still reads.

use super::*;
use crate::engine::result::RestoreFigures;

/// A judgement with something to say in every place a sentence goes: an emulated drive that
/// limits the backup (the verdict names it), flags that cannot change that (caveats), advice,
/// stage accounting, a restore and a surveyed source (the summary's backup window).
fn judged() -> Judgement {
    let mut runs = flags::busy_table_one(true);
    for run in runs
        .iter_mut()
        .filter(|run| run.test == TestKind::FullBackup)
    {
        run.stages.reader_wait_pct = 80.0;
        run.stages.reader_waits = 800;
    }
    let mut restore = tape(run(TestKind::Restore, 100.0, 5.0), 1);
    restore.restore = Some(RestoreFigures {
        from: "emulated LTO-4 drive".into(),
        into: "/restored".into(),
        interleaved: 4,
        positioning_s: 65.0,
    });
    runs.push(restore);
    let survey = Survey {
        source_bytes: 64 << 30,
        ..Survey::default()
    };
    Judgement::of(&points::RunEntry::of_results(&runs), Some(&survey))
}

/// Every sentence a view of the verdict shows.
fn sentences(said: &SaidVerdict) -> Vec<String> {
    let mut sentences = vec![said.verdict.clone(), said.summary.clone()];
    sentences.extend(said.recommendations.iter().cloned());
    sentences.extend(said.caveats.iter().cloned());
    sentences.extend(said.restore_words.iter().cloned());
    sentences.extend(
        said.rows
            .iter()
            .filter_map(|row| row.stage.as_ref().map(|stage| stage.reason.clone())),
    );
    sentences
}

/// Each string in `value` with the key it sits under (an array's items under the array's).
fn strings(value: &serde_json::Value, key: &str, found: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::String(text) => found.push((key.to_string(), text.clone())),
        serde_json::Value::Array(items) => {
            for item in items {
                strings(item, key, found);
            }
        }
        serde_json::Value::Object(fields) => {
            for (name, field) in fields {
                strings(field, name, found);
            }
        }
        _ => {}
    }
}

/// The keys a kept judgement may hold a string under: names, ids and tags, never prose.
const NAMED: &[&str] = &[
    // Tags of the typed findings, advice and flags.
    "kind",
    "advice",
    "cause",
    "why",
    "evidence",
    "limit",
    "weight",
    "work",
    "flag",
    "flags",
    "limited_by",
    "component",
    "basis",
    "standing",
    "no_figure",
    "from",
    // Tests, runs and parameters by their ids and values.
    "test",
    "tests",
    "backup",
    "id",
    "field",
    "value",
    "cli",
    "block_size",
    // Names: a row's label (the test's and the target's), a drive model, a store.
    "label",
    "model",
    "store",
];

#[test]
fn a_kept_judgement_holds_no_sentence_and_what_is_shown_is_rendered_from_it() {
    let judgement = judged();
    let said = SaidVerdict::from(&judgement.verdict);
    assert!(judgement.verdict.conclusive, "{}", said.verdict);
    assert!(
        said.verdict.contains("(emulated LTO-4 drive)"),
        "{}",
        said.verdict
    );
    assert!(
        said.summary.contains("Backing up 64 GiB"),
        "{}",
        said.summary
    );
    assert!(!said.recommendations.is_empty() && !said.caveats.is_empty());
    assert!(said.restore_words.is_some());
    assert!(said.rows.iter().any(|row| row.stage.is_some()));

    // What the store is handed to keep.
    let kept = serde_json::to_string(&judgement).expect("a judgement writes as JSON");
    for sentence in sentences(&said) {
        assert!(!kept.contains(&sentence), "kept: {sentence}");
    }
    let mut found = Vec::new();
    strings(&serde_json::from_str(&kept).expect("JSON"), "", &mut found);
    let prose: Vec<&(String, String)> = found
        .iter()
        .filter(|(key, _)| !NAMED.contains(&key.as_str()))
        .collect();
    assert!(prose.is_empty(), "strings kept under other keys: {prose:?}");

    // Read back, it shows what it showed when judged: every sentence rendered from it now.
    let read: Judgement = serde_json::from_str(&kept).expect("a kept judgement reads");
    assert_eq!(read, judgement);
    assert_eq!(SaidVerdict::from(&read.verdict), said);
}

/// The JSON answers carry the kept verdict whole, with the sentences beside it.
#[test]
fn the_said_verdict_carries_every_kept_field_and_reads_back_typed() {
    let verdict = judged().verdict;
    let said = SaidVerdict::from(&verdict);
    let (kept, shown) = (
        serde_json::to_value(&verdict).expect("JSON"),
        serde_json::to_value(&said).expect("JSON"),
    );
    let keys = |value: &serde_json::Value| -> Vec<String> {
        value
            .as_object()
            .map(|fields| fields.keys().cloned().collect())
            .unwrap_or_default()
    };
    for key in keys(&kept) {
        assert_eq!(kept[&key].is_null(), shown[&key].is_null(), "{key}");
    }
    for (row, shown_row) in kept["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .zip(shown["rows"].as_array().expect("rows"))
    {
        for key in keys(row) {
            assert!(shown_row.get(&key).is_some(), "rows/{key}");
        }
    }
    assert_eq!(Verdict::from(said), verdict);
}

/// A judgement kept by version 2 holds its sentences and lacks what they are now rendered
/// from (the target's name, the source's size): it still reads, its stored sentences are
/// never shown, and its version tells the lab to judge it again from its runs.
#[test]
fn a_judgement_kept_with_its_sentences_still_reads_and_is_judged_again() {
    let judgement = judged();
    let today = SaidVerdict::from(&judgement.verdict);
    let mut old = serde_json::to_value(&judgement).expect("JSON");
    old["version"] = 2.into();
    let verdict = &mut old["verdict"];
    verdict["verdict"] = "A stored sentence.".into();
    verdict["summary"] = "A stored summary.".into();
    verdict["recommendations"] = serde_json::json!(["Stored advice."]);
    verdict["caveats"] = serde_json::json!(["A stored caveat."]);
    verdict["restore_words"] = "A stored restore.".into();
    for row in verdict["rows"].as_array_mut().expect("rows") {
        if row["stage"].is_object() {
            row["stage"]["reason"] = "a stored reason".into();
        }
    }
    for lacking in ["target", "network_shape", "source_bytes"] {
        verdict.as_object_mut().expect("object").remove(lacking);
    }
    let read: Judgement = serde_json::from_value(old).expect("an older judgement reads");
    assert_ne!(read.version, JUDGEMENT_VERSION);
    let shown = SaidVerdict::from(&read.verdict);
    assert!(
        sentences(&shown)
            .iter()
            .all(|sentence| !sentence.to_lowercase().contains("stored")),
        "{shown:#?}"
    );
    assert_eq!(shown.recommendations, today.recommendations);
    assert_eq!(shown.caveats, today.caveats);
    assert_eq!(shown.restore_words, today.restore_words);
    // Without what version 2 did not keep, less would be said: hence judged again.
    assert_ne!(shown.verdict, today.verdict);
    assert_ne!(shown.summary, today.summary);
}
