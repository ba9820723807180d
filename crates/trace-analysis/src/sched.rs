//! Scheduling per thread and per CPU, from `sched_switch`,
//! `sched_waking`/`sched_wakeup`/`sched_wakeup_new` and (optionally)
//! `cpu_frequency`.
//!
//! Each thread is a state machine:
//!
//! * **running** from its switch-in to its switch-out;
//! * **runnable (preempted)** from a switch-out with `prev_state=R`/`R+`
//!   to its next switch-in (seed 000 §7.2 "normal runnable");
//! * **runnable (waking)** from the first wake-up event (`sched_waking`
//!   when enabled, else `sched_wakeup`) to the switch-in: this interval is
//!   the **wake-up latency** (seed 000 §7.2 "wake-up latency runnable");
//! * **sleeping** (`prev_state=S`, `I`, ...) or **blocked** (`D`, `D|K`)
//!   from a switch-out to the next wake-up.
//!
//! A wake-up event for a thread that is still running on a CPU (it
//! re-armed a wait and was woken before it switched out) does not start a
//! latency: the thread never left the CPU. These are counted as
//! `wakeups_while_running`.
//!
//! Before a thread's first event its state is unknown and nothing is
//! counted, except for the task a CPU's first `sched_switch` switches
//! out: it was running since that CPU's first event. Open intervals are
//! closed at the last event of the trace. CPU busy % is non-idle running
//! time over the time from the CPU's first event to the end of the trace.
//!
//! Migrations count switch-ins on a different CPU than the thread's
//! previous one. With `cpu_frequency` events, each thread's running time
//! is split by (CPU, frequency) for the CPU-bound check (seed 000 §7.2):
//! is the thread on the most capable CPU at its highest frequency? Without
//! a capacity table, "most capable" means the CPUs with the highest
//! frequency seen in the trace.

use crate::stats::{pct, Distribution, IdMap};
use lever_trace::{Event, EventKind, WakeKind};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Unknown,
    Running {
        since: u64,
        cpu: u32,
    },
    Preempted {
        since: u64,
    },
    Waking {
        since: u64,
    },
    Sleeping {
        since: u64,
        blocked: bool,
    },
    /// Switched out dead (`prev_state=X` or `Z`): its timeline ends.
    Exited,
}

#[derive(Debug)]
struct Thread {
    comm: String,
    tgid: Option<i32>,
    state: State,
    running_ns: u64,
    runnable_preempted_ns: u64,
    runnable_waking_ns: u64,
    sleeping_ns: u64,
    blocked_ns: u64,
    switches: u64,
    preemptions: u64,
    migrations: u64,
    wakeups_while_running: u64,
    last_cpu: Option<u32>,
    cpus: Vec<u32>,
    wake_latencies_ns: Vec<u64>,
    /// (cpu, khz) → running ns.
    by_freq: Vec<(u32, u64, u64)>,
    /// Sum of its `sched_stat_runtime` events.
    stat_runtime_ns: Option<u64>,
    exited: bool,
}

impl Thread {
    fn new(comm: &str) -> Self {
        Thread {
            comm: comm.to_string(),
            tgid: None,
            state: State::Unknown,
            running_ns: 0,
            runnable_preempted_ns: 0,
            runnable_waking_ns: 0,
            sleeping_ns: 0,
            blocked_ns: 0,
            switches: 0,
            preemptions: 0,
            migrations: 0,
            wakeups_while_running: 0,
            last_cpu: None,
            cpus: Vec::new(),
            wake_latencies_ns: Vec::new(),
            by_freq: Vec::new(),
            stat_runtime_ns: None,
            exited: false,
        }
    }

    /// Close the current state at `t`, adding its time to the right
    /// bucket.
    fn close(&mut self, t: u64) {
        match self.state {
            State::Unknown | State::Exited => {}
            State::Running { since, .. } => self.running_ns += t.saturating_sub(since),
            State::Preempted { since } => self.runnable_preempted_ns += t.saturating_sub(since),
            State::Waking { since } => self.runnable_waking_ns += t.saturating_sub(since),
            State::Sleeping { since, blocked } => {
                let d = t.saturating_sub(since);
                if blocked {
                    self.blocked_ns += d;
                } else {
                    self.sleeping_ns += d;
                }
            }
        }
    }

