//! `lever cpu`: clusters, cpufreq residency and transitions, cpuidle
//! states and GPU, one function per section; `lever cpu ipc`: counts, IPC
//! reading and the cache-miss chain ([`ipc`]).

pub mod ipc;

use crate::render::num::{fixed, fixed_or_dash, mhz_from_hz, mhz_from_khz as mhz, or_dash, pct};
use crate::render::Table;
use lever_cpu::cpufreq::PolicyStats;
use lever_cpu::cpuidle::Cpuidle;
use lever_cpu::gpu::Gpu;
use lever_cpu::topology::{CacheLeaf, Topology};
use lever_cpu::{cpufreq, cpuidle, format_cpu_list, gpu};
use serde::Serialize;

/// Everything `lever cpu` prints, for `--json`.
#[derive(Debug, Serialize)]
pub struct Inventory {
    pub topology: Topology,
    pub cpufreq: Vec<cpufreq::PolicyStats>,
    pub cpufreq_note: Option<String>,
    pub cpuidle: cpuidle::Cpuidle,
    pub gpu: gpu::Gpu,
}

/// The inventory report.
pub fn inventory(inv: &Inventory) -> String {
    let mut out = format!(
        "CPUs online: {} ({})\n\n",
        format_cpu_list(&inv.topology.online),
        inv.topology.online.len()
    );
    out += &clusters(&inv.topology);
    for p in &inv.cpufreq {
        out += &residency(p);
    }
    out += &idle_states(&inv.cpuidle);
    out += &gpu(&inv.gpu);
    out
}

fn cache_cell(caches: &[CacheLeaf], name: &str) -> String {
    caches.iter().find(|c| c.name() == name).map_or_else(
        || "-".into(),
        |c| {
            let label = c.label();
            label[name.len() + 1..].to_string()
        },
    )
}

/// Seed 000 §1.1: one row per cpufreq policy.
fn clusters(topo: &Topology) -> String {
    let mut out = String::from("Clusters (seed 000 §1.1; one per cpufreq policy)\n");
    let mut t = Table::new(&[
        "CLUSTER",
        "CPUS",
        "N",
        "CAPACITY",
        "MIN MHz",
        "MAX MHz",
        "LIMITS MHz",
        "CUR MHz",
        "GOVERNOR",
        "L1I",
        "L1D",
        "L2",
        "L3",
    ]);
    for c in &topo.clusters {
        let f = c.freq.as_ref();
        t.row(vec![
            c.name.clone(),
            format_cpu_list(&c.cpus),
            c.cpus.len().to_string(),
            or_dash(c.capacity),
            mhz(f.and_then(|f| f.cpuinfo_min_khz)),
            mhz(f.and_then(|f| f.cpuinfo_max_khz)),
            match f {
                Some(f) => format!("{}-{}", mhz(f.scaling_min_khz), mhz(f.scaling_max_khz)),
                None => "-".into(),
            },
            mhz(f.and_then(|f| f.cur_khz)),
            or_dash(f.and_then(|f| f.governor.as_deref())),
            cache_cell(&c.caches, "L1I"),
            cache_cell(&c.caches, "L1D"),
            cache_cell(&c.caches, "L2"),
            cache_cell(&c.caches, "L3"),
        ]);
    }
    out += &t.render();
    if let Some(note) = &topo.cpufreq_note {
        out += &format!("cpufreq: not available here because {note}\n");
    }
    out
}

/// One policy's time_in_state and its most frequent transitions.
fn residency(p: &PolicyStats) -> String {
    let mut out = format!(
        "\ncpufreq residency, policy{} (CPUs {}), stats/time_in_state\n",
        p.policy,
        format_cpu_list(&p.cpus)
    );
    let mut t = Table::new(&["MHz", "TIME s", "%"]);
    for r in &p.residency {
        t.row(vec![
            mhz(Some(r.khz)),
            fixed(r.time_ms as f64 / 1000.0, 2),
            pct(r.percent),
        ]);
    }
    out += &t.render();
    if let Some(tt) = &p.trans_table {
        let mut pairs: Vec<(u64, usize, usize)> = Vec::new();
        for (i, row) in tt.counts.iter().enumerate() {
            for (j, &n) in row.iter().enumerate() {
                if n > 0 {
                    pairs.push((n, i, j));
                }
            }
        }
        pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let top: Vec<String> = pairs
            .iter()
            .take(5)
            .map(|&(n, i, j)| {
                format!(
                    "{}→{} MHz ×{n}",
                    mhz(Some(tt.freqs_khz[i])),
                    mhz(Some(tt.freqs_khz[j]))
                )
            })
            .collect();
        out += &format!(
            "transitions (stats/trans_table): {} in all; most frequent: {}\n",
            tt.total(),
            if top.is_empty() {
                "none".into()
            } else {
                top.join(", ")
            }
        );
    } else if let Some(n) = p.total_trans {
        out += &format!("transitions (stats/total_trans): {n}\n");
    }
    if let Some(note) = &p.note {
        out += &format!("not available here because {note}\n");
    }
    out
}

/// Seed 004: cpuidle states per CPU.
fn idle_states(idle: &Cpuidle) -> String {
    let mut out = format!(
        "\ncpuidle states (seed 004), driver {}, governor {}\n",
        idle.driver.as_deref().unwrap_or("-"),
        idle.governor.as_deref().unwrap_or("-")
    );
    if let Some(note) = &idle.note {
        out += &format!("not available here because {note}\n");
        return out;
    }
    let mut t = Table::new(&[
        "CPU",
        "STATE",
        "NAME",
        "EXIT LATENCY us",
        "TARGET RESIDENCY us",
        "USAGE",
        "TIME s",
        "DISABLED",
    ]);
    for c in &idle.cpus {
        for s in &c.states {
            t.row(vec![
                c.cpu.to_string(),
                format!("state{}", s.index),
                s.name.clone(),
                or_dash(s.exit_latency_us),
                or_dash(s.target_residency_us),
                or_dash(s.usage),
                fixed_or_dash(s.time_us.map(|us| us as f64 / 1e6), 3),
                if s.disabled { "yes" } else { "no" }.into(),
            ]);
        }
    }
    out + &t.render()
}

/// KGSL and devfreq.
fn gpu(g: &Gpu) -> String {
    let mut out = String::from("\nGPU\n");
    if let Some(k) = &g.kgsl {
        out += &format!(
            "KGSL {}: {} MHz now, max {} MHz, busy {}%, power levels {} (allowed {}..{}), frequencies {} MHz\n",
            k.model.as_deref().unwrap_or("(model unknown)"),
            mhz_from_hz(k.cur_hz),
            mhz_from_hz(k.max_hz),
            or_dash(k.busy_percent),
            or_dash(k.num_pwrlevels),
            or_dash(k.max_pwrlevel),
            or_dash(k.min_pwrlevel),
            k.available_hz
                .iter()
                .map(|h| (h / 1_000_000).to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    if !g.devfreq.is_empty() {
        let mut t = Table::new(&["DEVFREQ", "CUR MHz", "MIN MHz", "MAX MHz", "GOVERNOR"]);
        for d in &g.devfreq {
            t.row(vec![
                d.name.clone(),
                mhz_from_hz(d.cur_hz),
                mhz_from_hz(d.min_hz),
                mhz_from_hz(d.max_hz),
                or_dash(d.governor.as_deref()),
            ]);
        }
        out += &t.render();
    }
    if let Some(note) = &g.note {
        out += &format!("not available here because {note}\n");
    }
    out
}
