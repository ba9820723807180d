//! How a command ends: the exit code and, with `--json`, the error object.
//! Documented for users in `docs/cli.md`; the codes are stable.
//!
//! An error is classified by the first cause in its chain whose type says
//! what went wrong (a kernel node missing, a permission, a file that does
//! not parse, the daemon unreachable or refusing); anything else is a
//! plain failure.

use lever_client::ClientError;
use lever_kernel::KernelError;
use serde::Serialize;
use std::io;

/// Not a failure of Lever: the user's `-- CMD` ended with this status and
/// the command passes it through (as `perf stat` does). `main` exits with
/// it, quietly, after the result has been printed.
#[derive(Debug, thiserror::Error)]
#[error("the command exited with status {0}")]
pub struct CommandExit(pub u8);

/// A flag or argument value that does not make sense, found after clap
/// parsed the line (a `RES=VALUE` whose value the daemon's resource does
/// not take, a CPU this machine does not have): bad input, exit 3. The
/// message names the flag or argument.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);

/// A [`BadValue`] as the command's error.
pub fn bad_value(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadValue(message.into()))
}

/// A `-- CMD` that could not be started: exit 127 when it was not found,
/// 126 when it was found but cannot be run (not executable, a directory),
/// as a shell does.
#[derive(Debug, thiserror::Error)]
#[error("cannot run {program}: {source}")]
pub struct CannotRun {
    /// The program as given.
    pub program: String,
    /// Why `exec` failed.
    pub source: io::Error,
}

/// A shell's rule: 127 for a command not found, 126 for any other reason
/// `exec` failed (no execute permission, a directory, a bad format).
fn spawn_class(e: &io::Error) -> Class {
    match e.kind() {
        io::ErrorKind::NotFound => Class::CommandNotFound,
        _ => Class::CommandNotExecutable,
    }
}

/// A check command whose checks ran and some failed (`rt check` with a
/// FAIL, `profile verify` with a drifted node, `latency kpi` past its
/// limit): the result has been printed; the command fails with exit 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChecksFailed(pub String);

/// A check that could not be made (`bench compare` when either run was
/// taken under load or throttling, or the tests that got worse depend on
/// a probe whose timing changed or lie where the caches reached
/// differently), and nothing judged failed: the result has been printed;
/// the command exits 9 (`not_judged`), so a CI job can tell "rerun on a
/// quiet machine" from a regression (exit 1), and still does not pass.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotJudged(pub String);

/// A command or option this build was made without (a board's build,
/// `--no-default-features --features board`; docs/install.md lists what
/// each feature gives): it names the cargo feature that provides it. Not
/// available, exit 4. The subcommand and its flags stay in the parser, so
/// `--help`, completions and man pages are those of the host build.
#[derive(Debug, thiserror::Error)]
#[error("{what} needs the `{feature}` feature, which this lever was built without: build with `--features {feature}`, or use the host build (the default features; docs/install.md)")]
pub struct NotInThisBuild {
    /// What was asked for (`lever flamegraph`, `lever daemon --dbus`).
    pub what: &'static str,
    /// The cargo feature of the `lever` package that provides it.
    pub feature: &'static str,
}

/// A [`NotInThisBuild`] as the command's error.
// Unused where every feature is in (the host build).
#[allow(dead_code)]
pub fn not_in_this_build(what: &'static str, feature: &'static str) -> anyhow::Error {
    anyhow::Error::new(NotInThisBuild { what, feature })
}

/// What kind of failure ended the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Anything not classified below.
    Failed,
    /// The command line itself is wrong (clap's own errors).
    Usage,
    /// A file, flag value or target that does not parse.
    BadInput,
    /// A kernel feature, node or file that is not there.
    NotAvailable,
    /// A permission is missing.
    NotAllowed,
    /// The kernel refused a value.
    Rejected,
    /// The daemon could not be reached or broke the connection.
    DaemonUnreachable,
    /// The daemon answered with a refusal.
    Refused,
    /// A check could not be made under the conditions of its input
    /// ([`NotJudged`]).
    NotJudged,
    /// A `-- CMD` that could not be started because it was found but is
    /// not executable (126, as a shell).
    CommandNotExecutable,
    /// A `-- CMD` that was not found (127, as a shell).
    CommandNotFound,
}

