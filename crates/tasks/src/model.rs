//! What a per-task or cgroup resource sets, and what it was before: pure,
//! serializable data shared by target files (which declare settings), the
//! daemon (which journals originals) and this crate (which applies both).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A Linux scheduling policy (`sched(7)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// `SCHED_OTHER` (CFS/EEVDF), priority 0.
    Other,
    /// `SCHED_FIFO`, priority 1..=99.
    Fifo,
    /// `SCHED_RR`, priority 1..=99.
    Rr,
    /// `SCHED_BATCH`, priority 0.
    Batch,
    /// `SCHED_IDLE`, priority 0.
    Idle,
}

impl Policy {
    /// Every policy, in the order target files list them.
    pub const ALL: [Policy; 5] = [
        Policy::Other,
        Policy::Fifo,
        Policy::Rr,
        Policy::Batch,
        Policy::Idle,
    ];

    /// The word used in target files (`other`, `fifo`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
        }
    }

    /// The policy named `word`, if any.
    pub fn from_word(word: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.as_str() == word)
    }

    /// True for the real-time policies, whose priority is 1..=99.
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// The kernel's number for it (`SCHED_*`).
    pub fn raw(self) -> u32 {
        match self {
            Policy::Other => 0,
            Policy::Fifo => 1,
            Policy::Rr => 2,
            Policy::Batch => 3,
            Policy::Idle => 5,
        }
    }

    /// The policy of a kernel number (`SCHED_DEADLINE` = 6 is not one).
    pub fn from_raw(raw: u32) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.raw() == raw)
    }
}

/// A scheduling policy with its static priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sched {
    /// The policy.
    pub policy: Policy,
    /// Static priority: 1..=99 for `fifo`/`rr`, 0 otherwise.
    pub priority: u32,
}

/// A cgroup v2 interface file Lever may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CgroupKnob {
    /// `cpu.uclamp.min`: a percentage floor such as `50.00` (or `max`).
    #[serde(rename = "cpu.uclamp.min")]
    UclampMin,
    /// `cpu.uclamp.max`: a percentage ceiling (or `max`).
    #[serde(rename = "cpu.uclamp.max")]
    UclampMax,
    /// `cpu.weight`: 1..=10000, default 100.
    #[serde(rename = "cpu.weight")]
    Weight,
    /// `cpu.max`: `QUOTA PERIOD` in µs, QUOTA may be `max`.
    #[serde(rename = "cpu.max")]
    Max,
    /// `cpuset.cpus`: a CPU list such as `4-7`.
    #[serde(rename = "cpuset.cpus")]
    CpusetCpus,
    /// `cpuset.cpus.partition`: `member`, `root` or `isolated`.
    #[serde(rename = "cpuset.cpus.partition")]
    CpusetPartition,
}

impl CgroupKnob {
    /// Every knob.
    pub const ALL: [CgroupKnob; 6] = [
        CgroupKnob::UclampMin,
        CgroupKnob::UclampMax,
        CgroupKnob::Weight,
        CgroupKnob::Max,
        CgroupKnob::CpusetCpus,
        CgroupKnob::CpusetPartition,
    ];