    fn add_freq_time(&mut self, cpu: u32, khz: u64, ns: u64) {
        match self
            .by_freq
            .iter_mut()
            .find(|(c, k, _)| *c == cpu && *k == khz)
        {
            Some(e) => e.2 += ns,
            None => self.by_freq.push((cpu, khz, ns)),
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Cpu {
    first_ts: Option<u64>,
    /// Thread on the CPU since `since` (0 = idle), once known.
    current: Option<i32>,
    since: u64,
    /// Start of the current (thread, frequency) segment.
    seg_since: u64,
    khz: Option<u64>,
    busy_ns: u64,
    /// Time between the last event of a task whose switch-out was lost
    /// and the first event of the next one: who ran is not known.
    unknown_ns: u64,
    /// The CPU's latest event.
    last_ts: u64,
    switches: u64,
    max_khz: u64,
}

/// Threads by tid: a small index map in front of a dense table, so a
/// lookup probes 8-byte entries, not whole thread records (this map is
/// the tracker's hottest memory, and the parser streams megabytes through
/// the caches between two lookups), and in front of the map a
/// direct-mapped cache of recent tids (a thread's index never changes,
/// so a cached one is never stale): most events name a thread seen a few
/// events before.
#[derive(Debug)]
struct Threads {
    index: IdMap<i32, u32>,
    all: Vec<(i32, Thread)>,
    recent: Box<[(i32, u32)]>,
}

/// Entries of [`Threads::recent`] (a power of two).
const RECENT: usize = 1024;

/// A tid no thread has, marking an empty [`Threads::recent`] entry.
const NO_TID: i32 = i32::MIN;

impl Default for Threads {
    fn default() -> Self {
        Threads {
            index: IdMap::default(),
            all: Vec::new(),
            recent: vec![(NO_TID, 0); RECENT].into_boxed_slice(),
        }
    }
}

impl Threads {
    /// The table index of `tid`, if it is known.
    #[inline]
    fn find(&mut self, tid: i32) -> Option<usize> {
        let slot = tid as u32 as usize & (RECENT - 1);
        let (cached, i) = self.recent[slot];
        if cached == tid && tid != NO_TID {
            return Some(i as usize);
        }
        let i = *self.index.get(&tid)?;
        self.recent[slot] = (tid, i);
        Some(i as usize)
    }

    fn get_mut(&mut self, tid: &i32) -> Option<&mut Thread> {
        let i = self.find(*tid)?;
        Some(&mut self.all[i].1)
    }

    /// The thread, created with `comm` when it is new.
    fn entry_or(&mut self, tid: i32, comm: &str) -> &mut Thread {
        let i = match self.find(tid) {
            Some(i) => i,
            None => self.push(tid, Thread::new(comm)),
        };
        &mut self.all[i].1
    }

    fn insert(&mut self, tid: i32, th: Thread) {
        match self.find(tid) {
            Some(i) => self.all[i].1 = th,
            None => {
                self.push(tid, th);
            }
        }
    }

    /// Add a new thread; its index.
    fn push(&mut self, tid: i32, th: Thread) -> usize {
        self.all.push((tid, th));
        let i = self.all.len() - 1;
        self.index.insert(tid, i as u32);
        i
    }
}

/// Scheduling tracker: feed events, then [`SchedTracker::finish`].
#[derive(Debug, Default)]
pub struct SchedTracker {
    threads: Threads,
    cpus: Vec<Cpu>,
    /// One past the highest CPU of an event's CPU column: only these CPUs
    /// can have a task on them (a CPU number in a payload, e.g. a
    /// damaged `cpu_id=8191`, must not make every wake-up scan it).
    column_cpus: usize,
    end_ts: u64,
    start_ts: Option<u64>,
    switch_events: u64,
    wakeup_events: u64,
    freq_events: u64,
    missing_switch_ins: u64,
    recovered_switch_ins: u64,
    stat_runtime_events: u64,
}

impl SchedTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn cpu(&mut self, cpu: u32) -> &mut Cpu {
        crate::stats::per_cpu(&mut self.cpus, cpu)
    }

    /// Feed one event (clock-based events only).
    pub fn event(&mut self, e: &Event<'_>) {
        if e.time_base != lever_trace::TimeBase::Clock {
            return;
        }
        let t = e.ts_ns;
        self.end_ts = self.end_ts.max(t);
        self.start_ts = Some(self.start_ts.map_or(t, |s| s.min(t)));
        self.column_cpus = self.column_cpus.max(e.cpu as usize + 1);
        let c = self.cpu(e.cpu);
        if c.first_ts.is_none() {
            c.first_ts = Some(t);
        }
        self.observe(e.cpu, e.pid, e.comm, t);
        if e.pid != 0 {
            if let Some(tgid) = e.tgid {
                if let Some(th) = self.threads.get_mut(&e.pid) {
                    th.tgid = Some(tgid);
                }
            }
        }
        match &e.kind {
            EventKind::SchedSwitch(sw) => {
                self.switch_events += 1;
                self.switch(
                    e.cpu,
                    t,
                    sw.prev_pid,
                    sw.prev_comm,
                    sw.prev_state,
                    sw.next_pid,
                    sw.next_comm,
                );
            }
            EventKind::SchedWakeup(w) => {
                self.wakeup_events += 1;
                if w.pid == 0 {
                    return;
                }
                // Is the task on a CPU right now (as far as the trace
                // shows)? Then this wake-up is the "still on a CPU" race.
                let on_cpu = self.cpus[..self.column_cpus.min(self.cpus.len())]
                    .iter()
                    .any(|c| c.current == Some(w.pid));
                let th = self.threads.entry_or(w.pid, w.comm);
                match th.state {
                    _ if on_cpu => th.wakeups_while_running += 1,
                    // Its CPU has switched to another task without a
                    // recorded switch-out of this one: from here on it
                    // is waking (its run's end is unknown, not counted).
                    State::Running { .. } => th.state = State::Waking { since: t },
                    // Already waking (sched_waking then sched_wakeup): keep
                    // the earlier. A wake-up of a preempted task changes
                    // nothing: it is already on a run queue.
                    State::Waking { .. } | State::Preempted { .. } => {}
                    State::Sleeping { .. } | State::Unknown | State::Exited => {
                        th.close(t);
                        th.state = State::Waking { since: t };
                    }
                }
                if w.kind == WakeKind::WakeupNew && th.comm != w.comm {
                    th.comm = w.comm.to_string();
                }
            }
            EventKind::CpuFrequency { state_khz, cpu } => {
                self.freq_events += 1;
                let cpu = *cpu;
                self.attribute_freq(cpu, t);
                let c = self.cpu(cpu);
                c.khz = Some(*state_khz);
                c.max_khz = c.max_khz.max(*state_khz);
            }
            EventKind::SchedStatRuntime {
                comm,
                pid,
                runtime_ns,
            } if *pid != 0 => {
                self.stat_runtime_events += 1;
                let th = self.threads.entry_or(*pid, comm);
                *th.stat_runtime_ns.get_or_insert(0) += runtime_ns;
            }
            _ => {}
        }
        self.cpus[e.cpu as usize].last_ts = t;
    }

    /// The TASK-PID column names the task on the CPU when the event
    /// fired. The CPU's first event starts that task's run; a task other
    /// than the one the CPU's last sched_switch put on means switches
    /// were lost (dropped events): the old task ran until its last event
    /// here, the new one since this event, and the gap between is
    /// unknown — charged to nobody, not to the task last switched in.
    ///
    /// ```text
    ///  rcu_preempt-16 [001] d..2.  10.000100: sched_switch: ... ==> next_comm=swapper/1 next_pid=0 ...
    ///  (switch swapper/1 → kworker/1:1 lost)
    ///  kworker/1:1-88 [001] d..2.  10.225000: sched_waking: comm=rcu_preempt pid=16 ...
    /// ```
    fn observe(&mut self, cpu: u32, pid: i32, comm: &str, t: u64) {
        let c = &mut self.cpus[cpu as usize];
        let cur = match c.current {
            Some(cur) if cur == pid => return,
            cur => cur,
        };
        let (since, last) = (c.since, c.last_ts);
        c.current = Some(pid);
        c.since = t;
        c.seg_since = t;
        if let Some(cur) = cur {
            self.recovered_switch_ins += 1;
            c.unknown_ns += t.saturating_sub(last);
            if cur != 0 {
                c.busy_ns += last.saturating_sub(since);
                if let Some(th) = self.threads.get_mut(&cur) {
                    if matches!(th.state, State::Running { cpu: rc, .. } if rc == cpu) {
                        th.close(last);
                        th.state = State::Unknown;
                    }
                }
            }
        }
        if pid != 0 {
            if let Some(th) = self.threads.get_mut(&pid) {
                // Its switch-in happened between `last` and `t`.
                th.close(if cur.is_some() { last } else { t });
                th.state = State::Running { since: t, cpu };
                if th.last_cpu != Some(cpu) && th.last_cpu.is_some() {
                    th.migrations += 1;
                }
                th.last_cpu = Some(cpu);
                if !th.cpus.contains(&cpu) {
                    th.cpus.push(cpu);
                }
            } else if cur.is_none() {
                // Running since the CPU's first event.
                let mut th = Thread::new(comm);
                th.state = State::Running { since: t, cpu };
                th.last_cpu = Some(cpu);
                th.cpus.push(cpu);
                self.threads.insert(pid, th);
            }
        }
    }

    /// Give the CPU's running thread its time at the current frequency up
    /// to `t`.
    fn attribute_freq(&mut self, cpu: u32, t: u64) {
        let c = self.cpu(cpu);
        let (cur, khz, since) = (c.current, c.khz, c.seg_since);
        c.seg_since = t;
        if let (Some(pid), Some(khz)) = (cur, khz) {
            if pid != 0 {
                if let Some(th) = self.threads.get_mut(&pid) {
                    th.add_freq_time(cpu, khz, t.saturating_sub(since));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn switch(
        &mut self,
        cpu: u32,
        t: u64,
        prev_pid: i32,
        prev_comm: &str,
        prev_state: &str,
        next_pid: i32,
        next_comm: &str,
    ) {
        self.attribute_freq(cpu, t);
        self.cpu(cpu);
        let c = &mut self.cpus[cpu as usize];
        c.switches += 1;
        // The CPU's first switch: prev ran since the CPU's first event.
        // Otherwise prev must be the task the CPU's last switch put on;
        // when it is not, that switch-in was never recorded and the start
        // of prev's run is unknown.
        let prev_since = match c.current {
            None => Some(c.first_ts.unwrap_or(t)),
            Some(cur) if cur == prev_pid => Some(c.since),
            Some(cur) => {
                // The line's TASK-PID is not its prev_pid (a hand-made
                // or damaged line): since `cur`'s switch-in, who ran is
                // unknown.
                c.unknown_ns += t.saturating_sub(c.since);
                // `cur`'s switch-out was not recorded: its run's end is
                // unknown.
                if let Some(th) = self.threads.get_mut(&cur) {
                    if matches!(th.state, State::Running { cpu: rc, .. } if rc == cpu) {
                        th.state = State::Unknown;
                    }
                }
                None
            }
        };
        if let (Some(since), true) = (prev_since, prev_pid != 0) {
            c.busy_ns += t.saturating_sub(since);
        }
        c.current = Some(next_pid);
        c.since = t;
        if prev_since.is_none() {
            self.missing_switch_ins += 1;
        }
        if prev_pid != 0 {
            let th = self.threads.entry_or(prev_pid, prev_comm);
            match (th.state, prev_since) {
                (State::Running { .. }, Some(_)) => th.close(t),
                (_, Some(since)) => th.running_ns += t.saturating_sub(since),
                // Switch-in lost: its running time is unknown.
                (_, None) => {}
            }
            let runnable = prev_state.starts_with('R');
            let dead = matches!(prev_state.as_bytes().first(), Some(b'X' | b'Z'));
            th.state = if dead {
                th.exited = true;
                State::Exited
            } else if runnable {
                th.preemptions += 1;
                State::Preempted { since: t }
            } else {
                State::Sleeping {
                    since: t,
                    blocked: prev_state.starts_with('D'),
                }
            };
            if th.last_cpu.is_none() {
                th.last_cpu = Some(cpu);
                th.cpus.push(cpu);
            }
        }
        if next_pid != 0 {
            let th = self.threads.entry_or(next_pid, next_comm);
            if let State::Waking { since } = th.state {
                th.wake_latencies_ns.push(t.saturating_sub(since));
            }
            th.close(t);
            th.state = State::Running { since: t, cpu };
            th.switches += 1;
            if !same_str(&th.comm, next_comm) {
                th.comm = next_comm.to_string();
            }
            if let Some(last) = th.last_cpu {
                if last != cpu {
                    th.migrations += 1;
                }
            }
            th.last_cpu = Some(cpu);
            if !th.cpus.contains(&cpu) {
                th.cpus.push(cpu);
            }
        }
    }

    /// Close open intervals at the last event and build the report.
    pub fn finish(mut self) -> SchedReport {
        let end = self.end_ts;
        for cpu in 0..self.cpus.len() as u32 {
            self.attribute_freq(cpu, end);
            let c = &mut self.cpus[cpu as usize];
            if let Some(pid) = c.current {
                if pid != 0 {
                    c.busy_ns += end.saturating_sub(c.since);
                }
            }
        }
        let top_khz = self.cpus.iter().map(|c| c.max_khz).max().unwrap_or(0);
        let have_freq = self.freq_events > 0;
        let cpus_max: Vec<u64> = self.cpus.iter().map(|c| c.max_khz).collect();
        let mut threads: Vec<ThreadReport> = self
            .threads
            .all
            .into_iter()
            .map(|(tid, mut th)| {
                th.close(end);
                th.cpus.sort_unstable();
                let cpu_bound = have_freq.then(|| {
                    let known: u64 = th.by_freq.iter().map(|e| e.2).sum();
                    let on_top: u64 = th
                        .by_freq
                        .iter()
                        .filter(|(c, _, _)| cpus_max.get(*c as usize) == Some(&top_khz))
                        .map(|e| e.2)
                        .sum();
                    let at_max: u64 = th
                        .by_freq
                        .iter()
                        .filter(|(c, k, _)| {
                            cpus_max.get(*c as usize) == Some(&top_khz) && *k == top_khz
                        })
                        .map(|e| e.2)
                        .sum();
                    CpuBound {
                        running_with_known_freq_ns: known,
                        on_most_capable_pct: pct(on_top, known),
                        at_max_freq_on_most_capable_pct: pct(at_max, known),
                        verdict: known > 0 && pct(at_max, known) >= 90.0,
                    }
                });
                ThreadReport {
                    tid,
                    tgid: th.tgid,
                    comm: th.comm,
                    running_ns: th.running_ns,
                    runnable_preempted_ns: th.runnable_preempted_ns,
                    runnable_waking_ns: th.runnable_waking_ns,
                    sleeping_ns: th.sleeping_ns,
                    blocked_ns: th.blocked_ns,
                    switches: th.switches,
                    preemptions: th.preemptions,
                    migrations: th.migrations,
                    wakeups_while_running: th.wakeups_while_running,
                    cpus: th.cpus,
                    wakeup_latency: Distribution::from_samples(&mut th.wake_latencies_ns),
                    cpu_bound,
                    stat_runtime_ns: th.stat_runtime_ns,
                    exited: th.exited,
                }
            })
            .collect();
        threads.sort_by(|a, b| b.running_ns.cmp(&a.running_ns).then(a.tid.cmp(&b.tid)));
        let cpus = self
            .cpus
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let first = c.first_ts?;
                let window = end.saturating_sub(first);
                Some(CpuReport {
                    cpu: i as u32,
                    window_ns: window,
                    busy_ns: c.busy_ns,
                    busy_pct: pct(c.busy_ns, window),
                    unknown_ns: c.unknown_ns,
                    unknown_pct: pct(c.unknown_ns, window),
                    switches: c.switches,
                    max_khz_seen: (c.max_khz > 0).then_some(c.max_khz),
                })
            })
            .collect();
        SchedReport {
            start_ns: self.start_ts.unwrap_or(0),
            end_ns: end,
            switch_events: self.switch_events,
            wakeup_events: self.wakeup_events,
            freq_events: self.freq_events,
            missing_switch_ins: self.missing_switch_ins,
            recovered_switch_ins: self.recovered_switch_ins,
            stat_runtime_events: self.stat_runtime_events,
            threads,
            cpus,
        }
    }
}

/// `a == b` for the short strings comms are, as an inlined loop: the
/// equal case (every switch-in of a known task) would otherwise be a
/// `memcmp` call each.
#[inline]
fn same_str(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// CPU-bound check of one thread (seed 000 §7.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuBound {
    /// Running time during which the CPU's frequency was known.
    pub running_with_known_freq_ns: u64,
    /// Share of that time on the CPUs with the highest frequency seen.
    pub on_most_capable_pct: f64,
    /// Share of that time on those CPUs at that highest frequency.
    pub at_max_freq_on_most_capable_pct: f64,
    /// True when at least 90 % of it was on the most capable CPU at its
    /// highest frequency.
    pub verdict: bool,
}

/// One thread's scheduling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadReport {
    /// Thread id.
    pub tid: i32,
    /// Thread group id (process), when the trace has the tgid column.
    pub tgid: Option<i32>,
    /// Last name seen.
    pub comm: String,
    /// Time on a CPU.
    pub running_ns: u64,
    /// Runnable after being preempted.
    pub runnable_preempted_ns: u64,
    /// Runnable between wake-up and switch-in (sum of wake-up latencies,
    /// plus an open one at the end).
    pub runnable_waking_ns: u64,
    /// Sleeping (S, I, ...).
    pub sleeping_ns: u64,
    /// Blocked in uninterruptible sleep (D).
    pub blocked_ns: u64,
    /// Switch-ins.
    pub switches: u64,
    /// Switch-outs while runnable.
    pub preemptions: u64,
    /// Switch-ins on another CPU than the previous one.
    pub migrations: u64,
    /// Wake-up events while the thread was on a CPU (no latency).
    pub wakeups_while_running: u64,
    /// CPUs it ran on.
    pub cpus: Vec<u32>,
    /// Wake-up → on-CPU latency.
    pub wakeup_latency: Distribution,
    /// CPU-bound check, when the trace has `cpu_frequency` events.
    pub cpu_bound: Option<CpuBound>,
    /// Sum of its `sched_stat_runtime` events, when traced: the kernel's
    /// own account to compare `running_ns` with.
    pub stat_runtime_ns: Option<u64>,
    /// Switched out dead (`prev_state=X`/`Z`): no sleep after that.
    pub exited: bool,
}

/// One CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuReport {
    /// CPU number.
    pub cpu: u32,
    /// From the CPU's first event to the end of the trace.
    pub window_ns: u64,
    /// Non-idle running time in the window.
    pub busy_ns: u64,
    /// busy / window.
    pub busy_pct: f64,
    /// Time in the window when switches were lost and who ran is not
    /// known (from the last event of the task the CPU was known to run
    /// to the first event of the next): in neither busy nor idle.
    pub unknown_ns: u64,
    /// unknown / window.
    pub unknown_pct: f64,
    /// sched_switch events on this CPU.
    pub switches: u64,
    /// Highest `cpu_frequency` seen.
    pub max_khz_seen: Option<u64>,
}

/// Scheduling report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedReport {
    /// First event.
    pub start_ns: u64,
    /// Last event.
    pub end_ns: u64,
    /// sched_switch events.
    pub switch_events: u64,
    /// Wake-up events (all kinds).
    pub wakeup_events: u64,
    /// cpu_frequency events.
    pub freq_events: u64,
    /// sched_switch events whose prev task is not the one the CPU's
    /// previous sched_switch put on it: a switch-in was not recorded
    /// (lost events, or a kernel that drops some), so that run's start
    /// and length are unknown and not counted.
    pub missing_switch_ins: u64,
    /// Switches recovered from the TASK-PID column: an event on a CPU by
    /// another task than the one its last sched_switch put on.
    pub recovered_switch_ins: u64,
    /// sched_stat_runtime events.
    pub stat_runtime_events: u64,
    /// Threads by running time, largest first.
    pub threads: Vec<ThreadReport>,
    /// CPUs.
    pub cpus: Vec<CpuReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tids that share a slot of the recent-tid cache keep their own
    /// records, whatever order they come in.
    #[test]
    fn tids_sharing_a_cache_slot_stay_apart() {
        let mut t = Threads::default();
        let (a, b) = (5, 5 + RECENT as i32);
        t.entry_or(a, "a").running_ns = 1;
        t.entry_or(b, "b").running_ns = 2;
        for _ in 0..3 {
            assert_eq!(t.get_mut(&a).unwrap().running_ns, 1);
            assert_eq!(t.get_mut(&b).unwrap().running_ns, 2);
        }
        assert!(t.get_mut(&(5 + 2 * RECENT as i32)).is_none());
        assert!(t.get_mut(&NO_TID).is_none(), "the empty mark is no tid");
        let mut c = Thread::new("c");
        c.running_ns = 3;
        t.insert(b, c);
        assert_eq!(t.get_mut(&b).unwrap().comm, "c");
        assert_eq!(t.all.len(), 2, "replaced in place");
        t.insert(NO_TID, Thread::new("min"));
        assert_eq!(t.get_mut(&NO_TID).unwrap().comm, "min");
    }
}
