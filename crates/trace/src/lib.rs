//! Streaming parser for the ftrace text format. Capturing through tracefs
//! is `lever-tracefs`; this crate reads text and needs no kernel access.
//!
//! Like Perfetto's trace_processor, this crate only cuts text into typed
//! events ([`parse_line`] → [`Line`]); turning events into slices, states
//! and statistics is the job of `lever-trace-analysis`. The reader
//! ([`TraceReader`], [`for_each_line`]) streams any `Read` through one
//! reused buffer and hands out lines borrowed from it; the parser never
//! allocates. Malformed lines are counted with their line numbers in the
//! [`Summary`], never a panic.
//!
//! ```
//! use lever_trace::{parse_line, Line, EventKind};
//! let line = "  bash-1977  [001] d..2.  1480.549228: sched_switch: prev_comm=bash \
//!     prev_pid=1977 prev_prio=120 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120";
//! let Line::Event(ev) = parse_line(line) else { panic!() };
//! assert_eq!((ev.comm, ev.pid, ev.cpu, ev.ts_ns), ("bash", 1977, 1, 1_480_549_228_000));
//! let EventKind::SchedSwitch(sw) = ev.kind else { panic!() };
//! assert!(sw.prev_runnable());
//! assert_eq!(sw.next_comm, "swapper/1");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod event;
pub mod file;
pub mod line;
mod mapped;
mod num;
pub mod reader;
pub mod source;
mod swar;

pub use event::{EventKind, Marker, SchedMigrateTask, SchedSwitch, SchedWakeup, WakeKind};
pub use file::{open, OpenError};
pub use line::{
    parse_line, parse_line_general, parse_line_untyped, Event, FgItem, FuncGraph, Header, Line,
    TimeBase,
};
pub use num::MAX_CPUS;
pub use reader::{
    for_each_line, for_each_line_in, for_each_line_parallel, Malformed, NoEventsError, Summary,
    TraceReader,
};
pub use source::{LineSource, RoundedToMicros, Text};
