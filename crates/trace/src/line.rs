//! One line of ftrace text → one [`Line`].
//!
//! The kernel prints the ring buffer as text in `trace` (a snapshot with a
//! header) and `trace_pipe` (consuming, no header). Every line is one of:
//!
//! * a header or comment line starting with `#` (tracer name,
//!   `# entries-in-buffer/entries-written: 415/415   #P:2`, the column key,
//!   and the latency tracers' report header);
//! * an event line, with or without the irq-flags column (option
//!   `irq-info`), with 4- or 5-character flags (`d.h1` before v5.14,
//!   `d.h1.` after, the fifth being migrate-disable), with or without the
//!   `(tgid)` column (option `record-tgid`), and a comm that may contain
//!   spaces and dashes or be `<...>` when the pid → comm cache missed:
//!
//!   ```text
//!             bash-30212   [001] d.h1.  1480.549228: sched_stat_runtime: comm=bash pid=30212 runtime=3970691 [ns]
//!    Web Content-1234  (   1200) [003] ....  5.000001: sched_waking: comm=x pid=2 prio=120 target_cpu=001
//!            <...>-77      [000]  2.5: tracing_mark_write: B|77|draw
//!   ```
//!
//! * a function_graph line (`tracer: function_graph`), optionally prefixed
//!   by the absolute time (`funcgraph-abs-time`) and followed by the task
//!   column (`funcgraph-proc`), a duration with the overhead marks
//!   `+` (>10 µs) `!` (>100 µs) `#` (>1 ms) `*` (>10 ms) `@` (>100 ms)
//!   `$` (>1 s), then the call:
//!
//!   ```text
//!    3523.447327 |   0)   bash-1977    | + 10.495 us   |    }
//!    0)               |  sys_open() {
//!    0)   0.541 us    |      getname();
//!    0)    bash-1977    =>    sshd-1974
//!   ```
//!
//! * a latency-format line, as in the preemptoff/irqsoff report (CPU and
//!   flags glued together, time relative to the start in µs):
//!
//!   ```text
//!       sshd-1991    1d..1   46us : irq_exit <-do_IRQ
//!   ```
//!
//! * a stack frame (` => do_IRQ`), a lost-events notice
//!   (`CPU:2 [LOST 1234 EVENTS]` in `trace_pipe`, `##### CPU 2 buffer
//!   started ####` in `trace`), a separator (`-----`), or blank.
//!
//! Anything else is [`Line::Malformed`] with a reason; nothing here panics
//! on any input (see the proptest and the fuzz target).
//!
//! The parser borrows every string from the input line; it never
//! allocates.

use crate::event::{EventKind, Marker, SchedName};
use crate::num::{parse_cpu, parse_i32, parse_u32, parse_u64, MAX_CPUS};
use crate::swar;

/// Where an event line's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// Time of the trace clock (`1480.549228:`), converted to ns.
    Clock,
    /// Latency format: µs relative to the start of the trace or report.
    Relative,
}

/// One event line.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    /// Task name (`<...>` when the kernel did not know it; may contain
    /// spaces and dashes).
    pub comm: &'a str,
    /// Thread id of the task that was running when the event fired.
    pub pid: i32,
    /// Thread group id, when the `(tgid)` column is present and known.
    pub tgid: Option<i32>,
    /// CPU the event fired on.
    pub cpu: u32,
    /// The irq-flags column (`d.h1.`), when present.
    pub flags: Option<&'a str>,
    /// Timestamp in ns (see `time_base`).
    pub ts_ns: u64,
    /// Absolute clock time or relative latency-format time.
    pub time_base: TimeBase,
    /// Event name (`sched_switch`), or the function for the function
    /// tracer.
    pub name: &'a str,
    /// Everything after `name: ` (for the function tracer: the parent).
    pub body: &'a str,
    /// The typed event.
    pub kind: EventKind<'a>,
}

