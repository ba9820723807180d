//! Why a wake-up was late: the window on the measuring thread's CPU from
//! the timer's expiry (the thread's deadline) to the moment it read the
//! clock, cut into what the CPU was doing — like rtla timerlat's
//! auto-analysis, but from the ordinary sched/irq/timer/power events, so
//! it works on kernels without the `timerlat` tracer.
//!
//! The trace is ftrace text recorded with `trace_clock` = `mono`, so its
//! time stamps are CLOCK_MONOTONIC, the clock the measuring threads sleep
//! on. At a breach the measuring thread writes a marker naming itself and
//! its deadline before it stops the trace; the saved file alone is then
//! enough to redo the analysis ([`Wakeup::find_in`]):
//!
//! ```text
//! lever-lat-0-1234 [001] .....  8903.548990: tracing_mark_write: lever-latency breach: thread=0 cpu=1 tid=1234 deadline_ns=8903543000000 woke_ns=8903548980000
//! ```
//!
//! Every instant of the window is given to the innermost thing the CPU
//! was doing, tracked from the events on that CPU since the start of the
//! trace: an idle state (`cpu_idle`), a hard IRQ (`irq_handler_*`, and on
//! x86 `irq_vectors` such as `local_timer_*`), a softirq, an hrtimer
//! callback, else the running task. The task time is then split by phase:
//! before the thread was woken (`sched_waking`) the timer interrupt had
//! not been taken — interrupts were off, or the hypervisor held the vCPU;
//! after it, a task of higher priority ran, or one of equal or lower
//! priority kept the CPU (not preemptible). Time before the first event
//! seen on the CPU cannot be attributed and is *unexplained*. The parts
//! add up to the whole window.

use lever_trace::{EventKind, Line};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;

/// The text every breach marker starts with.
pub const MARKER_PREFIX: &str = "lever-latency breach:";

/// The wake-up a window explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Wakeup {
    /// Measuring thread number.
    pub thread: usize,
    /// The CPU it ran on.
    pub cpu: u32,
    /// Its thread id.
    pub tid: i32,
    /// When its timer was due, ns on CLOCK_MONOTONIC.
    pub deadline_ns: u64,
    /// When it read the clock after waking, ns on CLOCK_MONOTONIC.
    pub woke_ns: u64,
}

impl Wakeup {
    /// The marker text written at a breach.
    pub fn marker(&self) -> String {
        format!(
            "{MARKER_PREFIX} thread={} cpu={} tid={} deadline_ns={} woke_ns={}",
            self.thread, self.cpu, self.tid, self.deadline_ns, self.woke_ns
        )
    }

    /// Read a marker's text (see [`Wakeup::marker`]); `None` for any
    /// other text.
    pub fn parse_marker(text: &str) -> Option<Wakeup> {
        let rest = text.trim().strip_prefix(MARKER_PREFIX)?;
        let field = |key: &str| -> Option<u64> {
            rest.split_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))?
                .parse()
                .ok()
        };
        Some(Wakeup {
            thread: field("thread")? as usize,
            cpu: u32::try_from(field("cpu")?).ok()?,
            tid: i32::try_from(field("tid")?).ok()?,
            deadline_ns: field("deadline_ns")?,
            woke_ns: field("woke_ns")?,
        })
    }

    /// The first breach marker in a trace.
    pub fn find_in(input: impl Read) -> std::io::Result<Option<Wakeup>> {
        let mut found = None;
        lever_trace::for_each_line(
            input,
            |_, line| {
                if let (None, Line::Event(ev)) = (&found, line) {
                    if ev.name == "tracing_mark_write" {
                        found = Wakeup::parse_marker(ev.body);
                    }
                }
            },
            |_| {},
        )?;
        Ok(found)
    }

    /// How late it woke, µs (truncated, as the measurement counts it).
    pub fn latency_us(&self) -> u64 {
        self.woke_ns.saturating_sub(self.deadline_ns) / 1000
    }
}

/// What a part of the window was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartKind {
    /// The CPU was idle at the deadline: leaving the C-state (and taking
    /// the interrupt that ends it).
    IdleExit,
    /// A hard IRQ handler.
    Irq,
    /// A softirq.
    Softirq,
    /// An hrtimer callback (the thread's own `hrtimer_wakeup` included).
    Hrtimer,
    /// A task ran while the timer interrupt was due but not yet taken:
    /// interrupts off in it, or the vCPU not running.
    TimerIrqLate,
    /// A task of higher priority ran after the thread was woken.
    HigherPriorityTask,
    /// A task of equal or lower priority kept the CPU after the thread
    /// was woken (preemption off, or same-priority FIFO).
    NonPreemptibleTask,
    /// The measuring thread itself, from its switch-in to its clock read.
    SwitchIn,
    /// Time the events do not explain.
    Unexplained,
}

