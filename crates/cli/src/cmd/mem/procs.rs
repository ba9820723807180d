//! `lever mem procs`: procrank.

use crate::args::Global;
use crate::render::mem::procs::ProcsReport;
use crate::render::{self, emit};
use clap::{Args, ValueEnum};
use lever_kernel::KernelFs;
use lever_measure::smaps::{ProcScan, Procrank, SortKey, View};

/// `lever mem procs`
#[derive(Debug, Args)]
pub struct ProcsArgs {
    /// Only RAM/swap-backed pages: anonymous + shmem (procrank -C).
    #[arg(short = 'C', long = "anon", conflicts_with = "file")]
    pub anon: bool,
    /// Only file-backed pages (procrank -c).
    #[arg(short = 'c', long = "file")]
    pub file: bool,
    /// Sort key, largest first.
    #[arg(long, value_enum, default_value_t = Sort::Pss)]
    pub sort: Sort,
    /// Show only the first N processes (totals still cover all).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Sort key for `mem procs`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Sort {
    /// Proportional set size.
    Pss,
    /// Unique set size.
    Uss,
    /// Resident set size.
    Rss,
    /// Virtual set size.
    Vss,
    /// Swapped out.
    Swap,
}

pub fn run(global: &Global, fs: &KernelFs, a: ProcsArgs) -> anyhow::Result<()> {
    let view = if a.anon {
        View::Anon
    } else if a.file {
        View::File
    } else {
        View::All
    };
    let sort = match a.sort {
        Sort::Pss => SortKey::Pss,
        Sort::Uss => SortKey::Uss,
        Sort::Rss => SortKey::Rss,
        Sort::Vss => SortKey::Vss,
        Sort::Swap => SortKey::Swap,
    };
    let report = match ProcScan::read(fs)? {
        Ok(scan) => ProcsReport::Table(Procrank::new(&scan, view, sort)),
        Err(why) => ProcsReport::Unavailable {
            unavailable: why.reason().to_string(),
        },
    };
    emit(global.json, &report, |r| {
        render::mem::procs::report(r, a.limit)
    })
}
