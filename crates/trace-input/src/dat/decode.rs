//! Payload bytes → the typed [`EventKind`] the text parser gives for the
//! same event, using the field offsets of the event's format. Events
//! without a typed decoder keep [`EventKind::Other`] with a `field=value`
//! body rendered from their format.

use super::bytes::Endian;
use super::format::{Field, Format, Layout};
use lever_trace::{EventKind, Marker, SchedMigrateTask, SchedSwitch, SchedWakeup, WakeKind};
use std::fmt::Write;

/// Where one field is, copied out of [`Field`] for the hot path.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    offset: usize,
    size: usize,
    signed: bool,
    layout: Layout,
}

impl Slot {
    fn of(f: &Field) -> Slot {
        Slot {
            offset: f.offset,
            size: f.size,
            signed: f.signed,
            layout: f.layout,
        }
    }

    /// The integer value, sign-extended when the field is signed.
    #[inline]
    pub fn int(&self, p: &[u8], e: Endian) -> Option<i64> {
        let v = e.uint(p, self.offset, self.size)?;
        Some(match (self.signed, self.size) {
            (true, 1) => v as u8 as i8 as i64,
            (true, 2) => v as u16 as i16 as i64,
            (true, 4) => v as u32 as i32 as i64,
            _ => v as i64,
        })
    }

    /// The bytes of an array or `__data_loc` field.
    pub fn bytes<'p>(&self, p: &'p [u8], e: Endian) -> Option<&'p [u8]> {
        match self.layout {
            Layout::Int => None,
            Layout::Array if self.size == 0 => p.get(self.offset..),
            Layout::Array => p.get(self.offset..self.offset.checked_add(self.size)?),
            Layout::DataLoc => {
                let loc = e.uint(p, self.offset, 4)? as usize;
                let (off, len) = (loc & 0xffff, loc >> 16);
                p.get(off..off + len)
            }
        }
    }

    /// A C string field as `&str` (cut at the first NUL; the caller made
    /// the bytes UTF-8 with [`sanitize`]).
    #[inline]
    pub fn str<'p>(&self, p: &'p [u8], e: Endian) -> &'p str {
        let b = self.bytes(p, e).unwrap_or_default();
        let b = &b[..memchr0(b)];
        std::str::from_utf8(b).unwrap_or("?")
    }
}

#[inline]
fn memchr0(b: &[u8]) -> usize {
    b.iter().position(|&c| c == 0).unwrap_or(b.len())
}

/// How to type one event.
#[derive(Debug, Clone)]
pub enum Decoder {
    /// sched_switch: prev comm/pid/prio/state, next comm/pid/prio.
    Switch([Slot; 7]),
    /// sched_waking/wakeup/wakeup_new: comm, pid, prio, target_cpu.
    Wakeup(WakeKind, [Slot; 3], Option<Slot>),
    /// sched_migrate_task: comm, pid, orig_cpu, dest_cpu.
    Migrate([Slot; 4]),
    /// sched_stat_runtime: comm, pid, runtime (a third of a sched
    /// capture's events: typed here, not rendered as text and re-parsed).
    StatRuntime([Slot; 3]),
    /// cpu_frequency: state, cpu_id.
    Freq([Slot; 2]),
    /// cpu_idle: state, cpu_id.
    Idle([Slot; 2]),
    /// power_start: type, state, cpu_id.
    PowerStart([Slot; 3]),
    /// power_end: cpu_id.
    PowerEnd(Slot),
    /// ftrace print (trace_marker writes): buf.
    Print(Slot),
    /// irq_handler_entry: irq, name.
    IrqEntry([Slot; 2]),
    /// irq_handler_exit: irq, ret.
    IrqExit([Slot; 2]),
    /// softirq_entry/exit: vec.
    Softirq(bool, Slot),
    /// Anything else: rendered generically.
    Generic,
}

