//! The flattened device tree (DTB) format, as the Devicetree
//! Specification v0.4 §5 defines it:
//!
//! - a 40-byte header of big-endian u32s: magic `0xd00dfeed`, totalsize,
//!   off_dt_struct, off_dt_strings, off_mem_rsvmap, version,
//!   last_comp_version, boot_cpuid_phys, size_dt_strings, size_dt_struct;
//! - the memory reservation block: (address u64, size u64) pairs ended by
//!   a (0, 0) pair;
//! - the structure block: tokens `FDT_BEGIN_NODE` (1, then the
//!   NUL-terminated node name padded to 4 bytes), `FDT_END_NODE` (2),
//!   `FDT_PROP` (3, then len u32, nameoff u32 and len bytes padded to 4),
//!   `FDT_NOP` (4) and `FDT_END` (9);
//! - the strings block: NUL-terminated property names, found by nameoff.
//!
//! Every read is bounds-checked; a blob that ends early or contradicts
//! itself is a [`DtError`] naming the byte offset and the node being read.

use crate::error::{DtError, Result};
use crate::tree::{MemReserve, NodeId, Tree, TreeBuilder};

const MAGIC: u32 = 0xd00d_feed;
const BEGIN_NODE: u32 = 1;
const END_NODE: u32 = 2;
const PROP: u32 = 3;
const NOP: u32 = 4;
const END: u32 = 9;
/// Deeper than any real tree; bounds the work on a hostile blob.
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    data: &'a [u8],
}

impl Reader<'_> {
    fn u32(&self, offset: usize, what: &str, path: &str) -> Result<u32> {
        let b = self.bytes(offset, 4, what, path)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&self, offset: usize, what: &str, path: &str) -> Result<u64> {
        let hi = self.u32(offset, what, path)?;
        let lo = self.u32(offset + 4, what, path)?;
        Ok((u64::from(hi) << 32) | u64::from(lo))
    }

    fn bytes(&self, offset: usize, len: usize, what: &str, path: &str) -> Result<&[u8]> {
        offset
            .checked_add(len)
            .and_then(|end| self.data.get(offset..end))
            .ok_or_else(|| DtError::Truncated {
                what: what.to_string(),
                offset,
                len: self.data.len(),
                path: path.to_string(),
            })
    }

    /// A NUL-terminated string starting at `offset`, ending before `limit`.
    fn c_str(&self, offset: usize, limit: usize, what: &str, path: &str) -> Result<&str> {
        let region = self
            .data
            .get(offset..limit.min(self.data.len()))
            .ok_or_else(|| DtError::Truncated {
                what: what.to_string(),
                offset,
                len: self.data.len(),
                path: path.to_string(),
            })?;
        let nul = region
            .iter()
            .position(|b| *b == 0)
            .ok_or_else(|| DtError::Truncated {
                what: format!("{what} (no terminating NUL)"),
                offset,
                len: limit,
                path: path.to_string(),
            })?;
        std::str::from_utf8(&region[..nul]).map_err(|_| DtError::Corrupt {
            offset,
            path: path.to_string(),
            reason: format!("{what} is not UTF-8"),
        })
    }
}

fn align4(n: usize) -> Option<usize> {
    n.checked_add(3).map(|v| v & !3)
}

