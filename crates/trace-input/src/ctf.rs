//! CTF trace directories (LTTng kernel and UST, perf's CTF output) as
//! [`Line`]s, read by `lever-ctf`.
//!
//! A directory holding one trace (a `metadata` file) or several (an LTTng
//! session: `kernel/`, `ust/uid/1000/64-bit/`) is one input: the traces'
//! events merged by time (ns from each clock's origin, the Unix epoch for
//! LTTng), so a kernel trace and a UST trace of the same run make one
//! timeline.
//!
//! Traces of different hosts (the `hostname` in their metadata) get CPU
//! numbers of their own: the second host's CPU 0 comes after the first
//! host's CPUs (as many as its per-CPU stream files).
//!
//! LTTng's event and field names map onto ftrace's, so the analyses see
//! the events they know:
//!
//! | LTTng (lttng-modules) | ftrace |
//! |---|---|
//! | `sched_switch` `prev_tid`, `prev_prio` 20, `prev_state` 1 | `prev_pid`, `prev_prio=120`, `prev_state=S` |
//! | `sched_waking`/`sched_wakeup`/`_new` `tid` | `pid` |
//! | `power_cpu_frequency` `state` `cpu_id` | `cpu_frequency` |
//! | `power_cpu_idle` | `cpu_idle` |
//! | `irq_handler_exit` `ret` 1 | `ret=handled` |
//! | `softirq_entry` `vec` 1 | `vec=1 [action=TIMER]` |
//! | perf's `sched:sched_switch` | `sched_switch` |
//!
//! LTTng-modules records priorities as the kernel's minus 100 (`MAX_RT_PRIO`);
//! they are given back as the kernel's. The running task (ftrace's
//! `comm-pid` column) is the event's `tid`/`procname` context when the
//! session added one, else the task the CPU's last `sched_switch` ran
//! (with names from `lttng_statedump_process_state` and every event
//! naming a task). The CPU is the packet's `cpu_id` (perf: `perf_cpu`).
//! Events the tracer discarded come as [`Line::Lost`] on their CPU.

use lever_ctf::{CtfError, Event as CtfEvent, FieldValue, Trace};
use lever_trace::{Event, EventKind, Line, LineSource, Summary, TimeBase};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// One or several CTF traces read as one input.
pub struct CtfInput {
    path: PathBuf,
    traces: Vec<Trace>,
    symbols: Option<Symbols>,
}

impl CtfInput {
    /// Open every CTF trace in `dir` (itself or below).
    pub fn open(dir: &Path) -> Result<CtfInput, CtfError> {
        let found = lever_ctf::find_traces(dir);
        if found.is_empty() {
            return Err(CtfError::NotCtf {
                path: dir.to_path_buf(),
                why: "no `metadata` file in it or below".into(),
            });
        }
        let traces = found
            .iter()
            .map(|d| Trace::open(d))
            .collect::<Result<_, _>>()?;
        Ok(CtfInput {
            path: dir.to_path_buf(),
            traces,
            symbols: None,
        })
    }

    /// Open several directories as one input, merged by time.
    pub fn open_all(dirs: &[PathBuf]) -> Result<CtfInput, CtfError> {
        let mut traces = Vec::new();
        for d in dirs {
            traces.extend(CtfInput::open(d)?.traces);
        }
        Ok(CtfInput {
            path: dirs.first().cloned().unwrap_or_default(),
            traces,
            symbols: None,
        })
    }

    /// Name cyg-profile addresses from these symbols first (a mapping
    /// file of the traced binary: `nm` output with absolute addresses).
    pub fn with_symbols(mut self, symbols: Symbols) -> CtfInput {
        self.symbols = Some(symbols);
        self
    }

    /// The traces.
    pub fn traces(&self) -> &[Trace] {
        &self.traces
    }

    /// The directory given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Total bytes of the stream files.
    pub fn bytes(&self) -> u64 {
        self.traces.iter().map(Trace::stream_bytes).sum()
    }

