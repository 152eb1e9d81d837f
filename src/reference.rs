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

/// The figures of a tool's result.
pub fn read(tool: Tool, result: &Value) -> Result<Vec<Reference>, ReferenceError> {
    match tool {
        Tool::Fio => from_fio(result),
        Tool::Iperf3 => from_iperf3(result).map(|reference| vec![reference]),
    }
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
            let Some(bytes_per_s) = job[side]["bw_bytes"].as_f64().filter(|bw| *bw > 0.0) else {
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
        return Err(ReferenceError::NotFio("no job read or wrote anything"));
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
