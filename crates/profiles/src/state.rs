//! What an applied profile leaves behind, and comparing it with the kernel.
//!
//! The state file is JSON (`lever-profile-state/1`): the profile, the
//! target and RT CPUs it was resolved with, and every [`Entry`] — node,
//! original, applied value — in write order. It is written to a temporary
//! file, fsynced and renamed over the old one, so a crash leaves either the
//! old or the new file, never half of one.
//!
//! [`diff`] says what applying would change; [`verify`] says which nodes no
//! longer hold what was applied (someone wrote them behind Lever's back).

use crate::apply::{Entry, Nodes, Refused};
use crate::resolve::{Resolved, Write};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The format tag of a state file.
pub const FORMAT: &str = "lever-profile-state/1";

/// An applied profile, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// [`FORMAT`].
    pub format: String,
    /// The profile's name.
    pub profile: String,
    /// The target it was resolved against.
    pub target: String,
    /// The RT CPUs used, if any.
    pub rt_cpus: Option<String>,
    /// True while the writes are under way: the originals are recorded
    /// before the first write, so `off` can undo a crashed apply.
    pub pending: bool,
    /// Every node, in write order.
    pub entries: Vec<Entry>,
    /// Optional writes the kernel refused (IRQ affinities).
    #[serde(default)]
    pub refused: Vec<Refused>,
}

/// Reading or writing a state file failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// I/O on the file.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        /// The state file.
        path: PathBuf,
        /// `read`, `write`, `rename`, `remove`.
        op: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not a state file.
    #[error("{}: not a Lever profile state file: {why}", path.display())]
    Bad {
        /// The state file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl State {
    /// Read a state file; `Ok(None)` when there is none (no profile applied).
    pub fn load(path: &Path) -> Result<Option<State>, StateError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(StateError::Io {
                    path: path.into(),
                    op: "read",
                    source,
                })
            }
        };
        let state: State = serde_json::from_str(&text).map_err(|e| StateError::Bad {
            path: path.into(),
            why: e.to_string(),
        })?;
        if state.format != FORMAT {
            return Err(StateError::Bad {
                path: path.into(),
                why: format!("format `{}`, expected `{FORMAT}`", state.format),
            });
        }
        Ok(Some(state))
    }

    /// Write atomically: temporary file, fsync, rename.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let io = |op, source| StateError::Io {
            path: path.into(),
            op,
            source,
        };
        // `/run/lever` may not exist yet on a freshly booted system.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("write", e))?;
        }
        let tmp = path.with_extension("tmp");
        let json = serde_json::to_string_pretty(self).expect("a state serializes");
        let mut f = std::fs::File::create(&tmp).map_err(|e| io("write", e))?;
        f.write_all(json.as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| io("write", e))?;
        std::fs::rename(&tmp, path).map_err(|e| io("rename", e))
    }

    /// What was applied, as `(node, value)` pairs for [`verify`].
    pub fn expected(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .map(|e| (e.node.clone(), e.applied.clone()))
            .collect()
    }
}

/// One node `apply` would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The write.
    #[serde(flatten)]
    pub write: Write,
    /// What the node holds now (`None`: unreadable, with the reason in
    /// `unreadable`).
    pub current: Option<String>,
    /// Why the node could not be read.
    pub unreadable: Option<String>,
}

/// What applying `resolved` would change under `nodes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// Nodes whose value would change, in write order.
    pub changes: Vec<Change>,
    /// Nodes that already hold the profile's value.
    pub unchanged: usize,
}

/// Compare `resolved` with what the nodes hold now.
pub fn diff(nodes: &impl Nodes, resolved: &Resolved) -> Diff {
    let mut changes = Vec::new();
    let mut unchanged = 0;
    for w in &resolved.writes {
        match nodes.read(&w.node) {
            Ok(now) if now == w.value => unchanged += 1,
            Ok(now) => changes.push(Change {
                write: w.clone(),
                current: Some(now),
                unreadable: None,
            }),
            Err(e) => changes.push(Change {
                write: w.clone(),
                current: None,
                unreadable: Some(e.to_string()),
            }),
        }
    }
    Diff { changes, unchanged }
}

/// A node that no longer holds what was applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// Kernel path.
    pub node: String,
    /// What was applied.
    pub expected: String,
    /// What it holds now (`None`: unreadable).
    pub now: Option<String>,
}

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Nodes checked.
    pub checked: usize,
    /// Nodes that differ.
    pub drifted: Vec<Drift>,
}

/// Which of `expected` `(node, value)` pairs the nodes no longer hold.
pub fn verify(nodes: &impl Nodes, expected: &[(String, String)]) -> Verification {
    let drifted = expected
        .iter()
        .filter_map(|(node, value)| {
            let now = nodes.read(node).ok();
            (now.as_deref() != Some(value.as_str())).then(|| Drift {
                node: node.clone(),
                expected: value.clone(),
                now,
            })
        })
        .collect();
    Verification {
        checked: expected.len(),
        drifted,
    }
}

/// `(node, value)` pairs of a resolved profile, for [`verify`] without a
/// state file.
pub fn expected_of(resolved: &Resolved) -> Vec<(String, String)> {
    resolved
        .writes
        .iter()
        .map(|w| (w.node.clone(), w.value.clone()))
        .collect()
}
