//! The resource engine: aggregation of concurrent requests into a write plan.
//!
//! This crate is pure. It does no I/O, reads no clock and starts no thread:
//! time comes in as an argument (`now`, a [`Duration`] since any fixed
//! epoch), and the result of every operation is a [`Plan`] — which nodes to
//! set to what, in which order, and which to restore to their original value.
//! The daemon executes plans against the kernel; tests execute them against a
//! model that refuses writes the way the kernel does.
//!
//! Rules it implements (seed 000 §3.4, seed 001 "URM"):
//!
//! - A [`Request`] holds opcode/value pairs for one owner, with a
//!   [`PriorityClass`] and an optional deadline. Acquiring with an id that is
//!   live replaces that request (same owner only).
//! - Each value is clamped to the resource's bounds and snapped to its table
//!   (a floor rounds up, a ceiling rounds down) when the request arrives.
//! - Per resource, every live vote — a profile's too — is combined by the
//!   resource's own [`Aggregation`]: for a floor (max) the highest value
//!   wins, for a ceiling (min) the lowest, whatever the classes, so a new
//!   floor never lowers a node. The [`PriorityClass`] decides only where
//!   the rule cannot order votes: newest and oldest (the highest class
//!   present first), and a floor above a ceiling (below).
//! - A min/max pair (e.g. `scaling_min_freq`/`scaling_max_freq`) never ends
//!   with min > max: on conflict the ceiling wins, except that a ceiling
//!   vote is raised to any floor vote of a strictly higher class. Writes
//!   are ordered so that `min <= max` holds after **every** single write.
//! - When the last vote on a resource goes away its node is restored to the
//!   original value it had before Lever first touched it.
//! - `Permission::System` resources need a trusted client: a system class
//!   ([`Engine::acquire`]), or the caller's word ([`Engine::acquire_as`]:
//!   the daemon knows who its client is; the class then only ranks).
//! - Requests are indexed by owner and deadlines kept in order, so ending
//!   an owner's requests or an expiry costs what ends, not what is live
//!   ([`Engine::release_owner`], [`Engine::expire_some`]).
//!
//! ```
//! use lever_engine::*;
//! use std::time::Duration;
//! let spec = ResourceSpec {
//!     name: "sched_util_clamp_min".into(), opcode: Opcode(0x44000000),
//!     node: "/proc/sys/kernel/sched_util_clamp_min".into(), unit: "level".into(),
//!     low: 0, high: 1024, steps: None, aggregation: Aggregation::Max,
//!     permission: Permission::ThirdParty, kind: ResourceKind::Plain, description: String::new(),
//! };
//! let mut engine = Engine::new(vec![spec]).unwrap();
//! let now = Duration::ZERO;
//! let plan = engine.acquire(Request {
//!     id: RequestId(1), owner: OwnerId(7), priority: PriorityClass::ThirdPartyHigh,
//!     deadline: Some(Duration::from_millis(500)), pairs: vec![(Opcode(0x44000000), 512)],
//! }, now).unwrap();
//! assert_eq!(plan.writes[0].action, Action::Set(512));
//! assert_eq!(plan.next_deadline, Some(Duration::from_millis(500)));
//! let plan = engine.expire(Duration::from_millis(500));
//! assert_eq!(plan.writes[0].action, Action::Restore);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod resource;
pub use resource::*;

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

/// Identifies a request (a perflock handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RequestId(pub u64);

/// Identifies the owner of requests (a client connection / process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct OwnerId(pub u64);

