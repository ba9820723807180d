//! What a resource is: the data a target file declares, after expansion.
//!
//! One [`ResourceSpec`] is one kernel node with one opcode. A YAML template
//! such as "min frequency, per cluster" expands (in `lever-targets`) into one
//! `ResourceSpec` per cluster, each with its own opcode and node path.

use serde::Serialize;
use std::fmt;

/// A 32-bit resource opcode, e.g. `0x44008100` (Silver cluster min frequency
/// on QCS6490, seed 000 §3.4). See `docs/opcodes.md` for the bit layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct Opcode(pub u32);

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

impl From<Opcode> for String {
    fn from(o: Opcode) -> String {
        o.to_string()
    }
}

impl std::str::FromStr for Opcode {
    type Err = String;
    /// Accepts hex with a `0x` prefix (`0x44008100`) or decimal, as
    /// [`lever_text::parse_int`] reads integers everywhere.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        lever_text::parse_int(s)
            .and_then(|v| u32::try_from(v).ok())
            .map(Opcode)
            .ok_or_else(|| format!("{s:?} is not a 32-bit opcode (use hex like 0x44008100)"))
    }
}

/// How concurrent requests on one resource combine into the value written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aggregation {
    /// Higher is better: the largest request wins (floors such as
    /// `scaling_min_freq`, `sched_util_clamp_min`, an ordered enum).
    Max,
    /// Lower is better: the smallest request wins (ceilings such as
    /// `scaling_max_freq`, PM QoS latency).
    Min,
    /// The most recent request wins.
    Newest,
    /// The earliest request still live wins.
    Oldest,
}

impl Aggregation {
    /// Name as written in target files.
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Max => "max",
            Aggregation::Min => "min",
            Aggregation::Newest => "newest",
            Aggregation::Oldest => "oldest",
        }
    }
}

/// Who may request a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    /// Only system clients (root or the lever group). For resources that can
    /// harm the whole system: CPU online, RT throttling, cpuidle, PM QoS.
    System,
    /// Any client.
    ThirdParty,
}

/// How a resource's value reaches the kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum ResourceKind {
    /// One node holding one integer.
    Plain,
    /// The lower half of a min/max pair (e.g. `scaling_min_freq`); `max` is
    /// the opcode of the partner. Writes keep `min <= max` at every step.
    PairMin {
        /// Opcode of the paired maximum.
        max: Opcode,
    },
    /// The upper half of a min/max pair (e.g. `scaling_max_freq`).
    PairMax {
        /// Opcode of the paired minimum.
        min: Opcode,
    },
    /// A node holding one of an ordered list of strings (e.g. a governor).
    /// Request values are indexes into `values`; index order is the order
    /// used by aggregation.
    Enum {
        /// The allowed strings, lowest to highest.
        values: Vec<String>,
    },
    /// A device whose request lives as long as an open file descriptor, such
    /// as `/dev/cpu_dma_latency` (PM QoS): open, write the value as a binary
    /// 32-bit integer, keep it open; closing it drops the request.
    HoldFd,
    /// A node holding a set of CPUs in the kernel's list form (`0-1,3`),
    /// such as a cgroup's `cpuset.cpus`. A value is the set as a bit mask
    /// (bit N is CPU N, so CPUs 0 to 62); the empty set is 0.
    CpuList,
}

impl ResourceKind {
    /// Short name as written in target files.
    pub fn as_str(&self) -> &'static str {
        match self {
            ResourceKind::Plain => "plain",
            ResourceKind::PairMin { .. } => "pair-min",
            ResourceKind::PairMax { .. } => "pair-max",
            ResourceKind::Enum { .. } => "enum",
            ResourceKind::HoldFd => "hold-fd",
            ResourceKind::CpuList => "cpulist",
        }
    }
}

/// How a requested value was brought into what a node can hold
/// ([`ResourceSpec::adjust`]): clamped to a bound, then snapped to the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Adjustment {
    /// The value the request asked for.
    pub asked: i64,
    /// The value the request holds: `asked` after clamping and snapping.
    pub held: i64,
    /// The bound `asked` was clamped to, if it was outside `[low, high]`.
    pub clamped: Option<Clamp>,
    /// How the (clamped) value was moved onto a table step, if it was not
    /// one.
    pub snapped: Option<Snap>,
}

/// A value outside a resource's bounds was clamped to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clamp {
    /// Raised to the resource's lowest value.
    ToLow(i64),
    /// Lowered to the resource's highest value.
    ToHigh(i64),
}

