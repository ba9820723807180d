//! Writing a trace.dat, version 6 (trace-cmd.dat(5)) or 7
//! (trace-cmd.dat.v7(5)), from what tracefs gives: the header and format
//! files as text, saved cmdlines, and each CPU's raw ring-buffer pages
//! (`per_cpu/cpuN/trace_pipe_raw`) copied as they are. `trace-cmd report`
//! and KernelShark open the result; so does [`super::ring::DatReader`].
//!
//! Version 6 layout: magic, `6\0`, endianness, long size, page size;
//! `header_page`, `header_event`; ftrace formats; event formats by
//! system; kallsyms (empty); printk formats; saved cmdlines; CPU count;
//! `options  ` (TRACECLOCK when known, CPUCOUNT, DONE); `flyrecord`; per
//! CPU (offset, size); then, page-aligned, each CPU's pages.
//!
//! Version 7 layout ([`write_v7`]): magic, `7\0`, endianness, long size,
//! page size, the compression name and version (`zstd\0` `1.5.7\0`, or
//! `none\0` `\0`), then the offset of the first options section. Every
//! part is a section: a 16-byte header (u16 id, u16 flags — 1 =
//! compressed —, u32 description string id, u64 size of what follows)
//! and its content; a compressed content is u32 compressed size, u32
//! size, the zstd frame. In order: HEADER_INFO (16; the v6 header
//! texts), FTRACE_EVENTS (17), EVENT_FORMATS (18), KALLSYMS (19, empty),
//! PRINTK (20), CMDLINES (21), the flyrecord data (3: each CPU's pages
//! page-aligned; compressed, a u32 chunk count then chunks of 10 pages,
//! each u32 compressed size, u32 size, the zstd frame, as trace-cmd
//! writes them), and last the options section (0) that points at each:
//! the section offsets, CPUCOUNT (8), TRACECLOCK (4), BUFFER (3: the
//! flyrecord offset, name `""`, clock, page size, CPU count, per CPU id,
//! offset, size) and DONE (0: no next options section).

use super::MAGIC;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// Which file version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DatVersion {
    /// Version 6: no sections, no compression (read by every trace-cmd).
    #[default]
    V6,
    /// Version 7 with sections; `zstd`: sections and pages compressed.
    V7 {
        /// Compress with zstd (trace-cmd ≥ 3.0 reads it).
        zstd: bool,
    },
}

/// Write `meta` and the pages of `cpus` as `version`.
pub fn write<W: Write + Seek, R: Read>(
    out: &mut W,
    meta: &DatMeta,
    cpus: &mut [R],
    version: DatVersion,
) -> io::Result<Written> {
    match version {
        DatVersion::V6 => write_v6(out, meta, cpus),
        DatVersion::V7 { zstd } => write_v7(out, meta, cpus, zstd),
    }
}

/// The text parts of a trace.dat, as read from tracefs.
#[derive(Debug, Clone, Default)]
pub struct DatMeta {
    /// `events/header_page`
    pub header_page: String,
    /// `events/header_event`
    pub header_event: String,
    /// `events/ftrace/*/format`
    pub ftrace_formats: Vec<String>,
    /// (system, its `events/<system>/*/format` texts)
    pub systems: Vec<(String, Vec<String>)>,
    /// `printk_formats`
    pub printk: String,
    /// `saved_cmdlines`
    pub cmdlines: String,
    /// Ring-buffer page size.
    pub page_size: u32,
    /// `trace_clock` (`[local] global counter ...`; empty = not known,
    /// `local`).
    pub trace_clock: String,
    /// Each CPU's `per_cpu/cpuN/stats` as trace-cmd saves it in a CPUSTAT
    /// option (`CPU: N` line first); its `overrun:` line counts the
    /// events the ring buffer overwrote. Empty: none written.
    pub cpu_stats: Vec<String>,
}

/// The CPUSTAT option bodies (id 2) of `meta`, NUL-terminated as
/// trace-cmd writes them.
fn cpu_stat_options(meta: &DatMeta) -> impl Iterator<Item = Vec<u8>> + '_ {
    meta.cpu_stats.iter().map(|s| {
        let mut b = s.clone().into_bytes();
        b.push(0);
        b
    })
}

