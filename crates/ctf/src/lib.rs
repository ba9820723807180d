//! A native reader of CTF 1.8 traces (Common Trace Format): what
//! LTTng-modules, LTTng-UST, barectf and perf's CTF writer produce, with
//! no C library.
//!
//! A trace is a directory: a `metadata` file ([`metadata`]: TSDL text,
//! maybe cut into packets) and one file per stream (per CPU for LTTng),
//! each a run of packets:
//!
//! | part | what | declared by |
//! |---|---|---|
//! | packet header | magic `0xC1FC1FC1`, trace UUID, stream id | `trace { packet.header := ... }` |
//! | packet context | begin/end time, content and packet size in bits, discarded-event count, CPU | `stream { packet.context := ... }` |
//! | events, up to the content size | event header (id, time), stream context, event context, fields | `stream { event.header/event.context }`, `event { context/fields }` |
//!
//! LTTng's compact event header is a 5-bit id and a 27-bit time (the low
//! bits of the clock: an event whose low bits are smaller than the
//! clock's wrapped, see [`decode`]); id 31 means an extended header
//! follows with a 32-bit id and a 64-bit time. The large header is a
//! 16-bit id and 32-bit time (65535 extended). Every stream's clock
//! starts each packet at its `timestamp_begin`.
//!
//! [`Trace::events`] merges the streams by time (a heap over one cursor
//! per stream) and hands out each [`Event`] in turn; packets found
//! through `index/*.idx` where LTTng wrote them, discarded events
//! counted from the packet contexts ([`Events::discarded`]).
//! Malformed input gives an error with the file and byte offset; decoding
//! is bounded by the bytes there are.
//!
//! ```no_run
//! let trace = lever_ctf::Trace::open("/path/to/lttng/kernel".as_ref()).unwrap();
//! let mut events = trace.events();
//! while let Some(e) = events.next().unwrap() {
//!     println!("{} {} {:?}", e.timestamp_ns(), e.name(), e.field("prev_tid").and_then(|v| v.as_i64()));
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod decode;
pub mod metadata;
pub mod types;

use decode::{Decoder, Value};
use metadata::{EventClass, Metadata};
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use types::{Type, TypeKind};

/// Packet header magic.
pub const PACKET_MAGIC: u32 = 0xC1FC_1FC1;
/// Packet index file magic (`index/*.idx`, big endian).
pub const INDEX_MAGIC: u32 = 0xC1F1_DCC1;

/// A trace that does not read.
#[derive(Debug, thiserror::Error)]
pub enum CtfError {
    /// A file could not be opened or read.
    #[error("cannot {op} {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Not a CTF trace directory.
    #[error("{}: not a CTF trace: {why}", path.display())]
    NotCtf {
        /// The directory.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// The metadata's packets are malformed.
    #[error("{}: byte {offset}: {msg}", path.display())]
    MetadataPacket {
        /// The metadata file.
        path: PathBuf,
        /// Byte offset.
        offset: u64,
        /// What.
        msg: String,
    },
    /// The metadata text does not parse.
    #[error("{}:{line}: {msg}", path.display())]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// Line in the metadata text (0 when it concerns the whole).
        line: u32,
        /// What.
        msg: String,
    },
    /// A stream file is malformed.
    #[error("{}: byte {offset}: {msg}", path.display())]
    Stream {
        /// The stream file.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// What.
        msg: String,
    },
    /// A packet index file is malformed or disagrees with its stream.
    #[error("{}: byte {offset}: {msg}", path.display())]
    Index {
        /// The index file.
        path: PathBuf,
        /// Byte offset in the index file.
        offset: u64,
        /// What.
        msg: String,
    },
}

/// Bytes of a file: mapped, or read into memory (small files, tests).
enum Bytes {
    Mapped(lever_syscalls::MemoryMap, usize),
    Owned(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m, len) => &m.as_slice()[..*len],
            Bytes::Owned(v) => v,
        }
    }

    fn read(path: &Path) -> Result<Bytes, CtfError> {
        let io = |op, source| CtfError::Io {
            path: path.to_path_buf(),
            op,
            source,
        };
        let mut f = File::open(path).map_err(|e| io("open", e))?;
        let len = f.metadata().map_err(|e| io("stat", e))?.len();
        if len >= 1 << 20 {
            use std::os::fd::AsFd;
            if let Ok(m) = lever_syscalls::MemoryMap::file_read_only(f.as_fd(), len as usize) {
                return Ok(Bytes::Mapped(m, len as usize));
            }
        }
        let mut v = Vec::with_capacity(len as usize);
        f.read_to_end(&mut v).map_err(|e| io("read", e))?;
        Ok(Bytes::Owned(v))
    }
}

