//! The JSON document of a URM reply: what a client of URM's API
//! (`libUrmClient.so`) needs from a daemon started with `--urm DIR`.
//!
//! ```text
//! {"codes":[{"code":16711680,"opcode":1338114048,"per":"none","factor":1,"range":[0,1024]},
//!           {"code":16711690,"opcode":1338113536,"per":"cluster","factor":1}],
//!  "clusters":[{"id":0,"cpus":[0,1,2,3]},{"id":1,"cpus":[4,5,6]}],
//!  "properties":{"resource_tuner.pulse.duration":"60000000"}}
//! ```
//!
//! A URM resource code is `ResType << 16 | ResID` (`code`), its Lever
//! base opcode `opcode`; `per` says which bits of the opcode URM's
//! `ResInfo` fills (`docs/opcodes.md`): a `cluster` resource takes the
//! logical cluster of `ResInfo` bits 15..8 as the cluster id (the import
//! gives each cluster its URM `ClusterMap` id), a `cpu` resource the
//! CPU that `ResInfo` bits 7..0 name within that cluster (1-based, the
//! cluster's `cpus` in order). `factor` is URM's `Unit` factor: the
//! value a URM client gives is multiplied by it; `range` URM's
//! thresholds (times the factor), present when both are declared. `properties` are URM's
//! `PropertiesConfig.yaml` values (later layers replace earlier ones).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a URM resource's `ResInfo` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UrmPer {
    /// A global resource: `ResInfo` is not used.
    None,
    /// One instance per cluster: `ResInfo` bits 15..8.
    Cluster,
    /// One instance per CPU: `ResInfo` bits 15..8 and 7..0.
    Cpu,
    /// One instance per cgroup of URM's `CgroupsInfo`: the request's
    /// `Values[0]` is the cgroup ID (the entry's `cgroup`), the rest the
    /// value.
    Cgroup,
}

/// One URM resource code the daemon's target carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrmCode {
    /// URM's code, `ResType << 16 | ResID`.
    pub code: u32,
    /// The Lever base opcode (cluster and CPU bits zero).
    pub opcode: u32,
    /// What `ResInfo` selects.
    pub per: UrmPer,
    /// URM's `Unit` factor (1 for most; KB 1024, KHz 1000, …).
    pub factor: i64,
    /// URM's `LowThreshold` and `HighThreshold` times `factor`, when both
    /// are given: URM drops a request with a value outside them (Lever's
    /// daemon would clamp it, so URM's client API checks first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(i64, i64)>,
    /// For `per: cgroup`, the cgroup ID this entry is for (one entry per
    /// cgroup, all with the same `code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<u32>,
    /// The value is a set of CPUs (`cpuset.cpus`): the request's values
    /// (after a cgroup ID) are CPU numbers, sent as a bit mask.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cpus: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One cluster of the daemon's target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrmCluster {
    /// The cluster id: URM's logical cluster (`ClusterMap` `Id`).
    pub id: u32,
    /// Its CPUs, ascending (URM's core 1 is the first).
    pub cpus: Vec<u32>,
}

/// The URM view of a daemon started from a URM directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrmView {
    /// Every imported resource code.
    pub codes: Vec<UrmCode>,
    /// The target's clusters.
    pub clusters: Vec<UrmCluster>,
    /// `PropertiesConfig.yaml`'s `Name: Value` pairs.
    pub properties: BTreeMap<String, String>,
}

impl UrmView {
    /// The entry of URM resource `code`.
    pub fn code(&self, code: u32) -> Option<&UrmCode> {
        self.codes.iter().find(|c| c.code == code)
    }

