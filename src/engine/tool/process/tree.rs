//! A run's process tree measured from outside: what the live members of its process group use
//! now, plus what the members that are gone left behind.
//!
//! Linux adds a child's CPU times and I/O counters to its parent when the parent waits for it,
//! so the tree's totals are the sum over its live members of their own figures and their
//! waited children's, plus the final figures of the stages the lab itself waited for, plus
//! the last figures seen of members that left without a member waiting for them (an orphan
//! collected by init). A member that exits between two scans loses at most the figures of
//! its last interval.

use std::collections::{HashMap, HashSet};

use super::TreeSample;
use super::procfs::{self, ProcIo, ProcStat};

/// Cumulative figures of a process, or of the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Usage {
    pub io: ProcIo,
    pub user_s: f64,
    pub system_s: f64,
}

impl Usage {
    fn add(&mut self, other: &Usage) {
        self.io.rchar += other.io.rchar;
        self.io.wchar += other.io.wchar;
        self.io.read_bytes += other.io.read_bytes;
        self.io.write_bytes += other.io.write_bytes;
        self.user_s += other.user_s;
        self.system_s += other.system_s;
    }

    pub(super) fn cpu_s(&self) -> f64 {
        self.user_s + self.system_s
    }
}

/// A member as last seen.
#[derive(Clone, Copy, Debug)]
struct Member {
    start_ticks: u64,
    ppid: i32,
    usage: Usage,
}

/// The measured state of one run's process tree; the sampler and the waiter share it under one
/// lock, so a stage is counted either live or reaped, never both and never neither.
#[derive(Debug)]
pub(super) struct Tree {
    pgid: i32,
    /// The lab's own children, whose final figures are recorded when the lab reaps them.
    stages: HashSet<i32>,
    /// The members seen at the last scan, by pid.
    members: HashMap<i32, Member>,
    /// The final figures of the stages reaped.
    reaped: Usage,
    /// The last figures of members gone without a member waiting for them.
    departed: Usage,
    /// Live threads, by (tid, start), and their CPU seconds at the last reading.
    threads: HashMap<(i32, u64), f64>,
    /// The CPU seconds of the busiest thread that is gone.
    busiest_gone_s: f64,
    peak_rss_bytes: u64,
    max_cores_used: f64,
    /// The shortest interval counted for `max_cores_used`: CPU times come in clock ticks, so a
    /// short interval would magnify their rounding.
    min_interval_s: f64,
    samples: Vec<TreeSample>,
    tick_s: f64,
    page_bytes: u64,
    cores: f64,
}

impl Tree {
    pub(super) fn new(sample_every_s: f64) -> Tree {
        Tree {
            pgid: 0,
            stages: HashSet::new(),
            members: HashMap::new(),
            reaped: Usage::default(),
            departed: Usage::default(),
            threads: HashMap::new(),
            busiest_gone_s: 0.0,
            peak_rss_bytes: 0,
            max_cores_used: 0.0,
            min_interval_s: sample_every_s / 2.0,
            samples: Vec::new(),
            tick_s: 1.0 / rustix::param::clock_ticks_per_second().max(1) as f64,
            page_bytes: rustix::param::page_size() as u64,
            cores: online_cores(),
        }
    }

    /// Notes a stage just spawned; the first one's pid is the group's id.
    pub(super) fn add_stage(&mut self, pid: i32) {
        if self.stages.is_empty() {
            self.pgid = pid;
        }
        self.stages.insert(pid);
    }

    /// Reads every live member of the group and records a sample at `t_s` seconds after spawn.
    pub(super) fn scan(&mut self, t_s: f64) {
        let found = procfs::group_members(self.pgid);
        let mut live = HashMap::with_capacity(found.len());
        let mut live_threads = HashMap::new();
        let (mut rss_bytes, mut threads) = (0u64, 0u64);
        for stat in &found {
            let known = self
                .members
                .get(&stat.pid)
                .filter(|member| member.start_ticks == stat.start_ticks);
            let io = procfs::read_io(stat.pid)
                .or(known.map(|member| member.usage.io))
                .unwrap_or_default();
            if !stat.is_zombie() {
                rss_bytes += stat.rss_pages * self.page_bytes;
                threads += stat.threads;
            }
            for thread in procfs::threads_of(stat.pid) {
                live_threads.insert(
                    (thread.pid, thread.start_ticks),
                    self.ticks_s(thread.utime + thread.stime),
                );
            }
            live.insert(
                stat.pid,
                Member {
                    start_ticks: stat.start_ticks,
                    ppid: stat.ppid,
                    usage: self.usage(stat, io),
                },
            );
        }
        let gone: Vec<Member> = self
            .members
            .iter()
            .filter(|(pid, member)| {
                !self.stages.contains(pid)
                    && live
                        .get(*pid)
                        .is_none_or(|now: &Member| now.start_ticks != member.start_ticks)
            })
            .map(|(_, member)| *member)
            .collect();
        for member in gone {
            if !self.waited_for_by_member(&member, &live) {
                self.departed.add(&member.usage);
            }
        }
        for (key, cpu_s) in &self.threads {
            if !live_threads.contains_key(key) {
                self.busiest_gone_s = self.busiest_gone_s.max(*cpu_s);
            }
        }
        for (key, cpu_s) in live_threads.iter_mut() {
            // A thread's CPU never goes back; a reading at reaping may have been later.
            *cpu_s = cpu_s.max(self.threads.get(key).copied().unwrap_or(0.0));
        }
        self.threads = live_threads;
        self.members = live;
        self.peak_rss_bytes = self.peak_rss_bytes.max(rss_bytes);
        self.record(t_s, rss_bytes, threads);
    }

