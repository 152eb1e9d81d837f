//! The steps of each tool test: the untimed ones that set it up (a repository made, a first
//! backup, a change) and the timed one, for a backup, a ceiling, an incremental and a restore.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::engine::error::EngineError;
use crate::engine::target::s3::relay::CountingRelay;
use crate::engine::tool::definition::{ProgressFrom, ToolShape};
use crate::engine::tool::process::Output;
use crate::engine::tool::tree::{self, RestoreLayout};

use super::{
    Context, MEMORY_BASE, Progress, Repo, S3Objects, Scratch, TOOL_DIR_SUFFIX, ToolOutcome, Where,
    copied_roots, process_outcome, s3_place, source_tally, tree_error,
};

/// The share of the copy an incremental run changes between its two backups: a busy night.
const INCREMENTAL_CHANGE: f64 = 0.05;
/// The seed of that change: every incremental run of a campaign changes the same bytes.
const CHANGE_SEED: u64 = 0x7265_7374_6963_0001;

impl Context<'_> {
    /// The tool's backup of the source, cold, into a new repository on the target (or its
    /// stream into the lab's pipeline and target).
    pub(super) fn backup(
        &self,
        roots: &[PathBuf],
        scratch: &mut Scratch,
    ) -> Result<ToolOutcome, EngineError> {
        let lab = self.lab_dir(scratch)?;
        let at = Where {
            roots: roots.to_vec(),
            repo: self.repository(scratch)?,
            home: scratch.make(lab.join("home"))?,
            restore: lab.join("restore"),
            stream: lab.join("stream"),
            in_memory: false,
        };
        let password = format!("{:032x}", rand::random::<u128>());
        self.prepare(&at, &password)?;
        let tally = source_tally(&at.roots);
        tree::drop_from_cache(&at.roots);
        self.timed_backup(&at, &password, "gen1", tally, true)
    }

    /// The same backup with the source copied into memory and the repository there too (a
    /// stream into the null sink): the tool alone.
    pub(super) fn ceiling(
        &self,
        roots: &[PathBuf],
        scratch: &mut Scratch,
    ) -> Result<ToolOutcome, EngineError> {
        let tally = source_tally(roots);
        // The copy and a repository as large again, at worst.
        let need = tally.1.saturating_mul(2);
        let memory = tree::memory_dir(Path::new(MEMORY_BASE), need).map_err(|refused| {
            EngineError::Tool(format!(
                "the tool's ceiling reads its source from memory, and cannot: {refused}"
            ))
        })?;
        scratch.dirs.push(memory.clone());
        let copy = memory.join("source");
        tree::copy_tree(roots, &copy, self.control.cancel).map_err(tree_error)?;
        let copied = copied_roots(roots, &copy)?;
        let at = Where {
            roots: copied,
            repo: Repo::in_dir(memory.clone()),
            home: scratch.make(memory.join("home"))?,
            restore: memory.join("restore"),
            stream: memory.join("stream"),
            in_memory: true,
        };
        let password = format!("{:032x}", rand::random::<u128>());
        self.prepare(&at, &password)?;
        let tally = source_tally(&at.roots);
        self.timed_backup(&at, &password, "gen1", tally, false)
    }

    /// A first backup of a copy of the source, a known share of the copy changed, and the
    /// second backup timed.
    pub(super) fn incremental(
        &self,
        roots: &[PathBuf],
        scratch: &mut Scratch,
    ) -> Result<ToolOutcome, EngineError> {
        let lab = self.lab_dir(scratch)?;
        let copy = lab.join("source");
        // The copy keeps the source's holes: it takes what the source takes on its disk.
        let size = source_size(roots)?;
        self.needs_room(
            &lab,
            size.allocated_bytes,
            "the copy of the source it changes",
        )?;
        tree::copy_tree(roots, &copy, self.control.cancel).map_err(tree_error)?;
        let at = Where {
            roots: copied_roots(roots, &copy)?,
            repo: self.repository(scratch)?,
            home: scratch.make(lab.join("home"))?,
            restore: lab.join("restore"),
            stream: lab.join("stream"),
            in_memory: false,
        };
        let password = format!("{:032x}", rand::random::<u128>());
        self.prepare(&at, &password)?;
        let first = self.places_with(&at, "gen1", &password);
        let stdout = match self.definition.shape {
            ToolShape::Repository => Output::Discard,
            ToolShape::Stream => Output::Discard,
        };
        let finished = self.spawn_and_wait(
            self.stages(&self.definition.backup, &first),
            &first,
            &at.home,
            stdout,
            None,
            false,
        )?;
        self.fail_unless_succeeded(&finished, "the first backup")?;
        let before = at.repo.stored();
        let mut changed = None;
        for root in &at.roots {
            let change =
                tree::change_share(root, INCREMENTAL_CHANGE, CHANGE_SEED).map_err(tree_error)?;
            let sum = changed.get_or_insert((0u64, 0u64));
            sum.0 += change.files;
            sum.1 += change.bytes;
        }
        let tally = source_tally(&at.roots);
        tree::drop_from_cache(&at.roots);
        let mut measured = self.timed_backup(&at, &password, "gen2", tally, true)?;
        if self.definition.shape == ToolShape::Repository {
            measured.figures.added_bytes = measured
                .figures
                .stored_bytes
                .zip(before)
                .map(|(after, before)| after.saturating_sub(before));
        }
        measured.figures.changed_files = changed.map(|(files, _)| files);
        measured.figures.changed_bytes = changed.map(|(_, bytes)| bytes);
        Ok(measured)
    }

    /// A backup, untimed, then the tool's restore of it timed, then the restore checked file
    /// by file against the source.
    pub(super) fn restore(
        &self,
        roots: &[PathBuf],
        scratch: &mut Scratch,
    ) -> Result<ToolOutcome, EngineError> {
        let lab = self.lab_dir(scratch)?;
        let repo = self.repository(scratch)?;
        // A stream is kept beside the target's files (or in the data dir), as a repository on
        // a disk is; one in a bucket leaves nothing on a disk.
        let kept = repo.dir.clone().unwrap_or_else(|| lab.join("kept"));
        let at = Where {
            roots: roots.to_vec(),
            repo,
            home: scratch.make(lab.join("home"))?,
            restore: scratch.make(lab.join("restore"))?,
            stream: kept.join("stream"),
            in_memory: false,
        };
        // A tool may restore a sparse file's holes as data: the restore needs room for the
        // source's apparent size.
        let size = source_size(roots)?;
        self.needs_room(&at.restore, size.apparent_bytes, "the restore")?;
        let password = format!("{:032x}", rand::random::<u128>());
        self.prepare(&at, &password)?;
        let places = self.places_with(&at, "gen1", &password);
        // The source as the backup finds it: a file changed after this is no fault of the
        // tool's restore.
        let before = tree::SourceState::take(roots);
        match self.definition.shape {
            ToolShape::Repository => {
                let began = std::time::SystemTime::now();
                let finished = self.spawn_and_wait(
                    self.stages(&self.definition.backup, &places),
                    &places,
                    &at.home,
                    Output::Discard,
                    None,
                    false,
                )?;
                self.fail_unless_backed_up(&finished, "the backup to restore", roots, began)?;
            }
            ToolShape::Stream => {
                self.stream_into_file(&places, &at, "the backup to restore")?;
            }
        }
        let kept_roots = [kept.clone()];
        tree::drop_from_cache(&kept_roots);
        let tally = source_tally(roots);
        let progress = Progress::new(ProgressFrom::ProcessIo);
        let started = Instant::now();
        let finished = self.spawn_and_wait(
            self.stages(&self.definition.restore, &places),
            &places,
            &at.restore,
            Output::Discard,
            None,
            true,
        )?;
        self.fail_unless_succeeded(&finished, "the restore")?;
        let verified = tree::verify(
            roots,
            &at.restore,
            RestoreLayout::AbsolutePaths,
            self.control.cancel,
            Some(&before),
        )
        .map_err(tree_error)?;
        let _ = started;
        let samples = progress.samples(&finished, false, verified.bytes);
        let mut figures = self.figures(&finished, tally, false);
        let restored = verified.bytes;
        let ok = verified.ok();
        let sentence = verified.sentence();
        figures.verified = Some(verified);
        let mut outcome = process_outcome(finished.wall, restored, tally.0, samples);
        if !ok {
            outcome.failure = Some(EngineError::Tool(format!(
                "{} restored what it was given back wrong: {sentence}",
                self.definition.name
            )));
        }
        Ok(ToolOutcome {
            outcome,
            figures,
            warnings: Vec::new(),
        })
    }

    /// The repository for a backup on the target: keys in the target's bucket for a tool
    /// that can keep one there, else a directory beside the target's files.
    pub(super) fn repository(&self, scratch: &mut Scratch) -> Result<Repo, EngineError> {
        let (Some(config), Some(access)) = (self.plan.target.object_store(), &self.definition.s3)
        else {
            return Ok(Repo::in_dir(self.target_dir(scratch)?));
        };
        let store = self
            .settings
            .object_stores
            .get(&config.store)
            .ok_or_else(|| {
                EngineError::Tool(format!("the lab has no S3 store named {}", config.store))
            })?;
        let prefix = format!(
            "{}{}{TOOL_DIR_SUFFIX}/",
            crate::engine::target::s3::lab_key_start(&config.prefix, &self.settings.object_owner),
            self.tag
        );
        let objects = S3Objects {
            store: store.clone(),
            prefix: prefix.clone(),
        };
        scratch.objects.push(objects.clone());
        // The tool reaches the bucket through the lab's relay, which counts its requests.
        let relay = if store.uncounted {
            None
        } else {
            match CountingRelay::start(&store.endpoint(), store.bucket.name()) {
                Ok(relay) => Some(Arc::new(relay)),
                Err(refused) => {
                    scratch.relay_refused = Some(refused.to_string());
                    None
                }
            }
        };
        scratch.relay = relay.clone();
        let endpoint = relay
            .as_ref()
            .map_or_else(|| store.endpoint(), |relay| relay.endpoint());
        let (place, env) = access.fill(&s3_place(store, endpoint, prefix.trim_end_matches('/')));
        Ok(Repo {
            place: PathBuf::from(place),
            dir: None,
            env,
            objects: Some(objects),
            relay,
        })
    }

    /// The untimed commands that make an empty repository.
    pub(super) fn prepare(&self, at: &Where, password: &str) -> Result<(), EngineError> {
        if self.definition.init.is_empty() {
            return Ok(());
        }
        let places = self.places_with(at, "gen1", password);
        self.untimed(
            &self.definition.init,
            &places,
            &at.home,
            "making the repository",
        )
    }

    /// The timed backup: a repository tool runs to its end; a stream tool's output goes
    /// through the lab's pipeline into the target (the null sink for the ceiling).
    fn timed_backup(
        &self,
        at: &Where,
        password: &str,
        archive: &str,
        tally: (u64, u64),
        stored_on_target: bool,
    ) -> Result<ToolOutcome, EngineError> {
        let places = self.places_with(at, archive, password);
        let measured = match self.definition.shape {
            ToolShape::Repository => {
                let progress = Progress::new(self.definition.progress);
                let began = std::time::SystemTime::now();
                let finished = self.spawn_and_wait(
                    self.stages(&self.definition.backup, &places),
                    &places,
                    &at.home,
                    if self.definition.progress == ProgressFrom::ResticJson {
                        Output::Lines
                    } else {
                        Output::Discard
                    },
                    Some(progress.handler()),
                    true,
                )?;
                self.fail_unless_backed_up(&finished, "the backup", &at.roots, began)?;
                let samples = progress.samples(&finished, true, tally.1);
                let mut figures = self.figures(&finished, tally, at.in_memory);
                figures.stored_objects = at.repo.stored_objects();
                figures.stored_bytes = match &figures.stored_objects {
                    Some(objects) => Some(objects.bytes),
                    None => at.repo.stored(),
                };
                let outcome = process_outcome(finished.wall, tally.1, tally.0, samples);
                ToolOutcome {
                    outcome,
                    figures,
                    warnings: Vec::new(),
                }
            }
            ToolShape::Stream => self.stream_through_pipeline(&places, at, tally)?,
        };
        let _ = stored_on_target;
        Ok(measured)
    }
}

/// The source's files, their apparent bytes and what they take on their disks.
pub(super) fn source_size(roots: &[PathBuf]) -> Result<tree::TreeSize, EngineError> {
    let mut size = tree::TreeSize::default();
    for root in roots {
        let one = tree::tree_size(root).map_err(tree_error)?;
        size.files += one.files;
        size.apparent_bytes += one.apparent_bytes;
        size.allocated_bytes += one.allocated_bytes;
    }
    Ok(size)
}
