//! Simulated boards: realistic fake `/sys`, `/proc` and `/dev` trees.
//!
//! Lever reads and writes the kernel through one root prefix
//! ([`lever_kernel::KernelFs`]). This crate builds directories that look like
//! the kernel trees of real embedded boards, so every Lever command can run
//! (and be tested) against a board you do not have:
//!
//! - `qcs6490`: Qualcomm QCS6490 (RB3gen2), 4 Silver + 3 Gold + 1 Prime,
//!   Adreno 643, 6 GB.
//! - `qcs5430-fp1`: QCS5430 feature pack 1, 4 Silver + 2 Gold, Adreno 642L,
//!   4 GB; no `policy7`.
//! - `am437x`: TI AM437x GP EVM, one Cortex-A9, 1 GB, no GPU, no uclamp.
//!
//! Boards are data (clusters, frequency tables, caches, idle states,
//! memory banks and carveouts, GPU levels); one generator writes any of
//! them. Everything is deterministic: the same board always gives the same
//! bytes. Files hold what the kernel prints, in its formats; the tree is
//! self-consistent (current frequencies are in the tables, `/proc/iomem`
//! System RAM plus the carveouts equals the device-tree memory, `MemTotal`
//! is below System RAM, time-in-state adds up to the uptime).
//!
//! `/dev/cpu_dma_latency` is a regular file holding the binary value a
//! read of the real device returns; `/proc/device-tree` is a relative
//! symlink to `/sys/firmware/devicetree/base`, as on a device.
//!
//! ```
//! use lever_kernel::KernelFs;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let root = dir.path().join("board");
//! let created = lever_sim::create("qcs6490", &root).unwrap();
//! assert_eq!(created.board, "qcs6490");
//!
//! let fs = KernelFs::new(&created.root);
//! let max = fs.read_i64("/sys/devices/system/cpu/cpufreq/policy7/cpuinfo_max_freq").unwrap();
//! assert_eq!(max, 2_707_200);
//! assert_eq!(fs.read("/sys/class/kgsl/kgsl-3d0/gpu_model").unwrap(), "Adreno643v1");
//!
//! // Re-creating the same board in place is allowed; anything else is not.
//! lever_sim::create("qcs6490", &root).unwrap();
//! assert!(lever_sim::create("am437x", &root).is_err());
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod boards;
mod gen;
mod model;
mod tree;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Name of the marker file written at the root of every simulated board;
/// it holds the board name.
pub const MARKER: &str = ".lever-sim";

/// A board that [`create`] can build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardInfo {
    /// The name to pass to [`create`] (`qcs6490`).
    pub name: &'static str,
    /// One line: SoC, CPUs, GPU, RAM, kernel.
    pub description: &'static str,
}

/// Every simulated board: `qcs6490`, `qcs5430-fp1`, `am437x`, in that order.
pub fn boards() -> Vec<BoardInfo> {
    boards::ALL
        .iter()
        .map(|b| BoardInfo {
            name: b.name,
            description: b.description,
        })
        .collect()
}

/// What [`create`] built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The board's name.
    pub board: &'static str,
    /// The root directory; pass it to `KernelFs::new`.
    pub root: PathBuf,
    /// Number of kernel nodes written (regular files and symlinks, not
    /// counting the marker).
    pub files: usize,
}

