//! Applying everything a use case or app sets on one process — cgroup
//! files, a cgroup for the whole process, rules for its threads — with
//! each original handed to a journal callback *before* its change is made,
//! so a crash between the two never loses an original.

use crate::model::{CgroupSetting, Original, ThreadRule};
use crate::{thread_comm, threads_of, Cgroups, TaskError};
use serde::Serialize;

/// The task part of a request (from a resolved use case or an app entry).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TaskPlan {
    /// Cgroup files to write (cgroups are created as needed).
    pub cgroups: Vec<CgroupSetting>,
    /// A cgroup to move the whole process into.
    pub move_to: Option<String>,
    /// Rules for the process's threads, matched by comm.
    pub threads: Vec<ThreadRule>,
}

impl TaskPlan {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.cgroups.is_empty() && self.move_to.is_none() && self.threads.is_empty()
    }
}

/// What [`apply_plan`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Every original, in the order the changes were made; restore them in
    /// reverse.
    pub originals: Vec<Original>,
    /// Changes that could not be made (a kernel without uclamp, a policy
    /// without privilege, a rejected value), each with what was tried; the
    /// rest of the plan was still applied.
    pub failures: Vec<(String, TaskError)>,
    /// Changes made: cgroups created, files written, tasks moved, thread
    /// settings set (an original whose change then failed is not one).
    pub made: usize,
}

/// Apply `plan` to process `pid`. For every change the original is read,
/// passed to `journal` (which must make it durable), and only then is the
/// change made; a journal error stops everything and is returned. Threads
/// that exit during the walk are skipped; other failures are collected in
/// [`Applied::failures`].
pub fn apply_plan<E>(
    cg: &Cgroups,
    pid: i32,
    plan: &TaskPlan,
    mut journal: impl FnMut(&Original) -> Result<(), E>,
) -> Result<Applied, E> {
    let mut out = Applied::default();
    for s in &plan.cgroups {
        let what = format!("{} of {}", s.knob, s.cgroup);
        let step = ensure(
            cg,
            &s.cgroup,
            &[s.knob.controller()],
            &mut out,
            &mut journal,
        )?
        .and_then(|()| cg.file_original(&s.cgroup, s.knob));
        match step {
            Ok(o) => {
                journal(&o)?;
                out.originals.push(o);
                match cg.write_value(&s.cgroup, s.knob, &s.value) {
                    Ok(_) => out.made += 1,
                    Err(e) => out
                        .failures
                        .push((what, why_not(cg, s.knob.controller(), e))),
                }
            }
            Err(e) => out
                .failures
                .push((what, why_not(cg, s.knob.controller(), e))),
        }
    }
    if let Some(to) = &plan.move_to {
        move_into(cg, pid, false, to, &mut out, &mut journal)?;
    }
    if plan.threads.is_empty() {
        // No rule to match: the process's threads need not be listed.
        return Ok(out);
    }
    let tids = match threads_of(cg.fs(), pid) {
        Ok(t) => t,
        Err(e) => {
            out.failures.push((format!("threads of {pid}"), e));
            Vec::new()
        }
    };
    for tid in tids {
        let Ok(Some(comm)) = thread_comm(cg.fs(), pid, tid) else {
            continue;
        };
        for rule in plan.threads.iter().filter(|r| r.matches(&comm)) {
            for setting in &rule.settings {
                let what = format!("{setting:?} of thread {tid} ({comm})");
                match crate::original_of(tid, setting) {
                    Ok(o) => {
                        journal(&o)?;
                        out.originals.push(o);
                        match crate::write_setting(tid, setting) {
                            Ok(()) => out.made += 1,
                            Err(TaskError::Gone { .. }) => {}
                            Err(e) => out.failures.push((what, e)),
                        }
                    }
                    Err(TaskError::Gone { .. }) => {}
                    Err(e) => out.failures.push((what, e)),
                }
            }
            if let Some(to) = &rule.cgroup {
                move_into(cg, tid, true, to, &mut out, &mut journal)?;
            }
        }
    }
    Ok(out)
}

/// The reason a cgroup change for `controller` failed: the controller's
/// absence when that is the cause (cgroup v1, no cgroup2 hierarchy), which
/// says more than the missing file it led to; else `e`.
fn why_not(cg: &Cgroups, controller: &str, e: TaskError) -> TaskError {
    cg.controller_unavailable(controller).unwrap_or(e)
}

/// Create `cgroup` and its missing parents as [`Cgroups::ensure`] does,
/// handing an [`Original::Created`] for each to `journal` before it is
/// made: restored in reverse, what Lever created goes again (if empty),
/// children before parents. A cgroup that already exists is never
/// Lever's to remove.
fn ensure<E>(
    cg: &Cgroups,
    cgroup: &str,
    controllers: &[&str],
    out: &mut Applied,
    journal: &mut impl FnMut(&Original) -> Result<(), E>,
) -> Result<Result<(), TaskError>, E> {
    let parts: Vec<&str> = cgroup.trim_matches('/').split('/').collect();
    // The root too: busybox-init boards enable no controller there.
    if !controllers.is_empty() {
        if let Err(e) = cg.enable_controllers("", controllers) {
            return Ok(Err(e));
        }
    }
    for n in 1..=parts.len() {
        let path = parts[..n].join("/");
        if !cg.exists(&path) {
            let o = Original::Created {
                cgroup: path.clone(),
            };
            journal(&o)?;
            out.originals.push(o);
            if let Err(e) = cg.create(&path) {
                return Ok(Err(e));
            }
            out.made += 1;
        }
        if n < parts.len() {
            if let Err(e) = cg.enable_controllers(&path, controllers) {
                return Ok(Err(e));
            }
        }
    }
    Ok(Ok(()))
}

fn move_into<E>(
    cg: &Cgroups,
    pid: i32,
    thread: bool,
    to: &str,
    out: &mut Applied,
    journal: &mut impl FnMut(&Original) -> Result<(), E>,
) -> Result<(), E> {
    let what = format!(
        "move {} {pid} to {to}",
        if thread { "thread" } else { "process" }
    );
    match ensure(cg, to, &[], out, journal)?.and_then(|()| cg.membership_of(pid, thread)) {
        Ok(o) => {
            journal(&o)?;
            out.originals.push(o);
            match cg.attach_task(pid, thread, to) {
                Ok(()) => out.made += 1,
                Err(TaskError::Gone { .. }) => {}
                Err(e) => out.failures.push((what, cg.check().err().unwrap_or(e))),
            }
        }
        Err(TaskError::Gone { .. }) => {}
        Err(e) => out.failures.push((what, cg.check().err().unwrap_or(e))),
    }
    Ok(())
}
