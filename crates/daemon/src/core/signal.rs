//! SIGNAL: triggering a use case of the target (`docs/usecases.md`).
//!
//! A use case resolves (with the trigger's fps/width/height) to node
//! settings and a task plan. The node settings become one request exactly
//! as an ACQUIRE's, so it aggregates, expires, dies with its client and
//! counts against the limits like any other. The task plan (cgroup files,
//! thread rules) is applied to the requesting process after the request
//! is granted, each original journalled in the task journal first, and
//! put back when the request ends however it ends.

use super::{refuse, Client, Core};
use crate::tasks::TaskJournal;
use lever_engine::{Permission, RequestId};
use lever_protocol::{Acquire, ErrorCode, Lease, Reply, Signal, SignalLease};
use lever_targets::usecase::Attr;
use lever_tasks::{Cgroups, Original, Restored};
use std::collections::HashMap;
use std::time::Duration;

/// The task side of triggered use cases.
#[derive(Default)]
pub(super) struct TaskState {
    /// Opened by the daemon at start (after recovery), or on first use.
    journal: Option<TaskJournal>,
    /// The cgroup2 hierarchy under the daemon's root, found on first use.
    cgroups: Option<Cgroups>,
    /// Originals per request, in the order the changes were made.
    held: HashMap<RequestId, Vec<Original>>,
    /// What STATUS says about app detection.
    app_detection: Option<String>,
    /// The cgroups each holding request's plan names (files it writes,
    /// where it moves tasks): a cgroup Lever created stays while any of
    /// them is live.
    uses: HashMap<RequestId, Vec<String>>,
}

impl Core {
    /// Use `journal` for task originals (the daemon recovered it at start).
    pub fn set_task_journal(&mut self, journal: TaskJournal) {
        self.tasks.journal = Some(journal);
    }

    /// What STATUS says about app detection (`on`, `unavailable: WHY`).
    pub fn set_app_detection(&mut self, state: String) {
        self.tasks.app_detection = Some(state);
    }

    pub(super) fn tasks_app_detection(&self) -> Option<String> {
        self.tasks.app_detection.clone()
    }

    /// Requests holding per-task or cgroup settings now.
    pub fn task_holders(&self) -> usize {
        self.tasks.held.len()
    }

    pub(super) fn signal(&mut self, client: &Client, s: Signal, now: Duration) -> Reply {
        let Some(uc) = self.target.usecase(&s.usecase) else {
            return refuse(
                ErrorCode::UnknownUseCase,
                format!(
                    "no use case named or numbered {:?} in target {} (`lever usecases` lists them)",
                    s.usecase, self.target.name
                ),
            );
        };
        if uc.permission == Permission::System && !client.may_use_system() {
            return refuse(
                ErrorCode::NotPermitted,
                format!(
                    "use case {} is system-only; uid {} is a third-party client",
                    uc.name, client.id.uid
                ),
            );
        }
        let attrs: Vec<(Attr, u32)> = [
            (Attr::Fps, s.fps),
            (Attr::Width, s.width),
            (Attr::Height, s.height),
        ]
        .into_iter()
        .filter_map(|(a, v)| Some((a, v?.get())))
        .collect();
        let resolved = uc.resolve(&attrs);
        let lease = match s.lease {
            // A default longer than the wire's u32 is capped (49 days).
            SignalLease::UseCaseDefault => {
                Lease::from_ms(u32::try_from(uc.duration_ms).unwrap_or(u32::MAX - 1))
            }
            SignalLease::Given(l) => l,
        };
        let label = match &resolved.variant {
            Some(v) => format!("{}/{v}", resolved.usecase),
            None => resolved.usecase.clone(),
        };
        let pairs: Vec<(u32, i64)> = resolved
            .adjustments()
            .into_iter()
            .map(|(o, v)| (o.0, v))
            .collect();
        if pairs.is_empty() {
            return refuse(
                ErrorCode::Invalid,
                format!(
                    "use case {label} sets no resource this board has (its optional resources are missing here)"
                ),
            );
        }
        let plan = resolved.task_plan();
        let acquire = Acquire {
            handle: None,
            lease,
            priority: s.priority,
            detach: s.detach,
            report: s.report,
            pairs,
        };
        let reply = self.acquire_labelled(client, acquire, now, Some(label.clone()));
        let Some(id) = self.granted.take() else {
            return reply;
        };
        if plan.is_empty() {
            return reply;
        }
        if let Err(e) = self.apply_tasks(id, client.id.pid, &plan, &label) {
            // Without a durable original no change may stay: take the
            // whole request back.
            let undo = self.engine.release(id).unwrap_or_default();
            self.untrack(id);
            self.apply(&undo, "use case refused: task journal failed");
            self.end_tasks(id);
            return refuse(
                ErrorCode::Internal,
                format!("could not journal the original of a task setting: {e}"),
            );
        }
        reply
    }

