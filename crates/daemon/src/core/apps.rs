//! Detected apps (`apps:` in the target): while a matching process runs,
//! its use cases are requests owned by it and its own task plan (a cgroup
//! for the whole process, thread rules) holds; all of it ends when the
//! process exits. Detection itself is `crate::apps` (the event loop's).

use super::{Client, Core};
use crate::identity::Identity;
use lever_engine::RequestId;
use lever_protocol::{Priority, Reply, Signal, SignalLease};
use std::time::Duration;

/// Task originals of an app's own plan live under this request id space
/// (handles are 31-bit, so they never collide).
const APP_TASKS: u64 = 1 << 62;

impl Core {
    /// App `name` started as process `id.pid`, owned here by connection id
    /// `conn` (unique, like a client's): trigger its use cases, at
    /// system-low (the board's own configuration), and apply its task plan.
    /// Returns what could not be done, for the log.
    pub fn app_started(
        &mut self,
        conn: u64,
        id: Identity,
        name: &str,
        now: Duration,
    ) -> Vec<String> {
        let Some(app) = self.target.app(name).cloned() else {
            return vec![format!("no app {name:?} in target {}", self.target.name)];
        };
        let client = Client {
            conn,
            id: Identity { system: true, ..id },
        };
        let mut problems = Vec::new();
        for uc in &app.usecases {
            let reply = self.signal(
                &client,
                Signal {
                    usecase: uc.clone(),
                    lease: SignalLease::Given(lever_protocol::Lease::UntilReleased),
                    priority: Priority::SystemLow,
                    detach: false,
                    report: false,
                    fps: None,
                    width: None,
                    height: None,
                },
                now,
            );
            if let Reply::Error { message, .. } = reply {
                problems.push(format!("use case {uc}: {message}"));
            }
        }
        let plan = app.task_plan();
        if !plan.is_empty() {
            let label = format!("app {name}");
            if let Err(e) =
                self.apply_tasks(RequestId(APP_TASKS | conn), client.id.pid, &plan, &label)
            {
                problems.push(format!("task journal: {e}"));
            }
        }
        problems
    }

    /// The app process of `conn` exited: end its requests, put its task
    /// settings back.
    pub fn app_exited(&mut self, conn: u64) {
        self.client_gone(conn);
        self.end_tasks(RequestId(APP_TASKS | conn));
    }
}
