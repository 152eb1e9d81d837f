//! A run as the engine executes it: its test, its resolved parameters, where it reads and
//! writes, and the placement every run of a campaign shares. The campaign layer (`spec`)
//! builds these from what a user submits; the engine takes them as they are.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::test_kind::TestKind;

pub use super::params::RunParams;
pub use super::target::{NamedFile, TargetPlan};

/// Size of the generated data when neither the source nor `params.size` says.
pub const DEFAULT_GENERATED_SIZE: u64 = 1 << 30;

/// The source of a validated campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourcePlan {
    Paths(Vec<PathBuf>),
    Generated {
        size: u64,
        compress_ratio: f64,
        /// Every block is the first one again, as lmdd's internal input writes its one buffer
        /// over and over: the writes then cost what the target costs and nothing else. Only
        /// `backlab lmdd` asks for it; a campaign's generated data never repeats.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        repeat: bool,
        /// Data that repeats itself by a chosen ratio; `None`: nothing repeats.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dedup: Option<crate::engine::reduction::DedupSettings>,
        /// Successive full backups of the dataset, each changed from the one before; `None`:
        /// one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generations: Option<crate::engine::reduction::Generations>,
    },
}

/// One run to execute: a test at one parameter point.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    pub test: TestKind,
    pub params: RunParams,
    pub source: SourcePlan,
    pub target: TargetPlan,
    /// Network backup: the agents that send, in order (the first `clients` of them); empty
    /// when the lab's own clients send on loopback.
    pub agents: Vec<String>,
}

impl RunPlan {
    /// The run at one point of a campaign: its own test and parameters, and where every run of
    /// the campaign reads and writes.
    pub fn at(test: TestKind, params: RunParams, placement: &Placement) -> RunPlan {
        RunPlan {
            test,
            params,
            source: placement.source.clone(),
            target: placement.target.clone(),
            agents: if test == TestKind::NetworkBackup {
                placement.agents.clone()
            } else {
                Vec::new()
            },
        }
    }
}

/// Where every run of a campaign reads and writes, resolved once at submission and stored with
/// the campaign, so a run executes exactly what was accepted and no run copies the source list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub source: SourcePlan,
    pub target: TargetPlan,
    /// The agents that send the network runs; empty for the lab's own clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
}

impl Placement {
    /// The placement shared by a campaign's runs, taken from its plans (`None` without runs).
    pub fn of(plans: &[RunPlan]) -> Option<Placement> {
        let first = plans.first()?;
        let agents = plans
            .iter()
            .find(|plan| !plan.agents.is_empty())
            .map(|plan| plan.agents.clone())
            .unwrap_or_default();
        Some(Placement {
            source: first.source.clone(),
            target: first.target.clone(),
            agents,
        })
    }
}
