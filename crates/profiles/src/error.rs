//! Errors of loading and resolving a profile, each pointing at a file,
//! line, column and field, as target files do.

use lever_kernel::KernelError;
use lever_yaml::{FieldError, LoadError, SyntaxError};

/// Everything that can go wrong loading, parsing or resolving a profile.
///
/// Problems inside a profile file are [`ProfileError::Field`] and print as
/// `` FILE:LINE:COL: field `FIELD`: message ``:
///
/// ```text
/// builtin:rt.yaml:22:3: field `resources.cpu_governr`: target qcs6490 has no resource `cpu_governr` ...
/// ```
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// A problem with one field of a profile file, found while parsing or
    /// while resolving it against a target and kernel tree (the file is
    /// `builtin:NAME.yaml` for built-in profiles; the field e.g.
    /// `resources.cpu_governor`).
    #[error("{error}")]
    Field {
        /// File, line, column, field and message.
        error: FieldError,
        /// The kernel error behind a resolve-time failure, if any (its text
        /// is already part of the message).
        kernel: Option<Box<KernelError>>,
    },
    /// The file is not valid YAML (or uses a construct profiles forbid).
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A profile file could not be read, or a name is neither a built-in
    /// profile nor a file.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// `include:` leads back to a profile already being loaded.
    #[error("{file}:{line}:{col}: field `include`: include cycle: {}", chain.join(" -> "))]
    IncludeCycle {
        /// The file whose `include:` closes the cycle.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The profiles in include order, the repeated one last.
        chain: Vec<String>,
    },
    /// A profile uses `{rt_cpus}` (or `{housekeeping}`) and no RT CPUs were
    /// given, neither by `--rt-cpus` nor by the profile's `rt_cpus:`.
    #[error("{file}:{line}:{col}: field `{field}`: profile `{profile}` needs the RT CPUs: give --rt-cpus LIST (e.g. --rt-cpus 1-3)")]
    NeedsRtCpus {
        /// The profile.
        profile: String,
        /// The file using the placeholder.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The field using it.
        field: String,
    },
    /// The kernel tree could not be read where resolution needs it (online
    /// CPUs, a directory listing).
    #[error("{0}")]
    Kernel(#[from] KernelError),
    /// The online CPUs could not be read.
    #[error("{0}")]
    Cpu(#[from] lever_cpu::CpuError),
    /// The target could not be loaded or bound.
    #[error(transparent)]
    Target(#[from] lever_targets::TargetError),
    /// A state file could not be read or written.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// A direct apply or off failed.
    #[error(transparent)]
    Direct(#[from] Box<crate::direct::DirectError>),
    /// `verify` with neither a state file nor a profile name.
    #[error("nothing to verify: no state file {state} (no profile applied with --direct); name a profile to compare with")]
    NothingToVerify {
        /// The state file looked for.
        state: String,
    },
}
