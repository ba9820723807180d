//! Full analysis cost on a generated sched trace (events/s).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lever_trace_analysis::{analyze, Options};

fn sample(n: usize) -> Vec<u8> {
    let mut s = String::new();
    let mut ts = 1_000_000_000u64;
    for i in 0..n {
        ts += 7_000;
        let cpu = i % 4;
        let p = 1000 + (i / 2) % 64;
        let q = 1000 + (i / 2 + 17) % 64;
        let t = format!("{}.{:06}", ts / 1_000_000_000, (ts / 1000) % 1_000_000);
        if i % 2 == 0 {
            s.push_str(&format!("  w-{q} [{cpu:03}] d..3. {t}: sched_waking: comm=w pid={p} prio=120 target_cpu={cpu:03}\n"));
        } else {
            s.push_str(&format!("  w-{q} [{cpu:03}] d..2. {t}: sched_switch: prev_comm=w prev_pid={q} prev_prio=120 prev_state=S ==> next_comm=w next_pid={p} next_prio=120\n"));
        }
    }
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let data = sample(200_000);
    let mut g = c.benchmark_group("analyze");
    g.throughput(Throughput::Elements(200_000));
    g.sample_size(20);
    g.bench_function("sched_200k_events", |b| {
        let opts = Options {
            sched: true,
            ..Options::default()
        };
        b.iter(|| analyze(&data[..], &opts, |_| {}).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
