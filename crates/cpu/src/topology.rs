//! CPU topology and clusters, like seed 000 §1.1's tables.
//!
//! Sources, all below `/sys/devices/system/cpu`:
//!
//! - `online` — the online CPUs, in list form (`0-7`);
//! - `cpuN/cpu_capacity` — `arch_topology`'s capacity, 1024 for the
//!   biggest CPU (absent on most x86 kernels);
//! - `cpuN/topology/physical_package_id`;
//! - `cpuN/cache/indexK/{level,type,size,shared_cpu_list}` — one directory
//!   per cache leaf (`size` is printed as `32K`);
//! - `cpufreq/policyX/{related_cpus,cpuinfo_min_freq,cpuinfo_max_freq,
//!   scaling_min_freq,scaling_max_freq,scaling_cur_freq,scaling_governor,
//!   scaling_driver}` — one policy per frequency domain, which on Arm
//!   big.LITTLE/DynamIQ parts is one cluster (Silver, Gold, Prime).
//!
//! A cluster is a cpufreq policy's `related_cpus` (the CPUs that share one
//! clock). CPUs that no policy covers (no cpufreq driver, as in a VM) are
//! grouped by what makes CPUs alike: same package, same capacity and same
//! cache sizes.

use lever_kernel::{paths, KernelFs};
use serde::Serialize;

use crate::{format_cpu_list, opt_text, opt_u64, CpuError, ParseError};

/// One cache leaf of one CPU (`cpuN/cache/indexK`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheLeaf {
    /// 1, 2, 3.
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in KiB (`size` = `32K`).
    pub size_kb: u64,
    /// CPUs sharing this cache (`shared_cpu_list`).
    pub shared_cpus: Vec<u32>,
}

impl CacheLeaf {
    /// `L1D`, `L1I`, `L2`, `L3` (unified caches carry no letter).
    pub fn name(&self) -> String {
        let suffix = match self.kind.as_str() {
            "Data" => "D",
            "Instruction" => "I",
            _ => "",
        };
        format!("L{}{}", self.level, suffix)
    }

    /// The seed §1.1 way of writing a cache: `L2 256 kB/core`,
    /// `L3 2 MB shared by 0-7`.
    pub fn label(&self) -> String {
        let size = format_kb(self.size_kb);
        if self.shared_cpus.len() <= 1 {
            format!("{} {size}/core", self.name())
        } else {
            format!(
                "{} {size} shared by {}",
                self.name(),
                format_cpu_list(&self.shared_cpus)
            )
        }
    }
}

/// `32` → `32 kB`, `2048` → `2 MB` (seed §1.1's units).
pub fn format_kb(kb: u64) -> String {
    if kb >= 1024 && kb % 1024 == 0 {
        format!("{} MB", kb / 1024)
    } else {
        format!("{kb} kB")
    }
}

/// One online CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cpu {
    /// Logical CPU number.
    pub cpu: u32,
    /// `cpu_capacity` (1024 = biggest CPU), when the kernel exports it.
    pub capacity: Option<u64>,
    /// `topology/physical_package_id`.
    pub package_id: Option<u64>,
    /// The cpufreq policy that covers this CPU (`policyX` → X).
    pub policy: Option<u32>,
    /// Cache leaves, in `indexK` order.
    pub caches: Vec<CacheLeaf>,
}

/// Frequencies and governor of one cpufreq policy, in kHz as the kernel
/// prints them. Each field is `None` when the node is absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyFreq {
    /// `cpuinfo_min_freq`: the hardware minimum.
    pub cpuinfo_min_khz: Option<u64>,
    /// `cpuinfo_max_freq`: the hardware maximum.
    pub cpuinfo_max_khz: Option<u64>,
    /// `scaling_min_freq`: the current software floor.
    pub scaling_min_khz: Option<u64>,
    /// `scaling_max_freq`: the current software ceiling.
    pub scaling_max_khz: Option<u64>,
    /// `scaling_cur_freq`.
    pub cur_khz: Option<u64>,
    /// `scaling_governor`.
    pub governor: Option<String>,
    /// `scaling_driver`.
    pub driver: Option<String>,
}

/// A group of CPUs that share a clock (a cpufreq policy) or, without
/// cpufreq, that look alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cluster {
    /// `policy0`, or `cpus 0-1` without cpufreq.
    pub name: String,
    /// The cpufreq policy number, when there is one.
    pub policy: Option<u32>,
    /// Online CPUs of the cluster.
    pub cpus: Vec<u32>,
    /// `cpu_capacity` of the cluster's CPUs (the largest, if they differ).
    pub capacity: Option<u64>,
    /// Frequencies and governor; `None` without cpufreq.
    pub freq: Option<PolicyFreq>,
    /// The caches of the cluster's first CPU, by level.
    pub caches: Vec<CacheLeaf>,
}

