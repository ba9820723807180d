//! `lever mem map|procs|thrash`.

pub mod map;
pub mod procs;
pub mod thrash;
