//! The task journal: crash-safe restore of the per-thread and cgroup
//! settings a triggered use case made (`lever-tasks`).
//!
//! Node originals live in the originals journal ([`crate::journal`]); the
//! originals of a use case's task plan — a cgroup file's text, a thread's
//! affinity, policy or uclamp, which cgroup a task was in — are JSON
//! ([`lever_tasks::Original`]) and live here, in `STATE_DIR/tasks.journal`:
//!
//! ```text
//! lever-tasks v1 boot=9c4e0bd2-5a43-4a3a-a0a4-6a0cbb3c1a57
//! set 1234 {"original":"cgroup-file","cgroup":"lever/camera","knob":"cpu.weight","value":"100"}
//! done 1234
//! ```
//!
//! `set REQUEST JSON` is appended and fsynced before its change is made;
//! `done REQUEST` after every original of that request was put back. On
//! start, every `set` without a later `done` is restored, newest first (a
//! thread or cgroup that is gone is skipped), and the file is emptied. A
//! journal of an earlier boot is not replayed: the reboot reset every task.
//! A torn last line (a crash mid-append) is ignored: its change was never
//! made.

use lever_kernel::KernelFs;
use lever_tasks::{Cgroups, Original, Restored};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const HEADER: &str = "lever-tasks v1";
/// Empty the file when nothing is held and it grew past this.
const COMPACT_AT: u64 = 64 << 10;

/// The open task journal.
#[derive(Debug)]
pub struct TaskJournal {
    path: PathBuf,
    file: File,
    header: String,
    len: u64,
    /// Requests with originals not yet put back.
    held: usize,
}

/// One original put back (or skipped) at recovery.
#[derive(Debug)]
pub struct TaskRecovered {
    /// The request that had made the change.
    pub request: u64,
    /// What was restored.
    pub original: Original,
    /// Done, skipped (the task is gone) or the error.
    pub result: Result<Restored, String>,
}

impl TaskJournal {
    /// `STATE_DIR/tasks.journal`.
    pub fn path_in(state_dir: &Path) -> PathBuf {
        state_dir.join("tasks.journal")
    }

