//! Memory: device-tree memory nodes, `/proc/iomem`, `/proc/meminfo`,
//! `/proc/vmstat`, `/proc/pressure/memory` and zram.
//!
//! The numbers are chained the way the kernel chains them:
//!
//! - DT `memory@...` `reg` = total RAM (big-endian cells).
//! - System RAM (`/proc/iomem`) = DT banks minus the `no-map` carveouts.
//! - `MemTotal` = System RAM minus what the kernel reserves at boot.
//! - `MemFree` = `MemTotal` minus everything the usage snapshot holds.
//! - vmstat page counts are the meminfo kB figures divided by 4 (4 KB pages).
//!
//! `/proc/iomem` lines look like the kernel's `r_show()`: at least 8 hex
//! digits, two spaces of indent per nesting level:
//!
//! ```text
//! 80000000-817fffff : System RAM
//! 9ae00000-bfffffff : System RAM
//!   9ae10000-9ca4ffff : Kernel code
//! ```

use super::mix;
use crate::model::{Board, MemUsage};
use crate::tree::Tree;
use crate::SimError;

/// Figures other generators need.
pub(crate) struct MemFacts {
    pub min_free_kbytes: u64,
}

const MIB: u64 = 1024 * 1024;

pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<MemFacts, SimError> {
    let mem = &board.memory;
    write_dt_memory(board, tree)?;
    let ram = system_ram(board);
    let system_ram_kb: u64 = ram.iter().map(|(s, e)| (e - s + 1) / 1024).sum();
    let mem_total_kb = system_ram_kb - mem.kernel_reserved_kb;
    // mm/page_alloc.c: min_free_kbytes = int_sqrt(lowmem_kbytes * 16),
    // clamped to [128, 262144].
    let lowmem_kb = match mem.lowmem_kb {
        Some(low) => mem_total_kb.saturating_sub(system_ram_kb.saturating_sub(low)),
        None => mem_total_kb,
    };
    let min_free_kbytes = int_sqrt(lowmem_kb * 16).clamp(128, 262_144);
    write_iomem(board, &ram, tree)?;
    let swap_total_kb = board
        .zram
        .as_ref()
        .map(|z| z.disksize_bytes / 1024 - 4)
        .unwrap_or(0);
    let m = Meminfo::new(
        board,
        mem_total_kb,
        system_ram_kb,
        min_free_kbytes,
        swap_total_kb,
    );
    tree.text("/proc/meminfo", m.render(board))?;
    tree.text("/proc/vmstat", vmstat(board, &m))?;
    if board.config.psi {
        tree.text(
            "/proc/pressure/memory",
            format!(
                "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={}\n",
                board.uptime_s * 41,
                board.uptime_s * 17
            ),
        )?;
    }
    if let Some(z) = &board.zram {
        let dir = "/sys/block/zram0";
        tree.line(&format!("{dir}/disksize"), z.disksize_bytes)?;
        tree.line(&format!("{dir}/comp_algorithm"), z.comp_algorithm)?;
        // mm_stat: orig_data_size compr_data_size mem_used_total mem_limit
        // mem_used_max same_pages pages_compacted huge_pages huge_pages_since
        let orig = mem.usage.swap_used_kb * 1024;
        let compr = orig * 10 / 32;
        let used = (compr + compr / 16).div_ceil(4096) * 4096;
        let used_max = if orig == 0 { 0 } else { used + 64 * 4096 };
        let same = orig / 4096 / 20;
        let huge = if orig == 0 { 0 } else { 3 };
        tree.text(
            &format!("{dir}/mm_stat"),
            format!(
                "{orig:8} {compr:8} {used:8} {:8} {used_max:8} {same:8} {:8} {huge:8} {huge:8}\n",
                0, 0
            ),
        )?;
        // Write-only in the kernel; empty here.
        tree.text(&format!("{dir}/reset"), "")?;
    }
    Ok(MemFacts { min_free_kbytes })
}

