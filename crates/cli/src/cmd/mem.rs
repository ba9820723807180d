//! `lever mem map|procs|thrash`: the memory measurements of seed 000 §3.5,
//! §7.2 and §8.3. Collection and models live in `lever-measure`; this module
//! parses flags, runs the sampling loop and renders.

use crate::args::Global;
use crate::cmd::util::{spawn, Progress};
use crate::render::{print_json, Table};
use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use lever_kernel::KernelFs;
use lever_measure::memmap::{
    MemSample, MemoryMap, PageSize, PageSizeSource, StaticMemory, TotalRamSource,
};
use lever_measure::smaps::{ProcScan, Procrank, SortKey, View};
use lever_measure::thrash::{self, ThrashInterval, ThrashSample, Verdict};
use lever_measure::Avail;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `lever mem …`
#[derive(Debug, Subcommand)]
pub enum MemCommand {
    /// The memory map of seed 000 §8.3 (total RAM, non-Linux, kernel static,
    /// apps + framework, free) with the §3.5 kernel-dynamic breakdown; with
    /// `-- CMD`, "after boot" and "during CMD" side by side.
    Map(MapArgs),
    /// Per-process memory like procrank: VSS, RSS, PSS, USS and swap from
    /// /proc/<pid>/smaps_rollup, largest first, with totals.
    Procs(ProcsArgs),
    /// Memory thrashing check (seed 000 §7.2): sample /proc/vmstat and
    /// /proc/pressure/memory, print rates, reclaim efficiency and a verdict.
    Thrash(ThrashArgs),
}

/// `lever mem map`
#[derive(Debug, Args)]
pub struct MapArgs {
    /// Total RAM when neither the device tree nor the dmesg `Memory:` line
    /// gives it, with a binary unit: 6G, 6144M, 6291456K.
    #[arg(long, value_name = "SIZE", value_parser = parse_size_kb)]
    pub total_ram: Option<u64>,
    /// A saved `dmesg` output to take the `Memory:` line from, instead of
    /// reading /dev/kmsg below --root.
    #[arg(long, value_name = "FILE")]
    pub dmesg: Option<PathBuf>,
    /// Page size in kB for the ION cache (default: derived from meminfo and
    /// vmstat, else 4).
    #[arg(long, value_name = "KB")]
    pub page_size_kb: Option<u64>,
    /// Sampling interval while CMD runs, seconds.
    #[arg(long, value_name = "S", default_value_t = 0.2)]
    pub interval: f64,
    /// A use case to measure "during": the column shows the sample with the
    /// least free memory while it ran.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `lever mem procs`
#[derive(Debug, Args)]
pub struct ProcsArgs {
    /// Only RAM/swap-backed pages: anonymous + shmem (procrank -C).
    #[arg(short = 'C', long = "anon", conflicts_with = "file")]
    pub anon: bool,
    /// Only file-backed pages (procrank -c).
    #[arg(short = 'c', long = "file")]
    pub file: bool,
    /// Sort key, largest first.
    #[arg(long, value_enum, default_value_t = Sort::Pss)]
    pub sort: Sort,
    /// Show only the first N processes (totals still cover all).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Sort key for `mem procs`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Sort {
    /// Proportional set size.
    Pss,
    /// Unique set size.
    Uss,
    /// Resident set size.
    Rss,
    /// Virtual set size.
    Vss,
    /// Swapped out.
    Swap,
}

/// `lever mem thrash`
#[derive(Debug, Args)]
pub struct ThrashArgs {
    /// Seconds between samples.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub interval: f64,
    /// How long to sample, seconds (default 10; not with `-- CMD`).
    #[arg(long, value_name = "S", conflicts_with = "command")]
    pub duration: Option<f64>,
    /// Write thrash.csv, thrash.json and thrash.svg (the series and a plot)
    /// into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sample while this command runs.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Parse `6G`, `6144M`, `6291456K` (binary units) into kB.
fn parse_size_kb(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.strip_suffix('B').unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1),
        Some('M') => (&t[..t.len() - 1], 1024),
        Some('G') => (&t[..t.len() - 1], 1024 * 1024),
        Some('T') => (&t[..t.len() - 1], 1024 * 1024 * 1024),
        _ => return Err(format!("{s:?}: give a unit, e.g. 6G, 6144M or 6291456K")),
    };
    num.trim()
        .parse::<u64>()
        .map(|n| n * mult)
        .map_err(|_| format!("{s:?}: not a whole number with a unit (6G, 6144M, 6291456K)"))
}

