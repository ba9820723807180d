//! Profiles applied by the daemon (PROFILE / PROFILE_OFF, `docs/profiles.md`).
//!
//! A profile is resolved and validated by `lever-profiles` before anything
//! is written. Its writes split in two:
//!
//! - writes to the target's resources become **one engine request** at
//!   [`PriorityClass::Profile`], below every class a client can ask for.
//!   Its values are votes aggregated with every perflock and use case by
//!   each resource's own rule (a floor's highest value wins, a cap's
//!   lowest; `docs/engine.md`), so a boost below the profile's floor
//!   changes nothing, one above it wins while it lives, and when that
//!   ends the node goes back to the profile's value;
//! - every other write (sysctl, sysfs, IRQ affinity, workqueue cpumask,
//!   cpuidle) is written here as one transaction through the journal: each
//!   node's original is recorded (fsync) before its write, a refused write
//!   rolls back what came before it, and a crash is undone at the next start
//!   by the journal's recovery like any other node.
//!
//! Exactly one profile is in effect: the winning hold (`powersave` beats
//! `performance` beats the rest, as power-profiles-daemon ranks power-saver
//! over performance; among equals the newest), else the base profile.
//! Switching rolls the old one back before the new one is applied. The base
//! profile is kept in `STATE_DIR/profile` (JSON, written atomically) so a
//! restart re-applies it after the journal put every original back.

use super::{refuse, Client, Core};
use crate::journal::Journal;
use lever_engine::{Opcode, OwnerId, PriorityClass, Request, RequestId, ResourceKind};
use lever_kernel::{KernelError, KernelFs};
use lever_profiles::{Entry, Nodes, Options, Resolved};
use lever_protocol::{ErrorCode, Handle, Profile, ProfileHold, ProfileStatus, Reply};
use lever_tunables::OriginalsLog;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Owner of the profile's engine request: apart from connection ids and
/// from detached owners (bit 63).
const PROFILE_OWNER: u64 = 1 << 62;

/// The base profile's file in the state directory.
pub const BASE_FILE: &str = "profile";
const BASE_FORMAT: &str = "lever-daemon-profile/1";

/// The base profile as `STATE_DIR/profile` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct BaseFile {
    format: String,
    name: String,
    rt_cpus: Option<String>,
}

/// A profile asked for, resolved.
#[derive(Debug, Clone)]
struct Choice {
    /// The name as the client gave it.
    name: String,
    rt_cpus: Option<String>,
    resolved: Resolved,
    /// Unique per PROFILE: a new base with the same name is a new choice.
    seq: u64,
}

#[derive(Debug, Clone)]
struct Hold {
    handle: Handle,
    conn: u64,
    pid: i32,
    /// Whom it is counted against (`Core::holds_count`).
    uid: u32,
    third_party: bool,
    choice: Choice,
}

/// What is written now.
#[derive(Debug)]
struct Active {
    seq: u64,
    name: String,
    /// The engine request holding the profile's resources.
    request: Option<RequestId>,
    /// The other writes, with their originals, in write order.
    entries: Vec<Entry>,
}

/// The daemon's profiles (a field of [`Core`]).
#[derive(Debug, Default)]
pub(super) struct Profiles {
    base: Option<Choice>,
    /// Oldest first.
    holds: Vec<Hold>,
    active: Option<Active>,
    seq: u64,
}

impl Profiles {
    /// Is `handle` a hold's (so no request may get it)?
    pub(super) fn has_handle(&self, handle: u32) -> bool {
        self.holds.iter().any(|h| h.handle.get() == handle)
    }

    /// The profile whose engine request is `id`, if it is one.
    pub(super) fn name_of(&self, id: RequestId) -> Option<&str> {
        self.active
            .as_ref()
            .filter(|a| a.request == Some(id))
            .map(|a| a.name.as_str())
    }

    /// The choice that should be in effect: the winning hold, else the base.
    fn effective(&self) -> Option<&Choice> {
        self.holds
            .iter()
            .enumerate()
            .max_by_key(|(i, h)| (rank(&h.choice.resolved.profile), *i))
            .map(|(_, h)| &h.choice)
            .or(self.base.as_ref())
    }
}

