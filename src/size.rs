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

/// Parses `65536`, `64K`, `64KiB`, `64KB`, `1M`, `2G`, `1T`; K/M/G/T are binary multiples.
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
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "'{text}' has an unknown unit '{}' (use K, M, G or T)",
                unit.trim()
            ));
        }
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// Bytes for people to read, in the binary units sizes are given in: `256 KiB`, `1 GiB`,
/// `2.48 GiB`, `0 B`. Every size a page or a sentence shows goes through here, so one page
/// never mixes `523520K`, `511M` and `0.27 GB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
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
