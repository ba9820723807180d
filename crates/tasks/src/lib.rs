//! Per-thread, per-process and cgroup v2 resources, each change returning
//! what it replaced.
//!
//! The global resources of a target are kernel nodes with one value; the
//! ones here belong to a task or a cgroup: a thread's CPU affinity, its
//! scheduling policy and priority, its utilization clamps, a cgroup's
//! `cpu.uclamp.min/max`, `cpu.weight`, `cpu.max`, `cpuset.cpus` and
//! `cpuset.cpus.partition`, and which cgroup a process or thread is in.
//!
//! Every `set_*`, `write` and `move_*` returns an [`Original`]: a
//! serializable value (the daemon journals it before the change counts as
//! made) that [`restore`] puts back. A task that exited meanwhile is
//! [`Restored::Skipped`], never an error — the daemon restores after the
//! app is gone as a matter of course.
//!
//! Cgroup paths go through a [`KernelFs`] root (`ROOT/sys/fs/cgroup`), so
//! tests use a fake tree; thread settings are system calls on real tids.
//!
//! ```
//! use lever_kernel::KernelFs;
//! use lever_tasks::{Cgroups, CgroupKnob, Original, Restored};
//!
//! // A fake cgroup2 tree with one process (pid 4242) in `user.slice`.
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n").unwrap();
//! fs.create_node("/sys/fs/cgroup/lever/cpu.weight", "100\n").unwrap();
//! fs.create_node("/sys/fs/cgroup/lever/cgroup.procs", "").unwrap();
//! fs.create_node("/sys/fs/cgroup/user.slice/cgroup.procs", "4242\n").unwrap();
//! fs.create_node("/proc/4242/cgroup", "0::/user.slice\n").unwrap();
//!
//! let cg = Cgroups::new(fs.clone());
//! cg.check().unwrap();
//! let weight = cg.write("lever", CgroupKnob::Weight, "400").unwrap();
//! assert_eq!(cg.read("lever", CgroupKnob::Weight).unwrap(), "400");
//! let moved = cg.move_process(4242, "lever").unwrap();
//! assert_eq!(moved, Original::Membership { pid: 4242, thread: false, cgroup: "user.slice".into() });
//!
//! // Restore in reverse order; the originals survive a JSON journal.
//! let journal = serde_json::to_string(&[&weight, &moved]).unwrap();
//! let back: Vec<Original> = serde_json::from_str(&journal).unwrap();
//! for o in back.iter().rev() {
//!     assert_eq!(lever_tasks::restore(&cg, o).unwrap(), Restored::Done);
//! }
//! assert_eq!(cg.read("lever", CgroupKnob::Weight).unwrap(), "100");
//! assert_eq!(fs.read("/sys/fs/cgroup/user.slice/cgroup.procs").unwrap(), "4242");
//!
//! // This thread's CPU affinity, set to what it is and back.
//! let cpus = lever_tasks::affinity(0).unwrap();
//! let before = lever_tasks::set_affinity(0, &cpus).unwrap();
//! assert_eq!(lever_tasks::restore(&cg, &before).unwrap(), Restored::Done);
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod cgroup;
mod model;
mod plan;
mod sys;
mod thread;

pub use cgroup::{Cgroups, CGROUP2_MOUNT};
pub use model::{
    CgroupKnob, CgroupSetting, Original, Policy, Restored, Sched, ThreadRule, ThreadSetting,
};
pub use plan::{apply_plan, Applied, TaskPlan};
pub use thread::{
    affinity, apply_thread, original_of, restore_thread, sched, set_affinity, set_sched,
    set_uclamp, write_setting,
};

use lever_kernel::{KernelError, KernelFs};

