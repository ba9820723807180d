//! The memory map of seed 000 §8.3 and the kernel-dynamic breakdown of §3.5.
//!
//! Formulas (all in kB, 1 kB = 1024 bytes, as the seed and the kernel use):
//!
//! - total RAM: a size given by the user (`--total-ram`) when there is one
//!   (the user knows the board; the other sources can be short: the dmesg
//!   total leaves out firmware carve-outs), else device tree memory nodes,
//!   else the dmesg `Memory:` line's second figure;
//! - Linux RAM = Σ over `/proc/iomem` "System RAM" ranges of `end − start + 1`;
//! - non-Linux = Σ the device tree's enabled `no-map` `/reserved-memory`
//!   regions when the live tree has that node (firmware's own declaration
//!   of the carveouts), else total RAM − Linux RAM; the second figure is
//!   always computed too, and the map carries both;
//! - kernel static = Linux RAM − MemTotal;
//! - free = MemFree + (Cached − Shmem) + Buffers + ION cache, where
//!   ION cache = `nr_kernel_misc_reclaimable` pages × page size;
//! - apps + framework = MemTotal − free.
//!
//! Collection ([`MemSample::read`], [`StaticMemory::read`]) is separate from
//! the model ([`MemoryMap::new`]), which does no I/O.

use crate::avail::Avail;
use crate::devicetree::DtMemory;
use crate::dmesg::DmesgMemory;
use crate::error::MeasureError;
use crate::iomem::{Iomem, SystemRam};
use crate::meminfo::{self, Meminfo};
use crate::vmstat::Vmstat;
use lever_kernel::{KernelError, KernelFs};
use serde::Serialize;

/// Where the total RAM figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TotalRamSource {
    /// `/proc/device-tree/memory@*/reg`.
    DeviceTree,
    /// The dmesg `Memory: …K/…K available` line (pages the kernel manages;
    /// firmware carve-outs removed before boot are not in it).
    Dmesg,
    /// Given by the user (`--total-ram`); it wins over the other sources.
    User,
}

impl TotalRamSource {
    /// A short human description.
    pub fn describe(self) -> &'static str {
        match self {
            TotalRamSource::DeviceTree => "device tree memory nodes",
            TotalRamSource::Dmesg => "dmesg `Memory:` line",
            TotalRamSource::User => "--total-ram",
        }
    }
}

/// Total RAM and its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TotalRam {
    /// Size, kB.
    pub kb: u64,
    /// Where it came from.
    pub source: TotalRamSource,
}

/// How the page size was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageSizeSource {
    /// From meminfo kB figures ÷ the matching vmstat page counts.
    Derived,
    /// Given by the caller.
    Given,
    /// Could not be derived; 4 kB assumed.
    Assumed,
}

/// The kernel's page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageSize {
    /// Page size, kB.
    pub kb: u64,
    /// How it was found.
    pub source: PageSizeSource,
}

impl PageSize {
    /// Derive the page size from counters the kernel prints both in kB
    /// (meminfo) and in pages (vmstat). Pairs that agree on a power of two
    /// vote; `Assumed` 4 kB when none does.
    pub fn derive(meminfo: &Meminfo, vmstat: &Vmstat) -> PageSize {
        const PAIRS: [(&str, &str); 5] = [
            ("Shmem", "nr_shmem"),
            ("AnonPages", "nr_anon_pages"),
            ("Mapped", "nr_mapped"),
            ("MemFree", "nr_free_pages"),
            ("Inactive(file)", "nr_inactive_file"),
        ];
        let mut votes: Vec<u64> = Vec::new();
        for (kb_name, pages_name) in PAIRS {
            let (Some(kb), Some(pages)) = (meminfo.get(kb_name), vmstat.get(pages_name)) else {
                continue;
            };
            if pages > 0 && kb % pages == 0 && (kb / pages).is_power_of_two() {
                votes.push(kb / pages);
            }
        }
        votes.sort_unstable();
        let best = votes
            .chunk_by(|a, b| a == b)
            .max_by_key(|run| run.len())
            .map(|run| run[0]);
        match best {
            Some(kb) => PageSize {
                kb,
                source: PageSizeSource::Derived,
            },
            None => PageSize {
                kb: 4,
                source: PageSizeSource::Assumed,
            },
        }
    }
}

