//! RT readiness: seed 000 §3.6's presetting and seed 001's "Tune the RT
//! kernel" steps as checks against a kernel tree. Each check reads one
//! fact, says what the guides recommend, passes, warns or fails, and says
//! how to fix it.

use crate::error::LatencyError;
use lever_kernel::{format_cpu_list, parse_cpu_list, paths, KernelFs};
use serde::Serialize;

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// As the guides recommend.
    Pass,
    /// Works, but latency will suffer.
    Warn,
    /// Against the guides.
    Fail,
    /// The node is not there; nothing to judge.
    Unknown,
}

/// One check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Short name, e.g. `isolcpus`.
    pub name: &'static str,
    /// What the tree holds now.
    pub current: String,
    /// What seed 000 §3.6 / seed 001 recommend.
    pub recommended: String,
    /// The verdict.
    pub verdict: Verdict,
    /// How to get there (empty on a pass).
    pub fix: String,
}

/// All checks for a set of RT CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RtReport {
    /// The CPUs judged as real-time.
    pub rt_cpus: Vec<u32>,
    /// Where that set came from.
    pub rt_cpus_from: String,
    /// Each check, in the guides' order.
    pub checks: Vec<Check>,
}

impl RtReport {
    /// How many checks have this verdict.
    pub fn count(&self, v: Verdict) -> usize {
        self.checks.iter().filter(|c| c.verdict == v).count()
    }
}

/// A fix that writes `value` to every file the globs match, as a shell
/// line that runs as printed: a redirect to a glob matching several files
/// is an error in bash ("ambiguous redirect"), and `cpu{1}` is no brace
/// expansion, so each CPU's path is spelled out and looped over.
fn echo_each(value: &str, globs: &[String]) -> String {
    format!(
        "for f in {}; do echo {value} > \"$f\"; done",
        globs.join(" ")
    )
}

/// `isolcpus=managed_irq,domain,1-3` → the CPUs (flags dropped).
fn cmdline_cpus(cmdline: &str, key: &str) -> Option<Vec<u32>> {
    let value = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))?;
    let list: Vec<&str> = value
        .split(',')
        .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    parse_cpu_list(&list.join(","))
}

// A hex CPU mask as sysfs writes it (`ff`, `00000000,000000ff`): one
// parser for every cpumask, in lever-kernel.
use lever_kernel::parse_cpu_mask as mask_cpus;

fn covers(set: &[u32], rt: &[u32]) -> bool {
    rt.iter().all(|c| set.contains(c))
}

fn overlap(set: &[u32], rt: &[u32]) -> Vec<u32> {
    rt.iter().copied().filter(|c| set.contains(c)).collect()
}

fn verdict(
    name: &'static str,
    current: String,
    recommended: String,
    ok: Option<bool>,
    bad: Verdict,
    fix: String,
) -> Check {
    let verdict = match ok {
        Some(true) => Verdict::Pass,
        Some(false) => bad,
        None => Verdict::Unknown,
    };
    Check {
        name,
        current,
        recommended,
        verdict,
        fix: if verdict == Verdict::Pass {
            String::new()
        } else {
            fix
        },
    }
}