    /// Walk every event of every trace merged by time: `f(trace index,
    /// event)`, and `lost(trace, cpu, events)` for discarded events as
    /// packets report them.
    pub fn for_each_event(
        &self,
        mut f: impl FnMut(usize, &CtfEvent<'_>),
        mut lost: impl FnMut(usize, Option<u64>, u64),
    ) -> Result<(), CtfError> {
        let mut its: Vec<_> = self.traces.iter().map(Trace::events).collect();
        let mut seen = vec![0usize; its.len()];
        loop {
            // Few traces: the earliest by a scan.
            let mut best: Option<(i64, usize)> = None;
            for (k, it) in its.iter_mut().enumerate() {
                if let Some(ns) = it.peek_ns()? {
                    if best.is_none_or(|(b, _)| ns < b) {
                        best = Some((ns, k));
                    }
                }
            }
            let Some((_, k)) = best else { break };
            let it = &mut its[k];
            let d = it.discarded();
            if d.len() > seen[k] {
                for x in &d[seen[k]..] {
                    lost(k, x.cpu, x.events);
                }
                seen[k] = d.len();
            }
            if let Some(e) = it.next()? {
                f(k, &e);
            }
        }
        Ok(())
    }
}

/// `softirq` vector names, as the kernel's `softirq_to_name`.
const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// ftrace's `prev_state` letters for the kernel's task state bits.
fn state_letters(v: i64) -> String {
    // TASK_REPORT_MAX (0x100 on 4.14+, LTTng's "preempted"): still runnable.
    if v == 0 || v & 0xff == 0 {
        return if v == 0 { "R".into() } else { "R+".into() };
    }
    const L: [(i64, char); 8] = [
        (0x01, 'S'),
        (0x02, 'D'),
        (0x04, 'T'),
        (0x08, 't'),
        (0x10, 'X'),
        (0x20, 'Z'),
        (0x40, 'P'),
        (0x80, 'I'),
    ];
    let s: String = L
        .iter()
        .filter(|(b, _)| v & b != 0)
        .map(|(_, c)| *c)
        .collect();
    if s.is_empty() {
        "R".into()
    } else {
        s
    }
}

/// Per trace: how its events map.
struct Mapping {
    /// perf's CTF output: `sched:sched_switch`, kernel priorities, the
    /// task in `common_pid`/`perf_tid`, the CPU in `perf_cpu`.
    perf: bool,
    /// lttng-modules: priorities minus 100.
    lttng_kernel: bool,
}

impl Mapping {
    fn of(t: &Trace) -> Mapping {
        let md = t.metadata();
        let tracer = md.env_str("tracer_name").unwrap_or_default();
        Mapping {
            perf: tracer == "perf",
            lttng_kernel: tracer == "lttng-modules",
        }
    }
}

fn int(e: &CtfEvent<'_>, name: &str) -> Option<i64> {
    e.payload().get(name).and_then(|v| v.as_i64())
}

fn text<'a>(e: &CtfEvent<'a>, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    e.payload().get(name).and_then(|v| v.as_str())
}

/// `k=v` text of a value (generic events).
fn write_value(out: &mut String, v: FieldValue<'_>) {
    use lever_ctf::decode::Value;
    match v.raw() {
        Some(Value::Str { .. }) => out.push_str(&v.as_str().unwrap_or_default()),
        Some(Value::Unsigned(u)) => {
            let _ = write!(out, "{u}");
        }
        Some(Value::Signed(s)) => {
            let _ = write!(out, "{s}");
        }
        Some(Value::Float(x)) => {
            let _ = write!(out, "{x}");
        }
        Some(Value::Struct { .. }) => {
            out.push('{');
            for (i, (n, m)) in v.members().into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{n}=");
                write_value(out, m);
            }
            out.push('}');
        }
        Some(Value::Array { .. }) => {
            out.push('[');
            for (i, m) in v.elements().into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, m);
            }
            out.push(']');
        }
        Some(Value::Variant { .. }) => {
            if let Some((_, m)) = v.option() {
                write_value(out, m);
            }
        }
        None => {}
    }
}

