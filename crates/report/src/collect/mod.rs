//! `lever report collect`: one run of a board.
//!
//! Each section is one module calling the library that measures it; a
//! section that cannot be measured here is kept, with `not_measured` and
//! the reason, so a reader of the run always learns why a figure is
//! missing. Only bad input (a file the user named that cannot be read, a
//! malformed option) is an error.

mod bench;
mod boot;
mod daemon;
mod device;
mod latency;
mod markers;
mod memory;

use crate::model::{Run, Section};
use crate::ReportError;
use lever_kernel::KernelFs;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

pub use boot::BootLog;
pub use memory::UseCase;

/// How to run the benchmarks, if at all.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchSource {
    /// `lever bench --quick` now.
    Quick,
    /// An existing `lever bench -o FILE` report.
    File(PathBuf),
}

/// What to collect.
#[derive(Debug, Clone)]
pub struct Options {
    /// The kernel root (`/` or a simulated board).
    pub root: PathBuf,
    /// Use cases to measure the memory during, in order.
    pub usecases: Vec<UseCase>,
    /// Boot logs.
    pub boot_logs: Vec<BootLog>,
    /// Latency measurement time (both phases together), if asked.
    pub latency: Option<Duration>,
    /// Benchmarks, if asked.
    pub bench: Option<BenchSource>,
    /// How the benchmarks re-run this program in its helper mode
    /// (`lever bench __helper`).
    pub bench_helper: Option<Vec<OsString>>,
    /// A trace to take marker KPIs from.
    pub trace: Option<PathBuf>,
    /// `NAME=FROM..TO` marker KPIs.
    pub kpis: Vec<String>,
    /// The daemon's socket.
    pub daemon_socket: PathBuf,
    /// Memory sampling interval during a use case.
    pub interval: Duration,
    /// The collector's version, written into the run.
    pub lever_version: String,
}

impl Options {
    /// Nothing optional: the device, the memory map after boot and the
    /// daemon at its default socket.
    pub fn new(root: impl Into<PathBuf>) -> Options {
        Options {
            root: root.into(),
            usecases: Vec::new(),
            boot_logs: Vec::new(),
            latency: None,
            bench: None,
            bench_helper: None,
            trace: None,
            kpis: Vec::new(),
            daemon_socket: lever_client::socket_path(),
            interval: Duration::from_millis(200),
            lever_version: String::new(),
        }
    }
}

/// The sections in the order they are collected (the progress total).
pub const SECTIONS: [&str; 7] = [
    "device", "boot", "memory", "latency", "bench", "markers", "daemon",
];

/// Collect one run. `progress(i, name)` is called before section `i` of
/// [`SECTIONS`] is collected, for a progress line.
pub fn collect(
    opts: &Options,
    collected_at: &str,
    progress: &mut dyn FnMut(usize, &str),
) -> Result<Run, ReportError> {
    let fs = KernelFs::new(&opts.root);
    // The conditions of the whole collection, sampled every second while
    // the sections are measured.
    let recorder = lever_measure::conditions::Recorder::start(
        &fs,
        &opts.lever_version,
        Some(CONDITIONS_EVERY),
        "",
    );
    progress(0, SECTIONS[0]);
    let (device, device_section) = device::collect(&fs);
    let mut run = Run::new(collected_at, device);
    run.lever_version = opts.lever_version.clone();
    run.sections.push(device_section);
    progress(1, SECTIONS[1]);
    run.sections.push(boot::collect(&opts.boot_logs)?);
    progress(2, SECTIONS[2]);
    run.sections
        .push(memory::collect(&fs, &opts.usecases, opts.interval));
    progress(3, SECTIONS[3]);
    run.sections.push(latency::collect(&fs, opts.latency));
    progress(4, SECTIONS[4]);
    let (bench, speed) = bench::collect(&fs, opts)?;
    run.sections.push(bench);
    progress(5, SECTIONS[5]);
    run.sections
        .push(markers::collect(opts.trace.as_deref(), &opts.kpis)?);
    progress(6, SECTIONS[6]);
    run.sections.push(daemon::collect(&opts.daemon_socket));
    let mut conditions = recorder.finish();
    // The bench section's figures were taken at this speed: what the
    // page's panel shows and `report render A B` compares.
    conditions.speed = speed;
    run.conditions = Some(conditions);
    Ok(run)
}

/// How often the conditions are sampled during a collection.
pub const CONDITIONS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Why a measurement of this machine means nothing for `fs`: it is a
/// file tree (a simulated board), not the running kernel.
fn not_this_machine(fs: &KernelFs) -> Option<String> {
    (!fs.is_system()).then(|| {
        format!(
            "--root {} is a file tree (a simulated or copied board), and this measurement runs on the machine itself; run collect on the board",
            fs.root().display()
        )
    })
}

/// A section that could not be measured because of `why`.
fn skipped(name: &str, why: impl Into<String>) -> Section {
    Section::not_measured(name, &why.into())
}

/// A file-name slug for metric names: lowercase ASCII letters, digits and
/// `_`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// Now as RFC 3339 UTC (`2026-11-23T14:00:00Z`), the run document's time
/// format. The calendar arithmetic is lever-latency's (cyclictest's RFC
/// 2822 dates), reordered here.
pub fn now_rfc3339() -> String {
    let unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(unix_s)
}

/// `unix_s` as RFC 3339 UTC.
pub fn rfc3339(unix_s: u64) -> String {
    // `Mon, 23 Nov 2026 10:20:45 +0000`
    let text = lever_latency::cyclictest::rfc2822_utc(unix_s);
    let w: Vec<&str> = text.split_whitespace().collect();
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| Some(m) == w.get(2)).unwrap_or(0) + 1;
    format!(
        "{}-{month:02}-{}T{}Z",
        w.get(3).unwrap_or(&"1970"),
        w.get(1).unwrap_or(&"01"),
        w.get(4).unwrap_or(&"00:00:00")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn slugs() {
        assert_eq!(
            super::slug("Kernel (without systemd)"),
            "kernel_without_systemd"
        );
        assert_eq!(super::slug("PBL + XBL"), "pbl_xbl");
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        // date -u -d @1795443645 → Mon Nov 23 14:20:45 UTC 2026
        assert_eq!(super::rfc3339(1_795_443_645), "2026-11-23T14:20:45Z");
    }
}