impl PartKind {
    /// A short description for tables.
    pub fn label(self) -> &'static str {
        match self {
            PartKind::IdleExit => "idle exit",
            PartKind::Irq => "hard IRQ",
            PartKind::Softirq => "softirq",
            PartKind::Hrtimer => "hrtimer callback",
            PartKind::TimerIrqLate => "timer IRQ late (IRQs off or vCPU held)",
            PartKind::HigherPriorityTask => "higher-priority task",
            PartKind::NonPreemptibleTask => "non-preemptible task",
            PartKind::SwitchIn => "switch-in to clock read",
            PartKind::Unexplained => "unexplained",
        }
    }
}

/// One part of the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// What it was.
    pub kind: PartKind,
    /// Which one: `comm:pid`, `virtio0-input.0 (irq 24)`, `TIMER`,
    /// `tick_nohz_handler`, `C-state 1`.
    pub name: String,
    /// The task's thread id (task parts).
    pub pid: Option<i32>,
    /// The task's kernel priority (0–99 real-time, lower is higher;
    /// 100–139 normal), when an event showed it.
    pub prio: Option<i32>,
    /// How long, ns.
    pub duration_ns: u64,
    /// Share of the window, %.
    pub share_pct: f64,
}

/// The analysis of one late wake-up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The wake-up.
    pub wakeup: Wakeup,
    /// The window, ns (`woke_ns − deadline_ns`).
    pub window_ns: u64,
    /// The measuring thread's kernel priority, when an event showed it.
    pub thread_prio: Option<i32>,
    /// When the thread was woken (`sched_waking`), ns after the deadline.
    pub woken_after_ns: Option<u64>,
    /// When it was switched in, ns after the deadline.
    pub switched_in_after_ns: Option<u64>,
    /// Events on the CPU inside the window.
    pub events: u64,
    /// The irq-flags column (`d.h2.`) of the first interrupt entry in
    /// the window — normally the thread's timer interrupt: what it found
    /// the CPU doing. See [`Analysis::preempt_depth_at_timer`].
    pub timer_irq_flags: Option<String>,
    /// The parts, largest first; they add up to `window_ns`.
    pub parts: Vec<Part>,
}

impl Analysis {
    /// The preempt depth the timer interrupt found (the 4th flag: `.` is
    /// 0): above 0, the interrupted code was in a non-preemptible section
    /// (a spinlock, `preempt_disable`), evidence that a task which kept
    /// the CPU after the wake-up did so because it could not be preempted
    /// — not because the hypervisor held the vCPU.
    pub fn preempt_depth_at_timer(&self) -> Option<u32> {
        let flag = self.timer_irq_flags.as_deref()?.chars().nth(3)?;
        match flag {
            '.' => Some(0),
            c => c.to_digit(16),
        }
    }

    /// The largest part other than the thread's own switch-in: what made
    /// the wake-up late.
    pub fn cause(&self) -> Option<&Part> {
        self.parts.iter().find(|p| p.kind != PartKind::SwitchIn)
    }
}

/// What the CPU was doing (innermost first when nested).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ctx {
    Idle(Option<u32>),
    Irq(String),
    Softirq(String),
    Hrtimer(String),
}

impl Ctx {
    fn same_kind(&self, other: &Ctx) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// A piece of the window given to one context.
#[derive(Debug)]
struct Slice {
    start_ns: u64,
    end_ns: u64,
    what: What,
}

#[derive(Debug, Clone)]
enum What {
    Ctx(Ctx),
    Task { comm: String, pid: i32 },
    Unknown,
}

/// `hrtimer_expire_entry: hrtimer=000000005a80e14e function=tick_nohz_handler now=8903548048718`
fn hrtimer_function(body: &str) -> &str {
    body.split_whitespace()
        .find_map(|kv| kv.strip_prefix("function="))
        .unwrap_or("?")
}

/// `local_timer_entry: vector=236` (x86 `irq_vectors`): the name without
/// `_entry`/`_exit` and the vector.
fn vector_event<'a>(name: &'a str, body: &str) -> Option<(&'a str, bool, String)> {
    let vector = body.strip_prefix("vector=")?;
    let (base, entry) = match name.strip_suffix("_entry") {
        Some(b) => (b, true),
        None => (name.strip_suffix("_exit")?, false),
    };
    Some((base, entry, format!("{base} (vector {vector})")))
}

