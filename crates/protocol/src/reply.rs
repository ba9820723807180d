//! The JSON documents of STATUS and EXPLAIN replies, as types shared by the
//! daemon (which builds them) and the clients (which read them).
//!
//! A STATUS reply is one [`Status`]:
//!
//! ```text
//! {"protocol":1,"target":"qcs6490","source":"built-in","root":"/",
//!  "live_requests":1,
//!  "requests":[{"handle":1234,"pid":4242,"uid":1000,"exe":"/usr/bin/app",
//!    "priority":"third-party-low","detached":false,"duration_ms":0,
//!    "expires_in_ms":null,
//!    "pairs":[{"opcode":"0x44008100","name":"cpu_min_freq.silver",
//!              "value":1958400,"shown":"1958400","unit":"kHz"}]}],
//!  "resources":[{"opcode":"0x44008100","name":"cpu_min_freq.silver",
//!    "node":"/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq",
//!    "unit":"kHz","aggregation":"max","permission":"third-party",
//!    "current":"1958400","error":null,"original":"300000","held":true,
//!    "winner":1234}]}
//! ```
//!
//! An EXPLAIN reply is one [`Explain`]: the resource's entry as in
//! `resources` above, plus `spec`, `rule`, `pair`, `applied` and `votes`.
//! `cause` says who decided the applied value ([`Cause`]): the winning vote
//! (handle, class, value), or for a min/max pair the request on the other
//! half that capped (or raised) it.
//!
//! An ACQUIRE sent with the report flag is answered with one [`Acquired`]:
//!
//! ```text
//! {"handle":1234,
//!  "resources":[{"opcode":"0x44008100","name":"cpu_min_freq.silver",
//!    "unit":"kHz","asked":99999999,"held":1958400,
//!    "clamped":{"bound":"max","to":1958400},"snapped":null,
//!    "applied":806400,"shown":"806400",
//!    "cause":{"type":"pair","partner":"cpu_max_freq.silver",
//!      "rule":"ceiling-beats-floor",
//!      "by":{"handle":"another client","priority":"third-party-low",
//!            "value":806400,"shown":"806400"},
//!      "overridden":{"handle":1234,...}}}]}
//! ```
//!
//! A request of another client shows as the string `"another client"`
//! where a handle would be ([`Holder`]); a third-party client never sees
//! others' handles. `duration_ms` is 0 for a request held until released.
//! Key order carries no meaning.

use crate::fields::{Handle, Lease, Priority};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The daemon's state as one client may see it (STATUS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// Protocol version the daemon speaks.
    pub protocol: u8,
    /// Target name (`qcs6490`).
    pub target: String,
    /// Where the target came from (`built-in`, a file, `discovered`).
    pub source: String,
    /// Root prefix of the daemon's kernel paths.
    pub root: String,
    /// Live requests of every client.
    pub live_requests: usize,
    /// The requests this client may see (all of them for root).
    pub requests: Vec<RequestInfo>,
    /// Every resource of the target.
    pub resources: Vec<ResourceState>,
    /// Originals the daemon owes nodes that refused them (left by an
    /// earlier run): kept in its journal and retried until written. Absent
    /// when there are none (and from older daemons).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrestored: Vec<Unrestored>,
    /// App detection: `on`, or `unavailable: WHY`; absent when the target
    /// has no `apps:` or detection is off (and from older daemons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_detection: Option<String>,
    /// Profiles applied through the daemon (PROFILE): absent when none is
    /// (and from older daemons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileStatus>,
    /// Why use cases' and apps' per-process settings (thread rules,
    /// `move_to`) cannot apply on this daemon, e.g. under a simulated root
    /// whose `/proc` does not hold the real processes; absent when they
    /// can (and from older daemons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_rules: Option<String>,
}

/// The profiles the daemon applies: the base profile, the holds, and the
/// one in effect.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileStatus {
    /// The base profile (PROFILE without hold), kept across restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The profile whose values are written now: the winning hold, else
    /// the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective: Option<String>,
    /// Live holds, oldest first.
    #[serde(default)]
    pub holds: Vec<ProfileHold>,
}

/// A profile held while its client's connection lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileHold {
    /// The hold's handle (RELEASE ends it).
    pub handle: u32,
    /// The profile held.
    pub name: String,
    /// The client's pid, where the daemon knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

/// An original the daemon could not write back yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unrestored {
    /// Kernel path of the node.
    pub node: String,
    /// The value it should get back.
    pub original: String,
    /// Why the last attempt failed.
    pub error: String,
}

