//! A raw device target, written sequentially from its start; only ever opened when the lab
//! was started with it allowed. A block device also takes a restore's image at its start and
//! gives it back.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::files::{
    NoFollowError, close_in_background, describe, open_dir_no_follow, sync_or_give_up,
};
use super::{Capabilities, Kind, Opening, Settings, Sink, Target, path_only};
use crate::engine::EngineSettings;
use crate::engine::buffer::PAGE;
use crate::engine::cache;
use crate::engine::error::EngineError;
use crate::engine::target::TargetPlan;
use crate::engine::target::image::{ImageReader, ImageRequest, RestoreImage, write_image};
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;

/// The device kind: a path, no settings.
pub struct Device;

impl Kind for Device {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn plan(
        &self,
        path: Option<&Path>,
        settings: &Settings,
        errors: &mut FieldErrors,
    ) -> Option<TargetPlan> {
        path_only(&FACTS, path, settings, errors).map(|path| TargetPlan::new(DeviceTarget(path)))
    }

    fn stored(&self, value: serde_json::Value) -> Result<TargetPlan, serde_json::Error> {
        super::stored_as::<DeviceTarget>(value)
    }
}

/// A raw device written sequentially from its start. Only opened when the caller allowed it.
pub struct DeviceSink {
    path: PathBuf,
    /// Always present until the sink is dropped, when it is handed to `close_in_background`.
    file: Option<File>,
    direct: bool,
}

impl DeviceSink {
    /// Opens an existing block or character device listed in `allowed` for writing.
    pub fn open(path: &Path, allowed: &[PathBuf], direct: bool) -> Result<Self, EngineError> {
        let opened = open_allowed(path, allowed, OFlags::WRONLY, direct)?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Some(opened.file),
            direct: opened.direct,
        })
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the device is already closed"))
    }
}

impl Sink for DeviceSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        self.file()?.write_all(data)
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        self.finish_or_give_up(fsync, &AtomicBool::new(false))
    }

    fn finish_or_give_up(&mut self, fsync: bool, give_up: &AtomicBool) -> io::Result<()> {
        if !fsync {
            return Ok(());
        }
        match sync_or_give_up(self.file()?, give_up) {
            // Character devices such as /dev/null cannot be synced; there is nothing to flush.
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Ok(()),
            other => other,
        }
    }

    fn alignment(&self) -> usize {
        if self.direct { PAGE } else { 1 }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DeviceSink {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            close_in_background(file);
        }
    }
}

/// A device opened by `open_allowed`.
struct OpenedDevice {
    file: File,
    /// Whether O_DIRECT was applied (block devices only).
    direct: bool,
}

/// Opens an existing block or character device listed in `allowed`. The path is resolved
/// once, compared with the allowed devices, and the resolved path is then opened without
/// following any symbolic link, so what is used is what was compared.
fn open_allowed(
    path: &Path,
    allowed: &[PathBuf],
    access: OFlags,
    direct: bool,
) -> Result<OpenedDevice, EngineError> {
    if !device_allowed(path, allowed) {
        return Err(EngineError::DeviceNotAllowed {
            path: path.to_path_buf(),
        });
    }
    let open_error = |source| EngineError::DeviceOpen {
        path: path.to_path_buf(),
        source,
    };
    let resolved = path.canonicalize().map_err(open_error)?;
    let (Some(parent), Some(name)) = (resolved.parent(), resolved.file_name()) else {
        return Err(open_error(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a block or character device",
        )));
    };
    let dir = open_dir_no_follow(parent).map_err(|error| {
        open_error(match error {
            NoFollowError::Link => io::Error::other(
                "a component of the path is a symbolic link; the lab does not follow links \
                 in targets",
            ),
            NoFollowError::Io(error) => error,
        })
    })?;
    let device_kind = |stat: &rustix::fs::Stat| match FileType::from_raw_mode(stat.st_mode) {
        FileType::BlockDevice => Some(true),
        FileType::CharacterDevice => Some(false),
        _ => None,
    };
    let not_a_device = || {
        open_error(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a block or character device",
        ))
    };
    let stat = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|error| open_error(error.into()))?;
    let block = device_kind(&stat).ok_or_else(not_a_device)?;
    let direct = direct && block;
    let mut flags = access | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    let fd = rustix::fs::openat(&dir, name, flags, Mode::empty())
        .map_err(|error| open_error(error.into()))?;
    // What was opened must still be the device that was looked at.
    let opened = rustix::fs::fstat(&fd).map_err(|error| open_error(error.into()))?;
    if device_kind(&opened) != Some(block) || opened.st_rdev != stat.st_rdev {
        return Err(not_a_device());
    }
    Ok(OpenedDevice {
        file: File::from(fd),
        direct,
    })
}

