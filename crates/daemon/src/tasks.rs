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
//! set 1234 @81234567 {"original":"affinity","tid":4321,"cpus":[0,1,2,3]}
//! done 1234
//! ```
//!
//! An original of a task carries the task's start time (`@`, field 22 of
//! `/proc/TID/stat`, in clock ticks since boot): after a restart, a tid
//! whose start time differs is another task that reused the number, and
//! its original is skipped (reported as such), not put on the stranger.
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
    /// Where task start times are read (the daemon's root).
    fs: KernelFs,
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
            Ok(text) => recover_text(&text, boot.as_deref(), &Cgroups::discover(fs.clone()), fs),
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
                fs: fs.clone(),
            },
            recovered,
        ))
    }

    /// Record `original` of `request` durably (before its change is made).
    pub fn record(&mut self, request: u64, original: &Original) -> io::Result<()> {
        let json = serde_json::to_string(original).map_err(io::Error::other)?;
        let line = match start_of(&self.fs, original) {
            Some(start) => format!("set {request} @{start} {json}\n"),
            None => format!("set {request} {json}\n"),
        };
        // A created cgroup is always followed by the original of what is
        // written or moved into it, whose fsync (before that change) makes
        // both durable: one fsync instead of one per level on the exec
        // path. A crash between the mkdir and that fsync can leave an empty
        // cgroup behind, never a changed setting.
        let durable = !matches!(original, Original::Created { .. });
        self.append(&line, durable)
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

/// Start time (field 22 of `/proc/TID/stat`) of task `tid`, read under
/// `fs`, or `None` when it is gone or the file is not a full stat line:
///
/// ```text
/// 4321 (qtiqmmfsrc0) S 1 4321 4321 0 -1 4194560 ... 0 20 0 3 0 81234567 ...
/// ```
pub fn start_time(fs: &KernelFs, tid: i32) -> Option<u64> {
    let stat = fs.read(&format!("/proc/{tid}/stat")).ok()?;
    // The comm may hold spaces and parentheses: count after the last `)`,
    // where field 3 (state) starts.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// The start time of the task `original` belongs to: thread settings are
/// made on real tids (the kernel's `/proc`); a cgroup move is read under
/// the daemon's root, like the move itself.
fn start_of(fs: &KernelFs, original: &Original) -> Option<u64> {
    let tid = original.task()?;
    match original {
        Original::Membership { .. } => start_time(fs, tid),
        _ => start_time(&KernelFs::system(), tid),
    }
}

/// Put back, newest first, every original of `text` whose request has no
/// `done` — unless the journal is of another boot than `boot`.
fn recover_text(
    text: &str,
    boot: Option<&str>,
    cgroups: &Cgroups,
    fs: &KernelFs,
) -> Vec<TaskRecovered> {
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
    let mut pending: Vec<(u64, Option<u64>, Original)> = Vec::new();
    for line in lines {
        // set 1234 {"original":...}   /   set 1234 @81234567 {...}   /   done 1234
        let mut parts = line.splitn(3, ' ');
        let (Some(word), Some(id)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(id) = id.parse::<u64>() else { continue };
        match (word, parts.next()) {
            ("set", Some(rest)) => {
                let (start, json) = match rest.strip_prefix('@').and_then(|r| r.split_once(' ')) {
                    Some((s, json)) => (s.parse().ok(), json),
                    None => (None, rest),
                };
                if let Ok(o) = serde_json::from_str::<Original>(json) {
                    pending.push((id, start, o));
                }
            }
            ("done", _) => pending.retain(|(r, _, _)| *r != id),
            _ => {}
        }
    }
    // Cgroups Lever created go last, children first (see
    // `lever_tasks::restore_order`).
    let all: Vec<Original> = pending.iter().map(|(_, _, o)| o.clone()).collect();
    let order = lever_tasks::restore_order(&all);
    let mut slots: Vec<Option<(u64, Option<u64>, Original)>> =
        pending.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots[i].take())
        .map(|(request, start, original)| {
            let now = start.and_then(|_| start_of(fs, &original));
            let result = match (start, original.task()) {
                (Some(then), Some(tid)) if now != Some(then) => Ok(Restored::Skipped {
                    why: match now {
                        Some(now) => format!(
                            "task {tid} is another task now (started at tick {now}, the journalled one at {then}): its tid was reused"
                        ),
                        None => format!("task {tid} exited"),
                    },
                }),
                _ => lever_tasks::restore(cgroups, &original).map_err(|e| e.to_string()),
            };
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
        assert!(recover_text(text, Some("new"), &cg, &fs).is_empty());
        assert_eq!(tree.read("/sys/fs/cgroup/cg/cpu.weight").trim(), "100");
        assert_eq!(recover_text(text, Some("old"), &cg, &fs).len(), 1);
        assert_eq!(tree.read("/sys/fs/cgroup/cg/cpu.weight").trim(), "5");
    }

    #[test]
    fn a_reused_tid_is_skipped_and_the_journalled_task_is_restored() {
        let (_tree, fs) = cgroup_tree();
        let cg = Cgroups::discover(fs.clone());
        // This test process's main thread: its start time and affinity.
        let tid = std::process::id() as i32;
        let start = start_time(&KernelFs::system(), tid).expect("own stat");
        let cpus = lever_tasks::affinity(tid).unwrap();
        let original = Original::Affinity { tid, cpus };
        let json = serde_json::to_string(&original).unwrap();
        let text = format!(
            "lever-tasks v1 boot=-\nset 1 @{start} {json}\nset 2 @{} {json}\nset 3 {json}\n",
            start + 1
        );
        let rec = recover_text(&text, None, &cg, &fs);
        assert_eq!(rec.len(), 3, "{rec:?}");
        let by = |r: u64| &rec.iter().find(|x| x.request == r).unwrap().result;
        assert!(matches!(by(1), Ok(Restored::Done)), "{rec:?}");
        match by(2) {
            Ok(Restored::Skipped { why }) => assert!(why.contains("tid was reused"), "{why}"),
            other => panic!("{other:?}"),
        }
        // A line of an older daemon (no start time) is restored as before.
        assert!(matches!(by(3), Ok(Restored::Done)), "{rec:?}");
    }

    #[test]
    fn record_writes_the_start_time_of_a_task_and_none_for_a_file() {
        let (_tree, fs) = cgroup_tree();
        let dir = tempfile::tempdir().unwrap();
        let (mut j, _) = TaskJournal::recover_and_open(dir.path(), &fs).unwrap();
        let tid = std::process::id() as i32;
        let start = start_time(&KernelFs::system(), tid).unwrap();
        j.record(5, &Original::Affinity { tid, cpus: vec![0] })
            .unwrap();
        j.record(5, &weight("cg", "100")).unwrap();
        let text = std::fs::read_to_string(TaskJournal::path_in(dir.path())).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].starts_with(&format!("set 5 @{start} {{")),
            "{text}"
        );
        assert!(lines[2].starts_with("set 5 {"), "{text}");
        // Field 22 counted after the comm, even one with spaces and ')'.
        let (tree, fs) = cgroup_tree();
        tree.node(
            "/proc/77/stat",
            "77 (a b) c) S 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0",
        );
        assert_eq!(start_time(&fs, 77), Some(4242));
        assert_eq!(start_time(&fs, 78), None);
    }
}
