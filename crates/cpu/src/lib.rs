//! CPU inventory and IPC for Lever.
//!
//! Seed 000 (Qualcomm Linux Performance Guide) describes a board's CPU side
//! as tables (§1.1: clusters, core counts, maximum frequencies, L1/L2/L3
//! sizes) and asks engineers to `cat` the cpufreq and cpuidle nodes of §5.1
//! by hand, and to run `perf stat -e cycles,instructions` (§7.1) and the
//! cache-miss events of §7.2. This crate turns that into data:
//!
//! - [`topology`]: online CPUs, their capacity and caches (`cache/index*`),
//!   grouped into clusters by cpufreq policy (`related_cpus`), each with
//!   its min/max/current frequency, governor and driver;
//! - [`cpufreq`]: residency per frequency (`stats/time_in_state`, as time
//!   and %) and the transition matrix (`stats/trans_table`);
//! - [`cpuidle`]: idle states per CPU (name, exit latency, target
//!   residency, usage, time, disabled), as seed 004 measures them;
//! - [`gpu`]: the Adreno GPU behind KGSL and every devfreq device;
//! - [`ipc`]: the pure reading of cycle/instruction/cache-miss counts;
//! - [`counters`]: counting a command with `perf_event_open` (through the
//!   `perf-event2` crate; no `unsafe` here).
//!
//! Readers take a [`lever_kernel::KernelFs`], so everything runs against a
//! simulated board or a tree copied off a device as well as `/`. A file the
//! kernel does not provide is `None` (or an empty list) with the reason kept
//! where the user needs it, never a made-up number.
//!
//! ```
//! use lever_kernel::KernelFs;
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! let cpu = "/sys/devices/system/cpu";
//! fs.create_node(&format!("{cpu}/online"), "0-1\n").unwrap();
//! for n in 0..2 {
//!     fs.create_node(&format!("{cpu}/cpu{n}/cpu_capacity"), "1024\n").unwrap();
//!     fs.create_node(&format!("{cpu}/cpu{n}/cache/index0/level"), "1\n").unwrap();
//!     fs.create_node(&format!("{cpu}/cpu{n}/cache/index0/type"), "Data\n").unwrap();
//!     fs.create_node(&format!("{cpu}/cpu{n}/cache/index0/size"), "32K\n").unwrap();
//!     fs.create_node(&format!("{cpu}/cpu{n}/cache/index0/shared_cpu_list"), &format!("{n}\n")).unwrap();
//! }
//! let topo = lever_cpu::topology::read(&fs).unwrap();
//! assert_eq!(topo.clusters.len(), 1); // same capacity and caches, no cpufreq
//! assert_eq!(topo.clusters[0].cpus, vec![0, 1]);
//! assert_eq!(topo.clusters[0].caches[0].label(), "L1D 32 kB/core");
//! assert!(topo.cpufreq_note.is_some()); // says why there are no frequencies
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod counters;
pub mod cpufreq;
pub mod cpuidle;
pub mod gpu;
pub mod ipc;
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
mod no_perf;
pub mod pmu;
pub mod topology;

use lever_kernel::KernelError;
use lever_text::ParseError;

/// Errors from reading CPU nodes. Every variant names the kernel path.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// A node could not be read.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A node's content is not in the kernel's format (`path:line`, the
    /// text, what the kernel prints there).
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// Read an optional integer node: `Ok(None)` when the kernel has no such node.
pub(crate) fn opt_u64(fs: &lever_kernel::KernelFs, path: &str) -> Result<Option<u64>, CpuError> {
    match fs.read_optional(path)? {
        None => Ok(None),
        Some(text) => text
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| CpuError::from(ParseError::new(path, 1, &text, "an unsigned integer"))),
    }
}

/// Read an optional text node, trimmed; `None` when missing or empty.
pub(crate) fn opt_text(
    fs: &lever_kernel::KernelFs,
    path: &str,
) -> Result<Option<String>, CpuError> {
    Ok(fs
        .read_optional(path)?
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty()))
}

/// `[0, 1, 2, 3, 7]` → `0-3,7` (the kernel's list format).
pub use lever_kernel::format_cpu_list;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_the_shared_parse_error() {
        let e =
            cpufreq::parse_time_in_state("/sys/x/time_in_state", "300000 5\nfast 7\n").unwrap_err();
        assert!(
            matches!(&e, CpuError::Parse(ParseError { line: 2, .. })),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "/sys/x/time_in_state:2: cannot parse \"fast 7\": expected `<kHz> <10 ms units>`"
        );
    }

    #[test]
    fn cpu_list_round_trips() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 7]), "0-3,7");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(
            lever_kernel::parse_cpu_list(&format_cpu_list(&[0, 2, 3, 4, 9])).unwrap(),
            vec![0, 2, 3, 4, 9]
        );
    }
}
