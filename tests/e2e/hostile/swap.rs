//! Source files swapped while a run reads them: a file replaced by a link to a file outside the
//! source, a directory on the way replaced by a link, a file replaced by a FIFO. No byte is read
//! from outside the source, nothing blocks, and a cancel still stops the run at once.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use backlab::engine::cache;
use backlab::engine::result::RunStatus;
use backlab::engine::source::list_files;
use backlab::engine::{EngineSettings, RunControl, execute};
use backlab::spec::{self, RunPlan};
use serde_json::json;

use crate::support::fixtures::scratch;

/// Writes `bytes` of a repeating pattern to `path`, flushed to disk.
fn write_file(path: &Path, bytes: usize) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent");
    }
    let mut file = std::fs::File::create(path).expect("create");
    let block: Vec<u8> = (0..1 << 16).map(|i| (i * 7 % 251) as u8).collect();
    let mut left = bytes;
    while left > 0 {
        let piece = left.min(block.len());
        file.write_all(&block[..piece]).expect("write");
        left -= piece;
    }
    file.sync_all().expect("sync");
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
}

/// Bytes of `path` in the page cache.
fn resident(path: &Path) -> u64 {
    let file = std::fs::File::open(path).expect("open");
    let len = file.metadata().expect("metadata").len();
    cache::resident_bytes(&file, len).expect("mincore")
}

/// A file outside the source, written and evicted from the page cache: any read of it would
/// bring its pages back.
fn outside_file(dir: &Path) -> PathBuf {
    let path = dir.join("outside").join("secret");
    write_file(&path, 3 << 20);
    let file = std::fs::File::open(&path).expect("open");
    cache::evict(&file).expect("fadvise");
    assert_eq!(
        resident(&path),
        0,
        "the outside file could not be evicted first"
    );
    path
}

#[test]
fn files_are_opened_beneath_their_source_path_without_links_and_without_blocking() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    for name in ["a/one", "a/two", "b/three", "c/four"] {
        write_file(&source.join(name), 1 << 20);
    }
    let outside = outside_file(scratch.path());
    let files = list_files(std::slice::from_ref(&source), 100);
    assert_eq!(files.len(), 4);

    // After the walk: a file becomes a link to the outside file, a directory on the way a link
    // to the outside directory, a file a FIFO nobody writes to.
    std::fs::remove_file(source.join("a/one")).expect("rm");
    std::os::unix::fs::symlink(&outside, source.join("a/one")).expect("link");
    std::fs::rename(source.join("b"), scratch.path().join("b-moved")).expect("mv");
    write_file(&scratch.path().join("outside/three"), 1 << 20);
    std::os::unix::fs::symlink(scratch.path().join("outside"), source.join("b")).expect("link");
    std::fs::remove_file(source.join("c/four")).expect("rm");
    fifo(&source.join("c/four"));

    for file in &files {
        let started = Instant::now();
        let opened = file.open(false);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "opening {} blocked",
            file.path.display()
        );
        let name = file.path.strip_prefix(&source).expect("under the source");
        match name.to_str() {
            Some("a/two") => assert!(opened.is_ok(), "{opened:?}"),
            _ => assert!(opened.is_err(), "{} was opened", name.display()),
        }
    }
    assert_eq!(resident(&outside), 0, "the outside file was read");
}

/// A time-based single read of `source` for 3 s, at 20 MB/s so it goes round the files.
fn reread_plan(source: &Path) -> RunPlan {
    let spec = json!({
        "source": {"paths": [source]},
        "target": {"kind": "null"},
        "tests": ["read_single"],
        "params": {"block_size": "256K", "duration_s": 3, "time_based": true,
                   "source_rate_mb_s": 20},
    });
    let spec = spec::parse_json(&spec.to_string()).expect("spec");
    spec.plan().expect("plan").remove(0)
}

#[test]
fn a_source_swapped_during_a_run_is_not_followed_and_does_not_block_it() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    for name in ["a", "b", "c", "d"] {
        write_file(&source.join(name), 1 << 20);
    }
    let outside = outside_file(scratch.path());
    let plan = reread_plan(&source);
    let cancel = AtomicBool::new(false);
    let progressed = AtomicBool::new(false);
    let (result, took) = std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            let started = Instant::now();
            let report = |_: &backlab::engine::result::Progress| {
                progressed.store(true, Ordering::Relaxed);
            };
            let result = execute(
                &plan,
                &EngineSettings::default(),
                &RunControl {
                    cancel: &cancel,
                    progress: &report,
                },
            );
            (result, started.elapsed())
        });
        while !progressed.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
        // The walk goes round the files again and again: each pass from now on finds them
        // swapped.
        std::fs::remove_file(source.join("a")).expect("rm");
        std::os::unix::fs::symlink(&outside, source.join("a")).expect("link");
        std::fs::remove_file(source.join("b")).expect("rm");
        fifo(&source.join("b"));
        running.join().expect("the run's thread")
    });
    assert_eq!(result.status, RunStatus::Done, "{:?}", result.error);
    assert!(
        took < Duration::from_secs(6),
        "the run took {took:?} for its 3 s"
    );
    assert!(result.bytes > 0);
    assert_eq!(resident(&outside), 0, "the run read the outside file");

    // A cancel stops a run whose source holds a FIFO at once.
    let cancel = AtomicBool::new(true);
    let started = Instant::now();
    let result = execute(
        &plan,
        &EngineSettings::default(),
        &RunControl {
            cancel: &cancel,
            progress: &|_| {},
        },
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(result.status, RunStatus::Cancelled, "{:?}", result.error);
}
