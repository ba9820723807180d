//! The daemon's decisions, apart from sockets and the event loop: who may
//! do what, request bookkeeping, applying plans with the journal, logging
//! every change, status and explain documents. Time is an argument.

mod apps;
mod doc;
mod profile;
mod signal;

pub use apps::task_request_name;
pub use doc::Doc;

use crate::identity::Identity;
use crate::journal::Journal;
use crate::log::Logger;
use crate::metrics::Metrics;
use lever_engine::ResourceSpec;
use lever_engine::{
    Action, Engine, EngineError, Opcode, OwnerId, Permission, Plan, PriorityClass, Request,
    RequestId, ResourceIndex, ResourceKind,
};
use lever_kernel::KernelFs;
use lever_protocol::{
    Acquire, Acquired, Applied, Bound, Cause, Clamped, ErrorCode, Handle, Holder, KindInfo, Lease,
    PairInfo, PairRule, Priority, Reply, Request as Wire, RequestInfo, ResourceState,
    SnapDirection, Snapped, SpecInfo, VoteInfo,
};
use lever_targets::Target;
use lever_tunables::Applier;
use signal::TaskState;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// Per-client limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Live requests one third-party connection may hold.
    pub third_party_requests: usize,
    /// Live requests one system connection may hold.
    pub system_requests: usize,
    /// Live requests one third-party uid may hold over all its
    /// connections, detached ones included (a detached request outlives
    /// its connection, so the per-connection limit alone bounds nothing).
    pub third_party_requests_per_uid: usize,
    /// Live requests in all, system clients' included.
    pub live_requests: usize,
    /// Of `live_requests`, how many third-party clients together can never
    /// take: kept for root and the system group.
    pub system_reserve: usize,
    /// Opcode/value pairs in one third-party request.
    pub third_party_pairs: usize,
    /// Longest timed request a third-party client may make, in ms.
    pub third_party_max_duration_ms: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            third_party_requests: 32,
            system_requests: 4096,
            third_party_requests_per_uid: 1024,
            live_requests: 16384,
            system_reserve: 2048,
            third_party_pairs: 64,
            third_party_max_duration_ms: 600_000,
        }
    }
}

/// A connected client as the core sees it.
#[derive(Debug, Clone)]
pub struct Client {
    /// Connection id (unique for the daemon's life).
    pub conn: u64,
    /// Who it is. `id.system` decides how its requests are counted (a
    /// third-party uid's caps, never the system reserve).
    pub id: Identity,
    /// Acts for the board's own configuration (an app's use cases, from
    /// the target): may use system-only resources and system priorities
    /// whatever `id.system`, but is still counted as `id`'s uid and class.
    pub board: bool,
}

impl Client {
    /// A client as its identity makes it (not acting for the board).
    pub fn new(conn: u64, id: Identity) -> Client {
        Client {
            conn,
            id,
            board: false,
        }
    }

    /// May it use system-only resources and system priority classes?
    pub fn may_use_system(&self) -> bool {
        self.id.system || self.board
    }
}

#[derive(Debug, Clone)]
struct Meta {
    /// The request's handle as clients know it (its `RequestId` too).
    handle: Handle,
    conn: u64,
    pid: i32,
    uid: u32,
    exe: Option<String>,
    detached: bool,
    lease: Lease,
    /// Pairs as the client sent them (before snapping), for reload.
    pairs: Vec<(Opcode, i64)>,
    priority: Priority,
    /// Made by a system client (may use system-only resources whatever
    /// its class).
    system: bool,
    /// Counted in the third-party share (its uid is not root or the
    /// system group), whatever `system` allows it.
    third_party: bool,
    /// Owned by a process (BIND), not by a connection: like a detached
    /// request, any connection of its uid may see and release it.
    bound: bool,
    /// The use case it triggered (`name` or `name/variant`), for a SIGNAL.
    usecase: Option<String>,
}

/// One uid's live requests: how many, and which are detached (any
/// connection of the uid may see and release those).
#[derive(Debug, Default)]
struct UidShare {
    live: usize,
    detached: BTreeSet<RequestId>,
}

/// Live things that are not engine requests (profile holds), counted
/// against the same caps as requests: per connection, per uid, the
/// third-party share and the total.
#[derive(Debug, Default)]
struct Tally {
    by_conn: HashMap<u64, usize>,
    by_uid: HashMap<u32, usize>,
    third_party: usize,
    total: usize,
}

impl Tally {
    fn of_conn(&self, conn: u64) -> usize {
        self.by_conn.get(&conn).copied().unwrap_or(0)
    }

    fn of_uid(&self, uid: u32) -> usize {
        self.by_uid.get(&uid).copied().unwrap_or(0)
    }

    fn add(&mut self, conn: u64, uid: u32, third_party: bool) {
        *self.by_conn.entry(conn).or_default() += 1;
        *self.by_uid.entry(uid).or_default() += 1;
        self.third_party += usize::from(third_party);
        self.total += 1;
    }

    fn remove(&mut self, conn: u64, uid: u32, third_party: bool) {
        fn down<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: K) {
            if let Some(n) = map.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    map.remove(&key);
                }
            }
        }
        down(&mut self.by_conn, conn);
        down(&mut self.by_uid, uid);
        self.third_party -= usize::from(third_party);
        self.total -= 1;
    }
}

