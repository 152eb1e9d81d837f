//! The layout of the block device under a path, as the kernel publishes it in sysfs: md,
//! device-mapper and LVM set a striped volume's `minimum_io_size` to its stripe unit (chunk)
//! and `optimal_io_size` to its full stripe width. A transfer that is not a whole stripe
//! keeps only some of the disks busy (seed 001: ten disks with 64 KB tracks need 640 KB
//! transfers; 320 KB keeps five busy and halves the rate).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::size::format_bytes;

/// What sysfs says of one block device's layout.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Geometry {
    /// The device's name in sysfs (`md0`, `dm-3`, `sda`).
    pub device: String,
    /// The smallest request the device handles well: a striped volume's stripe unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_io_bytes: Option<u64>,
    /// The request size the device prefers: a striped volume's full stripe width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_io_bytes: Option<u64>,
    /// md's RAID level (`raid0`, `raid5`), or `dm` for a device-mapper volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// The devices the volume is built on (`slaves/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Whether the device says it spins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// The stripe a file system was made for, as it records it in its mount options: XFS's
/// `sunit`/`swidth` (512-byte units), ext4's `stripe` (file-system blocks). It tells the file
/// system how to align its allocations; it may disagree with the device beneath it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct FsStripe {
    /// The stripe unit, when the file system records it (XFS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_bytes: Option<u64>,
    /// The full stripe width.
    pub width_bytes: u64,
}

impl FsStripe {
    /// The stripe recorded in a mount's super options (`rw,sunit=128,swidth=1280`), for a
    /// file system of `fs_type` whose blocks are `block_bytes`.
    pub fn from_options(fs_type: &str, options: &str, block_bytes: u64) -> Option<FsStripe> {
        let option = |name: &str| {
            options.split(',').find_map(|option| {
                option
                    .strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('='))
                    .and_then(|value| value.parse::<u64>().ok())
                    .filter(|value| *value > 0)
            })
        };
        match fs_type {
            "xfs" => Some(FsStripe {
                unit_bytes: option("sunit").map(|sectors| sectors * 512),
                width_bytes: option("swidth")? * 512,
            }),
            "ext4" | "ext3" => Some(FsStripe {
                unit_bytes: None,
                width_bytes: option("stripe")? * block_bytes,
            }),
            _ => None,
        }
    }

    /// The stripe in a few words: `file system stripe 64 KiB × 10 = 640 KiB`.
    pub fn words(&self) -> String {
        match self.unit_bytes.filter(|unit| *unit > 0) {
            Some(unit) if self.width_bytes.is_multiple_of(unit) => format!(
                "file system made for a {} stripe ({} × {})",
                format_bytes(self.width_bytes),
                self.width_bytes / unit,
                format_bytes(unit)
            ),
            _ => format!(
                "file system made for a {} stripe",
                format_bytes(self.width_bytes)
            ),
        }
    }
}

/// How a request of one size meets a striped volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeFit {
    /// What one disk takes of a stripe.
    pub unit_bytes: u64,
    /// A full stripe: the unit times the disks.
    pub width_bytes: u64,
    /// Disks a full stripe spans.
    pub disks: u64,
    /// Disks one request keeps busy.
    pub busy: u64,
    /// The request is a whole number of stripes: every disk works.
    pub fits: bool,
    /// The smallest multiple of the stripe width at least as large as the request.
    pub suggested_bytes: u64,
}