/// One entry of a packet index file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Byte offset of the packet in its stream file.
    pub offset: u64,
    /// Packet size in bits.
    pub packet_bits: u64,
    /// Content size in bits.
    pub content_bits: u64,
}

/// Read an LTTng packet index (`index/NAME.idx`): a big-endian header
/// (magic `0xC1F1DCC1`, major, minor, entry length) then one entry per
/// packet (offset, packet size, content size, begin, end, discarded,
/// stream id, ...: 64-bit each).
pub fn read_index(bytes: &[u8], path: &Path) -> Result<Vec<IndexEntry>, CtfError> {
    let bad = |offset: usize, msg: String| CtfError::Index {
        path: path.to_path_buf(),
        offset: offset as u64,
        msg,
    };
    let u32_at = |o: usize| u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_be_bytes(bytes[o..o + 8].try_into().unwrap());
    if bytes.len() < 16 {
        return Err(bad(
            0,
            format!("index header cut short ({} of 16 bytes)", bytes.len()),
        ));
    }
    if u32_at(0) != INDEX_MAGIC {
        return Err(bad(0, format!("bad index magic {:#010x}", u32_at(0))));
    }
    let entry_len = u32_at(12) as usize;
    if entry_len < 24 {
        return Err(bad(
            12,
            format!("index entry length {entry_len} bytes, below the 24 read"),
        ));
    }
    let mut out = Vec::new();
    let mut o = 16;
    while o + entry_len <= bytes.len() {
        out.push(IndexEntry {
            offset: u64_at(o),
            packet_bits: u64_at(o + 8),
            content_bits: u64_at(o + 16),
        });
        o += entry_len;
    }
    if o != bytes.len() {
        return Err(bad(
            o,
            format!(
                "index ends inside an entry ({} of {entry_len} bytes)",
                bytes.len() - o
            ),
        ));
    }
    Ok(out)
}

/// One stream file.
struct StreamFile {
    path: PathBuf,
    data: Bytes,
    index: Option<(PathBuf, Vec<IndexEntry>)>,
}

/// Events lost by the tracer (its buffer was full), from the packet
/// contexts' running `events_discarded` counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Discarded {
    /// The stream file.
    pub stream: PathBuf,
    /// The CPU of the stream's packets, when they say.
    pub cpu: Option<u64>,
    /// Events lost before the packet that reported them.
    pub events: u64,
    /// Time of that packet's beginning, ns from the clock's origin.
    pub at_ns: i64,
}

/// An opened trace: metadata parsed, stream files found.
pub struct Trace {
    dir: PathBuf,
    meta: Metadata,
    files: Vec<StreamFile>,
    /// Per stream class: event id → event class index.
    classes: Vec<HashMap<u64, usize>>,
    /// Clock of each stream class (index in `meta.clocks`).
    clock_of: Vec<Option<usize>>,
    /// Cycles → ns of each stream class's clock, offsets folded once.
    conv: Vec<ClockConv>,
    /// Per stream class: event id → class index + 1 for ids below
    /// [`DENSE_IDS`] (0: none), the map above for the rest.
    dense: Vec<Vec<u32>>,
    uuid: Option<[u8; 16]>,
}

/// Is `dir` a CTF trace (a directory with a `metadata` file)?
pub fn is_trace_dir(dir: &Path) -> bool {
    dir.join("metadata").is_file()
}

/// Find every CTF trace under `dir` (itself, or the LTTng session layout
/// `kernel/`, `ust/uid/1000/64-bit/`, ...), sorted by path.
pub fn find_traces(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        if is_trace_dir(&d) {
            out.push(d);
            continue;
        }
        if depth >= 8 {
            continue;
        }
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push((e.path(), depth + 1));
                }
            }
        }
    }
    out.sort();
    out
}

fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl Trace {
    /// Open the trace in `dir`: every regular file but `metadata` and
    /// hidden ones is a stream; `index/NAME.idx` is NAME's packet index.
    pub fn open(dir: &Path) -> Result<Trace, CtfError> {
        let md_path = dir.join("metadata");
        if !md_path.is_file() {
            return Err(CtfError::NotCtf {
                path: dir.to_path_buf(),
                why: "no `metadata` file".into(),
            });
        }
        let md = Bytes::read(&md_path)?;
        let rd = std::fs::read_dir(dir).map_err(|e| CtfError::Io {
            path: dir.to_path_buf(),
            op: "list",
            source: e,
        })?;
        let mut names: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                n != "metadata" && !n.starts_with('.')
            })
            .collect();
        names.sort();
        let mut files = Vec::new();
        for p in names {
            let data = Bytes::read(&p)?;
            let idx_path = dir.join("index").join(format!(
                "{}.idx",
                p.file_name().unwrap_or_default().to_string_lossy()
            ));
            let index = if idx_path.is_file() {
                let b = Bytes::read(&idx_path)?;
                Some((idx_path.clone(), read_index(b.as_slice(), &idx_path)?))
            } else {
                None
            };
            files.push(StreamFile {
                path: p,
                data,
                index,
            });
        }
        Trace::build(dir, md.as_slice(), &md_path, files)
    }

    /// A trace from bytes in memory: the metadata and the streams with
    /// their names (for tests and fuzzing).
    pub fn from_bytes(
        metadata: &[u8],
        streams: Vec<(PathBuf, Vec<u8>)>,
    ) -> Result<Trace, CtfError> {
        let files = streams
            .into_iter()
            .map(|(path, data)| StreamFile {
                path,
                data: Bytes::Owned(data),
                index: None,
            })
            .collect();
        Trace::build(Path::new("."), metadata, Path::new("metadata"), files)
    }

    fn build(
        dir: &Path,
        md: &[u8],
        md_path: &Path,
        files: Vec<StreamFile>,
    ) -> Result<Trace, CtfError> {
        let text = metadata::metadata_text(md, md_path)?;
        let meta = metadata::parse(&text, md_path)?;
        let mut classes = vec![HashMap::new(); meta.streams.len()];
        for (i, e) in meta.events.iter().enumerate() {
            let s = meta
                .streams
                .iter()
                .position(|s| s.id == e.stream_id)
                .unwrap_or(0);
            if classes[s].insert(e.id, i).is_some() {
                return Err(CtfError::Metadata {
                    path: md_path.to_path_buf(),
                    line: 0,
                    msg: format!("event id {} declared twice in stream {}", e.id, e.stream_id),
                });
            }
        }
        let clock_of: Vec<Option<usize>> = meta
            .streams
            .iter()
            .map(|s| {
                first_clock(&s.event_header)
                    .or_else(|| first_clock(&s.packet_context))
                    .and_then(|n| meta.clocks.iter().position(|c| c.name == n))
                    .or((meta.clocks.len() == 1).then_some(0))
            })
            .collect();
        let uuid = meta.uuid.as_deref().and_then(parse_uuid);
        let conv = clock_of
            .iter()
            .map(|k: &Option<usize>| match k {
                Some(k) => ClockConv::new(&meta.clocks[*k]),
                None => ClockConv {
                    base_ns: 0,
                    freq: 1_000_000_000,
                },
            })
            .collect();
        let dense = classes
            .iter()
            .map(|m: &HashMap<u64, usize>| {
                let mut v = vec![0u32; DENSE_IDS];
                for (&id, &i) in m {
                    if id < DENSE_IDS as u64 {
                        v[id as usize] = i as u32 + 1;
                    }
                }
                v
            })
            .collect();
        Ok(Trace {
            conv,
            dense,
            dir: dir.to_path_buf(),
            meta,
            files,
            classes,
            clock_of,
            uuid,
        })
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The parsed metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The stream files, in name order.
    pub fn stream_paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|f| f.path.as_path())
    }

    /// Total bytes of the stream files.
    pub fn stream_bytes(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.data.as_slice().len() as u64)
            .sum()
    }

    /// Walk the events of every stream, merged by time.
    pub fn events(&self) -> Events<'_> {
        let cursors = (0..self.files.len())
            .map(|i| Cursor::new(i, self.meta.registers))
            .collect();
        Events {
            trace: self,
            cursors,
            heap: BinaryHeap::new(),
            started: false,
            current: None,
            pending: None,
            discarded: Vec::new(),
            lost_packets: 0,
        }
    }
}

/// Event ids looked up in a table rather than a map.
const DENSE_IDS: usize = 1024;

/// A clock's cycles → ns from its origin, as
/// [`metadata::Clock::ns_from_origin`] with the offsets folded once.
#[derive(Debug, Clone, Copy)]
struct ClockConv {
    base_ns: i64,
    freq: u64,
}

