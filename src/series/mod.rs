//! A history per spec: the campaigns that measure the same thing, oldest first, each test's
//! figure over them, and the changes that stand out of their noise; and each tool's requests to
//! its bucket per GiB backed up over them, and their changes (`requests`).
//!
//! A campaign joins the series its spec names (`series`), else the one of every campaign with
//! the same spec, its name aside. The key is what URLs and the store use for it.

pub mod history;
pub mod requests;

/// The fewest campaigns on each side of a change, in a test's figures or a tool's requests.
pub const MIN_CAMPAIGNS_EACH_SIDE: usize = 3;

use sha2::{Digest, Sha256};

use crate::spec::{CampaignSpec, SPEC_SERIES_PREFIX};

/// The series a campaign of `spec` joins.
pub fn key_of(spec: &CampaignSpec) -> String {
    if let Some(name) = &spec.series {
        return name.clone();
    }
    let mut measured = spec.clone();
    measured.name.clear();
    key_of_text(&serde_json::to_string(&measured).unwrap_or_default())
}

/// The key of the series of a spec stored as `text`.
pub fn key_of_text(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{SPEC_SERIES_PREFIX}{hex}")
}

/// The key of the series of a spec kept as `text`: its spec's, or for a spec that no longer
/// reads, one of its own text.
pub fn key_of_stored(text: &str) -> String {
    match serde_json::from_str::<CampaignSpec>(text) {
        Ok(spec) => key_of(&spec),
        Err(_) => key_of_text(text),
    }
}

/// Whether `key` can name a series at all (a named one or a spec's): anything else is not
/// looked up.
pub fn is_key(key: &str) -> bool {
    crate::spec::check_name(key).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> CampaignSpec {
        crate::spec::parse_json(json).expect("a spec")
    }

    #[test]
    fn a_spec_keys_its_series_by_what_it_measures_not_its_name() {
        let a =
            spec(r#"{"name":"a","source":{"generated":{"size":"64M"}},"target":{"kind":"null"}}"#);
        let b =
            spec(r#"{"name":"b","source":{"generated":{"size":"64M"}},"target":{"kind":"null"}}"#);
        let c =
            spec(r#"{"name":"a","source":{"generated":{"size":"32M"}},"target":{"kind":"null"}}"#);
        assert_eq!(key_of(&a), key_of(&b));
        assert_ne!(key_of(&a), key_of(&c));
        assert!(key_of(&a).starts_with(SPEC_SERIES_PREFIX) && is_key(&key_of(&a)));
        let named = spec(
            r#"{"series":"nightly","source":{"generated":{"size":"32M"}},"target":{"kind":"null"}}"#,
        );
        assert_eq!(key_of(&named), "nightly");
        assert!(crate::spec::check_series_name("spec-00").is_err());
        assert!(crate::spec::check_series_name("a/b").is_err());
    }
}