/// Kernel-dynamic figures that are not in `/proc/meminfo`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DynamicExtras {
    /// Σ of `/proc/modules` sizes, kB.
    pub modules_kb: Avail<u64>,
    /// ZRAM `mm_stat` summed over devices.
    pub zram: Avail<ZramUsage>,
    /// dma-buf (ION) buffers, kB.
    pub dmabuf_kb: Avail<u64>,
    /// KGSL `page_alloc`, kB.
    pub kgsl_kb: Avail<u64>,
}

/// ZRAM usage from `/sys/block/zram*/mm_stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ZramUsage {
    /// Devices found.
    pub devices: usize,
    /// Uncompressed data stored, kB (`orig_data_size`).
    pub orig_data_kb: u64,
    /// Compressed size, kB (`compr_data_size`).
    pub compr_data_kb: u64,
    /// RAM used including allocator overhead, kB (`mem_used_total`): the
    /// seed's "ZUSED".
    pub mem_used_kb: u64,
}

fn unavailable_because(err: &KernelError, what: &str) -> String {
    match err {
        KernelError::Missing { path } => format!("no {path} ({what})"),
        KernelError::NotAllowed { path, .. } => format!("{path} is not readable (need root)"),
        other => other.to_string(),
    }
}

impl DynamicExtras {
    /// Read modules, zram, dma-buf and KGSL figures; each missing source is
    /// an `Unavailable` with its reason, never an error.
    pub fn read(fs: &KernelFs) -> DynamicExtras {
        DynamicExtras {
            modules_kb: read_modules_kb(fs),
            zram: read_zram(fs),
            dmabuf_kb: read_dmabuf_kb(fs),
            kgsl_kb: match fs.read("/sys/class/kgsl/kgsl/page_alloc") {
                // 25165824   (bytes)
                Ok(t) => match t.trim().parse::<u64>() {
                    Ok(b) => Avail::Value(b / 1024),
                    Err(_) => Avail::Unavailable(format!(
                        "/sys/class/kgsl/kgsl/page_alloc holds {t:?}, not a byte count"
                    )),
                },
                Err(e) => Avail::Unavailable(unavailable_because(&e, "no Adreno KGSL driver")),
            },
        }
    }
}

fn read_modules_kb(fs: &KernelFs) -> Avail<u64> {
    match fs.read("/proc/modules") {
        Ok(text) => {
            // zram 45056 1 - Live 0xffffffffc0a1c000
            let bytes: u64 = text
                .lines()
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            Avail::Value(bytes / 1024)
        }
        Err(e) => Avail::Unavailable(unavailable_because(&e, "kernel built without modules")),
    }
}

fn read_zram(fs: &KernelFs) -> Avail<ZramUsage> {
    let names = match fs.list_dir("/sys/block") {
        Ok(n) => n,
        Err(e) => return Avail::Unavailable(unavailable_because(&e, "no block devices")),
    };
    let mut usage = ZramUsage {
        devices: 0,
        orig_data_kb: 0,
        compr_data_kb: 0,
        mem_used_kb: 0,
    };
    for name in names.iter().filter(|n| n.starts_with("zram")) {
        let path = format!("/sys/block/{name}/mm_stat");
        // 18432000  5760000  6123520        0  6385664      225        0        3        3
        // orig_data_size compr_data_size mem_used_total mem_limit mem_used_max ... (bytes)
        let Ok(text) = fs.read(&path) else { continue };
        let f: Vec<u64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        if f.len() < 3 {
            continue;
        }
        usage.devices += 1;
        usage.orig_data_kb += f[0] / 1024;
        usage.compr_data_kb += f[1] / 1024;
        usage.mem_used_kb += f[2] / 1024;
    }
    if usage.devices == 0 {
        Avail::Unavailable("no /sys/block/zram*/mm_stat (no zram device)".into())
    } else {
        Avail::Value(usage)
    }
}

