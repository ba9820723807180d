//! Kernel access through one root prefix.
//!
//! Every read and write Lever makes to sysfs, procfs or `/dev` goes through a
//! [`KernelFs`]. It is built once with a root directory (`/` on a device, a
//! simulated board's directory in tests and demos) and resolves every absolute
//! kernel path (`/sys/...`, `/proc/...`, `/dev/...`) below that root, so the
//! whole tool can run against a fake tree.
//!
//! Errors keep the errno classes distinct, because they mean different things
//! to a user: a missing node ([`KernelError::Missing`], ENOENT) means the
//! kernel does not support the feature here; [`KernelError::NotAllowed`]
//! (EACCES/EPERM) means we lack the privilege; [`KernelError::Rejected`]
//! (EINVAL, ERANGE, EBUSY) means the kernel refused the value we wrote.
//!
//! ```
//! use lever_kernel::{KernelFs, WriteOutcome};
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/proc/sys/vm/swappiness", "60\n").unwrap();
//! assert_eq!(fs.read_i64("/proc/sys/vm/swappiness").unwrap(), 60);
//! assert_eq!(fs.write("/proc/sys/vm/swappiness", "100").unwrap(), WriteOutcome::Written);
//! assert_eq!(fs.write("/proc/sys/vm/swappiness", "100").unwrap(), WriteOutcome::Unchanged);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::fmt;
use std::fs;
use std::io::{self, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

mod node;
pub use node::Node;

/// Errors from reading or writing a kernel node. Every variant names the
/// kernel path (as the kernel sees it, without the root prefix) it failed on.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The node does not exist (ENOENT): the feature is not supported here.
    #[error("{path}: not available here (no such node)")]
    Missing {
        /// Kernel path of the node.
        path: String,
    },
    /// The caller lacks permission (EACCES/EPERM).
    #[error("{path}: not allowed to {op} (need root or write access): {source}")]
    NotAllowed {
        /// Kernel path of the node.
        path: String,
        /// `read` or `write`.
        op: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// The kernel refused the value (EINVAL, ERANGE, EBUSY, ...).
    #[error("{path}: kernel rejected value {value:?}: {source}")]
    Rejected {
        /// Kernel path of the node.
        path: String,
        /// The value that was refused.
        value: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The node's content could not be parsed as expected.
    #[error("{path}: cannot parse {content:?} as {expected}")]
    Parse {
        /// Kernel path of the node.
        path: String,
        /// What was read.
        content: String,
        /// What we expected (e.g. "an integer").
        expected: &'static str,
    },
    /// Any other I/O error.
    #[error("{path}: {op} failed: {source}")]
    Io {
        /// Kernel path of the node.
        path: String,
        /// The operation (`read`, `write`, `list`, `create`).
        op: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// A kernel path that is not absolute or tries to leave the root.
    #[error("{path}: not an absolute kernel path inside the root")]
    BadPath {
        /// The offending path.
        path: String,
    },
    /// A root prefix that is not a kernel tree: missing, not a directory,
    /// or with neither `sys/` nor `proc/` below it.
    #[error("--root {}: {why}", root.display())]
    BadRoot {
        /// The root given.
        root: PathBuf,
        /// What is wrong with it.
        why: &'static str,
    },
}

impl KernelError {
    /// True when the node does not exist (the feature is unsupported here).
    pub fn is_missing(&self) -> bool {
        matches!(self, KernelError::Missing { .. })
    }

    /// The kernel path this error is about.
    pub fn path(&self) -> &str {
        match self {
            KernelError::Missing { path }
            | KernelError::NotAllowed { path, .. }
            | KernelError::Rejected { path, .. }
            | KernelError::Parse { path, .. }
            | KernelError::Io { path, .. }
            | KernelError::BadPath { path } => path,
            KernelError::BadRoot { root, .. } => root.to_str().unwrap_or("?"),
        }
    }

    fn from_io(path: &str, op: &'static str, value: Option<&str>, source: io::Error) -> Self {
        let path = path.to_string();
        match source.kind() {
            ErrorKind::NotFound => KernelError::Missing { path },
            ErrorKind::PermissionDenied => KernelError::NotAllowed { path, op, source },
            _ => match (source.raw_os_error(), value) {
                // EPERM is reported as "Other" by some std versions.
                (Some(1), _) => KernelError::NotAllowed { path, op, source },
                // EINVAL, EBUSY, ERANGE, EDOM on a write: the kernel said no to the value.
                (Some(22 | 16 | 34 | 33), Some(v)) => KernelError::Rejected {
                    path,
                    value: v.to_string(),
                    source,
                },
                _ => KernelError::Io { path, op, source },
            },
        }
    }
}

/// What a [`KernelFs::write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The node already held the value; nothing was written.
    Unchanged,
    /// The value was written and read back identical.
    Written,
    /// The value was written, but reading back shows the kernel stored
    /// something else (e.g. a frequency rounded to the table, a clamp).
    Stored {
        /// What we wrote.
        requested: String,
        /// What the node holds now.
        stored: String,
    },
    /// The value was written to a write-only node; no read-back possible.
    WrittenUnverified,
}

/// Access to sysfs, procfs and `/dev` below one root prefix.
#[derive(Clone)]
pub struct KernelFs {
    root: PathBuf,
}

impl fmt::Debug for KernelFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelFs({})", self.root.display())
    }
}

