//! trace-cmd's `trace.dat`, versions 6 and 7 (trace-cmd.dat(5),
//! trace-cmd.dat.v7(5)): the metadata (page and event headers, event
//! formats, saved cmdlines, options, v7 sections, zstd/zlib compression)
//! is read up front; the per-CPU ring-buffer pages are streamed and
//! merged in time order ([`ring`]) into the same typed
//! [`lever_trace::Line`]s the text parser gives.
//!
//! Every size read from the file is checked against the file's length
//! and a fixed cap before anything is allocated for it, and every error
//! names the file offset and what was expected there.

mod ahead;
pub mod bytes;
pub mod decode;
pub mod format;
pub mod merge;
pub mod ring;
pub mod write;

use bytes::{Bytes, Endian};
use format::Format;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// The 10 bytes every trace.dat starts with.
pub const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

/// Largest metadata part (formats, cmdlines, a section) read into memory.
const META_CAP: u64 = 256 << 20;
/// Largest compressed chunk of trace data, compressed or not.
const CHUNK_CAP: u64 = 64 << 20;
/// Most CPUs, event formats, options, option sections accepted.
const COUNT_CAP: u32 = 1 << 16;

/// A trace.dat that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DatError {
    /// The bytes at `offset` are not what the format says.
    #[error("at offset {offset}: {what}")]
    Bad {
        /// File offset.
        offset: u64,
        /// What was expected and found.
        what: String,
    },
    /// Reading the file failed.
    #[error("at offset {offset}: reading {what}: {source}")]
    Io {
        /// File offset.
        offset: u64,
        /// What was being read.
        what: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl DatError {
    pub(crate) fn bad(offset: u64, what: impl Into<String>) -> DatError {
        DatError::Bad {
            offset,
            what: what.into(),
        }
    }
}

/// Where the file's bytes are: an open file (read with `pread`, so the
/// per-CPU streams share it), or memory (stdin, a decompressed file).
#[derive(Clone)]
pub enum Data {
    /// A file on disk.
    File(Arc<File>),
    /// Bytes in memory.
    Mem(Arc<[u8]>),
}

impl Data {
    /// Length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Data::File(f) => f.metadata().map(|m| m.len()).unwrap_or(0),
            Data::Mem(m) => m.len() as u64,
        }
    }

    /// True for no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Read exactly `len` bytes at `offset` into `buf` (replacing its
    /// content); `len` must already be checked against the file length.
    fn read_into(
        &self,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        what: &str,
    ) -> Result<(), DatError> {
        let end = offset.checked_add(len);
        if end.is_none_or(|e| e > self.len()) {
            return Err(DatError::bad(
                offset,
                format!(
                    "{what}: {len} bytes would end past the file's {} bytes",
                    self.len()
                ),
            ));
        }
        buf.clear();
        buf.resize(len as usize, 0);
        match self {
            Data::File(f) => f.read_exact_at(buf, offset).map_err(|source| DatError::Io {
                offset,
                what: what.to_string(),
                source,
            }),
            Data::Mem(m) => {
                buf.copy_from_slice(&m[offset as usize..(offset + len) as usize]);
                Ok(())
            }
        }
    }

    /// Read `len` bytes at `offset`, at most `cap`.
    fn read(&self, offset: u64, len: u64, cap: u64, what: &str) -> Result<Vec<u8>, DatError> {
        if len > cap {
            return Err(DatError::bad(
                offset,
                format!("{what}: size {len} is over the {cap}-byte limit"),
            ));
        }
        let mut v = Vec::new();
        self.read_into(offset, len, &mut v, what)?;
        Ok(v)
    }
}

/// A compression algorithm of a v7 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// `zstd`
    Zstd,
    /// `zlib`
    Zlib,
}

impl Codec {
    /// Decompress `src` into exactly `size` bytes (checked against the cap
    /// by the caller).
    fn decompress(self, src: &[u8], size: usize, offset: u64) -> Result<Vec<u8>, DatError> {
        self.decompress_with(&mut None, src, size, offset)
    }