/// What [`write_v6`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Bytes of the file.
    pub bytes: u64,
    /// Bytes of ring-buffer pages, per CPU.
    pub cpu_bytes: Vec<u64>,
}

/// The header texts, formats, printk formats and cmdlines as v6 writes
/// them inline and v7 puts in sections: (section id, content).
fn meta_parts(meta: &DatMeta) -> Vec<(u16, Vec<u8>)> {
    let size8 = |v: &mut Vec<u8>, text: &str| {
        v.extend((text.len() as u64).to_ne_bytes());
        v.extend(text.as_bytes());
    };
    let count = |v: &mut Vec<u8>, n: usize| v.extend((n as u32).to_ne_bytes());
    let mut header = Vec::new();
    header.extend(b"header_page\0");
    size8(&mut header, &meta.header_page);
    header.extend(b"header_event\0");
    size8(&mut header, &meta.header_event);
    let mut ftrace = Vec::new();
    count(&mut ftrace, meta.ftrace_formats.len());
    for f in &meta.ftrace_formats {
        size8(&mut ftrace, f);
    }
    let mut events = Vec::new();
    count(&mut events, meta.systems.len());
    for (system, formats) in &meta.systems {
        events.extend(system.as_bytes());
        events.push(0);
        count(&mut events, formats.len());
        for f in formats {
            size8(&mut events, f);
        }
    }
    let mut printk = Vec::new();
    count(&mut printk, meta.printk.len());
    printk.extend(meta.printk.as_bytes());
    let mut cmdlines = Vec::new();
    size8(&mut cmdlines, &meta.cmdlines);
    vec![
        (16, header),
        (17, ftrace),
        (18, events),
        (19, 0u32.to_ne_bytes().to_vec()), // kallsyms: none
        (20, printk),
        (21, cmdlines),
    ]
}

/// Pages per compressed chunk (trace-cmd's choice: 10).
const CHUNK_PAGES: usize = 10;

/// zstd level: the library's default (fast; trace data compresses ~10:1).
const ZSTD_LEVEL: i32 = 3;

