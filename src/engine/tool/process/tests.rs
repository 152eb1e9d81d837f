//! Real programs, run and measured: coreutils, gzip and sh, as any Linux host has them.

use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::lines::{LINE_MAX_BYTES, TAIL_BYTES, TAIL_LINES};
use super::*;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn launch(stages: &[&[&str]], stdout: Output) -> Launch {
    Launch {
        stages: stages.iter().map(|argv| Stage::new(argv.iter())).collect(),
        dir: std::env::temp_dir(),
        env: vec![("PATH".into(), PATH.into())],
        stdout,
        on_line: None,
        sample_every: Duration::from_millis(50),
        grace: Duration::from_secs(2),
        secrets: Vec::new(),
    }
}

fn run(launch: Launch) -> Finished {
    Running::spawn(launch).expect("spawned").wait(
        &AtomicBool::new(false),
        Some(Instant::now() + Duration::from_secs(60)),
    )
}

/// Lines of one stream, collected by the launch's handler.
fn collect(launch: &mut Launch, wanted: Stream) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let into = lines.clone();
    launch.on_line = Some(Box::new(move |stream, line| {
        if stream == wanted {
            lock(&into).push(line.to_string());
        }
    }));
    lines
}

/// Counts the bytes read through it.
struct Counted<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.bytes += read as u64;
        Ok(read)
    }
}

#[test]
fn a_pipeline_hands_its_output_to_the_caller_and_counts_every_stage() {
    let mut running = Running::spawn(launch(
        &[&["head", "-c", "50000000", "/dev/zero"], &["gzip", "-1"]],
        Output::Hand,
    ))
    .expect("spawned");
    let stdout = running.take_stdout().expect("the last stage's output");
    assert!(running.take_stdout().is_none(), "handed over once");
    let reader = thread::spawn(move || {
        let mut counted = Counted {
            inner: stdout,
            bytes: 0,
        };
        let unpacked = io::copy(
            &mut flate2::read::GzDecoder::new(&mut counted),
            &mut io::sink(),
        )
        .map_err(|error| error.to_string());
        let _ = io::copy(&mut counted, &mut io::sink());
        (unpacked, counted.bytes)
    });
    let finished = running.wait(&AtomicBool::new(false), None);
    let (unpacked, compressed) = reader.join().expect("reader");

    assert_eq!(
        finished.ended,
        Ended::Exited {
            codes: vec![StageExit::Code(0); 2]
        }
    );
    assert!(finished.succeeded() && finished.failure().is_none());
    assert_eq!(finished.programs, ["head", "gzip"]);
    assert_eq!(unpacked, Ok(50_000_000));
    assert!(
        compressed > 0 && compressed < 50_000_000 / 10,
        "{compressed}"
    );
    let totals = finished.samples.last().expect("a final sample");
    assert_eq!(totals.t_s, finished.wall.as_secs_f64());
    // head reads 50 MB from /dev/zero and gzip reads them from the pipe; head writes them,
    // gzip writes what it made of them.
    assert!(totals.rchar >= 100_000_000, "{totals:?}");
    assert!(totals.wchar >= 50_000_000 + compressed, "{totals:?}");
    assert_eq!(finished.survivors, 0);
}