/// One live request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestInfo {
    /// Its handle.
    pub handle: Handle,
    /// Process that made it (at connect time).
    pub pid: i32,
    /// Its user id.
    pub uid: u32,
    /// Its executable, when readable.
    pub exe: Option<String>,
    /// Priority class.
    pub priority: Priority,
    /// Outlives its connection.
    pub detached: bool,
    /// As asked for (`duration_ms` on the wire, 0 = until released).
    #[serde(rename = "duration_ms")]
    pub lease: Lease,
    /// Time left, ms; `None` until released.
    pub expires_in_ms: Option<u64>,
    /// Opcode/value pairs as asked for.
    pub pairs: Vec<PairInfo>,
    /// The use case this request triggered (a SIGNAL), with its variant
    /// as `name/variant`; absent for a plain ACQUIRE (and from older
    /// daemons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usecase: Option<String>,
}

/// One opcode/value pair of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairInfo {
    /// Opcode text (`0x44008100`).
    pub opcode: String,
    /// Resource name.
    pub name: String,
    /// Value as asked for.
    pub value: i64,
    /// The value as the node shows it (enum name or number).
    pub shown: String,
    /// Unit of `value` (`kHz`); empty from a daemon that predates it.
    #[serde(default)]
    pub unit: String,
}

/// Whose request: one of yours (its handle) or another client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A request this client may see.
    Handle(Handle),
    /// Someone else's (`"another client"` in JSON).
    AnotherClient,
}

const ANOTHER_CLIENT: &str = "another client";

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Holder::Handle(h) => h.fmt(f),
            Holder::AnotherClient => f.write_str(ANOTHER_CLIENT),
        }
    }
}

impl Serialize for Holder {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Holder::Handle(h) => h.serialize(s),
            Holder::AnotherClient => s.serialize_str(ANOTHER_CLIENT),
        }
    }
}

impl<'de> Deserialize<'de> for Holder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Holder, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Handle(Handle),
            Text(String),
        }
        match Wire::deserialize(d)? {
            Wire::Handle(h) => Ok(Holder::Handle(h)),
            Wire::Text(t) if t == ANOTHER_CLIENT => Ok(Holder::AnotherClient),
            Wire::Text(t) => Err(serde::de::Error::custom(format!(
                "expected a handle or \"another client\", found {t:?}"
            ))),
        }
    }
}

/// One resource: what it is and what it holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceState {
    /// Opcode text (`0x44008100`).
    pub opcode: String,
    /// Name (`cpu_min_freq.silver`).
    pub name: String,
    /// Kernel node.
    pub node: String,
    /// Unit of the value (`kHz`).
    pub unit: String,
    /// Aggregation rule (`max`, `min`, `newest`, `oldest`).
    pub aggregation: String,
    /// Who may use it (`system`, `third-party`).
    pub permission: String,
    /// The node's text now; `None` when it cannot be read (see `error`).
    pub current: Option<String>,
    /// Why `current` could not be read.
    pub error: Option<String>,
    /// The text Lever will restore, once it has written the node.
    pub original: Option<String>,
    /// Lever holds the node (it differs from the original).
    pub held: bool,
    /// The request whose value is applied, if any.
    pub winner: Option<Holder>,
}

/// Everything about one resource (EXPLAIN).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explain {
    /// Its state, as in [`Status::resources`].
    #[serde(flatten)]
    pub resource: ResourceState,
    /// Its definition in the target.
    pub spec: SpecInfo,
    /// How votes combine, in a sentence.
    pub rule: String,
    /// The other half of a min/max pair.
    pub pair: Option<String>,
    /// The value applied now, as the node shows it.
    pub applied: Option<String>,
    /// Who decided `applied`: the winning vote, or the pair's other half.
    /// `None` only from a daemon that predates this field.
    #[serde(default)]
    pub cause: Option<Cause>,
    /// The live votes, strongest first: every one for root; for any other
    /// client its own votes, the resource's winning vote (as "another
    /// client" when it is not its own) and the profile's, while the rest
    /// are only counted in `other_votes`.
    pub votes: Vec<Vote>,
    /// Other clients' votes not listed in `votes` (0, and absent, for
    /// root and from older daemons).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other_votes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A vote named as the reason for a value: whose, its class and value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoteInfo {
    /// Whose ("another client" for a third-party caller).
    pub handle: Holder,
    /// Its class.
    pub priority: Priority,
    /// Its value, after clamping and snapping.
    pub value: i64,
    /// As the node shows it.
    pub shown: String,
    /// The use case the vote's request triggered, if it is one the client
    /// may see (`name` or `name/variant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usecase: Option<String>,
}

