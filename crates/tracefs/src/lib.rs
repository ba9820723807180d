//! tracefs control: seed 000 §4.1's capture procedure as code.
//!
//! [`Tracefs`] locates (or mounts) tracefs below a [`lever_kernel::KernelFs`]
//! root and writes trace markers; [`Capture`] records into a private
//! instance (or the saved and restored top level) and leaves tracefs as it
//! found it, also on an error, a panic or Ctrl-C. Reading the captured text
//! is the parser's job (`lever-trace`), which needs no kernel access at all.
//!
//! ```
//! use lever_kernel::KernelFs;
//! use lever_tracefs::Tracefs;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! fs.create_node("/sys/kernel/tracing/tracing_on", "1\n").unwrap();
//! fs.create_node("/sys/kernel/tracing/trace_marker", "").unwrap();
//! let tfs = Tracefs::locate(&fs).expect("a tracefs tree");
//! assert_eq!(tfs.dir(), "/sys/kernel/tracing");
//! tfs.mark("B Connect").unwrap();
//! assert_eq!(fs.read("/sys/kernel/tracing/trace_marker").unwrap(), "B Connect");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod capture;
pub mod raw;

pub use capture::{
    Capture, CaptureConfig, CaptureError, StaleInstance, Target, Tracefs, TracefsState,
};
pub use lever_trace_input::dat::write::DatVersion;
