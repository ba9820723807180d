//! Per-process memory (procrank) from `/proc/<pid>/smaps_rollup` and
//! `/proc/<pid>/status`.
//!
//! `smaps_rollup` (Linux ≥ 4.14) sums a process's `smaps` in the kernel:
//!
//! ```text
//! 55980343f000-7ffd1ad71000 ---p 00000000 00:00 0                          [rollup]
//! Rss:                1764 kB
//! Pss:                 503 kB
//! Pss_Anon:            116 kB
//! Private_Clean:        96 kB
//! Swap:                  0 kB
//! ```
//!
//! VSS = `VmSize` (status), RSS = `Rss`, PSS = `Pss`, USS = `Private_Clean +
//! Private_Dirty`, swap = `Swap`. Views, as procrank's flags: `-C` counts only
//! RAM/swap-backed pages (anonymous + shmem: RSS = `RssAnon + RssShmem`, PSS =
//! `Pss_Anon + Pss_Shmem`), `-c` only file-backed pages (RSS = `RssFile`, PSS =
//! `Pss_File`, swap 0). `smaps_rollup` does not split private pages by kind,
//! so USS and VSS are only shown for the whole view.
//!
//! Processes exit while we read them: a `/proc/<pid>` that vanished (ENOENT,
//! ESRCH) is counted, not an error; tasks without user memory (kernel
//! threads and zombies, whose rollup is empty or answers ESRCH) are skipped.

use crate::error::MeasureError;
use lever_kernel::{KernelError, KernelFs};
use serde::Serialize;

/// Which pages to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// All pages.
    #[default]
    All,
    /// Anonymous + shmem (RAM/swap-backed), procrank `-C`.
    Anon,
    /// File-backed, procrank `-c`.
    File,
}

/// Sort key, largest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// Proportional set size.
    #[default]
    Pss,
    /// Unique set size.
    Uss,
    /// Resident set size.
    Rss,
    /// Virtual size.
    Vss,
    /// Swapped out.
    Swap,
}

/// The raw figures of one process, kB as the kernel printed them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcRaw {
    /// Process id.
    pub pid: u32,
    /// `Name` from status.
    pub name: String,
    /// Command line, arguments joined by spaces (empty for kernel threads).
    pub cmdline: String,
    /// status `VmSize`.
    pub vm_size_kb: u64,
    /// status `RssAnon`, `RssFile`, `RssShmem`.
    pub rss_anon_kb: Option<u64>,
    /// status `RssFile`.
    pub rss_file_kb: Option<u64>,
    /// status `RssShmem`.
    pub rss_shmem_kb: Option<u64>,
    /// rollup `Rss`.
    pub rss_kb: u64,
    /// rollup `Pss`.
    pub pss_kb: u64,
    /// rollup `Pss_Anon` (Linux ≥ 5.9).
    pub pss_anon_kb: Option<u64>,
    /// rollup `Pss_File`.
    pub pss_file_kb: Option<u64>,
    /// rollup `Pss_Shmem`.
    pub pss_shmem_kb: Option<u64>,
    /// rollup `Private_Clean + Private_Dirty`.
    pub private_kb: u64,
    /// rollup `Swap`.
    pub swap_kb: u64,
}

/// Parse a `smaps_rollup` text into `raw` (the rollup fields).
/// Returns false when the rollup is empty (kernel thread).
pub fn parse_rollup(path: &str, text: &str, raw: &mut ProcRaw) -> Result<bool, MeasureError> {
    let mut any = false;
    let mut private = 0;
    for (i, line) in text.lines().enumerate() {
        // Rss:                1764 kB
        // (the `[rollup]` header line has no `kB` and is skipped)
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let Some(num) = rest.trim().strip_suffix("kB") else {
            continue;
        };
        let v = num
            .trim()
            .parse::<u64>()
            .map_err(|_| crate::error::parse_err(path, i + 1, line, "`Field: N kB`"))?;
        any = true;
        match name {
            "Rss" => raw.rss_kb = v,
            "Pss" => raw.pss_kb = v,
            "Pss_Anon" => raw.pss_anon_kb = Some(v),
            "Pss_File" => raw.pss_file_kb = Some(v),
            "Pss_Shmem" => raw.pss_shmem_kb = Some(v),
            "Private_Clean" | "Private_Dirty" => private += v,
            "Swap" => raw.swap_kb = v,
            _ => {}
        }
    }
    raw.private_kb = private;
    Ok(any)
}