/// A header line (`# ...`).
#[derive(Debug, Clone, PartialEq)]
pub enum Header<'a> {
    /// `# tracer: function_graph`
    Tracer(&'a str),
    /// `# entries-in-buffer/entries-written: 415/415   #P:2`
    Entries {
        /// Entries still in the buffer.
        in_buffer: u64,
        /// Entries ever written (more than in_buffer when overwritten).
        written: u64,
        /// Number of CPUs.
        cpus: Option<u32>,
    },
    /// `# latency: 46 us, #4/4, CPU#1 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)`
    Latency {
        /// The worst latency the tracer recorded, in µs.
        latency_us: u64,
        /// The CPU it happened on.
        cpu: Option<u32>,
    },
    /// `#    | task: sshd-1991 (uid:0 nice:0 policy:0 rt_prio:0)`
    Task {
        /// Task name.
        comm: &'a str,
        /// Thread id.
        pid: i32,
    },
    /// `#  => started at: do_IRQ`
    StartedAt(&'a str),
    /// `#  => ended at:   do_IRQ`
    EndedAt(&'a str),
    /// `# lever: cpu 1 overrun 43640`: events the ring buffer of CPU 1
    /// overwrote before they were read (`per_cpu/cpu1/stats`, read by
    /// `lever trace record` when it stopped; the kernel's text has no
    /// line for them).
    Overrun {
        /// The CPU.
        cpu: u32,
        /// Events overwritten.
        events: u64,
    },
    /// Any other `#` line (column keys, blank comment).
    Other(&'a str),
}

/// One function_graph line.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncGraph<'a> {
    /// Absolute time (`funcgraph-abs-time`), in ns.
    pub ts_ns: Option<u64>,
    /// CPU column.
    pub cpu: u32,
    /// Task column (`funcgraph-proc`): comm and pid.
    pub task: Option<(&'a str, i32)>,
    /// Duration, in ns, when the line closes a call.
    pub duration_ns: Option<u64>,
    /// Overhead mark (`+ ! # * @ $`).
    pub mark: Option<char>,
    /// What the line says.
    pub item: FgItem<'a>,
}

/// The call part of a function_graph line.
#[derive(Debug, Clone, PartialEq)]
pub enum FgItem<'a> {
    /// `func() {`: entry of a function with callees.
    Entry(&'a str),
    /// `func();`: a call without traced callees (its duration is on the line).
    Leaf(&'a str),
    /// `}` or `} /* func */`: return from the innermost open function.
    Exit(Option<&'a str>),
    /// `/* sched_switch: ... */`: an event printed inside the graph.
    Comment(&'a str),
    /// `bash-1977 => sshd-1974`: the task on this CPU changed.
    ContextSwitch {
        /// Previous task (comm, pid).
        from: (&'a str, i32),
        /// Next task (comm, pid).
        to: (&'a str, i32),
    },
    /// `==========>`: interrupt entry.
    IrqEnter,
    /// `<==========`: interrupt exit.
    IrqExit,
}

/// What a line of trace text is.
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    /// Empty or whitespace only.
    Blank,
    /// `# ...`
    Header(Header<'a>),
    /// A trace event (any tracer except function_graph).
    Event(Event<'a>),
    /// A function_graph line.
    FuncGraph(FuncGraph<'a>),
    /// ` => func`: a stack frame (latency report, `stacktrace` option).
    Stack(&'a str),
    /// Events were lost on a CPU (`CPU:2 [LOST 1234 EVENTS]`, count
    /// known) or a CPU's buffer starts late because older events were
    /// overwritten (`##### CPU 2 buffer started ####`, count unknown).
    Lost {
        /// The CPU.
        cpu: u32,
        /// How many events, when the kernel says.
        events: Option<u64>,
    },
    /// A separator line (`-----`).
    Separator,
    /// Not a line we understand.
    Malformed(&'static str),
}

/// Parse one line (without its newline).
#[inline(always)]
pub fn parse_line(line: &str) -> Line<'_> {
    let mut out = Line::Blank;
    parse_line_into(line, &mut out);
    out
}

/// [`parse_line`] into `out`: an event line in the kernel's own layout
/// is written into the [`Event`] already there when there is one, field
/// by field, instead of being built and moved out through the return
/// values of each step (a 168-byte copy at each, a fifth of the parse).
#[inline(always)]
pub(crate) fn parse_line_into<'a>(line: &'a str, out: &mut Line<'a>) {
    if fixed_columns(line, out).is_none() {
        *out = parse_line_general(line);
    }
}

#[doc(hidden)]
/// [`parse_line`] without the fixed-column shortcut: the reference the
/// shortcut is tested against (same [`Line`] for every input).
pub fn parse_line_general(line: &str) -> Line<'_> {
    let t = trim_start_ascii(line);
    if t.is_empty() {
        // Strip trailing CR / spaces too.
        return Line::Blank;
    }
    let b = t.as_bytes();
    match b[0] {
        b'#' => {
            if let Some(rest) = t.strip_prefix("##### CPU ") {
                return match leading_u32(rest) {
                    Some((cpu, _)) if cpu >= MAX_CPUS => Line::Malformed(CPU_RANGE),
                    Some((cpu, _)) => Line::Lost { cpu, events: None },
                    None => Line::Header(Header::Other(t)),
                };
            }
            return Line::Header(parse_header(t));
        }
        b'=' if t.starts_with("=> ") || t == "=>" => {
            return Line::Stack(t[2..].trim());
        }
        b'-' if b.iter().all(|&c| c == b'-' || c == b' ' || c == b'\r') => {
            return Line::Separator;
        }
        b'C' if t.starts_with("CPU:") && t.contains("[LOST") => {
            return parse_lost(t);
        }
        b'0'..=b'9' => {
            if let Some(fg) = parse_funcgraph(t) {
                return Line::FuncGraph(fg);
            }
        }
        _ => {}
    }
    match parse_event(t, true) {
        Some(Ok(ev)) => return Line::Event(ev),
        Some(Err(reason)) => return Line::Malformed(reason),
        None => {}
    }
    match parse_latency_event(t) {
        Some(Ok(ev)) => Line::Event(ev),
        Some(Err(reason)) => Line::Malformed(reason),
        None => Line::Malformed("not an event, header or function_graph line"),
    }
}

// "CPU:2 [LOST 1234 EVENTS]"
fn parse_lost(t: &str) -> Line<'_> {
    let Some((cpu, rest)) = leading_u32(&t[4..]) else {
        return Line::Malformed("lost-events notice without a CPU");
    };
    if cpu >= MAX_CPUS {
        return Line::Malformed(CPU_RANGE);
    }
    let events = rest
        .find("[LOST ")
        .and_then(|i| leading_u64(&rest[i + 6..]))
        .map(|(n, _)| n);
    Line::Lost { cpu, events }
}

fn parse_header(t: &str) -> Header<'_> {
    let body = t.trim_start_matches('#').trim();
    if let Some(name) = body.strip_prefix("tracer:") {
        return Header::Tracer(name.trim());
    }
    if let Some(rest) = body.strip_prefix("entries-in-buffer/entries-written:") {
        // " 415/415   #P:2"
        let rest = rest.trim_start();
        if let Some((in_buffer, r)) = leading_u64(rest) {
            if let Some((written, r)) = r.strip_prefix('/').and_then(leading_u64) {
                let cpus = r
                    .find("#P:")
                    .and_then(|i| leading_u32(&r[i + 3..]))
                    .map(|(n, _)| n);
                return Header::Entries {
                    in_buffer,
                    written,
                    cpus,
                };
            }
        }
        return Header::Other(t);
    }
    if let Some(rest) = body.strip_prefix("latency:") {
        // " 46 us, #4/4, CPU#1 | (M:preempt ...)"
        if let Some((latency_us, r)) = leading_u64(rest.trim_start()) {
            let cpu = r
                .find("CPU#")
                .and_then(|i| leading_u32(&r[i + 4..]))
                .map(|(n, _)| n);
            return Header::Latency { latency_us, cpu };
        }
        return Header::Other(t);
    }
    if let Some(rest) = body.strip_prefix("| task:") {
        // " sshd-1991 (uid:0 nice:0 policy:0 rt_prio:0)"
        let rest = rest.trim_start();
        let end = rest.find(" (").unwrap_or(rest.len());
        if let Some((comm, pid)) = split_comm_pid(rest[..end].trim_end()) {
            return Header::Task { comm, pid };
        }
        return Header::Other(t);
    }
    if let Some(rest) = body.strip_prefix("=> started at:") {
        return Header::StartedAt(rest.trim());
    }
    if let Some(rest) = body.strip_prefix("=> ended at:") {
        return Header::EndedAt(rest.trim());
    }
    if let Some(rest) = body.strip_prefix("lever: cpu ") {
        let cpu = leading_u32(rest).filter(|(c, _)| *c < MAX_CPUS);
        if let Some((cpu, r)) = cpu {
            if let Some((events, "")) = r.strip_prefix(" overrun ").and_then(leading_u64) {
                return Header::Overrun { cpu, events };
            }
        }
    }
    Header::Other(t)
}

/// `comm-pid` → (comm, pid); the pid is after the last dash.
pub(crate) fn split_comm_pid(s: &str) -> Option<(&str, i32)> {
    // Backwards over the digits to the dash: the same as parsing what
    // follows the last '-', without searching for it first.
    let b = s.as_bytes();
    let mut k = b.len();
    while k > 0 && b[k - 1].is_ascii_digit() {
        k -= 1;
    }
    if k == 0 || k == b.len() || b[k - 1] != b'-' {
        return None;
    }
    let pid = parse_i32(&s[k..])?;
    Some((&s[..k - 1], pid))
}

/// The kernel's own layout of an event line (`trace`, `trace_pipe`:
/// `"%16s-%-7d [%03d] "`), read at fixed columns: the comm right-aligned
/// in columns 0–15, `-` in 16, the pid left-aligned in 17–23, `[` in 25.
/// Nine lines in ten of a real capture have it; the general parser has
/// to search for the CPU column (a comm may hold `[`, `-` and spaces).
///
/// ```text
///            mkdir-28581   [000] d..2. 18561.820489: sched_stat_runtime: ...
/// ```
///
/// `None` whenever the line might be read otherwise by the general
/// parser (another layout, a `(tgid)` column, a comm holding `[` or
/// starting like a header, function_graph or notice line, a CPU number
/// the general parser would reject or skip): the result is always the
/// one [`parse_line_general`] gives (tested on random lines). `Some`
/// when the line is in `out`: written into the event already there, if
/// there is one (see [`parse_line_into`]).
#[inline(always)]
fn fixed_columns<'a>(line: &'a str, out: &mut Line<'a>) -> Option<()> {
    let b = line.as_bytes();
    if b.len() < 32 || b[16] != b'-' || b[25] != b'[' {
        return None;
    }
    // The comm's padding: spaces only (a tab or CR: the general path).
    let (w0, w1) = (swar::word(b, 0)?, swar::word(b, 8)?);
    let s = match swar::first_not(w0, b' ') {
        8 => 8 + swar::first_not(w1, b' '),
        k => k,
    };
    if s == 16
        || swar::has_byte(w0, b'[')
        || swar::has_byte(w1, b'[')
        || matches!(b[s], b'#' | b'=' | b'-' | b'\t' | b'\r' | b'0'..=b'9')
        || (b[s] == b'C' && b[s..].starts_with(b"CPU:"))
    {
        return None;
    }
    // The pid: 1 to 7 digits, then spaces up to the CPU column.
    let (pid, n) = swar::digits(b, 17)?;
    if swar::first_not(swar::word(b, 17)? >> (8 * n), b' ') < 8 - n {
        return None;
    }
    // The CPU: `[%03d]` at once, else 1 to 4 digits and ']' (larger
    // numbers: the general path).
    let (cpu, j) = if b[29] == b']' && b[26..29].iter().all(u8::is_ascii_digit) {
        let d = |k: usize| (b[k] - b'0') as u32;
        (d(26) * 100 + d(27) * 10 + d(28), 29)
    } else {
        let mut j = 26;
        let mut cpu: u32 = 0;
        while j < 30 && b[j].is_ascii_digit() {
            cpu = cpu * 10 + (b[j] - b'0') as u32;
            j += 1;
        }
        if j == 26 || b[j] != b']' {
            return None;
        }
        (cpu, j)
    };
    if cpu >= MAX_CPUS {
        return None;
    }
    let pid = pid as i32;
    let rest = trim_start_ascii(&line[j + 1..]);
    let head = match event_head(rest)? {
        Ok(head) => head,
        Err(reason) => {
            *out = Line::Malformed(reason);
            return Some(());
        }
    };
    let comm = slice(line, s, 16);
    if !matches!(out, Line::Event(_)) {
        *out = Line::Event(Event {
            comm,
            pid,
            tgid: None,
            cpu,
            flags: None,
            ts_ns: 0,
            time_base: TimeBase::Clock,
            name: "",
            body: "",
            kind: EventKind::Other,
        });
    }
    // Always an event now; `None` would only hand the line to the
    // general parser.
    let Line::Event(ev) = out else {
        return None;
    };
    (ev.comm, ev.pid, ev.tgid, ev.cpu) = (comm, pid, None, cpu);
    (ev.flags, ev.ts_ns, ev.time_base) = (head.flags, head.ts_ns, TimeBase::Clock);
    (ev.name, ev.body) = (head.name, head.body);
    if let Err(reason) = EventKind::try_parse_named(head.sched, head.name, head.body, &mut ev.kind)
    {
        *out = Line::Malformed(reason);
    }
    Some(())
}

/// Why a line naming CPU 8192 or above is malformed.
const CPU_RANGE: &str = "CPU number out of range (above the kernel's 8191)";

/// Parse an event line in the default (non-latency) format: `None` when
/// the line does not have its shape, `Err` when it does but is broken.
/// [`parse_line`] without typing the payload: an event line whose body
/// is not in the kernel's own format for its event (`trace-cmd report`'s
/// plugin formats, `sched_switch: a:12 [120] S ==> b:13 [120]`) is an
/// [`Event`] of kind [`EventKind::Other`] with its body, for an adapter to
/// type, instead of a malformed line.
pub fn parse_line_untyped(line: &str) -> Line<'_> {
    match parse_line(line) {
        Line::Malformed(_) => match parse_event(trim_start_ascii(line), false) {
            Some(Ok(ev)) => Line::Event(ev),
            Some(Err(reason)) => Line::Malformed(reason),
            None => parse_line(line),
        },
        other => other,
    }
}

#[inline]
fn parse_event(t: &str, typed: bool) -> Option<Result<Event<'_>, &'static str>> {
    let b = t.as_bytes();
    // Find the CPU column "[001]": a '[' followed by digits and ']' whose
    // left side (after optional "(tgid)") ends in "-pid". Comms may contain
    // '[' themselves, so try every candidate left to right. Each step
    // reads the line once front to back (the pid backwards from the
    // column): byte loops, since every piece is a few bytes long.
    let mut from = 0;
    loop {
        let open = from + memchr::memchr(b'[', &b[from..])?;
        from = open + 1;
        let mut j = open + 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == open + 1 || j >= b.len() || b[j] != b']' {
            continue;
        }
        let Some(cpu) = parse_u32(&t[open + 1..j]) else {
            continue;
        };
        let cpu_ok = cpu < MAX_CPUS;
        let mut l = open;
        while l > 0 && b[l - 1] == b' ' {
            l -= 1;
        }
        let (task, tgid) = if l > 0 && b[l - 1] == b')' {
            let left = &t[..l - 1];
            match left.rfind('(') {
                Some(p) => (left[..p].trim_end(), parse_i32(left[p + 1..].trim())),
                None => continue,
            }
        } else {
            (&t[..l], None)
        };
        let Some((comm, pid)) = split_comm_pid(task) else {
            continue;
        };
        let rest = trim_start_ascii(&t[j + 1..]);
        let ev = finish_event(comm, pid, tgid, cpu, rest, typed)?;
        return Some(if cpu_ok { ev } else { Err(CPU_RANGE) });
    }
}

/// What follows the CPU column of an event line.
struct Head<'a> {
    flags: Option<&'a str>,
    ts_ns: u64,
    name: &'a str,
    body: &'a str,
    /// The event, when its name is one of the sched events read at
    /// fixed keys.
    sched: Option<SchedName>,
}

// After "[cpu] ": optional flags, then "ts: name: body".
#[inline(always)]
fn event_head(rest: &str) -> Option<Result<Head<'_>, &'static str>> {
    let rb = rest.as_bytes();
    let sp = swar::find2(rb, 0, b' ', b' ');
    let first = &rest[..sp];
    let (flags, ts_ns, after) = if let Some(ts) = first.strip_suffix(':') {
        (None, parse_timestamp(ts)?, &rest[sp..])
    } else {
        // The time token read as it is parsed: "18561.820272:" then a
        // space or the end, as a whole token would have to be.
        let r2 = trim_start_ascii(&rest[sp..]);
        let b2 = r2.as_bytes();
        let (ts, end) = timestamp_prefix(b2)?;
        if b2.get(end) != Some(&b':') || b2.get(end + 1).is_some_and(|&c| c != b' ') {
            return None;
        }
        (Some(first), ts, &r2[end + 1..])
    };
    let payload = after.strip_prefix(' ').unwrap_or(after);
    // Every event prints "name: body" and the function tracer
    // "func <-parent": a bare word is a line cut inside the name.
    let Some((name, body, sched)) = split_name_body(payload) else {
        return Some(Err("event line cut short (no ':' after the event name)"));
    };
    Some(Ok(Head {
        flags,
        ts_ns,
        name,
        body,
        sched,
    }))
}

// [`event_head`], then the payload typed (or not) into a whole event.
#[inline(always)]
fn finish_event<'a>(
    comm: &'a str,
    pid: i32,
    tgid: Option<i32>,
    cpu: u32,
    rest: &'a str,
    typed: bool,
) -> Option<Result<Event<'a>, &'static str>> {
    let head = match event_head(rest)? {
        Ok(head) => head,
        Err(reason) => return Some(Err(reason)),
    };
    let kind = if typed {
        EventKind::try_parse(head.name, head.body)
    } else {
        Ok(EventKind::Other)
    };
    Some(kind.map(|kind| Event {
        comm,
        pid,
        tgid,
        cpu,
        flags: head.flags,
        ts_ns: head.ts_ns,
        time_base: TimeBase::Clock,
        name: head.name,
        body: head.body,
        kind,
    }))
}

// "sched_switch: prev_comm=..." → ("sched_switch", "prev_comm=...")
// "sys_close <-system_call_fastpath" → ("sys_close", "<-system_call_fastpath")
// "sched_swi" (cut inside the name) → None
#[inline(always)]
fn split_name_body(payload: &str) -> Option<(&str, &str, Option<SchedName>)> {
    let p = trim_end_cr(payload);
    let b = p.as_bytes();
    // The sched events by word compares; else the name ends at the first
    // ':' or ' '.
    let (i, sched) = match SchedName::of_payload(b) {
        Some((sched, n)) => (n, Some(sched)),
        None => (swar::find2(b, 0, b':', b' '), None),
    };
    if i == b.len() {
        return None;
    }
    if b[i] == b':' {
        let body = &p[i + 1..];
        Some((&p[..i], body.strip_prefix(' ').unwrap_or(body), sched))
    } else {
        Some((&p[..i], p[i + 1..].trim_start(), None))
    }
}

/// "1480.549228" → ns; also integer clocks ("counter", "x86-tsc") and up to
/// 9 fractional digits.
pub fn parse_timestamp(s: &str) -> Option<u64> {
    match timestamp_prefix(s.as_bytes())? {
        (ts, end) if end == s.len() => Some(ts),
        _ => None,
    }
}

/// The timestamp at the start of `b` and where it ends: seconds, then
/// optionally `.` and 1 or more fraction digits (up to 9 kept), or an
/// integer clock (kept in its unit). `None` when `b` starts with no digit
/// or a `.` is followed by none, or on overflow.
#[inline(always)]
fn timestamp_prefix(b: &[u8]) -> Option<(u64, usize)> {
    // The usual "18561.820489": up to 7 digits each side, one word each.
    if let Some((secs, n)) = swar::digits(b, 0) {
        if b[n] != b'.' {
            return Some((secs, n));
        }
        if let Some((frac, m)) = swar::digits(b, n + 1) {
            return Some((secs * 1_000_000_000 + frac * FRACTION_SCALE[m], n + 1 + m));
        }
    }
    timestamp_prefix_bytes(b)
}

/// Nanoseconds per unit of an `m`-digit fraction (`m` ≤ 7 here).
const FRACTION_SCALE: [u64; 8] = [
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
];

/// [`timestamp_prefix`] a byte at a time (any length).
fn timestamp_prefix_bytes(b: &[u8]) -> Option<(u64, usize)> {
    let mut secs: u64 = 0;
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        // 19 digits cannot overflow a u64: test only past that.
        secs = if i < 19 {
            secs * 10 + (b[i] - b'0') as u64
        } else {
            secs.checked_mul(10)?.checked_add((b[i] - b'0') as u64)?
        };
        i += 1;
    }
    if i == 0 {
        return None;
    }
    if i == b.len() || b[i] != b'.' {
        // An integer clock: keep its unit (it is not seconds).
        return Some((secs, i));
    }
    i += 1;
    let mut frac: u64 = 0;
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        if digits < 9 {
            frac = frac * 10 + (b[i] - b'0') as u64;
            digits += 1;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    for _ in digits..9 {
        frac *= 10;
    }
    Some((secs.checked_mul(1_000_000_000)?.checked_add(frac)?, i))
}

/// Latency format: `    sshd-1991    1d..1   46us : irq_exit <-do_IRQ`.
fn parse_latency_event(t: &str) -> Option<Result<Event<'_>, &'static str>> {
    // The time token is the first token of the form "<digits>us<mark?>"
    // optionally followed by ':'; before it the CPU+flags token; before
    // that "comm-pid" (the comm may contain spaces).
    let mut pos = 0;
    let b = t.as_bytes();
    let mut prev_tok: Option<(usize, usize)> = None;
    while pos < b.len() {
        while pos < b.len() && b[pos] == b' ' {
            pos += 1;
        }
        let start = pos;
        while pos < b.len() && b[pos] != b' ' {
            pos += 1;
        }
        if start == pos {
            break;
        }
        let tok = &t[start..pos];
        if let Some(us) = latency_time(tok) {
            let (cf_start, cf_end) = prev_tok?;
            let cf = &t[cf_start..cf_end];
            let ndig = cf.bytes().take_while(u8::is_ascii_digit).count();
            if ndig == 0 || !(3..=6).contains(&(cf.len() - ndig)) {
                return None;
            }
            let cpu = parse_cpu(&cf[..ndig])?;
            let (comm, pid) = split_comm_pid(t[..cf_start].trim())?;
            let mut rest = t[pos..].trim_start();
            if !tok.ends_with(':') {
                rest = rest.strip_prefix(':')?.trim_start();
            }
            let (name, body, _) = split_name_body(rest).unwrap_or((trim_end_cr(rest), "", None));
            let ts_ns = us.checked_mul(1000)?;
            return Some(EventKind::try_parse(name, body).map(|kind| Event {
                comm,
                pid,
                tgid: None,
                cpu,
                flags: Some(&cf[ndig..]),
                ts_ns,
                time_base: TimeBase::Relative,
                name,
                body,
                kind,
            }));
        }
        prev_tok = Some((start, pos));
    }
    None
}

// "46us", "0us+:", "47us!:" → µs
fn latency_time(tok: &str) -> Option<u64> {
    let tok = tok.strip_suffix(':').unwrap_or(tok);
    let i = tok.find("us")?;
    let tail = &tok[i + 2..];
    if tail.len() > 1 || (tail.len() == 1 && !"+!#*@$".contains(tail)) {
        return None;
    }
    parse_u64(&tok[..i])
}

/// A function_graph line, or None when the line does not start with the
/// CPU column (`  0)`) or an absolute time followed by `|`.
fn parse_funcgraph(t: &str) -> Option<FuncGraph<'_>> {
    let (ts_ns, rest) = match t.find(" |") {
        Some(i) if t[..i].contains('.') && !t[..i].contains(')') => (
            Some(parse_timestamp(t[..i].trim())?),
            t[i + 2..].trim_start(),
        ),
        _ => (None, t),
    };
    let close = rest.find(')')?;
    let cpu = parse_cpu(&rest[..close])?;
    let after = &rest[close + 1..];
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let mut fg = FuncGraph {
        ts_ns,
        cpu,
        task: None,
        duration_ns: None,
        mark: None,
        item: FgItem::IrqEnter,
    };
    if let Some(item) = irq_marker(after.trim_start()) {
        fg.item = item;
        return Some(fg);
    }
    // Context switch: "    bash-1977    =>    sshd-1974   "
    if let Some(arrow) = after.find(" => ") {
        if !after[..arrow].contains('|') {
            let from = split_comm_pid(after[..arrow].trim())?;
            let to = split_comm_pid(after[arrow + 4..].trim())?;
            fg.item = FgItem::ContextSwitch { from, to };
            return Some(fg);
        }
    }
    let mut cols = after;
    // Optional task column, then the duration column; each ends with '|'.
    for _ in 0..2 {
        let Some(bar) = cols.find('|') else { break };
        let seg = cols[..bar].trim();
        if seg.is_empty() {
            cols = &cols[bar + 1..];
            break;
        }
        if let Some((mark, ns)) = parse_fg_duration(seg) {
            fg.mark = mark;
            fg.duration_ns = Some(ns);
            cols = &cols[bar + 1..];
            break;
        }
        if fg.task.is_none() {
            if let Some(task) = split_comm_pid(seg) {
                fg.task = Some(task);
                cols = &cols[bar + 1..];
                continue;
            }
        }
        break;
    }
    let call = cols.trim();
    // With funcgraph-proc the irq markers follow the task column:
    // " 0)    <idle>-0    |   ==========> |"
    fg.item = match irq_marker(call) {
        Some(item) => item,
        None => parse_fg_call(call)?,
    };
    Some(fg)
}

/// `==========> |` (irq entry) or `<========== |` (exit).
fn irq_marker(s: &str) -> Option<FgItem<'static>> {
    if s.starts_with("==========>") {
        Some(FgItem::IrqEnter)
    } else if s.starts_with("<==========") {
        Some(FgItem::IrqExit)
    } else {
        None
    }
}

// "+ 10.495 us" → (Some('+'), 10495)
fn parse_fg_duration(seg: &str) -> Option<(Option<char>, u64)> {
    let mut s = seg.trim();
    let mut mark = None;
    if let Some(c) = s.chars().next() {
        if "+!#*@$".contains(c) {
            mark = Some(c);
            s = s[1..].trim_start();
        }
    }
    let num = s.strip_suffix("us")?.trim_end();
    // Microseconds with up to 3 decimals → ns.
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    let mut ns = parse_u64(int)?.checked_mul(1000)?;
    if !frac.is_empty() {
        if !frac.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let mut f: u64 = 0;
        let mut n = 0;
        for c in frac.bytes().take(3) {
            f = f * 10 + (c - b'0') as u64;
            n += 1;
        }
        for _ in n..3 {
            f *= 10;
        }
        ns += f;
    }
    Some((mark, ns))
}

fn parse_fg_call(call: &str) -> Option<FgItem<'_>> {
    if let Some(rest) = call.strip_prefix('}') {
        // "} /* func */" (funcgraph-tail) or "} /* func = 0x0 */" (retval)
        let name = rest
            .trim()
            .strip_prefix("/*")
            .and_then(|c| c.strip_suffix("*/"))
            .map(|c| c.trim())
            .map(|c| c.split([' ', '=']).next().unwrap_or(c))
            .filter(|c| !c.is_empty());
        return Some(FgItem::Exit(name));
    }
    if let Some(c) = call.strip_prefix("/*") {
        return Some(FgItem::Comment(c.strip_suffix("*/").unwrap_or(c).trim()));
    }
    // Drop a trailing retval comment: "func(); /* = 0x0 */"
    let code = match call.find(" /*") {
        Some(i) => call[..i].trim_end(),
        None => call,
    };
    if let Some(head) = code.strip_suffix(';') {
        let name = head.split('(').next()?.trim();
        return (!name.is_empty()).then_some(FgItem::Leaf(name));
    }
    if let Some(head) = code.strip_suffix('{') {
        let name = head.split('(').next()?.trim();
        return (!name.is_empty() && head.contains('(')).then_some(FgItem::Entry(name));
    }
    None
}

