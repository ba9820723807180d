//! Saving a capture as a trace.dat: the ring-buffer pages read from
//! `per_cpu/cpuN/trace_pipe_raw` as they are (no text rendering in the
//! kernel), with the header and format files that say how to decode
//! them. The file layout is `lever-trace-input`'s (`dat::write`).

use crate::capture::CaptureError;
use lever_kernel::KernelFs;
use lever_trace_input::dat::write::{write, DatMeta, DatVersion, Written};
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The metadata of tracefs directory `dir` (an instance or the top
/// level; `top` is the top level, which alone has `saved_cmdlines` and
/// `printk_formats`): headers, the ftrace formats, and the formats of
/// every event system with an event enabled.
pub fn collect_meta(fs: &KernelFs, dir: &str, top: &str) -> Result<DatMeta, CaptureError> {
    let events = format!("{dir}/events");
    let header_page = fs.read(&format!("{events}/header_page"))?;
    let page_size = page_size(&header_page);
    let formats_of = |system: &str| -> Result<Vec<String>, CaptureError> {
        let mut v = Vec::new();
        for ev in subdirs(fs, &format!("{events}/{system}"))? {
            if let Some(text) = fs.read_optional(&format!("{events}/{system}/{ev}/format"))? {
                v.push(text);
            }
        }
        Ok(v)
    };
    let mut systems = Vec::new();
    for system in subdirs(fs, &events)? {
        if system == "ftrace" {
            continue;
        }
        // "0" = none enabled, "1" = all, "X" = some.
        match fs.read_optional(&format!("{events}/{system}/enable"))? {
            Some(on) if on.trim() != "0" => systems.push((system.clone(), formats_of(&system)?)),
            _ => {}
        }
    }
    Ok(DatMeta {
        header_event: fs.read(&format!("{events}/header_event"))?,
        header_page,
        ftrace_formats: formats_of("ftrace").unwrap_or_default(),
        systems,
        printk: fs
            .read_optional(&format!("{top}/printk_formats"))?
            .unwrap_or_default(),
        cmdlines: fs
            .read_optional(&format!("{top}/saved_cmdlines"))?
            .unwrap_or_default(),
        page_size,
        trace_clock: fs
            .read_optional(&format!("{dir}/trace_clock"))?
            .unwrap_or_default(),
        cpu_stats: cpu_stats(fs, dir)?
            .into_iter()
            .map(|(cpu, stats)| format!("CPU: {cpu}\n{stats}"))
            .collect(),
    })
}

/// Each CPU's `per_cpu/cpuN/stats` under `dir` (an instance or the top
/// level), by CPU number; CPUs without one are left out.
pub fn cpu_stats(fs: &KernelFs, dir: &str) -> Result<Vec<(u32, String)>, CaptureError> {
    let mut v = Vec::new();
    // Kernels and test trees without per-CPU directories: nothing to say.
    let Ok(names) = subdirs(fs, &format!("{dir}/per_cpu")) else {
        return Ok(v);
    };
    for name in names {
        let Some(cpu) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(stats) = fs.read_optional(&format!("{dir}/per_cpu/{name}/stats"))? {
            v.push((cpu, stats));
        }
    }
    v.sort_by_key(|c| c.0);
    Ok(v)
}

/// The `overrun:` count of a `per_cpu/cpuN/stats` text: events the ring
/// buffer overwrote before they were read.
pub fn overrun(stats: &str) -> Option<u64> {
    stats
        .lines()
        .find_map(|l| l.strip_prefix("overrun:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The directories in `dir` (files such as `enable`, `filter` and
/// `header_page` sit beside the system and event directories).
fn subdirs(fs: &KernelFs, dir: &str) -> Result<Vec<String>, CaptureError> {
    Ok(fs
        .list_dir(dir)?
        .into_iter()
        .filter(|n| fs.resolve(&format!("{dir}/{n}")).is_ok_and(|p| p.is_dir()))
        .collect())
}

/// The page size from `header_page`'s `data` field (offset + size).
/// ```text
///     field: char data;    offset:16;    size:4080;    signed:0;
/// ```
fn page_size(header_page: &str) -> u32 {
    let num = |l: &str, key: &str| -> Option<u32> {
        let v = &l[l.find(key)? + key.len()..];
        v[..v.find(';')?].trim().parse().ok()
    };
    header_page
        .lines()
        .find(|l| l.contains(" data;"))
        .and_then(|l| Some(num(l, "offset:")? + num(l, "size:")?))
        .unwrap_or(4096)
}

/// A `trace_pipe_raw` read without blocking: an empty buffer is its end.
struct RawPipe(fs::File);

impl Read for RawPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            r => r,
        }
    }
}

/// The CPUs of tracefs directory `dir` (0..n; the v6 file has no CPU
/// numbers, so the list stops at the first gap) with their
/// `trace_pipe_raw` opened without blocking.
fn open_pipes(fs: &KernelFs, dir: &str) -> Result<Vec<RawPipe>, CaptureError> {
    let per_cpu = format!("{dir}/per_cpu");
    let mut cpus: Vec<u32> = fs
        .list_dir(&per_cpu)?
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    let mut pipes = Vec::new();
    for (i, cpu) in cpus.iter().enumerate() {
        if *cpu as usize != i {
            break;
        }
        let host = fs.resolve(&format!("{per_cpu}/cpu{cpu}/trace_pipe_raw"))?;
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&host)
            .map_err(|source| CaptureError::Io {
                path: host.clone(),
                op: "open",
                source,
            })?;
        pipes.push(RawPipe(f));
    }
    Ok(pipes)
}

