//! Writing a version 6 trace.dat (trace-cmd.dat(5)) from what tracefs
//! gives: the header and format files as text, saved cmdlines, and each
//! CPU's raw ring-buffer pages (`per_cpu/cpuN/trace_pipe_raw`) copied as
//! they are. `trace-cmd report` and KernelShark open the result; so does
//! [`super::ring::DatReader`].
//!
//! Layout: magic, `6\0`, endianness, long size, page size; `header_page`,
//! `header_event`; ftrace formats; event formats by system; kallsyms
//! (empty); printk formats; saved cmdlines; CPU count; `flyrecord`; per
//! CPU (offset, size); then, page-aligned, each CPU's pages.

use super::MAGIC;
use std::io::{self, Read, Seek, SeekFrom, Write};

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
}

/// What [`write_v6`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Bytes of the file.
    pub bytes: u64,
    /// Bytes of ring-buffer pages, per CPU.
    pub cpu_bytes: Vec<u64>,
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
    w.write_all(MAGIC)?;
    w.write_all(b"6\0")?;
    w.write_all(&[
        u8::from(cfg!(target_endian = "big")),
        std::mem::size_of::<usize>() as u8,
    ])?;
    w.write_all(&meta.page_size.to_ne_bytes())?;
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
