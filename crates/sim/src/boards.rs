//! The boards, as data.
//!
//! Every number says where it comes from: a seed section (the performance
//! guides in `shared/seeds/`), an upstream device tree, or "plausible, not
//! measured" when it is a reasonable value nobody measured on the board.
//! To add a board, add a `static` here and list it in [`ALL`]; the
//! generator needs no change.

use crate::model::*;

/// Every board, in the order `boards()` lists them.
pub(crate) static ALL: &[&Board] = &[&QCS6490, &QCS5430_FP1, &AM437X];

// ---------------------------------------------------------------------------
// Qualcomm QCS6490 / QCS5430 (SC7280 family)
// ---------------------------------------------------------------------------

/// Silver (Cortex-A55 class) OPPs: upstream `sc7280.dtsi` `cpu0_opp_table`
/// (opp-hz / 1000), capped at the QCS6490 Silver maximum of 1.9 GHz
/// (seed 000 §1.1; 1958400 kHz; the 2016000 kHz entry is not used on QCS6490).
/// Seed 000 §5.1 pins Silver at 1516800 kHz, which is in the table.
const SILVER_KHZ: &[u32] = &[
    300000, 691200, 806400, 940800, 1152000, 1324800, 1516800, 1651200, 1804800, 1958400,
];

/// Gold (Cortex-A78 class) OPPs: upstream `sc7280.dtsi` `cpu4_opp_table`,
/// capped at the QCS6490 Gold maximum of 2.4 GHz (seed 000 §1.1).
const GOLD_KHZ: &[u32] = &[
    691200, 940800, 1228800, 1344000, 1516800, 1651200, 1900800, 2054400, 2112000, 2131200,
    2208000, 2400000,
];

/// Prime OPPs: upstream `sc7280.dtsi` `cpu7_opp_table`, capped at the
/// QCS6490 Prime maximum of 2.7 GHz (seed 000 §1.1; 2707200 kHz).
const PRIME_KHZ: &[u32] = &[
    806400, 1056000, 1324800, 1516800, 1766400, 1862400, 2035200, 2112000, 2208000, 2380800,
    2400000, 2515200, 2707200,
];

/// QCS5430 FP1 Silver: the same table capped at 1.8 GHz (seed 000 §1.1).
const SILVER_FP1_KHZ: &[u32] = &[
    300000, 691200, 806400, 940800, 1152000, 1324800, 1516800, 1651200, 1804800,
];

/// QCS5430 FP1 Gold: the same table capped at 2.1 GHz (seed 000 §1.1).
const GOLD_FP1_KHZ: &[u32] = &[
    691200, 940800, 1228800, 1344000, 1516800, 1651200, 1900800, 2054400, 2112000,
];

/// Idle states of the little cores: upstream `sc7280.dtsi` `idle-states`
/// (`cpu-sleep-0-0`: entry 549 + exit 901 us, min-residency 1774 us;
/// `cpu-sleep-0-1`: 702 + 915 us, 4001 us). cpuidle-psci names a state after
/// its DT node and uses `idle-state-name` as the description.
const LITTLE_IDLE: &[IdleState] = &[
    IdleState {
        name: "WFI",
        desc: "ARM WFI",
        latency_us: 1,
        residency_us: 1,
    },
    IdleState {
        name: "cpu-sleep-0-0",
        desc: "little-power-down",
        latency_us: 1450,
        residency_us: 1774,
    },
    IdleState {
        name: "cpu-sleep-0-1",
        desc: "little-rail-power-down",
        latency_us: 1617,
        residency_us: 4001,
    },
];

/// Idle states of the big cores: upstream `sc7280.dtsi` (`cpu-sleep-1-0`:
/// 523 + 1244 us, 2207 us; `cpu-sleep-1-1`: 526 + 1854 us, 5555 us).
const BIG_IDLE: &[IdleState] = &[
    IdleState {
        name: "WFI",
        desc: "ARM WFI",
        latency_us: 1,
        residency_us: 1,
    },
    IdleState {
        name: "cpu-sleep-1-0",
        desc: "big-power-down",
        latency_us: 1767,
        residency_us: 2207,
    },
    IdleState {
        name: "cpu-sleep-1-1",
        desc: "big-rail-power-down",
        latency_us: 2380,
        residency_us: 5555,
    },
];

/// Cortex-A55 r2p0 as Kryo Silver reports it (plausible, not measured).
const MIDR_A55: Midr = Midr {
    implementer: 0x41,
    architecture: 8,
    variant: 0x2,
    part: 0xd05,
    revision: 0,
};
/// Cortex-A78 r1p1 as Kryo Gold/Prime reports it (plausible, not measured).
const MIDR_A78: Midr = Midr {
    implementer: 0x41,
    architecture: 8,
    variant: 0x1,
    part: 0xd41,
    revision: 1,
};

/// L1 I/D: 32 KB per core (seed 000 §1.1); 4-way, 64-byte lines (A55/A78 TRMs).
const L1_32K: Cache = Cache {
    size_kb: 32,
    ways: 4,
    line_bytes: 64,
};
/// Silver L2: 128 KB per core (seed 000 §1.1); 4-way (A55 TRM).
const L2_SILVER: Cache = Cache {
    size_kb: 128,
    ways: 4,
    line_bytes: 64,
};
/// Gold/Prime L2: 256 KB per core (seed 000 §1.1); 8-way (A78 TRM).
const L2_GOLD: Cache = Cache {
    size_kb: 256,
    ways: 8,
    line_bytes: 64,
};
/// L3: 2 MB shared by all cores (seed 000 §1.1); 16-way (DSU TRM).
const L3_2M: Cache = Cache {
    size_kb: 2048,
    ways: 16,
    line_bytes: 64,
};

