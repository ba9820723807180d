//! Device tree reader for Lever: the flattened device tree (DTB) format,
//! the live tree under `/sys/firmware/devicetree/base`, and `.dts`
//! sources through `dtc`; and the two readings seed 000 does by hand:
//!
//! - [`opp::dvfs`]: §6.3's DVFS maps — per CPU cluster, each CPU frequency
//!   with its interconnect votes and the L3 / LLCC / DDR frequency they
//!   imply (vote / w), and the bandwidth monitors' tables;
//! - [`carveout::carveouts`]: §6.5 / §8.3's carveouts — every
//!   `/reserved-memory` region, who uses it, no-map and reusable totals,
//!   overlaps and regions outside `/memory`;
//! - [`customize`]: §6.3's "customize": new L3 / LLCC / DDR votes for CPU
//!   frequencies as a device-tree overlay or a patch of the source.
//!
//! No C, no `unsafe`; every error names the node path (and byte offset
//! for a bad blob). Nothing here writes anywhere.
//!
//! ```
//! // A minimal DTB: header, empty reservation block, a root node with
//! // one property, and the strings block.
//! fn be(v: u32) -> [u8; 4] { v.to_be_bytes() }
//! let mut s = Vec::new();
//! for w in [1u32, 0] { s.extend(be(w)); }            // FDT_BEGIN_NODE ""
//! s.extend(be(3)); s.extend(be(4)); s.extend(be(0)); // FDT_PROP len 4, nameoff 0
//! s.extend(be(1));                                   // #address-cells = <1>
//! s.extend(be(2)); s.extend(be(9));                  // FDT_END_NODE, FDT_END
//! let strings = b"#address-cells\0";
//! let (rsv, st) = (40usize, 56usize);
//! let total = st + s.len() + strings.len();
//! let mut blob = Vec::new();
//! for w in [0xd00dfeed, total as u32, st as u32, (st + s.len()) as u32,
//!           rsv as u32, 17, 16, 0, strings.len() as u32, s.len() as u32] {
//!     blob.extend(be(w));
//! }
//! blob.extend([0u8; 16]);
//! blob.extend(&s);
//! blob.extend(strings);
//! let tree = lever_dt::fdt::parse(&blob).unwrap();
//! assert_eq!(tree.u32(tree.root(), "#address-cells").unwrap(), Some(1));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod carveout;
pub mod customize;
pub mod error;
pub mod fdt;
pub mod opp;
pub mod source;
pub mod tree;

pub use carveout::{carveouts, CarveoutReport};
pub use error::{DtError, Result};
pub use opp::{dvfs, DvfsReport, Widths};
pub use tree::{NodeId, Tree};
