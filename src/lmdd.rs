//! `backlab lmdd`: lmdd's command line on backlab's engine, so the storage guides' commands
//! (`lmdd of=/export/bds/testfile bs=7m move=500m direct=1`) work as written and print what
//! lmdd prints: `497.00 MB in 5.83 secs, 85.29 MB/sec`. lmdd's MB is 2^20 bytes, and `move`
//! moves whole blocks only (500m of 7m blocks is 71 blocks, 497 MB).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::engine::plan::{RunParams, RunPlan, SourcePlan, TargetPlan};
use crate::engine::result::{RunResult, RunStatus};
use crate::engine::test_kind::TestKind;
use crate::engine::{self, EngineSettings, RunControl};
use crate::size::parse_size;

/// lmdd's default block size.
const DEFAULT_BLOCK: u64 = 8 << 10;
/// lmdd's one buffer: a block is read (or generated), then written, in turn on one thread.
const BUFFERS: u32 = 1;
/// The alignment O_DIRECT needs of a block.
const DIRECT_ALIGN: u64 = 4096;

/// An lmdd command line, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Lmdd {
    /// `if=`: the file read.
    pub input: Option<PathBuf>,
    /// `of=`: the file written, kept afterwards.
    pub output: Option<PathBuf>,
    /// `bs=`: bytes a request moves.
    pub block_size: u64,
    /// Bytes to move: whole blocks; `None` reads the input to its end.
    pub bytes: Option<u64>,
    /// `direct=1`: O_DIRECT on both files.
    pub direct: bool,
    /// `fsync=1`: flush the output at the end, inside the timed window.
    pub fsync: bool,
    /// `opat=1`: the writer fills each block with lmdd's offset pattern just before its write.
    pub pattern: bool,
}

impl Lmdd {
    /// Reads `key=value` operands as lmdd does: `if`, `of`, `bs`, `move`, `count`, `direct`,
    /// `fsync`, `opat`. Every bad operand is named.
    pub fn parse(operands: &[String]) -> Result<Lmdd, String> {
        let mut lmdd = Lmdd {
            input: None,
            output: None,
            block_size: DEFAULT_BLOCK,
            bytes: None,
            direct: false,
            fsync: false,
            pattern: false,
        };
        let (mut moved, mut count) = (None, None);
        let mut problems = Vec::new();
        for operand in operands {
            let Some((key, value)) = operand.split_once('=') else {
                problems.push(format!("{operand}: write operands as key=value"));
                continue;
            };
            let flag = |value: &str| match value {
                "1" => Ok(true),
                "0" => Ok(false),
                _ => Err(format!("{key}={value}: give 0 or 1")),
            };
            let result = match key {
                "if" => {
                    lmdd.input = Some(PathBuf::from(value));
                    Ok(())
                }
                "of" => {
                    lmdd.output = Some(PathBuf::from(value));
                    Ok(())
                }
                "bs" => parse_size(value).map(|bytes| lmdd.block_size = bytes),
                "move" => parse_size(value).map(|bytes| moved = Some(bytes)),
                "count" => value
                    .parse::<u64>()
                    .map(|blocks| count = Some(blocks))
                    .map_err(|_| format!("count={value}: give a number of blocks")),
                "direct" => flag(value).map(|on| lmdd.direct = on),
                "fsync" => flag(value).map(|on| lmdd.fsync = on),
                "opat" => flag(value).map(|on| lmdd.pattern = on),
                _ => Err(format!(
                    "{key}: not an lmdd operand here (if, of, bs, move, count, direct, fsync, opat)"
                )),
            };
            if let Err(problem) = result {
                problems.push(problem);
            }
        }
        if lmdd.block_size == 0 {
            problems.push("bs must be more than 0".to_string());
        } else if lmdd.direct && !lmdd.block_size.is_multiple_of(DIRECT_ALIGN) {
            problems.push(format!(
                "bs={} with direct=1: O_DIRECT needs a multiple of 4k",
                lmdd.block_size
            ));
        }
        lmdd.bytes = match (moved, count) {
            (Some(_), Some(_)) => {
                problems.push("give move= or count=, not both".to_string());
                None
            }
            (Some(bytes), None) => Some(bytes / lmdd.block_size.max(1) * lmdd.block_size),
            (None, Some(blocks)) => Some(blocks.saturating_mul(lmdd.block_size)),
            (None, None) => None,
        };
        if lmdd.input.is_some() && lmdd.input == lmdd.output {
            problems.push("if= and of= name the same file: it would be emptied first".to_string());
        }
        if lmdd.pattern && lmdd.output.is_none() {
            problems.push("opat=1 writes a pattern: give of=FILE".to_string());
        } else if lmdd.pattern && !lmdd.block_size.is_multiple_of(4) {
            problems.push(format!(
                "bs={} with opat=1: the pattern needs a multiple of 4 bytes",
                lmdd.block_size
            ));
        }
        if lmdd.input.is_none() && lmdd.output.is_none() {
            problems.push("give if=FILE to read, of=FILE to write, or both to copy".to_string());
        }
        if lmdd.input.is_none() && lmdd.bytes.is_none() {
            problems.push("writing generated data needs move=SIZE or count=BLOCKS".to_string());
        }
        if lmdd.bytes == Some(0) {
            problems.push("move= is less than one block: nothing to move".to_string());
        }
        if problems.is_empty() {
            Ok(lmdd)
        } else {
            Err(problems.join("; "))
        }
    }

