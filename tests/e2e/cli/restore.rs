//! `backlab run` with the restore test: an image on a directory target, and on a block device
//! (a loop device over a scratch file), read back into files shaped like the source, with
//! nothing left behind; a target with no image is refused.

use crate::support::cli::{backlab, json, output, stderr};
use crate::support::fixtures::scratch;

#[test]
fn a_restore_writes_files_shaped_like_the_source_and_leaves_nothing_behind() {
    let scratch = scratch();
    let (source, target, restore) = (
        scratch.path().join("source"),
        scratch.path().join("target"),
        scratch.path().join("restore"),
    );
    for dir in [&source, &target, &restore] {
        std::fs::create_dir(dir).expect("dir");
    }
    // Eight files of 1 MiB: a restore of 6 MiB is six of them.
    for index in 0..8 {
        std::fs::write(
            source.join(format!("file{index}")),
            vec![index as u8; 1 << 20],
        )
        .expect("source file");
    }
    let out = output(
        backlab()
            .args([
                "run",
                "--json",
                "--tests",
                "full_backup,restore",
                "--source",
            ])
            .arg(&source)
            .arg("--target")
            .arg(&target)
            .arg("--restore-to")
            .arg(&restore)
            .args(["--size", "6M", "--block-size", "256K", "--streams", "2"]),
    );
    let run = &done_restore(&out);
    let report = json(&out);
    assert_eq!(run["bytes"], 6 << 20, "{run}");
    assert_eq!(run["files"], 6, "one file per source file's size: {run}");
    assert!(run["mb_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{run}");
    let figures = &run["restore"];
    assert!(
        figures["from"]
            .as_str()
            .is_some_and(|from| from.starts_with("directory ")),
        "{figures}"
    );
    assert!(
        figures["into"]
            .as_str()
            .is_some_and(|into| into.starts_with(&restore.display().to_string())),
        "{figures}"
    );
    assert_eq!(figures["interleaved"], 1);
    assert_eq!(
        run["latency_of"], "sink_write",
        "the restore's own writes: {run}"
    );
    let line = report["bottleneck"]["restore_words"].as_str().unwrap_or("");
    // A restore of the whole source (8 MiB), at the figure measured on 6 MiB of it.
    assert!(line.starts_with("A restore of 8 MiB takes about"), "{line}");
    // 6 MiB moved in milliseconds is no steady figure, and the line says so.
    assert!(
        line.contains("The restore's run is not valid (") && line.contains("data_smaller_than_run"),
        "{line}"
    );
    // The image is as compressible as the source (runs of one byte), measured on it.
    assert!(
        run["data_compress_ratio"]
            .as_f64()
            .is_some_and(|ratio| ratio > 2.0),
        "{run}"
    );
    for dir in [&target, &restore] {
        let left: Vec<_> = std::fs::read_dir(dir).expect("read dir").collect();
        assert!(left.is_empty(), "{} keeps {left:?}", dir.display());
    }
}

#[test]
fn a_restore_from_a_target_that_keeps_nothing_is_refused_by_name() {
    // Null keeps nothing; a character device keeps nothing to read back either.
    let cases: [(&[&str], &str, &str); 2] = [
        (
            &["--target", "null", "--tests", "tape_write,restore"],
            "tests[1]",
            "null (discarded)",
        ),
        (
            &[
                "--target",
                "device:/dev/null",
                "--allow-device",
                "/dev/null",
                "--tests",
                "restore",
            ],
            "tests[0]",
            "device /dev/null",
        ),
    ];
    for (args, field, target) in cases {
        let out = output(backlab().args(["run", "--generated", "16M"]).args(args));
        assert!(!out.status.success(), "{args:?}");
        let text = stderr(&out);
        assert!(
            text.contains(&format!(
                "{field}: a restore reads back a backup image, and the target ({target}) keeps none"
            )),
            "{text}"
        );
    }
}

/// A loop device over a file, detached when dropped.
struct LoopDevice(String);

impl LoopDevice {
    /// Attaches `backing` to a free loop device; `None` where this machine has no loop devices
    /// or the test is not root (`losetup` needs both), saying why.
    fn attach(backing: &std::path::Path) -> Option<LoopDevice> {
        if !rustix::process::geteuid().is_root()
            || !std::path::Path::new("/dev/loop-control").exists()
        {
            return None;
        }
        let out = output(
            std::process::Command::new("losetup")
                .args(["--find", "--show"])
                .arg(backing),
        );
        if !out.status.success() {
            eprintln!("losetup could not attach a loop device: {}", stderr(&out));
            return None;
        }
        Some(LoopDevice(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        ))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["--detach", &self.0])
            .status();
    }
}

#[test]
fn a_restore_reads_its_image_back_from_a_block_device() {
    let scratch = scratch();
    let backing = scratch.path().join("disk.img");
    let restore = scratch.path().join("restore");
    std::fs::create_dir(&restore).expect("restore dir");
    std::fs::File::create(&backing)
        .and_then(|file| file.set_len(32 << 20))
        .expect("backing file");
    let Some(device) = LoopDevice::attach(&backing) else {
        eprintln!("skipped: no loop device here (needs root and /dev/loop-control)");
        return;
    };
    let out = output(
        backlab()
            .args([
                "run",
                "--json",
                "--generated",
                "8M",
                "--tests",
                "tape_write,restore",
            ])
            .args(["--target", &format!("device:{}", device.0)])
            .args(["--allow-device", &device.0, "--direct"])
            .arg("--restore-to")
            .arg(&restore)
            .args(["--block-size", "256K"]),
    );
    let run = &done_restore(&out);
    assert_eq!(run["bytes"], 8 << 20, "the whole image read back: {run}");
    assert_eq!(run["files"], 1, "one 64 MiB shape holds 8 MiB: {run}");
    assert_eq!(
        run["restore"]["from"],
        format!("device {}", device.0),
        "{run}"
    );
    // The image was laid on the device itself: its first 8 MiB are no longer zeros.
    drop(device);
    let disk = std::fs::read(&backing).expect("backing file");
    assert!(
        disk[..8 << 20]
            .chunks(4096)
            .all(|page| page.iter().any(|&byte| byte != 0)),
        "the image is not on the device"
    );
    let left: Vec<_> = std::fs::read_dir(&restore).expect("read dir").collect();
    assert!(left.is_empty(), "the restore dir keeps {left:?}");
}

/// The restore run of a `backlab run --json` that succeeded, checked done.
fn done_restore(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "run failed: {}", stderr(out));
    let report = json(out);
    let run = report["runs"]
        .as_array()
        .and_then(|runs| runs.iter().find(|run| run["test"] == "restore"))
        .cloned()
        .unwrap_or_else(|| panic!("no restore run: {report}"));
    assert_eq!(run["status"], "done", "{run}");
    run
}