fn read_dmabuf_kb(fs: &KernelFs) -> Avail<u64> {
    // CONFIG_DMABUF_SYSFS_STATS: /sys/kernel/dmabuf/buffers/<inode>/size (bytes)
    const BUFFERS: &str = "/sys/kernel/dmabuf/buffers";
    if let Ok(inodes) = fs.list_dir(BUFFERS) {
        let bytes: u64 = inodes
            .iter()
            .filter_map(|i| fs.read_i64(&format!("{BUFFERS}/{i}/size")).ok())
            .map(|b| b.max(0) as u64)
            .sum();
        return Avail::Value(bytes / 1024);
    }
    // debugfs, last line: "Total 12 objects, 123456 bytes"
    const BUFINFO: &str = "/sys/kernel/debug/dma_buf/bufinfo";
    match fs.read(BUFINFO) {
        Ok(text) => {
            let total = text.lines().rev().find_map(|l| {
                let rest = l.trim().strip_prefix("Total ")?;
                let (_, bytes) = rest.split_once("objects,")?;
                bytes.trim().strip_suffix("bytes")?.trim().parse::<u64>().ok()
            });
            match total {
                Some(b) => Avail::Value(b / 1024),
                None => Avail::Unavailable(format!("{BUFINFO} has no `Total … bytes` line")),
            }
        }
        Err(_) => Avail::Unavailable(format!(
            "neither {BUFFERS} (CONFIG_DMABUF_SYSFS_STATS) nor {BUFINFO} (debugfs mounted, root) is readable"
        )),
    }
}

/// What changes while the system runs: meminfo, vmstat and the extras.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemSample {
    /// `/proc/meminfo`.
    pub meminfo: Meminfo,
    /// `/proc/vmstat`.
    pub vmstat: Vmstat,
    /// Modules, zram, dma-buf, KGSL.
    pub extras: DynamicExtras,
}

impl MemSample {
    /// Read one sample below the root.
    pub fn read(fs: &KernelFs) -> Result<MemSample, MeasureError> {
        Ok(MemSample {
            meminfo: Meminfo::read(fs)?,
            vmstat: Vmstat::read(fs)?,
            extras: DynamicExtras::read(fs),
        })
    }
}

/// The device tree's carveouts (seed 000 §6.5): what firmware declares
/// it keeps from Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DtCarveouts {
    /// Σ enabled `no-map` regions of `/reserved-memory`, kB: §8.3's
    /// non-Linux memory.
    pub no_map_kb: u64,
    /// How many enabled `no-map` regions there are.
    pub no_map_regions: usize,
    /// Σ enabled `reusable` (CMA) regions, kB: Linux RAM, not non-Linux.
    pub reusable_kb: u64,
}

impl DtCarveouts {
    /// Where the live tree is read, below the root.
    pub const LIVE_TREE: &'static str = "/sys/firmware/devicetree/base";

    /// Read the carveouts of the live tree below the root; `Unavailable`
    /// (with the reason) when there is no tree, no `/reserved-memory` node,
    /// or the tree cannot be read.
    pub fn read(fs: &KernelFs) -> Avail<DtCarveouts> {
        let base = Self::LIVE_TREE;
        let dir = match fs.resolve(base) {
            Ok(d) if d.is_dir() => d,
            _ => return Avail::Unavailable(format!("no device tree ({base})")),
        };
        let tree = match lever_dt::source::read_dir_tree(&dir) {
            Ok(t) => t,
            Err(e) => return Avail::Unavailable(format!("the device tree ({base}): {e}")),
        };
        if tree.find("/reserved-memory").is_none() {
            return Avail::Unavailable(format!(
                "the device tree ({base}) has no /reserved-memory node"
            ));
        }
        match lever_dt::carveouts(&tree) {
            Ok(c) => Avail::Value(DtCarveouts {
                no_map_kb: c.totals.no_map_bytes / 1024,
                no_map_regions: c.regions.iter().filter(|r| r.enabled && r.no_map).count(),
                reusable_kb: c.totals.reusable_bytes / 1024,
            }),
            Err(e) => Avail::Unavailable(format!("the device tree ({base}): {e}")),
        }
    }
}