    /// Whether a member that is gone was waited for by a member, so that its figures are now in
    /// that member's (or in a stage's, recorded when the lab reaped it). A member whose parent
    /// is gone too is followed up its line; one that reaches no member was collected by a
    /// process outside the group (init, after its parent exited), and its figures count apart.
    fn waited_for_by_member(&self, gone: &Member, live: &HashMap<i32, Member>) -> bool {
        let mut parent = gone.ppid;
        // A line longer than the group is a loop of reused pids.
        for _ in 0..=self.members.len() {
            if live.contains_key(&parent) || self.stages.contains(&parent) {
                return true;
            }
            match self.members.get(&parent) {
                Some(up) => parent = up.ppid,
                None => return false,
            }
        }
        false
    }

    /// The final I/O counters of an exited stage, read while it waits to be reaped, and its
    /// threads' CPU. `None` when they could not be read.
    pub(super) fn read_before_reaping(&mut self, pid: i32) -> Option<ProcIo> {
        for thread in procfs::threads_of(pid) {
            let cpu_s = self.ticks_s(thread.utime + thread.stime);
            let slot = self
                .threads
                .entry((thread.pid, thread.start_ticks))
                .or_insert(0.0);
            *slot = slot.max(cpu_s);
        }
        procfs::read_io(pid).or(self.members.get(&pid).map(|member| member.usage.io))
    }

    /// Records a stage the lab has reaped with its final figures.
    pub(super) fn reaped(&mut self, pid: i32, usage: Usage) {
        self.members.remove(&pid);
        self.reaped.add(&usage);
    }

    /// The tree's totals now: reaped stages, departed members and the live ones.
    pub(super) fn totals(&self) -> Usage {
        let mut total = self.reaped;
        total.add(&self.departed);
        for member in self.members.values() {
            total.add(&member.usage);
        }
        total
    }

    fn record(&mut self, t_s: f64, rss_bytes: u64, threads: u64) {
        let total = self.totals();
        if let Some(last) = self.samples.last() {
            let interval_s = t_s - last.t_s;
            if interval_s >= self.min_interval_s && interval_s > 0.0 {
                let cores = (total.cpu_s() - (last.cpu_user_s + last.cpu_system_s)) / interval_s;
                self.max_cores_used = self.max_cores_used.max(cores.clamp(0.0, self.cores));
            }
        }
        self.samples.push(TreeSample {
            t_s,
            read_bytes: total.io.read_bytes,
            write_bytes: total.io.write_bytes,
            rchar: total.io.rchar,
            wchar: total.io.wchar,
            cpu_user_s: total.user_s,
            cpu_system_s: total.system_s,
            rss_bytes,
            threads,
        });
    }

    /// The last scan, once every stage has been reaped: members gone since are accounted for,
    /// samples taken after `wall_s` are dropped (they hold nothing new), and the final sample
    /// is recorded at `wall_s`.
    pub(super) fn finish(&mut self, wall_s: f64) -> Figures {
        self.samples.retain(|sample| sample.t_s < wall_s);
        self.scan(wall_s);
        let busiest_thread_cpu_s = self
            .threads
            .values()
            .copied()
            .fold(self.busiest_gone_s, f64::max);
        Figures {
            totals: self.totals(),
            samples: std::mem::take(&mut self.samples),
            peak_rss_bytes: self.peak_rss_bytes,
            busiest_thread_cpu_s,
            max_cores_used: self.max_cores_used,
        }
    }

    fn usage(&self, stat: &ProcStat, io: ProcIo) -> Usage {
        Usage {
            io,
            user_s: self.ticks_s(stat.utime + stat.cutime),
            system_s: self.ticks_s(stat.stime + stat.cstime),
        }
    }

    fn ticks_s(&self, ticks: u64) -> f64 {
        ticks as f64 * self.tick_s
    }
}

/// What the tree measured over the run.
#[derive(Debug)]
pub(super) struct Figures {
    pub totals: Usage,
    pub samples: Vec<TreeSample>,
    pub peak_rss_bytes: u64,
    pub busiest_thread_cpu_s: f64,
    pub max_cores_used: f64,
}

/// The machine's online CPUs: the most cores a tree can use.
pub(super) fn online_cores() -> f64 {
    // SAFETY: sysconf reads a configuration value and touches no memory of ours.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    online.max(1) as f64
}
