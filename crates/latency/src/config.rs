//! What to measure: cyclictest's options as a typed configuration, and the
//! per-thread plan they expand to (which CPU, interval, priority).
//!
//! The expansion follows cyclictest 2.4 (`rt-tests/src/cyclictest`):
//! threads are pinned round-robin over the `-a` CPU set; every thread runs
//! at the same priority; thread *i*'s interval is `interval + i × distance`
//! unless a histogram is kept (`-h`), which makes all intervals equal.

use crate::error::LatencyError;
use serde::Serialize;
use std::time::Duration;

/// cyclictest's default interval (µs).
pub const DEFAULT_INTERVAL_US: u64 = 1000;
/// cyclictest's default distance between thread intervals (µs).
pub const DEFAULT_DISTANCE_US: u64 = 500;
/// cyclictest's histogram size limit (µs), `HIST_MAX`.
pub const HIST_MAX_US: u32 = 1_000_000;
/// How many spikes are kept with their time stamp (cyclictest's default
/// `--spike-nodes`); all are counted.
pub const SPIKE_NODES: usize = 1024;

/// A measuring thread's scheduling policy (`--policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// `SCHED_OTHER` (`other` or `normal`).
    Other,
    /// `SCHED_BATCH`.
    Batch,
    /// `SCHED_IDLE`.
    Idle,
    /// `SCHED_FIFO`.
    Fifo,
    /// `SCHED_RR`.
    Rr,
}

impl Policy {
    /// Parse cyclictest's `--policy` names.
    pub fn parse(name: &str) -> Result<Policy, LatencyError> {
        Ok(match name {
            "other" | "normal" => Policy::Other,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "fifo" => Policy::Fifo,
            "rr" => Policy::Rr,
            _ => {
                return Err(LatencyError::BadOption {
                    option: "--policy",
                    value: name.to_string(),
                    expected: "one of other, normal, batch, idle, fifo, rr",
                })
            }
        })
    }

    /// The name cyclictest prints (`fifo`, `other`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
        }
    }

    /// True for the real-time policies, which take a priority 1–99.
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    pub(crate) fn syscall(self) -> lever_syscalls::SchedPolicy {
        use lever_syscalls::SchedPolicy as S;
        match self {
            Policy::Other => S::Other,
            Policy::Batch => S::Batch,
            Policy::Idle => S::Idle,
            Policy::Fifo => S::Fifo,
            Policy::Rr => S::Rr,
        }
    }
}

/// Which CPUs the threads run on (`-a`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Affinity {
    /// No `-a`: threads are not pinned.
    Unpinned,
    /// `-a` without a list (or `-S`): thread *i* on online CPU *i mod n*.
    OneEach,
    /// `-a LIST`: round-robin over the list.
    Cpus(Vec<u32>),
}

/// How many threads (`-t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Threads {
    /// `-t` without a number (or `-S`): one per online CPU (or per `-a` CPU).
    PerCpu,
    /// `-t N`.
    Count(usize),
}

