//! Reading a run's conditions ([`lever_conditions::Conditions`]) off the
//! kernel: the fixed facts once, a [`Snapshot`] before the run, one every
//! interval while it runs (on a thread of its own, see [`Recorder`]) and
//! one after.
//!
//! Each snapshot reads `/proc/loadavg`, every cpufreq policy's five files
//! and every thermal zone's `temp` and cooling device's `cur_state`: a
//! few dozen small reads, well under a millisecond on a board, so a
//! sample a second costs a benchmark less than 0.1 % of one CPU.
//!
//! ```text
//! /proc/loadavg     0.42 0.31 0.20 2/183 4121     (1, 5, 15 min; runnable/tasks; last pid)
//! /sys/devices/system/cpu/isolated    6-7         (empty line: none)
//! ```

use crate::thermal::{no_zones_reason, Thermal};
use lever_conditions::{Avail, Conditions, Fixed, Load, Machine, Policy, Snapshot, ThermalState};
use lever_kernel::{paths, KernelFs};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `/proc/loadavg`: `0.42 0.31 0.20 2/183 4121`.
pub fn parse_loadavg(text: &str) -> Option<Load> {
    let mut w = text.split_whitespace();
    let mut f = || w.next()?.parse::<f64>().ok();
    let (load_1m, load_5m, load_15m) = (f()?, f()?, f()?);
    let (runnable, tasks) = text.split_whitespace().nth(3)?.split_once('/')?;
    Some(Load {
        load_1m,
        load_5m,
        load_15m,
        runnable: runnable.parse().ok()?,
        tasks: tasks.parse().ok()?,
    })
}

fn text(fs: &KernelFs, path: &str) -> Result<String, String> {
    match fs.read(path) {
        Ok(t) => Ok(t.trim().to_string()),
        Err(e) if e.is_missing() => Err(format!("no {path}")),
        Err(e) => Err(e.to_string()),
    }
}

fn avail<T>(r: Result<T, String>) -> Avail<T> {
    match r {
        Ok(v) => Avail::Value(v),
        Err(why) => Avail::Unavailable(why),
    }
}

/// `/proc/loadavg` now.
pub fn read_load(fs: &KernelFs) -> Avail<Load> {
    let path = format!("{}/loadavg", paths::PROC);
    avail(text(fs, &path).and_then(|t| {
        parse_loadavg(&t)
            .ok_or_else(|| format!("{path}: cannot parse {t:?} as `L1 L5 L15 R/T PID`"))
    }))
}

/// Reads of `/proc/loadavg` before a run ([`read_load_settled`]).
pub const SETTLE_READS: usize = 5;

/// Time between two of them.
pub const SETTLE_EVERY: Duration = Duration::from_millis(25);

/// `/proc/loadavg` before a run, its runnable count the median of
/// [`SETTLE_READS`] reads [`SETTLE_EVERY`] apart (about 0.1 s): one read
/// is one instant, and right after another process ends the kernel's
/// workers free its memory for a moment — every one of four back-to-back
/// `lever bench` runs started from a shell read "1 other task runnable"
/// once, and their 1-minute average (the previous run's) made each
/// "loaded before the run", while 99 of 100 reads on the idle machine
/// found the reader alone. A competitor that keeps running shows in most
/// reads. The averages are the last read's. On a tree that is not the
/// running system (`--root`), one read: the file does not change.
pub fn read_load_settled(fs: &KernelFs) -> Avail<Load> {
    let first = read_load(fs);
    if !fs.is_system() {
        return first;
    }
    let Avail::Value(first) = first else {
        return first;
    };
    let mut reads = vec![first];
    for _ in 1..SETTLE_READS {
        std::thread::sleep(SETTLE_EVERY);
        if let Avail::Value(l) = read_load(fs) {
            reads.push(l);
        }
    }
    Avail::Value(settle(reads).expect("at least the first read"))
}

