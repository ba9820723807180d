//! Lock contention: kernel locks from `lock:contention_begin`/`_end`
//! (v5.19+), user-space futex waits from `raw_syscalls:sys_enter/exit`
//! with NR 202 (x86_64 `futex`) when those were traced.
//!
//! ```text
//!  mm-26694 [000] ...1.  8817.996375: contention_begin: 0000000080a82534 (flags=SPIN)
//!  mm-26694 [000] ...1.  8817.996380: contention_end: 0000000080a82534 (ret=0)
//!  mm-26691 [000] .....  8817.996446: sys_enter: NR 202 (7f6a72519990, 109, 6844, 0, 0, ffffffff)
//!  mm-26691 [000] .....  8817.997446: sys_exit: NR 202 = 0
//! ```
//!
//! A contention is one begin → end of the same task and lock (the task
//! is the TASK-PID column; it may sleep in between). The kernel prints
//! the lock's address hashed (`%p`) and no caller, so locks are told
//! apart by address and kind. A futex wait is a `futex` call whose
//! operation (second argument, without the PRIVATE and CLOCK_REALTIME
//! bits) waits: WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI;
//! keyed by the user address (first argument).

use crate::stats::{Distribution, IdMap};
use lever_trace::{Event, EventKind};
use serde::Serialize;
use std::collections::HashMap;

/// x86_64 `__NR_futex`.
pub const NR_FUTEX: i64 = 202;

#[derive(Debug, Default)]
struct Acc {
    kind: String,
    waits_ns: Vec<u64>,
    tasks: Vec<i32>,
}

impl Acc {
    fn add(&mut self, tid: i32, ns: u64) {
        self.waits_ns.push(ns);
        if !self.tasks.contains(&tid) {
            self.tasks.push(tid);
        }
    }
}

#[derive(Debug, Default)]
struct TaskAcc {
    comm: String,
    lock_waits: u64,
    lock_wait_ns: u64,
    futex_waits: u64,
    futex_wait_ns: u64,
}

/// Lock contention tracker.
#[derive(Debug, Default)]
pub struct LockTracker {
    open_locks: IdMap<i32, Vec<(String, u64)>>,
    open_futex: IdMap<i32, (String, u64)>,
    locks: HashMap<String, Acc>,
    futexes: HashMap<String, Acc>,
    tasks: IdMap<i32, TaskAcc>,
    lock_events: u64,
    futex_calls: u64,
}

fn futex_waits(op: &str) -> bool {
    // FUTEX_CMD_MASK = ~(FUTEX_PRIVATE_FLAG 128 | FUTEX_CLOCK_REALTIME 256)
    let Ok(op) = u64::from_str_radix(op.trim(), 16) else {
        return false;
    };
    matches!(op & 0x7f, 0 | 6 | 9 | 11 | 13)
}

impl LockTracker {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn task(&mut self, tid: i32, comm: &str) -> &mut TaskAcc {
        let t = self.tasks.entry(tid).or_default();
        if t.comm != comm {
            t.comm = comm.to_string();
        }
        t
    }