    /// The interface file's name.
    pub fn file(self) -> &'static str {
        match self {
            CgroupKnob::UclampMin => "cpu.uclamp.min",
            CgroupKnob::UclampMax => "cpu.uclamp.max",
            CgroupKnob::Weight => "cpu.weight",
            CgroupKnob::Max => "cpu.max",
            CgroupKnob::CpusetCpus => "cpuset.cpus",
            CgroupKnob::CpusetPartition => "cpuset.cpus.partition",
        }
    }

    /// The knob whose file is `name`.
    pub fn from_file(name: &str) -> Option<CgroupKnob> {
        CgroupKnob::ALL.into_iter().find(|k| k.file() == name)
    }

    /// The controller that must be enabled in the parent's
    /// `cgroup.subtree_control` for the file to exist (`cpu`, `cpuset`).
    pub fn controller(self) -> &'static str {
        match self {
            CgroupKnob::CpusetCpus | CgroupKnob::CpusetPartition => "cpuset",
            _ => "cpu",
        }
    }

    /// Why `value` is not a value of this knob, or `None` when it is.
    /// Checked when a target file is read, so a typo is a file:line error
    /// rather than an EINVAL at run time.
    pub fn check(self, value: &str) -> Option<String> {
        let percent =
            |v: &str| v == "max" || v.parse::<f64>().is_ok_and(|p| (0.0..=100.0).contains(&p));
        let ok = match self {
            CgroupKnob::UclampMin | CgroupKnob::UclampMax => percent(value),
            CgroupKnob::Weight => value.parse::<u32>().is_ok_and(|w| (1..=10000).contains(&w)),
            CgroupKnob::Max => {
                let mut f = value.split_whitespace();
                let quota = f
                    .next()
                    .is_some_and(|q| q == "max" || q.parse::<u64>().is_ok());
                let period = f.next().is_none_or(|p| p.parse::<u64>().is_ok());
                quota && period && f.next().is_none()
            }
            CgroupKnob::CpusetCpus => lever_kernel::parse_cpu_list(value).is_some(),
            CgroupKnob::CpusetPartition => matches!(value, "member" | "root" | "isolated"),
        };
        (!ok).then(|| {
            let expected = match self {
                CgroupKnob::UclampMin | CgroupKnob::UclampMax => {
                    "a percentage 0..100 such as `50.00`, or `max`"
                }
                CgroupKnob::Weight => "an integer 1..10000",
                CgroupKnob::Max => "`QUOTA PERIOD` in microseconds, QUOTA may be `max`",
                CgroupKnob::CpusetCpus => "a CPU list such as `4-7`",
                CgroupKnob::CpusetPartition => "member, root or isolated",
            };
            format!(
                "`{value}` is not a value of {} (expected {expected})",
                self.file()
            )
        })
    }
}

impl fmt::Display for CgroupKnob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.file())
    }
}

/// What one rule sets on one thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "set")]
pub enum ThreadSetting {
    /// CPU affinity (`sched_setaffinity`).
    Affinity {
        /// The CPUs allowed, ascending.
        cpus: Vec<u32>,
    },
    /// Scheduling policy and priority (`sched_setattr`).
    Sched(Sched),
    /// Nice value, -20..=19 (`sched_setattr`, policy and priority kept);
    /// only SCHED_OTHER and SCHED_BATCH threads are scheduled by it.
    Nice {
        /// The nice value.
        nice: i32,
    },
    /// Per-task utilization clamps (`sched_setattr` with
    /// `SCHED_FLAG_UTIL_CLAMP`), 0..=1024; `None` leaves that side alone.
    Uclamp {
        /// `sched_util_min`.
        min: Option<u32>,
        /// `sched_util_max`.
        max: Option<u32>,
    },
}

/// One write to a Lever-managed cgroup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupSetting {
    /// The cgroup below the cgroup2 mount, e.g. `lever/camera`.
    pub cgroup: String,
    /// The file.
    pub knob: CgroupKnob,
    /// What to write, e.g. `50.00`.
    pub value: String,
}

/// Settings for the threads of a process whose `comm` matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadRule {
    /// Thread name to match: exact, or a prefix when it ends in `*`;
    /// `None` = every thread.
    pub comm: Option<String>,
    /// What to set on each matching thread.
    pub settings: Vec<ThreadSetting>,
    /// A Lever-managed cgroup to move each matching thread into.
    pub cgroup: Option<String>,
}

impl ThreadRule {
    /// Whether a thread named `comm` is one this rule is for.
    pub fn matches(&self, comm: &str) -> bool {
        match &self.comm {
            None => true,
            Some(p) => match p.strip_suffix('*') {
                Some(prefix) => comm.starts_with(prefix),
                None => comm == p,
            },
        }
    }
}

