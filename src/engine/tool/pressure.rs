//! The machine's pressure over a tool's command, as a run's result keeps it: the shares of
//! the command's time in which some task waited for a CPU or for I/O.

use serde::{Deserialize, Serialize};

use super::process::Pressure;
use crate::engine::measure::round1;

/// Shares of the timed step in which some task waited for a CPU or for I/O (all of them, for
/// `io_full_pct`), from the kernel's pressure stall information.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct PressureFigures {
    pub cpu_some_pct: f64,
    pub io_some_pct: f64,
    pub io_full_pct: f64,
}

impl From<Pressure> for PressureFigures {
    /// The kernel's shares, to a tenth of a percent.
    fn from(pressure: Pressure) -> Self {
        PressureFigures {
            cpu_some_pct: round1(pressure.cpu_some_pct),
            io_some_pct: round1(pressure.io_some_pct),
            io_full_pct: round1(pressure.io_full_pct),
        }
    }
}