pub fn run(global: &Global, cmd: MemCommand) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    match cmd {
        MemCommand::Map(a) => map(global, &fs, a),
        MemCommand::Procs(a) => procs(global, &fs, a),
        MemCommand::Thrash(a) => thrash(global, &fs, a),
    }
}

fn check_interval(s: f64) -> anyhow::Result<Duration> {
    if !(s.is_finite() && s > 0.0 && s <= 3600.0) {
        bail!("--interval must be between 0 and 3600 seconds, not {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

// ---------------------------------------------------------------- mem map

#[derive(Serialize)]
struct During {
    command: Vec<String>,
    exit_code: Option<i32>,
    samples: usize,
    /// Seconds after the start when the shown sample was taken.
    peak_at_s: f64,
    map: MemoryMap,
}

#[derive(Serialize)]
struct MapReport {
    root: PathBuf,
    #[serde(rename = "static")]
    fixed: StaticMemory,
    after_boot: MemoryMap,
    during: Option<During>,
}

fn map(global: &Global, fs: &KernelFs, a: MapArgs) -> anyhow::Result<()> {
    let log = match &a.dmesg {
        Some(p) => Some(lever_measure::dmesg::read_file(p)?),
        None => None,
    };
    let fixed = StaticMemory::read(fs, log, a.total_ram)?;
    let page = a.page_size_kb.map(|kb| PageSize {
        kb,
        source: PageSizeSource::Given,
    });
    let after_boot = MemoryMap::new(&fixed, &MemSample::read(fs)?, page)?;
    let during = if a.command.is_empty() {
        None
    } else {
        Some(map_during(fs, &fixed, page, &a)?)
    };
    let report = MapReport {
        root: global.root.clone(),
        fixed,
        after_boot,
        during,
    };
    if global.json {
        print_json(&report)?;
    } else {
        print!("{}", render_map(&report));
    }
    if let Some(d) = &report.during {
        if d.exit_code != Some(0) {
            bail!(
                "`{}` exited with {}",
                d.command.join(" "),
                d.exit_code
                    .map_or("a signal".to_string(), |c| format!("status {c}"))
            );
        }
    }
    Ok(())
}

/// Sample while the command runs; keep the sample with the least free memory.
fn map_during(
    fs: &KernelFs,
    fixed: &StaticMemory,
    page: Option<PageSize>,
    a: &MapArgs,
) -> anyhow::Result<During> {
    let interval = check_interval(a.interval)?;
    let progress = Progress::new(format!("sampling memory during `{}`", a.command.join(" ")));
    let start = Instant::now();
    let mut child = spawn(&a.command)?;
    let mut best: Option<(MemoryMap, f64)> = None;
    let mut samples = 0usize;
    let status = loop {
        let map = MemoryMap::new(fixed, &MemSample::read(fs)?, page)?;
        samples += 1;
        let t = start.elapsed().as_secs_f64();
        if best
            .as_ref()
            .is_none_or(|(b, _)| map.free.free_kb < b.free.free_kb)
        {
            best = Some((map, t));
        }
        progress.update(samples as u64, None, "samples");
        if let Some(st) = wait_up_to(&mut child, interval)? {
            break st;
        }
    };
    progress.finish();
    let (map, peak_at_s) = best.context("no sample taken")?;
    Ok(During {
        command: a.command.clone(),
        exit_code: status.code(),
        samples,
        peak_at_s,
        map,
    })
}

/// Wait for the child at most `d`; `Some(status)` when it exited.
fn wait_up_to(
    child: &mut std::process::Child,
    d: Duration,
) -> anyhow::Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + d;
    loop {
        if let Some(st) = child.try_wait().context("waiting for the command")? {
            return Ok(Some(st));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
    }
}

fn mb<T: Into<f64>>(kb: T) -> String {
    let v = kb.into() / 1024.0;
    // Never print "-0.0": a few negative kB round to zero.
    let v = if v.abs() < 0.05 { 0.0 } else { v };
    format!("{v:.1}")
}

fn avail_mb(a: &Avail<i64>) -> String {
    match a {
        Avail::Value(v) => mb(*v as f64),
        Avail::Unavailable(_) => "n/a".into(),
    }
}

fn avail_kb(a: &Avail<u64>) -> String {
    match a {
        Avail::Value(v) => v.to_string(),
        Avail::Unavailable(_) => "n/a".into(),
    }
}

/// One column cell of the memory-map table.
type Cell = dyn Fn(&MemoryMap) -> String;

fn render_map(r: &MapReport) -> String {
    let mut out = String::new();
    let maps: Vec<&MemoryMap> = std::iter::once(&r.after_boot)
        .chain(r.during.as_ref().map(|d| &d.map))
        .collect();
    let mut t = if r.during.is_some() {
        Table::new(&["Memory partition (MB)", "After boot", "During CMD"])
    } else {
        Table::new(&["Memory partition (MB)", "After boot"])
    };
    let total = |m: &MemoryMap| match &m.total_ram {
        Avail::Value(t) => mb(t.kb as f64),
        Avail::Unavailable(_) => "n/a".into(),
    };
    let rows: [(&str, &Cell); 5] = [
        ("Total RAM", &total),
        ("Non-Linux", &|m| avail_mb(&m.non_linux_kb)),
        ("Kernel static", &|m| avail_mb(&m.kernel_static_kb)),
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
    out.push_str(&t.render());
    if let Some(d) = &r.during {
        out.push_str(&format!(
            "During CMD: `{}`, the sample with the least free memory ({} samples, taken at {:.1} s).\n",
            d.command.join(" "),
            d.samples,
            d.peak_at_s
        ));
    }

    let m = maps.last().copied().unwrap_or(&r.after_boot);
    let mut unavailable: Vec<(String, String)> = Vec::new();
    out.push_str("\nSources (seed 000 §8.3):\n");
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
                _ => String::new(),
            };
            out.push_str(&format!(
                "  total RAM        {} kB from {}{}\n",
                t.kb,
                t.source.describe(),
                detail
            ));
        }
        Avail::Unavailable(why) => unavailable.push(("total RAM".into(), why.clone())),
    }
    match &r.fixed.system_ram {
        Avail::Value(s) => out.push_str(&format!(
            "  Linux RAM        {} kB = Σ(end − start + 1) over {} /proc/iomem \"System RAM\" range(s){}\n",
            s.bytes / 1024,
            s.ranges,
            if s.overlap_bytes > 0 {
                format!(", {} kB of repeated ranges counted once", s.overlap_bytes / 1024)
            } else {
                String::new()
            }
        )),
        Avail::Unavailable(why) => {
            unavailable.push(("Linux RAM, non-Linux, kernel static".into(), why.clone()))
        }
    }
    out.push_str(&format!("  MemTotal         {} kB\n", m.mem_total_kb));
    let f = &m.free;
    out.push_str(&format!(
        "  free             {} kB = MemFree {} + (Cached {} − Shmem {}) + Buffers {} + ION cache {}\n",
        f.free_kb, f.mem_free_kb, f.cached_kb, f.shmem_kb, f.buffers_kb, f.ion_cache_kb
    ));
    let page_how = match m.page_size.source {
        PageSizeSource::Derived => "derived from meminfo ÷ vmstat",
        PageSizeSource::Given => "--page-size-kb",
        PageSizeSource::Assumed => "assumed: meminfo and vmstat do not pin it down",
    };
    match f.misc_reclaimable_pages {
        Some(p) => out.push_str(&format!(
            "  ION cache        {} kB = nr_kernel_misc_reclaimable {} pages × {} kB ({})\n",
            f.ion_cache_kb, p, m.page_size.kb, page_how
        )),
        None => unavailable.push((
            "ION cache".into(),
            "/proc/vmstat has no nr_kernel_misc_reclaimable (kernel older than 5.x or without the counter); counted as 0".into(),
        )),
    }
    out.push_str(&format!(
        "  apps + framework {} kB = MemTotal − free\n",
        m.apps_framework_kb
    ));
    if let Avail::Value(n) = m.non_linux_kb {
        if n < 0 {
            out.push_str(&format!(
                "  non-Linux        {n} kB: the total RAM figure is below Σ System RAM, so it \
                 is not the full physical size (on x86 the dmesg total leaves out \
                 firmware-reserved pages); read non-Linux as 0 and pass --total-ram for \
                 the real size\n"
            ));
        }
    }

    let mut k = Table::new(&["Kernel dynamic (seed 000 §3.5)", "kB", "source"]);
    for item in &m.kernel_dynamic {
        k.row(vec![
            item.name.to_string(),
            avail_kb(&item.kb),
            item.source.to_string(),
        ]);
        if let Avail::Unavailable(why) = &item.kb {
            unavailable.push((item.name.to_string(), why.clone()));
        }
    }
    out.push('\n');
    out.push_str(&k.render());

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
            out.push('\n');
            out.push_str(&s.render());
        }
        Avail::Unavailable(why) => unavailable.push(("vmlinux sections".into(), why.clone())),
    }
    if let Avail::Value(kb) = &m.page_structs_estimate_kb {
        out.push_str(&format!(
            "page structures (estimate, seed: 16 MB per GB of RAM): {kb} kB\n"
        ));
    }
    if !unavailable.is_empty() {
        out.push('\n');
        for (what, why) in unavailable {
            out.push_str(&format!("{what}: not available here because {why}\n"));
        }
    }
    out
}