/// The ftrace name and body of an event; `None` to use the generic form.
fn ftrace_form(
    m: &Mapping,
    name: &str,
    e: &CtfEvent<'_>,
    body: &mut String,
) -> Option<&'static str> {
    let prio = |p: i64| if m.lttng_kernel { p + 100 } else { p };
    let tid = |k: &str, alt: &str| int(e, k).or_else(|| int(e, alt));
    body.clear();
    let name = match name {
        "sched_switch" => {
            let _ = write!(
                body,
                "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
                text(e, "prev_comm")?,
                tid("prev_tid", "prev_pid")?,
                prio(int(e, "prev_prio")?),
                state_letters(int(e, "prev_state")?),
                text(e, "next_comm")?,
                tid("next_tid", "next_pid")?,
                prio(int(e, "next_prio")?),
            );
            "sched_switch"
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let _ = write!(
                body,
                "comm={} pid={} prio={}",
                text(e, "comm")?,
                tid("tid", "pid")?,
                prio(int(e, "prio")?)
            );
            if let Some(c) = int(e, "target_cpu") {
                let _ = write!(body, " target_cpu={c:03}");
            }
            match name {
                "sched_waking" => "sched_waking",
                "sched_wakeup" => "sched_wakeup",
                _ => "sched_wakeup_new",
            }
        }
        "sched_migrate_task" => {
            let _ = write!(
                body,
                "comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
                text(e, "comm")?,
                tid("tid", "pid")?,
                prio(int(e, "prio")?),
                int(e, "orig_cpu")?,
                int(e, "dest_cpu")?
            );
            "sched_migrate_task"
        }
        "sched_stat_runtime" => {
            let _ = write!(
                body,
                "comm={} pid={} runtime={} [ns] vruntime={} [ns]",
                text(e, "comm")?,
                tid("tid", "pid")?,
                int(e, "runtime")?,
                int(e, "vruntime").unwrap_or(0)
            );
            "sched_stat_runtime"
        }
        "power_cpu_frequency" | "cpu_frequency" => {
            let _ = write!(
                body,
                "state={} cpu_id={}",
                int(e, "state")? as u32,
                int(e, "cpu_id")?
            );
            "cpu_frequency"
        }
        "power_cpu_idle" | "cpu_idle" => {
            let _ = write!(
                body,
                "state={} cpu_id={}",
                int(e, "state")? as u32,
                int(e, "cpu_id")?
            );
            "cpu_idle"
        }
        "irq_handler_entry" => {
            let _ = write!(body, "irq={} name={}", int(e, "irq")?, text(e, "name")?);
            "irq_handler_entry"
        }
        "irq_handler_exit" => {
            let ret = int(e, "ret")?;
            let _ = write!(
                body,
                "irq={} ret={}",
                int(e, "irq")?,
                if ret == 1 { "handled" } else { "unhandled" }
            );
            "irq_handler_exit"
        }
        // liblttng-ust-pthread-wrapper: every pthread_mutex_lock is a
        // request then an acquisition; the time between is the wait (about
        // nothing when the mutex was free), read as a lock contention of
        // kind `pthread_mutex` keyed by the mutex's address.
        "lttng_ust_pthread:pthread_mutex_lock_req" => {
            let _ = write!(
                body,
                "{:016x} (flags=pthread_mutex)",
                int(e, "mutex")? as u64
            );
            "contention_begin"
        }
        "lttng_ust_pthread:pthread_mutex_lock_acq" => {
            let _ = write!(
                body,
                "{:016x} (ret={})",
                int(e, "mutex")? as u64,
                int(e, "status")? as i32
            );
            "contention_end"
        }
        "softirq_entry" | "softirq_exit" | "softirq_raise" => {
            let vec = int(e, "vec")?;
            let action = SOFTIRQS.get(vec as usize).copied().unwrap_or("?");
            let _ = write!(body, "vec={vec} [action={action}]");
            match name {
                "softirq_entry" => "softirq_entry",
                "softirq_exit" => "softirq_exit",
                _ => "softirq_raise",
            }
        }
        _ => return None,
    };
    Some(name)
}

/// Tasks' names as the trace tells them.
#[derive(Default)]
struct Tasks {
    comm: HashMap<i64, String>,
    /// Per CPU: the task the last sched_switch ran.
    running: HashMap<u32, i64>,
}

impl Tasks {
    fn learn(&mut self, name: &str, e: &CtfEvent<'_>) {
        let mut put = |tid: Option<i64>, comm: Option<std::borrow::Cow<'_, str>>| {
            if let (Some(t), Some(c)) = (tid, comm) {
                if self.comm.get(&t).is_none_or(|o| o != c.as_ref()) {
                    self.comm.insert(t, c.into_owned());
                }
            }
        };
        match name {
            "lttng_statedump_process_state" => put(int(e, "tid"), text(e, "name")),
            "sched_process_fork" => put(
                int(e, "child_tid").or_else(|| int(e, "child_pid")),
                text(e, "child_comm"),
            ),
            "sched_switch" => {
                put(
                    int(e, "prev_tid").or_else(|| int(e, "prev_pid")),
                    text(e, "prev_comm"),
                );
                put(
                    int(e, "next_tid").or_else(|| int(e, "next_pid")),
                    text(e, "next_comm"),
                );
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" | "sched_process_exec" => {
                put(int(e, "tid").or_else(|| int(e, "pid")), text(e, "comm"))
            }
            _ => {}
        }
    }
}