/// The last of `reads` with the median runnable count of all; `None` for
/// none.
fn settle(mut reads: Vec<Load>) -> Option<Load> {
    let mut runnable: Vec<u32> = reads.iter().map(|l| l.runnable).collect();
    runnable.sort_unstable();
    let median = *runnable.get(runnable.len() / 2)?;
    let last = reads.pop()?;
    Some(Load {
        runnable: median,
        ..last
    })
}

/// Every cpufreq policy now.
pub fn read_cpufreq(fs: &KernelFs) -> Avail<Vec<Policy>> {
    let names = match fs.list_dir(paths::CPUFREQ) {
        Ok(n) => n,
        Err(e) if e.is_missing() => {
            return Avail::Unavailable(format!(
                "no {}: this kernel has no cpufreq driver for these CPUs (usual in a VM)",
                paths::CPUFREQ
            ))
        }
        Err(e) => return Avail::Unavailable(e.to_string()),
    };
    let policies: Vec<Policy> = names
        .into_iter()
        .filter(|n| n.starts_with("policy"))
        .map(|name| {
            let dir = format!("{}/{name}", paths::CPUFREQ);
            let s = |f: &str| fs.read_optional(&format!("{dir}/{f}")).ok().flatten();
            let k = |f: &str| s(f).and_then(|t| t.trim().parse::<u64>().ok());
            let cpus = s("related_cpus")
                .and_then(|t| {
                    let v: Option<Vec<u32>> =
                        t.split_whitespace().map(|c| c.parse().ok()).collect();
                    v
                })
                .map(|v| lever_kernel::format_cpu_list(&v))
                .unwrap_or_default();
            Policy {
                cpus,
                governor: s("scaling_governor").map(|g| g.trim().to_string()),
                min_khz: k("scaling_min_freq"),
                max_khz: k("scaling_max_freq"),
                cur_khz: k("scaling_cur_freq"),
                cpuinfo_max_khz: k("cpuinfo_max_freq"),
                name,
            }
        })
        .collect();
    if policies.is_empty() {
        return Avail::Unavailable(format!(
            "{} has no policy*: no cpufreq driver registered these CPUs",
            paths::CPUFREQ
        ));
    }
    Avail::Value(policies)
}

/// Thermal zones' temperatures and cooling devices' states now.
pub fn read_thermal(fs: &KernelFs) -> Avail<ThermalState> {
    match Thermal::read(fs) {
        Ok(t) if t.zones.is_empty() && t.cooling.is_empty() => {
            Avail::Unavailable(no_zones_reason(fs))
        }
        Ok(t) => Avail::Value(t.state()),
        Err(e) => Avail::Unavailable(e.to_string()),
    }
}

/// A snapshot now, `elapsed_s` into the run.
pub fn snapshot(fs: &KernelFs, elapsed_s: f64) -> Snapshot {
    Snapshot {
        elapsed_s,
        load: read_load(fs),
        cpufreq: read_cpufreq(fs),
        thermal: read_thermal(fs),
    }
}

/// The facts that do not change during a run. `lever_version` is the
/// caller's (`lever --version`).
pub fn read_fixed(fs: &KernelFs, lever_version: &str) -> Fixed {
    let opt = |p: &str| text(fs, p).ok().filter(|t| !t.is_empty());
    let online = format!("{}/online", paths::CPU);
    let machine = match text(fs, &online).and_then(|t| {
        lever_kernel::parse_cpu_list(&t).ok_or_else(|| format!("{online}: cannot parse {t:?}"))
    }) {
        Ok(cpus) => Avail::Value(Machine {
            hostname: opt(&format!("{}/hostname", paths::SYSCTL_KERNEL)),
            model: fs
                .read_optional(&format!("{}/model", paths::DEVICE_TREE))
                .ok()
                .flatten()
                .map(|m| m.trim_end_matches('\0').trim().to_string())
                .filter(|m| !m.is_empty())
                .or_else(|| opt("/sys/class/dmi/id/product_name")),
            // `uname -m` is only this machine's: a tree under --root has
            // no syscall to answer for it.
            arch: fs.is_system().then(|| {
                rustix::system::uname()
                    .machine()
                    .to_string_lossy()
                    .into_owned()
            }),
            cpus_online: cpus.len() as u32,
        }),
        Err(why) => Avail::Unavailable(why),
    };
    let isolated = format!("{}/isolated", paths::CPU);
    Fixed {
        lever_version: lever_version.to_string(),
        simulated: (!fs.is_system()).then(|| {
            format!(
                "--root {}: load, clocks and temperatures are that tree's values, not live readings of a board",
                fs.root().display()
            )
        }),
        machine,
        kernel_release: avail(text(fs, &format!("{}/osrelease", paths::SYSCTL_KERNEL))),
        cmdline: avail(text(fs, &format!("{}/cmdline", paths::PROC))),
        isolated_cpus: avail(text(fs, &isolated).map_err(|why| {
            format!("{why} (a kernel before 4.2 does not list isolated CPUs)")
        })),
    }
}

