//! OPP / DVFS maps (seed 000 §6.3): per CPU cluster — the CPUs whose
//! `operating-points-v2` points at one table — the CPU frequencies with
//! their interconnect votes, and the bandwidth monitors' (bwmon) tables.
//!
//! A vote in `opp-peak-kBps` becomes a frequency by the seed's formula:
//! kBps / w = kHz, w being the bytes the target moves per clock —
//! w = 32 for the L3, 16 for LLCC, 4 for dual-channel DDR (the tables
//! give per-channel DDR values). The seed's example, sc7280's 300 MHz CPU
//! row, is `opp-peak-kBps = <800000 9600000>`: DDR 800000 / 4 = 200000 kHz
//! = 200 MHz, L3 9600000 / 32 = 300000 kHz = 300 MHz.
//!
//! Which vote is which comes from the CPU's `interconnects`: one path per
//! (source, destination) pair of specifiers, each specifier a provider
//! phandle and that provider's `#interconnect-cells` arguments; the
//! destination provider says what the path reaches (`*-mc-virt`: DDR,
//! `*-epss-l3`/`*-osm-l3`: L3, `*-gem-noc`: LLCC).

use crate::error::{DtError, Result};
use crate::tree::{NodeId, Tree};
use serde::Serialize;

/// What an interconnect path reaches, for the vote → frequency formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    /// DDR (the memory controller, `*-mc-virt`).
    Ddr,
    /// The last-level cache controller (`*-gem-noc` as destination).
    Llcc,
    /// The CPU L3 cache (`*-epss-l3`, `*-osm-l3`).
    L3,
    /// Anything else: shown as kBps only.
    Other,
}

impl PathKind {
    /// Short upper-case name (`DDR`, `LLCC`, `L3`, `other`).
    pub fn label(self) -> &'static str {
        match self {
            PathKind::Ddr => "DDR",
            PathKind::Llcc => "LLCC",
            PathKind::L3 => "L3",
            PathKind::Other => "other",
        }
    }
}

/// Bytes per clock (w) of each target, by which a kBps vote is divided to
/// give kHz. [`Widths::SEED`] holds seed 000 §6.3's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Widths {
    /// DDR: 4 (dual channel, two transfers per clock, 2 bytes each).
    pub ddr_bytes: u32,
    /// LLCC: 16.
    pub llcc_bytes: u32,
    /// L3: 32 (one 32-byte transaction per clock).
    pub l3_bytes: u32,
}

impl Widths {
    /// Seed 000 §6.3's widths (QCS6490 / sc7280): DDR 4, LLCC 16, L3 32.
    pub const SEED: Widths = Widths {
        ddr_bytes: 4,
        llcc_bytes: 16,
        l3_bytes: 32,
    };

    /// The widths for a SoC, by its root `compatible`. Every Qualcomm SoC
    /// read so far uses the seed's; another SoC's differing widths go here.
    pub fn for_soc(_compatible: &[String]) -> Widths {
        Widths::SEED
    }

    /// w for a path kind (`None` for [`PathKind::Other`]).
    pub fn of(&self, kind: PathKind) -> Option<u32> {
        match kind {
            PathKind::Ddr => Some(self.ddr_bytes),
            PathKind::Llcc => Some(self.llcc_bytes),
            PathKind::L3 => Some(self.l3_bytes),
            PathKind::Other => None,
        }
    }

    /// Replace the width of one kind (`ddr`, `llcc`, `l3`).
    pub fn set(&mut self, kind: &str, bytes: u32) -> std::result::Result<(), String> {
        if bytes == 0 {
            return Err(format!("width of {kind} must be more than 0 bytes"));
        }
        match kind.to_ascii_lowercase().as_str() {
            "ddr" => self.ddr_bytes = bytes,
            "llcc" => self.llcc_bytes = bytes,
            "l3" => self.l3_bytes = bytes,
            other => return Err(format!("unknown target {other:?} (ddr, llcc or l3)")),
        }
        Ok(())
    }
}

