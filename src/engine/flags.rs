//! The flags a run's figure carries, each a reason it may mislead, and the judgement they make
//! up: kept with the run's result; the rules that raise them are `validity`'s.

use serde::{Deserialize, Serialize};

/// Why a figure cannot be trusted.
#[derive(
    Debug,
    Clone,
    Copy,
    Serialize,
    Deserialize,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FlagCode {
    TooShort,
    Unsteady,
    CacheResident,
    DriveBufferNotFilled,
    TooFewDriveCycles,
    BusyMachine,
    CpuSaturated,
    SkippedData,
    DataSmallerThanRun,
    UndefinedFigure,
}

impl FlagCode {
    /// Every code, in the order of `GUIDE`.
    pub const ALL: [FlagCode; 10] = [
        FlagCode::TooShort,
        FlagCode::Unsteady,
        FlagCode::CacheResident,
        FlagCode::DriveBufferNotFilled,
        FlagCode::TooFewDriveCycles,
        FlagCode::BusyMachine,
        FlagCode::CpuSaturated,
        FlagCode::SkippedData,
        FlagCode::DataSmallerThanRun,
        FlagCode::UndefinedFigure,
    ];

    /// The code as results, CSV and the API spell it.
    pub fn id(self) -> &'static str {
        match self {
            FlagCode::TooShort => "too_short",
            FlagCode::Unsteady => "unsteady",
            FlagCode::CacheResident => "cache_resident",
            FlagCode::DriveBufferNotFilled => "drive_buffer_not_filled",
            FlagCode::TooFewDriveCycles => "too_few_drive_cycles",
            FlagCode::BusyMachine => "busy_machine",
            FlagCode::CpuSaturated => "cpu_saturated",
            FlagCode::SkippedData => "skipped_data",
            FlagCode::DataSmallerThanRun => "data_smaller_than_run",
            FlagCode::UndefinedFigure => "undefined_figure",
        }
    }

    /// What to do about it: the remedy a verdict names for runs to redo.
    pub fn remedy(self) -> &'static str {
        match self {
            FlagCode::TooShort => "give the run a duration of 10 s or more",
            FlagCode::DataSmallerThanRun => {
                "run it time-based (time_based, --time-based) with a duration of 10 s or more: the source is then read again until the time is up"
            }
            FlagCode::Unsteady => "run longer, and keep other work off the machine and its disks",
            FlagCode::CacheResident => "set cold_cache (or direct) so the disks are measured",
            FlagCode::DriveBufferNotFilled => {
                "give the run a duration long enough to fill the drive's buffer several times"
            }
            FlagCode::TooFewDriveCycles => {
                "run longer, so the drive stops and restarts several times"
            }
            FlagCode::BusyMachine => "repeat it when the machine is idle",
            FlagCode::CpuSaturated => {
                "use larger blocks, fewer streams, or direct I/O, so the device and not the CPU sets the pace"
            }
            FlagCode::SkippedData => {
                "make the source readable by the lab, or leave the unreadable parts out"
            }
            FlagCode::UndefinedFigure => {
                "run it again for longer: it measured too little to compute every figure"
            }
        }
    }
}

impl FlagCode {
    /// The direction in which this flag biases a figure.
    pub fn bias(self) -> Bias {
        match self {
            FlagCode::BusyMachine | FlagCode::CpuSaturated => Bias::Lowered,
            FlagCode::CacheResident | FlagCode::DriveBufferNotFilled => Bias::Raised,
            FlagCode::TooShort
            | FlagCode::Unsteady
            | FlagCode::DataSmallerThanRun
            | FlagCode::SkippedData
            | FlagCode::TooFewDriveCycles
            | FlagCode::UndefinedFigure => Bias::Either,
        }
    }
}

impl FlagCode {
    /// Whether running the test again with the same settings may clear the flag: noise
    /// (an unsteady run, other work on the machine) can pass; a run too short, data too
    /// small, a resident cache or a drive's unfilled buffer come back the same.
    pub fn a_repeat_may_clear(self) -> bool {
        matches!(
            self,
            FlagCode::Unsteady | FlagCode::BusyMachine | FlagCode::CpuSaturated
        )
    }
}

/// Which way a flag may have moved a run's figure from what the component can really do: a
/// verdict asks this before it lets the flag overturn a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bias {
    /// The figure can only be lower than the component's: other work took CPU from the lab.
    Lowered,
    /// The figure can only be higher: the page cache served the reads, or the data went into
    /// a drive's buffer faster than the drive writes it.
    Raised,
    /// Either way, by an amount not known.
    Either,
}

/// One reason a figure may mislead, with the evidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Flag {
    pub code: FlagCode,
    pub detail: String,
}

/// The judgement of one run: valid when no flag is raised.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Validity {
    pub valid: bool,
    pub flags: Vec<Flag>,
}

impl Validity {
    /// Whether the flag is raised.
    pub fn has(&self, code: FlagCode) -> bool {
        self.flags.iter().any(|flag| flag.code == code)
    }

    /// The codes raised, comma-separated (empty when valid).
    pub fn codes(&self) -> String {
        let codes: Vec<&str> = self.flags.iter().map(|flag| flag.code.id()).collect();
        codes.join(",")
    }
}