/// What a setting or move replaced: enough to put it back, serializable so
/// the daemon's journal can keep it across a crash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "original")]
pub enum Original {
    /// A thread's CPU affinity before.
    Affinity {
        /// The thread.
        tid: i32,
        /// Its CPUs, ascending.
        cpus: Vec<u32>,
    },
    /// A thread's policy and priority before.
    Sched {
        /// The thread.
        tid: i32,
        /// What it had.
        sched: Sched,
    },
    /// A thread's nice value before.
    Nice {
        /// The thread.
        tid: i32,
        /// What it had.
        nice: i32,
    },
    /// A thread's uclamp values before.
    Uclamp {
        /// The thread.
        tid: i32,
        /// `sched_util_min`.
        min: u32,
        /// `sched_util_max`.
        max: u32,
    },
    /// A cgroup interface file's content before (as read, trimmed).
    CgroupFile {
        /// Cgroup path below the cgroup2 mount, e.g. `lever/camera`.
        cgroup: String,
        /// The file.
        knob: CgroupKnob,
        /// What it held.
        value: String,
    },
    /// A cgroup that did not exist: Lever created it. Putting it back
    /// removes it again, only if it is empty (no tasks, no children).
    Created {
        /// Cgroup path below the cgroup2 mount, e.g. `lever/camera`.
        cgroup: String,
    },
    /// Where a process (or, with `thread`, a single thread) was before a
    /// move.
    Membership {
        /// The pid or tid moved.
        pid: i32,
        /// True when only the thread was moved (`cgroup.threads`).
        thread: bool,
        /// Cgroup path below the cgroup2 mount it was in (`` for the root).
        cgroup: String,
    },
}

impl Original {
    /// The thread or process this original belongs to, if any.
    pub fn task(&self) -> Option<i32> {
        match self {
            Original::Affinity { tid, .. }
            | Original::Sched { tid, .. }
            | Original::Nice { tid, .. }
            | Original::Uclamp { tid, .. } => Some(*tid),
            Original::Membership { pid, .. } => Some(*pid),
            Original::CgroupFile { .. } | Original::Created { .. } => None,
        }
    }
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "restored")]
pub enum Restored {
    /// The original is back.
    Done,
    /// Nothing to restore: the task (or cgroup) is gone.
    Skipped {
        /// Why, e.g. `thread 1234 exited`.
        why: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_values_checked() {
        assert_eq!(CgroupKnob::UclampMin.check("50.00"), None);
        assert_eq!(CgroupKnob::UclampMax.check("max"), None);
        assert!(CgroupKnob::UclampMin.check("150").is_some());
        assert_eq!(CgroupKnob::Weight.check("200"), None);
        assert!(CgroupKnob::Weight.check("0").is_some());
        assert_eq!(CgroupKnob::Max.check("max 100000"), None);
        assert_eq!(CgroupKnob::Max.check("50000"), None);
        assert!(CgroupKnob::Max.check("50000 x").is_some());
        assert_eq!(CgroupKnob::CpusetCpus.check("4-7"), None);
        assert!(CgroupKnob::CpusetCpus.check("four").is_some());
        assert_eq!(CgroupKnob::CpusetPartition.check("isolated"), None);
        let msg = CgroupKnob::CpusetPartition.check("root2").unwrap();
        assert!(msg.contains("member, root or isolated"), "{msg}");
    }

    #[test]
    fn originals_round_trip_as_json() {
        let all = vec![
            Original::Affinity {
                tid: 7,
                cpus: vec![0, 1],
            },
            Original::Sched {
                tid: 7,
                sched: Sched {
                    policy: Policy::Fifo,
                    priority: 10,
                },
            },
            Original::CgroupFile {
                cgroup: "lever/camera".into(),
                knob: CgroupKnob::Max,
                value: "max 100000".into(),
            },
            Original::Membership {
                pid: 9,
                thread: false,
                cgroup: "user.slice".into(),
            },
            Original::Created {
                cgroup: "lever/focused".into(),
            },
        ];
        let text = serde_json::to_string(&all).unwrap();
        assert!(text.contains("\"knob\":\"cpu.max\""), "{text}");
        let back: Vec<Original> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, all);
    }

    #[test]
    fn policy_words_and_numbers() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_word(p.as_str()), Some(p));
            assert_eq!(Policy::from_raw(p.raw()), Some(p));
        }
        assert_eq!(Policy::from_raw(6), None);
    }

    #[test]
    fn thread_rule_comm_patterns() {
        let rule = |c: Option<&str>| ThreadRule {
            comm: c.map(String::from),
            settings: vec![],
            cgroup: None,
        };
        assert!(rule(None).matches("anything"));
        assert!(rule(Some("cam*")).matches("camera-isp"));
        assert!(!rule(Some("cam*")).matches("gpu"));
        assert!(rule(Some("render")).matches("render"));
        assert!(!rule(Some("render")).matches("render2"));
    }
}
