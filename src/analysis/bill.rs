//! What a run's use of a bucket would cost by each price sheet: its requests by class, the
//! storage a month of what it left (each object billed as the sheet bills it), and a full
//! restore's egress and retrieval. Every figure is the marginal cost, before any free
//! allowance (a free tier is the account's, not the run's): the sheet's allowances are said
//! beside it, never subtracted.

use serde::{Deserialize, Serialize};

use super::prices::{PriceSheet, PriceSheets};
use crate::engine::result::RunResult;
use crate::engine::target::s3::operations::{RequestCounts, StoredObjects};

/// One class of request on one sheet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ClassCost {
    pub class: String,
    pub requests: u64,
    pub cost: f64,
}

/// A run's bill by one sheet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SheetBill {
    /// The sheet's id, and its name with its date: every cost names its sheet.
    pub sheet: String,
    pub sheet_words: String,
    pub currency: String,
    pub classes: Vec<ClassCost>,
    /// Every class's cost together.
    pub requests_cost: f64,
    /// The bytes the sheet bills for what the run left (small objects raised to its least).
    pub billed_bytes: u64,
    /// A month of them.
    pub storage_per_month: f64,
    /// Each object is billed at least these days.
    pub min_storage_days: u32,
    /// The bytes a full restore reads back, and their egress and retrieval.
    pub restore_bytes: u64,
    pub restore_cost: f64,
    /// The class with the largest share of the requests' cost, in words: `PUT, COPY, POST,
    /// LIST requests are 96 % of the requests' cost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_class: Option<String>,
    /// The allowances the figures above do not subtract.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowances: Vec<String>,
}

impl SheetBill {
    /// The requests, a month of storage and one full restore together.
    pub fn total(&self) -> f64 {
        self.requests_cost + self.storage_per_month + self.restore_cost
    }
}

/// A run's bill by every sheet, the cheapest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RunBill {
    /// The run's number as every view numbers it.
    pub run: usize,
    pub bills: Vec<SheetBill>,
}

/// A run's bill by one sheet: `requests` it made, `stored` what it left, `restore_bytes` what
/// a full restore reads back.
pub fn bill(
    sheet: &PriceSheet,
    requests: &RequestCounts,
    stored: Option<&StoredObjects>,
    restore_bytes: u64,
) -> SheetBill {
    let mut classes: Vec<ClassCost> = Vec::new();
    for count in &requests.operations {
        let Some(class) = sheet.class_of(&count.operation) else {
            continue;
        };
        let cost = count.requests as f64 / 1000.0 * class.per_1000;
        match classes.iter_mut().find(|known| known.class == class.name) {
            Some(known) => {
                known.requests += count.requests;
                known.cost += cost;
            }
            None => classes.push(ClassCost {
                class: class.name.clone(),
                requests: count.requests,
                cost,
            }),
        }
    }
    classes.sort_by(|a, b| b.cost.total_cmp(&a.cost).then(b.requests.cmp(&a.requests)));
    let requests_cost: f64 = classes.iter().map(|class| class.cost).sum();
    let largest_class = largest_class(&classes, requests_cost);
    let gb = sheet.gb_bytes as f64;
    let billed_bytes = stored.map_or(0, |stored| {
        stored.billed_bytes(sheet.min_object_bytes, sheet.object_overhead_bytes)
    });
    let restore_gb = restore_bytes as f64 / gb;
    let mut allowances = Vec::new();
    if sheet.free_egress_gb_month > 0.0 {
        allowances.push(format!(
            "{} GB of egress a month free",
            sheet.free_egress_gb_month
        ));
    }
    allowances.extend(
        sheet
            .free_egress_note
            .iter()
            .map(|note| format!("egress {note}")),
    );
    allowances.extend(
        sheet
            .classes
            .iter()
            .filter(|class| class.free_per_day > 0)
            .map(|class| format!("{} {} requests a day free", class.free_per_day, class.name)),
    );
    allowances.extend(sheet.retrieval_note.clone());
    SheetBill {
        sheet: sheet.id.clone(),
        sheet_words: sheet.words(),
        currency: sheet.currency.clone(),
        classes,
        requests_cost,
        billed_bytes,
        storage_per_month: billed_bytes as f64 / gb * sheet.storage_per_gb_month,
        min_storage_days: sheet.min_storage_days,
        restore_bytes,
        restore_cost: restore_gb * (sheet.egress_per_gb + sheet.retrieval_per_gb),
        largest_class,
        allowances,
    }
}