/// Where the non-Linux figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NonLinuxSource {
    /// Σ the device tree's `no-map` carveouts.
    DeviceTree,
    /// Total RAM − Σ `/proc/iomem` System RAM.
    Iomem,
}

/// What does not change after boot: total RAM, System RAM, the dmesg line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaticMemory {
    /// Total RAM and its source.
    pub total_ram: Avail<TotalRam>,
    /// The device tree banks, when there is a device tree.
    pub dt_memory: Option<DtMemory>,
    /// Σ System RAM from `/proc/iomem`.
    pub system_ram: Avail<SystemRam>,
    /// The dmesg `Memory:` line.
    pub dmesg: Avail<DmesgMemory>,
    /// The device tree's carveouts.
    pub dt_carveouts: Avail<DtCarveouts>,
}

impl StaticMemory {
    /// Assemble from what was read. `dmesg_log` is the kernel log text (or
    /// the reason it could not be read); `user_total_kb` is `--total-ram`.
    pub fn new(
        dt_memory: Option<DtMemory>,
        dt_carveouts: Avail<DtCarveouts>,
        iomem: Result<Iomem, String>,
        dmesg_log: Result<String, String>,
        user_total_kb: Option<u64>,
    ) -> StaticMemory {
        let dmesg = match dmesg_log {
            Ok(log) => match DmesgMemory::find(&log) {
                Some(m) => Avail::Value(m),
                None => Avail::Unavailable(
                    "the kernel log has no `Memory: …K/…K available` line (the ring buffer wrapped?)"
                        .into(),
                ),
            },
            Err(why) => Avail::Unavailable(why),
        };
        // The user's figure wins: Lever's own report suggests --total-ram
        // exactly when the kernel's figure is short (see `non_linux_kb`).
        let total_ram = if let Some(kb) = user_total_kb {
            Avail::Value(TotalRam {
                kb,
                source: TotalRamSource::User,
            })
        } else if let Some(dt) = &dt_memory {
            Avail::Value(TotalRam {
                kb: dt.total_bytes() / 1024,
                source: TotalRamSource::DeviceTree,
            })
        } else if let Some(m) = dmesg.value() {
            Avail::Value(TotalRam {
                kb: m.total_kb,
                source: TotalRamSource::Dmesg,
            })
        } else {
            Avail::Unavailable(
                "no device tree memory node, no dmesg `Memory:` line, and no --total-ram given"
                    .into(),
            )
        };
        let system_ram = match iomem {
            Ok(io) => match io.system_ram() {
                Some(s) => Avail::Value(s),
                None => Avail::Unavailable(
                    "/proc/iomem shows zero addresses: the kernel hides them from readers without CAP_SYS_ADMIN (run as root)"
                        .into(),
                ),
            },
            Err(why) => Avail::Unavailable(why),
        };
        StaticMemory {
            total_ram,
            dt_memory,
            system_ram,
            dmesg,
            dt_carveouts,
        }
    }

