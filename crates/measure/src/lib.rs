//! System measurements for Lever: the memory map of seed 000 §8.3 with the
//! §3.5 kernel-dynamic breakdown, per-process memory (procrank), memory
//! thrashing and the I/O-bound check of §7.2.
//!
//! Three layers, one direction: **readers** take a [`lever_kernel::KernelFs`]
//! (so every path goes through one root prefix: `/` on a device, a simulated
//! board in tests) and return raw samples; **models** (`MemoryMap::new`,
//! `Procrank::new`, `ThrashInterval::new`, `IoReport::new`) turn samples
//! into figures with no I/O; the CLI renders them. [`sampling`] runs the
//! user's command and samples while it runs.
//!
//! What a machine lacks is an [`Avail::Unavailable`] with the reason, never
//! an invented number.
//!
//! ```
//! use lever_kernel::KernelFs;
//! use lever_measure::memmap::{MemSample, MemoryMap, StaticMemory};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let fs = KernelFs::new(dir.path());
//! // Seed 000 §8.3's meminfo and vmstat figures.
//! fs.create_node("/proc/meminfo", "MemTotal: 4513944 kB\nMemFree: 3471436 kB\n\
//!     Buffers: 9216 kB\nCached: 574856 kB\nShmem: 24776 kB\n").unwrap();
//! fs.create_node("/proc/vmstat", "nr_shmem 6194\nnr_kernel_misc_reclaimable 16217\n").unwrap();
//! fs.create_node("/proc/iomem", "80000000-17fffffff : System RAM\n").unwrap();
//!
//! let fixed = StaticMemory::read(&fs, Some(String::new()), Some(6 * 1024 * 1024)).unwrap();
//! let map = MemoryMap::new(&fixed, &MemSample::read(&fs).unwrap(), None).unwrap();
//! assert_eq!(map.page_size.kb, 4); // 24776 kB / 6194 pages
//! assert_eq!(map.free.ion_cache_kb, 64868);
//! assert_eq!(map.free.free_kb, 3471436 + (574856 - 24776) + 9216 + 64868);
//! assert_eq!(map.non_linux_kb.value(), Some(&(2 * 1024 * 1024)));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod avail;
pub mod conditions;
pub mod devicetree;
pub mod diskstats;
pub mod dmesg;
mod error;
pub mod iobound;
pub mod iomem;
pub mod meminfo;
pub mod memmap;
pub mod mounts;
pub mod pressure;
pub mod process;
pub mod sampling;
pub mod smaps;
pub mod svg;
pub mod thermal;
pub mod thrash;
pub mod top;
pub mod vmstat;

pub use avail::Avail;
pub use error::MeasureError;
