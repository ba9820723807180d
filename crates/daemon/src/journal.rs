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
//! lever-originals v1 root=/tmp/board boot=9c4e0bd2-5a43-4a3a-a0a4-6a0cbb3c1a57
//! set /sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq 300000
//! done /sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq
//! ```
//!
//! A truncated last line (crash mid-append) is ignored: its write never
//! happened, because the node is only written after the fsync returns.
//!
//! Only the first record of an original is fsynced. After a node is
//! restored a `done` line is appended, and when it is boosted again with
//! the same original a new `set` line is appended — both without fsync,
//! because the durable `set` of that same original is already earlier in
//! the file. A crash of the daemon alone loses none of them (they are in
//! the page cache); a crash of the kernel may lose the last ones, but a
//! kernel crash means a reboot, and a reboot resets every sysfs and procfs
//! node anyway. So the journal records the boot it was written in
//! (`/proc/sys/kernel/random/boot_id`), and a journal from an earlier boot
//! is not replayed: writing its originals back would undo whatever the new
//! boot configured. Within one boot, a node Lever restored and then left
//! alone is not written again after a crash, so a change someone else made
//! to it meanwhile is kept. The file is compacted (rewritten with only the
//! nodes still held) when it grows past 1 MiB and on a clean stop.
//!
//! An original that cannot be written back (the node refuses it, or is
//! not writable just then) is never dropped: the entry stays in the journal
//! ([`Journal::unrestored`]), the daemon retries it, a client's later
//! release of that node writes it, and `lever restore` tries it too; the
//! first write that succeeds clears it. Outside systemd the state
//! directory is created 0700 and the journal 0600: originals are nobody
//! else's business.

use lever_kernel::KernelFs;
use lever_tunables::OriginalsLog;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const HEADER: &str = "lever-originals v1";
/// The kernel's id of the running boot (random, new at every boot).
pub const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
/// Rewrite the journal when it grows past this.
const COMPACT_AT: u64 = 1 << 20;

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    root: String,
    boot: Option<String>,
    /// Durable originals per node.
    armed: std::collections::HashMap<String, String>,
    /// Nodes whose last record is a `set` (held by Lever now).
    live: std::collections::HashSet<String>,
    /// Bytes in the file.
    len: u64,
    /// Where originals are written back when a retry is due.
    fs: KernelFs,
    /// Originals an earlier run left that could not be written back yet.
    stuck: BTreeMap<String, Stuck>,
    /// The disk thread, once the event loop asked for it
    /// ([`Journal::background`]); without it every sync runs inline.
    writer: Option<crate::writer::Writer>,
    /// Originals recorded and waiting for their sync: node → (original,
    /// ticket).
    arming: std::collections::HashMap<String, (String, u64)>,
    next_ticket: u64,
    /// Bumped when a compacted file replaces the journal: a sync of the
    /// old file no longer counts.
    generation: u64,
    /// A compaction is being written by the disk thread: what was
    /// appended since its snapshot, and whether any of it had to be
    /// durable.
    compacting: Option<(Vec<u8>, bool)>,
    /// The directory entry of the last compacted file is not known to be
    /// durable yet.
    dir_pending: bool,
    /// Syncs made on the caller's thread (the event loop's), for tests
    /// and figures: with the disk thread, only a node whose value changed
    /// since its original was recorded costs one.
    inline_syncs: u64,
    /// Where the writes of owed originals are told (the daemon's log).
    log: Option<crate::log::Logger>,
}

/// An original the journal still owes its node.
#[derive(Debug, Clone)]
struct Stuck {
    original: String,
    /// Why the last write failed.
    error: String,
    /// Lever holds the node for a client now: a retry would overwrite that
    /// client's value, so the original is written on release instead.
    held: bool,
}

/// An original that could not be written back: still in the journal, and
/// retried until a write succeeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrestored {
    /// Kernel path of the node.
    pub node: String,
    /// The original it should get back.
    pub original: String,
    /// Why the last attempt failed.
    pub error: String,
}