    /// Restore what an earlier run left in `state_dir`'s task journal, then
    /// open it empty for this run.
    pub fn recover_and_open(
        state_dir: &Path,
        fs: &KernelFs,
    ) -> io::Result<(TaskJournal, Vec<TaskRecovered>)> {
        let path = TaskJournal::path_in(state_dir);
        let boot = crate::journal::boot_id(fs);
        let recovered = match std::fs::read_to_string(&path) {
            Ok(text) => recover_text(&text, boot.as_deref(), &Cgroups::discover(fs.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let header = format!("{HEADER} boot={}\n", boot.as_deref().unwrap_or("-"));
        let mut file = crate::journal::create_private(&path)?;
        file.write_all(header.as_bytes())?;
        file.sync_all()?;
        let file = OpenOptions::new().append(true).open(&path)?;
        Ok((
            TaskJournal {
                len: header.len() as u64,
                path,
                file,
                header,
                held: 0,
            },
            recovered,
        ))
    }

    /// Record `original` of `request` durably (before its change is made).
    pub fn record(&mut self, request: u64, original: &Original) -> io::Result<()> {
        let json = serde_json::to_string(original).map_err(io::Error::other)?;
        self.append(&format!("set {request} {json}\n"), true)
    }

    /// A request's task settings start being held.
    pub fn hold(&mut self) {
        self.held += 1;
    }

    /// Every original of `request` is back. Not fsynced: after a crash a
    /// lost `done` only means putting back once more what is already back.
    pub fn done(&mut self, request: u64) -> io::Result<()> {
        self.held = self.held.saturating_sub(1);
        self.append(&format!("done {request}\n"), false)?;
        if self.held == 0 && self.len > COMPACT_AT {
            self.file = crate::journal::create_private(&self.path)?;
            self.file.write_all(self.header.as_bytes())?;
            self.file.sync_all()?;
            self.file = OpenOptions::new().append(true).open(&self.path)?;
            self.len = self.header.len() as u64;
        }
        Ok(())
    }

    fn append(&mut self, line: &str, durable: bool) -> io::Result<()> {
        self.file.write_all(line.as_bytes())?;
        if durable {
            self.file.sync_data()?;
        }
        self.len += line.len() as u64;
        Ok(())
    }
}

/// Put back, newest first, every original of `text` whose request has no
/// `done` — unless the journal is of another boot than `boot`.
fn recover_text(text: &str, boot: Option<&str>, cgroups: &Cgroups) -> Vec<TaskRecovered> {
    let mut lines = text.lines();
    let Some(head) = lines.next().filter(|h| h.starts_with(HEADER)) else {
        return Vec::new();
    };
    let written_in = head.split_once("boot=").map(|(_, b)| b.trim());
    if let (Some(then), Some(now)) = (written_in, boot) {
        if then != "-" && then != now {
            return Vec::new();
        }
    }
    let mut pending: Vec<(u64, Original)> = Vec::new();
    for line in lines {
        // set 1234 {"type":...}   /   done 1234
        let mut parts = line.splitn(3, ' ');
        let (Some(word), Some(id)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(id) = id.parse::<u64>() else { continue };
        match (word, parts.next()) {
            ("set", Some(json)) => {
                if let Ok(o) = serde_json::from_str::<Original>(json) {
                    pending.push((id, o));
                }
            }
            ("done", _) => pending.retain(|(r, _)| *r != id),
            _ => {}
        }
    }
    // Cgroups Lever created go last, once every task was moved back out
    // of them (an original handed to another request is newer than that
    // request's moves).
    let (created, rest): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|(_, o)| matches!(o, Original::Created { .. }));
    rest.into_iter()
        .rev()
        .chain(created.into_iter().rev())
        .map(|(request, original)| {
            let result = lever_tasks::restore(cgroups, &original).map_err(|e| e.to_string());
            TaskRecovered {
                request,
                original,
                result,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    fn cgroup_tree() -> (FakeTree, KernelFs) {
        let tree = FakeTree::new();
        tree.node("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
        tree.node("/sys/fs/cgroup/cgroup.subtree_control", "cpu\n");
        tree.node("/sys/fs/cgroup/cg/cpu.weight", "100\n");
        let fs = tree.fs().clone();
        (tree, fs)
    }

    fn weight(name: &str, value: &str) -> Original {
        serde_json::from_value(serde_json::json!({
            "original": "cgroup-file", "cgroup": name, "knob": "cpu.weight", "value": value
        }))
        .unwrap()
    }

    #[test]
    fn outstanding_originals_are_restored_newest_first_and_done_ones_not() {
        let (tree, fs) = cgroup_tree();
        let dir = tempfile::tempdir().unwrap();
        let (mut j, rec) = TaskJournal::recover_and_open(dir.path(), &fs).unwrap();
        assert!(rec.is_empty());
        j.record(7, &weight("cg", "100")).unwrap();
        j.record(7, &weight("cg", "150")).unwrap();
        j.record(8, &weight("cg", "999")).unwrap();
        j.done(8).unwrap();
        tree.node("/sys/fs/cgroup/cg/cpu.weight", "400\n");
        drop(j);
        // A torn last line is ignored.
        let path = TaskJournal::path_in(dir.path());
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"set 9 {\"original\":\"cgr").unwrap();
        let (_, rec) = TaskJournal::recover_and_open(dir.path(), &fs).unwrap();
        assert_eq!(rec.len(), 2, "{rec:?}");
        assert!(rec.iter().all(|r| r.request == 7 && r.result.is_ok()));
        // Newest first: the first original ("100") is written last.
        assert_eq!(tree.read("/sys/fs/cgroup/cg/cpu.weight").trim(), "100");
        // The file was emptied: a second start restores nothing.
        let (_, rec) = TaskJournal::recover_and_open(dir.path(), &fs).unwrap();
        assert!(rec.is_empty());
    }

    #[test]
    fn a_journal_of_an_earlier_boot_is_not_replayed() {
        let (tree, fs) = cgroup_tree();
        let text = "lever-tasks v1 boot=old\nset 1 {\"original\":\"cgroup-file\",\"cgroup\":\"cg\",\"knob\":\"cpu.weight\",\"value\":\"5\"}\n";
        let cg = Cgroups::discover(fs.clone());
        assert!(recover_text(text, Some("new"), &cg).is_empty());
        assert_eq!(tree.read("/sys/fs/cgroup/cg/cpu.weight").trim(), "100");
        assert_eq!(recover_text(text, Some("old"), &cg).len(), 1);
        assert_eq!(tree.read("/sys/fs/cgroup/cg/cpu.weight").trim(), "5");
    }
}
