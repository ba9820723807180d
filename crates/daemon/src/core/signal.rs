//! SIGNAL: triggering a use case of the target (`docs/usecases.md`).
//!
//! A use case resolves (with the trigger's fps/width/height) to node
//! settings and a task plan. The node settings become one request exactly
//! as an ACQUIRE's, so it aggregates, expires, dies with its client and
//! counts against the limits like any other. The task plan (cgroup files,
//! thread rules) is applied to the requesting process after the request
//! is granted, each original journalled in the task journal first, and
//! put back when the request ends however it ends.
//!
//! A use case that only moves threads or sets cgroup files is a request
//! with no pairs (an engine lease): it lives, expires and ends like any
//! other. What of the task plan could not be applied (a controller the
//! kernel lacks, a thread setting refused, a process not in the root's
//! `/proc`, as under a simulated board) is in the SIGNAL's report
//! (`not_applied`) and the log; the request holds the rest.

use super::{json_reply, refuse, Client, Core};
use crate::tasks::TaskJournal;
use lever_engine::{Permission, RequestId};
use lever_protocol::{Acquire, ErrorCode, Lease, NotApplied, Reply, Signal, SignalLease};
use lever_targets::usecase::Attr;
use lever_tasks::{Cgroups, Original, Restored};
use std::collections::HashMap;
use std::time::Duration;

