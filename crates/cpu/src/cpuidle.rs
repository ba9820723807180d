//! cpuidle states per CPU, the C-states whose sleep and wake-up latencies
//! seed 004 (OMAPpedia) measures.
//!
//! `cpuN/cpuidle/stateK/` holds one integer or string per file
//! (`Documentation/admin-guide/pm/cpuidle.rst`):
//!
//! | file | meaning |
//! |---|---|
//! | `name`, `desc` | state name (`WFI`, `cpu-sleep-0-0`, `POLL`) and description |
//! | `latency` | exit latency, µs |
//! | `residency` | target residency (minimum worthwhile stay), µs |
//! | `usage` | times entered |
//! | `time` | total time in the state, µs |
//! | `disable` | 1 when disabled (by user or driver) |
//! | `above`, `below` | entries that were too long / too short for the state |
//!
//! `cpuidle/current_driver` and `current_governor_ro` (or
//! `current_governor`) name the driver and governor.

use lever_kernel::{paths, KernelFs};
use serde::Serialize;

use crate::{opt_text, opt_u64, CpuError};

/// One idle state of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleState {
    /// K of `stateK`.
    pub index: u32,
    /// `name`.
    pub name: String,
    /// `desc`.
    pub desc: Option<String>,
    /// `latency`: exit latency, µs.
    pub exit_latency_us: Option<u64>,
    /// `residency`: target residency, µs.
    pub target_residency_us: Option<u64>,
    /// `usage`: times entered.
    pub usage: Option<u64>,
    /// `time`: total time spent in the state, µs.
    pub time_us: Option<u64>,
    /// `disable` != 0.
    pub disabled: bool,
    /// `above`: entries whose stay was shorter than the target residency.
    pub above: Option<u64>,
    /// `below`: entries where a deeper state would have fit.
    pub below: Option<u64>,
}

/// The idle states of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuIdle {
    /// Logical CPU.
    pub cpu: u32,
    /// States in index order.
    pub states: Vec<IdleState>,
}

/// cpuidle over all online CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cpuidle {
    /// `cpuidle/current_driver`.
    pub driver: Option<String>,
    /// `cpuidle/current_governor_ro` or `current_governor`.
    pub governor: Option<String>,
    /// Per online CPU; CPUs without a `cpuidle/` directory are left out.
    pub cpus: Vec<CpuIdle>,
    /// Why there is nothing, when there is nothing.
    pub note: Option<String>,
}

/// Read the states of one CPU (empty when it has no `cpuidle/`).
pub fn read_cpu(fs: &KernelFs, cpu: u32) -> Result<Vec<IdleState>, CpuError> {
    let base = format!("{}/cpu{cpu}/cpuidle", paths::CPU);
    let names = match fs.list_dir(&base) {
        Ok(n) => n,
        Err(e) if e.is_missing() => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for name in names {
        let Some(index) = name.strip_prefix("state").and_then(|n| n.parse().ok()) else {
            continue;
        };
        let dir = format!("{base}/{name}");
        let num = |f: &str| opt_u64(fs, &format!("{dir}/{f}"));
        out.push(IdleState {
            index,
            name: opt_text(fs, &format!("{dir}/name"))?.unwrap_or_else(|| name.clone()),
            desc: opt_text(fs, &format!("{dir}/desc"))?,
            exit_latency_us: num("latency")?,
            target_residency_us: num("residency")?,
            usage: num("usage")?,
            time_us: num("time")?,
            disabled: num("disable")?.is_some_and(|d| d != 0),
            above: num("above")?,
            below: num("below")?,
        });
    }
    Ok(out)
}

/// Read cpuidle for the given CPUs.
pub fn read(fs: &KernelFs, cpus: &[u32]) -> Result<Cpuidle, CpuError> {
    let top = format!("{}/cpuidle", paths::CPU);
    let driver = opt_text(fs, &format!("{top}/current_driver"))?;
    let governor = match opt_text(fs, &format!("{top}/current_governor_ro"))? {
        Some(g) => Some(g),
        None => opt_text(fs, &format!("{top}/current_governor"))?,
    };
    let mut per_cpu = Vec::new();
    for &cpu in cpus {
        let states = read_cpu(fs, cpu)?;
        if !states.is_empty() {
            per_cpu.push(CpuIdle { cpu, states });
        }
    }
    let note = per_cpu.is_empty().then(|| {
        if fs.exists(&top) {
            format!(
                "no cpuN/cpuidle/state* under {}: no idle driver registered states",
                paths::CPU
            )
        } else {
            format!("{top} does not exist: kernel built without CONFIG_CPU_IDLE")
        }
    });
    Ok(Cpuidle {
        driver,
        governor,
        cpus: per_cpu,
        note,
    })
}
