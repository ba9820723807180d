//! A node kept open for repeated reads and writes.
//!
//! The daemon writes the same few nodes over and over. Opening a node by
//! path costs a path walk and two more system calls each time (3.5 µs for
//! open + read + close on tmpfs here, 5.6 µs on sysfs, against 0.4–0.6 µs
//! for one `pread`). A [`Node`] opens its file once, read-write, and then
//! reads with `pread` at offset 0 and writes with `pwrite` at offset 0:
//!
//! - sysfs (kernfs) regenerates an attribute on every read from offset 0
//!   and calls the attribute's `store` on every write, whatever the offset;
//! - procfs sysctls read from and write at the offset given, so offset 0 is
//!   exactly what `cat` and `echo` do on a fresh open.
//!
//! On any other file system (a simulated board: plain files) a write also
//! cuts off what is left of a longer old value, so the file ends up byte
//! for byte as `echo value > node` leaves it.
//!
//! A node that cannot be opened read-write (a write-only trigger, a
//! read-only attribute, a missing node) falls back to [`KernelFs`]'s by-path
//! calls, which report the precise error. So does a node that went away
//! while open (a CPU unplugged: kernfs answers `ENODEV`; a plain file was
//! unlinked): the next call re-resolves the path.

use crate::{KernelError, KernelFs, WriteOutcome};
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileExt, MetadataExt};

/// sysfs and the other kernfs-based file systems, and procfs: writes are
/// whole-value stores and need no truncation (statfs `f_type` values from
/// `include/uapi/linux/magic.h`).
const KERNEL_FS_MAGIC: [u64; 6] = [
    0x6265_6572, // SYSFS_MAGIC
    0x9fa0,      // PROC_SUPER_MAGIC
    0x6367_7270, // CGROUP2_SUPER_MAGIC
    0x0027_e0eb, // CGROUP_SUPER_MAGIC
    0x6462_6720, // DEBUGFS_MAGIC
    0x7472_6163, // TRACEFS_MAGIC
];

/// One kernel node, opened once and reused (see the module docs).
#[derive(Debug)]
pub struct Node {
    fs: KernelFs,
    path: String,
    open: Option<OpenFile>,
    /// Opening failed (write-only, read-only or missing node): use the
    /// by-path calls.
    by_path: bool,
}

#[derive(Debug)]
struct OpenFile {
    file: File,
    /// A plain file (simulated tree): truncate before writing, and check
    /// it was not unlinked.
    plain: bool,
}

impl KernelFs {
    /// A [`Node`] for `kernel_path`. Nothing is opened until the first call.
    pub fn node(&self, kernel_path: &str) -> Node {
        Node {
            fs: self.clone(),
            path: kernel_path.to_string(),
            open: None,
            by_path: false,
        }
    }
}

/// Errors after which the open file no longer names the node.
fn is_stale(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(2 | 9 | 19 | 116) // ENOENT, EBADF, ENODEV, ESTALE
    )
}

impl Node {
    /// The node's kernel path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// True while a descriptor is held (for tests and status).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The open file, opening it on first use. `None` means: use the
    /// by-path calls.
    fn file(&mut self) -> Option<&OpenFile> {
        if self.open.is_none() && !self.by_path {
            self.open = self.try_open();
            self.by_path = self.open.is_none();
        }
        self.open.as_ref()
    }

    fn try_open(&self) -> Option<OpenFile> {
        let host = self.fs.resolve(&self.path).ok()?;
        let file = OpenOptions::new().read(true).write(true).open(host).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let plain = match rustix::fs::fstatfs(&file) {
            Ok(st) => !KERNEL_FS_MAGIC.contains(&(st.f_type as u64)),
            Err(_) => true,
        };
        Some(OpenFile { file, plain })
    }

    /// Forget the descriptor after it went stale; the by-path call that
    /// follows decides whether the node still exists.
    fn drop_stale(&mut self) {
        self.open = None;
        self.by_path = false;
    }