/// `no-map` carveouts of the QCS6490 RB3gen2: upstream
/// `qcs6490-rb3gen2.dts` `reserved-memory` from 0x81800000 up, which
/// matches seed 000 §6.5 (cdsp-secure-heap, camera, adsp, cdsp, tz-stat,
/// tags), plus the modem region `mpss@8b800000` of seed 000 §6.5 (the
/// Qualcomm Linux BSP keeps it; upstream deletes it). The small firmware
/// regions below 0x81800000 (hyp, aop, smem, ...) are left out so that
/// System RAM starts at 0x80000000 as on the BSP's /proc/iomem.
const SC7280_IOT_CARVEOUTS: &[Carveout] = &[
    Carveout {
        name: "cdsp-secure-heap@81800000",
        label: "cdsp_secure_heap_mem",
        base: 0x8180_0000,
        size: 0x1e0_0000,
    },
    Carveout {
        name: "camera@84300000",
        label: "camera_mem",
        base: 0x8430_0000,
        size: 0x50_0000,
    },
    Carveout {
        name: "wpss@84800000",
        label: "wpss_mem",
        base: 0x8480_0000,
        size: 0x190_0000,
    },
    Carveout {
        name: "adsp@86100000",
        label: "adsp_mem",
        base: 0x8610_0000,
        size: 0x280_0000,
    },
    Carveout {
        name: "cdsp@88900000",
        label: "cdsp_mem",
        base: 0x8890_0000,
        size: 0x1e0_0000,
    },
    Carveout {
        name: "video@8a700000",
        label: "video_mem",
        base: 0x8a70_0000,
        size: 0x70_0000,
    },
    Carveout {
        name: "cvp@8ae00000",
        label: "cvp_mem",
        base: 0x8ae0_0000,
        size: 0x50_0000,
    },
    Carveout {
        name: "ipa-fw@8b300000",
        label: "ipa_fw_mem",
        base: 0x8b30_0000,
        size: 0x1_0000,
    },
    Carveout {
        name: "ipa-gsi@8b310000",
        label: "ipa_gsi_mem",
        base: 0x8b31_0000,
        size: 0xa000,
    },
    Carveout {
        name: "gpu-microcode@8b31a000",
        label: "gpu_microcode_mem",
        base: 0x8b31_a000,
        size: 0x2000,
    },
    Carveout {
        name: "mpss@8b800000",
        label: "mpss_mem",
        base: 0x8b80_0000,
        size: 0xf60_0000,
    },
    Carveout {
        name: "tz-stat@c0000000",
        label: "tz_stat_mem",
        base: 0xc000_0000,
        size: 0x10_0000,
    },
    Carveout {
        name: "tags@c0100000",
        label: "tags_mem",
        base: 0xc010_0000,
        size: 0x120_0000,
    },
    Carveout {
        name: "qtee@c1300000",
        label: "qtee_mem",
        base: 0xc130_0000,
        size: 0x50_0000,
    },
    Carveout {
        name: "trusted-apps@c1800000",
        label: "trusted_apps_mem",
        base: 0xc180_0000,
        size: 0x1c0_0000,
    },
    Carveout {
        name: "debug-vm@d0600000",
        label: "debug_vm_mem",
        base: 0xd060_0000,
        size: 0x10_0000,
    },
];

/// Labels of upstream `sc7280.dtsi` (and the RB3gen2's carveouts) for
/// the SoC nodes the simulated tree carries; the Debian DTB was compiled
/// without `dtc -@`, so its own tree has no `__symbols__`.
const SC7280_LABELS: &[(&str, &str)] = &[
    ("CPU0", "/cpus/cpu@0"),
    ("CPU1", "/cpus/cpu@100"),
    ("CPU2", "/cpus/cpu@200"),
    ("CPU3", "/cpus/cpu@300"),
    ("CPU4", "/cpus/cpu@400"),
    ("CPU5", "/cpus/cpu@500"),
    ("CPU6", "/cpus/cpu@600"),
    ("CPU7", "/cpus/cpu@700"),
    ("cpu0_opp_table", "/opp-table-cpu0"),
    ("cpu4_opp_table", "/opp-table-cpu4"),
    ("cpu7_opp_table", "/opp-table-cpu7"),
    ("mc_virt", "/soc@0/interconnect@1580000"),
    ("gem_noc", "/soc@0/interconnect@9100000"),
    ("epss_l3", "/soc@0/interconnect@18590000"),
    ("remoteproc_mpss", "/soc@0/remoteproc@4080000"),
    ("remoteproc_wpss", "/soc@0/remoteproc@8a00000"),
    ("venus", "/soc@0/video-codec@aa00000"),
];