/// The effect of one event on the context stack: `Push`, `Pop` (with
/// the kind popped, for exits whose entry the trace does not hold) or a
/// task switch.
enum Effect {
    Push(Ctx),
    Pop(Ctx),
    IdleExit,
    Switch { comm: String, pid: i32 },
    None,
}

fn effect(ev: &lever_trace::Event<'_>) -> Effect {
    match &ev.kind {
        EventKind::CpuIdle { state: Some(s), .. } => Effect::Push(Ctx::Idle(Some(*s))),
        EventKind::CpuIdle { state: None, .. } => Effect::IdleExit,
        EventKind::IrqEntry { irq, name } => Effect::Push(Ctx::Irq(format!("{name} (irq {irq})"))),
        EventKind::IrqExit { .. } => Effect::Pop(Ctx::Irq(String::new())),
        EventKind::SoftirqEntry { action, .. } => Effect::Push(Ctx::Softirq(action.to_string())),
        EventKind::SoftirqExit { .. } => Effect::Pop(Ctx::Softirq(String::new())),
        EventKind::SchedSwitch(sw) => Effect::Switch {
            comm: sw.next_comm.to_string(),
            pid: sw.next_pid,
        },
        _ => match ev.name {
            "hrtimer_expire_entry" => {
                Effect::Push(Ctx::Hrtimer(hrtimer_function(ev.body).to_string()))
            }
            "hrtimer_expire_exit" => Effect::Pop(Ctx::Hrtimer(String::new())),
            _ => match vector_event(ev.name, ev.body) {
                Some((_, true, name)) => Effect::Push(Ctx::Irq(name)),
                Some((_, false, _)) => Effect::Pop(Ctx::Irq(String::new())),
                None => Effect::None,
            },
        },
    }
}

/// Analyse `wakeup`'s window in a trace (ftrace text, `mono` clock).
pub fn analyze(input: impl Read, wakeup: &Wakeup) -> std::io::Result<Analysis> {
    let mut all = analyze_all(input, std::slice::from_ref(wakeup))?;
    Ok(all.remove(0))
}

/// Analyse several wake-ups' windows in one pass over a trace; one
/// analysis per wake-up, in the same order.
pub fn analyze_all(input: impl Read, wakeups: &[Wakeup]) -> std::io::Result<Vec<Analysis>> {
    let mut windows: Vec<Window> = wakeups.iter().map(Window::new).collect();
    lever_trace::for_each_line(
        input,
        |_, line| {
            if let Line::Event(ev) = line {
                for w in windows
                    .iter_mut()
                    .filter(|w| w.wakeup.cpu == ev.cpu && !w.done)
                {
                    w.feed(ev);
                }
            }
        },
        |_| {},
    )?;
    Ok(windows.into_iter().map(Window::finish).collect())
}

/// The state of one window's analysis while the trace streams by: what
/// its CPU is doing, and the slices of the window given out so far.
struct Window {
    wakeup: Wakeup,
    start: u64,
    end: u64,
    stack: Vec<Ctx>,
    task: Option<(String, i32)>,
    last_ns: Option<u64>,
    slices: Vec<Slice>,
    prio: HashMap<i32, i32>,
    // A task's name as of its latest event: `sched_switch` shows the name
    // at the switch, which an exec (chrt → the hog) changes afterwards.
    comms: HashMap<i32, String>,
    woken_ns: Option<u64>,
    switched_ns: Option<u64>,
    events: u64,
    timer_irq_flags: Option<String>,
    done: bool,
}

impl Window {
    fn new(wakeup: &Wakeup) -> Window {
        Window {
            wakeup: *wakeup,
            start: wakeup.deadline_ns,
            end: wakeup.woke_ns.max(wakeup.deadline_ns),
            stack: Vec::new(),
            task: None,
            last_ns: None,
            slices: Vec::new(),
            prio: HashMap::new(),
            comms: HashMap::new(),
            woken_ns: None,
            switched_ns: None,
            events: 0,
            timer_irq_flags: None,
            done: false,
        }
    }