impl ClockConv {
    fn new(c: &metadata::Clock) -> ClockConv {
        ClockConv {
            base_ns: c
                .ns_from_origin(0)
                .clamp(i64::MIN as i128, i64::MAX as i128) as i64,
            freq: c.freq_hz.max(1),
        }
    }

    #[inline(always)]
    fn ns(&self, cycles: u64) -> i64 {
        if self.freq == 1_000_000_000 {
            return self.base_ns.saturating_add_unsigned(cycles);
        }
        let v = (cycles as u128 * 1_000_000_000 / self.freq as u128).min(u64::MAX as u128) as u64;
        self.base_ns.saturating_add_unsigned(v)
    }
}

fn first_clock(t: &Type) -> Option<String> {
    match &t.kind {
        TypeKind::Int(i) => i.clock.clone(),
        TypeKind::Enum(e) => e.int.clock.clone(),
        TypeKind::Struct(fs) => fs.iter().find_map(|f| first_clock(&f.ty)),
        TypeKind::Variant(v) => v.options.iter().find_map(|f| first_clock(&f.ty)),
        _ => None,
    }
}

/// A top-level member of a decoded scope, by name.
fn member<'v>(ty: &Type, vals: &'v [Value], name: &str) -> Option<(usize, &'v [Value])> {
    let fields = ty.fields();
    let mut at = 1; // after the Struct slot
    for (i, f) in fields.iter().enumerate() {
        let w = vals.get(at)?.width();
        if f.name == name {
            return Some((i, &vals[at..at + w]));
        }
        at += w;
    }
    None
}

fn member_u64(ty: &Type, vals: &[Value], name: &str) -> Option<u64> {
    match member(ty, vals, name)?.1.first()? {
        Value::Unsigned(u) => Some(*u),
        Value::Signed(s) => Some(*s as u64),
        _ => None,
    }
}

/// Per-stream decoding state.
struct Cursor {
    file: usize,
    /// Next packet to open: byte offset in the file.
    next_packet: u64,
    /// Entry of the index the next packet is.
    next_index: usize,
    /// Current packet: byte range in the file, content end in bits.
    pkt_start: u64,
    pkt_len: u64,
    content_bits: u64,
    pos: u64,
    stream_class: usize,
    regs: Vec<i128>,
    clock: u64,
    packet_header: Vec<Value>,
    packet_context: Vec<Value>,
    header: Vec<Value>,
    stream_context: Vec<Value>,
    context: Vec<Value>,
    fields: Vec<Value>,
    /// The current event.
    class: usize,
    ts: u64,
    ts_ns: i64,
    cpu: Option<u64>,
    last_discarded: Option<u64>,
    last_seq: Option<u64>,
    packets: u64,
}

impl Cursor {
    fn new(file: usize, regs: usize) -> Cursor {
        Cursor {
            file,
            next_packet: 0,
            next_index: 0,
            pkt_start: 0,
            pkt_len: 0,
            content_bits: 0,
            pos: 0,
            stream_class: 0,
            regs: vec![0; regs],
            clock: 0,
            packet_header: Vec::new(),
            packet_context: Vec::new(),
            header: Vec::new(),
            stream_context: Vec::new(),
            context: Vec::new(),
            fields: Vec::new(),
            class: 0,
            ts: 0,
            ts_ns: 0,
            cpu: None,
            last_discarded: None,
            last_seq: None,
            packets: 0,
        }
    }
}

/// The events of a trace, merged by time across its streams: call
/// [`Events::next`] until it gives `None`.
pub struct Events<'t> {
    trace: &'t Trace,
    cursors: Vec<Cursor>,
    /// (-time in ns, -stream): the earliest next event on top.
    heap: BinaryHeap<(std::cmp::Reverse<i64>, std::cmp::Reverse<usize>)>,
    started: bool,
    current: Option<usize>,
    pending: Option<usize>,
    discarded: Vec<Discarded>,
    lost_packets: u64,
}

impl<'t> Events<'t> {
    /// Decode what the last [`Events::next`] consumed: every stream's
    /// first event at the start, else the next event of the stream the
    /// last one came from (held in `pending`, outside the heap).
    fn prime(&mut self) -> Result<(), CtfError> {
        if !self.started {
            self.started = true;
            for i in 0..self.cursors.len() {
                if self.advance(i)? {
                    let ns = self.ns(i);
                    self.heap
                        .push((std::cmp::Reverse(ns), std::cmp::Reverse(i)));
                }
            }
        } else if let Some(i) = self.current.take() {
            if self.advance(i)? {
                self.pending = Some(i);
            }
        }
        Ok(())
    }

