//! Expansion: one template becomes one instance per cluster, CPU and
//! sub-index, with its name and opcode filled in. Pure: no kernel is read,
//! so the decoder uses it to prove opcodes unique and binding uses it to
//! know what to look for.
//!
//! | per     | instance names           | opcode bits filled      |
//! |---------|--------------------------|-------------------------|
//! | none    | `name`                   | —                       |
//! | cluster | `name.CLUSTER`           | 12..8 = cluster id      |
//! | cpu     | `name.cpuN`              | 12..4 = CPU number      |
//! | + index | `… .INDEX_NAMEi` appended | 3..0 = sub-index       |

use crate::model::{Cluster, Per, Template};
use crate::opcode;
use crate::placeholder::{self, Placeholder};
use lever_engine::resource::Opcode;
use std::collections::BTreeSet;

/// Cluster id, CPU and sub-index of an instance: "the same place" in two
/// templates.
pub(crate) type Place = (Option<u32>, Option<u32>, Option<u32>);

/// One expansion of a template, before the kernel is consulted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instance<'c> {
    pub name: String,
    pub opcode: Opcode,
    pub cluster: Option<&'c Cluster>,
    pub cpu: Option<u32>,
    pub index: Option<u32>,
}

impl Instance<'_> {
    /// Identifies "the same place" across templates, to find pair partners.
    pub fn key(&self) -> Place {
        (self.cluster.map(|c| c.id), self.cpu, self.index)
    }

    /// Fill the placeholders of a (validated) template string.
    pub fn substitute(&self, text: &str) -> String {
        placeholder::substitute(text, |p| match p {
            Placeholder::Policy => self
                .cluster
                .map(|c| c.policy.to_string())
                .unwrap_or_default(),
            Placeholder::Cluster => self.cluster.map(|c| c.name.clone()).unwrap_or_default(),
            Placeholder::Cpu => self.cpu.map(|c| c.to_string()).unwrap_or_default(),
            Placeholder::Index => self.index.map(|i| i.to_string()).unwrap_or_default(),
        })
    }
}

/// Expand a template over clusters (per: cluster), CPUs (per: cpu) and its
/// sub-indexes.
pub(crate) fn instances<'c>(
    t: &Template,
    clusters: &'c [Cluster],
    cpus: &[u32],
) -> Vec<Instance<'c>> {
    let base: Vec<Instance<'c>> = match t.per {
        Per::None => vec![Instance {
            name: t.name.clone(),
            opcode: t.opcode,
            cluster: None,
            cpu: None,
            index: None,
        }],
        Per::Cluster => clusters
            .iter()
            .map(|c| Instance {
                name: format!("{}.{}", t.name, c.name),
                opcode: opcode::with_cluster(t.opcode, c.id),
                cluster: Some(c),
                cpu: None,
                index: None,
            })
            .collect(),
        Per::Cpu => cpus
            .iter()
            .map(|&cpu| Instance {
                name: format!("{}.cpu{cpu}", t.name),
                opcode: opcode::with_cpu(t.opcode, cpu),
                cluster: None,
                cpu: Some(cpu),
                index: None,
            })
            .collect(),
    };
    let Some(indexes) = &t.index else {
        return base;
    };
    base.into_iter()
        .flat_map(|b| {
            indexes.iter().map(move |&i| Instance {
                name: format!("{}.{}{i}", b.name, t.index_name),
                opcode: opcode::with_index(b.opcode, i),
                index: Some(i),
                ..b.clone()
            })
        })
        .collect()
}

/// All CPUs of the clusters, ascending.
pub(crate) fn union_cpus(clusters: &[Cluster]) -> Vec<u32> {
    let set: BTreeSet<u32> = clusters
        .iter()
        .flat_map(|c| c.cpus.iter().copied())
        .collect();
    set.into_iter().collect()
}

impl crate::model::TargetFile {
    /// The resource names this file gives without a kernel, in file order,
    /// each with its template: every template expanded over the declared
    /// clusters and their CPUs. With `clusters: auto` the clusters are
    /// known only when bound, so only the templates that are not per
    /// cluster or CPU are named. For what needs no board (shell
    /// completion).
    pub fn resource_names(&self) -> Vec<(String, &Template)> {
        let (clusters, cpus) = match &self.clusters {
            crate::model::Clusters::List(list) => (list.clone(), union_cpus(list)),
            _ => (Vec::new(), Vec::new()),
        };
        self.resources
            .iter()
            .flat_map(|t| {
                instances(t, &clusters, &cpus)
                    .into_iter()
                    .map(move |i| (i.name, t))
            })
            .collect()
    }
}