/// The users of the RB3gen2 carveouts in `sc7280-idp.dtb`: the modem
/// (its `mba` region of the IDP tree is not among the board's carveouts,
/// so only `mpss` is listed), the WPSS and the video codec.
const SC7280_REGION_USERS: &[(&str, &[&str])] = &[
    ("/soc@0/remoteproc@4080000", &["mpss@8b800000"]),
    ("/soc@0/remoteproc@8a00000", &["wpss@84800000"]),
    ("/soc@0/video-codec@aa00000", &["video@8a700000"]),
];

/// The SC7280 SoC tree: Debian's `sc7280-idp.dtb` (crates/sim/data/NOTICE.md).
const SC7280_TREE: SocTree = SocTree {
    dtb_zst: include_bytes!("../data/sc7280-idp.dtb.zst"),
    source: "sc7280-idp.dtb (Debian linux-image-6.1.0-47-arm64, 6.1.170-3)",
    absent_cpus: &[],
    region_users: SC7280_REGION_USERS,
    labels: SC7280_LABELS,
};

/// QCS5430 FP1: the same tree without the fused-off Gold core (cpu@600)
/// and the Prime core (cpu@700); a bootloader passes no node for a core
/// the part lacks (plausible, not measured).
const SC7280_FP1_TREE: SocTree = SocTree {
    absent_cpus: &["/cpus/cpu@600", "/cpus/cpu@700"],
    ..SC7280_TREE
};

/// Device MMIO regions (addresses from upstream `sc7280.dtsi`).
const SC7280_MMIO: &[Mmio] = &[
    Mmio {
        start: 0x0078_4000,
        end: 0x0078_4a1f,
        name: "784000.efuse",
    },
    Mmio {
        start: 0x01d8_4000,
        end: 0x01d8_6fff,
        name: "1d84000.ufshc",
    },
    Mmio {
        start: 0x03d0_0000,
        end: 0x03d3_ffff,
        name: "kgsl_3d0_reg_memory",
    },
    Mmio {
        start: 0x0a60_0000,
        end: 0x0a6f_ffff,
        name: "a600000.usb",
    },
];

/// Device interrupts of an SC7280 board, named as their drivers request
/// them, for the devices of [`SC7280_MMIO`] and a few more; GIC SPI
/// numbers (hwirq = 32 + SPI) after upstream `sc7280.dtsi`, Linux numbers
/// plausible, not measured.
const SC7280_IRQS: &[Irq] = &[
    Irq {
        number: 9,
        chip: "GICv3",
        hwirq: 40,
        level: true,
        name: "arch_mem_timer",
    },
    Irq {
        number: 27,
        chip: "GICv3",
        hwirq: 297,
        level: true,
        name: "ufshcd",
    },
    Irq {
        number: 45,
        chip: "GICv3",
        hwirq: 165,
        level: true,
        name: "dwc3",
    },
    Irq {
        number: 56,
        chip: "GICv3",
        hwirq: 332,
        level: true,
        name: "kgsl_3d0_irq",
    },
    Irq {
        number: 120,
        chip: "GICv3",
        hwirq: 633,
        level: true,
        name: "qcom_geni_serial",
    },
    Irq {
        number: 200,
        chip: "pdc",
        hwirq: 101,
        level: true,
        name: "spmi-pmic-arb",
    },
];

/// The unbound workqueues with a sysfs directory on Qualcomm Linux 6.6.
const QCOM_WORKQUEUES: &[&str] = &["blkcg_punt_bio", "writeback"];

/// hwcaps common to Cortex-A55 and A78 (ARMv8.2 + dotprod + RCpc);
/// plausible, not measured.
const SC7280_FEATURES: &str =
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp";

/// schedutil, as Qualcomm Linux ships it: `rate_limit_us` 1000 is the
/// "Qualcomm-tuned value" of seed 000 §6.2.
const QCOM_CPUFREQ: Cpufreq = Cpufreq {
    driver: "qcom-cpufreq-hw",
    // qcom-cpufreq-hw leaves the transition latency unset (plausible).
    transition_latency_ns: 0,
    governors: &[
        "ondemand",
        "userspace",
        "powersave",
        "performance",
        "schedutil",
    ],
    governor: "schedutil",
    governor_per_policy: true,
    tunables: &[("rate_limit_us", "1000")],
};

/// Adreno GPU levels: upstream `sc7280.dtsi` `gpu_opp_table` (315, 450,
/// 550, 608, 700, 812 MHz), capped at the 812 MHz QCS6490 maximum (seed 000
/// §1.1); KGSL numbers power levels from the fastest (level 0).
const ADRENO_643_HZ: &[u64] = &[
    812_000_000,
    700_000_000,
    608_000_000,
    550_000_000,
    450_000_000,
    315_000_000,
];
/// Adreno 642L on QCS5430 FP1 runs at most 315 MHz (seed 000 §1.1), the
/// lowest SC7280 GPU OPP, so only one level remains.
const ADRENO_642L_HZ: &[u64] = &[315_000_000];

const KGSL_DEVFREQ_GOVERNORS: &[&str] = &[
    "msm-adreno-tz",
    "userspace",
    "powersave",
    "performance",
    "simple_ondemand",
];

/// zram: 1 GB (seed 000 §5.3, `zramctl -s 1048576KB`); algorithm
/// plausible (kernel default lzo-rle).
const QCOM_ZRAM: Zram = Zram {
    disksize_bytes: 1_073_741_824,
    comp_algorithm: "lzo [lzo-rle] lz4 lz4hc zstd",
};

