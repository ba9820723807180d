//! Typed events: the payloads Lever analyses, parsed from the text after
//! `name: `. Field names and formats are the kernel's `TP_printk` output
//! (include/trace/events/sched.h, power.h, irq.h); examples sit next to
//! each parser. Any other event stays [`EventKind::Other`] with its raw
//! body on [`crate::Event`].

use crate::line::slice;
use crate::num::{parse_cpu, parse_i32, parse_i64, parse_u32, parse_u64, MAX_CPUS};
use crate::swar;

/// A typed event payload.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind<'a> {
    /// `sched_switch`
    SchedSwitch(SchedSwitch<'a>),
    /// `sched_waking`, `sched_wakeup`, `sched_wakeup_new`
    SchedWakeup(SchedWakeup<'a>),
    /// `sched_migrate_task`
    SchedMigrateTask(SchedMigrateTask<'a>),
    /// `sched_stat_runtime: comm=bash pid=30212 runtime=3970691 [ns]`
    /// (before v6.8 also `vruntime=... [ns]`): CPU time the task ran
    /// since the previous account, fired on its CPU while it runs.
    SchedStatRuntime {
        /// The task.
        comm: &'a str,
        /// Its thread id.
        pid: i32,
        /// Run time accounted, in ns.
        runtime_ns: u64,
    },
    /// `cpu_frequency: state=1200000 cpu_id=0`
    CpuFrequency {
        /// New frequency in kHz.
        state_khz: u64,
        /// The CPU.
        cpu: u32,
    },
    /// `cpu_idle: state=1 cpu_id=0`; `state=4294967295` (-1) is the exit.
    CpuIdle {
        /// The idle state entered, `None` for the exit from idle.
        state: Option<u32>,
        /// The CPU.
        cpu: u32,
    },
    /// Legacy power events of kernels before 3.4 and of seed 004's
    /// OMAP instrumentation: `power_start: type=1 state=1 cpu_id=0`.
    PowerStart {
        /// 1 = idle start, 4 = suspend trace point, 5 = resume trace point.
        kind: u32,
        /// State or trace-point number.
        state: u32,
        /// The CPU.
        cpu: u32,
    },
    /// `power_end: cpu_id=0`
    PowerEnd {
        /// The CPU.
        cpu: u32,
    },
    /// `tracing_mark_write: B Connect` (a write to `trace_marker`).
    Marker(Marker<'a>),
    /// `irq_handler_entry: irq=24 name=virtio0-input.0`
    IrqEntry {
        /// IRQ number.
        irq: u32,
        /// Handler name.
        name: &'a str,
    },
    /// `irq_handler_exit: irq=24 ret=handled`
    IrqExit {
        /// IRQ number.
        irq: u32,
        /// `ret=handled` (vs `unhandled`).
        handled: bool,
    },
    /// `softirq_entry: vec=1 [action=TIMER]`
    SoftirqEntry {
        /// Softirq vector.
        vec: u32,
        /// Action name (`TIMER`, `NET_RX`, ...).
        action: &'a str,
    },
    /// `softirq_exit: vec=1 [action=TIMER]`
    SoftirqExit {
        /// Softirq vector.
        vec: u32,
        /// Action name.
        action: &'a str,
    },
    /// Function tracer: `sys_close <-system_call_fastpath`.
    Function {
        /// The parent (caller), without `<-`.
        parent: &'a str,
    },
    /// `contention_begin: 0000000095050472 (flags=READ)`: a task starts
    /// waiting for a kernel lock (the address is hashed like `%p`).
    LockContentionBegin {
        /// Lock address as printed.
        lock: &'a str,
        /// Lock kind: `SPIN`, `READ`, `WRITE`, `MUTEX`, `RWSEM`... (joined
        /// with `|`).
        flags: &'a str,
    },
    /// `contention_end: 0000000095050472 (ret=0)`
    LockContentionEnd {
        /// Lock address as printed.
        lock: &'a str,
        /// 0, or the error the wait ended with.
        ret: i32,
    },
    /// `sys_enter: NR 202 (7f6a72519990, 109, 6844, 0, 0, ffffffff)`
    /// (raw_syscalls; arguments in hex).
    SysEnter {
        /// Syscall number.
        nr: i64,
        /// The arguments between the parentheses.
        args: &'a str,
    },
    /// `sys_exit: NR 202 = -110`
    SysExit {
        /// Syscall number.
        nr: i64,
        /// Return value.
        ret: i64,
    },
    /// Any other event, or a known one whose body did not parse.
    Other,
}

/// `sched_switch: prev_comm=bash prev_pid=1977 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120`
#[derive(Debug, Clone, PartialEq)]
pub struct SchedSwitch<'a> {
    /// Task leaving the CPU.
    pub prev_comm: &'a str,
    /// Its thread id.
    pub prev_pid: i32,
    /// Its priority (kernel scale: 0–99 RT, 100–139 normal).
    pub prev_prio: i32,
    /// Its state: `R`/`R+` (preempted, still runnable), `S`, `D`, ...
    pub prev_state: &'a str,
    /// Task entering the CPU.
    pub next_comm: &'a str,
    /// Its thread id.
    pub next_pid: i32,
    /// Its priority.
    pub next_prio: i32,
}

impl SchedSwitch<'_> {
    /// True when the previous task was preempted (still runnable).
    pub fn prev_runnable(&self) -> bool {
        matches!(self.prev_state.as_bytes().first(), Some(b'R'))
    }
}

/// Which wake-up event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// `sched_waking`: fired in the waker's context, first.
    Waking,
    /// `sched_wakeup`: the task was put on a run queue.
    Wakeup,
    /// `sched_wakeup_new`: a new task's first wake-up.
    WakeupNew,
}