/// Write a v7 trace.dat to `out` (see the module docs), sections and
/// pages zstd-compressed when `zstd`.
pub fn write_v7<W: Write + Seek, R: Read>(
    out: &mut W,
    meta: &DatMeta,
    cpus: &mut [R],
    zstd: bool,
) -> io::Result<Written> {
    let mut z = if zstd {
        Some(zstd::bulk::Compressor::new(ZSTD_LEVEL)?)
    } else {
        None
    };
    let mut w = io::BufWriter::new(&mut *out);
    file_head(&mut w, b"7\0", meta.page_size)?;
    if zstd {
        w.write_all(b"zstd\0")?;
        w.write_all(zstd::zstd_safe::version_string().as_bytes())?;
        w.write_all(b"\0")?;
    } else {
        w.write_all(b"none\0\0")?;
    }
    let first_options = w.stream_position()?;
    w.write_all(&0u64.to_ne_bytes())?; // patched once known
    let mut options: Vec<(u16, Vec<u8>)> = Vec::new();
    for (id, content) in meta_parts(meta) {
        let at = w.stream_position()?;
        match z.as_mut() {
            Some(z) => {
                let c = z.compress(&content)?;
                section_header(&mut w, id, 1, 8 + c.len() as u64)?;
                w.write_all(&(c.len() as u32).to_ne_bytes())?;
                w.write_all(&(content.len() as u32).to_ne_bytes())?;
                w.write_all(&c)?;
            }
            None => {
                section_header(&mut w, id, 0, content.len() as u64)?;
                w.write_all(&content)?;
            }
        }
        options.push((id, at.to_ne_bytes().to_vec()));
    }
    // Flyrecord data: its size is patched after the pages.
    let fly = w.stream_position()?;
    section_header(&mut w, 3, u16::from(zstd), 0)?;
    let ps = meta.page_size.max(1) as u64;
    let mut entries = Vec::new();
    let mut chunk = vec![0u8; CHUNK_PAGES * ps as usize];
    for r in cpus.iter_mut() {
        let mut got = crate::read_full(r, &mut chunk)?;
        let pos = w.stream_position()?;
        if got == 0 {
            // Nothing recorded: point at the end, not past it; no count.
            entries.push((pos, 0));
            continue;
        }
        let start = pos.div_ceil(ps) * ps;
        io::copy(&mut io::repeat(0).take(start - pos), &mut w)?;
        let size = match z.as_mut() {
            None => {
                w.write_all(&chunk[..got])?;
                got as u64 + io::copy(r, &mut w)?
            }
            Some(z) => {
                // Chunk count first, patched after the last chunk.
                w.write_all(&0u32.to_ne_bytes())?;
                let mut chunks = 0u32;
                while got > 0 {
                    let c = z.compress(&chunk[..got])?;
                    w.write_all(&(c.len() as u32).to_ne_bytes())?;
                    w.write_all(&(got as u32).to_ne_bytes())?;
                    w.write_all(&c)?;
                    chunks += 1;
                    got = crate::read_full(r, &mut chunk)?;
                }
                let end = w.stream_position()?;
                w.seek(SeekFrom::Start(start))?;
                w.write_all(&chunks.to_ne_bytes())?;
                w.seek(SeekFrom::Start(end))?;
                // trace-cmd records the size without the count.
                end - start - 4
            }
        };
        entries.push((start, size));
    }
    let data_end = w.stream_position()?;
    // The options section, then the patches.
    let clock = clock_in_use(&meta.trace_clock);
    let mut buffer = fly.to_ne_bytes().to_vec();
    buffer.extend(b"\0"); // the top-level buffer's name: ""
    buffer.extend(clock.as_bytes());
    buffer.push(0);
    buffer.extend(meta.page_size.to_ne_bytes());
    buffer.extend((entries.len() as u32).to_ne_bytes());
    for (cpu, (off, size)) in entries.iter().enumerate() {
        buffer.extend((cpu as u32).to_ne_bytes());
        buffer.extend(off.to_ne_bytes());
        buffer.extend(size.to_ne_bytes());
    }
    options.push((8, (entries.len() as u32).to_ne_bytes().to_vec()));
    options.extend(cpu_stat_options(meta).map(|b| (2, b)));
    if !meta.trace_clock.is_empty() {
        let mut text = meta.trace_clock.clone().into_bytes();
        text.push(0);
        options.push((4, text));
    }
    options.push((3, buffer));
    options.push((0, 0u64.to_ne_bytes().to_vec())); // DONE: no next section
    let body: u64 = options.iter().map(|o| 6 + o.1.len() as u64).sum();
    section_header(&mut w, 0, 0, body)?;
    for (id, data) in &options {
        w.write_all(&id.to_ne_bytes())?;
        w.write_all(&(data.len() as u32).to_ne_bytes())?;
        w.write_all(data)?;
    }
    let end = w.stream_position()?;
    w.seek(SeekFrom::Start(first_options))?;
    w.write_all(&data_end.to_ne_bytes())?;
    w.seek(SeekFrom::Start(fly + 8))?;
    w.write_all(&(data_end - fly - 16).to_ne_bytes())?;
    w.seek(SeekFrom::Start(end))?;
    w.flush()?;
    Ok(Written {
        bytes: end,
        cpu_bytes: entries.iter().map(|e| e.1).collect(),
    })
}

/// Magic, version (`6\0`/`7\0`), endianness, long size, page size: the
/// start of both versions.
fn file_head<W: Write>(w: &mut W, version: &[u8], page_size: u32) -> io::Result<()> {
    w.write_all(MAGIC)?;
    w.write_all(version)?;
    w.write_all(&[
        u8::from(cfg!(target_endian = "big")),
        std::mem::size_of::<usize>() as u8,
    ])?;
    w.write_all(&page_size.to_ne_bytes())
}

/// A v7 section header: id, flags, description string id (none: 0),
/// size of the content that follows.
fn section_header<W: Write>(w: &mut W, id: u16, flags: u16, size: u64) -> io::Result<()> {
    w.write_all(&id.to_ne_bytes())?;
    w.write_all(&flags.to_ne_bytes())?;
    w.write_all(&0u32.to_ne_bytes())?;
    w.write_all(&size.to_ne_bytes())
}

/// The clock in brackets of `trace_clock` (`[local] global` → `local`).
fn clock_in_use(trace_clock: &str) -> &str {
    match (trace_clock.find('['), trace_clock.find(']')) {
        (Some(a), Some(b)) if a < b => &trace_clock[a + 1..b],
        _ => "local",
    }
}