/// A measurement's options (cyclictest's flags, typed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// `-a`.
    pub affinity: Affinity,
    /// `-t`.
    pub threads: Threads,
    /// `--policy`; `None` = FIFO when a priority is given, else other.
    pub policy: Option<Policy>,
    /// `-p` (0 = none).
    pub priority: u32,
    /// `-i`, µs.
    pub interval_us: u64,
    /// `-d`, µs.
    pub distance_us: u64,
    /// `-l` (None = endless).
    pub loops: Option<u64>,
    /// `-D`.
    pub duration: Option<Duration>,
    /// `-m`: mlockall(MCL_CURRENT | MCL_FUTURE).
    pub mlock: bool,
    /// `-h US`: histogram buckets 0..US µs (cyclictest's `-h`).
    pub histogram_us: Option<u32>,
    /// `--spike US`: record every sample above US.
    pub spike_us: Option<u64>,
    /// `-b US`: stop at the first sample above US.
    pub breach_us: Option<u64>,
    /// `--mainaffinity LIST`: where the main (reporting) thread runs.
    pub main_affinity: Option<Vec<u32>>,
    /// `--laptop`: do not hold `/dev/cpu_dma_latency` at 0.
    pub laptop: bool,
    /// `--analyze`: trace the whole run and explain every `--spike`.
    pub analyze: bool,
    /// `--no-trace`: `-b` stops at the breach without tracing.
    pub no_trace: bool,
    /// `--trace-out FILE`: where the trace is kept (default: a file in
    /// the temporary directory).
    pub trace_out: Option<std::path::PathBuf>,
    /// `--load SPEC`: background loads during the measurement.
    pub loads: Vec<crate::load::LoadSpec>,
    /// `-S`/`--smp`: cyclictest's JSON then writes `node: -1`.
    pub smp: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            affinity: Affinity::Unpinned,
            threads: Threads::Count(1),
            policy: None,
            priority: 0,
            interval_us: DEFAULT_INTERVAL_US,
            distance_us: DEFAULT_DISTANCE_US,
            loops: None,
            duration: None,
            mlock: false,
            histogram_us: None,
            spike_us: None,
            breach_us: None,
            main_affinity: None,
            laptop: false,
            analyze: false,
            no_trace: false,
            trace_out: None,
            loads: Vec::new(),
            smp: false,
        }
    }
}

/// One measuring thread, as planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadPlan {
    /// Thread number (cyclictest's `T:`).
    pub index: usize,
    /// The CPU it is pinned to.
    pub cpu: Option<u32>,
    /// Its period, µs.
    pub interval_us: u64,
    /// Its policy.
    pub policy: Policy,
    /// Its static priority.
    pub priority: u32,
}

impl Config {
    /// The effective policy: as given, else FIFO with a priority, else
    /// other (cyclictest switches a policy/priority mismatch to FIFO too).
    pub fn effective_policy(&self) -> Policy {
        match self.policy {
            Some(p) if p.is_realtime() || self.priority == 0 => p,
            Some(_) => Policy::Fifo,
            None if self.priority > 0 => Policy::Fifo,
            None => Policy::Other,
        }
    }

