//! `lever top`: CPU use per process, per thread and per core, sampled from
//! procfs, as seed 000 §7.1 watches a use case with `top` and `htop` (per
//! process, per core, and the total: 0–800 % on an octa-core).
//!
//! Three layers, one direction (as in the rest of this crate):
//!
//! - [`TopSample::read`] reads one moment through a [`KernelFs`] (so a
//!   simulated board or a copied tree works as well as `/`);
//! - [`TopInterval::new`] turns two samples into rates, with no I/O;
//! - [`TopTotals`] adds intervals up into a [`TopSummary`] for the run.
//!
//! [`TopWatcher`] strings them together for a sampling loop
//! ([`crate::sampling`]).
//!
//! # What is read, with an example line of each
//!
//! - `/proc/stat`, the `cpu` and `cpuN` lines, in USER_HZ ticks:
//!   `cpu0 535047 183578 139812 383545 4196 0 943 613 0 0` — user, nice,
//!   system, idle, iowait, irq, softirq, steal, guest, guest_nice. Busy is
//!   user + nice + system + irq + softirq + steal; idle is idle + iowait.
//!   Guest time is already inside user and nice, so it is not added again.
//! - `/proc/uptime`: `350735.47 234388.90` (seconds since boot, to tell a
//!   process that started between two samples from one that was missed).
//! - `/proc/PID/stat` ([`crate::process::parse_stat`]): `comm`, `state`,
//!   `ppid`, `utime`, `stime`, `num_threads`, `starttime`, `processor`.
//! - `/proc/PID/status` ([`crate::process::parse_status`]):
//!   `voluntary_ctxt_switches:\t150`, `nonvoluntary_ctxt_switches:\t545`.
//! - with threads, the same two files under `/proc/PID/task/TID/`.
//! - `/sys/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq`: `1958400`
//!   (kHz), where the kernel has cpufreq.
//!
//! # Units
//!
//! A task's CPU % is its `utime`/`stime` ticks over the interval, divided
//! by the clock-tick rate and the wall time between the two samples: 100 %
//! is one core busy for the whole interval (top's and pidstat's default
//! "Irix" mode), so a process can reach N × 100 % on N cores. A core's
//! utilisation is its busy ticks over all its ticks (0–100 %); the total
//! is the sum over the cores (0–N × 100 %).
//!
//! # Processes that come and go
//!
//! A process that is gone between listing `/proc` and reading its files is
//! skipped, not an error. One that started during an interval (its
//! `starttime` after the earlier sample) counts every tick it has; one that
//! exits during an interval loses the ticks it used after the last read,
//! as in top and pidstat. A pid seen again with another `starttime` is a
//! new process.
//!
//! ```
//! use lever_measure::top::{ReadOptions, TopInterval, TopSample};
//! use lever_testkit::FakeTree;
//!
//! let tree = FakeTree::with(&[
//!     ("/proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0 0 0\n"),
//!     ("/proc/42/stat", "42 (busy) R 1 42 42 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 5 0 0\n"),
//!     ("/proc/42/status", "Name:\tbusy\nvoluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t9\n"),
//! ]);
//! let opts = ReadOptions::default();
//! let before = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
//! // Two seconds later: 150 more user and 50 more system ticks (at 100 Hz).
//! tree.node("/proc/stat", "cpu  250 0 150 800 0 0 0 0 0 0\ncpu0 250 0 150 800 0 0 0 0 0 0\n");
//! tree.node("/proc/42/stat", "42 (busy) R 1 42 42 0 -1 0 0 0 0 0 250 100 0 0 20 0 1 0 5 0 0\n");
//! let after = TopSample::read(tree.fs(), 2.0, &opts).unwrap();
//! let i = TopInterval::new(&before, &after, 100, None);
//! assert_eq!((i.tasks[0].user_pct, i.tasks[0].system_pct), (75.0, 25.0));
//! assert_eq!(i.cores[0].busy_pct, 100.0);
//! ```

use crate::avail::Avail;
use crate::error::{parse_err, MeasureError};
use crate::process::{parse_stat, parse_status};
use lever_kernel::{paths, KernelError, KernelFs};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One `/proc/stat` CPU line, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    /// `user`: user mode (guest time included).
    pub user: u64,
    /// `nice`: user mode at a positive nice value.
    pub nice: u64,
    /// `system`: kernel mode.
    pub system: u64,
    /// `idle`.
    pub idle: u64,
    /// `iowait`: idle while a task waited for I/O.
    pub iowait: u64,
    /// `irq`: hard interrupts.
    pub irq: u64,
    /// `softirq`: soft interrupts.
    pub softirq: u64,
    /// `steal`: taken by the hypervisor for another guest.
    pub steal: u64,
}

impl CpuTimes {
    /// Busy ticks: user + nice + system + irq + softirq + steal.
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }

    /// Every tick: busy + idle + iowait.
    pub fn all(&self) -> u64 {
        self.busy() + self.idle + self.iowait
    }

    /// `self - earlier`, field by field; 0 where a counter went back
    /// (`iowait` may on some kernels).
    fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// The CPU lines of `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuStat {
    /// The `cpu` line: every CPU added up.
    pub total: CpuTimes,
    /// The `cpuN` lines of the online CPUs, in the kernel's order.
    pub cores: Vec<(u32, CpuTimes)>,
}

/// Parse the `cpu` lines of a `/proc/stat` text; other lines are skipped.
/// Kernels before 2.6.11 print fewer than eight numbers: the missing
/// counters did not exist, and count 0.
pub fn parse_proc_stat(path: &str, text: &str) -> Result<CpuStat, MeasureError> {
    const EXPECTED: &str = "`cpu0 535047 183578 139812 383545 4196 0 943 613 0 0`";
    let mut stat = CpuStat::default();
    let mut seen_total = false;
    for (i, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next().and_then(|w| w.strip_prefix("cpu")) else {
            continue;
        };
        let nums: Option<Vec<u64>> = words.map(|w| w.parse().ok()).collect();
        let nums = nums
            .filter(|n| n.len() >= 4)
            .ok_or_else(|| parse_err(path, i + 1, line, EXPECTED))?;
        let n = |k: usize| nums.get(k).copied().unwrap_or(0);
        let times = CpuTimes {
            user: n(0),
            nice: n(1),
            system: n(2),
            idle: n(3),
            iowait: n(4),
            irq: n(5),
            softirq: n(6),
            steal: n(7),
        };
        if name.is_empty() {
            stat.total = times;
            seen_total = true;
        } else {
            let cpu = name
                .parse()
                .map_err(|_| parse_err(path, i + 1, line, EXPECTED))?;
            stat.cores.push((cpu, times));
        }
    }
    if !seen_total {
        return Err(MeasureError::MissingField {
            path: path.to_string(),
            field: "cpu",
        });
    }
    Ok(stat)
}

/// One process or thread as `/proc/PID/stat` and `status` show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskSample {
    /// Process id (or thread id for a thread).
    pub id: u32,
    /// Command name (`comm`, at most 15 bytes).
    pub comm: String,
    /// State letter (`R`, `S`, `D`, `Z`, ...).
    pub state: char,
    /// Parent process.
    pub ppid: Option<u32>,
    /// Start time, clock ticks after boot.
    pub start_ticks: Option<u64>,
    /// `utime` clock ticks.
    pub user_ticks: u64,
    /// `stime` clock ticks.
    pub system_ticks: u64,
    /// `cutime` + `cstime` clock ticks: its reaped children's CPU.
    pub children_ticks: u64,
    /// The CPU it last ran on.
    pub processor: Option<u32>,
    /// Threads in the process.
    pub num_threads: Option<u64>,
    /// Voluntary context switches since it started.
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches since it started.
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// Its threads (read only with [`ReadOptions::threads`]).
    pub threads: Vec<TaskSample>,
}

/// Which processes to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Which {
    /// Every process in `/proc`.
    #[default]
    All,
    /// Only these pids (`lever top -p`).
    Pids(BTreeSet<u32>),
}

/// What [`TopSample::read`] reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Which processes.
    pub which: Which,
    /// Also each process's threads (`/proc/PID/task/TID`).
    pub threads: bool,
}