impl Class {
    /// The stable code in the JSON error object.
    pub fn code(self) -> &'static str {
        match self {
            Class::Failed => "failed",
            Class::Usage => "usage",
            Class::BadInput => "bad_input",
            Class::NotAvailable => "not_available",
            Class::NotAllowed => "not_allowed",
            Class::Rejected => "rejected",
            Class::DaemonUnreachable => "daemon_unreachable",
            Class::Refused => "refused",
            Class::NotJudged => "not_judged",
            Class::CommandNotExecutable => "command_not_executable",
            Class::CommandNotFound => "command_not_found",
        }
    }

    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Class::Failed => 1,
            Class::Usage => 2,
            Class::BadInput => 3,
            Class::NotAvailable => 4,
            Class::NotAllowed => 5,
            Class::Rejected => 6,
            Class::DaemonUnreachable => 7,
            Class::Refused => 8,
            Class::NotJudged => 9,
            Class::CommandNotExecutable => 126,
            Class::CommandNotFound => 127,
        }
    }
}

fn kernel(e: &KernelError) -> Class {
    match e {
        KernelError::Missing { .. } => Class::NotAvailable,
        KernelError::NotAllowed { .. } => Class::NotAllowed,
        KernelError::Rejected { .. } => Class::Rejected,
        KernelError::Parse { .. } | KernelError::BadPath { .. } | KernelError::BadRoot { .. } => {
            Class::BadInput
        }
        KernelError::Io { source, .. } => io_error(source).unwrap_or(Class::Failed),
    }
}

fn io_error(e: &io::Error) -> Option<Class> {
    match e.kind() {
        io::ErrorKind::NotFound => Some(Class::NotAvailable),
        io::ErrorKind::PermissionDenied => Some(Class::NotAllowed),
        io::ErrorKind::InvalidData => Some(Class::BadInput),
        _ => None,
    }
}

fn bench(e: &lever_bench::BenchError) -> Class {
    use lever_bench::BenchError as B;
    match e {
        B::Io { source, .. } | B::ReportFile { source, .. } => {
            io_error(source).unwrap_or(Class::Failed)
        }
        B::NeedsHelper => Class::NotAvailable,
        B::Broken(_) => Class::Failed,
        // `--only GLOB` that names no test: a flag value that makes no sense.
        B::NothingSelected(_) => Class::BadInput,
        // EINVAL: no such CPU, or not one this process may use.
        B::Affinity { source, .. } => io_error(source).unwrap_or(Class::BadInput),
        B::Report { .. } => Class::BadInput,
    }
}

fn client(e: &ClientError) -> Class {
    match e {
        ClientError::Refused { .. } => Class::Refused,
        _ => Class::DaemonUnreachable,
    }
}

fn target(e: &lever_targets::TargetError) -> Option<Class> {
    match e {
        lever_targets::TargetError::Load(lever_targets::LoadError::Read { source, .. }) => {
            io_error(source)
        }
        _ => Some(Class::BadInput),
    }
}

/// A profile error: its own mistakes are bad input; a refused write keeps
/// the kernel's errno class (the transaction was rolled back).
fn profile(e: &lever_profiles::ProfileError) -> Option<Class> {
    use lever_profiles::{DirectError as D, ProfileError as P, StateError as S};
    match e {
        P::Load(lever_profiles::LoadError::Read { source, .. }) => io_error(source),
        P::Kernel(k) | P::Cpu(lever_cpu::CpuError::Kernel(k)) => Some(kernel(k)),
        P::Target(t) => target(t),
        P::State(S::Io { source, .. }) => io_error(source),
        P::Direct(d) => match d.as_ref() {
            D::Apply(a) => Some(kernel(&a.error)),
            D::State(S::Io { source, .. }) => io_error(source),
            D::State(S::Bad { .. }) => Some(Class::BadInput),
            // A second `apply --direct` over the same state file: the
            // request makes no sense until `off --direct` (bad input).
            D::AlreadyApplied { .. } => Some(Class::BadInput),
            D::Rollback(_) | D::NotApplied { .. } => None,
        },
        _ => Some(Class::BadInput),
    }
}

/// A results store error: a `--db` that is not a store location, a file
/// that is not a store or a run document is bad input (3); an unknown run
/// id or an unreachable server is not available (4); a refused login or
/// unreadable file is not allowed (5).
fn results(e: &lever_results::StoreError) -> Class {
    use lever_results::ErrorKind as K;
    match e.kind() {
        K::BadInput => Class::BadInput,
        K::NotAvailable => Class::NotAvailable,
        K::NotAllowed => Class::NotAllowed,
        K::Failed => Class::Failed,
    }
}

