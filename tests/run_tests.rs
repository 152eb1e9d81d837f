//! `./run-tests` runs every test binary: without arguments it names them one by one (so that
//! the slow ones can run side by side), and a binary it does not name would never run in CI.

use std::path::Path;

/// Every integration-test binary: `tests/NAME.rs` and `tests/NAME/main.rs`.
fn test_binaries(tests: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tests)
        .expect("tests/")
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let name = path.file_stem()?.to_str()?.to_string();
            let binary = if path.is_dir() {
                path.join("main.rs").is_file()
            } else {
                path.extension().is_some_and(|ext| ext == "rs")
            };
            binary.then_some(name)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn run_tests_names_every_test_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("run-tests")).expect("run-tests");
    let binaries = test_binaries(&root.join("tests"));
    assert!(binaries.len() >= 4, "{binaries:?}");
    let missing: Vec<&String> = binaries
        .iter()
        .filter(|name| !script.contains(&format!("--test {name}")))
        .collect();
    assert!(
        missing.is_empty(),
        "run-tests never runs these test binaries: {missing:?}"
    );
    for unit in ["--lib", "--bins"] {
        assert!(script.contains(unit), "run-tests never runs {unit}");
    }
}
