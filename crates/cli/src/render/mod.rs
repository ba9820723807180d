//! Rendering: how each command's report looks to a person (aligned text
//! tables) or a program (JSON). One module per command, a function per
//! section; the shared table, JSON, number and progress helpers are here.

pub mod bench;
pub mod bench_daemon;
pub mod boot;
pub mod client;
pub mod conditions;
pub mod cpu;
pub mod daemon;
#[cfg(feature = "flamegraph")]
pub mod flamegraph;
pub mod io;
pub mod latency;
pub mod man;
pub mod mem;
pub mod num;
pub mod profile;
mod progress;
pub mod report;
pub mod resources;
pub mod results;
pub mod signal;
pub mod sim;
mod table;
pub mod target;
pub mod thermal;
pub mod top;
pub mod trace;

pub use progress::Progress;

/// `println!` through [`out`]: a closed stdout is [`StdoutClosed`], not a
/// panic. Use as `outln!("...", args)?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::render::out(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;
pub use table::{out, print_json, StdoutClosed, Table};

/// Print `report` as JSON with `--json`, else as the text `text` makes of it.
pub fn emit<T: serde::Serialize>(
    json: bool,
    report: &T,
    text: impl FnOnce(&T) -> String,
) -> anyhow::Result<()> {
    if json {
        print_json(report)
    } else {
        out(&text(report))
    }
}
