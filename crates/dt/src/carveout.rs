//! Memory carveouts (seed 000 §6.5, §8.3): the `/reserved-memory` regions
//! firmware and subsystems (modem, ADSP, CDSP, WPSS, TrustZone, the
//! hypervisor…) keep from Linux.
//!
//! A region is static (`reg = <base size>`, with `/reserved-memory`'s cell
//! counts) or dynamic (`size`, optionally `alloc-ranges` and `alignment`:
//! the kernel places it at boot). `no-map` regions are outside the
//! kernel's linear map, so outside "System RAM" in /proc/iomem: their sum
//! is §8.3's "non-Linux" memory. `reusable` regions (CMA) lend their pages
//! to Linux until their owner claims them. A region with
//! `status = "disabled"` is given back to Linux (§6.5's modem example) and
//! counts in no total.

use crate::error::Result;
use crate::tree::{MemReserve, NodeId, Tree};
use serde::Serialize;
use std::collections::HashMap;

/// An address range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Range {
    /// Base address.
    pub base: u64,
    /// Size in bytes.
    pub size_bytes: u64,
}

impl Range {
    /// One past the last byte (saturating).
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size_bytes)
    }
}

/// A node that uses a region through `memory-region`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// The node's path.
    pub node: String,
    /// Its labels.
    pub labels: Vec<String>,
    /// Its `compatible` strings.
    pub compatible: Vec<String>,
    /// Whether it is enabled.
    pub enabled: bool,
}

/// One `/reserved-memory` region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Region {
    /// Node name (`memory@8b800000`).
    pub name: String,
    /// Node path.
    pub node: String,
    /// Labels from `__symbols__` (`mpss_mem`); empty without it.
    pub labels: Vec<String>,
    /// `reg` ranges (static region); empty for a dynamic one.
    pub ranges: Vec<Range>,
    /// `size` of a dynamic region.
    pub dynamic_size_bytes: Option<u64>,
    /// `alloc-ranges` of a dynamic region.
    pub alloc_ranges: Vec<Range>,
    /// `alignment` of a dynamic region.
    pub alignment: Option<u64>,
    /// `no-map`: outside the kernel's linear map.
    pub no_map: bool,
    /// `reusable`: Linux may use it until its owner does.
    pub reusable: bool,
    /// `compatible` strings (`shared-dma-pool`, `qcom,rmtfs-mem`).
    pub compatible: Vec<String>,
    /// `status` is absent or okay.
    pub enabled: bool,
    /// Nodes whose `memory-region` points here.
    pub users: Vec<User>,
    /// A static range not inside any `/memory` range (only when `/memory`
    /// gives sizes).
    pub outside_memory: bool,
}

impl Region {
    /// The region's size: its ranges' sum, else its dynamic size.
    pub fn size_bytes(&self) -> u64 {
        if self.ranges.is_empty() {
            self.dynamic_size_bytes.unwrap_or(0)
        } else {
            self.ranges
                .iter()
                .fold(0u64, |a, r| a.saturating_add(r.size_bytes))
        }
    }

    /// The label, else the node name.
    pub fn display_name(&self) -> &str {
        self.labels.first().map_or(&self.name, |l| l)
    }
}

/// Two enabled regions sharing bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overlap {
    /// First region's path.
    pub first: String,
    /// Second region's path.
    pub second: String,
    /// The shared range.
    pub shared: Range,
}

/// Sums over enabled regions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// `no-map` regions: §8.3's non-Linux memory.
    pub no_map_bytes: u64,
    /// `reusable` regions (CMA).
    pub reusable_bytes: u64,
    /// Regions neither no-map nor reusable (reserved but mapped).
    pub other_bytes: u64,
    /// Of the three, the dynamic regions' sizes.
    pub dynamic_bytes: u64,
    /// Disabled regions (counted in no other total).
    pub disabled_bytes: u64,
}

/// The carveouts of one tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CarveoutReport {
    /// Whether labels were available (`__symbols__`).
    pub has_symbols: bool,
    /// The `/memory` ranges.
    pub memory: Vec<Range>,
    /// Whether `/memory` gives sizes (0 when the bootloader fills them in).
    pub memory_known: bool,
    /// The DTB's memory reservation block (`/memreserve/`).
    pub mem_reserve: Vec<MemReserve>,
    /// Every region, in tree order.
    pub regions: Vec<Region>,
    /// Sums.
    pub totals: Totals,
    /// Overlapping enabled regions.
    pub overlaps: Vec<Overlap>,
}