/// Whether `path` is a block device: the only kind of device a restore can read an image back
/// from (a character device such as a pipe to a drive keeps nothing to seek back to).
fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.file_type().is_block_device())
}

/// Lays a backup image on the device from its first byte (clipped to the device's size, in
/// whole pages), flushes it, and opens the device again to read the image back, dropped from
/// the page cache (with O_DIRECT when asked).
fn device_image(path: &Path, request: &ImageRequest<'_>) -> Result<ImageReader, EngineError> {
    let open_error = |source| EngineError::DeviceOpen {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = open_allowed(
        path,
        &request.settings.allow_devices,
        OFlags::RDONLY,
        request.direct,
    )?;
    let device_bytes = reader.file.seek(io::SeekFrom::End(0)).map_err(open_error)?;
    let len = request.bytes.div_ceil(PAGE as u64) * PAGE as u64;
    let len = len.min(device_bytes / PAGE as u64 * PAGE as u64);
    let mut image = DeviceSink::open(path, &request.settings.allow_devices, false)?;
    write_image(&mut image, request, len)?;
    drop(image);
    // A restore reads from the medium, not from memory the write left behind.
    cache::evict(&reader.file).map_err(open_error)?;
    Ok(ImageReader::new(reader.file, path.to_path_buf(), len))
}

/// Whether `path` names one of the allowed devices (compared after resolving symlinks).
pub fn device_allowed(path: &Path, allowed: &[PathBuf]) -> bool {
    let Ok(resolved) = path.canonicalize() else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|allowed| allowed.canonicalize().ok())
        .any(|allowed| allowed == resolved)
}

/// A block or character device the lab was allowed to overwrite.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceTarget(pub PathBuf);

/// What this kind is before its settings are read. A raw device, named with `--allow-device`.
pub const FACTS: KindFacts = KindFacts {
    id: "device",
    label: "device",
    takes_path: true,
    writes: Writes::Device,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

impl Target for DeviceTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::HARDWARE
    }

    fn words(&self) -> String {
        format!("device {}", self.0.display())
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
            .map(|metadata| metadata.rdev())
    }

    fn preflight(&self, _direct: bool, settings: &EngineSettings, errors: &mut FieldErrors) {
        if let Err(message) = check_device(&self.0, &settings.allow_devices) {
            errors.add("target.path", message);
        }
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        Ok(vec![Box::new(DeviceSink::open(
            &self.0,
            &how.settings.allow_devices,
            how.direct,
        )?)])
    }

    fn restores(&self) -> bool {
        is_block_device(&self.0)
    }

    fn restore_image(&self, request: &ImageRequest<'_>) -> Result<RestoreImage, EngineError> {
        Ok(RestoreImage {
            stream: Box::new(device_image(&self.0, request)?),
            from: self.words(),
            // A device is read from its start to its end, whatever was interleaved on it.
            interleaved: 1,
            positioning_s: 0.0,
            figures: None,
        })
    }
}

fn check_device(path: &Path, allowed: &[PathBuf]) -> Result<(), String> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|error| describe(&shown, &error))?;
    let kind = metadata.file_type();
    if !(kind.is_block_device() || kind.is_char_device()) {
        return Err(format!("{shown} is not a block or character device"));
    }
    if !device_allowed(path, allowed) {
        return Err(format!(
            "{shown} is not allowed: writing to a device destroys its contents, so it must be \
             allowed explicitly (--allow-device {shown})"
        ));
    }
    Ok(())
}
