//! The life test's steps: a copy of the source changed night after night and backed up by the
//! tool, its retention and checks where due, each command measured on its own; then the latest
//! and the oldest kept backup restored and verified against the copy as it was that night.
//! A stream tool keeps each night's stream in a file (the lab keeps the last `keep`, as a
//! retention would); a repository tool keeps its repository on the target.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::engine::dataset::{DatasetRequest, Likeness, Profile};
use crate::engine::error::EngineError;
use crate::engine::measure::{round1, round3};
use crate::engine::result::Progress as RunProgress;
use crate::engine::tool::definition::{Places, ToolShape};
use crate::engine::tool::figures::PressureFigures;
use crate::engine::tool::life::{
    CommandFigures, LATEST, LadderRung, LifeCommand, LifeFigures, LifePlan, LifeRestore,
    NightFigures, OLDEST_KEPT, ONE_FILE,
};
use crate::engine::tool::process::{Ended, Finished, Output, Stream};
use crate::engine::tool::tree::{self, NightChanged, RestoreLayout};

use super::{
    Context, Scratch, ToolOutcome, Where, copied_roots, process_outcome, source_size, source_tally,
    tree_error,
};

/// The seed of a life's nights: every life of a campaign changes the same bytes on the same
/// night.
const LIFE_SEED: u64 = 0x6c69_6665_0000_0000;
const MB: f64 = 1e6;

/// A life under way: where it works, and what it has measured.
struct Life {
    plan: LifePlan,
    at: Where,
    password: String,
    /// The copy of the source the nights change.
    copy: PathBuf,
    /// Where each night's stream is kept (a stream tool).
    kept: PathBuf,
    /// The copy of the source as the oldest kept night left it.
    oldest_copy: PathBuf,
    oldest: u32,
    nights: Vec<NightFigures>,
    started: Instant,
}

