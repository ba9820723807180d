//! One process's memory and CPU time from `/proc/<pid>`: the `status`
//! figures (`VmRSS`, `VmHWM`, ...), its resident memory split by what backs
//! it (`smaps`), its `smaps_rollup` totals, and its CPU time (`stat`).
//!
//! Every read goes through a [`KernelFs`], like every reader of this crate:
//! [`KernelFs::system`] for the running machine (a process measuring itself
//! or its child reads the real `/proc`, whatever `--root` says), a fake tree
//! in tests. [`Pid::Current`] is `/proc/self`.
//!
//! ```
//! use lever_kernel::KernelFs;
//! use lever_measure::process::{self, Pid};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/proc/self/status", "Name:\tlever\nVmHWM:\t    3400 kB\nVmRSS:\t    3120 kB\n").unwrap();
//! let status = process::status(&fs, Pid::Current).unwrap();
//! assert_eq!((status.vm_rss_kb, status.vm_hwm_kb), (Some(3120), Some(3400)));
//! ```

use crate::error::{parse_err, MeasureError};
use crate::smaps::{parse_rollup, ProcRaw};
use lever_kernel::KernelFs;
use serde::Serialize;
use std::fmt;

/// Which process: a number, or the one reading (`/proc/self`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pid {
    /// The process that reads (`/proc/self`).
    Current,
    /// A process id.
    Id(u32),
}

impl Pid {
    /// `/proc/<pid>`.
    pub fn dir(self) -> String {
        format!("{}/{self}", lever_kernel::paths::PROC)
    }

    fn file(self, name: &str) -> String {
        format!("{}/{name}", self.dir())
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pid::Current => f.write_str("self"),
            Pid::Id(pid) => pid.fmt(f),
        }
    }
}

impl From<u32> for Pid {
    fn from(pid: u32) -> Pid {
        Pid::Id(pid)
    }
}

/// The memory figures of `/proc/<pid>/status`, kB; `None` where the kernel
/// prints none (a kernel thread has no `Vm*` lines).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Status {
    /// `Name`.
    pub name: String,
    /// `VmPeak`: largest virtual size.
    pub vm_peak_kb: Option<u64>,
    /// `VmSize`: virtual size.
    pub vm_size_kb: Option<u64>,
    /// `VmHWM`: largest resident set ("high water mark").
    pub vm_hwm_kb: Option<u64>,
    /// `VmRSS`: resident set now.
    pub vm_rss_kb: Option<u64>,
    /// `RssAnon`.
    pub rss_anon_kb: Option<u64>,
    /// `RssFile`.
    pub rss_file_kb: Option<u64>,
    /// `RssShmem`.
    pub rss_shmem_kb: Option<u64>,
    /// `VmSwap`.
    pub vm_swap_kb: Option<u64>,
    /// `Uid`: real, effective, saved and filesystem uid.
    pub uid: Option<[u32; 4]>,
    /// `voluntary_ctxt_switches`: times the task gave up the CPU (it
    /// blocked or slept), since it started.
    pub voluntary_ctxt_switches: Option<u64>,
    /// `nonvoluntary_ctxt_switches`: times the scheduler took the CPU away
    /// (preempted), since it started.
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

/// Read `/proc/<pid>/status`.
pub fn status(fs: &KernelFs, pid: Pid) -> Result<Status, MeasureError> {
    let path = pid.file("status");
    let text = fs.read(&path)?;
    parse_status(&path, &text)
}

/// What a context-switch line of `status` looks like.
const SWITCHES: &str = "`voluntary_ctxt_switches:\t150`";