    /// Read everything below the root. `dmesg_log` is the log text when the
    /// caller has it (a saved file), else `/dev/kmsg` is read.
    pub fn read(
        fs: &KernelFs,
        dmesg_log: Option<String>,
        user_total_kb: Option<u64>,
    ) -> Result<StaticMemory, MeasureError> {
        let dt = DtMemory::read(fs)?;
        let iomem = match Iomem::read(fs) {
            Ok(io) => Ok(io),
            Err(MeasureError::Kernel(e)) => Err(unavailable_because(&e, "no /proc/iomem")),
            Err(e) => return Err(e),
        };
        let log = match dmesg_log {
            Some(l) => Ok(l),
            None => crate::dmesg::read_kmsg(fs).map_err(|e| match e {
                MeasureError::Kernel(k) => format!(
                    "{}; pass a saved log with --dmesg FILE",
                    unavailable_because(&k, "no kernel log device in this tree")
                ),
                other => other.to_string(),
            }),
        };
        Ok(StaticMemory::new(
            dt,
            DtCarveouts::read(fs),
            iomem,
            log,
            user_total_kb,
        ))
    }
}

/// The free-memory terms of §8.3, kB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FreeMemory {
    /// MemFree.
    pub mem_free_kb: u64,
    /// Cached.
    pub cached_kb: u64,
    /// Shmem.
    pub shmem_kb: u64,
    /// Buffers.
    pub buffers_kb: u64,
    /// `nr_kernel_misc_reclaimable` (pages); `None` when vmstat lacks it.
    pub misc_reclaimable_pages: Option<u64>,
    /// ION cache = misc reclaimable pages × page size.
    pub ion_cache_kb: u64,
    /// MemFree + (Cached − Shmem) + Buffers + ION cache.
    pub free_kb: u64,
}

impl FreeMemory {
    /// Compute §8.3's free memory from meminfo, vmstat and the page size.
    pub fn new(
        meminfo: &Meminfo,
        vmstat: &Vmstat,
        page: PageSize,
    ) -> Result<FreeMemory, MeasureError> {
        let need = |field: &'static str| {
            meminfo.get(field).ok_or(MeasureError::MissingField {
                path: meminfo::PATH.to_string(),
                field,
            })
        };
        let mem_free_kb = need("MemFree")?;
        let cached_kb = need("Cached")?;
        let shmem_kb = need("Shmem")?;
        let buffers_kb = need("Buffers")?;
        let misc_reclaimable_pages = vmstat.get("nr_kernel_misc_reclaimable");
        let ion_cache_kb = misc_reclaimable_pages.unwrap_or(0) * page.kb;
        Ok(FreeMemory {
            mem_free_kb,
            cached_kb,
            shmem_kb,
            buffers_kb,
            misc_reclaimable_pages,
            ion_cache_kb,
            free_kb: mem_free_kb + cached_kb.saturating_sub(shmem_kb) + buffers_kb + ion_cache_kb,
        })
    }
}

/// One line of the §3.5 kernel-dynamic breakdown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DynamicItem {
    /// What it is (`Slab`, `Kernel stack`, …).
    pub name: &'static str,
    /// Size, kB, or why it is unknown here.
    pub kb: Avail<u64>,
    /// Where the figure comes from.
    pub source: &'static str,
}

/// The vmlinux sections of the dmesg line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vmlinux {
    /// (section, kB) in print order, as the kernel printed them.
    pub sections_kb: Vec<(String, u64)>,
    /// code + rwdata + rodata + init + bss, kB.
    pub image_kb: Option<u64>,
}