    /// The run that does what the command asks: a read of the input, a write of generated
    /// data to the output, or a copy, on one stream with the page cache left as it is. As in
    /// lmdd, one buffer is read (or, with no input, generated once) and written in turn, and
    /// the internal input writes that one block over and over.
    pub fn plan(&self) -> RunPlan {
        let test = match (&self.input, &self.output) {
            (Some(_), None) => TestKind::ReadSingle,
            (None, _) => TestKind::TapeWrite,
            (Some(_), Some(_)) => TestKind::FullBackup,
        };
        RunPlan {
            test,
            params: RunParams {
                buffers: BUFFERS,
                block_size: self.block_size,
                streams: 1,
                direct: self.direct,
                cold_cache: false,
                fsync: self.fsync,
                compress_ratio: 1.0,
                match_source: false,
                size: self.bytes,
                duration_s: None,
                time_based: false,
                until_steady: false,
                source_rate_mb_s: None,
                clients: None,
                link_mb_s: None,
                part_size: None,
                concurrency: None,
                generation: None,
                tool: None,
                life: None,
                ladder: None,
            },
            source: match &self.input {
                Some(path) => SourcePlan::Paths(vec![path.clone()]),
                // lmdd's internal input: one incompressible block, written over and over.
                None => SourcePlan::Generated {
                    size: self.bytes.unwrap_or_default(),
                    compress_ratio: 1.0,
                    repeat: true,
                    dedup: None,
                    generations: None,
                },
            },
            target: match &self.output {
                Some(path) => TargetPlan::named_file(path.clone(), self.pattern),
                None => TargetPlan::discard(),
            },
            agents: Vec::new(),
        }
    }
}

/// lmdd's line for a run: MB of 2^20 bytes, seconds, MB/sec.
pub fn line(result: &RunResult) -> String {
    let mb = result.bytes as f64 / (1u64 << 20) as f64;
    let rate = if result.seconds > 0.0 {
        mb / result.seconds
    } else {
        0.0
    };
    format!("{mb:.2} MB in {:.2} secs, {rate:.2} MB/sec", result.seconds)
}

/// Runs the command: the line on stdout, warnings and errors on stderr.
pub fn main(operands: &[String]) -> std::process::ExitCode {
    use std::process::ExitCode;
    let lmdd = match Lmdd::parse(operands) {
        Ok(lmdd) => lmdd,
        Err(problems) => {
            eprintln!("backlab lmdd: {problems}");
            return ExitCode::from(2);
        }
    };
    let plan = lmdd.plan();
    let settings = EngineSettings {
        allow_devices: Vec::new(),
        network: None,
        // lmdd reads or writes a file; it never restores.
        restore_dir: PathBuf::from("."),
        object_stores: Default::default(),
        upload_journal: None,
        object_owner: crate::engine::target::s3::process_owner(),
        tools: Default::default(),
        max_run: None,
    };
    let problems = engine::preflight::check(std::slice::from_ref(&plan), &settings);
    if !problems.is_empty() {
        eprintln!("backlab lmdd: {problems}");
        return ExitCode::from(2);
    }
    let cancel = AtomicBool::new(false);
    let control = RunControl {
        cancel: &cancel,
        progress: &|_| {},
    };
    let result = engine::execute(&plan, &settings, &control);
    for warning in &result.warnings {
        eprintln!("backlab lmdd: {warning}");
    }
    if result.status != RunStatus::Done {
        eprintln!(
            "backlab lmdd: {}",
            result.error.as_deref().unwrap_or("the run did not finish")
        );
        return ExitCode::FAILURE;
    }
    println!("{}", line(&result));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operands(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_guides_command_moves_whole_blocks() {
        let lmdd = Lmdd::parse(&operands(
            "of=/export/bds/testfile bs=7m move=500m direct=1",
        ))
        .expect("valid");
        assert_eq!(lmdd.block_size, 7 << 20);
        assert_eq!(lmdd.bytes, Some(71 * (7 << 20)), "71 blocks of 7m: 497 MB");
        assert!(lmdd.direct && !lmdd.fsync);
        let plan = lmdd.plan();
        assert_eq!(plan.test, TestKind::TapeWrite);
        assert_eq!(
            plan.target,
            TargetPlan::named_file(PathBuf::from("/export/bds/testfile"), false)
        );
        let read = Lmdd::parse(&operands(
            "if=/export/bds/testfile bs=7m move=500m direct=1",
        ))
        .expect("valid");
        assert_eq!(read.plan().test, TestKind::ReadSingle);
        assert_eq!(read.plan().target, TargetPlan::discard());
    }

    #[test]
    fn lmdd_prints_mb_of_2_to_the_20() {
        let mut result = RunResult::failed(
            TestKind::TapeWrite,
            Lmdd::parse(&operands("of=x bs=7m move=500m"))
                .expect("valid")
                .plan()
                .params,
            String::new(),
        );
        result.bytes = 71 * (7 << 20);
        result.seconds = 5.83;
        assert_eq!(line(&result), "497.00 MB in 5.83 secs, 85.25 MB/sec");
    }

    #[test]
    fn bad_operands_are_all_named() {
        let problems =
            Lmdd::parse(&operands("of=x bs=5000 direct=1 speed=9 count=z")).expect_err("bad");
        assert!(
            problems.contains("speed: not an lmdd operand"),
            "{problems}"
        );
        assert!(
            problems.contains("count=z: give a number of blocks"),
            "{problems}"
        );
        assert!(
            problems.contains("O_DIRECT needs a multiple of 4k"),
            "{problems}"
        );
        assert!(
            problems.contains("needs move=SIZE or count=BLOCKS"),
            "{problems}"
        );
    }
}