/// Read the carveouts of `tree`.
pub fn carveouts(tree: &Tree) -> Result<CarveoutReport> {
    // Who uses which region.
    let mut users: HashMap<NodeId, Vec<User>> = HashMap::new();
    for (id, _) in tree.nodes() {
        for region in tree.phandle_list(id, "memory-region")? {
            users.entry(region).or_default().push(User {
                node: tree.path(id).to_string(),
                labels: tree.labels(id).to_vec(),
                compatible: tree.strings(id, "compatible"),
                enabled: tree.is_enabled(id),
            });
        }
    }
    // /memory.
    let root = tree.root();
    let mut memory = Vec::new();
    for &c in &tree.node(root).children {
        let n = tree.node(c);
        let is_memory = tree.string(c, "device_type").as_deref() == Some("memory")
            || n.name == "memory"
            || n.name.starts_with("memory@");
        if is_memory && tree.is_enabled(c) {
            for (base, size) in tree.reg(c)?.unwrap_or_default() {
                if size > 0 {
                    memory.push(Range {
                        base,
                        size_bytes: size,
                    });
                }
            }
        }
    }
    let memory_known = !memory.is_empty();

    let mut regions = Vec::new();
    if let Some(rm) = tree.find("/reserved-memory") {
        let (a, s) = tree.own_cells(rm)?;
        for &c in &tree.node(rm).children {
            let to_ranges = |v: Option<Vec<(u64, u64)>>| -> Vec<Range> {
                v.unwrap_or_default()
                    .into_iter()
                    .map(|(base, size_bytes)| Range { base, size_bytes })
                    .collect()
            };
            let ranges = to_ranges(tree.address_size_list(c, "reg", a, s)?);
            let alloc_ranges = to_ranges(tree.address_size_list(c, "alloc-ranges", a, s)?);
            let dynamic_size_bytes = match tree.address_size_list(c, "size", 0, s)? {
                Some(v) => v.first().map(|(_, size)| *size),
                None => None,
            };
            // `alignment` only matters for a dynamic region (the kernel
            // ignores it beside `reg`; TI's k3 trees give a 1-cell one
            // there under #size-cells 2), and one cell is read as one.
            let alignment = if !ranges.is_empty() {
                None
            } else if tree.prop(c, "alignment").is_some_and(|v| v.len() == 4) {
                tree.u32(c, "alignment")?.map(u64::from)
            } else {
                match tree.address_size_list(c, "alignment", 0, s)? {
                    Some(v) => v.first().map(|(_, al)| *al),
                    None => None,
                }
            };
            let outside_memory = memory_known
                && ranges.iter().any(|r| {
                    !memory
                        .iter()
                        .any(|m| r.base >= m.base && r.end() <= m.end())
                });
            regions.push(Region {
                name: tree.node(c).name.clone(),
                node: tree.path(c).to_string(),
                labels: tree.labels(c).to_vec(),
                ranges,
                dynamic_size_bytes,
                alloc_ranges,
                alignment,
                no_map: tree.has(c, "no-map"),
                reusable: tree.has(c, "reusable"),
                compatible: tree.strings(c, "compatible"),
                enabled: tree.is_enabled(c),
                users: users.remove(&c).unwrap_or_default(),
                outside_memory,
            });
        }
    }

    // Sizes come from the tree: two near 2^64 must not overflow the sum
    // (found by fuzz/run.sh dt_parse); a total saturates instead.
    let mut totals = Totals::default();
    for r in &regions {
        let size = r.size_bytes();
        if !r.enabled {
            totals.disabled_bytes = totals.disabled_bytes.saturating_add(size);
            continue;
        }
        if r.no_map {
            totals.no_map_bytes = totals.no_map_bytes.saturating_add(size);
        } else if r.reusable {
            totals.reusable_bytes = totals.reusable_bytes.saturating_add(size);
        } else {
            totals.other_bytes = totals.other_bytes.saturating_add(size);
        }
        if r.ranges.is_empty() {
            totals.dynamic_bytes = totals.dynamic_bytes.saturating_add(size);
        }
    }

    let mut spans: Vec<(Range, &str)> = regions
        .iter()
        .filter(|r| r.enabled)
        .flat_map(|r| r.ranges.iter().map(move |x| (*x, r.node.as_str())))
        .filter(|(x, _)| x.size_bytes > 0)
        .collect();
    spans.sort_by_key(|(x, _)| (x.base, x.size_bytes));
    let mut overlaps = Vec::new();
    for (i, (x, xn)) in spans.iter().enumerate() {
        for (y, yn) in &spans[i + 1..] {
            if y.base >= x.end() {
                break;
            }
            let end = x.end().min(y.end());
            overlaps.push(Overlap {
                first: xn.to_string(),
                second: yn.to_string(),
                shared: Range {
                    base: y.base,
                    size_bytes: end - y.base,
                },
            });
        }
    }

    Ok(CarveoutReport {
        has_symbols: tree.has_symbols(),
        memory,
        memory_known,
        mem_reserve: tree.mem_reserve.clone(),
        regions,
        totals,
        overlaps,
    })
}
