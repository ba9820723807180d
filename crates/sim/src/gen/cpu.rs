//! `/sys/devices/system/cpu`: CPU masks, topology, caches, cpuidle,
//! capacity and cpufreq policies.
//!
//! Formats follow the kernel's show functions:
//! - `affected_cpus`, `related_cpus`, `scaling_available_frequencies`,
//!   `scaling_available_governors`: each item followed by a space, then a
//!   newline (`0 1 2 3 \n`), as `cpufreq_show_cpus()` prints.
//! - `stats/time_in_state`: `<kHz> <10 ms units>` per line.
//! - `stats/trans_table`: the `cpufreq_stats.c` matrix:
//!
//! ```text
//!    From  :    To
//!          :    300000    691200
//!    300000:         0        12
//!    691200:        11         0
//! ```

use lever_kernel::paths;

use super::{all_cpus, cpu_list, cpu_mask, mix, split};
use crate::model::{Board, Cache, Cluster};
use crate::tree::Tree;
use crate::SimError;

/// Share of each CPU's uptime spent idle, in percent (plausible for an idle
/// board after boot). `/proc/stat` uses the same figure.
pub(crate) const IDLE_PERCENT: u64 = 88;

pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    let cpus = all_cpus(board);
    let nr = cpus.len() as u32;
    let all = cpu_list(&cpus);
    let base = paths::CPU;
    tree.line(&format!("{base}/online"), &all)?;
    tree.line(&format!("{base}/possible"), &all)?;
    tree.line(&format!("{base}/present"), &all)?;
    tree.line(&format!("{base}/offline"), "")?;
    tree.line(&format!("{base}/kernel_max"), board.kernel_max)?;

    let max_capacity_raw = board
        .clusters
        .iter()
        .map(capacity_raw)
        .max()
        .unwrap_or(1)
        .max(1);

    for cluster in board.clusters {
        for cpu in cluster.first_cpu..cluster.first_cpu + cluster.cpus {
            let dir = format!("{base}/cpu{cpu}");
            if cpu != 0 {
                tree.line(&format!("{dir}/online"), 1)?;
            }
            // arch_topology: capacity = raw * 1024 / max raw, raw =
            // capacity-dmips-mhz * max frequency.
            tree.line(
                &format!("{dir}/cpu_capacity"),
                capacity_raw(cluster) * 1024 / max_capacity_raw,
            )?;
            write_topology(board, cluster, cpu, nr, tree)?;
            write_caches(board, cluster, cpu, nr, tree)?;
            write_cpuidle(board, cluster, cpu, tree)?;
            tree.symlink(
                &format!("{dir}/cpufreq"),
                &format!("../cpufreq/policy{}", cluster.first_cpu),
            )?;
        }
        write_policy(board, cluster, tree)?;
    }
    if !board.cpufreq.governor_per_policy {
        for (file, value) in board.cpufreq.tunables {
            tree.line(
                &format!("{}/{}/{file}", paths::CPUFREQ, board.cpufreq.governor),
                value,
            )?;
        }
    }
    Ok(())
}

fn capacity_raw(cluster: &Cluster) -> u64 {
    let max_khz = cluster.freqs_khz.last().copied().unwrap_or(0);
    cluster.capacity_dmips_mhz * u64::from(max_khz)
}

fn cluster_cpus(cluster: &Cluster) -> Vec<u32> {
    (cluster.first_cpu..cluster.first_cpu + cluster.cpus).collect()
}

