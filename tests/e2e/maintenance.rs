//! The built-in tools' maintenance commands against the real restic and borg: retention keeps
//! the backups it says and frees the rest, the metadata check passes an intact repository, and
//! the full-data check reads the data (a pack damaged under restic's metadata check is found
//! by its data check only); and every built-in tool's restore of one file restores that file
//! alone, at its place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use backlab::engine::tool::ParamValue;
use backlab::engine::tool::builtin;
use backlab::engine::tool::definition::{Places, ToolDefinition};
use backlab::engine::tool::tree::{matching_size, tree_size};

use crate::support::fixtures::scratch;

/// A built-in definition by name.
fn definition(name: &str) -> ToolDefinition {
    builtin::definitions()
        .into_iter()
        .find(|tool| tool.name == name)
        .expect("a built-in tool")
}

/// The places of a repository under `root`, its source in `root/source`.
fn places(root: &Path) -> Places {
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    Places {
        source: vec![root.join("source")],
        repo: root.join("repo"),
        restore: root.join("restore"),
        stream: root.join("stream"),
        archive: "night-0".to_string(),
        password: "a-test-password".to_string(),
        home,
        cores: 1,
        keep: 1,
        time: "2001-01-01T02:00:00".to_string(),
        one: std::path::PathBuf::new(),
        repo_env: Vec::new(),
    }
}

/// Runs one of the definition's commands as the lab would: its arguments and environment
/// expanded by the definition, its parameters at their defaults; its output.
fn run(tool: &ToolDefinition, command: &[String], places: &Places) -> Output {
    command_of(tool, command, places, &places.home)
        .output()
        .expect("the tool runs")
}

/// One of the definition's commands, ready to run in `dir`.
fn command_of(tool: &ToolDefinition, command: &[String], places: &Places, dir: &Path) -> Command {
    let values: BTreeMap<String, ParamValue> = tool.settle(&BTreeMap::new());
    let args = tool.expand(command, places, &values);
    let mut process = Command::new(&args[0]);
    process
        .args(&args[1..])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &places.home)
        .envs(tool.environment(places, &values))
        .current_dir(dir);
    process
}

/// A backup as the lab takes it: a repository tool's command, or a stream tool's stages, each
/// one's output into the next, the last one's into `{stream}`.
fn back_up(tool: &ToolDefinition, places: &Places) {
    if tool.shape == backlab::engine::tool::ToolShape::Repository {
        return run_all(tool, &tool.backup, places);
    }
    let mut previous: Option<std::process::ChildStdout> = None;
    let mut children = Vec::new();
    for (index, stage) in tool.backup.iter().enumerate() {
        let mut command = command_of(tool, stage, places, &places.home);
        if let Some(input) = previous.take() {
            command.stdin(input);
        }
        if index + 1 == tool.backup.len() {
            command.stdout(std::fs::File::create(&places.stream).expect("the stream"));
        } else {
            command.stdout(std::process::Stdio::piped());
        }
        let mut child = command.spawn().expect("a stage runs");
        previous = child.stdout.take();
        children.push(child);
    }
    for mut child in children {
        assert!(
            child.wait().expect("a stage ends").success(),
            "{}",
            tool.name
        );
    }
}

