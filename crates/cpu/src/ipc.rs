//! Reading cycle, instruction and cache-miss counts (pure; no I/O).
//!
//! Seed 000 §7.1 ("Check instruction per cycle of the application") runs
//! `perf stat -e cycles,instructions` and reads the ratio:
//!
//! - IPC < 1.0: likely memory-stalled — reduce the memory I/O workload;
//! - IPC > 1.0: likely instruction-bound — remove unnecessary work and
//!   cache operations.
//!
//! Seed 000 §7.2 ("Determine cache residency for use cases") counts the Arm
//! PMU events of the cache path L1 → L2 → L3 → LLCC → DDR
//! (`l1d_cache_lmiss_rd`, `l1i_cache_lmiss`, `l2d_cache_lmiss_rd`,
//! `l3d_cache_lmiss_rd`, `ll_cache_miss_rd`): misses at one level are the
//! accesses the next level serves. [`CACHE_CHAIN`] lists them in that order.
//!
//! When the PMU multiplexes (more events than counters), the kernel reports
//! how long each counter was enabled and how long it actually ran; counts
//! are scaled by `enabled / running` as `perf stat` does, and marked.

use serde::Serialize;

/// One event of the seed's cache-miss chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ChainEvent {
    /// The PMU event name as sysfs and `perf list` spell it.
    pub name: &'static str,
    /// What a count means along the path.
    pub meaning: &'static str,
    /// The Arm architectural event number, counted raw where a PMU does
    /// not list the name (`crate::pmu`).
    pub arm_number: u16,
    /// The Arm architecture's name of the event.
    pub arm_name: &'static str,
}

/// The cache-miss chain of seed 000 §7.2, in the seed's order.
pub const CACHE_CHAIN: &[ChainEvent] = &[
    ChainEvent {
        name: "l1d_cache_lmiss_rd",
        meaning: "L1 data read misses (served by L2 or beyond)",
        arm_number: 0x0039,
        arm_name: "L1D_CACHE_LMISS_RD",
    },
    ChainEvent {
        name: "l1i_cache_lmiss",
        meaning: "L1 instruction misses (served by L2 or beyond)",
        arm_number: 0x4006,
        arm_name: "L1I_CACHE_LMISS",
    },
    ChainEvent {
        name: "l2d_cache_lmiss_rd",
        meaning: "L2 read misses (served by L3 or beyond)",
        arm_number: 0x4009,
        arm_name: "L2D_CACHE_LMISS_RD",
    },
    ChainEvent {
        name: "l3d_cache_lmiss_rd",
        meaning: "L3 read misses (served by LLCC or DDR)",
        arm_number: 0x400B,
        arm_name: "L3D_CACHE_LMISS_RD",
    },
    ChainEvent {
        name: "ll_cache_miss_rd",
        meaning: "last-level cache read misses (served by DDR)",
        arm_number: 0x0037,
        arm_name: "LL_CACHE_MISS_RD",
    },
];

/// The seed's reading of an IPC value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IpcReading {
    /// IPC < 1.0.
    LikelyMemoryStalled,
    /// IPC > 1.0.
    LikelyInstructionBound,
    /// IPC exactly 1.0 (to the printed precision): neither.
    AtTheBoundary,
}

impl IpcReading {
    /// Classify an IPC value with the seed's 1.0 threshold, compared at
    /// the two decimals the value is printed with.
    pub fn of(ipc: f64) -> IpcReading {
        let hundredths = (ipc * 100.0).round() as i64;
        match hundredths.cmp(&100) {
            std::cmp::Ordering::Less => IpcReading::LikelyMemoryStalled,
            std::cmp::Ordering::Greater => IpcReading::LikelyInstructionBound,
            std::cmp::Ordering::Equal => IpcReading::AtTheBoundary,
        }
    }

    /// The seed's advice, in one sentence.
    pub fn advice(self) -> &'static str {
        match self {
            IpcReading::LikelyMemoryStalled => {
                "IPC < 1.0: likely memory-stalled; reduce the memory I/O workload"
            }
            IpcReading::LikelyInstructionBound => {
                "IPC > 1.0: likely instruction-bound; remove unnecessary work and cache operations"
            }
            IpcReading::AtTheBoundary => {
                "IPC = 1.0: at the seed's boundary between memory-stalled and instruction-bound"
            }
        }
    }
}

/// One counter's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventCount {
    /// Event name (`cycles`, `instructions`, `l2d_cache_lmiss_rd`, …).
    pub name: String,
    /// The count, scaled for multiplexing; `None` when the counter was
    /// enabled but never got a hardware counter (`time_running` = 0).
    pub count: Option<u64>,
    /// The count as read.
    pub raw_count: u64,
    /// ns the counter was enabled.
    pub time_enabled_ns: u64,
    /// ns the counter was on the PMU.
    pub time_running_ns: u64,
    /// Where it was counted when not through perf's generic event: the
    /// PMU's own event (`armv8_pmuv3/inst_retired/`) or a raw Arm event
    /// number (`armv8_pmuv3/event=0x0008/`), `+`-joined across PMUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

impl EventCount {
    /// Build from what the kernel returned, scaling as `perf stat` does.
    pub fn new(name: &str, raw_count: u64, time_enabled_ns: u64, time_running_ns: u64) -> Self {
        EventCount {
            name: name.to_string(),
            count: scale(raw_count, time_enabled_ns, time_running_ns),
            raw_count,
            time_enabled_ns,
            time_running_ns,
            via: None,
        }
    }

    /// Percentage of the enabled time the counter actually ran (100 unless
    /// the PMU multiplexed).
    pub fn running_percent(&self) -> f64 {
        if self.time_enabled_ns == 0 {
            100.0
        } else {
            self.time_running_ns as f64 * 100.0 / self.time_enabled_ns as f64
        }
    }
}