fn write_topology(
    board: &Board,
    cluster: &Cluster,
    cpu: u32,
    nr: u32,
    tree: &mut Tree,
) -> Result<(), SimError> {
    let dir = format!("{}/cpu{cpu}/topology", paths::CPU);
    // CPUs in the same DT cpu-map cluster (all of them on DynamIQ parts).
    let same_cluster: Vec<u32> = board
        .clusters
        .iter()
        .filter(|c| c.topology_cluster == cluster.topology_cluster)
        .flat_map(cluster_cpus)
        .collect();
    let core_id = same_cluster.iter().position(|c| *c == cpu).unwrap_or(0);
    let all = all_cpus(board);
    tree.line(&format!("{dir}/cluster_id"), cluster.topology_cluster)?;
    tree.line(&format!("{dir}/core_id"), core_id)?;
    tree.line(&format!("{dir}/package_id"), 0)?;
    tree.line(&format!("{dir}/physical_package_id"), 0)?;
    tree.line(&format!("{dir}/core_cpus"), cpu_mask(&[cpu], nr))?;
    tree.line(&format!("{dir}/core_cpus_list"), cpu)?;
    tree.line(&format!("{dir}/thread_siblings"), cpu_mask(&[cpu], nr))?;
    tree.line(&format!("{dir}/thread_siblings_list"), cpu)?;
    tree.line(&format!("{dir}/cluster_cpus"), cpu_mask(&same_cluster, nr))?;
    tree.line(&format!("{dir}/cluster_cpus_list"), cpu_list(&same_cluster))?;
    tree.line(&format!("{dir}/core_siblings"), cpu_mask(&all, nr))?;
    tree.line(&format!("{dir}/core_siblings_list"), cpu_list(&all))?;
    tree.line(&format!("{dir}/package_cpus"), cpu_mask(&all, nr))?;
    tree.line(&format!("{dir}/package_cpus_list"), cpu_list(&all))?;
    Ok(())
}

fn write_caches(
    board: &Board,
    cluster: &Cluster,
    cpu: u32,
    nr: u32,
    tree: &mut Tree,
) -> Result<(), SimError> {
    let own = [cpu];
    let all = all_cpus(board);
    let mut leaves: Vec<(u32, &str, Cache, &[u32])> = vec![
        (1, "Data", cluster.l1d, &own),
        (1, "Instruction", cluster.l1i, &own),
    ];
    if let Some(l2) = cluster.l2 {
        leaves.push((2, "Unified", l2, &own));
    }
    if let Some(l3) = board.l3 {
        leaves.push((3, "Unified", l3, &all));
    }
    for (index, (level, kind, cache, shared)) in leaves.into_iter().enumerate() {
        let dir = format!("{}/cpu{cpu}/cache/index{index}", paths::CPU);
        tree.line(&format!("{dir}/level"), level)?;
        tree.line(&format!("{dir}/type"), kind)?;
        tree.line(&format!("{dir}/size"), format!("{}K", cache.size_kb))?;
        tree.line(&format!("{dir}/ways_of_associativity"), cache.ways)?;
        tree.line(&format!("{dir}/coherency_line_size"), cache.line_bytes)?;
        tree.line(&format!("{dir}/number_of_sets"), cache.sets())?;
        tree.line(&format!("{dir}/shared_cpu_list"), cpu_list(shared))?;
        tree.line(&format!("{dir}/shared_cpu_map"), cpu_mask(shared, nr))?;
    }
    Ok(())
}

/// Per-state idle time: deeper states hold most of the idle time.
fn write_cpuidle(
    board: &Board,
    cluster: &Cluster,
    cpu: u32,
    tree: &mut Tree,
) -> Result<(), SimError> {
    let idle_us = board.uptime_s * 1_000_000 * IDLE_PERCENT / 100;
    let weights: Vec<u64> = (0..cluster.idle_states.len() as u64)
        .map(|k| 1 + 2 * k)
        .collect();
    let times = split(idle_us, &weights);
    for (k, (state, time_us)) in cluster.idle_states.iter().zip(times).enumerate() {
        let dir = format!("{}/cpu{cpu}/cpuidle/state{k}", paths::CPU);
        // Average stay: a few times the target residency, at least 500 us.
        let avg_stay_us =
            (u64::from(state.residency_us) * 4).max(500) + mix(&[u64::from(cpu), k as u64]) % 200;
        let usage = time_us / avg_stay_us;
        tree.line(&format!("{dir}/name"), state.name)?;
        tree.line(&format!("{dir}/desc"), state.desc)?;
        tree.line(&format!("{dir}/latency"), state.latency_us)?;
        tree.line(&format!("{dir}/residency"), state.residency_us)?;
        tree.line(&format!("{dir}/usage"), usage)?;
        tree.line(&format!("{dir}/time"), time_us)?;
        tree.line(&format!("{dir}/disable"), 0)?;
        tree.line(&format!("{dir}/above"), if k == 0 { 0 } else { usage / 40 })?;
        tree.line(&format!("{dir}/below"), if k == 0 { 0 } else { usage / 25 })?;
    }
    Ok(())
}