    /// [`Codec::decompress_with`] into `out` (replacing its content),
    /// reusing its allocation; zstd writes straight into it.
    fn decompress_into(
        self,
        zctx: &mut Option<zstd::bulk::Decompressor<'static>>,
        src: &[u8],
        size: usize,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), DatError> {
        let Codec::Zstd = self else {
            *out = self.decompress_with(zctx, src, size, offset)?;
            return Ok(());
        };
        self.check_size(src, size, offset)?;
        if zctx.is_none() {
            *zctx = Some(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| DatError::bad(offset, format!("cannot set up zstd: {e}")))?,
            );
        }
        out.clear();
        out.reserve(size);
        let res = match zctx {
            Some(z) => z.decompress_to_buffer(src, out).map_err(|e| e.to_string()),
            None => Err("no zstd context".to_string()),
        };
        match res {
            Ok(n) if n == size => Ok(()),
            Ok(n) => Err(DatError::bad(
                offset,
                format!("compressed block gives {n} bytes, its header says {size}"),
            )),
            Err(e) => Err(DatError::bad(
                offset,
                format!("{self:?} block does not decompress: {e}"),
            )),
        }
    }

    /// An untrusted size is not allocated beyond what the input could
    /// plausibly expand to (event formats compress about 10:1).
    fn check_size(self, src: &[u8], size: usize, offset: u64) -> Result<(), DatError> {
        if size > src.len().saturating_mul(1024).max(1 << 16) {
            return Err(DatError::bad(
                offset,
                format!(
                    "{} compressed bytes cannot hold the {size} the header says",
                    src.len()
                ),
            ));
        }
        Ok(())
    }

    /// [`Codec::decompress`] reusing a zstd context across calls (making
    /// one costs as much as decompressing a small chunk).
    fn decompress_with(
        self,
        zctx: &mut Option<zstd::bulk::Decompressor<'static>>,
        src: &[u8],
        size: usize,
        offset: u64,
    ) -> Result<Vec<u8>, DatError> {
        self.check_size(src, size, offset)?;
        let out = match self {
            Codec::Zstd => {
                if zctx.is_none() {
                    *zctx =
                        Some(zstd::bulk::Decompressor::new().map_err(|e| {
                            DatError::bad(offset, format!("cannot set up zstd: {e}"))
                        })?);
                }
                match zctx {
                    Some(z) => z.decompress(src, size).map_err(|e| e.to_string()),
                    None => Err("no zstd context".to_string()),
                }
            }
            Codec::Zlib => {
                let mut out = Vec::with_capacity(size);
                flate2::read::ZlibDecoder::new(src)
                    .take(size as u64 + 1)
                    .read_to_end(&mut out)
                    .map(|_| out)
                    .map_err(|e| e.to_string())
            }
        };
        match out {
            Ok(v) if v.len() == size => Ok(v),
            Ok(v) => Err(DatError::bad(
                offset,
                format!(
                    "compressed block gives {} bytes, its header says {size}",
                    v.len()
                ),
            )),
            Err(e) => Err(DatError::bad(
                offset,
                format!("{self:?} block does not decompress: {e}"),
            )),
        }
    }
}

/// The ring-buffer page header layout (`events/header_page`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeader {
    /// Offset of the u64 page timestamp.
    pub ts_offset: usize,
    /// Offset of `commit` (bytes used, with the missed-events flags).
    pub commit_offset: usize,
    /// Size of `commit` (the kernel's long).
    pub commit_size: usize,
    /// Offset of the event data.
    pub data_offset: usize,
}

impl PageHeader {
    fn parse(text: &str, offset: u64) -> Result<PageHeader, DatError> {
        let f = Format::parse("", &format!("name: header_page\nID: 0\n{text}")).unwrap_or(Format {
            system: String::new(),
            name: String::new(),
            id: 0,
            fields: vec![],
        });
        let get = |n: &str| {
            f.field(n).ok_or_else(|| {
                DatError::bad(offset, format!("header_page has no `{n}` field: {text:?}"))
            })
        };
        let (ts, commit, data) = (get("timestamp")?, get("commit")?, get("data")?);
        if !matches!(commit.size, 4 | 8) || ts.size != 8 {
            return Err(DatError::bad(
                offset,
                "header_page: timestamp must be 8 bytes, commit 4 or 8",
            ));
        }
        Ok(PageHeader {
            ts_offset: ts.offset,
            commit_offset: commit.offset,
            commit_size: commit.size,
            data_offset: data.offset,
        })
    }
}