    /// The time (ns from the origin) of the event [`Events::next`] will
    /// give, without taking it (to merge several traces).
    pub fn peek_ns(&mut self) -> Result<Option<i64>, CtfError> {
        self.prime()?;
        let top = self.heap.peek().map(|(std::cmp::Reverse(ns), _)| *ns);
        Ok(match (self.pending, top) {
            (Some(i), Some(t)) => Some(self.ns(i).min(t)),
            (Some(i), None) => Some(self.ns(i)),
            (None, t) => t,
        })
    }

    /// The next event in time order, `None` at the end.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Event<'_>>, CtfError> {
        self.prime()?;
        if let Some(i) = self.pending.take() {
            let key = (std::cmp::Reverse(self.ns(i)), std::cmp::Reverse(i));
            // Still the earliest (a run of one stream's events): no heap
            // traffic.
            if self.heap.peek().is_none_or(|top| key >= *top) {
                self.current = Some(i);
                return Ok(Some(self.event(i)));
            }
            self.heap.push(key);
        }
        let Some((_, std::cmp::Reverse(i))) = self.heap.pop() else {
            return Ok(None);
        };
        self.current = Some(i);
        Ok(Some(self.event(i)))
    }

    fn event(&self, i: usize) -> Event<'_> {
        let c = &self.cursors[i];
        let t = self.trace;
        Event {
            trace: t,
            class: &t.meta.events[c.class],
            cursor: c,
            packet: &t.files[c.file].data.as_slice()
                [c.pkt_start as usize..(c.pkt_start + c.pkt_len) as usize],
        }
    }

    /// Discarded events the packets read so far reported.
    pub fn discarded(&self) -> &[Discarded] {
        &self.discarded
    }

    /// Packets missing by their sequence numbers, so far.
    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }

    fn ns(&self, i: usize) -> i64 {
        self.cursors[i].ts_ns
    }

    /// Decode the next event of stream `i`, opening packets as needed.
    fn advance(&mut self, i: usize) -> Result<bool, CtfError> {
        let t = self.trace;
        let file = &t.files[self.cursors[i].file];
        let data = file.data.as_slice();
        loop {
            let c = &mut self.cursors[i];
            if c.pos < c.content_bits {
                let pkt = &data[c.pkt_start as usize..(c.pkt_start + c.pkt_len) as usize];
                decode_event(t, c, pkt).map_err(|e| CtfError::Stream {
                    path: file.path.clone(),
                    offset: c.pkt_start + e.bit / 8,
                    msg: e.msg,
                })?;
                return Ok(true);
            }
            if !self.open_packet(i)? {
                return Ok(false);
            }
        }
    }

    fn open_packet(&mut self, i: usize) -> Result<bool, CtfError> {
        let t = self.trace;
        let c = &mut self.cursors[i];
        let file = &t.files[c.file];
        let data = file.data.as_slice();
        let mut expected: Option<IndexEntry> = None;
        if let Some((_, idx)) = &file.index {
            if let Some(e) = idx.get(c.next_index) {
                expected = Some(*e);
                c.next_packet = e.offset;
            }
            c.next_index += 1;
        }
        let off = c.next_packet;
        if off >= data.len() as u64 {
            if let (Some(e), Some((ipath, _))) = (expected, &file.index) {
                return Err(CtfError::Index {
                    path: ipath.clone(),
                    offset: 16,
                    msg: format!(
                        "packet at byte {} is past the stream's end ({} bytes)",
                        e.offset,
                        data.len()
                    ),
                });
            }
            return Ok(false);
        }
        let bad = |offset: u64, msg: String| CtfError::Stream {
            path: file.path.clone(),
            offset,
            msg,
        };
        let rest = &data[off as usize..];
        c.pkt_start = off;
        c.pos = 0;
        let mut event_id = None;
        // The packet header and context.
        let mut d = Decoder {
            buf: rest,
            end_bits: (rest.len() as u64).saturating_mul(8),
            pos: 0,
            regs: &mut c.regs,
            clock: &mut c.clock,
            event_id: &mut event_id,
        };
        let wrap = |e: decode::DecodeError| bad(off + e.bit / 8, e.msg);
        c.packet_header.clear();
        d.value(&t.meta.packet_header, &mut c.packet_header)
            .map_err(wrap)?;
        let ph = &t.meta.packet_header;
        if let Some(m) = member_u64(ph, &c.packet_header, "magic") {
            if m != PACKET_MAGIC as u64 {
                return Err(bad(
                    off,
                    format!("bad packet magic {m:#010x} (expected 0xc1fc1fc1)"),
                ));
            }
        }
        if let (Some(want), Some((_, vals))) = (t.uuid, member(ph, &c.packet_header, "uuid")) {
            let got: Vec<u8> = vals
                .iter()
                .skip(1)
                .filter_map(|v| match v {
                    Value::Unsigned(u) => Some(*u as u8),
                    _ => None,
                })
                .collect();
            if got.len() == 16 && got != want {
                return Err(bad(
                    off,
                    "packet UUID is not the metadata's trace UUID".into(),
                ));
            }
        }
        let sid = member_u64(ph, &c.packet_header, "stream_id");
        let sc = match sid {
            Some(id) => t
                .meta
                .streams
                .iter()
                .position(|s| s.id == id)
                .ok_or_else(|| {
                    bad(
                        off,
                        format!("packet of stream class {id}, which the metadata does not declare"),
                    )
                })?,
            None => 0,
        };
        if c.packets > 0 && sc != c.stream_class {
            return Err(bad(
                off,
                "stream class changes between packets of one file".into(),
            ));
        }
        c.stream_class = sc;
        let pc_ty = &t.meta.streams[sc].packet_context;
        c.packet_context.clear();
        d.value(pc_ty, &mut c.packet_context).map_err(wrap)?;
        let after_context = d.pos;
        let pc = &c.packet_context;
        let rest_bits = (rest.len() as u64).saturating_mul(8);
        let packet_bits = member_u64(pc_ty, pc, "packet_size");
        let content_bits = member_u64(pc_ty, pc, "content_size");
        let packet_bits = packet_bits.or(content_bits).unwrap_or(rest_bits);
        let content_bits = content_bits.unwrap_or(packet_bits);
        if packet_bits % 8 != 0 || packet_bits == 0 || packet_bits > rest_bits {
            return Err(bad(
                off,
                format!("packet size {packet_bits} bits: not whole bytes, or past the file's end ({rest_bits} bits left)"),
            ));
        }
        if content_bits > packet_bits || content_bits < after_context {
            return Err(bad(
                off,
                format!("content size {content_bits} bits outside the header ({after_context} bits) .. packet size ({packet_bits} bits)"),
            ));
        }
        if let (Some(e), Some((ipath, _))) = (expected, &file.index) {
            if e.packet_bits != packet_bits || e.content_bits != content_bits {
                return Err(CtfError::Index {
                    path: ipath.clone(),
                    offset: 16,
                    msg: format!(
                        "packet at byte {off}: index says {}/{} content/packet bits, the packet {content_bits}/{packet_bits}",
                        e.content_bits, e.packet_bits
                    ),
                });
            }
        }
        c.pkt_len = packet_bits / 8;
        c.content_bits = content_bits;
        c.pos = after_context;
        c.next_packet = off + c.pkt_len;
        c.packets += 1;
        c.cpu = member_u64(pc_ty, pc, "cpu_id");
        if let Some(n) = member_u64(pc_ty, pc, "events_discarded") {
            let prev = c.last_discarded.unwrap_or(0);
            if n > prev {
                let at_ns = t.conv[sc].ns(c.clock);
                self.discarded.push(Discarded {
                    stream: file.path.clone(),
                    cpu: c.cpu,
                    events: n - prev,
                    at_ns,
                });
            }
            c.last_discarded = Some(n);
        }
        if let Some(s) = member_u64(pc_ty, pc, "packet_seq_num") {
            if let Some(p) = c.last_seq {
                self.lost_packets += s.saturating_sub(p + 1);
            }
            c.last_seq = Some(s);
        }
        Ok(true)
    }
}

