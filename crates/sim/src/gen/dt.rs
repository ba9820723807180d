//! The SoC part of the device tree: `/sys/firmware/devicetree/base` as
//! the kernel exposes it (a directory per node, a file per property
//! holding the property's raw bytes, and a `name` file in every node, as
//! `populate_properties()` adds it), written from a real DTB of the
//! board's SoC family read with `lever-dt`'s parser.
//!
//! Written is what Lever reads, taken from the DTB byte for byte:
//!
//! - `/cpus`, whole (CPU nodes, caches, `cpu-map`, idle states), without
//!   the CPUs the part lacks ([`SocTree::absent_cpus`]) and the `cpu-map`
//!   cores naming them;
//! - every OPP table a CPU or a bandwidth monitor points at with
//!   `operating-points-v2`, whole, and the tables their OPPs'
//!   `required-opps` reach;
//! - every interconnect provider their `interconnects` name (the
//!   provider's own properties);
//! - the bandwidth monitors (`compatible` containing `bwmon`), whole;
//! - the nodes using the board's carveouts ([`SocTree::region_users`],
//!   their own properties, their OPP tables and interconnect providers),
//!   with `memory-region` pointing at the board's
//!   `/reserved-memory` regions (written by `mem.rs` with the phandles
//!   [`carveout_phandle`] gives);
//! - the ancestors of all these with their own properties (`/soc@0`'s
//!   cell counts and `ranges`);
//! - `__symbols__` for the labels the board data gives.
//!
//! The root's properties, `/memory` and `/reserved-memory` are the board's
//! (`procfs.rs`, `mem.rs`), not the DTB's. Phandles in the written nodes
//! that point at nodes left out (clocks, power domains, interrupt
//! controllers) stay as the DTB has them: Lever follows only the ones
//! above.

use std::collections::BTreeSet;

use lever_dt::tree::{NodeId, Tree as DtTree};

use crate::model::{Board, SocTree};
use crate::tree::Tree;
use crate::SimError;

/// Where the live tree sits.
pub(crate) const BASE: &str = "/sys/firmware/devicetree/base";

/// Phandles of the board's carveouts start here: above any phandle `dtc`
/// gives a tree of the size of the SoC DTBs (sc7280-idp's highest is
/// 0x143), checked when the tree is written.
const CARVEOUT_PHANDLE_BASE: u32 = 0x1000;

/// The phandle of the board's carveout number `index` (in
/// `Memory::carveouts` order).
pub(crate) fn carveout_phandle(index: usize) -> u32 {
    CARVEOUT_PHANDLE_BASE + index as u32
}

/// Write the SoC part of `board`'s device tree and `__symbols__`.
pub(crate) fn write(board: &Board, tree: &mut Tree) -> Result<(), SimError> {
    let Some(soc) = &board.device_tree else {
        return Ok(());
    };
    let fail = |message: String| SimError::DeviceTree {
        source_dtb: soc.source,
        message,
    };
    let bytes = soc
        .dtb()
        .map_err(|e| fail(format!("decompressing it: {e}")))?;
    let dt = lever_dt::fdt::parse(&bytes).map_err(|e| fail(e.to_string()))?;
    let max_phandle = dt
        .nodes()
        .filter_map(|(id, _)| dt.u32(id, "phandle").ok().flatten())
        .max()
        .unwrap_or(0);
    if max_phandle >= CARVEOUT_PHANDLE_BASE {
        return Err(fail(format!(
            "phandle {max_phandle:#x} collides with the carveouts' from {CARVEOUT_PHANDLE_BASE:#x}"
        )));
    }
    let sel = select(&dt, soc).map_err(fail)?;
    for (id, node) in dt.nodes() {
        if id == dt.root() || !sel.written.contains(&id) {
            continue;
        }
        let dir = format!("{BASE}{}", node.path);
        let base_name = node.name.split('@').next().unwrap_or(&node.name);
        tree.bytes(&format!("{dir}/name"), &nul(base_name))?;
        let users = soc.region_users.iter().find(|(p, _)| *p == node.path);
        for p in &node.properties {
            if p.name == "name" {
                continue;
            }
            let path = format!("{dir}/{}", p.name);
            match users {
                Some((_, regions)) if p.name == "memory-region" => {
                    let mut value = Vec::new();
                    for r in *regions {
                        let index = board
                            .memory
                            .carveouts
                            .iter()
                            .position(|c| c.name == *r)
                            .ok_or_else(|| {
                                fail(format!("{}: no carveout {r} on the board", node.path))
                            })?;
                        value.extend_from_slice(&carveout_phandle(index).to_be_bytes());
                    }
                    tree.bytes(&path, &value)?;
                }
                _ => tree.bytes(&path, &p.value)?,
            }
        }
    }
    // __symbols__: label = the node's path, NUL-terminated.
    let mut symbols: Vec<(&str, String)> = soc
        .labels
        .iter()
        .filter(|(_, path)| dt.find(path).is_some_and(|id| sel.written.contains(&id)))
        .map(|(label, path)| (*label, (*path).to_string()))
        .collect();
    for c in board.memory.carveouts {
        symbols.push((c.label, format!("/reserved-memory/{}", c.name)));
    }
    if !symbols.is_empty() {
        tree.bytes(&format!("{BASE}/__symbols__/name"), &nul("__symbols__"))?;
        for (label, path) in symbols {
            tree.bytes(&format!("{BASE}/__symbols__/{label}"), &nul(&path))?;
        }
    }
    Ok(())
}

