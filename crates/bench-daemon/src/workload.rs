//! What the clients ask for: requests that change a node at every acquire
//! and every release, so each round trip includes a real write.

use lever_engine::{Aggregation, Permission, ResourceKind};
use lever_kernel::KernelFs;

/// One client's request: a newest-wins resource and values of its own.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The resource's opcode.
    pub opcode: u32,
    /// Its name.
    pub name: String,
    /// Distinct values, none of them the node's original.
    pub values: Vec<i64>,
}

/// Distinct values taken per resource (enough for 256 clients over three
/// resources).
pub const MAX_CLIENTS_PER_RESOURCE: usize = 128;

/// The resources the clients acquire: every third-party resource with the
/// newest-wins policy, where each acquire and each release changes the
/// node. Client `i` asks `asks[i % len]` for `values[i / len]`, a value no
/// other client asks of that resource and not the node's original.
pub fn workload(fs: &KernelFs) -> Result<Vec<Ask>, crate::BenchError> {
    let target = lever_targets::resolve(None, fs)?;
    let asks: Vec<Ask> = target
        .resources
        .iter()
        .filter(|r| {
            r.aggregation == Aggregation::Newest
                && r.permission == Permission::ThirdParty
                && r.kind == ResourceKind::Plain
        })
        .filter_map(|r| {
            let original = lever_tunables::read_current(fs, r).ok()?.level?;
            let values = (r.low..=r.high)
                .filter(|&v| v != original)
                .take(MAX_CLIENTS_PER_RESOURCE)
                .collect();
            Some(Ask {
                opcode: r.opcode.0,
                name: r.name.clone(),
                values,
            })
        })
        .collect();
    if asks.is_empty() {
        return Err(crate::BenchError::Workload(format!(
            "target {} has no third-party resource with the newest policy to benchmark with",
            target.name
        )));
    }
    Ok(asks)
}

/// How many clients the workload can keep distinct.
pub fn max_clients(asks: &[Ask]) -> usize {
    asks.len() * asks.iter().map(|a| a.values.len()).min().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_asks_a_value_that_changes_the_node() {
        for board in ["qcs6490", "qcs5430-fp1", "am437x"] {
            let dir = tempfile::tempdir().unwrap();
            lever_sim::create(board, dir.path()).unwrap();
            let fs = KernelFs::new(dir.path());
            let asks = workload(&fs).unwrap();
            assert!(!asks.is_empty(), "{board}");
            let target = lever_targets::resolve(None, &fs).unwrap();
            for a in &asks {
                let spec = target
                    .resources
                    .iter()
                    .find(|r| r.opcode.0 == a.opcode)
                    .unwrap();
                let original = lever_tunables::read_current(&fs, spec)
                    .unwrap()
                    .level
                    .unwrap();
                assert_eq!(spec.aggregation, Aggregation::Newest);
                assert!(!a.values.contains(&original), "{board} {}", a.name);
                let mut v = a.values.clone();
                v.dedup();
                assert_eq!(v.len(), a.values.len());
                assert!(a.values.iter().all(|x| (spec.low..=spec.high).contains(x)));
            }
            // Enough distinct requests for the default 256 clients.
            assert!(max_clients(&asks) >= 256, "{board}");
        }
    }

    #[test]
    fn a_target_without_newest_resources_says_so() {
        let tree = lever_testkit::FakeTree::new();
        tree.node("/proc/sys/kernel/hostname", "vm\n");
        let err = workload(tree.fs()).unwrap_err().to_string();
        assert!(
            err.contains("no third-party resource with the newest policy"),
            "{err}"
        );
    }
}