// ---------------------------------------------------------------- mem procs

#[derive(Serialize)]
#[serde(untagged)]
enum ProcsReport {
    Table(Procrank),
    Unavailable { unavailable: String },
}

fn procs(global: &Global, fs: &KernelFs, a: ProcsArgs) -> anyhow::Result<()> {
    let view = if a.anon {
        View::Anon
    } else if a.file {
        View::File
    } else {
        View::All
    };
    let sort = match a.sort {
        Sort::Pss => SortKey::Pss,
        Sort::Uss => SortKey::Uss,
        Sort::Rss => SortKey::Rss,
        Sort::Vss => SortKey::Vss,
        Sort::Swap => SortKey::Swap,
    };
    let report = match ProcScan::read(fs)? {
        Ok(scan) => ProcsReport::Table(Procrank::new(&scan, view, sort)),
        Err(why) => ProcsReport::Unavailable {
            unavailable: why.reason().to_string(),
        },
    };
    if global.json {
        return print_json(&report);
    }
    match report {
        ProcsReport::Unavailable { unavailable } => {
            println!("per-process memory: not available here because {unavailable}");
        }
        ProcsReport::Table(p) => print!("{}", render_procs(&p, a.limit)),
    }
    Ok(())
}

fn render_procs(p: &Procrank, limit: Option<usize>) -> String {
    let k = |v: Option<u64>| v.map_or("-".to_string(), |v| format!("{v}K"));
    let mut t = Table::new(&["PID", "Vss", "Rss", "Pss", "Uss", "Swap", "cmdline"]);
    let shown = limit.unwrap_or(usize::MAX);
    for r in p.procs.iter().take(shown) {
        let cmd = if r.cmdline.is_empty() {
            format!("[{}]", r.name)
        } else {
            r.cmdline.chars().take(80).collect()
        };
        t.row(vec![
            r.pid.to_string(),
            k(r.vss_kb),
            k(r.rss_kb),
            k(r.pss_kb),
            k(r.uss_kb),
            k(r.swap_kb),
            cmd,
        ]);
    }
    let tt = &p.total;
    t.row(vec![
        "TOTAL".into(),
        k(tt.vss_kb),
        k(tt.rss_kb),
        k(tt.pss_kb),
        k(tt.uss_kb),
        k(tt.swap_kb),
        format!("{} processes", p.procs.len()),
    ]);
    let mut out = t.render();
    let view = match p.view {
        View::All => "all pages",
        View::Anon => "anonymous + shmem pages only (-C); Vss/Uss cannot be split by page kind from smaps_rollup",
        View::File => "file-backed pages only (-c); Vss/Uss cannot be split by page kind from smaps_rollup",
    };
    out.push_str(&format!("view: {view}; sizes in kB (K)\n"));
    if p.procs.len() > shown {
        out.push_str(&format!(
            "showing {shown} of {} processes; TOTAL covers all\n",
            p.procs.len()
        ));
    }
    out.push_str(&format!(
        "skipped: {} kernel thread(s)/zombie(s), {} process(es) that exited while being read, {} not readable without root\n",
        p.kernel_threads, p.vanished, p.denied
    ));
    out
}

