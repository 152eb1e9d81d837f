//! What a run reports: the figures every page, API and table is built from.

use serde::{Deserialize, Serialize};

pub use super::flags::{Flag, FlagCode, Validity};
pub use super::measure::{CpuFigures, LatencyFigures, Sample};
use super::params::RunParams;
pub use super::steady::SteadyFigures;
pub use super::target::{StripedFigures, TapeFigures, TargetReport};
use super::test_kind::TestKind;

/// How a run ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Done,
    Failed,
    Cancelled,
}

/// The measured result of one run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct RunResult {
    pub test: TestKind,
    pub params: RunParams,
    pub status: RunStatus,
    /// Payload bytes moved through the measured path.
    pub bytes: u64,
    /// Source files read completely.
    pub files: u64,
    /// Wall seconds of the timed window (from the first I/O to the last, fsync included).
    pub seconds: f64,
    /// bytes ÷ seconds in 10^6 bytes per second.
    pub mb_per_s: f64,
    pub cpu: CpuFigures,
    pub stages: StageFigures,
    /// Latency of individual I/O calls on the measured side.
    pub latency_us: Option<LatencyFigures>,
    /// Which calls `latency_us` timed: `sink_write` or `source_read`.
    pub latency_of: Option<String>,
    /// Share of the source found in the page cache just before the run (mincore).
    pub cache_resident_pct: Option<f64>,
    pub samples: Vec<Sample>,
    pub warnings: Vec<String>,
    pub error: Option<String>,
    /// The emulated drives' own figures, when the target is emulated tape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tape: Option<TapeFigures>,
    /// The object store's own figures, when the target is an object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<crate::engine::target::s3::S3Figures>,
    /// A dedup store's figures: what it was sent and kept, and where its time went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup: Option<crate::engine::target::dedup::DedupFigures>,
    /// The emulated volume's own figures, when the target is an emulated striped volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub striped: Option<StripedFigures>,
    /// Where a restore read its image from and what it cost besides the transfer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RestoreFigures>,
    /// A backup tool's own figures, when the run ran one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::engine::tool::ToolFigures>,
    /// What the object-lock probe found of its bucket: each step's answer and the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<crate::engine::target::s3::lock::LockFigures>,
    /// A network backup's clients, each on the run's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<Vec<ClientFigures>>,
    /// Some clients failed and the others finished: the figures cover the survivors' part.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The compressibility of the data a target test wrote, when it was measured on the
    /// source to match it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_compress_ratio: Option<f64>,
    /// Generated data of a chosen dedup ratio: the ratio its units achieved, counted as they
    /// were made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_dedup: Option<crate::engine::reduction::GeneratedDedup>,
    /// Throughput over the steady part of the run, ramp and tail left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyFigures>,
    /// Whether the figure may be trusted, and each reason it may not; `None` on runs that did
    /// not finish, and on runs stored before runs were judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<Validity>,
}

impl RunResult {
    /// A run that moved nothing and ended with `error`: the starting point of every result.
    pub fn failed(test: TestKind, params: RunParams, error: String) -> Self {
        Self {
            test,
            params,
            status: RunStatus::Failed,
            bytes: 0,
            files: 0,
            seconds: 0.0,
            mb_per_s: 0.0,
            cpu: CpuFigures::default(),
            stages: StageFigures::default(),
            latency_us: None,
            latency_of: None,
            cache_resident_pct: None,
            samples: Vec::new(),
            warnings: Vec::new(),
            error: Some(error),
            tape: None,
            striped: None,
            s3: None,
            dedup: None,
            restore: None,
            tool: None,
            clients: None,
            partial: false,
            data_compress_ratio: None,
            generated_dedup: None,
            steady: None,
            validity: None,
            lock: None,
        }
    }

    /// The figure verdicts and comparisons use: the steady-state MB/s when the run found its
    /// steady state, else the whole run's.
    pub fn figure(&self) -> f64 {
        match &self.steady {
            Some(steady) if steady.steady => steady.mb_per_s,
            _ => self.mb_per_s,
        }
    }
}

/// How one client's part of a network backup ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientStatus {
    Done,
    Failed,
}

impl ClientStatus {
    /// The id used in results and CSV.
    pub fn id(self) -> &'static str {
        match self {
            ClientStatus::Done => "done",
            ClientStatus::Failed => "failed",
        }
    }
}

/// What one client of a network backup delivered, measured by the lab on the run's clock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ClientFigures {
    pub name: String,
    pub streams: u32,
    /// Payload bytes the lab received from this client.
    pub bytes: u64,
    /// bytes ÷ the run's seconds.
    pub mb_per_s: f64,
    pub status: ClientStatus,
    /// Why the client failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The client's own count of what it sent, from its streams' end frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_mb_per_s: Option<f64>,
    /// Throughput received from this client, at the same instants as the run's samples.
    #[serde(default)]
    pub samples: Vec<Sample>,
}

/// What a restore read its image from, and what it cost besides moving the data.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct RestoreFigures {
    /// The medium the image was read from, in a few words: `emulated LTO-4 drive`.
    pub from: String,
    /// The directory the files were restored into (removed after the run).
    pub into: String,
    /// Streams the backup interleaved on the medium; a restore of one stream's data reads
    /// through all of them where the medium is read in sequence.
    pub interleaved: u32,
    /// Seconds before the first byte (a drive's load and locate), which a restore adds to
    /// the transfer; from the model, not slept.
    pub positioning_s: f64,
}

/// Where the pipeline's threads spent their time, as shares of `threads × wall`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct StageFigures {
    /// Readers inside source I/O.
    pub reader_busy_pct: f64,
    /// Readers waiting for an empty buffer: the target side is behind.
    pub reader_wait_pct: f64,
    pub reader_waits: u64,
    /// Writers inside sink I/O.
    pub writer_busy_pct: f64,
    /// Writers waiting for a full buffer: the source side is behind.
    pub writer_wait_pct: f64,
    pub writer_waits: u64,
}

/// What a run reports while it goes, a few times a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub elapsed_s: f64,
    pub bytes: u64,
    /// Throughput of the last interval.
    pub mb_per_s: f64,
    /// How far the run is towards its size or duration limit, 0–100, when one is known.
    pub percent: Option<f64>,
}