/// `sched_wakeup: comm=bash pid=1977 prio=120 target_cpu=001`
/// (older kernels add `success=1` before `target_cpu`).
#[derive(Debug, Clone, PartialEq)]
pub struct SchedWakeup<'a> {
    /// Which event.
    pub kind: WakeKind,
    /// Woken task.
    pub comm: &'a str,
    /// Its thread id.
    pub pid: i32,
    /// Its priority.
    pub prio: i32,
    /// CPU it is queued on.
    pub target_cpu: Option<u32>,
}

/// `sched_migrate_task: comm=bash pid=30219 prio=120 orig_cpu=1 dest_cpu=0`
#[derive(Debug, Clone, PartialEq)]
pub struct SchedMigrateTask<'a> {
    /// Migrated task.
    pub comm: &'a str,
    /// Its thread id.
    pub pid: i32,
    /// Source CPU.
    pub orig_cpu: u32,
    /// Destination CPU.
    pub dest_cpu: u32,
}

/// A `trace_marker` write, in the forms seed 000 §8.3 and systrace use.
#[derive(Debug, Clone, PartialEq)]
pub enum Marker<'a> {
    /// `B Connect` (seed 000 §8.3) or systrace `B|1234|draw`.
    Begin {
        /// systrace's pid field.
        pid: Option<i32>,
        /// Span name.
        name: &'a str,
    },
    /// `E FirstVidFrame 1` or systrace `E|1234` (closes the innermost).
    End {
        /// systrace's pid field.
        pid: Option<i32>,
        /// Span name when given.
        name: Option<&'a str>,
    },
    /// `S FirstCapImg 0`: a point in time.
    Instant {
        /// Name.
        name: &'a str,
    },
    /// systrace counter `C|1234|queue|3`.
    Counter {
        /// systrace's pid field.
        pid: Option<i32>,
        /// Counter name.
        name: &'a str,
        /// Value.
        value: i64,
    },
    /// Any other text.
    Text(&'a str),
}