/// What a recovery found and did.
#[derive(Debug, Default)]
pub struct Recovery {
    /// The nodes written back (or that failed to be).
    pub restored: Vec<Recovered>,
    /// The journal was written in an earlier boot: nothing was written
    /// back, because the reboot reset every node. Holds that boot's id and
    /// how many nodes the journal listed.
    pub earlier_boot: Option<(String, usize)>,
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
    /// journal for `fs`'s root. Returns what was restored. An original
    /// that could not be written back is carried into the new journal
    /// (see [`Journal::unrestored`]).
    pub fn recover_and_open(state_dir: &Path, fs: &KernelFs) -> io::Result<(Journal, Recovery)> {
        create_state_dir(state_dir, 0o700)?;
        let path = Self::path_in(state_dir);
        let recovered = recover(&path, fs)?;
        let root = fs.root().display().to_string();
        let boot = boot_id(fs);
        let mut text = header(&root, boot.as_deref());
        let mut stuck = BTreeMap::new();
        // `restored` is in reverse order of first write; the journal keeps
        // first-write order.
        for r in recovered.restored.iter().rev() {
            if let Err(error) = &r.result {
                text.push_str(&format!(
                    "set {} {}\n",
                    escape(&r.node),
                    escape(&r.original)
                ));
                stuck.insert(
                    r.node.clone(),
                    Stuck {
                        original: r.original.clone(),
                        error: error.clone(),
                        held: false,
                    },
                );
            }
        }
        let tmp = path.with_extension("journal.new");
        {
            let mut f = create_private(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &path)?;
        sync_dir(state_dir)?;
        let file = OpenOptions::new().append(true).open(&path)?;
        let armed = stuck
            .iter()
            .map(|(n, s)| (n.clone(), s.original.clone()))
            .collect();
        let live = stuck.keys().cloned().collect();
        Ok((
            Journal {
                path,
                file,
                root,
                boot,
                armed,
                live,
                len: text.len() as u64,
                fs: fs.clone(),
                stuck,
                writer: None,
                arming: Default::default(),
                next_ticket: 1,
                generation: 0,
                compacting: None,
                dir_pending: false,
                inline_syncs: 0,
                log: None,
            },
            recovered,
        ))
    }

    /// Say in `log` when an original owed since an earlier run is written
    /// (or fails again) at the end of a boost: the release's own line
    /// names only the value the boost began with.
    pub fn set_logger(&mut self, log: crate::log::Logger) {
        self.log = Some(log);
    }

    /// Originals the journal still owes their nodes (writes that failed),
    /// in node order.
    pub fn unrestored(&self) -> Vec<Unrestored> {
        self.stuck
            .iter()
            .map(|(node, s)| Unrestored {
                node: node.clone(),
                original: s.original.clone(),
                error: s.error.clone(),
            })
            .collect()
    }

    /// Whether any original is owed (see [`Journal::unrestored`]).
    pub fn owes(&self) -> bool {
        !self.stuck.is_empty()
    }

    /// Try again to write back every owed original no client holds now.
    /// Returns the nodes restored (or gone) and cleared.
    pub fn retry_unrestored(&mut self) -> io::Result<Vec<Unrestored>> {
        let due: Vec<String> = self
            .stuck
            .iter()
            .filter(|(_, s)| !s.held)
            .map(|(n, _)| n.clone())
            .collect();
        let mut cleared = Vec::new();
        for node in due {
            if let Some(done) = self.write_owed(&node)? {
                cleared.push(done);
            }
        }
        Ok(cleared)
    }

    /// Write `node`'s owed original; on success the entry ends (`done`).
    fn write_owed(&mut self, node: &str) -> io::Result<Option<Unrestored>> {
        let Some(s) = self.stuck.get_mut(node) else {
            return Ok(None);
        };
        match self.fs.write(node, &s.original) {
            Err(e) if !e.is_missing() => {
                s.error = e.to_string();
                s.held = false;
                Ok(None)
            }
            _ => {
                let s = self.stuck.remove(node).expect("present above");
                self.live.remove(node);
                self.append(&format!("done {}\n", escape(node)), false)?;
                Ok(Some(Unrestored {
                    node: node.to_string(),
                    original: s.original,
                    error: s.error,
                }))
            }
        }
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append a record; `durable` waits for it to reach the disk.
    fn append(&mut self, line: &str, durable: bool) -> io::Result<()> {
        self.file.write_all(line.as_bytes())?;
        self.len += line.len() as u64;
        if let Some((since, must_sync)) = &mut self.compacting {
            since.extend_from_slice(line.as_bytes());
            *must_sync |= durable;
        }
        if durable {
            if self.dir_pending {
                if let Some(dir) = self.path.parent() {
                    sync_dir(dir)?;
                }
                self.dir_pending = false;
            }
            self.file.sync_data()?;
            self.inline_syncs += 1;
        }
        Ok(())
    }

    /// How many syncs ran on the caller's thread so far.
    pub fn inline_syncs(&self) -> u64 {
        self.inline_syncs
    }

    /// Compact once the file has grown past [`COMPACT_AT`]: on the disk
    /// thread when there is one.
    fn maybe_compact(&mut self) -> io::Result<()> {
        if self.len <= COMPACT_AT || self.compacting.is_some() {
            return Ok(());
        }
        match &self.writer {
            Some(w) => {
                w.send(crate::writer::Job::Compact {
                    tmp: self.path.with_extension("journal.new"),
                    text: self.snapshot(),
                });
                self.compacting = Some((Vec::new(), false));
                Ok(())
            }
            None => self.rewrite(),
        }
    }

    /// The journal as it would be compacted now: every node held with its
    /// durable original, and the other durable originals as `set` + `done`
    /// (so that a later boost of them with the same original needs no new
    /// sync — old readers see a finished boost).
    fn snapshot(&self) -> String {
        let mut text = header(&self.root, self.boot.as_deref());
        let mut nodes: Vec<(&String, &String)> = self
            .armed
            .iter()
            .chain(self.arming.iter().map(|(n, (o, _))| (n, o)))
            .collect();
        nodes.sort();
        for (node, orig) in nodes {
            text.push_str(&format!("set {} {}\n", escape(node), escape(orig)));
            if !self.live.contains(node) {
                text.push_str(&format!("done {}\n", escape(node)));
            }
        }
        text
    }

    /// Rewrite the journal now (see [`Journal::snapshot`]), through a new
    /// file renamed over the old one.
    fn rewrite(&mut self) -> io::Result<()> {
        self.finish_compaction_wait()?;
        let text = self.snapshot();
        let tmp = self.path.with_extension("journal.new");
        {
            let mut f = create_private(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            sync_dir(dir)?;
        }
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.len = text.len() as u64;
        self.generation += 1;
        self.dir_pending = false;
        // Everything in the new file is durable.
        for (node, (orig, _)) in self.arming.drain() {
            self.armed.insert(node, orig);
        }
        Ok(())
    }

    /// Run the slow work on a disk thread from now on: first-boost syncs
    /// (through [`Journal::arm`]) and compaction. The event loop watches
    /// [`Journal::wake_fd`] and calls [`Journal::on_wake`].
    pub fn background(&mut self) -> io::Result<()> {
        if self.writer.is_none() {
            self.writer = Some(crate::writer::Writer::start()?);
        }
        Ok(())
    }

    /// Readable when the disk thread finished something.
    pub fn wake_fd(&self) -> Option<rustix::fd::BorrowedFd<'_>> {
        self.writer.as_ref().map(|w| w.wake_fd())
    }

    /// Make the originals of `nodes` durable before they are needed,
    /// without waiting: each node not held and not yet recorded is read,
    /// its original appended now and synced on the disk thread. Returns
    /// the ticket [`Journal::on_wake`] reports once they are durable, or
    /// `None` when nothing needs waiting for. Without a disk thread it does
    /// nothing (the sync happens inline at the node's first write, as it
    /// also does when a node changed since its original was recorded).
    pub fn arm(&mut self, nodes: &[&str]) -> io::Result<Option<u64>> {
        if self.writer.is_none() {
            return Ok(None);
        }
        let mut lines = String::new();
        let ticket = self.next_ticket;
        let mut waiting = None;
        for &node in nodes {
            if self.live.contains(node) || self.armed.contains_key(node) {
                continue;
            }
            if let Some((_, t)) = self.arming.get(node) {
                waiting = Some(*t);
                continue;
            }
            // A node that cannot be read is not armed: its first write
            // fails the same way and the client hears why.
            let Ok(orig) = self.fs.read(node) else {
                continue;
            };
            lines.push_str(&format!(
                "set {n} {o}\ndone {n}\n",
                n = escape(node),
                o = escape(&orig)
            ));
            self.arming.insert(node.to_string(), (orig, ticket));
        }
        if lines.is_empty() {
            return Ok(waiting);
        }
        self.append(&lines, false)?;
        self.next_ticket += 1;
        self.send_sync(ticket);
        Ok(Some(ticket))
    }

    fn send_sync(&self, ticket: u64) {
        let (Some(w), Ok(file)) = (&self.writer, self.file.try_clone()) else {
            return;
        };
        w.send(crate::writer::Job::Sync {
            file,
            dir: self
                .dir_pending
                .then(|| self.path.parent().map(Path::to_path_buf))
                .flatten(),
            ticket,
            generation: self.generation,
        });
    }

    /// Take what the disk thread finished: the tickets whose originals are
    /// durable now (a failed sync also ends its wait: the first write of
    /// the node then syncs inline and reports any error to its client).
    pub fn on_wake(&mut self) -> io::Result<Vec<u64>> {
        let Some(w) = &self.writer else {
            return Ok(Vec::new());
        };
        let mut tickets = Vec::new();
        for done in w.take_done() {
            match done {
                crate::writer::Done::Synced {
                    ticket,
                    generation,
                    result,
                } => {
                    if generation != self.generation {
                        continue; // the same ticket was re-sent for the new file
                    }
                    if result.is_ok() {
                        self.dir_pending = false;
                    }
                    let ok = result.is_ok();
                    self.arming.retain(|node, (orig, t)| {
                        if *t != ticket {
                            return true;
                        }
                        if ok {
                            self.armed.insert(node.clone(), orig.clone());
                        }
                        false
                    });
                    tickets.push(ticket);
                }
                crate::writer::Done::Compacted(file) => self.finish_compaction(file)?,
            }
        }
        Ok(tickets)
    }

    /// The compacted file is written and durable: append what came since
    /// its snapshot and put it in place. Syncs of the old file still
    /// outstanding are sent again for the new one.
    fn finish_compaction(&mut self, file: io::Result<File>) -> io::Result<()> {
        let Some((since, must_sync)) = self.compacting.take() else {
            return Ok(());
        };
        let mut file = file?;
        let text_len = file.metadata()?.len();
        file.write_all(&since)?;
        if must_sync {
            file.sync_data()?;
        }
        std::fs::rename(self.path.with_extension("journal.new"), &self.path)?;
        self.file = file;
        self.len = text_len + since.len() as u64;
        self.generation += 1;
        self.dir_pending = true;
        let mut waiting: Vec<u64> = self.arming.values().map(|(_, t)| *t).collect();
        waiting.sort_unstable();
        waiting.dedup();
        for t in waiting {
            self.send_sync(t);
        }
        Ok(())
    }

    /// Wait for a compaction in flight (clean stop, or a rewrite now).
    fn finish_compaction_wait(&mut self) -> io::Result<()> {
        while self.compacting.is_some() {
            let Some(done) = self.writer.as_ref().and_then(|w| w.wait_done()) else {
                self.compacting = None;
                break;
            };
            if let crate::writer::Done::Compacted(file) = done {
                self.finish_compaction(file)?;
            }
        }
        Ok(())
    }
}

fn header(root: &str, boot: Option<&str>) -> String {
    match boot {
        Some(b) => format!("{HEADER} root={} boot={}\n", escape(root), escape(b)),
        None => format!("{HEADER} root={}\n", escape(root)),
    }
}

/// The running boot's id as the tree under `fs` shows it (`None` where the
/// node does not exist, e.g. most simulated boards).
pub(crate) fn boot_id(fs: &KernelFs) -> Option<String> {
    fs.read(BOOT_ID).ok().filter(|b| !b.is_empty())
}

impl OriginalsLog for Journal {
    fn record(&mut self, node: &str, original: &str) -> io::Result<()> {
        if let Some(s) = self.stuck.get_mut(node) {
            // What the node holds now is not its original: the journal's
            // is, and it is written back when this boost ends.
            s.held = true;
        }
        if self.live.contains(node) {
            return Ok(());
        }
        // A durable record of this same original is already in the file:
        // this one need not wait for the disk (see the module docs).
        let durable = self.armed.get(node).map(String::as_str) != Some(original);
        self.append(
            &format!("set {} {}\n", escape(node), escape(original)),
            durable,
        )?;
        self.armed.insert(node.to_string(), original.to_string());
        self.live.insert(node.to_string());
        Ok(())
    }

    fn forget(&mut self, node: &str) -> io::Result<()> {
        if self.stuck.contains_key(node) {
            // The boost ended with the value the node had when it began;
            // now the original owed since the last run.
            let done = self.write_owed(node)?;
            if let Some(log) = &self.log {
                match (done, self.stuck.get(node)) {
                    (Some(u), _) => log.info(&format!(
                        "restore {node}: wrote back {:?}, its original owed since an earlier run (after the value this boost began with)",
                        u.original
                    )),
                    (None, Some(s)) => log.warn(&format!(
                        "{node}: its original {:?}, owed since an earlier run, still cannot be written ({}); retried every {} s",
                        s.original,
                        s.error,
                        crate::server::RETRY_UNRESTORED.as_secs()
                    )),
                    (None, None) => {}
                }
            }
            return Ok(());
        }
        if self.live.remove(node) {
            self.append(&format!("done {}\n", escape(node)), false)?;
            self.maybe_compact()?;
        }
        Ok(())
    }
}

impl Journal {
    /// Mark every node restored and empty the journal (clean stop).
    /// Originals still owed are kept (one last attempt is made first).
    pub fn compact(&mut self) -> io::Result<()> {
        for s in self.stuck.values_mut() {
            s.held = false;
        }
        self.retry_unrestored()?;
        self.live.retain(|n| self.stuck.contains_key(n));
        // A clean stop leaves only what is owed.
        self.finish_compaction_wait()?;
        self.arming.clear();
        self.armed.retain(|n, _| self.live.contains(n));
        self.rewrite()
    }
}

impl Journal {
    /// The root the journal was written for.
    pub fn root(&self) -> &str {
        &self.root
    }
}

/// What a journal file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The root prefix it was written for.
    pub root: String,
    /// The boot it was written in, when the tree had a boot id.
    pub boot: Option<String>,
    /// Nodes still held, with their originals, in first-write order.
    pub pending: Vec<(String, String)>,
}

/// Parse a journal's text. A torn last line (a crash mid-append) is
/// ignored; anything else malformed is an error naming its line.
pub fn parse(text: &str) -> Result<Parsed, String> {
    let mut lines = text.split_inclusive('\n');
    let header_line = lines.next().unwrap_or_default();
    let not_journal = || "line 1: not a lever originals journal".to_string();
    let fields = header_line
        .trim_end()
        .strip_prefix(HEADER)
        .ok_or_else(not_journal)?;
    let (mut root, mut boot) = (None, None);
    for field in fields.split_whitespace() {
        match field.split_once('=') {
            Some(("root", v)) => root = Some(unescape(v)),
            Some(("boot", v)) => boot = Some(unescape(v)),
            // Fields a later version may add.
            _ => {}
        }
    }
    let root = root.ok_or_else(not_journal)?;
    // Outstanding originals in first-set order; the first original of a
    // node is the true one.
    let mut pending: Vec<(String, String)> = Vec::new();
    for (i, line) in lines.enumerate() {
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
            _ => return Err(format!("line {}: malformed record {line:?}", i + 2)),
        }
    }
    Ok(Parsed {
        root,
        boot,
        pending,
    })
}