/// The engine's class for a priority a client asked for: the one place the
/// wire's four classes meet the engine's.
fn class_of(priority: Priority) -> PriorityClass {
    match priority {
        Priority::ThirdPartyLow => PriorityClass::ThirdPartyLow,
        Priority::ThirdPartyHigh => PriorityClass::ThirdPartyHigh,
        Priority::SystemLow => PriorityClass::SystemLow,
        Priority::SystemHigh => PriorityClass::SystemHigh,
    }
}

/// Owners of detached requests live apart from connection ids.
const DETACHED_OWNER: u64 = 1 << 63;

/// The daemon's state.
pub struct Core {
    fs: KernelFs,
    target: Target,
    engine: Engine,
    applier: Applier,
    journal: Journal,
    meta: HashMap<RequestId, Meta>,
    /// Requests by the connection that made (or last updated) them, and
    /// by uid, so that a limit check or a STATUS costs what the client
    /// holds, not what everyone holds. Kept by `track` and `untrack` only.
    by_conn: HashMap<u64, BTreeSet<RequestId>>,
    by_uid: HashMap<u32, UidShare>,
    /// Live requests of third-party clients, together.
    third_party_live: usize,
    /// Text Lever last wrote per resource (absent = original in place).
    written: HashMap<ResourceIndex, String>,
    limits: Limits,
    log: Logger,
    handles: HandleSource,
    /// Per-task and cgroup settings of triggered use cases.
    tasks: TaskState,
    /// The request the last `acquire_labelled` granted.
    granted: Option<RequestId>,
    /// Its report, when it was asked for a use case (SIGNAL adds what of
    /// the task part was applied).
    granted_report: Option<Acquired>,
    /// Live counters for `--metrics`.
    metrics: Arc<Metrics>,
    /// Profiles applied through the daemon (base, holds, the one in effect).
    profiles: profile::Profiles,
    /// Profile holds, counted against the request caps.
    holds_count: Tally,
    /// A BIND is being granted: the request it makes is owned by a
    /// process (set only around that call).
    binding: bool,
    /// What URM's client API asks for (URM request), when the target was
    /// imported from a URM directory; replaced on reload.
    urm: UrmShared,
}

/// The URM view the daemon serves, shared with the reload path.
pub type UrmShared = Arc<std::sync::Mutex<Option<lever_protocol::UrmView>>>;

/// Unguessable handles from the kernel's random pool, fetched 256 at a time
/// so an acquire does not cost a `getrandom` call.
struct HandleSource {
    pool: [u32; 256],
    next: usize,
}

impl HandleSource {
    fn new() -> HandleSource {
        HandleSource {
            pool: [0; 256],
            next: 256,
        }
    }

    fn next(&mut self) -> u32 {
        if self.next == self.pool.len() {
            self.refill();
        }
        let v = self.pool[self.next];
        // Wipe what was handed out: the pool holds only handles to come.
        self.pool[self.next] = 0;
        self.next += 1;
        v
    }