/// power-profiles-daemon's order: power-saver beats performance beats the
/// rest (a battery saver must not lose to a game's boost).
fn rank(profile: &str) -> u8 {
    match profile {
        "powersave" => 2,
        "performance" => 1,
        _ => 0,
    }
}

/// The kernel below the daemon's root, with every node's original
/// recorded in the journal (durably) before the node's first write.
struct Journaled<'a> {
    fs: &'a KernelFs,
    journal: RefCell<&'a mut Journal>,
    recorded: RefCell<Vec<String>>,
}

impl Nodes for Journaled<'_> {
    fn read(&self, node: &str) -> Result<String, KernelError> {
        self.fs.read(node)
    }

    fn write(&self, node: &str, value: &str) -> Result<(), KernelError> {
        let mut recorded = self.recorded.borrow_mut();
        if !recorded.iter().any(|n| n == node) {
            let original = self.fs.read(node)?;
            self.journal
                .borrow_mut()
                .record(node, &original)
                .map_err(|source| KernelError::Io {
                    path: node.to_string(),
                    op: "journal the original of",
                    source,
                })?;
            recorded.push(node.to_string());
        }
        self.fs.write_raw(node, value)
    }
}

impl Journaled<'_> {
    /// The journal no longer owes these nodes their originals.
    fn forget<'n>(&self, nodes: impl IntoIterator<Item = &'n String>) -> Vec<String> {
        let mut problems = Vec::new();
        let mut journal = self.journal.borrow_mut();
        for n in nodes {
            if let Err(e) = journal.forget(n) {
                problems.push(format!("journal: {n}: {e}"));
            }
        }
        problems
    }
}

/// The refusal of a profile message from a third-party client.
fn third_party(client: &Client, what: &str) -> Option<Reply> {
    (!client.may_use_system()).then(|| {
        refuse(
            ErrorCode::NotPermitted,
            format!(
                "{what} needs a system client (root or the system group); uid {} is third-party",
                client.id.uid
            ),
        )
    })
}

/// Why a profile could not be put in effect: the reply's code and text.
type Failure = (ErrorCode, String);

impl Core {
    fn state_dir(&self) -> Option<PathBuf> {
        self.journal.path().parent().map(Path::to_path_buf)
    }

    /// PROFILE: resolve, then make it the base or a hold of `client`.
    ///
    /// A hold is any client's (ppd lets any desktop app hold a profile),
    /// counted against the same caps as its requests; the base profile is
    /// the board's, so only a system client may set it.
    pub(super) fn profile(&mut self, client: &Client, p: Profile, now: Duration) -> Reply {
        if !p.hold {
            if let Some(no) = third_party(client, "applying a base profile") {
                return no;
            }
        } else if let Some(message) = self.over_limit(client) {
            return refuse(ErrorCode::Limit, message);
        }
        let choice = match self.choose(&p.name, p.rt_cpus.as_deref()) {
            Ok(c) => c,
            Err((code, message)) => return refuse(code, message),
        };
        if p.hold {
            let (_, handle) = self.fresh_handle();
            let third_party = !client.id.system;
            self.profiles.holds.push(Hold {
                handle,
                conn: client.conn,
                pid: client.id.pid,
                uid: client.id.uid,
                third_party,
                choice,
            });
            if let Err((code, message)) = self.profile_switch(now) {
                self.profiles.holds.pop();
                self.profile_recover(now);
                return refuse(code, message);
            }
            self.holds_count
                .add(client.conn, client.id.uid, third_party);
            return Reply::Handle(handle.get());
        }
        let old = self.profiles.base.replace(choice);
        if let Err((code, message)) = self.profile_switch(now) {
            self.profiles.base = old;
            self.profile_recover(now);
            return refuse(code, message);
        }
        let base = self.profiles.base.as_ref().map(|c| BaseFile {
            format: BASE_FORMAT.into(),
            name: c.name.clone(),
            rt_cpus: c.rt_cpus.clone(),
        });
        if let Err(e) = self.save_base(base.as_ref()) {
            return refuse(
                ErrorCode::Internal,
                format!("profile applied, but it could not be kept for the next start: {e}"),
            );
        }
        Reply::Done
    }

