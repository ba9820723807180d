//! Saving a capture as a trace.dat: the ring-buffer pages read from
//! `per_cpu/cpuN/trace_pipe_raw` as they are (no text rendering in the
//! kernel), with the header and format files that say how to decode
//! them. The file layout is `lever-trace-input`'s (`dat::write`).

use crate::capture::CaptureError;
use lever_kernel::KernelFs;
use lever_trace_input::dat::write::{write_v6, DatMeta, Written};
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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
    })
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

/// Write the pages of every CPU of tracefs directory `dir` (tracing
/// stopped) with `meta` as a trace.dat at `out`. Reading consumes the
/// buffer.
pub fn save_dat(
    fs: &KernelFs,
    dir: &str,
    meta: &DatMeta,
    out: &Path,
) -> Result<Written, CaptureError> {
    let io_err = |path: PathBuf, op| move |source| CaptureError::Io { path, op, source };
    let per_cpu = format!("{dir}/per_cpu");
    let mut cpus: Vec<u32> = fs
        .list_dir(&per_cpu)?
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    let mut pipes = Vec::new();
    for (i, cpu) in cpus.iter().enumerate() {
        // The file format has no CPU numbers in v6: CPUs must be 0..n.
        if *cpu as usize != i {
            break;
        }
        let host = fs.resolve(&format!("{per_cpu}/cpu{cpu}/trace_pipe_raw"))?;
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&host)
            .map_err(io_err(host.clone(), "open"))?;
        pipes.push(io::BufReader::with_capacity(1 << 16, RawPipe(f)));
    }
    let mut file = fs::File::create(out).map_err(io_err(out.to_path_buf(), "create"))?;
    write_v6(&mut file, meta, &mut pipes).map_err(io_err(out.to_path_buf(), "write trace.dat"))
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