/// Run every check under `fs`. `rt_cpus` defaults to `isolcpus` from the
/// kernel command line, else the last online CPU.
pub fn check(fs: &KernelFs, rt_cpus: Option<&[u32]>) -> Result<RtReport, LatencyError> {
    let online = crate::run::online_cpus(fs)?;
    let cmdline = fs.read("/proc/cmdline").ok();
    let cmd = cmdline.clone().unwrap_or_default();
    for &cpu in rt_cpus.unwrap_or_default() {
        if !online.contains(&cpu) {
            return Err(LatencyError::NoSuchCpu {
                option: "--rt-cpus",
                cpu,
                online: format_cpu_list(&online),
            });
        }
    }
    let (rt, from) = match (rt_cpus, cmdline_cpus(&cmd, "isolcpus")) {
        (Some(r), _) => (r.to_vec(), "--rt-cpus".to_string()),
        (None, Some(iso)) => (iso, "isolcpus on the kernel command line".to_string()),
        (None, None) => (
            online.last().map(|c| vec![*c]).unwrap_or_default(),
            "the last online CPU (no --rt-cpus, no isolcpus)".to_string(),
        ),
    };
    let rt_list = format_cpu_list(&rt);
    let housekeeping: Vec<u32> = online.iter().copied().filter(|c| !rt.contains(c)).collect();
    let hk_list = format_cpu_list(&housekeeping);
    let mut checks = Vec::new();

    // PREEMPT_RT: /sys/kernel/realtime (RT kernels) or `PREEMPT_RT` / `PREEMPT RT` in the version.
    let realtime = fs
        .read("/sys/kernel/realtime")
        .ok()
        .map(|v| v.trim() == "1");
    let version = fs.read("/proc/version").ok();
    let rt_kernel = realtime.or_else(|| {
        version
            .as_ref()
            .map(|v| v.contains("PREEMPT_RT") || v.contains("PREEMPT RT"))
    });
    checks.push(verdict(
        "preempt_rt",
        match (&realtime, &version) {
            (Some(true), _) => "/sys/kernel/realtime = 1".into(),
            (_, Some(v)) => v.trim().to_string(),
            _ => "unknown".into(),
        },
        "CONFIG_PREEMPT_RT=y (uname -v shows PREEMPT_RT)".into(),
        rt_kernel,
        Verdict::Fail,
        "build the RT kernel recipe (linux-qcom-*-rt, CONFIG_PREEMPT_RT=y) and boot it".into(),
    ));

    for (key, why) in [
        (
            "isolcpus",
            "keeps the scheduler's other tasks off the RT cores",
        ),
        ("nohz_full", "stops the tick on the RT cores"),
        ("rcu_nocbs", "moves RCU callbacks off the RT cores"),
    ] {
        let cur = cmdline_cpus(&cmd, key);
        checks.push(verdict(
            key,
            match (&cmdline, &cur) {
                (None, _) => "/proc/cmdline unreadable".into(),
                (_, Some(c)) => format!("{key}={}", format_cpu_list(c)),
                (_, None) => "not set".into(),
            },
            format!("{key}={rt_list} ({why})"),
            cmdline
                .as_ref()
                .map(|_| cur.as_ref().is_some_and(|c| covers(c, &rt))),
            Verdict::Fail,
            format!("add {key}={rt_list} to the kernel command line (KERNEL_CMDLINE_EXTRA)"),
        ));
    }
    let irqaff = cmdline_cpus(&cmd, "irqaffinity");
    checks.push(verdict(
        "irqaffinity",
        match (&cmdline, &irqaff) {
            (None, _) => "/proc/cmdline unreadable".into(),
            (_, Some(c)) => format!("irqaffinity={}", format_cpu_list(c)),
            (_, None) => "not set (IRQs may land on every CPU)".into(),
        },
        format!("irqaffinity={hk_list} (housekeeping CPUs only)"),
        cmdline
            .as_ref()
            .map(|_| irqaff.as_ref().is_some_and(|c| overlap(c, &rt).is_empty())),
        Verdict::Fail,
        format!("add irqaffinity={hk_list} to the kernel command line"),
    ));

    // Every IRQ's affinity (seed 001 step 5).
    let irqs: Vec<String> = fs
        .list_dir("/proc/irq")
        .map(|d| d.into_iter().filter(|n| n.parse::<u32>().is_ok()).collect())
        .unwrap_or_default();
    let mut on_rt = Vec::new();
    for irq in &irqs {
        let list = fs
            .read(&format!("/proc/irq/{irq}/smp_affinity_list"))
            .ok()
            .and_then(|l| parse_cpu_list(l.trim()));
        if list.is_some_and(|l| !overlap(&l, &rt).is_empty()) {
            on_rt.push(irq.clone());
        }
    }
    checks.push(verdict(
        "irq_affinity",
        if irqs.is_empty() {
            "no /proc/irq".into()
        } else if on_rt.is_empty() {
            format!("all {} IRQs off CPU {rt_list}", irqs.len())
        } else {
            format!(
                "{} of {} IRQs may run on CPU {rt_list}: {}",
                on_rt.len(),
                irqs.len(),
                on_rt.join(" ")
            )
        },
        format!("every /proc/irq/*/smp_affinity on CPUs {hk_list}"),
        (!irqs.is_empty()).then_some(on_rt.is_empty()),
        Verdict::Warn,
        format!("for irq in /proc/irq/[0-9]*; do echo {hk_list} > $irq/smp_affinity_list; done"),
    ));

    // Governor and cpuidle per RT CPU.
    let mut govs = Vec::new();
    let mut idle_on = Vec::new();
    let mut idle_seen = false;
    for &cpu in &rt {
        let base = format!("{}/cpu{cpu}", paths::CPU);
        if let Ok(g) = fs.read(&format!("{base}/cpufreq/scaling_governor")) {
            govs.push((cpu, g.trim().to_string()));
        }
        for state in fs.list_dir(&format!("{base}/cpuidle")).unwrap_or_default() {
            if let Ok(d) = fs.read(&format!("{base}/cpuidle/{state}/disable")) {
                idle_seen = true;
                if d.trim() == "0" {
                    idle_on.push(format!("cpu{cpu}/{state}"));
                }
            }
        }
    }
    checks.push(verdict(
        "governor",
        if govs.is_empty() {
            "no cpufreq".into()
        } else {
            govs.iter()
                .map(|(c, g)| format!("cpu{c}={g}"))
                .collect::<Vec<_>>()
                .join(" ")
        },
        "performance on the RT CPUs".into(),
        (!govs.is_empty()).then(|| govs.iter().all(|(_, g)| g == "performance")),
        Verdict::Warn,
        echo_each(
            "performance",
            &["/sys/devices/system/cpu/cpufreq/policy*/scaling_governor".to_string()],
        ),
    ));
    checks.push(verdict(
        "cpuidle",
        if !idle_seen {
            "no cpuidle states".into()
        } else if idle_on.is_empty() {
            "every state disabled on the RT CPUs".into()
        } else {
            format!("enabled: {}", idle_on.join(" "))
        },
        "every cpuidle state disabled on the RT CPUs (idle exit adds to wake-up latency, seed 004)"
            .into(),
        idle_seen.then_some(idle_on.is_empty()),
        Verdict::Warn,
        format!(
            "{} (or hold /dev/cpu_dma_latency at 0, as lever latency does)",
            echo_each(
                "1",
                &rt.iter()
                    .map(|c| format!("/sys/devices/system/cpu/cpu{c}/cpuidle/state*/disable"))
                    .collect::<Vec<_>>()
            )
        ),
    ));

    let sysctl = |name: &str| {
        fs.read(&format!("{}/{name}", paths::SYSCTL_KERNEL))
            .ok()
            .map(|v| v.trim().to_string())
    };
    let runtime = sysctl("sched_rt_runtime_us");
    checks.push(verdict(
        "sched_rt_runtime_us",
        runtime.clone().unwrap_or_else(|| "missing".into()),
        "-1 (RT throttling off)".into(),
        runtime.as_ref().map(|v| v == "-1"),
        Verdict::Warn,
        "echo -1 > /proc/sys/kernel/sched_rt_runtime_us".into(),
    ));
    let migration = sysctl("timer_migration");
    checks.push(verdict(
        "timer_migration",
        migration.clone().unwrap_or_else(|| "missing".into()),
        "0".into(),
        migration.as_ref().map(|v| v == "0"),
        Verdict::Warn,
        "echo 0 > /proc/sys/kernel/timer_migration".into(),
    ));

    // Unbound workqueues: the global mask and each queue's own.
    let wq_dir = "/sys/devices/virtual/workqueue";
    let mut wq_bad = Vec::new();
    let mut wq_seen = 0;
    let mut masks = vec![("cpumask".to_string(), format!("{wq_dir}/cpumask"))];
    for q in fs.list_dir(wq_dir).unwrap_or_default() {
        masks.push((format!("{q}/cpumask"), format!("{wq_dir}/{q}/cpumask")));
    }
    for (label, path) in masks {
        if let Some(cpus) = fs.read(&path).ok().and_then(|m| mask_cpus(&m)) {
            wq_seen += 1;
            if !overlap(&cpus, &rt).is_empty() {
                wq_bad.push(label);
            }
        }
    }
    let hk_mask: u64 = housekeeping
        .iter()
        .filter(|c| **c < 64)
        .map(|c| 1u64 << c)
        .sum();
    checks.push(verdict(
        "workqueue_cpumask",
        if wq_seen == 0 {
            "no workqueue cpumask".into()
        } else if wq_bad.is_empty() {
            format!("{wq_seen} masks, none on CPU {rt_list}")
        } else {
            format!("on CPU {rt_list}: {}", wq_bad.join(" "))
        },
        format!("{hk_mask:X} (housekeeping CPUs {hk_list})"),
        (wq_seen > 0).then_some(wq_bad.is_empty()),
        Verdict::Warn,
        format!(
            "for wq in {wq_dir}/*; do [ -w $wq/cpumask ] && echo {hk_mask:X} > $wq/cpumask; done"
        ),
    ));

    let dma = fs.exists(paths::CPU_DMA_LATENCY);
    checks.push(verdict(
        "cpu_dma_latency",
        if dma {
            "present".into()
        } else {
            "missing".into()
        },
        "present, held at 0 while measuring (lever latency does, unless --laptop)".into(),
        Some(dma),
        Verdict::Warn,
        "enable CONFIG_PM_QOS / CONFIG_CPU_IDLE so /dev/cpu_dma_latency exists".into(),
    ));
    Ok(RtReport {
        rt_cpus: rt,
        rt_cpus_from: from,
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_and_masks() {
        let cmd = "ro rcu_nocbs=1-3 isolcpus=managed_irq,domain,1-3 irqaffinity=4-7 nohz_full=1-3";
        assert_eq!(cmdline_cpus(cmd, "isolcpus"), Some(vec![1, 2, 3]));
        assert_eq!(cmdline_cpus(cmd, "irqaffinity"), Some(vec![4, 5, 6, 7]));
        assert_eq!(cmdline_cpus(cmd, "nohz"), None);
        assert_eq!(mask_cpus("E0"), Some(vec![5, 6, 7]));
        assert_eq!(mask_cpus("00000000,00000081"), Some(vec![0, 7]));
        assert_eq!(mask_cpus("zz"), None);
    }
}