/// `count × enabled / running`; the raw count when never multiplexed;
/// `None` when the counter never ran.
pub fn scale(raw: u64, enabled_ns: u64, running_ns: u64) -> Option<u64> {
    if running_ns == 0 {
        return if enabled_ns == 0 { Some(raw) } else { None };
    }
    if running_ns >= enabled_ns {
        return Some(raw);
    }
    Some((raw as u128 * enabled_ns as u128 / running_ns as u128) as u64)
}

/// One step of the cache chain with its rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainStep {
    /// The seed's event.
    pub event: ChainEvent,
    /// Its count.
    pub count: EventCount,
    /// Misses per 1000 instructions (MPKI), when both counts exist.
    pub per_kilo_instructions: Option<f64>,
}

/// The whole result of counting one command.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IpcReport {
    /// `cycles` (PERF_COUNT_HW_CPU_CYCLES); `None` without a PMU.
    pub cycles: Option<EventCount>,
    /// `instructions` (PERF_COUNT_HW_INSTRUCTIONS); `None` without a PMU.
    pub instructions: Option<EventCount>,
    /// Which hardware counters are missing and why, when some are.
    pub hardware_note: Option<String>,
    /// instructions / cycles, when both were counted and cycles > 0.
    pub ipc: Option<f64>,
    /// The seed's reading of `ipc`.
    pub reading: Option<IpcReading>,
    /// True when kernel mode was excluded (not allowed by
    /// `perf_event_paranoid`), i.e. user-space counts only.
    pub user_space_only: bool,
    /// The chain events this PMU has, in the seed's order.
    pub chain: Vec<ChainStep>,
    /// Why chain events are missing, when some are.
    pub chain_note: Option<String>,
    /// Software counters, which every kernel with perf events has:
    /// `task-clock` (ns on a CPU), `context-switches`, `cpu-migrations`,
    /// `page-faults` (as `perf stat` prints them).
    pub software: Vec<EventCount>,
}

/// Build the report from counts (pure). `cycles`/`instructions` are `None`
/// when the machine has no hardware counter for them.
pub fn report(
    cycles: Option<EventCount>,
    instructions: Option<EventCount>,
    user_space_only: bool,
    chain: Vec<(ChainEvent, EventCount)>,
    chain_note: Option<String>,
) -> IpcReport {
    let instr = instructions.as_ref().and_then(|i| i.count);
    let ipc = match (instr, cycles.as_ref().and_then(|c| c.count)) {
        (Some(i), Some(c)) if c > 0 => Some(i as f64 / c as f64),
        _ => None,
    };
    let chain = chain
        .into_iter()
        .map(|(event, count)| {
            let per_kilo_instructions = match (count.count, instr) {
                (Some(m), Some(i)) if i > 0 => Some(m as f64 * 1000.0 / i as f64),
                _ => None,
            };
            ChainStep {
                event,
                count,
                per_kilo_instructions,
            }
        })
        .collect();
    IpcReport {
        ipc,
        reading: ipc.map(IpcReading::of),
        cycles,
        instructions,
        hardware_note: None,
        user_space_only,
        chain,
        chain_note,
        software: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_thresholds() {
        assert_eq!(IpcReading::of(0.62), IpcReading::LikelyMemoryStalled);
        assert_eq!(IpcReading::of(1.7), IpcReading::LikelyInstructionBound);
        assert_eq!(IpcReading::of(1.004), IpcReading::AtTheBoundary);
        assert_eq!(IpcReading::of(0.994), IpcReading::LikelyMemoryStalled);
    }

    #[test]
    fn multiplexed_counts_are_scaled() {
        assert_eq!(scale(1000, 10, 10), Some(1000));
        assert_eq!(scale(1000, 10, 5), Some(2000));
        assert_eq!(scale(0, 10, 0), None);
        assert_eq!(scale(7, 0, 0), Some(7));
    }

    #[test]
    fn seed_cache_numbers_as_mpki() {
        // Seed 000 §7.2's sample output, with 5,797,000 instructions assumed
        // for the rate (the seed prints no instruction count).
        let chain = vec![
            (
                CACHE_CHAIN[0],
                EventCount::new("l1d_cache_lmiss_rd", 5797, 1, 1),
            ),
            (
                CACHE_CHAIN[4],
                EventCount::new("ll_cache_miss_rd", 9710, 1, 1),
            ),
        ];
        let r = report(
            Some(EventCount::new("cycles", 10_000_000, 1, 1)),
            Some(EventCount::new("instructions", 5_797_000, 1, 1)),
            false,
            chain,
            None,
        );
        assert!((r.ipc.unwrap() - 0.5797).abs() < 1e-9);
        assert_eq!(r.reading, Some(IpcReading::LikelyMemoryStalled));
        assert_eq!(r.chain[0].per_kilo_instructions, Some(1.0));
        assert_eq!(r.chain[1].count.count, Some(9710));
    }

    #[test]
    fn no_ipc_without_cycles() {
        let r = report(
            Some(EventCount::new("cycles", 0, 0, 0)),
            Some(EventCount::new("instructions", 5, 0, 0)),
            true,
            vec![],
            None,
        );
        assert_eq!(r.ipc, None);
        assert_eq!(r.reading, None);
    }

    #[test]
    fn no_pmu_no_ipc_and_no_rates() {
        let chain = vec![(
            CACHE_CHAIN[0],
            EventCount::new("l1d_cache_lmiss_rd", 5, 1, 1),
        )];
        let r = report(None, None, false, chain, None);
        assert_eq!((r.ipc, r.reading), (None, None));
        assert_eq!(r.chain[0].per_kilo_instructions, None);
    }
}
