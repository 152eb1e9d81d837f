//! A directory target: each run writes one new file of the lab's, like a backup image, and
//! removes it afterwards.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::files::{
    LAB_FILE_PREFIX, NoFollowError, close_in_background, create_file_in, describe,
    open_dir_no_follow, sync_or_give_up,
};
use super::write_behind::WriteBehind;
use serde::{Deserialize, Serialize};

use super::{Capabilities, Kind, Opening, Settings, Sink, Target, path_only};
use crate::engine::EngineSettings;
use crate::engine::buffer::{AlignedBuf, PAGE};
use crate::engine::cache;
use crate::engine::error::EngineError;
use crate::engine::measure::LatencyRecorder;
use crate::engine::source::StreamSource;
use crate::engine::target::TargetPlan;
use crate::engine::target::image::{ImageReader, ImageRequest, RestoreImage, write_image};
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;

/// The directory kind: a path, no settings.
pub struct Dir;

impl Kind for Dir {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        path_only(&FACTS, path, settings, errors).map(|path| TargetPlan::new(DirTarget(path)))
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<DirTarget>(value)
    }
}

/// A file the lab creates in a target directory, written like a backup image and removed when
/// the sink is dropped, whether the run succeeded, failed or was cancelled: its name at once,
/// its space when it is closed in the background (`close_in_background`).
pub struct DirSink {
    path: PathBuf,
    /// The target directory, opened without following links; the file is created and removed
    /// relative to it, so a directory swapped in later is never written to or removed from.
    dir: OwnedFd,
    name: String,
    /// Always present until the sink is dropped, when it is handed to `close_in_background`.
    file: Option<File>,
    direct: bool,
    /// Buffered writes kept to the disk's pace ([`WriteBehind`]); `None` for direct I/O
    /// (which has no dirty pages) and for a run that asked not to flush.
    behind: Option<WriteBehind>,
}

impl DirSink {
    /// Creates a new file; never opens an existing one, and follows no symbolic link on the
    /// way to it. Its buffered writes go at the page cache's pace (a restore's image, laid
    /// down before its timed window); [`DirSink::at_the_disks_pace`] for a timed write.
    pub fn create(dir: &Path, tag: &str, direct: bool) -> Result<Self, EngineError> {
        let dir_fd = open_dir_no_follow(dir).map_err(|error| match error {
            NoFollowError::Link => EngineError::TargetLink {
                path: dir.to_path_buf(),
            },
            NoFollowError::Io(source) => EngineError::TargetCreate {
                path: dir.to_path_buf(),
                source,
            },
        })?;
        let name = format!("{LAB_FILE_PREFIX}{tag}.img");
        let file =
            create_file_in(&dir_fd, &name, direct).map_err(|source| EngineError::TargetCreate {
                path: dir.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: dir.join(&name),
            dir: dir_fd,
            name,
            file: Some(file),
            direct,
            behind: None,
        })
    }

    /// The sink's buffered writes handed to the disk as they go, so the run's figure is the
    /// disk's from its first second ([`WriteBehind`]).
    pub fn at_the_disks_pace(mut self) -> Self {
        if !self.direct {
            self.behind = Some(WriteBehind::default());
        }
        self
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the target file is already closed"))
    }
}