    /// The flag that makes the run record a trace, if any: `-b` (unless
    /// `--no-trace`) or `--analyze`.
    pub fn trace_reason(&self) -> Option<&'static str> {
        if self.analyze {
            Some("--analyze")
        } else if self.breach_us.is_some() && !self.no_trace {
            Some("-b/--breaktrace")
        } else {
            None
        }
    }

    /// Check the options and expand them to one plan per thread. `online`
    /// is the list of online CPUs (`/sys/devices/system/cpu/online`).
    pub fn plan(&self, online: &[u32]) -> Result<Vec<ThreadPlan>, LatencyError> {
        if self.interval_us == 0 {
            return Err(LatencyError::BadOption {
                option: "-i/--interval",
                value: "0".into(),
                expected: "an interval of at least 1 µs",
            });
        }
        if self.priority > 99 {
            return Err(LatencyError::BadOption {
                option: "-p/--priority",
                value: self.priority.to_string(),
                expected: "a priority from 0 to 99",
            });
        }
        if self.loops == Some(0) {
            return Err(LatencyError::BadOption {
                option: "-l/--loops",
                value: "0".into(),
                expected: "at least 1 loop (leave -l out to run until Ctrl-C)",
            });
        }
        if self.analyze && self.spike_us.is_none() && self.breach_us.is_none() {
            return Err(LatencyError::BadOption {
                option: "--analyze",
                value: String::new(),
                expected: "--spike US or -b US with it (the wake-ups to explain)",
            });
        }
        if self.analyze && self.no_trace {
            return Err(LatencyError::BadOption {
                option: "--no-trace",
                value: String::new(),
                expected: "not both --analyze (which traces) and --no-trace",
            });
        }
        if self.trace_out.is_some() && self.trace_reason().is_none() {
            return Err(LatencyError::BadOption {
                option: "--trace-out",
                value: self
                    .trace_out
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                expected: "-b US or --analyze with it (nothing is traced otherwise)",
            });
        }
        if let Some(h) = self.histogram_us {
            if h == 0 || h > HIST_MAX_US {
                return Err(LatencyError::BadOption {
                    option: "-h/--histogram",
                    value: h.to_string(),
                    expected: "a histogram size from 1 to 1000000 µs",
                });
            }
        }
        let check = |cpus: &[u32], option: &'static str| {
            for &cpu in cpus {
                if !online.contains(&cpu) {
                    return Err(LatencyError::NoSuchCpu {
                        option,
                        cpu,
                        online: lever_kernel::format_cpu_list(online),
                    });
                }
            }
            Ok(())
        };
        // `--load cpu:N@CPUS`: the load's CPUs must be online too.
        for load in &self.loads {
            if let crate::load::LoadSpec::Cpu { cpus, .. } = load {
                check(cpus, "--load")?;
            }
        }
        if let Affinity::Cpus(cpus) = &self.affinity {
            if cpus.is_empty() {
                return Err(LatencyError::BadOption {
                    option: "-a/--affinity",
                    value: String::new(),
                    expected: "a CPU list such as 1-3 or 0,2",
                });
            }
            check(cpus, "-a/--affinity")?;
        }
        if let Some(cpus) = &self.main_affinity {
            check(cpus, "--mainaffinity")?;
        }
        let per_cpu = match &self.affinity {
            Affinity::Cpus(c) => c.len(),
            _ => online.len().max(1),
        };
        let count = match self.threads {
            Threads::PerCpu => per_cpu,
            Threads::Count(0) => {
                return Err(LatencyError::BadOption {
                    option: "-t/--threads",
                    value: "0".into(),
                    expected: "at least 1 thread",
                })
            }
            Threads::Count(n) => n,
        };
        let policy = self.effective_policy();
        let priority = if policy.is_realtime() {
            // cyclictest defaults a real-time policy without -p to threads+1.
            if self.priority == 0 {
                (count as u32 + 1).min(99)
            } else {
                self.priority
            }
        } else {
            0
        };
        let distance = if self.histogram_us.is_some() {
            0
        } else {
            self.distance_us
        };
        Ok((0..count)
            .map(|i| ThreadPlan {
                index: i,
                cpu: match &self.affinity {
                    Affinity::Unpinned => None,
                    Affinity::OneEach => online.get(i % online.len().max(1)).copied(),
                    Affinity::Cpus(c) => Some(c[i % c.len()]),
                },
                interval_us: self.interval_us + i as u64 * distance,
                policy,
                priority,
            })
            .collect())
    }
}

/// A CPU list as cyclictest and the kernel write it (`1-3`, `0,2,4-5`).
pub fn parse_cpu_list(option: &'static str, text: &str) -> Result<Vec<u32>, LatencyError> {
    lever_kernel::parse_cpu_list(text.trim())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| LatencyError::BadOption {
            option,
            value: text.to_string(),
            expected: "a CPU list such as 1-3 or 0,2,4-5",
        })
}