/// Where one CPU's ring-buffer pages are in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuData {
    /// The CPU.
    pub cpu: u32,
    /// File offset.
    pub offset: u64,
    /// Bytes (compressed chunks included, when the file is compressed).
    pub size: u64,
}

/// What the metadata of a trace.dat says.
pub struct DatInfo {
    /// File version (6 or 7).
    pub version: u32,
    /// Byte order.
    pub endian: Endian,
    /// The traced user space's long size.
    pub long_size: u8,
    /// Ring-buffer page size.
    pub page_size: u32,
    /// Compression of the sections and trace data (v7).
    pub codec: Option<Codec>,
    /// Page header layout.
    pub page_header: PageHeader,
    /// Event formats by `common_type`.
    pub formats: Vec<Format>,
    /// Saved cmdlines: pid → comm.
    pub comms: HashMap<i32, String>,
    /// Trace clock, when the file names it.
    pub clock: Option<String>,
    /// Per-CPU data.
    pub cpus: Vec<CpuData>,
    /// Events each CPU's ring buffer overwrote before they were read:
    /// (CPU, `overrun`) from the CPUSTAT options (the kernel's
    /// `per_cpu/cpuN/stats`, as trace-cmd and `lever trace record` save
    /// them).
    pub overruns: Vec<(u32, u64)>,
}

/// A cursor on the file for the metadata read in order (v6).
struct FileCursor<'d> {
    data: &'d Data,
    off: u64,
    endian: Endian,
}

impl<'d> FileCursor<'d> {
    /// A cursor at the start of `data` (a section read into memory).
    fn start(data: &'d Data, endian: Endian) -> Self {
        FileCursor {
            data,
            off: 0,
            endian,
        }
    }

    /// The next `n` bytes: borrowed from memory (a v7 section), read
    /// from a file (v6).
    fn take(&mut self, n: u64, what: &str) -> Result<Cow<'d, [u8]>, DatError> {
        let v = match self.data {
            Data::Mem(m) if n <= META_CAP => {
                let end = self.off.checked_add(n).filter(|&e| e <= m.len() as u64);
                match end {
                    Some(end) => Cow::Borrowed(&m[self.off as usize..end as usize]),
                    // Out of range: the error `read` gives.
                    None => Cow::Owned(self.data.read(self.off, n, META_CAP, what)?),
                }
            }
            _ => Cow::Owned(self.data.read(self.off, n, META_CAP, what)?),
        };
        self.off += n;
        Ok(v)
    }
    /// The next `N` bytes, without an allocation.
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DatError> {
        let b = self.take(N as u64, what)?;
        Ok(b.as_ref().try_into().unwrap_or([0; N]))
    }
    fn u16(&mut self, what: &str) -> Result<u16, DatError> {
        Ok(self.endian.u16(self.array(what)?))
    }
    fn u32(&mut self, what: &str) -> Result<u32, DatError> {
        Ok(self.endian.u32(self.array(what)?))
    }
    /// A u32 count of `what`, at most [`COUNT_CAP`].
    fn count(&mut self, what: &str) -> Result<u32, DatError> {
        let n = self.u32(&format!("the number of {what}"))?;
        if n > COUNT_CAP {
            return Err(DatError::bad(
                self.off - 4,
                format!("{n} {what} is over the limit"),
            ));
        }
        Ok(n)
    }
    fn u64(&mut self, what: &str) -> Result<u64, DatError> {
        Ok(self.endian.u64(self.array(what)?))
    }
    fn cstr(&mut self, what: &str) -> Result<String, DatError> {
        let mut s = Vec::new();
        loop {
            let [b] = self.array(what)?;
            if b == 0 {
                return Ok(String::from_utf8_lossy(&s).into_owned());
            }
            if s.len() >= 4096 {
                return Err(DatError::bad(
                    self.off,
                    format!("{what}: string longer than 4096 bytes"),
                ));
            }
            s.push(b);
        }
    }
    fn expect(&mut self, lit: &[u8]) -> Result<(), DatError> {
        let at = self.off;
        let got = self.take(lit.len() as u64, "a section name")?;
        Bytes::new(&got, at, self.endian).expect(lit)
    }
}