/// Records a run's conditions: [`Recorder::start`] before it (the fixed
/// facts and the first snapshot, and a sampling thread when asked),
/// [`Recorder::finish`] after it.
pub struct Recorder {
    fs: KernelFs,
    fixed: Fixed,
    before: Snapshot,
    started: Instant,
    sampler: Result<(mpsc::Sender<()>, JoinHandle<Vec<Snapshot>>), String>,
}

impl Recorder {
    /// Read the fixed facts and the snapshot before the run. With `every`,
    /// a thread takes a snapshot at that interval until [`finish`]
    /// (Recorder::finish); without it, `why_not_during` says why the run
    /// is not sampled (it is kept in the record).
    ///
    /// [`finish`]: Recorder::finish
    pub fn start(
        fs: &KernelFs,
        lever_version: &str,
        every: Option<Duration>,
        why_not_during: &str,
    ) -> Recorder {
        let fixed = read_fixed(fs, lever_version);
        let before = Snapshot {
            elapsed_s: 0.0,
            load: read_load_settled(fs),
            cpufreq: read_cpufreq(fs),
            thermal: read_thermal(fs),
        };
        let started = Instant::now();
        let sampler = match every {
            Some(every) => {
                let (tx, rx) = mpsc::channel::<()>();
                let fs = fs.clone();
                let spawned = std::thread::Builder::new()
                    .name("lever-conditions".into())
                    .spawn(move || {
                        let mut out = Vec::new();
                        let mut k = 1u32;
                        loop {
                            // Drift-free: the k-th sample at start + k × every.
                            let due = started + every * k;
                            let wait = due.saturating_duration_since(Instant::now());
                            match rx.recv_timeout(wait) {
                                Err(mpsc::RecvTimeoutError::Timeout) => {
                                    out.push(snapshot(&fs, started.elapsed().as_secs_f64()));
                                    k += 1;
                                }
                                _ => return out,
                            }
                        }
                    });
                spawned
                    .map(|h| (tx, h))
                    .map_err(|e| format!("cannot start the sampling thread: {e}"))
            }
            None => Err(why_not_during.to_string()),
        };
        Recorder {
            fs: fs.clone(),
            fixed,
            before,
            started,
            sampler,
        }
    }

    /// The snapshot before the run.
    pub fn before(&self) -> &Snapshot {
        &self.before
    }

