//! Parser throughput on a generated sched trace (criterion reports MB/s).
//! The ≥100 MB figure in docs/trace.md comes from `lever trace bench`.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lever_trace::{for_each_line, Line};

fn sample(lines: usize) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..lines {
        let ts = 1000.0 + i as f64 * 0.000_013;
        let cpu = i % 4;
        match i % 3 {
            0 => s.push_str(&format!("          stress-{p:<5}   [{cpu:03}] d..2.  {ts:.6}: sched_switch: prev_comm=stress prev_pid={p} prev_prio=120 prev_state=R+ ==> next_comm=kworker/u8:2 next_pid={q} next_prio=120\n", p = 1000 + i % 50, q = 2000 + i % 70)),
            1 => s.push_str(&format!("          <idle>-0       [{cpu:03}] dNh4.  {ts:.6}: sched_wakeup: comm=stress pid={p} prio=120 target_cpu={cpu:03}\n", p = 1000 + i % 50)),
            _ => s.push_str(&format!("          stress-{p:<5}   [{cpu:03}] d..3.  {ts:.6}: sched_waking: comm=hackbench pid={q} prio=120 target_cpu=002\n", p = 1000 + i % 50, q = 3000 + i % 20)),
        }
    }
    s.into_bytes()
}

fn parse(c: &mut Criterion) {
    let data = sample(100_000);
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("sched_lines", |b| {
        b.iter(|| {
            let mut n = 0u64;
            let s = for_each_line(
                &data[..],
                |_, l| n += matches!(l, Line::Event(_)) as u64,
                |_| {},
            )
            .unwrap();
            assert_eq!(s.malformed, 0);
            n
        })
    });
    g.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