#[test]
fn a_busy_program_uses_cpu_within_what_the_machine_has() {
    let mut launch = launch(
        &[&["head", "-c", "200000000", "/dev/zero"], &["sha256sum"]],
        Output::Lines,
    );
    let lines = collect(&mut launch, Stream::Stdout);
    let finished = run(launch);
    assert!(finished.succeeded(), "{:?}", finished.failure());
    let hash = lock(&lines).clone();
    assert_eq!(hash.len(), 1, "{hash:?}");
    assert!(
        hash[0].ends_with("  -") && hash[0].len() == 64 + 3,
        "{hash:?}"
    );
    assert_eq!(finished.stdout_tail, hash[0]);

    let cpu_s = finished.cpu_user_s + finished.cpu_system_s;
    let cores = tree::online_cores();
    let wall_s = finished.wall.as_secs_f64();
    assert!(finished.cpu_user_s > 0.0, "{finished:?}");
    assert!(
        cpu_s <= wall_s * cores,
        "{cpu_s} s of CPU in {wall_s} s on {cores} cores"
    );
    assert!(
        finished.busiest_thread_cpu_s > 0.0 && finished.busiest_thread_cpu_s <= cpu_s + 0.02,
        "busiest thread {} s of {cpu_s} s",
        finished.busiest_thread_cpu_s
    );
    assert!(finished.max_cores_used > 0.0 && finished.max_cores_used <= cores);
    assert!(finished.peak_rss_bytes > 0);

    let samples = &finished.samples;
    assert!(samples.len() >= 2, "{samples:?}");
    for pair in samples.windows(2) {
        assert!(pair[1].t_s > pair[0].t_s, "{pair:?}");
        assert!(pair[1].rchar >= pair[0].rchar, "{pair:?}");
        let cpu = |sample: &TreeSample| sample.cpu_user_s + sample.cpu_system_s;
        assert!(cpu(&pair[1]) >= cpu(&pair[0]), "{pair:?}");
    }
    let last = samples.last().expect("final sample");
    assert_eq!(last.cpu_user_s + last.cpu_system_s, cpu_s);
    assert!(last.rchar >= 400_000_000, "{last:?}");
    if let Some(pressure) = finished.pressure {
        for pct in [
            pressure.cpu_some_pct,
            pressure.io_some_pct,
            pressure.io_full_pct,
        ] {
            assert!((0.0..=100.0).contains(&pct), "{pressure:?}");
        }
    }
}

#[test]
fn a_file_read_by_cat_counts_in_the_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("twenty");
    std::fs::write(&file, vec![7u8; 20 << 20]).expect("written");
    let path = file.to_str().expect("utf-8 path");
    let finished = run(launch(&[&["cat", path]], Output::Discard));
    assert!(finished.succeeded(), "{:?}", finished.failure());
    let totals = finished.samples.last().expect("final sample");
    assert!(totals.rchar >= 20 << 20, "{totals:?}");
    assert!(totals.wchar >= 20 << 20, "{totals:?}");
}

#[test]
fn a_program_that_ignores_term_is_killed_after_the_grace() {
    let mut launch = launch(
        &[&[
            "sh",
            "-c",
            "trap '' TERM; echo ready; sleep 100; echo not reached",
        ]],
        Output::Lines,
    );
    let grace = Duration::from_millis(300);
    launch.grace = grace;
    let cancel = Arc::new(AtomicBool::new(false));
    let cancelled_at = Arc::new(Mutex::new(None));
    let (switch, at) = (cancel.clone(), cancelled_at.clone());
    // Cancelled once the shell ignores TERM, so TERM alone cannot end it.
    launch.on_line = Some(Box::new(move |_, line| {
        if line == "ready" {
            *lock(&at) = Some(Instant::now());
            switch.store(true, Ordering::Relaxed);
        }
    }));
    let running = Running::spawn(launch).expect("spawned");
    let pgid = running.pgid();
    let finished = running.wait(&cancel, Some(Instant::now() + Duration::from_secs(60)));
    let elapsed = lock(&cancelled_at).expect("ready was seen").elapsed();

    assert_eq!(finished.ended, Ended::Cancelled);
    assert!(elapsed >= grace, "ended {elapsed:?} after the cancel");
    assert!(elapsed < grace + Duration::from_secs(1), "{elapsed:?}");
    assert_eq!(finished.survivors, 0);
    assert_eq!(live_members(pgid), 0, "a process of the group is left");
    assert!(!finished.stdout_tail.contains("not reached"));
    assert_eq!(finished.failure().as_deref(), Some("sh was cancelled"));
    assert!(!finished.succeeded());
}