    /// Give the interval from the last event to `to` to `what` (computed
    /// only when the interval reaches into the window).
    fn give(&mut self, to: u64, what: impl FnOnce(&Window) -> What) {
        let s = self.last_ns.unwrap_or(self.start).max(self.start);
        let e = to.min(self.end);
        if e > s {
            // Without an earlier event on this CPU the context is unknown.
            let what = if self.last_ns.is_none() {
                What::Unknown
            } else {
                what(self)
            };
            self.slices.push(Slice {
                start_ns: s,
                end_ns: e,
                what,
            });
        }
    }

    fn feed(&mut self, ev: &lever_trace::Event<'_>) {
        match &ev.kind {
            EventKind::SchedSwitch(sw) => {
                self.prio.insert(sw.prev_pid, sw.prev_prio);
                self.prio.insert(sw.next_pid, sw.next_prio);
            }
            EventKind::SchedWakeup(w) => {
                self.prio.insert(w.pid, w.prio);
            }
            _ => {}
        }
        let t = ev.ts_ns;
        if t >= self.end {
            self.done = true;
            self.give(self.end, |w| current(&w.stack, &w.task));
            return;
        }
        if ev.pid != 0 && self.comms.get(&ev.pid).map(String::as_str) != Some(ev.comm) {
            self.comms.insert(ev.pid, ev.comm.to_string());
        }
        if t >= self.start {
            self.events += 1;
        }
        let eff = effect(ev);
        if t + 1000 >= self.start && self.timer_irq_flags.is_none() {
            if let (Effect::Push(Ctx::Irq(_) | Ctx::Hrtimer(_)), Some(f)) = (&eff, ev.flags) {
                self.timer_irq_flags = Some(f.to_string());
            }
        }
        // The interval before this event belongs to what ran then; an
        // exit whose entry came before the trace names it too.
        self.give(t, |w| match &eff {
            Effect::Pop(kind) if !w.stack.iter().any(|c| c.same_kind(kind)) => {
                What::Ctx(kind.clone())
            }
            Effect::IdleExit if !w.stack.iter().any(|c| matches!(c, Ctx::Idle(_))) => {
                What::Ctx(Ctx::Idle(None))
            }
            _ => match (&w.task, w.stack.is_empty()) {
                // Before any switch, the event's own task was running.
                (None, true) => What::Task {
                    comm: ev.comm.to_string(),
                    pid: ev.pid,
                },
                _ => current(&w.stack, &w.task),
            },
        });
        self.last_ns = Some(t);
        if self.task.is_none() {
            self.task = Some((ev.comm.to_string(), ev.pid));
        }
        match eff {
            Effect::Push(c) => {
                if matches!(c, Ctx::Idle(_)) {
                    self.stack.retain(|x| !matches!(x, Ctx::Idle(_)));
                }
                self.stack.push(c);
            }
            Effect::Pop(kind) => {
                if let Some(i) = self.stack.iter().rposition(|c| c.same_kind(&kind)) {
                    self.stack.truncate(i);
                }
            }
            Effect::IdleExit => self.stack.retain(|x| !matches!(x, Ctx::Idle(_))),
            Effect::Switch { comm, pid } => {
                if pid == self.wakeup.tid && t >= self.start && self.switched_ns.is_none() {
                    self.switched_ns = Some(t);
                }
                self.task = Some((comm, pid));
            }
            Effect::None => {}
        }
        if let EventKind::SchedWakeup(w) = &ev.kind {
            // Truncation to µs in the text can put the waking a hair
            // before the deadline.
            if w.pid == self.wakeup.tid && t + 1000 >= self.start && self.woken_ns.is_none() {
                self.woken_ns = Some(t.max(self.start));
            }
        }
    }

    fn finish(mut self) -> Analysis {
        if !self.done {
            self.give(self.end, |w| current(&w.stack, &w.task));
        }
        let (start, end) = (self.start, self.end);
        let thread_prio = self.prio.get(&self.wakeup.tid).copied();
        let parts = classify(
            &self.slices,
            &self.wakeup,
            self.woken_ns,
            thread_prio,
            &self.prio,
            &self.comms,
            end - start,
        );
        Analysis {
            wakeup: self.wakeup,
            window_ns: end - start,
            thread_prio,
            woken_after_ns: self.woken_ns.map(|t| t - start),
            switched_in_after_ns: self.switched_ns.map(|t| t - start),
            events: self.events,
            timer_irq_flags: self.timer_irq_flags,
            parts,
        }
    }
}