/// Parse the fields Lever uses from `/proc/<pid>/status`.
pub fn parse_status(text: &str, raw: &mut ProcRaw) {
    for line in text.lines() {
        // VmSize:	    3760 kB
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let num = || rest.split_whitespace().next()?.parse::<u64>().ok();
        match name {
            "Name" => raw.name = rest.trim().to_string(),
            "VmSize" => raw.vm_size_kb = num().unwrap_or(0),
            "RssAnon" => raw.rss_anon_kb = num(),
            "RssFile" => raw.rss_file_kb = num(),
            "RssShmem" => raw.rss_shmem_kb = num(),
            _ => {}
        }
    }
}

/// What happened to a process while reading.
enum Read {
    Ok(ProcRaw),
    KernelThread,
    Vanished,
    Denied,
}

fn vanished(e: &KernelError) -> bool {
    match e {
        KernelError::Missing { .. } => true,
        // ESRCH: the task exited between open and read.
        KernelError::Io { source, .. } => source.raw_os_error() == Some(libc::ESRCH),
        _ => false,
    }
}

fn read_one(fs: &KernelFs, pid: u32) -> Result<Read, MeasureError> {
    let base = format!("/proc/{pid}");
    let mut raw = ProcRaw {
        pid,
        ..ProcRaw::default()
    };
    let rollup_path = format!("{base}/smaps_rollup");
    let rollup = match fs.read(&rollup_path) {
        Ok(t) => t,
        // A task without an mm (kernel thread, zombie) also answers ESRCH:
        // it is still there when its status still reads, without `VmSize`.
        Err(e) if vanished(&e) => {
            return Ok(match fs.read(&format!("{base}/status")) {
                Ok(status) if !status.contains("\nVmSize:") => Read::KernelThread,
                _ => Read::Vanished,
            })
        }
        Err(KernelError::NotAllowed { .. }) => return Ok(Read::Denied),
        Err(e) => return Err(e.into()),
    };
    if !parse_rollup(&rollup_path, &rollup, &mut raw)? {
        return Ok(Read::KernelThread);
    }
    match fs.read(&format!("{base}/status")) {
        Ok(t) => parse_status(&t, &mut raw),
        Err(e) if vanished(&e) => return Ok(Read::Vanished),
        Err(e) => return Err(e.into()),
    }
    match fs.read_bytes(&format!("{base}/cmdline")) {
        Ok(b) => {
            raw.cmdline = String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .replace('\0', " ")
        }
        Err(e) if vanished(&e) => return Ok(Read::Vanished),
        Err(e) => return Err(e.into()),
    }
    Ok(Read::Ok(raw))
}

/// One raw pass over `/proc`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcScan {
    /// Processes read.
    pub procs: Vec<ProcRaw>,
    /// Tasks without user memory skipped (kernel threads, zombies).
    pub kernel_threads: usize,
    /// Processes that exited while being read.
    pub vanished: usize,
    /// Processes whose smaps_rollup we may not read (not root).
    pub denied: usize,
}

/// Why a scan could not run at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanUnavailable {
    /// No `/proc/<pid>` directories below the root (a simulated board or a
    /// copied tree has no processes).
    NoProcesses,
    /// The kernel has no `smaps_rollup` (older than 4.14).
    NoRollup,
}

impl ScanUnavailable {
    /// A plain sentence.
    pub fn reason(&self) -> &'static str {
        match self {
            ScanUnavailable::NoProcesses => {
                "there are no /proc/<pid> directories under this root (a simulated or copied tree has no live processes)"
            }
            ScanUnavailable::NoRollup => {
                "this kernel has no /proc/<pid>/smaps_rollup (Linux older than 4.14)"
            }
        }
    }
}