/// Write the pages of every CPU of tracefs directory `dir` (tracing
/// stopped) with `meta` as a trace.dat at `out`. Reading consumes the
/// buffer.
pub fn save_dat(
    fs: &KernelFs,
    dir: &str,
    meta: &DatMeta,
    out: &Path,
    version: DatVersion,
) -> Result<Written, CaptureError> {
    let mut pipes: Vec<_> = open_pipes(fs, dir)?
        .into_iter()
        .map(|p| io::BufReader::with_capacity(1 << 16, p))
        .collect();
    write_dat(meta, &mut pipes, out, version)
}

fn write_dat<R: Read>(
    meta: &DatMeta,
    cpus: &mut [R],
    out: &Path,
    version: DatVersion,
) -> Result<Written, CaptureError> {
    let err = |op| {
        let path = out.to_path_buf();
        move |source| CaptureError::Io { path, op, source }
    };
    let mut file = fs::File::create(out).map_err(err("create"))?;
    write(&mut file, meta, cpus, version).map_err(err("write trace.dat"))
}

/// Pages read while recording: one thread per CPU drains its
/// `trace_pipe_raw` into a spool file next to the output, so a capture is
/// not bounded by the kernel's buffer; [`RawRecorder::finish`] writes the
/// trace.dat from the spools and removes them.
pub struct RawRecorder {
    stop: Arc<AtomicBool>,
    read: Arc<AtomicU64>,
    threads: Vec<JoinHandle<io::Result<u64>>>,
    spools: Vec<PathBuf>,
}

/// How long a reader sleeps when its CPU has no full page yet.
const POLL: Duration = Duration::from_millis(50);

/// How long it sleeps instead while its CPU is busy (at least
/// [`BUSY_BYTES`] came in since the last sleep): a small buffer fills in
/// tens of ms under load. Not on a trickle, where each poll would save
/// a nearly empty page.
const POLL_BUSY: Duration = Duration::from_millis(5);

/// Pages read between two sleeps that make a CPU busy (16 pages).
const BUSY_BYTES: u64 = 64 * 1024;

impl RawRecorder {
    /// Start one reader per CPU of tracefs directory `dir`, spooling to
    /// `<out>.cpuN`.
    pub fn start(fs: &KernelFs, dir: &str, out: &Path) -> Result<RawRecorder, CaptureError> {
        let stop = Arc::new(AtomicBool::new(false));
        let read = Arc::new(AtomicU64::new(0));
        let mut rec = RawRecorder {
            stop: stop.clone(),
            read: read.clone(),
            threads: Vec::new(),
            spools: Vec::new(),
        };
        for (cpu, mut pipe) in open_pipes(fs, dir)?.into_iter().enumerate() {
            let mut spool_name = out.as_os_str().to_owned();
            spool_name.push(format!(".cpu{cpu}"));
            let spool = PathBuf::from(spool_name);
            let mut file = fs::File::create(&spool).map_err(|source| CaptureError::Io {
                path: spool.clone(),
                op: "create",
                source,
            })?;
            rec.spools.push(spool);
            let stop = stop.clone();
            let read = read.clone();
            rec.threads.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                let mut total = 0;
                let mut round = 0;
                loop {
                    let n = pipe.read(&mut buf)?;
                    if n > 0 {
                        file.write_all(&buf[..n])?;
                        total += n as u64;
                        read.fetch_add(n as u64, Ordering::Relaxed);
                        round += n as u64;
                    } else if stop.load(Ordering::Acquire) {
                        // Stopped and drained (tracing was off first).
                        return Ok(total);
                    } else {
                        let busy = round >= BUSY_BYTES;
                        std::thread::sleep(if busy { POLL_BUSY } else { POLL });
                        round = 0;
                    }
                }
            }));
        }
        Ok(rec)
    }

    /// Bytes of pages read so far, all CPUs together (shared, so a
    /// progress display can follow it while recording).
    pub fn bytes_read(&self) -> Arc<AtomicU64> {
        self.read.clone()
    }

    /// With tracing already stopped: let the readers drain what is left,
    /// then write the trace.dat and remove the spools.
    pub fn finish(
        mut self,
        meta: &DatMeta,
        out: &Path,
        version: DatVersion,
    ) -> Result<Written, CaptureError> {
        let result = self.join().and_then(|()| {
            let mut spools = Vec::new();
            for p in &self.spools {
                spools.push(fs::File::open(p).map_err(|source| CaptureError::Io {
                    path: p.clone(),
                    op: "open",
                    source,
                })?);
            }
            write_dat(meta, &mut spools, out, version)
        });
        self.remove_spools();
        result
    }

    fn join(&mut self) -> Result<(), CaptureError> {
        self.stop.store(true, Ordering::Release);
        let mut first = Ok(());
        for (t, spool) in self.threads.drain(..).zip(&self.spools) {
            let r = t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("reader thread panicked")));
            if let (Err(source), Ok(())) = (r, &first) {
                first = Err(CaptureError::Io {
                    path: spool.clone(),
                    op: "read trace_pipe_raw into",
                    source,
                });
            }
        }
        first
    }

    fn remove_spools(&mut self) {
        for p in self.spools.drain(..) {
            let _ = fs::remove_file(p);
        }
    }
}

impl Drop for RawRecorder {
    fn drop(&mut self) {
        let _ = self.join();
        self.remove_spools();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_from_header_page() {
        let hp = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;";
        assert_eq!(page_size(hp), 4096);
        assert_eq!(page_size(""), 4096);
        assert_eq!(
            page_size("\tfield: char data;\toffset:12;\tsize:16372;\tsigned:0;"),
            16384
        );
    }
}
