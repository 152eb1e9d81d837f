use std::io::Write;
use std::os::unix::fs::FileExt;
use std::time::{Duration, SystemTime};

use rand_chacha::ChaCha8Rng;

use super::*;
use rand::{Rng, RngExt, SeedableRng};

/// Writes `len` seeded pseudo-random bytes to `path`, making its directory first.
fn write_file(path: &Path, len: usize, seed: u64) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut bytes = vec![0u8; len];
    ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut bytes);
    fs::write(path, bytes).expect("write");
}

/// A small source: files of known sizes in nested directories, one of them empty.
fn small_source(dir: &Path) -> (PathBuf, Vec<(&'static str, usize)>) {
    let source = dir.join("source");
    let files = vec![
        ("a/b/x.bin", 70_000),
        ("a/empty", 0),
        ("a/notes.txt", 5_000),
        ("c.bin", 9_000_000),
        ("d/e/f/deep", 1),
    ];
    for (index, (name, len)) in files.iter().enumerate() {
        write_file(&source.join(name), *len, index as u64);
    }
    fs::create_dir_all(source.join("g/empty-dir")).expect("empty dir");
    (source, files)
}

fn no_cancel() -> AtomicBool {
    AtomicBool::new(false)
}

#[test]
fn a_copy_lands_at_the_roots_absolute_path_and_verifies_with_exact_counts() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, files) = small_source(scratch.path());
    let into = scratch.path().join("copy");
    let tally = copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
    let bytes: usize = files.iter().map(|(_, len)| len).sum();
    assert_eq!(
        tally,
        TreeTally {
            files: files.len() as u64,
            bytes: bytes as u64,
            // source, a, a/b, d, d/e, d/e/f, g, g/empty-dir
            dirs: 8,
            skipped: 0,
        }
    );
    let place = into.join(source.strip_prefix("/").expect("absolute tempdir"));
    assert_eq!(
        fs::read(place.join("a/b/x.bin")).expect("copied"),
        fs::read(source.join("a/b/x.bin")).expect("source")
    );
    assert!(place.join("g/empty-dir").is_dir());

    let verified = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        None,
    )
    .expect("verify");
    assert!(verified.ok(), "{verified:?}");
    assert_eq!((verified.files, verified.bytes), (5, bytes as u64));
    assert_eq!(verified.extra, 0);
    assert_eq!(verified.sentence(), "verified: 5 files, 9 075 001 bytes");
}

#[test]
fn a_flipped_byte_a_missing_file_and_an_extra_one_are_named() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = small_source(scratch.path());
    let into = scratch.path().join("restore");
    copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
    let place = RestoreLayout::AbsolutePaths
        .place(&source, &into)
        .expect("place");
    let flipped = place.join("c.bin");
    let mut bytes = fs::read(&flipped).expect("read");
    bytes[4_500_000] ^= 0x01;
    fs::write(&flipped, bytes).expect("write");
    fs::remove_file(place.join("a/notes.txt")).expect("remove");
    write_file(&place.join("d/stray"), 10, 99);

    let verified = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        None,
    )
    .expect("verify");
    assert!(!verified.ok());
    assert_eq!(verified.missing, vec!["a/notes.txt".to_string()]);
    assert_eq!(verified.differ, vec!["c.bin".to_string()]);
    assert_eq!((verified.files, verified.extra), (3, 1));
    assert_eq!(
        verified.sentence(),
        "restore differs from the source: 1 file missing (a/notes.txt), 1 file differs \
         (c.bin); 1 file restored that the source does not have"
    );
}

