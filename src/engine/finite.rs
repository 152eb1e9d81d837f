//! No figure a run keeps may be infinite or not a number. JSON has no spelling for either, so
//! such a value is written as `null`, and a document with `null` where a figure belongs can no
//! longer be read: one bad division would cost every view of the campaign. Each one found is
//! set to 0 and named in a flag, so the run says why it is not valid instead.

use serde::Deserialize;
use serde_value::Value;

use super::result::{Flag, FlagCode, RunResult, RunStatus, Validity};

/// Sets every non-finite number of `result` to 0 and names each in an `undefined_figure` flag
/// (a warning on a run that did not finish). A result whose numbers are all finite is left
/// as it is.
pub fn keep_finite(result: &mut RunResult) {
    let Ok(mut value) = serde_value::to_value(&*result) else {
        return;
    };
    let mut paths = Vec::new();
    zero_non_finite(&mut value, &mut String::new(), &mut paths);
    if paths.is_empty() {
        return;
    }
    match RunResult::deserialize(value) {
        Ok(finite) => *result = finite,
        // The same shape read back cannot fail; if it ever did, the run keeps no figure.
        Err(_) => {
            *result = RunResult::failed(
                result.test,
                result.params.clone(),
                format!("figures that could not be computed: {}", paths.join(", ")),
            )
        }
    }
    let detail = format!(
        "could not be computed (infinite or not a number), kept as 0: {}",
        paths.join(", ")
    );
    if result.status == RunStatus::Done {
        let validity = result.validity.get_or_insert_with(Validity::default);
        validity.valid = false;
        validity.flags.push(Flag {
            code: FlagCode::UndefinedFigure,
            detail,
        });
    } else {
        result.warnings.push(format!("figures that {detail}"));
    }
}

/// Walks a value, setting each non-finite number to 0 (an optional one to none) and noting
/// its path, as `steady.cv_pct` or `samples[3].mb_per_s`.
fn zero_non_finite(value: &mut Value, path: &mut String, found: &mut Vec<String>) {
    match value {
        Value::F64(number) if !number.is_finite() => {
            *number = 0.0;
            found.push(path.clone());
        }
        Value::F32(number) if !number.is_finite() => {
            *number = 0.0;
            found.push(path.clone());
        }
        Value::Option(Some(inner)) => {
            if matches!(**inner, Value::F64(n) if !n.is_finite())
                || matches!(**inner, Value::F32(n) if !n.is_finite())
            {
                *value = Value::Option(None);
                found.push(path.clone());
            } else {
                zero_non_finite(inner, path, found);
            }
        }
        Value::Newtype(inner) => zero_non_finite(inner, path, found),
        Value::Seq(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{index}]"));
                zero_non_finite(item, path, found);
                path.truncate(len);
            }
        }
        Value::Map(map) => {
            for (key, item) in map.iter_mut() {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                match key {
                    Value::String(name) => path.push_str(name),
                    other => path.push_str(&format!("{other:?}")),
                }
                zero_non_finite(item, path, found);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::params::RunParams;
    use crate::engine::result::Sample;
    use crate::engine::steady::SteadyFigures;
    use crate::engine::test_kind::TestKind;

    fn done() -> RunResult {
        RunResult {
            status: RunStatus::Done,
            error: None,
            bytes: 1 << 20,
            seconds: 1.0,
            mb_per_s: 1.0,
            samples: vec![Sample {
                t: 0.25,
                mb_per_s: 4.0,
            }],
            validity: Some(Validity {
                valid: true,
                flags: Vec::new(),
            }),
            ..RunResult::failed(TestKind::TapeWrite, RunParams::example(), String::new())
        }
    }

    #[test]
    fn a_finite_result_is_left_as_it_is() {
        let mut result = done();
        let before = result.clone();
        keep_finite(&mut result);
        assert_eq!(result, before);
    }

    #[test]
    fn every_non_finite_figure_is_zeroed_and_named_and_the_document_reads_back() {
        let mut result = done();
        result.mb_per_s = f64::INFINITY;
        result.samples[0].mb_per_s = f64::NAN;
        result.cache_resident_pct = Some(f64::NEG_INFINITY);
        result.steady = Some(SteadyFigures {
            mb_per_s: 0.0,
            from_s: 1.0,
            to_s: 2.0,
            cv_pct: Some(f64::INFINITY),
            steady: false,
            flush_s: 0.0,
        });
        keep_finite(&mut result);
        assert_eq!(result.mb_per_s, 0.0);
        assert_eq!(result.samples[0].mb_per_s, 0.0);
        assert_eq!(result.cache_resident_pct, None);
        assert_eq!(result.steady.and_then(|s| s.cv_pct), None);
        let validity = result.validity.clone().expect("judged");
        assert!(!validity.valid);
        let flag = &validity.flags[0];
        assert_eq!(flag.code, FlagCode::UndefinedFigure);
        for path in [
            "mb_per_s",
            "samples[0].mb_per_s",
            "cache_resident_pct",
            "steady.cv_pct",
        ] {
            assert!(flag.detail.contains(path), "{path} in {}", flag.detail);
        }
        let json = serde_json::to_string(&result).expect("encodes");
        let back: RunResult = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, result);
    }
}