/// Priority class of a request. Ordered lowest first.
///
/// The class ranks votes only where the resource's rule cannot order them
/// by value: on a `newest`/`oldest` resource the highest class present
/// wins, and a floor vote above a ceiling vote of the same min/max pair
/// wins only with a strictly higher class. On a `max` or `min` resource the
/// value decides, whatever the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriorityClass {
    /// A profile applied through the daemon: below every class a client
    /// can ask for (the wire has no way to name it). Its values are votes
    /// like any other — a perflock's floor below the profile's leaves the
    /// profile's in place, one above it wins until it ends — and it loses
    /// wherever the class decides (a `newest` resource, a pair conflict).
    Profile,
    /// Third-party client, low priority.
    ThirdPartyLow,
    /// Third-party client, high priority.
    ThirdPartyHigh,
    /// System client, low priority.
    SystemLow,
    /// System client, high priority.
    SystemHigh,
}

impl PriorityClass {
    /// True for the classes only system clients may use; such requests may
    /// touch `Permission::System` resources.
    pub fn is_system(self) -> bool {
        matches!(self, PriorityClass::SystemLow | PriorityClass::SystemHigh)
    }
}

/// A request for resource values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Request {
    /// Handle; unique among live requests.
    pub id: RequestId,
    /// Who holds it.
    pub owner: OwnerId,
    /// Its class.
    pub priority: PriorityClass,
    /// When it expires (same clock as `now`); `None` = until released.
    pub deadline: Option<Duration>,
    /// Opcode/value pairs.
    pub pairs: Vec<(Opcode, i64)>,
}

/// Index of a resource inside an [`Engine`] (position in the spec list).
pub type ResourceIndex = usize;

/// What to do with one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Write this level (render it with [`ResourceSpec::render`]).
    Set(i64),
    /// Write back the value the node had before Lever touched it (or, for a
    /// hold-fd resource, close the descriptor).
    Restore,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    /// Which resource.
    pub resource: ResourceIndex,
    /// Its opcode.
    pub opcode: Opcode,
    /// What to write.
    pub action: Action,
    /// The request whose vote won, if any (`None` for a restore, or for a
    /// node moved only to keep a min/max pair ordered).
    pub winner: Option<RequestId>,
}

/// The writes an operation needs, in order, and when the engine next needs
/// to be woken up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Writes to perform, in this order.
    pub writes: Vec<Write>,
    /// The earliest deadline among live requests.
    pub next_deadline: Option<Duration>,
    /// Requests that ended in this operation (released or expired).
    pub ended: Vec<RequestId>,
    /// For an acquire: what became of each pair's value on arrival
    /// (clamped, snapped), in the request's order. Empty for other
    /// operations.
    pub adjustments: Vec<(ResourceIndex, Adjustment)>,
}

/// One live vote, as [`Engine::decision`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VoteRef {
    /// The request that cast it.
    pub id: RequestId,
    /// Its class.
    pub class: PriorityClass,
    /// Its value, as normalized on arrival.
    pub value: i64,
}

/// Why a node holds the level Lever asked for ([`Engine::decision`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Cause {
    /// No vote: the original value is in place.
    Original,
    /// The resource's own winning vote (highest class, then its rule).
    Vote(VoteRef),
    /// The other half of a min/max pair overrode this resource's own
    /// winner (if it has one): a ceiling below the floor lowers the floor;
    /// a floor of a strictly higher class above the ceiling raises it.
    Pair {
        /// The partner resource.
        partner: ResourceIndex,
        /// The partner's winning vote; `None` when the partner holds its
        /// original value (a floor above the node's own untouched max).
        by: Option<VoteRef>,
        /// This resource's own winner, which lost to the pair rule.
        overridden: Option<VoteRef>,
    },
}

/// The level Lever wants on a node now, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The level; `None` when the original is in place.
    pub level: Option<i64>,
    /// Why.
    pub cause: Cause,
}