    fn refill(&mut self) {
        let mut bytes = [0u8; 1024];
        let mut filled = 0;
        while filled < bytes.len() {
            match rustix::rand::getrandom(
                &mut bytes[filled..],
                rustix::rand::GetRandomFlags::empty(),
            ) {
                Ok(n) => filled += n,
                Err(rustix::io::Errno::INTR) => {}
                // getrandom only fails on ancient kernels; fall back to the
                // clock rather than failing requests.
                Err(_) => {
                    let t = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap_or_default();
                    let mut x = u64::from(t.subsec_nanos()) ^ t.as_secs() ^ 0x9e37_79b9_7f4a_7c15;
                    for b in &mut bytes[filled..] {
                        // xorshift64
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        *b = x as u8;
                    }
                    break;
                }
            }
        }
        for (slot, chunk) in self.pool.iter_mut().zip(bytes.chunks_exact(4)) {
            *slot = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        self.next = 0;
    }
}

fn engine_for(fs: &KernelFs, target: &Target) -> Result<Engine, EngineError> {
    let mut engine = Engine::new(target.resources.clone())?;
    for (i, spec) in target.resources.iter().enumerate() {
        let level = lever_tunables::read_current(fs, spec)
            .ok()
            .and_then(|r| r.level);
        engine.set_original(i, level);
    }
    Ok(engine)
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> Reply {
    Reply::Error {
        code,
        message: message.into(),
    }
}

impl Core {
    /// A core over a bound target, writing through `journal`.
    pub fn new(
        fs: KernelFs,
        target: Target,
        journal: Journal,
        limits: Limits,
        log: Logger,
    ) -> Result<Core, EngineError> {
        let engine = engine_for(&fs, &target)?;
        Ok(Core {
            applier: Applier::new(fs.clone()),
            fs,
            target,
            engine,
            journal,
            meta: HashMap::new(),
            by_conn: HashMap::new(),
            by_uid: HashMap::new(),
            third_party_live: 0,
            holds_count: Tally::default(),
            binding: false,
            urm: UrmShared::default(),
            written: HashMap::new(),
            limits,
            log,
            handles: HandleSource::new(),
            tasks: TaskState::default(),
            granted: None,
            granted_report: None,
            metrics: Arc::new(Metrics::default()),
            profiles: profile::Profiles::default(),
        })
    }

    /// Count into `metrics` (the exporter's) from now on.
    pub fn set_metrics(&mut self, metrics: Arc<Metrics>) {
        self.metrics = metrics;
    }

    /// The counters this core keeps.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The target in use.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The journal of originals (the event loop retries owed originals and
    /// moves durable records off its thread through it).
    pub fn journal_mut(&mut self) -> &mut Journal {
        &mut self.journal
    }

    /// Record, before anything is written, the originals of the nodes
    /// `a` may write first — its resources' and their min/max partners'
    /// (the engine may move a partner to keep `min <= max`); hold-fd
    /// resources keep none. `Some(ticket)` when their records must become
    /// durable first: the client waits for that ticket (the journal's disk
    /// thread syncs them), no one else does.
    pub fn arm_originals(&mut self, a: &Acquire) -> Option<u64> {
        let engine = &self.engine;
        let spec_of = |op: Opcode| engine.index_of(op).and_then(|i| engine.spec(i));
        let mut nodes: Vec<&str> = Vec::with_capacity(a.pairs.len());
        for &(op, _) in &a.pairs {
            let Some(spec) = spec_of(Opcode(op)) else {
                continue;
            };
            let partner = spec.partner().and_then(spec_of);
            for s in std::iter::once(spec).chain(partner) {
                if s.kind != ResourceKind::HoldFd && !nodes.contains(&s.node.as_str()) {
                    nodes.push(&s.node);
                }
            }
        }
        self.journal.arm(&nodes).ok().flatten()
    }

    /// The kernel filesystem root the daemon works under.
    pub fn fs(&self) -> &KernelFs {
        &self.fs
    }

    /// Live requests.
    pub fn live(&self) -> usize {
        self.engine.live_count()
    }

    /// When the engine next needs `expire`.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.engine.next_deadline()
    }

    /// Answer one request from a client.
    pub fn handle(&mut self, client: &Client, request: Wire, now: Duration) -> Reply {
        match request {
            Wire::Acquire(a) => self.acquire(client, a, now),
            Wire::Release { handle } => match self.profile_release(client, handle, now) {
                Some(reply) => reply,
                None => self.release(client, handle),
            },
            Wire::Status => json_reply(&self.status(client, now)),
            Wire::Explain { resource } => match self.explain(client, &resource, now) {
                Some(doc) => json_reply(&doc),
                None => refuse(
                    ErrorCode::UnknownResource,
                    format!(
                        "no resource named or numbered {resource:?} in target {}",
                        self.target.name
                    ),
                ),
            },
            Wire::Ping => Reply::Pong(lever_protocol::VERSION),
            Wire::Signal(s) => self.signal(client, s, now),
            Wire::Profile(p) => self.profile(client, p, now),
            Wire::ProfileOff => self.profile_off(client, now),
            Wire::Urm => match self.urm.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                Some(view) => json_reply(view),
                None => refuse(
                    ErrorCode::Invalid,
                    "this daemon was not started from a URM directory (lever daemon --urm DIR); URM's client API needs one",
                ),
            },
            // The event loop answers REGISTER (the app's pidfd joins its
            // epoll set); a core on its own cannot.
            Wire::Register(_) | Wire::Bind(_) | Wire::Behalf(_) => refuse(
                ErrorCode::Invalid,
                "REGISTER, BIND and BEHALF are not served here (only by a running daemon)",
            ),
        }
    }

    /// The URM view served to URM's client API (set at start and on
    /// reload by whoever loads the target).
    pub fn urm_view(&self) -> UrmShared {
        self.urm.clone()
    }

    /// Does connection `conn` hold a request or a profile hold?
    pub fn holds_anything(&self, conn: u64) -> bool {
        self.by_conn.contains_key(&conn) || self.holds_count.of_conn(conn) > 0
    }

    /// May `client` see and change request `id`?
    fn owns(&self, client: &Client, id: RequestId) -> bool {
        self.meta.get(&id).is_some_and(|m| {
            m.conn == client.conn
                || ((m.detached || m.bound) && m.uid == client.id.uid)
                || (m.bound && client.id.system)
                || client.id.uid == 0
        })
    }

    fn acquire(&mut self, client: &Client, a: Acquire, now: Duration) -> Reply {
        self.acquire_labelled(client, a, now, None)
    }

