//! The resource engine (work in progress).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod resource;
pub use resource::*;
