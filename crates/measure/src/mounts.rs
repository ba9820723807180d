//! The file system a directory lives on, from `/proc/self/mountinfo`
//! (Documentation/filesystems/proc.rst, "3.5 `/proc/<pid>/mountinfo`"):
//!
//! ```text
//! 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//! ```
//!
//! mount id, parent id, major:minor, root within the file system, mount
//! point, per-mount options, optional fields ended by `-`, then the file
//! system type, the source and the super block's options. Paths escape a
//! space, tab, newline and backslash as `\040`, `\011`, `\012`, `\134`.
//!
//! What a file benchmark measures is this file system: `lever bench`'s
//! `lat_fs` creates and deletes files in its scratch directory, and on an
//! ext4 without a journal a create skips the inodes deleted there in the
//! last minute (six while their inode-table block is unwritten:
//! `recently_deleted()` in fs/ext4/ialloc.c), so its rate depends on what
//! was deleted there before. [`FileSystem::journal`] says which.

use lever_kernel::KernelFs;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Kernel path of the file.
pub const PATH: &str = "/proc/self/mountinfo";

/// One line of `mountinfo`, the fields Lever uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted (`/`, `/tmp`), unescaped.
    pub mount_point: String,
    /// File system type (`ext4`, `tmpfs`).
    pub fs_type: String,
    /// Its source (`/dev/vda`, `tmpfs`), unescaped.
    pub source: String,
    /// The super block's options (`rw,discard`).
    pub options: String,
}

/// `\040` and the other octal escapes of a mountinfo path, undone; text
/// that is not a valid escape is kept as it is.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let code = b.get(i + 1..i + 4).and_then(|d| {
            d.iter()
                .all(|c| (b'0'..=b'7').contains(c))
                .then(|| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok())?
        });
        match (b[i], code) {
            (b'\\', Some(c)) => {
                out.push(c);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every mount of a `mountinfo` text, in its order; lines that do not
/// have the fields are left out.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mount_point = left.split(' ').nth(4)?;
            let mut r = right.split(' ');
            Some(Mount {
                mount_point: unescape(mount_point),
                fs_type: r.next()?.to_string(),
                source: unescape(r.next()?),
                options: r.next().unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// The mount `path` (absolute, symlinks resolved) lies on: the longest
/// mount point that is a whole-component prefix of it, the later one of
/// two on the same point (it hides the earlier).
pub fn containing<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (Path::new(&m.mount_point).components().count(), *i))
        .map(|(_, m)| m)
}

/// The file system a directory lives on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSystem {
    /// The directory, as resolved.
    pub dir: String,
    /// Where its file system is mounted.
    pub mount_point: String,
    /// The file system type (`ext4`, `tmpfs`).
    pub fs_type: String,
    /// Its source (`/dev/vda`).
    pub source: String,
    /// The super block's options.
    pub options: String,
    /// For ext3/ext4 on a block device: whether it has a journal
    /// (`/proc/fs/jbd2/DEV-8`); `None` for other types or when the kernel
    /// does not say.
    #[serde(default)]
    pub journal: Option<bool>,
}

impl FileSystem {
    /// The file system in a few words: `ext4 /dev/vda at / (no journal)`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} at {}{}",
            self.fs_type,
            self.source,
            self.mount_point,
            match self.journal {
                Some(false) => " (no journal)",
                Some(true) => " (journal)",
                None => "",
            }
        )
    }

    /// What this file system does to file creation rates, for people;
    /// `None` when nothing is known to.
    pub fn note(&self) -> Option<String> {
        (self.journal == Some(false)).then(|| {
            format!(
                "{} is on {} ({} at {}) without a journal: a create skips the inodes deleted there in the last minute (six while their inode block is unwritten), so lat_fs-*-create depends on what was deleted there before; --dir on another file system (a tmpfs) measures creation alone",
                self.dir, self.fs_type, self.source, self.mount_point
            )
        })
    }
}