    /// PROFILE_OFF: drop the base profile and restore what it wrote.
    pub(super) fn profile_off(&mut self, client: &Client, now: Duration) -> Reply {
        if let Some(no) = third_party(client, "removing the profile") {
            return no;
        }
        if self.profiles.base.is_none() {
            return refuse(ErrorCode::Invalid, "no base profile is applied");
        }
        let old = self.profiles.base.take();
        if let Err((code, message)) = self.profile_switch(now) {
            self.profiles.base = old;
            self.profile_recover(now);
            return refuse(code, message);
        }
        if let Err(e) = self.save_base(None) {
            return refuse(ErrorCode::Internal, e);
        }
        Reply::Done
    }

    /// RELEASE of a hold's handle; `None` when `handle` is no hold of
    /// `client`'s (then it is a request's).
    pub(super) fn profile_release(
        &mut self,
        client: &Client,
        handle: u32,
        now: Duration,
    ) -> Option<Reply> {
        let i = self.profiles.holds.iter().position(|h| {
            h.handle.get() == handle && (h.conn == client.conn || client.id.uid == 0)
        })?;
        let hold = self.profiles.holds.remove(i);
        self.holds_count
            .remove(hold.conn, hold.uid, hold.third_party);
        self.log.info(&format!(
            "profile hold {handle} ({}) released",
            hold.choice.name
        ));
        self.profile_settle(now);
        Some(Reply::Done)
    }

    /// Connection `conn` closed: its holds end.
    pub(super) fn profile_client_gone(&mut self, conn: u64, now: Duration) {
        let before = self.profiles.holds.len();
        let counts = &mut self.holds_count;
        // Named by its process, not the internal connection id.
        let mut pid = 0;
        self.profiles.holds.retain(|h| {
            let keep = h.conn != conn;
            if !keep {
                counts.remove(h.conn, h.uid, h.third_party);
                pid = h.pid;
            }
            keep
        });
        if self.profiles.holds.len() != before {
            self.log.info(&format!(
                "client pid {pid} gone, {} profile hold(s) ended",
                before - self.profiles.holds.len()
            ));
            self.profile_settle(now);
        }
    }

    /// At start: re-apply the base profile kept in the state directory
    /// (the journal has already put every original back). Returns what
    /// went wrong, for the log.
    pub fn restore_profile(&mut self) -> Option<String> {
        let dir = self.state_dir()?;
        let path = dir.join(BASE_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => return Some(format!("{}: {e}", path.display())),
        };
        let base: BaseFile = match serde_json::from_str(&text) {
            Ok(b) => b,
            Err(e) => return Some(format!("{}: not a base profile file: {e}", path.display())),
        };
        let choice = match self.choose(&base.name, base.rt_cpus.as_deref()) {
            Ok(c) => c,
            Err((_, e)) => return Some(format!("base profile {} not re-applied: {e}", base.name)),
        };
        self.profiles.base = Some(choice);
        match self.profile_switch(Duration::ZERO) {
            Ok(()) => {
                self.log
                    .info(&format!("base profile {} re-applied", base.name));
                None
            }
            Err((_, e)) => {
                self.profiles.base = None;
                Some(format!("base profile {} not re-applied: {e}", base.name))
            }
        }
    }

    /// STATUS's `profile`: absent when there is neither a base nor a hold.
    pub(super) fn profile_status(&self) -> Option<ProfileStatus> {
        let p = &self.profiles;
        if p.base.is_none() && p.holds.is_empty() {
            return None;
        }
        Some(ProfileStatus {
            base: p.base.as_ref().map(|c| c.name.clone()),
            effective: p.active.as_ref().map(|a| a.name.clone()),
            holds: p
                .holds
                .iter()
                .map(|h| ProfileHold {
                    handle: h.handle.get(),
                    name: h.choice.name.clone(),
                    pid: u32::try_from(h.pid).ok().filter(|&p| p > 0),
                })
                .collect(),
        })
    }

    /// `profile:NAME` when `id` is the engine request of the profile in
    /// effect: how STATUS and EXPLAIN name its votes.
    pub(super) fn profile_vote_label(&self, id: RequestId) -> Option<String> {
        self.profiles.name_of(id).map(|n| format!("profile:{n}"))
    }

