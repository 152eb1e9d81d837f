//! What a lab lets the network ask of it: which roots sources and targets may lie under, which
//! devices may be written, and how big and long a run may be. Checked before anything is queued,
//! and the paths again when a run starts.

use std::path::{Component, Path, PathBuf};

use crate::engine::target::Writes;
use crate::spec::{
    AUTO_MAX_DURATION_S, CampaignSpec, DurationInput, FieldErrors, RunPlan, SourcePlan, bounds,
    format_size,
};

/// The limits a lab was started with. Registered with the lab's host on a shared database, so
/// that another host receiving a campaign for it can hold the campaign to them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Policy {
    /// Roots (canonical) that sources must lie under.
    pub source_roots: Vec<PathBuf>,
    /// Roots (canonical) that target directories must lie under.
    pub target_roots: Vec<PathBuf>,
    /// Devices that may be overwritten.
    pub devices: Vec<PathBuf>,
    /// Where relative paths in a spec are taken from.
    pub base_dir: PathBuf,
    /// The most bytes one run may move.
    pub max_size: u64,
    /// The longest one run may last, in seconds.
    pub max_duration_s: f64,
}

/// Whose file system a campaign's paths are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// This lab's: paths are resolved and checked on it now.
    Here,
    /// Another lab host's: paths are checked by name against its policy now, and resolved on
    /// it when the run starts.
    Elsewhere,
}

/// Problems found by the policy: paths outside the allowed roots (403) apart from plain
/// validation problems (422).
#[derive(Debug, Default)]
pub struct Violations {
    pub forbidden: FieldErrors,
    pub invalid: FieldErrors,
}

impl Violations {
    /// Whether the campaign may go ahead.
    pub fn is_empty(&self) -> bool {
        self.forbidden.is_empty() && self.invalid.is_empty()
    }
}