fn nul(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

/// The nodes to write.
struct Selection {
    written: BTreeSet<NodeId>,
}

fn select(dt: &DtTree, soc: &SocTree) -> Result<Selection, String> {
    let mut absent = BTreeSet::new();
    for p in soc.absent_cpus {
        absent.insert(dt.find(p).ok_or_else(|| format!("no node {p}"))?);
    }
    let absent_phandles: BTreeSet<u32> = absent
        .iter()
        .filter_map(|&id| dt.u32(id, "phandle").ok().flatten())
        .collect();
    // Nodes written with all their descendants, and with their own
    // properties only.
    let mut whole: BTreeSet<NodeId> = BTreeSet::new();
    let mut own: BTreeSet<NodeId> = BTreeSet::new();
    let mut consumers: Vec<NodeId> = Vec::new();
    if let Some(cpus) = dt.find("/cpus") {
        whole.insert(cpus);
        consumers.extend(
            dt.node(cpus)
                .children
                .iter()
                .copied()
                .filter(|c| !absent.contains(c)),
        );
    }
    for (id, _) in dt.nodes() {
        if dt.compatible_matches(id, |c| c.contains("bwmon")) {
            whole.insert(id);
            consumers.push(id);
        }
    }
    for (path, _) in soc.region_users {
        let id = dt.find(path).ok_or_else(|| format!("no node {path}"))?;
        own.insert(id);
        // Its OPP table and interconnect providers too (the video codec's).
        consumers.push(id);
    }
    let err = |e: lever_dt::DtError| e.to_string();
    let mut tables: Vec<NodeId> = Vec::new();
    for &c in &consumers {
        if let Some(cells) = dt.cells(c, "operating-points-v2").map_err(err)? {
            for ph in cells {
                tables.push(dt.resolve(c, "operating-points-v2", ph).map_err(err)?);
            }
        }
        // interconnects: <&provider arg... &provider arg...>, each
        // specifier the provider's #interconnect-cells long.
        if let Some(cells) = dt.cells(c, "interconnects").map_err(err)? {
            let mut i = 0;
            while i < cells.len() {
                let provider = dt.resolve(c, "interconnects", cells[i]).map_err(err)?;
                own.insert(provider);
                let n = dt
                    .u32(provider, "#interconnect-cells")
                    .map_err(err)?
                    .unwrap_or(0) as usize;
                i += 1 + n;
            }
        }
    }
    while let Some(table) = tables.pop() {
        if !whole.insert(table) {
            continue;
        }
        for &opp in &dt.node(table).children {
            for r in dt.phandle_list(opp, "required-opps").map_err(err)? {
                if let Some(parent) = dt.node(r).parent {
                    tables.push(parent);
                }
            }
        }
    }
    let mut written = BTreeSet::new();
    for &w in &whole {
        let mut stack = vec![w];
        while let Some(id) = stack.pop() {
            if absent.contains(&id) {
                continue;
            }
            // A cpu-map core naming a CPU the part lacks.
            if dt
                .u32(id, "cpu")
                .ok()
                .flatten()
                .is_some_and(|ph| absent_phandles.contains(&ph))
            {
                continue;
            }
            written.insert(id);
            stack.extend(dt.node(id).children.iter().copied());
        }
    }
    written.extend(own.iter().copied());
    // Every ancestor, with its own properties.
    let mut ancestors = Vec::new();
    for &id in &written {
        let mut p = dt.node(id).parent;
        while let Some(a) = p {
            ancestors.push(a);
            p = dt.node(a).parent;
        }
    }
    written.extend(ancestors);
    Ok(Selection { written })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boards;

    #[test]
    fn the_compressed_tree_is_debians_file_byte_for_byte() {
        for b in boards::ALL {
            if let Some(soc) = &b.device_tree {
                assert_eq!(
                    soc.dtb().unwrap(),
                    include_bytes!("../../data/sc7280-idp.dtb"),
                    "{}: zstd -d of data/sc7280-idp.dtb.zst",
                    b.name
                );
            }
        }
    }

    #[test]
    fn the_selection_holds_what_lever_reads_and_leaves_out_absent_cpus() {
        let fp1 = boards::ALL
            .iter()
            .find(|b| b.name == "qcs5430-fp1")
            .unwrap();
        let soc = fp1.device_tree.as_ref().unwrap();
        let bytes = soc.dtb().unwrap();
        let dt = lever_dt::fdt::parse(&bytes).unwrap();
        let sel = select(&dt, soc).unwrap();
        let has = |p: &str| sel.written.contains(&dt.find(p).unwrap());
        assert!(has("/opp-table-cpu0") && has("/opp-table-cpu4"));
        assert!(!has("/opp-table-cpu7"), "only cpu@700 used the Prime table");
        assert!(!has("/cpus/cpu@600") && !has("/cpus/cpu-map/cluster0/core6"));
        assert!(has("/cpus/cpu@500") && has("/cpus/cpu-map/cluster0/core5"));
        assert!(has("/soc@0/interconnect@18590000") && has("/soc@0/pmu@9091000/opp-table"));
        assert!(has("/soc@0/remoteproc@4080000") && !has("/soc@0/remoteproc@4080000/glink-edge"));
        assert!(!has("/reserved-memory") && !has("/soc@0/wifi@17a10040"));
    }
}
