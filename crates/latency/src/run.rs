//! The measurement: one thread per planned CPU, pinned, at its policy and
//! priority, sleeping to absolute CLOCK_MONOTONIC deadlines with
//! `clock_nanosleep(TIMER_ABSTIME)` and recording how late each wake-up
//! was — cyclictest's default mode.
//!
//! While it runs the process holds `/dev/cpu_dma_latency` at 0 (unless
//! `--laptop`), through the same PM QoS hold-fd path the resource manager
//! uses (`lever-tunables`), and optionally `mlockall`. Everything it
//! changes is undone when [`measure`] returns, whatever the outcome: the
//! PM QoS descriptor is closed, memory unlocked, the main thread's
//! affinity restored.
//!
//! Order of set-up, so that a refusal leaves nothing behind: the plan
//! (flags, CPUs), the real-time privilege (probed from a throw-away
//! thread), the trace instance (`-b`/`--analyze`, [`crate::tracing`]), the
//! `--load`s ([`crate::load`]), then affinity, mlockall and PM QoS. At a
//! breach the measuring thread marks the trace and stops it itself, so the
//! window it explains ends the buffer; afterwards the loads are stopped,
//! the trace saved and its instance removed, and each window analysed
//! ([`crate::breach`]).

use crate::breach::Wakeup;
use crate::config::{Config, Policy, ThreadPlan, SPIKE_NODES};
use crate::error::LatencyError;
use crate::report::{Ended, LatencyReport, Source, ThreadReport};
use crate::stats::{Spike, ThreadStats};
use crate::tracing::BreachTrace;
use lever_kernel::{paths, KernelError, KernelFs};
use rustix::thread::CpuSet;
use rustix::time::{ClockId, Timespec};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The histogram kept for percentiles when `-h` is not given, µs.
pub const DEFAULT_HIST_US: usize = 10_000;
/// How many spikes `--analyze` explains: the last ones, whose windows
/// the ring buffer still holds at the end (the first would be overwritten
/// on a long or busy run).
pub const ANALYZE_MAX: usize = 32;
/// How often the status callback runs.
pub const STATUS_PERIOD: Duration = Duration::from_millis(100);

/// A live view of one thread, for the status line.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The plan it runs.
    pub plan: ThreadPlan,
    /// Thread id (0 until started).
    pub tid: u32,
    /// Samples so far.
    pub cycles: u64,
    /// Smallest, last, largest latency (µs).
    pub min_us: u64,
    /// The last sample.
    pub act_us: u64,
    /// Mean (truncated, as cyclictest prints it).
    pub avg_us: u64,
    /// Largest.
    pub max_us: u64,
}

#[derive(Default)]
struct Live {
    tid: AtomicU32,
    cycles: AtomicU64,
    min: AtomicU64,
    act: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

/// What one thread hands back.
struct Outcome {
    stats: ThreadStats,
    spikes: Vec<Spike>,
    spike_count: u64,
    breach: Option<Spike>,
    /// The breach's and (with `--analyze`) the last spikes' windows.
    wakeups: std::collections::VecDeque<Wakeup>,
    cpu_time_ms: f64,
    tid: u32,
}

/// The online CPUs under `fs`'s root; `lever-cpu` owns how they are read.
pub(crate) fn online_cpus(fs: &KernelFs) -> Result<Vec<u32>, LatencyError> {
    Ok(lever_cpu::topology::online_cpus(fs)?)
}

/// `/dev/cpu_dma_latency` held at 0 µs for as long as this lives (PM QoS:
/// the request lasts while the descriptor is open).
pub struct DmaLatencyHold {
    engine: lever_engine::Engine,
    applier: lever_tunables::Applier,
}

impl DmaLatencyHold {
    /// Open the device and write 0; `Ok(None)` when the kernel has no such
    /// device.
    pub fn hold(fs: &KernelFs) -> Result<Option<DmaLatencyHold>, KernelError> {
        use lever_engine::*;
        let opcode = Opcode(0);
        let spec = ResourceSpec {
            name: "cpu_dma_latency".into(),
            opcode,
            node: paths::CPU_DMA_LATENCY.into(),
            unit: "us".into(),
            low: 0,
            high: i64::from(i32::MAX),
            steps: None,
            aggregation: Aggregation::Min,
            permission: Permission::ThirdParty,
            description: "PM QoS CPU wake-up latency".into(),
            kind: ResourceKind::HoldFd,
        };
        let mut engine = Engine::new(vec![spec]).expect("one resource, no pairs");
        let request = Request {
            id: RequestId(1),
            owner: OwnerId(1),
            priority: PriorityClass::SystemHigh,
            deadline: None,
            pairs: vec![(opcode, 0)],
        };
        let plan = engine
            .acquire(request, Duration::ZERO)
            .expect("a valid request");
        let mut applier = lever_tunables::Applier::new(fs.clone());
        for applied in applier.apply(&engine, &plan) {
            match applied.result {
                Ok(_) => {}
                Err(e) if e.is_missing() => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        Ok(Some(DmaLatencyHold { engine, applier }))
    }
}

impl Drop for DmaLatencyHold {
    fn drop(&mut self) {
        let plan = self.engine.release_all();
        // Closing the descriptor cannot fail in a way we could act on.
        let _ = self.applier.apply(&self.engine, &plan);
    }
}

/// Restores the main thread's affinity and unlocks memory when dropped.
struct Restore {
    affinity: Option<CpuSet>,
    unlock: bool,
}

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(set) = &self.affinity {
            let _ = rustix::thread::sched_setaffinity(None, set);
        }
        if self.unlock {
            let _ = rustix::mm::munlockall();
        }
    }
}

fn cpuset(cpus: &[u32]) -> CpuSet {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c as usize);
    }
    set
}

