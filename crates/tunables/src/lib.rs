//! Tunables: reading and writing the kernel nodes behind engine resources.
//!
//! `lever-engine` decides *what* each resource should hold; this crate knows
//! *how* a resource's node is read and written through a [`KernelFs`]:
//! integers and enumerated strings as text, and hold-fd devices such as
//! `/dev/cpu_dma_latency` (PM QoS) as a native-endian 32-bit integer.
//!
//! ```
//! use lever_engine::*;
//! use lever_kernel::KernelFs;
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "schedutil\n").unwrap();
//! let spec = ResourceSpec {
//!     name: "cpu_governor.silver".into(), opcode: Opcode(0x48000100),
//!     node: "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor".into(),
//!     unit: "governor".into(), low: 0, high: 2, steps: None, aggregation: Aggregation::Max,
//!     permission: Permission::ThirdParty, description: String::new(),
//!     kind: ResourceKind::Enum { values: vec!["powersave".into(), "schedutil".into(), "performance".into()] },
//! };
//! let now = lever_tunables::read_current(&fs, &spec).unwrap();
//! assert_eq!(now.text, "schedutil");
//! assert_eq!(now.level, Some(1));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use lever_engine::{Action, Engine, Plan, ResourceIndex, ResourceKind, ResourceSpec};
use lever_kernel::{KernelError, KernelFs, Node, WriteOutcome};
use serde::Serialize;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;

/// What a resource's node holds right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reading {
    /// The node's text as the kernel shows it (trailing newline removed); for
    /// a hold-fd device, the decoded integer, or empty when nothing is held.
    pub text: String,
    /// The same as a level the engine understands (an integer, or the index
    /// of an enum value); `None` when the text is not one.
    pub level: Option<i64>,
}

/// Read the current value of a resource's node.
pub fn read_current(fs: &KernelFs, spec: &ResourceSpec) -> Result<Reading, KernelError> {
    let text = match spec.kind {
        ResourceKind::HoldFd => {
            // The PM QoS device reads as the current aggregate target, a
            // native-endian s32 (drivers/base/power/qos.c / kernel/power/qos.c).
            let bytes = fs.read_bytes(&spec.node)?;
            match <[u8; 4]>::try_from(bytes.as_slice()) {
                Ok(b) => i32::from_ne_bytes(b).to_string(),
                Err(_) => String::from_utf8_lossy(&bytes).trim().to_string(),
            }
        }
        _ => fs.read(&spec.node)?,
    };
    let level = spec.parse_level(&text);
    Ok(Reading { text, level })
}

/// Where an [`Applier`] records originals durably before touching a node,
/// so that they can be restored after a crash (the daemon's journal).
pub trait OriginalsLog {
    /// Called before the first write to `node`, with its original text.
    /// An error stops the write.
    fn record(&mut self, node: &str, original: &str) -> std::io::Result<()>;
    /// Called after `node` was restored to its original.
    fn forget(&mut self, node: &str) -> std::io::Result<()>;
}

/// An [`OriginalsLog`] that keeps nothing (tests, one-shot tools).
#[derive(Debug, Default)]
pub struct NoLog;

impl OriginalsLog for NoLog {
    fn record(&mut self, _node: &str, _original: &str) -> std::io::Result<()> {
        Ok(())
    }
    fn forget(&mut self, _node: &str) -> std::io::Result<()> {
        Ok(())
    }
}

/// Executes engine plans on a kernel tree.
///
/// Before the first write to a node it reads and keeps the node's original
/// text, and a `Restore` writes exactly that text back. Hold-fd resources
/// (PM QoS) keep their descriptor open while a level is held and close it on
/// restore, which is how the kernel drops such a request.
///
/// Crash safety (a durable journal of originals) is layered on top by the
/// daemon through [`Applier::originals`] and [`Applier::adopt_original`].
#[derive(Debug)]
pub struct Applier {
    fs: KernelFs,
    originals: HashMap<ResourceIndex, String>,
    /// What each node Lever holds contains now (saves a read per write).
    last: HashMap<ResourceIndex, String>,
    held: HashMap<ResourceIndex, File>,
    /// Nodes written so far, kept open (see [`lever_kernel::Node`]).
    nodes: HashMap<ResourceIndex, Node>,
}

/// The result of one write of a plan.
#[derive(Debug)]
pub struct Applied {
    /// Which resource.
    pub resource: ResourceIndex,
    /// The text written (a level rendered, or the original).
    pub value: String,
    /// What the kernel did, or why it refused.
    pub result: Result<WriteOutcome, KernelError>,
}

