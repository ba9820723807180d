//! The `latency` section: seed 000 §3.6's RT KPI table, a short run of
//! `lever latency kpi` (`lever-latency`): one measuring thread per online
//! CPU, SCHED_FIFO 90, 1 ms period, memory locked, a 1 µs histogram up to
//! 1000 µs; half the time without load, half under 60 % CPU load on every
//! CPU.

use super::{not_this_machine, skipped};
use crate::model::{Better, Metric, Section};
use lever_kernel::KernelFs;
use lever_latency::config::{Affinity, Config, Threads};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Histogram range, µs (cyclictest's `-h`).
const HISTOGRAM_US: u32 = 1000;

/// Measure for `time` (both phases together), if asked.
pub fn collect(fs: &KernelFs, time: Option<Duration>) -> Section {
    let Some(time) = time else {
        return skipped("latency", "not asked for (--latency[=SECS])");
    };
    if let Some(why) = not_this_machine(fs) {
        return skipped("latency", why);
    }
    let phase = time / 2;
    let cfg = Config {
        affinity: Affinity::OneEach,
        threads: Threads::PerCpu,
        priority: 90,
        interval_us: 1000,
        duration: Some(phase),
        mlock: true,
        histogram_us: Some(HISTOGRAM_US),
        ..Config::default()
    };
    let stop = AtomicBool::new(false);
    let kpi = match lever_latency::kpi::run(fs, &cfg, None, &stop, |_, _| {}) {
        Ok(k) => k,
        Err(e) => return skipped("latency", format!("the measurement could not run: {e}")),
    };
    let method = format!(
        "lever-latency (`lever latency kpi -a -t -m -p 90 -i 1000 -h {HISTOGRAM_US} -D {:.1}`): one SCHED_FIFO 90 thread per online CPU, 1 ms period, {:.1} s without load then {:.1} s under 60 % CPU load on every CPU",
        phase.as_secs_f64(),
        phase.as_secs_f64(),
        phase.as_secs_f64()
    );
    let mut section = Section::measured("latency", &method);
    let mut hists = Vec::new();
    for block in &kpi.blocks {
        for cell in &block.cells {
            let cpu = cell.cpu.map_or("-".to_string(), |c| c.to_string());
            for (name, v) in [
                ("min", cell.min_us.map(|v| v as f64)),
                ("avg", cell.avg_us),
                ("max", cell.max_us.map(|v| v as f64)),
            ] {
                if let Some(v) = v {
                    let mut m = Metric::new(&format!("latency.{name}"), "us", v)
                        .label("condition", &block.condition)
                        .label("cpu", &cpu);
                    m.better = Some(Better::Lower);
                    section.metrics.push(m);
                }
            }
        }
        for t in &block.report.threads {
            if let Some(h) = &t.histogram {
                let last = h.buckets.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
                hists.push(serde_json::json!({
                    "condition": block.condition,
                    "cpu": t.cpu,
                    "bucket_us": 1,
                    "counts": &h.buckets[..last],
                    "overflows": h.overflows,
                }));
            }
        }
    }
    section.detail = serde_json::json!({ "histograms": hists });
    section
}