fn current(stack: &[Ctx], task: &Option<(String, i32)>) -> What {
    match (stack.last(), task) {
        (Some(c), _) => What::Ctx(c.clone()),
        (None, Some((comm, pid))) => What::Task {
            comm: comm.clone(),
            pid: *pid,
        },
        (None, None) => What::Unknown,
    }
}

fn classify(
    slices: &[Slice],
    wakeup: &Wakeup,
    woken_ns: Option<u64>,
    thread_prio: Option<i32>,
    prio: &HashMap<i32, i32>,
    comms: &HashMap<i32, String>,
    window_ns: u64,
) -> Vec<Part> {
    let mut sums: BTreeMap<(PartKind, String, Option<i32>), u64> = BTreeMap::new();
    let mut add = |kind, name: String, pid, ns| *sums.entry((kind, name, pid)).or_default() += ns;
    for s in slices {
        // A slice may straddle the waking when it happened on another CPU.
        let cut = woken_ns.filter(|&w| w > s.start_ns && w < s.end_ns);
        let pieces = match cut {
            Some(w) => vec![(s.start_ns, w), (w, s.end_ns)],
            None => vec![(s.start_ns, s.end_ns)],
        };
        for (a, b) in pieces {
            let before_waking = woken_ns.is_none_or(|w| a < w);
            let ns = b - a;
            match &s.what {
                What::Unknown => add(
                    PartKind::Unexplained,
                    format!("before the first event on CPU {}", wakeup.cpu),
                    None,
                    ns,
                ),
                What::Ctx(Ctx::Idle(state)) => {
                    let name = state.map_or("idle".to_string(), |s| format!("C-state {s}"));
                    if before_waking {
                        add(PartKind::IdleExit, name, None, ns)
                    } else {
                        add(
                            PartKind::Unexplained,
                            format!("{name} after waking"),
                            None,
                            ns,
                        )
                    }
                }
                What::Ctx(Ctx::Irq(n)) => add(PartKind::Irq, n.clone(), None, ns),
                What::Ctx(Ctx::Softirq(n)) => add(PartKind::Softirq, n.clone(), None, ns),
                What::Ctx(Ctx::Hrtimer(n)) => add(PartKind::Hrtimer, n.clone(), None, ns),
                What::Task { pid, .. } if *pid == wakeup.tid => add(
                    PartKind::SwitchIn,
                    "measuring thread".into(),
                    Some(*pid),
                    ns,
                ),
                What::Task { pid: 0, .. } if before_waking => {
                    add(PartKind::IdleExit, "idle".into(), None, ns)
                }
                What::Task { comm, pid } => {
                    let p = prio.get(pid).copied();
                    let higher = matches!((p, thread_prio), (Some(p), Some(t)) if p < t);
                    let kind = if woken_ns.is_some() && before_waking {
                        PartKind::TimerIrqLate
                    } else if higher {
                        PartKind::HigherPriorityTask
                    } else if woken_ns.is_some() {
                        PartKind::NonPreemptibleTask
                    } else {
                        PartKind::Unexplained
                    };
                    let comm = comms.get(pid).unwrap_or(comm);
                    add(kind, format!("{comm}:{pid}"), Some(*pid), ns)
                }
            }
        }
    }
    let mut parts: Vec<Part> = sums
        .into_iter()
        .map(|((kind, name, pid), duration_ns)| Part {
            kind,
            name,
            pid,
            prio: pid.and_then(|p| prio.get(&p).copied()),
            duration_ns,
            share_pct: if window_ns == 0 {
                0.0
            } else {
                duration_ns as f64 * 100.0 / window_ns as f64
            },
        })
        .collect();
    parts.sort_by(|a, b| b.duration_ns.cmp(&a.duration_ns).then(a.kind.cmp(&b.kind)));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "\
# tracer: nop
           hog-500     [001] d..2.   100.000100: sched_switch: prev_comm=hog prev_pid=500 prev_prio=39 prev_state=R ==> next_comm=hog next_pid=500 next_prio=39
           hog-500     [001] d.h..   100.001002: hrtimer_expire_entry: hrtimer=00000000deadbeef function=hrtimer_wakeup now=100001001000
           hog-500     [001] d.h2.   100.001003: sched_waking: comm=lever-lat-0 pid=42 prio=49 target_cpu=001
           hog-500     [001] d.h..   100.001004: hrtimer_expire_exit: hrtimer=00000000deadbeef
           hog-500     [001] d.h..   100.002000: irq_handler_entry: irq=24 name=virtio0-input.0
           hog-500     [001] d.h..   100.002010: irq_handler_exit: irq=24 ret=handled
           hog-500     [001] d..2.   100.004000: sched_switch: prev_comm=hog prev_pid=500 prev_prio=39 prev_state=S ==> next_comm=lever-lat-0 next_pid=42 next_prio=49
     lever-lat-0-42    [001] .....   100.004005: tracing_mark_write: lever-latency breach: thread=0 cpu=1 tid=42 deadline_ns=100001000000 woke_ns=100004003000
";

    #[test]
    fn marker_round_trips() {
        let w = Wakeup {
            thread: 2,
            cpu: 1,
            tid: 42,
            deadline_ns: 5,
            woke_ns: 9,
        };
        assert_eq!(Wakeup::parse_marker(&w.marker()), Some(w));
        assert_eq!(Wakeup::parse_marker("B Connect"), None);
    }

    #[test]
    fn higher_priority_hog_is_the_cause_and_parts_add_up() {
        let w = Wakeup::find_in(T.as_bytes()).unwrap().unwrap();
        assert_eq!((w.cpu, w.tid, w.latency_us()), (1, 42, 3003));
        let a = analyze(T.as_bytes(), &w).unwrap();
        assert_eq!(
            a.parts.iter().map(|p| p.duration_ns).sum::<u64>(),
            a.window_ns
        );
        let cause = a.cause().unwrap();
        assert_eq!(cause.kind, PartKind::HigherPriorityTask);
        assert_eq!((cause.name.as_str(), cause.prio), ("hog:500", Some(39)));
        // 1.004 ms → 4.000 ms minus the 10 µs IRQ.
        assert_eq!(cause.duration_ns, 2_986_000);
        assert_eq!(a.thread_prio, Some(49));
        assert_eq!(a.woken_after_ns, Some(3_000));
        assert_eq!(a.timer_irq_flags.as_deref(), Some("d.h.."));
        assert_eq!(a.preempt_depth_at_timer(), Some(0));
        let irq = a.parts.iter().find(|p| p.kind == PartKind::Irq).unwrap();
        assert_eq!(
            (irq.name.as_str(), irq.duration_ns),
            ("virtio0-input.0 (irq 24)", 10_000)
        );
        let late = a
            .parts
            .iter()
            .find(|p| p.kind == PartKind::TimerIrqLate)
            .unwrap();
        assert_eq!(late.duration_ns, 2_000);
        let switch = a
            .parts
            .iter()
            .find(|p| p.kind == PartKind::SwitchIn)
            .unwrap();
        assert_eq!(switch.duration_ns, 3_000);
    }

    #[test]
    fn idle_exit_and_unknown_start() {
        let t = "\
          <idle>-0       [000] d..1.    50.000000: cpu_idle: state=2 cpu_id=0
          <idle>-0       [000] d.h1.    50.000080: irq_handler_entry: irq=1 name=timer
          <idle>-0       [000] d.h1.    50.000085: irq_handler_exit: irq=1 ret=handled
          <idle>-0       [000] d..1.    50.000086: cpu_idle: state=4294967295 cpu_id=0
          <idle>-0       [000] d..2.    50.000090: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=lat next_pid=7 next_prio=9
";
        let w = Wakeup {
            thread: 0,
            cpu: 0,
            tid: 7,
            deadline_ns: 50_000_010_000,
            woke_ns: 50_000_095_000,
        };
        let a = analyze(t.as_bytes(), &w).unwrap();
        assert_eq!(a.cause().unwrap().kind, PartKind::IdleExit);
        assert_eq!(a.cause().unwrap().name, "C-state 2");
        // 10 → 80 µs, and 85 → 86 µs after the IRQ until cpu_idle's exit.
        assert_eq!(a.cause().unwrap().duration_ns, 71_000);
        // A window before any event is unexplained, not blamed on a task.
        let early = Wakeup {
            deadline_ns: 49_000_000_000,
            woke_ns: 49_000_010_000,
            ..w
        };
        let a = analyze(t.as_bytes(), &early).unwrap();
        assert_eq!(a.parts.len(), 1);
        assert_eq!(a.parts[0].kind, PartKind::Unexplained);
    }
}