    /// Load and resolve `name` against the daemon's target and tree.
    fn choose(&mut self, name: &str, rt_cpus: Option<&str>) -> Result<Choice, Failure> {
        let rt_cpus = rt_cpus.filter(|s| !s.trim().is_empty());
        let opts = Options {
            rt_cpus: match rt_cpus {
                None => None,
                Some(list) => Some(
                    lever_kernel::parse_cpu_list(list)
                        .filter(|c| !c.is_empty())
                        .ok_or_else(|| {
                            (
                                ErrorCode::Invalid,
                                format!("rt_cpus `{list}` is not a CPU list such as 2-3"),
                            )
                        })?,
                ),
            },
        };
        let chain = lever_profiles::load(name)
            .map_err(|e| (ErrorCode::Invalid, format!("profile {name}: {e}")))?;
        let resolved = lever_profiles::resolve(&chain, &self.target, &self.fs, &opts)
            .map_err(|e| (ErrorCode::Invalid, format!("profile {name}: {e}")))?;
        self.profiles.seq += 1;
        Ok(Choice {
            name: name.to_string(),
            rt_cpus: rt_cpus.map(str::to_string),
            resolved,
            seq: self.profiles.seq,
        })
    }

    /// Put the effective profile in effect, if it is not already: roll the
    /// active one back, then apply the new one. On error the new one is
    /// not applied (and nothing of it is written); the caller restores its
    /// bookkeeping and calls [`Core::profile_recover`].
    fn profile_switch(&mut self, now: Duration) -> Result<(), Failure> {
        let want = self.profiles.effective().cloned();
        let active = self.profiles.active.as_ref().map(|a| a.seq);
        if want.as_ref().map(|c| c.seq) == active {
            return Ok(());
        }
        self.profile_unapply();
        match want {
            None => Ok(()),
            Some(c) => self.profile_apply(&c, now),
        }
    }

    /// After a failed switch: put back whichever profile the (restored)
    /// bookkeeping says is in effect.
    fn profile_recover(&mut self, now: Duration) {
        if let Err((_, e)) = self.profile_switch(now) {
            self.log
                .warn(&format!("could not re-apply the previous profile: {e}"));
        }
    }

    /// A hold ended: whatever wins now goes in effect; failures are logged.
    pub(super) fn profile_settle(&mut self, now: Duration) {
        if let Err((_, e)) = self.profile_switch(now) {
            self.log.warn(&format!("profile not applied: {e}"));
        }
    }

