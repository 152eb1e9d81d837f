//! What reading a spec into a JSON value would let pass unseen: a key given twice in one
//! object (the value keeps only the last), a list where a section's object belongs (serde
//! reads a struct from a list by position), and whole numbers written with a fraction
//! (`42.0`), which JSON does not tell apart from `42`.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::FieldErrors;

/// The sections of a spec that are objects: a list given for one is refused, never read by
/// position.
const SECTIONS: [&[&str]; 6] = [
    &["source"],
    &["source", "generated"],
    &["target"],
    &["params"],
    &["matrix"],
    &["matrix", "search"],
];

/// Records every key given twice in one object of `text`, at its path. `text` is JSON that
/// already parsed; a walk that fails adds nothing.
pub fn duplicate_keys(text: &str, errors: &mut FieldErrors) {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let mut found = Vec::new();
    if (Walk {
        path: String::new(),
        found: &mut found,
    })
    .deserialize(&mut deserializer)
    .is_ok()
    {
        for path in found {
            errors.add(path, "is given more than once");
        }
    }
}

/// Records every section of the spec given as a list, and sets it aside so the rest can be
/// read: the paths set aside. A spec that is a list as a whole is recorded, nothing more.
pub fn sections_are_not_lists(value: &mut Value, errors: &mut FieldErrors) -> Vec<String> {
    let mut set_aside = Vec::new();
    if value.is_array() {
        errors.add("spec", "must be a JSON object");
        return set_aside;
    }
    for keys in SECTIONS {
        let Some((last, parents)) = keys.split_last() else {
            continue;
        };
        let mut at = Some(&mut *value);
        for key in parents {
            at = at.and_then(|inner| inner.get_mut(key));
        }
        if let Some(Value::Object(parent)) = at
            && parent.get(*last).is_some_and(Value::is_array)
        {
            parent.remove(*last);
            let path = keys.join(".");
            errors.add(
                path.clone(),
                "must be an object of named fields, not a list",
            );
            set_aside.push(path);
        }
    }
    set_aside
}

/// Writes every whole number given with a fraction (`42.0`, `1e3`) as the integer it is, so a
/// count reads it as any JSON reader would.
pub fn whole_numbers_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64()
                && float.fract() == 0.0
                && float.abs() < 9.0e15
            {
                *value = Value::from(float as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers_as_integers),
        _ => {}
    }
}

/// A walk through a JSON document that notes each key repeated within its object.
struct Walk<'f> {
    path: String,
    found: &'f mut Vec<String>,
}

impl Walk<'_> {
    fn at(path: &str, key: &str) -> String {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Walk {
                path: format!("{}[{index}]", self.path),
                found: &mut *self.found,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = Walk::at(&self.path, &key);
            if !seen.insert(key) && !self.found.contains(&path) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }
}