/// Restore what the journal at `path` holds, without opening a new one
/// (`lever restore`). The journal is then emptied. A journal from an
/// earlier boot is emptied without writing anything back (see the module
/// docs).
pub fn recover(path: &Path, fs: &KernelFs) -> io::Result<Recovery> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Recovery::default()),
        Err(e) => return Err(e),
    };
    let parsed = parse(&text).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })?;
    let Parsed {
        root,
        boot,
        mut pending,
    } = parsed;
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
    let mut out = Recovery::default();
    let now = boot_id(fs);
    if let (Some(then), Some(now)) = (&boot, &now) {
        if then != now {
            out.earlier_boot = Some((then.clone(), pending.len()));
            pending.clear();
        }
    }
    // Restore in reverse order of first write: for a min/max pair this
    // undoes the writes in the opposite order they were made, which keeps
    // min <= max at every step.
    for (node, original) in pending.into_iter().rev() {
        let result = match fs.write(&node, &original) {
            Ok(_) => Ok(()),
            Err(e) if e.is_missing() => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        out.restored.push(Recovered {
            node,
            original,
            result,
        });
    }
    if out.restored.iter().all(|r| r.result.is_ok()) {
        let mut f = create_private(path)?;
        f.write_all(header(&root, now.as_deref()).as_bytes())?;
        f.sync_all()?;
    }
    Ok(out)
}