/// Runs each command of a list in turn; every one must succeed.
fn run_all(tool: &ToolDefinition, commands: &[Vec<String>], places: &Places) {
    for command in commands {
        let output = run(tool, command, places);
        assert!(
            output.status.success(),
            "{} failed: {}",
            command.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A small source tree whose content changes with `night`.
fn write_source(dir: &Path, night: u32) {
    std::fs::create_dir_all(dir).expect("source");
    for file in 0..8u32 {
        let bytes: Vec<u8> = (0..64 * 1024u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) ^ (file * 31 + night * 7)) as u8)
            .collect();
        std::fs::write(dir.join(format!("f{file}.bin")), bytes).expect("a source file");
    }
}

#[test]
fn restics_retention_keeps_what_it_says_and_its_data_check_reads_the_data() {
    let root = scratch();
    let restic = definition("restic");
    let places = places(root.path());
    run_all(&restic, &restic.init, &places);
    for night in 0..3 {
        write_source(&places.source[0], night);
        run_all(&restic, &restic.backup, &places);
    }
    assert_eq!(listed(&restic, &places), 3);
    let (index, total) = index_and_total(&restic, &places);
    assert!(0 < index && index < total, "index {index} of {total} bytes");
    run_all(&restic, &restic.retention, &places);
    assert_eq!(listed(&restic, &places), 1, "keep-last 1 keeps one backup");
    run_all(&restic, &restic.check, &places);
    run_all(&restic, &restic.check_data, &places);

    // A pack whose bytes change in place: the metadata check does not read it, the data
    // check does.
    let pack = walk_files(&places.repo.join("data"))
        .into_iter()
        .max_by_key(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .expect("a pack");
    let mut bytes = std::fs::read(&pack).expect("the pack");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&pack, bytes).expect("the pack, damaged");
    let _ = std::fs::remove_dir_all(places.home.join("cache"));
    let metadata = run(&restic, &restic.check[0], &places);
    assert!(
        metadata.status.success(),
        "the metadata check reads no pack's data: {}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    let full = run(&restic, &restic.check_data[0], &places);
    assert!(
        !full.status.success(),
        "the data check finds the damaged pack"
    );
}

#[test]
fn borgs_retention_prunes_then_compacts_and_both_checks_pass() {
    let root = scratch();
    let borg = definition("borg");
    let mut places = places(root.path());
    run_all(&borg, &borg.init, &places);
    for night in 0..3 {
        write_source(&places.source[0], night);
        places.archive = format!("night-{night}");
        run_all(&borg, &borg.backup, &places);
    }
    assert_eq!(listed(&borg, &places), 3);
    let (index, total) = index_and_total(&borg, &places);
    assert!(0 < index && index < total, "index {index} of {total} bytes");
    let before = tree_bytes(&places.repo);
    run_all(&borg, &borg.retention, &places);
    assert_eq!(listed(&borg, &places), 1, "keep-last 1 keeps one archive");
    assert!(
        tree_bytes(&places.repo) < before,
        "compact frees what only the pruned archives held"
    );
    run_all(&borg, &borg.check, &places);
    run_all(&borg, &borg.check_data, &places);
}

/// The backups the definition's `list` says the repository keeps.
fn listed(tool: &ToolDefinition, places: &Places) -> usize {
    let output = run(tool, &tool.list[0], places);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .count()
}

/// The bytes of the definition's index and metadata, and of the repository and its cache.
fn index_and_total(tool: &ToolDefinition, places: &Places) -> (u64, u64) {
    let index = tool
        .index_paths(places, &tool.settle(&BTreeMap::new()))
        .iter()
        .map(|path| matching_size(path).expect("counted").apparent_bytes)
        .sum();
    (index, tree_bytes(&places.repo) + tree_bytes(&places.home))
}

#[test]
fn every_built_in_tool_restores_one_file_alone() {
    for tool in builtin::definitions() {
        let root = scratch();
        let mut places = places(root.path());
        // Absolute paths, as the lab gives them: each tool stores them as it stores them.
        places.source = vec![std::path::absolute(&places.source[0]).expect("absolute")];
        write_source(&places.source[0], 1);
        run_all(&tool, &tool.init, &places);
        back_up(&tool, &places);
        let one = places.source[0].join("f5.bin");
        places.one = one.clone();
        std::fs::create_dir_all(&places.restore).expect("restore");
        for command in &tool.restore_one {
            let output = command_of(&tool, command, &places, &places.restore)
                .output()
                .expect("the restore runs");
            assert!(
                output.status.success(),
                "{}: {}",
                tool.name,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let restored = walk_files(&places.restore);
        let beneath = one.strip_prefix("/").expect("absolute");
        assert_eq!(
            restored,
            [places.restore.join(beneath)],
            "{}: the one file, at its place, alone",
            tool.name
        );
        assert_eq!(
            std::fs::read(&restored[0]).expect("restored"),
            std::fs::read(&one).expect("source"),
            "{}",
            tool.name
        );
    }
}

#[test]
fn only_a_repository_tool_has_maintenance() {
    for tool in builtin::definitions() {
        let has = !tool.retention.is_empty()
            && !tool.check.is_empty()
            && !tool.check_data.is_empty()
            && !tool.list.is_empty()
            && !tool.index.is_empty();
        let repository = tool.shape == backlab::engine::tool::ToolShape::Repository;
        assert_eq!(has, repository, "{}", tool.name);
    }
}

/// Every file under `dir`.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// The bytes a tree holds, as the lab counts a repository.
fn tree_bytes(dir: &Path) -> u64 {
    tree_size(dir).expect("counted").apparent_bytes
}
