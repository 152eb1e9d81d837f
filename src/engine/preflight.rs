//! Checks of the real world before a campaign starts: sources exist and can be read, targets
//! can be written, devices are allowed, O_DIRECT works where it is asked for. Each problem is
//! reported against the spec field it comes from.

use std::path::Path;

use super::EngineSettings;
use super::plan::{RunPlan, SourcePlan};
use crate::field_errors::FieldErrors;

use super::source::list_files;
use super::target::files::describe;

/// Every problem the plans would meet on this machine, by field; empty when all is well.
pub fn check(plans: &[RunPlan], settings: &EngineSettings) -> FieldErrors {
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
    // A restore and a backup tool's run keep their own files in the lab's directory (the data
    // dir): a source holding it would back those up too, and find them missing afterwards.
    let keeps_own_files = plans
        .iter()
        .any(|plan| plan.test == super::test_kind::TestKind::Restore || plan.test.runs_tool());
    if keeps_own_files
        && local_source
        && let SourcePlan::Paths(paths) = &first.source
    {
        for (index, path) in paths.iter().enumerate() {
            if inside(&settings.restore_dir, path) {
                errors.add(
                    format!("source.paths[{index}]"),
                    format!(
                        "{} holds the lab's own directory ({}), where a restore and a backup \
                         tool keep their files while they run: give a directory inside it or \
                         beside it",
                        path.display(),
                        settings.restore_dir.display()
                    ),
                );
            }
        }
    }
    if writes_target {
        let target = first.target.target();
        let before = errors.0.len();
        target.preflight(direct, settings, &mut errors);
        if let Some(path) = target.path()
            && errors.0.len() == before
            && let SourcePlan::Paths(paths) = &first.source
            && let Some(source) = paths.iter().find(|source| inside(path, source))
        {
            errors.add(
                "target.path",
                format!(
                    "{} lies inside the source {}: the backup would read its own output",
                    path.display(),
                    source.display()
                ),
            );
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
    match file.open(true) {
        Ok(_) => Ok(()),
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Err(format!(
            "the file system of {} does not support O_DIRECT; set direct to false",
            path.display()
        )),
        Err(error) => Err(describe(&file.path.display(), &error)),
    }
}

/// Whether `inner` is `outer` or lies below it, after resolving symlinks.
fn inside(inner: &Path, outer: &Path) -> bool {
    match (inner.canonicalize(), outer.canonicalize()) {
        (Ok(inner), Ok(outer)) => inner.starts_with(outer),
        _ => false,
    }
}
