//! The device tree in memory: nodes with their full paths, properties as
//! raw bytes, and the lookups every analysis needs (path, phandle,
//! `#address-cells`/`#size-cells`, `reg`, labels from `__symbols__`).
//!
//! Values are kept exactly as the blob holds them (big-endian cells,
//! NUL-terminated strings); typed readers check lengths and return
//! [`DtError`]s naming the node path and the property.

use crate::error::{DtError, Result};
use std::collections::{BTreeMap, HashMap};

/// Index of a node in its [`Tree`].
pub type NodeId = usize;

/// One property: name and raw value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// Property name (`reg`, `opp-peak-kBps`).
    pub name: String,
    /// Raw value bytes (empty for a boolean property such as `no-map`).
    pub value: Vec<u8>,
}

/// One node.
#[derive(Debug, Clone)]
pub struct Node {
    /// Name with unit address (`memory@8b800000`); empty for the root.
    pub name: String,
    /// Full path (`/reserved-memory/memory@8b800000`; `/` for the root).
    pub path: String,
    /// Parent node, `None` for the root.
    pub parent: Option<NodeId>,
    /// Children in blob order.
    pub children: Vec<NodeId>,
    /// Properties in blob order.
    pub properties: Vec<Property>,
}

/// One entry of the DTB's memory reservation block (`/memreserve/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemReserve {
    /// Physical base address.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
}

/// A whole device tree.
#[derive(Debug, Clone)]
pub struct Tree {
    nodes: Vec<Node>,
    by_path: HashMap<String, NodeId>,
    by_phandle: HashMap<u32, NodeId>,
    labels: BTreeMap<String, Vec<String>>,
    /// The memory reservation block (empty for a live tree).
    pub mem_reserve: Vec<MemReserve>,
    /// `boot_cpuid_phys` from the DTB header (0 for a live tree).
    pub boot_cpuid_phys: u32,
}

/// Builds a [`Tree`] node by node (parents before children).
#[derive(Debug, Default)]
pub struct TreeBuilder {
    nodes: Vec<Node>,
}

