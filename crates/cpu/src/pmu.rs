//! A CPU's PMUs as sysfs lists them, and each PMU's own spellings of the
//! events perf's generic ones stand for (pure planning; the opening is in
//! [`crate::counters`]).
//!
//! perf's generic `instructions` and `cycles` (`PERF_TYPE_HARDWARE`) are
//! mapped by the PMU driver to one of its own events. Where the driver has
//! no mapping the open fails with ENOENT although a PMU is there: the Arm
//! PMUv3 driver maps `instructions` to INST_RETIRED (event 0x08) only when
//! the CPU's PMCEID registers say the CPU implements it (qemu's emulated
//! CPUs without `-icount` do not). What is left to try, as `perf` does:
//! the PMU's events by their sysfs names
//! (`/sys/bus/event_source/devices/armv8_pmuv3_0/events/inst_retired`,
//! content `event=0x08`), then, on an Arm PMUv3, the architectural event
//! number as a raw config (`armv8_pmuv3_0/event=0x08/`).
//!
//! On an Arm PMUv3 the kernel lists a common event under `events/` only
//! when PMCEID0/1 (events 0x00–0x3F) or PMCEID2/3 (0x4000–0x403F) mark it
//! implemented. A raw event the list leaves out still opens, and then
//! counts nothing on a CPU without it: such an event that counted 0 is
//! reported as missing from this CPU model, never as a count of 0.
//!
//! A PMU directory, as Linux 6.1 shows it on `qemu-system-aarch64 -M virt
//! -cpu max` (the whole `events/` list):
//!
//! ```text
//! /sys/bus/event_source/devices/armv8_pmuv3/type           8
//! /sys/bus/event_source/devices/armv8_pmuv3/cpus           0-1
//! /sys/bus/event_source/devices/armv8_pmuv3/format/event   config:0-15
//! /sys/bus/event_source/devices/armv8_pmuv3/format/long    config1:0
//! /sys/bus/event_source/devices/armv8_pmuv3/events/        cpu_cycles stall stall_backend stall_frontend
//! ```

use lever_kernel::KernelFs;

use crate::counters::EVENT_SOURCES;

/// One CPU PMU (not `software`, `tracepoint`, `kprobe`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPmu {
    /// Its name under [`EVENT_SOURCES`] (`armv8_pmuv3_0`, `cpu`).
    pub name: String,
    /// The kernel path of its directory.
    pub dir: String,
    /// The names in its `events/` directory, sorted.
    pub events: Vec<String>,
    /// True for the Arm PMUv3 driver's PMUs (`armv8_*`, `armv9_*`), whose
    /// raw configs are the architectural event numbers.
    pub arm_pmuv3: bool,
}

/// The CPU PMUs the kernel lists: Arm PMUv3 PMUs, x86's `cpu`,
/// `cpu_core`, `cpu_atom`, and any PMU with a `cpus` file (a PMU bound to
/// a set of CPUs, as each cluster's PMU on big.LITTLE).
pub fn cpu_pmus(fs: &KernelFs) -> Vec<CpuPmu> {
    let names = fs.list_dir(EVENT_SOURCES).unwrap_or_default();
    names
        .into_iter()
        .filter_map(|name| {
            let dir = format!("{EVENT_SOURCES}/{name}");
            let arm_pmuv3 = name.starts_with("armv8_") || name.starts_with("armv9_");
            let cpu_pmu = arm_pmuv3
                || matches!(name.as_str(), "cpu" | "cpu_core" | "cpu_atom")
                || fs.exists(&format!("{dir}/cpus"));
            cpu_pmu.then(|| CpuPmu {
                events: fs.list_dir(&format!("{dir}/events")).unwrap_or_default(),
                name,
                dir,
                arm_pmuv3,
            })
        })
        .collect()
}

/// A generic perf event and the names PMUs give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchEvent {
    /// perf's name (`instructions`).
    pub perf_name: &'static str,
    /// Names a PMU's `events/` may give it, tried in this order.
    pub sysfs_names: &'static [&'static str],
    /// The Arm architectural event number.
    pub arm_number: u16,
    /// The Arm architecture's name of that event.
    pub arm_name: &'static str,
}

/// `instructions`: Arm INST_RETIRED (0x08); x86's `cpu/instructions/`.
pub const INSTRUCTIONS: ArchEvent = ArchEvent {
    perf_name: "instructions",
    sysfs_names: &["inst_retired", "instructions"],
    arm_number: 0x08,
    arm_name: "INST_RETIRED",
};

/// `cycles`: Arm CPU_CYCLES (0x11); x86's `cpu/cpu-cycles/`.
pub const CYCLES: ArchEvent = ArchEvent {
    perf_name: "cycles",
    sysfs_names: &["cpu_cycles", "cpu-cycles", "cycles"],
    arm_number: 0x11,
    arm_name: "CPU_CYCLES",
};