impl Context<'_> {
    /// Runs a life of the tool: see the module's comment.
    pub(super) fn life(
        &self,
        roots: &[PathBuf],
        scratch: &mut Scratch,
    ) -> Result<ToolOutcome, EngineError> {
        let plan = self.plan.params.life.unwrap_or_default();
        let lab = self.lab_dir(scratch)?;
        let copy = lab.join("source");
        let bytes = match self.plan.params.ladder {
            Some(rung) => rung.bytes,
            None => {
                let size = source_size(roots)?;
                size.allocated_bytes.max(size.apparent_bytes)
            }
        };
        self.needs_room(
            &lab,
            bytes.saturating_mul(3),
            "the life's copy of the source, the copy of its oldest kept night and a restore",
        )?;
        let life_roots = match self.plan.params.ladder {
            Some(rung) => {
                self.generate_rung(&copy, rung)?;
                vec![copy.clone()]
            }
            None => {
                tree::copy_tree(roots, &copy, self.control.cancel).map_err(tree_error)?;
                copied_roots(roots, &copy)?
            }
        };
        let repo = self.repository(scratch)?;
        let kept = match &repo.dir {
            Some(dir) if self.definition.shape == ToolShape::Stream => dir.clone(),
            _ => lab.join("kept"),
        };
        let at = Where {
            roots: life_roots,
            repo,
            home: scratch.make(lab.join("home"))?,
            restore: lab.join("restore"),
            stream: kept.join("night-1.stream"),
            in_memory: false,
        };
        let has_retention =
            self.definition.shape == ToolShape::Stream || !self.definition.retention.is_empty();
        let mut life = Life {
            plan,
            password: format!("{:032x}", rand::random::<u128>()),
            copy,
            kept,
            oldest_copy: lab.join("oldest"),
            oldest: plan.oldest_kept(has_retention),
            at,
            nights: Vec::new(),
            started: Instant::now(),
        };
        if self.definition.shape == ToolShape::Stream {
            std::fs::create_dir_all(&life.kept).map_err(|error| {
                EngineError::Tool(format!("cannot make {}: {error}", life.kept.display()))
            })?;
        }
        self.prepare(&life.at, &life.password)?;
        for night in 1..=plan.nights {
            let figures = self.night(&life, night)?;
            life.nights.push(figures);
            self.tell_progress(&life, night);
        }
        let restores = self.life_restores(&mut life)?;
        self.life_result(life, restores)
    }

    /// A rung's tree, made by the dataset generator: its bytes, its files drawn around the
    /// user's mean size, data as compressible as the run's.
    fn generate_rung(&self, root: &Path, rung: LadderRung) -> Result<(), EngineError> {
        let request = DatasetRequest {
            profile: Profile::Typical,
            size: rung.bytes,
            max_files: None,
            seed: LIFE_SEED ^ u64::from(rung.rung),
            compress_ratio: self.plan.params.compress_ratio,
            dedup: None,
            like: Some(Likeness::around_mean(rung.mean_file_bytes)),
        };
        match crate::engine::dataset::create_until(root, &request, &mut |_| {}, self.control.cancel)
        {
            Ok(_) => Ok(()),
            Err(crate::engine::dataset::DatasetError::Stopped) => Err(EngineError::Cancelled),
            Err(error) => Err(EngineError::Tool(format!("the ladder's tree: {error}"))),
        }
    }

    /// One night: its change, its backup, and the retention and checks due after it.
    fn night(&self, life: &Life, night: u32) -> Result<NightFigures, EngineError> {
        if self.control.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        let changed = if night > 1 {
            let mut sum = NightChanged::default();
            for root in &life.at.roots {
                let one = tree::apply_night(root, &life.plan.change, LIFE_SEED ^ u64::from(night))
                    .map_err(tree_error)?;
                add_changed(&mut sum, &one);
            }
            Some(sum)
        } else {
            None
        };
        let tally = source_tally(&life.at.roots);
        tree::drop_from_cache(&life.at.roots);
        let before = self.kept_bytes(life);
        let mut commands = vec![self.night_backup(life, night, tally)?];
        let after_backup = self.kept_bytes(life);
        if night == life.oldest {
            tree::copy_tree(
                std::slice::from_ref(&life.copy),
                &life.oldest_copy,
                self.control.cancel,
            )
            .map_err(tree_error)?;
        }
        if life.plan.retention_due(night) {
            commands.extend(self.retention(life, night)?);
        }
        if life.plan.checks_due(night) {
            let places = self.night_places(life, night);
            for (command, lines) in [
                (LifeCommand::Check, &self.definition.check),
                (LifeCommand::CheckData, &self.definition.check_data),
            ] {
                let stored = life.at.repo.stored();
                commands.extend(self.maintenance(command, lines, &places, &life.at, stored)?);
            }
        }
        let places = self.night_places(life, night);
        let repository_bytes = self.kept_bytes(life);
        Ok(NightFigures {
            night,
            changed,
            source_files: tally.0,
            source_bytes: tally.1,
            repository_bytes,
            added_bytes: after_backup
                .zip(before)
                .map(|(after, before)| after.saturating_sub(before)),
            index_bytes: self.index_bytes(&places),
            snapshots: self.snapshots(life, &places)?,
            commands,
        })
    }

    /// The places of night `night`'s commands: its archive and its kept stream.
    fn night_places(&self, life: &Life, night: u32) -> Places {
        Places {
            keep: life.plan.keep,
            time: night_time(night),
            stream: life.kept.join(format!("night-{night}.stream")),
            ..self.places_with(&life.at, &format!("night-{night}"), &life.password)
        }
    }

    /// The night's backup, timed: a repository tool's into its repository, a stream tool's
    /// into a file of its own, from a home of its own (a full backup every night).
    fn night_backup(
        &self,
        life: &Life,
        night: u32,
        tally: (u64, u64),
    ) -> Result<CommandFigures, EngineError> {
        let places = self.night_places(life, night);
        let mut requests = None;
        let finished = match self.definition.shape {
            ToolShape::Repository => {
                let began = std::time::SystemTime::now();
                let (finished, made) = life.at.repo.counted(|| {
                    self.spawn_and_wait(
                        self.stages(&self.definition.backup, &places),
                        &places,
                        &life.at.home,
                        Output::Discard,
                        None,
                        false,
                    )
                });
                requests = made;
                let finished = finished?;
                let what = format!("night {night}'s backup");
                self.fail_unless_backed_up(&finished, &what, &life.at.roots, began)?;
                finished
            }
            ToolShape::Stream => {
                tree::remove_tree(&life.at.home).map_err(tree_error)?;
                std::fs::create_dir_all(&life.at.home).map_err(|error| {
                    EngineError::Tool(format!("cannot make {}: {error}", life.at.home.display()))
                })?;
                self.stream_into_file(&places, &life.at, &format!("night {night}'s backup"))?
            }
        };
        let mut figures =
            command_figures(LifeCommand::Backup, &self.definition.backup[0], &finished);
        figures.requests = requests;
        if self.definition.backup.len() > 1 {
            // A pipeline is named by its programs: `tar | zstd`.
            figures.program = finished.programs.join(" | ");
        }
        let seconds = finished.wall.as_secs_f64();
        if seconds > 0.0 {
            figures.mb_per_s = Some(round1(tally.1 as f64 / MB / seconds));
            figures.files_per_s = Some(round1(tally.0 as f64 / seconds));
        }
        Ok(figures)
    }

    /// The retention due after a night: the tool's own commands, each timed; a stream tool's
    /// streams beyond the last `keep` removed by the lab, untimed.
    fn retention(&self, life: &Life, night: u32) -> Result<Vec<CommandFigures>, EngineError> {
        if self.definition.shape == ToolShape::Stream {
            for old in 1..=night.saturating_sub(life.plan.keep) {
                let stream = life.kept.join(format!("night-{old}.stream"));
                if let Err(error) = std::fs::remove_file(&stream)
                    && error.kind() != std::io::ErrorKind::NotFound
                {
                    return Err(EngineError::Tool(format!("{}: {error}", stream.display())));
                }
            }
            return Ok(Vec::new());
        }
        let places = self.night_places(life, night);
        self.maintenance(
            LifeCommand::Retention,
            &self.definition.retention,
            &places,
            &life.at,
            None,
        )
    }

    /// Runs maintenance commands one after another, each timed; one that fails is kept with
    /// its error (a finding of the night) and the rest are not run. A cancel, or the run's
    /// deadline, ends the life.
    fn maintenance(
        &self,
        command: LifeCommand,
        lines: &[Vec<String>],
        places: &Places,
        at: &Where,
        through_bytes: Option<u64>,
    ) -> Result<Vec<CommandFigures>, EngineError> {
        let mut measured = Vec::new();
        for line in lines {
            let (finished, requests) = at.repo.counted(|| {
                self.spawn_and_wait(
                    self.stages(std::slice::from_ref(line), places),
                    places,
                    &at.home,
                    Output::Discard,
                    None,
                    false,
                )
            });
            let finished = finished?;
            let mut figures = command_figures(command, line, &finished);
            figures.requests = requests;
            if let Some(failure) = finished.failure() {
                // The tool's own failure is a finding of the night; a cancel, or the run's
                // deadline passed, ends the run.
                if self.control.cancel.load(Ordering::Relaxed)
                    || (finished.ended == Ended::Deadline && self.past_run_deadline())
                {
                    self.fail_unless_succeeded(&finished, &figures.program)?;
                }
                figures.error = Some(failure);
                measured.push(figures);
                break;
            }
            let seconds = finished.wall.as_secs_f64();
            if let Some(bytes) =
                through_bytes.filter(|_| command == LifeCommand::CheckData && seconds > 0.0)
            {
                figures.mb_per_s = Some(round1(bytes as f64 / MB / seconds));
            }
            measured.push(figures);
        }
        Ok(measured)
    }

    /// What the repository, or the kept streams, take.
    fn kept_bytes(&self, life: &Life) -> Option<u64> {
        match self.definition.shape {
            ToolShape::Repository => life.at.repo.stored(),
            ToolShape::Stream => tree::tree_size(&life.kept)
                .ok()
                .map(|size| size.allocated_bytes),
        }
    }

    /// The bytes of the tool's index and metadata, where its definition says where they are.
    fn index_bytes(&self, places: &Places) -> Option<u64> {
        let paths = self.definition.index_paths(places, &self.values);
        if paths.is_empty() {
            return None;
        }
        let mut bytes = 0;
        for path in paths {
            bytes += tree::matching_size(&path).ok()?.apparent_bytes;
        }
        Some(bytes)
    }

    /// The backups kept: the tool's list counted line by line, or the streams kept.
    fn snapshots(&self, life: &Life, places: &Places) -> Result<Option<u32>, EngineError> {
        if self.definition.shape == ToolShape::Stream {
            let kept = std::fs::read_dir(&life.kept)
                .map(|entries| entries.flatten().count() as u32)
                .ok();
            return Ok(kept);
        }
        let Some(line) = self.definition.list.first() else {
            return Ok(None);
        };
        let lines = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&lines);
        let finished = self.spawn_and_wait(
            self.stages(std::slice::from_ref(line), places),
            places,
            &life.at.home,
            Output::Lines,
            Some(Box::new(move |stream, text: &str| {
                if stream == Stream::Stdout && !text.trim().is_empty() {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            })),
            false,
        )?;
        if self.control.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Cancelled);
        }
        Ok(finished
            .failure()
            .is_none()
            .then(|| lines.load(Ordering::Relaxed)))
    }

    /// Tells the run's watchers how far the life has come.
    fn tell_progress(&self, life: &Life, night: u32) {
        let bytes: u64 = life.nights.iter().map(|night| night.source_bytes).sum();
        let last = life
            .nights
            .last()
            .and_then(NightFigures::backup)
            .and_then(|backup| backup.mb_per_s)
            .unwrap_or(0.0);
        (self.control.progress)(&RunProgress {
            elapsed_s: life.started.elapsed().as_secs_f64(),
            bytes,
            mb_per_s: last,
            percent: Some(100.0 * f64::from(night) / f64::from(life.plan.nights)),
        });
    }

    /// The latest backup restored and verified against the copy as it is, then one file of it
    /// alone; then the oldest kept against the copy as that night left it (put in the copy's
    /// place, so the restore's paths are the same).
    fn life_restores(&self, life: &mut Life) -> Result<Vec<LifeRestore>, EngineError> {
        let last = life.plan.nights;
        let mut restores = vec![self.life_restore(life, last, LATEST)?];
        restores.extend(self.life_restore_one(life)?);
        if life.oldest < last {
            let latest_copy = life.copy.with_extension("latest");
            let oldest_place = RestoreLayout::AbsolutePaths
                .place(&life.copy, &life.oldest_copy)
                .map_err(tree_error)?;
            let moved = std::fs::rename(&life.copy, &latest_copy)
                .and_then(|()| std::fs::rename(&oldest_place, &life.copy));
            moved.map_err(|error| {
                EngineError::Tool(format!(
                    "cannot put the oldest kept night's copy in place: {error}"
                ))
            })?;
            restores.push(self.life_restore(life, life.oldest, OLDEST_KEPT)?);
        }
        Ok(restores)
    }

    /// One night's backup restored into an empty directory, timed, and verified.
    fn life_restore(
        &self,
        life: &Life,
        night: u32,
        which: &str,
    ) -> Result<LifeRestore, EngineError> {
        self.empty_restore(life)?;
        let size = source_size(&life.at.roots)?;
        self.needs_room(&life.at.restore, size.apparent_bytes, "the restore")?;
        let places = self.night_places(life, night);
        let finished = self.restore_cold(life, &self.definition.restore, &places)?;
        self.fail_unless_succeeded(&finished, &format!("the restore of night {night}"))?;
        let verified = tree::verify(
            &life.at.roots,
            &life.at.restore,
            RestoreLayout::AbsolutePaths,
            self.control.cancel,
            None,
        )
        .map_err(tree_error)?;
        Ok(restore_figures(which, night, None, &finished, verified))
    }

    /// One file of the latest backup restored alone, timed, and verified: the last in name
    /// order, which a tool that reads its backup in order comes to last (of the files whose
    /// path no tool could read as a pattern). None where the tool's definition has no
    /// `restore_one`.
    fn life_restore_one(&self, life: &Life) -> Result<Option<LifeRestore>, EngineError> {
        if self.definition.restore_one.is_empty() {
            return Ok(None);
        }
        let plain = |path: &Path| {
            path.to_str().is_some_and(|text| {
                text.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
            })
        };
        let mut last = None;
        crate::engine::source::each_file(&life.at.roots, |file, _| {
            if plain(&file.path) {
                last = Some(file.path);
            }
            true
        });
        let Some(one) = last else {
            return Ok(None);
        };
        self.empty_restore(life)?;
        let night = life.plan.nights;
        let places = Places {
            one: one.clone(),
            ..self.night_places(life, night)
        };
        let finished = self.restore_cold(life, &self.definition.restore_one, &places)?;
        self.fail_unless_succeeded(&finished, "the restore of one file")?;
        let verified = tree::verify(
            std::slice::from_ref(&one),
            &life.at.restore,
            RestoreLayout::AbsolutePaths,
            self.control.cancel,
            None,
        )
        .map_err(tree_error)?;
        let named = life
            .at
            .roots
            .iter()
            .find_map(|root| one.strip_prefix(root).ok())
            .unwrap_or(&one)
            .display()
            .to_string();
        Ok(Some(restore_figures(
            ONE_FILE,
            night,
            Some(named),
            &finished,
            verified,
        )))
    }

    /// The restore directory, emptied.
    fn empty_restore(&self, life: &Life) -> Result<(), EngineError> {
        if life.at.restore.exists() {
            tree::remove_tree(&life.at.restore).map_err(tree_error)?;
        }
        std::fs::create_dir_all(&life.at.restore).map_err(|error| {
            EngineError::Tool(format!(
                "cannot make {}: {error}",
                life.at.restore.display()
            ))
        })
    }

    /// A restore's commands run into the restore directory, what the backups are kept in
    /// (the repository, or the streams) first dropped from the page cache.
    fn restore_cold(
        &self,
        life: &Life,
        commands: &[Vec<String>],
        places: &Places,
    ) -> Result<Finished, EngineError> {
        let stored = match (&life.at.repo.dir, self.definition.shape) {
            (Some(dir), ToolShape::Repository) => dir.clone(),
            _ => life.kept.clone(),
        };
        tree::drop_from_cache(std::slice::from_ref(&stored));
        self.spawn_and_wait(
            self.stages(commands, places),
            places,
            &life.at.restore,
            Output::Discard,
            None,
            false,
        )
    }

    /// The life's result: its figure is the nights' backups together (their bytes over their
    /// seconds), one sample a night; a restore that came back wrong fails it.
    fn life_result(
        &self,
        life: Life,
        restores: Vec<LifeRestore>,
    ) -> Result<ToolOutcome, EngineError> {
        let mut wall = 0.0;
        let mut samples = Vec::new();
        for night in &life.nights {
            let backup = night.backup();
            wall += backup.map_or(0.0, |backup| backup.seconds);
            samples.push(crate::engine::result::Sample {
                t: round3(wall),
                mb_per_s: backup.and_then(|backup| backup.mb_per_s).unwrap_or(0.0),
            });
        }
        let bytes = life.nights.iter().map(|night| night.source_bytes).sum();
        let files = life.nights.iter().map(|night| night.source_files).sum();
        let mut outcome = process_outcome(Duration::from_secs_f64(wall), bytes, files, samples);
        if let Some(wrong) = restores.iter().find(|restore| !restore.verified.ok()) {
            outcome.failure = Some(EngineError::Tool(format!(
                "{} restored night {} ({}) back wrong: {}",
                self.definition.name,
                wrong.night,
                wrong.which,
                wrong.verified.sentence()
            )));
        }
        let tally = (
            life.nights.last().map_or(0, |night| night.source_files),
            life.nights.last().map_or(0, |night| night.source_bytes),
        );
        let mut figures = self.totals(&life.nights, tally);
        figures.stored_bytes = life.nights.last().and_then(|night| night.repository_bytes);
        figures.life = Some(LifeFigures {
            plan: life.plan,
            no_maintenance: self.no_maintenance(life.plan.keep),
            machine_memory_bytes: crate::engine::provenance::memory_bytes(),
            nights: life.nights,
            restores,
        });
        Ok(ToolOutcome {
            outcome,
            figures,
            warnings: Vec::new(),
        })
    }

    /// Why a life ran no retention or check of the tool's own, if it did not.
    fn no_maintenance(&self, keep: u32) -> Option<String> {
        let name = &self.definition.name;
        match self.definition.shape {
            ToolShape::Stream => Some(format!(
                "{name} writes a stream and keeps no repository: each night is a full backup \
                 kept as a file, the lab keeping the last {keep} as a retention would; it has no \
                 retention or check of its own, so its life is its nights and restores"
            )),
            ToolShape::Repository => {
                let missing: Vec<&str> = [
                    ("retention", self.definition.retention.is_empty()),
                    ("check", self.definition.check.is_empty()),
                    ("check_data", self.definition.check_data.is_empty()),
                ]
                .into_iter()
                .filter_map(|(name, empty)| empty.then_some(name))
                .collect();
                (!missing.is_empty()).then(|| {
                    format!(
                        "{name}'s definition gives no {}: the life ran without {}",
                        missing.join(", "),
                        if missing.len() == 1 { "it" } else { "them" }
                    )
                })
            }
        }
    }

    /// The tool's figures over the whole life: CPU and memory of its backups, the last one's
    /// source.
    fn totals(
        &self,
        nights: &[NightFigures],
        tally: (u64, u64),
    ) -> crate::engine::tool::ToolFigures {
        let backups: Vec<&CommandFigures> =
            nights.iter().filter_map(NightFigures::backup).collect();
        let wall: f64 = backups.iter().map(|backup| backup.seconds).sum();
        let cpu: f64 = backups.iter().map(|backup| backup.cpu_s).sum();
        crate::engine::tool::ToolFigures {
            name: self.definition.name.clone(),
            version: self.version.clone(),
            shape: self.definition.shape,
            params: self.values.clone(),
            source_files: tally.0,
            source_bytes: tally.1,
            in_memory: false,
            cpu_user_s: round3(cpu),
            cpu_system_s: 0.0,
            cores_used: round3(if wall > 0.0 { cpu / wall } else { 0.0 }),
            max_cores_used: 0.0,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            busiest_thread_pct: 0.0,
            peak_rss_bytes: nights
                .iter()
                .flat_map(|night| night.commands.iter())
                .map(|command| command.peak_rss_bytes)
                .max()
                .unwrap_or(0),
            stored_bytes: None,
            added_bytes: None,
            changed_files: None,
            changed_bytes: None,
            verified: None,
            pressure: None,
            life: None,
            requests: None,
            requests_not_counted: None,
            stored_objects: None,
        }
    }
}

