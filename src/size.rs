//! Sizes as users write them (`256K`, `1G`, or bytes), parsed once into a typed byte size, and
//! printed back.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A size in bytes as a spec gives it: a byte count, or text such as `64K` or `2GiB` (binary
/// multiples). It is parsed once, when the spec is read, so a size that is not one is refused
/// there with its field's path; it is written back as it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteSize {
    bytes: u64,
    /// The text it was given as, if it was text.
    text: Option<String>,
}

/// White space as a JSON Schema pattern matches it (`\s` differs between regex dialects).
const SPACE: &str =
    r"[\t\n\u000b\u000c\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";

/// A size as [`parse_size`] reads it, as a JSON Schema pattern: digits, then an optional unit
/// (K/M/G/T and KiB…TiB binary, KB/MB/GB/TB decimal), white space around.
pub fn size_pattern() -> String {
    format!("^{SPACE}*[0-9]+{SPACE}*(?:[Bb]|[KkMmGgTt](?:[Ii]?[Bb])?)?{SPACE}*$")
}

/// `words` as a JSON Schema pattern, white space around them allowed as every text field of a
/// spec allows it.
pub fn spaced_pattern(words: &str) -> String {
    format!("^{SPACE}*{words}{SPACE}*$")
}

impl ByteSize {
    /// A size given as a byte count.
    pub fn new(bytes: u64) -> Self {
        Self { bytes, text: None }
    }

    /// A size given as text: `64K`, `1G`, `65536`.
    pub fn parse(text: &str) -> Result<Self, String> {
        Ok(Self {
            bytes: parse_size(text)?,
            text: Some(text.to_string()),
        })
    }

    /// The size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.text {
            Some(text) => f.write_str(text),
            None => write!(f, "{}", self.bytes),
        }
    }
}

impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.text {
            Some(text) => serializer.serialize_str(text),
            None => serializer.serialize_u64(self.bytes),
        }
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SizeVisitor;

        impl serde::de::Visitor<'_> for SizeVisitor {
            type Value = ByteSize;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as 65536, 64K, 1M or 2G")
            }

            fn visit_u64<E: serde::de::Error>(self, bytes: u64) -> Result<ByteSize, E> {
                Ok(ByteSize::new(bytes))
            }

            fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<ByteSize, E> {
                u64::try_from(value)
                    .map(ByteSize::new)
                    .map_err(|_| E::custom(format!("{value} is not a size: a size is not negative (a whole number of bytes, or e.g. 64K, 1M, 2G)")))
            }

            fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<ByteSize, E> {
                Err(E::custom(format!(
                    "{value} is not a size (a whole number of bytes, or e.g. 64K, 1M, 2G)"
                )))
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<ByteSize, E> {
                ByteSize::parse(text).map_err(E::custom)
            }
        }

        deserializer.deserialize_any(SizeVisitor)
    }
}

/// Parses `65536`, `64K`, `64KiB`, `1M`, `2G`, `1T`, `12TB`, `36PB`: K/M/G/T/P/E and KiB…EiB
/// are binary multiples (as fio reads `256K` blocks), KB…EB decimal (a disk's or a data
/// set's "12 TB" is 12 × 10^12 bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    if digits.is_empty() {
        return Err(format!(
            "'{text}' is not a size (write e.g. 65536, 64K, 1M, 2G)"
        ));
    }
    let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KIB" => 1 << 10,
        "M" | "MIB" => 1 << 20,
        "G" | "GIB" => 1 << 30,
        "T" | "TIB" => 1 << 40,
        "P" | "PIB" => 1 << 50,
        "E" | "EIB" => 1 << 60,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "PB" => 1_000_000_000_000_000,
        "EB" => 1_000_000_000_000_000_000,
        _ => {
            return Err(format!(
                "'{text}' has an unknown unit '{}' (use K, M, G, T, P or E for binary \
                 multiples, KB, MB, GB, TB, PB or EB for decimal ones)",
                unit.trim()
            ));
        }
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    number
        .checked_mul(scale)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// Bytes for people to read, in the binary units sizes are given in: `256 KiB`, `1 GiB`,
/// `2.48 GiB`, `0 B`. Every size a page or a sentence shows goes through here, so one page
/// never mixes `523520K`, `511M` and `0.27 GB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 6] = [
        ("EiB", 1 << 60),
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, scale) in UNITS {
        if bytes >= scale {
            if bytes.is_multiple_of(scale) {
                return format!("{} {unit}", bytes / scale);
            }
            let value = bytes as f64 / scale as f64;
            return if value < 10.0 {
                format!("{value:.2} {unit}")
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} B")
}

/// Formats bytes with binary units, the way sizes are written in specs.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ];
    for (unit, scale) in UNITS {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    for (unit, scale) in UNITS {
        if bytes >= scale {
            return format!("{:.1}{unit}iB", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size with a B after its decimal prefix is decimal, as a disk's label reads: "12TB"
    /// is 12 × 10^12 bytes; the binary forms stay binary.
    #[test]
    fn decimal_units_are_decimal_and_binary_ones_binary() {
        assert_eq!(parse_size("12TB"), Ok(12_000_000_000_000));
        assert_eq!(parse_size("12 tb"), Ok(12_000_000_000_000));
        assert_eq!(parse_size("500GB"), Ok(500_000_000_000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("12T"), Ok(12 << 40));
        assert_eq!(parse_size("12TiB"), Ok(12 << 40));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("99999999TB").is_err());
    }

    #[test]
    fn shown_sizes_use_binary_units_with_a_space() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(256 << 10), "256 KiB");
        assert_eq!(format_bytes(1 << 30), "1 GiB");
        assert_eq!(format_bytes(2_604_288 << 10), "2.48 GiB");
        assert_eq!(format_bytes(268_000_000), "255.6 MiB");
        assert_eq!(format_bytes(3 << 40), "3 TiB");
    }
}