/// The class of a command line clap refused: a value that does not parse
/// or is not one of the possible ones is bad input (3), like every value
/// found wrong later; an unknown flag or a missing argument is usage (2).
pub fn clap_class(kind: clap::error::ErrorKind) -> Class {
    use clap::error::ErrorKind as K;
    match kind {
        K::InvalidValue | K::ValueValidation | K::InvalidUtf8 => Class::BadInput,
        _ => Class::Usage,
    }
}

/// The `exec` error of a `-- CMD` that could not be started, whichever
/// command ran it.
fn spawn_error<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    use lever_measure::memmap::SampleCommandError;
    use lever_measure::sampling::CommandError;
    if let Some(e) = cause.downcast_ref::<CannotRun>() {
        return Some(&e.source);
    }
    if let Some(lever_client::RunError::Spawn { source, .. }) = cause.downcast_ref() {
        return Some(source);
    }
    match cause.downcast_ref::<CommandError>().or_else(|| {
        match cause.downcast_ref::<SampleCommandError>()? {
            SampleCommandError::Command(c) => Some(c),
            _ => None,
        }
    }) {
        Some(CommandError::Spawn { source, .. }) => Some(source),
        _ => None,
    }
}

/// Classify an error by the first cause whose type says what happened.
/// Library errors that wrap a `KernelError` transparently hide it from
/// the chain, so those wrappers are looked into.
pub fn classify(err: &anyhow::Error) -> Class {
    for cause in err.chain() {
        if let Some(e) = spawn_error(cause) {
            return spawn_class(e);
        }
        let class = if cause.is::<BadValue>() {
            Some(Class::BadInput)
        } else if cause.is::<ChecksFailed>() {
            Some(Class::Failed)
        } else if cause.is::<NotInThisBuild>() {
            Some(Class::NotAvailable)
        } else if let Some(e) = cause.downcast_ref::<clap::Error>() {
            Some(clap_class(e.kind()))
        } else if let Some(e) = cause.downcast_ref::<KernelError>() {
            Some(kernel(e))
        } else if let Some(e) = cause.downcast_ref::<lever_measure::MeasureError>() {
            use lever_measure::MeasureError as M;
            Some(match e {
                M::Kernel(k) => kernel(k),
                M::File { source, .. } => io_error(source).unwrap_or(Class::Failed),
                _ => Class::BadInput,
            })
        } else if let Some(e) = cause.downcast_ref::<lever_cpu::CpuError>() {
            Some(match e {
                lever_cpu::CpuError::Kernel(k) => kernel(k),
                _ => Class::BadInput,
            })
        } else if let Some(e) = cause.downcast_ref::<lever_tracefs::CaptureError>() {
            use lever_tracefs::CaptureError as C;
            match e {
                C::Kernel(k) => Some(kernel(k)),
                C::NoTracefs(_) => Some(Class::NotAvailable),
                C::UnknownEvent { .. } | C::UnknownTracer { .. } => Some(Class::BadInput),
                _ => None,
            }
        } else if cause.is::<lever_trace::NoEventsError>() {
            Some(Class::BadInput)
        } else if let Some(e) = cause.downcast_ref::<lever_trace_input::InputError>() {
            use lever_trace_input::InputError as I;
            Some(match e {
                I::Io { source, .. } => io_error(source).unwrap_or(Class::Failed),
                I::Empty { .. }
                | I::NotATrace { .. }
                | I::Dat { .. }
                | I::Ctf { .. }
                | I::Symbols { .. } => Class::BadInput,
            })
        } else if let Some(e) = cause.downcast_ref::<lever_latency::LatencyError>() {
            use lever_latency::LatencyError as L;
            Some(match e {
                L::BadOption { .. }
                | L::NoSuchCpu { .. }
                | L::Parse(_)
                | L::UnknownFormat { .. } => Class::BadInput,
                L::NotPermitted { .. } | L::MemLock { .. } | L::Trace { denied: true, .. } => {
                    Class::NotAllowed
                }
                L::Trace { .. } => Class::NotAvailable,
                L::Load { .. } => Class::Failed,
                L::Kernel(k) => kernel(k),
                L::File { source, .. } | L::Syscall { source, .. } => {
                    io_error(source).unwrap_or(Class::Failed)
                }
            })
        } else if let Some(e) = cause.downcast_ref::<lever_dt::DtError>() {
            Some(match e {
                lever_dt::DtError::Io { source, .. } => io_error(source).unwrap_or(Class::Failed),
                lever_dt::DtError::Tool { .. } => Class::Failed,
                _ => Class::BadInput,
            })
        } else if let Some(e) = cause.downcast_ref::<ClientError>() {
            Some(client(e))
        } else if let Some(e) = cause.downcast_ref::<lever_bench::BenchError>() {
            Some(bench(e))
        } else if cause.is::<lever_text::ParseError>()
            || cause.is::<lever_text::UnitError>()
            || cause.is::<lever_boot::BootError>()
        {
            match cause.downcast_ref::<lever_boot::BootError>() {
                Some(lever_boot::BootError::Io { source, .. }) => io_error(source),
                _ => Some(Class::BadInput),
            }
        } else if let Some(e) = cause.downcast_ref::<lever_targets::TargetError>() {
            target(e)
        } else if let Some(e) = cause.downcast_ref::<lever_profiles::ProfileError>() {
            profile(e)
        } else if let Some(e) = cause.downcast_ref::<lever_profiles::tuned::TunedError>() {
            use lever_profiles::tuned::TunedError as T;
            match e {
                T::Read { source, .. } | T::Write { source, .. } => io_error(source),
                T::NotAProfile { .. } => Some(Class::BadInput),
            }
        } else if let Some(e) = cause.downcast_ref::<lever_urm::UrmError>() {
            match e {
                lever_urm::UrmError::Read { source, .. } => io_error(source),
                lever_urm::UrmError::Generated(_) => Some(Class::Failed),
                _ => Some(Class::BadInput),
            }
        } else if let Some(e) = cause.downcast_ref::<lever_results::StoreError>() {
            Some(results(e))
        } else if let Some(e) = cause.downcast_ref::<lever_report::ReportError>() {
            Some(match e {
                lever_report::ReportError::Io { source, .. } => {
                    io_error(source).unwrap_or(Class::Failed)
                }
                _ => Class::BadInput,
            })
        } else if let Some(e) = cause.downcast_ref::<io::Error>() {
            io_error(e)
        } else {
            None
        };
        if let Some(class) = class {
            return class;
        }
    }
    Class::Failed
}

