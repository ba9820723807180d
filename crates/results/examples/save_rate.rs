//! Runs stored per second: `cargo run -p lever-results --example save_rate
//! -- DB N`. Each run has 3 metrics with 4 samples each (latency per CPU),
//! stored in one transaction, like `lever results import`.
use lever_results::model::*;
use lever_results::Store;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (db, n): (&str, usize) = (&args[1], args[2].parse().unwrap());
    let mut store = Store::open(Some(db)).unwrap();
    let start = Instant::now();
    for i in 0..n {
        let mut run = Run::new("2026-11-23T14:00:00Z", Device::default());
        run.device.board = Some(format!("board-{}", i % 10));
        let mut s = Section::measured("latency", "lever latency");
        for cpu in 0..3 {
            let mut m = Metric::new("latency.max", "us", i as f64).label("cpu", &cpu.to_string());
            m.samples = vec![1.0, 2.0, 3.0, 4.0];
            s.metrics.push(m);
        }
        run.sections.push(s);
        store.save(&run).unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{n} runs in {secs:.3} s: {:.0} runs/s", n as f64 / secs);
}