#[test]
fn a_restore_of_another_size_or_kind_differs() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = small_source(scratch.path());
    let into = scratch.path().join("restore");
    copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
    let place = RestoreLayout::AbsolutePaths
        .place(&source, &into)
        .expect("place");
    // One byte more, and a link where a file belongs (pointing at the right content).
    let longer = place.join("a/b/x.bin");
    let mut bytes = fs::read(&longer).expect("read");
    bytes.push(0);
    fs::write(&longer, bytes).expect("write");
    fs::remove_file(place.join("d/e/f/deep")).expect("remove");
    std::os::unix::fs::symlink(source.join("d/e/f/deep"), place.join("d/e/f/deep"))
        .expect("symlink");

    let verified = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        None,
    )
    .expect("verify");
    assert_eq!(verified.differ, vec!["a/b/x.bin", "d/e/f/deep"]);
    assert_eq!(verified.differ_count, 2);
    assert!(verified.missing.is_empty());
}

#[test]
fn links_are_skipped_never_followed() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let source = scratch.path().join("source");
    write_file(&source.join("kept"), 100, 1);
    write_file(&scratch.path().join("outside/secret"), 300, 2);
    std::os::unix::fs::symlink(scratch.path().join("outside"), source.join("to-dir"))
        .expect("dir link");
    std::os::unix::fs::symlink(
        scratch.path().join("outside/secret"),
        source.join("to-file"),
    )
    .expect("file link");
    let into = scratch.path().join("copy");
    let tally = copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
    assert_eq!((tally.files, tally.bytes, tally.skipped), (1, 100, 2));
    let place = RestoreLayout::AbsolutePaths
        .place(&source, &into)
        .expect("place");
    let copied: Vec<_> = fs::read_dir(&place)
        .expect("list")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert_eq!(copied, vec![std::ffi::OsString::from("kept")]);
    let verified = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        None,
    )
    .expect("verify");
    assert_eq!((verified.files, verified.bytes), (1, 100));

    // A root that is itself a link is refused, by its name.
    let linked_root = scratch.path().join("linked-root");
    std::os::unix::fs::symlink(&source, &linked_root).expect("root link");
    let error = copy_tree(std::slice::from_ref(&linked_root), &into, &no_cancel())
        .expect_err("a linked root is refused");
    assert!(
        error
            .to_string()
            .contains(&linked_root.display().to_string()),
        "{error}"
    );
}

#[test]
fn a_copy_into_its_own_source_is_refused() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = small_source(scratch.path());
    let error = copy_tree(
        std::slice::from_ref(&source),
        &source.join("copy"),
        &no_cancel(),
    )
    .expect_err("refused");
    assert!(matches!(error, TreeError::IntoSource { .. }), "{error}");
}

#[test]
fn cancel_stops_a_copy_before_it_copies() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = small_source(scratch.path());
    let into = scratch.path().join("copy");
    let error = copy_tree(std::slice::from_ref(&source), &into, &AtomicBool::new(true))
        .expect_err("cancelled");
    assert!(matches!(error, TreeError::Cancelled { .. }), "{error}");
    assert_eq!(tree_size(&into).expect("size").files, 0);
}

/// A tree of 200 files of mixed sizes (most of a few KiB, some of hundreds, a few of MiBs).
fn mixed_tree(root: &Path) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut total = 0;
    for index in 0..200u64 {
        let len = match index % 20 {
            0 => rng.random_range(400_000..1_200_000),
            1..=4 => rng.random_range(20_000..120_000),
            _ => rng.random_range(0..12_000),
        };
        let dir = format!("d{}/e{}", index % 7, index % 3);
        write_file(&root.join(dir).join(format!("f{index}")), len, index);
        total += len as u64;
    }
    total
}

