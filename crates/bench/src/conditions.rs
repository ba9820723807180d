//! The conditions that move benchmark results, recorded with every run:
//! CPU model, kernel, governor and frequency per cluster (before and after
//! the run), turbo/boost, load average, and our own `nice`. Read through a
//! [`KernelFs`] — of the real root, since the benchmarks always run on the
//! host — and turned into warnings when they make results noisy.

use lever_kernel::{paths, KernelFs};
use serde::{Deserialize, Serialize};

/// One cpufreq cluster's clock at a moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterClock {
    /// `policy0`, or `cpus 0-1` without cpufreq.
    pub name: String,
    /// `scaling_governor`.
    pub governor: Option<String>,
    /// `scaling_cur_freq`.
    pub cur_khz: Option<u64>,
    /// `cpuinfo_max_freq`.
    pub max_khz: Option<u64>,
}

/// The CPU clock, and where it was read (Dhrystone's DMIPS/MHz divides by
/// it; a VM has no cpufreq but its `/proc/cpuinfo` says `cpu MHz`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// MHz.
    pub mhz: f64,
    /// `cpufreq scaling_cur_freq (policy0)`, `cpufreq cpuinfo_max_freq
    /// (policy0)` or `/proc/cpuinfo "cpu MHz"`.
    pub source: String,
}

/// What was true on the machine when (and after) the benchmarks ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// `model name` from `/proc/cpuinfo` (or `Hardware`/`CPU part` on Arm).
    pub cpu_model: Option<String>,
    /// Online CPUs.
    pub cpus: usize,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: Option<String>,
    /// 1-minute load average before the run.
    pub load_1m: Option<f64>,
    /// Our `nice` value.
    pub nice: Option<i32>,
    /// Turbo/boost: `Some(true)` when enabled (`cpufreq/boost` = 1 or
    /// `intel_pstate/no_turbo` = 0), `None` when the kernel does not say.
    pub boost: Option<bool>,
    /// Clocks before the run.
    pub clocks_before: Vec<ClusterClock>,
    /// The first cluster's clock (CPU 0's, or `/proc/cpuinfo`'s first
    /// `cpu MHz`); `None` when neither says.
    #[serde(default)]
    pub clock: Option<Clock>,
    /// Clocks after the run.
    pub clocks_after: Vec<ClusterClock>,
    /// Why the results may be noisy; empty when nothing was noticed.
    pub warnings: Vec<String>,
    /// The run's conditions as every Lever run records them (load before
    /// and during, every policy's clocks, thermal state, throttling,
    /// kernel, machine): what `lever bench compare` compares and judges
    /// by. Absent in reports of older Levers.
    #[serde(default)]
    pub run: Option<lever_conditions::Conditions>,
    /// The file system the file tests ran on (`--dir`, else the system's
    /// temporary directory); absent in reports of older Levers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<lever_measure::mounts::FileSystem>,
}

/// Clocks of every cluster now.
pub fn clocks(fs: &KernelFs) -> Vec<ClusterClock> {
    let Ok(topo) = lever_cpu::topology::read(fs) else {
        return Vec::new();
    };
    topo.clusters
        .iter()
        .map(|c| ClusterClock {
            name: c.name.clone(),
            governor: c.freq.as_ref().and_then(|f| f.governor.clone()),
            cur_khz: c.freq.as_ref().and_then(|f| f.cur_khz),
            max_khz: c.freq.as_ref().and_then(|f| f.cpuinfo_max_khz),
        })
        .collect()
}

impl Conditions {
    /// Read everything but the after-run clocks (see [`Conditions::finish`]).
    pub fn read(fs: &KernelFs) -> Conditions {
        let text = |p: &str| fs.read_optional(p).ok().flatten();
        let cpus = lever_cpu::topology::online_cpus(fs)
            .map(|c| c.len())
            .unwrap_or(0);
        let cpuinfo = text(&format!("{}/cpuinfo", paths::PROC));
        let clocks_before = clocks(fs);
        Conditions {
            cpu_model: cpuinfo.as_deref().and_then(cpu_model),
            clock: clock(&clocks_before, cpuinfo.as_deref()),
            cpus,
            kernel: text(&format!("{}/osrelease", paths::SYSCTL_KERNEL)).map(|t| t.trim().into()),
            load_1m: text(&format!("{}/loadavg", paths::PROC)).and_then(|t| load_1m(&t)),
            nice: Some(rustix::process::getpriority_process(None).unwrap_or(0)),
            boost: boost(fs),
            clocks_before,
            clocks_after: Vec::new(),
            warnings: Vec::new(),
            run: None,
            scratch: None,
        }
    }

    /// Record the clocks after the run and the run's conditions, and
    /// derive the warnings.
    pub fn finish(&mut self, fs: &KernelFs, run: Option<lever_conditions::Conditions>) {
        self.clocks_after = clocks(fs);
        self.run = run;
        self.warnings = self.noise();
    }

