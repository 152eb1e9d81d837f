//! Price sheets of object storage: what a provider charges to keep a GB a month, for each
//! class of request, for a GB leaving the bucket or retrieved, and the least it bills an object
//! for (its size, its days). The lab's own sheets are `price_sheets.json`, each dated and with
//! its source; an operator's sheet (`--price-sheet FILE`, the same format) is checked at start
//! and a sheet of the same id replaces the lab's.

use serde::{Deserialize, Serialize};

/// The lab's own sheets.
const BUILT_IN: &str = include_str!("price_sheets.json");
/// No price is above this per GB or per 1 000 requests: anything more is a mistake.
const ABSURD: f64 = 1000.0;
/// The largest least-billed object size a sheet may give: the lab keeps the sizes of the
/// objects below it.
pub const MAX_MIN_OBJECT_BYTES: u64 = 1 << 20;

/// A file of sheets.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SheetFile {
    #[serde(default)]
    pub notes: String,
    pub sheets: Vec<PriceSheet>,
}

/// One provider's (or one storage class's) prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceSheet {
    /// What the lab calls it: `aws-s3-standard`.
    pub id: String,
    /// What a person reads: `AWS S3 Standard (us-east-1)`.
    pub name: String,
    /// `USD`, `EUR`: three capitals.
    pub currency: String,
    /// When its prices were read from the source: `2024-10-01`.
    pub date: String,
    /// Where they were read.
    pub source: String,
    pub storage_per_gb_month: f64,
    /// Bytes in the GB the sheet bills by: 2^30 for AWS, 10^9 for most others.
    #[serde(default = "gb_default")]
    pub gb_bytes: u64,
    /// The classes of request and their prices; the one with `others` takes every operation
    /// no class names.
    pub classes: Vec<RequestClass>,
    pub egress_per_gb: f64,
    #[serde(default)]
    pub free_egress_gb_month: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_egress_note: Option<String>,
    /// Per GB read back, beside the egress (the infrequent-access and archive classes).
    #[serde(default)]
    pub retrieval_per_gb: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval_note: Option<String>,
    /// Each object is billed for at least these days, deleted sooner or not.
    #[serde(default)]
    pub min_storage_days: u32,
    /// Each object is billed as at least this size.
    #[serde(default)]
    pub min_object_bytes: u64,
    /// Bytes billed for each object beside its own (an archive's index of it).
    #[serde(default)]
    pub object_overhead_bytes: u64,
}

fn gb_default() -> u64 {
    1_000_000_000
}

/// A class of request, its price, and the S3 operations in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestClass {
    pub name: String,
    pub per_1000: f64,
    /// Requests of the class the provider does not bill each day.
    #[serde(default)]
    pub free_per_day: u64,
    /// This class takes every operation no class names.
    #[serde(default)]
    pub others: bool,
    pub operations: Vec<String>,
}

impl PriceSheet {
    /// The class an operation is billed in.
    pub fn class_of(&self, operation: &str) -> Option<&RequestClass> {
        self.classes
            .iter()
            .find(|class| class.operations.iter().any(|named| named == operation))
            .or_else(|| self.classes.iter().find(|class| class.others))
    }

    /// `AWS S3 Standard (us-east-1), prices of 2024-10-01`.
    pub fn words(&self) -> String {
        format!("{}, prices of {}", self.name, self.date)
    }

    /// Every problem with the sheet, each naming its field: `sheet b2: classes[1].per_1000: …`.
    fn problems(&self, at: usize) -> Vec<String> {
        let name = if self.id.is_empty() {
            format!("sheets[{at}]")
        } else {
            format!("sheet {}", self.id)
        };
        let mut problems = Vec::new();
        let mut bad = |field: &str, why: &str| problems.push(format!("{name}: {field}: {why}"));
        if self.id.is_empty()
            || !self
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bad("id", "1 or more letters, digits, '-' or '_'");
        }
        if self.currency.len() != 3 || !self.currency.chars().all(|c| c.is_ascii_uppercase()) {
            bad("currency", "three capitals, as USD or EUR");
        }
        if jiff::civil::Date::strptime("%Y-%m-%d", &self.date).is_err() {
            bad("date", "the day the prices were read, as 2024-10-01");
        }
        if self.source.trim().is_empty() {
            bad("source", "where the prices were read");
        }
        for (field, price) in [
            ("storage_per_gb_month", self.storage_per_gb_month),
            ("egress_per_gb", self.egress_per_gb),
            ("free_egress_gb_month", self.free_egress_gb_month),
            ("retrieval_per_gb", self.retrieval_per_gb),
        ] {
            if let Some(why) = price_problem(price) {
                bad(field, why);
            }
        }
        if !(1_000_000..=1 << 40).contains(&self.gb_bytes) {
            bad("gb_bytes", "the bytes in a billed GB, 10^9 or 2^30");
        }
        if self.min_object_bytes > MAX_MIN_OBJECT_BYTES {
            bad("min_object_bytes", "at most 1 MiB");
        }
        if self.object_overhead_bytes > MAX_MIN_OBJECT_BYTES {
            bad("object_overhead_bytes", "at most 1 MiB");
        }
        if self.min_storage_days > 3650 {
            bad("min_storage_days", "at most 3650");
        }
        if self.classes.is_empty() {
            bad("classes", "at least one class of request");
        }
        if self.classes.iter().filter(|class| class.others).count() != 1 {
            bad("classes", "exactly one class with \"others\": true");
        }
        for (index, class) in self.classes.iter().enumerate() {
            if let Some(why) = price_problem(class.per_1000) {
                bad(&format!("classes[{index}].per_1000"), why);
            }
            for operation in &class.operations {
                if !crate::engine::target::s3::operations::KNOWN.contains(&operation.as_str()) {
                    bad(
                        &format!("classes[{index}].operations"),
                        &format!("{operation} is not an S3 operation the lab counts"),
                    );
                }
            }
        }
        problems
    }
}