#[test]
fn a_share_of_five_percent_changes_about_five_percent_the_same_way_each_time() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let original = scratch.path().join("original");
    let total = mixed_tree(&original);
    let copies: Vec<PathBuf> = ["one", "two", "other-seed"]
        .iter()
        .map(|name| {
            let copy = scratch.path().join(name).join("original");
            copy_tree(
                std::slice::from_ref(&original),
                &scratch.path().join(name),
                &no_cancel(),
            )
            .expect("copy");
            fs::rename(
                RestoreLayout::AbsolutePaths
                    .place(&original, &scratch.path().join(name))
                    .expect("place"),
                &copy,
            )
            .expect("move");
            copy
        })
        .collect();
    let modified_before: Vec<(PathBuf, SystemTime)> = walk(&copies[0])
        .flatten()
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            let modified = entry.metadata().expect("stat").modified().expect("mtime");
            (entry.into_path(), modified)
        })
        .collect();

    let first = change_share(&copies[0], 0.05, 7).expect("change");
    let second = change_share(&copies[1], 0.05, 7).expect("change");
    let other = change_share(&copies[2], 0.05, 8).expect("change");
    assert_eq!(first, second);
    let share = first.bytes as f64 / total as f64;
    assert!((0.04..=0.06).contains(&share), "changed {share}");

    // Count the bytes that really differ from the original, file by file.
    let (mut differing, mut changed_files) = (0u64, 0u64);
    for (path, before) in &modified_before {
        let relative = path.strip_prefix(&copies[0]).expect("beneath");
        let now = fs::read(path).expect("changed copy");
        let was = fs::read(original.join(relative)).expect("original");
        assert_eq!(now.len(), was.len(), "{} changed size", relative.display());
        let differ = now.iter().zip(&was).filter(|(a, b)| a != b).count() as u64;
        if differ > 0 {
            changed_files += 1;
            let modified = fs::metadata(path).expect("stat").modified().expect("mtime");
            assert!(modified >= *before + Duration::from_secs(1));
        }
        differing += differ;
    }
    let measured = differing as f64 / total as f64;
    assert!(
        (0.04..=0.06).contains(&measured),
        "bytes differing: {measured}"
    );
    assert!(changed_files <= first.files && changed_files > 0);

    // The same seed gives the same bytes; another seed, another change.
    let cancel = no_cancel();
    let same = verify(
        std::slice::from_ref(&copies[0]),
        &scratch.path().join("two"),
        RestoreLayout::RootNames,
        &cancel,
        None,
    )
    .expect("verify");
    assert!(same.ok(), "{}", same.sentence());
    let different = verify(
        std::slice::from_ref(&copies[0]),
        &scratch.path().join("other-seed"),
        RestoreLayout::RootNames,
        &cancel,
        None,
    )
    .expect("verify");
    assert!(!different.ok());
    assert!((0.04..=0.06).contains(&(other.bytes as f64 / total as f64)));
}

#[test]
fn a_share_outside_zero_to_one_is_refused() {
    let scratch = tempfile::tempdir().expect("tempdir");
    for share in [-0.1, 1.5, f64::NAN] {
        let error = change_share(scratch.path(), share, 1).expect_err("refused");
        assert!(matches!(error, TreeError::Share { .. }), "{error}");
    }
    assert_eq!(
        change_share(scratch.path(), 0.5, 1).expect("an empty tree"),
        Changed::default()
    );
}

#[test]
fn tree_size_counts_files_bytes_and_blocks_once_per_inode() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let root = scratch.path().join("repo");
    for (name, len) in [("a", 0), ("b", 1), ("sub/c", 4096), ("sub/d", 10_000)] {
        write_file(&root.join(name), len, 3);
    }
    fs::hard_link(root.join("sub/d"), root.join("d-again")).expect("hard link");
    std::os::unix::fs::symlink(root.join("b"), root.join("link")).expect("symlink");
    let blocks: u64 = ["", "sub", "a", "b", "sub/c", "sub/d", "link"]
        .iter()
        .map(|name| {
            fs::symlink_metadata(root.join(name))
                .expect("stat")
                .blocks()
        })
        .sum();
    assert_eq!(
        tree_size(&root).expect("size"),
        TreeSize {
            files: 4,
            dirs: 2,
            apparent_bytes: 14_097,
            allocated_bytes: blocks * 512,
        }
    );
    let one = tree_size(&root.join("sub/d")).expect("one file");
    assert_eq!((one.files, one.apparent_bytes), (1, 10_000));
    assert!(tree_size(&root.join("nothing")).is_err());
}