impl<'a> Marker<'a> {
    /// Parse marker text.
    pub fn parse(text: &'a str) -> Marker<'a> {
        let text = text.trim_end_matches(['\n', '\r', ' ']);
        let b = text.as_bytes();
        if b.len() < 2 {
            return Marker::Text(text);
        }
        match (b[0], b[1]) {
            // systrace: "B|pid|name", "E|pid", "E", "C|pid|name|value"
            (c @ (b'B' | b'E' | b'C'), b'|') => {
                let mut parts = text[2..].splitn(3, '|');
                let pid = parts.next().and_then(parse_i32);
                let name = parts.next();
                match c {
                    b'B' => match name {
                        Some(n) if !n.is_empty() => Marker::Begin { pid, name: n },
                        _ => Marker::Text(text),
                    },
                    b'E' => Marker::End {
                        pid,
                        name: name.filter(|n| !n.is_empty()),
                    },
                    _ => match (name, parts.next().and_then(parse_i64)) {
                        (Some(n), Some(value)) => Marker::Counter {
                            pid,
                            name: n,
                            value,
                        },
                        _ => Marker::Text(text),
                    },
                }
            }
            // seed 000 §8.3: "B Connect", "E FirstVidFrame 1", "S FirstCapImg 0"
            (c @ (b'B' | b'E' | b'S'), b' ') => {
                let name = text[2..].split_whitespace().next();
                match (c, name) {
                    (_, None) => Marker::Text(text),
                    (b'B', Some(n)) => Marker::Begin { pid: None, name: n },
                    (b'E', n) => Marker::End { pid: None, name: n },
                    (_, Some(n)) => Marker::Instant { name: n },
                }
            }
            (b'E', _) if b.len() == 1 => Marker::End {
                pid: None,
                name: None,
            },
            _ => Marker::Text(text),
        }
    }

    /// The name, where the form has one.
    pub fn name(&self) -> Option<&'a str> {
        match self {
            Marker::Begin { name, .. }
            | Marker::Instant { name }
            | Marker::Counter { name, .. } => Some(name),
            Marker::End { name, .. } => *name,
            Marker::Text(_) => None,
        }
    }
}

/// Byte-offset of `needle` in `hay` (first match). `str::find` builds a
/// Two-Way searcher per call, and even a memchr call per candidate costs
/// more than the search on fields this short (a comm, a few numbers): a
/// plain loop over the first byte, then an inlined compare.
#[inline]
fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    let last = h.len().checked_sub(n.len())?;
    // A while loop: `RangeInclusive` iteration costs an extra test a step.
    let mut i = 0;
    while i <= last {
        if h[i] == first && has_at(h, i, n) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `h[i..].starts_with(n)` as an inlined byte loop: the needles are a few
/// bytes and a `memcmp` call per candidate costs more than the compare.
#[inline(always)]
fn has_at(h: &[u8], i: usize, n: &[u8]) -> bool {
    if h.len() - i < n.len() {
        return false;
    }
    // Keys of 4 to 16 bytes: two (overlapping) word compares, the
    // needle's words folded to constants where it is a literal.
    let k = n.len();
    let h = &h[i..i + k];
    match k {
        8..=16 => {
            swar::word(h, 0) == swar::word(n, 0) && swar::word(h, k - 8) == swar::word(n, k - 8)
        }
        4..=7 => half(h, 0) == half(n, 0) && half(h, k - 4) == half(n, k - 4),
        _ => h == n,
    }
}

/// The 4 bytes at `b[i..]` as a word (the caller checked the length).
#[inline(always)]
fn half(b: &[u8], i: usize) -> u32 {
    // One bounds check for the four bytes, not one each.
    let w: [u8; 4] = b[i..i + 4].try_into().unwrap_or_default();
    u32::from_le_bytes(w)
}

/// Like [`find`], last match.
#[inline]
fn rfind(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    let mut i = h.len().checked_sub(n.len())? + 1;
    while i > 0 {
        i -= 1;
        if h[i] == first && has_at(h, i, n) {
            return Some(i);
        }
    }
    None
}

/// The text up to the first space, and what follows that space (`""` when
/// there is none): `split(' ')` one step at a time, without its searcher.
#[inline]
fn token(s: &str) -> (&str, &str) {
    let i = swar::find2(s.as_bytes(), 0, b' ', b' ');
    (&s[..i], s.get(i + 1..).unwrap_or(""))
}

/// The value of `key=` in a space-separated `k=v` body, where the value
/// ends at the next space. `key` includes the `=`.
fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(i) = find(&body[from..], key) {
        let at = from + i;
        if at == 0 || body.as_bytes()[at - 1] == b' ' || body.as_bytes()[at - 1] == b'[' {
            let v = &body[at + key.len()..];
            let end = v
                .bytes()
                .position(|c| c == b' ' || c == b']')
                .unwrap_or(v.len());
            return Some(&v[..end]);
        }
        from = at + key.len();
    }
    None
}

