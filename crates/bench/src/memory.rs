//! Memory: `lat_mem_rd` (load-to-use latency by working-set size, and the
//! cache plateaus it shows) and `bw_mem-*` (LMBench's memory bandwidth
//! kernels).
//!
//! `lat_mem_rd` chases pointers one cache line (`stride` = 128 bytes,
//! seed 002's choice) apart; each load's address comes from the previous
//! load, so the time per load is the latency of the level the working set
//! fits in. The lines are visited in a shuffled order (LMBench's
//! `lat_mem_rd -t`), because in-order strides are hidden by today's
//! hardware prefetchers and the DRAM plateau would read as L2 latency.

use crate::catalog::{Section, TestDef};
use crate::runner::{boxed, timed};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::Instant;

/// The stride of `lat_mem_rd`, bytes.
pub const STRIDE: usize = 128;

/// `lat_mem_rd`'s name for a size: `lat_mem_rd-stride128-sz32k`.
pub fn lat_mem_rd_name(size_kb: u64) -> String {
    format!("lat_mem_rd-stride{STRIDE}-sz{size_kb}k")
}

/// The sizes `lat_mem_rd` sweeps, KiB: powers of two (and, with `--full`,
/// the 1.5× points between) from 1 KiB to 4× the last-level cache (at
/// least 64 MiB when the cache size is unknown).
pub fn sweep_kb(quick: bool, llc_kb: Option<u64>) -> Vec<u64> {
    let top = llc_kb.map_or(64 << 10, |l| (l * 4).max(8 << 10));
    let mut v = Vec::new();
    let mut kb = 1;
    while kb <= top {
        v.push(kb);
        if !quick && kb >= 4 && kb * 3 / 2 <= top {
            v.push(kb * 3 / 2);
        }
        kb *= 2;
    }
    v
}

/// A shuffled ring of indices, one per `STRIDE` bytes of `bytes`: each
/// slot holds the index of the next slot to visit.
fn chase_ring(bytes: usize) -> Vec<usize> {
    let per = STRIDE / std::mem::size_of::<usize>();
    let lines = (bytes / STRIDE).max(1);
    let mut order: Vec<usize> = (0..lines).collect();
    // Fisher-Yates with a fixed xorshift seed: the same ring every run.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let mut ring = vec![0usize; lines * per];
    for w in 0..lines {
        ring[order[w] * per] = order[(w + 1) % lines] * per;
    }
    ring
}

/// Follow the ring for `loads` loads from slot 0; the last index.
fn chase(ring: &[usize], loads: u64) -> usize {
    let mut p = 0;
    for _ in 0..loads {
        p = ring[p];
    }
    p
}

/// A found plateau: a run of sizes whose latencies stay within 30% of
/// each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// `L1`, `L2`, `L3`, … and `DRAM` for the last one past every cache.
    pub level: String,
    /// Median latency of the plateau, ns.
    pub latency_ns: f64,
    /// Smallest size on it, KiB.
    pub from_kb: u64,
    /// Largest size on it: where it breaks.
    pub to_kb: u64,
    /// The size of this cache as `lever cpu` reads it, KiB.
    pub cache_kb: Option<u64>,
    /// Whether the break is where that cache ends (within a factor of 2).
    pub matches_cache: Option<bool>,
}

/// Find plateaus in `(size_kb, ns)` points (sorted by size). A point
/// more than 30% above the one before it, or more than twice the current
/// plateau's median, starts a new one; plateaus of a single point are
/// transitions and dropped. Comparing with the point before, not the
/// median, keeps the gentle rise at the end of a cache level (the data
/// TLB's reach with 4 KiB pages: 256 KiB on the x86 machine of the test
/// below) inside that level instead of making it a level of its own. Names follow
/// `caches_kb` (data/unified cache sizes by level, ascending): plateau i
/// is level i+1, and the one past the last cache is DRAM.
pub fn plateaus(points: &[(u64, f64)], caches_kb: &[u64]) -> Vec<Plateau> {
    let mut groups: Vec<Vec<(u64, f64)>> = Vec::new();
    for &p in points {
        let start_new = match groups.last() {
            None => true,
            Some(g) => p.1 > 1.3 * g[g.len() - 1].1 || p.1 > 2.0 * median(g),
        };
        if start_new {
            groups.push(vec![p]);
        } else if let Some(g) = groups.last_mut() {
            g.push(p);
        }
    }
    let kept: Vec<_> = groups.into_iter().filter(|g| g.len() >= 2).collect();
    let largest = caches_kb.last().copied();
    kept.iter()
        .enumerate()
        .map(|(i, g)| {
            // Past every cache: starts beyond the largest one, or there
            // are more plateaus than caches.
            let past_all = largest.is_some_and(|l| g[0].0 > l) || i >= caches_kb.len();
            let cache_kb = caches_kb.get(i).copied().filter(|_| !past_all);
            let to_kb = g[g.len() - 1].0;
            Plateau {
                level: if cache_kb.is_some() {
                    format!("L{}", i + 1)
                } else {
                    "DRAM".into()
                },
                latency_ns: median(g),
                from_kb: g[0].0,
                to_kb,
                cache_kb,
                matches_cache: cache_kb.map(|c| to_kb * 2 >= c && to_kb <= c * 2),
            }
        })
        .collect()
}