    pub(super) fn apply_tasks(
        &mut self,
        id: RequestId,
        pid: i32,
        plan: &lever_tasks::TaskPlan,
        label: &str,
    ) -> std::io::Result<()> {
        if self.tasks.journal.is_none() {
            let dir = self
                .journal
                .path()
                .parent()
                .unwrap_or(std::path::Path::new("."));
            let (j, _) = TaskJournal::recover_and_open(dir, &self.fs)?;
            self.tasks.journal = Some(j);
        }
        let fs = self.fs.clone();
        let cgroups = self
            .tasks
            .cgroups
            .get_or_insert_with(|| Cgroups::discover(fs));
        let Some(journal) = self.tasks.journal.as_mut() else {
            return Ok(());
        };
        journal.hold();
        let mut recorded = Vec::new();
        let result = lever_tasks::apply_plan(cgroups, pid, plan, |o| {
            journal.record(id.0, o)?;
            recorded.push(o.clone());
            Ok::<(), std::io::Error>(())
        });
        // Whatever was changed before a journal error is held (and undone
        // by `end_tasks`).
        self.tasks.held.insert(id, recorded);
        let names = plan
            .cgroups
            .iter()
            .map(|s| s.cgroup.as_str())
            .chain(plan.move_to.as_deref())
            .chain(plan.threads.iter().filter_map(|r| r.cgroup.as_deref()))
            .map(|c| c.trim_matches('/').to_string())
            .collect();
        self.tasks.uses.insert(id, names);
        let applied = result?;
        for (what, e) in &applied.failures {
            self.log.warn(&format!(
                "use case {label} (request {}): {what} not set: {e}",
                id.0
            ));
        }
        self.log.info(&format!(
            "use case {label} (request {}, pid {pid}): {} task setting(s) applied",
            id.0,
            applied.originals.len()
        ));
        Ok(())
    }

    /// A cgroup request `id` created that another live request still uses
    /// (itself or a cgroup below it) is not removed now: its `Created`
    /// original passes to that request (journalled under it), to be
    /// removed when that one ends.
    fn hand_over_created(&mut self, id: RequestId, originals: &mut Vec<Original>) {
        let mut kept = Vec::with_capacity(originals.len());
        // Handed-over originals keep their order at the front of the new
        // list (a parent before its child, so the child goes first).
        let mut placed: HashMap<RequestId, usize> = HashMap::new();
        for o in originals.drain(..) {
            let Original::Created { cgroup } = &o else {
                kept.push(o);
                continue;
            };
            let user = self.tasks.uses.iter().find_map(|(r, names)| {
                names
                    .iter()
                    .any(|n| n == cgroup || n.starts_with(&format!("{cgroup}/")))
                    .then_some(*r)
            });
            let Some(user) = user else {
                kept.push(o);
                continue;
            };
            if let Some(j) = self.tasks.journal.as_mut() {
                if let Err(e) = j.record(user.0, &o) {
                    self.log
                        .warn(&format!("could not append to the task journal: {e}"));
                }
            }
            self.log.info(&format!(
                "request {}: cgroup {cgroup} stays for request {}",
                id.0, user.0
            ));
            // First in its list: put back last, after its tasks left.
            if let Some(list) = self.tasks.held.get_mut(&user) {
                let at = placed.entry(user).or_default();
                list.insert(*at, o);
                *at += 1;
            }
        }
        *originals = kept;
    }

    /// Put back, newest first, the task settings request `id` made (none
    /// for most requests: one map lookup).
    pub(super) fn end_tasks(&mut self, id: RequestId) {
        let Some(mut originals) = self.tasks.held.remove(&id) else {
            return;
        };
        self.tasks.uses.remove(&id);
        self.hand_over_created(id, &mut originals);
        let Some(cgroups) = self.tasks.cgroups.as_ref() else {
            return;
        };
        let mut clean = true;
        for o in lever_tasks::restore_order(&originals)
            .into_iter()
            .map(|i| &originals[i])
        {
            match lever_tasks::restore(cgroups, o) {
                Ok(Restored::Done) => {}
                Ok(Restored::Skipped { why }) => self
                    .log
                    .info(&format!("request {}: nothing to restore: {why}", id.0)),
                Err(e) => {
                    clean = false;
                    self.log.warn(&format!(
                        "request {}: could not restore {o:?}: {e}; kept in the task journal for the next start",
                        id.0
                    ));
                }
            }
        }
        if let Some(j) = self.tasks.journal.as_mut() {
            // An original that could not be put back stays owed: no `done`,
            // so the next start tries again.
            let result = if clean { j.done(id.0) } else { Ok(()) };
            if let Err(e) = result {
                self.log
                    .warn(&format!("could not append to the task journal: {e}"));
            }
        }
    }
}
