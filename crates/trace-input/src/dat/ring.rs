//! The per-CPU ring-buffer pages of a trace.dat, streamed and merged in
//! time order.
//!
//! A page is a header (u64 timestamp, `commit` = bytes used with flag
//! bits 31 "events were lost before this page" and 30 "their count is
//! stored after the data") and events, each a u32 word of `type_len`
//! (5 bits) and `time_delta` (27 bits), then:
//!
//! | type_len | meaning | size |
//! |---|---|---|
//! | 0 | data, length in the next u32 (it counts itself) | 4 + length |
//! | 1–28 | data of type_len × 4 bytes | 4 + type_len × 4 |
//! | 29 | padding: delta 0 = rest of the page, else length in next u32 | 4 + length |
//! | 30 | time extend: delta += next u32 << 27 | 8 |
//! | 31 | absolute time stamp (low 59 bits) | 8 |
//!
//! Each CPU is one `CpuStream` reading a block of pages at a time
//! (with `pread`, or a decompressed chunk in a compressed v7 file, which
//! a worker thread may have decompressed ahead: `dat::ahead`);
//! [`super::merge`] merges them by each stream's next timestamp (ties go
//! to the lower CPU, as the kernel's own text output does).

use super::ahead::{Ahead, StopOnDrop};
use super::decode::{
    render_generic, sanitize, split_strings, typed, typed_body, CommCache, Decoder, Slot,
};
use super::merge::Heads;
use super::{read_chunk, ChunkBufs, DatError, DatInfo, Data};
use lever_trace::{Event, EventKind, Line, LineSource, Summary, TimeBase};
use std::collections::HashMap;
use std::io;

/// Pages read per block from an uncompressed file.
const BLOCK_PAGES: u64 = 64;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const TS_MSB: u64 = !((1u64 << 59) - 1);
/// Entries of the pid → comm cache.
const COMM_CACHE: usize = 256;

/// What every stream reads from.
struct Cx<'a> {
    info: &'a DatInfo,
    data: &'a Data,
    /// The decompression worker's queues, when there is one.
    ahead: Option<&'a Ahead>,
}

/// One CPU's pages.
struct CpuStream {
    cpu: u32,
    /// Its index among the streams (its queue in [`Ahead`]).
    idx: usize,
    /// Next unread file offset and end of this CPU's data.
    next_off: u64,
    end_off: u64,
    /// Compressed chunks left (compressed files only).
    chunks_left: Option<u32>,
    buf: Vec<u8>,
    /// Start of the current page in `buf`, of the next page.
    page: usize,
    next_page: usize,
    /// Current event and end of the current page's data.
    pos: usize,
    end: usize,
    ts: u64,
    /// Events lost before the current page: `Some(None)` = count unknown.
    lost: Option<Option<u64>>,
    /// The next data event: its payload range in `buf`.
    payload: (usize, usize),
    /// A compressed chunk's bytes (reused).
    src: Vec<u8>,
    /// zstd context, reused for every chunk of this CPU.
    zctx: Option<zstd::bulk::Decompressor<'static>>,
}

/// An event's first word: `type_len` (5 bits) and `time_delta` (27),
/// in the bit order of the file's endianness.
#[inline]
fn event_header(e: super::Endian, w: &[u8]) -> (u32, u64) {
    let w = e.u32(w.try_into().unwrap_or_default());
    match e {
        super::Endian::Little => (w & 0x1f, (w >> 5) as u64),
        super::Endian::Big => (w >> 27, (w & 0x07ff_ffff) as u64),
    }
}