/// The JSON error object printed on stdout with `--json`: a result never
/// has a top-level `error` key, so a script can tell the two apart.
#[derive(Debug, Serialize)]
pub struct ErrorDoc {
    /// The error.
    pub error: ErrorBody,
}

/// The error's fields.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// Stable code ([`Class::code`]).
    pub code: &'static str,
    /// The process exit code.
    pub exit_code: u8,
    /// What went wrong, as the text view prints it.
    pub message: String,
    /// The causes that add something to the message.
    pub causes: Vec<String>,
}

/// The causes worth printing: library errors often embed their source
/// already, so only those that add something.
pub fn causes(err: &anyhow::Error) -> Vec<String> {
    let top = err.to_string();
    err.chain()
        .skip(1)
        .map(|c| c.to_string())
        .filter(|c| !top.contains(c.as_str()))
        .collect()
}

/// The error document for `err`.
pub fn error_doc(err: &anyhow::Error, class: Class) -> ErrorDoc {
    ErrorDoc {
        error: ErrorBody {
            code: class.code(),
            exit_code: class.exit_code(),
            message: err.to_string(),
            causes: causes(err),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class_of(e: impl Into<anyhow::Error>) -> Class {
        classify(&e.into())
    }

    #[test]
    fn kernel_errors_keep_their_errno_class() {
        let missing = KernelError::Missing {
            path: "/sys/x".into(),
        };
        assert_eq!(class_of(missing), Class::NotAvailable);
        let wrapped = lever_measure::MeasureError::Kernel(KernelError::Missing {
            path: "/proc/pressure/io".into(),
        });
        assert_eq!(class_of(wrapped), Class::NotAvailable);
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(class_of(denied), Class::NotAllowed);
    }

    /// A command a board's build left out: not available (4), naming the
    /// feature and how to get it.
    #[test]
    fn a_missing_feature_names_itself_and_is_not_available() {
        let e = not_in_this_build("lever flamegraph", "flamegraph");
        assert_eq!(classify(&e), Class::NotAvailable);
        let text = e.to_string();
        assert!(
            text.starts_with("lever flamegraph needs the `flamegraph` feature"),
            "{text}"
        );
        assert!(text.contains("--features flamegraph"), "{text}");
        assert!(text.contains("host build"), "{text}");
    }

    #[test]
    fn parse_errors_are_bad_input_even_under_context() {
        let e = anyhow::Error::new(lever_text::ParseError::new("f", 3, "x", "a number"))
            .context("reading the serial log");
        assert_eq!(classify(&e), Class::BadInput);
        assert_eq!(error_doc(&e, Class::BadInput).error.causes.len(), 1);
    }

    #[test]
    fn profile_errors_keep_the_kernels_class_after_a_rollback() {
        let bad = lever_profiles::parse("p.yaml", "profile: x\nbogus: 1\n").unwrap_err();
        assert_eq!(class_of(bad), Class::BadInput);
        let refused = lever_profiles::ApplyError {
            node: "/sys/x".into(),
            value: "1".into(),
            errno: Some(22),
            error: Box::new(KernelError::Rejected {
                path: "/sys/x".into(),
                value: "1".into(),
                source: io::Error::from_raw_os_error(22),
            }),
            rolled_back: vec!["/sys/w".into()],
            failed_restores: Vec::new(),
        };
        let e = lever_profiles::ProfileError::Direct(Box::new(refused.into()));
        assert_eq!(class_of(e), Class::Rejected);
    }

    #[test]
    fn bench_errors_are_classified() {
        use lever_bench::BenchError as B;
        let report = |message: &str| B::Report {
            path: "run.json".into(),
            message: message.into(),
        };
        assert_eq!(class_of(report("not a report")), Class::BadInput);
        let missing = B::ReportFile {
            path: "run.json".into(),
            source: io::Error::from(io::ErrorKind::NotFound),
        };
        assert_eq!(class_of(missing), Class::NotAvailable);
        assert_eq!(class_of(B::NothingSelected("x".into())), Class::BadInput);
        assert_eq!(class_of(B::NeedsHelper), Class::NotAvailable);
        let no_cpu = B::Affinity {
            cpu: 99,
            source: io::Error::from_raw_os_error(22),
        };
        assert_eq!(class_of(no_cpu), Class::BadInput);
        assert_eq!(class_of(B::Broken("lost".into())), Class::Failed);
    }

    #[test]
    fn results_store_errors_are_classified() {
        use lever_results::StoreError as S;
        let bad = lever_results::Location::parse("mysql://lab/db").unwrap_err();
        assert_eq!(class_of(bad), Class::BadInput);
        let not_db = S::NotADatabase {
            path: "notes.db".into(),
        };
        assert_eq!(class_of(not_db), Class::BadInput);
        let unknown = S::NoSuchRun {
            location: "r.db".into(),
            id: 7,
        };
        assert_eq!(class_of(unknown), Class::NotAvailable);
        let denied = S::Io {
            path: "/var/lib/lever/results.db".into(),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert_eq!(class_of(denied), Class::NotAllowed);
    }

    /// Every class, in the order of docs/cli.md's table.
    const CLASSES: [Class; 11] = [
        Class::Failed,
        Class::Usage,
        Class::BadInput,
        Class::NotAvailable,
        Class::NotAllowed,
        Class::Rejected,
        Class::DaemonUnreachable,
        Class::Refused,
        Class::NotJudged,
        Class::CommandNotExecutable,
        Class::CommandNotFound,
    ];

    #[test]
    fn unknown_errors_are_plain_failures() {
        assert_eq!(classify(&anyhow::anyhow!("something")), Class::Failed);
        let codes: Vec<u8> = CLASSES.iter().map(|c| c.exit_code()).collect();
        assert_eq!(
            codes,
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 126, 127],
            "documented in docs/cli.md"
        );
    }

    /// docs/cli.md's exit-code table has a row for every class with its
    /// code and its `code` string, and none for a class that is gone.
    #[test]
    fn the_documented_exit_codes_are_the_classes() {
        let doc = include_str!("../../../docs/cli.md");
        let table = &doc[doc.find("## Exit codes").expect("an exit-code section")..];
        let rows: Vec<(u8, String)> = table
            .lines()
            .skip_while(|l| !l.starts_with("| 0 |"))
            .skip(1)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (
                    cells[1].parse().expect("an exit code"),
                    cells[2].trim_matches('`').to_string(),
                )
            })
            .collect();
        let classes: Vec<(u8, String)> = CLASSES
            .iter()
            .map(|c| (c.exit_code(), c.code().to_string()))
            .collect();
        assert_eq!(rows, classes);
    }
}