/// The §8.3 memory map of one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryMap {
    /// Total RAM.
    pub total_ram: Avail<TotalRam>,
    /// Linux RAM (Σ System RAM), kB.
    pub linux_ram_kb: Avail<u64>,
    /// Non-Linux memory, kB: the device tree's `no-map` carveout total
    /// when there is one, else total RAM − Linux RAM.
    pub non_linux_kb: Avail<i64>,
    /// Where `non_linux_kb` came from.
    pub non_linux_source: NonLinuxSource,
    /// Total RAM − Linux RAM (`/proc/iomem`), kB, whichever source the
    /// row uses.
    pub non_linux_iomem_kb: Avail<i64>,
    /// Device tree figure − `/proc/iomem` figure, kB, when both exist.
    pub non_linux_difference_kb: Option<i64>,
    /// Linux RAM − MemTotal, kB.
    pub kernel_static_kb: Avail<i64>,
    /// MemTotal, kB.
    pub mem_total_kb: u64,
    /// MemTotal − free, kB.
    pub apps_framework_kb: i64,
    /// The free-memory terms.
    pub free: FreeMemory,
    /// The page size used for the ION cache.
    pub page_size: PageSize,
    /// The §3.5 kernel-dynamic breakdown.
    pub kernel_dynamic: Vec<DynamicItem>,
    /// vmlinux sections from dmesg.
    pub vmlinux: Avail<Vmlinux>,
    /// Kernel page structures, estimated as the seed does: 16 MB per GB of
    /// total RAM, kB.
    pub page_structs_estimate_kb: Avail<u64>,
}

impl MemoryMap {
    /// Compute the map from the static facts and one sample. `page` overrides
    /// the derived page size. No I/O.
    pub fn new(
        fixed: &StaticMemory,
        sample: &MemSample,
        page: Option<PageSize>,
    ) -> Result<MemoryMap, MeasureError> {
        let m = &sample.meminfo;
        let page = page.unwrap_or_else(|| PageSize::derive(m, &sample.vmstat));
        let mem_total_kb = m.get("MemTotal").ok_or(MeasureError::MissingField {
            path: meminfo::PATH.to_string(),
            field: "MemTotal",
        })?;
        let free = FreeMemory::new(m, &sample.vmstat, page)?;
        let linux_ram_kb = fixed.system_ram.as_ref().map(|s| s.bytes / 1024);
        let non_linux_iomem_kb = match (&fixed.total_ram, &linux_ram_kb) {
            (Avail::Value(t), Avail::Value(l)) => Avail::Value(t.kb as i64 - *l as i64),
            (Avail::Unavailable(r), _) | (_, Avail::Unavailable(r)) => {
                Avail::Unavailable(r.clone())
            }
        };
        let (non_linux_kb, non_linux_source, non_linux_difference_kb) = match &fixed.dt_carveouts {
            Avail::Value(c) => {
                let dt = c.no_map_kb as i64;
                (
                    Avail::Value(dt),
                    NonLinuxSource::DeviceTree,
                    non_linux_iomem_kb.value().map(|io| dt - io),
                )
            }
            Avail::Unavailable(_) => (non_linux_iomem_kb.clone(), NonLinuxSource::Iomem, None),
        };
        let kernel_static_kb = linux_ram_kb.clone().map(|l| l as i64 - mem_total_kb as i64);
        let kernel_dynamic = dynamic_items(m, &sample.extras);
        let vmlinux = fixed.dmesg.as_ref().map(|d| Vmlinux {
            sections_kb: d.sections_kb.clone(),
            image_kb: d.vmlinux_kb(),
        });
        let page_structs_estimate_kb = fixed.total_ram.as_ref().map(|t| t.kb / 64);
        Ok(MemoryMap {
            total_ram: fixed.total_ram.clone(),
            linux_ram_kb,
            non_linux_kb,
            non_linux_source,
            non_linux_iomem_kb,
            non_linux_difference_kb,
            kernel_static_kb,
            mem_total_kb,
            apps_framework_kb: mem_total_kb as i64 - free.free_kb as i64,
            free,
            page_size: page,
            kernel_dynamic,
            vmlinux,
            page_structs_estimate_kb,
        })
    }
}

