//! Real-time latency: a cyclictest-compatible measurement, imports of the
//! usual tools' outputs into one report, and RT-readiness checks.
//!
//! - [`config`]: cyclictest's options, typed, and the thread plan they make;
//! - [`run::measure`]: pinned threads on absolute `clock_nanosleep`
//!   deadlines, `/dev/cpu_dma_latency` held at 0, per-thread statistics;
//! - [`stats`]: histogram, percentiles, spikes, missed periods;
//! - [`report`]: the serde report every source ends in;
//! - [`cyclictest`]: cyclictest's status line, `-h` histogram and `--json`
//!   document, written from a report;
//! - [`kpi`]: seed 000 §3.6's KPI table, no load and under load;
//! - [`load`]: background load during a measurement (`--load`);
//! - [`plot`]: the histograms as an SVG chart (`--plot`);
//! - [`import`]: cyclictest text/JSON, `stress-ng --cyclic`, `rtla
//!   timerlat hist` → the same report;
//! - [`breach`]: why a wake-up was late, from a trace of its CPU;
//! - [`tracing`]: the private tracefs instance that records them;
//! - [`rtcheck`]: seed 000 §3.6 / seed 001's RT tuning as checks.
//!
//! ```
//! use lever_latency::config::{Affinity, Config, Threads};
//! // Seed 000's command line: -a 1-3 -t 3 -p 90 -h 800 → three FIFO
//! // threads at priority 90 on CPUs 1, 2, 3, all with a 1000 µs period.
//! let cfg = Config {
//!     affinity: Affinity::Cpus(vec![1, 2, 3]),
//!     threads: Threads::Count(3),
//!     priority: 90,
//!     histogram_us: Some(800),
//!     ..Config::default()
//! };
//! let plan = cfg.plan(&[0, 1, 2, 3, 4, 5, 6, 7]).unwrap();
//! assert_eq!(plan.iter().map(|t| t.cpu.unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
//! assert!(plan.iter().all(|t| t.interval_us == 1000 && t.priority == 90));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod breach;
pub mod config;
pub mod cyclictest;
pub mod error;
pub mod import;
pub mod kpi;
pub mod load;
pub mod plot;
pub mod report;
pub mod rtcheck;
pub mod run;
pub mod stats;
pub mod tracing;

pub use error::LatencyError;
pub use report::LatencyReport;