/// A problem in the trace data that skips a page, not the file.
struct Skip(&'static str);

impl CpuStream {
    /// Fill `buf` with the next block of pages; false at the end.
    fn load_block(&mut self, cx: &Cx) -> Result<bool, DatError> {
        let (info, data) = (cx.info, cx.data);
        let ps = info.page_size as u64;
        self.page = 0;
        self.next_page = 0;
        match (&mut self.chunks_left, info.codec, cx.ahead) {
            // Decompressed by the worker (which counts the chunks).
            (Some(_), Some(_), Some(ahead)) => match ahead.next(self.idx, &mut self.buf)? {
                Some(next) => {
                    self.next_off = next;
                    Ok(true)
                }
                None => Ok(false),
            },
            (Some(0), _, _) => Ok(false),
            (Some(n), Some(codec), _) => {
                *n -= 1;
                // The chunk count ends the data; the recorded size leaves
                // out the chunk headers, so only the file bounds them.
                let mut bufs = ChunkBufs {
                    src: std::mem::take(&mut self.src),
                    out: std::mem::take(&mut self.buf),
                };
                let res = read_chunk(
                    data,
                    self.next_off,
                    codec,
                    info.endian,
                    &mut self.zctx,
                    &mut bufs,
                );
                (self.src, self.buf) = (bufs.src, bufs.out);
                self.next_off = res?;
                Ok(true)
            }
            _ => {
                let left = self.end_off.saturating_sub(self.next_off);
                if left < ps {
                    return Ok(false);
                }
                let n = (left / ps).min(BLOCK_PAGES) * ps;
                data.read_into(self.next_off, n, &mut self.buf, "CPU data")?;
                self.next_off += n;
                Ok(true)
            }
        }
    }

    /// Move to the next page with data; false at the end.
    fn next_page(&mut self, cx: &Cx) -> Result<Result<bool, Skip>, DatError> {
        let info = cx.info;
        let ps = info.page_size as usize;
        if self.next_page + ps > self.buf.len() {
            if !self.load_block(cx)? {
                return Ok(Ok(false));
            }
            if self.buf.len() < ps {
                return Ok(Ok(false));
            }
        }
        self.page = self.next_page;
        self.next_page += ps;
        let ph = &info.page_header;
        let e = info.endian;
        let p = &self.buf[self.page..self.page + ps];
        let (Some(ts), Some(commit)) = (
            e.uint(p, ph.ts_offset, 8),
            e.uint(p, ph.commit_offset, ph.commit_size),
        ) else {
            return Ok(Err(Skip("page header out of the page")));
        };
        let size = (commit & (MISSED_STORED - 1)) as usize;
        self.ts = ts;
        self.pos = self.page + ph.data_offset;
        self.end = self.pos;
        if ph.data_offset + size > ps {
            return Ok(Err(Skip("page commit larger than the page")));
        }
        self.end = self.pos + size;
        if commit & MISSED_EVENTS != 0 {
            let stored = (commit & MISSED_STORED != 0)
                .then(|| e.uint(p, ph.data_offset + size, ph.commit_size))
                .flatten();
            self.lost = Some(stored);
        }
        Ok(Ok(true))
    }

    /// Advance to the next data event; its time is `self.ts`, its payload
    /// `self.payload`. False at the end of this CPU.
    #[inline]
    fn advance(&mut self, cx: &Cx, sum: &mut Summary, no: u64) -> Result<bool, DatError> {
        // Most events: data of 1–28 words inside the current page (what
        // `advance_slow` does for them, without its other cases).
        if let Some(w) = self
            .buf
            .get(self.pos..self.pos + 4)
            .filter(|_| self.pos + 4 <= self.end)
        {
            let (type_len, delta) = event_header(cx.info.endian, w);
            let len = 4 + type_len as usize * 4;
            if (1..=28).contains(&type_len) && self.pos + len <= self.end {
                let at = self.pos;
                self.pos = at + len;
                self.ts = self.ts.wrapping_add(delta);
                self.payload = (at + 4, at + len);
                return Ok(true);
            }
        }
        self.advance_slow(cx, sum, no)
    }

    /// [`CpuStream::advance`] for every case: page ends, time extends and
    /// stamps, padding, length words, damaged events.
    #[inline(never)]
    fn advance_slow(&mut self, cx: &Cx, sum: &mut Summary, no: u64) -> Result<bool, DatError> {
        let e = cx.info.endian;
        'page: loop {
            if self.pos + 4 > self.end {
                match self.next_page(cx)? {
                    Ok(true) => continue,
                    Ok(false) => return Ok(false),
                    Err(Skip(why)) => {
                        malformed(sum, no, why, self.cpu);
                        self.pos = self.end;
                        continue;
                    }
                }
            }
            let (type_len, delta) = event_header(e, &self.buf[self.pos..self.pos + 4]);
            let arg = || {
                self.buf
                    .get(self.pos + 4..self.pos + 8)
                    .map(|b| e.u32(b.try_into().unwrap_or_default()) as u64)
            };
            let (len, data_at) = match type_len {
                29 if delta == 0 => {
                    self.pos = self.end;
                    continue;
                }
                29 => (arg().map(|l| 4 + l as usize), None),
                30 => {
                    let Some(hi) = arg() else {
                        self.bad_event(sum, no);
                        continue 'page;
                    };
                    self.ts = self.ts.wrapping_add(hi << 27 | delta);
                    (Some(8), None)
                }
                31 => {
                    let Some(hi) = arg() else {
                        self.bad_event(sum, no);
                        continue 'page;
                    };
                    self.ts = (hi << 27 | delta) | (self.ts & TS_MSB);
                    (Some(8), None)
                }
                0 => (arg().map(|l| 4 + l as usize), Some(8)),
                n => (Some(4 + n as usize * 4), Some(4)),
            };
            let Some(len) = len.filter(|&l| l >= 4 && self.pos + l <= self.end) else {
                self.bad_event(sum, no);
                continue 'page;
            };
            let at = self.pos;
            self.pos = at + ((len + 3) & !3);
            if let Some(d) = data_at {
                if len < d {
                    self.bad_event(sum, no);
                    continue 'page;
                }
                self.ts = self.ts.wrapping_add(delta);
                self.payload = (at + d, at + len);
                return Ok(true);
            }
        }
    }

    /// An event that does not fit its page: count it, skip the page.
    fn bad_event(&mut self, sum: &mut Summary, no: u64) {
        malformed(sum, no, "event header runs past the page's data", self.cpu);
        self.pos = self.end;
    }
}

