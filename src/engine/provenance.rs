//! Where a campaign was measured: the host (name, kernel, CPUs, memory), the file system and
//! block device under each source and target path (with the device's model where sysfs has
//! one), and the backlab that measured. A shared report says this, so a figure is never read
//! as another machine's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::geometry::{FsStripe, Geometry};

/// The commit backlab was built from, when the build could see one.
const GIT_COMMIT: Option<&str> = option_env!("BACKLAB_GIT_COMMIT");

/// The machine and software a campaign was measured with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Provenance {
    pub hostname: String,
    /// `uname -sr`: the kernel's name and release.
    pub kernel: String,
    pub cpu_model: Option<String>,
    pub cpus: usize,
    pub memory_bytes: Option<u64>,
    pub backlab_version: String,
    pub git_commit: Option<String>,
    /// The source paths and the target, each with what it lives on.
    pub places: Vec<Place>,
}

/// One path a campaign read or wrote, and the storage under it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Place {
    /// `source` or `target`.
    pub role: String,
    #[schema(value_type = String)]
    pub path: PathBuf,
    /// The file system type (`ext4`, `xfs`, `tmpfs`), from the mount table.
    pub fs_type: Option<String>,
    /// The block device (`nvme0n1p2`), when the file system has one.
    pub device: Option<String>,
    /// The device's model, from sysfs (`Samsung SSD 980 1TB`).
    pub model: Option<String>,
    /// The device's layout: a striped volume's unit and width, its members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geometry: Option<Geometry>,
    /// The stripe the file system was made for, when it records one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_stripe: Option<FsStripe>,
}

impl Provenance {
    /// This host now, with the places given as (role, path).
    pub fn here(places: &[(&str, &Path)]) -> Provenance {
        let uname = rustix::system::uname();
        let text = |value: &std::ffi::CStr| value.to_string_lossy().into_owned();
        Provenance {
            hostname: text(uname.nodename()),
            kernel: format!("{} {}", text(uname.sysname()), text(uname.release())),
            cpu_model: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            memory_bytes: memory_bytes(),
            backlab_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: GIT_COMMIT.map(str::to_string),
            places: places
                .iter()
                .map(|(role, path)| place(role, path))
                .collect(),
        }
    }
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(key.trim(), "model name" | "Model" | "cpu model")
                .then(|| value.trim().to_string())
        })
        .filter(|model| !model.is_empty())
}

/// The machine's memory, from `/proc/meminfo`.
pub(crate) fn memory_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The file system and device under `path`: the mount whose mount point is the longest prefix
/// of the path (after resolving links), and, for a device node, the device itself.
pub fn place(role: &str, path: &Path) -> Place {
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut place = Place {
        role: role.to_string(),
        path: path.to_path_buf(),
        fs_type: None,
        device: None,
        model: None,
        geometry: None,
        fs_stripe: None,
    };
    if let Some(mount) = mount_of(&resolved) {
        let block_bytes = rustix::fs::statvfs(&resolved).map_or(4096, |stats| stats.f_bsize);
        place.fs_stripe = FsStripe::from_options(&mount.fs_type, &mount.options, block_bytes);
        place.fs_type = Some(mount.fs_type);
        place.device = block_name(&mount.dev);
        place.model = block_model(&mount.dev);
        place.geometry = Geometry::of_device(&mount.dev);
    }
    // A device target: the node's own device, not the file system of /dev.
    if let Ok(metadata) = std::fs::metadata(&resolved)
        && std::os::unix::fs::FileTypeExt::is_block_device(&metadata.file_type())
    {
        let rdev = std::os::unix::fs::MetadataExt::rdev(&metadata);
        let dev = format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev));
        place.fs_type = None;
        place.device = block_name(&dev);
        place.model = block_model(&dev);
        place.geometry = Geometry::of_device(&dev);
    }
    place
}

struct Mount {
    dev: String,
    fs_type: String,
    /// The super options: what the file system itself says it was mounted with.
    options: String,
}

fn mount_of(path: &Path) -> Option<Mount> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, Mount)> = None;
    for line in table.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = left.split(' ').collect();
        let (Some(dev), Some(point)) = (fields.get(2), fields.get(4)) else {
            continue;
        };
        let point = unescape(point);
        if !path.starts_with(&point) {
            continue;
        }
        let depth = point.len();
        if best.as_ref().is_none_or(|(longest, _)| depth >= *longest) {
            let mut right = right.split(' ');
            let fs_type = right.next().unwrap_or_default().to_string();
            let options = right.nth(1).unwrap_or_default().to_string();
            best = Some((
                depth,
                Mount {
                    dev: dev.to_string(),
                    fs_type,
                    options,
                },
            ));
        }
    }
    best.map(|(_, mount)| mount)
}

/// Mount points in mountinfo escape spaces and a few other bytes as `\ooo`.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest
            .get(at + 1..at + 4)
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match code {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `nvme0n1p2` for `259:2`; none for a file system without a block device.
fn block_name(dev: &str) -> Option<String> {
    let link = std::fs::canonicalize(format!("/sys/dev/block/{dev}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// The model of the disk behind `dev` (a partition's disk for a partition).
fn block_model(dev: &str) -> Option<String> {
    let base = std::fs::canonicalize(format!("/sys/dev/block/{dev}")).ok()?;
    [base.join("device/model"), base.join("../device/model")]
        .iter()
        .find_map(|file| std::fs::read_to_string(file).ok())
        .map(|model| model.trim().to_string())
        .filter(|model| !model.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_is_described() {
        let dir = tempfile::tempdir().expect("tempdir");
        let here = Provenance::here(&[("source", dir.path())]);
        assert!(!here.hostname.is_empty());
        assert!(here.kernel.starts_with("Linux "), "{}", here.kernel);
        assert!(here.cpus >= 1);
        assert!(here.memory_bytes.is_some_and(|bytes| bytes > 0));
        assert_eq!(here.places.len(), 1);
        assert!(
            here.places[0]
                .fs_type
                .as_deref()
                .is_some_and(|fs| !fs.is_empty()),
            "{:?}",
            here.places[0]
        );
    }

    #[test]
    fn mount_points_with_spaces_are_read() {
        assert_eq!(unescape(r"/mnt/my\040disk"), "/mnt/my disk");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/odd\x"), r"/odd\x");
    }
}
