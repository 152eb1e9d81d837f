//! The tests: the five of the bottleneck method, the network backup, the restore, and the
//! four that run a backup tool (restic, borg, tar, …) the way a user runs it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The tests: the five local ones of the bottleneck method, in table order, then the network
/// backup.
#[derive(
    Debug,
    Clone,
    Copy,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Generated data into the target: the target's ceiling.
    TapeWrite,
    /// One stream reads the source and discards it: one stream's ceiling.
    ReadSingle,
    /// Every stream reads at once and discards: the source's ceiling.
    ReadParallel,
    /// The full pipeline into the null sink: source + pipeline + CPU ceiling.
    NullSink,
    /// The full pipeline into the target: the end-to-end figure.
    FullBackup,
    /// Clients × streams send over TCP into the pipeline and the target.
    NetworkBackup,
    /// A backup image on the target read back into a directory as files shaped like the
    /// source: what a restore of one stream's data takes.
    Restore,
    /// The campaign's backup tool backs up the source, cold, into a new repository on the
    /// target (or its stream into the lab's pipeline and target): the figure of the user's
    /// own full backup.
    ToolBackup,
    /// The same tool on the same data with the source and the repository in memory (a
    /// stream into the null sink): what the tool itself can do on this machine.
    ToolCeiling,
    /// A second backup by the tool after a known share of a copy of the source changed: the
    /// figure of a nightly run.
    ToolIncremental,
    /// The tool's latest backup restored into a directory of the lab's, timed, then verified
    /// file by file against the source.
    ToolRestore,
    /// Many nights of the tool on a copy of the source, each changed by a stated model and
    /// backed up, its retention and checks where due, then its latest and oldest kept backup
    /// restored and verified: a backup's life.
    ToolLife,
    /// A probe object of the lab's own in an object store, and what someone holding the
    /// lab's credentials would try on it (an overwrite, a delete, a shorter retention, a
    /// delete of its version): whether the bucket would keep a backup. No rate.
    ObjectLock,
}

impl TestKind {
    /// Every test, in the order of the bottleneck table.
    pub const ALL: [TestKind; 13] = [
        TestKind::TapeWrite,
        TestKind::ReadSingle,
        TestKind::ReadParallel,
        TestKind::NullSink,
        TestKind::FullBackup,
        TestKind::NetworkBackup,
        TestKind::Restore,
        TestKind::ToolCeiling,
        TestKind::ToolBackup,
        TestKind::ToolIncremental,
        TestKind::ToolRestore,
        TestKind::ToolLife,
        TestKind::ObjectLock,
    ];

    /// The table of a campaign that names a backup tool, what it runs by default: the
    /// target's and the source's ceilings beside the tool's own ceiling, backup, incremental
    /// and restore.
    pub const TOOL_TABLE: [TestKind; 6] = [
        TestKind::TapeWrite,
        TestKind::ReadParallel,
        TestKind::ToolCeiling,
        TestKind::ToolBackup,
        TestKind::ToolIncremental,
        TestKind::ToolRestore,
    ];

    /// The five local tests of the bottleneck method: what a campaign runs by default.
    pub const BOTTLENECK: [TestKind; 5] = [
        TestKind::TapeWrite,
        TestKind::ReadSingle,
        TestKind::ReadParallel,
        TestKind::NullSink,
        TestKind::FullBackup,
    ];