/// What decoding one event type needs.
struct Typed<'i> {
    format: &'i super::format::Format,
    /// The name the text output gives it ([`Decoder::text_name`]).
    name: &'i str,
    decoder: Decoder,
    /// Its string fields, made UTF-8 before typing...
    strings: Vec<Slot>,
    /// ...but its comm fields, which come from a [`CommCache`] (made
    /// UTF-8 in the payload only for an event that does not type).
    comm_strings: Vec<Slot>,
    /// Those comm fields, as [`typed`] takes them.
    comms: [Option<Slot>; 2],
    /// Offset and size of `common_pid`.
    pid: Option<(usize, usize)>,
    /// Offsets of `common_flags` and `common_preempt_count` (the text's
    /// irq-flags column, e.g. `d.s4.`).
    flags: Option<(usize, usize)>,
}

/// The irq-flags column of each (`common_flags`, `common_preempt_count`)
/// pair, made once: a table lookup per event instead of building and
/// checking five bytes.
struct FlagTexts {
    /// Per pair: its index in `texts`; 0 = not made yet (an array, so
    /// a u16 index needs no bounds check).
    slot: Box<[u32; 1 << 16]>,
    texts: Vec<Box<str>>,
}

impl Default for FlagTexts {
    fn default() -> Self {
        FlagTexts {
            slot: vec![0u32; 1 << 16]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| unreachable!("1 << 16 entries")),
            texts: vec!["".into()],
        }
    }
}

impl FlagTexts {
    #[inline(always)]
    fn get(&mut self, flags: u8, preempt: u8) -> &str {
        let k = u16::from_be_bytes([flags, preempt]);
        let mut i = self.slot[k as usize] as usize;
        if i == 0 {
            i = self.make(k as usize);
        }
        self.texts.get(i).map_or("", |t| t)
    }

    #[cold]
    #[inline(never)]
    fn make(&mut self, k: usize) -> usize {
        let col = irq_flags((k >> 8) as u8, k as u8);
        self.texts
            .push(col.iter().map(|&b| b as char).collect::<String>().into());
        self.slot[k] = (self.texts.len() - 1) as u32;
        self.texts.len() - 1
    }
}

