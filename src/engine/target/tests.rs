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

/// Every registered kind answers the questions the rest of the lab asks of it, so a kind
/// added to [`KINDS`] is planned, stored, described and typed in like the others.
#[test]
fn every_registered_kind_answers_for_itself() {
    let mut ids = std::collections::BTreeSet::new();
    for kind in TargetKind::all() {
        assert!(ids.insert(kind.id()), "{} registered twice", kind.id());
        assert_eq!(TargetKind::from_id(kind.id()), Some(kind));
        answers_for_itself(kind);
    }
    answers_for_itself(TargetKind::of(&slow_example::Slow));
}

/// The example kind plans, writes at its rate into files of the lab's, and leaves none.
#[test]
fn the_example_kind_writes_at_its_rate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::new();
    settings.insert("rate_mb_s".into(), 20.into());
    let mut errors = FieldErrors::default();
    let plan = TargetKind::of(&slow_example::Slow)
        .plan(Some(dir.path()), &settings, &mut errors)
        .expect("a slow directory");
    assert_eq!(plan.files_dir(), Some(dir.path()));
    assert_eq!(plan.target().takes_mb_s(1.0), Some(20.0));
    let params = RunParams::example();
    let settings = EngineSettings::default();
    let cancel = AtomicBool::new(false);
    let opening = Opening {
        direct: false,
        block_size: 1 << 20,
        params: &params,
        settings: &settings,
        tag: "slow-example",
        history: None,
        cancel: &cancel,
        deadline: None,
    };
    let mut sinks = plan.target().open(&opening).expect("opened");
    let block = vec![7u8; 1 << 20];
    let started = std::time::Instant::now();
    for _ in 0..4 {
        sinks[0].write_block(&block).expect("written");
    }
    sinks[0].finish(true).expect("finished");
    // 4 MiB at 20 MB/s is 0.21 s at least, however fast the disk.
    assert!(started.elapsed() >= Duration::from_millis(200));
    drop(sinks);
    assert!(wait_for_background(Duration::from_secs(30)));
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
}

/// A kind's typed-in fields at their defaults, as a new campaign's form holds them.
struct Defaults(&'static [TypedField]);

impl Defaults {
    /// The default text of `setting`.
    fn of(&self, setting: &str) -> &'static str {
        self.0
            .iter()
            .find(|field| field.setting == setting)
            .map_or("", |field| field.default)
    }
}

impl SettingsText for Defaults {
    fn count(&mut self, setting: &str) -> Option<u32> {
        self.of(setting).parse().ok()
    }

    fn number(&mut self, setting: &str) -> Option<f64> {
        self.of(setting).parse().ok()
    }

    fn size(&mut self, setting: &str) -> Option<crate::size::ByteSize> {
        crate::size::ByteSize::parse(self.of(setting)).ok()
    }

    fn text(&mut self, setting: &str) -> Option<String> {
        Some(self.of(setting).to_string())
    }
}

/// What the lab asks of any kind, answered by `kind`.
fn answers_for_itself(kind: TargetKind) {
    let facts = kind.facts();
    assert!(!facts.label.is_empty(), "{} has no label", facts.id);
    assert!(
        facts.writes != Writes::FilesUnder || facts.takes_path,
        "{}: files under a directory need the directory's path",
        facts.id
    );
    // Its typed-in fields are settings its schema describes.
    let schema = kind
        .as_kind()
        .settings_type()
        .map(|settings| (settings.schema)());
    let described: Vec<String> = match schema {
        Some(utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(object))) => {
            object.properties.into_keys().collect()
        }
        _ => Vec::new(),
    };
    let fields = kind.as_kind().typed_fields();
    for field in fields {
        assert!(
            described.iter().any(|name| name == field.setting),
            "{}: the field {} is not a setting of its schema",
            facts.id,
            field.setting
        );
    }
    // A path where it takes none is refused, named by its field.
    if !facts.takes_path {
        let mut errors = FieldErrors::default();
        kind.plan(
            Some(Path::new("/srv/somewhere")),
            &Settings::new(),
            &mut errors,
        );
        assert!(
            errors.0.iter().any(|(field, _)| field == "target.path"),
            "{}: a path it does not take is not refused",
            facts.id
        );
    }
    // Its form's defaults, read into its settings, plan (an object store also needs the name
    // of a store, which no default can give); stored and read back, the plan is the same.
    let settings = kind.as_kind().settings_from_text(&mut Defaults(fields));
    let path = facts.takes_path.then(|| Path::new("/srv/somewhere"));
    let mut errors = FieldErrors::default();
    match kind.plan(path, &settings, &mut errors) {
        Some(plan) => {
            assert_eq!(plan.target().facts().id, facts.id);
            // Stored as `"ID"` or `{"ID": settings}`, and read back by the kind itself.
            let settings = match serde_json::to_value(&plan).expect("a plan is stored") {
                serde_json::Value::Object(stored) => stored.get(facts.id).cloned(),
                serde_json::Value::String(id) => {
                    (id == facts.id).then_some(serde_json::Value::Null)
                }
                _ => None,
            }
            .expect("stored under its kind's id");
            let read = kind.as_kind().stored(settings).expect("and read back");
            assert_eq!(read, plan, "{}", facts.id);
        }
        None => assert!(
            facts.object_store && errors.0.keys().all(|field| field == "target.store"),
            "{}: its defaults do not plan: {errors}",
            facts.id
        ),
    }
}

/// A directory plan is stored as the lab has always stored it, and a null plan as its word.
#[test]
fn plans_are_stored_as_before() {
    let mut errors = FieldErrors::default();
    let dir = TargetKind::from_id("dir")
        .and_then(|kind| kind.plan(Some(Path::new("/srv/b")), &Settings::new(), &mut errors))
        .expect("a directory plan");
    assert_eq!(
        serde_json::to_value(&dir).expect("stored"),
        serde_json::json!({"dir": "/srv/b"})
    );
    assert_eq!(
        serde_json::to_value(TargetPlan::discard()).expect("stored"),
        serde_json::json!("null")
    );
    let tape: TargetPlan = serde_json::from_value(serde_json::json!({"tape": serde_json::to_value(
            TargetKind::from_id("tape")
                .and_then(|kind| {
                    let mut settings = Settings::new();
                    settings.insert("model".into(), "lto-4".into());
                    kind.plan(None, &settings, &mut errors)
                })
                .expect("a tape plan")
                .tape()
                .expect("its drives")
        ).expect("stored")}))
    .expect("read back");
    assert_eq!(tape.tape().map(|config| config.drives), Some(1));
    // Each kind's plan as the lab stored it before its kinds answered for themselves.
    for stored in [
        serde_json::json!("null"),
        serde_json::json!({"dir": "/srv/b"}),
        serde_json::json!({"device": "/dev/sdz"}),
        serde_json::json!({"file": {"path": "/export/bds/testfile", "pattern": true}}),
        serde_json::json!({"dedup": {"path": "/srv/d", "avg_chunk": 65536}}),
        serde_json::json!({"s3": {"store": "lab", "prefix": "backlab/", "part_size": 16777216,
            "concurrency": 8, "object_size": 1073741824}}),
    ] {
        let plan: TargetPlan = serde_json::from_value(stored.clone()).expect("read");
        assert_eq!(serde_json::to_value(&plan).expect("stored"), stored);
    }
}