/// Parse a `status` text.
pub fn parse_status(path: &str, text: &str) -> Result<Status, MeasureError> {
    let mut s = Status::default();
    for (i, line) in text.lines().enumerate() {
        // VmRSS:	    3120 kB
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        // voluntary_ctxt_switches:	150
        let switches = match name {
            "voluntary_ctxt_switches" => Some(&mut s.voluntary_ctxt_switches),
            "nonvoluntary_ctxt_switches" => Some(&mut s.nonvoluntary_ctxt_switches),
            _ => None,
        };
        if let Some(slot) = switches {
            let n = rest.trim().parse();
            *slot = Some(n.map_err(|_| parse_err(path, i + 1, line, SWITCHES))?);
            continue;
        }
        let slot = match name {
            "Name" => {
                s.name = rest.trim().to_string();
                continue;
            }
            // Uid:	1000	1000	1000	1000
            "Uid" => {
                let ids: Vec<u32> = rest
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                s.uid =
                    Some(ids.try_into().map_err(|_| {
                        parse_err(path, i + 1, line, "`Uid:\t1000\t1000\t1000\t1000`")
                    })?);
                continue;
            }
            "VmPeak" => &mut s.vm_peak_kb,
            "VmSize" => &mut s.vm_size_kb,
            "VmHWM" => &mut s.vm_hwm_kb,
            "VmRSS" => &mut s.vm_rss_kb,
            "RssAnon" => &mut s.rss_anon_kb,
            "RssFile" => &mut s.rss_file_kb,
            "RssShmem" => &mut s.rss_shmem_kb,
            "VmSwap" => &mut s.vm_swap_kb,
            _ => continue,
        };
        let kb = rest
            .trim()
            .strip_suffix("kB")
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| parse_err(path, i + 1, line, "`VmRSS:   3120 kB`"))?;
        *slot = Some(kb);
    }
    Ok(s)
}

/// Resident memory by what backs it (`/proc/<pid>/smaps`), kB: the
/// process's own executable, shared libraries and other mapped files, and
/// anonymous memory (heap, stacks) — the part its own data accounts for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RssSplit {
    /// Pages of the executable file.
    pub executable_kb: u64,
    /// Pages of other files (shared libraries, mapped files).
    pub libraries_kb: u64,
    /// Anonymous pages and the kernel's `[heap]`, `[stack]`, `[vdso]`.
    pub anonymous_kb: u64,
}

/// Read `/proc/<pid>/smaps` and split its resident pages; the executable is
/// the target of `/proc/<pid>/exe`.
pub fn rss_split(fs: &KernelFs, pid: Pid) -> Result<RssSplit, MeasureError> {
    let path = pid.file("smaps");
    let text = fs.read(&path)?;
    // A link, not a file: read it on the host path below the root. Where
    // it cannot be read (another user's process), the executable is the
    // first file the kernel mapped, which is where it loads it.
    let exe = fs
        .resolve(&pid.file("exe"))
        .ok()
        .and_then(|p| std::fs::read_link(p).ok())
        .map(|p| p.to_string_lossy().into_owned());
    parse_rss_split(&path, &text, exe.as_deref())
}

/// The mapped file of a `smaps` header line, `""` for anonymous memory:
/// `55ac9ced3000-55ac9cf8e000 r--p 00000000 fe:00 5326124   /usr/bin/lever`
fn mapping(line: &str) -> Option<&str> {
    let mut fields = line.split_whitespace();
    let range = fields.next()?;
    // Field lines start with `Name:`; only headers start with an address range.
    if !range.contains('-') || range.ends_with(':') {
        return None;
    }
    Some(fields.nth(4).unwrap_or(""))
}

