//! The targets against real temp directories: files never overwritten, links refused,
//! flushes given up on, crashed runs swept, devices refused unless allowed.

use super::device::DeviceSink;
use super::dir::DirSink;
use super::files::*;
use super::*;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn dir_sink_never_overwrites_and_cleans_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut sink = DirSink::create(dir.path(), "t1", false).expect("create");
    assert!(
        DirSink::create(dir.path(), "t1", false).is_err(),
        "second create must fail"
    );
    sink.write_block(b"hello").expect("write");
    sink.finish(true).expect("finish");
    assert!(sink.path().exists());
    drop(sink);
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
    assert!(
        wait_for_background(Duration::from_secs(30)),
        "closed in the background"
    );
}

/// A target root holding `target/inner`, and a directory outside it; `target/inner` is then
/// swapped for a link to the outside, as someone with write access to the root could.
fn swapped_target() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().expect("tempdir");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(outside.join("deeper")).expect("outside");
    let target = root.path().join("target");
    std::fs::create_dir(&target).expect("target");
    std::os::unix::fs::symlink(&outside, target.join("inner")).expect("symlink");
    (root, target, outside)
}

#[test]
fn a_link_anywhere_on_the_target_path_is_refused_and_nothing_is_written_outside() {
    let (_root, target, outside) = swapped_target();
    for dir in [target.join("inner"), target.join("inner/deeper")] {
        let refused = DirSink::create(&dir, "t1", false);
        let Err(error) = refused else {
            panic!("{} was followed", dir.display());
        };
        assert!(matches!(error, EngineError::TargetLink { .. }), "{error}");
        let message = error.to_string();
        assert!(
            message.contains("symbolic link") && !message.contains("outside"),
            "the message must not say where the link points: {message}"
        );
        assert!(matches!(walk_dir_no_follow(&dir), Err(NoFollowError::Link)));
        assert!(sweep_lab_files(&dir).is_err());
    }
    let written: Vec<_> = walkdir::WalkDir::new(&outside)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .collect();
    assert!(written.is_empty(), "written outside: {written:?}");
    // The same directory without the link is fine, through either way of opening it.
    assert!(walk_dir_no_follow(&target).is_ok());
    assert!(walk_dir_no_follow(&outside.join("deeper")).is_ok());
    let sink = DirSink::create(&outside.join("deeper"), "t2", false).expect("plain dir");
    drop(sink);
    assert!(matches!(
        walk_dir_no_follow(&target.join("missing")),
        Err(NoFollowError::Io(error)) if error.kind() == io::ErrorKind::NotFound
    ));
}

#[test]
fn the_file_is_removed_from_the_directory_it_was_created_in_even_after_a_swap() {
    let root = tempfile::tempdir().expect("tempdir");
    let target = root.path().join("target");
    let outside = root.path().join("outside");
    std::fs::create_dir(&target).expect("target");
    std::fs::create_dir(&outside).expect("outside");
    let mut sink = DirSink::create(&target, "t3", false).expect("create");
    sink.write_block(b"data").expect("write");
    let name = sink.path().file_name().expect("name").to_owned();
    // The target is moved away and a link to the outside takes its place, holding a file
    // of the same name that is not the lab's.
    let moved = root.path().join("moved");
    std::fs::rename(&target, &moved).expect("rename");
    std::os::unix::fs::symlink(&outside, &target).expect("symlink");
    std::fs::write(outside.join(&name), b"not the lab's").expect("decoy");
    drop(sink);
    assert!(!moved.join(&name).exists(), "the lab's file is removed");
    assert_eq!(
        std::fs::read(outside.join(&name)).expect("decoy stays"),
        b"not the lab's"
    );
}

#[test]
fn a_flush_given_up_on_ends_in_the_background() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut sink = DirSink::create(dir.path(), "t4", false).expect("create");
    sink.write_block(&vec![7u8; 8 << 20]).expect("write");
    sink.finish_or_give_up(true, &AtomicBool::new(false))
        .expect("flush");
    sink.write_block(&vec![7u8; 8 << 20]).expect("write");
    sink.finish_or_give_up(true, &AtomicBool::new(true))
        .expect("giving up is not an error");
    drop(sink);
    assert!(wait_for_background(Duration::from_secs(30)));
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
}

#[test]
fn sweep_spares_files_of_live_writers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dead = dir
        .path()
        .join(format!("{LAB_FILE_PREFIX}999999999-ab.img"));
    let mine = dir
        .path()
        .join(format!("{LAB_FILE_PREFIX}{}-cd.img", std::process::id()));
    let live = dir.path().join(format!("{LAB_FILE_PREFIX}1-ef.img"));
    let other = dir.path().join("keep.img");
    for path in [&dead, &mine, &live, &other] {
        std::fs::write(path, b"x").expect("write");
    }
    assert_eq!(sweep_lab_files(dir.path()).expect("sweep"), 2);
    assert!(!dead.exists() && !mine.exists());
    assert!(live.exists() && other.exists());
}

#[test]
fn devices_need_permission() {
    let denied = DeviceSink::open(Path::new("/dev/null"), &[], false);
    assert!(matches!(denied, Err(EngineError::DeviceNotAllowed { .. })));
    let allowed = [PathBuf::from("/dev/null")];
    let mut sink = DeviceSink::open(Path::new("/dev/null"), &allowed, false).expect("open");
    sink.write_block(&[0; 512]).expect("write");
    sink.finish(true).expect("finish");
    let regular = tempfile::NamedTempFile::new().expect("file");
    let refused = DeviceSink::open(regular.path(), &[regular.path().to_path_buf()], false);
    assert!(matches!(refused, Err(EngineError::DeviceOpen { .. })));
    // A link to an allowed device (as /dev/disk/by-id/... are) is resolved and compared
    // once; the resolved path is what is opened.
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("by-id");
    std::os::unix::fs::symlink("/dev/null", &link).expect("symlink");
    let mut sink = DeviceSink::open(&link, &allowed, false).expect("open through a link");
    sink.write_block(&[0; 512]).expect("write");
}
