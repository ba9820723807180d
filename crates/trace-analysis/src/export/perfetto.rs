//! Export as a Perfetto trace (protobuf), encoded by hand: the ftrace
//! events Perfetto itself records, so ui.perfetto.dev and trace_processor
//! build their own scheduling, frequency and idle tracks from them.
//!
//! The file is a `Trace` (perfetto/trace/trace.proto): a sequence of
//! field 1 (`packet`), each a length-delimited `TracePacket` holding one
//! `FtraceEventBundle` (field 1, `ftrace_events`) of one CPU: `cpu` (1),
//! then each event as `event` (2). An `FtraceEvent` is `timestamp` (1,
//! ns), `pid` (2, the task running on the CPU) and one payload:
//!
//! | event | field | payload fields |
//! |---|---|---|
//! | `print` (markers) | 3 | `buf` 2 |
//! | `sched_switch` | 4 | `prev_comm` 1, `prev_pid` 2, `prev_prio` 3, `prev_state` 4 (kernel bits: S 1, D 2, T 4, t 8, X 16, Z 32, P 64, I 128, preempted `R+` 256), `next_comm` 5, `next_pid` 6, `next_prio` 7 |
//! | `cpu_frequency` | 11 | `state` 1 (kHz), `cpu_id` 2 |
//! | `cpu_idle` | 13 | `state` 1 (4294967295 = exit), `cpu_id` 2 |
//! | `sched_wakeup` / `sched_waking` / `sched_wakeup_new` | 17 / 20 / 114 | `comm` 1, `pid` 2, `prio` 3, `success` 4, `target_cpu` 5 |
//! | `softirq_entry` / `softirq_exit` | 24 / 25 | `vec` 1 |
//! | `irq_handler_entry` / `irq_handler_exit` | 36 / 37 | `irq` 1, `name` 2 / `irq` 1, `ret` 2 |
//! | `sched_migrate_task` | 491 | `comm` 1, `pid` 2, `orig_cpu` 4, `dest_cpu` 5 |
//!
//! Integers are varints (negative `int32`/`int64` as 10-byte two's
//! complement, as protobuf does); strings are length-delimited. Events of
//! other kinds are left out (counted). Each CPU's events are collected
//! and written as a bundle when they reach [`BUNDLE_BYTES`], in time
//! order per CPU as Perfetto expects; memory is bounded by CPUs × that.

use lever_trace::{Event, EventKind, LineSource, Marker, Summary, WakeKind};
use std::io::{self, Write};

/// A CPU's pending events are written as one bundle at this size.
pub const BUNDLE_BYTES: usize = 64 * 1024;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Field `field` as a varint.
fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, (field as u64) << 3);
    varint(out, v);
}

/// A signed field (`int32`/`int64`): negative numbers sign-extended.
fn int(out: &mut Vec<u8>, field: u32, v: i64) {
    uint(out, field, v as u64);
}

/// Field `field` length-delimited (a string, bytes or a message).
fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    varint(out, (field as u64) << 3 | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The kernel's `prev_state` bits for its text form (`S`, `D`, `R+`...).
fn prev_state(s: &str) -> i64 {
    let bits = match s.as_bytes().first() {
        Some(b'S') => 1,
        Some(b'D') => 2,
        Some(b'T') => 4,
        Some(b't') => 8,
        Some(b'X') => 16,
        Some(b'Z') => 32,
        Some(b'P') => 64,
        Some(b'I') => 128,
        _ => 0,
    };
    if s.ends_with('+') {
        bits | 256
    } else {
        bits
    }
}

/// The `FtraceEvent` payload (field number, message) of `e`, or `None`
/// for events that are not exported.
fn payload(e: &Event<'_>, m: &mut Vec<u8>) -> Option<u32> {
    Some(match &e.kind {
        EventKind::SchedSwitch(s) => {
            bytes(m, 1, s.prev_comm.as_bytes());
            int(m, 2, s.prev_pid as i64);
            int(m, 3, s.prev_prio as i64);
            int(m, 4, prev_state(s.prev_state));
            bytes(m, 5, s.next_comm.as_bytes());
            int(m, 6, s.next_pid as i64);
            int(m, 7, s.next_prio as i64);
            4
        }
        EventKind::SchedWakeup(w) => {
            bytes(m, 1, w.comm.as_bytes());
            int(m, 2, w.pid as i64);
            int(m, 3, w.prio as i64);
            int(m, 4, 1);
            if let Some(cpu) = w.target_cpu {
                int(m, 5, cpu as i64);
            }
            match w.kind {
                WakeKind::Wakeup => 17,
                WakeKind::Waking => 20,
                WakeKind::WakeupNew => 114,
            }
        }
        EventKind::SchedMigrateTask(t) => {
            bytes(m, 1, t.comm.as_bytes());
            int(m, 2, t.pid as i64);
            int(m, 4, t.orig_cpu as i64);
            int(m, 5, t.dest_cpu as i64);
            491
        }
        EventKind::CpuFrequency { state_khz, cpu } => {
            uint(m, 1, *state_khz);
            uint(m, 2, *cpu as u64);
            11
        }
        EventKind::CpuIdle { state, cpu } => {
            uint(m, 1, state.unwrap_or(u32::MAX) as u64);
            uint(m, 2, *cpu as u64);
            13
        }
        EventKind::Marker(_) => {
            bytes(m, 2, marker_text(e).as_bytes());
            3
        }
        EventKind::IrqEntry { irq, name } => {
            int(m, 1, *irq as i64);
            bytes(m, 2, name.as_bytes());
            36
        }
        EventKind::IrqExit { irq, handled } => {
            int(m, 1, *irq as i64);
            int(m, 2, i64::from(*handled));
            37
        }
        EventKind::SoftirqEntry { vec, .. } => {
            uint(m, 1, *vec as u64);
            24
        }
        EventKind::SoftirqExit { vec, .. } => {
            uint(m, 1, *vec as u64);
            25
        }
        _ => return None,
    })
}

/// A marker as written to `trace_marker` (systrace `B|pid|name` stays as
/// it is, which Perfetto turns into slices).
fn marker_text<'a>(e: &Event<'a>) -> &'a str {
    match &e.kind {
        EventKind::Marker(Marker::Text(t)) => t,
        _ => e.body,
    }
}