/// Why [`create`] failed.
#[derive(thiserror::Error, Debug)]
pub enum SimError {
    /// No board has this name.
    #[error("unknown board {name:?}; known boards: {}", known.join(", "))]
    UnknownBoard {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: Vec<&'static str>,
    },
    /// The directory has content that is not a simulated board of the same
    /// name; it is left untouched.
    #[error(
        "{}: directory is not empty and does not hold the same simulated board \
         (no {MARKER} marker naming it); refusing to overwrite it",
        dir.display()
    )]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// The board's SoC device tree (compiled into the crate) could not be
    /// read.
    #[error("device tree {source_dtb}: {message}")]
    DeviceTree {
        /// Which DTB.
        source_dtb: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Writing a kernel node failed.
    #[error(transparent)]
    Kernel(#[from] lever_kernel::KernelError),
    /// A filesystem operation on the host failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The host path.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// The simulated board that `dir` holds, by its [`MARKER`]; `None` when
/// `dir` holds none (missing, empty, or something else).
pub fn board_in(dir: &Path) -> Option<String> {
    let name = fs::read_to_string(dir.join(MARKER)).ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// What [`open_or_create`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// `dir` already held this board; it was left as it was (a restarted
    /// daemon sees the device as it left it).
    Existing,
    /// The board was built afresh.
    Created(Created),
}

/// Use the simulated `board` already in `dir`, or build it there.
pub fn open_or_create(board: &str, dir: &Path) -> Result<Opened, SimError> {
    if board_in(dir).as_deref() == Some(board) {
        return Ok(Opened::Existing);
    }
    create(board, dir).map(Opened::Created)
}

/// Build the simulated `board` in `dir`.
///
/// `dir` is created if missing. An existing directory must be empty, or
/// hold a simulated board of the same name (its [`MARKER`] says so): then it
/// is deleted and rebuilt, so a re-created board is always pristine.
/// Anything else is [`SimError::NotEmpty`] and nothing is touched.
pub fn create(board: &str, dir: &Path) -> Result<Created, SimError> {
    let spec = boards::ALL
        .iter()
        .find(|b| b.name == board)
        .ok_or_else(|| SimError::UnknownBoard {
            name: board.to_string(),
            known: boards::ALL.iter().map(|b| b.name).collect(),
        })?;
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SimError::Io { path, source }
    };
    match fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                let marker = dir.join(MARKER);
                let same = fs::read_to_string(&marker)
                    .map(|m| m.trim() == spec.name)
                    .unwrap_or(false);
                if !same {
                    return Err(SimError::NotEmpty {
                        dir: dir.to_path_buf(),
                    });
                }
                fs::remove_dir_all(dir).map_err(io_err(dir))?;
                fs::create_dir_all(dir).map_err(io_err(dir))?;
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        Err(e) => return Err(io_err(dir)(e)),
    }
    let mut tree = tree::Tree::new(dir.to_path_buf());
    gen::write_board(spec, &mut tree)?;
    let marker = dir.join(MARKER);
    fs::write(&marker, format!("{}\n", spec.name)).map_err(io_err(&marker))?;
    Ok(Created {
        board: spec.name,
        root: dir.to_path_buf(),
        files: tree.nodes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_are_listed_in_order() {
        let names: Vec<_> = boards().iter().map(|b| b.name).collect();
        assert_eq!(names, ["qcs6490", "qcs5430-fp1", "am437x"]);
    }

    #[test]
    fn open_or_create_reuses_the_same_board_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("sim");
        assert_eq!(board_in(&root), None);
        assert!(matches!(
            open_or_create("am437x", &root).unwrap(),
            Opened::Created(_)
        ));
        assert_eq!(board_in(&root).as_deref(), Some("am437x"));
        // A node changed by a daemon stays changed when the board is reused.
        let swappiness = root.join("proc/sys/vm/swappiness");
        fs::write(&swappiness, "7\n").unwrap();
        assert_eq!(open_or_create("am437x", &root).unwrap(), Opened::Existing);
        assert_eq!(fs::read_to_string(&swappiness).unwrap(), "7\n");
        // Another board is not built over it: that directory is not ours.
        assert!(matches!(
            open_or_create("qcs6490", &root),
            Err(SimError::NotEmpty { .. })
        ));
        assert_eq!(board_in(&root).as_deref(), Some("am437x"));
    }

    #[test]
    fn unknown_board_lists_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let err = create("rpi5", dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown board \"rpi5\"; known boards: qcs6490, qcs5430-fp1, am437x"
        );
    }
}