impl Decoder {
    /// The decoder for a format, by its system and name; [`Decoder::Generic`]
    /// when a field the typed form needs is missing.
    pub fn for_format(f: &Format) -> Decoder {
        let s = |n: &str| f.field(n).map(Slot::of);
        let typed = || -> Option<Decoder> {
            Some(match (f.system.as_str(), f.name.as_str()) {
                ("sched", "sched_switch") => Decoder::Switch([
                    s("prev_comm")?,
                    s("prev_pid")?,
                    s("prev_prio")?,
                    s("prev_state")?,
                    s("next_comm")?,
                    s("next_pid")?,
                    s("next_prio")?,
                ]),
                ("sched", n @ ("sched_waking" | "sched_wakeup" | "sched_wakeup_new")) => {
                    let kind = match n {
                        "sched_waking" => WakeKind::Waking,
                        "sched_wakeup" => WakeKind::Wakeup,
                        _ => WakeKind::WakeupNew,
                    };
                    Decoder::Wakeup(kind, [s("comm")?, s("pid")?, s("prio")?], s("target_cpu"))
                }
                ("sched", "sched_migrate_task") => {
                    Decoder::Migrate([s("comm")?, s("pid")?, s("orig_cpu")?, s("dest_cpu")?])
                }
                ("sched", "sched_stat_runtime") => {
                    Decoder::StatRuntime([s("comm")?, s("pid")?, s("runtime")?])
                }
                ("power", "cpu_frequency") => Decoder::Freq([s("state")?, s("cpu_id")?]),
                ("power", "cpu_idle") => Decoder::Idle([s("state")?, s("cpu_id")?]),
                ("power", "power_start") => {
                    Decoder::PowerStart([s("type")?, s("state")?, s("cpu_id")?])
                }
                ("power", "power_end") => Decoder::PowerEnd(s("cpu_id")?),
                ("ftrace", "print") => Decoder::Print(s("buf")?),
                ("irq", "irq_handler_entry") => Decoder::IrqEntry([s("irq")?, s("name")?]),
                ("irq", "irq_handler_exit") => Decoder::IrqExit([s("irq")?, s("ret")?]),
                ("irq", "softirq_entry") => Decoder::Softirq(true, s("vec")?),
                ("irq", "softirq_exit") => Decoder::Softirq(false, s("vec")?),
                _ => return None,
            })
        };
        typed().unwrap_or(Decoder::Generic)
    }

    /// The comm fields [`typed`] takes from a [`CommCache`] (in the
    /// order of its `comms` argument): those of the sched events
    /// (`char[16]`, or `__data_loc char[]` as `sched_stat_runtime` has on
    /// newer kernels). Others are `None`.
    pub fn comm_fields(&self) -> [Option<Slot>; 2] {
        let cached = |c: &Slot| {
            let fits = match c.layout {
                Layout::Array => c.size > 0 && c.size <= COMM_LEN,
                Layout::DataLoc => true,
                Layout::Int => false,
            };
            fits.then_some(*c)
        };
        match self {
            Decoder::Switch(s) => [cached(&s[0]), cached(&s[4])],
            Decoder::Wakeup(_, s, _) => [cached(&s[0]), None],
            Decoder::Migrate(s) => [cached(&s[0]), None],
            Decoder::StatRuntime(s) => [cached(&s[0]), None],
            _ => [None, None],
        }
    }

    /// The name the kernel's text output uses for this event
    /// (`tracing_mark_write` for ftrace's `print`).
    pub fn text_name<'f>(&self, f: &'f Format) -> &'f str {
        match self {
            Decoder::Print(_) => "tracing_mark_write",
            _ => &f.name,
        }
    }
}

/// The string fields of a format (`char` arrays and `__data_loc char[]`),
/// found once per format so the per-event [`sanitize`] compares no type
/// names.
pub fn string_slots(f: &Format) -> Vec<Slot> {
    f.fields
        .iter()
        .filter(|fld| fld.layout != Layout::Int && fld.ctype.ends_with("char"))
        .map(Slot::of)
        .collect()
}

/// The kernel's `TASK_COMM_LEN`: the size of the comm arrays of the sched
/// events, the ones [`CommCache`] holds.
pub const COMM_LEN: usize = 16;
/// Entries of a [`CommCache`] (direct-mapped by pid).
const COMM_CACHE: usize = 256;

/// The comm fields of sched events, checked for UTF-8 once per distinct
/// raw bytes instead of per event: a few tasks make most events, and a
/// task's comm does not change between events, so the usual case is one
/// 16-byte (u128) compare against the entry the bytes hash to. An entry
/// holds the field's bytes (zero-padded to [`COMM_LEN`]) and what
/// [`sanitize`] then [`Slot::str`] make of them: the bytes to the first
/// NUL, invalid UTF-8 as `?`. That depends on the padded bytes alone
/// (padding only adds NULs after the field), so a hit gives exactly what
/// the per-event path gives. (Keyed by the bytes, not the pid: the pid
/// is one more field to read per comm, and buys nothing — a pid whose
/// comm changes misses either way.)
pub struct CommCache {
    /// The raw bytes of each entry (apart from the texts: the compare
    /// touches only these, 4 to a cache line).
    keys: Box<[u128; COMM_CACHE]>,
    texts: Vec<String>,
    /// The text of a field longer than any kernel comm (not cached).
    long: String,
}