/// RB3gen2-style storage: UFS as sda, an SD card, zram (counters plausible).
const QCOM_DISKS: &[Disk] = &[
    Disk {
        major: 8,
        minor: 0,
        name: "sda",
        partition: false,
        reads: 18234,
        sectors_read: 1_482_352,
        writes: 6120,
        sectors_written: 402_816,
    },
    Disk {
        major: 8,
        minor: 1,
        name: "sda1",
        partition: true,
        reads: 210,
        sectors_read: 8_736,
        writes: 0,
        sectors_written: 0,
    },
    Disk {
        major: 8,
        minor: 2,
        name: "sda2",
        partition: true,
        reads: 17_911,
        sectors_read: 1_471_200,
        writes: 6_120,
        sectors_written: 402_816,
    },
    Disk {
        major: 179,
        minor: 0,
        name: "mmcblk0",
        partition: false,
        reads: 96,
        sectors_read: 4_608,
        writes: 0,
        sectors_written: 0,
    },
    Disk {
        major: 254,
        minor: 0,
        name: "zram0",
        partition: false,
        reads: 1_150,
        sectors_read: 9_200,
        writes: 4_500,
        sectors_written: 36_000,
    },
];

/// A Kryo Silver (Cortex-A55 class) cluster starting at CPU 0.
/// `capacity-dmips-mhz` 1024 is from upstream `sc7280.dtsi`.
const fn kryo_silver(cpus: u32, freqs_khz: &'static [u32], cur_khz: u32) -> Cluster {
    Cluster {
        first_cpu: 0,
        cpus,
        // DynamIQ: every core sits in DT cpu-map cluster0.
        topology_cluster: 0,
        freqs_khz,
        cur_khz,
        capacity_dmips_mhz: 1024,
        midr: MIDR_A55,
        l1i: L1_32K,
        l1d: L1_32K,
        l2: Some(L2_SILVER),
        idle_states: LITTLE_IDLE,
    }
}

/// A Kryo Gold or Prime (Cortex-A78 class) cluster. `capacity-dmips-mhz`
/// from upstream `sc7280.dtsi`: Gold 1946, Prime 1985.
const fn kryo_big(
    first_cpu: u32,
    cpus: u32,
    freqs_khz: &'static [u32],
    cur_khz: u32,
    capacity_dmips_mhz: u64,
) -> Cluster {
    Cluster {
        first_cpu,
        cpus,
        topology_cluster: 0,
        freqs_khz,
        cur_khz,
        capacity_dmips_mhz,
        midr: MIDR_A78,
        l1i: L1_32K,
        l1d: L1_32K,
        l2: Some(L2_GOLD),
        idle_states: BIG_IDLE,
    }
}

/// SC7280-family memory: the RB3gen2 carveouts, a 6.6 arm64 kernel image
/// and CMA pool, with board-specific banks, boot reservation and usage.
const fn sc7280_memory(
    banks: &'static [(u64, u64)],
    kernel_reserved_kb: u64,
    cma_free_kb: u64,
    usage: MemUsage,
) -> Memory {
    Memory {
        banks,
        reg_cells: 2,
        carveouts: SC7280_IOT_CARVEOUTS,
        kernel_reserved_kb,
        // seed 000 §3.5 dmesg: 28800K kernel code; rwdata 2090K + bss 969K.
        kernel_code_bytes: 28_800 * 1024,
        kernel_data_bytes: (2_090 + 969) * 1024,
        kernel_text_offset: 0x1_0000,
        // seed 000 §3.5 dmesg: 393216K cma-reserved
        cma_total_kb: 393_216,
        cma_free_kb,
        lowmem_kb: None,
        // arm64, 39-bit VA
        vmalloc_total_kb: 262_930_368,
        usage,
        zones: &["dma", "dma32", "normal", "movable"],
    }
}

/// An Adreno GPU behind KGSL with the msm-adreno-tz devfreq governor.
const fn kgsl(
    model: &'static str,
    freqs_hz: &'static [u64],
    default_pwrlevel: usize,
    cur_pwrlevel: usize,
    page_alloc_bytes: u64,
) -> Gpu {
    Gpu {
        model,
        freqs_hz,
        default_pwrlevel,
        cur_pwrlevel,
        busy_percent: 0,
        page_alloc_bytes,
        devfreq_name: "3d00000.qcom,kgsl-3d0",
        devfreq_governor: "msm-adreno-tz",
        devfreq_governors: KGSL_DEVFREQ_GOVERNORS,
    }
}

/// Qualcomm Linux 1.x kernel string: plausible, not measured.
/// `/proc/cmdline` of the Qualcomm boards: what their bootloader passes
/// (serial console, the rootfs partition, SELinux permissive).
const QCOM_CMDLINE: &str = "console=ttyMSM0,115200n8 earlycon root=PARTLABEL=system rootwait ro \
pcie_pme=nomsi kpti=off swiotlb=128 selinux=1 enforcing=0";

const QCOM_PROC_VERSION: &str = "Linux version 6.6.52-qli-1.3-ver.1.1 (oe-user@oe-host) \
    (aarch64-qcom-linux-gcc (GCC) 13.3.0, GNU ld (GNU Binutils) 2.42.0.20240723) \
    #1 SMP PREEMPT Tue Jan 14 10:00:00 UTC 2025";