/// Why the engine refused an operation. Nothing changes when an error is
/// returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Two resources share an opcode.
    #[error("opcode {opcode} is declared twice ({first} and {second})")]
    DuplicateOpcode {
        /// The opcode.
        opcode: Opcode,
        /// First resource name.
        first: String,
        /// Second resource name.
        second: String,
    },
    /// A pair partner is missing or does not point back.
    #[error("resource {name}: pair partner {partner} is missing or not its counterpart")]
    BadPair {
        /// Resource name.
        name: String,
        /// Partner opcode.
        partner: Opcode,
    },
    /// The request names an opcode no resource has.
    #[error("unknown opcode {0}")]
    UnknownOpcode(Opcode),
    /// The request names an opcode twice.
    #[error("opcode {0} appears twice in one request")]
    RepeatedOpcode(Opcode),
    /// The request has no pairs.
    #[error("a request needs at least one opcode/value pair")]
    Empty,
    /// A third-party request touches a system-only resource.
    #[error("resource {name} ({opcode}) is system-only")]
    NotPermitted {
        /// The opcode.
        opcode: Opcode,
        /// Resource name.
        name: String,
    },
    /// No live request has this id.
    #[error("no live request {0:?}")]
    NoSuchRequest(RequestId),
    /// The request belongs to someone else.
    #[error("request {0:?} belongs to another owner")]
    NotOwner(RequestId),
}

/// Key of one vote in a resource's ballot box: its class, the policy's
/// sort key (value for max, negated value for min, sequence for newest,
/// negated sequence for oldest), then the arrival sequence to make keys
/// unique. Keyed by class first, so each class's best vote is one range
/// lookup: for newest/oldest the winner is the largest key; for max/min it
/// is the best of the (at most five) classes' tops by sort key, the higher
/// class on a tie ([`Engine::best`]).
type VoteKey = (PriorityClass, i128, u64);

/// Every class, lowest first.
const CLASSES: [PriorityClass; 5] = [
    PriorityClass::Profile,
    PriorityClass::ThirdPartyLow,
    PriorityClass::ThirdPartyHigh,
    PriorityClass::SystemLow,
    PriorityClass::SystemHigh,
];

/// One vote as the ballot box holds it.
#[derive(Debug, Clone, Copy)]
struct Ballot {
    key: VoteKey,
    value: i64,
    id: RequestId,
}

impl Ballot {
    fn vote(self) -> VoteRef {
        VoteRef {
            id: self.id,
            class: self.key.0,
            value: self.value,
        }
    }
}

#[derive(Debug)]
struct ResourceState {
    spec: ResourceSpec,
    partner: Option<ResourceIndex>,
    /// Numeric view of the node before Lever touched it, if known.
    original: Option<i64>,
    votes: BTreeMap<VoteKey, (i64, RequestId)>,
    /// What Lever last asked to be written: `None` = the original is in place.
    applied: Option<i64>,
}

#[derive(Debug)]
struct Live {
    request: Request,
    votes: Vec<(ResourceIndex, VoteKey)>,
}

/// The aggregation engine. See the crate docs.
#[derive(Debug)]
pub struct Engine {
    resources: Vec<ResourceState>,
    by_opcode: HashMap<Opcode, ResourceIndex>,
    live: HashMap<RequestId, Live>,
    /// Live requests per owner, so that ending an owner's lease costs
    /// what that owner holds, not what everyone holds.
    owners: HashMap<OwnerId, BTreeSet<RequestId>>,
    /// Deadlines in order: the next one is the first, and removing one is
    /// O(log n) — the cost of an expiry does not grow with the number of
    /// requests that are not due.
    deadlines: BTreeSet<(Duration, RequestId)>,
    seq: u64,
}

/// A target value for a node after aggregation and pair resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Set(i64, Why),
    Original,
}

/// Why a node gets its target level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// The resource's own winning vote.
    Own(RequestId),
    /// Set only to keep a min/max pair ordered, by this vote of the pair
    /// (`None`: the partner's untouched original).
    Pair(Option<VoteRef>),
}