/// DT memory node(s): one `memory@<first base>` node whose `reg` lists
/// every bank, as bootloaders fill it in.
fn write_dt_memory(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    let mem = &board.memory;
    let base = "/sys/firmware/devicetree/base";
    let cells = mem.reg_cells;
    tree.bytes(&format!("{base}/#address-cells"), &cells.to_be_bytes())?;
    tree.bytes(&format!("{base}/#size-cells"), &cells.to_be_bytes())?;
    let first = mem.banks.first().map(|b| b.0).unwrap_or(0);
    let node = format!("{base}/memory@{first:x}");
    let reg = reg_cells(mem.banks, cells);
    tree.text(&format!("{node}/device_type"), "memory\0")?;
    tree.text(&format!("{node}/name"), "memory\0")?;
    tree.bytes(&format!("{node}/reg"), &reg)?;
    // The no-map carveouts, as the reserved-memory node lists them, with
    // the node's own cell counts and an empty `ranges` (identity mapped),
    // as every SoC's .dtsi gives them.
    if !mem.carveouts.is_empty() {
        let rm = format!("{base}/reserved-memory");
        tree.bytes(&format!("{rm}/#address-cells"), &cells.to_be_bytes())?;
        tree.bytes(&format!("{rm}/#size-cells"), &cells.to_be_bytes())?;
        tree.bytes(&format!("{rm}/ranges"), &[])?;
        tree.text(&format!("{rm}/name"), "reserved-memory\0")?;
    }
    // Each region with a phandle, which the SoC tree's `memory-region`
    // properties (gen/dt.rs) point at.
    for (i, c) in mem.carveouts.iter().enumerate() {
        let node = format!("{base}/reserved-memory/{}", c.name);
        tree.bytes(
            &format!("{node}/reg"),
            &reg_cells(&[(c.base, c.size)], cells),
        )?;
        tree.text(&format!("{node}/no-map"), "")?;
        tree.bytes(
            &format!("{node}/phandle"),
            &super::dt::carveout_phandle(i).to_be_bytes(),
        )?;
        let name = c.name.split('@').next().unwrap_or(c.name);
        tree.text(&format!("{node}/name"), format!("{name}\0"))?;
    }
    Ok(())
}

/// A DT `reg` value: big-endian (address, size) pairs of `cells` 32-bit
/// cells each.
fn reg_cells(pairs: &[(u64, u64)], cells: u32) -> Vec<u8> {
    let mut reg = Vec::new();
    for (addr, size) in pairs {
        for v in [addr, size] {
            if cells == 2 {
                reg.extend_from_slice(&v.to_be_bytes());
            } else {
                reg.extend_from_slice(&(*v as u32).to_be_bytes());
            }
        }
    }
    reg
}

/// System RAM ranges (inclusive ends): the banks with carveouts cut out.
pub(crate) fn system_ram(board: &Board) -> Vec<(u64, u64)> {
    let mut holes: Vec<(u64, u64)> = board
        .memory
        .carveouts
        .iter()
        .map(|c| (c.base, c.base + c.size))
        .collect();
    holes.sort_unstable();
    let mut out = Vec::new();
    for (base, size) in board.memory.banks {
        let mut start = *base;
        let end = base + size;
        for (h_start, h_end) in &holes {
            if *h_end <= start || *h_start >= end {
                continue;
            }
            if *h_start > start {
                out.push((start, h_start - 1));
            }
            start = start.max(*h_end);
        }
        if start < end {
            out.push((start, end - 1));
        }
    }
    out
}

fn write_iomem(board: &Board, ram: &[(u64, u64)], tree: &mut Tree) -> Result<(), SimError> {
    let mem = &board.memory;
    // (start, end, name, nested lines)
    let mut top: Vec<(u64, u64, String, Vec<String>)> = Vec::new();
    for m in board.mmio {
        top.push((m.start, m.end, m.name.to_string(), Vec::new()));
    }
    for c in mem.carveouts {
        top.push((
            c.base,
            c.base + c.size - 1,
            "reserved".to_string(),
            Vec::new(),
        ));
    }
    // The kernel sits 2 MiB-aligned in the first RAM range big enough.
    let home = ram.iter().position(|(s, e)| e - s + 1 >= 64 * MIB);
    for (i, (s, e)) in ram.iter().enumerate() {
        let mut nested = Vec::new();
        if Some(i) == home {
            let load = s.div_ceil(2 * MIB) * 2 * MIB;
            let code_start = load + mem.kernel_text_offset;
            let code_end = code_start + mem.kernel_code_bytes - 1;
            // rodata and init sit between code and data (not listed).
            let data_start =
                (code_end + 1 + mem.kernel_code_bytes / 3).div_ceil(0x1_0000) * 0x1_0000;
            let data_end = data_start + mem.kernel_data_bytes - 1;
            nested.push(format!("  {code_start:08x}-{code_end:08x} : Kernel code\n"));
            nested.push(format!("  {data_start:08x}-{data_end:08x} : Kernel data\n"));
        }
        top.push((*s, *e, "System RAM".to_string(), nested));
    }
    top.sort_by_key(|t| t.0);
    let mut out = String::new();
    for (s, e, name, nested) in top {
        out.push_str(&format!("{s:08x}-{e:08x} : {name}\n"));
        for line in nested {
            out.push_str(&line);
        }
    }
    tree.text("/proc/iomem", out)
}