#[test]
fn a_deadline_ends_a_program_with_term() {
    let mut launch = launch(&[&["sleep", "100"]], Output::Discard);
    launch.grace = Duration::from_secs(5);
    let running = Running::spawn(launch).expect("spawned");
    let pgid = running.pgid();
    let finished = running.wait(
        &AtomicBool::new(false),
        Some(Instant::now() + Duration::from_millis(200)),
    );
    assert_eq!(finished.ended, Ended::Deadline);
    // sleep obeys TERM: it never waited for the kill.
    assert!(
        finished.wall < Duration::from_secs(5),
        "{:?}",
        finished.wall
    );
    assert_eq!(live_members(pgid), 0);
    let failure = finished.failure().expect("a failure");
    assert!(
        failure.starts_with("sleep was stopped at its deadline"),
        "{failure}"
    );
}

#[test]
fn a_process_a_stage_leaves_behind_is_ended() {
    let running = Running::spawn(launch(
        &[&["sh", "-c", "sleep 100 & echo started"]],
        Output::Discard,
    ))
    .expect("spawned");
    let pgid = running.pgid();
    let finished = running.wait(&AtomicBool::new(false), None);
    assert!(finished.succeeded(), "{:?}", finished.failure());
    assert!(
        finished.wall < Duration::from_secs(50),
        "{:?}",
        finished.wall
    );
    assert_eq!(live_members(pgid), 0);
}

#[test]
fn a_run_dropped_without_wait_leaves_nothing() {
    let running = Running::spawn(launch(
        &[&["sh", "-c", "sleep 100 & sleep 100"]],
        Output::Discard,
    ))
    .expect("spawned");
    let pgid = running.pgid();
    drop(running);
    assert_eq!(live_members(pgid), 0);
}

#[test]
fn a_stage_dies_with_the_thread_that_spawned_it() {
    // The run outlives the thread that started it, as it would if that thread died.
    let running = thread::spawn(|| Running::spawn(launch(&[&["sleep", "100"]], Output::Discard)))
        .join()
        .expect("spawning thread")
        .expect("spawned");
    let finished = running.wait(
        &AtomicBool::new(false),
        Some(Instant::now() + Duration::from_secs(20)),
    );
    assert_eq!(
        finished.ended,
        Ended::Exited {
            codes: vec![StageExit::Signal(libc::SIGKILL)]
        }
    );
    assert_eq!(
        finished.failure().as_deref(),
        Some("sleep was ended by signal 9 (SIGKILL) (it wrote no error output)")
    );
}

