//! `lever cpu`: topology, clusters, caches, cpufreq residency, cpuidle and
//! GPU (seed 000 §1.1, §5.1; seed 004); `lever cpu ipc -- CMD`: cycles,
//! instructions, IPC and the cache-miss chain (seed 000 §7.1, §7.2).

use clap::{Args, Subcommand};
use lever_cpu::counters::{NotCountable, Session};
use lever_cpu::ipc::{EventCount, IpcReport};
use lever_cpu::topology::{CacheLeaf, Topology};
use lever_cpu::{cpufreq, cpuidle, format_cpu_list, gpu, topology};
use lever_kernel::KernelFs;
use serde::Serialize;

use crate::args::Global;
use crate::cmd::util::run_command;
use crate::render::{print_json, Table};

/// `lever cpu [ipc -- CMD]`.
#[derive(Debug, Args)]
pub struct CpuArgs {
    #[command(subcommand)]
    pub command: Option<CpuCommand>,
}

#[derive(Debug, Subcommand)]
pub enum CpuCommand {
    /// Count cycles, instructions and the seed's cache-miss events while
    /// CMD runs (perf_event_open), and read the IPC as seed 000 §7.1 does.
    Ipc {
        /// The command to count, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<String>,
    },
}

pub fn run(global: &Global, args: CpuArgs) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    match args.command {
        None => inventory(global, &fs),
        Some(CpuCommand::Ipc { cmd }) => ipc(global, &fs, &cmd),
    }
}

/// Everything `lever cpu` prints, for `--json`.
#[derive(Debug, Serialize)]
struct Inventory {
    topology: Topology,
    cpufreq: Vec<cpufreq::PolicyStats>,
    cpufreq_note: Option<String>,
    cpuidle: cpuidle::Cpuidle,
    gpu: gpu::Gpu,
}

