//! The rest of procfs and `/dev`: version, cmdline, cpuinfo, stat, uptime,
//! diskstats, pressure, sysctls, the device tree's identity, and
//! `/dev/cpu_dma_latency`.
//!
//! `/proc/stat` and `/proc/uptime` derive from the board's uptime and the
//! same idle share that cpuidle uses, so they agree with each other.
//! Example lines:
//!
//! ```text
//! cpu  25920 1440 12960 2534400 2880 1440 1440 0 0 0
//!    8       0 sda 18234 2279 1482352 9117 6120 1530 402816 12240 0 10180 21357 0 0 0 0 612 306
//! ```

use lever_kernel::paths;

use super::cpu::IDLE_PERCENT;
use super::mem::MemFacts;
use super::{all_cpus, mix};
use crate::model::{Arch, Board};
use crate::tree::Tree;
use crate::SimError;

/// `PM_QOS_CPU_LATENCY_DEFAULT_VALUE`: what reading the device returns
/// when nobody holds a request (2000 s, in us).
const CPU_DMA_LATENCY_DEFAULT_US: i32 = 2_000_000_000;

pub(crate) fn write(board: &Board, mem: &MemFacts, tree: &mut Tree) -> Result<(), SimError> {
    tree.line("/proc/version", board.proc_version)?;
    tree.line("/proc/cmdline", board.cmdline)?;
    tree.text("/proc/cpuinfo", cpuinfo(board))?;
    tree.text("/proc/stat", stat(board))?;
    let nr = all_cpus(board).len() as u64;
    let idle_cs = board.uptime_s * 100 * nr * IDLE_PERCENT / 100;
    tree.line(
        "/proc/uptime",
        format!(
            "{}.00 {}.{:02}",
            board.uptime_s,
            idle_cs / 100,
            idle_cs % 100
        ),
    )?;
    tree.text("/proc/diskstats", diskstats(board))?;
    tree.line("/proc/loadavg", loadavg(board))?;
    if board.config.psi {
        let up = board.uptime_s;
        tree.text(
            "/proc/pressure/cpu",
            format!(
                "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                up * 130
            ),
        )?;
        tree.text(
            "/proc/pressure/io",
            format!(
                "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={}\n",
                up * 90,
                up * 60
            ),
        )?;
    }
    write_sysctls(board, mem, tree)?;
    write_device_tree(board, tree)?;
    // A regular file standing in for the PM QoS character device; it holds
    // the binary s32 a read() of the real device returns (little-endian,
    // as on these ARM boards).
    tree.bytes(
        paths::CPU_DMA_LATENCY,
        &CPU_DMA_LATENCY_DEFAULT_US.to_le_bytes(),
    )?;
    Ok(())
}

fn write_sysctls(board: &Board, mem: &MemFacts, tree: &mut Tree) -> Result<(), SimError> {
    let k = paths::SYSCTL_KERNEL;
    if board.config.uclamp {
        // Kernel defaults (SCHED_CAPACITY_SCALE); seed 000 §6.1.
        tree.line(&format!("{k}/sched_util_clamp_min"), 1024)?;
        tree.line(&format!("{k}/sched_util_clamp_max"), 1024)?;
        tree.line(&format!("{k}/sched_util_clamp_min_rt_default"), 1024)?;
    }
    // Kernel defaults; seed 001 RT tuning changes these.
    tree.line(&format!("{k}/sched_rt_runtime_us"), 950_000)?;
    tree.line(&format!("{k}/sched_rt_period_us"), 1_000_000)?;
    tree.line(&format!("{k}/timer_migration"), 1)?;
    tree.line(&format!("{k}/sched_schedstats"), 0)?;
    let release = board.proc_version.split_whitespace().nth(2).unwrap_or("");
    tree.line(&format!("{k}/osrelease"), release)?;

    let v = paths::SYSCTL_VM;
    tree.line(&format!("{v}/swappiness"), board.vm.swappiness)?;
    // Kernel defaults; seed 000 §5.3 and §6.5 describe them.
    tree.line(&format!("{v}/compaction_proactiveness"), 20)?;
    tree.line(&format!("{v}/watermark_scale_factor"), 10)?;
    tree.line(&format!("{v}/watermark_boost_factor"), 15_000)?;
    tree.line(&format!("{v}/min_free_kbytes"), mem.min_free_kbytes)?;
    tree.line(&format!("{v}/extfrag_threshold"), 500)?;
    tree.line(&format!("{v}/page-cluster"), board.vm.page_cluster)?;
    tree.line(&format!("{v}/dirty_ratio"), 20)?;
    tree.line(&format!("{v}/dirty_background_ratio"), 10)?;
    tree.line(&format!("{v}/vfs_cache_pressure"), 100)?;
    tree.line(&format!("{v}/overcommit_memory"), 0)?;
    tree.line(&format!("{v}/overcommit_ratio"), 50)?;
    Ok(())
}

/// `/proc/device-tree` is a symlink to `/sys/firmware/devicetree/base`,
/// relative here so it stays inside the simulated root. String
/// properties are NUL-terminated; `compatible` is a NUL-separated list.
fn write_device_tree(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    let base = "/sys/firmware/devicetree/base";
    tree.text(&format!("{base}/model"), format!("{}\0", board.dt_model))?;
    let compatible: String = board
        .dt_compatible
        .iter()
        .map(|c| format!("{c}\0"))
        .collect();
    tree.text(&format!("{base}/compatible"), compatible)?;
    tree.symlink(paths::DEVICE_TREE, "../sys/firmware/devicetree/base")?;
    Ok(())
}

