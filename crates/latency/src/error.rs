//! The one error type of `lever-latency`: every variant names the option,
//! file, CPU or kernel node it is about.

use lever_kernel::KernelError;
use std::path::PathBuf;

impl LatencyError {
    /// A [`LatencyError::Trace`] with its text rewritten; any other error
    /// as it is.
    pub(crate) fn with_why(self, f: impl FnOnce(&str) -> String) -> LatencyError {
        match self {
            LatencyError::Trace {
                option,
                why,
                denied,
            } => LatencyError::Trace {
                option,
                why: f(&why),
                denied,
            },
            e => e,
        }
    }
}

impl From<lever_cpu::CpuError> for LatencyError {
    fn from(e: lever_cpu::CpuError) -> Self {
        match e {
            lever_cpu::CpuError::Kernel(k) => LatencyError::Kernel(k),
            lever_cpu::CpuError::Parse(p) => LatencyError::Parse(p),
        }
    }
}

/// Why a measurement, an import or a check could not be done.
#[derive(Debug, thiserror::Error)]
pub enum LatencyError {
    /// An option's value makes no sense.
    #[error("{option} {value:?}: expected {expected}")]
    BadOption {
        /// The flag, e.g. `-i/--interval`.
        option: &'static str,
        /// What was given.
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A CPU that is not online here.
    #[error("{option}: CPU {cpu} does not exist or is offline (online CPUs: {online})")]
    NoSuchCpu {
        /// The flag that named it.
        option: &'static str,
        /// The CPU.
        cpu: u32,
        /// The online CPUs.
        online: String,
    },
    /// The real-time policy needs a privilege this process lacks.
    #[error(
        "cannot run the measuring threads as SCHED_{policy} priority {priority}: {source} \
         (needs root or CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least {priority}); \
         run as root, or measure without real-time priority with --policy other -p 0"
    )]
    NotPermitted {
        /// `FIFO` or `RR`.
        policy: String,
        /// The priority asked for.
        priority: u32,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// `-m`: `mlockall` refused (not root: no CAP_IPC_LOCK and a small
    /// RLIMIT_MEMLOCK).
    #[error(
        "-m/--mlockall: mlockall(MCL_CURRENT | MCL_FUTURE): {source} (needs root or \
         CAP_IPC_LOCK, or an RLIMIT_MEMLOCK (ulimit -l) as large as the process); run as \
         root, or measure without -m"
    )]
    MemLock {
        /// The errno.
        source: std::io::Error,
    },
    /// A system call the measurement needs failed.
    #[error("{op}: {source}")]
    Syscall {
        /// What was being done, e.g. `pin thread 0 to CPU 3`.
        op: String,
        /// The errno.
        source: std::io::Error,
    },
    /// A kernel node could not be read or written.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The trace for the breach analysis could not be recorded or saved;
    /// nothing is left changed.
    #[error("{option}: cannot record the trace for the breach analysis: {why}")]
    Trace {
        /// The flag that asked for it (`-b/--breaktrace`, `--analyze`).
        option: &'static str,
        /// What failed, with the tracefs path.
        why: String,
        /// True when it failed for want of privilege (not root).
        denied: bool,
    },
    /// A `--load` could not be started.
    #[error("--load {load}: {why}")]
    Load {
        /// The load, described.
        load: String,
        /// What went wrong.
        why: String,
    },
    /// A file to import does not parse.
    #[error(transparent)]
    Parse(#[from] lever_text::ParseError),
    /// A file to import is none of the known formats.
    #[error("{path}: not a cyclictest, stress-ng --cyclic or rtla timerlat output ({why})")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What was looked for.
        why: String,
    },
}
