//! A parsed line packed for the trip from a parsing thread to the feeding
//! one. A [`Line`] is 168 bytes; most of it is string slices of the line
//! itself. Packed, those are 16-bit offsets into the line, and the sched
//! events every analysis reads (three quarters of a sched capture, with
//! `sched_stat_runtime`) take 88 bytes: half the memory traffic between
//! the two cores, which was most of the cost of parsing on a second
//! thread. The feeding thread unpacks each line on its stack.
//!
//! Anything else (headers, function_graph, other typed events, a line
//! over 64 KiB) travels as it is, in a side list.

use crate::event::{EventKind, SchedSwitch, SchedWakeup, WakeKind};
use crate::line::{Event, Line, TimeBase};

/// What a [`Packed`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    /// The next line of the side list.
    Side,
    /// An event of [`EventKind::Other`].
    Other,
    Switch,
    Wakeup(WakeKind),
    StatRuntime,
}

/// One line, packed (see the module).
#[derive(Debug, Clone)]
pub(crate) struct Packed<'a> {
    text: &'a str,
    ts_ns: u64,
    pid: i32,
    cpu: u32,
    tgid: Option<i32>,
    /// The kind's numbers (pids, prios, a CPU, or a u64 in two halves).
    num: [i32; 4],
    /// Offsets into `text`, start and end: comm, flags, name, body, then
    /// the kind's up to three strings.
    off: [u16; 14],
    tag: Tag,
    has_flags: bool,
    clock: bool,
    /// The wake-up's target CPU is known.
    has_target: bool,
}