/// What [`Core::apply_tasks`] did with a task plan.
#[derive(Debug, Default)]
pub(super) struct TaskOutcome {
    /// Settings made.
    pub applied: usize,
    /// What was not applied, and why.
    pub not_applied: Vec<NotApplied>,
}

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
    /// How the log names each holding request: `use case NAME (request
    /// HANDLE, pid N)`, or `app NAME (pid N)` for an app's own plan,
    /// which has no handle.
    names: HashMap<RequestId, String>,
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

    /// Why thread rules and `move_to` cannot reach this machine's
    /// processes, if they cannot: the daemon's own process is not in its
    /// root's `/proc` (a simulated board's tree holds only the processes a
    /// test puts there). For the start line and STATUS's `task_rules`.
    pub fn task_rules_unavailable(&self) -> Option<String> {
        let me = std::process::id();
        (!self.fs.exists(&format!("/proc/{me}"))).then(|| {
            format!(
                "thread rules and move_to apply only to processes in {}/proc, and this machine's are not there (a simulated board): use cases and apps set their nodes and cgroup files only",
                self.fs.root().display()
            )
        })
    }

    /// Does the target have any thread rule or `move_to` (in a use case or
    /// an app)? Only then is [`Core::task_rules_unavailable`] worth saying.
    pub fn has_task_rules(&self) -> bool {
        let per_process = |p: &lever_tasks::TaskPlan| p.move_to.is_some() || !p.threads.is_empty();
        self.target
            .usecases
            .iter()
            .any(|uc| per_process(&uc.resolve(&[]).task_plan()))
            || self.target.apps.iter().any(|a| per_process(&a.task_plan()))
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
        let plan = resolved.task_plan();
        // A use case that only moves threads or sets cgroup files is a
        // request with no pairs: the lease its task settings hang on.
        if pairs.is_empty() && plan.is_empty() {
            return refuse(
                ErrorCode::Invalid,
                format!(
                    "use case {label} sets nothing this board has (its optional resources are missing here)"
                ),
            );
        }
        let acquire = Acquire {
            handle: None,
            lease,
            priority: s.priority,
            detach: s.detach,
            report: s.report,
            pairs,
        };
        let reply = self.acquire_labelled(client, acquire, now, Some(label.clone()));
        let report = self.granted_report.take();
        let Some(id) = self.granted.take() else {
            return reply;
        };
        if plan.is_empty() {
            return reply;
        }
        match self.apply_tasks(id, client.id.pid, &plan, &label) {
            Err(e) => {
                // Without a durable original no change may stay: take the
                // whole request back.
                let undo = self.engine.release(id).unwrap_or_default();
                self.untrack(id);
                self.apply(&undo, &"use case refused: task journal failed");
                self.end_tasks(id);
                refuse(
                    ErrorCode::Internal,
                    format!("could not journal the original of a task setting: {e}"),
                )
            }
            Ok(outcome) => match report {
                // The report says what of the task part was applied.
                Some(mut doc) => {
                    doc.tasks_applied = Some(outcome.applied);
                    doc.not_applied = outcome.not_applied;
                    json_reply(&doc)
                }
                None => reply,
            },
        }
    }

    /// Apply a use case's or app's task plan to process `pid` for request
    /// `id`. `Err` only when an original could not be journalled; what
    /// could not be set is in the outcome (and the log).
    pub(super) fn apply_tasks(
        &mut self,
        id: RequestId,
        pid: i32,
        plan: &lever_tasks::TaskPlan,
        label: &str,
    ) -> std::io::Result<TaskOutcome> {
        // Per-process parts need the process in the root's /proc; under a
        // simulated board the real processes are not there. Say so instead
        // of failing on each thread.
        let mut not_applied = Vec::new();
        let reachable = self.fs.exists(&format!("/proc/{pid}"));
        let stripped;
        let plan = if reachable || (plan.move_to.is_none() && plan.threads.is_empty()) {
            plan
        } else {
            let why = format!(
                "process {pid} is not in {}/proc (a simulated board holds only the processes put there)",
                self.fs.root().display()
            );
            if let Some(to) = &plan.move_to {
                not_applied.push(NotApplied {
                    what: format!("move_to {to}"),
                    why: why.clone(),
                });
            }
            for rule in &plan.threads {
                not_applied.push(NotApplied {
                    what: format!(
                        "thread rule for {}",
                        rule.comm
                            .as_deref()
                            .map_or("every thread".to_string(), |c| format!("comm {c}"))
                    ),
                    why: why.clone(),
                });
            }
            stripped = lever_tasks::TaskPlan {
                cgroups: plan.cgroups.clone(),
                move_to: None,
                threads: Vec::new(),
            };
            &stripped
        };
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
            return Ok(TaskOutcome::default());
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
        // An app's own plan is named by its app; a use case's by the
        // handle of its request.
        let who = if super::apps::is_app_tasks(id) {
            format!("{label} (pid {pid})")
        } else {
            format!("use case {label} (request {}, pid {pid})", id.0)
        };
        self.tasks.names.insert(id, who.clone());
        let applied = result?;
        not_applied.extend(applied.failures.iter().map(|(what, e)| NotApplied {
            what: what.clone(),
            why: e.to_string(),
        }));
        for n in &not_applied {
            self.log
                .warn(&format!("{who}: {} not applied: {}", n.what, n.why));
        }
        let made = applied.made;
        self.log.info(&format!(
            "{who}: {made} task setting(s) applied, {} not",
            not_applied.len()
        ));
        Ok(TaskOutcome {
            applied: made,
            not_applied,
        })
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
                "{}: cgroup {cgroup} stays for {}",
                self.task_owner(id),
                self.task_owner(user)
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

    /// How the log names request `id` of the task side.
    fn task_owner(&self, id: RequestId) -> String {
        self.tasks
            .names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| super::task_request_name(id.0))
    }

    /// Put back, newest first, the task settings request `id` made (none
    /// for most requests: one map lookup).
    pub(super) fn end_tasks(&mut self, id: RequestId) {
        let Some(mut originals) = self.tasks.held.remove(&id) else {
            return;
        };
        self.tasks.uses.remove(&id);
        self.hand_over_created(id, &mut originals);
        let who = self.task_owner(id);
        self.tasks.names.remove(&id);
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
                Ok(Restored::Skipped { why }) => {
                    self.log.info(&format!("{who}: nothing to restore: {why}"))
                }
                Err(e) => {
                    clean = false;
                    self.log.warn(&format!(
                        "{who}: could not restore {o:?}: {e}; kept in the task journal for the next start"
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
