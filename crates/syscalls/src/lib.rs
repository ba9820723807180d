//! The few system calls Lever needs that have no safe wrapper: one thin,
//! documented function each, with every `unsafe` block here and a
//! `// SAFETY:` line on it (STYLE.md: unsafe confined to one place).
//!
//! ```
//! // Ask the kernel to drop the resident pages of our own executable's
//! // code; they are faulted back in as they are used again.
//! let advised = lever_syscalls::page_out_own_code().unwrap();
//! assert!(advised > 0);
//! ```
#![warn(missing_docs)]

use std::io;

mod bench;
pub use bench::{
    caught_signals, fork_exit_wait, install_counting_handler, raise_signal, select_readable,
    MemoryMap, ProtectedPage, SysvSemaphore,
};

/// One mapping of `/proc/self/maps`:
/// `55ac9cf8e000-55ac9d23e000 r-xp 000ba000 fe:00 5326124   /usr/bin/lever`
struct Mapping {
    start: usize,
    end: usize,
    perms: String,
    path: String,
}

fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?);
            let path = f.nth(3).unwrap_or("").to_string();
            let (a, b) = range.split_once('-')?;
            Some(Mapping {
                start: usize::from_str_radix(a, 16).ok()?,
                end: usize::from_str_radix(b, 16).ok()?,
                perms: perms.to_string(),
                path,
            })
        })
        .collect()
}

/// `madvise(MADV_PAGEOUT)` over the read-only mappings (code and constants)
/// of this process's own executable: the kernel reclaims those clean,
/// file-backed pages now instead of under memory pressure, and pages
/// fault back in as they are used. A long-running daemon calls this once
/// after start-up, so its resident set is what it actually runs, not the
/// one-time setup code (argument parsing, config loading) or the pages the
/// kernel's fault-around mapped next to it. Returns the bytes advised.
///
/// Needs Linux 5.4 (MADV_PAGEOUT); on older kernels the error is returned
/// and nothing changes.
pub fn page_out_own_code() -> io::Result<usize> {
    let exe = std::fs::read_link("/proc/self/exe")?;
    let exe = exe.to_string_lossy();
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let mut advised = 0;
    for m in parse_maps(&maps) {
        // Only private, non-writable mappings of our own file: nothing
        // whose contents would be lost by dropping the page.
        if m.path != exe || m.perms.contains('w') || !m.perms.ends_with('p') {
            continue;
        }
        let len = m.end - m.start;
        // SAFETY: the range is a whole mapping of this process taken from
        // /proc/self/maps; MADV_PAGEOUT on a clean, read-only, file-backed
        // private mapping only drops page-table entries and page-cache
        // pages, which are faulted back unchanged from the file, so no
        // memory Rust can observe changes.
        unsafe {
            rustix::mm::madvise(
                m.start as *mut std::ffi::c_void,
                len,
                rustix::mm::Advice::LinuxPageOut,
            )?;
        }
        advised += len;
    }
    Ok(advised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_maps_lines() {
        let m = parse_maps(
            "55ac9ced3000-55ac9cf8e000 r--p 00000000 fe:00 5326124    /usr/bin/lever\n\
             7ffd1000-7ffd2000 rw-p 00000000 00:00 0                  [stack]\n\
             7f00-7f10 rw-p 00000000 00:00 0\n",
        );
        assert_eq!(m.len(), 3);
        assert_eq!((m[0].start, m[0].end), (0x55ac9ced3000, 0x55ac9cf8e000));
        assert_eq!(m[0].path, "/usr/bin/lever");
        assert_eq!(m[2].path, "");
    }

    #[test]
    fn paging_out_our_code_keeps_us_running() {
        let n = page_out_own_code().expect("madvise");
        assert!(n > 0);
        // Code still runs after its pages were dropped.
        assert_eq!(parse_maps("1-2 r--p 0 0 0 /x")[0].end, 2);
    }
}
