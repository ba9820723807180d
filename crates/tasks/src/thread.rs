//! Settings of one thread: CPU affinity, scheduling policy and priority,
//! per-task uclamp. Each `set_*` reads what the thread had, changes it, and
//! returns that as an [`Original`]; [`restore_thread`] puts it back and
//! skips a thread that exited meanwhile.

use crate::model::{Original, Policy, Restored, Sched, ThreadSetting};
use crate::sys::{self, SchedAttr};
use crate::TaskError;
use rustix::process::Pid;
use rustix::thread::CpuSet;
use std::io;

/// Which call an error came from, for messages.
fn op_err(op: &'static str, tid: i32, source: io::Error) -> TaskError {
    match source.raw_os_error() {
        Some(libc::ESRCH) => TaskError::Gone { tid },
        Some(libc::EPERM) | Some(libc::EACCES) => TaskError::NotAllowed { op, tid, source },
        _ => TaskError::Rejected { op, tid, source },
    }
}

fn pid_of(tid: i32) -> Result<Option<Pid>, TaskError> {
    if tid == 0 {
        return Ok(None);
    }
    Pid::from_raw(tid).map(Some).ok_or(TaskError::Gone { tid })
}

/// The CPUs `tid` may run on (0 = the calling thread), ascending.
pub fn affinity(tid: i32) -> Result<Vec<u32>, TaskError> {
    let set = rustix::thread::sched_getaffinity(pid_of(tid)?)
        .map_err(|e| op_err("sched_getaffinity", tid, e.into()))?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|c| set.is_set(*c))
        .map(|c| c as u32)
        .collect())
}

/// Pin `tid` to `cpus`; returns its previous affinity.
pub fn set_affinity(tid: i32, cpus: &[u32]) -> Result<Original, TaskError> {
    let before = affinity(tid)?;
    write_affinity(tid, cpus)?;
    Ok(Original::Affinity { tid, cpus: before })
}

fn write_affinity(tid: i32, cpus: &[u32]) -> Result<(), TaskError> {
    let mut set = CpuSet::new();
    for &c in cpus {
        if c as usize >= CpuSet::MAX_CPU {
            return Err(TaskError::Rejected {
                op: "sched_setaffinity",
                tid,
                source: io::Error::from_raw_os_error(libc::EINVAL),
            });
        }
        set.set(c as usize);
    }
    rustix::thread::sched_setaffinity(pid_of(tid)?, &set)
        .map_err(|e| op_err("sched_setaffinity", tid, e.into()))
}

/// `tid`'s policy and static priority.
pub fn sched(tid: i32) -> Result<Sched, TaskError> {
    let attr = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
    Ok(sched_of(&attr))
}

fn sched_of(attr: &SchedAttr) -> Sched {
    Sched {
        // SCHED_DEADLINE and unknown policies read as `other`; Lever never
        // sets them and restoring `other` is the safe fallback.
        policy: Policy::from_raw(attr.sched_policy).unwrap_or(Policy::Other),
        priority: attr.sched_priority,
    }
}

/// Set `tid`'s policy and priority, keeping its nice value, reset-on-fork
/// flag and clamps; returns what it had.
pub fn set_sched(tid: i32, want: Sched) -> Result<Original, TaskError> {
    let attr = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
    let before = sched_of(&attr);
    write_sched(tid, attr, want)?;
    Ok(Original::Sched { tid, sched: before })
}

fn write_sched(tid: i32, current: SchedAttr, want: Sched) -> Result<(), TaskError> {
    let attr = SchedAttr {
        sched_policy: want.policy.raw(),
        sched_priority: want.priority,
        sched_flags: current.sched_flags & sys::FLAG_RESET_ON_FORK,
        sched_nice: current.sched_nice,
        ..SchedAttr::default()
    };
    sys::sched_setattr(tid, attr).map_err(|e| op_err("sched_setattr", tid, e))
}

/// Set `tid`'s utilization clamps (0..=1024; `None` keeps that side);
/// returns both previous values. A kernel built without
/// `CONFIG_UCLAMP_TASK` answers EOPNOTSUPP: [`TaskError::NotAvailable`].
pub fn set_uclamp(tid: i32, min: Option<u32>, max: Option<u32>) -> Result<Original, TaskError> {
    let attr = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
    let original = Original::Uclamp {
        tid,
        min: attr.sched_util_min,
        max: attr.sched_util_max,
    };
    write_uclamp(tid, attr, min, max)?;
    Ok(original)
}