/// Split a `smaps` text; `exe` is the executable's path when known.
pub fn parse_rss_split(
    path: &str,
    text: &str,
    exe: Option<&str>,
) -> Result<RssSplit, MeasureError> {
    let mut split = RssSplit::default();
    let mut exe = exe.map(str::to_string);
    // Each mapping is a header line and its `Field: N kB` lines, the same
    // shape as `smaps_rollup`, read by the same parser.
    let mut blocks: Vec<(&str, String)> = Vec::new();
    for line in text.lines() {
        match mapping(line) {
            Some(file) => blocks.push((file, String::new())),
            None => {
                if let Some((_, body)) = blocks.last_mut() {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    for (file, body) in blocks {
        let mut raw = ProcRaw::default();
        parse_rollup(path, &body, &mut raw)?;
        if exe.is_none() && file.starts_with('/') {
            exe = Some(file.to_string());
        }
        if Some(file) == exe.as_deref() {
            split.executable_kb += raw.rss_kb;
        } else if file.starts_with('/') {
            split.libraries_kb += raw.rss_kb;
        } else {
            split.anonymous_kb += raw.rss_kb;
        }
    }
    Ok(split)
}

/// `/proc/<pid>/smaps_rollup`: the kernel's sums over every mapping (Rss,
/// Pss, Private, Swap); see [`crate::smaps`].
pub fn rollup(fs: &KernelFs, pid: Pid) -> Result<ProcRaw, MeasureError> {
    let path = pid.file("smaps_rollup");
    let text = fs.read(&path)?;
    let mut raw = ProcRaw::default();
    parse_rollup(&path, &text, &mut raw)?;
    Ok(raw)
}

/// CPU time of a process, in clock ticks (`rustix::param::clock_ticks_per_second`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuTicks {
    /// Time in user mode (`utime`, field 14).
    pub user: u64,
    /// Time in kernel mode (`stime`, field 15).
    pub system: u64,
}

impl CpuTicks {
    /// User + system.
    pub fn total(self) -> u64 {
        self.user + self.system
    }
}

/// The fields Lever reads from `/proc/<pid>/stat` (times in clock ticks);
/// `None` where a kernel prints fewer fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stat {
    /// `comm` (field 2): the command name, at most 15 bytes, without the
    /// parentheses.
    pub comm: String,
    /// `state` (field 3): `R` running, `S` sleeping, `D` disk sleep, `Z`
    /// zombie, ...
    pub state: char,
    /// `ppid` (field 4): the parent process.
    pub ppid: Option<u32>,
    /// `utime` and `stime` (fields 14, 15).
    pub cpu: CpuTicks,
    /// `cutime` and `cstime` (fields 16, 17): the CPU of the children it
    /// has waited for (and of theirs), added when each is reaped.
    pub children: Option<CpuTicks>,
    /// `num_threads` (field 20).
    pub num_threads: Option<u64>,
    /// `starttime` (field 22): when the task started, in clock ticks after
    /// boot. Tells a new process from an old one that had the same pid.
    pub start_ticks: Option<u64>,
    /// `processor` (field 39): the CPU the task last ran on.
    pub processor: Option<u32>,
    /// `delayacct_blkio_ticks` (field 42): time the task waited for block
    /// I/O. 0 unless delay accounting is on (`kernel.task_delayacct=1` or
    /// the `delayacct` boot parameter); the task only, not its children.
    /// `None` on kernels that print fewer fields.
    pub blkio_ticks: Option<u64>,
}

/// Read `/proc/<pid>/stat`.
pub fn stat(fs: &KernelFs, pid: Pid) -> Result<Stat, MeasureError> {
    let path = pid.file("stat");
    let text = fs.read(&path)?;
    parse_stat(&path, &text)
}

/// Read the CPU time of `/proc/<pid>/stat`.
pub fn cpu_ticks(fs: &KernelFs, pid: Pid) -> Result<CpuTicks, MeasureError> {
    stat(fs, pid).map(|s| s.cpu)
}

/// Parse a `stat` line:
/// `4242 (lever daemon) S 1 4242 4242 0 -1 4194560 310 0 0 0 12 7 0 0 20 0 1 0 ...`
/// — fields are counted after `(comm)`, which may hold spaces and
/// parentheses (so the last `)` ends it): the word after it is field 3.
pub fn parse_stat(path: &str, text: &str) -> Result<Stat, MeasureError> {
    const EXPECTED: &str = "`PID (COMM) STATE ... UTIME STIME ...`";
    let line = text.lines().next().unwrap_or("");
    let bad = || parse_err(path, 1, line, EXPECTED);
    let open = line.find('(').ok_or_else(bad)?;
    let close = line.rfind(')').filter(|&c| c > open).ok_or_else(bad)?;
    let fields: Vec<&str> = line[close + 1..].split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let small = |n: usize| field(n).and_then(|v| u32::try_from(v).ok());
    Ok(Stat {
        comm: line[open + 1..close].to_string(),
        state: fields
            .first()
            .and_then(|s| s.chars().next())
            .ok_or_else(bad)?,
        ppid: small(4),
        cpu: CpuTicks {
            user: field(14).ok_or_else(bad)?,
            system: field(15).ok_or_else(bad)?,
        },
        children: field(16)
            .zip(field(17))
            .map(|(user, system)| CpuTicks { user, system }),
        num_threads: field(20),
        start_ticks: field(22),
        processor: small(39),
        blkio_ticks: field(42),
    })
}

/// Parse the CPU time of a `stat` line ([`parse_stat`]).
pub fn parse_cpu_ticks(path: &str, text: &str) -> Result<CpuTicks, MeasureError> {
    parse_stat(path, text).map(|s| s.cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    /// `/proc/<pid>/status` of a small daemon, in the layout Linux 6.x
    /// prints (x86_64), trimmed between `VmSwap` and the context switches.
    const STATUS: &str = "Name:\tlever\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n\
Pid:\t4242\nPPid:\t1\nUid:\t0\t0\t0\t0\nGroups:\t0 \nVmPeak:\t   10312 kB\nVmSize:\t   10180 kB\n\
VmLck:\t       0 kB\nVmHWM:\t    3412 kB\nVmRSS:\t    2996 kB\nRssAnon:\t     388 kB\n\
RssFile:\t    2608 kB\nRssShmem:\t       0 kB\nVmData:\t     544 kB\nVmSwap:\t       0 kB\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t545\n";

    /// `/proc/<pid>/smaps` of the same daemon in the kernel's layout: its
    /// executable, libc, the heap and an unnamed anonymous mapping (most
    /// fields trimmed; the header of an unnamed mapping ends in a space).
    const SMAPS: &str = "\
55ac9ced3000-55ac9cf8e000 r--p 00000000 fe:00 5326124                    /usr/bin/lever
Size:                748 kB
Rss:                 612 kB
Pss:                 612 kB
VmFlags: rd mr mw me dw sd
7f1e2c200000-7f1e2c228000 r--p 00000000 fe:00 3146019                    /usr/lib/x86_64-linux-gnu/libc.so.6
Size:                160 kB
Rss:                 156 kB
Pss:                   4 kB
THPeligible:    0
VmFlags: rd mr mw me sd
55ac9d9a4000-55ac9d9c5000 rw-p 00000000 00:00 0                          [heap]
Size:                132 kB
Rss:                  48 kB
Pss:                  48 kB
VmFlags: rd wr mr mw me ac sd
7ffd1ad50000-7ffd1ad71000 rw-p 00000000 00:00 0 
Size:                132 kB
Rss:                  12 kB
";

    /// `/proc/<pid>/stat` of a process whose name holds a space and a `)`.
    const STAT: &str = "4242 (lever d) x) S 1 4242 4242 0 -1 4194560 310 0 0 0 12 7 0 0 20 0 1 0 9876 10424320 749 18446744073709551615\n";

    #[test]
    fn status_figures() {
        let tree = FakeTree::with(&[("/proc/4242/status", STATUS)]);
        let s = status(tree.fs(), Pid::Id(4242)).unwrap();
        assert_eq!(s.name, "lever");
        assert_eq!((s.vm_rss_kb, s.vm_hwm_kb), (Some(2996), Some(3412)));
        assert_eq!((s.vm_size_kb, s.vm_peak_kb), (Some(10180), Some(10312)));
        assert_eq!(
            (s.rss_anon_kb, s.rss_file_kb, s.rss_shmem_kb, s.vm_swap_kb),
            (Some(388), Some(2608), Some(0), Some(0))
        );
        assert_eq!(s.uid, Some([0, 0, 0, 0]));
        assert_eq!(
            (s.voluntary_ctxt_switches, s.nonvoluntary_ctxt_switches),
            (Some(150), Some(545))
        );
        let err = parse_status("/proc/9/status", "voluntary_ctxt_switches:\tx\n").unwrap_err();
        assert!(err.to_string().starts_with("/proc/9/status:1:"), "{err}");
        let uid = parse_status("/proc/9/status", "Uid:\t1000\t1000\t0\t1000\n").unwrap();
        assert_eq!(uid.uid, Some([1000, 1000, 0, 1000]));
        assert!(parse_status("/proc/9/status", "Uid:\t1000\t1000\n").is_err());
        // A kernel thread prints no Vm lines: none is invented.
        let k = parse_status("/proc/2/status", "Name:\tkthreadd\nState:\tS\n").unwrap();
        assert_eq!((k.name.as_str(), k.vm_rss_kb), ("kthreadd", None));
        let err = parse_status("/proc/9/status", "Name:\tx\nVmRSS:\tlots\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "/proc/9/status:2: cannot parse \"VmRSS:\\tlots\": expected `VmRSS:   3120 kB`"
        );
    }

    #[test]
    fn self_is_proc_self() {
        assert_eq!(Pid::Current.dir(), "/proc/self");
        assert_eq!(Pid::from(7).dir(), "/proc/7");
        let tree = FakeTree::with(&[("/proc/self/stat", STAT)]);
        assert_eq!(cpu_ticks(tree.fs(), Pid::Current).unwrap().total(), 19);
        // A missing process is the kernel error with its path.
        let err = status(tree.fs(), Pid::Id(9)).unwrap_err();
        assert!(
            err.is_missing() && err.to_string().contains("/proc/9/status"),
            "{err}"
        );
    }

    #[test]
    fn rss_split_by_what_backs_it() {
        let split = parse_rss_split("/proc/4242/smaps", SMAPS, Some("/usr/bin/lever")).unwrap();
        assert_eq!(
            split,
            RssSplit {
                executable_kb: 612,
                libraries_kb: 156,
                anonymous_kb: 48 + 12,
            }
        );
        // Without the exe link, the first mapped file is the executable.
        assert_eq!(parse_rss_split("/p", SMAPS, None).unwrap(), split);
        let err =
            parse_rss_split("/proc/1/smaps", "5-6 r--p 0 0:0 0\nRss:   x kB\n", None).unwrap_err();
        assert!(err.to_string().starts_with("/proc/1/smaps:"), "{err}");
    }

    #[test]
    fn rss_split_reads_the_exe_link() {
        let tree = FakeTree::with(&[("/proc/4242/smaps", SMAPS)]);
        // The exe link names libc here, so libc's pages count as the
        // executable's: the link, not the mapping order, decides.
        std::os::unix::fs::symlink(
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            tree.host_path("/proc/4242/exe"),
        )
        .unwrap();
        let split = rss_split(tree.fs(), Pid::Id(4242)).unwrap();
        assert_eq!((split.executable_kb, split.libraries_kb), (156, 612));
    }

    #[test]
    fn rollup_totals() {
        // `/proc/<pid>/smaps_rollup` of the same daemon.
        let tree = FakeTree::with(&[(
            "/proc/4242/smaps_rollup",
            "55ac9ced3000-7ffd1ad71000 ---p 00000000 00:00 0                          [rollup]\n\
Rss:                2996 kB\nPss:                 981 kB\nPss_Anon:            388 kB\n\
Private_Clean:       612 kB\nPrivate_Dirty:       388 kB\nSwap:                  0 kB\n",
        )]);
        let r = rollup(tree.fs(), Pid::Id(4242)).unwrap();
        assert_eq!((r.rss_kb, r.pss_kb, r.private_kb), (2996, 981, 1000));
    }

    #[test]
    fn cpu_ticks_after_a_comm_with_spaces_and_parentheses() {
        assert_eq!(
            parse_cpu_ticks("/proc/4242/stat", STAT).unwrap(),
            CpuTicks {
                user: 12,
                system: 7
            }
        );
        let err = parse_cpu_ticks("/proc/1/stat", "1 (init) S 0\n").unwrap_err();
        assert!(err.to_string().starts_with("/proc/1/stat:1:"), "{err}");
    }

    #[test]
    fn blkio_ticks_from_a_real_stat_line() {
        // /proc/self/stat of a `cat` on this VM (kernel 6.18.44): delay
        // accounting is off, field 42 is 0.
        let real = "20383 (cat) R 20340 20340 10933 0 -1 4194304 104 0 1 0 0 0 0 0 20 0 1 0 \
                    295008 3133440 416 18446744073709551615 93856595894272 93856595914153 \
                    140732423005168 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 93856595930160 \
                    93856595931776 93856789966848 140732423011000 140732423011020 \
                    140732423011020 140732423012331 0\n";
        assert_eq!(parse_stat("s", real).unwrap().blkio_ticks, Some(0));
        // The same line with field 42 set to 31 and a comm with a space and
        // parentheses.
        let edited =
            real.replacen("(cat)", "(a (b) c)", 1)
                .replacen(" 17 1 0 0 0 ", " 17 1 0 0 31 ", 1);
        let stat = parse_stat("s", &edited).unwrap();
        assert_eq!(stat.blkio_ticks, Some(31));
        assert_eq!((stat.comm.as_str(), stat.state), ("a (b) c", 'R'));
        assert_eq!((stat.ppid, stat.num_threads), (Some(20340), Some(1)));
        // starttime (22) and processor (39): 295008 ticks after boot, CPU 1.
        assert_eq!((stat.start_ticks, stat.processor), (Some(295008), Some(1)));
        assert_eq!(stat.cpu, CpuTicks { user: 0, system: 0 });
        assert!(parse_stat("s", "12 (x) S 1 2").is_err());
        assert!(parse_stat("s", "no paren").is_err());
    }
}