/// Where one counter of an event is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The PMU's event by its sysfs name (`events/<event>`).
    Named {
        /// The PMU's name.
        pmu: String,
        /// Its directory (kernel path).
        dir: String,
        /// The name under `events/`.
        event: String,
    },
    /// An Arm architectural event number as a raw `event=` config, for an
    /// event the PMU's `events/` does not list.
    Raw {
        /// The PMU's name.
        pmu: String,
        /// Its directory (kernel path).
        dir: String,
        /// The event number.
        number: u16,
    },
}

impl Source {
    /// The PMU's name.
    pub fn pmu(&self) -> &str {
        match self {
            Source::Named { pmu, .. } | Source::Raw { pmu, .. } => pmu,
        }
    }

    /// perf's spelling: `armv8_pmuv3/inst_retired/`, `armv8_pmuv3/event=0x08/`.
    pub fn label(&self) -> String {
        match self {
            Source::Named { pmu, event, .. } => format!("{pmu}/{event}/"),
            Source::Raw { pmu, number, .. } => format!("{pmu}/event={number:#06x}/"),
        }
    }
}

/// Where to count `names` (sysfs spellings) or, on Arm PMUv3 PMUs that list
/// none of them, the raw `arm_number`: one source per PMU that has it.
pub fn sources(pmus: &[CpuPmu], names: &[&str], arm_number: Option<u16>) -> Vec<Source> {
    pmus.iter()
        .filter_map(|p| {
            if let Some(name) = names.iter().find(|n| p.events.iter().any(|e| e == *n)) {
                return Some(Source::Named {
                    pmu: p.name.clone(),
                    dir: p.dir.clone(),
                    event: name.to_string(),
                });
            }
            match (p.arm_pmuv3, arm_number) {
                (true, Some(number)) => Some(Source::Raw {
                    pmu: p.name.clone(),
                    dir: p.dir.clone(),
                    number,
                }),
                _ => None,
            }
        })
        .collect()
}

/// Why a generic event has no PMU source at all (an x86 or other PMU whose
/// `events/` has none of its names): "`cpu` lists no instructions,
/// inst_retired event (its events: …)".
pub fn no_source(pmus: &[CpuPmu], event: &ArchEvent) -> String {
    let listed: Vec<String> = pmus.iter().map(listing).collect();
    format!(
        "the kernel maps no `{}` to this CPU's PMU and none of its PMUs lists it by name ({}; {})",
        event.perf_name,
        event.sysfs_names.join(", "),
        listed.join("; ")
    )
}

/// "armv8_pmuv3's events/ lists cpu_cycles, stall" (or "lists nothing").
pub fn listing(p: &CpuPmu) -> String {
    if p.events.is_empty() {
        format!("{}'s events/ lists nothing", p.name)
    } else {
        format!("{}'s events/ lists {}", p.name, p.events.join(", "))
    }
}