    /// The Lever opcode and value of one URM `SysResource`: code
    /// `code`, `ResInfo` `res_info`, `Values` `values`; or why URM's
    /// server would drop it.
    ///
    /// A cgroup resource takes the cgroup ID first, then its value (or,
    /// for a set of CPUs, the CPUs); any other resource takes exactly one
    /// value (a node holds one). The value is multiplied by the `Unit`
    /// factor and checked against the thresholds, as URM's verifier does
    /// (Lever's daemon would clamp it instead).
    pub fn pair(&self, code: u32, res_info: u32, values: &[i32]) -> Result<(u32, i64), String> {
        let (entry, opcode, values) = match self.code(code) {
            Some(c) if c.per == UrmPer::Cgroup => {
                let Some((&id, rest)) = values.split_first() else {
                    return Err(format!(
                        "URM resource 0x{code:08X} is a cgroup resource: its values are [CGROUP_ID, VALUE...], and none were given"
                    ));
                };
                let entry = self
                    .codes
                    .iter()
                    .find(|c| c.code == code && c.cgroup.is_some_and(|g| i64::from(g) == i64::from(id)))
                    .ok_or_else(|| {
                        let ids: Vec<String> = self
                            .codes
                            .iter()
                            .filter(|c| c.code == code)
                            .filter_map(|c| c.cgroup.map(|g| g.to_string()))
                            .collect();
                        format!(
                            "URM resource 0x{code:08X}: cgroup ID {id} is not one of InitConfig's CgroupsInfo that exist on this board ({})",
                            if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
                        )
                    })?;
                (entry, entry.opcode, rest)
            }
            _ => {
                let (opcode, _) = self.opcode(code, res_info)?;
                (self.code(code).expect("opcode found it"), opcode, values)
            }
        };
        let value = if entry.cpus {
            let board: Vec<u32> = self
                .clusters
                .iter()
                .flat_map(|k| k.cpus.iter().copied())
                .collect();
            let mut mask = 0i64;
            for &cpu in values {
                if !(0..63).contains(&cpu) || (!board.is_empty() && !board.contains(&(cpu as u32)))
                {
                    return Err(format!(
                        "URM resource 0x{code:08X}: CPU {cpu} is not on this board"
                    ));
                }
                mask |= 1 << cpu;
            }
            if mask == 0 {
                return Err(format!(
                    "URM resource 0x{code:08X} takes the CPUs to run on; none were given"
                ));
            }
            mask
        } else {
            let [value] = values[..] else {
                return Err(format!(
                    "URM resource 0x{code:08X} was given {} values{}; it takes one",
                    values.len(),
                    if entry.per == UrmPer::Cgroup {
                        " after the cgroup ID"
                    } else {
                        ""
                    }
                ));
            };
            i64::from(value) * entry.factor
        };
        if let Some((low, high)) = entry.range {
            if !(low..=high).contains(&value) {
                return Err(format!(
                    "value {value} of URM resource 0x{code:08X} is outside its thresholds {low}..={high} (URM drops such a request)"
                ));
            }
        }
        Ok((opcode, value))
    }

