//! `clusters: auto`: the clusters and CPUs a kernel tree has.

use crate::error::{InFile, TargetError};
use crate::expand::union_cpus;
use crate::model::Cluster;
use crate::opcode;
use lever_kernel::{paths, KernelError, KernelFs};
use lever_yaml::Pos;

/// `clusters: auto`: one cluster per `cpufreq/policyN`, in policy order.
/// CPUs for per-CPU resources come from `/sys/devices/system/cpu/present`
/// when it exists (a VM without cpufreq still has CPUs), else from the
/// policies.
pub(super) fn discover(
    d: &InFile,
    pos: Pos,
    fs: &KernelFs,
) -> Result<(Vec<Cluster>, Vec<u32>), TargetError> {
    let kernel_err = |e: KernelError, what: &str| TargetError::Field {
        error: lever_yaml::FieldError::new(
            d.file,
            pos,
            "clusters".to_string(),
            format!("cannot discover clusters: {what}: {e}"),
        ),
        kernel: Some(Box::new(e)),
    };
    let mut policies: Vec<u32> = match fs.list_dir(paths::CPUFREQ) {
        Ok(names) => names
            .iter()
            .filter_map(|n| n.strip_prefix("policy")?.parse().ok())
            .collect(),
        Err(e) if e.is_missing() => Vec::new(),
        Err(e) => return Err(kernel_err(e, "listing cpufreq policies")),
    };
    policies.sort_unstable();
    if policies.len() > opcode::MAX_CLUSTER_ID as usize + 1 {
        return Err(d.err(
            pos,
            "clusters",
            format!(
                "found {} cpufreq policies; opcodes have room for {} clusters",
                policies.len(),
                opcode::MAX_CLUSTER_ID + 1
            ),
        ));
    }
    let mut clusters = Vec::new();
    for (id, policy) in policies.into_iter().enumerate() {
        let dir = format!("{}/policy{policy}", paths::CPUFREQ);
        // `related_cpus` is space separated (`0 1 2 3`); accept ranges too.
        let mut cpus = Vec::new();
        for file in ["related_cpus", "affected_cpus"] {
            let text = match fs.read_optional(&format!("{dir}/{file}")) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => return Err(kernel_err(e, "reading a policy's CPUs")),
            };
            cpus = text
                .split_whitespace()
                .filter_map(lever_kernel::parse_cpu_list)
                .flatten()
                .filter(|c| *c <= opcode::MAX_CPU)
                .collect();
            break;
        }
        cpus.sort_unstable();
        cpus.dedup();
        clusters.push(Cluster {
            name: format!("policy{policy}"),
            id: id as u32,
            policy,
            cpus,
        });
    }
    let present = format!("{}/present", paths::CPU);
    let cpus = match fs.read_optional(&present) {
        Ok(Some(text)) => lever_kernel::parse_cpu_list(&text)
            .map(|mut v| {
                v.retain(|c| *c <= opcode::MAX_CPU);
                v
            })
            .unwrap_or_else(|| union_cpus(&clusters)),
        Ok(None) => union_cpus(&clusters),
        Err(e) => return Err(kernel_err(e, "reading the present CPUs")),
    };
    Ok((clusters, cpus))
}