impl LineSource for CtfInput {
    fn for_each_line<F, P>(self, mut f: F, mut progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        let maps: Vec<Mapping> = self.traces.iter().map(Mapping::of).collect();
        // Traces of different hosts (the synctraces' two machines) get
        // CPU numbers of their own: a host's CPUs follow the previous
        // host's (as many as its most per-CPU stream files).
        let mut hosts: Vec<(String, u32)> = Vec::new();
        for t in &self.traces {
            let h = t.metadata().env_str("hostname").unwrap_or_default();
            let n = t.stream_paths().count() as u32;
            match hosts.iter_mut().find(|(x, _)| *x == h) {
                Some(e) => e.1 = e.1.max(n),
                None => hosts.push((h, n)),
            }
        }
        let cpu_base: Vec<u32> = self
            .traces
            .iter()
            .map(|t| {
                let h = t.metadata().env_str("hostname").unwrap_or_default();
                hosts
                    .iter()
                    .take_while(|(x, _)| *x != h)
                    .map(|(_, n)| n)
                    .sum()
            })
            .collect();
        let mut sum = Summary::default();
        let mut tasks = Tasks::default();
        let mut resolver = Resolver {
            mapping: self.symbols.clone(),
            ..Resolver::default()
        };
        let mut body = String::new();
        let mut no = 0u64;
        let lost_cell = std::cell::RefCell::new(Vec::<(u32, u64)>::new());
        let r = self.for_each_event(
            |k, e| {
                for (cpu, n) in lost_cell.borrow_mut().drain(..) {
                    no += 1;
                    let line = Line::Lost { cpu, events: Some(n) };
                    sum.note(no, "", &line);
                    f(no, &line);
                }
                no += 1;
                let m = &maps[k];
                let raw = e.name();
                let name = if m.perf {
                    raw.split_once(':').map_or(raw, |(_, n)| n)
                } else {
                    raw
                };
                let cpu = e
                    .cpu()
                    .or_else(|| int(e, "perf_cpu").map(|c| c as u64))
                    .unwrap_or(0);
                let Some(cpu) = u32::try_from(cpu).ok().and_then(|c| c.checked_add(cpu_base[k])) else {
                    sum.note(no, "", &Line::Malformed("CPU number out of range"));
                    return;
                };
                // The running task: a context field, perf's pid, or the
                // CPU's last switch.
                let ctx_tid = ["tid", "vtid"]
                    .iter()
                    .find_map(|k| e.context().get(k).or_else(|| e.stream_context().get(k)))
                    .and_then(|v| v.as_i64())
                    .or_else(|| m.perf.then(|| int(e, "common_pid")).flatten());
                let pid = ctx_tid
                    .or_else(|| tasks.running.get(&cpu).copied())
                    .unwrap_or(-1);
                let ctx_comm = e
                    .context()
                    .get("procname")
                    .or_else(|| e.stream_context().get("procname"))
                    .and_then(|v| v.as_str());
                tasks.learn(name, e);
                let comm_owned: String = match (&ctx_comm, pid) {
                    (Some(c), _) => c.to_string(),
                    (None, 0) => "<idle>".into(),
                    (None, p) => tasks.comm.get(&p).cloned().unwrap_or_else(|| "<...>".into()),
                };
                let tgid = e
                    .context()
                    .get("pid")
                    .or_else(|| e.stream_context().get("vpid"))
                    .and_then(|v| v.as_i64())
                    .map(|p| p as i32);
                if name.ends_with("statedump:bin_info") {
                    resolver.learn_bin(e);
                }
                let cyg = name
                    .strip_prefix("lttng_ust_cyg_profile:")
                    .or_else(|| name.strip_prefix("lttng_ust_cyg_profile_fast:"));
                let form = match cyg {
                    // A function entry/exit: a begin/end span of the
                    // thread, named by the function (systrace's form, which
                    // the call-stack analysis and Perfetto read as slices).
                    Some("func_entry") => int(e, "addr").map(|a| {
                        body.clear();
                        let _ = write!(body, "B|{}|", tgid.unwrap_or(pid as i32));
                        resolver.name(a as u64, &mut body);
                        "tracing_mark_write"
                    }),
                    Some("func_exit") => {
                        body.clear();
                        let _ = write!(body, "E|{}", tgid.unwrap_or(pid as i32));
                        Some("tracing_mark_write")
                    }
                    _ => ftrace_form(m, name, e, &mut body),
                };
                let (ev_name, kind) = match form {
                    Some(n) => (n, EventKind::parse(n, body.as_str())),
                    None => {
                        body.clear();
                        for (i, (n, v)) in e.payload().members().into_iter().enumerate() {
                            if i > 0 {
                                body.push(' ');
                            }
                            let _ = write!(body, "{n}=");
                            write_value(&mut body, v);
                        }
                        (name, EventKind::Other)
                    }
                };
                let line = Line::Event(Event {
                    comm: &comm_owned,
                    pid: pid as i32,
                    tgid,
                    cpu,
                    flags: None,
                    ts_ns: e.timestamp_ns().max(0) as u64,
                    time_base: TimeBase::Clock,
                    name: ev_name,
                    body: &body,
                    kind,
                });
                if matches!(&line, Line::Event(ev) if ev.kind.cpus_below(lever_trace::MAX_CPUS) && cpu < lever_trace::MAX_CPUS)
                {
                    sum.note(no, "", &line);
                    f(no, &line);
                } else {
                    sum.note(no, "", &Line::Malformed("CPU number out of range"));
                }
                if name == "sched_switch" {
                    if let Some(next) = int(e, "next_tid").or_else(|| int(e, "next_pid")) {
                        tasks.running.insert(cpu, next);
                    }
                }
            },
            |_, cpu, n| {
                lost_cell
                    .borrow_mut()
                    .push((cpu.and_then(|c| u32::try_from(c).ok()).unwrap_or(0), n));
            },
        );
        r.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        for (cpu, n) in lost_cell.into_inner() {
            no += 1;
            let line = Line::Lost {
                cpu,
                events: Some(n),
            };
            sum.note(no, "", &line);
            f(no, &line);
        }
        sum.bytes = self.bytes();
        progress(sum.bytes);
        Ok(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_states_read_as_ftrace_letters() {
        assert_eq!(state_letters(0), "R");
        assert_eq!(state_letters(0x100), "R+");
        assert_eq!(state_letters(1), "S");
        assert_eq!(state_letters(2), "D");
        assert_eq!(state_letters(0x80), "I");
    }
}

/// Function symbols: address → name, from `nm` output (the mapping file
/// beside a cyg-profile trace) or an ELF file's `.symtab`/`.dynsym`.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    /// (start, size when known, name), sorted by start.
    syms: Vec<(u64, Option<u64>, String)>,
}

impl Symbols {
    /// Read `nm` output: `0000000000401aac t current_time` (code
    /// symbols: types t, T, W, w, i; undefined ones, without an address,
    /// are skipped).
    pub fn from_nm(text: &str) -> Result<Symbols, String> {
        let mut syms = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let mut it = l.split_whitespace();
            let (Some(a), Some(t), Some(n)) = (it.next(), it.next(), it.next()) else {
                // Undefined symbols have no address: `U cos@@GLIBC_2.2.5`,
                // `w __gmon_start__`.
                let mut f = l.split_whitespace();
                if l.trim().is_empty() || (f.next().is_some_and(|t| t.len() == 1) && f.count() == 1)
                {
                    continue;
                }
                return Err(format!("line {}: expected `ADDRESS TYPE NAME`", i + 1));
            };
            let addr = u64::from_str_radix(a, 16)
                .map_err(|_| format!("line {}: bad address `{a}`", i + 1))?;
            if matches!(t, "t" | "T" | "W" | "w" | "i") {
                syms.push((addr, None, n.to_string()));
            }
        }
        Ok(Symbols::sorted(syms))
    }

