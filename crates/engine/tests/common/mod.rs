//! Shared fixtures for the engine's tests and benchmarks: a QCS6490-like
//! resource set and a kernel model that refuses writes the way the kernel
//! does (EINVAL when a write would leave a cpufreq policy with min > max).
#![allow(dead_code)]

use lever_engine::*;
use std::collections::HashMap;

/// The Silver cpufreq table of the simulated qcs6490 (kHz).
pub const SILVER_KHZ: &[i64] = &[
    300000, 403200, 499200, 576000, 691200, 806400, 940800, 1152000, 1324800, 1516800, 1651200,
    1804800, 1958400,
];

fn spec(name: &str, opcode: u32, agg: Aggregation, kind: ResourceKind) -> ResourceSpec {
    ResourceSpec {
        name: name.into(),
        opcode: Opcode(opcode),
        node: format!("/fake/{name}"),
        unit: "level".into(),
        low: 0,
        high: 1024,
        steps: None,
        aggregation: agg,
        permission: Permission::ThirdParty,
        kind,
        description: String::new(),
    }
}

/// A cpufreq min/max pair with the Silver table, at `min_op`/`max_op`.
pub fn freq_pair(cluster: &str, min_op: u32, max_op: u32) -> [ResourceSpec; 2] {
    let mut min = spec(
        &format!("cpu_min_freq.{cluster}"),
        min_op,
        Aggregation::Max,
        ResourceKind::PairMin {
            max: Opcode(max_op),
        },
    );
    let mut max = spec(
        &format!("cpu_max_freq.{cluster}"),
        max_op,
        Aggregation::Min,
        ResourceKind::PairMax {
            min: Opcode(min_op),
        },
    );
    for r in [&mut min, &mut max] {
        r.unit = "kHz".into();
        r.low = SILVER_KHZ[0];
        r.high = *SILVER_KHZ.last().unwrap();
        r.steps = Some(SILVER_KHZ.to_vec());
    }
    [min, max]
}

/// Resources covering every aggregation policy and both pair halves.
pub fn small_target() -> Vec<ResourceSpec> {
    let mut v = Vec::new();
    v.extend(freq_pair("silver", 0x44008100, 0x4400C100));
    v.extend(freq_pair("gold", 0x44008000, 0x4400C000));
    v.push(spec(
        "uclamp_min",
        0x44000000,
        Aggregation::Max,
        ResourceKind::Plain,
    ));
    v.push(spec(
        "uclamp_max",
        0x44004000,
        Aggregation::Min,
        ResourceKind::Plain,
    ));
    v.push(spec(
        "swappiness",
        0x48800000,
        Aggregation::Newest,
        ResourceKind::Plain,
    ));
    v.push(spec(
        "rate_limit_us",
        0x48004000,
        Aggregation::Oldest,
        ResourceKind::Plain,
    ));
    let mut sys = spec(
        "dma_latency",
        0x49800000,
        Aggregation::Min,
        ResourceKind::HoldFd,
    );
    sys.permission = Permission::System;
    v.push(sys);
    v
}

/// `n` resources: pairs and plain floors/ceilings, for the benchmark.
pub fn wide_target(n: usize) -> Vec<ResourceSpec> {
    let mut v = Vec::new();
    let mut i = 0u32;
    while v.len() < n {
        if v.len() + 2 <= n && i % 3 == 0 {
            v.extend(freq_pair(
                &format!("c{i}"),
                0x44008000 | (i << 4),
                0x4400C000 | (i << 4),
            ));
        } else {
            let agg = if i % 2 == 0 {
                Aggregation::Max
            } else {
                Aggregation::Min
            };
            v.push(spec(
                &format!("r{i}"),
                0x48000000 | (i << 4),
                agg,
                ResourceKind::Plain,
            ));
        }
        i += 1;
    }
    v
}

/// Original node values: pairs start wide open (table min, table max),
/// plain nodes somewhere in the middle.
pub fn originals(specs: &[ResourceSpec]) -> Vec<i64> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| match s.kind {
            ResourceKind::PairMin { .. } => s.low,
            ResourceKind::PairMax { .. } => s.high,
            _ => 100 + i as i64,
        })
        .collect()
}

/// A model of the kernel nodes behind an engine: it applies plans and
/// refuses (EINVAL) any single write that would leave a pair with min > max.
pub struct KernelModel {
    pub nodes: Vec<i64>,
    pub originals: Vec<i64>,
    pairs: HashMap<usize, (usize, bool)>,
    pub writes: usize,
}

impl KernelModel {
    /// A model holding `originals`, and an engine told about them.
    pub fn new(specs: Vec<ResourceSpec>) -> (KernelModel, Engine) {
        let originals = originals(&specs);
        let mut engine = Engine::new(specs).expect("valid specs");
        let mut pairs = HashMap::new();
        for (i, s) in engine.specs().enumerate() {
            if let Some(p) = s.partner() {
                let pi = engine.index_of(p).expect("partner exists");
                pairs.insert(i, (pi, matches!(s.kind, ResourceKind::PairMin { .. })));
            }
        }
        for (i, &o) in originals.iter().enumerate() {
            engine.set_original(i, Some(o));
        }
        let model = KernelModel {
            nodes: originals.clone(),
            originals,
            pairs,
            writes: 0,
        };
        (model, engine)
    }

    /// Apply a plan write by write; `Err` names the write the kernel refused.
    pub fn apply(&mut self, plan: &Plan) -> Result<(), String> {
        for w in &plan.writes {
            let value = match w.action {
                Action::Set(v) => v,
                Action::Restore => self.originals[w.resource],
            };
            if let Some(&(partner, is_min)) = self.pairs.get(&w.resource) {
                let other = self.nodes[partner];
                let ok = if is_min {
                    value <= other
                } else {
                    other <= value
                };
                if !ok {
                    return Err(format!(
                        "EINVAL: write {value} to resource {} would break min <= max (partner holds {other}); plan {plan:?}",
                        w.resource
                    ));
                }
            }
            self.nodes[w.resource] = value;
            self.writes += 1;
        }
        Ok(())
    }
}