/// Well-known kernel directories, as the kernel names them. These are the only
/// spellings of `/sys` and `/proc` in Lever; everything else joins onto them.
pub mod paths {
    /// sysfs mount point.
    pub const SYS: &str = "/sys";
    /// procfs mount point.
    pub const PROC: &str = "/proc";
    /// devtmpfs mount point.
    pub const DEV: &str = "/dev";
    /// CPU devices (`cpuN/`, `cpufreq/policyN`, `online`, ...).
    pub const CPU: &str = "/sys/devices/system/cpu";
    /// cpufreq policies.
    pub const CPUFREQ: &str = "/sys/devices/system/cpu/cpufreq";
    /// Kernel sysctls.
    pub const SYSCTL_KERNEL: &str = "/proc/sys/kernel";
    /// VM sysctls.
    pub const SYSCTL_VM: &str = "/proc/sys/vm";
    /// Device tree, as exported by the kernel.
    pub const DEVICE_TREE: &str = "/proc/device-tree";
    /// KGSL (Adreno) GPU class directory.
    pub const KGSL: &str = "/sys/class/kgsl";
    /// devfreq class directory.
    pub const DEVFREQ: &str = "/sys/class/devfreq";
    /// Thermal class directory (`thermal_zoneN`, `cooling_deviceN`).
    pub const THERMAL: &str = "/sys/class/thermal";
    /// PM QoS CPU DMA latency device.
    pub const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";
}