fn decode_event(t: &Trace, c: &mut Cursor, pkt: &[u8]) -> Result<(), decode::DecodeError> {
    let sc = &t.meta.streams[c.stream_class];
    let start = c.pos;
    let mut event_id = None;
    let mut d = Decoder {
        buf: pkt,
        end_bits: c.content_bits,
        pos: c.pos,
        regs: &mut c.regs,
        clock: &mut c.clock,
        event_id: &mut event_id,
    };
    c.header.clear();
    d.value(&sc.event_header, &mut c.header)?;
    let event_id = *d.event_id;
    let classes = &t.classes[c.stream_class];
    let class = match event_id {
        Some(id) if id < DENSE_IDS as u64 && t.dense[c.stream_class][id as usize] != 0 => {
            t.dense[c.stream_class][id as usize] as usize - 1
        }
        Some(id) => *classes.get(&id).ok_or_else(|| decode::DecodeError {
            bit: start,
            msg: format!("event id {id} is not declared in stream class {}", sc.id),
        })?,
        None if classes.len() == 1 => *classes.values().next().unwrap_or(&0),
        None => {
            return Err(decode::DecodeError {
                bit: start,
                msg: "event header gives no id and the stream has several event classes".into(),
            })
        }
    };
    c.stream_context.clear();
    d.value(&sc.event_context, &mut c.stream_context)?;
    let ec = &t.meta.events[class];
    c.context.clear();
    d.value(&ec.context, &mut c.context)?;
    c.fields.clear();
    d.value(&ec.fields, &mut c.fields)?;
    if d.pos == start {
        return Err(decode::DecodeError {
            bit: start,
            msg: "event of zero bits (it would repeat forever)".into(),
        });
    }
    c.pos = d.pos;
    c.class = class;
    c.ts = c.clock;
    c.ts_ns = t.conv[c.stream_class].ns(c.clock);
    Ok(())
}