    /// Feed one event.
    pub fn event(&mut self, e: &Event<'_>) {
        let t = e.ts_ns;
        match &e.kind {
            EventKind::LockContentionBegin { lock, flags } => {
                self.lock_events += 1;
                self.open_locks
                    .entry(e.pid)
                    .or_default()
                    .push((lock.to_string(), t));
                let acc = self.locks.entry(lock.to_string()).or_default();
                // An rwsem is waited for as READ and as WRITE: keep both.
                if !acc.kind.split('|').any(|k| k == *flags) {
                    if !acc.kind.is_empty() {
                        acc.kind.push('|');
                    }
                    acc.kind.push_str(flags);
                }
            }
            EventKind::LockContentionEnd { lock, .. } => {
                self.lock_events += 1;
                let Some(stack) = self.open_locks.get_mut(&e.pid) else {
                    return;
                };
                let Some(i) = stack.iter().rposition(|(l, _)| l == lock) else {
                    return;
                };
                let (_, t0) = stack.remove(i);
                let ns = t.saturating_sub(t0);
                self.locks
                    .entry(lock.to_string())
                    .or_default()
                    .add(e.pid, ns);
                let task = self.task(e.pid, e.comm);
                task.lock_waits += 1;
                task.lock_wait_ns += ns;
            }
            EventKind::SysEnter { nr: NR_FUTEX, args } => {
                self.futex_calls += 1;
                let mut it = args.split(',');
                let (Some(uaddr), Some(op)) = (it.next(), it.next()) else {
                    return;
                };
                if futex_waits(op) {
                    self.open_futex.insert(e.pid, (uaddr.trim().to_string(), t));
                }
            }
            EventKind::SysExit { nr: NR_FUTEX, .. } => {
                if let Some((uaddr, t0)) = self.open_futex.remove(&e.pid) {
                    let ns = t.saturating_sub(t0);
                    let acc = self.futexes.entry(uaddr).or_default();
                    acc.kind = "futex".into();
                    acc.add(e.pid, ns);
                    let task = self.task(e.pid, e.comm);
                    task.futex_waits += 1;
                    task.futex_wait_ns += ns;
                }
            }
            _ => {}
        }
    }

    /// Locks and futexes by total wait, largest first.
    pub fn finish(self) -> LockReport {
        let rows = |m: HashMap<String, Acc>| {
            let mut v: Vec<LockRow> = m
                .into_iter()
                .filter(|(_, a)| !a.waits_ns.is_empty())
                .map(|(addr, mut a)| LockRow {
                    addr,
                    kind: a.kind,
                    total_wait_ns: a.waits_ns.iter().sum(),
                    wait: Distribution::from_samples(&mut a.waits_ns),
                    tasks: a.tasks.len() as u64,
                })
                .collect();
            v.sort_by(|a, b| {
                b.total_wait_ns
                    .cmp(&a.total_wait_ns)
                    .then(a.addr.cmp(&b.addr))
            });
            v
        };
        let mut tasks: Vec<TaskLockRow> = self
            .tasks
            .into_iter()
            .map(|(tid, t)| TaskLockRow {
                tid,
                comm: t.comm,
                lock_waits: t.lock_waits,
                lock_wait_ns: t.lock_wait_ns,
                futex_waits: t.futex_waits,
                futex_wait_ns: t.futex_wait_ns,
            })
            .collect();
        tasks.sort_by(|a, b| {
            (b.lock_wait_ns + b.futex_wait_ns)
                .cmp(&(a.lock_wait_ns + a.futex_wait_ns))
                .then(a.tid.cmp(&b.tid))
        });
        LockReport {
            lock_events: self.lock_events,
            futex_calls: self.futex_calls,
            locks: rows(self.locks),
            futexes: rows(self.futexes),
            tasks,
        }
    }
}

/// One lock (or futex address).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockRow {
    /// Address as the trace prints it (hashed for kernel locks).
    pub addr: String,
    /// `SPIN`, `READ`, `WRITE`, `MUTEX`..., `futex`, or `pthread_mutex`
    /// (an LTTng-UST trace's `pthread_mutex_lock` requests).
    pub kind: String,
    /// Sum of the waits.
    pub total_wait_ns: u64,
    /// Wait per contention.
    pub wait: Distribution,
    /// Distinct tasks that waited.
    pub tasks: u64,
}

/// One task's waits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskLockRow {
    /// Thread id.
    pub tid: i32,
    /// Name.
    pub comm: String,
    /// Kernel lock contentions.
    pub lock_waits: u64,
    /// Time in them.
    pub lock_wait_ns: u64,
    /// Futex waits.
    pub futex_waits: u64,
    /// Time in them.
    pub futex_wait_ns: u64,
}

/// Lock contention report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockReport {
    /// contention_begin/end events.
    pub lock_events: u64,
    /// futex sys_enter events.
    pub futex_calls: u64,
    /// Kernel locks, largest total wait first.
    pub locks: Vec<LockRow>,
    /// Futex addresses, largest total wait first.
    pub futexes: Vec<LockRow>,
    /// Tasks, largest total wait first.
    pub tasks: Vec<TaskLockRow>,
}