/// cyclictest's `-D` syntax: seconds, or a number with `m`, `h` or `d`;
/// Lever also takes its own units (`500ms`, `10s`).
pub fn parse_run_duration(text: &str) -> Result<Duration, LatencyError> {
    let t = text.trim();
    // `d` (days) is cyclictest's; m/h/s and the rest are lever-text's units.
    let parsed = match t.strip_suffix(['d', 'D']) {
        Some(n) => lever_text::parse_int(n)
            .and_then(|v| u64::try_from(v).ok())
            .map(|v| Duration::from_secs(v * 86_400)),
        None => lever_text::parse_duration(t, lever_text::TimeUnit::Seconds).ok(),
    };
    match parsed {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(LatencyError::BadOption {
            option: "-D/--duration",
            value: text.to_string(),
            expected: "a duration such as 10, 10s, 5m, 2h or 1d",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_000_line_plans_three_pinned_fifo_threads_at_one_interval() {
        let cfg = Config {
            affinity: Affinity::Cpus(vec![1, 2, 3]),
            threads: Threads::Count(3),
            priority: 90,
            histogram_us: Some(800),
            ..Config::default()
        };
        let plan = cfg.plan(&[0, 1, 2, 3, 4, 5, 6, 7]).unwrap();
        assert_eq!(plan.len(), 3);
        assert_eq!(
            plan.iter().map(|p| p.cpu).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3)]
        );
        assert!(plan
            .iter()
            .all(|p| p.interval_us == 1000 && p.priority == 90 && p.policy == Policy::Fifo));
    }

    #[test]
    fn without_histogram_intervals_spread_by_distance() {
        let cfg = Config {
            threads: Threads::Count(3),
            ..Config::default()
        };
        let plan = cfg.plan(&[0, 1]).unwrap();
        assert_eq!(
            plan.iter().map(|p| p.interval_us).collect::<Vec<_>>(),
            [1000, 1500, 2000]
        );
        assert_eq!(plan[0].policy, Policy::Other);
    }

    #[test]
    fn round_robin_like_cyclictest_help() {
        // "-a 3-5,0 -t 5 will run the first and fifth threads on CPU (0)" is
        // cyclictest's numa ordering; a plain list keeps the given order.
        let cfg = Config {
            affinity: Affinity::Cpus(vec![3, 4]),
            threads: Threads::Count(3),
            ..Config::default()
        };
        let cpus: Vec<_> = cfg
            .plan(&[0, 1, 2, 3, 4])
            .unwrap()
            .iter()
            .map(|p| p.cpu)
            .collect();
        assert_eq!(cpus, [Some(3), Some(4), Some(3)]);
    }

    #[test]
    fn refuses_a_cpu_that_does_not_exist_and_interval_zero() {
        let cfg = Config {
            affinity: Affinity::Cpus(vec![7]),
            ..Config::default()
        };
        let e = cfg.plan(&[0, 1]).unwrap_err().to_string();
        assert!(e.contains("CPU 7") && e.contains("0-1"), "{e}");
        let cfg = Config {
            interval_us: 0,
            ..Config::default()
        };
        assert!(cfg
            .plan(&[0])
            .unwrap_err()
            .to_string()
            .contains("-i/--interval"));
        let cfg = Config {
            main_affinity: Some(vec![4]),
            ..Config::default()
        };
        assert!(cfg
            .plan(&[0, 1])
            .unwrap_err()
            .to_string()
            .contains("--mainaffinity"));
    }

    #[test]
    fn policy_and_priority_like_cyclictest() {
        let mut cfg = Config {
            policy: Some(Policy::Other),
            priority: 80,
            ..Config::default()
        };
        assert_eq!(cfg.effective_policy(), Policy::Fifo);
        cfg.priority = 0;
        assert_eq!(cfg.effective_policy(), Policy::Other);
        cfg.policy = Some(Policy::Rr);
        let plan = cfg.plan(&[0]).unwrap();
        assert_eq!((plan[0].policy, plan[0].priority), (Policy::Rr, 2));
        assert!(Policy::parse("deadline").is_err());
    }

    #[test]
    fn durations_take_cyclictest_suffixes_and_units() {
        assert_eq!(parse_run_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_run_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_run_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(
            parse_run_duration("1d").unwrap(),
            Duration::from_secs(86400)
        );
        assert_eq!(
            parse_run_duration("500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert!(parse_run_duration("0").is_err());
        assert!(parse_run_duration("soon").is_err());
    }
}