/// arm64 cpuinfo: the 19.2 MHz arch timer gives BogoMIPS 38.40.
const SC7280_ARCH: Arch = Arch::Arm64 {
    bogomips: "38.40",
    features: SC7280_FEATURES,
};

/// Qualcomm Linux 6.6 kernel configuration (uclamp, PSI, SCS on).
const QCOM_CONFIG: KernelConfig = KernelConfig {
    uclamp: true,
    psi: true,
    shadow_call_stack: true,
    version: (6, 6),
};

/// swappiness 100 (seed 000 §5.3) and page-cluster 0 for zram swap.
const QCOM_VM: VmTunables = VmTunables {
    swappiness: 100,
    page_cluster: 0,
};

// ---------------------------------------------------------------------------
// SC7280 (QCS6490 / QCS5430) thermal zones
// ---------------------------------------------------------------------------

/// Trip points of the CPU zones: passive at 90 and 95 °C (2 °C
/// hysteresis), critical at 110 °C.
const SC7280_CPU_TRIPS: &[TripPoint] = &[
    TripPoint {
        kind: "passive",
        temp_mc: 90_000,
        hyst_mc: 2_000,
    },
    TripPoint {
        kind: "passive",
        temp_mc: 95_000,
        hyst_mc: 2_000,
    },
    TripPoint {
        kind: "critical",
        temp_mc: 110_000,
        hyst_mc: 0,
    },
];
/// Zones that only warn: hot at 90 °C, critical at 110 °C.
const SC7280_HOT_TRIPS: &[TripPoint] = &[
    TripPoint {
        kind: "hot",
        temp_mc: 90_000,
        hyst_mc: 2_000,
    },
    TripPoint {
        kind: "critical",
        temp_mc: 110_000,
        hyst_mc: 0,
    },
];
const SC7280_GPU_TRIPS: &[TripPoint] = &[
    TripPoint {
        kind: "passive",
        temp_mc: 95_000,
        hyst_mc: 2_000,
    },
    TripPoint {
        kind: "critical",
        temp_mc: 110_000,
        hyst_mc: 0,
    },
];
const SC7280_PMIC_TRIPS: &[TripPoint] = &[
    TripPoint {
        kind: "passive",
        temp_mc: 95_000,
        hyst_mc: 0,
    },
    TripPoint {
        kind: "critical",
        temp_mc: 115_000,
        hyst_mc: 0,
    },
];
const SILVER_CPUS: &[Cooler] = &[
    Cooler::Cpu(0),
    Cooler::Cpu(1),
    Cooler::Cpu(2),
    Cooler::Cpu(3),
];
const BIG_CPUS: &[Cooler] = &[
    Cooler::Cpu(4),
    Cooler::Cpu(5),
    Cooler::Cpu(6),
    Cooler::Cpu(7),
];
const SILVER_MAPS: &[CoolingMap] = &[
    CoolingMap {
        trip: 0,
        devices: SILVER_CPUS,
    },
    CoolingMap {
        trip: 1,
        devices: SILVER_CPUS,
    },
];
const BIG_MAPS: &[CoolingMap] = &[
    CoolingMap {
        trip: 0,
        devices: BIG_CPUS,
    },
    CoolingMap {
        trip: 1,
        devices: BIG_CPUS,
    },
];
const GPU_MAPS: &[CoolingMap] = &[CoolingMap {
    trip: 0,
    devices: &[Cooler::Gpu],
}];

const fn cpu_zone(name: &'static str, temp_mc: i64, maps: &'static [CoolingMap]) -> ThermalZone {
    ThermalZone {
        name,
        temp_mc,
        trips: SC7280_CPU_TRIPS,
        maps,
    }
}
const fn hot_zone(name: &'static str, temp_mc: i64) -> ThermalZone {
    ThermalZone {
        name,
        temp_mc,
        trips: SC7280_HOT_TRIPS,
        maps: &[],
    }
}

