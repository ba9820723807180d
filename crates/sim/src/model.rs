//! The data that describes a board.
//!
//! A board is plain data: CPU clusters with their frequency tables, caches
//! and idle states, memory banks and carveouts, an optional GPU, zram and
//! block devices, and a few kernel-configuration switches. One generator
//! (`crate::gen`) turns any [`Board`] into a tree; no board has code of its
//! own. Units are in the field names.

/// One simulated board.
#[derive(Debug)]
pub(crate) struct Board {
    /// Short name used on the command line (`qcs6490`).
    pub name: &'static str,
    /// One-line description shown by `boards()`.
    pub description: &'static str,
    /// `/proc/device-tree/model`.
    pub dt_model: &'static str,
    /// `/proc/device-tree/compatible`, most specific first.
    pub dt_compatible: &'static [&'static str],
    /// `/proc/version`, without the trailing newline.
    pub proc_version: &'static str,
    /// `/proc/cmdline`, without the trailing newline.
    pub cmdline: &'static str,
    /// How `/proc/cpuinfo` looks (arm64 and arm32 differ).
    pub arch: Arch,
    /// `/sys/devices/system/cpu/kernel_max` (`CONFIG_NR_CPUS - 1`).
    pub kernel_max: u32,
    /// CPU clusters (one cpufreq policy each), in CPU order.
    pub clusters: &'static [Cluster],
    /// A last-level cache shared by every CPU, if any.
    pub l3: Option<Cache>,
    /// The cpufreq driver and governor setup, shared by all policies.
    pub cpufreq: Cpufreq,
    /// RAM, carveouts and a memory-usage snapshot.
    pub memory: Memory,
    /// Adreno GPU behind KGSL, if any.
    pub gpu: Option<Gpu>,
    /// zram swap device, if any.
    pub zram: Option<Zram>,
    /// Block devices listed in `/proc/diskstats`.
    pub disks: &'static [Disk],
    /// A few MMIO regions listed in `/proc/iomem` before RAM.
    pub mmio: &'static [Mmio],
    /// Device interrupts (`/proc/irq/N`, `/proc/interrupts`).
    pub irqs: &'static [Irq],
    /// Unbound workqueues that export their own `cpumask`
    /// (`/sys/devices/virtual/workqueue/NAME`, `WQ_SYSFS`).
    pub workqueues: &'static [&'static str],
    /// The SoC part of the device tree (`/sys/firmware/devicetree/base`),
    /// from a real DTB of the SoC family; `None` where no DTB of the
    /// family is at hand (the tree then has only the board's root,
    /// memory and reserved-memory nodes).
    pub device_tree: Option<SocTree>,
    /// Thermal zones (`/sys/class/thermal/thermal_zoneN`), in
    /// registration order; empty for a board whose kernel has none.
    pub thermal_zones: &'static [ThermalZone],
    /// Kernel configuration switches that decide which nodes exist.
    pub config: KernelConfig,
    /// VM sysctls that differ between boards.
    pub vm: VmTunables,
    /// Seconds since boot of the snapshot; every accumulated counter
    /// (time_in_state, /proc/stat, cpuidle time) is consistent with it.
    pub uptime_s: u64,
}

/// CPU architecture, as far as `/proc/cpuinfo` and vmstat zones care.
#[derive(Debug)]
pub(crate) enum Arch {
    /// 64-bit ARM: per-CPU blocks, no `Hardware` line.
    Arm64 {
        /// `BogoMIPS` (arch timer frequency * 2 / 1e6).
        bogomips: &'static str,
        /// `Features` (hwcaps, identical for every CPU).
        features: &'static str,
    },
    /// 32-bit ARM: `model name` per CPU, `Hardware` trailer.
    Arm32 {
        /// `BogoMIPS`.
        bogomips: &'static str,
        /// `Features`.
        features: &'static str,
        /// `Hardware` (the machine descriptor name).
        hardware: &'static str,
    },
}

/// MIDR fields printed in `/proc/cpuinfo`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Midr {
    pub implementer: u32,
    pub architecture: u32,
    pub variant: u32,
    pub part: u32,
    pub revision: u32,
}