impl DatInfo {
    /// Read the metadata of the trace.dat in `data`.
    pub fn read(data: &Data) -> Result<DatInfo, DatError> {
        let head = data.read(0, data.len().min(64), 64, "the file header")?;
        if head.len() < 10 || &head[..10] != MAGIC {
            return Err(DatError::bad(
                0,
                "not a trace.dat (no \\x17\\x08\\x44tracing magic)",
            ));
        }
        let mut b = Bytes::new(&head[10..], 10, Endian::Little);
        let version_s = b.cstr("the version string")?;
        let version: u32 = version_s
            .parse()
            .map_err(|_| DatError::bad(10, format!("version {version_s:?} is not a number")))?;
        let flags = b.take(2, "endianness and long size")?;
        let endian = match flags[0] {
            0 => Endian::Little,
            1 => Endian::Big,
            x => {
                return Err(DatError::bad(
                    b.offset() - 2,
                    format!("endianness flag {x}, expected 0 or 1"),
                ))
            }
        };
        let long_size = flags[1];
        if !matches!(long_size, 4 | 8) {
            return Err(DatError::bad(
                b.offset() - 1,
                format!("long size {long_size}, expected 4 or 8"),
            ));
        }
        let mut b = Bytes::new(&head[b.offset() as usize..], b.offset(), endian);
        let page_size = b.u32("the page size")?;
        if !(64..=1 << 20).contains(&page_size) {
            return Err(DatError::bad(
                b.offset() - 4,
                format!("page size {page_size} is out of range"),
            ));
        }
        let mut cur = FileCursor {
            data,
            off: b.offset(),
            endian,
        };
        match version {
            6 => Self::read_v6(data, &mut cur, long_size, page_size),
            7 => Self::read_v7(data, &mut cur, long_size, page_size),
            v => Err(DatError::bad(
                10,
                format!("trace.dat version {v}; versions 6 and 7 are read"),
            )),
        }
    }

    fn read_v6(
        data: &Data,
        cur: &mut FileCursor,
        long_size: u8,
        page_size: u32,
    ) -> Result<DatInfo, DatError> {
        let endian = cur.endian;
        let (page_header, _) = read_headers(cur)?;
        let mut formats = Vec::new();
        read_ftrace_formats(cur, &mut formats)?;
        read_event_formats(cur, &mut formats)?;
        let n = cur.u32("the kallsyms size")? as u64;
        cur.off += n;
        let n = cur.u32("the printk formats size")? as u64;
        cur.off += n;
        let n = cur.u64("the saved cmdlines size")?;
        let comms = parse_cmdlines(&cur.take(n, "the saved cmdlines")?);
        let ncpu = cur.count("CPUs")?;
        let mut clock = None;
        let mut overruns = Vec::new();
        let mut instances = 0;
        let mut kind = cur.array::<10>("options/latency/flyrecord")?;
        if kind == *b"options  \0" {
            for _ in 0..COUNT_CAP {
                let id = cur.u16("an option id")?;
                if id == 0 {
                    break;
                }
                let size = cur.u32("an option size")? as u64;
                let body = cur.take(size, "an option")?;
                match id {
                    3 => instances += 1,
                    4 => clock = Some(clock_name(&body)),
                    2 => overruns.extend(cpu_stat(&body)),
                    _ => {}
                }
            }
            kind = cur.array("latency/flyrecord")?;
        }
        if kind != *b"flyrecord\0" {
            return Err(DatError::bad(
                cur.off - 10,
                format!(
                    "expected \"flyrecord\" (ring-buffer data), found {:?}; latency text is not read",
                    String::from_utf8_lossy(&kind)
                ),
            ));
        }
        let mut cpus = Vec::new();
        for cpu in 0..ncpu {
            let offset = cur.u64("a CPU data offset")?;
            let size = cur.u64("a CPU data size")?;
            check_region(data, offset, size, cur.off - 16)?;
            cpus.push(CpuData { cpu, offset, size });
        }
        if instances > 0 && cpus.iter().all(|c| c.size == 0) {
            return Err(DatError::bad(
                cur.off,
                format!(
                    "the events are in {instances} instance buffer(s) (v6 BUFFER options), which are \
                     not read yet; `trace-cmd convert --file-version 7` makes a file that is"
                ),
            ));
        }
        Ok(DatInfo {
            version: 6,
            endian,
            long_size,
            page_size,
            codec: None,
            page_header,
            formats,
            comms,
            clock,
            cpus,
            overruns,
        })
    }