    fn sorted(mut syms: Vec<(u64, Option<u64>, String)>) -> Symbols {
        syms.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.cmp(&b.2)));
        syms.dedup_by_key(|s| s.0);
        Symbols { syms }
    }

    /// Function symbols of an ELF file (32/64-bit, either byte order);
    /// `None` when it is not ELF or has none.
    pub fn from_elf(b: &[u8]) -> Option<Symbols> {
        if b.get(..4)? != b"\x7fELF" {
            return None;
        }
        let is64 = *b.get(4)? == 2;
        let le = *b.get(5)? == 1;
        let rd = |o: usize, n: usize| -> Option<u64> {
            let s = b.get(o..o.checked_add(n)?)?;
            let mut v = 0u64;
            for k in 0..n {
                let byte = if le { s[n - 1 - k] } else { s[k] };
                v = (v << 8) | byte as u64;
            }
            Some(v)
        };
        let (shoff, shentsize, shnum) = if is64 {
            (rd(0x28, 8)?, rd(0x3a, 2)?, rd(0x3c, 2)?)
        } else {
            (rd(0x20, 4)?, rd(0x2e, 2)?, rd(0x30, 2)?)
        };
        let sec = |i: u64| -> Option<(u64, u64, u64, u64, u64)> {
            // (type, offset, size, link, entsize)
            let o = shoff.checked_add(i.checked_mul(shentsize)?)? as usize;
            Some(if is64 {
                (
                    rd(o + 4, 4)?,
                    rd(o + 0x18, 8)?,
                    rd(o + 0x20, 8)?,
                    rd(o + 0x28, 4)?,
                    rd(o + 0x38, 8)?,
                )
            } else {
                (
                    rd(o + 4, 4)?,
                    rd(o + 0x10, 4)?,
                    rd(o + 0x14, 4)?,
                    rd(o + 0x18, 4)?,
                    rd(o + 0x24, 4)?,
                )
            })
        };
        let mut syms = Vec::new();
        for i in 0..shnum.min(1 << 16) {
            let Some((ty, off, size, link, ent)) = sec(i) else {
                continue;
            };
            if !(ty == 2 || ty == 11) || ent == 0 {
                continue;
            }
            let Some((_, str_off, str_size, _, _)) = sec(link) else {
                continue;
            };
            let strtab = b.get(str_off as usize..(str_off.saturating_add(str_size)) as usize)?;
            for k in 0..(size / ent).min(1 << 24) {
                let o = (off + k * ent) as usize;
                let (name, info, value, sz) = if is64 {
                    (rd(o, 4)?, rd(o + 4, 1)?, rd(o + 8, 8)?, rd(o + 16, 8)?)
                } else {
                    (rd(o, 4)?, rd(o + 12, 1)?, rd(o + 4, 4)?, rd(o + 8, 4)?)
                };
                if info & 0xf != 2 || value == 0 {
                    continue;
                }
                let Some(rest) = strtab.get(name as usize..) else {
                    continue;
                };
                let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
                let n = String::from_utf8_lossy(&rest[..end]).into_owned();
                syms.push((value, (sz > 0).then_some(sz), n));
            }
        }
        (!syms.is_empty()).then(|| Symbols::sorted(syms))
    }

    /// The function holding `addr`: the nearest symbol at or below it
    /// (within its size when the ELF gave one).
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (start, size, name) = &self.syms[i];
        match size {
            Some(sz) if addr >= start.saturating_add(*sz) => None,
            _ => Some(name),
        }
    }

    /// How many symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// No symbols?
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// Addresses → function names for cyg-profile events: a mapping file
/// (absolute addresses), then the binaries the statedump's `bin_info`
/// events name (base address, size, position-independent or not), their
/// ELF symbols read when first needed.
#[derive(Default)]
struct Resolver {
    mapping: Option<Symbols>,
    /// (base, size, path, is_pic)
    bins: Vec<(u64, u64, String, bool)>,
    elf: HashMap<String, Option<Symbols>>,
}

impl Resolver {
    fn learn_bin(&mut self, e: &CtfEvent<'_>) {
        if let (Some(b), Some(sz), Some(p)) = (int(e, "baddr"), int(e, "memsz"), text(e, "path")) {
            let pic = int(e, "is_pic").unwrap_or(1) != 0;
            self.bins.push((b as u64, sz as u64, p.into_owned(), pic));
        }
    }

    fn name(&mut self, addr: u64, out: &mut String) {
        if let Some(n) = self.mapping.as_ref().and_then(|m| m.lookup(addr)) {
            out.push_str(n);
            return;
        }
        let bin = self
            .bins
            .iter()
            .rev()
            .find(|(b, sz, _, _)| addr >= *b && addr - b < *sz)
            .cloned();
        if let Some((base, _, path, pic)) = bin {
            let syms = self.elf.entry(path.clone()).or_insert_with(|| {
                std::fs::read(&path)
                    .ok()
                    .and_then(|b| Symbols::from_elf(&b))
            });
            let rel = if pic { addr - base } else { addr };
            if let Some(n) = syms.as_ref().and_then(|s| s.lookup(rel)) {
                out.push_str(n);
                return;
            }
        }
        let _ = write!(out, "{addr:#x}");
    }
}