fn int_sqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// Every `/proc/meminfo` figure, kB.
struct Meminfo {
    total: u64,
    free: u64,
    available: u64,
    cached: u64,
    active_anon: u64,
    inactive_anon: u64,
    swap_total: u64,
    swap_free: u64,
    high_total: Option<u64>,
    high_free: u64,
    commit_limit: u64,
}

impl Meminfo {
    fn new(board: &Board, total: u64, system_ram_kb: u64, min_free: u64, swap_total: u64) -> Self {
        let u = &board.memory.usage;
        let anon_lru = u.anon_pages_kb + u.shmem_kb + u.swap_cached_kb;
        let file_lru = u.active_file_kb + u.inactive_file_kb;
        let used = anon_lru
            + file_lru
            + u.unevictable_kb
            + u.slab_reclaimable_kb
            + u.slab_unreclaimable_kb
            + u.kernel_stack_kb
            + u.page_tables_kb
            + u.vmalloc_used_kb
            + u.percpu_kb
            + u.misc_reclaimable_kb
            + u.driver_kb;
        let free = total.saturating_sub(used);
        // Watermarks (mm/page_alloc.c): low = min + max(min/4,
        // managed * watermark_scale_factor / 10000), high = low + same.
        let step = (min_free / 4).max(total * 10 / 10_000);
        let (wmark_low, wmark_high) = (min_free + step, min_free + 2 * step);
        // si_mem_available(): free - reserve + reclaimable page cache and
        // kernel memory, each minus min(half, low watermark).
        let reserve = wmark_high;
        let pagecache = file_lru - (file_lru / 2).min(wmark_low);
        let reclaimable = u.slab_reclaimable_kb + u.misc_reclaimable_kb;
        let reclaimable = reclaimable - (reclaimable / 2).min(wmark_low);
        let available = (free + pagecache + reclaimable).saturating_sub(reserve);
        let high_total = board
            .memory
            .lowmem_kb
            .map(|low| system_ram_kb.saturating_sub(low));
        let high_free = high_total.map(|h| free * h / total.max(1)).unwrap_or(0);
        Meminfo {
            total,
            free,
            available,
            cached: file_lru + u.shmem_kb - u.buffers_kb,
            active_anon: anon_lru - u.inactive_anon_kb,
            inactive_anon: u.inactive_anon_kb,
            swap_total,
            swap_free: swap_total - u.swap_used_kb.min(swap_total),
            high_total,
            high_free,
            // overcommit_ratio 50
            commit_limit: total / 2 + swap_total,
        }
    }