/// A group of identical CPUs sharing one cpufreq policy.
#[derive(Debug)]
pub(crate) struct Cluster {
    /// First CPU number; the policy is `policy<first_cpu>`.
    pub first_cpu: u32,
    /// Number of CPUs.
    pub cpus: u32,
    /// `topology/cluster_id` (the DT `cpu-map` cluster, not the policy:
    /// DynamIQ parts put all cores in one cluster).
    pub topology_cluster: u32,
    /// Available frequencies, ascending, kHz.
    pub freqs_khz: &'static [u32],
    /// Current frequency at snapshot time, kHz (one of `freqs_khz`).
    pub cur_khz: u32,
    /// DT `capacity-dmips-mhz`; `cpu_capacity` is derived from it.
    pub capacity_dmips_mhz: u64,
    /// CPU identification.
    pub midr: Midr,
    /// Per-core L1 instruction cache.
    pub l1i: Cache,
    /// Per-core L1 data cache.
    pub l1d: Cache,
    /// Per-core L2 cache, if any.
    pub l2: Option<Cache>,
    /// cpuidle states, shallowest first (state0 is WFI).
    pub idle_states: &'static [IdleState],
}

/// One cache level's geometry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cache {
    pub size_kb: u32,
    pub ways: u32,
    pub line_bytes: u32,
}

impl Cache {
    /// `number_of_sets` = size / (ways * line).
    pub fn sets(&self) -> u32 {
        self.size_kb * 1024 / (self.ways * self.line_bytes)
    }
}

/// A cpuidle state as the kernel exposes it.
#[derive(Debug)]
pub(crate) struct IdleState {
    /// `name` (the DT node name for DT idle states).
    pub name: &'static str,
    /// `desc` (the DT `idle-state-name`).
    pub desc: &'static str,
    /// `latency`: entry + exit latency, us.
    pub latency_us: u32,
    /// `residency`: minimum residency, us.
    pub residency_us: u32,
}

/// cpufreq driver and governor.
#[derive(Debug)]
pub(crate) struct Cpufreq {
    /// `scaling_driver`.
    pub driver: &'static str,
    /// `cpuinfo_transition_latency`, ns.
    pub transition_latency_ns: u32,
    /// `scaling_available_governors`, in the kernel's registration order.
    pub governors: &'static [&'static str],
    /// `scaling_governor`.
    pub governor: &'static str,
    /// Whether governor tunables live in each policy
    /// (`policyX/<gov>/`, CPUFREQ_HAVE_GOVERNOR_PER_POLICY) or once in
    /// `cpufreq/<gov>/`.
    pub governor_per_policy: bool,
    /// The governor's tunables (file, value).
    pub tunables: &'static [(&'static str, &'static str)],
}

/// RAM as the bootloader reports it, minus what firmware keeps.
#[derive(Debug)]
pub(crate) struct Memory {
    /// DT `memory@...` `reg` entries (base, size in bytes).
    pub banks: &'static [(u64, u64)],
    /// Cells per address and per size in the DT `reg` (1 = u32, 2 = u64).
    pub reg_cells: u32,
    /// `no-map` reserved-memory carveouts; they become holes in
    /// "System RAM" and top-level `reserved` entries in `/proc/iomem`.
    pub carveouts: &'static [Carveout],
    /// Memory the kernel reserves at boot (vmlinux, struct pages, early
    /// allocations): dmesg's `reserved`, the gap between System RAM and
    /// `MemTotal`. kB.
    pub kernel_reserved_kb: u64,
    /// Kernel image sizes, bytes, for the nested `Kernel code` / `Kernel
    /// data` entries of `/proc/iomem`.
    pub kernel_code_bytes: u64,
    pub kernel_data_bytes: u64,
    /// Offset of `_stext` from the 2 MiB-aligned load address.
    pub kernel_text_offset: u64,
    /// `CmaTotal` / `CmaFree`, kB.
    pub cma_total_kb: u64,
    pub cma_free_kb: u64,
    /// Highmem split (32-bit only): lowmem size in kB, or `None` on 64-bit.
    pub lowmem_kb: Option<u64>,
    /// `VmallocTotal`, kB (depends on the VA layout).
    pub vmalloc_total_kb: u64,
    /// Memory-usage snapshot; `MemFree` is what is left.
    pub usage: MemUsage,
    /// vmstat zone names (`dma`, `dma32`, `normal`, `high`, `movable`).
    pub zones: &'static [&'static str],
}