impl Engine {
    /// Build an engine over these resources. Fails on duplicate opcodes and
    /// on pairs whose partner is missing or does not point back.
    pub fn new(specs: Vec<ResourceSpec>) -> Result<Engine, EngineError> {
        let mut by_opcode = HashMap::with_capacity(specs.len());
        for (i, s) in specs.iter().enumerate() {
            if let Some(&prev) = by_opcode.get(&s.opcode) {
                let first: &ResourceSpec = &specs[prev];
                return Err(EngineError::DuplicateOpcode {
                    opcode: s.opcode,
                    first: first.name.clone(),
                    second: s.name.clone(),
                });
            }
            by_opcode.insert(s.opcode, i);
        }
        let mut resources = Vec::with_capacity(specs.len());
        for s in &specs {
            let partner = match s.partner() {
                None => None,
                Some(p) => {
                    let idx = by_opcode.get(&p).copied();
                    let back = idx.and_then(|i| specs[i].partner());
                    let kinds_match = idx.is_some_and(|i| {
                        matches!(
                            (&s.kind, &specs[i].kind),
                            (ResourceKind::PairMin { .. }, ResourceKind::PairMax { .. })
                                | (ResourceKind::PairMax { .. }, ResourceKind::PairMin { .. })
                        )
                    });
                    if back != Some(s.opcode) || !kinds_match {
                        return Err(EngineError::BadPair {
                            name: s.name.clone(),
                            partner: p,
                        });
                    }
                    idx
                }
            };
            resources.push(ResourceState {
                spec: s.clone(),
                partner,
                original: None,
                votes: BTreeMap::new(),
                applied: None,
            });
        }
        Ok(Engine {
            resources,
            by_opcode,
            live: HashMap::new(),
            owners: HashMap::new(),
            deadlines: BTreeSet::new(),
            seq: 0,
        })
    }

    /// All resources, in index order.
    pub fn specs(&self) -> impl ExactSizeIterator<Item = &ResourceSpec> {
        self.resources.iter().map(|r| &r.spec)
    }

    /// The resource at `index`.
    pub fn spec(&self, index: ResourceIndex) -> Option<&ResourceSpec> {
        self.resources.get(index).map(|r| &r.spec)
    }

    /// Index of the resource with this opcode.
    pub fn index_of(&self, opcode: Opcode) -> Option<ResourceIndex> {
        self.by_opcode.get(&opcode).copied()
    }

    /// Tell the engine the numeric value a node holds before Lever touches
    /// it. Used to order min/max writes; ignored while Lever holds the node.
    pub fn set_original(&mut self, index: ResourceIndex, value: Option<i64>) {
        if let Some(r) = self.resources.get_mut(index) {
            r.original = value;
        }
    }

    /// The original value recorded with [`Engine::set_original`].
    pub fn original(&self, index: ResourceIndex) -> Option<i64> {
        self.resources.get(index).and_then(|r| r.original)
    }

    /// The level Lever currently holds on a node; `None` when the original
    /// is in place.
    pub fn applied(&self, index: ResourceIndex) -> Option<i64> {
        self.resources.get(index).and_then(|r| r.applied)
    }

    /// The request whose vote currently wins on a resource (by its own
    /// rule; a pair conflict may still override it, see
    /// [`Engine::decision`]).
    pub fn winner(&self, index: ResourceIndex) -> Option<RequestId> {
        (index < self.resources.len())
            .then(|| self.best(index))
            .flatten()
            .map(|b| b.id)
    }

    /// The level Lever wants on a resource now and why: its own winning
    /// vote, or the other half of its min/max pair (a ceiling that capped a
    /// floor, a higher-class floor that raised a ceiling), or the original.
    /// After any operation this is the level its plan left the node at.
    pub fn decision(&self, index: ResourceIndex) -> Option<Decision> {
        let r = self.resources.get(index)?;
        let own = self.best(index).map(Ballot::vote);
        let target = match r.partner {
            None => {
                return Some(Decision {
                    level: own.map(|v| v.value),
                    cause: own.map_or(Cause::Original, Cause::Vote),
                })
            }
            Some(partner) => {
                let (min_idx, max_idx) = match r.spec.kind {
                    ResourceKind::PairMax { .. } => (partner, index),
                    _ => (index, partner),
                };
                let (t_min, t_max) = self.pair_targets(min_idx, max_idx);
                let t = if index == min_idx { t_min } else { t_max };
                (t, partner)
            }
        };
        Some(match target {
            (Target::Original, _) => Decision {
                level: None,
                cause: Cause::Original,
            },
            (Target::Set(level, Why::Own(_)), _) => Decision {
                level: Some(level),
                cause: own.map_or(Cause::Original, Cause::Vote),
            },
            (Target::Set(level, Why::Pair(by)), partner) => Decision {
                level: Some(level),
                cause: Cause::Pair {
                    partner,
                    by,
                    overridden: own,
                },
            },
        })
    }

