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
//!
//! A rollup the kernel refuses (EACCES) is refused by its ptrace access
//! check (`PTRACE_MODE_READ`), which has several causes; [`Denied::classify`]
//! names the one that fits the reader ([`Reader`]: effective uid and
//! `CAP_SYS_PTRACE`) and the process (its `status`, still readable), so
//! root is never told to become root.

use crate::error::MeasureError;
use crate::process;
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

/// Fill the `status` fields procrank shows (name, VSS, RSS by kind) from
/// [`crate::process::parse_status`], the one reader of that file. A
/// malformed file leaves them unset rather than dropping the process.
pub fn parse_status(text: &str, raw: &mut ProcRaw) {
    let Ok(s) = process::parse_status("status", text) else {
        return;
    };
    raw.name = s.name;
    raw.vm_size_kb = s.vm_size_kb.unwrap_or(0);
    raw.rss_anon_kb = s.rss_anon_kb;
    raw.rss_file_kb = s.rss_file_kb;
    raw.rss_shmem_kb = s.rss_shmem_kb;
}

/// Who reads `/proc`: what the kernel's ptrace access check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reader {
    /// Effective user id.
    pub euid: u32,
    /// Whether `CAP_SYS_PTRACE` is in the effective set.
    pub cap_sys_ptrace: bool,
}

impl Reader {
    /// This process.
    pub fn current() -> Reader {
        Reader {
            euid: rustix::process::geteuid().as_raw(),
            cap_sys_ptrace: rustix::thread::capabilities(None).is_ok_and(|c| {
                c.effective
                    .contains(rustix::thread::CapabilitySet::SYS_PTRACE)
            }),
        }
    }

    /// True for root (euid 0).
    pub fn is_root(self) -> bool {
        self.euid == 0
    }
}

/// Why the kernel refused a process's `smaps_rollup` (EACCES), one counter
/// per cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Denied {
    /// Not root, and the process belongs to another user: root can read it.
    pub other_user: usize,
    /// Not root, same user, yet refused: the process is not dumpable (a
    /// setuid/setcap program, or `prctl(PR_SET_DUMPABLE, 0)`) or holds
    /// capabilities the reader lacks.
    pub not_dumpable: usize,
    /// Root without `CAP_SYS_PTRACE` (a container that drops it), reading a
    /// process with capabilities it does not have.
    pub root_without_cap_sys_ptrace: usize,
    /// Root with `CAP_SYS_PTRACE` and still refused: a security module
    /// (Landlock, Yama, SELinux, AppArmor) or another user namespace.
    pub root_refused: usize,
    /// The status file could not be read either: no way to tell.
    pub unknown: usize,
}

/// What a refused process turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeniedAs {
    /// A kernel thread (no `VmSize`): no user memory, nothing lost.
    KernelThread,
    /// A user process, refused for this reason (a [`Denied`] field name).
    Refused(DeniedReason),
}

/// One cause of a refusal; see the fields of [`Denied`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeniedReason {
    /// [`Denied::other_user`].
    OtherUser,
    /// [`Denied::not_dumpable`].
    NotDumpable,
    /// [`Denied::root_without_cap_sys_ptrace`].
    RootWithoutCapSysPtrace,
    /// [`Denied::root_refused`].
    RootRefused,
    /// [`Denied::unknown`].
    Unknown,
}

impl Denied {
    /// Classify one refusal from the reader and the process's parsed
    /// `/proc/<pid>/status` (`None` when that was refused too). No I/O.
    pub fn classify(reader: Reader, status: Option<&process::Status>) -> DeniedAs {
        let Some(status) = status else {
            return DeniedAs::Refused(DeniedReason::Unknown);
        };
        // Kernel threads have no user memory, hence no `VmSize`.
        if status.vm_size_kb.is_none() {
            return DeniedAs::KernelThread;
        }
        let reason = if reader.is_root() {
            if reader.cap_sys_ptrace {
                DeniedReason::RootRefused
            } else {
                DeniedReason::RootWithoutCapSysPtrace
            }
        } else {
            // The kernel requires real, effective and saved uid to match.
            match status.uid {
                Some([r, e, s, _]) if [r, e, s].iter().all(|u| *u == reader.euid) => {
                    DeniedReason::NotDumpable
                }
                _ => DeniedReason::OtherUser,
            }
        };
        DeniedAs::Refused(reason)
    }