    /// What makes these results noisy.
    pub fn noise(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(run) = &self.run {
            // The run's own record judges load as `compare` does: the
            // average and tasks runnable then, and runnable tasks during.
            for d in run.disturbances().into_iter().filter(|d| d.kind == "load") {
                w.push(format!(
                    "the machine was busy ({}); results will be slower and wider",
                    d.text
                ));
            }
        } else if let Some(load) = self.load_1m {
            // Anything above a quarter of a CPU busy elsewhere competes
            // with the benchmark's own threads.
            if load > 0.25 * self.cpus.max(1) as f64 {
                w.push(format!(
                    "the machine was busy: load average {load:.2} on {} CPUs; results will be slower and wider",
                    self.cpus
                ));
            }
        }
        if let Some(n) = self.nice.filter(|&n| n != 0) {
            w.push(format!("running at nice {n}"));
        }
        for (b, a) in self.clocks_before.iter().zip(&self.clocks_after) {
            if b.cur_khz != a.cur_khz && b.cur_khz.is_some() && a.cur_khz.is_some() {
                w.push(format!(
                    "{}: frequency changed during the run ({} → {} kHz)",
                    b.name,
                    b.cur_khz.unwrap_or(0),
                    a.cur_khz.unwrap_or(0)
                ));
            }
            if let Some(g) = b.governor.as_deref().filter(|g| *g != "performance") {
                w.push(format!(
                    "{}: governor {g} may change the clock under the benchmark; `performance` pins it",
                    b.name
                ));
            }
        }
        // What the run's record adds: load during the run and throttling
        // (its load before the run is the rule above).
        for d in self.run.iter().flat_map(|r| r.disturbances()) {
            if !(d.kind == "load" && d.phase == lever_conditions::Phase::Before) {
                w.push(d.text);
            }
        }
        w
    }
}

/// The CPU model from `/proc/cpuinfo`:
/// `model name\t: AMD EPYC` (x86) or `Hardware\t: Qualcomm QCS6490` (Arm; `\t` is a tab).
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "Processor", "cpu model"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

/// cpufreq's current clock of the first cluster, else its maximum, else
/// `/proc/cpuinfo`'s first `cpu MHz\t\t: 2994.374` line (x86 and VMs).
fn clock(clocks: &[ClusterClock], cpuinfo: Option<&str>) -> Option<Clock> {
    let first = clocks.first();
    let khz = |k: Option<u64>, file: &str| {
        Some(Clock {
            mhz: k? as f64 / 1000.0,
            source: format!("cpufreq {file} ({})", first?.name),
        })
    };
    khz(first.and_then(|c| c.cur_khz), "scaling_cur_freq")
        .or_else(|| khz(first.and_then(|c| c.max_khz), "cpuinfo_max_freq"))
        .or_else(|| {
            let mhz = cpuinfo?.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "cpu MHz").then(|| v.trim().parse::<f64>().ok())?
            })?;
            Some(Clock {
                mhz,
                source: "/proc/cpuinfo \"cpu MHz\"".into(),
            })
        })
        .filter(|c| c.mhz > 0.0)
}

/// `/proc/loadavg`: `4.43 3.05 1.95 6/125 21775` → 4.43.
fn load_1m(loadavg: &str) -> Option<f64> {
    loadavg.split_whitespace().next()?.parse().ok()
}

fn boost(fs: &KernelFs) -> Option<bool> {
    let flag = |p: &str| fs.read_optional(p).ok().flatten().map(|t| t.trim() == "1");
    flag(&format!("{}/boost", paths::CPUFREQ))
        .or_else(|| flag(&format!("{}/intel_pstate/no_turbo", paths::CPU)).map(|no| !no))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    #[test]
    fn reads_a_fake_tree_and_warns_on_load_and_clock_changes() {
        let t = FakeTree::with(&[
            ("/proc/cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC\n"),
            ("/proc/sys/kernel/osrelease", "6.1.0-31-amd64\n"),
            ("/proc/loadavg", "4.43 3.05 1.95 6/125 21775\n"),
            ("/sys/devices/system/cpu/online", "0-1\n"),
            ("/sys/devices/system/cpu/cpufreq/boost", "1\n"),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/related_cpus",
                "0 1\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
                "schedutil\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
                "1000000\n",
            ),
        ]);
        let mut c = Conditions::read(t.fs());
        assert_eq!(c.cpu_model.as_deref(), Some("AMD EPYC"));
        assert_eq!(c.kernel.as_deref(), Some("6.1.0-31-amd64"));
        assert_eq!((c.cpus, c.load_1m, c.boost), (2, Some(4.43), Some(true)));
        assert_eq!(c.clocks_before[0].cur_khz, Some(1_000_000));
        let clock = c.clock.clone().unwrap();
        assert_eq!(clock.mhz, 1000.0);
        assert_eq!(clock.source, "cpufreq scaling_cur_freq (policy0)");
        t.node(
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
            "2000000\n",
        );
        c.finish(t.fs(), None);
        let all = c.warnings.join("\n");
        assert!(all.contains("load average 4.43"), "{all}");
        assert!(all.contains("1000000 → 2000000"), "{all}");
        assert!(all.contains("governor schedutil"), "{all}");
    }

    #[test]
    fn a_quiet_machine_has_no_warnings_and_missing_files_are_none() {
        let t = FakeTree::with(&[("/proc/loadavg", "0.01 0.02 0.00 1/90 1\n")]);
        let mut c = Conditions::read(t.fs());
        c.nice = Some(0);
        c.finish(t.fs(), None);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!((c.cpu_model, c.kernel, c.boost), (None, None, None));
        assert_eq!(c.clock, None, "no cpufreq, no cpuinfo: not available");
        let vm = "processor\t: 0\ncpu MHz\t\t: 2994.374\nprocessor\t: 1\ncpu MHz\t\t: 1000.000\n";
        let clock = clock(&[], Some(vm)).unwrap();
        assert_eq!(clock.mhz, 2994.374);
        assert_eq!(clock.source, "/proc/cpuinfo \"cpu MHz\"");
        assert_eq!(
            cpu_model("Hardware\t: Qualcomm QCS6490\n").as_deref(),
            Some("Qualcomm QCS6490")
        );
    }
}
