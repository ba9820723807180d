//! `lever mem map|procs|thrash`: the memory measurements of seed 000 §3.5,
//! §7.2 and §8.3. Collection, models and sampling live in `lever-measure`,
//! rendering in `render::mem`; each submodule parses its flags and calls
//! them.

mod map;
mod procs;
mod thrash;

use crate::args::Global;
use clap::Subcommand;
use lever_kernel::KernelFs;

pub use map::MapArgs;
pub use procs::ProcsArgs;
pub use thrash::ThrashArgs;

/// `lever mem …`
#[derive(Debug, Subcommand)]
pub enum MemCommand {
    /// The memory map of seed 000 §8.3 (total RAM, non-Linux, kernel static,
    /// apps + framework, free) with the §3.5 kernel-dynamic breakdown; with
    /// `-- CMD`, "after boot" and "during CMD" side by side.
    Map(MapArgs),
    /// Per-process memory like procrank: VSS, RSS, PSS, USS and swap from
    /// `/proc/<pid>/smaps_rollup`, largest first, with totals.
    Procs(ProcsArgs),
    /// Memory thrashing check (seed 000 §7.2): sample /proc/vmstat and
    /// /proc/pressure/memory, print rates, reclaim efficiency and a verdict.
    Thrash(ThrashArgs),
}

pub fn run(global: &Global, cmd: MemCommand) -> anyhow::Result<()> {
    let fs = KernelFs::new(&global.root);
    match cmd {
        MemCommand::Map(a) => map::run(global, &fs, a),
        MemCommand::Procs(a) => procs::run(global, &fs, a),
        MemCommand::Thrash(a) => thrash::run(global, &fs, a),
    }
}