/// One moment: the CPU counters of every core, their frequency, and the
/// processes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TopSample {
    /// When it was taken, seconds after the start of the run (the caller's
    /// monotonic clock).
    pub t_s: f64,
    /// `/proc/uptime`'s first figure; `None` where the file is missing.
    pub uptime_s: Option<f64>,
    /// `/proc/stat`'s CPU lines.
    pub cpus: CpuStat,
    /// Each core's current frequency (kHz), in the order of
    /// [`CpuStat::cores`], or why it is not available.
    pub freq_khz: Vec<Avail<u64>>,
    /// The processes, by pid.
    pub tasks: BTreeMap<u32, TaskSample>,
}

/// The clock-tick rate of `/proc/stat` and `/proc/PID/stat` (`USER_HZ`:
/// 100 on every Linux architecture, read from the running system).
pub fn user_hz() -> u64 {
    rustix::param::clock_ticks_per_second()
}

/// The kernel's "this task is gone" answers: no such file, or ESRCH from
/// a task that exited between open and read.
fn gone(e: &KernelError) -> bool {
    match e {
        KernelError::Missing { .. } => true,
        KernelError::Io { source, .. } => source.raw_os_error() == Some(libc::ESRCH),
        _ => false,
    }
}

/// Read `DIR/stat` and `DIR/status` of one task (`DIR` is `/proc/PID` or
/// `/proc/PID/task/TID`); `None` when it is gone.
fn read_task(fs: &KernelFs, dir: &str, id: u32) -> Result<Option<TaskSample>, MeasureError> {
    let read = |name: &str| -> Result<Option<(String, String)>, MeasureError> {
        let path = format!("{dir}/{name}");
        match fs.read(&path) {
            Ok(text) => Ok(Some((path, text))),
            Err(e) if gone(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    };
    let Some((stat_path, stat_text)) = read("stat")? else {
        return Ok(None);
    };
    let Some((status_path, status_text)) = read("status")? else {
        return Ok(None);
    };
    // A task that exits while it is read may leave an empty file behind:
    // gone, unless its directory is still there.
    let parsed = parse_stat(&stat_path, &stat_text)
        .and_then(|stat| Ok((stat, parse_status(&status_path, &status_text)?)));
    let (stat, status) = match parsed {
        Ok(p) => p,
        Err(_) if !fs.exists(dir) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(TaskSample {
        id,
        comm: stat.comm,
        state: stat.state,
        ppid: stat.ppid,
        start_ticks: stat.start_ticks,
        user_ticks: stat.cpu.user,
        system_ticks: stat.cpu.system,
        children_ticks: stat.children.map_or(0, |c| c.user + c.system),
        processor: stat.processor,
        num_threads: stat.num_threads,
        voluntary_ctxt_switches: status.voluntary_ctxt_switches,
        nonvoluntary_ctxt_switches: status.nonvoluntary_ctxt_switches,
        threads: Vec::new(),
    }))
}

/// The numeric entries of a directory (pids under `/proc`, tids under
/// `task/`); empty when the directory is gone.
fn ids(fs: &KernelFs, dir: &str) -> Result<Vec<u32>, MeasureError> {
    match fs.list_dir(dir) {
        Ok(names) => Ok(names.iter().filter_map(|n| n.parse().ok()).collect()),
        Err(e) if gone(&e) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Why `cpuN` has no current frequency here.
fn no_freq(fs: &KernelFs, cpu: u32, path: &str, e: &KernelError) -> String {
    if !e.is_missing() {
        return e.to_string();
    }
    let policies = fs.list_dir(paths::CPUFREQ).unwrap_or_default();
    if policies.iter().any(|p| p.starts_with("policy")) {
        format!("not available here because cpu{cpu} has no {path} (no cpufreq policy covers it)")
    } else {
        format!(
            "not available here because no cpufreq driver runs on this machine (no policy in {})",
            paths::CPUFREQ
        )
    }
}

impl TopSample {
    /// Read one sample at `t_s` (seconds on the caller's clock).
    pub fn read(fs: &KernelFs, t_s: f64, opts: &ReadOptions) -> Result<TopSample, MeasureError> {
        let stat_path = format!("{}/stat", paths::PROC);
        let cpus = parse_proc_stat(&stat_path, &fs.read(&stat_path)?)?;
        let uptime_path = format!("{}/uptime", paths::PROC);
        let uptime_s = match fs.read_optional(&uptime_path)? {
            // 350735.47 234388.90
            Some(text) => Some(
                text.split_whitespace()
                    .next()
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| parse_err(&uptime_path, 1, &text, "`350735.47 234388.90`"))?,
            ),
            None => None,
        };
        let mut freq_khz = Vec::with_capacity(cpus.cores.len());
        for &(cpu, _) in &cpus.cores {
            let path = format!("{}/cpu{cpu}/cpufreq/scaling_cur_freq", paths::CPU);
            freq_khz.push(match fs.read(&path) {
                Ok(text) => Avail::Value(
                    text.trim()
                        .parse()
                        .map_err(|_| parse_err(&path, 1, &text, "kHz, e.g. `1958400`"))?,
                ),
                Err(e) => Avail::Unavailable(no_freq(fs, cpu, &path, &e)),
            });
        }
        let pids = match &opts.which {
            Which::All => ids(fs, paths::PROC)?,
            Which::Pids(pids) => pids.iter().copied().collect(),
        };
        let mut tasks = BTreeMap::new();
        for pid in pids {
            let dir = format!("{}/{pid}", paths::PROC);
            let Some(mut task) = read_task(fs, &dir, pid)? else {
                continue;
            };
            if opts.threads {
                let task_dir = format!("{dir}/task");
                for tid in ids(fs, &task_dir)? {
                    if let Some(thread) = read_task(fs, &format!("{task_dir}/{tid}"), tid)? {
                        task.threads.push(thread);
                    }
                }
            }
            tasks.insert(pid, task);
        }
        Ok(TopSample {
            t_s,
            uptime_s,
            cpus,
            freq_khz,
            tasks,
        })
    }
}

/// The processes of a command: its pid and every descendant seen so far
/// (kept when a parent exits and the child is re-parented), each with its
/// start time so a reused pid is not taken for a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTree {
    root: u32,
    members: BTreeSet<(u32, Option<u64>)>,
}

impl CommandTree {
    /// The tree of the process `root` (members are added by
    /// [`CommandTree::update`]).
    pub fn new(root: u32) -> CommandTree {
        CommandTree {
            root,
            members: BTreeSet::new(),
        }
    }

    /// The command's pid.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Add the root and the descendants `sample` shows.
    pub fn update(&mut self, sample: &TopSample) {
        // A task whose parent is a member joins; parents are matched by pid
        // alone, as a stat line names its parent.
        let mut known: BTreeSet<u32> = self.members.iter().map(|m| m.0).collect();
        loop {
            let mut added = false;
            for t in sample.tasks.values() {
                let key = (t.id, t.start_ticks);
                if self.members.contains(&key) {
                    continue;
                }
                let child = t.ppid.is_some_and(|p| known.contains(&p));
                if t.id == self.root || child {
                    self.members.insert(key);
                    known.insert(t.id);
                    added = true;
                }
            }
            if !added {
                return;
            }
        }
    }

    /// True when `task` is the command or one of its descendants.
    pub fn contains(&self, task: &TaskSample) -> bool {
        self.members.contains(&(task.id, task.start_ticks))
    }
}

/// One core over an interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoreUse {
    /// CPU number.
    pub cpu: u32,
    /// Busy share of the core's ticks, % (0–100).
    pub busy_pct: f64,
    /// user + nice, %.
    pub user_pct: f64,
    /// system, %.
    pub system_pct: f64,
    /// irq + softirq, %.
    pub irq_pct: f64,
    /// steal, %.
    pub steal_pct: f64,
    /// Busy ticks in the interval.
    pub busy_ticks: u64,
    /// All ticks in the interval.
    pub all_ticks: u64,
    /// Frequency at the end of the interval, kHz.
    pub freq_khz: Avail<u64>,
}

impl CoreUse {
    fn new(cpu: u32, d: &CpuTimes, freq_khz: Avail<u64>) -> CoreUse {
        let all = d.all();
        let pct = |ticks: u64| {
            if all == 0 {
                0.0
            } else {
                ticks as f64 * 100.0 / all as f64
            }
        };
        CoreUse {
            cpu,
            busy_pct: pct(d.busy()),
            user_pct: pct(d.user + d.nice),
            system_pct: pct(d.system),
            irq_pct: pct(d.irq + d.softirq),
            steal_pct: pct(d.steal),
            busy_ticks: d.busy(),
            all_ticks: all,
            freq_khz,
        }
    }
}

/// One process (or thread) over an interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskUse {
    /// Process (or thread) id.
    pub id: u32,
    /// Command name.
    pub comm: String,
    /// User-mode CPU, % of one core.
    pub user_pct: f64,
    /// Kernel-mode CPU, % of one core.
    pub system_pct: f64,
    /// User-mode CPU time in the interval, s.
    pub user_s: f64,
    /// Kernel-mode CPU time in the interval, s.
    pub system_s: f64,
    /// CPU time of its children that ended in the interval and is in no
    /// task's row, s: children born and reaped between two samples (the
    /// compilers a `make` runs), and what ended children used after their
    /// last sample. Its `cutime` + `cstime` growth less what its children
    /// that ended had shown; 0 for threads.
    #[serde(default)]
    pub children_s: f64,
    /// [`TaskUse::children_s`] as % of one core.
    #[serde(default)]
    pub children_pct: f64,
    /// Voluntary context switches in the interval.
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches in the interval.
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// The CPU it last ran on, at the end of the interval.
    pub processor: Option<u32>,
    /// Threads at the end of the interval.
    pub num_threads: Option<u64>,
    /// It started during the interval (every tick it has counts).
    pub started: bool,
    /// It is the watched command or one of its descendants.
    pub in_command: bool,
    /// Its threads (with [`ReadOptions::threads`]).
    pub threads: Vec<TaskUse>,
}