impl<'a> EventKind<'a> {
    /// Whether every CPU number this event's fields name (a frequency's
    /// or idle state's `cpu_id`, a migration's CPUs, a wake-up's target)
    /// is below `ncpus`, the trace's CPU count: a damaged number must be
    /// counted as malformed, not become per-CPU state.
    #[inline]
    pub fn cpus_below(&self, ncpus: u32) -> bool {
        match self {
            EventKind::CpuFrequency { cpu, .. }
            | EventKind::CpuIdle { cpu, .. }
            | EventKind::PowerStart { cpu, .. }
            | EventKind::PowerEnd { cpu } => *cpu < ncpus,
            EventKind::SchedMigrateTask(m) => m.orig_cpu < ncpus && m.dest_cpu < ncpus,
            EventKind::SchedWakeup(w) => w.target_cpu.is_none_or(|c| c < ncpus),
            _ => true,
        }
    }

    /// An event Lever does not type: a function-tracer line
    /// (`<-parent`) or [`EventKind::Other`].
    fn untyped(body: &'a str) -> EventKind<'a> {
        body.strip_prefix("<-")
            .map_or(EventKind::Other, |parent| EventKind::Function { parent })
    }

    /// Type the body of event `name`; a known event whose body does not
    /// parse is [`EventKind::Other`] (see [`EventKind::try_parse`]).
    pub fn parse(name: &'a str, body: &'a str) -> EventKind<'a> {
        Self::try_parse(name, body).unwrap_or(EventKind::Other)
    }

    /// Type the body of event `name`. `Err(reason)` when `name` is one of
    /// the typed events but its body lacks a field or holds a bad value —
    /// most often a line cut short mid-event (a truncated copy, a
    /// `trace_pipe` read interrupted): such a line is malformed, not a
    /// generic event.
    #[inline(always)]
    pub fn try_parse(name: &'a str, body: &'a str) -> Result<EventKind<'a>, &'static str> {
        let mut kind = EventKind::Other;
        Self::try_parse_into(name, body, &mut kind).map(|()| kind)
    }

