//! Installed RAM from the device tree's memory nodes.
//!
//! `/proc/device-tree/memory@80000000/reg` is a binary property: a list of
//! `(address, size)` pairs, each made of big-endian 32-bit cells, with
//! `#address-cells` and `#size-cells` cells (read from the root node,
//! `/proc/device-tree/#address-cells`; the device tree specification's
//! default of 2 and 1 is not what arm64 boards use, and Linux treats a
//! missing root property as 2/2 for 64-bit platforms, so Lever assumes 2/2
//! when the property is absent). Example (`reg` of the simulated QCS6490):
//!
//! ```text
//! 00000000 80000000 00000000 80000000   0x80000000 + 2 GiB
//! 00000001 00000000 00000001 00000000   0x100000000 + 4 GiB
//! ```

use crate::error::MeasureError;
use lever_kernel::{paths, KernelFs};
use serde::Serialize;

/// One RAM bank of a memory node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryBank {
    /// Memory node name (`memory@80000000`).
    pub node: String,
    /// Physical start address.
    pub address: u64,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// The device tree's view of RAM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DtMemory {
    /// `#address-cells` used.
    pub address_cells: u32,
    /// `#size-cells` used.
    pub size_cells: u32,
    /// True when the cell counts came from the root node, false when the
    /// 2/2 default was assumed.
    pub cells_from_root: bool,
    /// Every bank of every memory node.
    pub banks: Vec<MemoryBank>,
}

impl DtMemory {
    /// Total bytes over all banks.
    pub fn total_bytes(&self) -> u64 {
        self.banks.iter().map(|b| b.size_bytes).sum()
    }

    /// Read the memory nodes below the root. `Ok(None)` when there is no
    /// device tree or it has no memory node (x86, most VMs).
    pub fn read(fs: &KernelFs) -> Result<Option<Self>, MeasureError> {
        let dt = paths::DEVICE_TREE;
        let names = match fs.list_dir(dt) {
            Ok(n) => n,
            Err(e) if e.is_missing() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let cell = |name: &str| -> Result<Option<u32>, MeasureError> {
            match fs.read_bytes(&format!("{dt}/{name}")) {
                Ok(b) if b.len() == 4 => Ok(Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))),
                Ok(b) => Err(MeasureError::BadCells {
                    path: format!("{dt}/{name}"),
                    len: b.len(),
                    cells: 1,
                }),
                Err(e) if e.is_missing() => Ok(None),
                Err(e) => Err(e.into()),
            }
        };
        let (ac, sc) = (cell("#address-cells")?, cell("#size-cells")?);
        let cells_from_root = ac.is_some() && sc.is_some();
        let (address_cells, size_cells) = (ac.unwrap_or(2), sc.unwrap_or(2));
        let mut banks = Vec::new();
        for name in names
            .iter()
            .filter(|n| *n == "memory" || n.starts_with("memory@"))
        {
            let path = format!("{dt}/{name}/reg");
            let bytes = match fs.read_bytes(&path) {
                Ok(b) => b,
                Err(e) if e.is_missing() => continue,
                Err(e) => return Err(e.into()),
            };
            banks.extend(parse_reg(&path, name, &bytes, address_cells, size_cells)?);
        }
        if banks.is_empty() {
            return Ok(None);
        }
        Ok(Some(DtMemory {
            address_cells,
            size_cells,
            cells_from_root,
            banks,
        }))
    }
}

/// Decode a `reg` property of `(address, size)` pairs of big-endian cells.
pub fn parse_reg(
    path: &str,
    node: &str,
    bytes: &[u8],
    address_cells: u32,
    size_cells: u32,
) -> Result<Vec<MemoryBank>, MeasureError> {
    let per = (address_cells + size_cells) as usize;
    if per == 0 || address_cells > 2 || size_cells > 2 || bytes.len() % (per * 4) != 0 {
        return Err(MeasureError::BadCells {
            path: path.to_string(),
            len: bytes.len(),
            cells: per as u32,
        });
    }
    let cells: Vec<u64> = bytes
        .chunks_exact(4)
        .map(|c| u64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let join = |cs: &[u64]| cs.iter().fold(0u64, |acc, c| (acc << 32) | c);
    Ok(cells
        .chunks_exact(per)
        .map(|entry| {
            let (a, s) = entry.split_at(address_cells as usize);
            MemoryBank {
                node: node.to_string(),
                address: join(a),
                size_bytes: join(s),
            }
        })
        .collect())
}
