//! Benchmarks of the hot paths, on this machine's real /proc (read-only):
//!
//! - `mem_procs`: one procrank pass (every /proc/<pid>/smaps_rollup, status,
//!   cmdline, then the model); target < 20 ms for ~100 processes;
//! - `thrash_sample`: one thrash sample (/proc/vmstat + /proc/pressure/memory);
//!   target < 10 ms, i.e. < 1 % of one CPU at a 1 s interval;
//! - `mem_map_sample`: one memory-map sample and model (meminfo, vmstat,
//!   modules, zram, dma-buf, KGSL);
//! - `top_sample` and `top_sample_threads`: one `lever top` sample (/proc/stat,
//!   every /proc/<pid>/stat and status, with `--threads` every task's too)
//!   and the interval it closes; target < 20 ms for ~150 processes, i.e.
//!   < 2 % of one CPU at a 1 s interval.
//!
//! Run: `cargo bench -p lever-measure --bench measure`.

use criterion::{criterion_group, criterion_main, Criterion};
use lever_kernel::KernelFs;
use lever_measure::memmap::{MemSample, MemoryMap, StaticMemory};
use lever_measure::smaps::{ProcScan, Procrank, SortKey, View};
use lever_measure::thrash::ThrashSample;
use lever_measure::top::{ReadOptions, TopInterval, TopSample, Which};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let fs = KernelFs::system();
    match ProcScan::read(&fs) {
        Ok(Ok(scan)) => {
            eprintln!(
                "mem_procs: {} processes with user memory, {} kernel threads/zombies, {} not readable",
                scan.procs.len(),
                scan.kernel_threads,
                scan.denied.total()
            );
            c.bench_function("mem_procs", |b| {
                b.iter(|| {
                    let scan = ProcScan::read(&fs).unwrap().unwrap();
                    black_box(Procrank::new(&scan, View::All, SortKey::Pss))
                })
            });
        }
        Ok(Err(why)) => eprintln!("skipped mem_procs: {}", why.reason()),
        Err(e) => eprintln!("skipped mem_procs: {e}"),
    }
    match ThrashSample::read(&fs, 0.0) {
        Ok(_) => {
            c.bench_function("thrash_sample", |b| {
                b.iter(|| black_box(ThrashSample::read(&fs, 1.0).unwrap()))
            });
        }
        Err(e) => eprintln!("skipped thrash_sample: {e}"),
    }
    match (
        StaticMemory::read(&fs, Some(String::new()), Some(1)),
        MemSample::read(&fs),
    ) {
        (Ok(fixed), Ok(_)) => {
            c.bench_function("mem_map_sample", |b| {
                b.iter(|| {
                    let s = MemSample::read(&fs).unwrap();
                    black_box(MemoryMap::new(&fixed, &s, None).unwrap())
                })
            });
        }
        (Err(e), _) | (_, Err(e)) => eprintln!("skipped mem_map_sample: {e}"),
    }
}

fn top(c: &mut Criterion) {
    let fs = KernelFs::system();
    for (name, threads) in [("top_sample", false), ("top_sample_threads", true)] {
        let opts = ReadOptions {
            which: Which::All,
            threads,
        };
        let first = match TopSample::read(&fs, 0.0, &opts) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skipped {name}: {e}");
                continue;
            }
        };
        eprintln!("{name}: {} processes", first.tasks.len());
        c.bench_function(name, |b| {
            b.iter(|| {
                let s = TopSample::read(&fs, 1.0, &opts).unwrap();
                black_box(TopInterval::new(&first, &s, 100, None))
            })
        });
    }
}

criterion_group!(measure, benches, top);
criterion_main!(measure);