impl KernelFs {
    /// Access below `root` (`/` for the running system).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        KernelFs { root: root.into() }
    }

    /// Access below `root`, after checking that it looks like a kernel
    /// tree: an existing directory with `sys/` or `proc/` in it. A typo in
    /// `--root` is an error here instead of an empty machine later (no
    /// resources, a "clean" journal, a daemon with nothing to manage).
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, KernelError> {
        let root = root.into();
        let bad = |why| KernelError::BadRoot {
            root: root.clone(),
            why,
        };
        match fs::metadata(&root) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(bad("no such directory")),
            Err(_) => return Err(bad("cannot be read")),
            Ok(m) if !m.is_dir() => return Err(bad("not a directory")),
            Ok(_) => {}
        }
        if !root.join("sys").is_dir() && !root.join("proc").is_dir() {
            return Err(bad(
                "holds neither sys/ nor proc/, so it is not a kernel tree (make one with `lever sim create BOARD DIR`)",
            ));
        }
        Ok(Self::new(root))
    }

    /// The running system's kernel (root `/`).
    pub fn system() -> Self {
        Self::new("/")
    }

    /// The root prefix.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when the root is `/`, i.e. this is the real machine.
    pub fn is_system(&self) -> bool {
        self.root == Path::new("/")
    }

    /// Resolve an absolute kernel path (e.g. `/sys/devices/system/cpu/online`)
    /// to the host path below the root.
    pub fn resolve(&self, kernel_path: &str) -> Result<PathBuf, KernelError> {
        let rel = kernel_path
            .strip_prefix('/')
            .filter(|r| !r.split('/').any(|c| c == ".."))
            .ok_or_else(|| KernelError::BadPath {
                path: kernel_path.to_string(),
            })?;
        Ok(self.root.join(rel))
    }

    /// True when the node exists.
    pub fn exists(&self, kernel_path: &str) -> bool {
        self.resolve(kernel_path)
            .map(|p| p.exists())
            .unwrap_or(false)
    }

    /// Read a node as text, with the trailing newline removed.
    pub fn read(&self, kernel_path: &str) -> Result<String, KernelError> {
        let host = self.resolve(kernel_path)?;
        let err = |e| KernelError::from_io(kernel_path, "read", None, e);
        // open + read until EOF into a page-sized buffer: sysfs attributes
        // fit one read, and unlike `fs::read_to_string` this does not stat
        // the file first (one syscall fewer on the daemon's hot path).
        let mut f = fs::File::open(&host).map_err(err)?;
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match f.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(err(e)),
            }
        }
        Ok(text_of(bytes))
    }

    /// Read a node's raw bytes (for binary nodes such as
    /// `/dev/cpu_dma_latency`, which reads as a native-endian `s32`).
    pub fn read_bytes(&self, kernel_path: &str) -> Result<Vec<u8>, KernelError> {
        let host = self.resolve(kernel_path)?;
        fs::read(&host).map_err(|e| KernelError::from_io(kernel_path, "read", None, e))
    }

    /// Read a node if it exists: `Ok(None)` for a missing node.
    pub fn read_optional(&self, kernel_path: &str) -> Result<Option<String>, KernelError> {
        match self.read(kernel_path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.is_missing() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Read a node holding one integer.
    pub fn read_i64(&self, kernel_path: &str) -> Result<i64, KernelError> {
        let text = self.read(kernel_path)?;
        parse_i64(kernel_path, &text)
    }

    /// Read a node holding whitespace-separated integers, such as
    /// `scaling_available_frequencies` (`300000 403200 ... 1958400 `).
    pub fn read_i64_list(&self, kernel_path: &str) -> Result<Vec<i64>, KernelError> {
        let text = self.read(kernel_path)?;
        text.split_whitespace()
            .map(|w| parse_i64(kernel_path, w))
            .collect()
    }

    /// Names of the entries of a directory, sorted. `Missing` when absent.
    pub fn list_dir(&self, kernel_path: &str) -> Result<Vec<String>, KernelError> {
        let host = self.resolve(kernel_path)?;
        let rd =
            fs::read_dir(&host).map_err(|e| KernelError::from_io(kernel_path, "list", None, e))?;
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| KernelError::from_io(kernel_path, "list", None, e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort_by(|a, b| natural_cmp(a, b));
        Ok(names)
    }

    /// Write `value` to a node, but only when it differs from the current
    /// content; then read it back and report whether the kernel kept it.
    pub fn write(&self, kernel_path: &str, value: &str) -> Result<WriteOutcome, KernelError> {
        let current = before_write(self.read(kernel_path))?;
        self.write_known(kernel_path, value, current.as_deref())
    }

    /// [`KernelFs::write`] when the caller already knows what the node
    /// holds (`current`, as [`KernelFs::read`] returns it): saves one read.
    pub fn write_known(
        &self,
        kernel_path: &str,
        value: &str,
        current: Option<&str>,
    ) -> Result<WriteOutcome, KernelError> {
        let Some(value) = to_write(value, current) else {
            return Ok(WriteOutcome::Unchanged);
        };
        self.write_raw(kernel_path, value)?;
        read_back(value, self.read(kernel_path))
    }

    /// Write without comparing or reading back: one `write(2)` of the value
    /// and a newline, exactly as `echo value > node` does, to an existing
    /// node (never creates it). sysfs and procfs parsers accept the newline,
    /// and on a simulated tree the file then reads back byte for byte as the
    /// kernel would show it.
    pub fn write_raw(&self, kernel_path: &str, value: &str) -> Result<(), KernelError> {
        let value = value.trim_end_matches('\n');
        let host = self.resolve(kernel_path)?;
        let mut f = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&host)
            .map_err(|e| KernelError::from_io(kernel_path, "write", Some(value), e))?;
        let mut line = String::with_capacity(value.len() + 1);
        line.push_str(value);
        line.push('\n');
        f.write_all(line.as_bytes())
            .map_err(|e| KernelError::from_io(kernel_path, "write", Some(value), e))
    }

    /// Create a regular file (and its parent directories) with `content`.
    /// Used to build simulated boards and test fixtures; refuses to run
    /// against the real system root.
    pub fn create_node(&self, kernel_path: &str, content: &str) -> Result<(), KernelError> {
        if self.is_system() {
            return Err(KernelError::Io {
                path: kernel_path.to_string(),
                op: "create",
                source: io::Error::new(
                    ErrorKind::PermissionDenied,
                    "refusing to create nodes in the real system root",
                ),
            });
        }
        let host = self.resolve(kernel_path)?;
        if let Some(parent) = host.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| KernelError::from_io(kernel_path, "create", None, e))?;
        }
        fs::write(&host, content).map_err(|e| KernelError::from_io(kernel_path, "create", None, e))
    }
}