impl Default for CommCache {
    fn default() -> Self {
        // All-zero bytes are the empty comm: a valid starting entry.
        CommCache {
            keys: Box::new([0; COMM_CACHE]),
            texts: vec![String::new(); COMM_CACHE],
            long: String::new(),
        }
    }
}

impl CommCache {
    /// The comm in the `comm` field of `p`: what [`sanitize`] and
    /// [`Slot::str`] give for it. `ext` is `p` and
    /// whatever follows it in memory (the field is read as one 16-byte
    /// word, masked to its length, even where it ends the payload).
    #[inline]
    pub fn get(&mut self, comm: &Slot, p: &[u8], ext: &[u8], e: Endian) -> &str {
        let (at, len) = match comm.layout {
            Layout::Array => (comm.offset, comm.size),
            Layout::DataLoc => e.uint(p, comm.offset, 4).map_or((0, 0), |loc| {
                ((loc & 0xffff) as usize, (loc >> 16) as usize)
            }),
            Layout::Int => (0, 0),
        };
        // Past the payload: no bytes, the empty comm (as `Slot::str`).
        let (at, len) = if at + len > p.len() {
            (0, 0)
        } else {
            (at, len)
        };
        if len > COMM_LEN {
            // Longer than any kernel comm: not cached (and rare).
            fill(&p[at..at + len], &mut self.long);
            return &self.long;
        }
        let mask = match len {
            COMM_LEN => u128::MAX,
            n => (1u128 << (n * 8)) - 1,
        };
        let word = match ext.get(at..at + COMM_LEN) {
            Some(w) => u128::from_le_bytes(w.try_into().unwrap_or_default()),
            None => {
                let mut w = [0; COMM_LEN];
                w[..len].copy_from_slice(&p[at..at + len]);
                u128::from_le_bytes(w)
            }
        };
        let key = word & mask;
        let h = (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let i = (h >> 32) as usize % COMM_CACHE;
        if self.keys[i] != key {
            self.keys[i] = key;
            fill(&key.to_le_bytes(), &mut self.texts[i]);
        }
        &self.texts[i]
    }
}

/// `text` = the bytes of `b` to the first NUL, invalid UTF-8 as `?`.
fn fill(b: &[u8], text: &mut String) {
    text.clear();
    let b = &b[..memchr0(b)];
    match std::str::from_utf8(b) {
        Ok(s) => text.push_str(s),
        Err(_) => {
            let mut b = b.to_vec();
            fix_utf8(&mut b);
            text.push_str(std::str::from_utf8(&b).unwrap_or("?"));
        }
    }
}

/// [`string_slots`] split in two: those [`typed`] takes from a
/// [`CommCache`] (the comm fields of [`Decoder::comm_fields`]), and the
/// others, which [`sanitize`] makes UTF-8 in the payload per event.
pub fn split_strings(f: &Format, d: &Decoder) -> (Vec<Slot>, Vec<Slot>) {
    let comms = d.comm_fields();
    string_slots(f)
        .into_iter()
        .partition(|s| comms.iter().flatten().any(|c| c.offset == s.offset))
}

/// Replace bytes that are not UTF-8 in the string fields of `p` (from
/// [`string_slots`]) by `?` (as the text reader does), so [`Slot::str`]
/// can borrow them. An ASCII field (the usual comm) costs one scan.
pub fn sanitize(strings: &[Slot], p: &mut [u8], e: Endian) {
    for slot in strings {
        let Some(b) = slot.bytes(p, e) else { continue };
        if b.is_ascii() {
            continue;
        }
        let start = b.as_ptr() as usize - p.as_ptr() as usize;
        let end = start + memchr0(b);
        fix_utf8(&mut p[start..end]);
    }
}

fn fix_utf8(b: &mut [u8]) {
    while let Err(err) = std::str::from_utf8(b) {
        let at = err.valid_up_to();
        let n = err.error_len().unwrap_or(b.len() - at);
        b[at..at + n].fill(b'?');
    }
}

/// `prev_state` as the kernel prints it (v4.14+ `TASK_REPORT` bits:
/// S D T t X Z P I, `R` for none, `+` for preempted); a set of several
/// bits shows the lowest (text output would join them with `|`).
fn task_state(v: i64) -> &'static str {
    const PLAIN: [&str; 9] = ["R", "S", "D", "T", "t", "X", "Z", "P", "I"];
    const PLUS: [&str; 9] = ["R+", "S+", "D+", "T+", "t+", "X+", "Z+", "P+", "I+"];
    let bits = (v & 0xff) as u32;
    let i = if bits == 0 {
        0
    } else {
        bits.trailing_zeros() as usize + 1
    };
    if v & 0x100 != 0 {
        PLUS[i]
    } else {
        PLAIN[i]
    }
}

