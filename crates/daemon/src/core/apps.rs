//! Requests owned by a process instead of a connection: detected or
//! registered apps (`apps:` in the target) — while a matching process
//! runs, its use cases are requests owned by it and its own task plan (a
//! cgroup for the whole process, thread rules) holds — and BIND, one use
//! case for the life of a process (a GameMode game). All of it ends when
//! the process exits. Detection and the pidfds are `crate::apps` (the
//! event loop's).

use super::{refuse, Client, Core};
use crate::identity::Identity;
use lever_engine::RequestId;
use lever_protocol::{ErrorCode, Priority, Reply, Signal, SignalLease};
use std::time::Duration;

/// Task originals of an app's own plan live under this request id space
/// (handles are 31-bit, so they never collide).
const APP_TASKS: u64 = 1 << 62;

/// How the log names request `id` of the task journal when nothing better
/// is known: a request's id is its handle (what clients and `lever status`
/// show); an app's own task settings have no handle.
pub fn task_request_name(id: u64) -> String {
    if id & APP_TASKS != 0 {
        "an app's own task settings".to_string()
    } else {
        format!("request {id}")
    }
}

/// Is `id` an app's own task plan (not a request with a handle)?
pub(super) fn is_app_tasks(id: RequestId) -> bool {
    id.0 & APP_TASKS != 0
}

/// A refusal that means the request was not granted for a reason the
/// client must hear (a cap or a permission), not a board that lacks a
/// resource.
fn is_refusal(reply: &Reply) -> bool {
    matches!(
        reply,
        Reply::Error {
            code: ErrorCode::Limit | ErrorCode::NotPermitted | ErrorCode::Internal,
            ..
        }
    )
}

impl Core {
    /// App `name` started as process `app_pid`, owned here by connection
    /// id `conn` (unique, like a client's): trigger its use cases, at
    /// system-low (the board's own configuration), and apply its task
    /// plan. `account` is whom its requests are counted against: the
    /// client that registered it, or (detected) the process's own uid —
    /// a third-party uid's apps take from that uid's share, never the
    /// system reserve.
    ///
    /// `Err` is a refusal (a cap or a permission) of one of its use cases:
    /// then nothing of the app is left in place. `Ok` lists what could not
    /// be done but did not stop it, for the log.
    pub fn app_started(
        &mut self,
        conn: u64,
        app_pid: i32,
        account: &Identity,
        name: &str,
        now: Duration,
    ) -> Result<Vec<String>, Reply> {
        let Some(app) = self.target.app(name).cloned() else {
            return Ok(vec![format!(
                "no app {name:?} in target {}",
                self.target.name
            )]);
        };
        let client = Client {
            conn,
            id: Identity {
                pid: app_pid,
                ..account.clone()
            },
            board: true,
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
            if is_refusal(&reply) {
                self.client_gone(conn);
                return Err(match reply {
                    Reply::Error { code, message } => Reply::Error {
                        code,
                        message: format!("app {name}, use case {uc}: {message}"),
                    },
                    other => other,
                });
            }
            if let Reply::Error { message, .. } = reply {
                problems.push(format!("use case {uc}: {message}"));
            }
        }
        let plan = app.task_plan();
        if !plan.is_empty() {
            let label = format!("app {name}");
            if let Err(e) = self.apply_tasks(RequestId(APP_TASKS | conn), app_pid, &plan, &label) {
                problems.push(format!("task journal: {e}"));
            }
        }
        Ok(problems)
    }

    /// The app process of `conn` exited: end its requests, put its task
    /// settings back.
    pub fn app_exited(&mut self, conn: u64) {
        self.client_gone(conn);
        self.end_tasks(RequestId(APP_TASKS | conn));
    }

    /// BIND: `client` triggers `signal` for the life of process `pid`,
    /// owned here by `owner` (the process's owner id, whose pidfd the
    /// event loop watches). The use case is checked and counted as
    /// `client`'s; any connection of its uid (and root) may see and
    /// release it. Its thread rules apply to process `pid`.
    pub fn bind(
        &mut self,
        client: &Client,
        owner: u64,
        pid: i32,
        signal: Signal,
        now: Duration,
    ) -> Reply {
        if signal.detach {
            return refuse(
                ErrorCode::Invalid,
                "BIND cannot be detached: its lease is the process",
            );
        }
        let as_process = Client {
            conn: owner,
            id: Identity {
                pid,
                ..client.id.clone()
            },
            board: client.board,
        };
        self.binding = true;
        let reply = self.signal(&as_process, signal, now);
        self.binding = false;
        reply
    }
}