fn dynamic_items(m: &Meminfo, x: &DynamicExtras) -> Vec<DynamicItem> {
    let field = |name: &str, why: &str| match m.get(name) {
        Some(v) => Avail::Value(v),
        None => Avail::Unavailable(format!("/proc/meminfo has no {name} ({why})")),
    };
    let cma = match (m.get("CmaTotal"), m.get("CmaFree")) {
        (Some(t), Some(f)) => Avail::Value(t.saturating_sub(f)),
        _ => Avail::Unavailable("/proc/meminfo has no CmaTotal/CmaFree (CONFIG_CMA off)".into()),
    };
    vec![
        DynamicItem {
            name: "Slab",
            kb: field("Slab", "old kernel"),
            source: "meminfo Slab",
        },
        DynamicItem {
            name: "Kernel stack",
            kb: field("KernelStack", "old kernel"),
            source: "meminfo KernelStack",
        },
        DynamicItem {
            name: "Page tables",
            kb: field("PageTables", "old kernel"),
            source: "meminfo PageTables",
        },
        DynamicItem {
            name: "Vmalloc",
            kb: field("VmallocUsed", "old kernel"),
            source: "meminfo VmallocUsed",
        },
        DynamicItem {
            name: "Modules",
            kb: x.modules_kb.clone(),
            source: "Σ /proc/modules sizes",
        },
        DynamicItem {
            name: "CMA used",
            kb: cma,
            source: "meminfo CmaTotal − CmaFree",
        },
        DynamicItem {
            name: "ZRAM used",
            kb: x.zram.as_ref().map(|z| z.mem_used_kb),
            source: "Σ zram mm_stat mem_used_total",
        },
        DynamicItem {
            name: "dma-buf (ION)",
            kb: x.dmabuf_kb.clone(),
            source: "dma-buf sysfs stats or debugfs bufinfo",
        },
        DynamicItem {
            name: "KGSL",
            kb: x.kgsl_kb.clone(),
            source: "/sys/class/kgsl/kgsl/page_alloc",
        },
    ]
}

/// The memory map sampled while a use case ran ([`sample_command`]).
#[derive(Debug)]
pub struct CommandSamples {
    /// How the command ended.
    pub status: std::process::ExitStatus,
    /// (seconds since the start, map) of every sample taken while it ran.
    pub samples: Vec<(f64, MemoryMap)>,
}

impl CommandSamples {
    /// The sample with the least free memory: seed 000 §8.3's "during"
    /// column.
    pub fn peak(&self) -> Option<&(f64, MemoryMap)> {
        self.samples.iter().min_by_key(|(_, m)| m.free.free_kb)
    }
}

/// Errors of [`sample_command`].
#[derive(Debug, thiserror::Error)]
pub enum SampleCommandError {
    /// The command could not be started or waited for.
    #[error(transparent)]
    Command(#[from] crate::sampling::CommandError),
    /// A sample could not be read.
    #[error(transparent)]
    Measure(#[from] MeasureError),
    /// The sampling clock failed.
    #[error("sampling: {0}")]
    Io(#[from] std::io::Error),
}

/// Run `argv` and compute the memory map every `interval` while it runs
/// (samples after it exited do not count). `on_tick(pid, tick)` is called
/// after every tick, the one after the exit included, with the command's
/// pid: for a progress line, or to sample something else in the same loop
/// (`lever report collect` samples the use case's CPU with
/// [`crate::top::TopWatcher`]).
pub fn sample_command(
    fs: &KernelFs,
    fixed: &StaticMemory,
    page: Option<PageSize>,
    argv: &[String],
    interval: std::time::Duration,
    mut on_tick: impl FnMut(u32, crate::sampling::Tick) -> Result<(), MeasureError>,
) -> Result<CommandSamples, SampleCommandError> {
    let mut child = crate::sampling::spawn(argv)?;
    let pid = child.id();
    let mut samples = Vec::new();
    let status = crate::sampling::sample_while(
        &mut child,
        interval,
        |tick| -> Result<(), SampleCommandError> {
            if !tick.exited {
                let map = MemoryMap::new(fixed, &MemSample::read(fs)?, page)?;
                samples.push((tick.elapsed.as_secs_f64(), map));
            }
            on_tick(pid, tick)?;
            Ok(())
        },
    )?;
    Ok(CommandSamples { status, samples })
}