impl Sink for DirSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("the target file is already closed"))?;
        file.write_all(data)?;
        match self.behind.as_mut() {
            Some(behind) => behind.wrote(file, data.len()),
            None => Ok(()),
        }
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        if fsync {
            self.file()?.sync_data()?;
        }
        Ok(())
    }

    fn finish_or_give_up(&mut self, fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        if fsync {
            sync_or_give_up(self.file()?, give_up)?;
        }
        Ok(())
    }

    fn alignment(&self) -> usize {
        if self.direct { PAGE } else { 1 }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// A backup image in a target directory, read back from its start as a restore reads it; the
/// file is removed when the stream is dropped.
pub struct ImageStream {
    /// Holds the image's name and removes the file when dropped.
    _image: DirSink,
    reader: ImageReader,
}

impl ImageStream {
    /// Writes the image a restore asks for (rounded up to whole pages) of generated data as
    /// compressible as asked, flushes it, drops it from the page cache and opens it for reading
    /// (with O_DIRECT when asked). Gives up, removing what it wrote, once the run is cancelled.
    pub fn write(dir: &Path, request: &ImageRequest<'_>) -> Result<Self, EngineError> {
        let len = request.bytes.div_ceil(PAGE as u64) * PAGE as u64;
        let mut image = DirSink::create(dir, request.tag, false)?;
        write_image(&mut image, request, len)?;
        let path = image.path.clone();
        let open_error = |source: io::Error| EngineError::Source {
            path: path.clone(),
            source,
        };
        let mut flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if request.direct {
            flags |= OFlags::DIRECT;
        }
        let file = File::from(
            rustix::fs::openat(&image.dir, image.name.as_str(), flags, Mode::empty())
                .map_err(|error| open_error(error.into()))?,
        );
        // A restore reads from the medium, not from memory the write left behind.
        cache::evict(&file).map_err(open_error)?;
        Ok(Self {
            _image: image,
            reader: ImageReader::new(file, path, len),
        })
    }
}

impl StreamSource for ImageStream {
    fn fill(&mut self, buf: &mut AlignedBuf, want: usize) -> Result<usize, EngineError> {
        self.reader.fill(buf, want)
    }

    fn files_done(&self) -> u64 {
        self.reader.files_done()
    }

    fn read_latency(&self) -> Option<&LatencyRecorder> {
        self.reader.read_latency()
    }
}

impl Drop for DirSink {
    fn drop(&mut self) {
        // The file is the lab's own; failing to remove it leaves it for the start-up sweep.
        let _ = rustix::fs::unlinkat(&self.dir, self.name.as_str(), AtFlags::empty());
        if let Some(file) = self.file.take() {
            close_in_background(file);
        }
    }
}

/// A directory on a real file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirTarget(pub PathBuf);

/// What this kind is before its settings are read. Files the lab makes under a directory: a repository tool keeps its repository beside them.
pub const FACTS: KindFacts = KindFacts {
    id: "dir",
    label: "directory",
    takes_path: true,
    writes: Writes::FilesUnder,
    tool_repository: ToolRepository::InDirectory,
    object_store: false,
};

impl Target for DirTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::HARDWARE
    }

    fn words(&self) -> String {
        format!("directory {}", self.0.display())
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.0)
    }

    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        Some(&mut self.0)
    }

    fn device_id(&self) -> Option<u64> {
        std::fs::metadata(&self.0)
            .ok()
            .map(|metadata| metadata.dev())
    }

    fn preflight(&self, direct: bool, _settings: &EngineSettings, errors: &mut FieldErrors) {
        if let Err((field, message)) = check_target_dir(&self.0, direct) {
            errors.add(field, message);
        }
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        let sink = DirSink::create(&self.0, how.tag, how.direct)?;
        // A run that flushes at its end is timed at the disk's pace throughout; one that asked
        // not to measures what the page cache takes.
        let sink = if how.params.fsync {
            sink.at_the_disks_pace()
        } else {
            sink
        };
        Ok(vec![Box::new(sink)])
    }

    fn restores(&self) -> bool {
        true
    }

    fn restore_image(&self, request: &ImageRequest<'_>) -> Result<RestoreImage, EngineError> {
        let stream = ImageStream::write(&self.0, request)?;
        Ok(RestoreImage {
            stream: Box::new(stream),
            from: self.words(),
            // A disk image is read from its start to its end, whatever was interleaved in it.
            interleaved: 1,
            positioning_s: 0.0,
            figures: None,
        })
    }
}

/// Checks that the lab can create files in `dir` (with O_DIRECT when asked); an error names the
/// field to blame: `target.path`, or `params.direct` when only O_DIRECT is refused.
pub(super) fn check_target_dir(dir: &Path, direct: bool) -> Result<(), (&'static str, String)> {
    let shown = dir.display();
    let target_error = |message: String| ("target.path", message);
    let dir_fd = open_dir_no_follow(dir).map_err(|error| {
        target_error(match error {
            NoFollowError::Link => format!(
                "{shown}: a component is a symbolic link; the lab does not follow links in targets"
            ),
            NoFollowError::Io(error) if error.raw_os_error() == Some(libc::ENOTDIR) => {
                format!("{shown} is not a directory")
            }
            NoFollowError::Io(error) => describe(&shown, &error),
        })
    })?;
    // Permission bits do not tell (root, read-only mounts, ACLs): create a file and remove it.
    let probe = format!(
        ".backlab-probe-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    );
    let create = |direct: bool| {
        let created = create_file_in(&dir_fd, &probe, direct);
        let _ = rustix::fs::unlinkat(&dir_fd, probe.as_str(), rustix::fs::AtFlags::empty());
        created
    };
    create(false)
        .map_err(|error| target_error(format!("cannot create files in {shown}: {error}")))?;
    if direct {
        match create(true) {
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {
                return Err((
                    "params.direct",
                    format!(
                        "the file system of {shown} does not support O_DIRECT; set direct to false"
                    ),
                ));
            }
            Err(error) => {
                return Err(target_error(format!(
                    "cannot create files in {shown}: {error}"
                )));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}