    /// Read the node as text, trailing newline removed (as
    /// [`KernelFs::read`]).
    pub fn read(&mut self) -> Result<String, KernelError> {
        if let Some(o) = self.file() {
            let mut bytes = Vec::new();
            let mut chunk = [0u8; 4096];
            let result = loop {
                match o.file.read_at(&mut chunk, bytes.len() as u64) {
                    Ok(0) => break Ok(()),
                    Ok(n) => {
                        bytes.extend_from_slice(&chunk[..n]);
                        // A single-value attribute comes whole in one read;
                        // only a full buffer can have more behind it.
                        if n < chunk.len() {
                            break Ok(());
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            match result {
                Ok(()) => return Ok(crate::text_of(bytes)),
                Err(e) if is_stale(&e) => self.drop_stale(),
                Err(e) => return Err(KernelError::from_io(&self.path, "read", None, e)),
            }
        }
        let result = self.fs.read(&self.path);
        self.retry_open_if_missing(&result);
        result
    }

    /// A missing node may come back (a CPU plugged in again): try opening
    /// it again next time. Other by-path cases (permissions) stay by path.
    fn retry_open_if_missing<T>(&mut self, result: &Result<T, KernelError>) {
        if matches!(result, Err(KernelError::Missing { .. })) {
            self.by_path = false;
        }
    }

    /// Write `value` plus a newline, as `echo value > node` does.
    pub fn write_raw(&mut self, value: &str) -> Result<(), KernelError> {
        let value = value.trim_end_matches('\n');
        // A plain file's size now (what is left past the new value is cut
        // after writing), and whether it was unlinked: it would still take
        // the write, but the node it stood for is gone (kernfs says so
        // itself, with ENODEV).
        let mut plain_len = None;
        if let Some(o) = self.file().filter(|o| o.plain) {
            match o.file.metadata() {
                Ok(m) if m.nlink() > 0 => plain_len = Some(m.len()),
                _ => self.drop_stale(),
            }
        }
        if let Some(o) = self.file() {
            let mut line = Vec::with_capacity(value.len() + 1);
            line.extend_from_slice(value.as_bytes());
            line.push(b'\n');
            let len = line.len() as u64;
            let result = o
                .file
                .write_all_at(&line, 0)
                .and_then(|()| match plain_len {
                    Some(old) if old > len => o.file.set_len(len),
                    _ => Ok(()),
                });
            match result {
                Ok(()) => return Ok(()),
                Err(e) if is_stale(&e) => self.drop_stale(),
                Err(e) => return Err(KernelError::from_io(&self.path, "write", Some(value), e)),
            }
        }
        let result = self.fs.write_raw(&self.path, value);
        self.retry_open_if_missing(&result);
        result
    }

    /// [`KernelFs::write_known`] through the open file: skip the write when
    /// `current` already is `value`, else write and read back.
    pub fn write_known(
        &mut self,
        value: &str,
        current: Option<&str>,
    ) -> Result<WriteOutcome, KernelError> {
        let Some(value) = crate::to_write(value, current) else {
            return Ok(WriteOutcome::Unchanged);
        };
        self.write_raw(value)?;
        crate::read_back(value, self.read())
    }

    /// [`KernelFs::write`]: read first, then as [`Node::write_known`].
    pub fn write(&mut self, value: &str) -> Result<WriteOutcome, KernelError> {
        let current = crate::before_write(self.read())?;
        self.write_known(value, current.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, KernelFs) {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path());
        fs.create_node("/sys/a/scaling_min_freq", "300000\n")
            .unwrap();
        (dir, fs)
    }

    #[test]
    fn writes_shorter_values_whole_and_reads_back() {
        let (_d, fs) = tree();
        let mut n = fs.node("/sys/a/scaling_min_freq");
        assert_eq!(n.read().unwrap(), "300000");
        assert!(n.is_open());
        assert_eq!(n.write("1958400").unwrap(), WriteOutcome::Written);
        assert_eq!(n.write("1958400").unwrap(), WriteOutcome::Unchanged);
        assert_eq!(n.write("42").unwrap(), WriteOutcome::Written);
        // Byte for byte what `echo 42 > node` leaves.
        assert_eq!(
            std::fs::read_to_string(fs.resolve("/sys/a/scaling_min_freq").unwrap()).unwrap(),
            "42\n"
        );
    }

    #[test]
    fn sees_changes_made_by_others() {
        let (_d, fs) = tree();
        let mut n = fs.node("/sys/a/scaling_min_freq");
        assert_eq!(n.read().unwrap(), "300000");
        fs.write_raw("/sys/a/scaling_min_freq", "5").unwrap();
        assert_eq!(n.read().unwrap(), "5");
    }

    #[test]
    fn write_only_and_read_only_nodes_fall_back_to_paths() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, fs) = tree();
        let host = fs.resolve("/sys/a/scaling_min_freq").unwrap();
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o444)).unwrap();
        let mut n = fs.node("/sys/a/scaling_min_freq");
        if std::fs::OpenOptions::new().write(true).open(&host).is_ok() {
            eprintln!("skipped: running as root, permissions do not stop writes");
            return;
        }
        assert_eq!(n.read().unwrap(), "300000");
        assert!(!n.is_open());
        assert!(matches!(n.write("1"), Err(KernelError::NotAllowed { .. })));
    }

    #[test]
    fn a_node_that_went_away_is_missing_not_written() {
        let (_d, fs) = tree();
        let mut n = fs.node("/sys/a/scaling_min_freq");
        assert_eq!(n.read().unwrap(), "300000");
        std::fs::remove_file(fs.resolve("/sys/a/scaling_min_freq").unwrap()).unwrap();
        assert!(matches!(n.write("7"), Err(KernelError::Missing { .. })));
        assert!(!n.is_open());
        // It comes back (CPU plugged in again): the node opens again.
        fs.create_node("/sys/a/scaling_min_freq", "300000\n")
            .unwrap();
        assert_eq!(n.write("7").unwrap(), WriteOutcome::Written);
        assert!(n.is_open());
    }

    #[test]
    fn missing_node_reports_missing() {
        let (_d, fs) = tree();
        let mut n = fs.node("/sys/a/nope");
        assert!(matches!(n.read(), Err(KernelError::Missing { .. })));
        assert!(matches!(n.write("1"), Err(KernelError::Missing { .. })));
    }

    #[test]
    fn long_values_are_read_whole() {
        let (_d, fs) = tree();
        let long = "x".repeat(10_000);
        fs.create_node("/sys/a/long", &format!("{long}\n")).unwrap();
        assert_eq!(fs.node("/sys/a/long").read().unwrap(), long);
    }

    #[test]
    fn real_sysfs_reads_through_an_open_file() {
        // Read-only use of a real attribute: pread at 0 regenerates it.
        let fs = KernelFs::system();
        let path = "/sys/kernel/mm/transparent_hugepage/enabled";
        let Ok(by_path) = fs.read(path) else {
            eprintln!("skipped: {path} is not available here");
            return;
        };
        let mut n = fs.node(path);
        assert_eq!(n.read().unwrap(), by_path);
        assert_eq!(n.read().unwrap(), by_path);
        if !n.is_open() {
            eprintln!("note: {path} cannot be opened read-write here (not root); read by path");
        }
    }
}
