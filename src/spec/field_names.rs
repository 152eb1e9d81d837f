//! The fields a spec type accepts, as serde's derive lists them: for tests that keep the
//! spec's other shapes (the OpenAPI schema, the form, the command line) in step with it.

use std::cell::Cell;

use serde::Deserialize;
use serde::de::value::Error as DeError;
use serde::de::{Error as _, Visitor};

/// A deserializer that only records what a type asks for: the fields of a struct or the
/// variants of an enum, exactly as serde's derive lists them.
#[derive(Default)]
struct Names(Cell<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for &Names {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, DeError> {
        Err(DeError::custom("only structs and enums are recorded"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, DeError> {
        self.0.set(fields);
        Err(DeError::custom("recorded"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, DeError> {
        self.0.set(variants);
        Err(DeError::custom("recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        identifier ignored_any
    }
}

/// The fields of struct `T` (or the variants of enum `T`), sorted.
pub fn names_of<T: for<'de> Deserialize<'de>>() -> Vec<String> {
    let names = Names::default();
    let _ = T::deserialize(&names);
    let mut list: Vec<String> = names.0.get().iter().map(|s| s.to_string()).collect();
    list.sort();
    list
}
