//! The originals journal: crash-safe restore.
//!
//! Before Lever first writes a node, the node's original text is appended
//! to `STATE_DIR/originals.journal` and the file is fsynced; after the node
//! is restored a `done` line is appended. On start (and with
//! `lever restore`) every node with a `set` and no later `done` is written
//! back to its original, and the journal is compacted. So after `kill -9`,
//! a power cut during a boost, or a panic, the next start puts the device
//! back exactly as it was.
//!
//! Format (text, one record per line, values escaped so that a record is
//! always one line):
//!
//! ```text
//! lever-originals v1 root=/tmp/board
//! set /sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq 300000
//! done /sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq
//! ```
//!
//! A truncated last line (crash mid-append) is ignored: its write never
//! happened, because the node is only written after the fsync returns.
//!
//! While the daemon runs, a record stays *armed* after its node is
//! restored: the next boost of that node, if the node still holds the same
//! original, needs no new record and no fsync (this keeps a boost's round
//! trip in microseconds). Only a node whose value changed behind Lever's
//! back gets a fresh record. The cost: after a crash, a node that was
//! already restored is written its original once more — harmless, except
//! when something else changed it while Lever held nothing on it. A clean
//! stop (SIGTERM) compacts the journal, so that case needs a crash.
//! `done` lines are written by `lever restore`-style compaction only; the
//! reader still honours them.

use lever_kernel::KernelFs;
use lever_tunables::OriginalsLog;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const HEADER: &str = "lever-originals v1";

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    root: String,
    /// Durable originals per node.
    armed: std::collections::HashMap<String, String>,
}

/// One node restored (or not) during recovery.
#[derive(Debug)]
pub struct Recovered {
    /// Kernel path of the node.
    pub node: String,
    /// The original written back.
    pub original: String,
    /// Whether the write succeeded (a missing node counts as done).
    pub result: Result<(), String>,
}

impl Journal {
    /// The journal's path inside a state directory.
    pub fn path_in(state_dir: &Path) -> PathBuf {
        state_dir.join("originals.journal")
    }

    /// Restore everything an earlier run left recorded, then start a fresh
    /// journal for `fs`'s root. Returns what was restored.
    pub fn recover_and_open(
        state_dir: &Path,
        fs: &KernelFs,
    ) -> io::Result<(Journal, Vec<Recovered>)> {
        std::fs::create_dir_all(state_dir)?;
        let path = Self::path_in(state_dir);
        let recovered = recover(&path, fs)?;
        let root = fs.root().display().to_string();
        let tmp = path.with_extension("journal.new");
        {
            let mut f = File::create(&tmp)?;
            writeln!(f, "{HEADER} root={}", escape(&root))?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &path)?;
        sync_dir(state_dir)?;
        let file = OpenOptions::new().append(true).open(&path)?;
        Ok((
            Journal {
                path,
                file,
                root,
                armed: Default::default(),
            },
            recovered,
        ))
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn append(&mut self, line: &str) -> io::Result<()> {
        self.file.write_all(line.as_bytes())?;
        self.file.sync_data()
    }
}

impl OriginalsLog for Journal {
    fn record(&mut self, node: &str, original: &str) -> io::Result<()> {
        if self.armed.get(node).map(String::as_str) == Some(original) {
            return Ok(()); // already durable
        }
        self.append(&format!("set {} {}\n", escape(node), escape(original)))?;
        self.armed.insert(node.to_string(), original.to_string());
        Ok(())
    }

