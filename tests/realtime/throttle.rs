//! A slow disk made on purpose: a file system on a loop device, read through a block-I/O
//! cgroup whose throttle caps that device. A process started in the cgroup (and every process
//! it starts, a backup tool among them) reads the disk no faster than the cap, whatever it does;
//! nothing else on the machine is slowed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A mounted file system on a loop device, and a cgroup that caps reads from that device;
/// all of it undone when dropped.
pub struct ThrottledDisk {
    mount: PathBuf,
    device: String,
    /// The device's `MAJ:MIN`, as the throttle names it.
    numbers: String,
    cgroup: PathBuf,
    procs: PathBuf,
    v2: bool,
}

/// Where this machine's cgroups throttle block I/O: the v1 `blkio` hierarchy, or the v2
/// unified one with its `io` controller.
enum Hierarchy {
    V1(PathBuf),
    V2(PathBuf),
}

fn hierarchy() -> Option<Hierarchy> {
    let v1 = Path::new("/sys/fs/cgroup/blkio");
    if v1.join("cgroup.procs").exists() {
        return Some(Hierarchy::V1(v1.to_path_buf()));
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let controllers = std::fs::read_to_string(v2.join("cgroup.controllers")).ok()?;
    controllers
        .split_whitespace()
        .any(|controller| controller == "io")
        .then(|| Hierarchy::V2(v2.to_path_buf()))
}

/// What `command` printed, or why it could not run (said on stderr).
fn must(command: &mut Command) -> Option<String> {
    match command.output() {
        Ok(out) if out.status.success() => {
            Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
        }
        Ok(out) => {
            eprintln!(
                "{command:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            None
        }
        Err(error) => {
            eprintln!("{:?} cannot start: {error}", command.get_program());
            None
        }
    }
}

impl ThrottledDisk {
    /// A `size_mib` ext4 file system on a loop device over a file in `dir`, mounted at
    /// `dir/disk`, its reads capped at `read_bytes_per_s` for the processes of a new cgroup.
    /// `None`, saying why, where the test is not root or the machine cannot make such a disk
    /// (no loop device, no block-I/O throttle, a cgroup file system it may not write).
    pub fn make(dir: &Path, size_mib: u64, read_bytes_per_s: u64) -> Option<ThrottledDisk> {
        if !rustix::process::geteuid().is_root() || !Path::new("/dev/loop-control").exists() {
            eprintln!("a throttled disk needs root and loop devices");
            return None;
        }
        let Some(hierarchy) = hierarchy() else {
            eprintln!("this machine's cgroups throttle no block I/O");
            return None;
        };
        let image = dir.join("disk.img");
        std::fs::File::create(&image)
            .and_then(|file| file.set_len(size_mib << 20))
            .expect("the disk's image");
        let device = must(
            Command::new("losetup")
                .args(["--find", "--show"])
                .arg(&image),
        )?;
        let mut disk = ThrottledDisk {
            mount: dir.join("disk"),
            device,
            numbers: String::new(),
            cgroup: PathBuf::new(),
            procs: PathBuf::new(),
            v2: matches!(hierarchy, Hierarchy::V2(_)),
        };
        must(Command::new("mkfs.ext4").args(["-q", "-F", &disk.device]))?;
        std::fs::create_dir(&disk.mount).expect("the mount point");
        must(Command::new("mount").arg(&disk.device).arg(&disk.mount))?;
        let numbers = must(Command::new("lsblk").args([
            "--nodeps",
            "--noheadings",
            "--output",
            "MAJ:MIN",
            &disk.device,
        ]))?;
        disk.numbers = numbers.trim().to_string();
        let numbers = &disk.numbers;
        // One cgroup per disk: the tests of this binary that make one run side by side.
        static DISKS: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "backlab-realtime-{}-{}",
            std::process::id(),
            DISKS.fetch_add(1, Ordering::Relaxed)
        );
        let (cgroup, file, line) = match hierarchy {
            Hierarchy::V1(root) => (
                root.join(name),
                "blkio.throttle.read_bps_device",
                format!("{numbers} {read_bytes_per_s}"),
            ),
            Hierarchy::V2(root) => {
                let _ = std::fs::write(root.join("cgroup.subtree_control"), "+io");
                (
                    root.join(name),
                    "io.max",
                    format!("{numbers} rbps={read_bytes_per_s}"),
                )
            }
        };
        if let Err(error) = std::fs::create_dir(&cgroup) {
            eprintln!("no cgroup {}: {error}", cgroup.display());
            return None;
        }
        disk.procs = cgroup.join("cgroup.procs");
        disk.cgroup = cgroup;
        if let Err(error) = std::fs::write(disk.cgroup.join(file), &line) {
            eprintln!("the throttle {line:?} in {file}: {error}");
            return None;
        }
        Some(disk)
    }

    /// Caps writes to the device as well, at `bytes_per_s`, for the cgroup's processes: the
    /// bytes they hand the disk themselves (a flush, a `sync_file_range`), not those the
    /// kernel writes back for them later on a cgroup v1 machine. `false`, saying why, where
    /// the throttle takes no such line.
    pub fn cap_writes(&self, bytes_per_s: u64) -> bool {
        let (file, line) = if self.v2 {
            ("io.max", format!("{} wbps={bytes_per_s}", self.numbers))
        } else {
            (
                "blkio.throttle.write_bps_device",
                format!("{} {bytes_per_s}", self.numbers),
            )
        };
        match std::fs::write(self.cgroup.join(file), &line) {
            Ok(()) => true,
            Err(error) => {
                eprintln!("the throttle {line:?} in {file}: {error}");
                false
            }
        }
    }

    /// Where the file system is mounted.
    pub fn mount(&self) -> &Path {
        &self.mount
    }

    /// `program` with `args`, started inside the cgroup: a shell writes its own process id into
    /// the cgroup, then becomes the program.
    pub fn command(&self, program: &OsStr) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(&self.procs)
            .arg(program);
        command
    }

    /// Drops the disk's pages from the page cache, so the next read comes from the device.
    pub fn drop_cache(&self) {
        let _ = Command::new("sync").status();
        let _ = std::fs::write("/proc/sys/vm/drop_caches", "3");
    }
}

impl Drop for ThrottledDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
        let _ = Command::new("losetup")
            .args(["--detach", &self.device])
            .status();
        if !self.cgroup.as_os_str().is_empty() {
            let _ = std::fs::remove_dir(&self.cgroup);
        }
    }
}