impl Geometry {
    /// Reads the layout of the device whose sysfs directory is `dir` (`/sys/dev/block/M:m`
    /// resolved, or a fixture tree). A partition has no queue of its own: its disk's is read.
    pub fn read(dir: &Path) -> Option<Geometry> {
        let queue_dir = if dir.join("queue").is_dir() {
            dir.to_path_buf()
        } else if dir.join("partition").is_file() {
            dir.parent()?.to_path_buf()
        } else {
            return None;
        };
        let number = |path: PathBuf| -> Option<u64> {
            std::fs::read_to_string(path)
                .ok()?
                .trim()
                .parse()
                .ok()
                .filter(|value| *value > 0)
        };
        let text = |path: PathBuf| {
            std::fs::read_to_string(path)
                .ok()
                .map(|text| text.trim().to_string())
                .filter(|text| !text.is_empty())
        };
        let mut members: Vec<String> = std::fs::read_dir(queue_dir.join("slaves"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        members.sort();
        let level = text(queue_dir.join("md/level"))
            .or_else(|| queue_dir.join("dm").is_dir().then(|| "dm".to_string()));
        Some(Geometry {
            device: dir.file_name()?.to_string_lossy().into_owned(),
            min_io_bytes: number(queue_dir.join("queue/minimum_io_size")),
            opt_io_bytes: number(queue_dir.join("queue/optimal_io_size")),
            level,
            members,
            rotational: text(queue_dir.join("queue/rotational")).map(|flag| flag == "1"),
        })
    }

    /// The layout of the device with number `dev` (`8:16`) on this host.
    pub fn of_device(dev: &str) -> Option<Geometry> {
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{dev}")).ok()?;
        Geometry::read(&dir)
    }

    /// The stripe unit and width, when the device is a striped volume: md or device-mapper
    /// built on two or more devices, with a width that is a whole number (two or more) of
    /// units. A single disk that publishes an optimal I/O size (many NVMe drives, SAN LUNs) is
    /// not a stripe.
    pub fn stripe(&self) -> Option<(u64, u64)> {
        if self.level.is_none() || self.members.len() < 2 {
            return None;
        }
        let (unit, width) = (self.min_io_bytes?, self.opt_io_bytes?);
        (width > unit && width.is_multiple_of(unit)).then_some((unit, width))
    }

    /// How a request of `block` bytes meets the stripe; `None` when the device is not striped.
    pub fn fit(&self, block: u64) -> Option<StripeFit> {
        let (unit, width) = self.stripe()?;
        let disks = width / unit;
        Some(StripeFit {
            unit_bytes: unit,
            width_bytes: width,
            disks,
            busy: block.div_ceil(unit).min(disks),
            fits: block > 0 && block.is_multiple_of(width),
            suggested_bytes: block.div_ceil(width).max(1) * width,
        })
    }

    /// The layout in a few words: `md0 (raid0, 10 disks × 64 KiB stripe unit = 640 KiB)`.
    pub fn words(&self) -> String {
        let level = self
            .level
            .as_deref()
            .map_or_else(String::new, |level| format!("{level}, "));
        match self.stripe() {
            Some((unit, width)) => format!(
                "{} ({level}{} disks × {} stripe unit = {} stripe)",
                self.device,
                width / unit,
                format_bytes(unit),
                format_bytes(width)
            ),
            None => match self.min_io_bytes {
                Some(min) => format!(
                    "{} ({level}not striped, {} I/O unit)",
                    self.device,
                    format_bytes(min)
                ),
                None => self.device.clone(),
            },
        }
    }
}

impl StripeFit {
    /// What a request of `block` bytes does on this stripe, when it does not use every disk:
    /// the sentence a run's result carries.
    pub fn advice(&self, role: &str, device: &str, block: u64) -> Option<String> {
        if self.fits {
            return None;
        }
        let busy = if self.busy < self.disks {
            format!("keeps {} of its {} disks busy", self.busy, self.disks)
        } else {
            "is not a whole stripe, so its disks finish at different times".to_string()
        };
        Some(format!(
            "the {role}'s volume {device} stripes {} disks × {} ({} a stripe); a {} request {busy}: \
             a block size of {} (or a multiple) uses them all",
            self.disks,
            format_bytes(self.unit_bytes),
            format_bytes(self.width_bytes),
            format_bytes(block),
            format_bytes(self.suggested_bytes)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sysfs")
            .join(name)
    }

    #[test]
    fn a_ten_disk_md_stripe_wants_640_kib_and_320_kib_keeps_five_disks_busy() {
        let md = Geometry::read(&fixture("md-raid0-10-disks")).expect("read");
        assert_eq!(md.stripe(), Some((64 << 10, 640 << 10)));
        assert_eq!(md.level.as_deref(), Some("raid0"));
        assert_eq!(md.members.len(), 10);
        assert_eq!(md.rotational, Some(true));
        let whole = md.fit(640 << 10).expect("striped");
        assert!(whole.fits && whole.busy == 10);
        assert_eq!(whole.advice("target", "md0", 640 << 10), None);
        let half = md.fit(320 << 10).expect("striped");
        assert_eq!((half.busy, half.disks, half.fits), (5, 10, false));
        assert_eq!(
            half.advice("target", &md.device, 320 << 10).as_deref(),
            Some(
                "the target's volume md-raid0-10-disks stripes 10 disks × 64 KiB (640 KiB a \
                 stripe); a 320 KiB request keeps 5 of its 10 disks busy: a block size of 640 KiB \
                 (or a multiple) uses them all"
            )
        );
        // One and a half stripes: every disk works, but not evenly.
        let ragged = md.fit(960 << 10).expect("striped");
        assert_eq!(
            (ragged.busy, ragged.fits, ragged.suggested_bytes),
            (10, false, 1280 << 10)
        );
        assert_eq!(
            md.words(),
            "md-raid0-10-disks (raid0, 10 disks × 64 KiB stripe unit = 640 KiB stripe)"
        );
    }

    #[test]
    fn a_four_disk_lvm_stripe_is_read_from_device_mapper() {
        let dm = Geometry::read(&fixture("dm-stripe-4-disks")).expect("read");
        assert_eq!(dm.stripe(), Some((128 << 10, 512 << 10)));
        assert_eq!(dm.level.as_deref(), Some("dm"));
        assert_eq!(dm.members, vec!["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"]);
        assert_eq!(dm.rotational, Some(false));
        let fit = dm.fit(256 << 10).expect("striped");
        assert_eq!(
            (fit.busy, fit.disks, fit.suggested_bytes),
            (2, 4, 512 << 10)
        );
        assert!(dm.fit(1 << 20).is_some_and(|fit| fit.fits));
    }

    #[test]
    fn a_single_disk_with_an_optimal_size_is_not_a_stripe() {
        // A lone NVMe drive may publish 4 KiB minimum and 128 KiB optimal I/O sizes.
        let nvme = Geometry {
            device: "nvme0n1".into(),
            min_io_bytes: Some(4096),
            opt_io_bytes: Some(128 << 10),
            ..Geometry::default()
        };
        assert_eq!(nvme.stripe(), None);
        assert_eq!(nvme.fit(64 << 10), None);
    }

    #[test]
    fn the_file_systems_own_stripe_is_read_from_its_mount_options() {
        // mkfs.xfs -d su=64k,sw=10: sunit and swidth in 512-byte units.
        let xfs = FsStripe::from_options(
            "xfs",
            "rw,attr2,inode64,sunit=128,swidth=1280,noquota",
            4096,
        )
        .expect("xfs stripe");
        assert_eq!(xfs.unit_bytes, Some(64 << 10));
        assert_eq!(xfs.width_bytes, 640 << 10);
        assert_eq!(
            xfs.words(),
            "file system made for a 640 KiB stripe (10 × 64 KiB)"
        );
        // mkfs.ext4 -E stride=16,stripe-width=64 on 4 KiB blocks: stripe=64 blocks.
        let ext4 = FsStripe::from_options("ext4", "rw,stripe=64", 4096).expect("ext4 stripe");
        assert_eq!((ext4.unit_bytes, ext4.width_bytes), (None, 256 << 10));
        assert_eq!(ext4.words(), "file system made for a 256 KiB stripe");
        assert_eq!(FsStripe::from_options("ext4", "rw,relatime", 4096), None);
        assert_eq!(
            FsStripe::from_options("xfs", "rw,sunit=0,swidth=0", 4096),
            None
        );
        assert_eq!(FsStripe::from_options("tmpfs", "rw,stripe=64", 4096), None);
    }

    #[test]
    fn a_plain_disk_and_its_partition_are_not_striped() {
        let disk = Geometry::read(&fixture("plain-disk")).expect("read");
        assert_eq!(disk.stripe(), None);
        assert_eq!(disk.fit(256 << 10), None);
        assert_eq!(disk.words(), "plain-disk (not striped, 4 KiB I/O unit)");
        let partition = Geometry::read(&fixture("plain-disk/sda1")).expect("read");
        assert_eq!(partition.device, "sda1");
        assert_eq!(partition.min_io_bytes, Some(4096));
        assert_eq!(partition.stripe(), None);
        assert!(Geometry::read(&fixture("no-such-device")).is_none());
    }
}
