//! Writing nodes below the simulated root.
//!
//! All writes go through [`lever_kernel::KernelFs::create_node`] (which
//! refuses the real `/`); binary nodes and symlinks are placed at the host
//! path that `KernelFs::resolve` gives, after `create_node` has made the
//! parent directories (and proved the root is not the system's).

use std::path::PathBuf;

use lever_kernel::KernelFs;

use crate::SimError;

/// A simulated tree being written; counts the nodes it creates.
pub(crate) struct Tree {
    fs: KernelFs,
    nodes: usize,
}

impl Tree {
    /// A tree below `root` (must not be `/`).
    pub fn new(root: PathBuf) -> Self {
        Tree {
            fs: KernelFs::new(root),
            nodes: 0,
        }
    }

    /// Number of files and symlinks written so far.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// A text node with exactly `content`.
    pub fn text(&mut self, kernel_path: &str, content: impl AsRef<str>) -> Result<(), SimError> {
        self.fs.create_node(kernel_path, content.as_ref())?;
        self.nodes += 1;
        Ok(())
    }

    /// A text node holding one line: `value` followed by a newline, as
    /// most sysfs attributes print.
    pub fn line(
        &mut self,
        kernel_path: &str,
        value: impl std::fmt::Display,
    ) -> Result<(), SimError> {
        self.text(kernel_path, format!("{value}\n"))
    }

    /// A binary node (device-tree properties, `/dev/cpu_dma_latency`).
    pub fn bytes(&mut self, kernel_path: &str, content: &[u8]) -> Result<(), SimError> {
        self.fs.create_node(kernel_path, "")?;
        let host = self.fs.resolve(kernel_path)?;
        std::fs::write(&host, content).map_err(|source| SimError::Io { path: host, source })?;
        self.nodes += 1;
        Ok(())
    }

    /// A symlink at `kernel_path` pointing to the relative `target`
    /// (relative, so it stays inside the simulated root).
    pub fn symlink(&mut self, kernel_path: &str, target: &str) -> Result<(), SimError> {
        // create_node makes the parent directories and checks the root;
        // the placeholder file is then replaced by the link.
        self.fs.create_node(kernel_path, "")?;
        let host = self.fs.resolve(kernel_path)?;
        std::fs::remove_file(&host).map_err(|source| SimError::Io {
            path: host.clone(),
            source,
        })?;
        std::os::unix::fs::symlink(target, &host)
            .map_err(|source| SimError::Io { path: host, source })?;
        self.nodes += 1;
        Ok(())
    }
}