/// Create (or truncate) a journal file readable by its owner only.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// Create the state directory (and missing parents) with `mode`; an
/// existing one is left as it is (systemd's `StateDirectoryMode=` or the
/// administrator decided).
pub fn create_state_dir(dir: &Path, mode: u32) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
}

/// How many nodes the journal in `state_dir` still holds an original for
/// (what the next start, or `lever restore`, would write back); 0 for a
/// missing journal. Read from the file, so it is what a crash now would
/// leave.
pub fn pending_in(state_dir: &Path) -> io::Result<usize> {
    let path = Journal::path_in(state_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text)
            .map(|p| p.pending.len())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// The name of the lock file in a state directory.
pub const LOCK_FILE: &str = "lock";

/// A daemon's hold on its state directory: an exclusive `flock` on
/// `STATE_DIR/lock` (which holds the holder's pid, for the message a
/// second daemon gives), kept for the life of this value. The kernel
/// drops it when the process ends, `kill -9` included, so a stale lock
/// file never blocks a restart.
#[derive(Debug)]
pub struct StateLock {
    dir: PathBuf,
    _file: File,
}

/// Why the state directory could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it; its pid, as its lock file says.
    Held {
        /// The pid the lock file names (None when unreadable).
        pid: Option<u32>,
    },
    /// Creating the directory or the lock file failed.
    Io(io::Error),
}