fn median(g: &[(u64, f64)]) -> f64 {
    let mut v: Vec<f64> = g.iter().map(|p| p.1).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The memory tests.
pub fn tests(quick: bool, llc_kb: Option<u64>) -> Vec<TestDef> {
    let mut v = Vec::new();
    for kb in sweep_kb(quick, llc_kb) {
        let bytes = kb as usize * 1024;
        let loads = (bytes / STRIDE).max(1);
        v.push(TestDef::ns(
            lat_mem_rd_name(kb),
            Section::MemoryLatency,
            loads as f64,
            move |_| {
                let ring = chase_ring(bytes);
                boxed(move |n| {
                    let start = Instant::now();
                    black_box(chase(&ring, n * loads as u64));
                    Ok(start.elapsed())
                })
            },
        ));
    }
    let sizes_mb: &[usize] = if quick { &[1, 16] } else { &[1, 2, 4, 8, 16] };
    for &mb in sizes_mb {
        for kernel in Kernel::ALL {
            let bytes = mb << 20;
            v.push(TestDef::mb_per_s(
                format!("bw_mem-{}-{mb}mb", kernel.name()),
                Section::MemoryBandwidth,
                bytes as f64,
                move |_| {
                    let mut src = vec![1u64; bytes / 8];
                    let mut dst = vec![2u64; bytes / 8];
                    boxed(move |n| {
                        timed(n, || {
                            kernel.run(&mut src, &mut dst);
                            Ok(())
                        })
                    })
                },
            ));
        }
    }
    v
}

/// LMBench's `bw_mem` kernels. "Stride" kernels touch one 8-byte word
/// per 32 bytes and count the whole buffer, as LMBench's do (the rest of
/// each cache line comes along anyway); "full" ones (`f…`) touch every
/// word. Copies count the bytes copied once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Read one word per 32 bytes and sum.
    Rd,
    /// Write one word per 32 bytes.
    Wr,
    /// Read and write back one word per 32 bytes.
    RdWr,
    /// Copy one word per 32 bytes.
    Cp,
    /// Copy every word in a loop.
    Fcp,
    /// Read and sum every word.
    Frd,
    /// Write every word.
    Fwr,
    /// `memset` (LMBench's `bzero`).
    Bzero,
    /// `memcpy` (LMBench's `bcopy`).
    Bcopy,
}

impl Kernel {
    /// Every kernel, in LMBench's order.
    pub const ALL: [Kernel; 9] = [
        Kernel::Rd,
        Kernel::Wr,
        Kernel::RdWr,
        Kernel::Cp,
        Kernel::Fcp,
        Kernel::Frd,
        Kernel::Fwr,
        Kernel::Bzero,
        Kernel::Bcopy,
    ];