/// A `no-map` reserved-memory region.
#[derive(Debug)]
pub(crate) struct Carveout {
    /// Node name under `/reserved-memory` (`mpss@8b800000`).
    pub name: &'static str,
    /// Its label in the board's source (`mpss_mem`), for `__symbols__`.
    pub label: &'static str,
    pub base: u64,
    pub size: u64,
}

/// What is using memory at snapshot time, kB. `MemFree` is derived as
/// `MemTotal` minus all of these, so `/proc/meminfo` always adds up.
#[derive(Debug)]
pub(crate) struct MemUsage {
    pub anon_pages_kb: u64,
    pub shmem_kb: u64,
    pub buffers_kb: u64,
    pub active_file_kb: u64,
    pub inactive_file_kb: u64,
    pub inactive_anon_kb: u64,
    pub unevictable_kb: u64,
    pub mlocked_kb: u64,
    pub mapped_kb: u64,
    pub dirty_kb: u64,
    pub slab_reclaimable_kb: u64,
    pub slab_unreclaimable_kb: u64,
    pub kernel_stack_kb: u64,
    pub page_tables_kb: u64,
    pub vmalloc_used_kb: u64,
    pub percpu_kb: u64,
    /// Reclaimable kernel memory outside slab (ION/dma-buf pools):
    /// vmstat `nr_kernel_misc_reclaimable`.
    pub misc_reclaimable_kb: u64,
    /// Driver allocations no counter shows (KGSL, dma-buf in use, zram).
    pub driver_kb: u64,
    pub swap_used_kb: u64,
    pub swap_cached_kb: u64,
    pub committed_as_kb: u64,
}

/// Adreno GPU behind KGSL.
#[derive(Debug)]
pub(crate) struct Gpu {
    /// `gpu_model`.
    pub model: &'static str,
    /// Power levels, highest frequency first (pwrlevel 0), Hz.
    pub freqs_hz: &'static [u64],
    /// `default_pwrlevel`.
    pub default_pwrlevel: usize,
    /// Current power level (gives `gpuclk`).
    pub cur_pwrlevel: usize,
    /// `gpu_busy_percentage`.
    pub busy_percent: u32,
    /// `/sys/class/kgsl/kgsl/page_alloc`, bytes.
    pub page_alloc_bytes: u64,
    /// devfreq device name under `/sys/class/devfreq`.
    pub devfreq_name: &'static str,
    /// `devfreq/governor`.
    pub devfreq_governor: &'static str,
    /// `devfreq/available_governors`.
    pub devfreq_governors: &'static [&'static str],
}

/// zram swap device.
#[derive(Debug)]
pub(crate) struct Zram {
    pub disksize_bytes: u64,
    /// `comp_algorithm`, with the selected one in brackets.
    pub comp_algorithm: &'static str,
}

/// A block device line of `/proc/diskstats`.
#[derive(Debug)]
pub(crate) struct Disk {
    pub major: u32,
    pub minor: u32,
    pub name: &'static str,
    /// A partition (not counted again in vmstat pgpgin/pgpgout).
    pub partition: bool,
    pub reads: u64,
    pub sectors_read: u64,
    pub writes: u64,
    pub sectors_written: u64,
}

/// A device interrupt: a `/proc/irq/N` directory and a `/proc/interrupts`
/// row (`` 27:  4120  0 ...  GICv3 297 Level     ufshcd ``).
#[derive(Debug)]
pub(crate) struct Irq {
    /// Linux IRQ number.
    pub number: u32,
    /// The interrupt controller's name (`GICv3`, `GIC-0`, `pdc`).
    pub chip: &'static str,
    /// The controller's own number for it.
    pub hwirq: u32,
    /// Level-triggered (else edge).
    pub level: bool,
    /// The handler's name (usually the driver's or the device's).
    pub name: &'static str,
}