    /// [`EventKind::try_parse`] into `out` (the fast path for the kernel's
    /// sched layouts writes it in place); `out` is unspecified on `Err`.
    #[inline(always)]
    pub(crate) fn try_parse_into(
        name: &'a str,
        body: &'a str,
        out: &mut EventKind<'a>,
    ) -> Result<(), &'static str> {
        if sched_exact_into(name, body, out).is_none() {
            *out = Self::try_parse_general(name, body)?;
        }
        Ok(())
    }

    /// [`EventKind::try_parse_into`] when the line's reader has already
    /// recognised a sched event's name (`sched`, see
    /// [`SchedName::of_payload`]).
    #[inline(always)]
    pub(crate) fn try_parse_named(
        sched: Option<SchedName>,
        name: &'a str,
        body: &'a str,
        out: &mut EventKind<'a>,
    ) -> Result<(), &'static str> {
        match sched {
            Some(sched) if sched_exact_of(sched, body, out).is_some() => Ok(()),
            Some(_) => {
                *out = Self::try_parse_general(name, body)?;
                Ok(())
            }
            None => Self::try_parse_into(name, body, out),
        }
    }

    #[doc(hidden)]
    /// [`EventKind::try_parse`] without the shortcut for the kernel's
    /// exact sched layouts: the reference the shortcut is tested against.
    pub fn try_parse_general(name: &'a str, body: &'a str) -> Result<EventKind<'a>, &'static str> {
        // Most events are none of these: one byte test skips the string
        // compares (a measurable share of the parse otherwise).
        if !matches!(
            name.as_bytes().first(),
            Some(b's' | b'c' | b'p' | b't' | b'i')
        ) {
            return Ok(Self::untyped(body));
        }
        let kind = match name {
            "sched_switch" => parse_switch(body).map(EventKind::SchedSwitch),
            "sched_waking" => parse_wakeup(WakeKind::Waking, body),
            "sched_wakeup" => parse_wakeup(WakeKind::Wakeup, body),
            "sched_wakeup_new" => parse_wakeup(WakeKind::WakeupNew, body),
            "sched_migrate_task" => parse_migrate(body),
            "contention_begin" => (|| {
                let (lock, rest) = body.split_once(' ')?;
                let flags = rest.strip_prefix("(flags=")?.strip_suffix(')')?;
                Some(EventKind::LockContentionBegin { lock, flags })
            })(),
            "contention_end" => (|| {
                let (lock, rest) = body.split_once(' ')?;
                let ret = parse_i32(rest.strip_prefix("(ret=")?.strip_suffix(')')?)?;
                Some(EventKind::LockContentionEnd { lock, ret })
            })(),
            "sys_enter" => (|| {
                let rest = body.strip_prefix("NR ")?;
                let (nr, args) = rest.split_once(' ')?;
                let args = args.strip_prefix('(')?.strip_suffix(')')?;
                Some(EventKind::SysEnter {
                    nr: parse_i64(nr)?,
                    args,
                })
            })(),
            "sys_exit" => (|| {
                let (nr, ret) = body.strip_prefix("NR ")?.split_once(" = ")?;
                Some(EventKind::SysExit {
                    nr: parse_i64(nr)?,
                    ret: parse_i64(ret)?,
                })
            })(),
            "sched_stat_runtime" => (|| {
                let rest = body.strip_prefix("comm=")?;
                let i = rfind(rest, " pid=")?;
                // " pid=30212 runtime=3970691 [ns]" (before v6.8 also
                // " vruntime=... [ns]").
                let (pid, tail) = token(&rest[i + 1..]);
                let pid = parse_i32(pid.strip_prefix("pid=")?)?;
                let runtime_ns = parse_u64(token(tail).0.strip_prefix("runtime=")?)?;
                Some(EventKind::SchedStatRuntime {
                    comm: &rest[..i],
                    pid,
                    runtime_ns,
                })
            })(),
            "cpu_frequency" => (|| {
                Some(EventKind::CpuFrequency {
                    state_khz: parse_u64(field(body, "state=")?)?,
                    cpu: parse_cpu(field(body, "cpu_id=")?)?,
                })
            })(),
            "cpu_idle" => (|| {
                let state = parse_u64(field(body, "state=")?)?;
                Some(EventKind::CpuIdle {
                    // (u32)-1 is PWR_EVENT_EXIT.
                    state: u32::try_from(state).ok().filter(|&s| s != u32::MAX),
                    cpu: parse_cpu(field(body, "cpu_id=")?)?,
                })
            })(),
            "power_start" => (|| {
                Some(EventKind::PowerStart {
                    kind: parse_u32(field(body, "type=")?)?,
                    state: parse_u32(field(body, "state=")?)?,
                    cpu: parse_cpu(field(body, "cpu_id=")?)?,
                })
            })(),
            "power_end" => field(body, "cpu_id=")
                .and_then(parse_cpu)
                .map(|cpu| EventKind::PowerEnd { cpu }),
            "tracing_mark_write" | "print" => Some(EventKind::Marker(Marker::parse(body))),
            "irq_handler_entry" => (|| {
                let irq = parse_u32(field(body, "irq=")?)?;
                let name = find(body, "name=").map(|i| &body[i + 5..]).unwrap_or("");
                Some(EventKind::IrqEntry { irq, name })
            })(),
            "irq_handler_exit" => (|| {
                Some(EventKind::IrqExit {
                    irq: parse_u32(field(body, "irq=")?)?,
                    handled: field(body, "ret=")? == "handled",
                })
            })(),
            "softirq_entry" | "softirq_exit" => (|| {
                let vec = parse_u32(field(body, "vec=")?)?;
                let action = field(body, "action=").unwrap_or("");
                Some(if name == "softirq_entry" {
                    EventKind::SoftirqEntry { vec, action }
                } else {
                    EventKind::SoftirqExit { vec, action }
                })
            })(),
            _ => return Ok(Self::untyped(body)),
        };
        kind.ok_or(match name {
            "sched_switch" => "sched_switch with missing or bad fields (cut short?)",
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
                "sched wake-up with missing or bad fields (cut short?)"
            }
            "sched_migrate_task" => "sched_migrate_task with missing or bad fields (cut short?)",
            "sched_stat_runtime" => "sched_stat_runtime with missing or bad fields (cut short?)",
            "cpu_frequency" | "cpu_idle" | "power_start" | "power_end" => {
                "power event with missing or bad fields (cut short?, CPU out of range?)"
            }
            "irq_handler_entry" | "irq_handler_exit" | "softirq_entry" | "softirq_exit" => {
                "irq event with missing or bad fields (cut short?)"
            }
            "contention_begin" | "contention_end" => {
                "lock contention event with missing or bad fields (cut short?)"
            }
            _ => "raw syscall event with missing or bad fields (cut short?)",
        })
    }
}