/// When night `night`'s backup is said to be taken: 02:00 UTC on the night's day, the first
/// on 2001-01-01, one day apart, as the nights of a life are.
/// A restore's figures: its time, CPU and memory, its rate over the bytes verified.
fn restore_figures(
    which: &str,
    night: u32,
    file: Option<String>,
    finished: &Finished,
    verified: tree::Verified,
) -> LifeRestore {
    let seconds = finished.wall.as_secs_f64();
    LifeRestore {
        which: which.to_string(),
        night,
        file,
        seconds: round3(seconds),
        cpu_s: round3(finished.cpu_user_s + finished.cpu_system_s),
        peak_rss_bytes: finished.peak_rss_bytes,
        mb_per_s: if seconds > 0.0 {
            round1(verified.bytes as f64 / MB / seconds)
        } else {
            0.0
        },
        verified,
    }
}

fn night_time(night: u32) -> String {
    const FIRST_NIGHT: i64 = 978_314_400;
    jiff::Timestamp::from_second(FIRST_NIGHT + 86_400 * i64::from(night.saturating_sub(1)))
        .map(|time| time.strftime("%Y-%m-%dT%H:%M:%S").to_string())
        .unwrap_or_default()
}

/// A command's figures from its finished process tree.
fn command_figures(command: LifeCommand, line: &[String], finished: &Finished) -> CommandFigures {
    CommandFigures {
        command,
        program: command_name(line),
        seconds: round3(finished.wall.as_secs_f64()),
        cpu_s: round3(finished.cpu_user_s + finished.cpu_system_s),
        peak_rss_bytes: finished.peak_rss_bytes,
        mb_per_s: None,
        files_per_s: None,
        pressure: finished.pressure.map(PressureFigures::from),
        error: None,
        requests: None,
    }
}