impl TreeBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a node under `parent` (`None`: the root) and return its id.
    pub fn add_node(&mut self, parent: Option<NodeId>, name: &str) -> NodeId {
        let path = match parent {
            None => "/".to_string(),
            Some(p) if self.nodes[p].path == "/" => format!("/{name}"),
            Some(p) => format!("{}/{name}", self.nodes[p].path),
        };
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: name.to_string(),
            path,
            parent,
            children: Vec::new(),
            properties: Vec::new(),
        });
        if let Some(p) = parent {
            self.nodes[p].children.push(id);
        }
        id
    }

    /// The path of a node added so far.
    pub fn path(&self, id: NodeId) -> &str {
        &self.nodes[id].path
    }

    /// Add a property to `node`.
    pub fn add_property(&mut self, node: NodeId, name: &str, value: Vec<u8>) {
        self.nodes[node].properties.push(Property {
            name: name.to_string(),
            value,
        });
    }

    /// Finish: index paths, phandles and `__symbols__` labels.
    pub fn build(self, mem_reserve: Vec<MemReserve>, boot_cpuid_phys: u32) -> Tree {
        let mut tree = Tree {
            by_path: HashMap::new(),
            by_phandle: HashMap::new(),
            labels: BTreeMap::new(),
            nodes: self.nodes,
            mem_reserve,
            boot_cpuid_phys,
        };
        if tree.nodes.is_empty() {
            // Every tree has a root, even an empty structure block's.
            tree.nodes.push(Node {
                name: String::new(),
                path: "/".into(),
                parent: None,
                children: Vec::new(),
                properties: Vec::new(),
            });
        }
        for (id, n) in tree.nodes.iter().enumerate() {
            tree.by_path.entry(n.path.clone()).or_insert(id);
            for p in &n.properties {
                if (p.name == "phandle" || p.name == "linux,phandle") && p.value.len() == 4 {
                    let ph = be32(&p.value);
                    if ph != 0 && ph != u32::MAX {
                        tree.by_phandle.entry(ph).or_insert(id);
                    }
                }
            }
        }
        if let Some(sym) = tree.find("/__symbols__") {
            let mut labels: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for p in &tree.nodes[sym].properties {
                if let Some(target) = c_string(&p.value) {
                    labels.entry(target).or_default().push(p.name.clone());
                }
            }
            tree.labels = labels;
        }
        tree
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// A single NUL-terminated string value without the NUL.
fn c_string(v: &[u8]) -> Option<String> {
    let s = v.strip_suffix(&[0])?;
    if s.contains(&0) {
        return None;
    }
    String::from_utf8(s.to_vec()).ok()
}

impl Tree {
    /// The root node.
    pub fn root(&self) -> NodeId {
        0
    }

    /// A node.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// Every node, in blob order (the root first).
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate()
    }

    /// The node at a full path (`/reserved-memory`).
    pub fn find(&self, path: &str) -> Option<NodeId> {
        self.by_path.get(path).copied()
    }

    /// The path of a node.
    pub fn path(&self, id: NodeId) -> &str {
        &self.nodes[id].path
    }

    /// The labels `__symbols__` gives the node at `id` (empty without it).
    pub fn labels(&self, id: NodeId) -> &[String] {
        self.labels
            .get(&self.nodes[id].path)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Whether the tree has a `__symbols__` node (compiled with `dtc -@`).
    pub fn has_symbols(&self) -> bool {
        self.find("/__symbols__").is_some()
    }

    /// The raw value of a property, `None` when absent.
    pub fn prop(&self, id: NodeId, name: &str) -> Option<&[u8]> {
        self.nodes[id]
            .properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.as_slice())
    }

    /// Whether a property is present (boolean properties like `no-map`).
    pub fn has(&self, id: NodeId, name: &str) -> bool {
        self.prop(id, name).is_some()
    }

    /// A property as 32-bit cells; a length not a multiple of 4 is a
    /// [`DtError::CellMismatch`].
    pub fn cells(&self, id: NodeId, name: &str) -> Result<Option<Vec<u32>>> {
        let Some(v) = self.prop(id, name) else {
            return Ok(None);
        };
        if v.len() % 4 != 0 {
            return Err(DtError::CellMismatch {
                path: self.path(id).to_string(),
                property: name.to_string(),
                len_bytes: v.len(),
                entry_cells: 1,
                why: String::new(),
            });
        }
        Ok(Some(v.chunks_exact(4).map(be32).collect()))
    }

    /// A property that must be one 32-bit cell.
    pub fn u32(&self, id: NodeId, name: &str) -> Result<Option<u32>> {
        match self.cells(id, name)? {
            None => Ok(None),
            Some(c) if c.len() == 1 => Ok(Some(c[0])),
            Some(c) => Err(DtError::BadProperty {
                path: self.path(id).to_string(),
                property: name.to_string(),
                reason: format!("{} cells where one is expected", c.len()),
            }),
        }
    }

    /// A property as a list of NUL-terminated strings (`compatible`).
    pub fn strings(&self, id: NodeId, name: &str) -> Vec<String> {
        let Some(v) = self.prop(id, name) else {
            return Vec::new();
        };
        v.split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    }

    /// The first string of a property.
    pub fn string(&self, id: NodeId, name: &str) -> Option<String> {
        self.strings(id, name).into_iter().next()
    }

    /// Whether any `compatible` string of the node satisfies `f`.
    pub fn compatible_matches(&self, id: NodeId, f: impl Fn(&str) -> bool) -> bool {
        self.strings(id, "compatible").iter().any(|c| f(c))
    }

    /// Whether the node is enabled (`status` absent, `okay` or `ok`).
    pub fn is_enabled(&self, id: NodeId) -> bool {
        match self.string(id, "status") {
            None => true,
            Some(s) => s == "okay" || s == "ok",
        }
    }

    /// The node carrying `phandle`, if any.
    pub fn by_phandle(&self, phandle: u32) -> Option<NodeId> {
        self.by_phandle.get(&phandle).copied()
    }

    /// Resolve a phandle found in property `property` of node `from`; a
    /// phandle no node carries is a [`DtError::DanglingPhandle`].
    pub fn resolve(&self, from: NodeId, property: &str, phandle: u32) -> Result<NodeId> {
        self.by_phandle(phandle)
            .ok_or_else(|| DtError::DanglingPhandle {
                path: self.path(from).to_string(),
                property: property.to_string(),
                phandle,
            })
    }

    /// A property that is a plain list of phandles (`memory-region`,
    /// `required-opps`), each resolved.
    pub fn phandle_list(&self, id: NodeId, name: &str) -> Result<Vec<NodeId>> {
        let cells = self.cells(id, name)?.unwrap_or_default();
        cells.iter().map(|ph| self.resolve(id, name, *ph)).collect()
    }

    /// `#address-cells` and `#size-cells` that govern the `reg` of `id`:
    /// its parent's, defaulting to 2 and 1 as the specification says.
    pub fn reg_cells(&self, id: NodeId) -> Result<(u32, u32)> {
        let Some(parent) = self.nodes[id].parent else {
            return Ok((2, 1));
        };
        self.own_cells(parent)
    }

    /// A node's own `#address-cells` / `#size-cells` (defaults 2 and 1).
    pub fn own_cells(&self, id: NodeId) -> Result<(u32, u32)> {
        let a = self.u32(id, "#address-cells")?.unwrap_or(2);
        let s = self.u32(id, "#size-cells")?.unwrap_or(1);
        if a > 4 || s > 4 {
            return Err(DtError::BadProperty {
                path: self.path(id).to_string(),
                property: "#address-cells/#size-cells".into(),
                reason: format!("{a}/{s}: more than 4 cells cannot be an address or size"),
            });
        }
        Ok((a, s))
    }

    /// A property made of (address, size) entries with the given cell
    /// counts (`reg`, `alloc-ranges`); a length that is not a whole number
    /// of entries is a [`DtError::CellMismatch`] naming where the counts
    /// come from.
    pub fn address_size_list(
        &self,
        id: NodeId,
        name: &str,
        address_cells: u32,
        size_cells: u32,
    ) -> Result<Option<Vec<(u64, u64)>>> {
        let Some(v) = self.prop(id, name) else {
            return Ok(None);
        };
        let entry = (address_cells + size_cells) as usize;
        if entry == 0 || v.len() % (entry * 4) != 0 {
            let governing = self.nodes[id]
                .parent
                .map(|p| self.path(p).to_string())
                .unwrap_or_else(|| "/".into());
            return Err(DtError::CellMismatch {
                path: self.path(id).to_string(),
                property: name.to_string(),
                len_bytes: v.len(),
                entry_cells: entry,
                why: format!(
                    " (#address-cells {address_cells} + #size-cells {size_cells} of {governing})"
                ),
            });
        }
        let cells: Vec<u32> = v.chunks_exact(4).map(be32).collect();
        let out = cells
            .chunks_exact(entry)
            .map(|e| {
                let (a, s) = e.split_at(address_cells as usize);
                (join_cells(a), join_cells(s))
            })
            .collect();
        Ok(Some(out))
    }

    /// The node's `reg` as (address, size) pairs, read with its parent's
    /// cell counts.
    pub fn reg(&self, id: NodeId) -> Result<Option<Vec<(u64, u64)>>> {
        let (a, s) = self.reg_cells(id)?;
        self.address_size_list(id, "reg", a, s)
    }
}

/// Cells joined into one number (most significant first; a 3- or 4-cell
/// value keeps its low 64 bits).
pub fn join_cells(cells: &[u32]) -> u64 {
    cells
        .iter()
        .fold(0u64, |acc, c| acc.wrapping_shl(32) | u64::from(*c))
}