impl TaskUse {
    /// User + system, % of one core.
    pub fn cpu_pct(&self) -> f64 {
        self.user_pct + self.system_pct
    }

    /// Used any CPU or switched context in the interval.
    pub fn is_active(&self) -> bool {
        self.user_s + self.system_s > 0.0
            || self.voluntary_ctxt_switches.unwrap_or(0) > 0
            || self.nonvoluntary_ctxt_switches.unwrap_or(0) > 0
    }
}

/// What an interval's earlier sample knew about a task: its counters, and
/// whether a task missing from it started after it.
struct Before<'a> {
    task: Option<&'a TaskSample>,
    uptime_s: Option<f64>,
}

/// `cur - prev` for one task; `None` when there is no baseline (it existed
/// before the earlier sample but was not read then).
fn task_use(
    before: Before<'_>,
    cur: &TaskSample,
    hz: f64,
    wall_s: f64,
    in_command: bool,
) -> Option<TaskUse> {
    let same = |p: &&TaskSample| p.start_ticks == cur.start_ticks;
    let (prev, started) = match before.task.filter(same) {
        Some(p) => (Some(p), false),
        None => {
            // Started after the earlier sample (starttime has one-tick
            // resolution), or unknown uptime: every tick is this interval's,
            // as top counts a new task.
            let after = match (cur.start_ticks, before.uptime_s) {
                (Some(start), Some(up)) => start as f64 / hz + 1.0 / hz >= up,
                _ => true,
            };
            if !after {
                return None;
            }
            (None, true)
        }
    };
    let d = |now: u64, then: Option<u64>| now.saturating_sub(then.unwrap_or(0));
    let user = d(cur.user_ticks, prev.map(|p| p.user_ticks));
    let system = d(cur.system_ticks, prev.map(|p| p.system_ticks));
    let ctxt = |now: Option<u64>, then: Option<Option<u64>>| match (now, then) {
        (Some(n), Some(Some(t))) => Some(n.saturating_sub(t)),
        (Some(n), None) => Some(n),
        _ => None,
    };
    let pct = |ticks: u64| ticks as f64 / hz / wall_s * 100.0;
    let threads = cur
        .threads
        .iter()
        .filter_map(|t| {
            let before = Before {
                task: prev.and_then(|p| p.threads.iter().find(|pt| pt.id == t.id)),
                uptime_s: before.uptime_s,
            };
            task_use(before, t, hz, wall_s, in_command)
        })
        .collect();
    Some(TaskUse {
        id: cur.id,
        comm: cur.comm.clone(),
        user_pct: pct(user),
        system_pct: pct(system),
        user_s: user as f64 / hz,
        system_s: system as f64 / hz,
        children_s: 0.0,
        children_pct: 0.0,
        voluntary_ctxt_switches: ctxt(
            cur.voluntary_ctxt_switches,
            prev.map(|p| p.voluntary_ctxt_switches),
        ),
        nonvoluntary_ctxt_switches: ctxt(
            cur.nonvoluntary_ctxt_switches,
            prev.map(|p| p.nonvoluntary_ctxt_switches),
        ),
        processor: cur.processor,
        num_threads: cur.num_threads,
        started,
        in_command,
        threads,
    })
}

/// Whether `t`, a task of the earlier sample, ended by `cur` (gone, or its
/// pid reused; a zombie is still listed).
fn ended(t: &TaskSample, cur: &TopSample) -> bool {
    cur.tasks
        .get(&t.id)
        .is_none_or(|now| now.start_ticks != t.start_ticks)
}

/// The task a task of `prev` that ended by `cur` left its CPU to: its
/// first ancestor (in `prev`) that did not end too. `None` when the chain
/// leaves what `prev` knows of without a parent.
fn reaper_of(prev: &TopSample, cur: &TopSample, t: &TaskSample) -> Option<u32> {
    let mut up = t.ppid;
    // Bounded: a pid cycle cannot happen in one sample, but a broken tree
    // must not loop.
    for _ in 0..prev.tasks.len() {
        match up.and_then(|p| prev.tasks.get(&p)) {
            Some(parent) if ended(parent, cur) => up = parent.ppid,
            _ => break,
        }
    }
    up
}

/// What the tasks that ended between `prev` and `cur` had shown at their
/// last sample, own and children's ticks, by the live task their CPU went
/// to when they were reaped ([`reaper_of`]). A grandchild and its parent
/// that both end in one interval are both in their grandparent's `cutime`
/// growth, the parent's last-seen `cutime` not yet holding the grandchild.
fn ended_shown_by_reaper(prev: &TopSample, cur: &TopSample) -> BTreeMap<u32, u64> {
    let mut by_reaper = BTreeMap::new();
    for t in prev.tasks.values().filter(|t| ended(t, cur)) {
        if let Some(reaper) = reaper_of(prev, cur, t) {
            *by_reaper.entry(reaper).or_insert(0) +=
                t.user_ticks + t.system_ticks + t.children_ticks;
        }
    }
    by_reaper
}

/// The previous interval's [`TopInterval::owed`], by the task that owes it
/// now: the same task while it lives, its reaper ([`reaper_of`]) when it
/// ended too.
fn owed_by_reaper(
    prev: &TopSample,
    cur: &TopSample,
    owed: &BTreeMap<u32, u64>,
) -> BTreeMap<u32, u64> {
    let mut by_reaper = BTreeMap::new();
    for (&id, &ticks) in owed {
        let to = match prev.tasks.get(&id) {
            Some(t) if ended(t, cur) => reaper_of(prev, cur, t),
            Some(_) => Some(id),
            None => None,
        };
        if let Some(to) = to {
            *by_reaper.entry(to).or_insert(0) += ticks;
        }
    }
    by_reaper
}