/// Where `sub` lies in `text`, if it does and fits 16 bits.
fn span(text: &str, sub: &str) -> Option<(u16, u16)> {
    let start = (sub.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start + sub.len();
    (end <= text.len()).then_some(())?;
    Some((u16::try_from(start).ok()?, u16::try_from(end).ok()?))
}

impl<'a> Packed<'a> {
    /// Pack `line` (parsed from `text`), or `None` when it must travel as
    /// it is.
    pub(crate) fn pack(text: &'a str, line: &Line<'a>) -> Option<Packed<'a>> {
        let Line::Event(e) = line else {
            return None;
        };
        let mut off = [0u16; 14];
        let mut put = |k: usize, s: &str| -> Option<()> {
            (off[2 * k], off[2 * k + 1]) = span(text, s)?;
            Some(())
        };
        put(0, e.comm)?;
        if let Some(f) = e.flags {
            put(1, f)?;
        }
        put(2, e.name)?;
        put(3, e.body)?;
        let mut num = [0i32; 4];
        let mut has_target = false;
        let tag = match &e.kind {
            EventKind::Other => Tag::Other,
            EventKind::SchedSwitch(sw) => {
                put(4, sw.prev_comm)?;
                put(5, sw.prev_state)?;
                put(6, sw.next_comm)?;
                num = [sw.prev_pid, sw.prev_prio, sw.next_pid, sw.next_prio];
                Tag::Switch
            }
            EventKind::SchedWakeup(w) => {
                put(4, w.comm)?;
                has_target = w.target_cpu.is_some();
                num = [w.pid, w.prio, w.target_cpu.unwrap_or(0) as i32, 0];
                Tag::Wakeup(w.kind)
            }
            EventKind::SchedStatRuntime {
                comm,
                pid,
                runtime_ns,
            } => {
                put(4, comm)?;
                num = [
                    *pid,
                    *runtime_ns as u32 as i32,
                    (*runtime_ns >> 32) as u32 as i32,
                    0,
                ];
                Tag::StatRuntime
            }
            _ => return None,
        };
        Some(Packed {
            text,
            ts_ns: e.ts_ns,
            pid: e.pid,
            cpu: e.cpu,
            tgid: e.tgid,
            num,
            off,
            tag,
            has_flags: e.flags.is_some(),
            clock: e.time_base == TimeBase::Clock,
            has_target,
        })
    }

    /// A marker for "the next line of the side list".
    pub(crate) fn side() -> Packed<'static> {
        Packed {
            text: "",
            ts_ns: 0,
            pid: 0,
            cpu: 0,
            tgid: None,
            num: [0; 4],
            off: [0; 14],
            tag: Tag::Side,
            has_flags: false,
            clock: false,
            has_target: false,
        }
    }

    /// True for [`Packed::side`].
    pub(crate) fn is_side(&self) -> bool {
        self.tag == Tag::Side
    }

    /// String `k` (see `off`). The offsets were taken from slices of the
    /// text, so they are in bounds and on character boundaries.
    #[inline]
    fn s(&self, k: usize) -> &'a str {
        let (a, b) = (self.off[2 * k] as usize, self.off[2 * k + 1] as usize);
        self.text.get(a..b).unwrap_or("")
    }

    /// The line as it was parsed.
    #[inline]
    pub(crate) fn unpack(&self) -> Line<'a> {
        let [n0, n1, n2, n3] = self.num;
        let kind = match self.tag {
            Tag::Side | Tag::Other => EventKind::Other,
            Tag::Switch => EventKind::SchedSwitch(SchedSwitch {
                prev_comm: self.s(4),
                prev_pid: n0,
                prev_prio: n1,
                prev_state: self.s(5),
                next_comm: self.s(6),
                next_pid: n2,
                next_prio: n3,
            }),
            Tag::Wakeup(kind) => EventKind::SchedWakeup(SchedWakeup {
                kind,
                comm: self.s(4),
                pid: n0,
                prio: n1,
                target_cpu: self.has_target.then_some(n2 as u32),
            }),
            Tag::StatRuntime => EventKind::SchedStatRuntime {
                comm: self.s(4),
                pid: n0,
                runtime_ns: (n1 as u32 as u64) | ((n2 as u32 as u64) << 32),
            },
        };
        Line::Event(Event {
            comm: self.s(0),
            pid: self.pid,
            tgid: self.tgid,
            cpu: self.cpu,
            flags: self.has_flags.then(|| self.s(1)),
            ts_ns: self.ts_ns,
            time_base: if self.clock {
                TimeBase::Clock
            } else {
                TimeBase::Relative
            },
            name: self.s(2),
            body: self.s(3),
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::parse_line;

    #[test]
    fn packs_what_it_can_and_unpacks_the_same_line() {
        let lines = [
            "           mkdir-28581   [000] d..2. 18561.820489: sched_stat_runtime: comm=mkdir pid=28581 runtime=15701750000123 [ns]",
            "           mkdir-28581   [000] dN.5. 18561.820496: sched_waking: comm=bash pid=25908 prio=-1 target_cpu=000",
            "           mkdir-28581   [000] dN.5. 18561.820496: sched_wakeup_new: comm=bash pid=25908 prio=120",
            "       hackbench-28582   [001] d..2 18561.820624: sched_switch: prev_comm=bash prev_pid=28582 prev_prio=120 prev_state=D ==> next_comm=rust c next_pid=28460 next_prio=120",
            "  Web Content-1234  (   1200) [003] ....  5.000001: sched_waking: comm=x pid=2 prio=120 target_cpu=001",
            "           <...>-77      [000]  2.5: tracing_mark_write: B|77|draw",
            "           rustc-28460   [001] ..s.. 18561.820721: softirq_raise: vec=4 [action=BLOCK]",
            "      sshd-1991    1d..1   46us : irq_exit <-do_IRQ",
        ];
        let mut packed = 0;
        for text in lines {
            let line = parse_line(text);
            assert!(matches!(line, Line::Event(_)), "{text}");
            if let Some(p) = Packed::pack(text, &line) {
                assert_eq!(p.unpack(), line, "{text}");
                packed += 1;
            }
        }
        assert_eq!(packed, 6, "all but the marker and the function-tracer line");
        assert_eq!(Packed::pack("# tracer: nop", &parse_line("# tracer: nop")).map(|_| ()), None);
        assert!(Packed::side().is_side());
    }

    #[test]
    fn a_slice_from_elsewhere_is_not_packed() {
        let text = "  x-1 [000] .... 1.0: sched_waking: comm=a pid=2 prio=120 target_cpu=000";
        let other = String::from(text);
        // Parsed from a copy: its slices do not lie in `text`.
        assert!(Packed::pack(text, &parse_line(&other)).is_none());
    }
}