const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// Type the payload `p` with decoder `d`; `None` when a field is out of
/// the payload (a short or corrupt event). `comms` are the comm fields
/// of [`Decoder::comm_fields`] from a [`CommCache`] (`None`: read from `p`).
#[inline(always)]
pub fn typed<'p>(
    d: &Decoder,
    p: &'p [u8],
    e: Endian,
    comms: [Option<&'p str>; 2],
) -> Option<EventKind<'p>> {
    let i32_ = |s: &Slot| s.int(p, e).map(|v| v as i32);
    let u32_ = |s: &Slot| s.int(p, e).map(|v| v as u32);
    let comm = |k: usize, s: &Slot| comms[k].unwrap_or_else(|| s.str(p, e));
    Some(match d {
        Decoder::Switch(s) => EventKind::SchedSwitch(SchedSwitch {
            prev_comm: comm(0, &s[0]),
            prev_pid: i32_(&s[1])?,
            prev_prio: i32_(&s[2])?,
            prev_state: task_state(s[3].int(p, e)?),
            next_comm: comm(1, &s[4]),
            next_pid: i32_(&s[5])?,
            next_prio: i32_(&s[6])?,
        }),
        Decoder::Wakeup(kind, s, target) => EventKind::SchedWakeup(SchedWakeup {
            kind: *kind,
            comm: comm(0, &s[0]),
            pid: i32_(&s[1])?,
            prio: i32_(&s[2])?,
            target_cpu: target.as_ref().and_then(u32_),
        }),
        Decoder::Migrate(s) => EventKind::SchedMigrateTask(SchedMigrateTask {
            comm: comm(0, &s[0]),
            pid: i32_(&s[1])?,
            orig_cpu: u32_(&s[2])?,
            dest_cpu: u32_(&s[3])?,
        }),
        Decoder::StatRuntime(s) => EventKind::SchedStatRuntime {
            comm: comm(0, &s[0]),
            pid: i32_(&s[1])?,
            runtime_ns: s[2].int(p, e)? as u64,
        },
        Decoder::Freq(s) => EventKind::CpuFrequency {
            state_khz: s[0].int(p, e)? as u32 as u64,
            cpu: u32_(&s[1])?,
        },
        Decoder::Idle(s) => EventKind::CpuIdle {
            state: u32_(&s[0]).filter(|&v| v != u32::MAX),
            cpu: u32_(&s[1])?,
        },
        Decoder::PowerStart(s) => EventKind::PowerStart {
            kind: u32_(&s[0])?,
            state: u32_(&s[1])?,
            cpu: u32_(&s[2])?,
        },
        Decoder::PowerEnd(s) => EventKind::PowerEnd { cpu: u32_(s)? },
        Decoder::Print(s) => EventKind::Marker(Marker::parse(s.str(p, e))),
        Decoder::IrqEntry(s) => EventKind::IrqEntry {
            irq: u32_(&s[0])?,
            name: s[1].str(p, e),
        },
        Decoder::IrqExit(s) => EventKind::IrqExit {
            irq: u32_(&s[0])?,
            handled: s[1].int(p, e)? != 0,
        },
        Decoder::Softirq(entry, s) => {
            let vec = u32_(s)?;
            let action = SOFTIRQS.get(vec as usize).copied().unwrap_or("");
            if *entry {
                EventKind::SoftirqEntry { vec, action }
            } else {
                EventKind::SoftirqExit { vec, action }
            }
        }
        Decoder::Generic => EventKind::Other,
    })
}

/// The text of a typed event's body where the text parser keeps one the
/// analyses read (a marker's text); empty for the others.
#[inline]
pub fn typed_body<'p>(d: &Decoder, p: &'p [u8], e: Endian) -> &'p str {
    match d {
        Decoder::Print(s) => s.str(p, e).trim_end_matches('\n'),
        _ => "",
    }
}