#[test]
fn a_missing_program_is_named_and_nothing_starts() {
    let error = Running::spawn(launch(
        &[
            &["head", "-c", "1", "/dev/zero"],
            &["backlab-no-such-program", "-x"],
        ],
        Output::Discard,
    ))
    .err()
    .expect("refused");
    assert!(
        matches!(&error, ProcessError::NotFound { program, .. } if program == "backlab-no-such-program"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("the program backlab-no-such-program was not found on PATH ({PATH})")
    );

    // The launch's PATH is searched, not the lab's.
    let mut elsewhere = launch(&[&["ls"]], Output::Discard);
    elsewhere.env = vec![("PATH".into(), "/backlab-nowhere".into())];
    let error = Running::spawn(elsewhere).err().expect("refused");
    assert!(matches!(&error, ProcessError::NotFound { program, .. } if program == "ls"));

    let mut no_path = launch(&[&["ls"]], Output::Discard);
    no_path.env.clear();
    let error = Running::spawn(no_path).err().expect("refused");
    assert_eq!(
        error.to_string(),
        "the program ls was not found on PATH (not set)"
    );

    let error = Running::spawn(launch(&[&["/backlab/no/such/program"]], Output::Discard))
        .err()
        .expect("refused");
    assert!(
        matches!(error, ProcessError::NotExecutable { .. }),
        "{error:?}"
    );
    assert!(matches!(
        Running::spawn(launch(&[], Output::Discard)).err(),
        Some(ProcessError::NoStages)
    ));
}

#[test]
fn a_failing_program_shows_the_end_of_its_error_output() {
    let finished = run(launch(&[&["ls", "/backlab-no-such-dir"]], Output::Discard));
    assert_eq!(
        finished.ended,
        Ended::Exited {
            codes: vec![StageExit::Code(2)]
        }
    );
    assert!(!finished.succeeded());
    let failure = finished.failure().expect("a failure");
    assert!(
        failure.starts_with("ls exited with status 2: "),
        "{failure}"
    );
    assert!(failure.contains("/backlab-no-such-dir"), "{failure}");
    assert!(failure.contains("No such file or directory"), "{failure}");
    assert!(finished.stderr_tail.contains("/backlab-no-such-dir"));

    // In a pipeline, the stage that failed is blamed, not the one its exit broke the pipe of.
    let finished = run(launch(
        &[
            &["head", "-c", "100000000", "/dev/zero"],
            &["sh", "-c", "echo broken >&2; exit 3"],
        ],
        Output::Discard,
    ));
    let failure = finished.failure().expect("a failure");
    assert_eq!(failure, "sh exited with status 3: broken");
}

#[test]
fn endless_error_output_is_read_in_bounded_memory() {
    let mut launch = launch(
        &[&[
            "sh",
            "-c",
            "head -c 3000000 /dev/zero >&2; echo >&2; exec yes 0123456789 >&2",
        ]],
        Output::Discard,
    );
    let (lines, longest) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let cancel = Arc::new(AtomicBool::new(false));
    let (count, widest, switch) = (lines.clone(), longest.clone(), cancel.clone());
    launch.on_line = Some(Box::new(move |stream, line| {
        assert_eq!(stream, Stream::Stderr);
        widest.fetch_max(line.len(), Ordering::Relaxed);
        if count.fetch_add(1, Ordering::Relaxed) == 200_000 {
            switch.store(true, Ordering::Relaxed);
        }
    }));
    let finished = Running::spawn(launch).expect("spawned").wait(&cancel, None);
    assert_eq!(finished.ended, Ended::Cancelled);
    assert!(lines.load(Ordering::Relaxed) > 200_000);
    // The 3 MB line was handed on cut to the bound.
    assert_eq!(
        longest.load(Ordering::Relaxed),
        LINE_MAX_BYTES + '…'.len_utf8()
    );
    let tail = &finished.stderr_tail;
    assert!(tail.len() <= TAIL_BYTES + TAIL_LINES, "{}", tail.len());
    assert_eq!(tail.lines().count(), TAIL_LINES);
    // yes may be ended in the middle of a write, cutting its last line short.
    let (last, before) = tail
        .lines()
        .collect::<Vec<_>>()
        .split_last()
        .map(|(last, before)| (last.to_string(), before.to_vec()))
        .expect("lines");
    assert!(before.iter().all(|line| *line == "0123456789"), "{tail}");
    assert!("0123456789".starts_with(&last), "{tail}");
    assert_eq!(finished.stage_stderr_tails, std::slice::from_ref(tail));
}

#[test]
fn the_environment_is_exactly_the_one_given() {
    let mut launch = launch(&[&["env"]], Output::Lines);
    launch.env = vec![
        ("PATH".into(), PATH.into()),
        ("HOME".into(), "/backlab-scratch".into()),
        ("BACKLAB_TEST_MARKER".into(), "lab-1".into()),
    ];
    let lines = collect(&mut launch, Stream::Stdout);
    let finished = run(launch);
    assert!(finished.succeeded(), "{:?}", finished.failure());
    let mut seen = lock(&lines).clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "BACKLAB_TEST_MARKER=lab-1".to_string(),
            "HOME=/backlab-scratch".to_string(),
            format!("PATH={PATH}"),
        ]
    );
}

#[test]
fn the_sweep_kills_a_detached_process_carrying_the_marker() {
    const MARKER: &str = "BACKLAB_SWEEP_TEST";
    let lab = format!("lab-{:016x}", rand::random::<u64>());
    let detached = |value: String| {
        std::process::Command::new("/usr/bin/sleep")
            .arg("100")
            .env_clear()
            .env(MARKER, value)
            .process_group(0)
            .spawn()
            .expect("spawned")
    };
    let mut left = detached(format!("{lab}-run-7"));
    let mut another_labs = detached(format!("other-{lab}"));
    // Until exec, a child's environment is still the test's.
    let since = Instant::now();
    while !(procfs::environ_carries(left.id() as i32, MARKER, &lab)
        && procfs::environ_carries(another_labs.id() as i32, MARKER, "other-"))
    {
        assert!(since.elapsed() < Duration::from_secs(10), "never exec'd");
        thread::sleep(Duration::from_millis(5));
    }

    assert_eq!(
        sweep_leftovers(MARKER, ""),
        0,
        "an empty prefix sweeps nothing"
    );
    assert_eq!(sweep_leftovers(MARKER, &lab), 1);
    let status = left.wait().expect("reaped");
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(
        another_labs.try_wait().expect("status").is_none(),
        "another lab's process was swept"
    );
    another_labs.kill().expect("killed");
    another_labs.wait().expect("reaped");
}