/// Which rule of a min/max pair moved a node away from its own winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairRule {
    /// The floor was above the ceiling: the ceiling wins, the floor is
    /// lowered to it.
    CeilingBeatsFloor,
    /// The floor's class is strictly higher than the ceiling's: the ceiling
    /// is raised to the floor.
    HigherClassFloorWins,
}

/// Why a resource holds the value Lever applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Cause {
    /// No vote: the original value is in place.
    Original,
    /// The resource's winning vote (highest class first, then its rule).
    Vote {
        /// The vote.
        vote: VoteInfo,
    },
    /// The other half of a min/max pair decided it.
    Pair {
        /// The other half's name (`cpu_max_freq.silver`).
        partner: String,
        /// Which pair rule applied.
        rule: PairRule,
        /// The other half's winning vote; `None` when it holds its original
        /// value (a floor above the untouched maximum).
        by: Option<VoteInfo>,
        /// This resource's own winner, which the pair rule overrode.
        overridden: Option<VoteInfo>,
    },
}

/// The reply to an ACQUIRE with the report flag: the handle, and what
/// became of each pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acquired {
    /// The request's handle.
    pub handle: Handle,
    /// One entry per pair, in the request's order.
    pub resources: Vec<Applied>,
    /// For a SIGNAL: the use case triggered (`name` or `name/variant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usecase: Option<String>,
    /// For a SIGNAL: how long the daemon holds it (the use case's own
    /// duration unless the trigger gave one; 0 = until released).
    #[serde(
        default,
        rename = "duration_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub lease: Option<Lease>,
    /// For a SIGNAL whose use case has a task part (cgroup files, `move_to`,
    /// thread rules): how many task settings were made. Absent otherwise
    /// (and from older daemons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_applied: Option<usize>,
    /// For a SIGNAL: what of the use case was not applied, and why (a
    /// cgroup controller this kernel lacks, a thread setting refused, a
    /// process the daemon cannot see). The request holds the rest; empty
    /// (absent) when everything was applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<NotApplied>,
}

/// One part of a use case that was not applied ([`Acquired::not_applied`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotApplied {
    /// What was tried: `cpu.weight of lever/camera`, `Affinity([4, 5]) of
    /// thread 812 (cam-0)`, `thread rules`.
    pub what: String,
    /// Why it was not applied, as the kernel or the daemon said it.
    pub why: String,
}

/// What one pair of an acquire asked for, holds and got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Opcode text (`0x44008100`).
    pub opcode: String,
    /// Resource name.
    pub name: String,
    /// Unit of the values (`kHz`).
    pub unit: String,
    /// The value asked for.
    pub asked: i64,
    /// The value the request holds: `asked` clamped and snapped.
    pub held: i64,
    /// `asked` was outside the resource's range and clamped to a bound.
    pub clamped: Option<Clamped>,
    /// The (clamped) value was moved onto the resource's table.
    pub snapped: Option<Snapped>,
    /// The level the node has now; `None` when the original is in place.
    pub applied: Option<i64>,
    /// The node's value as it shows it (enum name or number).
    pub shown: String,
    /// Who decided `applied`; differs from this request when another
    /// request's vote wins or the pair's other half capped it.
    pub cause: Cause,
}

/// Which bound of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// The lowest value (`low`).
    Min,
    /// The highest value (`high`).
    Max,
}

/// A value clamped to one of the resource's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clamped {
    /// Which bound.
    pub bound: Bound,
    /// Its value.
    pub to: i64,
}

/// Which way a value was moved onto the resource's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnapDirection {
    /// Up to the next step (a floor).
    Up,
    /// Down to the previous step (a ceiling).
    Down,
    /// To the nearest step.
    Nearest,
}

/// A value moved onto a table step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapped {
    /// Which way.
    pub direction: SnapDirection,
    /// The step.
    pub to: i64,
}

/// A resource's definition as the target gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecInfo {
    /// Name.
    pub name: String,
    /// Opcode text.
    pub opcode: String,
    /// Kernel node.
    pub node: String,
    /// Unit.
    pub unit: String,
    /// Lowest accepted value.
    pub low: i64,
    /// Highest accepted value.
    pub high: i64,
    /// Allowed discrete values, ascending.
    pub steps: Option<Vec<i64>>,
    /// Aggregation rule.
    pub aggregation: String,
    /// Who may use it.
    pub permission: String,
    /// How it is applied.
    pub kind: KindInfo,
    /// What it is for.
    pub description: String,
}