/// The ticks `task`'s `cutime` + `cstime` grew by from `prev` to `cur`
/// that no row showed, and what it still owes: its growth less `shown`,
/// what its descendants that ended in the interval had shown at their
/// last sample ([`ended_shown_by_reaper`]), and less `owed`, what they
/// had shown in the interval before that its `cutime` did not yet hold
/// ([`TopInterval::owed`]). Returns (unseen, owed now): what `shown` is
/// more than the growth, carried one interval. A task new in `cur` counts
/// all it has. A child re-parented to init before it ended is counted out
/// of its old parent's growth though its CPU went to init, as is a child
/// reaped without a wait (`SIGCHLD` ignored): that errs low, never twice.
fn unseen_children_ticks(prev: &TopSample, task: &TaskSample, shown: u64, owed: u64) -> (u64, u64) {
    let before = prev
        .tasks
        .get(&task.id)
        .filter(|p| p.start_ticks == task.start_ticks)
        .map_or(0, |p| p.children_ticks);
    let grew = task.children_ticks.saturating_sub(before);
    let unseen = grew.saturating_sub(shown).saturating_sub(owed);
    let still = (shown + owed).saturating_sub(grew).min(shown);
    (unseen, still)
}

/// Descending CPU, then id.
fn by_cpu(a: &TaskUse, b: &TaskUse) -> std::cmp::Ordering {
    b.cpu_pct().total_cmp(&a.cpu_pct()).then(a.id.cmp(&b.id))
}

/// Two samples turned into rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopInterval {
    /// End of the interval, s after the start of the run.
    pub t_s: f64,
    /// Wall time between the two samples, s.
    pub elapsed_s: f64,
    /// Each core present in both samples.
    pub cores: Vec<CoreUse>,
    /// Sum of the cores' busy %, 0–N × 100 %.
    pub total_pct: f64,
    /// The tasks present at the end (and with a baseline), most CPU first.
    pub tasks: Vec<TaskUse>,
    /// Tasks of the earlier sample that were gone at the end.
    pub exited: usize,
    /// Ticks that tasks which ended in the interval had shown and their
    /// reaper's `cutime` did not yet hold when it was read, by reaper.
    /// A sample is no single moment: a parent read before it reaps a
    /// child, the child read after it was reaped, left the child's CPU in
    /// neither (a busy child's last 0.2 s seen as 0 %, then its whole
    /// second as 500 % of one core when the growth came). The next
    /// interval counts it out of the growth ([`TopInterval::after`]).
    #[serde(skip)]
    pub owed: BTreeMap<u32, u64>,
}

impl TopInterval {
    /// The interval from `prev` to `cur`; `hz` is the clock-tick rate of
    /// the stat files (`USER_HZ`, 100 on every Linux architecture);
    /// `command` marks the watched command's processes.
    pub fn new(
        prev: &TopSample,
        cur: &TopSample,
        hz: u64,
        command: Option<&CommandTree>,
    ) -> TopInterval {
        TopInterval::after(prev, cur, hz, command, None)
    }

    /// [`TopInterval::new`] for the interval that follows `before` (the
    /// one that ended at `prev`): what its ended tasks had shown and their
    /// reapers' `cutime` did not yet hold ([`TopInterval::owed`]) is
    /// counted out of this interval's growth.
    pub fn after(
        prev: &TopSample,
        cur: &TopSample,
        hz: u64,
        command: Option<&CommandTree>,
        before: Option<&TopInterval>,
    ) -> TopInterval {
        let hz = hz.max(1) as f64;
        let elapsed_s = cur.t_s - prev.t_s;
        let wall_s = if elapsed_s > 0.0 { elapsed_s } else { f64::NAN };
        let mut cores = Vec::new();
        for (i, (cpu, now)) in cur.cpus.cores.iter().enumerate() {
            let Some((_, then)) = prev.cpus.cores.iter().find(|(c, _)| c == cpu) else {
                continue;
            };
            let freq = cur.freq_khz.get(i).cloned().unwrap_or_else(|| {
                Avail::Unavailable("not available here because it was not read".into())
            });
            cores.push(CoreUse::new(*cpu, &now.since(then), freq));
        }
        let total_pct = cores.iter().map(|c| c.busy_pct).sum();
        let shown_by_reaper = ended_shown_by_reaper(prev, cur);
        let owed_before = before.map_or_else(BTreeMap::new, |b| owed_by_reaper(prev, cur, &b.owed));
        let mut owed = BTreeMap::new();
        let mut tasks: Vec<TaskUse> = cur
            .tasks
            .values()
            .filter_map(|t| {
                let before = Before {
                    task: prev.tasks.get(&t.id),
                    uptime_s: prev.uptime_s,
                };
                let in_command = command.is_some_and(|c| c.contains(t));
                let mut u = task_use(before, t, hz, wall_s, in_command)?;
                let shown = shown_by_reaper.get(&t.id).copied().unwrap_or(0);
                let carried = owed_before.get(&t.id).copied().unwrap_or(0);
                let (children, still) = unseen_children_ticks(prev, t, shown, carried);
                if still > 0 {
                    owed.insert(t.id, still);
                }
                u.children_s = children as f64 / hz;
                u.children_pct = children as f64 / hz / wall_s * 100.0;
                Some(u)
            })
            .collect();
        tasks.sort_by(by_cpu);
        for t in &mut tasks {
            t.threads.sort_by(by_cpu);
        }
        let exited = prev
            .tasks
            .values()
            .filter(|p| {
                cur.tasks
                    .get(&p.id)
                    .is_none_or(|c| c.start_ticks != p.start_ticks)
            })
            .count();
        TopInterval {
            t_s: cur.t_s,
            elapsed_s,
            cores,
            total_pct,
            tasks,
            exited,
            owed,
        }
    }

    /// CPU % of the command's processes, with the children they reaped
    /// in the interval that no row showed ([`TaskUse::children_pct`]); 0
    /// when there is no command.
    pub fn command_pct(&self) -> f64 {
        self.tasks
            .iter()
            .filter(|t| t.in_command)
            .map(|t| t.cpu_pct() + t.children_pct)
            .sum()
    }
}

/// A frequency over the run: mean, lowest and highest of the samples, kHz.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FreqRange {
    /// Mean of the samples.
    pub mean_khz: f64,
    /// Lowest sample.
    pub min_khz: u64,
    /// Highest sample.
    pub max_khz: u64,
    /// Samples.
    pub samples: usize,
}

/// One core over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoreTotal {
    /// CPU number.
    pub cpu: u32,
    /// Busy %, over every tick of the run.
    pub busy_pct: f64,
    /// Highest busy % of one interval.
    pub max_busy_pct: f64,
    /// Clock ticks its /proc/stat line advanced by in the run (0 in a file
    /// tree, where no time passes: then its busy % means nothing).
    pub ticks: u64,
    /// Its frequency at the sample times, or why there is none.
    pub freq: Avail<FreqRange>,
}

/// One process (or thread) over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskTotal {
    /// Process (or thread) id.
    pub id: u32,
    /// Command name (the last seen).
    pub comm: String,
    /// Mean CPU over the whole run, % of one core (user + system).
    pub cpu_pct: f64,
    /// Mean user-mode CPU, %.
    pub user_pct: f64,
    /// Mean kernel-mode CPU, %.
    pub system_pct: f64,
    /// Highest CPU % of one interval.
    pub max_pct: f64,
    /// CPU time in the run, s (user + system).
    pub cpu_s: f64,
    /// CPU time of its children that ended during the run and showed in
    /// no row, s ([`TaskUse::children_s`]).
    pub children_s: f64,
    /// [`TaskTotal::children_s`] over the whole run, % of one core.
    pub children_pct: f64,
    /// Voluntary context switches in the run.
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches in the run.
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// The CPU it last ran on (last seen).
    pub processor: Option<u32>,
    /// Threads (last seen).
    pub num_threads: Option<u64>,
    /// Intervals it was seen in.
    pub intervals: usize,
    /// It started during the run.
    pub started: bool,
    /// It is the watched command or one of its descendants.
    pub in_command: bool,
    /// Its threads, most CPU first.
    pub threads: Vec<TaskTotal>,
}