    /// LMBench's name.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Rd => "rd",
            Kernel::Wr => "wr",
            Kernel::RdWr => "rdwr",
            Kernel::Cp => "cp",
            Kernel::Fcp => "fcp",
            Kernel::Frd => "frd",
            Kernel::Fwr => "fwr",
            Kernel::Bzero => "bzero",
            Kernel::Bcopy => "bcopy",
        }
    }

    /// Run once over the buffers.
    pub fn run(self, src: &mut [u64], dst: &mut [u64]) {
        let src = black_box(src);
        let dst = black_box(dst);
        match self {
            Kernel::Rd => {
                black_box(src.iter().step_by(4).fold(0u64, |a, &b| a.wrapping_add(b)));
            }
            Kernel::Wr => dst.iter_mut().step_by(4).for_each(|w| *w = 1),
            Kernel::RdWr => dst
                .iter_mut()
                .step_by(4)
                .for_each(|w| *w = w.wrapping_add(1)),
            Kernel::Cp => {
                for (d, s) in dst.iter_mut().zip(src.iter()).step_by(4) {
                    *d = *s;
                }
            }
            Kernel::Fcp => {
                for (d, s) in dst.iter_mut().zip(src.iter()) {
                    *d = *s;
                }
            }
            Kernel::Frd => {
                black_box(src.iter().fold(0u64, |a, &b| a.wrapping_add(b)));
            }
            Kernel::Fwr => dst.iter_mut().for_each(|w| *w = 3),
            Kernel::Bzero => dst.fill(0),
            Kernel::Bcopy => dst.copy_from_slice(src),
        }
        black_box(dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_visits_every_line_once() {
        let ring = chase_ring(64 * STRIDE);
        let per = STRIDE / 8;
        let mut seen = std::collections::HashSet::new();
        let mut p = 0;
        for _ in 0..64 {
            assert!(seen.insert(p), "revisited {p}");
            assert_eq!(p % per, 0);
            p = ring[p];
        }
        assert_eq!(p, 0, "back to the start after every line");
        assert_eq!(chase(&ring, 64), 0);
    }

    #[test]
    fn sweeps_reach_past_the_last_cache() {
        let q = sweep_kb(true, Some(8 << 10));
        assert_eq!((q[0], *q.last().unwrap()), (1, 32 << 10));
        assert!(sweep_kb(false, Some(8 << 10)).contains(&48));
        assert_eq!(*sweep_kb(true, None).last().unwrap(), 64 << 10);
    }

    #[test]
    fn plateaus_of_a_known_curve() {
        // L1d 32K, L2 512K, L3 8M, then DRAM, with transition points.
        let pts: Vec<(u64, f64)> = [
            (1, 1.2),
            (2, 1.2),
            (4, 1.2),
            (8, 1.2),
            (16, 1.2),
            (32, 1.3),
            (64, 3.9),
            (128, 4.0),
            (256, 4.1),
            (512, 4.6),
            (1024, 12.0),
            (2048, 13.0),
            (4096, 14.0),
            (8192, 16.0),
            (16384, 60.0),
            (32768, 95.0),
            (65536, 100.0),
        ]
        .to_vec();
        let p = plateaus(&pts, &[32, 512, 8192]);
        let levels: Vec<_> = p.iter().map(|p| (p.level.as_str(), p.to_kb)).collect();
        assert_eq!(
            levels,
            [("L1", 32), ("L2", 512), ("L3", 8192), ("DRAM", 65536)]
        );
        assert!(p[..3].iter().all(|p| p.matches_cache == Some(true)));
        assert_eq!(p[3].matches_cache, None);
        assert!((p[0].latency_ns - 1.2).abs() < 1e-9);
        // A break far from the cache size is reported as a mismatch.
        let p = plateaus(&pts, &[4, 512, 8192]);
        assert_eq!(p[0].matches_cache, Some(false));
    }

    /// `lever bench --only 'lat_mem_rd-*'` on this project's CI VM (AMD
    /// EPYC, L1d 32 KiB, L2 1 MiB per core; load 0.1): the rise from
    /// 256 KiB to 768 KiB is the data TLB running out, still L2; the
    /// 1 MiB and 8 MiB points are transitions.
    #[test]
    fn a_tlb_rise_stays_in_its_cache_level() {
        let pts = [
            (16, 1.36),
            (32, 1.36),
            (48, 4.10),
            (128, 4.11),
            (256, 4.13),
            (384, 4.68),
            (512, 5.49),
            (768, 6.68),
            (1024, 10.04),
            (1536, 15.24),
            (2048, 17.21),
            (4096, 18.63),
            (6144, 21.00),
            (8192, 85.09),
            (12288, 136.36),
            (32768, 157.04),
            (131072, 166.18),
        ];
        let p = plateaus(&pts, &[32, 1024, 8192]);
        let levels: Vec<_> = p.iter().map(|p| (p.level.as_str(), p.to_kb)).collect();
        assert_eq!(
            levels,
            [("L1", 32), ("L2", 768), ("L3", 6144), ("DRAM", 131072)]
        );
        assert!(
            p[..3].iter().all(|p| p.matches_cache == Some(true)),
            "{p:?}"
        );
    }

    #[test]
    fn kernels_do_what_they_say() {
        let mut src = vec![5u64; 64];
        let mut dst = vec![0u64; 64];
        Kernel::Bcopy.run(&mut src, &mut dst);
        assert_eq!(dst, src);
        Kernel::Bzero.run(&mut src, &mut dst);
        assert!(dst.iter().all(|&w| w == 0));
        Kernel::Cp.run(&mut src, &mut dst);
        assert_eq!((dst[0], dst[1], dst[4]), (5, 0, 5));
        Kernel::Fwr.run(&mut src, &mut dst);
        assert!(dst.iter().all(|&w| w == 3));
    }
}
