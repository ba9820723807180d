//! Applying resolved writes as one transaction, and rolling them back.
//!
//! [`apply`] reads each node's original, then writes the new value (only
//! when it differs), in order. If write *k* fails, writes *k-1 … 0* are
//! undone in reverse order — each node gets back the exact text it showed
//! before — and the error names the failing node and its errno. Writes
//! marked not [`Write::required`] (IRQ affinities, which the kernel
//! refuses for per-CPU interrupts) are reported when refused instead.
//!
//! [`rollback`] undoes an [`Applied`] the same way, later (`off`). The
//! originals are what the caller must keep (in a state file, or the
//! daemon's journal) to undo after a restart.

use crate::resolve::Write;
use lever_kernel::{KernelError, KernelFs};
use serde::{Deserialize, Serialize};

/// Where writes go: the kernel below a root ([`KernelFs`]), or a test
/// double that refuses like the kernel does.
pub trait Nodes {
    /// The node's text, trailing newline removed ([`KernelFs::read`]).
    fn read(&self, node: &str) -> Result<String, KernelError>;
    /// Write `value` as `echo value > node` does ([`KernelFs::write_raw`]).
    fn write(&self, node: &str, value: &str) -> Result<(), KernelError>;
}

impl Nodes for KernelFs {
    fn read(&self, node: &str) -> Result<String, KernelError> {
        KernelFs::read(self, node)
    }

    fn write(&self, node: &str, value: &str) -> Result<(), KernelError> {
        self.write_raw(node, value)
    }
}

/// One node a transaction touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Kernel path.
    pub node: String,
    /// What it held before.
    pub original: String,
    /// What it reads back after the write (the kernel may round).
    pub applied: String,
    /// False when it already held the value (nothing was written).
    pub changed: bool,
}

/// A write the kernel refused that was not [`Write::required`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    /// Kernel path.
    pub node: String,
    /// The value refused.
    pub value: String,
    /// The errno, when the kernel gave one.
    pub errno: Option<i32>,
    /// The error as text.
    pub error: String,
}

/// A transaction that went through.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Applied {
    /// Every node written (or found already right), in write order.
    pub entries: Vec<Entry>,
    /// Optional writes the kernel refused.
    pub refused: Vec<Refused>,
}

/// A node that could not be put back during a rollback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreFailure {
    /// Kernel path.
    pub node: String,
    /// The original it should hold.
    pub original: String,
    /// Why it could not be written.
    pub error: String,
}

/// A transaction that failed: the failing node, its errno, and what the
/// rollback did.
#[derive(Debug, thiserror::Error)]
#[error("{node}: {error}; {} earlier write(s) rolled back{}", rolled_back.len(), if failed_restores.is_empty() { String::new() } else { format!(", {} could NOT be restored", failed_restores.len()) })]
pub struct ApplyError {
    /// The node whose read or write failed.
    pub node: String,
    /// The value that was being written.
    pub value: String,
    /// The errno (EACCES 13, EINVAL 22, EISDIR 21, ...), when there is one.
    pub errno: Option<i32>,
    /// The error.
    #[source]
    pub error: Box<KernelError>,
    /// Nodes put back to their originals, in the order they were restored.
    pub rolled_back: Vec<String>,
    /// Nodes that could not be put back.
    pub failed_restores: Vec<RestoreFailure>,
}

/// A rollback that could not restore every node (it still tried all).
#[derive(Debug, thiserror::Error)]
#[error("{} node(s) could not be restored: {}", failures.len(), failures.iter().map(|f| format!("{} ({})", f.node, f.error)).collect::<Vec<_>>().join("; "))]
pub struct RollbackError {
    /// Nodes restored.
    pub restored: Vec<String>,
    /// Nodes not restored.
    pub failures: Vec<RestoreFailure>,
}

/// The errno behind a kernel error, if it has one.
pub fn errno(e: &KernelError) -> Option<i32> {
    match e {
        KernelError::NotAllowed { source, .. }
        | KernelError::Rejected { source, .. }
        | KernelError::Io { source, .. } => source.raw_os_error(),
        KernelError::Missing { .. } => Some(2),
        _ => None,
    }
}

/// Apply `writes` in order as one transaction (module docs).
pub fn apply(nodes: &impl Nodes, writes: &[Write]) -> Result<Applied, ApplyError> {
    let mut done = Applied::default();
    for w in writes {
        let step = nodes.read(&w.node).and_then(|original| {
            let changed = original != w.value;
            if changed {
                nodes.write(&w.node, &w.value)?;
            }
            let applied = if changed {
                nodes.read(&w.node)?
            } else {
                original.clone()
            };
            Ok(Entry {
                node: w.node.clone(),
                original,
                applied,
                changed,
            })
        });
        match step {
            Ok(entry) => done.entries.push(entry),
            Err(error) if !w.required => done.refused.push(Refused {
                node: w.node.clone(),
                value: w.value.clone(),
                errno: errno(&error),
                error: error.to_string(),
            }),
            Err(error) => {
                let (rolled_back, failed_restores) = match rollback(nodes, &done.entries) {
                    Ok(restored) => (restored, Vec::new()),
                    Err(e) => (e.restored, e.failures),
                };
                return Err(ApplyError {
                    node: w.node.clone(),
                    value: w.value.clone(),
                    errno: errno(&error),
                    error: Box::new(error),
                    rolled_back,
                    failed_restores,
                });
            }
        }
    }
    Ok(done)
}

/// Put every changed node of `entries` back to its original, in reverse
/// order; returns the nodes restored. Every node is tried even when one
/// fails.
pub fn rollback(nodes: &impl Nodes, entries: &[Entry]) -> Result<Vec<String>, RollbackError> {
    let mut restored = Vec::new();
    let mut failures = Vec::new();
    for e in entries.iter().rev().filter(|e| e.changed) {
        match nodes.write(&e.node, &e.original) {
            Ok(()) => restored.push(e.node.clone()),
            Err(err) => failures.push(RestoreFailure {
                node: e.node.clone(),
                original: e.original.clone(),
                error: err.to_string(),
            }),
        }
    }
    if failures.is_empty() {
        Ok(restored)
    } else {
        Err(RollbackError { restored, failures })
    }
}