/// Why an event counted only through raw configs the PMUs do not list, and
/// that counted 0, is not a count: the CPU model does not implement it.
/// `pmus` are the PMUs it was opened on; `ran` says what the command did
/// meanwhile ("the command ran 12.3 ms on a CPU and cycles counted 32507123").
pub fn not_implemented(
    pmus: &[&CpuPmu],
    event: &str,
    arm_name: &str,
    number: u16,
    ran: &str,
) -> String {
    let names: Vec<&str> = pmus.iter().map(|p| p.name.as_str()).collect();
    let listed: Vec<String> = pmus.iter().map(|p| listing(p)).collect();
    format!(
        "this CPU model does not implement {arm_name} (Arm event {number:#06x}), which `{event}` needs: \
         {} does not list it (the kernel fills events/ from the CPU's PMCEID registers: {}), \
         and raw event {number:#06x} opened on it counted 0 while {ran}",
        names.join(", "),
        listed.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    /// The PMU of Linux 6.1 on `qemu-system-aarch64 -M virt -cpu max`
    /// (qemu 7.2, no -icount): the whole events/ list.
    fn qemu_virt(tree: &FakeTree) {
        let d = format!("{EVENT_SOURCES}/armv8_pmuv3");
        tree.node(&format!("{d}/type"), "8\n");
        tree.node(&format!("{d}/cpus"), "0-1\n");
        tree.node(&format!("{d}/format/event"), "config:0-15\n");
        tree.node(&format!("{d}/format/long"), "config1:0\n");
        for (e, v) in [
            ("cpu_cycles", "event=0x0011"),
            ("stall", "event=0x003c"),
            ("stall_backend", "event=0x0024"),
            ("stall_frontend", "event=0x0023"),
        ] {
            tree.node(&format!("{d}/events/{e}"), &format!("{v}\n"));
        }
        for p in ["software", "tracepoint", "kprobe", "uprobe", "breakpoint"] {
            tree.node(&format!("{EVENT_SOURCES}/{p}/type"), "1\n");
        }
    }

    #[test]
    fn only_cpu_pmus_are_listed() {
        let tree = FakeTree::new();
        qemu_virt(&tree);
        let pmus = cpu_pmus(tree.fs());
        assert_eq!(pmus.len(), 1, "{pmus:?}");
        assert_eq!(pmus[0].name, "armv8_pmuv3");
        assert!(pmus[0].arm_pmuv3);
        assert_eq!(
            pmus[0].events,
            ["cpu_cycles", "stall", "stall_backend", "stall_frontend"]
        );
    }

    #[test]
    fn instructions_missing_from_the_list_fall_back_to_raw_0x08() {
        let tree = FakeTree::new();
        qemu_virt(&tree);
        let pmus = cpu_pmus(tree.fs());
        let s = sources(
            &pmus,
            INSTRUCTIONS.sysfs_names,
            Some(INSTRUCTIONS.arm_number),
        );
        assert_eq!(
            s,
            [Source::Raw {
                pmu: "armv8_pmuv3".into(),
                dir: format!("{EVENT_SOURCES}/armv8_pmuv3"),
                number: 0x08
            }]
        );
        assert_eq!(s[0].label(), "armv8_pmuv3/event=0x0008/");
        // cycles is listed: by its name.
        let c = sources(&pmus, CYCLES.sysfs_names, Some(CYCLES.arm_number));
        assert_eq!(c[0].label(), "armv8_pmuv3/cpu_cycles/");
    }

    #[test]
    fn big_little_pmus_each_by_its_own_list() {
        // An A55 + A78 board (seed 000's QCS6490): the A78's PMU lists the
        // L3 event, the A55's does not.
        let tree = FakeTree::new();
        for (pmu, cpus) in [("armv8_cortex_a55", "0-3"), ("armv8_cortex_a78", "4-7")] {
            let d = format!("{EVENT_SOURCES}/{pmu}");
            tree.node(&format!("{d}/cpus"), &format!("{cpus}\n"));
            tree.node(&format!("{d}/events/inst_retired"), "event=0x0008\n");
        }
        tree.node(
            &format!("{EVENT_SOURCES}/armv8_cortex_a78/events/l3d_cache_lmiss_rd"),
            "event=0x400b\n",
        );
        let pmus = cpu_pmus(tree.fs());
        let s = sources(&pmus, &["l3d_cache_lmiss_rd"], Some(0x400b));
        let labels: Vec<String> = s.iter().map(Source::label).collect();
        assert_eq!(
            labels,
            [
                "armv8_cortex_a55/event=0x400b/",
                "armv8_cortex_a78/l3d_cache_lmiss_rd/"
            ]
        );
        let i = sources(&pmus, INSTRUCTIONS.sysfs_names, Some(0x08));
        assert!(i.iter().all(|s| matches!(s, Source::Named { .. })), "{i:?}");
    }

    #[test]
    fn an_x86_pmu_gets_no_raw_guess() {
        let tree = FakeTree::new();
        tree.node(&format!("{EVENT_SOURCES}/cpu/type"), "4\n");
        tree.node(
            &format!("{EVENT_SOURCES}/cpu/events/cpu-cycles"),
            "event=0x3c\n",
        );
        let pmus = cpu_pmus(tree.fs());
        assert!(!pmus[0].arm_pmuv3);
        assert!(sources(&pmus, INSTRUCTIONS.sysfs_names, Some(0x08)).is_empty());
        let why = no_source(&pmus, &INSTRUCTIONS);
        assert!(
            why.contains("none of its PMUs lists it by name (inst_retired, instructions; cpu's events/ lists cpu-cycles)"),
            "{why}"
        );
        assert_eq!(
            sources(&pmus, CYCLES.sysfs_names, Some(0x11))[0].label(),
            "cpu/cpu-cycles/"
        );
    }

    #[test]
    fn the_message_says_what_the_cpu_model_lacks() {
        let tree = FakeTree::new();
        qemu_virt(&tree);
        let pmus = cpu_pmus(tree.fs());
        let text = not_implemented(
            &[&pmus[0]],
            "instructions",
            "INST_RETIRED",
            0x08,
            "the command ran 4.2 ms on a CPU",
        );
        assert!(
            text.starts_with("this CPU model does not implement INST_RETIRED (Arm event 0x0008)"),
            "{text}"
        );
        assert!(
            text.contains(
                "armv8_pmuv3's events/ lists cpu_cycles, stall, stall_backend, stall_frontend"
            ),
            "{text}"
        );
        assert!(!text.contains("no hardware counter"), "{text}");
    }
}