/// Parse a DTB.
pub fn parse(data: &[u8]) -> Result<Tree> {
    let r = Reader { data };
    let magic = r.u32(0, "header magic", "/")?;
    if magic != MAGIC {
        return Err(DtError::Corrupt {
            offset: 0,
            path: "/".into(),
            reason: format!("magic {magic:#010x}, not {MAGIC:#010x}: not a DTB"),
        });
    }
    let field = |i: usize, name: &str| r.u32(4 * i, &format!("header field {name}"), "/");
    let total = field(1, "totalsize")? as usize;
    let off_struct = field(2, "off_dt_struct")? as usize;
    let off_strings = field(3, "off_dt_strings")? as usize;
    let off_rsv = field(4, "off_mem_rsvmap")? as usize;
    let version = field(5, "version")?;
    let boot_cpuid_phys = field(7, "boot_cpuid_phys")?;
    if version < 16 {
        return Err(DtError::Corrupt {
            offset: 20,
            path: "/".into(),
            reason: format!("version {version}: only versions 16 and 17 are read"),
        });
    }
    if total > data.len() {
        return Err(DtError::Truncated {
            what: format!("the blob (header totalsize {total})"),
            offset: 0,
            len: data.len(),
            path: "/".into(),
        });
    }
    let data = &data[..total];
    let r = Reader { data };
    let size_strings = r.u32(32, "header field size_dt_strings", "/")? as usize;
    // size_dt_struct exists from version 17; before, the block runs to the end.
    let size_struct = if version >= 17 {
        r.u32(36, "header field size_dt_struct", "/")? as usize
    } else {
        total.saturating_sub(off_struct)
    };
    let struct_end = off_struct
        .checked_add(size_struct)
        .filter(|e| *e <= total)
        .ok_or_else(|| DtError::Truncated {
            what: format!("structure block ({size_struct} bytes from {off_struct})"),
            offset: off_struct,
            len: total,
            path: "/".into(),
        })?;
    let strings_end = off_strings
        .checked_add(size_strings)
        .filter(|e| *e <= total)
        .ok_or_else(|| DtError::Truncated {
            what: format!("strings block ({size_strings} bytes from {off_strings})"),
            offset: off_strings,
            len: total,
            path: "/".into(),
        })?;

    // Memory reservation block.
    let mut mem_reserve = Vec::new();
    let mut off = off_rsv;
    loop {
        let address = r.u64(off, "memory reservation entry", "/")?;
        let size = r.u64(off + 8, "memory reservation entry", "/")?;
        if address == 0 && size == 0 {
            break;
        }
        mem_reserve.push(MemReserve { address, size });
        off += 16;
    }

    // Structure block.
    let mut b = TreeBuilder::new();
    let mut stack: Vec<NodeId> = Vec::new();
    let mut seen_root = false;
    let mut off = off_struct;
    let cur_path = |b: &TreeBuilder, stack: &[NodeId]| -> String {
        stack
            .last()
            .map(|id| b.path(*id).to_string())
            .unwrap_or_else(|| "/".into())
    };
    loop {
        if off >= struct_end {
            return Err(DtError::Truncated {
                what: "structure block (no FDT_END token)".into(),
                offset: off,
                len: struct_end,
                path: cur_path(&b, &stack),
            });
        }
        let tok = r.u32(off, "structure token", &cur_path(&b, &stack))?;
        let tok_off = off;
        off += 4;
        match tok {
            BEGIN_NODE => {
                let path = cur_path(&b, &stack);
                let name = r.c_str(off, struct_end, "node name", &path)?.to_string();
                off = align4(off + name.len() + 1).unwrap_or(usize::MAX);
                if stack.is_empty() && seen_root {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path,
                        reason: "a second root node".into(),
                    });
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path,
                        reason: format!("nodes nested deeper than {MAX_DEPTH}"),
                    });
                }
                let parent = stack.last().copied();
                if parent.is_some() && (name.is_empty() || name.contains('/')) {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path,
                        reason: format!("bad node name {name:?}"),
                    });
                }
                seen_root = true;
                let id = b.add_node(parent, if parent.is_none() { "" } else { &name });
                stack.push(id);
            }
            END_NODE => {
                if stack.pop().is_none() {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path: "/".into(),
                        reason: "FDT_END_NODE without an open node".into(),
                    });
                }
            }
            PROP => {
                let path = cur_path(&b, &stack);
                let Some(&node) = stack.last() else {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path,
                        reason: "a property outside any node".into(),
                    });
                };
                let len = r.u32(off, "property length", &path)? as usize;
                let nameoff = r.u32(off + 4, "property name offset", &path)? as usize;
                off += 8;
                let name_at = off_strings
                    .checked_add(nameoff)
                    .filter(|o| *o < strings_end);
                let Some(name_at) = name_at else {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path,
                        reason: format!(
                            "property name offset {nameoff} is outside the strings block ({size_strings} bytes)"
                        ),
                    });
                };
                let name = r
                    .c_str(name_at, strings_end, "property name", &path)?
                    .to_string();
                if off.checked_add(len).is_none_or(|e| e > struct_end) {
                    return Err(DtError::Truncated {
                        what: format!("value of property {name} ({len} bytes)"),
                        offset: off,
                        len: struct_end,
                        path,
                    });
                }
                let value = r.bytes(off, len, "property value", &path)?.to_vec();
                off = align4(off + len).unwrap_or(usize::MAX);
                b.add_property(node, &name, value);
            }
            NOP => {}
            END => {
                if let Some(&open) = stack.last() {
                    return Err(DtError::Corrupt {
                        offset: tok_off,
                        path: b.path(open).to_string(),
                        reason: "FDT_END while this node is still open".into(),
                    });
                }
                break;
            }
            other => {
                return Err(DtError::Corrupt {
                    offset: tok_off,
                    path: cur_path(&b, &stack),
                    reason: format!("unknown structure token {other:#x}"),
                })
            }
        }
    }
    if !seen_root {
        return Err(DtError::Corrupt {
            offset: off_struct,
            path: "/".into(),
            reason: "no root node".into(),
        });
    }
    Ok(b.build(mem_reserve, boot_cpuid_phys))
}