/// The sched events in the kernel's exact `TP_printk` layout, read from
/// their fixed ends: a number field is found by walking back over its
/// digits to its key, so the comms (which may hold spaces, `=` and
/// digits) are never searched. `None` for anything else (older layouts
/// with `success=1` or `vruntime=`, cut or damaged lines): the general
/// parsers then decide, and where this returns a value it is the one they
/// give (tested on random bodies). Written into `out` (left as it was
/// on `None`): the payload is built where it stays, not moved out through
/// return values.
#[inline(always)]
fn sched_exact_into<'a>(name: &str, body: &'a str, out: &mut EventKind<'a>) -> Option<()> {
    let n = name.as_bytes();
    if n.len() < 12 || n[..6] != *b"sched_" {
        return None;
    }
    let sched = match &n[6..] {
        b"switch" => SchedName::Switch,
        b"waking" => SchedName::Wake(WakeKind::Waking),
        b"wakeup" => SchedName::Wake(WakeKind::Wakeup),
        b"wakeup_new" => SchedName::Wake(WakeKind::WakeupNew),
        b"stat_runtime" => SchedName::StatRuntime,
        _ => return None,
    };
    sched_exact_of(sched, body, out)
}

/// [`sched_exact_into`] for an event whose name is known.
#[inline(always)]
fn sched_exact_of<'a>(sched: SchedName, body: &'a str, out: &mut EventKind<'a>) -> Option<()> {
    match sched {
        SchedName::Switch => switch_exact(body, out),
        SchedName::Wake(kind) => wakeup_exact(kind, body, out),
        SchedName::StatRuntime => stat_runtime_exact(body, out),
    }
}

/// The sched events with a layout read at fixed keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchedName {
    /// `sched_switch`
    Switch,
    /// `sched_waking`, `sched_wakeup`, `sched_wakeup_new`
    Wake(WakeKind),
    /// `sched_stat_runtime`
    StatRuntime,
}

impl SchedName {
    /// The event that `payload` (`name: body`) starts with, when it is one
    /// of these and its name ends at a `:`, and the name's length: word
    /// compares instead of searching for the end of the name and then
    /// matching it.
    #[inline(always)]
    pub(crate) fn of_payload(p: &[u8]) -> Option<(SchedName, usize)> {
        const fn w(s: &[u8; 8]) -> u64 {
            u64::from_le_bytes(*s)
        }
        let at = |i: usize| swar::word(p, i);
        let colon = |i: usize| p.get(i) == Some(&b':');
        let (sched, n) = match at(0)? {
            x if x == w(b"sched_sw") && at(4)? == w(b"d_switch") => (SchedName::Switch, 12),
            x if x == w(b"sched_wa") => match at(4)? {
                x if x == w(b"d_waking") => (SchedName::Wake(WakeKind::Waking), 12),
                x if x == w(b"d_wakeup") && colon(12) => (SchedName::Wake(WakeKind::Wakeup), 12),
                x if x == w(b"d_wakeup") && at(8)? == w(b"keup_new") => {
                    (SchedName::Wake(WakeKind::WakeupNew), 16)
                }
                _ => return None,
            },
            x if x == w(b"sched_st") => {
                if at(8)? != w(b"at_runti") || at(10)? != w(b"_runtime") {
                    return None;
                }
                (SchedName::StatRuntime, 18)
            }
            _ => return None,
        };
        colon(n).then_some((sched, n))
    }
}

/// A decimal number read backwards from its end (see
/// [`key_number_back`]), converted as the forward readers of
/// [`crate::num`] would convert its text.
#[derive(Clone, Copy)]
struct BackNum {
    value: u64,
    negative: bool,
}

impl BackNum {
    /// As `parse_i32`.
    #[inline]
    fn i32(self) -> Option<i32> {
        let v = i64::try_from(self.value).ok()?;
        i32::try_from(if self.negative { -v } else { v }).ok()
    }

    /// As `parse_u64` (no sign).
    #[inline]
    fn u64(self) -> Option<u64> {
        (!self.negative).then_some(self.value)
    }

