//! What Linux says about a process, its threads and the machine in /proc, read without
//! privileges: a process's status line, its I/O counters, its environment, and the pressure
//! stall totals.

use std::fs;

/// The figures of one line of `/proc/PID/stat` (or `/proc/PID/task/TID/stat`) the lab uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ProcStat {
    pub pid: i32,
    /// `R`, `S`, `D`, `Z`, …
    pub state: u8,
    pub ppid: i32,
    pub pgrp: i32,
    /// CPU of the process's own threads, in clock ticks.
    pub utime: u64,
    pub stime: u64,
    /// CPU of its children it has waited for (and theirs), in clock ticks.
    pub cutime: u64,
    pub cstime: u64,
    pub threads: u64,
    /// When it started, in clock ticks after boot: with the pid, it names a process for good.
    pub start_ticks: u64,
    pub rss_pages: u64,
}

impl ProcStat {
    /// Whether it has exited and waits for its parent to collect its status.
    pub(super) fn is_zombie(&self) -> bool {
        matches!(self.state, b'Z' | b'X')
    }
}

/// Reads a stat line; `None` when the process is gone or the line cannot be read.
pub(super) fn read_stat(path: &str) -> Option<ProcStat> {
    parse_stat(&fs::read_to_string(path).ok()?)
}

/// Parses a stat line. The command name (field 2) is in parentheses and may hold spaces and
/// parentheses itself, so the fields are counted from the last `)`.
pub(super) fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // Field n of proc(5) (counted from 1) is fields[n - 3].
    let field = |n: usize| fields.get(n - 3).copied();
    let number = |n: usize| field(n).and_then(|value| value.parse::<u64>().ok());
    // cutime and cstime are signed in the kernel's format; they are never negative in fact.
    let signed = |n: usize| {
        field(n)
            .and_then(|value| value.parse::<i64>().ok())
            .map(|value| value.max(0) as u64)
    };
    Some(ProcStat {
        pid,
        state: *field(3)?.as_bytes().first()?,
        ppid: field(4)?.parse().ok()?,
        pgrp: field(5)?.parse().ok()?,
        utime: number(14)?,
        stime: number(15)?,
        cutime: signed(16)?,
        cstime: signed(17)?,
        threads: signed(20)?,
        start_ticks: number(22)?,
        rss_pages: signed(24)?,
    })
}

/// The I/O counters of `/proc/PID/io`: a process's own and those of the children it has
/// waited for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ProcIo {
    /// Bytes given by read-like calls, from any file, pipe or device, cached or not.
    pub rchar: u64,
    /// Bytes given to write-like calls.
    pub wchar: u64,
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent (or to be sent) to storage.
    pub write_bytes: u64,
}

/// Reads `/proc/PID/io`; `None` when the process is gone or its counters are not readable by
/// the lab (another user's, or a program that made itself undumpable).
pub(super) fn read_io(pid: i32) -> Option<ProcIo> {
    parse_io(&fs::read_to_string(format!("/proc/{pid}/io")).ok()?)
}

fn parse_io(text: &str) -> Option<ProcIo> {
    let mut io = ProcIo::default();
    let mut found = 0;
    for line in text.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match name.trim() {
            "rchar" => &mut io.rchar,
            "wchar" => &mut io.wchar,
            "read_bytes" => &mut io.read_bytes,
            "write_bytes" => &mut io.write_bytes,
            _ => continue,
        };
        *slot = value.trim().parse().ok()?;
        found += 1;
    }
    (found == 4).then_some(io)
}

/// The ids of every process now in /proc.
pub(super) fn pids() -> impl Iterator<Item = i32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid > 0)
}

/// The status of every process of the process group `pgid`, zombies included.
pub(super) fn group_members(pgid: i32) -> Vec<ProcStat> {
    pids()
        .filter_map(|pid| read_stat(&format!("/proc/{pid}/stat")))
        .filter(|stat| stat.pgrp == pgid)
        .collect()
}

/// The status lines of a process's threads.
pub(super) fn threads_of(pid: i32) -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|tid| read_stat(&format!("/proc/{pid}/task/{tid}/stat")))
        .collect()
}

/// Whether the environment `pid` was started with holds `name=VALUE` with VALUE starting with
/// `value_prefix`.
pub(super) fn environ_carries(pid: i32, name: &str, value_prefix: &str) -> bool {
    let Ok(environ) = fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environ.split(|byte| *byte == 0).any(|entry| {
        entry
            .strip_prefix(name.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
            .is_some_and(|value| value.starts_with(value_prefix.as_bytes()))
    })
}

/// The machine's pressure stall totals, in microseconds since boot: how long some task waited
/// for a CPU, and how long some (or every) non-idle task waited for I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PressureTotals {
    pub cpu_some_us: u64,
    pub io_some_us: u64,
    pub io_full_us: u64,
}

/// Reads /proc/pressure/{cpu,io}; `None` where the kernel has no pressure stall information.
pub(super) fn read_pressure() -> Option<PressureTotals> {
    let cpu = fs::read_to_string("/proc/pressure/cpu").ok()?;
    let io = fs::read_to_string("/proc/pressure/io").ok()?;
    Some(PressureTotals {
        cpu_some_us: pressure_total(&cpu, "some")?,
        io_some_us: pressure_total(&io, "some")?,
        io_full_us: pressure_total(&io, "full")?,
    })
}

/// The `total=` of the line starting with `kind` (`some` or `full`).
fn pressure_total(text: &str, kind: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(kind)?.strip_prefix(' '))?
        .split_whitespace()
        .find_map(|pair| pair.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let line = "4242 (a (b) c) S 1 4240 4240 0 -1 4194560 100 0 0 0 \
                    250 30 7 3 20 0 3 0 123456 1000000 512 18446744073709551615";
        let stat = parse_stat(line).expect("parsed");
        assert_eq!(stat.pid, 4242);
        assert_eq!(stat.state, b'S');
        assert_eq!((stat.ppid, stat.pgrp), (1, 4240));
        assert_eq!(
            (stat.utime, stat.stime, stat.cutime, stat.cstime),
            (250, 30, 7, 3)
        );
        assert_eq!(
            (stat.threads, stat.start_ticks, stat.rss_pages),
            (3, 123456, 512)
        );
        assert!(!stat.is_zombie());
        assert_eq!(parse_stat("4242 (cut short) S 1"), None);
    }

    #[test]
    fn this_process_reads_itself() {
        let pid = std::process::id() as i32;
        let stat = read_stat(&format!("/proc/{pid}/stat")).expect("own stat");
        assert_eq!(stat.pid, pid);
        assert!(stat.threads >= 1 && stat.rss_pages > 0);
        assert!(read_io(pid).is_some());
        assert!(threads_of(pid).iter().any(|thread| thread.pid == pid));
    }

    #[test]
    fn pressure_totals_are_read_from_their_lines() {
        let io = "some avg10=0.00 avg60=0.10 avg300=0.05 total=1234\n\
                  full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n";
        assert_eq!(pressure_total(io, "some"), Some(1234));
        assert_eq!(pressure_total(io, "full"), Some(99));
        assert_eq!(pressure_total("some avg10=0.00\n", "some"), None);
    }
}