/// What a run asked of a bucket and left in it: a tool's repository in one (its requests
/// counted by the lab's relay), the lab's own test of an `s3` target (by its own client), or
/// its object-lock probe (by the probe's client; what it left is what the lock keeps).
#[derive(Debug, Clone, PartialEq)]
pub struct BucketUse<'a> {
    pub requests: &'a RequestCounts,
    /// The objects it left, when it wrote any: the lab's own test removes them after the
    /// run, and they are billed as if kept, as a backup's would be.
    pub stored: Option<StoredObjects>,
    /// What a full restore reads back: a restore's own bytes down, else what it stored.
    pub restore_bytes: u64,
}

/// The run's use of a bucket, when it made counted requests of one.
pub fn bucket_use(result: &RunResult) -> Option<BucketUse<'_>> {
    use crate::spec::TestKind;
    if let Some(tool) = result.tool.as_ref()
        && let Some(requests) = tool.requests.as_ref()
    {
        let restore_bytes = if result.test == TestKind::ToolRestore {
            requests.bytes_up_down().1
        } else {
            tool.stored_bytes.unwrap_or(0)
        };
        return Some(BucketUse {
            requests,
            stored: tool.stored_objects.clone(),
            restore_bytes,
        });
    }
    if let Some(lock) = result.lock.as_ref() {
        let requests = lock.requests.as_ref()?;
        let stored = (!lock.kept.is_empty())
            .then(|| StoredObjects::of(lock.kept.iter().map(|kept| kept.bytes)));
        return Some(BucketUse {
            requests,
            stored,
            restore_bytes: 0,
        });
    }
    let s3 = result.s3.as_ref()?;
    let requests = s3.counted.as_ref()?;
    if result.test == TestKind::Restore {
        return Some(BucketUse {
            requests,
            stored: None,
            restore_bytes: requests.bytes_up_down().1,
        });
    }
    // Whole objects of the run's object size, the last holding what was left over.
    let whole = s3.objects.saturating_sub(1);
    let last = result
        .bytes
        .saturating_sub(whole.saturating_mul(s3.object_size));
    let stored = (s3.objects > 0).then(|| {
        StoredObjects::of(
            std::iter::repeat_n(s3.object_size, whole as usize).chain(std::iter::once(last)),
        )
    });
    Some(BucketUse {
        requests,
        stored,
        restore_bytes: result.bytes,
    })
}

/// The bills of a campaign's runs that used a bucket ([`bucket_use`]), each by every sheet,
/// cheapest first.
pub fn run_bills<'a>(
    sheets: &PriceSheets,
    runs: impl IntoIterator<Item = (usize, &'a RunResult)>,
) -> Vec<RunBill> {
    let mut bills = Vec::new();
    for (number, result) in runs {
        let Some(used) = bucket_use(result) else {
            continue;
        };
        let mut each: Vec<SheetBill> = sheets
            .0
            .iter()
            .map(|sheet| {
                bill(
                    sheet,
                    used.requests,
                    used.stored.as_ref(),
                    used.restore_bytes,
                )
            })
            .collect();
        each.sort_by(|a, b| a.total().total_cmp(&b.total()));
        bills.push(RunBill {
            run: number,
            bills: each,
        });
    }
    bills
}

/// A campaign's bill by each sheet, cheapest first: its runs' bills by that sheet together
/// (requests class by class, what each left for a month, each one's full restore), the
/// class with the largest share of the requests' cost said again over the sum. Empty when no
/// run used a bucket.
pub fn campaign_bills(runs: &[RunBill]) -> Vec<SheetBill> {
    let mut sums: Vec<SheetBill> = Vec::new();
    for bill in runs.iter().flat_map(|run| &run.bills) {
        let Some(sum) = sums.iter_mut().find(|sum| sum.sheet == bill.sheet) else {
            sums.push(bill.clone());
            continue;
        };
        for class in &bill.classes {
            match sum
                .classes
                .iter_mut()
                .find(|known| known.class == class.class)
            {
                Some(known) => {
                    known.requests += class.requests;
                    known.cost += class.cost;
                }
                None => sum.classes.push(class.clone()),
            }
        }
        sum.requests_cost += bill.requests_cost;
        sum.billed_bytes += bill.billed_bytes;
        sum.storage_per_month += bill.storage_per_month;
        sum.restore_bytes += bill.restore_bytes;
        sum.restore_cost += bill.restore_cost;
    }
    for sum in &mut sums {
        sum.classes
            .sort_by(|a, b| b.cost.total_cmp(&a.cost).then(b.requests.cmp(&a.requests)));
        sum.largest_class = largest_class(&sum.classes, sum.requests_cost);
    }
    sums.sort_by(|a, b| a.total().total_cmp(&b.total()));
    sums
}

