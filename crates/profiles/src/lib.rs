//! Profiles: named sets of tunable values, applied as one transaction and
//! rolled back exactly.
//!
//! A *profile* is a YAML file (format in [`model`] and
//! `docs/profiles.md`) naming values for any resource of a target (global,
//! per cluster or per CPU), sysctls, sysfs nodes, IRQ affinity, the
//! workqueue cpumask, cpuidle states, and the boot-time kernel command
//! line, optionally including another profile. Using one is three steps:
//!
//! 1. [`load`] a built-in name or a file, with its `include:` chain
//!    (cycles are errors); mistakes point at `FILE:LINE:COL` and the field.
//! 2. [`resolve`] it against a bound target and a kernel tree: an ordered
//!    list of concrete [`Write`]s, every value checked (the node exists,
//!    the value is in range and one of the allowed steps/values), plus the
//!    [`CmdlineArg`]s to add at boot — printed, never silently dropped.
//! 3. [`apply`] the writes as one transaction: if write *k* fails, writes
//!    *k-1 … 0* get their originals back, and the error names the node and
//!    errno. [`rollback`] undoes an [`Applied`] later (`off`).
//!
//! [`diff`] shows what applying would change, [`verify`] what changed
//! behind Lever's back, and [`tuned`] imports a TuneD `tuned.conf`.
//!
//! For the daemon: `load(name)` → `resolve(&chain, &target, &fs,
//! &Options { rt_cpus })` gives the checked [`Resolved::writes`]; journal
//! each write's original (read it, as [`Entry::original`]) before applying;
//! `apply(&fs, &writes)` is the all-or-nothing first application, and
//! `rollback(&fs, &applied.entries)` (or the journal) is `off`. The
//! [`Nodes`] trait is the seam for the daemon's own writer.
//!
//! ```
//! use lever_profiles::{apply, load, resolve, rollback, Options};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let board = lever_sim::create("qcs6490", &dir.path().join("b")).unwrap();
//! let fs = lever_kernel::KernelFs::new(&board.root);
//! let target = lever_targets::load_builtin("qcs6490").unwrap().bind(&fs).unwrap();
//!
//! let chain = load("performance").unwrap();
//! let resolved = resolve(&chain, &target, &fs, &Options::default()).unwrap();
//! let gov = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor";
//! assert!(resolved.writes.iter().any(|w| w.node == gov && w.value == "performance"));
//!
//! let before = fs.read(gov).unwrap();
//! let applied = apply(&fs, &resolved.writes).unwrap();
//! assert_eq!(fs.read(gov).unwrap(), "performance");
//! rollback(&fs, &applied.entries).unwrap();
//! assert_eq!(fs.read(gov).unwrap(), before);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod apply;
mod direct;
mod error;
mod load;
pub mod model;
mod ops;
mod resolve;
mod state;
pub mod tuned;

pub use apply::{
    apply, errno, rollback, Applied, ApplyError, Entry, Nodes, Refused, RestoreFailure,
    RollbackError,
};
pub use direct::{apply_direct, off_direct, DirectError, Off};
pub use error::ProfileError;
pub use lever_yaml::{FieldError, LoadError, SyntaxError};
pub use load::{builtin_names, builtin_text, load, load_builtin, load_path, parse, Chain};
pub use model::Profile;
pub use ops::{
    apply_profile_direct, catalog, diff_profile, off_profile_direct, show, verify_profile,
    DiffReport, DirectApplied, Request, Summary, VerifyReport,
};
pub use resolve::{
    check_value, resolve, CmdlineArg, From, Options, Resolved, Skipped, Write, PROC_IRQ,
    WORKQUEUE_CPUMASK,
};
pub use state::{
    diff, expected_of, verify, Change, Diff, Drift, State, StateError, Verification, FORMAT,
};