    /// Count one refusal.
    pub fn add(&mut self, reason: DeniedReason) {
        let n = match reason {
            DeniedReason::OtherUser => &mut self.other_user,
            DeniedReason::NotDumpable => &mut self.not_dumpable,
            DeniedReason::RootWithoutCapSysPtrace => &mut self.root_without_cap_sys_ptrace,
            DeniedReason::RootRefused => &mut self.root_refused,
            DeniedReason::Unknown => &mut self.unknown,
        };
        *n += 1;
    }

    /// All refusals.
    pub fn total(&self) -> usize {
        self.other_user
            + self.not_dumpable
            + self.root_without_cap_sys_ptrace
            + self.root_refused
            + self.unknown
    }

    /// Each non-zero count with its explanation, for a report.
    pub fn explained(&self) -> Vec<(usize, &'static str)> {
        [
            (
                self.other_user,
                "belong to another user (run as root to read them)",
            ),
            (
                self.not_dumpable,
                "are yours but not dumpable (setuid/setcap programs or prctl(PR_SET_DUMPABLE, 0)) or hold capabilities you lack (run as root)",
            ),
            (
                self.root_without_cap_sys_ptrace,
                "were refused to root: this root lacks CAP_SYS_PTRACE (a container that drops it) and the processes hold capabilities it does not have",
            ),
            (
                self.root_refused,
                "were refused by the kernel's ptrace access check although running as root with CAP_SYS_PTRACE: a security module (Landlock, Yama, SELinux, AppArmor) or another user namespace forbids it",
            ),
            (
                self.unknown,
                "were refused, and so was their status file: no way to tell why",
            ),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .collect()
    }
}

/// What happened to a process while reading.
enum Read {
    Ok(ProcRaw),
    KernelThread,
    Vanished,
    Denied(DeniedReason),
}

fn vanished(e: &KernelError) -> bool {
    match e {
        KernelError::Missing { .. } => true,
        // ESRCH: the task exited between open and read.
        KernelError::Io { source, .. } => source.raw_os_error() == Some(libc::ESRCH),
        _ => false,
    }
}

fn read_one(fs: &KernelFs, reader: Reader, pid: u32) -> Result<Read, MeasureError> {
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
        Err(KernelError::NotAllowed { .. }) => {
            return Ok(match fs.read(&format!("{base}/status")) {
                Err(e) if vanished(&e) => Read::Vanished,
                status => match Denied::classify(
                    reader,
                    status
                        .ok()
                        .and_then(|t| process::parse_status(&format!("{base}/status"), &t).ok())
                        .as_ref(),
                ) {
                    DeniedAs::KernelThread => Read::KernelThread,
                    DeniedAs::Refused(why) => Read::Denied(why),
                },
            })
        }
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
    /// Processes whose smaps_rollup the kernel refused, by cause.
    pub denied: Denied,
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
    /// Scan every `/proc/<pid>` below the root, as this process.
    pub fn read(fs: &KernelFs) -> Result<Result<ProcScan, ScanUnavailable>, MeasureError> {
        Self::read_as(fs, Reader::current())
    }

    /// Scan every `/proc/<pid>` below the root; refusals are explained as
    /// they apply to `reader`.
    pub fn read_as(
        fs: &KernelFs,
        reader: Reader,
    ) -> Result<Result<ProcScan, ScanUnavailable>, MeasureError> {
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
                            .map(|&pid| read_one(fs, reader, pid))
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
                Read::Denied(why) => scan.denied.add(why),
            }
        }
        if scan.procs.is_empty() && scan.denied.total() == 0 && scan.kernel_threads == 0 {
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
    /// Processes whose smaps_rollup the kernel refused, by cause.
    pub denied: Denied,
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
