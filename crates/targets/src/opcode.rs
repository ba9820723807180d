//! The 32-bit opcode layout (see `docs/opcodes.md`).
//!
//! ```text
//! bit  31 | 30 | 29..22 | 21..14 | 13 | 12..8   | 7..4 | 3..0
//!       0 |  1 | major  | minor  |  0 | cluster | core | index
//! ```
//!
//! The layout is the one of the QCS6490 PerfHAL opcodes (seed 000 §3.4):
//! `0x44008100` is major `0x10`, minor 2, cluster 1 — the Silver cluster's
//! minimum frequency. Per-CPU resources use bits 12..4 together as a 9-bit
//! CPU number; bits 3..0 number a sub-resource such as a cpuidle state.

use lever_engine::resource::Opcode;

/// Bit 30: set in every opcode (they all read `0x4xxxxxxx`).
pub const MARKER: u32 = 1 << 30;
/// First bit of the major (resource group) field, 8 bits wide.
pub const MAJOR_SHIFT: u32 = 22;
/// First bit of the minor (resource within the group) field, 8 bits wide.
pub const MINOR_SHIFT: u32 = 14;
/// Bit 13 is reserved and always clear.
pub const RESERVED_BIT: u32 = 1 << 13;
/// First bit of the cluster id of per-cluster resources, 5 bits wide.
pub const CLUSTER_SHIFT: u32 = 8;
/// First bit of the CPU number of per-CPU resources, 9 bits wide (12..4).
pub const CPU_SHIFT: u32 = 4;
/// Bits of the cluster id field (12..8).
pub const CLUSTER_MASK: u32 = 0x1F << CLUSTER_SHIFT;
/// Bits of the CPU field (12..4).
pub const CPU_MASK: u32 = 0x1FF << CPU_SHIFT;
/// Bits of the sub-index field (3..0).
pub const INDEX_MASK: u32 = 0xF;
/// Largest cluster id (5 bits).
pub const MAX_CLUSTER_ID: u32 = 31;
/// Largest CPU number (9 bits).
pub const MAX_CPU: u32 = 511;
/// Largest sub-index (4 bits).
pub const MAX_INDEX: u32 = 15;
/// Largest major that keeps the top nibble at 4 (`0x4xxxxxxx`).
pub const MAX_MAJOR: u32 = 0x3F;

/// The resource groups Lever's built-in targets use.
pub mod major {
    /// PerfHAL's group of seed 000 §3.4: uclamp and CPU min/max frequency.
    pub const PERFHAL: u32 = 0x10;
    /// cpufreq extras: governor, schedutil `rate_limit_us`.
    pub const CPUFREQ: u32 = 0x20;
    /// GPU (KGSL): devfreq min/max frequency, min/max power level.
    pub const GPU: u32 = 0x21;
    /// Virtual memory sysctls.
    pub const VM: u32 = 0x22;
    /// Scheduler sysctls: RT uclamp default, RT throttling, timer migration.
    pub const SCHED: u32 = 0x23;
    /// CPU hotplug (`cpuN/online`), per CPU.
    pub const HOTPLUG: u32 = 0x24;
    /// cpuidle state disable, per CPU and state.
    pub const CPUIDLE: u32 = 0x25;
    /// PM QoS (`/dev/cpu_dma_latency`).
    pub const PM_QOS: u32 = 0x26;
}

/// Build the base opcode of a resource from its group and number. Both are
/// masked to their field width; use [`decode`] to check a value round-trips.
pub const fn make(major: u32, minor: u32) -> Opcode {
    Opcode(MARKER | (major & 0xFF) << MAJOR_SHIFT | (minor & 0xFF) << MINOR_SHIFT)
}

/// `base` with a cluster id in bits 12..8.
pub const fn with_cluster(base: Opcode, cluster_id: u32) -> Opcode {
    Opcode(base.0 | (cluster_id & 0x1F) << CLUSTER_SHIFT)
}

/// `base` with a CPU number in bits 12..4.
pub const fn with_cpu(base: Opcode, cpu: u32) -> Opcode {
    Opcode(base.0 | (cpu & 0x1FF) << CPU_SHIFT)
}

/// `base` with a sub-index in bits 3..0.
pub const fn with_index(base: Opcode, index: u32) -> Opcode {
    Opcode(base.0 | (index & INDEX_MASK))
}