impl ProcScan {
    /// Scan every `/proc/<pid>` below the root.
    pub fn read(fs: &KernelFs) -> Result<Result<ProcScan, ScanUnavailable>, MeasureError> {
        let pids: Vec<u32> = fs
            .list_dir(lever_kernel::paths::PROC)?
            .iter()
            .filter_map(|n| n.parse().ok())
            .collect();
        if pids.is_empty() {
            return Ok(Err(ScanUnavailable::NoProcesses));
        }
        // smaps_rollup makes the kernel walk each process's page tables
        // (~0.1-0.2 ms for even a small process), so the reads are spread
        // over a few threads; results keep /proc's pid order.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
            .min(pids.len().div_ceil(16).max(1));
        let chunk = pids.len().div_ceil(threads);
        let results: Vec<Result<Read, MeasureError>> = std::thread::scope(|s| {
            let handles: Vec<_> = pids
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|&pid| read_one(fs, pid))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut scan = ProcScan::default();
        for r in results {
            match r? {
                Read::Ok(r) => scan.procs.push(r),
                Read::KernelThread => scan.kernel_threads += 1,
                Read::Vanished => scan.vanished += 1,
                Read::Denied => scan.denied += 1,
            }
        }
        if scan.procs.is_empty() && scan.denied == 0 && scan.kernel_threads == 0 {
            // Every pid vanished or had no rollup: check which.
            if !fs.exists("/proc/self/smaps_rollup") && fs.exists("/proc/self") {
                return Ok(Err(ScanUnavailable::NoRollup));
            }
        }
        Ok(Ok(scan))
    }
}

/// One row of the procrank table, kB. `None` = not separable in this view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcMem {
    /// Process id.
    pub pid: u32,
    /// Name (status `Name`).
    pub name: String,
    /// Command line.
    pub cmdline: String,
    /// Virtual set size.
    pub vss_kb: Option<u64>,
    /// Resident set size.
    pub rss_kb: Option<u64>,
    /// Proportional set size.
    pub pss_kb: Option<u64>,
    /// Unique set size.
    pub uss_kb: Option<u64>,
    /// Swapped out.
    pub swap_kb: Option<u64>,
}

/// The procrank model: rows in sort order and their totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Procrank {
    /// The view.
    pub view: View,
    /// The sort key.
    pub sort: SortKey,
    /// Rows, largest first.
    pub procs: Vec<ProcMem>,
    /// Column totals (a column is `None` if any row lacks it).
    pub total: ProcMem,
    /// Kernel threads skipped.
    pub kernel_threads: usize,
    /// Processes that vanished mid-read.
    pub vanished: usize,
    /// Processes not readable without root.
    pub denied: usize,
}

impl Procrank {
    /// Build the table from a scan. No I/O.
    pub fn new(scan: &ProcScan, view: View, sort: SortKey) -> Procrank {
        let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        let mut procs: Vec<ProcMem> = scan
            .procs
            .iter()
            .map(|r| {
                let (vss, rss, pss, uss, swap) = match view {
                    View::All => (
                        Some(r.vm_size_kb),
                        Some(r.rss_kb),
                        Some(r.pss_kb),
                        Some(r.private_kb),
                        Some(r.swap_kb),
                    ),
                    View::Anon => (
                        None,
                        add(r.rss_anon_kb, r.rss_shmem_kb),
                        add(r.pss_anon_kb, r.pss_shmem_kb),
                        None,
                        Some(r.swap_kb),
                    ),
                    View::File => (None, r.rss_file_kb, r.pss_file_kb, None, Some(0)),
                };
                ProcMem {
                    pid: r.pid,
                    name: r.name.clone(),
                    cmdline: r.cmdline.clone(),
                    vss_kb: vss,
                    rss_kb: rss,
                    pss_kb: pss,
                    uss_kb: uss,
                    swap_kb: swap,
                }
            })
            .collect();
        let key = |p: &ProcMem| match sort {
            SortKey::Pss => p.pss_kb,
            SortKey::Uss => p.uss_kb,
            SortKey::Rss => p.rss_kb,
            SortKey::Vss => p.vss_kb,
            SortKey::Swap => p.swap_kb,
        };
        procs.sort_by(|a, b| key(b).cmp(&key(a)).then(a.pid.cmp(&b.pid)));
        let sum = |f: fn(&ProcMem) -> Option<u64>| -> Option<u64> {
            procs.iter().map(f).sum::<Option<u64>>()
        };
        let total = ProcMem {
            pid: 0,
            name: "TOTAL".into(),
            cmdline: String::new(),
            vss_kb: sum(|p| p.vss_kb),
            rss_kb: sum(|p| p.rss_kb),
            pss_kb: sum(|p| p.pss_kb),
            uss_kb: sum(|p| p.uss_kb),
            swap_kb: sum(|p| p.swap_kb),
        };
        Procrank {
            view,
            sort,
            procs,
            total,
            kernel_threads: scan.kernel_threads,
            vanished: scan.vanished,
            denied: scan.denied,
        }
    }
}