// ---------------------------------------------------------------- mem thrash

#[derive(Serialize)]
struct ThrashReport {
    interval_s: f64,
    command: Vec<String>,
    exit_code: Option<i32>,
    psi_available: bool,
    samples: Vec<ThrashSample>,
    intervals: Vec<ThrashInterval>,
    verdict: Verdict,
    written: Vec<PathBuf>,
}

fn thrash(global: &Global, fs: &KernelFs, a: ThrashArgs) -> anyhow::Result<()> {
    let interval = check_interval(a.interval)?;
    let duration = match a.duration {
        Some(d) if !(d.is_finite() && d > 0.0) => bail!("--duration must be positive, not {d}"),
        Some(d) => Some(Duration::from_secs_f64(d)),
        None if a.command.is_empty() => Some(Duration::from_secs(10)),
        None => None,
    };
    let label = match duration {
        Some(d) => format!("sampling /proc/vmstat for {:.0} s", d.as_secs_f64()),
        None => format!("sampling /proc/vmstat during `{}`", a.command.join(" ")),
    };
    let progress = Progress::new(label);
    let total_ticks = duration.map(|d| (d.as_secs_f64() / interval.as_secs_f64()).ceil() as u64);
    let start = Instant::now();
    let mut samples = vec![ThrashSample::read(fs, 0.0)?];
    let mut child = match a.command.is_empty() {
        true => None,
        false => Some(spawn(&a.command)?),
    };
    let mut exit_code = None;
    let mut tick = 1u64;
    loop {
        let next = start + interval.mul_f64(tick as f64);
        let end = duration.map(|d| start + d);
        let target = match end {
            Some(e) if e < next => e,
            _ => next,
        };
        let mut done = false;
        match child.as_mut() {
            Some(c) => {
                let now = Instant::now();
                if let Some(st) = wait_up_to(c, target.saturating_duration_since(now))? {
                    exit_code = st.code();
                    done = true;
                }
            }
            None => std::thread::sleep(target.saturating_duration_since(Instant::now())),
        }
        samples.push(ThrashSample::read(fs, start.elapsed().as_secs_f64())?);
        progress.update(tick, total_ticks, "intervals");
        tick += 1;
        if done || end.is_some_and(|e| Instant::now() >= e) {
            break;
        }
    }
    progress.finish();
    let intervals: Vec<ThrashInterval> = samples
        .windows(2)
        .map(|w| ThrashInterval::new(&w[1], &w[0]))
        .collect();
    let verdict = Verdict::new(&intervals);
    let mut report = ThrashReport {
        interval_s: interval.as_secs_f64(),
        command: a.command.clone(),
        exit_code,
        psi_available: samples[0].psi.is_some(),
        samples,
        intervals,
        verdict,
        written: Vec::new(),
    };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: &str, text: String| -> anyhow::Result<PathBuf> {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
            Ok(p)
        };
        report.written = vec![
            write("thrash.csv", thrash::to_csv(&report.intervals))?,
            write(
                "thrash.json",
                serde_json::to_string_pretty(&report.intervals)? + "\n",
            )?,
            write("thrash.svg", thrash::to_svg(&report.intervals))?,
        ];
    }
    if global.json {
        print_json(&report)?;
    } else {
        print!("{}", render_thrash(&report));
    }
    if !a.command.is_empty() && report.exit_code != Some(0) {
        bail!("`{}` did not exit with status 0", a.command.join(" "));
    }
    Ok(())
}