/// sc7280.dtsi's `/thermal-zones` (names, trips and cooling maps as in
/// the upstream sc7280-idp DTB), in its node order: twelve tsens CPU
/// sensors (four on the silver cluster, eight on gold and prime), the
/// subsystem sensors, and the three PMICs' temperature alarms. The
/// temperatures are simulated: an idle board after an hour at room
/// temperature (plausible, not measured).
const SC7280_THERMAL: &[ThermalZone] = &[
    cpu_zone("cpu0-thermal", 41_200, SILVER_MAPS),
    cpu_zone("cpu1-thermal", 41_600, SILVER_MAPS),
    cpu_zone("cpu2-thermal", 40_900, SILVER_MAPS),
    cpu_zone("cpu3-thermal", 41_300, SILVER_MAPS),
    cpu_zone("cpu4-thermal", 43_100, BIG_MAPS),
    cpu_zone("cpu5-thermal", 43_800, BIG_MAPS),
    cpu_zone("cpu6-thermal", 42_700, BIG_MAPS),
    cpu_zone("cpu7-thermal", 43_400, BIG_MAPS),
    cpu_zone("cpu8-thermal", 44_000, BIG_MAPS),
    cpu_zone("cpu9-thermal", 43_600, BIG_MAPS),
    cpu_zone("cpu10-thermal", 44_500, BIG_MAPS),
    cpu_zone("cpu11-thermal", 43_900, BIG_MAPS),
    hot_zone("aoss0-thermal", 39_800),
    hot_zone("aoss1-thermal", 39_600),
    hot_zone("cpuss0-thermal", 42_200),
    hot_zone("cpuss1-thermal", 42_500),
    ThermalZone {
        name: "gpuss0-thermal",
        temp_mc: 39_900,
        trips: SC7280_GPU_TRIPS,
        maps: GPU_MAPS,
    },
    ThermalZone {
        name: "gpuss1-thermal",
        temp_mc: 40_100,
        trips: SC7280_GPU_TRIPS,
        maps: GPU_MAPS,
    },
    hot_zone("nspss0-thermal", 39_100),
    hot_zone("nspss1-thermal", 39_300),
    hot_zone("video-thermal", 38_800),
    hot_zone("ddr-thermal", 40_400),
    hot_zone("mdmss0-thermal", 38_200),
    hot_zone("mdmss1-thermal", 38_500),
    hot_zone("mdmss2-thermal", 38_100),
    hot_zone("mdmss3-thermal", 38_300),
    hot_zone("camera0-thermal", 37_900),
    ThermalZone {
        name: "pm7325-thermal",
        temp_mc: 37_000,
        trips: SC7280_PMIC_TRIPS,
        maps: &[],
    },
    ThermalZone {
        name: "pm8350c-thermal",
        temp_mc: 37_000,
        trips: SC7280_PMIC_TRIPS,
        maps: &[],
    },
    ThermalZone {
        name: "pmr735a-thermal",
        temp_mc: 37_000,
        trips: SC7280_PMIC_TRIPS,
        maps: &[],
    },
];

/// Qualcomm QCS6490 on an RB3gen2 kit.
pub(crate) static QCS6490: Board = Board {
    name: "qcs6490",
    description: "Qualcomm QCS6490 (RB3gen2): 4x Kryo Silver 1.96 GHz + 3x Gold 2.4 GHz + 1x Prime 2.71 GHz, \
                  L3 2 MB, Adreno 643 (812 MHz), 6 GB LPDDR5, zram, kernel 6.6 arm64",
    // upstream qcs6490-rb3gen2.dts
    dt_model: "Qualcomm Technologies, Inc. Robotics RB3gen2",
    dt_compatible: &["qcom,qcs6490-rb3gen2", "qcom,qcm6490"],
    proc_version: QCOM_PROC_VERSION,
    cmdline: QCOM_CMDLINE,
    arch: SC7280_ARCH,
    // CONFIG_NR_CPUS=32 (plausible)
    kernel_max: 31,
    clusters: &[
        kryo_silver(4, SILVER_KHZ, 691_200),
        kryo_big(4, 3, GOLD_KHZ, 940_800, 1946),
        kryo_big(7, 1, PRIME_KHZ, 1_056_000, 1985),
    ],
    l3: Some(L3_2M),
    cpufreq: QCOM_CPUFREQ,
    memory: sc7280_memory(
        // 6 GB (seed 000 §1.1 board class), split at the 4 GB boundary as
        // the bootloader reports it (plausible).
        &[(0x8000_0000, 0x8000_0000), (0x1_0000_0000, 0x1_0000_0000)],
        // vmlinux + struct pages (16 MB per GB, seed 000 §3.5) + early
        // allocations: plausible, not measured.
        204_800,
        // CmaFree: plausible
        371_200,
        // Snapshot after boot with a Weston session: plausible, not measured.
        MemUsage {
            anon_pages_kb: 412_000,
            shmem_kb: 48_000,
            buffers_kb: 12_000,
            active_file_kb: 512_000,
            inactive_file_kb: 398_000,
            inactive_anon_kb: 205_000,
            unevictable_kb: 12_000,
            mlocked_kb: 0,
            mapped_kb: 230_000,
            dirty_kb: 240,
            slab_reclaimable_kb: 98_000,
            slab_unreclaimable_kb: 152_000,
            kernel_stack_kb: 14_000,
            page_tables_kb: 9_800,
            vmalloc_used_kb: 48_000,
            percpu_kb: 4_800,
            misc_reclaimable_kb: 36_000,
            driver_kb: 210_000,
            swap_used_kb: 18_000,
            swap_cached_kb: 600,
            committed_as_kb: 2_350_000,
        }
    ),
    // seed 000 §1.1 (Adreno 643); model string as KGSL prints it
    gpu: Some(kgsl("Adreno643v1", ADRENO_643_HZ, 3, 5, 25_165_824)),
    zram: Some(QCOM_ZRAM),
    disks: QCOM_DISKS,
    mmio: SC7280_MMIO,
    irqs: SC7280_IRQS,
    workqueues: QCOM_WORKQUEUES,
    device_tree: Some(SC7280_TREE),
    thermal_zones: SC7280_THERMAL,
    config: QCOM_CONFIG,
    vm: QCOM_VM,
    uptime_s: 3600,
};

