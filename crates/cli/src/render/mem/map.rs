//! `lever mem map`: the seed 000 §8.3 partition table, where each figure
//! comes from, the §3.5 kernel-dynamic breakdown, vmlinux sections, and
//! what this machine cannot tell.

use crate::render::num::{avail_or_na, mb_from_kb as mb};
use crate::render::Table;
use lever_measure::memmap::{
    DtCarveouts, MemoryMap, NonLinuxSource, PageSizeSource, StaticMemory, TotalRamSource,
};
use lever_measure::Avail;
use serde::Serialize;
use std::path::PathBuf;

/// The map while the user's command ran.
#[derive(Serialize)]
pub struct During {
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub samples: usize,
    /// Seconds after the start when the shown sample was taken.
    pub peak_at_s: f64,
    pub map: MemoryMap,
}

/// What `lever mem map` prints.
#[derive(Serialize)]
pub struct MapReport {
    pub root: PathBuf,
    #[serde(rename = "static")]
    pub fixed: StaticMemory,
    pub after_boot: MemoryMap,
    pub during: Option<During>,
}

/// What a figure lacks and why, collected while rendering and said last.
type Unavailable = Vec<(String, String)>;

/// One column cell of the memory-map table.
type Cell = dyn Fn(&MemoryMap) -> String;

/// The whole report.
pub fn report(r: &MapReport) -> String {
    let mut out = partitions(r);
    // The sources describe the last column: "during" when there is one.
    let m = r.during.as_ref().map_or(&r.after_boot, |d| &d.map);
    let mut unavailable = Unavailable::new();
    out += &sources(r, m, &mut unavailable);
    out += &kernel_dynamic(m, &mut unavailable);
    out += &vmlinux(m, &mut unavailable);
    if let Avail::Value(kb) = &m.page_structs_estimate_kb {
        out += &format!("page structures (estimate, seed: 16 MB per GB of RAM): {kb} kB\n");
    }
    if !unavailable.is_empty() {
        out.push('\n');
        for (what, why) in unavailable {
            out += &format!("{what}: not available here because {why}\n");
        }
    }
    out
}

/// Seed 000 §8.3's table: after boot, and during CMD.
fn partitions(r: &MapReport) -> String {
    let maps: Vec<&MemoryMap> = std::iter::once(&r.after_boot)
        .chain(r.during.as_ref().map(|d| &d.map))
        .collect();
    let mut t = if r.during.is_some() {
        Table::new(&["Memory partition (MB)", "After boot", "During CMD"])
    } else {
        Table::new(&["Memory partition (MB)", "After boot"])
    };
    let rows: [(&str, &Cell); 5] = [
        ("Total RAM", &|m| {
            avail_or_na(&m.total_ram, |t| mb(t.kb as f64))
        }),
        ("Non-Linux", &|m| {
            avail_or_na(&m.non_linux_kb, |v| mb(*v as f64))
        }),
        ("Kernel static", &|m| {
            avail_or_na(&m.kernel_static_kb, |v| mb(*v as f64))
        }),
        ("Applications + framework", &|m| {
            mb(m.apps_framework_kb as f64)
        }),
        ("Total free memory", &|m| mb(m.free.free_kb as f64)),
    ];
    for (name, f) in rows {
        let mut row = vec![name.to_string()];
        row.extend(maps.iter().map(|m| f(m)));
        t.row(row);
    }
    let mut out = t.render();
    if let Some(d) = &r.during {
        out += &format!(
            "During CMD: `{}`, the sample with the least free memory ({} samples, taken at {:.1} s).\n",
            d.command.join(" "),
            d.samples,
            d.peak_at_s
        );
    }
    out
}