fn now() -> Timespec {
    rustix::time::clock_gettime(ClockId::Monotonic)
}

/// cyclictest's `calcdiff`: whole seconds apart in µs plus the nanosecond
/// difference truncated toward zero — kept identical so figures compare.
fn calcdiff_us(t1: &Timespec, t2: &Timespec) -> i64 {
    (t1.tv_sec - t2.tv_sec) * 1_000_000 + (t1.tv_nsec - t2.tv_nsec) / 1000
}

fn add_ns(t: &mut Timespec, ns: i64) {
    t.tv_nsec += ns % 1_000_000_000;
    t.tv_sec += ns / 1_000_000_000;
    if t.tv_nsec >= 1_000_000_000 {
        t.tv_nsec -= 1_000_000_000;
        t.tv_sec += 1;
    }
}

fn greater(a: &Timespec, b: &Timespec) -> bool {
    (a.tv_sec, a.tv_nsec) > (b.tv_sec, b.tv_nsec)
}

fn micros(t: &Timespec) -> u64 {
    (t.tv_sec as u64) * 1_000_000 + (t.tv_nsec as u64) / 1000
}

fn nanos(t: &Timespec) -> u64 {
    (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
}

/// Check, from a short-lived thread, that this process may use the
/// real-time policy at that priority; nothing is changed.
fn probe_policy(policy: Policy, priority: u32) -> Result<(), LatencyError> {
    if !policy.is_realtime() {
        return Ok(());
    }
    let result = std::thread::spawn(move || {
        let r = lever_syscalls::set_scheduler(policy.syscall(), priority);
        if r.is_ok() {
            let _ = lever_syscalls::set_scheduler(lever_syscalls::SchedPolicy::Other, 0);
        }
        r
    })
    .join()
    .expect("probe thread does not panic");
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(1) => Err(LatencyError::NotPermitted {
            policy: policy.name().to_uppercase(),
            priority,
            source: e,
        }),
        Err(e) => Err(LatencyError::Syscall {
            op: format!(
                "sched_setscheduler(SCHED_{}, {priority})",
                policy.name().to_uppercase()
            ),
            source: e,
        }),
    }
}

struct Shared<'a> {
    cfg: &'a Config,
    /// One flag for every thread: a breach, the end of `-D`, the first
    /// thread to reach `-l` (as in cyclictest) or Ctrl-C ends them all.
    shutdown: &'a AtomicBool,
    stop_at: Option<Timespec>,
    live: &'a Live,
    trace: Option<&'a BreachTrace>,
}