#[test]
fn dropped_files_leave_the_page_cache() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let root = scratch.path().join("source");
    write_file(&root.join("a"), 1 << 20, 1);
    write_file(&root.join("b/c"), 1 << 20, 2);
    let evicted = drop_from_cache(std::slice::from_ref(&root));
    assert_eq!((evicted.files, evicted.bytes), (2, 2 << 20));
    assert!(evicted.resident_bytes < 1 << 18, "{evicted:?}");
}

/// Drops the capabilities that let root ignore permissions, on this thread alone (Linux
/// keeps capabilities per thread), so a read-only tree resists root as it resists others.
fn drop_permission_override() {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    const DAC_OVERRIDE_READ_SEARCH_FOWNER: u32 = (1 << 1) | (1 << 2) | (1 << 3);
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget and capset read and write one header and two data structs of the
    // layout version 3 defines, both of which live on this stack frame for the calls.
    let dropped = unsafe {
        libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) == 0 && {
            data[0].effective &= !DAC_OVERRIDE_READ_SEARCH_FOWNER;
            libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) == 0
        }
    };
    assert!(dropped, "capset: {}", io::Error::last_os_error());
}

#[test]
fn remove_tree_clears_read_only_files_and_directories() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let repo = scratch.path().join("repo");
    write_file(&repo.join("data/00/pack"), 1000, 1);
    write_file(&repo.join("config"), 10, 2);
    for (name, mode) in [
        ("data/00/pack", 0o444),
        ("config", 0o400),
        ("data/00", 0o555),
        ("data", 0o500),
        ("", 0o555),
    ] {
        fs::set_permissions(repo.join(name), fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let removal = repo.clone();
    std::thread::spawn(move || {
        drop_permission_override();
        assert!(
            fs::remove_dir_all(&removal).is_err(),
            "the tree must resist a plain removal for this test to mean anything"
        );
        remove_tree(&removal).expect("removed");
        assert!(!removal.exists());
        remove_tree(&removal).expect("a tree already gone");
    })
    .join()
    .expect("removal thread");
}

#[test]
fn a_memory_dir_is_made_only_on_a_memory_file_system_with_room() {
    let scratch = tempfile::tempdir_in("/var/tmp").expect("tempdir on disk");
    let refused = memory_dir(scratch.path(), 1 << 20).expect_err("a disk is not memory");
    assert!(
        matches!(refused, MemoryRefused::NotMemory { .. }),
        "{refused}"
    );
    let shm = Path::new("/dev/shm");
    let on_tmpfs = fs::read_to_string("/proc/self/mounts").is_ok_and(|mounts| {
        mounts.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1..3) == Some(&["/dev/shm", "tmpfs"][..])
        })
    });
    if !on_tmpfs {
        eprintln!("/dev/shm is not a tmpfs here: the accepting half is not tried");
        return;
    }
    let made = memory_dir(shm, 1 << 20).expect("room for a MiB");
    let name = made
        .file_name()
        .expect("name")
        .to_string_lossy()
        .to_string();
    assert!(name.starts_with(MEMORY_DIR_PREFIX), "{name}");
    let metadata = fs::metadata(&made).expect("made");
    assert_eq!(metadata.permissions().mode() & 0o777, 0o700);
    assert_eq!(fs::read_dir(&made).expect("list").count(), 0);
    remove_tree(&made).expect("removed");
    let too_big = memory_dir(shm, u64::MAX / 2).expect_err("no room");
    assert!(
        matches!(too_big, MemoryRefused::TooSmall { .. }),
        "{too_big}"
    );
}

