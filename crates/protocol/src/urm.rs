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
                },
                UrmCode {
                    code: 0x00FF_000A,
                    opcode: 0x4FC2_0000,
                    per: UrmPer::Cluster,
                    factor: 1,
                    range: None,
                },
                UrmCode {
                    code: 0x00FF_0005,
                    opcode: 0x4FC1_4000,
                    per: UrmPer::Cpu,
                    factor: 1000,
                    range: None,
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