/// How each figure was computed, with its inputs.
fn sources(r: &MapReport, m: &MemoryMap, unavailable: &mut Unavailable) -> String {
    let mut out = String::from("\nSources (seed 000 §8.3):\n");
    match &m.total_ram {
        Avail::Value(t) => {
            let detail = match t.source {
                TotalRamSource::DeviceTree => r
                    .fixed
                    .dt_memory
                    .as_ref()
                    .map(|dt| {
                        format!(
                            " ({} bank(s), #address-cells/#size-cells {}/{}{})",
                            dt.banks.len(),
                            dt.address_cells,
                            dt.size_cells,
                            if dt.cells_from_root { "" } else { ", assumed" }
                        )
                    })
                    .unwrap_or_default(),
                TotalRamSource::User => overridden(r),
                TotalRamSource::Dmesg => String::new(),
            };
            out += &format!(
                "  total RAM        {} kB from {}{}\n",
                t.kb,
                t.source.describe(),
                detail
            );
        }
        Avail::Unavailable(why) => unavailable.push(("total RAM".into(), why.clone())),
    }
    match &r.fixed.system_ram {
        Avail::Value(s) => out += &format!(
            "  Linux RAM        {} kB = Σ(end − start + 1) over {} /proc/iomem \"System RAM\" range(s){}\n",
            s.bytes / 1024,
            s.ranges,
            if s.overlap_bytes > 0 {
                format!(", {} kB of repeated ranges counted once", s.overlap_bytes / 1024)
            } else {
                String::new()
            }
        ),
        Avail::Unavailable(why) => {
            unavailable.push(("Linux RAM, non-Linux, kernel static".into(), why.clone()))
        }
    }
    out += &format!("  MemTotal         {} kB\n", m.mem_total_kb);
    out += &free(m, unavailable);
    out += &format!(
        "  apps + framework {} kB = MemTotal − free\n",
        m.apps_framework_kb
    );
    out += &non_linux(r, m);
    if let Avail::Value(n) = m.non_linux_iomem_kb {
        if n < 0 {
            out += &format!(
                "  non-Linux        {n} kB: the total RAM figure is below Σ System RAM, so it \
                 is not the full physical size (on x86 the dmesg total leaves out \
                 firmware-reserved pages); read non-Linux as 0 and pass --total-ram for \
                 the real size\n"
            );
        }
    }
    if let Avail::Value(k) = m.kernel_static_kb {
        if k < 0 {
            out += &format!(
                "  kernel static    {k} kB: Σ System RAM is below MemTotal, which a complete \
                 /proc/iomem never is, so this iomem lists only part of RAM (an excerpt or a \
                 copied file?); read kernel static as unknown and give the full /proc/iomem\n"
            );
        }
    }
    out
}

/// Where non-Linux came from: the device tree's no-map carveouts beside
/// the /proc/iomem figure, with their difference; else the iomem figure.
fn non_linux(r: &MapReport, m: &MemoryMap) -> String {
    let iomem = match &m.non_linux_iomem_kb {
        Avail::Value(v) => format!("{v} kB (total RAM − Linux RAM)"),
        Avail::Unavailable(_) => "n/a".to_string(),
    };
    match (m.non_linux_source, &r.fixed.dt_carveouts) {
        (NonLinuxSource::DeviceTree, Avail::Value(c)) => {
            let mut out = format!(
                "  non-Linux        {} kB = Σ {} no-map /reserved-memory region(s) of the device \
                 tree ({}); from /proc/iomem: {iomem}\n",
                c.no_map_kb,
                c.no_map_regions,
                DtCarveouts::LIVE_TREE,
            );
            if m.non_linux_difference_kb == Some(0) {
                out.insert_str(out.len() - 1, ", the same");
            }
            if let Some(d) = m.non_linux_difference_kb.filter(|d| *d != 0) {
                out += &format!(
                    "  non-Linux        the two differ by {d:+} kB (device tree − iomem): {}; \
                     `lever dt carveouts` lists the regions\n",
                    if d < 0 {
                        "the kernel keeps more out of System RAM than the device tree declares \
                         no-map (firmware-reserved ranges, a total RAM figure above the banks)"
                    } else {
                        "some no-map regions are not holes in System RAM (outside /memory, \
                         overlapping, or a total RAM figure below the banks)"
                    }
                );
            }
            out
        }
        (_, dt) => {
            let why = match dt {
                Avail::Unavailable(why) => why.as_str(),
                Avail::Value(_) => "it was not used",
            };
            match &m.non_linux_iomem_kb {
                Avail::Value(_) => {
                    format!("  non-Linux        {iomem}; no device tree carveouts: {why}\n")
                }
                Avail::Unavailable(_) => String::new(),
            }
        }
    }
}