    /// An ACQUIRE, or the request a SIGNAL resolved to (`usecase` names
    /// it). When it is granted, its id is left in `self.granted` (the
    /// SIGNAL goes on with the use case's task plan for that request).
    fn acquire_labelled(
        &mut self,
        client: &Client,
        a: Acquire,
        now: Duration,
        usecase: Option<String>,
    ) -> Reply {
        self.granted = None;
        self.granted_report = None;
        let system = client.may_use_system();
        let priority = a.priority;
        if priority.is_system() && !system {
            return refuse(
                ErrorCode::NotPermitted,
                format!("priority {:?} needs a system client (root or the system group); uid {} is third-party", class_of(priority), client.id.uid),
            );
        }
        // A use case may hold no pair (it only moves threads or sets
        // cgroup files): its request is the lease those hang on.
        if a.pairs.is_empty() && usecase.is_none() {
            return refuse(
                ErrorCode::Invalid,
                "a request needs at least one opcode/value pair",
            );
        }
        if a.detach && a.lease == Lease::UntilReleased {
            return refuse(
                ErrorCode::Invalid,
                "detach needs a duration: an indefinite request must stay tied to its client",
            );
        }
        if !system {
            if a.pairs.len() > self.limits.third_party_pairs {
                return refuse(
                    ErrorCode::Limit,
                    format!(
                        "{} pairs in one request; third-party limit is {}",
                        a.pairs.len(),
                        self.limits.third_party_pairs
                    ),
                );
            }
            if a.lease.ms() > self.limits.third_party_max_duration_ms {
                return refuse(
                    ErrorCode::Limit,
                    format!(
                        "duration {} ms exceeds the third-party limit of {} ms",
                        a.lease.ms(),
                        self.limits.third_party_max_duration_ms
                    ),
                );
            }
        }
        // A handle this client may not see is an unknown handle: the
        // request is a new one, exactly as for a handle no one holds, so
        // nothing tells the client that the handle is someone's.
        let existing = a
            .handle
            .map(|h| RequestId(u64::from(h.get())))
            .filter(|id| self.owns(client, *id));
        if existing.is_none() {
            if let Some(message) = self.over_limit(client) {
                return refuse(ErrorCode::Limit, message);
            }
        }
        let (id, handle) = match (existing, a.handle) {
            (Some(id), Some(h)) => (id, h),
            _ => self.fresh_handle(),
        };
        let owner = if a.detach {
            OwnerId(DETACHED_OWNER | u64::from(client.id.uid))
        } else {
            OwnerId(client.conn)
        };
        let pairs: Vec<(Opcode, i64)> = a.pairs.iter().map(|&(o, v)| (Opcode(o), v)).collect();
        let request = Request {
            id,
            owner,
            priority: class_of(priority),
            deadline: a.lease.duration().map(|d| now + d),
            pairs: pairs.clone(),
        };
        // Check first, so a refusal leaves an existing request untouched.
        for &(opcode, _) in &pairs {
            match self
                .engine
                .index_of(opcode)
                .and_then(|i| self.engine.spec(i))
            {
                None => {
                    return refuse(
                        ErrorCode::UnknownResource,
                        format!(
                            "opcode {opcode} is not a resource of target {}",
                            self.target.name
                        ),
                    )
                }
                Some(s) if s.permission == Permission::System && !system => {
                    return refuse(
                        ErrorCode::NotPermitted,
                        format!(
                            "{} ({opcode}) is system-only; uid {} is a third-party client",
                            s.name, client.id.uid
                        ),
                    )
                }
                _ => {}
            }
        }
        let report = a.report;
        self.refresh_pair_originals(&pairs);
        let mut plan = Plan::default();
        let mut replaced = false;
        if let Some(id) = existing {
            if self.engine.request(id).map(|r| r.owner) != Some(owner) {
                // Attached <-> detached: the owner changes, so replace.
                plan = self.engine.release(id).unwrap_or_default();
                replaced = true;
            }
        }
        match self.engine.acquire_lease(request, now, system) {
            Ok(p) => {
                plan.writes.extend(p.writes);
                plan.adjustments = p.adjustments;
            }
            Err(e) => {
                if replaced {
                    self.apply(&plan, &"request replaced");
                    self.untrack(id);
                    self.end_tasks(id);
                }
                return refuse(engine_code(&e), e.to_string());
            }
        }
        self.track(
            id,
            Meta {
                handle,
                conn: client.conn,
                pid: client.id.pid,
                uid: client.id.uid,
                exe: client.id.exe.clone(),
                detached: a.detach,
                lease: a.lease,
                pairs,
                priority,
                system,
                third_party: !client.id.system,
                bound: self.binding,
                usecase: usecase.clone(),
            },
        );
        let exe = client.id.exe.as_deref().unwrap_or("?");
        let why = format_args!("request {} pid {} {exe}", id.0, client.id.pid);
        let failures = self.apply(&plan, &why);
        if let Some((code, err)) = failures.into_iter().next() {
            // The kernel refused a value (or the journal could not record
            // an original): take the whole request back.
            let undo = self.engine.release(id).unwrap_or_default();
            self.apply(&undo, &"request refused by the kernel");
            self.untrack(id);
            self.end_tasks(id);
            return match code {
                ErrorCode::Internal => refuse(code, err),
                _ => refuse(code, format!("kernel refused: {err}")),
            };
        }
        self.granted = Some(id);
        if !report {
            return Reply::Handle(handle.get());
        }
        let resources = plan
            .adjustments
            .iter()
            .filter_map(|&(idx, adjustment)| self.applied(client, idx, adjustment))
            .collect();
        let doc = Acquired {
            handle,
            resources,
            lease: usecase.is_some().then_some(a.lease),
            tasks_applied: None,
            not_applied: Vec::new(),
            usecase,
        };
        let reply = json_reply(&doc);
        if doc.usecase.is_some() {
            self.granted_report = Some(doc);
        }
        reply
    }

    /// What became of one pair of an acquire: asked, held after clamp and
    /// snap (as the engine did them), and what the node has now and why.
    fn applied(
        &self,
        client: &Client,
        idx: ResourceIndex,
        adjustment: lever_engine::Adjustment,
    ) -> Option<Applied> {
        let spec = self.engine.spec(idx)?;
        let level = self.engine.applied(idx);
        Some(Applied {
            opcode: spec.opcode.to_string(),
            name: spec.name.clone(),
            unit: spec.unit.clone(),
            asked: adjustment.asked,
            held: adjustment.held,
            clamped: adjustment.clamped.map(|c| match c {
                lever_engine::Clamp::ToLow(to) => Clamped {
                    bound: Bound::Min,
                    to,
                },
                lever_engine::Clamp::ToHigh(to) => Clamped {
                    bound: Bound::Max,
                    to,
                },
            }),
            snapped: adjustment.snapped.map(|d| Snapped {
                direction: match d {
                    lever_engine::Snap::Up => SnapDirection::Up,
                    lever_engine::Snap::Down => SnapDirection::Down,
                    lever_engine::Snap::Nearest => SnapDirection::Nearest,
                },
                to: adjustment.held,
            }),
            applied: level,
            shown: level.map_or_else(
                || {
                    self.applier
                        .originals()
                        .get(&idx)
                        .cloned()
                        .unwrap_or_default()
                },
                |l| spec.render(l),
            ),
            cause: self.cause(client, idx),
        })
    }