/// A command line's program and its subcommand, as a table names it: `borg compact`.
fn command_name(line: &[String]) -> String {
    let mut words = line.first().map_or("", String::as_str).split_whitespace();
    let program = words.next().unwrap_or("the tool");
    let program = Path::new(program)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or(program);
    match line.get(1) {
        Some(sub) if !sub.starts_with('-') && !sub.contains('{') && line.len() > 1 => {
            format!("{program} {sub}")
        }
        _ => program.to_string(),
    }
}

fn add_changed(sum: &mut NightChanged, one: &NightChanged) {
    sum.edited.files += one.edited.files;
    sum.edited.bytes += one.edited.bytes;
    sum.added_files += one.added_files;
    sum.added_bytes += one.added_bytes;
    sum.deleted_files += one.deleted_files;
    sum.deleted_bytes += one.deleted_bytes;
    sum.renamed_files += one.renamed_files;
}

#[cfg(test)]
mod tests {
    use super::command_name;

    fn line(words: &[&str]) -> Vec<String> {
        words.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn nights_are_a_day_apart() {
        assert_eq!(super::night_time(1), "2001-01-01T02:00:00");
        assert_eq!(super::night_time(32), "2001-02-01T02:00:00");
    }

    #[test]
    fn a_command_is_named_by_its_program_and_subcommand() {
        assert_eq!(
            command_name(&line(&["borg", "compact", "{repo}"])),
            "borg compact"
        );
        assert_eq!(
            command_name(&line(&[
                "/usr/bin/restic",
                "forget",
                "--keep-last",
                "{keep}"
            ])),
            "restic forget"
        );
        assert_eq!(command_name(&line(&["tar", "--create"])), "tar");
        assert_eq!(
            command_name(&line(&["mytool check \"$1\"", "{repo}"])),
            "mytool"
        );
    }
}