/// The file system `dir` lives on, read through `fs` (the system's
/// `/proc`: a directory is always the running system's); `None` when
/// `mountinfo` cannot be read or has no mount for it.
pub fn file_system(fs: &KernelFs, dir: &Path) -> Option<FileSystem> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mounts = parse(&fs.read(PATH).ok()?);
    let m = containing(&mounts, &dir)?;
    let journal = match (m.fs_type.as_str(), m.source.strip_prefix("/dev/")) {
        ("ext3" | "ext4", Some(dev)) if fs.exists(&format!("/proc/fs/ext4/{dev}")) => {
            Some(fs.exists(&format!("/proc/fs/jbd2/{dev}-8")))
        }
        _ => None,
    };
    Some(FileSystem {
        dir: dir.display().to_string(),
        mount_point: m.mount_point.clone(),
        fs_type: m.fs_type.clone(),
        source: m.source.clone(),
        options: m.options.clone(),
        journal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's own example line, this VM's root and /tmp on tmpfs,
    /// and a mount point with a space.
    const MOUNTINFO: &str = "\
36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
40 22 0:35 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=1g
41 22 0:36 / /media/usb\\040stick rw - vfat /dev/sdb1 rw
42 40 0:37 / /tmp rw - tmpfs tmpfs rw,size=2g
not a mountinfo line
";

    #[test]
    fn parses_and_finds_the_mount_of_a_path() {
        let m = parse(MOUNTINFO);
        assert_eq!(m.len(), 5);
        assert_eq!(m[0].mount_point, "/mnt2");
        assert_eq!(m[0].fs_type, "ext3");
        assert_eq!(m[0].source, "/dev/root");
        assert_eq!(m[0].options, "rw,errors=continue");
        assert_eq!(m[3].mount_point, "/media/usb stick");
        let on = |p: &str| containing(&m, Path::new(p)).map(|m| m.options.as_str());
        assert_eq!(on("/work/main"), Some("rw,discard,resv_strict"));
        // Whole components: /tmpfoo is on /, /tmp/x on the later /tmp.
        assert_eq!(on("/tmpfoo"), Some("rw,discard,resv_strict"));
        assert_eq!(on("/tmp/x"), Some("rw,size=2g"));
        assert_eq!(on("/tmp"), Some("rw,size=2g"));
        assert_eq!(on("/media/usb stick/a"), Some("rw"));
        assert_eq!(containing(&m, Path::new("relative")), None);
        assert_eq!(unescape("a\\134b\\0"), "a\\b\\0");
    }

    #[test]
    fn an_ext4_without_a_journal_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path());
        fs.create_node(PATH, MOUNTINFO).unwrap();
        fs.create_node("/proc/fs/ext4/vda/options", "rw\n").unwrap();
        let work = file_system(&fs, Path::new("/no/such/work")).unwrap();
        assert_eq!(work.fs_type, "ext4");
        assert_eq!(work.mount_point, "/");
        assert_eq!(work.journal, Some(false));
        assert_eq!(work.describe(), "ext4 /dev/vda at / (no journal)");
        let note = work.note().unwrap();
        assert!(
            note.starts_with("/no/such/work is on ext4 (/dev/vda at /) without a journal: a create skips the inodes deleted there in the last minute"),
            "{note}"
        );
        fs.create_node("/proc/fs/jbd2/vda-8/info", "").unwrap();
        let work = file_system(&fs, Path::new("/no/such/work")).unwrap();
        assert_eq!(work.journal, Some(true));
        assert_eq!(work.note(), None);
        let tmp = file_system(&fs, Path::new("/tmp/x")).unwrap();
        assert_eq!((tmp.fs_type.as_str(), tmp.journal), ("tmpfs", None));
        // No mountinfo: not known.
        assert_eq!(
            file_system(&KernelFs::new(dir.path().join("none")), Path::new("/")),
            None
        );
    }
}
