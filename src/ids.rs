//! Campaign ids: short, URL-safe and unguessable, because report URLs get shared.

use rand::RngExt;

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// 12 characters of 62: about 71 random bits.
const LENGTH: usize = 12;

/// A fresh campaign id from the operating system's randomness.
pub fn campaign_id() -> String {
    let mut rng = rand::rng();
    (0..LENGTH)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// Whether `text` could be a campaign id (checked before it reaches the database).
pub fn looks_like_campaign_id(text: &str) -> bool {
    text.len() == LENGTH && text.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_url_safe_and_distinct() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| campaign_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| looks_like_campaign_id(id)));
        assert!(!looks_like_campaign_id("../etc/passw"));
    }
}