/// Write a v6 trace.dat to `out`: the metadata, then each reader of
/// `cpus` (CPU 0, 1, ...) copied to its end (whole pages are expected).
pub fn write_v6<W: Write + Seek, R: Read>(
    out: &mut W,
    meta: &DatMeta,
    cpus: &mut [R],
) -> io::Result<Written> {
    let ne = |v: u64| v.to_ne_bytes();
    let mut w = io::BufWriter::new(&mut *out);
    file_head(&mut w, b"6\0", meta.page_size)?;
    w.write_all(b"header_page\0")?;
    w.write_all(&ne(meta.header_page.len() as u64))?;
    w.write_all(meta.header_page.as_bytes())?;
    w.write_all(b"header_event\0")?;
    w.write_all(&ne(meta.header_event.len() as u64))?;
    w.write_all(meta.header_event.as_bytes())?;
    let count = |n: usize| (n as u32).to_ne_bytes();
    w.write_all(&count(meta.ftrace_formats.len()))?;
    for f in &meta.ftrace_formats {
        w.write_all(&ne(f.len() as u64))?;
        w.write_all(f.as_bytes())?;
    }
    w.write_all(&count(meta.systems.len()))?;
    for (system, formats) in &meta.systems {
        w.write_all(system.as_bytes())?;
        w.write_all(b"\0")?;
        w.write_all(&count(formats.len()))?;
        for f in formats {
            w.write_all(&ne(f.len() as u64))?;
            w.write_all(f.as_bytes())?;
        }
    }
    w.write_all(&0u32.to_ne_bytes())?; // kallsyms: none
    w.write_all(&count(meta.printk.len()))?;
    w.write_all(meta.printk.as_bytes())?;
    w.write_all(&ne(meta.cmdlines.len() as u64))?;
    w.write_all(meta.cmdlines.as_bytes())?;
    w.write_all(&count(cpus.len()))?;
    // An options section, even a short one: `trace-cmd convert` fails
    // ("error writing") on a v6 file that goes straight to flyrecord,
    // although the format allows it and `report` reads it.
    w.write_all(b"options  \0")?;
    if !meta.trace_clock.is_empty() {
        let mut text = meta.trace_clock.clone().into_bytes();
        text.push(0);
        w.write_all(&4u16.to_ne_bytes())?; // TRACECLOCK
        w.write_all(&count(text.len()))?;
        w.write_all(&text)?;
    }
    w.write_all(&8u16.to_ne_bytes())?; // CPUCOUNT
    w.write_all(&4u32.to_ne_bytes())?;
    w.write_all(&count(cpus.len()))?;
    for b in cpu_stat_options(meta) {
        w.write_all(&2u16.to_ne_bytes())?; // CPUSTAT
        w.write_all(&count(b.len()))?;
        w.write_all(&b)?;
    }
    w.write_all(&0u16.to_ne_bytes())?; // DONE
    w.write_all(b"flyrecord\0")?;
    w.flush()?;
    drop(w);
    // The per-CPU table is filled in once the sizes are known.
    let table = out.stream_position()?;
    out.write_all(&vec![0u8; cpus.len() * 16])?;
    let ps = meta.page_size.max(1) as u64;
    let mut pos = out.stream_position()?;
    let mut entries = Vec::new();
    for r in cpus.iter_mut() {
        let start = pos.div_ceil(ps) * ps;
        out.seek(SeekFrom::Start(start))?;
        let n = io::copy(r, out)?;
        if n == 0 {
            // Nothing recorded: point at the end, not past it.
            entries.push((pos, 0));
            continue;
        }
        entries.push((start, n));
        pos = start + n;
    }
    let end = out.seek(SeekFrom::End(0))?.max(pos);
    out.seek(SeekFrom::Start(table))?;
    for (off, size) in &entries {
        out.write_all(&ne(*off))?;
        out.write_all(&ne(*size))?;
    }
    out.seek(SeekFrom::Start(end))?;
    out.flush()?;
    Ok(Written {
        bytes: end,
        cpu_bytes: entries.iter().map(|e| e.1).collect(),
    })
}