/// One event, borrowed from the reader until the next call to
/// [`Events::next`].
pub struct Event<'a> {
    trace: &'a Trace,
    class: &'a EventClass,
    cursor: &'a Cursor,
    packet: &'a [u8],
}

impl<'a> Event<'a> {
    /// The event's name (`sched_switch`, `lttng_ust_cyg_profile:func_entry`).
    pub fn name(&self) -> &'a str {
        &self.class.name
    }

    /// The event class.
    pub fn class(&self) -> &'a EventClass {
        self.class
    }

    /// The clock value, in cycles.
    pub fn timestamp_cycles(&self) -> u64 {
        self.cursor.ts
    }

    /// Nanoseconds from the clock's origin (the Unix epoch for LTTng).
    pub fn timestamp_ns(&self) -> i64 {
        self.cursor.ts_ns
    }

    /// The clock its time is on, when the metadata names one.
    pub fn clock(&self) -> Option<&'a metadata::Clock> {
        let k = self
            .trace
            .clock_of
            .get(self.cursor.stream_class)
            .copied()
            .flatten()?;
        self.trace.meta.clocks.get(k)
    }

    /// The stream file it came from.
    pub fn stream_path(&self) -> &'a Path {
        &self.trace.files[self.cursor.file].path
    }

    /// Index of its stream file in [`Trace::stream_paths`].
    pub fn stream_index(&self) -> usize {
        self.cursor.file
    }

    /// The packet context's `cpu_id`, when there is one.
    pub fn cpu(&self) -> Option<u64> {
        self.cursor.cpu
    }

    fn view(&self, ty: &'a Type, vals: &'a [Value]) -> FieldValue<'a> {
        FieldValue {
            ty,
            vals,
            packet: self.packet,
        }
    }

    /// The packet context.
    pub fn packet_context(&self) -> FieldValue<'a> {
        self.view(
            &self.trace.meta.streams[self.cursor.stream_class].packet_context,
            &self.cursor.packet_context,
        )
    }

    /// The event header.
    pub fn header(&self) -> FieldValue<'a> {
        self.view(
            &self.trace.meta.streams[self.cursor.stream_class].event_header,
            &self.cursor.header,
        )
    }

    /// The stream's event context (`vtid`, `procname`, ... for LTTng-UST).
    pub fn stream_context(&self) -> FieldValue<'a> {
        self.view(
            &self.trace.meta.streams[self.cursor.stream_class].event_context,
            &self.cursor.stream_context,
        )
    }

    /// The event's own context.
    pub fn context(&self) -> FieldValue<'a> {
        self.view(&self.class.context, &self.cursor.context)
    }

    /// The payload.
    pub fn payload(&self) -> FieldValue<'a> {
        self.view(&self.class.fields, &self.cursor.fields)
    }

    /// A payload field by name, else a context field (event, then
    /// stream).
    pub fn field(&self, name: &str) -> Option<FieldValue<'a>> {
        self.payload()
            .get(name)
            .or_else(|| self.context().get(name))
            .or_else(|| self.stream_context().get(name))
    }
}