    /// Stop sampling, read the snapshot after the run, and derive the
    /// record.
    pub fn finish(self) -> Conditions {
        let during = match self.sampler {
            Ok((tx, handle)) => {
                drop(tx);
                match handle.join() {
                    Ok(samples) => Avail::Value(samples),
                    Err(_) => Avail::Unavailable("the sampling thread failed".into()),
                }
            }
            Err(why) => Avail::Unavailable(why),
        };
        let after = snapshot(&self.fs, self.started.elapsed().as_secs_f64());
        Conditions::new(self.fixed, &self.before, during, &after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    #[test]
    fn loadavg_parses_and_refuses_garbage() {
        let l = parse_loadavg("6.80 5.02 3.11 7/183 4121\n").unwrap();
        assert_eq!(
            (l.load_1m, l.load_15m, l.runnable, l.tasks),
            (6.8, 3.11, 7, 183)
        );
        assert_eq!(parse_loadavg("6.80 5.02"), None);
        assert_eq!(parse_loadavg("a b c 1/2 3"), None);
    }

    /// A blip in one read of five (the kernel freeing the previous run's
    /// memory) is not a task runnable before the run; a competitor that
    /// keeps running is.
    #[test]
    fn the_load_before_a_run_is_settled_over_reads() {
        let at = |runnable: &[u32]| -> Vec<Load> {
            runnable
                .iter()
                .map(|&r| parse_loadavg(&format!("1.19 1.50 1.83 {r}/81 2200")).unwrap())
                .collect()
        };
        assert_eq!(settle(at(&[2, 1, 1, 1, 1])).unwrap().runnable, 1);
        assert_eq!(settle(at(&[3, 3, 1, 3, 3])).unwrap().runnable, 3);
        assert_eq!(settle(at(&[2])).unwrap().load_1m, 1.19);
        assert!(settle(Vec::new()).is_none());
        // A tree that is not the running system is read once.
        let t = FakeTree::with(&[("/proc/loadavg", "0.10 0.20 0.30 4/120 77\n")]);
        assert_eq!(read_load_settled(t.fs()).value().unwrap().runnable, 4);
    }

    #[test]
    fn a_vm_without_cpufreq_or_thermal_says_why() {
        let t = FakeTree::with(&[
            ("/proc/loadavg", "0.10 0.20 0.30 1/120 77\n"),
            ("/proc/sys/kernel/osrelease", "6.1.0-31-amd64\n"),
            ("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro\n"),
            ("/sys/devices/system/cpu/online", "0-1\n"),
            ("/sys/devices/system/cpu/isolated", "\n"),
            ("/sys/class/thermal/.keep", ""),
        ]);
        let rec = Recorder::start(t.fs(), "0.1.0", None, "not sampled during `trace record`");
        assert!(rec.before().load.value().is_some());
        let c = rec.finish();
        assert_eq!(c.kernel_release, Avail::Value("6.1.0-31-amd64".into()));
        assert_eq!(c.isolated_cpus, Avail::Value(String::new()));
        assert_eq!(c.cpus(), 2);
        assert!(c.simulated.is_some());
        let why = |a: &Avail<_>| match a {
            Avail::Unavailable(w) => w.clone(),
            Avail::Value(_) => String::new(),
        };
        assert!(why(&c.cpufreq_before.as_ref().map(|_| ())).contains("no cpufreq driver"));
        assert!(why(&c.thermal_before.as_ref().map(|_| ())).contains("no thermal_zone*"));
        assert_eq!(
            c.load_during,
            Avail::Unavailable("not sampled during `trace record`".into())
        );
        assert!(c.disturbances().is_empty());
    }

    #[test]
    fn the_sampler_sees_a_cap_appear_during_the_run() {
        let t = FakeTree::with(&[
            ("/proc/loadavg", "0.10 0.20 0.30 1/120 77\n"),
            ("/sys/devices/system/cpu/online", "0-3\n"),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/related_cpus",
                "0 1 2 3\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
                "schedutil\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq",
                "300000\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq",
                "1958400\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
                "691200\n",
            ),
            (
                "/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq",
                "1958400\n",
            ),
        ]);
        let rec = Recorder::start(t.fs(), "0.1.0", Some(Duration::from_millis(20)), "");
        std::thread::sleep(Duration::from_millis(60));
        t.node(
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq",
            "1516800\n",
        );
        std::thread::sleep(Duration::from_millis(60));
        t.node(
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq",
            "1958400\n",
        );
        let c = rec.finish();
        let p = &c.cpufreq_before.value().unwrap()[0];
        assert_eq!((p.cpus.as_str(), p.max_khz), ("0-3", Some(1_958_400)));
        assert!(c.load_during.value().unwrap().samples >= 3);
        let t = c.throttling.value().unwrap();
        assert_eq!(t.len(), 1, "{t:?}");
        assert_eq!(t[0].first_seen, lever_conditions::Phase::During);
        assert_eq!(c.disturbances().len(), 1);
    }
}