/// An MMIO region in `/proc/iomem`.
#[derive(Debug)]
pub(crate) struct Mmio {
    pub start: u64,
    pub end: u64,
    pub name: &'static str,
}

/// Kernel configuration switches that decide which nodes exist.
#[derive(Debug)]
pub(crate) struct KernelConfig {
    /// CONFIG_UCLAMP_TASK: `sched_util_clamp_*` sysctls.
    pub uclamp: bool,
    /// CONFIG_PSI: `/proc/pressure/*`.
    pub psi: bool,
    /// CONFIG_SHADOW_CALL_STACK: `ShadowCallStack` in meminfo.
    pub shadow_call_stack: bool,
    /// Kernel (major, minor): `SecPageTables` appeared in 6.3.
    pub version: (u32, u32),
}

/// VM sysctls that differ between boards (the rest are kernel defaults).
#[derive(Debug)]
pub(crate) struct VmTunables {
    pub swappiness: u32,
    pub page_cluster: u32,
}

/// A thermal zone as the device tree's `/thermal-zones` node describes
/// it; the kernel names the zone after the node (`type`).
#[derive(Debug)]
pub(crate) struct ThermalZone {
    /// The node name, which the kernel shows as the zone's `type`.
    pub name: &'static str,
    /// The simulated reading, m°C (fixed, plausible for an idle board).
    pub temp_mc: i64,
    /// Trip points, in the node's order.
    pub trips: &'static [TripPoint],
    /// `cooling-maps`: a trip point (index into `trips`) and the devices
    /// it engages.
    pub maps: &'static [CoolingMap],
}

/// One trip point of a zone.
#[derive(Debug)]
pub(crate) struct TripPoint {
    /// `passive`, `hot`, `critical`, `active`.
    pub kind: &'static str,
    /// `temperature`, m°C.
    pub temp_mc: i64,
    /// `hysteresis`, m°C.
    pub hyst_mc: i64,
}

/// One `cooling-maps` entry.
#[derive(Debug)]
pub(crate) struct CoolingMap {
    /// Index of the trip point in the zone's `trips`.
    pub trip: usize,
    /// The `cooling-device` phandles' targets.
    pub devices: &'static [Cooler],
}

/// What a `cooling-device` phandle points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cooler {
    /// A CPU node: a cooling device exists only for the first CPU of a
    /// cpufreq policy (`cpufreq-cpuN`), so the kernel binds only those.
    Cpu(u32),
    /// The GPU node: its devfreq cooling device (`devfreq-<dev>`).
    Gpu,
}

/// The SoC part of a board's device tree: a real compiled tree of the
/// SoC family, of which the generator writes what Lever reads (CPUs, their
/// OPP tables and interconnect providers, the bandwidth monitors, the
/// users of the board's carveouts).
#[derive(Debug)]
pub(crate) struct SocTree {
    /// The DTB, zstd-compressed (`include_bytes!` of a `.dtb.zst`: a
    /// sixth of the size in the binary); [`SocTree::dtb`] gives the bytes.
    pub dtb_zst: &'static [u8],
    /// Where it comes from, for the docs and errors (`sc7280-idp.dtb`).
    pub source: &'static str,
    /// CPU nodes the part does not have (fused-off cores): left out, with
    /// the `cpu-map` entries that name them.
    pub absent_cpus: &'static [&'static str],
    /// Nodes using the board's carveouts: node path and the carveout
    /// names its `memory-region` lists, in order. Their `memory-region`
    /// is rewritten to the board's regions.
    pub region_users: &'static [(&'static str, &'static [&'static str])],
    /// Labels of the SoC's source (`cpu0_opp_table`) for `__symbols__`:
    /// (label, node path); one whose node is not written is left out.
    pub labels: &'static [(&'static str, &'static str)],
}

impl SocTree {
    /// The DTB's bytes, decompressed.
    pub fn dtb(&self) -> std::io::Result<Vec<u8>> {
        zstd::stream::decode_all(self.dtb_zst)
    }
}
