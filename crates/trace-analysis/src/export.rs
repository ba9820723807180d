//! Export to the Chrome trace-event JSON format, which Perfetto UI and
//! chrome://tracing open ([`perfetto`]: Perfetto's own protobuf).
//!
//! Streamed while parsing (memory stays bounded by the number of CPUs and
//! open spans): every sched slice becomes a complete event (`ph: "X"`) on
//! its thread (`pid` = tgid when known, else tid; `tid` = tid) and on a
//! per-CPU track (process "CPUs", one thread per CPU); marker spans become
//! `B`/`E` pairs and `S` markers instants (`ph: "i"`) on the writer's
//! thread; systrace counters, `cpu_frequency` (kHz) and `cpu_idle`
//! (state, −1 = running) become counters (`ph: "C"`). Times are µs
//! (floats, ns precision) as the format requires.
//!
//! When an event on a CPU comes from another task than the one its last
//! sched_switch put on (the switch was dropped, see
//! [`crate::sched`]), the old task's slice ends at its last event on
//! that CPU and the new one's starts at this event: the gap between is
//! not drawn.
//!
//! Wake-ups become flow arrows (`ph: "s"` on the waker's thread at the
//! wake-up, `ph: "f"` with `bp: "e"` on the wakee's thread at its next
//! switch-in, same `id`), for wakers that are tasks with a slice (not
//! the idle task).

pub mod perfetto;

use lever_trace::{Event, EventKind, Marker};
use std::collections::HashMap;
use std::io::{self, Write};

/// Process id used for the per-CPU tracks.
pub const CPU_TRACKS_PID: i64 = 0x7fff_0000;

/// Streaming Chrome JSON writer.
pub struct ChromeExporter<W: Write> {
    out: W,
    first: bool,
    running: Vec<Option<(i32, u64, String)>>,
    /// Each CPU's latest event.
    last_ts: Vec<u64>,
    tgid: HashMap<i32, i32>,
    named: HashMap<i32, ()>,
    events: u64,
    /// Wakee → flow id of its pending wake-up.
    flows: HashMap<i32, u64>,
    next_flow: u64,
}

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".to_string())
}