/// The run: per core, the total, and per process (each a mean over the
/// whole run's wall time, as pidstat's `Average:` line).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TopSummary {
    /// Wall time the intervals cover, s.
    pub window_s: f64,
    /// Intervals added up.
    pub intervals: usize,
    /// Cores.
    pub cores: Vec<CoreTotal>,
    /// Sum of the cores' busy %, 0–N × 100 %.
    pub total_pct: f64,
    /// Highest total % of one interval.
    pub max_total_pct: f64,
    /// N × 100 %: what the total can reach.
    pub capacity_pct: f64,
    /// Mean CPU % of the command's processes together, with the children
    /// they reaped that no row showed; `None` without a command.
    pub command_pct: Option<f64>,
    /// Highest command CPU % of one interval.
    pub max_command_pct: Option<f64>,
    /// Every process seen, most CPU first.
    pub tasks: Vec<TaskTotal>,
}

#[derive(Debug, Default, Clone)]
struct TaskAcc {
    comm: String,
    user_s: f64,
    system_s: f64,
    children_s: f64,
    max_pct: f64,
    voluntary: Option<u64>,
    nonvoluntary: Option<u64>,
    processor: Option<u32>,
    num_threads: Option<u64>,
    intervals: usize,
    started: bool,
    in_command: bool,
    threads: BTreeMap<u32, TaskAcc>,
}

impl TaskAcc {
    fn add(&mut self, t: &TaskUse) {
        let add = |sum: Option<u64>, v: Option<u64>| match (sum, v) {
            (s, Some(v)) => Some(s.unwrap_or(0) + v),
            (s, None) => s,
        };
        self.comm = t.comm.clone();
        self.user_s += t.user_s;
        self.system_s += t.system_s;
        self.children_s += t.children_s;
        self.max_pct = self.max_pct.max(t.cpu_pct());
        self.voluntary = add(self.voluntary, t.voluntary_ctxt_switches);
        self.nonvoluntary = add(self.nonvoluntary, t.nonvoluntary_ctxt_switches);
        self.processor = t.processor;
        self.num_threads = t.num_threads;
        self.intervals += 1;
        self.started |= t.started;
        self.in_command |= t.in_command;
        for th in &t.threads {
            self.threads.entry(th.id).or_default().add(th);
        }
    }

    fn total(&self, id: u32, window_s: f64) -> TaskTotal {
        let pct = |s: f64| {
            if window_s > 0.0 {
                s / window_s * 100.0
            } else {
                0.0
            }
        };
        let mut threads: Vec<TaskTotal> = self
            .threads
            .iter()
            .map(|(&tid, acc)| acc.total(tid, window_s))
            .collect();
        threads.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.id.cmp(&b.id)));
        TaskTotal {
            id,
            comm: self.comm.clone(),
            cpu_pct: pct(self.user_s + self.system_s),
            user_pct: pct(self.user_s),
            system_pct: pct(self.system_s),
            max_pct: self.max_pct,
            cpu_s: self.user_s + self.system_s,
            children_s: self.children_s,
            children_pct: pct(self.children_s),
            voluntary_ctxt_switches: self.voluntary,
            nonvoluntary_ctxt_switches: self.nonvoluntary,
            processor: self.processor,
            num_threads: self.num_threads,
            intervals: self.intervals,
            started: self.started,
            in_command: self.in_command,
            threads,
        }
    }
}

#[derive(Debug, Default, Clone)]
struct CoreAcc {
    busy: u64,
    all: u64,
    max_busy_pct: f64,
    freqs: Vec<u64>,
    no_freq: Option<String>,
}

/// Intervals added up as they come, so a long run keeps no per-interval
/// process list.
#[derive(Debug, Default, Clone)]
pub struct TopTotals {
    window_s: f64,
    intervals: usize,
    max_total_pct: f64,
    command: Option<(f64, f64)>,
    cores: BTreeMap<u32, CoreAcc>,
    tasks: BTreeMap<u32, TaskAcc>,
}

impl TopTotals {
    /// Add one interval; `command` says whether a command is watched.
    pub fn add(&mut self, i: &TopInterval, command: bool) {
        self.window_s += i.elapsed_s;
        self.intervals += 1;
        self.max_total_pct = self.max_total_pct.max(i.total_pct);
        if command {
            let (cpu_s, max) = self.command.get_or_insert((0.0, 0.0));
            *cpu_s += i
                .tasks
                .iter()
                .filter(|t| t.in_command)
                .map(|t| t.user_s + t.system_s + t.children_s)
                .sum::<f64>();
            *max = max.max(i.command_pct());
        }
        for c in &i.cores {
            let acc = self.cores.entry(c.cpu).or_default();
            acc.busy += c.busy_ticks;
            acc.all += c.all_ticks;
            acc.max_busy_pct = acc.max_busy_pct.max(c.busy_pct);
            match &c.freq_khz {
                Avail::Value(khz) => acc.freqs.push(*khz),
                Avail::Unavailable(why) => acc.no_freq = Some(why.clone()),
            }
        }
        for t in &i.tasks {
            self.tasks.entry(t.id).or_default().add(t);
        }
    }

    /// The run so far.
    pub fn summary(&self) -> TopSummary {
        let cores: Vec<CoreTotal> = self
            .cores
            .iter()
            .map(|(&cpu, acc)| CoreTotal {
                cpu,
                busy_pct: if acc.all == 0 {
                    0.0
                } else {
                    acc.busy as f64 * 100.0 / acc.all as f64
                },
                max_busy_pct: acc.max_busy_pct,
                ticks: acc.all,
                freq: match (acc.freqs.iter().min(), acc.freqs.iter().max()) {
                    (Some(&min_khz), Some(&max_khz)) => Avail::Value(FreqRange {
                        mean_khz: acc.freqs.iter().sum::<u64>() as f64 / acc.freqs.len() as f64,
                        min_khz,
                        max_khz,
                        samples: acc.freqs.len(),
                    }),
                    _ => Avail::Unavailable(acc.no_freq.clone().unwrap_or_else(|| {
                        "not available here because no interval was sampled".into()
                    })),
                },
            })
            .collect();
        let mut tasks: Vec<TaskTotal> = self
            .tasks
            .iter()
            .map(|(&id, acc)| acc.total(id, self.window_s))
            .collect();
        tasks.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.id.cmp(&b.id)));
        let pct = |s: f64| {
            if self.window_s > 0.0 {
                s / self.window_s * 100.0
            } else {
                0.0
            }
        };
        TopSummary {
            window_s: self.window_s,
            intervals: self.intervals,
            total_pct: cores.iter().map(|c| c.busy_pct).sum(),
            max_total_pct: self.max_total_pct,
            capacity_pct: cores.len() as f64 * 100.0,
            cores,
            command_pct: self.command.map(|(s, _)| pct(s)),
            max_command_pct: self.command.map(|(_, m)| m),
            tasks,
        }
    }
}

impl TopSummary {
    /// Add up `intervals`.
    pub fn new(intervals: &[TopInterval], command: bool) -> TopSummary {
        let mut totals = TopTotals::default();
        for i in intervals {
            totals.add(i, command);
        }
        totals.summary()
    }
}

/// A sampling run: samples in, intervals and totals out.
#[derive(Debug)]
pub struct TopWatcher {
    fs: KernelFs,
    opts: ReadOptions,
    hz: u64,
    command: Option<CommandTree>,
    prev: Option<TopSample>,
    totals: TopTotals,
    series: Vec<TopInterval>,
}

/// A finished sampling run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopRun {
    /// Clock ticks per second of the stat files.
    pub hz: u64,
    /// The watched command's pid.
    pub command_pid: Option<u32>,
    /// The run's figures.
    pub summary: TopSummary,
    /// Each interval (its tasks: only those that used CPU or switched
    /// context, and the command's).
    pub series: Vec<TopInterval>,
}

impl TopWatcher {
    /// Sample `fs` with `opts`; `command_pid` is the watched command (its
    /// processes and their descendants are marked). `hz` is the stat
    /// files' clock-tick rate ([`user_hz`]).
    pub fn new(fs: &KernelFs, opts: ReadOptions, hz: u64, command_pid: Option<u32>) -> TopWatcher {
        TopWatcher {
            fs: fs.clone(),
            opts,
            hz,
            command: command_pid.map(CommandTree::new),
            prev: None,
            totals: TopTotals::default(),
            series: Vec::new(),
        }
    }