/// Streaming Perfetto writer.
pub struct PerfettoExporter<W: Write> {
    out: W,
    /// Per CPU: encoded `event` fields not yet written.
    pending: Vec<Vec<u8>>,
    scratch: Vec<u8>,
    written: u64,
    skipped: u64,
}

impl<W: Write> PerfettoExporter<W> {
    /// A writer to `out` (nothing is written before the first bundle).
    pub fn new(out: W) -> Self {
        PerfettoExporter {
            out,
            pending: Vec::new(),
            scratch: Vec::new(),
            written: 0,
            skipped: 0,
        }
    }

    /// Add one event (times are the trace's ns).
    pub fn event(&mut self, e: &Event<'_>) -> io::Result<()> {
        let mut m = std::mem::take(&mut self.scratch);
        m.clear();
        let Some(field) = payload(e, &mut m) else {
            self.skipped += 1;
            self.scratch = m;
            return Ok(());
        };
        let mut ev = Vec::with_capacity(m.len() + 24);
        uint(&mut ev, 1, e.ts_ns);
        uint(&mut ev, 2, e.pid.max(0) as u64);
        bytes(&mut ev, field, &m);
        self.scratch = m;
        let cpu = e.cpu;
        let buf = crate::stats::per_cpu(&mut self.pending, cpu);
        bytes(buf, 2, &ev);
        self.written += 1;
        if buf.len() >= BUNDLE_BYTES {
            self.flush_cpu(cpu)?;
        }
        Ok(())
    }

    fn flush_cpu(&mut self, cpu: u32) -> io::Result<()> {
        let events = std::mem::take(&mut self.pending[cpu as usize]);
        if events.is_empty() {
            return Ok(());
        }
        let mut bundle = Vec::with_capacity(events.len() + 8);
        uint(&mut bundle, 1, cpu as u64);
        bundle.extend_from_slice(&events);
        let mut packet = Vec::with_capacity(bundle.len() + 8);
        bytes(&mut packet, 1, &bundle);
        let mut head = Vec::with_capacity(12);
        varint(&mut head, 1 << 3 | 2);
        varint(&mut head, packet.len() as u64);
        self.out.write_all(&head)?;
        self.out.write_all(&packet)?;
        // Reuse the CPU's buffer.
        let mut events = events;
        events.clear();
        self.pending[cpu as usize] = events;
        Ok(())
    }

    /// Write what is pending; (events written, events left out).
    pub fn finish(mut self) -> io::Result<(u64, u64)> {
        for cpu in 0..self.pending.len() as u32 {
            self.flush_cpu(cpu)?;
        }
        self.out.flush()?;
        Ok((self.written, self.skipped))
    }
}

/// Export `input` as a Perfetto trace to `out`: (events written, events
/// left out, the reader's summary).
pub fn export_perfetto<S: LineSource, W: Write>(
    input: S,
    out: W,
    progress: impl FnMut(u64),
) -> io::Result<(u64, u64, Summary)> {
    let mut ex = PerfettoExporter::new(out);
    let mut err = None;
    let summary = input.for_each_line(
        |_, line| {
            if let (lever_trace::Line::Event(e), None) = (line, &err) {
                if e.time_base == lever_trace::TimeBase::Clock {
                    if let Err(x) = ex.event(e) {
                        err = Some(x);
                    }
                }
            }
        },
        progress,
    )?;
    if let Some(e) = err {
        return Err(e);
    }
    let (n, skipped) = ex.finish()?;
    Ok((n, skipped, summary))
}

/// [`export_perfetto`] into the file `output`.
pub fn export_perfetto_file<S: LineSource>(
    input: S,
    output: &std::path::Path,
    progress: impl FnMut(u64),
) -> Result<(u64, u64, Summary), crate::ExportError> {
    let file = std::fs::File::create(output).map_err(|source| crate::ExportError::Create {
        path: output.to_path_buf(),
        source,
    })?;
    export_perfetto(input, io::BufWriter::new(file), progress).map_err(|source| {
        crate::ExportError::Write {
            path: output.to_path_buf(),
            source,
        }
    })
}
