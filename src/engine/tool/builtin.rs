//! The tools the lab knows without being told: restic, borg, and tar alone or with a stream
//! compressor (gzip, zstd). Each is offered only where its programs are on PATH
//! (`catalogue.rs`).

use std::collections::BTreeMap;

use super::definition::{
    ChoiceValue, ParamDef, ProgressFrom, S3Repository, ToolDefinition, ToolShape,
};

/// Every built-in definition.
pub fn definitions() -> Vec<ToolDefinition> {
    vec![restic(), borg(), tar(), tar_gzip(), tar_zstd()]
}

fn words(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

fn choice(name: &str, values: &[(&str, Option<&[&str]>)], default: &str, help: &str) -> ParamDef {
    ParamDef::Choice {
        name: name.to_string(),
        values: values
            .iter()
            .map(|(value, args)| ChoiceValue {
                value: value.to_string(),
                args: args.map(words),
            })
            .collect(),
        default: default.to_string(),
        help: help.to_string(),
    }
}

fn integer(name: &str, min: i64, max: i64, default: i64, help: &str) -> ParamDef {
    ParamDef::Integer {
        name: name.to_string(),
        min,
        max,
        default,
        help: help.to_string(),
    }
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// restic's restore of the latest backup of this name into `{restore}`, with `more`.
fn restic_restore(more: &[&str]) -> Vec<String> {
    let mut line = words(&[
        "restic",
        "restore",
        "latest",
        "--tag",
        "{archive}",
        "--repo",
        "{repo}",
        "--target",
        "{restore}",
    ]);
    line.extend(words(more));
    line
}

/// restic: a repository of format 2 (compressed), progress from its JSON status lines.
fn restic() -> ToolDefinition {
    ToolDefinition {
        name: "restic".to_string(),
        shape: ToolShape::Repository,
        version: vec![words(&["restic", "version"])],
        env: env(&[
            ("RESTIC_PASSWORD", "{password}"),
            ("RESTIC_PROGRESS_FPS", "4"),
            ("RESTIC_CACHE_DIR", "{home}/cache"),
        ]),
        init: vec![words(&[
            "restic",
            "init",
            "--quiet",
            "--repo",
            "{repo}",
            "--repository-version",
            "2",
        ])],
        backup: vec![words(&[
            "restic",
            "backup",
            "--json",
            "--repo",
            "{repo}",
            "--host",
            "backlab",
            "--compression",
            "{compression}",
            "--pack-size",
            "{pack_size}",
            "--tag",
            "{archive}",
            "{source}",
        ])],
        restore: vec![restic_restore(&[])],
        restore_one: vec![restic_restore(&["--include", "/{one}"])],
        retention: vec![words(&[
            "restic",
            "forget",
            "--quiet",
            "--repo",
            "{repo}",
            "--keep-last",
            "{keep}",
            "--prune",
        ])],
        check: vec![words(&["restic", "check", "--quiet", "--repo", "{repo}"])],
        check_data: vec![words(&[
            "restic",
            "check",
            "--quiet",
            "--repo",
            "{repo}",
            "--read-data",
        ])],
        list: vec![words(&[
            "restic",
            "list",
            "snapshots",
            "--quiet",
            "--repo",
            "{repo}",
        ])],
        index: words(&["{repo}/index"]),
        progress: ProgressFrom::ResticJson,
        changed_status: None,
        params: vec![
            choice(
                "compression",
                &[("off", None), ("auto", None), ("max", None)],
                "auto",
                "restic's --compression: off, auto (fast zstd) or max (slow zstd)",
            ),
            integer(
                "pack_size",
                4,
                128,
                16,
                "restic's --pack-size in MiB: the size of the files it writes",
            ),
        ],
        shell: false,
        s3: Some(S3Repository {
            repo: "s3:{s3_endpoint}/{s3_bucket}/{s3_key}".to_string(),
            env: [
                ("AWS_ACCESS_KEY_ID", "{s3_access_key}"),
                ("AWS_SECRET_ACCESS_KEY", "{s3_secret_key}"),
                ("AWS_DEFAULT_REGION", "{s3_region}"),
            ]
            .into_iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect(),
        }),
    }
}

/// borg: an encrypted repository, progress from its JSON log lines; its restore extracts
/// into the working directory, which the lab sets to the restore directory.
fn borg() -> ToolDefinition {
    ToolDefinition {
        name: "borg".to_string(),
        shape: ToolShape::Repository,
        version: vec![words(&["borg", "--version"])],
        env: env(&[
            ("BORG_PASSPHRASE", "{password}"),
            ("BORG_BASE_DIR", "{home}"),
            ("BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK", "yes"),
            ("BORG_RELOCATED_REPO_ACCESS_IS_OK", "yes"),
        ]),
        init: vec![words(&[
            "borg",
            "init",
            "--encryption",
            "{encryption}",
            "{repo}",
        ])],
        backup: vec![words(&[
            "borg",
            "create",
            "--log-json",
            "--progress",
            "--compression",
            "{compression}",
            "--chunker-params",
            "buzhash,19,23,{chunk_bits},4095",
            "--timestamp",
            "{time}",
            "{repo}::{archive}",
            "{source}",
        ])],
        restore: vec![words(&["borg", "extract", "{repo}::{archive}"])],
        restore_one: vec![words(&["borg", "extract", "{repo}::{archive}", "{one}"])],
        // borg 1.2 frees space only when asked: `compact` after `prune`.
        retention: vec![
            words(&["borg", "prune", "--keep-last", "{keep}", "{repo}"]),
            words(&["borg", "compact", "{repo}"]),
        ],
        check: vec![words(&["borg", "check", "{repo}"])],
        check_data: vec![words(&["borg", "check", "--verify-data", "{repo}"])],
        list: vec![words(&["borg", "list", "--short", "{repo}"])],
        index: words(&["{repo}/index.*", "{repo}/hints.*", "{home}/.cache/borg"]),
        progress: ProgressFrom::BorgJson,
        changed_status: None,
        params: vec![
            choice(
                "compression",
                &[
                    ("none", Some(&["none"])),
                    ("lz4", Some(&["lz4"])),
                    ("zstd", Some(&["zstd,{level}"])),
                ],
                "lz4",
                "borg's --compression: none, lz4, or zstd at `level`",
            ),
            integer("level", 1, 22, 3, "the zstd level when compression is zstd"),
            choice(
                "encryption",
                &[
                    ("repokey", None),
                    ("repokey-blake2", None),
                    ("authenticated", None),
                    ("none", None),
                ],
                "repokey",
                "borg init's --encryption",
            ),
            integer(
                "chunk_bits",
                19,
                23,
                21,
                "the chunker's hash mask bits: chunks average 2^bits bytes",
            ),
        ],
        shell: false,
        s3: None,
    }
}

/// GNU tar's exit status when a file changed while it read it ("file changed as we read
/// it"), a warning of its own.
const TAR_FILE_CHANGED: i32 = 1;

/// tar's backup: a stream to standard output, with a snapshot file in the run's home so a
/// second backup is an incremental one (`--listed-incremental`).
fn tar_create() -> Vec<String> {
    words(&[
        "tar",
        "--create",
        "--file",
        "-",
        "--listed-incremental",
        "{home}/tar.snar",
        "{source}",
    ])
}

/// tar's restore of the stream kept in `{stream}` into `{restore}`, decompressing with
/// `filter` (`--gzip`), of `members` only when given.
fn tar_extract(filter: Option<&str>, members: &[&str]) -> Vec<String> {
    let mut line = words(&["tar", "--extract"]);
    line.extend(filter.map(str::to_string));
    line.extend(words(&["--file", "{stream}", "--directory", "{restore}"]));
    line.extend(words(members));
    line
}

/// tar alone: one uncompressed stream.
fn tar() -> ToolDefinition {
    ToolDefinition {
        name: "tar".to_string(),
        shape: ToolShape::Stream,
        version: vec![words(&["tar", "--version"])],
        env: BTreeMap::new(),
        init: Vec::new(),
        backup: vec![tar_create()],
        restore: vec![tar_extract(None, &[])],
        restore_one: vec![tar_extract(None, &["{one}"])],
        retention: Vec::new(),
        check: Vec::new(),
        check_data: Vec::new(),
        list: Vec::new(),
        index: Vec::new(),
        progress: ProgressFrom::ProcessIo,
        changed_status: Some(TAR_FILE_CHANGED),
        params: Vec::new(),
        shell: false,
        s3: None,
    }
}

/// tar into gzip at a level.
fn tar_gzip() -> ToolDefinition {
    ToolDefinition {
        name: "tar-gzip".to_string(),
        shape: ToolShape::Stream,
        version: vec![words(&["tar", "--version"]), words(&["gzip", "--version"])],
        env: BTreeMap::new(),
        init: Vec::new(),
        backup: vec![tar_create(), words(&["gzip", "-{level}", "--stdout"])],
        restore: vec![tar_extract(Some("--gzip"), &[])],
        restore_one: vec![tar_extract(Some("--gzip"), &["{one}"])],
        retention: Vec::new(),
        check: Vec::new(),
        check_data: Vec::new(),
        list: Vec::new(),
        index: Vec::new(),
        progress: ProgressFrom::ProcessIo,
        changed_status: Some(TAR_FILE_CHANGED),
        params: vec![integer("level", 1, 9, 6, "gzip's level")],
        shell: false,
        s3: None,
    }
}

/// tar into zstd at a level, with a number of compression threads.
fn tar_zstd() -> ToolDefinition {
    ToolDefinition {
        name: "tar-zstd".to_string(),
        shape: ToolShape::Stream,
        version: vec![words(&["tar", "--version"]), words(&["zstd", "--version"])],
        env: BTreeMap::new(),
        init: Vec::new(),
        backup: vec![
            tar_create(),
            words(&["zstd", "-{level}", "-T{threads}", "--quiet", "--stdout"]),
        ],
        restore: vec![tar_extract(Some("--zstd"), &[])],
        restore_one: vec![tar_extract(Some("--zstd"), &["{one}"])],
        retention: Vec::new(),
        check: Vec::new(),
        check_data: Vec::new(),
        list: Vec::new(),
        index: Vec::new(),
        progress: ProgressFrom::ProcessIo,
        changed_status: Some(TAR_FILE_CHANGED),
        params: vec![
            integer("level", 1, 19, 3, "zstd's level"),
            integer(
                "threads",
                1,
                64,
                1,
                "zstd's compression threads (-T): 1 is one core",
            ),
        ],
        shell: false,
        s3: None,
    }
}
