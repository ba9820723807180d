//! `lat_pagefault`: the cost of one page fault on a file mapping whose
//! pages are in the page cache (LMBench: map a file, touch its pages,
//! divide by the faults).
//!
//! Today's kernels map up to `fault_around_bytes` (64 KiB by default) of
//! cached pages per read fault, so touching every page takes one fault
//! per 16 pages and "time / pages" is mostly the cost of a plain load.
//! Lever measures how many pages one fault maps here (touch every page of
//! a fresh mapping and count the thread's minor faults with `getrusage`),
//! then touches one page per fault-around window: every touch is a fault,
//! and `lat_pagefault` is µs per fault taken. Where one fault maps a
//! whole large folio (2 MiB on ext4 here), the file is capped at 16 MiB
//! and fewer faults are timed. `lat_pagefault-touch` keeps
//! the per-page-touched figure LMBench's loop gives on such a kernel.

use crate::catalog::{Section, TestDef};
use crate::os::{open, scratch_file};
use crate::runner::boxed;
use crate::{io_err, BenchError};
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// Page size the tests step by.
const PAGE: usize = 4096;
/// Faults per iteration of `lat_pagefault` (with 16 pages per fault, the
/// 4 MiB probe file is the whole test file).
pub const FAULTS: usize = 64;
/// Size of `lat_pagefault-touch`'s file.
const TOUCH_BYTES: usize = 4 << 20;
/// Largest file `lat_pagefault` writes: where one fault maps a 2 MiB
/// folio (ext4 large folios), 64 faults would need 128 MiB, too much for
/// a small board; fewer faults are taken and the time scaled to 64.
const MAX_FAULT_FILE: usize = 16 << 20;

/// Map `len` bytes of `f`, touch one page every `stride` pages (timed),
/// unmap; the time of the touches and the faults they took.
pub fn touch_pages(f: &File, len: usize, stride: usize) -> Result<(Duration, u64), BenchError> {
    let map =
        lever_syscalls::MemoryMap::file_read_only(f.as_fd(), len).map_err(io_err("mmap".into()))?;
    let s = map.as_slice();
    let faults = lever_syscalls::minor_faults().map_err(io_err("getrusage".into()))?;
    let start = Instant::now();
    let mut acc = 0u8;
    for page in (0..s.len()).step_by(PAGE * stride.max(1)) {
        acc = acc.wrapping_add(s[page]);
    }
    let d = start.elapsed();
    let taken = lever_syscalls::minor_faults().map_err(io_err("getrusage".into()))? - faults;
    black_box(acc);
    Ok((d, taken))
}

/// Pages one read fault maps on this kernel: touch every page of a fresh
/// mapping of `f`, a cached file of 4 MiB or more, and divide by the faults counted (the
/// least of three tries, so a stray fault elsewhere in the thread does
/// not count).
pub fn pages_per_fault(f: &File) -> Result<usize, BenchError> {
    let mut best = u64::MAX;
    for _ in 0..3 {
        best = best.min(touch_pages(f, TOUCH_BYTES, 1)?.1);
    }
    let pages = (TOUCH_BYTES / PAGE) as u64;
    Ok((pages / best.max(1)).clamp(1, pages) as usize)
}

/// How `lat_pagefault` faults: the file, its length, the stride in pages
/// and the number of touches (each one fault).
struct FaultPlan {
    file: File,
    len: usize,
    stride: usize,
    touches: usize,
}

/// Probe with a cached file of `TOUCH_BYTES`, and plan the file (the same
/// one when it is large enough) `lat_pagefault` maps.
fn fault_file(dir: &Path) -> Result<FaultPlan, BenchError> {
    let probe = open(&scratch_file(dir, "pagefault", TOUCH_BYTES)?)?;
    let stride = pages_per_fault(&probe)?;
    let touches = (MAX_FAULT_FILE / (stride * PAGE)).clamp(1, FAULTS);
    let len = touches * stride * PAGE;
    let f = if len <= TOUCH_BYTES {
        probe
    } else {
        open(&scratch_file(dir, "pagefault-big", len)?)?
    };
    Ok(FaultPlan {
        file: f,
        len,
        stride,
        touches,
    })
}

/// `lat_pagefault` (µs per fault taken) and `lat_pagefault-touch` (µs
/// per page touched, every page).
pub fn tests() -> Vec<TestDef> {
    vec![
        TestDef::us("lat_pagefault", Section::FileAndVm, FAULTS as f64, |env| {
            let p = fault_file(&env.dir)?;
            boxed(move |n| {
                let mut total = Duration::ZERO;
                for _ in 0..n {
                    total += touch_pages(&p.file, p.len, p.stride)?.0;
                }
                // Scaled to FAULTS faults per iteration (the metric's count).
                Ok(total * FAULTS as u32 / p.touches as u32)
            })
        }),
        TestDef::us(
            "lat_pagefault-touch",
            Section::FileAndVm,
            (TOUCH_BYTES / PAGE) as f64,
            |env| {
                let f = open(&scratch_file(&env.dir, "pagefault-touch", TOUCH_BYTES)?)?;
                boxed(move |n| {
                    let mut total = Duration::ZERO;
                    for _ in 0..n {
                        total += touch_pages(&f, TOUCH_BYTES, 1)?.0;
                    }
                    Ok(total)
                })
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run_defs, Options};

    #[test]
    fn every_touch_of_lat_pagefault_is_one_fault() {
        let dir = tempfile::tempdir().unwrap();
        let p = fault_file(dir.path()).unwrap();
        // The least of three: a stray fault elsewhere adds, never removes.
        let faults = (0..3)
            .map(|_| touch_pages(&p.file, p.len, p.stride).unwrap().1)
            .min()
            .unwrap();
        let touches = p.touches as u64;
        assert!(
            (touches..=touches * 11 / 10 + 1).contains(&faults),
            "{faults} faults for {touches} touches (stride {} pages)",
            p.stride
        );
        assert!(p.len <= MAX_FAULT_FILE.max(TOUCH_BYTES));
    }

    #[test]
    fn per_fault_costs_more_than_per_page_touched() {
        let opts = Options {
            policy: crate::stats::Policy {
                fixed: Some(7),
                ..Options::quick().policy
            },
            ..Options::quick()
        };
        let r = run_defs(&opts, tests(), &mut |_, _, _| {}).unwrap();
        let median = |i: usize| r.tests[i].summary.as_ref().unwrap().median;
        assert_eq!(
            (r.tests[0].unit.as_str(), r.tests[1].unit.as_str()),
            ("us", "us")
        );
        // A fault maps pages and walks the page cache: microseconds, not
        // the nanoseconds of a load; with fault-around the per-page
        // figure is a fraction of it.
        assert!(median(0) > 0.05 && median(0) < 1000.0, "{}", median(0));
        assert!(median(0) > median(1), "{} vs {}", median(0), median(1));
    }
}