/// A year of one tool's backups at the user's size by one sheet, from its forecast: a
/// nightly backup's requests every night, and the repository kept all year.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct YearBill {
    pub sheet: String,
    pub sheet_words: String,
    pub currency: String,
    /// 365 nightly backups' requests, priced at the mix of operations the ladder's largest
    /// life made on its nights.
    pub requests_cost: f64,
    /// Twelve months of the forecast repository.
    pub storage_cost: f64,
    /// The year's requests and storage together at the low and the high ends of the two
    /// forecasts' ranges.
    pub low: f64,
    pub high: f64,
}

/// A forecast figure and the range it lies in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranged {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl YearBill {
    /// The year's requests and storage together.
    pub fn total(&self) -> f64 {
        self.requests_cost + self.storage_cost
    }
}

/// Nights in the year a year's bill counts.
pub const NIGHTS_A_YEAR: f64 = 365.0;

/// A year at the user's size by every sheet, cheapest first: `nightly_requests` a night (the
/// forecast's), each sheet's price per request at the classes of `night_mix` (the requests of
/// measured nights, whose share of each operation is what is kept), and `repository_bytes`
/// (the forecast's) kept twelve months; with the year at both ends of the forecasts' ranges.
/// Empty when the mix holds no request.
pub fn year_bills(
    sheets: &PriceSheets,
    nightly_requests: Ranged,
    night_mix: &RequestCounts,
    repository_bytes: Ranged,
) -> Vec<YearBill> {
    let mix_requests = night_mix.requests();
    if mix_requests == 0 {
        return Vec::new();
    }
    let mut bills: Vec<YearBill> = sheets
        .0
        .iter()
        .map(|sheet| {
            let per_request = bill(sheet, night_mix, None, 0).requests_cost / mix_requests as f64;
            // A fitted line's figure can dip below zero near its base: none is priced below it.
            let requests = |nightly: f64| NIGHTS_A_YEAR * nightly.max(0.0) * per_request;
            let storage = |bytes: f64| {
                12.0 * bytes.max(0.0) / sheet.gb_bytes as f64 * sheet.storage_per_gb_month
            };
            YearBill {
                sheet: sheet.id.clone(),
                sheet_words: sheet.words(),
                currency: sheet.currency.clone(),
                requests_cost: requests(nightly_requests.value),
                storage_cost: storage(repository_bytes.value),
                low: requests(nightly_requests.low) + storage(repository_bytes.low),
                high: requests(nightly_requests.high) + storage(repository_bytes.high),
            }
        })
        .collect();
    bills.sort_by(|a, b| a.total().total_cmp(&b.total()));
    bills
}