/// The kernel's irq-flags column (`trace_print_lat_fmt`) from an event's
/// `common_flags` and `common_preempt_count`: irqs off (`d`), need
/// resched (`N`, `n`, `p`, `L`, `l`, `B`, `b`), hard/soft irq or NMI
/// (`Z`, `z`, `H`, `h`, `s`, `b` for bottom halves off), preempt depth
/// and migrate-disable depth in hex.
#[inline]
pub(crate) fn irq_flags(flags: u8, preempt: u8) -> [u8; 5] {
    const IRQS_OFF: u8 = 0x01;
    const RESCHED_LAZY: u8 = 0x02;
    const RESCHED: u8 = 0x04;
    const HARDIRQ: u8 = 0x08;
    const SOFTIRQ: u8 = 0x10;
    const PREEMPT_RESCHED: u8 = 0x20;
    const NMI: u8 = 0x40;
    const BH_OFF: u8 = 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let irqs = if flags & IRQS_OFF != 0 { b'd' } else { b'.' };
    let resched = match flags & (RESCHED | RESCHED_LAZY | PREEMPT_RESCHED) {
        0x26 => b'B',
        0x24 => b'N',
        0x22 => b'L',
        0x06 => b'b',
        0x04 => b'n',
        0x20 => b'p',
        0x02 => b'l',
        _ => b'.',
    };
    let (nmi, hard, soft) = (flags & NMI != 0, flags & HARDIRQ != 0, flags & SOFTIRQ != 0);
    let irq = match (nmi, hard, soft) {
        (true, true, _) => b'Z',
        (true, false, _) => b'z',
        (false, true, true) => b'H',
        (false, true, false) => b'h',
        (false, false, true) => b's',
        _ if flags & BH_OFF != 0 => b'b',
        _ => b'.',
    };
    let depth = |n: u8| if n == 0 { b'.' } else { HEX[n as usize] };
    [
        irqs,
        resched,
        irq,
        depth(preempt & 0xf),
        depth(preempt >> 4),
    ]
}

/// A multiplicative hash for pids: SipHash's DoS resistance buys nothing
/// against a trace file, and one multiply is cheaper per event.
#[derive(Default, Clone, Copy)]
struct PidHash;

impl std::hash::BuildHasher for PidHash {
    type Hasher = PidHasher;
    fn build_hasher(&self) -> PidHasher {
        PidHasher(0)
    }
}

struct PidHasher(u64);

impl std::hash::Hasher for PidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_i32(&mut self, v: i32) {
        self.0 = (v as u32 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cold]
#[inline(never)]
fn cpu_out_of_range(sum: &mut Summary, no: u64, cpu: u32) {
    malformed(sum, no, "CPU number out of the trace's CPUs", cpu);
}

fn malformed(sum: &mut Summary, no: u64, why: &'static str, cpu: u32) {
    sum.note(no, &format!("cpu {cpu}"), &Line::Malformed(why));
}

/// A trace.dat as a [`LineSource`]: its events, merged across CPUs in
/// time order, as typed [`Line::Event`]s (and [`Line::Lost`] where the
/// kernel flagged lost events).
pub struct DatReader {
    info: DatInfo,
    data: Data,
}

impl DatReader {
    /// Read the metadata of `data`.
    pub fn new(data: Data) -> Result<DatReader, DatError> {
        Ok(DatReader {
            info: DatInfo::read(&data)?,
            data,
        })
    }

    /// The metadata.
    pub fn info(&self) -> &DatInfo {
        &self.info
    }

    /// Walk every event; metadata or I/O errors in the trace data stop it
    /// (damaged pages are counted as malformed and skipped).
    pub fn walk<F, P>(self, f: F, progress: P) -> Result<Summary, DatError>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        self.walk_threaded(1, f, progress)
    }