#[test]
fn places_follow_the_layout_and_refuse_what_could_escape() {
    let dir = Path::new("/restore");
    let root = Path::new("/home/user/data");
    assert_eq!(
        RestoreLayout::AbsolutePaths
            .place(root, dir)
            .expect("place"),
        Path::new("/restore/home/user/data")
    );
    assert_eq!(
        RestoreLayout::RootNames.place(root, dir).expect("place"),
        Path::new("/restore/data")
    );
    assert!(
        RestoreLayout::AbsolutePaths
            .place(Path::new("/a/../../b"), dir)
            .is_err()
    );
    assert!(RestoreLayout::RootNames.place(Path::new("/"), dir).is_err());
}

#[test]
fn the_sentence_groups_large_counts_and_lists_at_most_ten_paths() {
    let intact = Verified {
        files: 1204,
        bytes: 268_435_456,
        ..Verified::default()
    };
    assert_eq!(intact.sentence(), "verified: 1204 files, 268 435 456 bytes");
    let mut damaged = Verified::default();
    for index in 0..12 {
        damaged.note_differ(format!("f{index}"));
    }
    assert_eq!(damaged.differ.len(), LISTED_PATHS);
    assert_eq!(
        damaged.sentence(),
        "restore differs from the source: 12 files differ (f0, f1, f2, f3, f4, f5, f6, f7, \
         f8, f9 and 2 more)"
    );
}

/// A source file appended to after the backup began, and one added since: neither counts
/// against the restore, both are said to have changed during the test.
#[test]
fn a_file_changed_after_the_backup_began_is_changed_not_restored_wrong() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = small_source(scratch.path());
    let before = SourceState::take(std::slice::from_ref(&source));
    let into = scratch.path().join("copy");
    copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
    let mut appended = fs::OpenOptions::new()
        .append(true)
        .open(source.join("a/notes.txt"))
        .expect("open");
    appended.write_all(b"more").expect("appended");
    write_file(&source.join("new.bin"), 100, 9);
    let verified = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        Some(&before),
    )
    .expect("verify");
    assert!(verified.ok(), "{}", verified.sentence());
    assert_eq!(verified.files, 4);
    assert_eq!(verified.changed_count, 2, "{verified:?}");
    assert!(
        verified
            .sentence()
            .contains("2 files changed during the test, not compared"),
        "{}",
        verified.sentence()
    );
    // Without the state before, the same restore is wrong.
    let unaware = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        None,
    )
    .expect("verify");
    assert!(!unaware.ok());
}

/// A sparse source file is copied sparse: its length and content kept, its holes taking no
/// room in the copy.
#[test]
fn a_sparse_file_is_copied_sparse() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let source = scratch.path().join("source");
    fs::create_dir_all(&source).expect("source");
    let sparse = fs::File::create(source.join("sparse.img")).expect("file");
    sparse.set_len(1 << 30).expect("a 1 GiB hole");
    sparse
        .write_all_at(b"data in the middle", 512 << 20)
        .expect("some data");
    drop(sparse);
    let into = scratch.path().join("copy");
    let tally = copy_tree(std::slice::from_ref(&source), &into, &no_cancel()).expect("copy");
    assert_eq!(tally.bytes, 1 << 30);
    let place = into.join(source.strip_prefix("/").expect("absolute"));
    let copied = place.join("sparse.img");
    let meta = fs::metadata(&copied).expect("copied");
    assert_eq!(meta.len(), 1 << 30);
    use std::os::unix::fs::MetadataExt;
    assert!(
        meta.blocks() * 512 < 16 << 20,
        "{} bytes allocated",
        meta.blocks() * 512
    );
    let verified = verify(
        std::slice::from_ref(&source),
        &into,
        RestoreLayout::AbsolutePaths,
        &no_cancel(),
        None,
    )
    .expect("verify");
    assert!(verified.ok(), "{}", verified.sentence());
}

