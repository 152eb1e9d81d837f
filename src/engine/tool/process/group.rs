//! The process group a program runs in: its path resolved before it starts, its members
//! signalled, reaped and counted, and the groups a killed lab left swept at start.

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::{Pid, Signal};

use super::{Pressure, ProcessError, procfs};

/// Run in the child before exec: die with SIGKILL when the lab's spawning thread ends, and at
/// once if the lab is already gone (the child then belongs to another parent).
pub(super) fn die_with(lab: Pid) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if rustix::process::getppid() != Some(lab) {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// The program `name` stands for: a name with a `/` is a path (relative to `dir`), any other
/// is looked up on `search_path` as exec would, with relative entries taken from `dir`.
pub(super) fn resolve(
    name: &OsStr,
    search_path: Option<&OsStr>,
    dir: &Path,
) -> Result<PathBuf, ProcessError> {
    use std::os::unix::ffi::OsStrExt;
    if name.is_empty() {
        return Err(ProcessError::NotFound {
            program: String::new(),
            search_path: display_name(search_path.unwrap_or_default()),
        });
    }
    if name.as_bytes().contains(&b'/') {
        let path = dir.join(name);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(ProcessError::NotExecutable { path })
        };
    }
    search_path
        .into_iter()
        .flat_map(std::env::split_paths)
        .filter(|entry| !entry.as_os_str().is_empty())
        .map(|entry| dir.join(entry).join(name))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| ProcessError::NotFound {
            program: display_name(name),
            search_path: search_path.map_or_else(|| "not set".to_string(), display_name),
        })
}

/// Whether `path` is a regular file (through links) the lab may execute.
pub(super) fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        && rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
}

pub(super) fn display_name(name: &OsStr) -> String {
    name.to_string_lossy().into_owned()
}

/// Reaps an exited child; its wait status and resource usage.
pub(super) fn reap(pid: i32) -> Option<(i32, libc::rusage)> {
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: wait4 writes the status and a complete rusage into the pointers it is given,
        // both valid for the call; the rusage is zero-initialised, so valid even if it fails.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, usage.as_mut_ptr()) };
        if reaped == pid {
            // SAFETY: zero-initialised above and filled in by wait4.
            return Some((status, unsafe { usage.assume_init() }));
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Sends `signal` to every process of the group; a group already gone is no error.
pub(super) fn signal_group(pgid: i32, signal: Signal) {
    if let Some(pgid) = Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pgid, signal);
    }
}

/// Whether no live process is left in the group. An orphan that has exited stays in the
/// group as a zombie until init collects it, which can take seconds in a container; it holds
/// nothing and runs nothing, so it does not count.
pub(super) fn group_gone(pgid: i32) -> bool {
    let Some(group) = Pid::from_raw(pgid) else {
        return true;
    };
    match rustix::process::test_kill_process_group(group) {
        Err(rustix::io::Errno::SRCH) => true,
        _ => live_members(pgid) == 0,
    }
}

/// The processes of the group that are alive (not zombies).
pub(super) fn live_members(pgid: i32) -> usize {
    procfs::group_members(pgid)
        .iter()
        .filter(|member| !member.is_zombie())
        .count()
}

pub(super) fn pressure_over(
    before: procfs::PressureTotals,
    after: procfs::PressureTotals,
    wall: Duration,
) -> Option<Pressure> {
    let wall_us = wall.as_micros() as f64;
    if wall_us <= 0.0 {
        return None;
    }
    let pct = |from: u64, to: u64| {
        let share = 100.0 * to.saturating_sub(from) as f64 / wall_us;
        (share.clamp(0.0, 100.0) * 10.0).round() / 10.0
    };
    Some(Pressure {
        cpu_some_pct: pct(before.cpu_some_us, after.cpu_some_us),
        io_some_pct: pct(before.io_some_us, after.io_some_us),
        io_full_pct: pct(before.io_full_us, after.io_full_us),
    })
}

/// Kills what an earlier lab left running: every process whose environment carries
/// `marker_name` with a value starting with `marker_value_prefix` (the lab puts its data dir's
/// identity there in every launch's `env`), with its process group. Used at start-up, after
/// the lab was killed without a chance to end its runs (children die with it; their own
/// children do not). Returns how many processes carried the marker. An empty name or prefix
/// sweeps nothing, so a caller's slip cannot take another lab's runs.
pub fn sweep_leftovers(marker_name: &str, marker_value_prefix: &str) -> usize {
    if marker_name.is_empty() || marker_value_prefix.is_empty() {
        return 0;
    }
    let own = rustix::process::getpid();
    let own_group = rustix::process::getpgid(None).ok();
    let mut swept = 0;
    for pid in procfs::pids() {
        let Some(process) = Pid::from_raw(pid) else {
            continue;
        };
        if process == own || !procfs::environ_carries(pid, marker_name, marker_value_prefix) {
            continue;
        }
        match rustix::process::getpgid(Some(process)) {
            Ok(group) if Some(group) != own_group && group.as_raw_nonzero().get() > 1 => {
                let _ = rustix::process::kill_process_group(group, Signal::KILL);
            }
            _ => {}
        }
        let _ = rustix::process::kill_process(process, Signal::KILL);
        swept += 1;
    }
    swept
}