    /// The opcode of URM resource `code` with `res_info` (bits 15..8 the
    /// logical cluster, 7..0 the core within it from 1), or why there is
    /// none. The value factor comes with it.
    pub fn opcode(&self, code: u32, res_info: u32) -> Result<(u32, i64), String> {
        let c =
            self.codes.iter().find(|c| c.code == code).ok_or_else(|| {
                format!("URM resource 0x{code:08X} is not in the daemon's target")
            })?;
        let cluster = (res_info >> 8) & 0xFF;
        let core = res_info & 0xFF;
        let find_cluster = || {
            self.clusters
                .iter()
                .find(|k| k.id == cluster)
                .ok_or_else(|| {
                    format!(
                        "ResInfo 0x{res_info:X}: logical cluster {cluster} is not on this board"
                    )
                })
        };
        let opcode = match c.per {
            UrmPer::None => c.opcode,
            UrmPer::Cgroup => {
                return Err(format!(
                    "URM resource 0x{code:08X} is a cgroup resource: its Values[0] names the cgroup"
                ))
            }
            UrmPer::Cluster => {
                find_cluster()?;
                c.opcode | cluster << 8
            }
            UrmPer::Cpu => {
                let k = find_cluster()?;
                if core == 0 {
                    return Err(format!(
                        "ResInfo 0x{res_info:X}: resource 0x{code:08X} is per core and core 0 names none (cores count from 1)"
                    ));
                }
                let cpu = k.cpus.get(core as usize - 1).ok_or_else(|| {
                    format!(
                        "ResInfo 0x{res_info:X}: cluster {cluster} has {} cores, not {core}",
                        k.cpus.len()
                    )
                })?;
                c.opcode | cpu << 4
            }
        };
        Ok((opcode, c.factor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> UrmView {
        UrmView {
            codes: vec![
                UrmCode {
                    code: 0x00FF_0000,
                    opcode: 0x4FC0_0000,
                    per: UrmPer::None,
                    factor: 1,
                    range: Some((0, 1024)),
                    cgroup: None,
                    cpus: false,
                },
                UrmCode {
                    code: 0x00FF_000A,
                    opcode: 0x4FC2_0000,
                    per: UrmPer::Cluster,
                    factor: 1,
                    range: None,
                    cgroup: None,
                    cpus: false,
                },
                UrmCode {
                    code: 0x00FF_0005,
                    opcode: 0x4FC1_4000,
                    per: UrmPer::Cpu,
                    factor: 1000,
                    range: None,
                    cgroup: None,
                    cpus: false,
                },
            ],
            clusters: vec![
                UrmCluster {
                    id: 0,
                    cpus: vec![0, 1, 2, 3],
                },
                UrmCluster {
                    id: 1,
                    cpus: vec![4, 5, 6],
                },
            ],
            properties: BTreeMap::from([("a.b".to_string(), "60".to_string())]),
        }
    }

    #[test]
    fn res_info_selects_cluster_and_core() {
        let v = view();
        assert_eq!(v.opcode(0x00FF_0000, 0x205), Ok((0x4FC0_0000, 1)));
        assert_eq!(v.opcode(0x00FF_000A, 0x100), Ok((0x4FC2_0100, 1)));
        // Cluster 1, core 2: CPU 5.
        assert_eq!(v.opcode(0x00FF_0005, 0x102), Ok((0x4FC1_4050, 1000)));
        let e = v.opcode(0x00FF_0005, 0x104).unwrap_err();
        assert!(e.contains("cluster 1 has 3 cores, not 4"), "{e}");
        let e = v.opcode(0x00FF_0005, 0x100).unwrap_err();
        assert!(e.contains("core 0 names none"), "{e}");
        let e = v.opcode(0x00FF_000A, 0x800).unwrap_err();
        assert!(e.contains("logical cluster 8 is not on this board"), "{e}");
        let e = v.opcode(0x0009_0007, 0).unwrap_err();
        assert!(
            e.contains("0x00090007 is not in the daemon's target"),
            "{e}"
        );
    }

    fn with_cgroups() -> UrmView {
        let mut v = view();
        for (g, opcode) in [(801, 0x4FC0_C000), (802, 0x4FC1_0000)] {
            v.codes.push(UrmCode {
                code: 0x0009_0007,
                opcode,
                per: UrmPer::Cgroup,
                factor: 1,
                range: None,
                cgroup: Some(g),
                cpus: false,
            });
        }
        v.codes.push(UrmCode {
            code: 0x0009_0002,
            opcode: 0x4FC1_4000,
            per: UrmPer::Cgroup,
            factor: 1,
            range: None,
            cgroup: Some(802),
            cpus: true,
        });
        v.codes.push(UrmCode {
            code: 0x0009_000B,
            opcode: 0x4FC1_8000,
            per: UrmPer::Cgroup,
            factor: 1024,
            range: None,
            cgroup: Some(802),
            cpus: false,
        });
        v
    }

    #[test]
    fn a_cgroup_resource_takes_the_cgroup_id_first() {
        let v = with_cgroups();
        assert_eq!(v.pair(0x0009_0007, 0, &[802, 52]), Ok((0x4FC1_0000, 52)));
        assert_eq!(v.pair(0x0009_0007, 0, &[801, 55]), Ok((0x4FC0_C000, 55)));
        // URM's KB unit: the value times 1024.
        assert_eq!(
            v.pair(0x0009_000B, 0, &[802, 950]),
            Ok((0x4FC1_8000, 950 * 1024))
        );
        // CPUs 0, 1 and 3 as a mask.
        assert_eq!(
            v.pair(0x0009_0002, 0, &[802, 0, 1, 3]),
            Ok((0x4FC1_4000, 0b1011))
        );
        let e = v.pair(0x0009_0002, 0, &[802, 0, 9]).unwrap_err();
        assert!(e.contains("CPU 9 is not on this board"), "{e}");
        let e = v.pair(0x0009_0007, 0, &[803, 52]).unwrap_err();
        assert!(
            e.contains("cgroup ID 803 is not one of") && e.contains("801, 802"),
            "{e}"
        );
        let e = v.pair(0x0009_0007, 0, &[]).unwrap_err();
        assert!(e.contains("[CGROUP_ID, VALUE...]"), "{e}");
        let e = v.pair(0x0009_0007, 0, &[802, 1, 2]).unwrap_err();
        assert!(e.contains("2 values after the cgroup ID"), "{e}");
        let e = v.opcode(0x0009_0007, 0).unwrap_err();
        assert!(e.contains("Values[0] names the cgroup"), "{e}");
        // Other resources: one value, thresholds checked.
        assert_eq!(v.pair(0x00FF_0005, 0x102, &[7]), Ok((0x4FC1_4050, 7000)));
        let e = v.pair(0x00FF_0000, 0, &[2000]).unwrap_err();
        assert!(e.contains("outside its thresholds 0..=1024"), "{e}");
        let e = v.pair(0x00FF_0000, 0, &[1, 2]).unwrap_err();
        assert!(e.contains("was given 2 values; it takes one"), "{e}");
        let text = serde_json::to_string(&v).unwrap();
        assert!(
            text.contains(r#""per":"cgroup""#) && text.contains(r#""cpus":true"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<UrmView>(&text).unwrap(), v);
    }

    #[test]
    fn json_round_trip() {
        let v = view();
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.contains(r#""per":"cluster""#), "{text}");
        assert!(text.contains(r#""range":[0,1024]"#), "{text}");
        assert_eq!(text.matches("range").count(), 1, "{text}");
        assert_eq!(v.code(0x00FF_0000).and_then(|c| c.range), Some((0, 1024)));
        assert_eq!(serde_json::from_str::<UrmView>(&text).unwrap(), v);
    }
}