    /// `show_val_kb()`: name padded to 16 columns, value right-aligned in 8.
    fn render(&self, board: &Board) -> String {
        let u = &board.memory.usage;
        let mem = &board.memory;
        let mut rows: Vec<(&str, u64)> = vec![
            ("MemTotal:", self.total),
            ("MemFree:", self.free),
            ("MemAvailable:", self.available),
            ("Buffers:", u.buffers_kb),
            ("Cached:", self.cached),
            ("SwapCached:", u.swap_cached_kb),
            ("Active:", self.active_anon + u.active_file_kb),
            ("Inactive:", self.inactive_anon + u.inactive_file_kb),
            ("Active(anon):", self.active_anon),
            ("Inactive(anon):", self.inactive_anon),
            ("Active(file):", u.active_file_kb),
            ("Inactive(file):", u.inactive_file_kb),
            ("Unevictable:", u.unevictable_kb),
            ("Mlocked:", u.mlocked_kb),
        ];
        if let Some(high_total) = self.high_total {
            rows.push(("HighTotal:", high_total));
            rows.push(("HighFree:", self.high_free));
            rows.push(("LowTotal:", self.total - high_total));
            rows.push(("LowFree:", self.free - self.high_free));
        }
        rows.extend([
            ("SwapTotal:", self.swap_total),
            ("SwapFree:", self.swap_free),
            ("Dirty:", u.dirty_kb),
            ("Writeback:", 0),
            ("AnonPages:", u.anon_pages_kb),
            ("Mapped:", u.mapped_kb),
            ("Shmem:", u.shmem_kb),
            (
                "KReclaimable:",
                u.slab_reclaimable_kb + u.misc_reclaimable_kb,
            ),
            ("Slab:", u.slab_reclaimable_kb + u.slab_unreclaimable_kb),
            ("SReclaimable:", u.slab_reclaimable_kb),
            ("SUnreclaim:", u.slab_unreclaimable_kb),
            ("KernelStack:", u.kernel_stack_kb),
        ]);
        if board.config.shadow_call_stack {
            rows.push(("ShadowCallStack:", u.kernel_stack_kb / 4));
        }
        rows.extend([("PageTables:", u.page_tables_kb)]);
        if board.config.version >= (6, 3) {
            rows.push(("SecPageTables:", 0));
        }
        rows.extend([
            ("NFS_Unstable:", 0),
            ("Bounce:", 0),
            ("WritebackTmp:", 0),
            ("CommitLimit:", self.commit_limit),
            ("Committed_AS:", u.committed_as_kb),
            ("VmallocTotal:", mem.vmalloc_total_kb),
            ("VmallocUsed:", u.vmalloc_used_kb),
            ("VmallocChunk:", 0),
            ("Percpu:", u.percpu_kb),
            ("AnonHugePages:", 0),
            ("ShmemHugePages:", 0),
            ("ShmemPmdMapped:", 0),
            ("FileHugePages:", 0),
            ("FilePmdMapped:", 0),
            ("CmaTotal:", mem.cma_total_kb),
            ("CmaFree:", mem.cma_free_kb),
        ]);
        let mut out = String::new();
        for (name, kb) in rows {
            out.push_str(&format!("{name:<16}{kb:>8} kB\n"));
        }
        // CONFIG_HUGETLBFS: on arm64 only (2 MB pages); 32-bit ARM
        // without LPAE has none.
        if board.memory.lowmem_kb.is_none() {
            for name in [
                "HugePages_Total:",
                "HugePages_Free:",
                "HugePages_Rsvd:",
                "HugePages_Surp:",
            ] {
                out.push_str(&format!("{name:<16}{:>8}\n", 0));
            }
            out.push_str(&format!("{:<16}{:>8} kB\n", "Hugepagesize:", 2048));
            out.push_str(&format!("{:<16}{:>8} kB\n", "Hugetlb:", 0));
        }
        out
    }
}