/// A decoded value with its type.
#[derive(Clone, Copy)]
pub struct FieldValue<'a> {
    ty: &'a Type,
    vals: &'a [Value],
    packet: &'a [u8],
}

impl<'a> FieldValue<'a> {
    /// Its type.
    pub fn ty(&self) -> &'a Type {
        self.ty
    }

    /// Every decoded slot of this value (itself, then its members).
    pub fn raw_values(&self) -> &'a [Value] {
        self.vals
    }

    /// The raw value slot.
    pub fn raw(&self) -> Option<Value> {
        self.vals.first().copied()
    }

    /// A member of a structure by name.
    pub fn get(&self, name: &str) -> Option<FieldValue<'a>> {
        let (i, vals) = member(self.ty, self.vals, name)?;
        Some(FieldValue {
            ty: &self.ty.fields()[i].ty,
            vals,
            packet: self.packet,
        })
    }

    /// Members of a structure, in order, with their names.
    pub fn members(&self) -> Vec<(&'a str, FieldValue<'a>)> {
        let mut out = Vec::new();
        let mut at = 1;
        for f in self.ty.fields() {
            let Some(v) = self.vals.get(at) else { break };
            let w = v.width();
            out.push((
                f.name.as_str(),
                FieldValue {
                    ty: &f.ty,
                    vals: &self.vals[at..at + w],
                    packet: self.packet,
                },
            ));
            at += w;
        }
        out
    }

    /// Elements of an array or sequence (not of a character array, which
    /// is a string).
    pub fn elements(&self) -> Vec<FieldValue<'a>> {
        let elem = match &self.ty.kind {
            TypeKind::Array(e, _) | TypeKind::Sequence(e, _) => e,
            _ => return Vec::new(),
        };
        let Some(Value::Array { len, .. }) = self.raw() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut at = 1;
        for _ in 0..len {
            let Some(v) = self.vals.get(at) else { break };
            let w = v.width();
            out.push(FieldValue {
                ty: elem,
                vals: &self.vals[at..at + w],
                packet: self.packet,
            });
            at += w;
        }
        out
    }

    /// The chosen option of a variant: its name and value.
    pub fn option(&self) -> Option<(&'a str, FieldValue<'a>)> {
        let TypeKind::Variant(v) = &self.ty.kind else {
            return None;
        };
        let Some(Value::Variant { option, .. }) = self.raw() else {
            return None;
        };
        let f = v.options.get(option as usize)?;
        Some((
            f.name.as_str(),
            FieldValue {
                ty: &f.ty,
                vals: &self.vals[1..],
                packet: self.packet,
            },
        ))
    }

    /// An integer as `u64` (a signed one reinterpreted).
    pub fn as_u64(&self) -> Option<u64> {
        match self.raw()? {
            Value::Unsigned(u) => Some(u),
            Value::Signed(s) => Some(s as u64),
            _ => None,
        }
    }

    /// An integer as `i64` (an unsigned one reinterpreted).
    pub fn as_i64(&self) -> Option<i64> {
        match self.raw()? {
            Value::Unsigned(u) => Some(u as i64),
            Value::Signed(s) => Some(s),
            _ => None,
        }
    }

    /// A floating point value.
    pub fn as_f64(&self) -> Option<f64> {
        match self.raw()? {
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// A string (or character array) as bytes.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match self.raw()? {
            Value::Str { start, len } => self
                .packet
                .get(start as usize..start as usize + len as usize),
            _ => None,
        }
    }

    /// A string (or character array), invalid UTF-8 replaced.
    pub fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.as_bytes().map(String::from_utf8_lossy)
    }
}

impl std::fmt::Debug for FieldValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.raw() {
            Some(Value::Str { .. }) => write!(f, "{:?}", self.as_str().unwrap_or_default()),
            Some(Value::Struct { .. }) => f.debug_map().entries(self.members()).finish(),
            Some(Value::Array { .. }) => f.debug_list().entries(self.elements()).finish(),
            Some(Value::Variant { .. }) => match self.option() {
                Some((n, v)) => write!(f, "{n}: {v:?}"),
                None => write!(f, "?"),
            },
            Some(Value::Unsigned(u)) => write!(f, "{u}"),
            Some(Value::Signed(s)) => write!(f, "{s}"),
            Some(Value::Float(x)) => write!(f, "{x}"),
            None => write!(f, "-"),
        }
    }
}