/// A node's bytes as text: lossy UTF-8, trailing newlines and NULs removed.
fn text_of(bytes: Vec<u8>) -> String {
    let mut text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    while text.ends_with('\n') || text.ends_with('\0') {
        text.pop();
    }
    text
}

/// What a node read before a write holds; `None` for a write-only node
/// (e.g. some trigger files), which cannot be read first.
fn before_write(read: Result<String, KernelError>) -> Result<Option<String>, KernelError> {
    match read {
        Ok(c) => Ok(Some(c)),
        Err(KernelError::NotAllowed { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The value to write (without its trailing newline), or `None` when the
/// node already holds it.
fn to_write<'a>(value: &'a str, current: Option<&str>) -> Option<&'a str> {
    let value = value.trim_end_matches('\n');
    (current != Some(value)).then_some(value)
}

/// The outcome of a write of `value`, given the read that followed it.
fn read_back(value: &str, after: Result<String, KernelError>) -> Result<WriteOutcome, KernelError> {
    match after {
        Ok(stored) if stored == value => Ok(WriteOutcome::Written),
        Ok(stored) => Ok(WriteOutcome::Stored {
            requested: value.to_string(),
            stored,
        }),
        // Write-only nodes cannot be read back.
        Err(KernelError::NotAllowed { .. }) => Ok(WriteOutcome::WrittenUnverified),
        Err(e) => Err(e),
    }
}

fn parse_i64(path: &str, text: &str) -> Result<i64, KernelError> {
    lever_text::parse_int(text).ok_or_else(|| KernelError::Parse {
        path: path.to_string(),
        content: text.to_string(),
        expected: "an integer",
    })
}

/// Compare names so that `cpu10` sorts after `cpu9` and `policy4` after
/// `policy0`: runs of digits compare by value.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let na = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let nb = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let va = std::str::from_utf8(&a[..na]).unwrap_or("0");
                let vb = std::str::from_utf8(&b[..nb]).unwrap_or("0");
                let ord = va
                    .trim_start_matches('0')
                    .len()
                    .cmp(&vb.trim_start_matches('0').len())
                    .then_with(|| va.trim_start_matches('0').cmp(vb.trim_start_matches('0')));
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
                a = &a[na..];
                b = &b[nb..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

pub use lever_text::{format_cpu_list, parse_cpu_list};

/// Format CPUs as the kernel prints a cpumask (`%*pb`): hex, lowest CPU in
/// the lowest bit, `nr_cpus` bits wide, a comma between 32-bit groups:
/// CPUs 0-6 of 8 → `7f`; CPU 0 of 40 → `00,00000001`. The form
/// `/sys/devices/virtual/workqueue/cpumask` and `/proc/irq/N/smp_affinity`
/// read back, so a written mask compares equal to what the kernel shows.
/// CPUs at or above `nr_cpus` are left out.
pub fn format_cpu_mask(cpus: &[u32], nr_cpus: u32) -> String {
    let digits = nr_cpus.max(1).div_ceil(4) as usize;
    let mut nibbles = vec![0u8; digits];
    for &cpu in cpus.iter().filter(|&&c| c < nr_cpus) {
        nibbles[(cpu / 4) as usize] |= 1 << (cpu % 4);
    }
    let mut out = String::with_capacity(digits + digits / 8);
    for (i, n) in nibbles.iter().enumerate().rev() {
        out.push(char::from_digit(u32::from(*n), 16).unwrap_or('0'));
        if i % 8 == 0 && i > 0 {
            out.push(',');
        }
    }
    out
}

/// Parse a hex cpumask as sysfs prints it (`ff`, `00000000,000000ff`) into
/// the CPUs it holds, ascending; `None` on anything but hex digits and
/// commas. The inverse of [`format_cpu_mask`].
pub fn parse_cpu_mask(mask: &str) -> Option<Vec<u32>> {
    let hex: String = mask.trim().chars().filter(|c| *c != ',').collect();
    let mut cpus = Vec::new();
    for (i, c) in hex.chars().rev().enumerate() {
        let nibble = c.to_digit(16)?;
        for b in 0..4 {
            if nibble & (1 << b) != 0 {
                cpus.push((i * 4 + b) as u32);
            }
        }
    }
    cpus.sort_unstable();
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, KernelFs) {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path());
        (dir, fs)
    }

    #[test]
    fn integers_read_as_lever_text_reads_them() {
        let (_d, fs) = tree();
        for (text, want) in [("42\n", 42), ("-1\n", -1), ("0x1F\n", 31)] {
            fs.create_node("/proc/sys/x", text).unwrap();
            assert_eq!(fs.read_i64("/proc/sys/x").unwrap(), want, "{text:?}");
        }
        // Accepted since the kernel crate reads integers through lever-text.
        fs.create_node("/proc/sys/x", "+5\n").unwrap();
        assert_eq!(fs.read_i64("/proc/sys/x").unwrap(), 5);
        fs.create_node("/proc/sys/x", "0X1f\n").unwrap();
        assert_eq!(fs.read_i64("/proc/sys/x").unwrap(), 31);
        fs.create_node("/proc/sys/x", "0X10 -0x2 +3\n").unwrap();
        assert_eq!(fs.read_i64_list("/proc/sys/x").unwrap(), vec![16, -2, 3]);
        fs.create_node("/proc/sys/x", "fast\n").unwrap();
        let e = fs.read_i64("/proc/sys/x").unwrap_err();
        assert!(matches!(e, KernelError::Parse { .. }), "{e:?}");
    }

    #[test]
    fn missing_node_is_missing_with_path() {
        let (_d, fs) = tree();
        let err = fs
            .read("/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq")
            .unwrap_err();
        assert!(err.is_missing());
        assert_eq!(
            err.path(),
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq"
        );
        assert!(err.to_string().contains("not available here"));
        assert!(fs.read_optional("/proc/nothing").unwrap().is_none());
    }

    #[test]
    fn write_only_when_changed_and_detect_kernel_rewrite() {
        let (_d, fs) = tree();
        fs.create_node("/proc/sys/vm/swappiness", "60\n").unwrap();
        assert_eq!(
            fs.write("/proc/sys/vm/swappiness", "60").unwrap(),
            WriteOutcome::Unchanged
        );
        assert_eq!(
            fs.write("/proc/sys/vm/swappiness", "100\n").unwrap(),
            WriteOutcome::Written
        );
        assert_eq!(fs.read_i64("/proc/sys/vm/swappiness").unwrap(), 100);
    }

    #[test]
    fn permission_denied_is_not_allowed() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, fs) = tree();
        fs.create_node("/sys/x", "1").unwrap();
        let host = fs.resolve("/sys/x").unwrap();
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o444)).unwrap();
        // root ignores file modes; only check when we are not root.
        if std::fs::OpenOptions::new().write(true).open(&host).is_ok() {
            eprintln!("skipped: running as root, file modes do not deny writes");
            return;
        }
        let err = fs.write_raw("/sys/x", "2").unwrap_err();
        assert!(matches!(err, KernelError::NotAllowed { .. }), "{err:?}");
    }

    #[test]
    fn errno_classes_are_distinct() {
        let e = KernelError::from_io(
            "/sys/a",
            "write",
            Some("9"),
            io::Error::from_raw_os_error(22),
        );
        assert!(matches!(e, KernelError::Rejected { ref value, .. } if value == "9"));
        let e = KernelError::from_io(
            "/sys/a",
            "write",
            Some("9"),
            io::Error::from_raw_os_error(1),
        );
        assert!(matches!(e, KernelError::NotAllowed { .. }));
        let e = KernelError::from_io(
            "/sys/a",
            "write",
            Some("9"),
            io::Error::from_raw_os_error(13),
        );
        assert!(matches!(e, KernelError::NotAllowed { .. }));
        let e = KernelError::from_io("/sys/a", "read", None, io::Error::from_raw_os_error(2));
        assert!(e.is_missing());
        let e = KernelError::from_io("/sys/a", "read", None, io::Error::from_raw_os_error(5));
        assert!(matches!(e, KernelError::Io { .. }));
    }

    #[test]
    fn paths_cannot_escape_root() {
        let (_d, fs) = tree();
        assert!(matches!(
            fs.resolve("sys/x"),
            Err(KernelError::BadPath { .. })
        ));
        assert!(matches!(
            fs.resolve("/sys/../../etc"),
            Err(KernelError::BadPath { .. })
        ));
    }

    #[test]
    fn refuses_to_create_in_real_root() {
        assert!(KernelFs::system()
            .create_node("/tmp/lever-never", "x")
            .is_err());
    }

    #[test]
    fn lists_and_parses() {
        let (_d, fs) = tree();
        fs.create_node("/sys/devices/system/cpu/cpufreq/policy4/x", "")
            .unwrap();
        fs.create_node("/sys/devices/system/cpu/cpufreq/policy0/x", "")
            .unwrap();
        fs.create_node("/sys/devices/system/cpu/cpufreq/policy10/x", "")
            .unwrap();
        assert_eq!(
            fs.list_dir(paths::CPUFREQ).unwrap(),
            vec!["policy0", "policy4", "policy10"]
        );
        fs.create_node("/f", "300000 403200 1958400 \n").unwrap();
        assert_eq!(
            fs.read_i64_list("/f").unwrap(),
            vec![300000, 403200, 1958400]
        );
        assert_eq!(parse_cpu_list("0-3,7"), Some(vec![0, 1, 2, 3, 7]));
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 7]), "0-3,7");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(format_cpu_mask(&[0, 1, 2, 3, 4, 5, 6], 8), "7f");
        assert_eq!(format_cpu_mask(&[0, 1, 2, 4, 5, 6, 7], 8), "f7");
        assert_eq!(format_cpu_mask(&[0], 40), "00,00000001");
        assert_eq!(format_cpu_mask(&[], 4), "0");
        assert_eq!(parse_cpu_mask("00,00000001"), Some(vec![0]));
        assert_eq!(parse_cpu_mask("E0"), Some(vec![5, 6, 7]));
        assert_eq!(parse_cpu_mask("xz"), None);
        assert_eq!(
            parse_cpu_mask(&format_cpu_mask(&[1, 9, 33], 64)),
            Some(vec![1, 9, 33])
        );
    }

    #[test]
    fn open_checks_that_the_root_is_a_kernel_tree() {
        let dir = tempfile::tempdir().unwrap();
        let why = |root: &Path| match KernelFs::open(root) {
            Err(KernelError::BadRoot { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(why(&dir.path().join("typo")), "no such directory");
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert_eq!(why(&dir.path().join("file")), "not a directory");
        assert!(why(dir.path()).starts_with("holds neither sys/ nor proc/"));
        std::fs::create_dir(dir.path().join("proc")).unwrap();
        assert_eq!(KernelFs::open(dir.path()).unwrap().root(), dir.path());
        assert!(KernelFs::open("/").is_ok());
        let e = KernelFs::open(dir.path().join("typo")).unwrap_err();
        assert!(e.to_string().starts_with("--root "), "{e}");
    }
}
