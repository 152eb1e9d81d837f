//! The requests a campaign's tools made of the buckets their repositories are in, as every
//! view shows them: a row per run (and, in the CSV, per run and operation), each count as the
//! lab's relay counted it, named by the S3 API's operation.

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::bill::{RunBill, SheetBill, campaign_bills};
use crate::engine::result::RunResult;
use crate::engine::target::s3::operations::RequestCounts;
use crate::size::format_bytes;

use super::run::RunView;

/// One run's requests, in cells.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestsRow {
    pub run: usize,
    pub test: String,
    /// The tool and its parameters.
    pub tool: String,
    pub requests: u64,
    /// Each operation's count, the most first: `380 PutObject, 20 ListObjectsV2`.
    pub by_operation: String,
    pub bytes_up: String,
    pub bytes_down: String,
    /// Requests refused (4xx) or failed (5xx, or no answer), when there were any.
    pub refused_or_failed: u64,
}

/// The counted runs of a campaign; and the runs whose bucket's requests could not be counted,
/// with why.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestsView {
    pub rows: Vec<RequestsRow>,
    pub not_counted: Vec<String>,
}

fn counts_of(result: &RunResult) -> Option<&RequestCounts> {
    crate::analysis::bill::bucket_use(result).map(|used| used.requests)
}

/// Who made the requests: the tool and its parameters, or the lab's own S3 client.
fn tool_label(result: &RunResult) -> String {
    result
        .params
        .tool
        .as_ref()
        .map_or_else(|| "the lab's S3 client".to_string(), |tool| tool.label())
}

impl RequestsView {
    /// The runs of a campaign that kept a repository in a bucket, each with its number as
    /// every view numbers it.
    pub fn of<'a>(runs: impl IntoIterator<Item = (usize, &'a RunResult)>) -> RequestsView {
        let mut view = RequestsView::default();
        for (number, result) in runs {
            if let Some(why) = result
                .tool
                .as_ref()
                .and_then(|tool| tool.requests_not_counted.as_ref())
            {
                view.not_counted
                    .push(format!("Run {number} ({}): {why}", result.test.name()));
            }
            let Some(counts) = counts_of(result) else {
                continue;
            };
            let (up, down) = counts.bytes_up_down();
            view.rows.push(RequestsRow {
                run: number,
                test: result.test.name().to_string(),
                tool: tool_label(result),
                requests: counts.requests(),
                by_operation: counts.each_words(),
                bytes_up: format_bytes(up),
                bytes_down: format_bytes(down),
                refused_or_failed: counts
                    .operations
                    .iter()
                    .map(|count| count.client_errors + count.server_errors)
                    .sum(),
            });
        }
        view
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.not_counted.is_empty()
    }
}

/// The requests as the CLI prints them.
pub fn requests_text(view: &RequestsView) -> String {
    let mut out = String::new();
    if view.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "Requests to the bucket (a tool's counted by the lab's relay, the lab's own S3 client's \
         by itself):"
    );
    for row in &view.rows {
        let _ = writeln!(
            out,
            "  run {} {} ({}): {} requests ({}); {} up, {} down{}",
            row.run,
            row.test,
            row.tool,
            row.requests,
            row.by_operation,
            row.bytes_up,
            row.bytes_down,
            if row.refused_or_failed > 0 {
                format!("; {} refused or failed", row.refused_or_failed)
            } else {
                String::new()
            }
        );
    }
    for line in &view.not_counted {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// One CSV row: one operation of one run.
#[derive(Serialize)]
struct RequestsCsvRow<'a> {
    campaign: &'a str,
    run: usize,
    test: &'a str,
    tool: &'a str,
    operation: &'a str,
    requests: u64,
    ok: u64,
    client_errors: u64,
    server_errors: u64,
    bytes_up: u64,
    bytes_down: u64,
}

/// The requests as CSV: a row per run and operation.
pub fn requests_csv(campaign_id: &str, runs: &[RunView<'_>]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for run in runs {
        let Some(result) = run.result else { continue };
        let Some(counts) = counts_of(result) else {
            continue;
        };
        let tool = tool_label(result);
        for count in &counts.operations {
            writer.serialize(RequestsCsvRow {
                campaign: campaign_id,
                run: run.number,
                test: run.test.name(),
                tool: &tool,
                operation: &count.operation,
                requests: count.requests,
                ok: count.ok,
                client_errors: count.client_errors,
                server_errors: count.server_errors,
                bytes_up: count.bytes_up,
                bytes_down: count.bytes_down,
            })?;
        }
    }
    super::csv_text(writer)
}

/// A run's bill by one sheet, in cells.
#[derive(Debug, Clone, PartialEq)]
pub struct BillRow {
    /// The sheet's name and date.
    pub sheet: String,
    pub requests: String,
    pub storage: String,
    pub restore: String,
    pub total: String,
    /// Why it costs what it does: the class with the largest share of the requests' cost.
    pub why: String,
    pub allowances: String,
    pub cheapest: bool,
}

/// One run's bills.
#[derive(Debug, Clone, PartialEq)]
pub struct RunBillView {
    pub run: usize,
    /// `The cheapest: Wasabi …, 0.0021 USD: no fee for requests`.
    pub cheapest: String,
    pub rows: Vec<BillRow>,
}

/// The campaign's bills, its runs' together, when more than one run used a bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignBillView {
    /// The runs added up.
    pub runs: usize,
    /// `The cheapest for the campaign: …`.
    pub cheapest: String,
    pub rows: Vec<BillRow>,
}

/// Every run's bills, and the campaign's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BillsView {
    pub runs: Vec<RunBillView>,
    pub campaign: Option<CampaignBillView>,
}