/// Compares a presented token with the lab's in time that does not depend on where they first
/// differ: the HTTP API and the data listener both check tokens with it.
pub fn same_secret(presented: &[u8], expected: &[u8]) -> bool {
    if presented.len() != expected.len() {
        return false;
    }
    presented
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

impl Policy {
    /// Resolves the spec's paths against the base directory and the file system, in place, so
    /// the stored spec says exactly what was read and written; reports every path outside its
    /// allowed roots and every path that cannot be resolved.
    ///
    /// `Reach::Elsewhere` checks a campaign for another lab host against that host's policy:
    /// its file system is not this one's, so the paths are placed by name alone (relative ones
    /// from its base directory) and resolved by that host when the run starts
    /// ([`Policy::resolve_plan`]).
    pub fn resolve_paths(&self, spec: &mut CampaignSpec, reach: Reach) -> Violations {
        let mut violations = Violations::default();
        // An agent's paths lie on its own host, under what it allows (--allow-source there).
        if let Some(paths) = spec
            .source
            .paths
            .as_mut()
            .filter(|_| spec.source.agents.is_none())
        {
            for (index, path) in paths.iter_mut().enumerate() {
                // An empty path is not the data dir: the spec's own rule refuses it.
                if path.as_os_str().is_empty() {
                    continue;
                }
                let field = format!("source.paths[{index}]");
                match self.resolve_under(path, &self.source_roots, &mut violations, &field, reach) {
                    Some(resolved) => *path = resolved,
                    None => continue,
                }
            }
        }
        match spec.target.kind.facts().writes {
            Writes::FilesUnder => {
                if let Some(path) = spec
                    .target
                    .path
                    .as_mut()
                    .filter(|path| !path.as_os_str().is_empty())
                    && let Some(resolved) = self.resolve_under(
                        path,
                        &self.target_roots,
                        &mut violations,
                        "target.path",
                        reach,
                    )
                {
                    *path = resolved;
                }
            }
            Writes::Device => {
                if let Some(path) = spec.target.path.as_mut() {
                    // Relative like every other spec path: from the data dir.
                    let absolute = lexical_absolute(&self.base_dir, path);
                    let (resolved, allowed) = match reach {
                        Reach::Here => {
                            let resolved = absolute.canonicalize().ok();
                            let allowed = resolved
                                .as_ref()
                                .is_some_and(|resolved| self.device_allowed(resolved));
                            (resolved, allowed)
                        }
                        Reach::Elsewhere => {
                            let allowed = self
                                .devices
                                .iter()
                                .any(|device| lexical_absolute(&self.base_dir, device) == absolute);
                            (Some(absolute), allowed)
                        }
                    };
                    if let (true, Some(resolved)) = (allowed, resolved) {
                        *path = resolved;
                    } else {
                        violations.forbidden.add(
                            "target.path",
                            format!(
                                "{} is not an allowed device; devices must be named with \
                                 --allow-device when the lab starts (allowed: {})",
                                path.display(),
                                list(&self.devices)
                            ),
                        );
                    }
                }
            }
            // A named file is never a spec's. A target that writes nothing on the host: an
            // object store is one the operator named at start, or the spec is refused when its
            // target is checked (`preflight`).
            Writes::NamedFile | Writes::Nothing => {}
        }
        violations
    }

    /// Resolves on this host the paths of a run that another host checked by name alone
    /// ([`Reach::Elsewhere`]): each becomes the canonical path it leads to here, to be checked
    /// by [`Policy::recheck`] like any other. A path that cannot be resolved is left as it is,
    /// and the check names it. Blocking: it reads the file system.
    pub fn resolve_plan(&self, plan: &mut RunPlan) {
        let resolve = |path: &mut PathBuf| {
            if let Ok(resolved) = lexical_absolute(&self.base_dir, path).canonicalize() {
                *path = resolved;
            }
        };
        if plan.agents.is_empty()
            && let SourcePlan::Paths(paths) = &mut plan.source
        {
            paths.iter_mut().for_each(resolve);
        }
        if matches!(plan.target.writes(), Writes::FilesUnder | Writes::Device)
            && let Some(path) = plan.target.path_mut()
        {
            resolve(path);
        }
    }

    /// Checks a run's paths again when it starts, against the roots the lab runs with now: they
    /// may have narrowed since the run was queued (a restart with other flags), or a directory
    /// on the way may have been replaced by a symbolic link. The stored paths were canonical
    /// when accepted, so each must still resolve to itself. Blocking: it reads the file system.
    pub fn recheck(&self, plan: &RunPlan) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::default();
        // An agent's paths lie on its own host.
        if plan.agents.is_empty()
            && let SourcePlan::Paths(paths) = &plan.source
        {
            for (index, path) in paths.iter().enumerate() {
                let field = format!("source.paths[{index}]");
                still_under(
                    path,
                    &self.source_roots,
                    "--allow-source",
                    &field,
                    &mut errors,
                );
            }
        }
        let path = plan.target.path().unwrap_or(Path::new(""));
        match plan.target.writes() {
            Writes::FilesUnder => {
                still_under(
                    path,
                    &self.target_roots,
                    "--allow-target",
                    "target.path",
                    &mut errors,
                );
            }
            Writes::Device => {
                let unchanged = path.canonicalize().is_ok_and(|resolved| resolved == path);
                if !unchanged || !self.device_allowed(path) {
                    errors.add(
                        "target.path",
                        format!(
                            "{} is no longer an allowed device (allowed now: {})",
                            path.display(),
                            list(&self.devices)
                        ),
                    );
                }
            }
            Writes::NamedFile => errors.add(
                "target.path",
                format!(
                    "{}: a named file is written only from the command line",
                    path.display()
                ),
            ),
            // A store the lab no longer knows fails the run when it opens, naming the store.
            Writes::Nothing => {}
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Whether a canonical device path is one the lab was started with (`--allow-device`).
    fn device_allowed(&self, resolved: &Path) -> bool {
        self.devices
            .iter()
            .filter_map(|device| device.canonicalize().ok())
            .any(|device| device == resolved)
    }

    /// Checks the expanded runs against the size and duration limits.
    pub fn check_limits(&self, spec: &CampaignSpec, plans: &[RunPlan]) -> FieldErrors {
        let mut errors = FieldErrors::default();
        let Some(first) = plans.first() else {
            return errors;
        };
        if let Some(generated) = &spec.source.generated
            && generated.size.bytes() > self.max_size
        {
            errors.add(
                "source.generated.size",
                format!(
                    "{} is more than this lab allows per run ({}, --max-size)",
                    format_size(generated.size.bytes()),
                    format_size(self.max_size)
                ),
            );
        }
        if let Some(why) = spec
            .forecast
            .as_ref()
            .and_then(|forecast| forecast.over_limit(self.max_size))
        {
            errors.add("forecast.ladder_from", why);
        }
        if let Some(size) = first.params.size
            && size > self.max_size
        {
            errors.add(
                "params.size",
                format!(
                    "{} is more than this lab allows per run ({}, --max-size)",
                    format_size(size),
                    format_size(self.max_size)
                ),
            );
        }
        errors
    }

    /// Checks a spec's duration against the lab's longest run, the one bound a lab states for
    /// `params.duration_s` (`--max-duration`, never more than the spec's own ceiling); checked
    /// before the spec's rules, so their wider ceiling is not said as well.
    pub fn check_duration(&self, spec: &CampaignSpec) -> FieldErrors {
        let mut errors = FieldErrors::default();
        let rule = || {
            format!(
                "{} (this lab's limit per run, --max-duration)",
                bounds::duration_rule(self.max_duration_s)
            )
        };
        match spec.params.duration_s {
            Some(DurationInput::Seconds(seconds))
                if !bounds::duration_within(seconds, self.max_duration_s) =>
            {
                errors.add("params.duration_s", rule());
            }
            Some(DurationInput::Auto(_)) if AUTO_MAX_DURATION_S > self.max_duration_s => {
                errors.add(
                    "params.duration_s",
                    format!(
                        "\"auto\" lets a run last up to {AUTO_MAX_DURATION_S} s, longer than \
                         this lab allows per run ({} s, --max-duration): give seconds",
                        self.max_duration_s
                    ),
                );
            }
            Some(_) => {}
            None => errors.add("params.duration_s", rule()),
        }
        errors
    }

    fn resolve_under(
        &self,
        path: &Path,
        roots: &[PathBuf],
        violations: &mut Violations,
        field: &str,
        reach: Reach,
    ) -> Option<PathBuf> {
        let absolute = lexical_absolute(&self.base_dir, path);
        let outside = |shown: &Path| {
            format!(
                "{} is outside the allowed roots ({}); start the lab with another allow flag to \
                 use it",
                shown.display(),
                list(roots)
            )
        };
        if !roots.iter().any(|root| absolute.starts_with(root)) {
            violations.forbidden.add(field, outside(path));
            return None;
        }
        if reach == Reach::Elsewhere {
            return Some(absolute);
        }
        match absolute.canonicalize() {
            Ok(resolved) if roots.iter().any(|root| resolved.starts_with(root)) => Some(resolved),
            // Where the link leads is not said: a refusal must not map the file system.
            Ok(_) => {
                violations.forbidden.add(
                    field,
                    format!(
                        "{} leads outside the allowed roots ({}) through a symbolic link; the \
                         lab does not follow links out of its roots",
                        path.display(),
                        list(roots)
                    ),
                );
                None
            }
            Err(error) => {
                violations.invalid.add(
                    field,
                    format!("{}: {}", absolute.display(), describe(&error)),
                );
                None
            }
        }
    }
}

/// Checks that a stored canonical path still lies under the roots and still resolves to itself.
fn still_under(path: &Path, roots: &[PathBuf], flag: &str, field: &str, errors: &mut FieldErrors) {
    if !roots.iter().any(|root| path.starts_with(root)) {
        errors.add(
            field,
            format!(
                "{} is no longer under the allowed roots ({}): the lab now runs with other \
                 {flag} roots than when the run was queued",
                path.display(),
                list(roots)
            ),
        );
        return;
    }
    match path.canonicalize() {
        Ok(resolved) if resolved == path => {}
        Ok(_) => errors.add(
            field,
            format!(
                "{}: part of this path was replaced by a symbolic link after the run was queued; \
                 the lab does not follow it",
                path.display()
            ),
        ),
        Err(error) => errors.add(field, format!("{}: {}", path.display(), describe(&error))),
    }
}

/// `path` made absolute against `base`, with `.` and `..` resolved by name alone (a `..` that
/// climbs above the root stays at the root), so a lexical check sees where it points.
pub fn lexical_absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn describe(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => error.to_string(),
    }
}

fn list(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "none".to_string();
    }
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_is_resolved_by_name() {
        let base = Path::new("/srv/lab");
        assert_eq!(
            lexical_absolute(base, Path::new("demo")),
            Path::new("/srv/lab/demo")
        );
        assert_eq!(
            lexical_absolute(base, Path::new("../../etc")),
            Path::new("/etc")
        );
        assert_eq!(
            lexical_absolute(base, Path::new("/a/./b/../../../c")),
            Path::new("/c")
        );
    }
}
