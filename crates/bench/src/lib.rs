//! Micro-benchmarks (issue 14).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conditions;
pub mod stats;