impl<W: Write> ChromeExporter<W> {
    /// Start the JSON document.
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        Ok(ChromeExporter {
            out,
            first: true,
            running: Vec::new(),
            last_ts: Vec::new(),
            tgid: HashMap::new(),
            named: HashMap::new(),
            events: 0,
            flows: HashMap::new(),
            next_flow: 1,
        })
    }

    fn emit(&mut self, obj: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.events += 1;
        self.out.write_all(obj.as_bytes())
    }

    fn pid_of(&self, tid: i32) -> i32 {
        self.tgid.get(&tid).copied().unwrap_or(tid)
    }

    fn name_thread(&mut self, tid: i32, comm: &str) -> io::Result<()> {
        if tid == 0 || self.named.contains_key(&tid) {
            return Ok(());
        }
        self.named.insert(tid, ());
        let pid = self.pid_of(tid);
        self.emit(&format!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
            json_str(comm)
        ))
    }

    fn slice(&mut self, cpu: u32, tid: i32, start: u64, end: u64, comm: &str) -> io::Result<()> {
        if tid == 0 {
            return Ok(());
        }
        let pid = self.pid_of(tid);
        let (ts, dur, name) = (us(start), us(end.saturating_sub(start)), json_str(comm));
        self.emit(&format!(
            "{{\"ph\":\"X\",\"cat\":\"sched\",\"name\":{name},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\"dur\":{dur},\"args\":{{\"cpu\":{cpu}}}}}"
        ))?;
        self.emit(&format!(
            "{{\"ph\":\"X\",\"cat\":\"sched\",\"name\":{name},\"pid\":{CPU_TRACKS_PID},\"tid\":{cpu},\"ts\":{ts},\"dur\":{dur},\"args\":{{\"tid\":{tid}}}}}"
        ))
    }

    /// Feed one clock-based event.
    pub fn event(&mut self, e: &Event<'_>) -> io::Result<()> {
        if e.time_base != lever_trace::TimeBase::Clock {
            return Ok(());
        }
        if let Some(tgid) = e.tgid {
            self.tgid.insert(e.pid, tgid);
        }
        let t = e.ts_ns;
        let i = e.cpu as usize;
        if let Some(Some((tid, start, _))) = self.running.get(i) {
            if *tid != e.pid {
                let (start, last) = (*start, self.last_ts[i]);
                if let Some((tid, _, comm)) = self.running[i].take() {
                    self.slice(e.cpu, tid, start, last, &comm)?;
                }
                self.name_thread(e.pid, e.comm)?;
                self.running[i] = Some((e.pid, t, e.comm.to_string()));
            }
        }
        if i >= self.last_ts.len() {
            self.last_ts.resize(i + 1, 0);
        }
        self.last_ts[i] = t;
        match &e.kind {
            EventKind::SchedSwitch(sw) => {
                if i >= self.running.len() {
                    self.running.resize(i + 1, None);
                    let name = format!("CPU {}", e.cpu);
                    self.emit(&format!(
                        "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{CPU_TRACKS_PID},\"tid\":{},\"args\":{{\"name\":{}}}}}",
                        e.cpu,
                        json_str(&name)
                    ))?;
                }
                if let Some((tid, start, comm)) = self.running[i].take() {
                    self.slice(e.cpu, tid, start, t, &comm)?;
                }
                self.name_thread(sw.next_pid, sw.next_comm)?;
                self.running[i] = Some((sw.next_pid, t, sw.next_comm.to_string()));
                if let Some(id) = self.flows.remove(&sw.next_pid) {
                    let (pid, tid) = (self.pid_of(sw.next_pid), sw.next_pid);
                    self.emit(&format!(
                        "{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"cat\":\"wakeup\",\"name\":\"wakeup\",\"pid\":{pid},\"tid\":{tid},\"ts\":{}}}",
                        us(t)
                    ))?;
                }
            }
            EventKind::SchedWakeup(w)
                if w.pid != 0 && e.pid != 0 && !self.flows.contains_key(&w.pid) =>
            {
                let id = self.next_flow;
                self.next_flow += 1;
                self.flows.insert(w.pid, id);
                let (pid, tid) = (self.pid_of(e.pid), e.pid);
                self.emit(&format!(
                    "{{\"ph\":\"s\",\"id\":{id},\"cat\":\"wakeup\",\"name\":\"wakeup\",\"pid\":{pid},\"tid\":{tid},\"ts\":{}}}",
                    us(t)
                ))?;
            }
            EventKind::Marker(m) => {
                let tid = e.pid;
                self.name_thread(tid, e.comm)?;
                let pid = self.pid_of(tid);
                let ts = us(t);
                match m {
                    Marker::Begin { name, .. } => self.emit(&format!(
                        "{{\"ph\":\"B\",\"cat\":\"marker\",\"name\":{},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}",
                        json_str(name)
                    ))?,
                    Marker::End { .. } => self.emit(&format!(
                        "{{\"ph\":\"E\",\"cat\":\"marker\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}"
                    ))?,
                    Marker::Instant { name } => self.emit(&format!(
                        "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"marker\",\"name\":{},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}",
                        json_str(name)
                    ))?,
                    Marker::Counter { name, value, .. } => self.emit(&format!(
                        "{{\"ph\":\"C\",\"name\":{},\"pid\":{pid},\"ts\":{ts},\"args\":{{\"value\":{value}}}}}",
                        json_str(name)
                    ))?,
                    Marker::Text(text) => self.emit(&format!(
                        "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"marker\",\"name\":{},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}",
                        json_str(text)
                    ))?,
                }
            }
            EventKind::CpuFrequency { state_khz, cpu } => self.emit(&format!(
                "{{\"ph\":\"C\",\"name\":\"cpu{cpu} freq\",\"pid\":{CPU_TRACKS_PID},\"ts\":{},\"args\":{{\"khz\":{state_khz}}}}}",
                us(t)
            ))?,
            EventKind::CpuIdle { state, cpu } => self.emit(&format!(
                "{{\"ph\":\"C\",\"name\":\"cpu{cpu} idle\",\"pid\":{CPU_TRACKS_PID},\"ts\":{},\"args\":{{\"state\":{}}}}}",
                us(t),
                state.map_or(-1, |s| s as i64)
            ))?,
            _ => {}
        }
        Ok(())
    }

    /// Close open slices at `end_ns`, finish the document, return the
    /// number of trace events written.
    pub fn finish(mut self, end_ns: u64) -> io::Result<u64> {
        let running = std::mem::take(&mut self.running);
        for (cpu, r) in running.into_iter().enumerate() {
            if let Some((tid, start, comm)) = r {
                self.slice(cpu as u32, tid, start, end_ns, &comm)?;
            }
        }
        self.emit(&format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{CPU_TRACKS_PID},\"args\":{{\"name\":\"CPUs\"}}}}"
        ))?;
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok(self.events)
    }
}