    /// As `parse_cpu`.
    #[inline]
    fn cpu(self) -> Option<u32> {
        u32::try_from(self.u64()?).ok().filter(|&c| c < MAX_CPUS)
    }
}

/// Backwards from `end`: the number that ends there (1 to 18 digits, an
/// optional `-` before them), read as it is walked, and the `key` right
/// before it. Returns where the key starts and the number; `None` for
/// anything else (longer numbers too: the general parsers take those).
#[inline(always)]
fn key_number_back(b: &[u8], end: usize, key: &[u8]) -> Option<(usize, BackNum)> {
    let (mut value, mut i) = match swar::digits_back(b, end) {
        Some((v, n)) => (v, end - n),
        None => (0, end),
    };
    if i == end {
        // Not 1 to 7 digits in one word: a byte at a time.
        let mut place = 1u64;
        while i > 0 && b[i - 1].is_ascii_digit() {
            if end - i == 18 {
                return None;
            }
            value += (b[i - 1] - b'0') as u64 * place;
            place *= 10;
            i -= 1;
        }
        if i == end {
            return None;
        }
    }
    let negative = i > 0 && b[i - 1] == b'-';
    if negative {
        i -= 1;
    }
    let k = i.checked_sub(key.len())?;
    has_at(b, k, key).then_some((k, BackNum { value, negative }))
}

// "comm=bash pid=1977 prio=120 target_cpu=001"
#[inline]
fn wakeup_exact<'a>(kind: WakeKind, body: &'a str, out: &mut EventKind<'a>) -> Option<()> {
    let b = body.as_bytes();
    let (k1, target_cpu) = key_number_back(b, b.len(), b" target_cpu=")?;
    let (k2, prio) = key_number_back(b, k1, b" prio=")?;
    let (k3, pid) = key_number_back(b, k2, b" pid=")?;
    if k3 < 5 || !b.starts_with(b"comm=") {
        return None;
    }
    let pid = pid.i32()?;
    *out = EventKind::SchedWakeup(SchedWakeup {
        kind,
        comm: slice(body, 5, k3),
        pid,
        prio: prio.i32().unwrap_or(0),
        target_cpu: target_cpu.cpu(),
    });
    Some(())
}

// "comm=bash pid=30212 runtime=3970691 [ns]" (v6.8 and later)
#[inline]
fn stat_runtime_exact<'a>(body: &'a str, out: &mut EventKind<'a>) -> Option<()> {
    let b = body.as_bytes();
    let end = b.len().checked_sub(5)?;
    if !has_at(b, end, b" [ns]") {
        return None;
    }
    let (k1, runtime) = key_number_back(b, end, b" runtime=")?;
    let (k2, pid) = key_number_back(b, k1, b" pid=")?;
    if k2 < 5 || !b.starts_with(b"comm=") {
        return None;
    }
    let (pid, runtime_ns) = (pid.i32()?, runtime.u64()?);
    *out = EventKind::SchedStatRuntime {
        comm: slice(body, 5, k2),
        pid,
        runtime_ns,
    };
    Some(())
}

/// The first `key` at or after `from`, found by its leading space (one
/// word test per 8 bytes; keys here start with a space, comms rarely
/// hold one).
#[inline]
fn find_spaced(b: &[u8], mut from: usize, key: &[u8]) -> Option<usize> {
    loop {
        let i = swar::find2(b, from, b' ', b' ');
        if i == b.len() {
            return None;
        }
        if has_at(b, i, key) {
            return Some(i);
        }
        from = i + 1;
    }
}

/// The number of 1 to 7 digits at `b[i..]` (no sign) and where the
/// token after its space starts; `None` for anything else (a sign, more
/// digits, no space after): the general parser reads those.
#[inline(always)]
fn number_then_space(b: &[u8], i: usize) -> Option<(usize, i32)> {
    let (v, n) = swar::digits(b, i)?;
    (b[i + n] == b' ').then_some((i + n + 1, v as i32))
}