impl Applier {
    /// An applier writing below `fs`'s root.
    pub fn new(fs: KernelFs) -> Self {
        Applier {
            fs,
            originals: HashMap::new(),
            last: HashMap::new(),
            held: HashMap::new(),
            nodes: HashMap::new(),
        }
    }

    /// The kernel tree.
    pub fn fs(&self) -> &KernelFs {
        &self.fs
    }

    /// Originals recorded so far (resource → text before Lever's first write).
    pub fn originals(&self) -> &HashMap<ResourceIndex, String> {
        &self.originals
    }

    /// Take over an original recorded elsewhere (e.g. a journal from a
    /// previous run), so that a restore writes it back.
    pub fn adopt_original(&mut self, resource: ResourceIndex, text: String) {
        self.originals.insert(resource, text);
    }

    /// Perform a plan's writes in order, without a durable log.
    pub fn apply(&mut self, engine: &Engine, plan: &Plan) -> Vec<Applied> {
        self.apply_logged(engine, plan, &mut NoLog)
    }

    /// Perform a plan's writes in order, recording each node's original in
    /// `log` before its first write. A failed write does not stop the
    /// others: each result is reported.
    pub fn apply_logged(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        log: &mut dyn OriginalsLog,
    ) -> Vec<Applied> {
        let mut out = Vec::with_capacity(plan.writes.len());
        for w in &plan.writes {
            let Some(spec) = engine.spec(w.resource) else {
                continue;
            };
            let (value, result) = match w.action {
                Action::Set(level) => (spec.render(level), self.set(w.resource, spec, level, log)),
                Action::Restore => self.restore(w.resource, spec, log),
            };
            out.push(Applied {
                resource: w.resource,
                value,
                result,
            });
        }
        out
    }

    fn set(
        &mut self,
        idx: ResourceIndex,
        spec: &ResourceSpec,
        level: i64,
        log: &mut dyn OriginalsLog,
    ) -> Result<WriteOutcome, KernelError> {
        if spec.kind == ResourceKind::HoldFd {
            return self.hold(idx, spec, level);
        }
        let value = spec.render(level);
        let fs = &self.fs;
        let node = self.nodes.entry(idx).or_insert_with(|| fs.node(&spec.node));
        let known = match self.last.get(&idx) {
            Some(text) => text.clone(),
            None => {
                let original = node.read()?;
                log.record(&spec.node, &original)
                    .map_err(|source| KernelError::Io {
                        path: spec.node.clone(),
                        op: "journal the original of",
                        source,
                    })?;
                self.originals.insert(idx, original.clone());
                original
            }
        };
        let outcome = node.write_known(&value, Some(&known))?;
        let now = match &outcome {
            WriteOutcome::Stored { stored, .. } => stored.clone(),
            _ => value,
        };
        self.last.insert(idx, now);
        Ok(outcome)
    }

