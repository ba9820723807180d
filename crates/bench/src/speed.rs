//! Fixed probes of the machine's own speed, timed in each pass before
//! every test ([`Probes::time`], [`crate::passes::PassTest::speed_ns`])
//! and kept in the run's conditions (`lever_conditions::Speed`), which say
//! when the machine itself changed speed within a run or between two runs.
//!
//! Three probes, each doing the same work every time and each timed as
//! the fastest of a few repeats (so one preemption does not count):
//!
//! - `cpu`: integer work over 64 KiB (L1/L2-resident on every core we
//!   know): each group of four words mixed with a dependent xorshift step
//!   into four independent sums, 32 times over (~0.15 ms);
//! - `latency`: a walk of dependent loads through a random cycle over
//!   every 64-byte line of twice the L2 (the step past L2, where
//!   `lat_mem_rd` and `bw_mem` moved most between quiet runs on a shared
//!   VM);
//! - `bandwidth`: a read of 16 MiB, four sums (the memory system).
//!
//! Together ~10-30 ms before each test; the buffers (~18-24 MiB) are built
//! once per pass.

use std::hint::black_box;
use std::time::Instant;

/// Words of the `cpu` probe's buffer (64 KiB).
const CPU_WORDS: usize = 8192;
/// Passes of the `cpu` probe over its buffer in one timing.
const CPU_ROUNDS: usize = 32;
/// Bytes the `bandwidth` probe reads.
const READ_BYTES: usize = 16 << 20;
/// The `latency` probe's buffer when the L2's size is not known.
const DEFAULT_L2_KB: u64 = 512;

/// The probes a test's figure depends on, by the test's name: every test
/// on the `cpu` probe (the core's own speed); `lat_mem_rd-*` on the
/// `latency` probe too; `bw_mem-*` on `latency` and `bandwidth`; the
/// other bandwidths (`bw_pipe`, `bw_unix`, `bw_tcp`, `bw_file_rd`,
/// `bw_mmap_rd`: memory copies) on `bandwidth`. A comparison withholds a
/// test's verdict when one of them saw the machine's speed change
/// (`lever_conditions::Comparison::judges`).
pub fn probes_for(test: &str) -> &'static [&'static str] {
    if test.starts_with("lat_mem_rd") {
        &["cpu", "latency"]
    } else if test.starts_with("bw_mem") {
        &["cpu", "latency", "bandwidth"]
    } else if test.starts_with("bw_") {
        &["cpu", "bandwidth"]
    } else {
        &["cpu"]
    }
}

/// The probes and their buffers (built once per pass).
#[derive(Debug)]
pub struct Probes {
    cpu: Vec<u64>,
    chase: Vec<u32>,
    read: Vec<u64>,
}

impl Probes {
    /// The `latency` probe's buffer for an L2 of `l2_kb`: twice it,
    /// clamped to 1–8 MiB.
    fn chase_kb(l2_kb: Option<u64>) -> u64 {
        (2 * l2_kb.unwrap_or(DEFAULT_L2_KB)).clamp(1024, 8 * 1024)
    }

    /// Each probe's name and what it does, in the order of
    /// [`Probes::time`]'s figures.
    pub fn describe(l2_kb: Option<u64>) -> Vec<(&'static str, String)> {
        vec![
            ("cpu", "integer work over 64 KiB".to_string()),
            (
                "latency",
                format!(
                    "{} dependent loads, one per 64-byte line of {} KiB",
                    Probes::chase_kb(l2_kb) * 16,
                    Probes::chase_kb(l2_kb)
                ),
            ),
            ("bandwidth", format!("a read of {} MiB", READ_BYTES >> 20)),
        ]
    }

