//! What a run reports: the figures every page, API and table is built from.

use serde::{Deserialize, Serialize};

use super::plan::RunParams;
pub use super::steady::SteadyFigures;
use super::test_kind::TestKind;
pub use super::validity::{Flag, FlagCode, Validity};

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

/// A target's own figures in words, for pages and exports that show them without knowing the
/// kind of target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetReport {
    /// What reported them: `emulated LTO-4 × 2`.
    pub reporter: String,
    /// The device the figures are of, in a few words for a table row: `2 emulated LTO-4
    /// drives`, `emulated striped volume`.
    pub device: String,
    /// Each figure as a short phrase: `compression 2.00:1`, `3 backhitches`.
    pub figures: Vec<String>,
}

impl std::fmt::Display for TargetReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.reporter, self.figures.join(", "))
    }
}

impl RunResult {
    /// The target's own figures, when it reports any: every kind that does is listed here.
    pub fn target_report(&self) -> Option<TargetReport> {
        self.tape
            .as_ref()
            .map(TapeFigures::report)
            .or_else(|| self.striped.as_ref().map(StripedFigures::report))
            .or_else(|| {
                self.s3
                    .as_ref()
                    .map(crate::engine::target::s3::S3Figures::report)
            })
            .or_else(|| {
                self.dedup
                    .as_ref()
                    .map(crate::engine::target::dedup::DedupFigures::report)
            })
    }
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

/// What an emulated striped volume reports about a run: always marked emulated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct StripedFigures {
    /// Always true: these figures come from a model, not a volume.
    pub emulated: bool,
    pub disks: u32,
    pub disk_mb_s: f64,
    /// Bytes on one disk before the next.
    pub stripe_unit: u64,
    pub controllers: u32,
    pub controller_mb_s: f64,
    pub requests: u64,
    /// Disks one request kept busy, on average.
    pub disks_per_request: f64,
    /// Stripe units written, each after a rotational delay.
    pub rotational_delays: u64,
    /// Requests a controller, not a disk, finished last.
    pub controller_bound_pct: f64,
    /// The rate the volume gave these requests, and would give the same requests read (no
    /// rotational delays), MB/s.
    pub write_mb_s: f64,
    pub read_mb_s: f64,
}

/// What emulated tape drives report about a run: always marked emulated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct TapeFigures {
    /// Always true: these figures come from a model, not a drive.
    pub emulated: bool,
    pub model: String,
    pub drives: u32,
    /// Native speed and lowest speed-matching step of one drive, MB/s.
    pub native_mb_s: f64,
    pub min_mb_s: f64,
    /// Compression achieved on the bytes written (host bytes ÷ tape bytes).
    pub compression: f64,
    /// Seconds the drives spent streaming, repositioning (backhitches) and idle, summed over
    /// drives.
    pub streaming_s: f64,
    pub repositioning_s: f64,
    pub idle_s: f64,
    pub backhitches: u64,
    /// Average tape speed while streaming, native MB/s per drive.
    pub tape_mb_s: f64,
    /// Native bytes written to tape.
    pub tape_bytes: u64,
    /// A cartridge filled up and the run ended there.
    pub end_of_tape: bool,
    /// One drive's buffer, native bytes.
    #[serde(default)]
    pub buffer_bytes: u64,
    /// A drive's buffer was full at least once, so the host waited for the drive: its pace,
    /// not the feed's, set the figure.
    #[serde(default)]
    pub buffer_filled: bool,
}

impl TapeFigures {
    /// Whether the drives shoe-shined: stopped and restarted while fed below their lowest
    /// speed step (`feed_mb_s`, the host's rate into all of them). A stop while fed faster
    /// (the last buffer drained at the end) is not shoe-shining.
    pub fn shoe_shined(&self, feed_mb_s: f64) -> bool {
        self.backhitches > 0
            && feed_mb_s < self.min_mb_s * self.compression * f64::from(self.drives.max(1))
    }
}

/// CPU use over the run, both as a percentage of all CPUs of the machine.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CpuFigures {
    /// This process (getrusage).
    pub process_pct: f64,
    /// The whole machine (/proc/stat): everything not idle or waiting for I/O.
    pub system_pct: f64,
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

/// Percentiles of I/O call latency in microseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct LatencyFigures {
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// Throughput over one short interval of a run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Sample {
    /// Seconds since the run started, at the end of the interval.
    pub t: f64,
    pub mb_per_s: f64,
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