/// What the kernel's own sources said when `--total-ram` overrode them.
fn overridden(r: &MapReport) -> String {
    let mut said = Vec::new();
    if let Some(dt) = &r.fixed.dt_memory {
        said.push(format!("device tree says {} kB", dt.total_bytes() / 1024));
    }
    if let Avail::Value(d) = &r.fixed.dmesg {
        said.push(format!("dmesg `Memory:` line says {} kB", d.total_kb));
    }
    if said.is_empty() {
        String::new()
    } else {
        format!(" (overrides: {})", said.join(", "))
    }
}

/// The free-memory formula and the ION cache behind it.
fn free(m: &MemoryMap, unavailable: &mut Unavailable) -> String {
    let f = &m.free;
    let mut out = format!(
        "  free             {} kB = MemFree {} + (Cached {} − Shmem {}) + Buffers {} + ION cache {}\n",
        f.free_kb, f.mem_free_kb, f.cached_kb, f.shmem_kb, f.buffers_kb, f.ion_cache_kb
    );
    let page_how = match m.page_size.source {
        PageSizeSource::Derived => "derived from meminfo ÷ vmstat",
        PageSizeSource::Given => "--page-size-kb",
        PageSizeSource::Assumed => "assumed: meminfo and vmstat do not pin it down",
    };
    match f.misc_reclaimable_pages {
        Some(p) => out += &format!(
            "  ION cache        {} kB = nr_kernel_misc_reclaimable {} pages × {} kB ({})\n",
            f.ion_cache_kb, p, m.page_size.kb, page_how
        ),
        None => unavailable.push((
            "ION cache".into(),
            "/proc/vmstat has no nr_kernel_misc_reclaimable (kernel older than 5.x or without the counter); counted as 0".into(),
        )),
    }
    out
}

/// Seed 000 §3.5: where the kernel's dynamic memory goes.
fn kernel_dynamic(m: &MemoryMap, unavailable: &mut Unavailable) -> String {
    let mut k = Table::new(&["Kernel dynamic (seed 000 §3.5)", "kB", "source"]);
    for item in &m.kernel_dynamic {
        k.row(vec![
            item.name.to_string(),
            avail_or_na(&item.kb, |v| v.to_string()),
            item.source.to_string(),
        ]);
        if let Avail::Unavailable(why) = &item.kb {
            unavailable.push((item.name.to_string(), why.clone()));
        }
    }
    format!("\n{}", k.render())
}

/// The dmesg `Memory:` line's sections and the vmlinux image they add to.
fn vmlinux(m: &MemoryMap, unavailable: &mut Unavailable) -> String {
    match &m.vmlinux {
        Avail::Value(v) => {
            let mut s = Table::new(&["Kernel static: dmesg `Memory:` line", "kB"]);
            for (name, kb) in &v.sections_kb {
                s.row(vec![name.clone(), kb.to_string()]);
            }
            if let Some(img) = v.image_kb {
                s.row(vec![
                    "vmlinux = code + rwdata + rodata + init + bss".into(),
                    img.to_string(),
                ]);
            }
            format!("\n{}", s.render())
        }
        Avail::Unavailable(why) => {
            unavailable.push(("vmlinux sections".into(), why.clone()));
            String::new()
        }
    }
}
