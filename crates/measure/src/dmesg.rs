//! The kernel's boot-time `Memory:` line, from the kernel log.
//!
//! Printed once by `mem_init_print_info()` (seed 000 §3.5):
//!
//! ```text
//! Memory: 3061872K/4134912K available (28800K kernel code, 2090K rwdata, 10688K rodata, 3072K init, 969K bss, 679824K reserved, 393216K cma-reserved)
//! ```
//!
//! The first figure is free memory at that point, the second the physical
//! pages the kernel manages; the parenthesis lists the vmlinux sections.
//! Kernel code + rwdata + rodata + init + bss is the vmlinux image size.
//!
//! The log is read from `/dev/kmsg` below the root (records
//! `prio,seq,usec,flags;message`, read non-blocking until `EAGAIN`), or from
//! a saved `dmesg` output file.

use crate::error::MeasureError;
use lever_kernel::KernelFs;
use serde::Serialize;
use std::io::{ErrorKind, Read};

/// Kernel path of the log device.
pub const KMSG: &str = "/dev/kmsg";

/// The parsed `Memory:` line. Sizes in kB (the kernel's `K`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DmesgMemory {
    /// Free memory when the line was printed.
    pub available_kb: u64,
    /// Physical memory the kernel manages.
    pub total_kb: u64,
    /// Sections in print order: (`kernel code`, 28800), (`rwdata`, 2090), …
    pub sections_kb: Vec<(String, u64)>,
    /// The line as found.
    pub line: String,
}

/// Sections that make up the vmlinux image (seed 000 §3.5).
pub const VMLINUX_SECTIONS: [&str; 5] = ["kernel code", "rwdata", "rodata", "init", "bss"];

impl DmesgMemory {
    /// Find and parse the `Memory: …K/…K available (…)` line in log text
    /// (`dmesg` output, with or without `[ time]` prefixes). `None` when no
    /// line matches (the log wrapped, or the kernel prints another format).
    pub fn find(log: &str) -> Option<Self> {
        log.lines().find_map(Self::parse_line)
    }

    /// Parse one log line.
    pub fn parse_line(line: &str) -> Option<Self> {
        let at = line.find("Memory: ")?;
        let rest = &line[at + "Memory: ".len()..];
        let (avail, rest) = rest.split_once("K/")?;
        let (total, rest) = rest.split_once("K available")?;
        let available_kb = avail.trim().parse().ok()?;
        let total_kb = total.trim().parse().ok()?;
        let mut sections_kb = Vec::new();
        if let Some(inner) = rest
            .trim()
            .strip_prefix('(')
            .and_then(|r| r.split_once(')'))
            .map(|(i, _)| i)
        {
            for part in inner.split(',') {
                // "28800K kernel code"
                let (num, name) = part.trim().split_once("K ")?;
                sections_kb.push((name.trim().to_string(), num.trim().parse().ok()?));
            }
        }
        Some(DmesgMemory {
            available_kb,
            total_kb,
            sections_kb,
            line: line[at..].trim_end().to_string(),
        })
    }

    /// A section's size, kB.
    pub fn section_kb(&self, name: &str) -> Option<u64> {
        self.sections_kb
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// The vmlinux image: code + rwdata + rodata + init + bss, kB. `None`
    /// when a section is missing from the line.
    pub fn vmlinux_kb(&self) -> Option<u64> {
        VMLINUX_SECTIONS.iter().map(|s| self.section_kb(s)).sum()
    }
}

/// Read the kernel log from `/dev/kmsg` below the root, as plain messages
/// (one per line). Reading `/dev/kmsg` needs `CAP_SYSLOG` when
/// `kernel.dmesg_restrict` is 1; that and a missing node are errors the
/// caller reports.
pub fn read_kmsg(fs: &KernelFs) -> Result<String, MeasureError> {
    use std::os::unix::fs::OpenOptionsExt;
    let host = fs.resolve(KMSG)?;
    let kerr = |e: std::io::Error| -> MeasureError {
        match e.kind() {
            ErrorKind::NotFound => lever_kernel::KernelError::Missing {
                path: KMSG.to_string(),
            }
            .into(),
            ErrorKind::PermissionDenied => lever_kernel::KernelError::NotAllowed {
                path: KMSG.to_string(),
                op: "read",
                source: e,
            }
            .into(),
            _ => lever_kernel::KernelError::Io {
                path: KMSG.to_string(),
                op: "read",
                source: e,
            }
            .into(),
        }
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&host)
        .map_err(kerr)?;
    let mut out = String::new();
    let mut buf = vec![0u8; 16 * 1024];
    // A regular file standing in for /dev/kmsg (a copied tree) reads like a
    // dmesg dump; the device returns one record per read().
    let is_device = file.metadata().map(|m| !m.is_file()).unwrap_or(true);
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let chunk = String::from_utf8_lossy(&buf[..n]);
                if is_device {
                    // 6,123,250798,-;Memory: 3218236K/25165432K available (...)
                    //  SUBSYSTEM=...   (continuation lines start with a space)
                    let first = chunk.lines().next().unwrap_or("");
                    if let Some((_, msg)) = first.split_once(';') {
                        out.push_str(msg);
                        out.push('\n');
                    }
                } else {
                    out.push_str(&chunk);
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            // EPIPE: the record we were about to read was overwritten; go on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(kerr(e)),
        }
    }
    Ok(out)
}

/// Read a saved `dmesg` output file (a host path given by the user).
pub fn read_file(path: &std::path::Path) -> Result<String, MeasureError> {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|source| MeasureError::File {
            path: path.display().to_string(),
            source,
        })
}
