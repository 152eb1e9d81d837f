//! `backlab lmdd`: the storage guide's commands as written, on real files: a write that keeps
//! its file and moves whole blocks, a read of it, a copy, lmdd's output pattern (`opat=1`) in
//! every word of the file, and lmdd's line with its MB of 2^20 bytes.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::support::cli::{backlab, output, stderr, stdout};
use crate::support::fixtures::scratch;

/// `497.00 MB in 5.83 secs, 85.29 MB/sec`: the MB, the seconds and the rate.
fn lmdd_line(text: &str) -> (f64, f64, f64) {
    let line =
        Regex::new(r"^(\d+\.\d\d) MB in (\d+\.\d\d) secs, (\d+\.\d\d) MB/sec\n$").expect("regex");
    let captures = line
        .captures(text)
        .unwrap_or_else(|| panic!("not lmdd's line: {text:?}"));
    let number = |index: usize| captures[index].parse::<f64>().expect("number");
    (number(1), number(2), number(3))
}

/// Runs `backlab lmdd of=DIR/NAME` with `operands`, which must succeed; the file and lmdd's
/// line.
fn write(dir: &Path, name: &str, operands: &[&str]) -> (PathBuf, String) {
    let file = dir.join(name);
    let of = format!("of={}", file.display());
    let write = output(backlab().arg("lmdd").arg(&of).args(operands));
    assert!(write.status.success(), "{}", stderr(&write));
    (file, stdout(&write))
}

#[test]
fn the_guides_write_and_read_work_as_written() {
    let dir = scratch();
    // 50m of 7m blocks: 7 whole blocks, 49 MB, as lmdd moves them.
    let (file, line) = write(dir.path(), "testfile", &["bs=7m", "move=50m", "direct=1"]);
    let (mb, secs, rate) = lmdd_line(&line);
    assert_eq!(mb, 49.0);
    // The seconds are printed rounded to hundredths, the rate from the unrounded time.
    assert!(
        rate > 0.0 && (mb / rate - secs).abs() <= 0.0051,
        "{mb} MB at {rate} MB/sec is not {secs} s"
    );
    assert_eq!(
        std::fs::metadata(&file).expect("the file is kept").len(),
        (7 * 7) << 20
    );

    let input = format!("if={}", file.display());
    let read = output(backlab().args(["lmdd", &input, "bs=7m", "move=500m", "direct=1"]));
    assert!(read.status.success(), "{}", stderr(&read));
    let (mb, _, _) = lmdd_line(&stdout(&read));
    assert_eq!(mb, 49.0, "a read ends with the file");

    let copy = dir.path().join("copy");
    let out = format!("of={}", copy.display());
    let copied = output(backlab().args(["lmdd", &input, &out, "bs=1m"]));
    assert!(copied.status.success(), "{}", stderr(&copied));
    assert_eq!(lmdd_line(&stdout(&copied)).0, 49.0);
    assert_eq!(
        std::fs::read(&copy).expect("copy"),
        std::fs::read(&file).expect("original"),
        "a copy is byte for byte"
    );
}

#[test]
fn the_internal_input_writes_one_incompressible_block_over_and_over() {
    let dir = scratch();
    let (file, _) = write(dir.path(), "internal", &["bs=64k", "count=6", "direct=1"]);
    let bytes = std::fs::read(&file).expect("the file is kept");
    assert_eq!(bytes.len(), 6 * (64 << 10));
    let mut blocks = bytes.chunks_exact(64 << 10);
    let first = blocks.next().expect("a block");
    for (index, block) in blocks.enumerate() {
        assert!(block == first, "block {} is not the first again", index + 1);
    }
    let mut seen = [false; 256];
    for &byte in first {
        seen[usize::from(byte)] = true;
    }
    let values = seen.iter().filter(|&&seen| seen).count();
    assert!(values > 250, "the block holds only {values} byte values");
}

#[test]
fn opat_writes_lmdds_offset_pattern_in_every_word() {
    let dir = scratch();
    let (file, _) = write(
        dir.path(),
        "pattern",
        &["bs=64k", "count=5", "direct=1", "opat=1"],
    );
    let bytes = std::fs::read(&file).expect("the file is kept");
    assert_eq!(bytes.len(), 5 * (64 << 10));
    for (index, word) in bytes.chunks_exact(4).enumerate() {
        let value = u32::from_le_bytes(word.try_into().expect("4 bytes"));
        assert_eq!(value as usize, 4 * index, "word {index}");
    }

    let input = format!("if={}", file.display());
    let refused = output(backlab().args(["lmdd", &input, "bs=64k", "opat=1"]));
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("opat=1 writes a pattern: give of=FILE"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn bad_operands_are_named_and_nothing_is_written() {
    let dir = scratch();
    let file = dir.path().join("never");
    let of = format!("of={}", file.display());
    let out = output(backlab().args(["lmdd", &of, "bs=5000", "direct=1", "speed=9"]));
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(message.contains("speed: not an lmdd operand"), "{message}");
    assert!(
        message.contains("O_DIRECT needs a multiple of 4k"),
        "{message}"
    );
    assert!(
        message.contains("needs move=SIZE or count=BLOCKS"),
        "{message}"
    );
    assert!(!file.exists());
}
