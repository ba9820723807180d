//! `trace-cmd report` text: ftrace-like lines with three differences
//! from the kernel's own text, undone here so the analyses see the same
//! typed events:
//!
//! - a first line `cpus=2` (no `#`);
//! - the event name padded with spaces (`sched_switch:         prev_comm=...`);
//! - libtraceevent's sched plugin formats for sched_switch and
//!   sched_wakeup(_new), and the call site before a marker:
//!
//! ```text
//!           cap.sh-15981 [001]  9550.367342: sched_switch:         cap.sh:15981 [120] S ==> cap.sh:15982 [120]
//!        hackbench-15986 [001]  9550.368580: sched_wakeup:         hackbench:15982 [120] CPU:001
//!           cap.sh-15981 [001]  9550.370164: print:                0xffffffff8149ab1a: B hackbench
//! ```
//!
//! (`trace-cmd report -N`, without plugins, prints the kernel's formats.)

use lever_trace::{
    parse_line_untyped, Event, EventKind, Header, Line, LineSource, Marker, SchedSwitch,
    SchedWakeup, Summary, TraceReader, WakeKind,
};
use std::io::{self, Read};

/// True when `head` (the first bytes) starts like `trace-cmd report`
/// output: `cpus=N` on the first line.
pub fn looks_like(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    line.strip_prefix(b"cpus=")
        .is_some_and(|n| !n.is_empty() && n.trim_ascii_end().iter().all(u8::is_ascii_digit))
}

/// `trace-cmd report` text as a [`LineSource`].
pub struct Report<R>(pub R);

impl<R: Read> LineSource for Report<R> {
    fn for_each_line<F, P>(self, mut f: F, mut progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        let mut reader = TraceReader::new(self.0);
        let mut sum = Summary::default();
        let mut next_progress = 4 << 20;
        while let Some((no, text)) = reader.next_line()? {
            let line = if text.starts_with("cpus=") {
                Line::Header(Header::Other(text))
            } else {
                retype(parse_line_untyped(text))
            };
            sum.note(no, text, &line);
            f(no, &line);
            if reader.bytes_read() >= next_progress {
                progress(reader.bytes_read());
                next_progress = reader.bytes_read() + (4 << 20);
            }
        }
        sum.bytes = reader.bytes_read();
        Ok(sum)
    }
}

/// Type an event the text parser left generic because of the padding or
/// a plugin format.
fn retype(line: Line<'_>) -> Line<'_> {
    let Line::Event(e) = line else { return line };
    // The text parser types `print` as a marker, call site and all.
    if !matches!(e.kind, EventKind::Other) && e.name != "print" {
        return Line::Event(e);
    }
    let body = e.body.trim_start();
    let kind = match e.name {
        "sched_switch" => plugin_switch(body).map(EventKind::SchedSwitch),
        "sched_wakeup" => plugin_wakeup(WakeKind::Wakeup, body),
        "sched_wakeup_new" => plugin_wakeup(WakeKind::WakeupNew, body),
        "print" => body
            .split_once(": ")
            .filter(|(ip, _)| ip.starts_with("0x"))
            .map(|(_, text)| EventKind::Marker(Marker::parse(text))),
        _ => None,
    }
    .map_or_else(|| EventKind::try_parse(e.name, body), Ok);
    match kind {
        Ok(kind) => Line::Event(Event { body, kind, ..e }),
        // A typed event whose body is neither format: cut short.
        Err(reason) => Line::Malformed(reason),
    }
}

/// `comm:pid` → (comm, pid); the pid is after the last colon.
fn comm_pid(s: &str) -> Option<(&str, i32)> {
    let (c, p) = s.rsplit_once(':')?;
    Some((c, p.parse().ok()?))
}

/// `[120]` → 120.
fn prio(s: &str) -> Option<i32> {
    s.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

// "cap.sh:15981 [120] S ==> cap.sh:15982 [120]"
fn plugin_switch(body: &str) -> Option<SchedSwitch<'_>> {
    let (prev, next) = body.split_once(" ==> ")?;
    let (prev_task, rest) = prev.rsplit_once(" [")?;
    let (prev_prio, prev_state) = rest.split_once("] ")?;
    let (next_task, next_prio) = next.trim_end().rsplit_once(' ')?;
    let (prev_comm, prev_pid) = comm_pid(prev_task)?;
    let (next_comm, next_pid) = comm_pid(next_task)?;
    Some(SchedSwitch {
        prev_comm,
        prev_pid,
        prev_prio: prev_prio.parse().ok()?,
        prev_state: prev_state.trim(),
        next_comm,
        next_pid,
        next_prio: prio(next_prio)?,
    })
}

// "hackbench:15982 [120] CPU:001" (older: "... [120] success=1 CPU:001")
fn plugin_wakeup(kind: WakeKind, body: &str) -> Option<EventKind<'_>> {
    let (task, rest) = body.split_once(" [")?;
    let (p, rest) = rest.split_once(']')?;
    let (comm, pid) = comm_pid(task)?;
    let target_cpu = rest
        .split_whitespace()
        .find_map(|w| w.strip_prefix("CPU:"))
        .and_then(|c| c.parse().ok());
    Some(EventKind::SchedWakeup(SchedWakeup {
        kind,
        comm,
        pid,
        prio: p.parse().ok()?,
        target_cpu,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> EventKind<'_> {
        match retype(parse_line_untyped(line)) {
            Line::Event(e) => e.kind,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plugin_formats_padding_and_print_call_sites_are_typed() {
        let EventKind::SchedSwitch(sw) = kind("          cap.sh-15981 [001]  9550.367342: sched_switch:         cap.sh:15981 [120] R+ ==> my comm:15982 [100]") else { panic!() };
        assert_eq!(
            (
                sw.prev_comm,
                sw.prev_pid,
                sw.prev_prio,
                sw.prev_state,
                sw.next_comm,
                sw.next_pid,
                sw.next_prio
            ),
            ("cap.sh", 15981, 120, "R+", "my comm", 15982, 100)
        );
        let EventKind::SchedWakeup(w) = kind("       hackbench-15986 [001]  9550.368580: sched_wakeup:         hackbench:15982 [120] CPU:001") else { panic!() };
        assert_eq!(
            (w.kind, w.comm, w.pid, w.prio, w.target_cpu),
            (WakeKind::Wakeup, "hackbench", 15982, 120, Some(1))
        );
        let EventKind::SchedWakeup(w) = kind(
            "  a-1 [000]  1.000001: sched_waking:         comm=x pid=2 prio=120 target_cpu=001",
        ) else {
            panic!()
        };
        assert_eq!((w.kind, w.pid), (WakeKind::Waking, 2));
        assert_eq!(
            kind("  cap.sh-15981 [001]  9550.370164: print:                0xffffffff8149ab1a: B hackbench"),
            EventKind::Marker(Marker::Begin { pid: None, name: "hackbench" })
        );
    }

    #[test]
    fn detected_by_the_cpus_line() {
        assert!(looks_like(b"cpus=2\n  a-1 [000] ..."));
        assert!(!looks_like(b"# tracer: nop\n"));
        assert!(!looks_like(b"cpus=two\n"));
    }
}