/// arm64: one block per CPU. arm32: `model name` per CPU and a
/// `Hardware`/`Revision`/`Serial` trailer.
fn cpuinfo(board: &Board) -> String {
    let mut out = String::new();
    for cluster in board.clusters {
        let m = cluster.midr;
        for cpu in cluster.first_cpu..cluster.first_cpu + cluster.cpus {
            out.push_str(&format!("processor\t: {cpu}\n"));
            let (bogomips, features) = match &board.arch {
                Arch::Arm64 { bogomips, features } => (bogomips, features),
                Arch::Arm32 {
                    bogomips, features, ..
                } => {
                    out.push_str(&format!(
                        "model name\t: ARMv7 Processor rev {} (v7l)\n",
                        m.revision
                    ));
                    (bogomips, features)
                }
            };
            out.push_str(&format!("BogoMIPS\t: {bogomips}\n"));
            out.push_str(&format!("Features\t: {features}\n"));
            out.push_str(&format!("CPU implementer\t: 0x{:02x}\n", m.implementer));
            out.push_str(&format!("CPU architecture: {}\n", m.architecture));
            out.push_str(&format!("CPU variant\t: 0x{:x}\n", m.variant));
            out.push_str(&format!("CPU part\t: 0x{:03x}\n", m.part));
            out.push_str(&format!("CPU revision\t: {}\n\n", m.revision));
        }
    }
    if let Arch::Arm32 { hardware, .. } = &board.arch {
        out.push_str(&format!(
            "Hardware\t: {hardware}\nRevision\t: 0000\nSerial\t\t: 0000000000000000\n"
        ));
    }
    out
}

/// `/proc/stat` in USER_HZ (100) ticks.
fn stat(board: &Board) -> String {
    let cpus = all_cpus(board);
    let per_cpu_ticks = board.uptime_s * 100;
    let mut rows = Vec::new();
    for &cpu in &cpus {
        let idle = per_cpu_ticks * IDLE_PERCENT / 100;
        let busy = per_cpu_ticks - idle;
        let jitter = mix(&[u64::from(cpu), 1]) % (busy / 20 + 1);
        let iowait = busy / 12;
        let irq = busy / 24;
        let softirq = busy / 24;
        let nice = busy / 24;
        let system = busy * 3 / 10 + jitter;
        let user = busy - iowait - irq - softirq - nice - system;
        rows.push([user, nice, system, idle, iowait, irq, softirq, 0, 0, 0]);
    }
    let mut total = [0u64; 10];
    for r in &rows {
        for (t, v) in total.iter_mut().zip(r) {
            *t += v;
        }
    }
    let fmt = |vals: &[u64; 10]| {
        vals.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = format!("cpu  {}\n", fmt(&total));
    for (cpu, r) in cpus.iter().zip(&rows) {
        out.push_str(&format!("cpu{cpu} {}\n", fmt(r)));
    }
    let up = board.uptime_s;
    let irqs: Vec<u64> = (0..16u64).map(|i| mix(&[up, i]) % (up * 40 + 1)).collect();
    let irq_total: u64 = irqs.iter().sum();
    let irq_list: Vec<String> = irqs.iter().map(u64::to_string).collect();
    out.push_str(&format!("intr {irq_total} {}\n", irq_list.join(" ")));
    out.push_str(&format!("ctxt {}\n", up * 2_150 * cpus.len() as u64));
    // 2025-01-14 10:00:00 UTC: a fixed boot time, not the host clock.
    out.push_str("btime 1736848800\n");
    out.push_str(&format!("processes {}\n", 900 + up / 4));
    out.push_str("procs_running 1\nprocs_blocked 0\n");
    let soft: Vec<u64> = (0..10u64)
        .map(|i| mix(&[up, 100 + i]) % (up * 20 + 1))
        .collect();
    let soft_total: u64 = soft.iter().sum();
    let soft_list: Vec<String> = soft.iter().map(u64::to_string).collect();
    out.push_str(&format!("softirq {soft_total} {}\n", soft_list.join(" ")));
    out
}

/// `/proc/loadavg` (`%lu.%02lu %lu.%02lu %lu.%02lu %u/%d %d`), consistent
/// with `/proc/stat`: after an hour at the same busy share every average
/// is the CPUs' busy time (`nr × (100 − IDLE_PERCENT) %`), one task
/// running (the reader), the last pid that of the last fork
/// (`processes`). The task count is plausible, not measured.
fn loadavg(board: &Board) -> String {
    let nr = all_cpus(board).len() as u64;
    let centi = nr * (100 - IDLE_PERCENT);
    let avg = format!("{}.{:02}", centi / 100, centi % 100);
    let tasks = 180 + 30 * nr;
    let last_pid = 900 + board.uptime_s / 4;
    format!("{avg} {avg} {avg} 1/{tasks} {last_pid}")
}

/// `diskstats_show()`: `%4d %7d %s` then 17 counters (20 fields).
fn diskstats(board: &Board) -> String {
    let mut out = String::new();
    for d in board.disks {
        let reads_merged = d.reads / 8;
        let read_ms = d.reads / 2;
        let writes_merged = d.writes / 4;
        let write_ms = d.writes * 2;
        let io_ticks = read_ms + write_ms / 2;
        let in_queue = read_ms + write_ms;
        let flushes = d.writes / 10;
        let flush_ms = flushes / 2;
        out.push_str(&format!(
            "{:4} {:7} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
            d.major,
            d.minor,
            d.name,
            d.reads,
            reads_merged,
            d.sectors_read,
            read_ms,
            d.writes,
            writes_merged,
            d.sectors_written,
            write_ms,
            0,
            io_ticks,
            in_queue,
            0,
            0,
            0,
            0,
            flushes,
            flush_ms
        ));
    }
    out
}
