//! Checks of the real world before a campaign starts: sources exist and can be read, targets
//! can be written, devices are allowed, O_DIRECT works where it is asked for. Each problem is
//! reported against the spec field it comes from.

use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::plan::{RunPlan, SourcePlan, TargetPlan};
use crate::field_errors::FieldErrors;

use super::sink::{NoFollowError, create_file_in, device_allowed, open_dir_no_follow};
use super::source::{list_files, open_source_file};

/// Every problem the plans would meet on this machine, by field; empty when all is well.
pub fn check(plans: &[RunPlan], allow_devices: &[PathBuf]) -> FieldErrors {
    let mut errors = FieldErrors::default();
    let Some(first) = plans.first() else {
        return errors;
    };
    let direct = plans.iter().any(|plan| plan.params.direct);
    let reads_paths = plans.iter().any(|plan| plan.test.reads_source());
    let writes_target = plans.iter().any(|plan| plan.test.writes_target());

    // Agents read their paths on their own hosts, and check them there.
    let local_source = first.agents.is_empty();
    if let SourcePlan::Paths(paths) = &first.source
        && local_source
    {
        for (index, path) in paths.iter().enumerate() {
            let field = format!("source.paths[{index}]");
            if let Err(message) = check_source(path) {
                errors.add(field, message);
            } else if direct
                && reads_paths
                && let Err(message) = check_direct_read(path)
            {
                errors.add("params.direct", message);
            }
        }
    }
    if writes_target {
        match &first.target {
            TargetPlan::Null | TargetPlan::Tape(_) => {}
            TargetPlan::Dir(dir) => {
                if let Err((field, message)) = check_target_dir(dir, direct) {
                    errors.add(field, message);
                } else if let SourcePlan::Paths(paths) = &first.source
                    && let Some(source) = paths.iter().find(|source| inside(dir, source))
                {
                    errors.add(
                        "target.path",
                        format!(
                            "{} lies inside the source {}: the backup would read its own output",
                            dir.display(),
                            source.display()
                        ),
                    );
                }
            }
            TargetPlan::Device(path) => {
                if let Err(message) = check_device(path, allow_devices) {
                    errors.add("target.path", message);
                }
            }
        }
    }
    errors
}

fn check_source(path: &Path) -> Result<(), String> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|error| describe(&shown, &error))?;
    if metadata.is_dir() {
        std::fs::read_dir(path).map_err(|error| describe(&shown, &error))?;
    } else if metadata.is_file() {
        std::fs::File::open(path).map_err(|error| describe(&shown, &error))?;
    } else {
        return Err(format!("{shown} is neither a file nor a directory"));
    }
    Ok(())
}

fn check_direct_read(path: &Path) -> Result<(), String> {
    let Some(file) = list_files(&[path.to_path_buf()], 1).into_iter().next() else {
        return Ok(());
    };
    match open_source_file(&file, true) {
        Ok(_) => Ok(()),
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Err(format!(
            "the file system of {} does not support O_DIRECT; set direct to false",
            path.display()
        )),
        Err(error) => Err(describe(&file.display(), &error)),
    }
}

/// Checks that the lab can create files in `dir` (with O_DIRECT when asked); an error names the
/// field to blame: `target.path`, or `params.direct` when only O_DIRECT is refused.
fn check_target_dir(dir: &Path, direct: bool) -> Result<(), (&'static str, String)> {
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

/// Whether `inner` is `outer` or lies below it, after resolving symlinks.
fn inside(inner: &Path, outer: &Path) -> bool {
    match (inner.canonicalize(), outer.canonicalize()) {
        (Ok(inner), Ok(outer)) => inner.starts_with(outer),
        _ => false,
    }
}

fn describe(shown: &impl std::fmt::Display, error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => format!("{shown} does not exist"),
        io::ErrorKind::PermissionDenied => format!("{shown} cannot be read: permission denied"),
        _ => format!("{shown}: {error}"),
    }
}