    /// The id used in specs and results.
    pub fn id(self) -> &'static str {
        match self {
            TestKind::TapeWrite => "tape_write",
            TestKind::ReadSingle => "read_single",
            TestKind::ReadParallel => "read_parallel",
            TestKind::NullSink => "null_sink",
            TestKind::FullBackup => "full_backup",
            TestKind::NetworkBackup => "network_backup",
            TestKind::Restore => "restore",
            TestKind::ToolBackup => "tool_backup",
            TestKind::ToolCeiling => "tool_ceiling",
            TestKind::ToolIncremental => "tool_incremental",
            TestKind::ToolRestore => "tool_restore",
            TestKind::ToolLife => "tool_life",
            TestKind::ObjectLock => "object_lock",
        }
    }

    /// The row label of the bottleneck table.
    pub fn label(self) -> &'static str {
        match self {
            TestKind::TapeWrite => "Target write",
            TestKind::ReadSingle => "Read, single stream",
            TestKind::ReadParallel => "Read, parallel",
            TestKind::NullSink => "Backup to null, parallel",
            TestKind::FullBackup => "Full backup, parallel",
            TestKind::NetworkBackup => "Network backup",
            TestKind::Restore => "Restore, one stream",
            TestKind::ToolBackup => "Tool backup",
            TestKind::ToolCeiling => "Tool alone, in memory",
            TestKind::ToolIncremental => "Tool incremental",
            TestKind::ToolRestore => "Tool restore, verified",
            TestKind::ToolLife => "Tool life, nightly backups",
            TestKind::ObjectLock => "Object lock probe",
        }
    }

    /// The test as a noun in a sentence: "run the full backup to confirm".
    pub fn name(self) -> &'static str {
        match self {
            TestKind::TapeWrite => "the target write",
            TestKind::ReadSingle => "the single-stream read",
            TestKind::ReadParallel => "the parallel read",
            TestKind::NullSink => "the backup to null",
            TestKind::FullBackup => "the full backup",
            TestKind::NetworkBackup => "the network backup",
            TestKind::Restore => "the restore",
            TestKind::ToolBackup => "the tool's backup",
            TestKind::ToolCeiling => "the tool alone",
            TestKind::ToolIncremental => "the tool's incremental",
            TestKind::ToolRestore => "the tool's restore",
            TestKind::ToolLife => "the tool's life",
            TestKind::ObjectLock => "the object-lock probe",
        }
    }

    /// Parses a test id.
    pub fn from_id(id: &str) -> Option<TestKind> {
        TestKind::ALL.into_iter().find(|test| test.id() == id)
    }

    /// Whether the test reads the campaign's source on this host (and so can be served from
    /// the page cache). A network backup's clients read it.
    /// A tool's backup reads it cold; its other tests read a copy.
    pub fn reads_source(self) -> bool {
        !matches!(
            self,
            TestKind::TapeWrite
                | TestKind::NetworkBackup
                | TestKind::Restore
                | TestKind::ToolCeiling
                | TestKind::ToolIncremental
                | TestKind::ToolRestore
                | TestKind::ToolLife
                | TestKind::ObjectLock
        )
    }

    /// Whether the test reads back what the target holds (a restore).
    pub fn reads_target(self) -> bool {
        self == TestKind::Restore
    }

    /// Whether the test writes into the campaign's target.
    pub fn writes_target(self) -> bool {
        matches!(
            self,
            TestKind::TapeWrite
                | TestKind::FullBackup
                | TestKind::NetworkBackup
                | TestKind::ToolBackup
                | TestKind::ToolIncremental
                | TestKind::ToolLife
        )
    }

    /// Whether the test runs the campaign's backup tool.
    pub fn runs_tool(self) -> bool {
        matches!(
            self,
            TestKind::ToolBackup
                | TestKind::ToolCeiling
                | TestKind::ToolIncremental
                | TestKind::ToolRestore
                | TestKind::ToolLife
        )
    }

    /// Whether the test measures a rate (MB/s): every test but the object-lock probe, whose
    /// answer is what the store refused. A probe is left out of the figures, the verdict,
    /// the charts and the series.
    pub fn measures_rate(self) -> bool {
        self != TestKind::ObjectLock
    }

    /// Whether the test runs once per generation of a generated dataset: the local tests
    /// that send the dataset to the target.
    pub fn sends_generations(self) -> bool {
        matches!(self, TestKind::TapeWrite | TestKind::FullBackup)
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