/// `field=value ...` for every non-common field, into `out`: integers in
/// decimal (hex for pointers and addresses), strings as text, other
/// arrays as hex bytes.
pub fn render_generic(f: &Format, p: &[u8], e: Endian, out: &mut String) {
    out.clear();
    for fld in f.fields.iter().filter(|f| !f.name.starts_with("common_")) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&fld.name);
        out.push('=');
        let slot = Slot::of(fld);
        match fld.layout {
            Layout::Int => {
                let Some(v) = slot.int(p, e) else {
                    out.push('?');
                    continue;
                };
                let hex = fld.ctype.contains('*')
                    || fld.name.ends_with("addr")
                    || fld.name.ends_with("ip")
                    || fld.name == "caller";
                let _ = if hex {
                    write!(out, "0x{:x}", v as u64 & mask(fld.size))
                } else if fld.signed {
                    write!(out, "{v}")
                } else {
                    write!(out, "{}", v as u64 & mask(fld.size))
                };
            }
            Layout::Array | Layout::DataLoc => {
                let b = slot.bytes(p, e).unwrap_or_default();
                if fld.ctype.ends_with("char") {
                    out.push_str(&String::from_utf8_lossy(&b[..memchr0(b)]));
                } else {
                    for x in b {
                        let _ = write!(out, "{x:02x}");
                    }
                }
            }
        }
    }
}

fn mask(size: usize) -> u64 {
    match size {
        1 => 0xff,
        2 => 0xffff,
        4 => 0xffff_ffff,
        _ => u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_states_as_the_kernel_prints_them() {
        assert_eq!(task_state(0), "R");
        assert_eq!(task_state(0x100), "R+");
        assert_eq!(task_state(1), "S");
        assert_eq!(task_state(2), "D");
        assert_eq!(task_state(0x20), "Z");
        assert_eq!(task_state(0x80), "I");
        assert_eq!(task_state(0x101), "S+");
    }

    /// What the per-event path gives for a string field: made UTF-8 in
    /// the payload by `sanitize`, then read by `Slot::str`.
    fn per_event(slot: &Slot, p: &[u8]) -> String {
        let mut q = p.to_vec();
        sanitize(&[*slot], &mut q, Endian::Little);
        slot.str(&q, Endian::Little).to_string()
    }

    proptest::proptest! {
        /// The cache gives what the per-event path gives, for `char[16]`
        /// and `__data_loc` comms of random bytes (NULs, bad UTF-8, fields
        /// past the payload, longer than 16), hit or miss.
        #[test]
        fn the_comm_cache_gives_what_the_per_event_path_gives(
            events in proptest::collection::vec((
                proptest::collection::vec(
                    proptest::sample::select(vec![0u8, b'a', b'b', 0xc3, 0xa9, 0xff, b' ']),
                    0..24,
                ),
                proptest::bool::ANY,
                0usize..40,
            ), 1..200),
        ) {
            let mut cache = CommCache::default();
            for (comm, data_loc, tail) in events {
                let (slot, p) = if data_loc {
                    let mut p = vec![0u8; 8];
                    let loc = 8 | (comm.len() as u32) << 16;
                    p[4..8].copy_from_slice(&loc.to_le_bytes());
                    p.extend(&comm);
                    let slot = Slot { offset: 4, size: 4, signed: false, layout: Layout::DataLoc };
                    (slot, p)
                } else {
                    let mut p = vec![0u8; 4];
                    p.extend(&comm);
                    let slot = Slot { offset: 4, size: COMM_LEN, signed: false, layout: Layout::Array };
                    (slot, p)
                };
                // The payload may end early (`tail` cuts it); what follows
                // in memory is junk the cache must not read as the comm.
                let cut = p.len().saturating_sub(tail % 8);
                let mut ext = p[..cut].to_vec();
                ext.extend([b'j'; 20]);
                let got = cache.get(&slot, &ext[..cut], &ext, Endian::Little).to_string();
                proptest::prop_assert_eq!(got, per_event(&slot, &p[..cut]));
            }
        }
    }

    #[test]
    fn invalid_utf8_becomes_question_marks() {
        let mut b = *b"a\xffb\0";
        fix_utf8(&mut b[..3]);
        assert_eq!(&b, b"a?b\0");
    }
}