fn write_uclamp(
    tid: i32,
    current: SchedAttr,
    min: Option<u32>,
    max: Option<u32>,
) -> Result<(), TaskError> {
    let mut flags = sys::FLAG_KEEP_POLICY | sys::FLAG_KEEP_PARAMS;
    if min.is_some() {
        flags |= sys::FLAG_UTIL_CLAMP_MIN;
    }
    if max.is_some() {
        flags |= sys::FLAG_UTIL_CLAMP_MAX;
    }
    let attr = SchedAttr {
        sched_policy: current.sched_policy,
        sched_flags: flags,
        sched_util_min: min.unwrap_or(current.sched_util_min),
        sched_util_max: max.unwrap_or(current.sched_util_max),
        ..SchedAttr::default()
    };
    sys::sched_setattr(tid, attr).map_err(|e| match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) => TaskError::NotAvailable {
            what: "per-task uclamp (sched_setattr with SCHED_FLAG_UTIL_CLAMP)".into(),
            why: "this kernel is built without CONFIG_UCLAMP_TASK (sched_setattr answered EOPNOTSUPP)"
                .into(),
        },
        _ => op_err("sched_setattr", tid, e),
    })
}

/// What `setting` would replace on `tid`, read without changing
/// anything: the first half of [`apply_thread`], so a caller can journal
/// the original before the change.
pub fn original_of(tid: i32, setting: &ThreadSetting) -> Result<Original, TaskError> {
    match setting {
        ThreadSetting::Affinity { .. } => Ok(Original::Affinity {
            tid,
            cpus: affinity(tid)?,
        }),
        ThreadSetting::Sched(_) => Ok(Original::Sched {
            tid,
            sched: sched(tid)?,
        }),
        ThreadSetting::Nice { .. } => Ok(Original::Nice {
            tid,
            nice: sys::sched_getattr(tid)
                .map_err(|e| op_err("sched_getattr", tid, e))?
                .sched_nice,
        }),
        ThreadSetting::Uclamp { .. } => {
            let attr = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
            Ok(Original::Uclamp {
                tid,
                min: attr.sched_util_min,
                max: attr.sched_util_max,
            })
        }
    }
}

/// Make `setting` on `tid` without reading the original: the second half
/// of [`apply_thread`].
pub fn write_setting(tid: i32, setting: &ThreadSetting) -> Result<(), TaskError> {
    match setting {
        ThreadSetting::Affinity { cpus } => write_affinity(tid, cpus),
        ThreadSetting::Sched(s) => {
            let cur = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
            write_sched(tid, cur, *s)
        }
        ThreadSetting::Nice { nice } => write_nice(tid, *nice),
        ThreadSetting::Uclamp { min, max } => {
            let cur = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
            write_uclamp(tid, cur, *min, *max)
        }
    }
}

/// Set `tid`'s nice value, keeping its policy, priority and
/// reset-on-fork flag (clamps change only with their own flags).
fn write_nice(tid: i32, nice: i32) -> Result<(), TaskError> {
    let cur = sys::sched_getattr(tid).map_err(|e| op_err("sched_getattr", tid, e))?;
    let attr = SchedAttr {
        sched_policy: cur.sched_policy,
        sched_priority: cur.sched_priority,
        sched_flags: cur.sched_flags & sys::FLAG_RESET_ON_FORK,
        sched_nice: nice,
        ..SchedAttr::default()
    };
    sys::sched_setattr(tid, attr).map_err(|e| op_err("sched_setattr", tid, e))
}

/// Apply one setting to `tid`; returns the original.
pub fn apply_thread(tid: i32, setting: &ThreadSetting) -> Result<Original, TaskError> {
    match setting {
        ThreadSetting::Affinity { cpus } => set_affinity(tid, cpus),
        ThreadSetting::Sched(s) => set_sched(tid, *s),
        ThreadSetting::Uclamp { min, max } => set_uclamp(tid, *min, *max),
        ThreadSetting::Nice { .. } => {
            let original = original_of(tid, setting)?;
            write_setting(tid, setting)?;
            Ok(original)
        }
    }
}

/// Put a thread original back. A thread that exited is
/// [`Restored::Skipped`], not an error. Cgroup originals are
/// [`crate::Cgroups::restore`]'s; given one, this returns
/// [`TaskError::WrongRestorer`].
pub fn restore_thread(original: &Original) -> Result<Restored, TaskError> {
    let result = match original {
        Original::Affinity { tid, cpus } => write_affinity(*tid, cpus),
        Original::Sched { tid, sched: want } => sys::sched_getattr(*tid)
            .map_err(|e| op_err("sched_getattr", *tid, e))
            .and_then(|cur| write_sched(*tid, cur, *want)),
        Original::Nice { tid, nice } => write_nice(*tid, *nice),
        Original::Uclamp { tid, min, max } => sys::sched_getattr(*tid)
            .map_err(|e| op_err("sched_getattr", *tid, e))
            .and_then(|cur| write_uclamp(*tid, cur, Some(*min), Some(*max))),
        Original::CgroupFile { .. } | Original::Membership { .. } | Original::Created { .. } => {
            return Err(TaskError::WrongRestorer)
        }
    };
    match result {
        Ok(()) => Ok(Restored::Done),
        Err(TaskError::Gone { tid }) => Ok(Restored::Skipped {
            why: format!("thread {tid} exited"),
        }),
        Err(e) => Err(e),
    }
}
