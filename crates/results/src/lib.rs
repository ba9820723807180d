//! Collected runs of a board and the store that keeps them.
//!
//! A [`Run`] is what `lever report collect` measures on one board at one
//! time: the device and kernel, then one [`Section`] per measurement
//! (boot, memory, latency, benchmarks, trace markers, the daemon), each
//! saying how it was measured — or why it could not be — with its
//! [`Metric`]s (a name, a unit, a value and, where there were several, the
//! samples). `lever report render` draws runs; the results store keeps
//! them for `lever results list | show | trend`.
//!
//! ```
//! use lever_results::model::*;
//! let mut run = Run::new("2026-11-23T14:00:00Z", Device::default());
//! let mut boot = Section::measured("boot", "dmesg timestamps of `lever boot`");
//! boot.metrics.push(Metric::new("boot.kernel", "ms", 1234.5));
//! run.sections.push(boot);
//! run.sections.push(Section::not_measured("latency", "no --latency given"));
//! let json = serde_json::to_string(&run).unwrap();
//! let back: Run = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, run);
//! assert_eq!(back.metric("boot.kernel").unwrap().value, 1234.5);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod model;