fn write_policy(board: &Board, cluster: &Cluster, tree: &mut Tree) -> Result<(), SimError> {
    let cf = &board.cpufreq;
    let dir = format!("{}/policy{}", paths::CPUFREQ, cluster.first_cpu);
    let freqs = cluster.freqs_khz;
    let min = freqs.first().copied().unwrap_or(0);
    let max = freqs.last().copied().unwrap_or(0);
    let cpus: String = cluster_cpus(cluster)
        .iter()
        .map(|c| format!("{c} "))
        .collect();
    let freq_list: String = freqs.iter().map(|f| format!("{f} ")).collect();
    let govs: String = cf.governors.iter().map(|g| format!("{g} ")).collect();
    tree.line(&format!("{dir}/affected_cpus"), &cpus)?;
    tree.line(&format!("{dir}/related_cpus"), &cpus)?;
    tree.line(&format!("{dir}/cpuinfo_min_freq"), min)?;
    tree.line(&format!("{dir}/cpuinfo_max_freq"), max)?;
    tree.line(&format!("{dir}/cpuinfo_cur_freq"), cluster.cur_khz)?;
    tree.line(
        &format!("{dir}/cpuinfo_transition_latency"),
        cf.transition_latency_ns,
    )?;
    tree.line(&format!("{dir}/scaling_available_frequencies"), freq_list)?;
    tree.line(&format!("{dir}/scaling_available_governors"), govs)?;
    tree.line(&format!("{dir}/scaling_governor"), cf.governor)?;
    tree.line(&format!("{dir}/scaling_cur_freq"), cluster.cur_khz)?;
    tree.line(&format!("{dir}/scaling_min_freq"), min)?;
    tree.line(&format!("{dir}/scaling_max_freq"), max)?;
    tree.line(&format!("{dir}/scaling_driver"), cf.driver)?;
    let setspeed = if cf.governor == "userspace" {
        cluster.cur_khz.to_string()
    } else {
        "<unsupported>".to_string()
    };
    tree.line(&format!("{dir}/scaling_setspeed"), setspeed)?;
    if cf.governor_per_policy {
        for (file, value) in cf.tunables {
            tree.line(&format!("{dir}/{}/{file}", cf.governor), value)?;
        }
    }
    write_stats(board, cluster, &dir, tree)
}

/// `stats/`: time per frequency adds up to the uptime; transitions are
/// mostly between neighbouring frequencies.
fn write_stats(
    board: &Board,
    cluster: &Cluster,
    dir: &str,
    tree: &mut Tree,
) -> Result<(), SimError> {
    let freqs = cluster.freqs_khz;
    let n = freqs.len() as u64;
    // 10 ms units (the kernel prints jiffies_64 converted to clock_t).
    let total = board.uptime_s * 100;
    let weights: Vec<u64> = (0..n).map(|i| (n - i) * (n - i) + 1).collect();
    let times = split(total, &weights);
    let mut time_in_state = String::new();
    for (f, t) in freqs.iter().zip(&times) {
        time_in_state.push_str(&format!("{f} {t}\n"));
    }
    let seed = u64::from(cluster.first_cpu);
    let count = |i: usize, j: usize| -> u64 {
        if i == j {
            return 0;
        }
        let distance = i.abs_diff(j) as u64;
        60 / (distance * distance) + mix(&[seed, i as u64, j as u64]) % 7
    };
    let mut table = String::from("   From  :    To\n         : ");
    for f in freqs {
        table.push_str(&format!("{f:9} "));
    }
    table.push('\n');
    let mut total_trans = 0;
    for (i, from) in freqs.iter().enumerate() {
        table.push_str(&format!("{from:9}: "));
        for j in 0..freqs.len() {
            let c = count(i, j);
            total_trans += c;
            table.push_str(&format!("{c:9} "));
        }
        table.push('\n');
    }
    tree.text(&format!("{dir}/stats/time_in_state"), time_in_state)?;
    tree.line(&format!("{dir}/stats/total_trans"), total_trans)?;
    tree.text(&format!("{dir}/stats/trans_table"), table)?;
    // Write-only in the kernel (mode 0200); empty here.
    tree.text(&format!("{dir}/stats/reset"), "")?;
    Ok(())
}