/// Every regular file beneath `root`, by its path beneath it, with its bytes.
fn contents(root: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    walk(root)
        .flatten()
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            let bytes = fs::read(entry.path()).expect("a file of the tree");
            let relative = entry
                .path()
                .strip_prefix(root)
                .expect("beneath")
                .to_path_buf();
            (relative, bytes)
        })
        .collect()
}

#[test]
fn a_night_edits_adds_deletes_and_renames_as_its_model_says_the_same_way_each_time() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (one, two) = (scratch.path().join("one"), scratch.path().join("two"));
    let total = mixed_tree(&one);
    mixed_tree(&two);
    let before = contents(&one);
    let model = NightModel {
        edited: 0.05,
        added: 0.04,
        deleted: 0.05,
        renamed: 0.05,
    };
    let night = apply_night(&one, &model, 3).expect("a night");
    assert_eq!(apply_night(&two, &model, 3).expect("a night"), night);
    let after = contents(&one);
    assert_eq!(
        after,
        contents(&two),
        "the same tree and seed give the same night"
    );

    assert_eq!(night.deleted_files, 10, "5 % of 200 files");
    assert_eq!(night.renamed_files, 10);
    assert_eq!(night.added_bytes, (0.04 * total as f64).round() as u64);
    let edited = night.edited.bytes as f64 / total as f64;
    assert!((0.04..=0.06).contains(&edited), "edited {edited}");
    assert_eq!(
        after.len() as u64,
        before.len() as u64 - night.deleted_files + night.added_files
    );
    let bytes_after: u64 = after.values().map(|bytes| bytes.len() as u64).sum();
    assert_eq!(bytes_after, total - night.deleted_bytes + night.added_bytes);
    let renamed: Vec<&PathBuf> = after
        .keys()
        .filter(|path| path.to_string_lossy().ends_with(".moved-3"))
        .collect();
    assert_eq!(renamed.len(), 10);
    for path in renamed {
        let was = PathBuf::from(path.to_string_lossy().trim_end_matches(".moved-3"));
        assert!(before.contains_key(&was) && !after.contains_key(&was));
        assert_eq!(
            after[path].len(),
            before[&was].len(),
            "a rename keeps the bytes' length"
        );
    }
    let added = after
        .keys()
        .filter(|path| path.to_string_lossy().contains("night-3-"))
        .count() as u64;
    assert_eq!(added, night.added_files);
    // Another seed, another night.
    let three = scratch.path().join("three");
    mixed_tree(&three);
    apply_night(&three, &model, 4).expect("a night");
    assert_ne!(contents(&three), after);
}

#[test]
fn a_night_model_out_of_its_shares_is_refused_and_the_default_is_stated() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let model = NightModel {
        renamed: 1.5,
        ..NightModel::default()
    };
    assert_eq!(model.problems(), vec![("renamed", 1.5)]);
    assert!(apply_night(scratch.path(), &model, 1).is_err());
    assert_eq!(
        NightModel::default().words(),
        "2 % of bytes edited, 0.5 % added as new files, 0.2 % of files deleted, 0.2 % renamed"
    );
}

#[test]
fn a_pattern_counts_the_entries_its_wildcard_names_and_nothing_there_counts_nothing() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let repo = scratch.path();
    for (name, len) in [
        ("index.5", 100),
        ("index.12", 50),
        ("integrity.5", 7),
        ("hints.5", 3),
    ] {
        write_file(&repo.join(name), len, 1);
    }
    write_file(&repo.join("index").join("ab").join("one"), 40, 2);
    let bytes = |pattern: &str| {
        matching_size(&repo.join(pattern))
            .expect("counted")
            .apparent_bytes
    };
    assert_eq!(bytes("index.*"), 150);
    assert_eq!(bytes("*.5"), 110);
    assert_eq!(bytes("index"), 40, "a directory, whole");
    assert_eq!(bytes("missing"), 0);
    assert_eq!(bytes("missing/*"), 0);
    assert!(wildcard_matches("a*b*c", "a-b-c") && !wildcard_matches("ab*b", "ab"));
}