/// An amount of money as every view writes it: four decimals below a unit (a run's requests
/// cost fractions of a cent), two above.
pub fn money(amount: f64, currency: &str) -> String {
    if amount.abs() < 1.0 {
        format!("{amount:.4} {currency}")
    } else {
        format!("{amount:.2} {currency}")
    }
}

/// Each sheet's bill in cells, the cheapest (first) marked.
fn bill_rows(bills: &[SheetBill]) -> Vec<BillRow> {
    bills
        .iter()
        .enumerate()
        .map(|(index, bill)| BillRow {
            sheet: bill.sheet_words.clone(),
            requests: money(bill.requests_cost, &bill.currency),
            storage: if bill.min_storage_days > 0 {
                format!(
                    "{} (each object billed {} days at least)",
                    money(bill.storage_per_month, &bill.currency),
                    bill.min_storage_days
                )
            } else {
                money(bill.storage_per_month, &bill.currency)
            },
            restore: money(bill.restore_cost, &bill.currency),
            total: money(bill.total(), &bill.currency),
            why: bill.largest_class.clone().unwrap_or_default(),
            allowances: bill.allowances.join("; "),
            cheapest: index == 0,
        })
        .collect()
}

/// `The cheapest for WHAT: SHEET, TOTAL for …`, from the cheapest bill (the first).
fn cheapest_words(what: &str, bills: &[SheetBill], covers: &str) -> String {
    bills.first().map_or_else(String::new, |bill| {
        format!(
            "The cheapest for {what}: {}, {} for {covers}{}.",
            bill.sheet_words,
            money(bill.total(), &bill.currency),
            bill.largest_class
                .as_ref()
                .map_or_else(String::new, |why| format!(" ({why})"))
        )
    })
}

impl BillsView {
    /// The bills of a campaign's runs, and theirs together when more than one run used a
    /// bucket.
    pub fn of(bills: &[RunBill]) -> BillsView {
        let runs = bills
            .iter()
            .map(|run| RunBillView {
                run: run.run,
                cheapest: cheapest_words(
                    &format!("run {}", run.run),
                    &run.bills,
                    "its requests, a month of what it stored and one full restore",
                ),
                rows: bill_rows(&run.bills),
            })
            .collect();
        let campaign = (bills.len() > 1).then(|| {
            let together = campaign_bills(bills);
            CampaignBillView {
                runs: bills.len(),
                cheapest: cheapest_words(
                    "the campaign",
                    &together,
                    "its runs' requests, a month of what each stored and each one's full \
                     restore",
                ),
                rows: bill_rows(&together),
            }
        });
        BillsView { runs, campaign }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// The bills as the CLI prints them.
pub fn bills_text(view: &BillsView) -> String {
    let mut out = String::new();
    for run in &view.runs {
        let _ = writeln!(
            out,
            "What run {} would cost (requests; a month of what it stored; one full restore's \
             egress and retrieval; before any free allowance):",
            run.run
        );
        bill_lines(&mut out, &run.rows, &run.cheapest);
    }
    if let Some(campaign) = &view.campaign {
        let _ = writeln!(
            out,
            "What the campaign would cost, its {} runs together (the same, added up):",
            campaign.runs
        );
        bill_lines(&mut out, &campaign.rows, &campaign.cheapest);
    }
    out
}

/// A sheet's bill a line each, and the cheapest said under them.
fn bill_lines(out: &mut String, rows: &[BillRow], cheapest: &str) {
    for row in rows {
        let _ = writeln!(
            out,
            "  {}: requests {}, storage {} a month, restore {}, together {}{}",
            row.sheet,
            row.requests,
            row.storage,
            row.restore,
            row.total,
            if row.why.is_empty() {
                String::new()
            } else {
                format!("; {}", row.why)
            }
        );
    }
    let _ = writeln!(out, "  {cheapest}");
}

/// One CSV row: one class of request of one run (or, with no run, of the campaign's runs
/// together), by one sheet, with the storage and restore by that sheet beside it.
#[derive(Serialize)]
struct BillCsvRow<'a> {
    campaign: &'a str,
    run: Option<usize>,
    sheet: &'a str,
    sheet_date: &'a str,
    currency: &'a str,
    class: &'a str,
    requests: u64,
    requests_cost: f64,
    storage_per_month: f64,
    restore_cost: f64,
}

/// The bills as CSV: a row per run, sheet and class of request (the run's storage and
/// restore by that sheet repeated on each of its rows); when more than one run used a
/// bucket, the campaign's bills after them, their `run` empty.
pub fn bills_csv(
    campaign_id: &str,
    bills: &[RunBill],
    prices: &crate::analysis::prices::PriceSheets,
) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let together = if bills.len() > 1 {
        campaign_bills(bills)
    } else {
        Vec::new()
    };
    let each = bills
        .iter()
        .map(|run| (Some(run.run), run.bills.as_slice()))
        .chain(std::iter::once((None, together.as_slice())));
    for (run, sheet_bills) in each {
        for bill in sheet_bills {
            let date = prices
                .0
                .iter()
                .find(|sheet| sheet.id == bill.sheet)
                .map_or("", |sheet| sheet.date.as_str());
            for class in &bill.classes {
                writer.serialize(BillCsvRow {
                    campaign: campaign_id,
                    run,
                    sheet: &bill.sheet,
                    sheet_date: date,
                    currency: &bill.currency,
                    class: &class.class,
                    requests: class.requests,
                    requests_cost: class.cost,
                    storage_per_month: bill.storage_per_month,
                    restore_cost: bill.restore_cost,
                })?;
            }
        }
    }
    super::csv_text(writer)
}