/// One interconnect path of a consumer (a CPU or a bwmon).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IcPath {
    /// `interconnect-names` entry, else the kind's name.
    pub name: String,
    /// What the path reaches.
    pub kind: PathKind,
    /// Source provider node path and its arguments (`/soc@0/interconnect@9100000 2 3`).
    pub source: String,
    /// Destination provider node path and its arguments.
    pub destination: String,
    /// w applied to its votes (`None`: shown as kBps only).
    pub width_bytes: Option<u32>,
}

/// One vote of an OPP on one interconnect path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vote {
    /// The path's name (see [`IcPath::name`]).
    pub path: String,
    /// `opp-peak-kBps` value.
    pub peak_kbps: Option<u32>,
    /// `opp-avg-kBps` value.
    pub avg_kbps: Option<u32>,
    /// Implied frequency: peak / w, in kHz.
    pub implied_khz: Option<u64>,
}

/// One OPP (a row of a table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OppRow {
    /// The OPP node's path.
    pub node: String,
    /// `opp-hz` (the first clock's), in Hz.
    pub freq_hz: Option<u64>,
    /// `opp-level`.
    pub level: Option<u32>,
    /// `opp-microvolt`, as given.
    pub microvolt: Vec<u32>,
    /// `turbo-mode`: only used when boost is enabled.
    pub turbo: bool,
    /// `opp-suspend`: the OPP used during suspend.
    pub suspend: bool,
    /// `required-opps`: the OPPs of other tables this one needs (label or path).
    pub required_opps: Vec<String>,
    /// One vote per interconnect path.
    pub votes: Vec<Vote>,
}

/// A CPU node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuRef {
    /// Logical CPU number (cpu nodes in tree order, as Linux numbers them
    /// when the boot CPU comes first).
    pub cpu: usize,
    /// The node's path.
    pub node: String,
    /// Its `reg` (the MPIDR affinity value).
    pub reg: Option<u64>,
}

/// A cluster: the CPUs sharing one OPP table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cluster {
    /// The OPP table's path.
    pub table: String,
    /// Its labels (from `__symbols__`).
    pub labels: Vec<String>,
    /// `opp-shared`: the CPUs switch frequency together.
    pub opp_shared: bool,
    /// The CPUs using the table.
    pub cpus: Vec<CpuRef>,
    /// The first CPU's interconnect paths, in vote order.
    pub paths: Vec<IcPath>,
    /// The table's OPPs, in tree order.
    pub rows: Vec<OppRow>,
}

/// A bandwidth monitor and its table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bwmon {
    /// The monitor's node path.
    pub node: String,
    /// Its `compatible` strings.
    pub compatible: Vec<String>,
    /// Whether it is enabled (`status`).
    pub enabled: bool,
    /// Its OPP table's path.
    pub table: String,
    /// The path it votes on.
    pub paths: Vec<IcPath>,
    /// The table's levels.
    pub rows: Vec<OppRow>,
}

/// The DVFS maps of one tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DvfsReport {
    /// The widths used for implied frequencies.
    pub widths: Widths,
    /// Clusters in order of their first CPU.
    pub clusters: Vec<Cluster>,
    /// Bandwidth monitors in tree order.
    pub bwmons: Vec<Bwmon>,
    /// CPU nodes without an `operating-points-v2` table.
    pub cpus_without_table: Vec<String>,
}

/// The CPU nodes (`/cpus/cpu@…` with `device_type = "cpu"`), in tree order.
pub fn cpu_nodes(tree: &Tree) -> Vec<NodeId> {
    let Some(cpus) = tree.find("/cpus") else {
        return Vec::new();
    };
    tree.node(cpus)
        .children
        .iter()
        .copied()
        .filter(|&c| tree.string(c, "device_type").as_deref() == Some("cpu"))
        .collect()
}