fn mhz(khz: Option<u64>) -> String {
    match khz {
        Some(k) if k % 1000 == 0 => format!("{}", k / 1000),
        Some(k) => format!("{:.1}", k as f64 / 1000.0),
        None => "-".into(),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
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

fn read_inventory(fs: &KernelFs) -> anyhow::Result<Inventory> {
    let topology = topology::read(fs)?;
    let (cpufreq, cpufreq_note) = cpufreq::read(fs)?;
    let cpuidle = cpuidle::read(fs, &topology.online)?;
    let gpu = gpu::read(fs)?;
    Ok(Inventory {
        topology,
        cpufreq,
        cpufreq_note,
        cpuidle,
        gpu,
    })
}

/// Render the human report (pure, for golden tests through the binary).
fn render(inv: &Inventory) -> String {
    let mut out = String::new();
    let topo = &inv.topology;
    out.push_str(&format!(
        "CPUs online: {} ({})\n\n",
        format_cpu_list(&topo.online),
        topo.online.len()
    ));

    out.push_str("Clusters (seed 000 §1.1; one per cpufreq policy)\n");
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
            opt(c.capacity),
            mhz(f.and_then(|f| f.cpuinfo_min_khz)),
            mhz(f.and_then(|f| f.cpuinfo_max_khz)),
            match f {
                Some(f) => format!("{}-{}", mhz(f.scaling_min_khz), mhz(f.scaling_max_khz)),
                None => "-".into(),
            },
            mhz(f.and_then(|f| f.cur_khz)),
            f.and_then(|f| f.governor.clone())
                .unwrap_or_else(|| "-".into()),
            cache_cell(&c.caches, "L1I"),
            cache_cell(&c.caches, "L1D"),
            cache_cell(&c.caches, "L2"),
            cache_cell(&c.caches, "L3"),
        ]);
    }
    out.push_str(&t.render());
    if let Some(note) = &topo.cpufreq_note {
        out.push_str(&format!("cpufreq: not available here because {note}\n"));
    }

    for p in &inv.cpufreq {
        out.push_str(&format!(
            "\ncpufreq residency, policy{} (CPUs {}), stats/time_in_state\n",
            p.policy,
            format_cpu_list(&p.cpus)
        ));
        let mut t = Table::new(&["MHz", "TIME s", "%"]);
        for r in &p.residency {
            t.row(vec![
                mhz(Some(r.khz)),
                format!("{:.2}", r.time_ms as f64 / 1000.0),
                format!("{:.1}", r.percent),
            ]);
        }
        out.push_str(&t.render());
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
            out.push_str(&format!(
                "transitions (stats/trans_table): {} in all; most frequent: {}\n",
                tt.total(),
                if top.is_empty() {
                    "none".into()
                } else {
                    top.join(", ")
                }
            ));
        } else if let Some(n) = p.total_trans {
            out.push_str(&format!("transitions (stats/total_trans): {n}\n"));
        }
        if let Some(note) = &p.note {
            out.push_str(&format!("not available here because {note}\n"));
        }
    }

    let idle = &inv.cpuidle;
    out.push_str(&format!(
        "\ncpuidle states (seed 004), driver {}, governor {}\n",
        idle.driver.as_deref().unwrap_or("-"),
        idle.governor.as_deref().unwrap_or("-")
    ));
    if let Some(note) = &idle.note {
        out.push_str(&format!("not available here because {note}\n"));
    } else {
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
                    opt(s.exit_latency_us),
                    opt(s.target_residency_us),
                    opt(s.usage),
                    s.time_us
                        .map_or_else(|| "-".into(), |us| format!("{:.3}", us as f64 / 1e6)),
                    if s.disabled { "yes" } else { "no" }.into(),
                ]);
            }
        }
        out.push_str(&t.render());
    }

    out.push_str("\nGPU\n");
    let g = &inv.gpu;
    if let Some(k) = &g.kgsl {
        let hz = |v: Option<u64>| v.map_or_else(|| "-".into(), |h| format!("{}", h / 1_000_000));
        out.push_str(&format!(
            "KGSL {}: {} MHz now, max {} MHz, busy {}%, power levels {} (allowed {}..{}), frequencies {} MHz\n",
            k.model.as_deref().unwrap_or("(model unknown)"),
            hz(k.cur_hz),
            hz(k.max_hz),
            opt(k.busy_percent),
            opt(k.num_pwrlevels),
            opt(k.max_pwrlevel),
            opt(k.min_pwrlevel),
            k.available_hz
                .iter()
                .map(|h| (h / 1_000_000).to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    if !g.devfreq.is_empty() {
        let mut t = Table::new(&["DEVFREQ", "CUR MHz", "MIN MHz", "MAX MHz", "GOVERNOR"]);
        let hz = |v: Option<u64>| v.map_or_else(|| "-".into(), |h| format!("{}", h / 1_000_000));
        for d in &g.devfreq {
            t.row(vec![
                d.name.clone(),
                hz(d.cur_hz),
                hz(d.min_hz),
                hz(d.max_hz),
                d.governor.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        out.push_str(&t.render());
    }
    if let Some(note) = &g.note {
        out.push_str(&format!("not available here because {note}\n"));
    }
    out
}

fn inventory(global: &Global, fs: &KernelFs) -> anyhow::Result<()> {
    let inv = read_inventory(fs)?;
    if global.json {
        print_json(&inv)
    } else {
        print!("{}", render(&inv));
        Ok(())
    }
}

/// What `lever cpu ipc` reports, for `--json`.
#[derive(Debug, Serialize)]
struct IpcOutput {
    command: Vec<String>,
    available: bool,
    /// Why nothing was counted, when nothing was.
    reason: Option<String>,
    exit_code: Option<i32>,
    elapsed_s: Option<f64>,
    report: Option<IpcReport>,
}

fn count_cell(c: &EventCount) -> String {
    match c.count {
        Some(n) if c.running_percent() < 99.95 => {
            format!("{n} (scaled, ran {:.1}%)", c.running_percent())
        }
        Some(n) => n.to_string(),
        None => "not counted (never got a PMU counter)".into(),
    }
}

fn ipc(global: &Global, fs: &KernelFs, cmd: &[String]) -> anyhow::Result<()> {
    let mut session = match Session::open(fs) {
        Ok(s) => s,
        Err(e) => return not_countable(global, cmd, &e),
    };
    session.start()?;
    let outcome = run_command(cmd);
    let report = session.finish()?;
    let outcome = outcome?;
    let out = IpcOutput {
        command: cmd.to_vec(),
        available: true,
        reason: None,
        exit_code: outcome.status.code(),
        elapsed_s: Some(outcome.elapsed.as_secs_f64()),
        report: Some(report),
    };
    if global.json {
        return print_json(&out);
    }
    let report = out.report.as_ref().expect("set above");
    println!(
        "command: {} (exit {}, {:.3} s){}",
        cmd.join(" "),
        opt(out.exit_code),
        outcome.elapsed.as_secs_f64(),
        if report.user_space_only {
            "; user space only (perf_event_paranoid forbids kernel counts)"
        } else {
            ""
        }
    );
    let mut t = Table::new(&["EVENT", "COUNT"]);
    t.row(vec!["cycles".into(), count_cell(&report.cycles)]);
    t.row(vec![
        "instructions".into(),
        count_cell(&report.instructions),
    ]);
    print!("{}", t.render());
    match (report.ipc, report.reading) {
        (Some(v), Some(r)) => println!("IPC: {v:.2} — {}", r.advice()),
        _ => println!("IPC: not available because no cycles were counted"),
    }
    println!("\ncache-miss chain (seed 000 §7.2: L1 → L2 → L3 → LLCC → DDR)");
    if !report.chain.is_empty() {
        let mut t = Table::new(&["EVENT", "COUNT", "PER 1000 INSTR", "MEANING"]);
        for s in &report.chain {
            t.row(vec![
                s.event.name.into(),
                count_cell(&s.count),
                s.per_kilo_instructions
                    .map_or_else(|| "-".into(), |v| format!("{v:.2}")),
                s.event.meaning.into(),
            ]);
        }
        print!("{}", t.render());
    }
    if let Some(note) = &report.chain_note {
        println!("not available here because {note}");
    }
    Ok(())
}

fn not_countable(global: &Global, cmd: &[String], e: &NotCountable) -> anyhow::Result<()> {
    let reason = e.to_string();
    if global.json {
        return print_json(&IpcOutput {
            command: cmd.to_vec(),
            available: false,
            reason: Some(reason),
            exit_code: None,
            elapsed_s: None,
            report: None,
        });
    }
    println!("IPC: not available here: {reason}");
    println!("(the command was not run: `{}`)", cmd.join(" "));
    Ok(())
}