/// `str::trim_start` for the ASCII whitespace ftrace pads with (a byte
/// loop; the Unicode-aware one is measurably slower on every line).
#[inline(always)]
fn trim_start_ascii(s: &str) -> &str {
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\r');
    let b = s.as_bytes();
    // Mostly one space between columns: the loop only past two blanks.
    match (b.first().is_some_and(blank), b.get(1).is_some_and(blank)) {
        (false, _) => s,
        (true, false) => &s[1..],
        (true, true) => {
            let n = b.iter().take_while(|c| blank(c)).count();
            &s[n..]
        }
    }
}

/// `&s[from..to]` as two one-sided slices: core's two-sided `str` slice
/// is an out-of-line call (about 20 instructions a field, on every line)
/// where each one-sided one is a compare. Same panics as `&s[from..to]`.
#[inline(always)]
pub(crate) fn slice(s: &str, from: usize, to: usize) -> &str {
    &s[..to][from..]
}

/// Without trailing CR/LF.
#[inline(always)]
fn trim_end_cr(s: &str) -> &str {
    let b = s.as_bytes();
    let mut n = b.len();
    while n > 0 && (b[n - 1] == b'\r' || b[n - 1] == b'\n') {
        n -= 1;
    }
    &s[..n]
}

fn leading_u64(s: &str) -> Option<(u64, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    Some((parse_u64(&s[..n])?, &s[n..]))
}

fn leading_u32(s: &str) -> Option<(u32, &str)> {
    let (v, r) = leading_u64(s)?;
    Some((u32::try_from(v).ok()?, r))
}

/// A marker's text, parsed (shortcut for [`Marker::parse`]).
pub fn parse_marker(text: &str) -> Marker<'_> {
    Marker::parse(text)
}