/// Qualcomm QCS5430 feature pack 1: the QCS6490 silicon with the Prime core
/// and one Gold core fused off, lower clocks, Adreno 642L at 315 MHz.
pub(crate) static QCS5430_FP1: Board = Board {
    name: "qcs5430-fp1",
    description:
        "Qualcomm QCS5430 FP1: 4x Kryo Silver 1.8 GHz + 2x Gold 2.1 GHz (no Prime, no policy7), \
                  L3 2 MB, Adreno 642L (315 MHz), 4 GB LPDDR5, zram, kernel 6.6 arm64",
    // plausible: the RB3gen2 DT with a QCS5430 compatible
    dt_model: "Qualcomm Technologies, Inc. QCS5430 RB3gen2 (FP1)",
    dt_compatible: &["qcom,qcs5430-rb3gen2", "qcom,qcs5430", "qcom,qcm6490"],
    proc_version: QCOM_PROC_VERSION,
    cmdline: QCOM_CMDLINE,
    arch: SC7280_ARCH,
    kernel_max: 31,
    clusters: &[
        kryo_silver(4, SILVER_FP1_KHZ, 691_200),
        kryo_big(4, 2, GOLD_FP1_KHZ, 940_800, 1946),
    ],
    l3: Some(L3_2M),
    cpufreq: QCOM_CPUFREQ,
    memory: sc7280_memory(
        // 4 GB: plausible for an FP1 kit (the seed gives no RAM size).
        &[(0x8000_0000, 0x8000_0000), (0x1_0000_0000, 0x8000_0000)],
        // boot reservation scaled to 4 GB: plausible, not measured
        172_032,
        // CmaFree: plausible
        380_416,
        // Snapshot after boot with a Weston session: plausible, not measured.
        MemUsage {
            anon_pages_kb: 380_000,
            shmem_kb: 42_000,
            buffers_kb: 10_000,
            active_file_kb: 420_000,
            inactive_file_kb: 300_000,
            inactive_anon_kb: 190_000,
            unevictable_kb: 12_000,
            mlocked_kb: 0,
            mapped_kb: 200_000,
            dirty_kb: 180,
            slab_reclaimable_kb: 80_000,
            slab_unreclaimable_kb: 130_000,
            kernel_stack_kb: 11_000,
            page_tables_kb: 8_500,
            vmalloc_used_kb: 42_000,
            percpu_kb: 3_600,
            misc_reclaimable_kb: 24_000,
            driver_kb: 120_000,
            swap_used_kb: 0,
            swap_cached_kb: 0,
            committed_as_kb: 2_000_000,
        },
    ),
    // seed 000 §1.1 (Adreno 642L, 315 MHz); model string plausible
    gpu: Some(kgsl("Adreno642Lv1", ADRENO_642L_HZ, 0, 0, 16_777_216)),
    zram: Some(QCOM_ZRAM),
    disks: QCOM_DISKS,
    mmio: SC7280_MMIO,
    irqs: SC7280_IRQS,
    workqueues: QCOM_WORKQUEUES,
    device_tree: Some(SC7280_FP1_TREE),
    thermal_zones: SC7280_THERMAL,
    config: QCOM_CONFIG,
    vm: QCOM_VM,
    uptime_s: 3600,
};

// ---------------------------------------------------------------------------
// TI AM437x GP EVM (seed 002)
// ---------------------------------------------------------------------------