impl StateLock {
    /// Create `dir` with `mode` if missing (an existing one is left as
    /// it is), then take its lock without waiting. Nothing else in the
    /// directory is read or written; when another process holds the lock
    /// nothing at all is written.
    pub fn acquire(dir: &Path, mode: u32) -> Result<StateLock, LockError> {
        create_state_dir(dir, mode).map_err(LockError::Io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(dir.join(LOCK_FILE))
            .map_err(LockError::Io)?;
        use rustix::fs::{flock, FlockOperation};
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let mut text = String::new();
                let _ = io::Read::read_to_string(&mut file, &mut text);
                return Err(LockError::Held {
                    pid: text.trim().parse().ok(),
                });
            }
            Err(e) => return Err(LockError::Io(e.into())),
        }
        file.set_len(0).map_err(LockError::Io)?;
        io::Seek::rewind(&mut file).map_err(LockError::Io)?;
        file.write_all(format!("{}\n", std::process::id()).as_bytes())
            .map_err(LockError::Io)?;
        Ok(StateLock {
            dir: dir.to_path_buf(),
            _file: file,
        })
    }

    /// The directory held.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
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
    use lever_testkit::FakeTree;

    #[test]
    fn the_state_lock_is_exclusive_names_its_holder_and_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("new").join("state");
        let held = StateLock::acquire(&state, 0o700).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&state.join(LOCK_FILE)), 0o600);
        let me = std::process::id();
        // flock is per open file: a second open in this process conflicts
        // as another process's would, and reads the holder's pid.
        match StateLock::acquire(&state, 0o700) {
            Err(LockError::Held { pid }) => assert_eq!(pid, Some(me)),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            std::fs::read_to_string(state.join(LOCK_FILE)).unwrap(),
            format!("{me}\n")
        );
        drop(held);
        let again = StateLock::acquire(&state, 0o700).unwrap();
        assert_eq!(again.dir(), state);
        // An existing directory keeps its mode (the administrator's).
        let other = dir.path().join("open");
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _l = StateLock::acquire(&other, 0o700).unwrap();
        assert_eq!(mode(&other), 0o755);
    }

    #[test]
    fn pending_counts_what_the_next_start_would_restore() {
        let (_dir, fs, state) = board();
        assert_eq!(pending_in(&state).unwrap(), 0);
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        assert_eq!(pending_in(&state).unwrap(), 0);
        j.record("/sys/a", "1").unwrap();
        j.record("/sys/b", "2").unwrap();
        assert_eq!(pending_in(&state).unwrap(), 2);
        j.forget("/sys/a").unwrap();
        assert_eq!(pending_in(&state).unwrap(), 1);
        j.forget("/sys/b").unwrap();
        assert_eq!(pending_in(&state).unwrap(), 0);
        std::fs::write(Journal::path_in(&state), "not a journal\n").unwrap();
        assert!(pending_in(&state).is_err());
    }

    #[test]
    fn escape_round_trips() {
        for s in ["", "300000", "a b\tc\nd\\e", "\u{1}x", "performance"] {
            assert_eq!(unescape(&escape(s)), s, "{s:?}");
            assert!(!escape(s).contains(' ') && !escape(s).contains('\n'));
        }
    }

    /// A tree of three nodes and a state directory beside it.
    fn board() -> ((FakeTree, tempfile::TempDir), KernelFs, PathBuf) {
        let tree = FakeTree::with(&[("/sys/a", "999"), ("/sys/b", "5"), ("/sys/c", "77")]);
        let fs = tree.fs().clone();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        ((tree, dir), fs, state)
    }

    #[test]
    fn recovers_outstanding_originals_only() {
        let (_dir, fs, state) = board();
        let (mut j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        assert!(rec.restored.is_empty() && rec.earlier_boot.is_none());
        j.record("/sys/a", "1").unwrap();
        j.record("/sys/b", "2 two").unwrap();
        j.forget("/sys/b").unwrap();
        // Recording a node already held costs nothing.
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
        let nodes: Vec<&str> = rec.restored.iter().map(|r| r.node.as_str()).collect();
        assert_eq!(nodes, ["/sys/gone", "/sys/c", "/sys/a"]);
        assert!(rec.restored.iter().all(|r| r.result.is_ok()));
        assert_eq!(fs.read("/sys/a").unwrap(), "1");
        assert_eq!(fs.read("/sys/b").unwrap(), "5");
        assert_eq!(fs.read("/sys/c").unwrap(), "3");
        // Compacted: a second recovery has nothing to do.
        assert!(recover(&Journal::path_in(&state), &fs)
            .unwrap()
            .restored
            .is_empty());
    }

    #[test]
    fn a_node_changed_by_others_after_lever_let_go_is_kept_after_a_crash() {
        let (_dir, fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        // Lever boosts /sys/a (original 999), restores it, lets go.
        j.record("/sys/a", "999").unwrap();
        fs.write("/sys/a", "1").unwrap();
        fs.write("/sys/a", "999").unwrap();
        j.forget("/sys/a").unwrap();
        // An administrator changes it; then the daemon is killed.
        fs.write("/sys/a", "500").unwrap();
        drop(j);
        let (_j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        assert!(rec.restored.is_empty(), "{:?}", rec.restored);
        assert_eq!(fs.read("/sys/a").unwrap(), "500");
    }

    #[test]
    fn a_second_boost_of_the_same_original_is_recovered_without_a_new_fsync() {
        let (_dir, fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/a", "999").unwrap();
        j.forget("/sys/a").unwrap();
        j.record("/sys/a", "999").unwrap();
        fs.write("/sys/a", "1").unwrap();
        drop(j); // crash while boosted
        let (_j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        assert_eq!(rec.restored.len(), 1);
        assert_eq!(fs.read("/sys/a").unwrap(), "999");
    }

    #[test]
    fn a_journal_from_an_earlier_boot_is_not_replayed() {
        let (_dir, fs, state) = board();
        fs.create_node(BOOT_ID, "11111111-aaaa\n").unwrap();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/a", "999").unwrap();
        fs.write("/sys/a", "1").unwrap();
        drop(j);
        // Reboot: a new boot id; the boot's own configuration set /sys/a.
        fs.write(BOOT_ID, "22222222-bbbb").unwrap();
        fs.write("/sys/a", "123").unwrap();
        let rec = recover(&Journal::path_in(&state), &fs).unwrap();
        assert!(rec.restored.is_empty());
        assert_eq!(rec.earlier_boot, Some(("11111111-aaaa".to_string(), 1)));
        assert_eq!(fs.read("/sys/a").unwrap(), "123");
        // The journal now belongs to this boot and is empty.
        let text = std::fs::read_to_string(Journal::path_in(&state)).unwrap();
        assert!(text.contains("boot=22222222-bbbb"), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
        // The same boot replays as before.
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/a", "123").unwrap();
        fs.write("/sys/a", "1").unwrap();
        drop(j);
        let rec = recover(&Journal::path_in(&state), &fs).unwrap();
        assert_eq!(rec.restored.len(), 1);
        assert_eq!(fs.read("/sys/a").unwrap(), "123");
    }

    #[test]
    fn growth_is_compacted_and_held_nodes_survive_it() {
        let (_dir, fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/c", "77").unwrap();
        fs.write("/sys/c", "0").unwrap();
        // 100,000 boosts append 2.5 MB of records.
        for _ in 0..100_000 {
            j.record("/sys/b", "5").unwrap();
            j.forget("/sys/b").unwrap();
        }
        let len = std::fs::metadata(j.path()).unwrap().len();
        assert!(len <= COMPACT_AT, "{len}");
        assert_eq!(j.len, len);
        drop(j);
        let (_j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        let nodes: Vec<&str> = rec.restored.iter().map(|r| r.node.as_str()).collect();
        assert_eq!(nodes, ["/sys/c"]);
        assert_eq!(fs.read("/sys/c").unwrap(), "77");
    }

    #[test]
    fn parse_names_the_bad_line_and_ignores_a_torn_one() {
        let ok = "lever-originals v1 root=/r boot=b future=x\nset /a 1\nset /b 2\ndone /a\nset /c";
        let p = parse(ok).unwrap();
        assert_eq!(p.root, "/r");
        assert_eq!(p.boot.as_deref(), Some("b"));
        assert_eq!(p.pending, [("/b".to_string(), "2".to_string())]);
        assert_eq!(
            parse("lever-originals v1 root=/r\nset /a 1\nbogus\n").unwrap_err(),
            "line 3: malformed record \"bogus\""
        );
        assert!(parse("").unwrap_err().starts_with("line 1:"));
        assert!(parse("lever-originals v1 boot=x\n")
            .unwrap_err()
            .starts_with("line 1:"));
    }

    #[test]
    fn parse_survives_any_bytes() {
        // A cheap stand-in for the cargo-fuzz target `journal_parse`:
        // every prefix and every single-byte change of a valid journal.
        let good =
            "lever-originals v1 root=/r\\sx boot=b\nset /a\\s1 \\x01\\e\ndone /a\nset /b 2\n";
        for cut in 0..=good.len() {
            let _ = parse(&good[..cut]);
        }
        let bytes = good.as_bytes();
        for i in 0..bytes.len() {
            for b in [b' ', b'\n', b'\\', b'x', 0u8, 0xff] {
                let mut v = bytes.to_vec();
                v[i] = b;
                let _ = parse(&String::from_utf8_lossy(&v));
            }
        }
    }

    /// Wait until the disk thread reports something, then take it.
    fn wake(j: &mut Journal) -> Vec<u64> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let got = j.on_wake().unwrap();
            if !got.is_empty() || j.compacting.is_none() && j.arming.is_empty() {
                return got;
            }
            assert!(std::time::Instant::now() < deadline, "disk thread silent");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Item 9 of issue 11: with the disk thread, a first boost's original
    /// is synced off the caller's thread before the node is written, and
    /// compaction writes and syncs there too.
    #[test]
    fn first_boost_syncs_and_compaction_run_on_the_disk_thread() {
        let (_dir, fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.background().unwrap();
        let t = j.arm(&["/sys/a", "/sys/b"]).unwrap().expect("a ticket");
        // Recorded in the file before anything is written, not yet durable.
        let text = std::fs::read_to_string(j.path()).unwrap();
        assert!(text.contains("set /sys/a 999\ndone /sys/a\n"), "{text}");
        // A second client asking for the same node waits for the same sync.
        assert_eq!(j.arm(&["/sys/a"]).unwrap(), Some(t));
        assert_eq!(wake(&mut j), [t]);
        assert_eq!(j.arm(&["/sys/a"]).unwrap(), None);
        // The boost itself now costs no sync on this thread...
        j.record("/sys/a", "999").unwrap();
        assert_eq!(j.inline_syncs(), 0);
        // ...unless the node changed since its original was recorded.
        j.record("/sys/b", "6").unwrap();
        assert_eq!(j.inline_syncs(), 1);
        // Compaction: written and synced on the disk thread.
        j.record("/sys/c", "77").unwrap();
        for _ in 0..60_000 {
            j.forget("/sys/a").unwrap();
            j.record("/sys/a", "999").unwrap();
        }
        assert!(j.compacting.is_some() || j.len < COMPACT_AT);
        wake(&mut j);
        assert!(j.compacting.is_none());
        assert_eq!(j.inline_syncs(), 2);
        let len = std::fs::metadata(j.path()).unwrap().len();
        assert!(len < COMPACT_AT, "{len}");
        assert_eq!(j.len, len);
        // Crash: every node held comes back with its true original.
        drop(j);
        let (_j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        let mut nodes: Vec<(&str, &str)> = rec
            .restored
            .iter()
            .map(|r| (r.node.as_str(), r.original.as_str()))
            .collect();
        nodes.sort();
        assert_eq!(
            nodes,
            [("/sys/a", "999"), ("/sys/b", "6"), ("/sys/c", "77")]
        );
    }

    /// A node no one can write, root included: a directory in its place
    /// (`chmod 0444` does not stop root, and `chattr +i` needs a file
    /// system and a capability a test cannot count on). Writing it fails
    /// with EISDIR; putting the file back makes it writable again.
    fn make_unwritable(tree: &FakeTree, node: &str) {
        std::fs::remove_file(tree.host_path(node)).unwrap();
        std::fs::create_dir(tree.host_path(node)).unwrap();
    }

    fn make_writable(tree: &FakeTree, node: &str, content: &str) {
        std::fs::remove_dir(tree.host_path(node)).unwrap();
        tree.node(node, content);
    }

    /// Issue 11 item 6: boost, crash, the node unwritable at the next
    /// start. The original must survive that start, `lever restore`, and
    /// be written by the first attempt that can.
    #[test]
    fn an_original_that_cannot_be_restored_at_start_is_kept_until_written() {
        let ((tree, _d), fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/a", "999").unwrap();
        j.record("/sys/b", "5").unwrap();
        fs.write("/sys/a", "1").unwrap();
        fs.write("/sys/b", "6").unwrap();
        drop(j); // kill -9
        make_unwritable(&tree, "/sys/a");
        let (mut j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        assert!(rec
            .restored
            .iter()
            .any(|r| r.node == "/sys/a" && r.result.is_err()));
        assert_eq!(fs.read("/sys/b").unwrap(), "5");
        let owed = j.unrestored();
        assert_eq!(owed.len(), 1);
        assert_eq!(
            (owed[0].node.as_str(), owed[0].original.as_str()),
            ("/sys/a", "999")
        );
        assert!(owed[0].error.contains("/sys/a"), "{}", owed[0].error);
        // The file says so too: `lever restore` (or the next start) sees it.
        let text = std::fs::read_to_string(j.path()).unwrap();
        assert_eq!(
            parse(&text).unwrap().pending,
            [("/sys/a".into(), "999".into())]
        );
        // Still failing: still owed.
        assert!(j.retry_unrestored().unwrap().is_empty());
        assert!(j.owes());
        // Writable again: the next retry writes it and clears the entry.
        make_writable(&tree, "/sys/a", "1");
        let done = j.retry_unrestored().unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(fs.read("/sys/a").unwrap(), "999");
        assert!(!j.owes() && j.unrestored().is_empty());
        drop(j);
        let (_j, rec) = Journal::recover_and_open(&state, &fs).unwrap();
        assert!(rec.restored.is_empty(), "{:?}", rec.restored);
    }

    #[test]
    fn a_boost_of_an_owed_node_ends_with_the_true_original() {
        let ((tree, _d), fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/a", "999").unwrap();
        fs.write("/sys/a", "5").unwrap();
        drop(j);
        make_unwritable(&tree, "/sys/a");
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        make_writable(&tree, "/sys/a", "5");
        // A client boosts it: what the node holds (5) is not the original,
        // and a retry must not overwrite the client's value.
        j.record("/sys/a", "5").unwrap();
        fs.write("/sys/a", "50").unwrap();
        assert!(j.retry_unrestored().unwrap().is_empty());
        assert_eq!(fs.read("/sys/a").unwrap(), "50");
        // The release writes 5 back (the applier's idea), then the journal
        // writes the original it owes.
        fs.write("/sys/a", "5").unwrap();
        j.forget("/sys/a").unwrap();
        assert_eq!(fs.read("/sys/a").unwrap(), "999");
        assert!(!j.owes());
        // `lever restore` then finds nothing to do.
        drop(j);
        let rec = recover(&Journal::path_in(&state), &fs).unwrap();
        assert!(rec.restored.is_empty(), "{:?}", rec.restored);
    }

    #[test]
    fn a_clean_stop_keeps_what_is_still_owed() {
        let ((tree, _d), fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.record("/sys/a", "999").unwrap();
        drop(j);
        make_unwritable(&tree, "/sys/a");
        let (mut j, _) = Journal::recover_and_open(&state, &fs).unwrap();
        j.compact().unwrap();
        let text = std::fs::read_to_string(j.path()).unwrap();
        assert_eq!(
            parse(&text).unwrap().pending,
            [("/sys/a".into(), "999".into())]
        );
        // `lever restore` reports it until the node takes it.
        let rec = recover(j.path(), &fs).unwrap();
        assert!(rec.restored[0].result.is_err());
        make_writable(&tree, "/sys/a", "1");
        let rec = recover(j.path(), &fs).unwrap();
        assert!(rec.restored[0].result.is_ok());
        assert_eq!(fs.read("/sys/a").unwrap(), "999");
    }

    #[test]
    fn state_dir_and_journal_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, fs, state) = board();
        let (mut j, _) = Journal::recover_and_open(&state.join("deeper"), &fs).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state.join("deeper")), 0o700);
        assert_eq!(mode(j.path()), 0o600);
        j.compact().unwrap();
        assert_eq!(mode(j.path()), 0o600);
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