/// Which way a value was moved onto the resource's table (`steps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Snap {
    /// Up to the next step: a floor keeps its promise.
    Up,
    /// Down to the previous step: a ceiling keeps its promise.
    Down,
    /// To the nearest step (newest/oldest resources).
    Nearest,
}

/// One kernel node Lever can tune.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceSpec {
    /// Unique name, e.g. `cpu_min_freq.silver`.
    pub name: String,
    /// Unique opcode.
    pub opcode: Opcode,
    /// Absolute kernel path, e.g.
    /// `/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq`.
    pub node: String,
    /// Unit of the value (`kHz`, `Hz`, `us`, `percent`, `level`, ...).
    pub unit: String,
    /// Lowest accepted value; requests below are clamped up.
    pub low: i64,
    /// Highest accepted value; requests above are clamped down.
    pub high: i64,
    /// Allowed discrete values, ascending (e.g. the cpufreq table). When set,
    /// a floor (`Max` aggregation) rounds up to the next step and a ceiling
    /// (`Min`) rounds down; others round to the nearest.
    pub steps: Option<Vec<i64>>,
    /// How concurrent requests combine.
    pub aggregation: Aggregation,
    /// Who may use it.
    pub permission: Permission,
    /// How it is applied.
    pub kind: ResourceKind,
    /// What it is for, in a sentence.
    pub description: String,
}

impl ResourceSpec {
    /// Bring a requested value into what the node can hold: clamp to
    /// `[low, high]`, then snap to `steps` in the direction that keeps the
    /// request's promise (a floor never ends lower than asked, a ceiling
    /// never higher, as far as the table allows).
    pub fn normalize(&self, value: i64) -> i64 {
        self.adjust(value).held
    }

    /// What [`ResourceSpec::normalize`] does to `value`, step by step, so a
    /// client can be told why its request holds another value than it asked.
    pub fn adjust(&self, value: i64) -> Adjustment {
        let high = self.high.max(self.low);
        let v = value.clamp(self.low, high);
        let clamped = match value {
            _ if value < self.low => Some(Clamp::ToLow(self.low)),
            _ if value > high => Some(Clamp::ToHigh(high)),
            _ => None,
        };
        let held = self.snap(v);
        let snapped = (held != v).then_some(match self.aggregation {
            Aggregation::Max if held > v => Snap::Up,
            Aggregation::Min if held < v => Snap::Down,
            _ => Snap::Nearest,
        });
        Adjustment {
            asked: value,
            held,
            clamped,
            snapped,
        }
    }

    fn snap(&self, v: i64) -> i64 {
        let Some(steps) = self.steps.as_deref().filter(|s| !s.is_empty()) else {
            return v;
        };
        let idx = steps.partition_point(|&s| s < v); // first step >= v
        let up = steps.get(idx).copied();
        let down = if idx < steps.len() && steps[idx] == v {
            Some(v)
        } else {
            idx.checked_sub(1).map(|i| steps[i])
        };
        match self.aggregation {
            Aggregation::Max => up.or(down),
            Aggregation::Min => down.or(up),
            Aggregation::Newest | Aggregation::Oldest => match (down, up) {
                (Some(d), Some(u)) => Some(if v - d <= u - v { d } else { u }),
                (d, u) => d.or(u),
            },
        }
        .unwrap_or(v)
    }

    /// The partner opcode when this is half of a min/max pair.
    pub fn partner(&self) -> Option<Opcode> {
        match self.kind {
            ResourceKind::PairMin { max } => Some(max),
            ResourceKind::PairMax { min } => Some(min),
            _ => None,
        }
    }

    /// Render a level as the text written to the node (enum names for
    /// `Enum`, a CPU list for `CpuList`, decimal otherwise).
    pub fn render(&self, level: i64) -> String {
        match &self.kind {
            ResourceKind::CpuList => lever_text::mask_cpu_list(level),
            ResourceKind::Enum { values } => usize::try_from(level)
                .ok()
                .and_then(|i| values.get(i))
                .cloned()
                .unwrap_or_else(|| level.to_string()),
            _ => level.to_string(),
        }
    }