    fn read_v7(
        data: &Data,
        cur: &mut FileCursor,
        long_size: u8,
        page_size: u32,
    ) -> Result<DatInfo, DatError> {
        let endian = cur.endian;
        let name = cur.cstr("the compression name")?;
        let _version = cur.cstr("the compression version")?;
        let codec = match name.as_str() {
            "none" => None,
            "zstd" => Some(Codec::Zstd),
            "zlib" => Some(Codec::Zlib),
            other => {
                return Err(DatError::bad(
                    cur.off,
                    format!("compression {other:?}; none, zstd and zlib are read"),
                ))
            }
        };
        let mut next = cur.u64("the first options section offset")?;
        let (mut header, mut ftrace, mut events, mut cmdlines) = (None, None, None, None);
        let mut buffers: Vec<(String, Option<String>, Vec<CpuData>)> = Vec::new();
        let mut clock = None;
        let mut overruns = Vec::new();
        let mut seen = 0;
        while next != 0 {
            seen += 1;
            if seen > 64 {
                return Err(DatError::bad(
                    next,
                    "more than 64 options sections (a loop?)",
                ));
            }
            let opts = read_section(data, next, 0, codec, endian)?;
            let mut b = Bytes::new(&opts, next, endian);
            next = 0;
            while b.remaining() > 0 {
                let id = b.u16("an option id")?;
                let size = b.u32("an option size")?;
                let at = b.offset();
                let body = b.take(size as u64, "an option")?;
                let mut o = Bytes::new(body, at, endian);
                match id {
                    0 => {
                        next = o.u64("the next options section offset")?;
                        break;
                    }
                    3 => {
                        let _section = o.u64("a buffer section offset")?;
                        let name = o.cstr("a buffer name")?;
                        let clk = o.cstr("a buffer clock").ok();
                        let _page = o.u32("a buffer page size")?;
                        let n = o.u32("a buffer CPU count")?;
                        if n > COUNT_CAP {
                            return Err(DatError::bad(
                                o.offset() - 4,
                                format!("{n} CPUs is over the limit"),
                            ));
                        }
                        let mut cpus = Vec::new();
                        for _ in 0..n {
                            let cpu = o.u32("a CPU id")?;
                            let offset = o.u64("a CPU data offset")?;
                            let size = o.u64("a CPU data size")?;
                            check_region(data, offset, size, o.offset() - 20)?;
                            cpus.push(CpuData { cpu, offset, size });
                        }
                        buffers.push((name, clk, cpus));
                    }
                    4 => clock = Some(clock_name(body)),
                    2 => overruns.extend(cpu_stat(body)),
                    16 => header = Some(o.u64("the header info offset")?),
                    17 => ftrace = Some(o.u64("the ftrace formats offset")?),
                    18 => events = Some(o.u64("the event formats offset")?),
                    21 => cmdlines = Some(o.u64("the cmdlines offset")?),
                    _ => {}
                }
            }
        }
        let need = |v: Option<u64>, what: &str| {
            v.ok_or_else(|| DatError::bad(0, format!("no {what} option in any options section")))
        };
        let sec = read_section(data, need(header, "HEADER_INFO")?, 16, codec, endian)?;
        let mem = Data::Mem(sec.into());
        let mut c = FileCursor::start(&mem, endian);
        let (page_header, _) = read_headers(&mut c)?;
        let mut formats = Vec::new();
        if let Some(off) = ftrace {
            let mem = Data::Mem(read_section(data, off, 17, codec, endian)?.into());
            read_ftrace_formats(&mut FileCursor::start(&mem, endian), &mut formats)?;
        }
        let mem = Data::Mem(
            read_section(data, need(events, "EVENT_FORMATS")?, 18, codec, endian)?.into(),
        );
        read_event_formats(&mut FileCursor::start(&mem, endian), &mut formats)?;
        let comms = match cmdlines {
            Some(off) => {
                let mem = Data::Mem(read_section(data, off, 21, codec, endian)?.into());
                let mut c = FileCursor::start(&mem, endian);
                let n = c.u64("the saved cmdlines size")?;
                parse_cmdlines(&c.take(n, "the saved cmdlines")?)
            }
            None => HashMap::new(),
        };
        // One buffer is read: the one holding the most data (the top
        // instance, or the instance of `trace-cmd extract -B name`, whose
        // top buffer holds only stray events); the others are not merged.
        let bytes =
            |b: &(String, Option<String>, Vec<CpuData>)| b.2.iter().map(|c| c.size).sum::<u64>();
        let pick = (0..buffers.len())
            .max_by_key(|&i| (bytes(&buffers[i]), buffers[i].0.is_empty()))
            .unwrap_or(0);
        let (cpus, buf_clock) = match buffers.into_iter().nth(pick) {
            Some((_, clk, cpus)) => (cpus, clk),
            None => (Vec::new(), None),
        };
        Ok(DatInfo {
            version: 7,
            endian,
            long_size,
            page_size,
            codec,
            page_header,
            formats,
            comms,
            clock: buf_clock.or(clock),
            cpus,
            overruns,
        })
    }
}