    fn hold(
        &mut self,
        idx: ResourceIndex,
        spec: &ResourceSpec,
        level: i64,
    ) -> Result<WriteOutcome, KernelError> {
        let value = i32::try_from(level).unwrap_or(i32::MAX);
        let io_err = |source| KernelError::Io {
            path: spec.node.clone(),
            op: "write",
            source,
        };
        if !self.held.contains_key(&idx) {
            let host = self.fs.resolve(&spec.node)?;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(host)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => KernelError::Missing {
                        path: spec.node.clone(),
                    },
                    _ => io_err(e),
                })?;
            self.held.insert(idx, file);
        }
        let file = self.held.get_mut(&idx).expect("inserted above");
        file.write_all(&value.to_ne_bytes()).map_err(io_err)?;
        Ok(WriteOutcome::WrittenUnverified)
    }

    fn restore(
        &mut self,
        idx: ResourceIndex,
        spec: &ResourceSpec,
        log: &mut dyn OriginalsLog,
    ) -> (String, Result<WriteOutcome, KernelError>) {
        if spec.kind == ResourceKind::HoldFd {
            // Closing the descriptor drops the request.
            self.held.remove(&idx);
            return (String::new(), Ok(WriteOutcome::Written));
        }
        match self.originals.get(&idx) {
            Some(text) => {
                let text = text.clone();
                let fs = &self.fs;
                let node = self.nodes.entry(idx).or_insert_with(|| fs.node(&spec.node));
                let last = self.last.remove(&idx);
                let result = match &last {
                    Some(now) => node.write_known(&text, Some(now)),
                    None => node.write(&text),
                };
                if let (Err(e), Some(now)) = (&result, last) {
                    if !e.is_missing() {
                        // Still boosted as far as we know: the next set must
                        // not mistake that value for the original.
                        self.last.insert(idx, now);
                    }
                }
                // A node that vanished (CPU unplugged) has nothing left to
                // restore; forget it too.
                if result.is_ok() || matches!(result, Err(KernelError::Missing { .. })) {
                    self.originals.remove(&idx);
                    if let Err(source) = log.forget(&spec.node) {
                        return (
                            text,
                            Err(KernelError::Io {
                                path: spec.node.clone(),
                                op: "journal the restore of",
                                source,
                            }),
                        );
                    }
                }
                (text, result)
            }
            // Never written by us: nothing to restore.
            None => (String::new(), Ok(WriteOutcome::Unchanged)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_engine::{Aggregation, Opcode, Permission};
    use lever_testkit::FakeTree;

    fn spec(node: &str, kind: ResourceKind) -> ResourceSpec {
        ResourceSpec {
            name: "r".into(),
            opcode: Opcode(0x40000000),
            node: node.into(),
            unit: "us".into(),
            low: 0,
            high: 2_000_000_000,
            steps: None,
            aggregation: Aggregation::Min,
            permission: Permission::System,
            kind,
            description: String::new(),
        }
    }

    #[test]
    fn reads_hold_fd_as_binary_s32() {
        let node = lever_kernel::paths::CPU_DMA_LATENCY;
        let tree = FakeTree::with(&[(node, "")]);
        let fs = tree.fs();
        std::fs::write(tree.host_path(node), 2_000_000_000i32.to_ne_bytes()).unwrap();
        let r = read_current(fs, &spec(node, ResourceKind::HoldFd)).unwrap();
        assert_eq!(r.level, Some(2_000_000_000));
        tree.node(node, "");
        let r = read_current(fs, &spec(node, ResourceKind::HoldFd)).unwrap();
        assert_eq!((r.text.as_str(), r.level), ("", None));
    }

    #[test]
    fn a_failed_restore_keeps_the_true_original() {
        use lever_engine::{Engine, OwnerId, PriorityClass, Request, RequestId};
        let node = "/proc/sys/vm/swappiness";
        let tree = FakeTree::with(&[(node, "60\n")]);
        let fs = tree.fs();
        let mut s = spec(node, ResourceKind::Plain);
        s.aggregation = Aggregation::Newest;
        s.permission = Permission::ThirdParty;
        let mut engine = Engine::new(vec![s.clone()]).unwrap();
        let mut applier = Applier::new(fs.clone());
        let ask = |id: u64, v: i64| Request {
            id: RequestId(id),
            owner: OwnerId(1),
            priority: PriorityClass::ThirdPartyLow,
            deadline: None,
            pairs: vec![(s.opcode, v)],
        };
        let t = std::time::Duration::ZERO;
        let plan = engine.acquire(ask(1, 5), t).unwrap();
        assert!(applier.apply(&engine, &plan)[0].result.is_ok());
        assert_eq!(fs.read(node).unwrap(), "5");
        // The node cannot be written for a while (here: it is a directory).
        let host = tree.host_path(node);
        tree.remove(node);
        std::fs::create_dir(&host).unwrap();
        let plan = engine.release(RequestId(1)).unwrap();
        assert!(applier.apply(&engine, &plan)[0].result.is_err());
        std::fs::remove_dir(&host).unwrap();
        tree.node(node, "5\n");
        // A new boost, then its release: the original comes back, not the
        // value the failed restore left behind.
        let plan = engine.acquire(ask(2, 7), t).unwrap();
        assert!(applier.apply(&engine, &plan)[0].result.is_ok());
        assert_eq!(applier.originals().get(&0).map(String::as_str), Some("60"));
        let plan = engine.release(RequestId(2)).unwrap();
        assert!(applier.apply(&engine, &plan)[0].result.is_ok());
        assert_eq!(fs.read(node).unwrap(), "60");
    }

    #[test]
    fn missing_node_is_an_error_naming_it() {
        let tree = FakeTree::new();
        let err =
            read_current(tree.fs(), &spec("/proc/sys/kernel/x", ResourceKind::Plain)).unwrap_err();
        assert!(err.is_missing());
        assert_eq!(err.path(), "/proc/sys/kernel/x");
    }
}