/// The class with the largest share of the requests' cost, in words.
fn largest_class(classes: &[ClassCost], requests_cost: f64) -> Option<String> {
    classes
        .first()
        .filter(|largest| largest.cost > 0.0 && requests_cost > 0.0)
        .map(|largest| {
            format!(
                "{} requests are {:.0} % of the requests' cost",
                largest.class,
                100.0 * largest.cost / requests_cost
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::target::s3::operations::Answered;

    fn counts(each: &[(&str, u64)]) -> RequestCounts {
        let mut counts = RequestCounts::default();
        for (operation, times) in each {
            for _ in 0..*times {
                counts.request(operation, Answered::Status(200));
            }
        }
        counts
    }

    fn sheet(id: &str) -> PriceSheet {
        PriceSheets::built_in()
            .0
            .into_iter()
            .find(|sheet| sheet.id == id)
            .expect(id)
    }

    #[test]
    fn a_bill_is_the_hand_computed_one_for_s3_standard_and_b2() {
        // 2 000 PUTs, 500 LISTs, 10 000 GETs, 300 HEADs and 40 DELETEs; 3 objects of 1 GiB
        // and one of 10 bytes left; a full restore of 2 GiB.
        let requests = counts(&[
            ("PutObject", 2000),
            ("ListObjectsV2", 500),
            ("GetObject", 10_000),
            ("HeadObject", 300),
            ("DeleteObject", 40),
        ]);
        let stored = StoredObjects::of([1 << 30, 1 << 30, 1 << 30, 10]);
        let gib = (1u64 << 30) as f64;
        let s3 = bill(&sheet("aws-s3-standard"), &requests, Some(&stored), 2 << 30);
        // PUT and LIST: 2 500 at $0.005 a thousand = $0.0125; GET and HEAD: 10 300 at $0.0004
        // = $0.00412; DELETE free.
        assert!((s3.requests_cost - 0.01662).abs() < 1e-9, "{s3:?}");
        assert_eq!(s3.classes[0].requests, 2500);
        // AWS bills GB of 2^30 bytes: 3 GiB and 10 bytes at $0.023.
        let stored_gb = (3.0 * gib + 10.0) / gib;
        assert!((s3.storage_per_month - stored_gb * 0.023).abs() < 1e-9);
        // A restore of 2 GiB: $0.09 a GB out, no retrieval fee.
        assert!((s3.restore_cost - 0.18).abs() < 1e-9);
        assert_eq!(
            s3.largest_class.as_deref(),
            Some("PUT, COPY, POST, LIST requests are 75 % of the requests' cost")
        );
        let b2 = bill(&sheet("backblaze-b2"), &requests, Some(&stored), 2 << 30);
        // Class A free; class B 10 300 at $0.0004 a thousand = $0.00412; class C (LIST) 500
        // at $0.004 = $0.002.
        assert!((b2.requests_cost - 0.00612).abs() < 1e-9, "{b2:?}");
        // B2 bills GB of 10^9 bytes at $0.006, and $0.01 a GB out.
        assert!((b2.storage_per_month - (3.0 * gib + 10.0) / 1e9 * 0.006).abs() < 1e-12);
        assert!((b2.restore_cost - 2.0 * gib / 1e9 * 0.01).abs() < 1e-12);
        assert!(
            b2.allowances
                .iter()
                .any(|said| said.contains("2500 Class B"))
        );
        // Standard-IA bills the 10-byte object as 128 KiB, and reads back at $0.01 a GB more.
        let ia = bill(
            &sheet("aws-s3-standard-ia"),
            &requests,
            Some(&stored),
            2 << 30,
        );
        assert_eq!(ia.billed_bytes, (3 << 30) + 131_072);
        assert!((ia.restore_cost - 2.0 * (0.09 + 0.01)).abs() < 1e-9);
    }

    /// The object-lock probe's run is billed for the requests it sent, and for a month of
    /// what the lock keeps of it; nothing of it is restored.
    #[test]
    fn a_lock_probe_is_billed_its_requests_and_what_the_lock_keeps() {
        use crate::engine::target::s3::lock::LockFigures;
        use crate::spec::{RunParams, TestKind};
        let mut probe =
            RunResult::failed(TestKind::ObjectLock, RunParams::example(), String::new());
        let mut lock: LockFigures = serde_json::from_value(serde_json::json!({
            "store": "locked", "versioning": "Enabled", "lock_enabled": true,
            "default_retention": null, "probe_retention": null, "steps": [],
            "verdict": "immutable", "answer": "immutable",
            "kept": [
                {"key": "p", "version": "1", "bytes": 1024, "until": null},
                {"key": "p", "version": "2", "bytes": 1024, "until": null}
            ]
        }))
        .expect("lock figures");
        probe.lock = Some(lock.clone());
        assert_eq!(
            bucket_use(&probe),
            None,
            "a probe kept before its requests were counted"
        );
        lock.requests = Some(counts(&[
            ("PutObject", 2),
            ("PutObjectRetention", 1),
            ("DeleteObject", 2),
            ("HeadObject", 1),
        ]));
        probe.lock = Some(lock);
        let used = bucket_use(&probe).expect("the probe used the bucket");
        assert_eq!(used.requests.requests(), 6);
        assert_eq!(used.stored, Some(StoredObjects::of([1024, 1024])));
        assert_eq!(used.restore_bytes, 0);
        let sheets = PriceSheets::built_in();
        let bills = run_bills(&sheets, [(1, &probe)]);
        let s3 = bills[0]
            .bills
            .iter()
            .find(|bill| bill.sheet == "aws-s3-standard")
            .expect("S3 Standard");
        // Three PUTs at $0.005 a thousand, a HEAD at $0.0004, the deletes free.
        assert!(
            (s3.requests_cost - (3.0 * 0.005 + 0.0004) / 1000.0).abs() < 1e-15,
            "{s3:?}"
        );
        assert_eq!(s3.billed_bytes, 2048);
        assert_eq!(s3.restore_cost, 0.0);
    }

    /// A campaign's bill by a sheet is its runs' bills by that sheet added up, class by
    /// class, and its cheapest sheet comes first.
    #[test]
    fn a_campaigns_bill_is_its_runs_bills_together() {
        let sheets = PriceSheets::built_in();
        let backup = counts(&[("PutObject", 2000), ("ListObjectsV2", 500)]);
        let restore = counts(&[("GetObject", 10_000), ("ListObjectsV2", 100)]);
        let stored = StoredObjects::of([1 << 30]);
        let bills_of = |requests: &RequestCounts, run| RunBill {
            run,
            bills: sheets
                .0
                .iter()
                .map(|sheet| bill(sheet, requests, Some(&stored), 1 << 30))
                .collect(),
        };
        let runs = [bills_of(&backup, 1), bills_of(&restore, 2)];
        let campaign = campaign_bills(&runs);
        assert_eq!(campaign.len(), sheets.0.len());
        assert!(
            campaign
                .windows(2)
                .all(|pair| pair[0].total() <= pair[1].total())
        );
        let s3 = campaign
            .iter()
            .find(|bill| bill.sheet == "aws-s3-standard")
            .expect("S3 Standard");
        // PUT and LIST: 2 600 at $0.005 a thousand; GET: 10 000 at $0.0004.
        assert!(
            (s3.requests_cost - (2.6 * 0.005 + 10.0 * 0.0004)).abs() < 1e-12,
            "{s3:?}"
        );
        assert_eq!(s3.classes[0].requests, 2600);
        assert!((s3.storage_per_month - 2.0 * 0.023).abs() < 1e-12);
        assert!((s3.restore_cost - 2.0 * 0.09).abs() < 1e-12);
        assert_eq!(
            s3.largest_class.as_deref(),
            Some("PUT, COPY, POST, LIST requests are 76 % of the requests' cost")
        );
        assert!(campaign_bills(&[]).is_empty());
    }

    /// A year at the user's size: 365 nights of the forecast's requests at the measured
    /// nights' mix, and twelve months of the forecast repository, by S3 Standard and B2.
    #[test]
    fn a_year_at_the_users_size_is_its_nights_and_its_repository() {
        let sheets = PriceSheets::built_in();
        // Measured nights: 300 PUTs, 100 LISTs and 600 GETs (30 %, 10 % and 60 %) ...
        let mix = counts(&[
            ("PutObject", 300),
            ("ListObjectsV2", 100),
            ("GetObject", 600),
        ]);
        // ... and the forecast: 2 000 requests a night, a repository of 1 TiB.
        let tib = (1u64 << 40) as f64;
        let nightly = Ranged {
            value: 2000.0,
            low: 1500.0,
            high: 2500.0,
        };
        let repository = Ranged {
            value: tib,
            low: tib / 2.0,
            high: 2.0 * tib,
        };
        let year = year_bills(&sheets, nightly, &mix, repository);
        assert_eq!(year.len(), sheets.0.len());
        let by = |id: &str| year.iter().find(|bill| bill.sheet == id).expect(id).clone();
        let s3 = by("aws-s3-standard");
        // 2 000 a night: 600 PUT and 200 LIST at $0.005 a thousand and 1 200 GET at
        // $0.0004, $0.00448 a night, 365 nights.
        assert!((s3.requests_cost - 365.0 * 0.00448).abs() < 1e-9, "{s3:?}");
        // 1 024 GB (of 2^30 bytes) at $0.023 a month, twelve months.
        assert!(
            (s3.storage_cost - 12.0 * 1024.0 * 0.023).abs() < 1e-9,
            "{s3:?}"
        );
        // Its range: both forecasts at the low ends of their ranges (1 500 a night, 0.5 TiB),
        // and at the high ends (2 500, 2 TiB).
        let low = 365.0 * 0.00448 * 0.75 + 12.0 * 512.0 * 0.023;
        let high = 365.0 * 0.00448 * 1.25 + 12.0 * 2048.0 * 0.023;
        assert!((s3.low - low).abs() < 1e-9, "{s3:?}");
        assert!((s3.high - high).abs() < 1e-9, "{s3:?}");
        let b2 = by("backblaze-b2");
        // B2: PUT free, LIST class C $0.004 a thousand, GET class B $0.0004: 200 LIST and
        // 1 200 GET a night.
        assert!(
            (b2.requests_cost - 365.0 * (0.2 * 0.004 + 1.2 * 0.0004)).abs() < 1e-9,
            "{b2:?}"
        );
        // 1 TiB in GB of 10^9 bytes at $0.006.
        assert!((b2.storage_cost - 12.0 * (1u64 << 40) as f64 / 1e9 * 0.006).abs() < 1e-9);
        assert!(
            year.windows(2)
                .all(|pair| pair[0].total() <= pair[1].total())
        );
        assert!(year_bills(&sheets, nightly, &RequestCounts::default(), repository).is_empty());
    }
}
