//! `lever profile apply --direct` / `off --direct`: a profile applied by the
//! CLI itself, without the daemon, with a state file for `off`.
//!
//! Honest about what it is: the values are written once and nobody holds
//! them — a daemon or anything else may change them afterwards (`verify`
//! shows it), perflocks do not aggregate with them, and nothing re-applies
//! them after a reboot. The originals are saved (fsynced) *before* the
//! first write, so `off` can undo even an apply that crashed half-way.
//! Through the daemon (phase 2) a profile is a low-priority, indefinite
//! request instead, journaled like every other.

use crate::apply::{apply, rollback, ApplyError, Entry, Nodes, RollbackError};
use crate::resolve::Resolved;
use crate::state::{State, StateError, FORMAT};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a direct apply or off did not happen.
#[derive(Debug, thiserror::Error)]
pub enum DirectError {
    /// The state file.
    #[error(transparent)]
    State(#[from] StateError),
    /// The transaction failed and was rolled back.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// `off` could not restore every node.
    #[error(transparent)]
    Rollback(#[from] RollbackError),
    /// A profile is already applied through this state file.
    #[error("profile `{profile}` is already applied (state {}); run `lever profile off --direct` first", path.display())]
    AlreadyApplied {
        /// The applied profile.
        profile: String,
        /// The state file.
        path: PathBuf,
    },
    /// `off` with no state file.
    #[error("no profile is applied (no state file {})", path.display())]
    NotApplied {
        /// The state file.
        path: PathBuf,
    },
}

/// Apply `resolved` under `nodes`, recording originals in `state_path`.
pub fn apply_direct(
    nodes: &impl Nodes,
    resolved: &Resolved,
    state_path: &Path,
) -> Result<State, DirectError> {
    if let Some(old) = State::load(state_path)? {
        return Err(DirectError::AlreadyApplied {
            profile: old.profile,
            path: state_path.into(),
        });
    }
    let mut state = State {
        format: FORMAT.into(),
        profile: resolved.profile.clone(),
        target: resolved.target.clone(),
        rt_cpus: resolved.rt_cpus.clone(),
        pending: true,
        // Unreadable nodes are left out: apply fails on them before writing.
        entries: resolved
            .writes
            .iter()
            .filter_map(|w| {
                Some(Entry {
                    node: w.node.clone(),
                    original: nodes.read(&w.node).ok()?,
                    applied: w.value.clone(),
                    changed: true,
                })
            })
            .collect(),
        refused: Vec::new(),
    };
    state.save(state_path)?;
    match apply(nodes, &resolved.writes) {
        Ok(applied) => {
            state.pending = false;
            state.entries = applied.entries;
            state.refused = applied.refused;
            state.save(state_path)?;
            Ok(state)
        }
        Err(e) => {
            // Rolled back: nothing is applied any more.
            remove(state_path)?;
            Err(e.into())
        }
    }
}

/// What `off --direct` restored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Off {
    /// The profile that was applied.
    pub profile: String,
    /// Nodes written back, in order.
    pub restored: Vec<String>,
}

/// Put back every original recorded in `state_path`, then remove it.
pub fn off_direct(nodes: &impl Nodes, state_path: &Path) -> Result<Off, DirectError> {
    let state = State::load(state_path)?.ok_or_else(|| DirectError::NotApplied {
        path: state_path.into(),
    })?;
    let restored = rollback(nodes, &state.entries)?;
    remove(state_path)?;
    Ok(Off {
        profile: state.profile,
        restored,
    })
}

fn remove(path: &Path) -> Result<(), StateError> {
    std::fs::remove_file(path).map_err(|source| StateError::Io {
        path: path.into(),
        op: "remove",
        source,
    })
}
