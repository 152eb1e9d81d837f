//! A cage for a launch's processes: a cgroup of its own that every program joins before it
//! starts, so nothing they start can leave it. A new session (`setsid`), a new process group,
//! a double fork or a cleared environment all stay inside, where a process group or an
//! environment marker would lose them; the lab ends the whole cage at once, and a launch ends
//! only when its cage is empty.
//!
//! The cage is made beneath the lab's own cgroup (so limits set on the lab, such as a block-I/O
//! throttle, hold for its tools too), in the unified (v2) hierarchy where the machine has one,
//! else in v1's `pids` or `freezer` hierarchy. Where the lab may make none (not root, no
//! delegation), a launch runs without one, in its process group alone, and
//! [`Cage::available`] says so for the lab to log.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::procfs;

/// The start of every cage's name; the rest is the lab's process id and a number.
pub(super) const PREFIX: &str = "backlab-run-";

/// Cages made by this process so far, for their names.
static MADE: AtomicU64 = AtomicU64::new(0);

/// A cgroup holding one launch's processes; emptied and removed when dropped.
#[derive(Debug)]
pub(super) struct Cage {
    pub(super) dir: PathBuf,
    /// The cage's `cgroup.procs`, open for writing: a program writes its own pid into it
    /// between fork and exec ([`Cage::join`]).
    procs: File,
}

impl Cage {
    /// A new, empty cage, or `None` where the machine gives the lab no cgroup it may make.
    pub(super) fn new() -> Option<Cage> {
        let parent = own_cgroup()?;
        let name = format!(
            "{PREFIX}{}-{}",
            rustix::process::getpid().as_raw_nonzero(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        std::fs::create_dir(&dir).ok()?;
        match OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
        {
            Ok(procs) => Some(Cage { dir, procs }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// Whether this machine lets the lab cage its tools' processes: a cage made and removed.
    pub fn available() -> bool {
        Cage::new().is_some()
    }

    /// The descriptor a program joins the cage through, for [`Cage::join`].
    pub(super) fn door(&self) -> BorrowedFd<'_> {
        self.procs.as_fd()
    }

    /// Run in the child between fork and exec: writes its own pid into the cage. It only makes
    /// system calls and formats into a buffer on the stack (no allocation, no lock).
    pub(super) fn join(door: BorrowedFd<'_>) -> io::Result<()> {
        let pid = rustix::process::getpid().as_raw_nonzero().get();
        let mut digits = [0u8; 12];
        let mut at = digits.len();
        let mut rest = pid.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        rustix::io::write(door, &digits[at..])?;
        Ok(())
    }

    /// The live processes in the cage (an exited one waiting to be collected holds nothing).
    pub(super) fn live(&self) -> Vec<i32> {
        live_in(&self.dir)
    }

    /// Sends `signal` to every process in the cage.
    pub(super) fn signal(&self, signal: Signal) {
        signal_all(&self.dir, signal);
    }
}

impl Drop for Cage {
    fn drop(&mut self) {
        kill_until_empty(&self.dir, Duration::from_secs(5));
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Empties and removes the cages of labs no longer running, beneath this lab's cgroup: what a
/// killed lab's tools left, however they hid. Returns how many processes were in them. A cage
/// whose lab is alive (another lab on this machine) is left alone.
pub fn sweep_cages() -> usize {
    let Some(parent) = own_cgroup() else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return 0;
    };
    let mut swept = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(lab) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{lab}")).exists() {
            continue;
        }
        let dir = entry.path();
        swept += live_in(&dir).len();
        kill_until_empty(&dir, Duration::from_secs(5));
        let _ = std::fs::remove_dir(&dir);
    }
    swept
}

/// The cgroup directory this process is in, in the hierarchy cages are made in.
fn own_cgroup() -> Option<PathBuf> {
    let memberships = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path_in = |controller: &str| {
        memberships.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            (controllers.split(',').any(|c| c == controller)).then(|| path.to_string())
        })
    };
    let unified = Path::new("/sys/fs/cgroup");
    let candidates = [
        (
            unified
                .join("cgroup.controllers")
                .exists()
                .then(|| unified.to_path_buf()),
            "",
        ),
        (Some(unified.join("unified")), ""),
        (Some(unified.join("pids")), "pids"),
        (Some(unified.join("freezer")), "freezer"),
    ];
    candidates.into_iter().find_map(|(root, controller)| {
        let root = root?;
        if !root.join("cgroup.procs").exists() {
            return None;
        }
        let own = path_in(controller)?;
        let dir = root.join(own.trim_start_matches('/'));
        dir.is_dir().then_some(dir)
    })
}

/// The processes listed in a cgroup's `cgroup.procs`.
fn members(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|text| {
            text.lines()
                .filter_map(|line| line.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn live_in(dir: &Path) -> Vec<i32> {
    members(dir)
        .into_iter()
        .filter(|&pid| {
            procfs::read_stat(&format!("/proc/{pid}/stat")).is_some_and(|stat| !stat.is_zombie())
        })
        .collect()
}

fn signal_all(dir: &Path, signal: Signal) {
    for pid in members(dir) {
        if let Some(pid) = Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

fn kill_until_empty(dir: &Path, within: Duration) -> usize {
    let until = Instant::now() + within;
    loop {
        let live = live_in(dir);
        if live.is_empty() || Instant::now() >= until {
            return live.len();
        }
        // v2's cgroup.kill ends the cage at once, forks included; elsewhere, round by round.
        let kill = dir.join("cgroup.kill");
        if kill.exists() {
            let _ = std::fs::write(kill, "1");
        }
        signal_all(dir, Signal::KILL);
        std::thread::sleep(Duration::from_millis(10));
    }
}