    /// Who decided a resource's applied value, as `client` may see it.
    fn cause(&self, client: &Client, idx: ResourceIndex) -> Cause {
        let Some(decision) = self.engine.decision(idx) else {
            return Cause::Original;
        };
        match decision.cause {
            lever_engine::Cause::Original => Cause::Original,
            lever_engine::Cause::Vote(v) => match self.vote_info(client, idx, v) {
                Some(vote) => Cause::Vote { vote },
                None => Cause::Original,
            },
            lever_engine::Cause::Pair {
                partner,
                by,
                overridden,
            } => Cause::Pair {
                partner: self
                    .engine
                    .spec(partner)
                    .map(|s| s.name.clone())
                    .unwrap_or_default(),
                // The floor (min half) is lowered by the ceiling; the
                // ceiling is raised only by a floor of a higher class.
                rule: match self.engine.spec(idx).map(|s| &s.kind) {
                    Some(ResourceKind::PairMax { .. }) => PairRule::HigherClassFloorWins,
                    _ => PairRule::CeilingBeatsFloor,
                },
                by: by.and_then(|v| self.vote_info(client, partner, v)),
                overridden: overridden.and_then(|v| self.vote_info(client, idx, v)),
            },
        }
    }

    fn vote_info(
        &self,
        client: &Client,
        idx: ResourceIndex,
        vote: lever_engine::VoteRef,
    ) -> Option<VoteInfo> {
        Some(VoteInfo {
            handle: self.holder(client, vote.id),
            priority: self.vote_priority(vote.id)?,
            value: vote.value,
            shown: self.engine.spec(idx)?.render(vote.value),
            usecase: self.usecase_of(client, vote.id),
        })
    }

    fn release(&mut self, client: &Client, handle: u32) -> Reply {
        let id = RequestId(u64::from(handle));
        if !self.owns(client, id) {
            return refuse(
                ErrorCode::NoSuchRequest,
                format!("no request {handle} of yours"),
            );
        }
        match self.engine.release(id) {
            Ok(plan) => {
                self.untrack(id);
                self.apply(&plan, &format_args!("request {handle} released"));
                self.end_tasks(id);
                Reply::Done
            }
            Err(e) => refuse(engine_code(&e), e.to_string()),
        }
    }

    /// A connection closed or its process exited: end its lease.
    pub fn client_gone(&mut self, conn: u64) {
        // The engine ignores the clock for what a hold's end does.
        self.profile_client_gone(conn, Duration::ZERO);
        let plan = self.engine.release_owner(OwnerId(conn));
        if plan.ended.is_empty() {
            return;
        }
        // Named by its process, not the internal connection id.
        let mut who = None;
        for id in &plan.ended {
            let meta = self.untrack(*id);
            who = who.or(meta.map(|m| (m.pid, m.exe)));
        }
        let n = plan.ended.len();
        let (pid, exe) = who.unwrap_or_default();
        let exe = exe.as_deref().unwrap_or("?");
        let gone = if conn >= crate::apps::APP_CONN_BASE {
            "process"
        } else {
            "client"
        };
        self.apply(
            &plan,
            &format_args!("{gone} pid {pid} {exe} ended, {n} request(s) released"),
        );
        for id in &plan.ended {
            self.end_tasks(*id);
        }
        // The gauge first: a scraper that sees the count sees its effect.
        self.metrics.set_live(self.engine.live_count());
        self.metrics.client_gone(plan.ended.len());
    }

    /// End every request whose deadline has passed.
    pub fn expire(&mut self, now: Duration) {
        while self.expire_some(now, 256) {}
    }

    /// End at most `max` of the requests whose deadline has passed,
    /// earliest first; true when more are due (the event loop serves
    /// everyone else before the next batch, so ten thousand deadlines at
    /// one instant do not stall the loop).
    pub fn expire_some(&mut self, now: Duration, max: usize) -> bool {
        let plan = self.engine.expire_some(now, max);
        let more = plan.next_deadline.is_some_and(|d| d <= now);
        if plan.ended.is_empty() {
            return more;
        }
        for id in &plan.ended {
            self.untrack(*id);
        }
        let ids = ExpiredIds(&plan.ended);
        self.apply(&plan, &format_args!("request {ids} expired"));
        for id in &plan.ended {
            self.end_tasks(*id);
        }
        self.metrics.set_live(self.engine.live_count());
        self.metrics.expired(plan.ended.len());
        more
    }