    fn forget(&mut self, _node: &str) -> io::Result<()> {
        // Kept armed: see the module docs.
        Ok(())
    }
}

impl Journal {
    /// Mark every node restored and empty the journal (clean stop).
    pub fn compact(&mut self) -> io::Result<()> {
        let tmp = self.path.with_extension("journal.new");
        {
            let mut f = File::create(&tmp)?;
            writeln!(f, "{HEADER} root={}", escape(&self.root))?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.armed.clear();
        Ok(())
    }
}

impl Journal {
    /// The root the journal was written for.
    pub fn root(&self) -> &str {
        &self.root
    }
}

/// Restore what the journal at `path` holds, without opening a new one
/// (`lever restore`). The journal is then emptied.
pub fn recover(path: &Path, fs: &KernelFs) -> io::Result<Vec<Recovered>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut lines = text.split_inclusive('\n');
    let header = lines.next().unwrap_or_default();
    let Some(root) = header
        .trim_end()
        .strip_prefix(HEADER)
        .and_then(|r| r.trim().strip_prefix("root="))
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: line 1: not a lever originals journal", path.display()),
        ));
    };
    let root = unescape(root);
    if Path::new(&root) != fs.root() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: written for root {root}, not {}; restore it with --root {root}",
                path.display(),
                fs.root().display()
            ),
        ));
    }
    // Outstanding originals in first-set order; the first original of a
    // node is the true one.
    let mut pending: Vec<(String, String)> = Vec::new();
    for line in lines {
        let Some(line) = line.strip_suffix('\n') else {
            break; // torn last record: its node was never written
        };
        let mut parts = line.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("set"), Some(node), Some(orig)) => {
                let node = unescape(node);
                if !pending.iter().any(|(n, _)| *n == node) {
                    pending.push((node, unescape(orig)));
                }
            }
            (Some("done"), Some(node), None) => {
                let node = unescape(node);
                pending.retain(|(n, _)| *n != node);
            }
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: malformed record {line:?}", path.display()),
                ))
            }
        }
    }
    let mut out = Vec::new();
    // Restore in reverse order of first write: for a min/max pair this
    // undoes the writes in the opposite order they were made, which keeps
    // min <= max at every step.
    for (node, original) in pending.into_iter().rev() {
        let result = match fs.write(&node, &original) {
            Ok(_) => Ok(()),
            Err(e) if e.is_missing() => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        out.push(Recovered {
            node,
            original,
            result,
        });
    }
    if out.iter().all(|r| r.result.is_ok()) {
        let mut f = File::create(path)?;
        writeln!(f, "{HEADER} root={}", escape(&root))?;
        f.sync_all()?;
    }
    Ok(out)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Escape spaces, newlines, backslashes and control bytes so a value is one
/// token on one line.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ' ' => out.push_str("\\s"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    if out.is_empty() {
        out.push_str("\\e");
    }
    out
}

fn unescape(s: &str) -> String {
    if s == "\\e" {
        return String::new();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('x') => {
                let hex: String = it.by_ref().take(2).collect();
                if let Ok(v) = u8::from_str_radix(&hex, 16) {
                    out.push(v as char);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_round_trips() {
        for s in ["", "300000", "a b\tc\nd\\e", "\u{1}x", "performance"] {
            assert_eq!(unescape(&escape(s)), s, "{s:?}");
            assert!(!escape(s).contains(' ') && !escape(s).contains('\n'));
        }
    }

    #[test]
    fn recovers_outstanding_originals_only() {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path().join("root"));
        fs.create_node("/sys/a", "999").unwrap();
        fs.create_node("/sys/b", "5").unwrap();
        fs.create_node("/sys/c", "77").unwrap();
        let state = dir.path().join("state");
        let (mut j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        assert!(rec.is_empty());
        j.record("/sys/a", "1").unwrap();
        j.record("/sys/b", "2 two").unwrap();
        j.append("done /sys/b\n").unwrap(); // as an older writer would
                                            // Re-recording an unchanged original costs nothing.
        let len = std::fs::metadata(j.path()).unwrap().len();
        j.record("/sys/a", "1").unwrap();
        assert_eq!(std::fs::metadata(j.path()).unwrap().len(), len);
        j.record("/sys/c", "3").unwrap();
        j.record("/sys/gone", "4").unwrap();
        // A torn record at the end (crash mid-append) is ignored.
        std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap()
            .write_all(b"set /sys/b 12")
            .unwrap();
        drop(j);
        let (_j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        let nodes: Vec<&str> = rec.iter().map(|r| r.node.as_str()).collect();
        assert_eq!(nodes, ["/sys/gone", "/sys/c", "/sys/a"]);
        assert!(rec.iter().all(|r| r.result.is_ok()));
        assert_eq!(fs.read("/sys/a").unwrap(), "1");
        assert_eq!(fs.read("/sys/b").unwrap(), "5");
        assert_eq!(fs.read("/sys/c").unwrap(), "3");
        // Compacted: a second recovery has nothing to do.
        assert!(recover(&Journal::path_in(&state), &fs).unwrap().is_empty());
    }

    #[test]
    fn refuses_a_journal_for_another_root() {
        let dir = tempfile::tempdir().unwrap();
        let a = KernelFs::new(dir.path().join("a"));
        let b = KernelFs::new(dir.path().join("b"));
        let state = dir.path().join("state");
        let (mut j, _) = Journal::recover_and_open(&state, &a).unwrap();
        j.record("/sys/x", "1").unwrap();
        drop(j);
        let err = recover(&Journal::path_in(&state), &b).unwrap_err();
        assert!(err.to_string().contains("restore it with --root"), "{err}");
    }
}