    /// [`DatReader::walk`]; with `threads` > 1, the chunks of a compressed
    /// file are decompressed ahead on one worker thread (`Ahead`). The
    /// events, errors and progress calls are the same, in the same order.
    pub fn walk_threaded<F, P>(self, threads: usize, f: F, progress: P) -> Result<Summary, DatError>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        let streams = self.streams()?;
        let (info, data) = (&self.info, &self.data);
        match info.codec {
            Some(codec) if threads > 1 && !streams.is_empty() => {
                let ahead = Ahead::new(
                    streams
                        .iter()
                        .map(|s| (s.next_off, s.chunks_left.unwrap_or(0))),
                );
                std::thread::scope(|sc| {
                    sc.spawn(|| ahead.work(info, data, codec));
                    let _stop = StopOnDrop(&ahead);
                    self.merge(streams, Some(&ahead), f, progress)
                })
            }
            _ => self.merge(streams, None, f, progress),
        }
    }

    /// One stream per CPU, at the start of its data (after the chunk
    /// count, in a compressed file).
    fn streams(&self) -> Result<Vec<CpuStream>, DatError> {
        let (info, data) = (&self.info, &self.data);
        let mut streams = Vec::with_capacity(info.cpus.len());
        for (idx, c) in info.cpus.iter().enumerate() {
            let mut s = CpuStream {
                cpu: c.cpu,
                idx,
                next_off: c.offset,
                end_off: c.offset + c.size,
                chunks_left: None,
                buf: Vec::new(),
                src: Vec::new(),
                page: 0,
                next_page: 0,
                pos: 0,
                end: 0,
                ts: 0,
                lost: None,
                payload: (0, 0),
                zctx: None,
            };
            if info.codec.is_some() && c.size > 0 {
                let mut cur = super::FileCursor {
                    data,
                    off: c.offset,
                    endian: info.endian,
                };
                s.chunks_left = Some(cur.u32("the chunk count")?);
                s.next_off = cur.off;
            }
            streams.push(s);
        }
        Ok(streams)
    }

    /// Decode and merge the streams (their blocks read here, or taken
    /// from `ahead`).
    fn merge<F, P>(
        &self,
        mut streams: Vec<CpuStream>,
        ahead: Option<&Ahead>,
        mut f: F,
        mut progress: P,
    ) -> Result<Summary, DatError>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        let info = &self.info;
        let data = &self.data;
        let cx = Cx { info, data, ahead };
        let mut sum = Summary {
            bytes: data.len(),
            ..Summary::default()
        };
        for &(cpu, events) in &info.overruns {
            sum.overwritten(cpu, events);
        }
        // Formats by common_type (a table: one index per event, no hash),
        // each with its decoder and where common_pid is.
        let max_id = info
            .formats
            .iter()
            .map(|f| f.id as usize)
            .max()
            .unwrap_or(0);
        let mut index = vec![u32::MAX; max_id + 1];
        let mut typed_by: Vec<Typed> = Vec::with_capacity(info.formats.len());
        for fmt in &info.formats {
            index[fmt.id as usize] = typed_by.len() as u32;
            let decoder = Decoder::for_format(fmt);
            let (comm_strings, strings) = split_strings(fmt, &decoder);
            typed_by.push(Typed {
                format: fmt,
                name: decoder.text_name(fmt),
                comms: decoder.comm_fields(),
                decoder,
                strings,
                comm_strings,
                pid: fmt.field("common_pid").map(|f| (f.offset, f.size)),
                flags: fmt
                    .field("common_flags")
                    .zip(fmt.field("common_preempt_count"))
                    .filter(|(f, p)| f.size == 1 && p.size == 1)
                    .map(|(f, p)| (f.offset, p.offset)),
            });
        }
        // pid → comm with a cheap hash (pids are small integers).
        let comms: HashMap<i32, &str, PidHash> =
            info.comms.iter().map(|(p, c)| (*p, c.as_str())).collect();
        let mut comm_cache = [(i32::MIN, ""); COMM_CACHE];
        // The comm fields of sched events: one cache per position (prev
        // and next of a switch), so the two of one event never evict
        // each other.
        let mut field_comms = [CommCache::default(), CommCache::default()];
        // The trace's CPUs: the file's CPU count (and any CPU it has data
        // for), capped as the text parser caps CPU numbers.
        let ncpus = info
            .cpus
            .iter()
            .map(|c| c.cpu.saturating_add(1))
            .max()
            .unwrap_or(0)
            .max(info.cpus.len() as u32)
            .min(lever_trace::MAX_CPUS);
        let mut heads = Heads::new(streams.len());
        for s in streams.iter_mut() {
            if s.advance(&cx, &mut sum, 0)? {
                heads.push((s.ts, s.cpu, s.idx));
            }
        }
        let mut body = String::new();
        let mut flag_texts = FlagTexts::default();
        let mut no = 0u64;
        let mut next_progress = 4u64 << 20;
        let mut done_bytes = 0u64;
        let mut next = heads.pop();
        while let Some((ts, cpu, i)) = next.take() {
            let s = &mut streams[i];
            if let Some(lost) = s.lost.take() {
                no += 1;
                let line = Line::Lost { cpu, events: lost };
                sum.note(no, "", &line);
                f(no, &line);
            }
            no += 1;
            let (a, b) = s.payload;
            let payload = &mut s.buf[a..b];
            let e = info.endian;
            let ty = e.uint(payload, 0, 2).unwrap_or(u64::MAX) as u16;
            match index
                .get(ty as usize)
                .and_then(|&i| typed_by.get(i as usize))
            {
                None => malformed(&mut sum, no, "event type not in the file's formats", cpu),
                Some(t) => {
                    let (fmt, dec) = (t.format, &t.decoder);
                    if !t.strings.is_empty() {
                        sanitize(&t.strings, payload, e);
                    }
                    let ext: &[u8] = &s.buf[a..];
                    let p = &ext[..b - a];
                    let pid = t
                        .pid
                        .and_then(|(off, size)| e.uint(p, off, size))
                        .map_or(-1, |v| v as i32);
                    let comm = match pid {
                        0 => "<idle>",
                        _ => {
                            // A few tasks make most events: a direct-mapped
                            // cache in front of the hash map.
                            let slot = &mut comm_cache[pid as u32 as usize % COMM_CACHE];
                            if slot.0 != pid {
                                *slot = (pid, comms.get(&pid).copied().unwrap_or("<...>"));
                            }
                            slot.1
                        }
                    };
                    let [c0, c1] = &mut field_comms;
                    let fc = [
                        t.comms[0].map(|c| c0.get(&c, p, ext, e)),
                        t.comms[1].map(|c| c1.get(&c, p, ext, e)),
                    ];
                    let kind = typed(dec, p, e, fc);
                    let (kind, body) = match kind {
                        Some(EventKind::Other) | None => {
                            if kind.is_none() && !t.comm_strings.is_empty() {
                                // A short sched event: rendered from its
                                // bytes with the comms made UTF-8, as the
                                // per-event path did before the cache.
                                let mut owned = p.to_vec();
                                sanitize(&t.comm_strings, &mut owned, e);
                                render_generic(fmt, &owned, e, &mut body);
                            } else {
                                render_generic(fmt, p, e, &mut body);
                            }
                            // Events the text parser types from their
                            // `field=value` body (sched_stat_runtime,
                            // raw_syscalls) get the same kind here.
                            (EventKind::parse(t.name, body.as_str()), body.as_str())
                        }
                        Some(k) => (k, typed_body(dec, p, e)),
                    };
                    let fl = t
                        .flags
                        .and_then(|(f, pc)| Some(flag_texts.get(*p.get(f)?, *p.get(pc)?)));
                    let line = Line::Event(Event {
                        comm,
                        pid,
                        tgid: None,
                        cpu,
                        flags: fl,
                        ts_ns: ts,
                        time_base: TimeBase::Clock,
                        name: t.name,
                        body,
                        kind,
                    });
                    // Checked where it lies: the event is not moved again.
                    if matches!(&line, Line::Event(ev) if ev.kind.cpus_below(ncpus)) {
                        sum.note(no, "", &line);
                        f(no, &line);
                    } else {
                        cpu_out_of_range(&mut sum, no, cpu);
                    }
                }
            }
            let before = s.next_off;
            next = if s.advance(&cx, &mut sum, no)? {
                Some(heads.push_pop((s.ts, s.cpu, i)))
            } else {
                heads.pop()
            };
            done_bytes += s.next_off - before;
            if done_bytes >= next_progress {
                progress(done_bytes);
                next_progress = done_bytes + (4 << 20);
            }
        }
        Ok(sum)
    }
}

impl LineSource for DatReader {
    fn for_each_line<F, P>(self, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        self.for_each_line_threaded(1, f, progress)
    }

    fn for_each_line_threaded<F, P>(self, threads: usize, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        self.walk_threaded(threads, f, progress).map_err(|e| {
            let kind = match &e {
                DatError::Io { source, .. } => source.kind(),
                DatError::Bad { .. } => io::ErrorKind::InvalidData,
            };
            io::Error::new(kind, e)
        })
    }
}
