//! Other tools' results beside backlab's: fio's JSON output (`--output-format=json`) and
//! iperf3's (`-J`), read into reference figures with the conditions each was measured under,
//! so a report can show the reference tool's MB/s next to the test that measures the same thing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::spec::TestKind;

/// One figure of another tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The tool and its version, as it names itself (`fio-3.33`, `iperf 3.12`).
    pub tool: String,
    /// The job's name (fio), or the test's protocol and streams (iperf3).
    pub job: String,
    pub workload: Workload,
    /// Bytes per second over the tool's own run time, in MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// What it was measured with, as the tool spelled it: block size, direct, jobs, queue
    /// depth, engine; streams and duration for iperf3.
    pub conditions: Vec<(String, String)>,
}

/// What a reference measured: the backlab tests it stands beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    Write,
    Read,
    Network,
}

impl Workload {
    /// The backlab tests that measure the same thing, the closest first.
    pub fn tests(self) -> &'static [TestKind] {
        match self {
            Workload::Write => &[TestKind::TapeWrite],
            Workload::Read => &[TestKind::ReadParallel, TestKind::ReadSingle],
            Workload::Network => &[TestKind::NetworkBackup],
        }
    }
}

/// Which tool's output a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    Fio,
    Iperf3,
}

/// Why a result could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReferenceError {
    #[error("not fio's JSON output (--output-format=json): {0}")]
    NotFio(&'static str),
    #[error("not iperf3's JSON output (-J): {0}")]
    NotIperf3(&'static str),
}

/// The most characters a text of a reference keeps (a job's name, a condition's value, the
/// tool's version): what a report shows, not what a file may hold.
const MAX_TEXT_CHARS: usize = 200;
/// The fastest figure taken as a measurement, MB/s (10 TB/s): beyond it a result is not one.
const FASTEST_MB_S: f64 = 1e7;

/// The figures of a tool's result: each a rate from one byte per second to 10 TB/s, its texts
/// cut to what a report shows.
pub fn read(tool: Tool, result: &Value) -> Result<Vec<Reference>, ReferenceError> {
    let mut references = match tool {
        Tool::Fio => from_fio(result)?,
        Tool::Iperf3 => vec![from_iperf3(result)?],
    };
    for reference in &mut references {
        cut(&mut reference.tool);
        cut(&mut reference.job);
        for (name, value) in &mut reference.conditions {
            cut(name);
            cut(value);
        }
    }
    Ok(references)
}

fn cut(text: &mut String) {
    if let Some((end, _)) = text.char_indices().nth(MAX_TEXT_CHARS) {
        text.truncate(end);
    }
}

/// Whether `mb_per_s` can be a measured rate: finite, normal, at least a byte per second and
/// at most [`FASTEST_MB_S`] (a zero, a negative or a subnormal figure would show as nonsense
/// and make every ratio with it infinite).
fn a_rate(mb_per_s: f64) -> bool {
    mb_per_s.is_normal() && (1e-6..=FASTEST_MB_S).contains(&mb_per_s)
}

/// The fio options shown with a figure, in this order.
const FIO_CONDITIONS: [&str; 8] = [
    "rw", "bs", "direct", "numjobs", "iodepth", "ioengine", "size", "runtime",
];

/// Each fio job's read and write bandwidth, with its options (the job's over the global ones).
pub fn from_fio(result: &Value) -> Result<Vec<Reference>, ReferenceError> {
    let version = result["fio version"]
        .as_str()
        .ok_or(ReferenceError::NotFio("no \"fio version\""))?;
    let jobs = result["jobs"]
        .as_array()
        .ok_or(ReferenceError::NotFio("no \"jobs\""))?;
    let mut references = Vec::new();
    for job in jobs {
        let option = |name: &str| {
            job["job options"][name]
                .as_str()
                .or_else(|| result["global options"][name].as_str())
                .map(str::to_string)
        };
        let conditions: Vec<(String, String)> = FIO_CONDITIONS
            .iter()
            .filter_map(|name| option(name).map(|value| (name.to_string(), value)))
            .collect();
        for (side, workload) in [("write", Workload::Write), ("read", Workload::Read)] {
            let Some(bytes_per_s) = job[side]["bw_bytes"].as_f64().filter(|bw| a_rate(bw / 1e6))
            else {
                continue;
            };
            references.push(Reference {
                tool: version.to_string(),
                job: job["jobname"].as_str().unwrap_or("job").to_string(),
                workload,
                mb_per_s: bytes_per_s / 1e6,
                conditions: conditions.clone(),
            });
        }
    }
    if references.is_empty() {
        return Err(ReferenceError::NotFio(
            "no job read or wrote at a rate from a byte per second to 10 TB/s",
        ));
    }
    Ok(references)
}

/// What the receiving end of an iperf3 test got, over its duration.
pub fn from_iperf3(result: &Value) -> Result<Reference, ReferenceError> {
    let start = &result["start"];
    let bits_per_s = result["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .ok_or(ReferenceError::NotIperf3(
            "no end.sum_received.bits_per_second",
        ))?;
    if !a_rate(bits_per_s / 8.0 / 1e6) {
        return Err(ReferenceError::NotIperf3(
            "end.sum_received.bits_per_second is not a rate from a byte per second to 10 TB/s",
        ));
    }
    let version = start["version"].as_str().unwrap_or("iperf3");
    let test = &start["test_start"];
    let streams = test["num_streams"].as_u64().unwrap_or(1);
    let protocol = test["protocol"].as_str().unwrap_or("TCP");
    let mut conditions = vec![
        ("protocol".to_string(), protocol.to_string()),
        ("streams".to_string(), streams.to_string()),
    ];
    for (name, key) in [("duration_s", "duration"), ("block", "blksize")] {
        if let Some(value) = test[key].as_u64() {
            conditions.push((name.to_string(), value.to_string()));
        }
    }
    if test["reverse"].as_u64() == Some(1) {
        conditions.push(("reverse".to_string(), "1".to_string()));
    }
    Ok(Reference {
        tool: version.to_string(),
        job: format!("{protocol}, {streams} stream(s)"),
        workload: Workload::Network,
        mb_per_s: bits_per_s / 8.0 / 1e6,
        conditions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_negative_subnormal_and_absurd_rates_are_not_figures() {
        for bits in [0.0, -8e9, 1e-310, f64::MAX] {
            let result = serde_json::json!({"start": {"version": "iperf 3.12"},
                "end": {"sum_received": {"bits_per_second": bits}}});
            assert!(read(Tool::Iperf3, &result).is_err(), "{bits}");
            let fio = serde_json::json!({"fio version": "fio-3.33",
                "jobs": [{"jobname": "j", "write": {"bw_bytes": bits / 8.0}}]});
            assert!(read(Tool::Fio, &fio).is_err(), "{bits}");
        }
        let long = serde_json::json!({"fio version": "fio-3.33",
            "jobs": [{"jobname": "j".repeat(10_000), "write": {"bw_bytes": 1e9}}]});
        let kept = read(Tool::Fio, &long).expect("a figure");
        assert_eq!(kept[0].job.len(), MAX_TEXT_CHARS);
    }

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/references/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("a fixture");
        serde_json::from_str(&text).expect("JSON")
    }

    #[test]
    fn a_fio_write_gives_its_bandwidth_and_conditions() {
        let references = from_fio(&fixture("fio-write.json")).expect("references");
        assert_eq!(references.len(), 1);
        let write = &references[0];
        assert_eq!(write.tool, "fio-3.33");
        assert_eq!(write.workload, Workload::Write);
        assert!((write.mb_per_s - 1284.380172).abs() < 1e-6, "{write:?}");
        let bs = write.conditions.iter().find(|(name, _)| name == "bs");
        assert_eq!(bs.map(|(_, value)| value.as_str()), Some("1M"));
        assert!(matches!(
            from_fio(&fixture("iperf3.json")),
            Err(ReferenceError::NotFio(_))
        ));
    }

    #[test]
    fn an_iperf3_test_gives_what_was_received() {
        let reference = from_iperf3(&fixture("iperf3.json")).expect("a reference");
        assert_eq!(reference.workload, Workload::Network);
        assert!((reference.mb_per_s - 17_246_281_312.908184 / 8e6).abs() < 1e-6);
        assert!(
            reference
                .conditions
                .contains(&("streams".to_string(), "2".to_string()))
        );
        assert!(from_iperf3(&fixture("fio-write.json")).is_err());
    }
}
