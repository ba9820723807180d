//! What each `lever profile` verb does, one function each, so the CLI only
//! parses flags and renders: load the profile, bind the target, resolve,
//! then show, diff, verify or apply directly.

use crate::apply::Refused;
use crate::direct::{apply_direct, off_direct, Off};
use crate::error::ProfileError;
use crate::load::{builtin_names, load, load_builtin};
use crate::resolve::{resolve, CmdlineArg, Options, Resolved, Skipped};
use crate::state::{diff, expected_of, verify, Diff, State, Verification};
use lever_kernel::KernelFs;
use serde::Serialize;
use std::path::Path;

/// A profile to resolve: which, against which target, with which options.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// Built-in name or path of a profile file.
    pub profile: &'a str,
    /// `--target`: built-in target name or file; `None` detects it.
    pub target: Option<&'a str>,
    /// `--rt-cpus` and the like.
    pub options: Options,
}

/// A built-in profile in `lever profile list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Its name.
    pub name: String,
    /// One line.
    pub description: String,
    /// The seed sections its values come from.
    pub seed: String,
    /// The profile it includes, if any.
    pub include: Option<String>,
    /// True when it needs `--rt-cpus`.
    pub needs_rt_cpus: bool,
}

/// Every built-in profile.
pub fn catalog() -> Result<Vec<Summary>, ProfileError> {
    builtin_names()
        .into_iter()
        .map(|name| {
            let p = load_builtin(name)?;
            let text = crate::load::builtin_text(name).unwrap_or_default();
            Ok(Summary {
                name: p.name,
                description: p.description,
                seed: p.seed,
                include: p.include.map(|l| l.value),
                needs_rt_cpus: p.rt_cpus.is_none()
                    && (text.contains("{rt_cpus}") || text.contains("{housekeeping}")),
            })
        })
        .collect()
}

/// Load, bind the target under `fs`, resolve.
pub fn show(fs: &KernelFs, req: &Request) -> Result<Resolved, ProfileError> {
    let chain = load(req.profile)?;
    let target = lever_targets::resolve(req.target, fs)?;
    resolve(&chain, &target, fs, &req.options)
}

/// What `apply` would change, node by node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffReport {
    /// The profile.
    pub profile: String,
    /// The target.
    pub target: String,
    /// The changes.
    #[serde(flatten)]
    pub diff: Diff,
    /// The boot-time command line, which no apply writes.
    pub cmdline: Vec<CmdlineArg>,
    /// What this kernel lacks.
    pub skipped: Vec<Skipped>,
}

/// [`show`], then compare with what the nodes hold now.
pub fn diff_profile(fs: &KernelFs, req: &Request) -> Result<DiffReport, ProfileError> {
    let r = show(fs, req)?;
    Ok(DiffReport {
        diff: diff(fs, &r),
        profile: r.profile,
        target: r.target,
        cmdline: r.cmdline,
        skipped: r.skipped,
    })
}

/// What `verify` compared against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// The profile.
    pub profile: String,
    /// `state file PATH` or `profile resolved now`.
    pub against: String,
    /// The result.
    #[serde(flatten)]
    pub verification: Verification,
}

/// Compare the nodes with an applied profile's recorded values (the state
/// file at `state`, when it exists), else with `req`'s profile resolved
/// now. Neither: [`ProfileError::NothingToVerify`].
pub fn verify_profile(
    fs: &KernelFs,
    state: &Path,
    req: Option<&Request>,
) -> Result<VerifyReport, ProfileError> {
    if let Some(s) = State::load(state)? {
        if req.is_none_or(|r| r.profile == s.profile) {
            return Ok(VerifyReport {
                verification: verify(fs, &s.expected()),
                profile: s.profile,
                against: format!("state file {}", state.display()),
            });
        }
    }
    let req = req.ok_or_else(|| ProfileError::NothingToVerify {
        state: state.display().to_string(),
    })?;
    let r = show(fs, req)?;
    Ok(VerifyReport {
        verification: verify(fs, &expected_of(&r)),
        profile: r.profile,
        against: "the profile resolved now".into(),
    })
}

/// What `apply --direct` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirectApplied {
    /// The profile.
    pub profile: String,
    /// Nodes written (those that already held their value are not counted).
    pub written: usize,
    /// Nodes that already held their value.
    pub unchanged: usize,
    /// Optional writes the kernel refused (IRQ affinities).
    pub refused: Vec<Refused>,
    /// The state file `off --direct` reads.
    pub state: String,
    /// The boot-time command line still to add.
    pub cmdline: Vec<CmdlineArg>,
    /// What this kernel lacks.
    pub skipped: Vec<Skipped>,
}

/// [`show`], then apply without the daemon, recording originals in `state`.
pub fn apply_profile_direct(
    fs: &KernelFs,
    req: &Request,
    state: &Path,
) -> Result<DirectApplied, ProfileError> {
    let r = show(fs, req)?;
    let s = apply_direct(fs, &r, state).map_err(Box::new)?;
    let written = s.entries.iter().filter(|e| e.changed).count();
    Ok(DirectApplied {
        profile: s.profile,
        written,
        unchanged: s.entries.len() - written,
        refused: s.refused,
        state: state.display().to_string(),
        cmdline: r.cmdline,
        skipped: r.skipped,
    })
}

/// `off --direct`: put back every original recorded in `state`.
pub fn off_profile_direct(fs: &KernelFs, state: &Path) -> Result<Off, ProfileError> {
    Ok(off_direct(fs, state).map_err(Box::new)?)
}