/// The fields of an opcode, as laid out in the diagram above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// Resource group, bits 29..22.
    pub major: u32,
    /// Resource within the group, bits 21..14.
    pub minor: u32,
    /// Bits 12..8 (the cluster id of a per-cluster resource).
    pub cluster: u32,
    /// Bits 12..4 (the CPU number of a per-CPU resource).
    pub cpu: u32,
    /// Bits 3..0.
    pub index: u32,
}

/// Split an opcode into its fields.
pub const fn decode(op: Opcode) -> Fields {
    Fields {
        major: (op.0 >> MAJOR_SHIFT) & 0xFF,
        minor: (op.0 >> MINOR_SHIFT) & 0xFF,
        cluster: (op.0 & CLUSTER_MASK) >> CLUSTER_SHIFT,
        cpu: (op.0 & CPU_MASK) >> CPU_SHIFT,
        index: op.0 & INDEX_MASK,
    }
}

/// Why a number is not a valid Lever opcode, or `None` when it is: bits
/// 31..28 must read 4 (bit 31 clear, bit 30 set, major at most 0x3F) and the
/// reserved bit 13 must be clear.
pub fn check(op: u32) -> Option<String> {
    if op >> 28 != 0x4 {
        return Some(format!(
            "opcode 0x{op:08X} is not a Lever opcode: it must read 0x4xxxxxxx \
             (bit 31 clear, bit 30 set, major 0x00..0x3F; see docs/opcodes.md)"
        ));
    }
    if op & RESERVED_BIT != 0 {
        return Some(format!(
            "opcode 0x{op:08X} has the reserved bit 13 set (see docs/opcodes.md)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_opcodes_come_out_exact() {
        // seed 000 §3.4, QCS6490 cluster ids: gold 0, silver 1, prime 2.
        let clamp_min = make(major::PERFHAL, 0);
        let clamp_max = make(major::PERFHAL, 1);
        let min_freq = make(major::PERFHAL, 2);
        let max_freq = make(major::PERFHAL, 3);
        assert_eq!(clamp_min, Opcode(0x44000000));
        assert_eq!(clamp_max, Opcode(0x44004000));
        assert_eq!(with_cluster(min_freq, 1), Opcode(0x44008100));
        assert_eq!(with_cluster(min_freq, 0), Opcode(0x44008000));
        assert_eq!(with_cluster(min_freq, 2), Opcode(0x44008200));
        assert_eq!(with_cluster(max_freq, 1), Opcode(0x4400C100));
        assert_eq!(with_cluster(max_freq, 0), Opcode(0x4400C000));
        assert_eq!(with_cluster(max_freq, 2), Opcode(0x4400C200));
        for op in [0x44008100, 0x4400C200, 0x44000000] {
            assert_eq!(check(op), None);
        }
    }

    #[test]
    fn lever_groups() {
        assert_eq!(make(major::CPUFREQ, 0), Opcode(0x48000000));
        assert_eq!(make(major::GPU, 3), Opcode(0x4840C000));
        assert_eq!(make(major::VM, 4), Opcode(0x48810000));
        assert_eq!(make(major::SCHED, 2), Opcode(0x48C08000));
        assert_eq!(with_cpu(make(major::HOTPLUG, 0), 7), Opcode(0x49000070));
        assert_eq!(
            with_index(with_cpu(make(major::CPUIDLE, 0), 3), 1),
            Opcode(0x49400031)
        );
        assert_eq!(make(major::PM_QOS, 0), Opcode(0x49800000));
        assert_eq!(with_cpu(Opcode(0x49000000), MAX_CPU), Opcode(0x49001FF0));
    }

    #[test]
    fn decode_round_trips() {
        let f = decode(Opcode(0x4400C200));
        assert_eq!((f.major, f.minor, f.cluster, f.index), (0x10, 3, 2, 0));
        let f = decode(Opcode(0x49400031));
        assert_eq!((f.major, f.minor, f.cpu, f.index), (0x25, 0, 3, 1));
    }

    #[test]
    fn rejects_non_lever_numbers() {
        assert!(check(0x84008100).is_some());
        assert!(check(0x04008100).is_some());
        assert!(check(0x54008100).is_some());
        assert!(check(0x44002000).unwrap().contains("reserved bit 13"));
    }
}