    /// Why `client` may not make one more request, if so: its
    /// connection's limit, its uid's share (detached requests included),
    /// the third-party clients' share (the system reserve), the total.
    pub(crate) fn over_limit(&self, client: &Client) -> Option<String> {
        let l = &self.limits;
        let system = client.id.system;
        let held = self.by_conn.get(&client.conn).map_or(0, BTreeSet::len)
            + self.holds_count.of_conn(client.conn);
        let limit = if system {
            l.system_requests
        } else {
            l.third_party_requests
        };
        if held >= limit {
            return Some(format!(
                "this client already holds {held} requests (limit {limit})"
            ));
        }
        let live = self.engine.live_count() + self.holds_count.total;
        if !system {
            let uid = client.id.uid;
            let mine = self.by_uid.get(&uid).map_or(0, |u| u.live) + self.holds_count.of_uid(uid);
            if mine >= l.third_party_requests_per_uid {
                return Some(format!(
                    "uid {uid} already holds {mine} live requests (limit {} per uid, detached ones included)",
                    l.third_party_requests_per_uid
                ));
            }
            let share = l.live_requests.saturating_sub(l.system_reserve);
            let third_party = self.third_party_live + self.holds_count.third_party;
            if third_party >= share {
                return Some(format!(
                    "third-party clients hold {third_party} live requests (limit {share}; the rest is kept for system clients)"
                ));
            }
        }
        if live >= l.live_requests {
            return Some(format!(
                "the daemon holds {live} live requests (limit {})",
                l.live_requests
            ));
        }
        None
    }

    /// Record a live request's bookkeeping (replacing what `id` had).
    fn track(&mut self, id: RequestId, meta: Meta) {
        self.untrack(id);
        self.by_conn.entry(meta.conn).or_default().insert(id);
        let share = self.by_uid.entry(meta.uid).or_default();
        share.live += 1;
        if meta.detached || meta.bound {
            share.detached.insert(id);
        }
        if meta.third_party {
            self.third_party_live += 1;
        }
        self.meta.insert(id, meta);
    }