fn render_thrash(r: &ThrashReport) -> String {
    let n = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
    let mut t = Table::new(&[
        "t (s)",
        "refault/s",
        "activate/s",
        "pgpgin kB/s",
        "pgpgout kB/s",
        "pswpin/s",
        "pswpout/s",
        "pgscan/s",
        "pgsteal/s",
        "reclaim eff %",
        "PSI some %",
        "PSI full %",
    ]);
    for i in &r.intervals {
        let activate = match (
            i.rate("workingset_activate_anon"),
            i.rate("workingset_activate_file"),
        ) {
            (Some(a), Some(f)) => Some(a + f),
            _ => None,
        };
        t.row(vec![
            format!("{:.1}", i.t_s),
            n(i.refaults_per_s),
            n(activate),
            n(i.rate("pgpgin")),
            n(i.rate("pgpgout")),
            n(i.rate("pswpin")),
            n(i.rate("pswpout")),
            n(i.scanned_per_s),
            n(i.stolen_per_s),
            pct(i.reclaim_efficiency.map(|e| e * 100.0)),
            pct(i.psi_some_pct),
            pct(i.psi_full_pct),
        ]);
    }
    let mut out = t.render();
    out.push_str("rates per second over each interval; reclaim eff = pgsteal ÷ pgscan (- when nothing was scanned)\n");
    if !r.psi_available {
        out.push_str("PSI: not available here because /proc/pressure/memory is missing (kernel without CONFIG_PSI, or psi=0)\n");
    }
    let level = match r.verdict.level {
        thrash::Level::Calm => "no memory pressure",
        thrash::Level::Pressure => "memory pressure, but not thrashing",
        thrash::Level::Thrashing => "THRASHING",
    };
    out.push_str(&format!("\nverdict: {level}\n"));
    for reason in &r.verdict.reasons {
        out.push_str(&format!("  - {reason}\n"));
    }
    for p in &r.written {
        out.push_str(&format!("wrote {}\n", p.display()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse_size_kb;

    #[test]
    fn sizes() {
        assert_eq!(parse_size_kb("6G"), Ok(6 * 1024 * 1024));
        assert_eq!(parse_size_kb("6144M"), Ok(6 * 1024 * 1024));
        assert_eq!(parse_size_kb("6291456kb"), Ok(6291456));
        assert!(parse_size_kb("6144").is_err());
        assert!(parse_size_kb("xG").is_err());
    }
}
