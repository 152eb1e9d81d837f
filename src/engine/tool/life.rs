//! A backup's life: many nights of one tool on one copy of the source, each night changed by
//! a stated model and backed up, the tool's retention every few nights, its checks, and the
//! latest and the oldest kept backup restored and verified. This file holds what a life is
//! asked to do ([`LifePlan`]) and what it measured ([`LifeFigures`]); the runner is
//! `run::life`.

use serde::{Deserialize, Serialize};

use super::pressure::PressureFigures;
use super::tree::{NightChanged, NightModel, Verified};

/// The fewest nights a life has: a full backup and one night after it.
pub const MIN_NIGHTS: u32 = 2;
/// The most nights a life has.
pub const MAX_NIGHTS: u32 = 1000;
/// The restore of the last night's backup, as [`LifeRestore::which`] names it.
pub const LATEST: &str = "latest";
/// The restore of the oldest backup the retention kept.
pub const OLDEST_KEPT: &str = "oldest kept";
/// The restore of one file of the last night's backup, alone.
pub const ONE_FILE: &str = "one file";

/// What a life runs: its nights, how often the tool's retention runs and what it keeps, how
/// often its checks run, and what each night changes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LifePlan {
    /// Nights, each a backup: the first a full one, every later one after a night's change.
    #[schema(minimum = 2, maximum = 1000, default = 30)]
    pub nights: u32,
    /// The tool's retention runs after every this many nights' backups.
    #[schema(minimum = 1, maximum = 1000, default = 7)]
    pub retention_every: u32,
    /// The backups a retention keeps (`{keep}` in the tool's retention).
    #[schema(minimum = 1, maximum = 1000, default = 7)]
    pub keep: u32,
    /// The tool's checks (metadata, then every byte) run after every this many nights as well
    /// as after the last; left out, after the last only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1000)]
    pub check_every: Option<u32>,
    /// What each night changes, as shares of the tree from 0 to 1.
    pub change: NightModel,
}

impl Default for LifePlan {
    fn default() -> Self {
        Self {
            nights: 30,
            retention_every: 7,
            keep: 7,
            check_every: None,
            change: NightModel::default(),
        }
    }
}

impl LifePlan {
    /// Whether the retention runs after night `night`'s backup.
    pub fn retention_due(&self, night: u32) -> bool {
        night.is_multiple_of(self.retention_every.max(1))
    }

    /// Whether the checks run after night `night`: every `check_every` nights, and the last.
    pub fn checks_due(&self, night: u32) -> bool {
        night == self.nights
            || self
                .check_every
                .is_some_and(|every| every > 0 && night.is_multiple_of(every))
    }

    /// The oldest night a retention that keeps the last `keep` leaves at the end: its last run
    /// keeps the nights before it up to `keep`, and every night after it stays.
    pub fn oldest_kept(&self, has_retention: bool) -> u32 {
        if !has_retention || self.retention_every > self.nights {
            return 1;
        }
        let last = self.nights - self.nights % self.retention_every.max(1);
        (last + 1).saturating_sub(self.keep).max(1)
    }

    /// Every field out of its bounds, by its name in the plan, with why.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        if !(MIN_NIGHTS..=MAX_NIGHTS).contains(&self.nights) {
            problems.push((
                "nights".to_string(),
                format!("must be from {MIN_NIGHTS} to {MAX_NIGHTS}"),
            ));
        }
        for (name, value) in [
            ("retention_every", Some(self.retention_every)),
            ("keep", Some(self.keep)),
            ("check_every", self.check_every),
        ] {
            if value.is_some_and(|value| !(1..=MAX_NIGHTS).contains(&value)) {
                problems.push((name.to_string(), format!("must be from 1 to {MAX_NIGHTS}")));
            }
        }
        for (name, share) in self.change.problems() {
            problems.push((
                format!("change.{name}"),
                format!("{share} is not a share from 0 to 1 (0.02 is 2 %)"),
            ));
        }
        problems
    }

    /// The plan in a sentence, as a page states it.
    pub fn words(&self) -> String {
        let checks = match self.check_every {
            Some(every) => format!("checks every {every} nights and after the last"),
            None => "checks after the last night".to_string(),
        };
        format!(
            "{} nights; retention every {} nights keeping the last {}; {checks}; each night: {}",
            self.nights,
            self.retention_every,
            self.keep,
            self.change.words()
        )
    }
}

/// One rung of a forecast's ladder: the life runs on a tree the dataset generator makes of
/// `bytes`, its files drawn around the user's mean file size, in place of a copy of the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LadderRung {
    /// From 1, the smallest.
    pub rung: u32,
    pub bytes: u64,
    pub mean_file_bytes: u64,
}

/// The commands of a life, each timed on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LifeCommand {
    Backup,
    /// One command of the tool's retention (restic's `forget --prune`; borg's `prune`, then
    /// its `compact`).
    Retention,
    /// The check of the repository's structure and metadata.
    Check,
    /// The check of every byte of the repository's data.
    CheckData,
}