fn price_problem(price: f64) -> Option<&'static str> {
    if !price.is_finite() {
        Some("not a number")
    } else if price < 0.0 {
        Some("negative")
    } else if price > ABSURD {
        Some("over 1 000 per unit: not a price")
    } else {
        None
    }
}

/// The sheets a lab bills by: its own, and an operator's.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceSheets(pub Vec<PriceSheet>);

impl PriceSheets {
    /// The lab's own sheets.
    pub fn built_in() -> PriceSheets {
        Self::parse(BUILT_IN, "the lab's price sheets")
            .unwrap_or_else(|problems| panic!("the built-in sheets: {}", problems.join("; ")))
    }

    /// The lab's sheets with an operator's file of them (`what` names it in a problem): an
    /// operator's sheet replaces the lab's of the same id. Every problem is named.
    pub fn with_file(text: &str, what: &str) -> Result<PriceSheets, Vec<String>> {
        let mut sheets = Self::built_in();
        for sheet in Self::parse(text, what)?.0 {
            match sheets.0.iter_mut().find(|known| known.id == sheet.id) {
                Some(known) => *known = sheet,
                None => sheets.0.push(sheet),
            }
        }
        Ok(sheets)
    }

    fn parse(text: &str, what: &str) -> Result<PriceSheets, Vec<String>> {
        let file: SheetFile =
            serde_json::from_str(text).map_err(|error| vec![format!("{what}: {error}")])?;
        let mut problems: Vec<String> = file
            .sheets
            .iter()
            .enumerate()
            .flat_map(|(at, sheet)| sheet.problems(at))
            .map(|problem| format!("{what}: {problem}"))
            .collect();
        for (at, sheet) in file.sheets.iter().enumerate() {
            if file.sheets[..at]
                .iter()
                .any(|earlier| earlier.id == sheet.id)
            {
                problems.push(format!("{what}: sheet {}: given twice", sheet.id));
            }
        }
        if problems.is_empty() {
            Ok(PriceSheets(file.sheets))
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_labs_sheets_hold_their_own_rules_and_name_six_offers() {
        let sheets = PriceSheets::built_in();
        let ids: Vec<&str> = sheets.0.iter().map(|sheet| sheet.id.as_str()).collect();
        for id in [
            "aws-s3-standard",
            "aws-s3-standard-ia",
            "aws-s3-glacier-ir",
            "aws-s3-glacier-deep-archive",
            "backblaze-b2",
            "wasabi",
        ] {
            assert!(ids.contains(&id), "{id}");
        }
        let s3 = &sheets.0[0];
        assert_eq!(s3.class_of("PutObject").map(|c| c.per_1000), Some(0.005));
        assert_eq!(s3.class_of("HeadObject").map(|c| c.per_1000), Some(0.0004));
    }

    #[test]
    fn a_bad_sheet_is_refused_naming_its_entry_and_field() {
        let text = r#"{"sheets": [{"id": "mine", "name": "Mine", "currency": "usd",
            "date": "yesterday", "source": "", "storage_per_gb_month": -1,
            "classes": [{"name": "all", "per_1000": 5000, "operations": ["Teleport"]}],
            "egress_per_gb": NaN}]}"#;
        let problems = PriceSheets::with_file(text, "mine.json").expect_err("refused");
        assert!(problems[0].contains("mine.json"), "{problems:?}");
        let text = r#"{"sheets": [{"id": "mine", "name": "Mine", "currency": "usd",
            "date": "yesterday", "source": "", "storage_per_gb_month": -1,
            "classes": [{"name": "all", "per_1000": 5000, "operations": ["Teleport"]}],
            "egress_per_gb": 2000}]}"#;
        let problems = PriceSheets::with_file(text, "mine.json").expect_err("refused");
        let all = problems.join("\n");
        for field in [
            "sheet mine: currency",
            "sheet mine: date",
            "sheet mine: source",
            "sheet mine: storage_per_gb_month: negative",
            "sheet mine: egress_per_gb",
            "sheet mine: classes: exactly one class",
            "sheet mine: classes[0].per_1000: over 1 000",
            "sheet mine: classes[0].operations: Teleport",
        ] {
            assert!(all.contains(field), "{field} not named: {all}");
        }
    }

    #[test]
    fn an_operators_sheet_replaces_the_labs_of_its_id() {
        let text = r#"{"sheets": [{"id": "wasabi", "name": "Wasabi, our contract",
            "currency": "USD", "date": "2026-01-01", "source": "contract 4711",
            "storage_per_gb_month": 0.005, "egress_per_gb": 0,
            "classes": [{"name": "all", "per_1000": 0, "others": true, "operations": []}]}]}"#;
        let sheets = PriceSheets::with_file(text, "ours.json").expect("a good sheet");
        let wasabi = sheets
            .0
            .iter()
            .find(|sheet| sheet.id == "wasabi")
            .expect("wasabi");
        assert_eq!(wasabi.storage_per_gb_month, 0.005);
        assert_eq!(sheets.0.len(), PriceSheets::built_in().0.len());
    }
}