/// Live processes whose command line is exactly `argv` (joined by NULs).
fn processes_running(argv: &[&str]) -> Vec<i32> {
    let wanted = argv.join("\0");
    procfs::pids()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).trim_end_matches('\0') == wanted)
                && procfs::read_stat(&format!("/proc/{pid}/stat"))
                    .is_some_and(|stat| !stat.is_zombie())
        })
        .collect()
}

/// A sleep of a length no other test uses, as its command line shows it.
fn unique_sleep() -> String {
    format!("3003.{}", rand::random::<u32>())
}

/// A process that leaves its process group for a session of its own, with a cleared
/// environment (no marker to find), and keeps the launch's output open: the launch still ends
/// it (where the machine gives a cage), and the lab's read of the output ends.
#[test]
fn a_daemon_in_a_new_session_holding_the_output_is_ended_with_its_launch() {
    if !Cage::available() {
        eprintln!("no cgroup to cage the launch in: the group alone is tested elsewhere");
        return;
    }
    let seconds = unique_sleep();
    let line = format!("setsid env -i sleep {seconds} & echo started");
    let mut running =
        Running::spawn(launch(&[&["sh", "-c", &line]], Output::Hand)).expect("spawned");
    let mut stdout = running.take_stdout().expect("the output");
    let reader = thread::spawn(move || {
        let mut all = String::new();
        let _ = stdout.read_to_string(&mut all);
        all
    });
    let started = Instant::now();
    let finished = running.wait(
        &AtomicBool::new(false),
        Some(Instant::now() + Duration::from_secs(60)),
    );
    assert!(finished.succeeded(), "{:?}", finished.failure());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let read = reader.join().expect("the reader ends");
    assert_eq!(read.trim(), "started");
    assert!(
        processes_running(&["sleep", &seconds]).is_empty(),
        "the daemon outlived its launch"
    );
}

/// What a killed lab's tools left in their cages, however they hid, is ended at the next
/// start; another running lab's cage is left alone.
#[test]
fn the_sweep_ends_what_a_dead_labs_cage_holds() {
    if !Cage::available() {
        eprintln!("no cgroup to cage the launch in");
        return;
    }
    let cage = Cage::new().expect("a cage");
    let seconds = unique_sleep();
    let door = cage.door().as_raw_fd();
    let mut command = std::process::Command::new("/usr/bin/setsid");
    command.args(["sleep", &seconds]).env_clear();
    // SAFETY: only system calls and stack formatting between fork and exec (Cage::join).
    unsafe {
        command.pre_exec(move || Cage::join(BorrowedFd::borrow_raw(door)));
    }
    let mut child = command.spawn().expect("spawned");
    let since = Instant::now();
    while cage.live().is_empty() {
        assert!(since.elapsed() < Duration::from_secs(10), "never caged");
        thread::sleep(Duration::from_millis(5));
    }
    // Its lab is this process, alive: the sweep leaves it.
    sweep_cages();
    assert!(child.try_wait().expect("status").is_none());
    // The same cage under a dead lab's name is swept.
    let dead = cage
        .dir
        .with_file_name(format!("{}999999999-0", cage::PREFIX));
    std::fs::create_dir(&dead).expect("a dead lab's cage");
    std::fs::write(dead.join("cgroup.procs"), child.id().to_string()).expect("moved");
    assert!(sweep_cages() >= 1);
    assert_eq!(child.wait().expect("reaped").signal(), Some(libc::SIGKILL));
    assert!(!dead.exists(), "the dead lab's cage is removed");
}