/// Read the DVFS maps of `tree` with widths `widths`.
pub fn dvfs(tree: &Tree, widths: Widths) -> Result<DvfsReport> {
    let mut clusters: Vec<Cluster> = Vec::new();
    let mut cluster_of_table: Vec<(NodeId, usize)> = Vec::new();
    let mut cpus_without_table = Vec::new();
    for (index, cpu) in cpu_nodes(tree).into_iter().enumerate() {
        let cpu_ref = CpuRef {
            cpu: index,
            node: tree.path(cpu).to_string(),
            reg: tree.reg(cpu)?.and_then(|r| r.first().map(|(a, _)| *a)),
        };
        let Some(ph) = tree.cells(cpu, "operating-points-v2")? else {
            cpus_without_table.push(cpu_ref.node);
            continue;
        };
        let Some(&ph) = ph.first() else {
            cpus_without_table.push(cpu_ref.node);
            continue;
        };
        let table = tree.resolve(cpu, "operating-points-v2", ph)?;
        if let Some((_, i)) = cluster_of_table.iter().find(|(t, _)| *t == table) {
            clusters[*i].cpus.push(cpu_ref);
            continue;
        }
        let paths = interconnect_paths(tree, cpu, widths)?;
        let rows = opp_rows(tree, table, &paths, cpu)?;
        cluster_of_table.push((table, clusters.len()));
        clusters.push(Cluster {
            table: tree.path(table).to_string(),
            labels: tree.labels(table).to_vec(),
            opp_shared: tree.has(table, "opp-shared"),
            cpus: vec![cpu_ref],
            paths,
            rows,
        });
    }
    let mut bwmons = Vec::new();
    for (id, _) in tree.nodes() {
        if !tree.compatible_matches(id, |c| c.contains("bwmon")) {
            continue;
        }
        let Some(ph) = tree.cells(id, "operating-points-v2")? else {
            continue;
        };
        let Some(&ph) = ph.first() else { continue };
        let table = tree.resolve(id, "operating-points-v2", ph)?;
        let paths = interconnect_paths(tree, id, widths)?;
        let rows = opp_rows(tree, table, &paths, id)?;
        bwmons.push(Bwmon {
            node: tree.path(id).to_string(),
            compatible: tree.strings(id, "compatible"),
            enabled: tree.is_enabled(id),
            table: tree.path(table).to_string(),
            paths,
            rows,
        });
    }
    Ok(DvfsReport {
        widths,
        clusters,
        bwmons,
        cpus_without_table,
    })
}

/// A node's `interconnects` as paths.
pub fn interconnect_paths(tree: &Tree, id: NodeId, widths: Widths) -> Result<Vec<IcPath>> {
    let Some(cells) = tree.cells(id, "interconnects")? else {
        return Ok(Vec::new());
    };
    let names = tree.strings(id, "interconnect-names");
    // Each specifier: provider phandle + #interconnect-cells arguments.
    let mut specs: Vec<(NodeId, Vec<u32>)> = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        let provider = tree.resolve(id, "interconnects", cells[i])?;
        let n = tree
            .u32(provider, "#interconnect-cells")?
            .ok_or_else(|| DtError::BadProperty {
                path: tree.path(id).to_string(),
                property: "interconnects".into(),
                reason: format!(
                    "provider {} has no #interconnect-cells",
                    tree.path(provider)
                ),
            })? as usize;
        let args = cells
            .get(i + 1..i + 1 + n)
            .ok_or_else(|| DtError::CellMismatch {
                path: tree.path(id).to_string(),
                property: "interconnects".into(),
                len_bytes: cells.len() * 4,
                entry_cells: n + 1,
                why: format!(
                    " (phandle + #interconnect-cells {n} of {} at cell {i})",
                    tree.path(provider)
                ),
            })?;
        specs.push((provider, args.to_vec()));
        i += 1 + n;
    }
    if specs.len() % 2 != 0 {
        return Err(DtError::BadProperty {
            path: tree.path(id).to_string(),
            property: "interconnects".into(),
            reason: format!(
                "{} endpoint specifiers: a path needs two (source and destination)",
                specs.len()
            ),
        });
    }
    let describe = |(p, args): &(NodeId, Vec<u32>)| {
        let mut s = tree.path(*p).to_string();
        for a in args {
            s.push_str(&format!(" {a}"));
        }
        s
    };
    Ok(specs
        .chunks_exact(2)
        .enumerate()
        .map(|(n, pair)| {
            let kind = provider_kind(tree, pair[1].0);
            IcPath {
                name: names
                    .get(n)
                    .cloned()
                    .unwrap_or_else(|| kind.label().to_string()),
                kind,
                source: describe(&pair[0]),
                destination: describe(&pair[1]),
                width_bytes: widths.of(kind),
            }
        })
        .collect())
}