    /// Live votes on a resource, strongest first by the resource's rule
    /// (the winner first): (request, normalized value, class).
    pub fn votes(
        &self,
        index: ResourceIndex,
    ) -> impl Iterator<Item = (RequestId, i64, PriorityClass)> + '_ {
        let mut all: Vec<(VoteKey, i64, RequestId)> = self
            .resources
            .get(index)
            .into_iter()
            .flat_map(|r| r.votes.iter())
            .map(|(&k, &(v, id))| (k, v, id))
            .collect();
        let by_value = self
            .resources
            .get(index)
            .is_some_and(|r| matches!(r.spec.aggregation, Aggregation::Max | Aggregation::Min));
        if by_value {
            all.sort_by_key(|&((class, sort, seq), _, _)| (sort, class, seq));
        }
        all.into_iter().rev().map(|(k, v, id)| (id, v, k.0))
    }

    /// A live request, with its values as normalized on arrival.
    pub fn request(&self, id: RequestId) -> Option<&Request> {
        self.live.get(&id).map(|l| &l.request)
    }

    /// All live requests, ordered by id.
    pub fn requests(&self) -> Vec<&Request> {
        let mut v: Vec<&Request> = self.live.values().map(|l| &l.request).collect();
        v.sort_by_key(|r| r.id);
        v
    }

    /// Number of live requests.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// The earliest deadline among live requests.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.deadlines.first().map(|&(d, _)| d)
    }

    /// Add a request, or replace the live request with the same id (same
    /// owner only). Values are normalized (clamped, snapped) on arrival.
    /// `Permission::System` resources need a system class
    /// ([`PriorityClass::is_system`]); see [`Engine::acquire_as`] for a
    /// caller that knows its client is trusted whatever class it asked.
    pub fn acquire(&mut self, request: Request, now: Duration) -> Result<Plan, EngineError> {
        let system = request.priority.is_system();
        self.acquire_as(request, now, system)
    }

    /// [`Engine::acquire`] for a client whose right to `Permission::System`
    /// resources is `system`, decided by the caller (the daemon knows who
    /// its client is). The class still only ranks the votes: a system
    /// client asking at a third-party class (what `perf_lock_acq` sends)
    /// may touch system-only resources, and its vote yields to any
    /// higher-class one.
    pub fn acquire_as(
        &mut self,
        request: Request,
        now: Duration,
        system: bool,
    ) -> Result<Plan, EngineError> {
        if request.pairs.is_empty() {
            return Err(EngineError::Empty);
        }
        self.acquire_lease(request, now, system)
    }

    /// [`Engine::acquire_as`] that also takes a request with no pairs: a
    /// lease that holds no resource, on which the caller hangs state of
    /// its own (a use case that only moves threads or sets cgroup files).
    /// It is live like any request — it expires at its deadline, is
    /// released, replaced and ended with its owner, and appears in the
    /// plan's `ended` — and its plans write nothing.
    pub fn acquire_lease(
        &mut self,
        mut request: Request,
        _now: Duration,
        system: bool,
    ) -> Result<Plan, EngineError> {
        if let Some(old) = self.live.get(&request.id) {
            if old.request.owner != request.owner {
                return Err(EngineError::NotOwner(request.id));
            }
        }
        let mut indexes = Vec::with_capacity(request.pairs.len());
        let mut adjustments = Vec::with_capacity(request.pairs.len());
        for (opcode, value) in request.pairs.iter_mut() {
            let idx = self
                .index_of(*opcode)
                .ok_or(EngineError::UnknownOpcode(*opcode))?;
            if indexes.contains(&idx) {
                return Err(EngineError::RepeatedOpcode(*opcode));
            }
            let spec = &self.resources[idx].spec;
            if spec.permission == Permission::System && !system {
                return Err(EngineError::NotPermitted {
                    opcode: *opcode,
                    name: spec.name.clone(),
                });
            }
            let adjustment = spec.adjust(*value);
            *value = adjustment.held;
            adjustments.push((idx, adjustment));
            indexes.push(idx);
        }
        // Validated: from here on nothing fails.
        let mut touched = Vec::with_capacity(indexes.len() * 2);
        if let Some(old) = self.remove_live(request.id) {
            touched.extend(old.votes.iter().map(|&(i, _)| i));
        }
        self.seq += 1;
        let seq = self.seq;
        let mut votes = Vec::with_capacity(indexes.len());
        for (&idx, &(_, value)) in indexes.iter().zip(&request.pairs) {
            let r = &mut self.resources[idx];
            let sort = match r.spec.aggregation {
                Aggregation::Max => value as i128,
                Aggregation::Min => -(value as i128),
                Aggregation::Newest => seq as i128,
                Aggregation::Oldest => -(seq as i128),
            };
            let key = (request.priority, sort, seq);
            r.votes.insert(key, (value, request.id));
            votes.push((idx, key));
            touched.push(idx);
        }
        if let Some(d) = request.deadline {
            self.deadlines.insert((d, request.id));
        }
        self.owners
            .entry(request.owner)
            .or_default()
            .insert(request.id);
        self.live.insert(request.id, Live { request, votes });
        let mut plan = self.replan(touched, Vec::new());
        plan.adjustments = adjustments;
        Ok(plan)
    }

    /// Release one request.
    pub fn release(&mut self, id: RequestId) -> Result<Plan, EngineError> {
        let live = self.remove_live(id).ok_or(EngineError::NoSuchRequest(id))?;
        let touched = live.votes.iter().map(|&(i, _)| i).collect();
        Ok(self.replan(touched, vec![id]))
    }

    /// Release one request on behalf of `owner`, refusing others' requests.
    pub fn release_owned(&mut self, id: RequestId, owner: OwnerId) -> Result<Plan, EngineError> {
        match self.live.get(&id) {
            None => Err(EngineError::NoSuchRequest(id)),
            Some(l) if l.request.owner != owner => Err(EngineError::NotOwner(id)),
            Some(_) => self.release(id),
        }
    }

    /// Release everything an owner holds (its process died or disconnected).
    /// Costs what the owner holds, whatever else is live.
    pub fn release_owner(&mut self, owner: OwnerId) -> Plan {
        let ids: Vec<RequestId> = self
            .owners
            .get(&owner)
            .map(|ids| ids.iter().copied().collect())
            .unwrap_or_default();
        self.release_many(ids)
    }

    /// Number of live requests an owner holds.
    pub fn owned_count(&self, owner: OwnerId) -> usize {
        self.owners.get(&owner).map_or(0, BTreeSet::len)
    }

    /// Release every request whose deadline is at or before `now`.
    pub fn expire(&mut self, now: Duration) -> Plan {
        self.expire_some(now, usize::MAX)
    }

    /// Release at most `max` of the requests whose deadline is at or
    /// before `now`, earliest first. More are due when the plan's
    /// `next_deadline` is still at or before `now`: a caller serving
    /// others meanwhile (the daemon) ends ten thousand requests due at
    /// one instant in bounded steps.
    pub fn expire_some(&mut self, now: Duration, max: usize) -> Plan {
        let mut ids = Vec::new();
        while ids.len() < max {
            match self.deadlines.first() {
                Some(&(d, id)) if d <= now => {
                    ids.push(id);
                    self.deadlines.pop_first();
                }
                _ => break,
            }
        }
        self.release_many(ids)
    }

    /// Release every live request.
    pub fn release_all(&mut self) -> Plan {
        let mut ids: Vec<RequestId> = self.live.keys().copied().collect();
        ids.sort();
        self.release_many(ids)
    }

    fn release_many(&mut self, ids: Vec<RequestId>) -> Plan {
        let mut touched = Vec::new();
        let mut ended = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(live) = self.remove_live(id) {
                touched.extend(live.votes.iter().map(|&(i, _)| i));
                ended.push(id);
            }
        }
        self.replan(touched, ended)
    }

    fn remove_live(&mut self, id: RequestId) -> Option<Live> {
        let live = self.live.remove(&id)?;
        if let Some(ids) = self.owners.get_mut(&live.request.owner) {
            ids.remove(&id);
            if ids.is_empty() {
                self.owners.remove(&live.request.owner);
            }
        }
        for (idx, key) in &live.votes {
            self.resources[*idx].votes.remove(key);
        }
        if let Some(d) = live.request.deadline {
            self.deadlines.remove(&(d, id));
        }
        Some(live)
    }

    /// The best vote of one class on a resource, by its rule.
    fn class_top(&self, idx: ResourceIndex, class: PriorityClass) -> Option<Ballot> {
        self.resources[idx]
            .votes
            .range((class, i128::MIN, 0)..=(class, i128::MAX, u64::MAX))
            .next_back()
            .map(|(&key, &(value, id))| Ballot { key, value, id })
    }

    /// The winning vote on a resource. For `max`/`min` the value decides
    /// across every class (the higher class on a tie, then the newer
    /// vote); for `newest`/`oldest`, which cannot order by value, the
    /// highest class present first.
    fn best(&self, idx: ResourceIndex) -> Option<Ballot> {
        let r = &self.resources[idx];
        match r.spec.aggregation {
            Aggregation::Newest | Aggregation::Oldest => r
                .votes
                .last_key_value()
                .map(|(&key, &(value, id))| Ballot { key, value, id }),
            Aggregation::Max | Aggregation::Min => CLASSES
                .iter()
                .filter_map(|&c| self.class_top(idx, c))
                .max_by_key(|b| (b.key.1, b.key.0, b.key.2)),
        }
    }

    /// Targets for both halves of a pair, resolving a floor above a
    /// ceiling. Where they conflict the ceiling wins — the kernel's own
    /// frequency-QoS outcome — except against floor votes of a strictly
    /// higher class: each class's ceiling is raised to the highest floor
    /// voted by a class above it, and the lowest of those raised ceilings
    /// is the pair's ceiling. A new floor vote therefore never lowers
    /// either node, and only a new ceiling vote can.
    fn pair_targets(&self, min_idx: ResourceIndex, max_idx: ResourceIndex) -> (Target, Target) {
        let floor = self.best(min_idx);
        let ceiling = self.best(max_idx);
        let mut t_min = floor.map_or(Target::Original, |b| Target::Set(b.value, Why::Own(b.id)));
        let mut t_max = ceiling.map_or(Target::Original, |b| Target::Set(b.value, Why::Own(b.id)));
        let (Some(lo), Some(hi)) = (self.level_of(min_idx, t_min), self.level_of(max_idx, t_max))
        else {
            return (t_min, t_max);
        };
        if lo <= hi {
            return (t_min, t_max);
        }
        let Some(ceiling) = ceiling else {
            // Only the node's untouched maximum: it caps the floor.
            t_min = Target::Set(hi, Why::Pair(None));
            return (t_min, t_max);
        };
        // Each class's ceiling, raised by the floors of the classes above;
        // the lowest wins: (level, the ceiling vote, the floor that raised it).
        let floors: Vec<Ballot> = CLASSES
            .iter()
            .filter_map(|&c| self.class_top(min_idx, c))
            .collect();
        let raiser_of = |c: &Ballot| {
            floors
                .iter()
                .filter(|f| f.key.0 > c.key.0 && f.value > c.value)
                .max_by_key(|f| (f.value, f.key.0, f.key.2))
                .copied()
        };
        let mut pair_hi: Option<(i64, Ballot)> = None;
        for c in CLASSES.iter().filter_map(|&c| self.class_top(max_idx, c)) {
            let level = raiser_of(&c).map_or(c.value, |f| f.value);
            if pair_hi.is_none_or(|(l, _)| level < l) {
                pair_hi = Some((level, c));
            }
        }
        let (hi, cap) = pair_hi.unwrap_or((ceiling.value, ceiling));
        if hi != ceiling.value {
            // The winning ceiling was raised (perhaps only up to another
            // class's ceiling): by the floor that crossed it.
            let by = raiser_of(&ceiling).map(Ballot::vote);
            t_max = Target::Set(hi, Why::Pair(by));
        }
        if lo > hi {
            t_min = Target::Set(hi, Why::Pair(Some(cap.vote())));
        }
        (t_min, t_max)
    }

    fn level_of(&self, idx: ResourceIndex, t: Target) -> Option<i64> {
        match t {
            Target::Set(v, _) => Some(v),
            Target::Original => self.resources[idx].original,
        }
    }

    fn current_level(&self, idx: ResourceIndex) -> Option<i64> {
        let r = &self.resources[idx];
        r.applied.or(r.original)
    }

    fn replan(&mut self, mut touched: Vec<ResourceIndex>, ended: Vec<RequestId>) -> Plan {
        // Pairs are planned as a unit, from their min half.
        for idx in touched.iter_mut() {
            if let ResourceKind::PairMax { .. } = self.resources[*idx].spec.kind {
                if let Some(p) = self.resources[*idx].partner {
                    *idx = p;
                }
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let mut writes = Vec::new();
        for idx in touched {
            match self.resources[idx].partner {
                Some(max_idx) => self.plan_pair(idx, max_idx, &mut writes),
                None => {
                    let t = self
                        .best(idx)
                        .map_or(Target::Original, |b| Target::Set(b.value, Why::Own(b.id)));
                    self.plan_one(idx, t, &mut writes);
                }
            }
        }
        Plan {
            writes,
            next_deadline: self.next_deadline(),
            ended,
            adjustments: Vec::new(),
        }
    }

    fn plan_pair(&mut self, min_idx: ResourceIndex, max_idx: ResourceIndex, out: &mut Vec<Write>) {
        let (t_min, t_max) = self.pair_targets(min_idx, max_idx);
        // Write max first only when the new min would exceed the current max.
        let new_min = self.level_of(min_idx, t_min);
        let cur_max = self.current_level(max_idx);
        let max_first = matches!((new_min, cur_max), (Some(n), Some(c)) if n > c);
        if max_first {
            self.plan_one(max_idx, t_max, out);
            self.plan_one(min_idx, t_min, out);
        } else {
            self.plan_one(min_idx, t_min, out);
            self.plan_one(max_idx, t_max, out);
        }
    }

    fn plan_one(&mut self, idx: ResourceIndex, t: Target, out: &mut Vec<Write>) {
        let r = &mut self.resources[idx];
        let (next, action, winner) = match t {
            Target::Set(v, Why::Own(id)) => (Some(v), Action::Set(v), Some(id)),
            Target::Set(v, Why::Pair(_)) => (Some(v), Action::Set(v), None),
            Target::Original => (None, Action::Restore, None),
        };
        if next == r.applied {
            return;
        }
        r.applied = next;
        out.push(Write {
            resource: idx,
            opcode: r.spec.opcode,
            action,
            winner,
        });
    }
}