/// A CPUSTAT option: `CPU: 1\nentries: 7\noverrun: 43640\n...` (the
/// kernel's `per_cpu/cpu1/stats` after trace-cmd's `CPU:` line) → (1,
/// 43640); `None` when it does not say both.
fn cpu_stat(body: &[u8]) -> Option<(u32, u64)> {
    let text = String::from_utf8_lossy(body);
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches('\0').parse::<u64>().ok())
    };
    let cpu = u32::try_from(value("CPU:")?).ok()?;
    Some((cpu, value("overrun:")?))
}

fn clock_name(body: &[u8]) -> String {
    // "[local] global counter" → local; a bare name as is.
    let s = String::from_utf8_lossy(body);
    let s = s.trim_end_matches('\0');
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if a < b => s[a + 1..b].to_string(),
        _ => s.trim().to_string(),
    }
}

fn check_region(data: &Data, offset: u64, size: u64, at: u64) -> Result<(), DatError> {
    if offset.checked_add(size).is_none_or(|e| e > data.len()) {
        return Err(DatError::bad(
            at,
            format!(
                "CPU data at {offset} of {size} bytes ends past the file's {} bytes",
                data.len()
            ),
        ));
    }
    Ok(())
}

/// A v7 section at `offset`: its header (id, flags, string id, size),
/// then the content, decompressed when flag 1 is set.
fn read_section(
    data: &Data,
    offset: u64,
    want: u16,
    codec: Option<Codec>,
    endian: Endian,
) -> Result<Vec<u8>, DatError> {
    let mut c = FileCursor {
        data,
        off: offset,
        endian,
    };
    let id = c.u16("a section id")?;
    if id != want {
        return Err(DatError::bad(
            offset,
            format!("section id {id}, expected {want}"),
        ));
    }
    let flags = c.u16("section flags")?;
    let _string = c.u32("a section description id")?;
    let size = c.u64("a section size")?;
    if flags & 1 == 0 {
        return Ok(c.take(size, "a section")?.into_owned());
    }
    let Some(codec) = codec else {
        return Err(DatError::bad(
            offset,
            "compressed section in a file without compression",
        ));
    };
    let csize = c.u32("a compressed size")? as u64;
    let usize_ = c.u32("an uncompressed size")? as u64;
    if usize_ > META_CAP {
        return Err(DatError::bad(
            offset,
            format!("section of {usize_} bytes uncompressed is over the limit"),
        ));
    }
    let at = c.off;
    let src = c.take(csize, "compressed section data")?;
    codec.decompress(&src, usize_ as usize, at)
}