/// TI AM437x GP EVM: one Cortex-A9 at 1 GHz, 1 GB DDR3 (seed 002 "Read
/// This First": "ARM running at 1000MHz, DDR3-400"). An older 32-bit
/// kernel configuration without uclamp, PSI or zram.
pub(crate) static AM437X: Board = Board {
    name: "am437x",
    description: "TI AM437x GP EVM: 1x Cortex-A9 1 GHz (cpufreq-dt, ondemand), L2 256 KB, no L3, no GPU/KGSL, \
                  1 GB DDR3, no uclamp/PSI/zram, kernel 6.1 arm32",
    // upstream am437x-gp-evm.dts
    dt_model: "TI AM437x GP EVM",
    dt_compatible: &["ti,am437x-gp-evm", "ti,am4372", "ti,am43"],
    // plausible TI Processor SDK kernel string, not measured
    proc_version: "Linux version 6.1.83-ti (oe-user@oe-host) (arm-oe-linux-gnueabi-gcc (GCC) 11.4.0, \
                   GNU ld (GNU Binutils) 2.38.20220708) #1 SMP PREEMPT Fri Mar 29 10:00:00 UTC 2024",
    // plausible TI SDK boot arguments, not measured
    cmdline: "console=ttyS0,115200n8 root=PARTUUID=0a1b2c3d-02 rw rootfstype=ext4 rootwait",
    arch: Arch::Arm32 {
        // plausible, not measured
        bogomips: "996.14",
        features: "half thumb fastmult vfp edsp thumbee neon vfpv3 tls vfpd32 ",
        // the machine name of arch/arm/mach-omap2 for AM43xx
        hardware: "Generic AM43 (Flattened Device Tree)",
    },
    // CONFIG_NR_CPUS=2 (plausible)
    kernel_max: 1,
    clusters: &[Cluster {
        // Cortex-A9
        first_cpu: 0,
        cpus: 1,
        topology_cluster: 0,
        // am4372.dtsi / AM437x data sheet OPPs (seed 002: 1000 MHz)
        freqs_khz: &[300000, 600000, 720000, 800000, 1000000],
        cur_khz: 600000,
        capacity_dmips_mhz: 1024,
        // Cortex-A9 r4p1 (plausible)
        midr: Midr { implementer: 0x41, architecture: 7, variant: 0x4, part: 0xc09, revision: 1 },
        // 32 KB 4-way, 32-byte lines (Cortex-A9 TRM)
        l1i: Cache { size_kb: 32, ways: 4, line_bytes: 32 },
        l1d: Cache { size_kb: 32, ways: 4, line_bytes: 32 },
        // PL310 256 KB (AM437x TRM), 16-way: plausible
        l2: Some(Cache { size_kb: 256, ways: 16, line_bytes: 32 }),
        // WFI + the MPU power gate of am4372.dtsi (`mpu_gate`: entry 40 +
        // exit 100 us, min-residency 300 us)
        idle_states: &[
            IdleState { name: "WFI", desc: "ARM WFI", latency_us: 1, residency_us: 1 },
            IdleState { name: "mpu_gate", desc: "mpu_gate", latency_us: 140, residency_us: 300 },
        ],
    }],
    l3: None,
    cpufreq: Cpufreq {
        driver: "cpufreq-dt",
        // am4372.dtsi clock-latency = <300000>
        transition_latency_ns: 300_000,
        governors: &["conservative", "userspace", "powersave", "ondemand", "performance", "schedutil"],
        governor: "ondemand",
        // cpufreq-dt on one policy: tunables are global (cpufreq/ondemand/)
        governor_per_policy: false,
        // ondemand defaults; sampling_rate = min(300 us * 1000, 10 ms)
        tunables: &[
            ("ignore_nice_load", "0"),
            ("io_is_busy", "0"),
            ("powersave_bias", "0"),
            ("sampling_down_factor", "1"),
            ("sampling_rate", "10000"),
            ("up_threshold", "95"),
        ],
    },
    memory: Memory {
        // 1 GB DDR3 at 0x80000000 (seed 002; am437x-gp-evm.dts)
        banks: &[(0x8000_0000, 0x4000_0000)],
        reg_cells: 1,
        carveouts: &[],
        // vmlinux + struct pages (32 bytes per 4K page) + early: plausible
        kernel_reserved_kb: 43_180,
        kernel_code_bytes: 0x90_0000,
        kernel_data_bytes: 0x15_a000,
        // arm32 TEXT_OFFSET
        kernel_text_offset: 0x8000,
        cma_total_kb: 24_576,
        cma_free_kb: 20_480,
        // 3G/1G split with the default 240 MB vmalloc: 760 MB lowmem
        lowmem_kb: Some(778_240),
        vmalloc_total_kb: 245_760,
        usage: MemUsage {
            anon_pages_kb: 38_000,
            shmem_kb: 9_000,
            buffers_kb: 4_200,
            active_file_kb: 52_000,
            inactive_file_kb: 61_000,
            inactive_anon_kb: 21_000,
            unevictable_kb: 0,
            mlocked_kb: 0,
            mapped_kb: 30_000,
            dirty_kb: 40,
            slab_reclaimable_kb: 9_800,
            slab_unreclaimable_kb: 21_000,
            kernel_stack_kb: 1_100,
            page_tables_kb: 1_600,
            vmalloc_used_kb: 6_200,
            percpu_kb: 300,
            misc_reclaimable_kb: 0,
            driver_kb: 8_000,
            swap_used_kb: 0,
            swap_cached_kb: 0,
            committed_as_kb: 160_000,
        },
        zones: &["normal", "high", "movable"],
    },
    gpu: None,
    zram: None,
    // SD card boot (counters plausible)
    disks: &[
        Disk { major: 179, minor: 0, name: "mmcblk0", partition: false, reads: 4_210, sectors_read: 301_456, writes: 388, sectors_written: 9_464 },
        Disk { major: 179, minor: 1, name: "mmcblk0p1", partition: true, reads: 120, sectors_read: 4_864, writes: 0, sectors_written: 0 },
        Disk { major: 179, minor: 2, name: "mmcblk0p2", partition: true, reads: 4_050, sectors_read: 295_800, writes: 388, sectors_written: 9_464 },
    ],
    // addresses from upstream am4372.dtsi
    mmio: &[
        Mmio { start: 0x44e0_9000, end: 0x44e0_901f, name: "44e09000.serial" },
        Mmio { start: 0x4806_0000, end: 0x4806_03ff, name: "48060000.mmc" },
        Mmio { start: 0x4a10_0000, end: 0x4a10_07ff, name: "4a100000.switch" },
    ],
    // GIC SPIs after upstream am4372.dtsi; Linux numbers plausible
    irqs: &[
        Irq { number: 18, chip: "GIC-0", hwirq: 100, level: true, name: "gp_timer" },
        Irq { number: 30, chip: "GIC-0", hwirq: 104, level: true, name: "44e09000.serial" },
        Irq { number: 33, chip: "GIC-0", hwirq: 96, level: true, name: "mmc0" },
        Irq { number: 41, chip: "GIC-0", hwirq: 73, level: true, name: "4a100000.switch" },
    ],
    workqueues: &["writeback"],
    // upstream am4372.dtsi has no /thermal-zones node (no sensor driver
    // for the AM43xx bandgap): no zones, as on that kernel
    // No DTB of the AM437x family is at hand (the shared folder's TI trees
    // are the arm64 K3 parts): the tree has the root, /memory only.
    device_tree: None,
    thermal_zones: &[],
    config: KernelConfig { uclamp: false, psi: false, shadow_call_stack: false, version: (6, 1) },
    vm: VmTunables { swappiness: 60, page_cluster: 3 },
    uptime_s: 1800,
};