    /// Forget a request that ended.
    fn untrack(&mut self, id: RequestId) -> Option<Meta> {
        let meta = self.meta.remove(&id)?;
        if let Some(ids) = self.by_conn.get_mut(&meta.conn) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_conn.remove(&meta.conn);
            }
        }
        if let Some(share) = self.by_uid.get_mut(&meta.uid) {
            share.live -= 1;
            share.detached.remove(&id);
            if share.live == 0 {
                self.by_uid.remove(&meta.uid);
            }
        }
        if meta.third_party {
            self.third_party_live -= 1;
        }
        Some(meta)
    }

    /// Someone other than Lever (thermal, a user) may have moved a half of
    /// a min/max pair that Lever does not hold since it was last read
    /// (`scaling_max_freq` lowered under a boost): read it back before
    /// planning, so a floor is never written above the ceiling the node
    /// has now — the engine caps it there, and the report and EXPLAIN name
    /// the ceiling's current value as the cause.
    fn refresh_pair_originals(&mut self, pairs: &[(Opcode, i64)]) {
        for &(opcode, _) in pairs {
            let Some(idx) = self.engine.index_of(opcode) else {
                continue;
            };
            let partner = self
                .engine
                .spec(idx)
                .and_then(ResourceSpec::partner)
                .and_then(|p| self.engine.index_of(p));
            let Some(partner) = partner else { continue };
            for i in [idx, partner] {
                if self.engine.applied(i).is_some() {
                    continue;
                }
                let level = self
                    .engine
                    .spec(i)
                    .and_then(|s| lever_tunables::read_current(&self.fs, s).ok())
                    .and_then(|r| r.level);
                if level.is_some() {
                    self.engine.set_original(i, level);
                }
            }
        }
    }

    /// Release everything and restore every node (SIGTERM).
    pub fn shutdown(&mut self) {
        // The profile's own writes go back too; the base profile's file
        // stays, so the next start applies it again.
        self.profile_unapply();
        let plan = self.engine.release_all();
        let ids: Vec<RequestId> = self.meta.keys().copied().collect();
        for &id in &ids {
            self.untrack(id);
        }
        let failures = self.apply(&plan, &"daemon stopping");
        for id in ids {
            self.end_tasks(id);
        }
        // Only a fully restored device gets a clean journal; otherwise the
        // next start (or `lever restore`) retries.
        if failures.is_empty() {
            if let Err(e) = self.journal.compact() {
                self.log
                    .warn(&format!("could not compact the journal: {e}"));
            }
        }
    }

    /// Switch to a new target (SIGHUP). Live requests are kept: everything
    /// is restored, then the requests are re-applied on the new target
    /// (pairs whose opcode it lacks are dropped). On error nothing changes.
    pub fn reload(&mut self, target: Target, now: Duration) -> Result<(), EngineError> {
        let mut fresh = Engine::new(target.resources.clone())?;
        let previous: HashMap<RequestId, (OwnerId, Option<Duration>)> = self
            .engine
            .requests()
            .iter()
            .map(|r| (r.id, (r.owner, r.deadline)))
            .collect();
        // The profile is rolled back with everything and re-applied last.
        self.profile_unapply();
        let restore = self.engine.release_all();
        self.apply(&restore, &"configuration reloaded");
        for (i, spec) in target.resources.iter().enumerate() {
            let level = lever_tunables::read_current(&self.fs, spec)
                .ok()
                .and_then(|r| r.level);
            fresh.set_original(i, level);
        }
        self.engine = fresh;
        self.target = target;
        self.applier = Applier::new(self.fs.clone());
        self.written.clear();
        let mut ids: Vec<RequestId> = self.meta.keys().copied().collect();
        ids.sort();
        let meta: Vec<(RequestId, Meta)> = ids
            .into_iter()
            .filter_map(|id| Some((id, self.untrack(id)?)))
            .collect();
        for (id, m) in meta {
            let Some(&(owner, deadline)) = previous.get(&id) else {
                continue;
            };
            let pairs: Vec<(Opcode, i64)> = m
                .pairs
                .iter()
                .copied()
                .filter(|(o, _)| self.engine.index_of(*o).is_some())
                .collect();
            if pairs.is_empty() {
                self.log.warn(&format!(
                    "request {} dropped on reload: none of its resources remain",
                    id.0
                ));
                continue;
            }
            let req = Request {
                id,
                owner,
                priority: class_of(m.priority),
                deadline,
                pairs,
            };
            match self.engine.acquire_as(req, now, m.system) {
                Ok(plan) => {
                    self.apply(
                        &plan,
                        &format_args!("request {} re-applied after reload", id.0),
                    );
                    self.track(id, m);
                }
                Err(e) => self
                    .log
                    .warn(&format!("request {} dropped on reload: {e}", id.0)),
            }
        }
        self.profile_settle(now);
        Ok(())
    }

    fn fresh_handle(&mut self) -> (RequestId, Handle) {
        loop {
            let Some(h) = Handle::new(self.handles.next() & 0x7fff_ffff) else {
                continue;
            };
            let id = RequestId(u64::from(h.get()));
            if self.engine.request(id).is_none() && !self.profiles.has_handle(h.get()) {
                return (id, h);
            }
        }
    }

    /// Apply a plan with the journal, log every change, and return the
    /// refusals with the error code each deserves.
    /// Write `plan`, logging each change with `why` (formatted only when
    /// a line is written: with `--quiet` an acquire builds no text).
    fn apply(&mut self, plan: &Plan, why: &dyn std::fmt::Display) -> Vec<(ErrorCode, String)> {
        if plan.writes.is_empty() {
            return Vec::new();
        }
        // What the nodes had, for the log lines (only when they are written).
        let logging = self.log.info_on();
        let before: Vec<Option<String>> = plan
            .writes
            .iter()
            .map(|w| {
                logging
                    .then(|| self.written.get(&w.resource).cloned())
                    .flatten()
            })
            .collect();
        let results = self
            .applier
            .apply_logged(&self.engine, plan, &mut self.journal);
        let mut failures = Vec::new();
        for ((w, applied), old) in plan.writes.iter().zip(results).zip(before) {
            let Some(spec) = self.engine.spec(w.resource) else {
                continue;
            };
            self.metrics.write(&spec.name, applied.result.is_ok());
            let old = || {
                old.clone()
                    .or_else(|| self.applier.originals().get(&w.resource).cloned())
                    .unwrap_or_else(|| "original".into())
            };
            match (&w.action, &applied.result) {
                (_, Err(e)) => {
                    self.log.warn(&format!(
                        "{} ({}) {}: {e} ({why})",
                        spec.name, spec.opcode, spec.node
                    ));
                    failures.push((failure_code(e), e.to_string()));
                }
                (Action::Set(_), Ok(_)) if !logging => {
                    self.written.insert(w.resource, applied.value);
                }
                (Action::Restore, Ok(_)) if !logging => {
                    self.written.remove(&w.resource);
                }
                (Action::Set(_), Ok(outcome)) => {
                    let note = match outcome {
                        lever_kernel::WriteOutcome::Stored { stored, .. } => {
                            format!(" (kernel stored {stored})")
                        }
                        _ => String::new(),
                    };
                    let new = if spec.kind == ResourceKind::HoldFd {
                        format!("{} held", applied.value)
                    } else {
                        applied.value.clone()
                    };
                    self.log.info(&format!(
                        "set {} ({}) {}: {} -> {new}{note} ({why})",
                        spec.name,
                        spec.opcode,
                        spec.node,
                        old()
                    ));
                    self.written.insert(w.resource, applied.value);
                }
                (Action::Restore, Ok(outcome)) => {
                    // What was written, as the kernel took it (an original
                    // owed since an earlier run is logged by the journal
                    // when it writes that one).
                    let new = match outcome {
                        _ if spec.kind == ResourceKind::HoldFd => "released".to_string(),
                        _ if applied.value.is_empty() => {
                            "nothing written (Lever never wrote it)".to_string()
                        }
                        lever_kernel::WriteOutcome::Stored { stored, .. } => {
                            format!("{} (kernel stored {stored})", applied.value)
                        }
                        _ => applied.value.clone(),
                    };
                    self.log.info(&format!(
                        "restore {} ({}) {}: {} -> {new} ({why})",
                        spec.name,
                        spec.opcode,
                        spec.node,
                        old()
                    ));
                    self.written.remove(&w.resource);
                }
            }
        }
        failures
    }

    fn request_info(&self, r: &Request, m: &Meta, now: Duration) -> RequestInfo {
        RequestInfo {
            handle: m.handle,
            pid: m.pid,
            uid: m.uid,
            exe: m.exe.clone(),
            priority: m.priority,
            detached: m.detached,
            lease: m.lease,
            expires_in_ms: expires_in_ms(r.deadline, now),
            usecase: m.usecase.clone(),
            pairs: r
                .pairs
                .iter()
                .filter_map(|&(opcode, value)| {
                    let spec = self
                        .engine
                        .index_of(opcode)
                        .and_then(|i| self.engine.spec(i))?;
                    Some(PairInfo {
                        opcode: opcode.to_string(),
                        name: spec.name.clone(),
                        value,
                        shown: spec.render(value),
                        unit: spec.unit.clone(),
                    })
                })
                .collect(),
        }
    }

    /// The use case request `id` triggered, if `client` may see the request
    /// (`profile:NAME` for the profile in effect, which everyone may see).
    fn usecase_of(&self, client: &Client, id: RequestId) -> Option<String> {
        self.meta
            .get(&id)
            .filter(|_| self.owns(client, id))
            .and_then(|m| m.usecase.clone())
            .or_else(|| self.profile_vote_label(id))
    }

    /// A vote's class as the wire names it: the profile's (below every
    /// wire class) shows as the lowest one, with `profile:NAME` as its
    /// use case.
    fn vote_priority(&self, id: RequestId) -> Option<Priority> {
        match self.meta.get(&id) {
            Some(m) => Some(m.priority),
            None => self.profiles.name_of(id).map(|_| Priority::ThirdPartyLow),
        }
    }

    /// A request as `client` may see it: its handle, or "another client".
    fn holder(&self, client: &Client, id: RequestId) -> Holder {
        match self.meta.get(&id) {
            Some(m) if self.owns(client, id) => Holder::Handle(m.handle),
            _ => Holder::AnotherClient,
        }
    }

    fn resource_state(
        &self,
        client: &Client,
        idx: ResourceIndex,
        spec: &ResourceSpec,
    ) -> ResourceState {
        let current = lever_tunables::read_current(&self.fs, spec);
        ResourceState {
            opcode: spec.opcode.to_string(),
            name: spec.name.clone(),
            node: spec.node.clone(),
            unit: spec.unit.clone(),
            aggregation: spec.aggregation.as_str().to_string(),
            permission: permission_name(spec),
            current: current.as_ref().ok().map(|r| r.text.clone()),
            error: current.as_ref().err().map(|e| e.to_string()),
            original: self.applier.originals().get(&idx).cloned(),
            held: self.written.contains_key(&idx),
            winner: self.engine.winner(idx).map(|w| self.holder(client, w)),
        }
    }

    /// The requests `client` may see, by handle: all of them for root;
    /// otherwise those of its connection and its uid's detached ones
    /// (from the indexes: a third-party STATUS costs what it shows).
    fn visible(&self, client: &Client) -> Vec<RequestId> {
        if client.id.uid == 0 {
            return self.engine.requests().iter().map(|r| r.id).collect();
        }
        let mut ids: BTreeSet<RequestId> =
            self.by_conn.get(&client.conn).cloned().unwrap_or_default();
        if let Some(share) = self.by_uid.get(&client.id.uid) {
            ids.extend(share.detached.iter().copied());
        }
        ids.into_iter().collect()
    }
}