/// `/proc/vmstat` in the order of `vmstat_text[]` (6.x): zone counters,
/// node counters, then events. Page counts are the meminfo figures / 4.
fn vmstat(board: &Board, m: &Meminfo) -> String {
    let u: &MemUsage = &board.memory.usage;
    let pages = |kb: u64| kb / 4;
    let up = board.uptime_s;
    // Block I/O in kB from the whole disks (partitions are already in them).
    let (sect_in, sect_out) = board
        .disks
        .iter()
        .filter(|d| !d.partition && d.name != "zram0")
        .fold((0, 0), |(r, w), d| {
            (r + d.sectors_read, w + d.sectors_written)
        });
    let swap_pages = pages(u.swap_used_kb);
    let pswpin = swap_pages / 16;
    let ev = |salt: u64, scale: u64| scale + mix(&[up, salt]) % (scale / 4 + 1);
    let mut rows: Vec<(String, u64)> = Vec::new();
    let mut push = |k: &str, v: u64| rows.push((k.to_string(), v));
    push("nr_free_pages", pages(m.free));
    push("nr_zone_inactive_anon", pages(m.inactive_anon));
    push("nr_zone_active_anon", pages(m.active_anon));
    push("nr_zone_inactive_file", pages(u.inactive_file_kb));
    push("nr_zone_active_file", pages(u.active_file_kb));
    push("nr_zone_unevictable", pages(u.unevictable_kb));
    push("nr_zone_write_pending", pages(u.dirty_kb));
    push("nr_mlock", pages(u.mlocked_kb));
    push("nr_bounce", 0);
    push("nr_zspages", pages(u.swap_used_kb) / 12);
    push("nr_free_cma", pages(board.memory.cma_free_kb));
    push("nr_inactive_anon", pages(m.inactive_anon));
    push("nr_active_anon", pages(m.active_anon));
    push("nr_inactive_file", pages(u.inactive_file_kb));
    push("nr_active_file", pages(u.active_file_kb));
    push("nr_unevictable", pages(u.unevictable_kb));
    push("nr_slab_reclaimable", pages(u.slab_reclaimable_kb));
    push("nr_slab_unreclaimable", pages(u.slab_unreclaimable_kb));
    push("nr_isolated_anon", 0);
    push("nr_isolated_file", 0);
    push("workingset_nodes", pages(u.slab_reclaimable_kb) / 40);
    push("workingset_refault_anon", pswpin / 2);
    push("workingset_refault_file", ev(1, up * 3));
    push("workingset_activate_anon", pswpin / 4);
    push("workingset_activate_file", ev(2, up));
    push("workingset_restore_anon", pswpin / 8);
    push("workingset_restore_file", ev(3, up / 2));
    push("workingset_nodereclaim", 0);
    push("nr_anon_pages", pages(u.anon_pages_kb));
    push("nr_mapped", pages(u.mapped_kb));
    push(
        "nr_file_pages",
        pages(m.cached + u.buffers_kb + u.swap_cached_kb),
    );
    push("nr_dirty", pages(u.dirty_kb));
    push("nr_writeback", 0);
    push("nr_writeback_temp", 0);
    push("nr_shmem", pages(u.shmem_kb));
    push("nr_shmem_hugepages", 0);
    push("nr_shmem_pmdmapped", 0);
    push("nr_file_hugepages", 0);
    push("nr_file_pmdmapped", 0);
    push("nr_anon_transparent_hugepages", 0);
    push("nr_vmscan_write", swap_pages);
    push("nr_vmscan_immediate_reclaim", 0);
    push("nr_dirtied", sect_out / 8 + ev(4, 500));
    push("nr_written", sect_out / 8);
    push("nr_throttled_written", 0);
    push("nr_kernel_misc_reclaimable", pages(u.misc_reclaimable_kb));
    push("nr_foll_pin_acquired", 0);
    push("nr_foll_pin_released", 0);
    push("nr_kernel_stack", u.kernel_stack_kb);
    if board.config.shadow_call_stack {
        push("nr_shadow_call_stack", u.kernel_stack_kb / 4);
    }
    push("nr_page_table_pages", pages(u.page_tables_kb));
    if board.config.version >= (6, 3) {
        push("nr_sec_page_table_pages", 0);
    }
    push("nr_swapcached", pages(u.swap_cached_kb));
    // vm.dirty_ratio 20 / dirty_background_ratio 10 of available memory.
    push("nr_dirty_threshold", pages(m.available) * 20 / 100);
    push(
        "nr_dirty_background_threshold",
        pages(m.available) * 10 / 100,
    );
    push("pgpgin", sect_in / 2);
    push("pgpgout", sect_out / 2);
    push("pswpin", pswpin);
    push("pswpout", swap_pages);
    let faults = ev(5, up * 900);
    for zone in board.memory.zones {
        let v = if *zone == "normal" || *zone == "dma" {
            faults / 2
        } else {
            0
        };
        push(&format!("pgalloc_{zone}"), v);
    }
    for zone in board.memory.zones {
        push(&format!("allocstall_{zone}"), 0);
    }
    for zone in board.memory.zones {
        push(&format!("pgskip_{zone}"), 0);
    }
    push("pgfree", faults + pages(m.free));
    push("pgactivate", ev(6, up * 40));
    push("pgdeactivate", ev(7, up * 5));
    push("pglazyfree", 0);
    push("pgfault", faults);
    push("pgmajfault", ev(8, up / 2));
    push("pglazyfreed", 0);
    push("pgrefill", ev(9, up * 6));
    push("pgreuse", ev(10, up * 20));
    let steal_kswapd = swap_pages * 3;
    push("pgsteal_kswapd", steal_kswapd);
    push("pgsteal_direct", steal_kswapd / 20);
    push("pgsteal_khugepaged", 0);
    push("pgscan_kswapd", steal_kswapd * 3 / 2);
    push("pgscan_direct", steal_kswapd / 10);
    push("pgscan_khugepaged", 0);
    push("pgscan_direct_throttle", 0);
    push("pgscan_anon", steal_kswapd / 2);
    push("pgscan_file", steal_kswapd + steal_kswapd / 10);
    push("pgsteal_anon", swap_pages);
    push(
        "pgsteal_file",
        steal_kswapd - swap_pages + steal_kswapd / 20,
    );
    push("pginodesteal", 0);
    push("slabs_scanned", steal_kswapd / 2);
    push("kswapd_inodesteal", 0);
    push(
        "kswapd_low_wmark_hit_quickly",
        u64::from(swap_pages > 0) * 3,
    );
    push("kswapd_high_wmark_hit_quickly", u64::from(swap_pages > 0));
    push("pageoutrun", u64::from(swap_pages > 0) * 12);
    push("pgrotated", 0);
    push("drop_pagecache", 0);
    push("drop_slab", 0);
    push("oom_kill", 0);
    push("pgmigrate_success", ev(11, 2000));
    push("pgmigrate_fail", 0);
    push("thp_migration_success", 0);
    push("thp_migration_fail", 0);
    push("thp_migration_split", 0);
    push("compact_migrate_scanned", ev(12, 9000));
    push("compact_free_scanned", ev(13, 30000));
    push("compact_isolated", ev(14, 4000));
    push("compact_stall", 0);
    push("compact_fail", 0);
    push("compact_success", 0);
    push("compact_daemon_wake", up / 500);
    push("compact_daemon_migrate_scanned", ev(15, 800));
    push("compact_daemon_free_scanned", ev(16, 2400));
    push("htlb_buddy_alloc_success", 0);
    push("htlb_buddy_alloc_fail", 0);
    push(
        "cma_alloc_success",
        pages(board.memory.cma_total_kb - board.memory.cma_free_kb),
    );
    push("cma_alloc_fail", 0);
    push("unevictable_pgs_culled", pages(u.unevictable_kb));
    push("unevictable_pgs_scanned", 0);
    push("unevictable_pgs_rescued", 0);
    push("unevictable_pgs_mlocked", pages(u.mlocked_kb));
    push("unevictable_pgs_munlocked", 0);
    push("unevictable_pgs_cleared", 0);
    push("unevictable_pgs_stranded", 0);
    push("thp_fault_alloc", 0);
    push("thp_fault_fallback", 0);
    push("thp_fault_fallback_charge", 0);
    push("thp_collapse_alloc", 0);
    push("thp_collapse_alloc_failed", 0);
    push("thp_file_alloc", 0);
    push("thp_file_fallback", 0);
    push("thp_file_fallback_charge", 0);
    push("thp_file_mapped", 0);
    push("thp_split_page", 0);
    push("thp_split_page_failed", 0);
    push("thp_deferred_split_page", 0);
    push("thp_split_pmd", 0);
    push("thp_scan_exceed_none_pte", 0);
    push("thp_scan_exceed_swap_pte", 0);
    push("thp_scan_exceed_share_pte", 0);
    push("thp_zero_page_alloc", 0);
    push("thp_zero_page_alloc_failed", 0);
    push("thp_swpout", 0);
    push("thp_swpout_fallback", 0);
    push("balloon_inflate", 0);
    push("balloon_deflate", 0);
    push("balloon_migrate", 0);
    push("swap_ra", pswpin / 3);
    push("swap_ra_hit", pswpin / 5);
    push("ksm_swpin_copy", 0);
    push("cow_ksm", 0);
    push("nr_unstable", 0);
    let mut out = String::new();
    for (k, v) in rows {
        out.push_str(&format!("{k} {v}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sqrt_is_floor() {
        assert_eq!(int_sqrt(0), 0);
        assert_eq!(int_sqrt(15), 3);
        assert_eq!(int_sqrt(16), 4);
        assert_eq!(int_sqrt(90_152_960), 9494);
    }

    #[test]
    fn system_ram_cuts_carveouts() {
        for board in crate::boards::ALL {
            let ram = system_ram(board);
            let ram_bytes: u64 = ram.iter().map(|(s, e)| e - s + 1).sum();
            let dt: u64 = board.memory.banks.iter().map(|b| b.1).sum();
            let holes: u64 = board.memory.carveouts.iter().map(|c| c.size).sum();
            assert_eq!(ram_bytes + holes, dt, "{}", board.name);
        }
    }
}
