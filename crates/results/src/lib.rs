//! Collected runs of a board and the store that keeps them.
//!
//! A [`Run`](model::Run) is what `lever report collect` measures on one board at one
//! time: the device and kernel, then one [`Section`](model::Section) per measurement
//! (boot, memory, latency, benchmarks, trace markers, the daemon), each
//! saying how it was measured — or why it could not be — with its
//! [`Metric`](model::Metric)s (a name, a unit, a value and, where there were several, the
//! samples). `lever report render` draws runs; the results [`Store`]
//! keeps them for `lever results list | show | trend | export` — an SQLite
//! file by default, or a PostgreSQL server for a lab (docs/results.md has
//! the schema).
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
//!
//! // Keep it in a store and follow the metric across runs.
//! let dir = tempfile::tempdir().unwrap();
//! let db = dir.path().join("results.db");
//! let mut store = lever_results::Store::open(Some(db.to_str().unwrap())).unwrap();
//! let id = store.save(&run).unwrap();
//! assert_eq!(store.get(id).unwrap(), run);
//! let q = lever_results::TrendQuery { metric: "boot.kernel".into(), ..Default::default() };
//! assert_eq!(store.trend(&q).unwrap()[0].value, 1234.5);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod db;
pub mod error;
mod export;
pub mod model;
pub mod ops;
pub mod schema;
pub mod store;

pub use error::{ErrorKind, StoreError};
pub use export::Exported;
pub use store::{Filter, Location, RunId, RunSummary, Store, TrendPoint, TrendQuery};