fn thread_main(
    plan: &ThreadPlan,
    shared: &Shared,
    hist_us: usize,
    ready: mpsc::Sender<Result<u32, LatencyError>>,
) -> Option<Outcome> {
    let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
    if let Some(cpu) = plan.cpu {
        if let Err(source) = rustix::thread::sched_setaffinity(None, &cpuset(&[cpu])) {
            let _ = ready.send(Err(LatencyError::Syscall {
                op: format!("pin measuring thread {} to CPU {cpu}", plan.index),
                source: source.into(),
            }));
            return None;
        }
    }
    if let Err(e) = lever_syscalls::set_scheduler(plan.policy.syscall(), plan.priority) {
        let _ = ready.send(Err(LatencyError::Syscall {
            op: format!(
                "set thread {} to SCHED_{} priority {}",
                plan.index,
                plan.policy.name().to_uppercase(),
                plan.priority
            ),
            source: e,
        }));
        return None;
    }
    shared.live.tid.store(tid, Relaxed);
    let _ = ready.send(Ok(tid));
    drop(ready);

    let cfg = shared.cfg;
    let interval_ns = plan.interval_us as i64 * 1000;
    let mut stats = ThreadStats::new(hist_us);
    let mut spikes = Vec::new();
    let mut spike_count = 0;
    let mut breach = None;
    let mut wakeups = std::collections::VecDeque::with_capacity(ANALYZE_MAX);
    let wakeup = |next: &Timespec, woke: &Timespec| Wakeup {
        thread: plan.index,
        cpu: plan
            .cpu
            .unwrap_or_else(|| rustix::thread::sched_getcpu() as u32),
        tid: tid as i32,
        deadline_ns: nanos(next),
        woke_ns: nanos(woke),
    };
    let mut next = now();
    add_ns(&mut next, interval_ns);
    while !shared.shutdown.load(Relaxed) {
        match rustix::thread::clock_nanosleep_absolute(ClockId::Monotonic, &next) {
            Ok(()) => {}
            // A signal (Ctrl-C) landed on this thread: look at shutdown again.
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        let woke = now();
        let latency_us = calcdiff_us(&woke, &next).max(0) as u64;
        stats.record(latency_us);
        let live = shared.live;
        live.cycles.store(stats.cycles, Relaxed);
        live.act.store(latency_us, Relaxed);
        live.sum.store(stats.sum_us, Relaxed);
        live.min.store(stats.min_us.unwrap_or(0), Relaxed);
        live.max.store(stats.max_us.unwrap_or(0), Relaxed);
        if cfg.spike_us.is_some_and(|t| latency_us > t) {
            spike_count += 1;
            if cfg.analyze {
                if wakeups.len() == ANALYZE_MAX {
                    wakeups.pop_front();
                }
                wakeups.push_back(wakeup(&next, &woke));
            }
            if spikes.len() < SPIKE_NODES {
                spikes.push(Spike {
                    thread: plan.index,
                    latency_us,
                    timestamp_us: micros(&woke),
                });
            }
        }
        if let Some(threshold) = cfg.breach_us {
            if latency_us > threshold {
                breach = Some(Spike {
                    thread: plan.index,
                    latency_us,
                    timestamp_us: micros(&woke),
                });
                let w = wakeup(&next, &woke);
                if let Some(trace) = shared.trace {
                    trace.mark_and_stop(&w);
                }
                // The breach alone is explained, whatever spikes came before.
                wakeups.clear();
                wakeups.push_back(w);
                shared.shutdown.store(true, Relaxed);
                break;
            }
        }
        if shared.stop_at.as_ref().is_some_and(|s| !greater(s, &woke)) {
            shared.shutdown.store(true, Relaxed);
        }
        add_ns(&mut next, interval_ns);
        while greater(&woke, &next) {
            add_ns(&mut next, interval_ns);
            stats.missed_periods += 1;
        }
        if cfg.loops.is_some_and(|l| stats.cycles >= l) {
            // cyclictest stops every thread when the first reaches -l.
            shared.shutdown.store(true, Relaxed);
            break;
        }
    }
    let _ = lever_syscalls::set_scheduler(lever_syscalls::SchedPolicy::Other, 0);
    let cpu = rustix::time::clock_gettime(ClockId::ThreadCPUTime);
    Some(Outcome {
        stats,
        spikes,
        spike_count,
        breach,
        wakeups,
        cpu_time_ms: cpu.tv_sec as f64 * 1e3 + cpu.tv_nsec as f64 / 1e6,
        tid,
    })
}

/// Run the measurement described by `cfg` on this machine (`fs` is the
/// root the online CPUs and `/dev/cpu_dma_latency` are found under).
///
/// `stop` ends it early (Ctrl-C) with a report; `status` is called about
/// every 100 ms with a snapshot of each thread, for a live status line.
pub fn measure(
    fs: &KernelFs,
    cfg: &Config,
    stop: &AtomicBool,
    mut status: impl FnMut(&[Snapshot]),
) -> Result<LatencyReport, LatencyError> {
    let online = online_cpus(fs)?;
    let plans = cfg.plan(&online)?;
    let policy = cfg.effective_policy();
    probe_policy(policy, plans[0].priority)?;
    let mut notes = Vec::new();
    // Tracing first: if it cannot be set up nothing else has been changed;
    // from here on the instance is removed on every way out (drop).
    let trace = match cfg.trace_reason() {
        Some(option) => {
            let out = cfg
                .trace_out
                .clone()
                .unwrap_or_else(crate::tracing::default_out);
            Some(BreachTrace::start(fs, option, &out)?)
        }
        None => None,
    };
    let load = crate::load::Load::start(&cfg.loads)?;

    let mut restore = Restore {
        affinity: None,
        unlock: false,
    };
    if let Some(cpus) = &cfg.main_affinity {
        let old = rustix::thread::sched_getaffinity(None).map_err(|e| LatencyError::Syscall {
            op: "read the main thread's affinity".into(),
            source: e.into(),
        })?;
        rustix::thread::sched_setaffinity(None, &cpuset(cpus)).map_err(|e| {
            LatencyError::Syscall {
                op: format!(
                    "pin the main thread to CPU {}",
                    lever_kernel::format_cpu_list(cpus)
                ),
                source: e.into(),
            }
        })?;
        restore.affinity = Some(old);
    }
    if cfg.mlock {
        use rustix::mm::MlockAllFlags as F;
        rustix::mm::mlockall(F::CURRENT | F::FUTURE)
            .map_err(|e| LatencyError::MemLock { source: e.into() })?;
        restore.unlock = true;
        notes.push("memory locked (mlockall)".into());
    }
    let _dma = if cfg.laptop {
        notes.push("--laptop: /dev/cpu_dma_latency not held; C-state exits add to latency".into());
        None
    } else {
        match DmaLatencyHold::hold(fs) {
            Ok(Some(h)) => {
                notes.push("/dev/cpu_dma_latency held at 0 µs while measuring".into());
                Some(h)
            }
            Ok(None) => {
                notes.push("/dev/cpu_dma_latency is missing: C-states were not held off".into());
                None
            }
            Err(e) => {
                notes.push(format!("/dev/cpu_dma_latency not held: {e}"));
                None
            }
        }
    };

    let hist_us = cfg.histogram_us.map_or(DEFAULT_HIST_US, |h| h as usize);
    let lives: Vec<Live> = plans.iter().map(|_| Live::default()).collect();
    let stop_at = cfg.duration.map(|d| {
        let mut t = now();
        add_ns(&mut t, d.as_nanos() as i64);
        t
    });
    let started = Instant::now();
    let mut interrupted = false;
    let shutdown = AtomicBool::new(false);
    let shared: Vec<Shared> = lives
        .iter()
        .map(|live| Shared {
            cfg,
            shutdown: &shutdown,
            stop_at,
            live,
            trace: trace.as_ref(),
        })
        .collect();
    let outcomes: Result<Vec<Outcome>, LatencyError> = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        let handles: Vec<_> = plans
            .iter()
            .zip(&shared)
            .map(|(plan, sh)| {
                let tx = tx.clone();
                std::thread::Builder::new()
                    .name(format!("lever-lat-{}", plan.index))
                    .spawn_scoped(scope, move || thread_main(plan, sh, hist_us, tx))
                    .expect("spawn a measuring thread")
            })
            .collect();
        drop(tx);
        let shutdown_all = || shutdown.store(true, Relaxed);
        let mut first_error = None;
        for _ in 0..plans.len() {
            match rx.recv() {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => break,
            }
        }
        if first_error.is_some() {
            shutdown_all();
        }
        while first_error.is_none() && !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(STATUS_PERIOD);
            if stop.load(Relaxed) {
                interrupted = true;
                shutdown_all();
            }
            let snaps: Vec<Snapshot> = plans
                .iter()
                .zip(&lives)
                .map(|(plan, l)| {
                    let cycles = l.cycles.load(Relaxed);
                    Snapshot {
                        plan: plan.clone(),
                        tid: l.tid.load(Relaxed),
                        cycles,
                        min_us: l.min.load(Relaxed),
                        act_us: l.act.load(Relaxed),
                        avg_us: l.sum.load(Relaxed).checked_div(cycles).unwrap_or(0),
                        max_us: l.max.load(Relaxed),
                    }
                })
                .collect();
            status(&snaps);
        }
        let outcomes: Vec<Option<Outcome>> = handles
            .into_iter()
            .map(|h| h.join().expect("measuring thread does not panic"))
            .collect();
        match first_error {
            Some(e) => Err(e),
            None => Ok(outcomes.into_iter().flatten().collect()),
        }
    });
    let outcomes = outcomes?;
    let elapsed_s = started.elapsed().as_secs_f64();
    drop(restore);
    drop(shared);
    let loads = load.descriptions.clone();
    load.stop();

    let breach = outcomes
        .iter()
        .filter_map(|o| o.breach)
        .min_by_key(|b| b.timestamp_us);
    let ended = if let Some(b) = breach {
        Ended::Breach {
            thread: b.thread,
            cpu: plans[b.thread].cpu,
            latency_us: b.latency_us,
            threshold_us: cfg.breach_us.unwrap_or(0),
            timestamp_us: b.timestamp_us,
        }
    } else if interrupted {
        Ended::Interrupted
    } else if cfg.loops.is_some() && outcomes.iter().any(|o| Some(o.stats.cycles) >= cfg.loops) {
        Ended::Loops
    } else {
        Ended::Duration
    };
    let (trace_file, analyses) = match trace {
        // `-b` and no breach: like cyclictest, no trace is kept (unless
        // --trace-out asked for the file).
        Some(trace) if breach.is_none() && !cfg.analyze && cfg.trace_out.is_none() => {
            trace.discard();
            notes.push(format!(
                "no wake-up over -b {} µs: the trace was not kept (--trace-out FILE keeps it)",
                cfg.breach_us.unwrap_or(0)
            ));
            (None, Vec::new())
        }
        Some(trace) => {
            let mut wakeups: Vec<Wakeup> = match breach {
                Some(b) => outcomes[b.thread].wakeups.iter().copied().collect(),
                None => outcomes
                    .iter()
                    .flat_map(|o| o.wakeups.iter().copied())
                    .collect(),
            };
            wakeups.sort_by_key(|w| w.deadline_ns);
            let extra = wakeups.len().saturating_sub(ANALYZE_MAX);
            wakeups.drain(..extra);
            let (path, analyses) = trace.finish(&wakeups)?;
            (Some(path.display().to_string()), analyses)
        }
        None => (None, Vec::new()),
    };
    let mut spikes: Vec<Spike> = outcomes.iter().flat_map(|o| o.spikes.clone()).collect();
    spikes.sort_by_key(|s| s.timestamp_us);
    spikes.truncate(SPIKE_NODES);
    let threads = plans
        .iter()
        .zip(&outcomes)
        .map(|(plan, o)| ThreadReport {
            tid: Some(o.tid),
            cpu: plan.cpu,
            priority: Some(plan.priority),
            interval_us: Some(plan.interval_us),
            cpu_time_ms: Some(o.cpu_time_ms),
            ..ThreadReport::from_stats(plan.index, &o.stats)
        })
        .collect();
    Ok(LatencyReport {
        source: Source::Measured,
        policy: Some(policy.name().to_string()),
        threads,
        histogram_us: cfg.histogram_us,
        spike_threshold_us: cfg.spike_us,
        spikes,
        spike_count: outcomes.iter().map(|o| o.spike_count).sum(),
        ended,
        elapsed_s: Some(elapsed_s),
        notes,
        loads,
        trace_file,
        analyses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calcdiff_truncates_the_nanoseconds_like_cyclictest() {
        let t = |s, ns| Timespec {
            tv_sec: s,
            tv_nsec: ns,
        };
        assert_eq!(calcdiff_us(&t(1, 5_900), &t(1, 0)), 5);
        // Across a second boundary cyclictest truncates the negative
        // nanosecond part toward zero: 1 s − 999.9998 ms → 1 µs, not 0.
        assert_eq!(calcdiff_us(&t(1, 100), &t(0, 999_999_900)), 1);
        let mut a = t(0, 999_999_000);
        add_ns(&mut a, 2_000);
        assert_eq!((a.tv_sec, a.tv_nsec), (1, 1_000));
    }
}