impl LifeCommand {
    /// The id in the CSV and the JSON.
    pub fn id(self) -> &'static str {
        match self {
            LifeCommand::Backup => "backup",
            LifeCommand::Retention => "retention",
            LifeCommand::Check => "check",
            LifeCommand::CheckData => "check_data",
        }
    }

    /// The command as a table names it.
    pub fn label(self) -> &'static str {
        match self {
            LifeCommand::Backup => "backup",
            LifeCommand::Retention => "retention",
            LifeCommand::Check => "check (metadata)",
            LifeCommand::CheckData => "check (all data)",
        }
    }
}

/// One command of a night, measured from outside as every tool run is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CommandFigures {
    pub command: LifeCommand,
    /// The programs it ran, with the tool's subcommand: `borg compact`.
    pub program: String,
    pub seconds: f64,
    /// CPU seconds of its whole process tree, user and system.
    pub cpu_s: f64,
    /// The most memory its process tree held at once.
    pub peak_rss_bytes: u64,
    /// The bytes it went through per second: the source for a backup, the repository for a
    /// check of all data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<f64>,
    /// A backup's source files per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureFigures>,
    /// How the command failed, its error output's end: a finding of the night, not a lost
    /// life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The requests it made of the bucket the repository is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<crate::engine::target::s3::operations::RequestCounts>,
}

/// One night: what changed, what the backup and any maintenance took, and what the
/// repository holds after them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NightFigures {
    /// 1 for the full backup.
    pub night: u32,
    /// What the night changed before its backup; none on the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<NightChanged>,
    /// The files and bytes the night's backup read.
    pub source_files: u64,
    pub source_bytes: u64,
    /// What the repository (or the kept streams) took after the night's commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_bytes: Option<u64>,
    /// What the night's backup added to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_bytes: Option<u64>,
    /// The tool's index and metadata (restic's `index/`, borg's `index.*` and cache), where
    /// its definition says where they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_bytes: Option<u64>,
    /// The backups the repository keeps after the night, as the tool lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<u32>,
    pub commands: Vec<CommandFigures>,
}

impl NightFigures {
    /// The night's backup.
    pub fn backup(&self) -> Option<&CommandFigures> {
        self.commands
            .iter()
            .find(|command| command.command == LifeCommand::Backup)
    }
}

/// A restore of one night's backup, timed and verified against the source as it was then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LifeRestore {
    /// Which backup: [`LATEST`] or [`OLDEST_KEPT`], or one file of the latest ([`ONE_FILE`]).
    pub which: String,
    pub night: u32,
    /// The one file restored ([`ONE_FILE`]), by its path beneath its source root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub seconds: f64,
    pub cpu_s: f64,
    pub peak_rss_bytes: u64,
    pub mb_per_s: f64,
    pub verified: Verified,
}

/// What a life measured, night by night, and its restores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LifeFigures {
    pub plan: LifePlan,
    pub nights: Vec<NightFigures>,
    pub restores: Vec<LifeRestore>,
    /// Why the tool ran no retention or check of its own (a stream tool keeps no repository):
    /// said on the page, never a blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_maintenance: Option<String>,
    /// The memory of the machine the life ran on, which a forecast's memory is set beside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_memory_bytes: Option<u64>,
}

impl LifeFigures {
    /// Every command of every night, with its night.
    pub fn commands(&self) -> impl Iterator<Item = (&NightFigures, &CommandFigures)> {
        self.nights
            .iter()
            .flat_map(|night| night.commands.iter().map(move |command| (night, command)))
    }

    /// The commands that failed, with their night: findings of the life.
    pub fn failures(&self) -> impl Iterator<Item = (&NightFigures, &CommandFigures)> {
        self.commands()
            .filter(|(_, command)| command.error.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_kept_night_follows_the_last_retention() {
        let plan = |nights, every, keep| LifePlan {
            nights,
            retention_every: every,
            keep,
            ..LifePlan::default()
        };
        // Retention after nights 3, 6 and 9 keeping 2: after 9, nights 8 and 9, then 10.
        assert_eq!(plan(10, 3, 2).oldest_kept(true), 8);
        // Retention after night 10 itself keeping 3: 8, 9, 10.
        assert_eq!(plan(10, 5, 3).oldest_kept(true), 8);
        // Never run: everything kept.
        assert_eq!(plan(10, 20, 3).oldest_kept(true), 1);
        assert_eq!(plan(10, 3, 2).oldest_kept(false), 1);
        // Keeping more than there were.
        assert_eq!(plan(4, 2, 9).oldest_kept(true), 1);
    }

    #[test]
    fn checks_run_at_the_end_and_where_asked() {
        let plan = LifePlan {
            nights: 10,
            check_every: Some(4),
            ..LifePlan::default()
        };
        let due: Vec<u32> = (1..=10).filter(|night| plan.checks_due(*night)).collect();
        assert_eq!(due, vec![4, 8, 10]);
        let plan = LifePlan {
            nights: 10,
            ..LifePlan::default()
        };
        assert!(!plan.checks_due(4) && plan.checks_due(10));
    }

    #[test]
    fn every_bad_field_is_named() {
        let mut plan = LifePlan {
            nights: 1,
            retention_every: 0,
            keep: 2000,
            check_every: Some(0),
            ..LifePlan::default()
        };
        plan.change.edited = 1.5;
        let names: Vec<String> = plan.problems().into_iter().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            vec![
                "nights",
                "retention_every",
                "keep",
                "check_every",
                "change.edited"
            ]
        );
        assert!(LifePlan::default().problems().is_empty());
    }
}