/// How a resource's value reaches the kernel (`{"type": "enum", ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum KindInfo {
    /// One node holding one integer.
    Plain,
    /// Lower half of a min/max pair.
    PairMin {
        /// Opcode text of the maximum.
        max: String,
    },
    /// Upper half of a min/max pair.
    PairMax {
        /// Opcode text of the minimum.
        min: String,
    },
    /// One of an ordered list of strings; values are indexes.
    Enum {
        /// The strings, lowest first.
        values: Vec<String>,
    },
    /// A device held by an open file descriptor (PM QoS).
    HoldFd,
    /// A set of CPUs in the kernel's list form; values are bit masks.
    CpuList,
}

impl KindInfo {
    /// The `type` name (`plain`, `enum`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            KindInfo::Plain => "plain",
            KindInfo::PairMin { .. } => "pair-min",
            KindInfo::PairMax { .. } => "pair-max",
            KindInfo::Enum { .. } => "enum",
            KindInfo::HoldFd => "hold-fd",
            KindInfo::CpuList => "cpulist",
        }
    }

    /// The names of an enum resource's values (empty for the others).
    pub fn values(&self) -> &[String] {
        match self {
            KindInfo::Enum { values } => values,
            _ => &[],
        }
    }
}

/// One live vote on a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// Whose.
    pub handle: Holder,
    /// The value, after snapping to what the node can hold.
    pub value: i64,
    /// As the node shows it.
    pub shown: String,
    /// Priority class.
    pub priority: Priority,
    /// Time left, ms; `None` until released.
    pub expires_in_ms: Option<u64>,
    /// The use case the vote's request triggered, if the client may see
    /// it (`name` or `name/variant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usecase: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource() -> ResourceState {
        ResourceState {
            opcode: "0x44008100".into(),
            name: "cpu_min_freq.silver".into(),
            node: "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq".into(),
            unit: "kHz".into(),
            aggregation: "max".into(),
            permission: "third-party".into(),
            current: Some("1958400".into()),
            error: None,
            original: Some("300000".into()),
            held: true,
            winner: Some(Holder::AnotherClient),
        }
    }

    /// The documents keep the keys and shapes the C and Python clients
    /// (and `lever status --json` users) read.
    #[test]
    fn status_json_keys_and_shapes() {
        let status = Status {
            protocol: 1,
            target: "qcs6490".into(),
            source: "built-in".into(),
            root: "/".into(),
            live_requests: 1,
            requests: vec![RequestInfo {
                handle: Handle::new(1234).unwrap(),
                pid: 4242,
                uid: 1000,
                exe: None,
                priority: Priority::SystemLow,
                detached: false,
                lease: Lease::UntilReleased,
                expires_in_ms: None,
                pairs: vec![PairInfo {
                    opcode: "0x44008100".into(),
                    name: "cpu_min_freq.silver".into(),
                    value: 1958400,
                    shown: "1958400".into(),
                    unit: "kHz".into(),
                }],
                usecase: None,
            }],
            resources: vec![resource()],
            unrestored: vec![],
            app_detection: None,
            profile: None,
            task_rules: None,
        };
        let value = serde_json::to_value(&status).unwrap();
        // Owed originals appear only when there are some (older clients
        // and documents need not know the key).
        let mut owed = status.clone();
        owed.unrestored.push(Unrestored {
            node: "/proc/sys/vm/swappiness".into(),
            original: "60".into(),
            error: "Is a directory".into(),
        });
        let with = serde_json::to_value(&owed).unwrap();
        assert_eq!(with["unrestored"][0]["original"], "60");
        assert_eq!(serde_json::from_value::<Status>(with).unwrap(), owed);
        assert_eq!(
            value,
            json!({
                "protocol": 1, "target": "qcs6490", "source": "built-in", "root": "/",
                "live_requests": 1,
                "requests": [{"handle": 1234, "pid": 4242, "uid": 1000, "exe": null,
                    "priority": "system-low", "detached": false, "duration_ms": 0,
                    "expires_in_ms": null,
                    "pairs": [{"opcode": "0x44008100", "name": "cpu_min_freq.silver",
                               "value": 1958400, "shown": "1958400", "unit": "kHz"}]}],
                "resources": [{"opcode": "0x44008100", "name": "cpu_min_freq.silver",
                    "node": "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq",
                    "unit": "kHz", "aggregation": "max", "permission": "third-party",
                    "current": "1958400", "error": null, "original": "300000",
                    "held": true, "winner": "another client"}],
            })
        );
        let back: Status = serde_json::from_value(value).unwrap();
        assert_eq!(back, status);
    }

    #[test]
    fn explain_is_the_resource_entry_plus_its_reasons() {
        let explain = Explain {
            resource: ResourceState {
                winner: Some(Holder::Handle(Handle::new(5).unwrap())),
                ..resource()
            },
            spec: SpecInfo {
                name: "governor.silver".into(),
                opcode: "0x40804000".into(),
                node: "/sys/x".into(),
                unit: "level".into(),
                low: 0,
                high: 1,
                steps: None,
                aggregation: "max".into(),
                permission: "third-party".into(),
                kind: KindInfo::Enum {
                    values: vec!["schedutil".into(), "performance".into()],
                },
                description: "governor".into(),
            },
            rule: "the highest wins".into(),
            pair: None,
            applied: Some("performance".into()),
            cause: Some(Cause::Original),
            votes: vec![Vote {
                handle: Holder::AnotherClient,
                value: 1,
                shown: "performance".into(),
                priority: Priority::ThirdPartyLow,
                expires_in_ms: Some(250),
                usecase: None,
            }],
            other_votes: 0,
        };
        let value = serde_json::to_value(&explain).unwrap();
        assert!(value.get("other_votes").is_none(), "absent when 0");
        assert_eq!(value["winner"], json!(5));
        assert_eq!(value["opcode"], json!("0x44008100"));
        assert_eq!(
            value["spec"]["kind"],
            json!({"type": "enum", "values": ["schedutil", "performance"]})
        );
        assert_eq!(value["spec"]["steps"], json!(null));
        assert_eq!(value["pair"], json!(null));
        assert_eq!(
            value["votes"],
            json!([{"handle": "another client", "value": 1, "shown": "performance",
                    "priority": "third-party-low", "expires_in_ms": 250}])
        );
        assert_eq!(value["cause"], json!({"type": "original"}));
        let back: Explain = serde_json::from_value(value).unwrap();
        assert_eq!(back, explain);
        assert_eq!(back.spec.kind.values().len(), 2);
        assert_eq!(KindInfo::PairMin { max: "0x1".into() }.as_str(), "pair-min");
        assert!(serde_json::from_value::<Holder>(json!("someone")).is_err());
        let summarised = Explain {
            other_votes: 3999,
            ..explain
        };
        let value = serde_json::to_value(&summarised).unwrap();
        assert_eq!(value["other_votes"], json!(3999));
        assert_eq!(
            serde_json::from_value::<Explain>(value).unwrap(),
            summarised
        );
    }

    #[test]
    fn acquired_names_what_was_done_and_who_decided() {
        let vote = |handle, value: i64| VoteInfo {
            handle,
            priority: Priority::ThirdPartyLow,
            value,
            shown: value.to_string(),
            usecase: None,
        };
        let mine = Holder::Handle(Handle::new(1234).unwrap());
        let doc = Acquired {
            handle: Handle::new(1234).unwrap(),
            resources: vec![Applied {
                opcode: "0x44008100".into(),
                name: "cpu_min_freq.silver".into(),
                unit: "kHz".into(),
                asked: 99_999_999,
                held: 1958400,
                clamped: Some(Clamped {
                    bound: Bound::Max,
                    to: 1958400,
                }),
                snapped: None,
                applied: Some(806400),
                shown: "806400".into(),
                cause: Cause::Pair {
                    partner: "cpu_max_freq.silver".into(),
                    rule: PairRule::CeilingBeatsFloor,
                    by: Some(vote(Holder::AnotherClient, 806400)),
                    overridden: Some(vote(mine, 1958400)),
                },
            }],
            usecase: None,
            lease: None,
            tasks_applied: None,
            not_applied: vec![],
        };
        let value = serde_json::to_value(&doc).unwrap();
        let r = &value["resources"][0];
        assert_eq!(value["handle"], json!(1234));
        assert_eq!(r["clamped"], json!({"bound": "max", "to": 1958400}));
        assert_eq!(r["snapped"], json!(null));
        assert_eq!(r["cause"]["type"], json!("pair"));
        assert_eq!(r["cause"]["rule"], json!("ceiling-beats-floor"));
        assert_eq!(r["cause"]["by"]["handle"], json!("another client"));
        assert_eq!(r["cause"]["overridden"]["handle"], json!(1234));
        let back: Acquired = serde_json::from_value(value).unwrap();
        assert_eq!(back, doc);
        let snapped = json!({"direction": "up", "to": 1152000});
        assert_eq!(
            serde_json::from_value::<Snapped>(snapped).unwrap(),
            Snapped {
                direction: SnapDirection::Up,
                to: 1152000
            }
        );
    }
}