    /// Take a sample at `t_s` (seconds on the caller's clock) and return
    /// the interval it closes (none for the first).
    pub fn sample(&mut self, t_s: f64) -> Result<Option<&TopInterval>, MeasureError> {
        let cur = TopSample::read(&self.fs, t_s, &self.opts)?;
        if let Some(tree) = &mut self.command {
            tree.update(&cur);
        }
        let Some(prev) = self.prev.replace(cur) else {
            return Ok(None);
        };
        let cur = self.prev.as_ref().expect("just stored");
        let mut interval = TopInterval::after(
            &prev,
            cur,
            self.hz,
            self.command.as_ref(),
            self.series.last(),
        );
        self.totals.add(&interval, self.command.is_some());
        interval.tasks.retain(|t| t.in_command || t.is_active());
        for t in &mut interval.tasks {
            t.threads.retain(TaskUse::is_active);
        }
        self.series.push(interval);
        Ok(self.series.last())
    }

    /// The run.
    pub fn finish(self) -> TopRun {
        TopRun {
            hz: self.hz,
            command_pid: self.command.as_ref().map(CommandTree::root),
            summary: self.totals.summary(),
            series: self.series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    /// A stat line in the kernel's layout (fields 1–39 and 42), with the
    /// figures top reads filled in.
    fn stat(
        pid: u32,
        comm: &str,
        ppid: u32,
        utime: u64,
        stime: u64,
        start: u64,
        cpu: u32,
    ) -> String {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
        // majflt cmajflt utime stime cutime cstime priority nice num_threads
        // itrealvalue starttime vsize rss rsslim startcode endcode
        // startstack kstkesp kstkeip signal blocked sigignore sigcatch
        // wchan nswap cnswap exit_signal processor rt_priority policy
        // delayacct_blkio_ticks
        format!(
            "{pid} ({comm}) R {ppid} {pid} {pid} 0 -1 4194304 100 0 0 0 {utime} {stime} 0 0 20 0 1 0 \
             {start} 3133440 416 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 {cpu} 0 0 0\n"
        )
    }

    fn status(vol: u64, invol: u64) -> String {
        format!(
            "Name:\tx\nState:\tR (running)\nvoluntary_ctxt_switches:\t{vol}\nnonvoluntary_ctxt_switches:\t{invol}\n"
        )
    }

    /// Two cores: `/proc/stat` with the given per-core (busy user, system,
    /// idle) ticks.
    fn proc_stat(cores: &[(u64, u64, u64)]) -> String {
        let mut total = (0, 0, 0);
        let mut lines = String::new();
        for (i, &(u, s, idle)) in cores.iter().enumerate() {
            total = (total.0 + u, total.1 + s, total.2 + idle);
            lines += &format!("cpu{i} {u} 0 {s} {idle} 0 0 0 0 0 0\n");
        }
        format!(
            "cpu  {} 0 {} {} 0 0 0 0 0 0\n{lines}intr 1 0\nctxt 5\n",
            total.0, total.1, total.2
        )
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// A parent with `ctime` ticks of reaped children's CPU (`cutime`
    /// all user) in a stat line like [`stat`]'s.
    fn stat_with_children(pid: u32, utime: u64, start: u64, ctime: u64) -> String {
        stat(pid, "make", 1, utime, 0, start, 0).replacen(
            &format!(" {utime} 0 0 0 20 "),
            &format!(" {utime} 0 {ctime} 0 20 "),
            1,
        )
    }

    /// Process `pid` is gone from `tree`'s /proc (ended and reaped).
    fn end(tree: &FakeTree, pid: u32) {
        tree.remove(&format!("/proc/{pid}/stat"))
            .remove(&format!("/proc/{pid}/status"));
        std::fs::remove_dir(tree.root().join(format!("proc/{pid}"))).unwrap();
    }

    /// Children reaped between two samples: what no row showed lands in
    /// the parent's children figure, and a child seen at the earlier
    /// sample is not counted twice.
    #[test]
    fn reaped_children_count_once_in_their_parent() {
        let tree = FakeTree::with(&[
            ("/proc/stat", &proc_stat(&[(0, 0, 100)])),
            ("/proc/uptime", "10.00 5.00\n"),
            ("/proc/10/stat", &stat_with_children(10, 5, 100, 40)),
            ("/proc/10/status", &status(0, 0)),
            ("/proc/11/stat", &stat(11, "cc", 10, 30, 5, 900, 0)),
            ("/proc/11/status", &status(0, 0)),
        ]);
        let opts = ReadOptions::default();
        let before = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
        // One second later: child 11 (35 ticks when last seen) ended and
        // was reaped with 50; two children born and reaped in between
        // used 70; so `cutime` grew by 120 and 85 of it was in no row.
        tree.node("/proc/stat", &proc_stat(&[(100, 0, 100)]));
        tree.node("/proc/uptime", "11.00 5.00\n");
        tree.node("/proc/10/stat", &stat_with_children(10, 6, 100, 160));
        end(&tree, 11);
        let after = TopSample::read(tree.fs(), 1.0, &opts).unwrap();
        let i = TopInterval::new(&before, &after, 100, None);
        let make = i.tasks.iter().find(|t| t.id == 10).unwrap();
        assert!(close(make.children_s, 0.85), "{make:?}");
        assert!(close(make.children_pct, 85.0), "{make:?}");
        assert!(close(make.cpu_pct(), 1.0), "{make:?}");
        // A child and its busy grandchild both end in one interval
        // (`sh -c 'timeout 1 busy'`): the grandchild's 95 shown ticks are
        // in the grandparent's growth too, and are not counted again.
        let tree = FakeTree::with(&[
            ("/proc/stat", &proc_stat(&[(0, 0, 100)])),
            ("/proc/uptime", "10.00 5.00\n"),
            ("/proc/20/stat", &stat_with_children(20, 0, 100, 0)),
            ("/proc/20/status", &status(0, 0)),
            ("/proc/21/stat", &stat(21, "timeout", 20, 1, 0, 900, 0)),
            ("/proc/21/status", &status(0, 0)),
            ("/proc/22/stat", &stat(22, "sh", 21, 90, 5, 901, 0)),
            ("/proc/22/status", &status(0, 0)),
        ]);
        let before = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
        tree.node("/proc/stat", &proc_stat(&[(100, 0, 100)]));
        tree.node("/proc/uptime", "11.00 5.00\n");
        tree.node("/proc/20/stat", &stat_with_children(20, 0, 100, 101));
        end(&tree, 21);
        end(&tree, 22);
        let after = TopSample::read(tree.fs(), 1.0, &opts).unwrap();
        let i = TopInterval::new(&before, &after, 100, None);
        let sh = i.tasks.iter().find(|t| t.id == 20).unwrap();
        assert!(close(sh.children_s, 0.05), "{sh:?}");
        // Nothing reaped: nothing unseen.
        let again = TopInterval::new(&after, &after, 100, None);
        assert_eq!(again.tasks[0].children_s, 0.0);
    }

    /// A sample is no single moment: the parent read before it reaped its
    /// children, the children read after (gone). What they had shown is
    /// owed by the parent's next growth, not counted twice then (measured:
    /// `sh -c 'timeout 1 busy; sleep 0.2'` sampled every 0.2 s showed 0 %
    /// then 500 % of one core, the busy child's whole second at once).
    #[test]
    fn children_reaped_while_a_sample_was_read_count_once() {
        let tree = FakeTree::with(&[
            ("/proc/stat", &proc_stat(&[(0, 0, 100)])),
            ("/proc/uptime", "10.00 5.00\n"),
            ("/proc/20/stat", &stat_with_children(20, 0, 100, 0)),
            ("/proc/20/status", &status(0, 0)),
            ("/proc/21/stat", &stat(21, "timeout", 20, 0, 0, 900, 0)),
            ("/proc/21/status", &status(0, 0)),
            ("/proc/22/stat", &stat(22, "sh", 21, 80, 0, 901, 0)),
            ("/proc/22/status", &status(0, 0)),
        ]);
        let opts = ReadOptions::default();
        let first = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
        // 0.2 s later the busy child used 20 more ticks and ended; the
        // parent was read before it reaped `timeout` (cutime still 0), the
        // two were read after (gone).
        tree.node("/proc/stat", &proc_stat(&[(20, 0, 100)]));
        tree.node("/proc/uptime", "10.20 5.00\n");
        end(&tree, 21);
        end(&tree, 22);
        let second = TopSample::read(tree.fs(), 0.2, &opts).unwrap();
        let a = TopInterval::new(&first, &second, 100, None);
        let sh = |i: &TopInterval| i.tasks.iter().find(|t| t.id == 20).unwrap().children_s;
        assert_eq!(sh(&a), 0.0);
        assert_eq!(a.owed.get(&20), Some(&80), "{:?}", a.owed);
        // The next sample holds the reap: 100 ticks, 80 of them shown.
        tree.node("/proc/uptime", "10.40 5.00\n");
        tree.node("/proc/20/stat", &stat_with_children(20, 0, 100, 100));
        let third = TopSample::read(tree.fs(), 0.4, &opts).unwrap();
        let b = TopInterval::after(&second, &third, 100, None, Some(&a));
        assert!(close(sh(&b), 0.2), "{:?}", b.tasks);
        assert!(b.owed.is_empty(), "{:?}", b.owed);
        // Without the interval before, the whole second would be counted.
        assert!(close(
            sh(&TopInterval::new(&second, &third, 100, None)),
            1.0
        ));
        // What is still owed is carried one interval only: a child reaped
        // without a wait (SIGCHLD ignored) never reaches `cutime`, and
        // must not hide later children's CPU for ever.
        tree.node("/proc/uptime", "10.60 5.00\n");
        tree.node("/proc/20/stat", &stat_with_children(20, 0, 100, 150));
        let fourth = TopSample::read(tree.fs(), 0.6, &opts).unwrap();
        let c = TopInterval::after(&third, &fourth, 100, None, Some(&a));
        assert!(close(sh(&c), 0.0), "{:?}", c.tasks);
        assert!(c.owed.is_empty(), "{:?}", c.owed);
        let d = TopInterval::after(&third, &fourth, 100, None, Some(&c));
        assert!(close(sh(&d), 0.5), "{:?}", d.tasks);
    }

    #[test]
    fn parses_a_real_proc_stat() {
        // This VM's /proc/stat (kernel 6.18, 2 CPUs), intr/ctxt trimmed.
        let text = "cpu  1075908 373589 281466 753534 7314 0 2521 1237 0 0\n\
                    cpu0 535047 183578 139812 383545 4196 0 943 613 0 0\n\
                    cpu1 540860 190011 141653 369989 3117 0 1577 624 0 0\n\
                    intr 26358122 0 0\nctxt 149410289\nbtime 1795400000\n";
        let s = parse_proc_stat("/proc/stat", text).unwrap();
        assert_eq!(s.cores.len(), 2);
        let (cpu, c1) = s.cores[1];
        assert_eq!(cpu, 1);
        assert_eq!(c1.busy(), 540860 + 190011 + 141653 + 1577 + 624);
        assert_eq!(c1.all(), c1.busy() + 369989 + 3117);
        assert_eq!(s.total.steal, 1237);
        // A 2.6.0 kernel's four-field line: the rest count 0.
        let old = parse_proc_stat("p", "cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(old.cores[0].1.all(), 10);
        let err = parse_proc_stat("/proc/stat", "cpu 1 2 3 4\ncpu0 1 x 3 4\n").unwrap_err();
        assert!(err.to_string().starts_with("/proc/stat:2:"), "{err}");
        let err = parse_proc_stat("/proc/stat", "intr 1\n").unwrap_err();
        assert_eq!(err.to_string(), "/proc/stat: no `cpu` field");
    }

    /// The fake tree at t = 0 s: two cores, a busy process 100 with two
    /// threads, a sleeper 200 and a process 300 that will exit.
    fn tree_at_0() -> FakeTree {
        FakeTree::with(&[
            (
                "/proc/stat",
                &proc_stat(&[(1000, 500, 8500), (2000, 0, 8000)]),
            ),
            ("/proc/uptime", "100.00 150.00\n"),
            ("/proc/100/stat", &stat(100, "busy", 1, 400, 100, 1000, 0)),
            ("/proc/100/status", &status(10, 20)),
            (
                "/proc/100/task/100/stat",
                &stat(100, "busy", 1, 300, 100, 1000, 0),
            ),
            ("/proc/100/task/100/status", &status(4, 8)),
            (
                "/proc/100/task/101/stat",
                &stat(101, "worker", 1, 100, 0, 1010, 1),
            ),
            ("/proc/100/task/101/status", &status(6, 12)),
            ("/proc/200/stat", &stat(200, "sleeper", 1, 10, 10, 2000, 1)),
            ("/proc/200/status", &status(50, 0)),
            ("/proc/300/stat", &stat(300, "leaving", 1, 5, 5, 3000, 1)),
            ("/proc/300/status", &status(1, 1)),
            (
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
                "1958400\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
                "1958400\n",
            ),
        ])
    }

    /// Two seconds later (at 100 Hz): process 100 used 150 user + 50
    /// system ticks (100 %), its worker thread 100 of them; 200 slept; 300
    /// exited; 400 started (starttime 10150 ticks = 101.5 s, after the
    /// first sample's uptime of 100 s) and used 40 ticks; core 0 was 75 %
    /// busy, core 1 25 %.
    fn advance_to_2s(tree: &FakeTree) {
        tree.node(
            "/proc/stat",
            &proc_stat(&[(1100, 550, 8550), (2050, 0, 8150)]),
        );
        tree.node("/proc/uptime", "102.00 152.00\n");
        tree.node("/proc/100/stat", &stat(100, "busy", 1, 550, 150, 1000, 1));
        tree.node("/proc/100/status", &status(13, 27));
        tree.node(
            "/proc/100/task/100/stat",
            &stat(100, "busy", 1, 350, 150, 1000, 0),
        );
        tree.node("/proc/100/task/100/status", &status(5, 10));
        tree.node(
            "/proc/100/task/101/stat",
            &stat(101, "worker", 1, 200, 0, 1010, 1),
        );
        tree.node("/proc/100/task/101/status", &status(8, 17));
        tree.node("/proc/200/status", &status(52, 0));
        std::fs::remove_dir_all(tree.host_path("/proc/300")).unwrap();
        tree.node(
            "/proc/400/stat",
            &stat(400, "newcomer", 100, 30, 10, 10150, 0),
        );
        tree.node("/proc/400/status", &status(2, 3));
        tree.node(
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
            "1516800\n",
        );
    }

    #[test]
    fn an_interval_from_a_fake_proc_tree() {
        let tree = tree_at_0();
        let opts = ReadOptions {
            which: Which::All,
            threads: true,
        };
        let before = TopSample::read(tree.fs(), 10.0, &opts).unwrap();
        assert_eq!(before.tasks.len(), 3);
        assert_eq!(before.tasks[&100].threads.len(), 2);
        advance_to_2s(&tree);
        let after = TopSample::read(tree.fs(), 12.0, &opts).unwrap();
        let mut cmd = CommandTree::new(100);
        cmd.update(&before);
        cmd.update(&after);
        let i = TopInterval::new(&before, &after, 100, Some(&cmd));
        assert_eq!(i.elapsed_s, 2.0);
        // Cores: (150 busy of 200) and (50 of 200).
        assert_eq!(i.cores.len(), 2);
        assert!(close(i.cores[0].busy_pct, 75.0), "{:?}", i.cores[0]);
        assert!(close(i.cores[0].user_pct, 50.0));
        assert!(close(i.cores[0].system_pct, 25.0));
        assert!(close(i.cores[1].busy_pct, 25.0));
        assert!(close(i.total_pct, 100.0));
        assert_eq!(i.cores[0].freq_khz, Avail::Value(1516800));
        // cpu1 has no cpufreq directory while cpu0 has one.
        let Avail::Unavailable(why) = &i.cores[1].freq_khz else {
            panic!("{:?}", i.cores[1]);
        };
        assert!(
            why.contains("cpu1 has no /sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq"),
            "{why}"
        );
        // Tasks, most CPU first: 100 (75 % user + 25 % system), the
        // newcomer 400 (40 ticks in 2 s = 20 %), then the sleeper (0 %).
        let ids: Vec<u32> = i.tasks.iter().map(|t| t.id).collect();
        assert_eq!(ids, [100, 400, 200]);
        let busy = &i.tasks[0];
        assert!(close(busy.user_pct, 75.0) && close(busy.system_pct, 25.0));
        assert!(close(busy.cpu_pct(), 100.0));
        assert_eq!(
            (
                busy.voluntary_ctxt_switches,
                busy.nonvoluntary_ctxt_switches
            ),
            (Some(3), Some(7))
        );
        assert_eq!(
            (busy.processor, busy.started, busy.in_command),
            (Some(1), false, true)
        );
        // Its threads: the worker 100 ticks (50 %), the main 100 (50 %).
        let threads: Vec<(u32, f64)> = busy.threads.iter().map(|t| (t.id, t.cpu_pct())).collect();
        assert_eq!(threads.len(), 2);
        assert!(threads.iter().all(|(_, p)| close(*p, 50.0)), "{threads:?}");
        assert_eq!(busy.threads[1].voluntary_ctxt_switches, Some(2));
        let new = &i.tasks[1];
        assert!(new.started && new.in_command, "a child of 100: {new:?}");
        assert!(close(new.user_pct, 15.0) && close(new.system_pct, 5.0));
        assert_eq!(new.voluntary_ctxt_switches, Some(2));
        let sleeper = &i.tasks[2];
        assert_eq!((sleeper.cpu_pct(), sleeper.in_command), (0.0, false));
        assert_eq!(sleeper.voluntary_ctxt_switches, Some(2));
        assert_eq!(i.exited, 1);
        assert!(close(i.command_pct(), 120.0));
    }

    #[test]
    fn a_process_missed_earlier_has_no_baseline() {
        // 400 started at 50 s, long before the first sample at uptime
        // 100 s, but was not read then (it was not asked for): its ticks
        // are not this interval's, so it is left out.
        let tree = tree_at_0();
        let opts = ReadOptions::default();
        let before = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
        advance_to_2s(&tree);
        tree.node("/proc/400/stat", &stat(400, "old", 1, 30, 10, 5000, 0));
        let after = TopSample::read(tree.fs(), 2.0, &opts).unwrap();
        let i = TopInterval::new(&before, &after, 100, None);
        assert!(i.tasks.iter().all(|t| t.id != 400));
        // A pid reused by a new process (another starttime) is new.
        tree.node("/proc/200/stat", &stat(200, "reborn", 1, 4, 0, 10190, 0));
        let reborn = TopSample::read(tree.fs(), 2.0, &opts).unwrap();
        let i = TopInterval::new(&before, &reborn, 100, None);
        let t = i.tasks.iter().find(|t| t.id == 200).unwrap();
        assert!(t.started && close(t.cpu_pct(), 2.0), "{t:?}");
        assert_eq!(i.exited, 2, "300, and the old 200");
    }

    #[test]
    fn pids_filter_and_gone_pids() {
        let tree = tree_at_0();
        let opts = ReadOptions {
            which: Which::Pids([200, 999].into()),
            threads: false,
        };
        // 999 does not exist: skipped, not an error.
        let s = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
        assert_eq!(s.tasks.keys().copied().collect::<Vec<_>>(), [200]);
        // A process whose status vanished after its stat was read.
        tree.remove("/proc/200/status");
        let s = TopSample::read(tree.fs(), 0.0, &opts).unwrap();
        assert!(s.tasks.is_empty());
        // A damaged stat of a live process is an error naming the file.
        tree.node("/proc/200/status", &status(1, 1));
        tree.node("/proc/200/stat", "200 (x) R\n");
        let err = TopSample::read(tree.fs(), 0.0, &opts).unwrap_err();
        assert!(err.to_string().starts_with("/proc/200/stat:1:"), "{err}");
    }

    #[test]
    fn no_cpufreq_says_why() {
        let tree = FakeTree::with(&[("/proc/stat", &proc_stat(&[(1, 1, 1)]))]);
        let s = TopSample::read(tree.fs(), 0.0, &ReadOptions::default()).unwrap();
        let Avail::Unavailable(why) = &s.freq_khz[0] else {
            panic!("{:?}", s.freq_khz);
        };
        assert_eq!(
            why,
            "not available here because no cpufreq driver runs on this machine (no policy in /sys/devices/system/cpu/cpufreq)"
        );
        assert_eq!(s.uptime_s, None);
    }

    #[test]
    fn totals_over_a_run() {
        let tree = tree_at_0();
        let opts = ReadOptions {
            which: Which::All,
            threads: true,
        };
        let mut w = TopWatcher::new(tree.fs(), opts, 100, Some(100));
        assert!(w.sample(0.0).unwrap().is_none());
        advance_to_2s(&tree);
        assert!(w.sample(2.0).unwrap().is_some());
        // Two more seconds with nothing running: 0 % everywhere.
        tree.node(
            "/proc/stat",
            &proc_stat(&[(1100, 550, 8750), (2050, 0, 8350)]),
        );
        tree.node("/proc/uptime", "104.00 156.00\n");
        w.sample(4.0).unwrap();
        let run = w.finish();
        let s = &run.summary;
        assert_eq!((s.window_s, s.intervals, s.capacity_pct), (4.0, 2, 200.0));
        // Core 0: 150 busy of 400 ticks; core 1: 50 of 400.
        assert!(close(s.cores[0].busy_pct, 37.5) && close(s.cores[0].max_busy_pct, 75.0));
        assert!(close(s.cores[1].busy_pct, 12.5));
        assert_eq!(s.cores[1].ticks, 400);
        assert!(close(s.total_pct, 50.0) && close(s.max_total_pct, 100.0));
        let Avail::Value(f) = &s.cores[0].freq else {
            panic!("{:?}", s.cores[0]);
        };
        assert_eq!((f.min_khz, f.max_khz, f.samples), (1516800, 1516800, 2));
        // 100: 200 ticks in 4 s = 50 %, its peak 100 %; 400: 40 ticks = 10 %.
        let busy = &s.tasks[0];
        assert_eq!((busy.id, busy.intervals), (100, 2));
        assert!(close(busy.cpu_pct, 50.0) && close(busy.max_pct, 100.0));
        assert!(close(busy.user_pct, 37.5) && close(busy.cpu_s, 2.0));
        assert_eq!(busy.voluntary_ctxt_switches, Some(3));
        assert_eq!(busy.threads.len(), 2);
        assert!(close(busy.threads[0].cpu_pct, 25.0));
        assert_eq!(s.tasks[1].id, 400);
        assert!(close(s.tasks[1].cpu_pct, 10.0) && s.tasks[1].started);
        assert!(close(s.command_pct.unwrap(), 60.0));
        assert!(close(s.max_command_pct.unwrap(), 120.0));
        // The series keeps active tasks only: the idle second interval
        // keeps the command's processes (in_command) and nothing else.
        assert_eq!(run.series.len(), 2);
        let idle: Vec<u32> = run.series[1].tasks.iter().map(|t| t.id).collect();
        assert_eq!(idle, [100, 400]);
        assert!(run.series[1].tasks[0].threads.is_empty());
    }

    #[test]
    fn a_simulated_board_reads() {
        let dir = tempfile::tempdir().unwrap();
        lever_sim::create("qcs6490", dir.path()).unwrap();
        let fs = KernelFs::new(dir.path());
        let s = TopSample::read(&fs, 0.0, &ReadOptions::default()).unwrap();
        // An octa-core with cpufreq: each core's frequency is there.
        assert_eq!(s.cpus.cores.len(), 8);
        assert!(
            s.freq_khz.iter().all(|f| f.value().is_some()),
            "{:?}",
            s.freq_khz
        );
        let i = TopInterval::new(
            &s,
            &TopSample {
                t_s: 1.0,
                ..s.clone()
            },
            100,
            None,
        );
        assert_eq!((i.cores.len(), i.total_pct), (8, 0.0));
    }
}