    /// Parse node text (or a user's value such as `performance`) as a level:
    /// an enum's value name, a CPU list's mask (`0-1,3` → `0b1011`), or an
    /// integer as [`lever_text::parse_int`] reads it (`1017600`, `-1`, `+5`,
    /// `0x1F`).
    pub fn parse_level(&self, text: &str) -> Option<i64> {
        let t = text.trim();
        match &self.kind {
            ResourceKind::CpuList => lever_text::cpu_list_mask(t),
            ResourceKind::Enum { values } => values
                .iter()
                .position(|v| v == t)
                .map(|i| i as i64)
                .or_else(|| {
                    lever_text::parse_int(t)
                        .filter(|&i| usize::try_from(i).is_ok_and(|i| i < values.len()))
                }),
            _ => lever_text::parse_int(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn freq(aggregation: Aggregation) -> ResourceSpec {
        ResourceSpec {
            name: "f".into(),
            opcode: Opcode(1),
            node: "/sys/f".into(),
            unit: "kHz".into(),
            low: 300000,
            high: 1958400,
            steps: Some(vec![300000, 691200, 1017600, 1516800, 1958400]),
            aggregation,
            permission: Permission::ThirdParty,
            kind: ResourceKind::Plain,
            description: String::new(),
        }
    }

    #[test]
    fn floor_rounds_up_ceiling_rounds_down() {
        assert_eq!(freq(Aggregation::Max).normalize(1000000), 1017600);
        assert_eq!(freq(Aggregation::Min).normalize(1000000), 691200);
        assert_eq!(freq(Aggregation::Max).normalize(1958400), 1958400);
        assert_eq!(freq(Aggregation::Min).normalize(1516800), 1516800);
        assert_eq!(freq(Aggregation::Newest).normalize(700000), 691200);
    }

    #[test]
    fn adjust_says_what_was_done() {
        let floor = freq(Aggregation::Max);
        let a = floor.adjust(99_999_999);
        assert_eq!(
            (a.held, a.clamped, a.snapped),
            (1958400, Some(Clamp::ToHigh(1958400)), None)
        );
        let a = floor.adjust(1_000_000);
        assert_eq!(
            (a.held, a.clamped, a.snapped),
            (1017600, None, Some(Snap::Up))
        );
        let a = freq(Aggregation::Min).adjust(1_000_000);
        assert_eq!(a.snapped, Some(Snap::Down));
        let a = floor.adjust(5);
        assert_eq!((a.held, a.clamped), (300000, Some(Clamp::ToLow(300000))));
        let a = floor.adjust(1_516_800);
        assert_eq!(
            (a.asked, a.held, a.clamped, a.snapped),
            (1516800, 1516800, None, None)
        );
        // Clamped to a bound that is no step, then snapped.
        let mut odd = freq(Aggregation::Max);
        odd.high = 1_900_000;
        let a = odd.adjust(2_000_000);
        assert_eq!(
            (a.held, a.clamped, a.snapped),
            (1958400, Some(Clamp::ToHigh(1900000)), Some(Snap::Up))
        );
    }

    #[test]
    fn clamps_to_bounds() {
        assert_eq!(freq(Aggregation::Max).normalize(2_100_000), 1958400);
        assert_eq!(freq(Aggregation::Min).normalize(0), 300000);
        assert_eq!(freq(Aggregation::Min).normalize(i64::MIN), 300000);
    }

    #[test]
    fn levels_are_integers_as_everywhere() {
        let r = freq(Aggregation::Max);
        assert_eq!(r.parse_level("1017600\n"), Some(1017600));
        assert_eq!(r.parse_level("0x1f"), Some(31));
        // Accepted since the engine reads integers through lever-text.
        assert_eq!(r.parse_level("+5"), Some(5));
        assert_eq!(r.parse_level("0X1f"), Some(31));
        assert_eq!(r.parse_level("-0x10"), Some(-16));
        assert_eq!(r.parse_level("1e3"), None);
        assert_eq!(r.parse_level("--1"), None);
    }

    #[test]
    fn opcode_parse_and_display() {
        assert_eq!("0x44008100".parse::<Opcode>().unwrap(), Opcode(0x44008100));
        assert_eq!(Opcode(0x4400C100).to_string(), "0x4400C100");
        assert!("0x1_0000_0000".parse::<Opcode>().is_err());
        assert!("zz".parse::<Opcode>().is_err());
        assert_eq!("0X44008100".parse::<Opcode>().unwrap(), Opcode(0x44008100));
        assert!("-1".parse::<Opcode>().is_err());
    }

    #[test]
    fn enum_levels() {
        let mut r = freq(Aggregation::Max);
        r.kind = ResourceKind::Enum {
            values: vec!["powersave".into(), "schedutil".into(), "performance".into()],
        };
        r.steps = None;
        assert_eq!(r.parse_level("performance"), Some(2));
        assert_eq!(r.parse_level("1"), Some(1));
        assert_eq!(r.parse_level("ondemand"), None);
        assert_eq!(r.parse_level("+2"), Some(2));
        assert_eq!(r.parse_level("3"), None);
        assert_eq!(r.parse_level("-1"), None);
        assert_eq!(r.render(1), "schedutil");
    }
}