// "prev_comm=bash prev_pid=1977 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120"
#[inline]
fn switch_exact<'a>(body: &'a str, out: &mut EventKind<'a>) -> Option<()> {
    let b = body.as_bytes();
    let (k1, next_prio) = key_number_back(b, b.len(), b" next_prio=")?;
    let (k2, next_pid) = key_number_back(b, k1, b" next_pid=")?;
    if !b.starts_with(b"prev_comm=") {
        return None;
    }
    // The prev comm is the only field searched (it may hold spaces); the
    // three fields after it are single tokens, and the arrow must follow
    // the third at once.
    let i = find_spaced(b, 10, b" prev_pid=")?;
    let (p, prev_pid) = number_then_space(b, i + 10)?;
    if !has_at(b, p, b"prev_prio=") {
        return None;
    }
    let (s, prev_prio) = number_then_space(b, p + 10)?;
    if !has_at(b, s, b"prev_state=") {
        return None;
    }
    // The state: a token (`S`, `R+`, `D|K`), then the arrow at once.
    let arrow = swar::find2(b, s + 11, b' ', b' ');
    if arrow + 15 > k2 || !has_at(b, arrow, b" ==> next_comm=") {
        return None;
    }
    let prev_state = slice(body, s + 11, arrow);
    let (next_pid, next_prio) = (next_pid.i32()?, next_prio.i32()?);
    *out = EventKind::SchedSwitch(SchedSwitch {
        prev_comm: slice(body, 10, i),
        prev_pid,
        prev_prio,
        prev_state,
        next_comm: slice(body, arrow + 15, k2),
        next_pid,
        next_prio,
    });
    Some(())
}

fn parse_switch(body: &str) -> Option<SchedSwitch<'_>> {
    // Comms may contain spaces: cut at the fixed keys, not at spaces.
    let rest = body.strip_prefix("prev_comm=")?;
    let i = find(rest, " prev_pid=")?;
    let prev_comm = &rest[..i];
    let rest = &rest[i + 10..];
    let arrow = find(rest, " ==> next_comm=")?;
    let (prev, next) = (&rest[..arrow], &rest[arrow + 15..]);
    let (pid, prev) = token(prev);
    let prev_pid = parse_i32(pid)?;
    let (prio, prev) = token(prev);
    let prev_prio = parse_i32(prio.strip_prefix("prev_prio=")?)?;
    let prev_state = token(prev).0.strip_prefix("prev_state=")?;
    let j = rfind(next, " next_pid=")?;
    let next_comm = &next[..j];
    let (pid, next) = token(&next[j + 10..]);
    let next_pid = parse_i32(pid)?;
    let next_prio = parse_i32(token(next).0.strip_prefix("next_prio=")?.trim_end())?;
    Some(SchedSwitch {
        prev_comm,
        prev_pid,
        prev_prio,
        prev_state,
        next_comm,
        next_pid,
        next_prio,
    })
}

fn parse_wakeup(kind: WakeKind, body: &str) -> Option<EventKind<'_>> {
    let rest = body.strip_prefix("comm=")?;
    let i = rfind(rest, " pid=")?;
    let comm = &rest[..i];
    // " pid=1977 prio=120 target_cpu=001" (older: " success=1" too), in
    // one pass over the tokens instead of a search per key.
    let (mut pid, mut prio, mut target_cpu) = (None, 0, None);
    let mut tail = &rest[i + 1..];
    loop {
        let (tok, more) = token(tail);
        if let Some(v) = tok.strip_prefix("pid=") {
            pid = parse_i32(v);
        } else if let Some(v) = tok.strip_prefix("prio=") {
            prio = parse_i32(v).unwrap_or(0);
        } else if let Some(v) = tok.strip_prefix("target_cpu=") {
            target_cpu = parse_cpu(v);
        }
        if tok.len() == tail.len() {
            break;
        }
        tail = more;
    }
    Some(EventKind::SchedWakeup(SchedWakeup {
        kind,
        comm,
        pid: pid?,
        prio,
        target_cpu,
    }))
}

fn parse_migrate(body: &str) -> Option<EventKind<'_>> {
    let rest = body.strip_prefix("comm=")?;
    let i = rfind(rest, " pid=")?;
    let tail = &rest[i..];
    Some(EventKind::SchedMigrateTask(SchedMigrateTask {
        comm: &rest[..i],
        pid: parse_i32(field(tail, "pid=")?)?,
        orig_cpu: parse_cpu(field(tail, "orig_cpu=")?)?,
        dest_cpu: parse_cpu(field(tail, "dest_cpu=")?)?,
    }))
}