/// The ids of expired requests, comma-separated when shown.
struct ExpiredIds<'a>(&'a [RequestId]);

impl std::fmt::Display for ExpiredIds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", id.0)?;
        }
        Ok(())
    }
}

fn json_reply<T: serde::Serialize>(doc: &T) -> Reply {
    match serde_json::to_string(doc) {
        Ok(text) => Reply::Json(text),
        Err(e) => refuse(ErrorCode::Internal, format!("cannot encode the reply: {e}")),
    }
}

fn expires_in_ms(deadline: Option<Duration>, now: Duration) -> Option<u64> {
    deadline.map(|d| d.saturating_sub(now).as_millis() as u64)
}

fn permission_name(spec: &ResourceSpec) -> String {
    match spec.permission {
        Permission::System => "system",
        Permission::ThirdParty => "third-party",
    }
    .to_string()
}

/// A resource's definition as the wire describes it.
fn spec_info(spec: &ResourceSpec) -> SpecInfo {
    SpecInfo {
        name: spec.name.clone(),
        opcode: spec.opcode.to_string(),
        node: spec.node.clone(),
        unit: spec.unit.clone(),
        low: spec.low,
        high: spec.high,
        steps: spec.steps.clone(),
        aggregation: spec.aggregation.as_str().to_string(),
        permission: permission_name(spec),
        kind: match &spec.kind {
            ResourceKind::Plain => KindInfo::Plain,
            ResourceKind::PairMin { max } => KindInfo::PairMin {
                max: max.to_string(),
            },
            ResourceKind::PairMax { min } => KindInfo::PairMax {
                min: min.to_string(),
            },
            ResourceKind::Enum { values } => KindInfo::Enum {
                values: values.clone(),
            },
            ResourceKind::HoldFd => KindInfo::HoldFd,
            ResourceKind::CpuList => KindInfo::CpuList,
        },
        description: spec.description.clone(),
    }
}

/// A write the journal could not record first is the daemon's failure
/// (ERROR 8, internal), not a value the kernel refused (ERROR 7).
fn failure_code(e: &lever_kernel::KernelError) -> ErrorCode {
    match e {
        lever_kernel::KernelError::Io { op, .. } if op.starts_with("journal") => {
            ErrorCode::Internal
        }
        _ => ErrorCode::Invalid,
    }
}

fn engine_code(e: &EngineError) -> ErrorCode {
    match e {
        EngineError::UnknownOpcode(_) => ErrorCode::UnknownResource,
        EngineError::NotPermitted { .. } => ErrorCode::NotPermitted,
        EngineError::NoSuchRequest(_) | EngineError::NotOwner(_) => ErrorCode::NoSuchRequest,
        _ => ErrorCode::Invalid,
    }
}
