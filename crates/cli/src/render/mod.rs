//! Rendering: how each command's report looks to a person (aligned text
//! tables) or a program (JSON). One module per command, a function per
//! section; the shared table and JSON helpers are here.

pub mod bench_daemon;
pub mod client;
pub mod daemon;
mod table;

pub use table::{print_json, Table};