/// The threads of process `pid` (`/proc/PID/task`), ascending; an empty
/// list when the process is gone.
pub fn threads_of(fs: &KernelFs, pid: i32) -> Result<Vec<i32>, TaskError> {
    match fs.list_dir(&format!("/proc/{pid}/task")) {
        Ok(names) => {
            let mut tids: Vec<i32> = names.iter().filter_map(|n| n.parse().ok()).collect();
            tids.sort_unstable();
            Ok(tids)
        }
        Err(e) if e.is_missing() => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// The `comm` of thread `tid` of process `pid` (`/proc/PID/task/TID/comm`,
/// e.g. `CamX-Preview\n`), `None` when it is gone.
pub fn thread_comm(fs: &KernelFs, pid: i32, tid: i32) -> Result<Option<String>, TaskError> {
    Ok(fs
        .read_optional(&format!("/proc/{pid}/task/{tid}/comm"))?
        .map(|c| c.trim_end_matches('\n').to_string()))
}

/// Apply `setting` to every thread of process `pid`; one original per
/// thread, in tid order. A thread that exits during the walk is left out.
pub fn apply_process(
    fs: &KernelFs,
    pid: i32,
    setting: &ThreadSetting,
) -> Result<Vec<Original>, TaskError> {
    let mut out = Vec::new();
    for tid in threads_of(fs, pid)? {
        match apply_thread(tid, setting) {
            Ok(o) => out.push(o),
            Err(TaskError::Gone { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Put any original back: thread settings by system call, cgroup files and
/// memberships through `cgroups`.
pub fn restore(cgroups: &Cgroups, original: &Original) -> Result<Restored, TaskError> {
    match original {
        Original::CgroupFile { .. } | Original::Membership { .. } | Original::Created { .. } => {
            cgroups.restore(original)
        }
        _ => restore_thread(original),
    }
}

/// The order (indices into `originals`, given in the order their changes
/// were made) to put them back: every setting and move newest first, then
/// the cgroups Lever created ([`Original::Created`]), deepest first — a
/// cgroup is empty of tasks and children only once all of that is done,
/// whichever requests the originals were handed between.
pub fn restore_order(originals: &[Original]) -> Vec<usize> {
    let depth = |i: &usize| match &originals[*i] {
        Original::Created { cgroup } => cgroup.trim_matches('/').split('/').count(),
        _ => 0,
    };
    let (mut created, rest): (Vec<usize>, Vec<usize>) = (0..originals.len())
        .rev()
        .partition(|&i| matches!(originals[i], Original::Created { .. }));
    // Stable: equal depths stay newest first.
    created.sort_by_key(|i| std::cmp::Reverse(depth(i)));
    rest.into_iter().chain(created).collect()
}

/// Everything that can go wrong changing a task or a cgroup.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The thread or process does not exist (ESRCH, or no `/proc/PID`).
    #[error("task {tid}: no such thread or process")]
    Gone {
        /// The tid or pid.
        tid: i32,
    },
    /// Not permitted (EPERM/EACCES): another user's task, or a real-time
    /// policy without CAP_SYS_NICE.
    #[error("task {tid}: {op} not allowed (need root or CAP_SYS_NICE): {source}")]
    NotAllowed {
        /// The system call.
        op: &'static str,
        /// The task.
        tid: i32,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// The kernel refused the value (EINVAL: a CPU not present, a
    /// priority out of range).
    #[error("task {tid}: {op} rejected the value: {source}")]
    Rejected {
        /// The system call.
        op: &'static str,
        /// The task.
        tid: i32,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// The feature is missing on this machine, and why.
    #[error("{what} is not available here because {why}")]
    NotAvailable {
        /// What was asked for.
        what: String,
        /// Why it is missing.
        why: String,
    },
    /// A cgroup file (through the root prefix) failed.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// Creating or removing a cgroup failed.
    #[error("cgroup {cgroup}: {op} failed: {source}")]
    Cgroup {
        /// Cgroup path below the mount.
        cgroup: String,
        /// `create` or `remove`.
        op: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A cgroup original given to [`restore_thread`] or a thread original
    /// to [`Cgroups::restore`] (use [`restore`]).
    #[error("this original is restored by the other restorer (use lever_tasks::restore)")]
    WrongRestorer,
}