    /// Write a choice: the other writes as one journaled transaction, then
    /// the resources as one engine request. Anything refused undoes all.
    fn profile_apply(&mut self, c: &Choice, now: Duration) -> Result<(), Failure> {
        let name = &c.resolved.profile;
        let mut pairs: Vec<(Opcode, i64)> = Vec::new();
        let mut direct = Vec::new();
        for w in &c.resolved.writes {
            let level = w
                .resource
                .as_deref()
                .and_then(|r| self.target.by_name(r))
                .filter(|s| s.node == w.node)
                .and_then(|s| Some((s.opcode, s.parse_level(&w.value)?)));
            match level {
                Some(pair) => pairs.push(pair),
                None => direct.push(w.clone()),
            }
        }
        let nodes = Journaled {
            fs: &self.fs,
            journal: RefCell::new(&mut self.journal),
            recorded: RefCell::new(Vec::new()),
        };
        let applied = match lever_profiles::apply(&nodes, &direct) {
            Ok(a) => a,
            Err(e) => {
                let kept: Vec<&String> = e.failed_restores.iter().map(|f| &f.node).collect();
                let back: Vec<String> = nodes
                    .recorded
                    .borrow()
                    .iter()
                    .filter(|n| !kept.contains(n))
                    .cloned()
                    .collect();
                for p in nodes.forget(&back) {
                    self.log.warn(&p);
                }
                let errno = e
                    .errno
                    .map_or_else(String::new, |n| format!(" (errno {n})"));
                self.log
                    .warn(&format!("profile {name} refused: {e}{errno}"));
                return Err((
                    ErrorCode::Invalid,
                    format!("profile {name} not applied: {e}{errno}"),
                ));
            }
        };
        for r in &applied.refused {
            self.log.info(&format!(
                "profile {name}: {} kept its value: {} (optional)",
                r.node, r.error
            ));
        }
        // Nodes whose value changed, the direct writes' and the request's.
        let mut written = applied.entries.iter().filter(|e| e.changed).count();
        let mut kept = applied.entries.len() - written;
        let mut request = None;
        if !pairs.is_empty() {
            let (id, _) = self.fresh_handle();
            self.refresh_pair_originals(&pairs);
            let req = Request {
                id,
                owner: OwnerId(PROFILE_OWNER),
                priority: PriorityClass::Profile,
                deadline: None,
                pairs,
            };
            let plan = match self.engine.acquire_as(req, now, true) {
                Ok(plan) => plan,
                Err(e) => {
                    self.undo_direct(name, &applied.entries);
                    return Err((ErrorCode::Invalid, format!("profile {name}: {e}")));
                }
            };
            // What each node had: Lever's last write, else (read by the
            // applier as it writes) its original. To count the writes that
            // changed it.
            let before: Vec<Option<String>> = plan
                .writes
                .iter()
                .map(|w| self.written.get(&w.resource).cloned())
                .collect();
            let failures = self.apply(&plan, &format_args!("profile {name}"));
            if let Some((code, err)) = failures.into_iter().next() {
                let undo = self.engine.release(id).unwrap_or_default();
                self.apply(&undo, &format_args!("profile {name} refused by the kernel"));
                self.undo_direct(name, &applied.entries);
                return Err((code, format!("profile {name} not applied: {err}")));
            }
            for (w, old) in plan.writes.iter().zip(before) {
                let old = old.or_else(|| self.applier.originals().get(&w.resource).cloned());
                let held_fd = self
                    .engine
                    .spec(w.resource)
                    .is_some_and(|s| s.kind == ResourceKind::HoldFd);
                if held_fd || self.written.get(&w.resource) != old.as_ref() {
                    written += 1;
                } else {
                    kept += 1;
                }
            }
            request = Some(id);
        }
        self.log.info(&format!(
            "profile {name} in effect: {written} node(s) written, {kept} already held the value, {} resource(s) held",
            request.map_or(0, |_| c.resolved.writes.len() - direct.len())
        ));
        self.profiles.active = Some(Active {
            seq: c.seq,
            name: c.name.clone(),
            request,
            entries: applied.entries,
        });
        Ok(())
    }

    /// Roll the active profile back: its request ends, its other writes
    /// get their originals.
    pub(super) fn profile_unapply(&mut self) {
        let Some(a) = self.profiles.active.take() else {
            return;
        };
        if let Some(id) = a.request {
            if let Ok(plan) = self.engine.release(id) {
                self.apply(&plan, &format_args!("profile {} off", a.name));
            }
        }
        self.undo_direct(&a.name, &a.entries);
        self.log.info(&format!("profile {} rolled back", a.name));
    }

    /// Write back the originals of `entries`; the journal keeps any that
    /// could not be written, so the next start retries them.
    fn undo_direct(&mut self, name: &str, entries: &[Entry]) {
        let nodes = Journaled {
            fs: &self.fs,
            journal: RefCell::new(&mut self.journal),
            recorded: RefCell::new(Vec::new()),
        };
        let (restored, problems) = match lever_profiles::rollback(&nodes, entries) {
            Ok(restored) => (restored, Vec::new()),
            Err(e) => {
                let p = e
                    .failures
                    .iter()
                    .map(|f| format!("profile {name}: could not restore {}: {}", f.node, f.error))
                    .collect();
                (e.restored, p)
            }
        };
        let mut problems = problems;
        problems.extend(nodes.forget(&restored));
        for p in problems {
            self.log.warn(&p);
        }
    }

    /// Keep (or, with `None`, remove) the base profile for the next start.
    fn save_base(&self, base: Option<&BaseFile>) -> Result<(), String> {
        let Some(dir) = self.state_dir() else {
            return Ok(());
        };
        let path = dir.join(BASE_FILE);
        let io = |op: &str, e: std::io::Error| format!("{}: {op}: {e}", path.display());
        let Some(base) = base else {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", e)),
                _ => Ok(()),
            };
        };
        let tmp = path.with_extension("new");
        let json = serde_json::to_string(base).map_err(|e| e.to_string())?;
        let mut f = std::fs::File::create(&tmp).map_err(|e| io("write", e))?;
        f.write_all(json.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| io("write", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| io("rename", e))?;
        std::fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("sync", e))
    }
}