/// The CPU side of a board.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Topology {
    /// Online CPUs.
    pub online: Vec<u32>,
    /// Per-CPU details.
    pub cpus: Vec<Cpu>,
    /// Clusters, in policy order, then CPUs without a policy.
    pub clusters: Vec<Cluster>,
    /// Why there are no frequencies, when there is no cpufreq.
    pub cpufreq_note: Option<String>,
}

/// The cpufreq policies of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policies {
    /// `(X of policyX, related CPUs)`, in natural order.
    pub list: Vec<(u32, Vec<u32>)>,
    /// Why the list is empty, when it is.
    pub note: Option<String>,
}

/// The cpufreq policies under `cpufreq/`, in natural order, with the CPUs
/// each covers. An empty list with a reason when there is no cpufreq.
pub fn policies(fs: &KernelFs) -> Result<Policies, CpuError> {
    let names = match fs.list_dir(paths::CPUFREQ) {
        Ok(n) => n,
        Err(e) if e.is_missing() => {
            return Ok(Policies {
                list: Vec::new(),
                note: Some(format!(
                    "{} does not exist: this kernel has no cpufreq support",
                    paths::CPUFREQ
                )),
            })
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for name in names {
        let Some(num) = name
            .strip_prefix("policy")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = format!("{}/{name}", paths::CPUFREQ);
        // `related_cpus`: `0 1 2 3 ` (space after each CPU).
        let text = match opt_text(fs, &format!("{dir}/related_cpus"))? {
            Some(t) => t,
            None => opt_text(fs, &format!("{dir}/affected_cpus"))?.unwrap_or_default(),
        };
        let cpus = text
            .split_whitespace()
            .map(|w| {
                w.parse::<u32>().map_err(|_| {
                    CpuError::from(ParseError::new(
                        &format!("{dir}/related_cpus"),
                        1,
                        &text,
                        "CPU numbers separated by spaces",
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push((num, cpus));
    }
    let note = out.is_empty().then(|| {
        format!(
            "no cpufreq policy under {}: no cpufreq driver is loaded (typical of a VM)",
            paths::CPUFREQ
        )
    });
    Ok(Policies { list: out, note })
}

/// Online CPUs: `online` in list form, else the `cpuN` directories.
pub fn online_cpus(fs: &KernelFs) -> Result<Vec<u32>, CpuError> {
    let path = format!("{}/online", paths::CPU);
    if let Some(text) = fs.read_optional(&path)? {
        // `online`: `0-7` or `0-3,5`.
        return lever_kernel::parse_cpu_list(&text).ok_or(CpuError::from(ParseError::new(
            &path,
            1,
            &text,
            "a CPU list such as 0-7",
        )));
    }
    let mut cpus: Vec<u32> = fs
        .list_dir(paths::CPU)?
        .iter()
        .filter_map(|n| n.strip_prefix("cpu").and_then(|d| d.parse().ok()))
        .collect();
    cpus.sort_unstable();
    Ok(cpus)
}

/// Parse a cache `size` node: `32K` (what the kernel prints), `2M`, or bytes.
fn parse_size_kb(path: &str, text: &str) -> Result<u64, CpuError> {
    let t = text.trim();
    let bad = || CpuError::from(ParseError::new(path, 1, text, "a size such as 32K"));
    if let Some(k) = t.strip_suffix('K') {
        k.parse().map_err(|_| bad())
    } else if let Some(m) = t.strip_suffix('M') {
        m.parse::<u64>().map(|m| m * 1024).map_err(|_| bad())
    } else {
        t.parse::<u64>().map(|b| b / 1024).map_err(|_| bad())
    }
}

/// The cache leaves of one CPU, in `indexK` order; empty when the kernel
/// exports none.
pub fn caches(fs: &KernelFs, cpu: u32) -> Result<Vec<CacheLeaf>, CpuError> {
    let base = format!("{}/cpu{cpu}/cache", paths::CPU);
    let names = match fs.list_dir(&base) {
        Ok(n) => n,
        Err(e) if e.is_missing() => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for name in names.iter().filter(|n| n.starts_with("index")) {
        let dir = format!("{base}/{name}");
        let Some(level) = opt_u64(fs, &format!("{dir}/level"))? else {
            continue;
        };
        let size_path = format!("{dir}/size");
        let Some(size) = opt_text(fs, &size_path)? else {
            continue;
        };
        let shared = opt_text(fs, &format!("{dir}/shared_cpu_list"))?
            .and_then(|t| lever_kernel::parse_cpu_list(&t))
            .unwrap_or_else(|| vec![cpu]);
        out.push(CacheLeaf {
            level: u8::try_from(level).unwrap_or(u8::MAX),
            kind: opt_text(fs, &format!("{dir}/type"))?.unwrap_or_else(|| "Unified".into()),
            size_kb: parse_size_kb(&size_path, &size)?,
            shared_cpus: shared,
        });
    }
    out.sort_by(|a, b| a.level.cmp(&b.level).then(a.kind.cmp(&b.kind)));
    Ok(out)
}

fn policy_freq(fs: &KernelFs, policy: u32) -> Result<PolicyFreq, CpuError> {
    let dir = format!("{}/policy{policy}", paths::CPUFREQ);
    let num = |f: &str| opt_u64(fs, &format!("{dir}/{f}"));
    Ok(PolicyFreq {
        cpuinfo_min_khz: num("cpuinfo_min_freq")?,
        cpuinfo_max_khz: num("cpuinfo_max_freq")?,
        scaling_min_khz: num("scaling_min_freq")?,
        scaling_max_khz: num("scaling_max_freq")?,
        cur_khz: num("scaling_cur_freq")?,
        governor: opt_text(fs, &format!("{dir}/scaling_governor"))?,
        driver: opt_text(fs, &format!("{dir}/scaling_driver"))?,
    })
}

/// Read the topology, caches and clusters.
pub fn read(fs: &KernelFs) -> Result<Topology, CpuError> {
    let online = online_cpus(fs)?;
    let Policies {
        list: policies,
        note: cpufreq_note,
    } = policies(fs)?;
    let mut cpus = Vec::new();
    for &cpu in &online {
        let dir = format!("{}/cpu{cpu}", paths::CPU);
        cpus.push(Cpu {
            cpu,
            capacity: opt_u64(fs, &format!("{dir}/cpu_capacity"))?,
            package_id: opt_u64(fs, &format!("{dir}/topology/physical_package_id"))?,
            policy: policies
                .iter()
                .find(|(_, related)| related.contains(&cpu))
                .map(|(p, _)| *p),
            caches: caches(fs, cpu)?,
        });
    }

    let mut clusters = Vec::new();
    for (policy, related) in &policies {
        let members: Vec<&Cpu> = cpus.iter().filter(|c| related.contains(&c.cpu)).collect();
        if members.is_empty() {
            continue; // every CPU of this policy is offline
        }
        clusters.push(cluster(
            format!("policy{policy}"),
            Some(*policy),
            &members,
            Some(policy_freq(fs, *policy)?),
        ));
    }
    // CPUs no policy covers: group the ones that look alike.
    let mut rest: Vec<(String, Vec<&Cpu>)> = Vec::new();
    for c in cpus.iter().filter(|c| c.policy.is_none()) {
        let sizes: Vec<String> = c.caches.iter().map(CacheLeaf::name).collect();
        let key = format!(
            "{:?}/{:?}/{:?}/{:?}",
            c.package_id,
            c.capacity,
            sizes,
            c.caches.iter().map(|l| l.size_kb).collect::<Vec<_>>()
        );
        match rest.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(c),
            None => rest.push((key, vec![c])),
        }
    }
    for (_, group) in rest {
        let list: Vec<u32> = group.iter().map(|c| c.cpu).collect();
        clusters.push(cluster(
            format!("cpus {}", format_cpu_list(&list)),
            None,
            &group,
            None,
        ));
    }
    Ok(Topology {
        online,
        cpus,
        clusters,
        cpufreq_note,
    })
}

fn cluster(
    name: String,
    policy: Option<u32>,
    members: &[&Cpu],
    freq: Option<PolicyFreq>,
) -> Cluster {
    Cluster {
        name,
        policy,
        cpus: members.iter().map(|c| c.cpu).collect(),
        capacity: members.iter().filter_map(|c| c.capacity).max(),
        freq,
        caches: members
            .first()
            .map(|c| c.caches.clone())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_in_kernel_format() {
        assert_eq!(parse_size_kb("p", "32K").unwrap(), 32);
        assert_eq!(parse_size_kb("p", "2M").unwrap(), 2048);
        assert_eq!(parse_size_kb("p", "65536").unwrap(), 64);
        let err = parse_size_kb("/sys/x/size", "big").unwrap_err().to_string();
        assert!(err.contains("/sys/x/size:1"), "{err}");
    }

    #[test]
    fn labels_follow_the_seed_tables() {
        let l3 = CacheLeaf {
            level: 3,
            kind: "Unified".into(),
            size_kb: 2048,
            shared_cpus: (0..8).collect(),
        };
        assert_eq!(l3.label(), "L3 2 MB shared by 0-7");
        let l1 = CacheLeaf {
            level: 1,
            kind: "Instruction".into(),
            size_kb: 32,
            shared_cpus: vec![3],
        };
        assert_eq!(l1.label(), "L1I 32 kB/core");
    }
}
