//! Records the commit backlab is built from, so a report can say which build measured it, and
//! lists the migrations of each backend for the store (`src/store/rows.rs`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

fn main() {
    list_migrations();
    println!("cargo:rerun-if-changed=.git/HEAD");
    if let Ok(head) = std::fs::read_to_string(".git/HEAD")
        && let Some(reference) = head.trim().strip_prefix("ref: ")
    {
        // The branch's ref is a file of its own or a line of packed-refs: each is watched
        // only where it exists, since a missing path would run this script, and build the
        // crate again, at every cargo command.
        if Path::new(".git").join(reference).exists() {
            println!("cargo:rerun-if-changed=.git/{reference}");
        }
        if Path::new(".git/packed-refs").exists() {
            println!("cargo:rerun-if-changed=.git/packed-refs");
        }
    }
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|commit| commit.trim().to_string())
        .filter(|commit| !commit.is_empty());
    if let Some(commit) = commit {
        println!("cargo:rustc-env=BACKLAB_GIT_COMMIT={commit}");
    }
}

/// Writes `OUT_DIR/migrations.rs`: for `migrations/` (SQLite) and `migrations/postgres/`, a
/// constant listing `(version, description, include_str!(file))` in version order, each file
/// named `VERSION_DESCRIPTION.sql` as sqlx reads it (the description with spaces for `_`).
fn list_migrations() {
    let mut code = String::new();
    for (constant, dir) in [
        ("SQLITE", "migrations"),
        ("POSTGRES", "migrations/postgres"),
    ] {
        println!("cargo:rerun-if-changed={dir}");
        let root =
            Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join(dir);
        let mut files: Vec<(i64, String, String)> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let (version, rest) = name.split_once('_')?;
                let description = rest.strip_suffix(".sql")?.replace('_', " ");
                let version = version
                    .parse()
                    .unwrap_or_else(|_| panic!("{dir}/{name}: the version is not a number"));
                Some((version, description, entry.path().display().to_string()))
            })
            .collect();
        files.sort();
        writeln!(code, "pub const {constant}: &[(i64, &str, &str)] = &[").expect("a string");
        for (version, description, path) in files {
            writeln!(
                code,
                "    ({version}, {description:?}, include_str!({path:?})),"
            )
            .expect("a string");
        }
        writeln!(code, "];").expect("a string");
    }
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("migrations.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
