//! The built-in tools' maintenance commands against the real restic and borg: retention keeps
//! the backups it says and frees the rest, the metadata check passes an intact repository, and
//! the full-data check reads the data (a pack damaged under restic's metadata check is found
//! by its data check only).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use backlab::engine::tool::builtin;
use backlab::engine::tool::definition::ToolDefinition;

use crate::support::fixtures::scratch;

/// A built-in definition by name.
fn definition(name: &str) -> ToolDefinition {
    builtin::definitions()
        .into_iter()
        .find(|tool| tool.name == name)
        .expect("a built-in tool")
}

/// `text` with each `{place}` filled in.
fn filled(text: &str, places: &BTreeMap<&str, String>) -> String {
    places.iter().fold(text.to_string(), |text, (name, value)| {
        text.replace(&format!("{{{name}}}"), value)
    })
}

/// Runs one of the definition's commands with its environment, places filled in; its output.
fn run(
    tool: &ToolDefinition,
    command: &[String],
    places: &BTreeMap<&str, String>,
    cwd: &Path,
) -> Output {
    let mut process = Command::new(&command[0]);
    process
        .args(command[1..].iter().map(|arg| filled(arg, places)))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &places["home"])
        .current_dir(cwd);
    for (key, value) in &tool.env {
        process.env(key, filled(value, places));
    }
    process.output().expect("the tool runs")
}

/// Runs each command of a list in turn; every one must succeed.
fn run_all(
    tool: &ToolDefinition,
    commands: &[Vec<String>],
    places: &BTreeMap<&str, String>,
    cwd: &Path,
) {
    for command in commands {
        let output = run(tool, command, places, cwd);
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
    let places: BTreeMap<&str, String> = [
        ("repo", root.path().join("repo").display().to_string()),
        ("home", root.path().join("home").display().to_string()),
        ("password", "a-test-password".to_string()),
        ("keep", "1".to_string()),
    ]
    .into_iter()
    .collect();
    let source = root.path().join("source");
    std::fs::create_dir_all(&places["home"]).expect("home");
    run_all(&restic, &restic.init, &places, root.path());
    for night in 0..3 {
        write_source(&source, night);
        let backup = [
            "restic", "backup", "--quiet", "--repo", "{repo}", "--host", "backlab",
        ]
        .iter()
        .map(|word| word.to_string())
        .chain([source.display().to_string()])
        .collect::<Vec<_>>();
        run_all(&restic, &[backup], &places, root.path());
    }
    let snapshots = |places: &BTreeMap<&str, String>| listed(&restic, places, root.path());
    assert_eq!(snapshots(&places), 3);
    let (index, total) = index_and_total(&restic, &places);
    assert!(0 < index && index < total, "index {index} of {total} bytes");
    run_all(&restic, &restic.retention, &places, root.path());
    assert_eq!(snapshots(&places), 1, "keep-last 1 keeps one backup");
    run_all(&restic, &restic.check, &places, root.path());
    run_all(&restic, &restic.check_data, &places, root.path());

    // A pack whose bytes change in place: the metadata check does not read it, the data
    // check does.
    let data = Path::new(&places["repo"]).join("data");
    let pack = walk_files(&data)
        .into_iter()
        .max_by_key(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .expect("a pack");
    let mut bytes = std::fs::read(&pack).expect("the pack");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&pack, bytes).expect("the pack, damaged");
    let cache = Path::new(&places["home"]).join("cache");
    let _ = std::fs::remove_dir_all(cache);
    let metadata = run(&restic, &restic.check[0], &places, root.path());
    assert!(
        metadata.status.success(),
        "the metadata check reads no pack's data: {}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    let full = run(&restic, &restic.check_data[0], &places, root.path());
    assert!(
        !full.status.success(),
        "the data check finds the damaged pack"
    );
}

#[test]
fn borgs_retention_prunes_then_compacts_and_both_checks_pass() {
    let root = scratch();
    let borg = definition("borg");
    let repo = root.path().join("repo");
    let mut places: BTreeMap<&str, String> = [
        ("repo", repo.display().to_string()),
        ("home", root.path().join("home").display().to_string()),
        ("password", "a-test-password".to_string()),
        ("keep", "1".to_string()),
        ("encryption", "repokey".to_string()),
    ]
    .into_iter()
    .collect();
    let source = root.path().join("source");
    std::fs::create_dir_all(&places["home"]).expect("home");
    run_all(&borg, &borg.init, &places, root.path());
    for night in 0..3 {
        write_source(&source, night);
        places.insert("archive", format!("night-{night}"));
        let create = ["borg", "create", "{repo}::{archive}"]
            .iter()
            .map(|word| word.to_string())
            .chain([source.display().to_string()])
            .collect::<Vec<_>>();
        run_all(&borg, &[create], &places, root.path());
    }
    let archives = |places: &BTreeMap<&str, String>| listed(&borg, places, root.path());
    assert_eq!(archives(&places), 3);
    let (index, total) = index_and_total(&borg, &places);
    assert!(0 < index && index < total, "index {index} of {total} bytes");
    let before = tree_bytes(&repo);
    run_all(&borg, &borg.retention, &places, root.path());
    assert_eq!(archives(&places), 1, "keep-last 1 keeps one archive");
    assert!(
        tree_bytes(&repo) < before,
        "compact frees what only the pruned archives held"
    );
    run_all(&borg, &borg.check, &places, root.path());
    run_all(&borg, &borg.check_data, &places, root.path());
}

/// The backups the definition's `list` says the repository keeps.
fn listed(tool: &ToolDefinition, places: &BTreeMap<&str, String>, cwd: &Path) -> usize {
    let output = run(tool, &tool.list[0], places, cwd);
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
fn index_and_total(tool: &ToolDefinition, places: &BTreeMap<&str, String>) -> (u64, u64) {
    let index = tool
        .index
        .iter()
        .map(|pattern| {
            backlab::engine::tool::tree::matching_size(Path::new(&filled(pattern, places)))
                .expect("counted")
                .apparent_bytes
        })
        .sum();
    let total = tree_bytes(Path::new(&places["repo"])) + tree_bytes(Path::new(&places["home"]));
    (index, total)
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
fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
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

/// The bytes of every file under `dir`.
fn tree_bytes(dir: &Path) -> u64 {
    walk_files(dir)
        .iter()
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|metadata| metadata.len())
        .sum()
}