/// `header_page\0` size text `header_event\0` size text.
fn read_headers(cur: &mut FileCursor) -> Result<(PageHeader, String), DatError> {
    cur.expect(b"header_page\0")?;
    let n = cur.u64("the header_page size")?;
    let at = cur.off;
    let page = text(&cur.take(n, "header_page")?).into_owned();
    let ph = PageHeader::parse(&page, at)?;
    cur.expect(b"header_event\0")?;
    let n = cur.u64("the header_event size")?;
    let ev = text(&cur.take(n, "header_event")?).into_owned();
    Ok((ph, ev))
}

fn read_ftrace_formats(cur: &mut FileCursor, out: &mut Vec<Format>) -> Result<(), DatError> {
    read_formats(cur, "ftrace", out)
}

fn read_event_formats(cur: &mut FileCursor, out: &mut Vec<Format>) -> Result<(), DatError> {
    for _ in 0..cur.count("event systems")? {
        let system = cur.cstr("a system name")?;
        read_formats(cur, &system, out)?;
    }
    Ok(())
}

/// A count, then that many (u64 size, format text) of one system.
fn read_formats(cur: &mut FileCursor, system: &str, out: &mut Vec<Format>) -> Result<(), DatError> {
    for _ in 0..cur.count("event formats")? {
        let size = cur.u64("a format size")?;
        let text = cur.take(size, "a format")?;
        out.extend(Format::parse(system, &self::text(&text)));
    }
    Ok(())
}

/// `b` as text, bytes that are not UTF-8 as U+FFFD (checked by the fast
/// validator first: metadata is ASCII, and the lossy walk is slower).
fn text(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

// "1234 bash\n"
fn parse_cmdlines(b: &[u8]) -> HashMap<i32, String> {
    text(b)
        .lines()
        .filter_map(|l| {
            let (pid, comm) = l.trim_start().split_once(' ')?;
            Some((pid.parse().ok()?, comm.to_string()))
        })
        .collect()
}

/// Read a compressed chunk of trace data at `offset` (v7): compressed and
/// uncompressed sizes, then the data. Returns the bytes and the offset
/// after the chunk.
fn read_chunk(
    data: &Data,
    offset: u64,
    codec: Codec,
    endian: Endian,
    zctx: &mut Option<zstd::bulk::Decompressor<'static>>,
    bufs: &mut ChunkBufs,
) -> Result<u64, DatError> {
    let mut c = FileCursor {
        data,
        off: offset,
        endian,
    };
    let csize = c.u32("a chunk's compressed size")? as u64;
    let usize_ = c.u32("a chunk's uncompressed size")? as u64;
    if csize > CHUNK_CAP || usize_ > CHUNK_CAP {
        return Err(DatError::bad(
            offset,
            format!("chunk of {csize}/{usize_} bytes is over the limit"),
        ));
    }
    let at = c.off;
    data.read_into(at, csize, &mut bufs.src, "a compressed chunk")?;
    codec.decompress_into(zctx, &bufs.src, usize_ as usize, at, &mut bufs.out)?;
    Ok(at + csize)
}

/// The two buffers a CPU's compressed chunks go through, reused from one
/// chunk to the next (a fresh allocation per chunk costs page faults).
#[derive(Default)]
pub(crate) struct ChunkBufs {
    /// The compressed bytes.
    pub src: Vec<u8>,
    /// The decompressed pages.
    pub out: Vec<u8>,
}