fn provider_kind(tree: &Tree, provider: NodeId) -> PathKind {
    let c = tree.strings(provider, "compatible");
    if c.iter().any(|c| c.ends_with("-mc-virt")) {
        PathKind::Ddr
    } else if c
        .iter()
        .any(|c| c.ends_with("-epss-l3") || c.ends_with("-osm-l3"))
    {
        PathKind::L3
    } else if c.iter().any(|c| c.ends_with("-gem-noc")) {
        PathKind::Llcc
    } else {
        PathKind::Other
    }
}

/// The OPPs of `table` with their votes on `paths` (the paths of
/// `consumer`, named in errors).
fn opp_rows(tree: &Tree, table: NodeId, paths: &[IcPath], consumer: NodeId) -> Result<Vec<OppRow>> {
    let mut rows = Vec::new();
    for &opp in &tree.node(table).children {
        if !tree.is_enabled(opp) {
            continue;
        }
        let hz = tree.cells(opp, "opp-hz")?;
        let peak = tree.cells(opp, "opp-peak-kBps")?;
        let avg = tree.cells(opp, "opp-avg-kBps")?;
        let level = tree.u32(opp, "opp-level")?;
        if hz.is_none() && peak.is_none() && level.is_none() {
            continue;
        }
        let freq_hz = match hz {
            None => None,
            Some(c) if c.len() >= 2 && c.len() % 2 == 0 => {
                Some((u64::from(c[0]) << 32) | u64::from(c[1]))
            }
            Some(c) => {
                return Err(DtError::CellMismatch {
                    path: tree.path(opp).to_string(),
                    property: "opp-hz".into(),
                    len_bytes: c.len() * 4,
                    entry_cells: 2,
                    why: " (one 64-bit value per clock)".into(),
                })
            }
        };
        let n_votes = peak.as_ref().map_or(0, Vec::len);
        for (prop, v) in [("opp-peak-kBps", &peak), ("opp-avg-kBps", &avg)] {
            if let Some(v) = v {
                if !paths.is_empty() && v.len() != paths.len() {
                    return Err(DtError::BadProperty {
                        path: tree.path(opp).to_string(),
                        property: prop.into(),
                        reason: format!(
                            "cell-count mismatch: {} values for the {} interconnect paths of {}",
                            v.len(),
                            paths.len(),
                            tree.path(consumer)
                        ),
                    });
                }
            }
        }
        let votes = (0..n_votes.max(avg.as_ref().map_or(0, Vec::len)))
            .map(|i| {
                let peak_kbps = peak.as_ref().and_then(|p| p.get(i).copied());
                let path = paths.get(i);
                Vote {
                    path: path.map_or_else(|| format!("vote {i}"), |p| p.name.clone()),
                    peak_kbps,
                    avg_kbps: avg.as_ref().and_then(|a| a.get(i).copied()),
                    implied_khz: peak_kbps
                        .zip(path.and_then(|p| p.width_bytes))
                        .map(|(k, w)| u64::from(k) / u64::from(w)),
                }
            })
            .collect();
        let required_opps = tree
            .phandle_list(opp, "required-opps")?
            .into_iter()
            .map(|r| {
                tree.labels(r)
                    .first()
                    .cloned()
                    .unwrap_or_else(|| tree.path(r).to_string())
            })
            .collect();
        rows.push(OppRow {
            node: tree.path(opp).to_string(),
            freq_hz,
            level,
            microvolt: tree.cells(opp, "opp-microvolt")?.unwrap_or_default(),
            turbo: tree.has(opp, "turbo-mode"),
            suspend: tree.has(opp, "opp-suspend"),
            required_opps,
            votes,
        });
    }
    Ok(rows)
}