    /// The probes, sized for an L2 of `l2_kb` ([`Probes::describe`]).
    pub fn new(l2_kb: Option<u64>) -> Probes {
        let chase_kb = Probes::chase_kb(l2_kb);
        // One entry per 64-byte line, a single random cycle through all of
        // them (Sattolo's shuffle), so every load misses the line before.
        let lines = (chase_kb as usize * 1024) / 64;
        let mut order: Vec<u32> = (0..lines as u32).collect();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for i in (1..lines).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % i as u64) as usize);
        }
        let mut chase = vec![0u32; lines * 16];
        for w in 0..lines {
            chase[order[w] as usize * 16] = order[(w + 1) % lines] * 16;
        }
        Probes {
            cpu: (0..CPU_WORDS as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9))
                .collect(),
            chase,
            read: (0..(READ_BYTES / 8) as u64).collect(),
        }
    }

    fn cpu_once(&self) -> u64 {
        let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
        let mut acc = [0u64; 4];
        for _ in 0..CPU_ROUNDS {
            for c in black_box(&self.cpu).chunks_exact(4) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                for (a, w) in acc.iter_mut().zip(c) {
                    *a = a.wrapping_add(w ^ x);
                }
            }
        }
        acc.iter().fold(x, |s, a| s.wrapping_add(*a))
    }

    fn chase_once(&self) -> u64 {
        let chase = black_box(&self.chase);
        let mut i = 0u32;
        for _ in 0..chase.len() / 16 {
            i = chase[i as usize];
        }
        u64::from(i)
    }

    fn read_once(&self) -> u64 {
        let mut acc = [0u64; 4];
        for c in black_box(&self.read).chunks_exact(4) {
            for (a, w) in acc.iter_mut().zip(c) {
                *a = a.wrapping_add(*w);
            }
        }
        acc.iter().fold(0, |s, a| s.wrapping_add(*a))
    }

    /// Each probe's time now (the fastest of a few repeats), ns, in the
    /// order of [`Probes::describe`]. Not inlined: one copy, whatever calls
    /// it.
    #[inline(never)]
    pub fn time(&self) -> Vec<f64> {
        let fastest = |n: usize, f: &dyn Fn() -> u64| {
            (0..n)
                .map(|_| {
                    let t0 = Instant::now();
                    black_box(f());
                    t0.elapsed().as_nanos() as f64
                })
                .fold(f64::MAX, f64::min)
        };
        vec![
            fastest(5, &|| self.cpu_once()),
            fastest(3, &|| self.chase_once()),
            fastest(3, &|| self.read_once()),
        ]
    }
}

/// A run's probe timings, gathered from its passes.
#[derive(Debug)]
pub struct Record {
    speed: lever_conditions::Speed,
}

impl Record {
    /// An empty record for probes sized by `l2_kb`.
    pub fn new(l2_kb: Option<u64>) -> Record {
        Record {
            speed: lever_conditions::Speed {
                probes: Probes::describe(l2_kb)
                    .into_iter()
                    .map(|(name, what)| lever_conditions::Probe {
                        name: name.into(),
                        what,
                        samples_ns: Vec::new(),
                    })
                    .collect(),
                when: "before each test of each pass".into(),
            },
        }
    }

    /// Add one timing of every probe ([`Probes::time`]'s figures); a
    /// timing of another length (none: the test was not run) is left out.
    pub fn add(&mut self, ns: &[f64]) {
        if ns.len() == self.speed.probes.len() {
            for (p, t) in self.speed.probes.iter_mut().zip(ns) {
                p.samples_ns.push(*t);
            }
        }
    }

    /// The record, `None` when nothing was timed.
    pub fn finish(self) -> Option<lever_conditions::Speed> {
        self.speed
            .probes
            .iter()
            .any(|p| !p.samples_ns.is_empty())
            .then_some(self.speed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_does_the_same_work_every_time_and_is_timed() {
        let p = Probes::new(Some(256));
        assert_eq!(p.cpu_once(), p.cpu_once());
        assert_eq!(p.read_once(), p.read_once());
        // 1 MiB at least: 16,384 lines in one cycle, so the chase from 0
        // comes back to 0 after exactly that many loads.
        assert_eq!(p.chase.len() * 4, 1024 * 1024);
        let lines = p.chase.len() / 16;
        let mut i = 0usize;
        let mut seen = 1;
        loop {
            i = p.chase[i] as usize;
            if i == 0 {
                break;
            }
            seen += 1;
        }
        assert_eq!(seen, lines, "one cycle through every line");
        let mut r = Record::new(Some(256));
        assert_eq!(Record::new(None).finish(), None, "nothing timed");
        r.add(&p.time());
        r.add(&[]);
        r.add(&p.time());
        let s = r.finish().unwrap();
        assert_eq!(s.when, "before each test of each pass");
        let names: Vec<_> = s.probes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["cpu", "latency", "bandwidth"]);
        for p in &s.probes {
            assert_eq!(p.samples_ns.len(), 2);
            assert!(p.samples_ns.iter().all(|&t| t > 0.0 && t < 1e10), "{p:?}");
        }
        assert!(
            s.probes[1]
                .what
                .contains("16384 dependent loads, one per 64-byte line of 1024 KiB"),
            "{s:?}"
        );
    }
}
