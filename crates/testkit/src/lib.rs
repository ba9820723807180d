//! Test helpers shared by every Lever crate (a dev-dependency only):
//!
//! - [`FakeTree`]: a fake kernel tree (`/sys`, `/proc`, `/dev`) in a
//!   tempdir, filled with real file contents, and the [`KernelFs`] that
//!   reads it — the root prefix every reader takes, so tests never touch the
//!   machine's own tunables.
//! - [`fixture`]: a crate's `tests/fixtures/NAME`, read or a panic naming
//!   the path.
//! - [`golden`]: compare output with a golden file (`LEVER_UPDATE_GOLDEN=1`
//!   rewrites it).
//! - [`snapshot`] and [`changed`]: every file under a root with its bytes,
//!   and what differs between two snapshots, for exact restore checks.
//! - [`lttng`]: user-space LTTng traces of a small instrumented program.
//! - [`in_ci`]: is this run `CI=true` (where a missing tool is a failure)?
//!
//! ```
//! use lever_testkit::FakeTree;
//! let tree = FakeTree::with(&[("/proc/sys/vm/swappiness", "60\n")]);
//! assert_eq!(tree.fs().read_i64("/proc/sys/vm/swappiness").unwrap(), 60);
//! let before = lever_testkit::snapshot(tree.root());
//! tree.node("/proc/sys/vm/swappiness", "100\n");
//! assert_eq!(lever_testkit::changed(&before, &lever_testkit::snapshot(tree.root())).len(), 1);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod lttng;

use lever_kernel::KernelFs;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A fake kernel tree in a tempdir that lives as long as the value.
pub struct FakeTree {
    dir: tempfile::TempDir,
    fs: KernelFs,
}

impl Default for FakeTree {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeTree {
    /// An empty tree.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("create a tempdir for a fake kernel tree");
        let fs = KernelFs::new(dir.path());
        FakeTree { dir, fs }
    }

    /// A tree holding `files` (kernel path, content).
    pub fn with(files: &[(&str, &str)]) -> Self {
        let tree = Self::new();
        for (path, content) in files {
            tree.node(path, content);
        }
        tree
    }

    /// The directory standing for `/`.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Kernel access below [`FakeTree::root`].
    pub fn fs(&self) -> &KernelFs {
        &self.fs
    }

    /// Create or overwrite a node (parents are created); panics naming the
    /// path, as a broken fixture should.
    pub fn node(&self, kernel_path: &str, content: &str) -> &Self {
        self.fs
            .create_node(kernel_path, content)
            .unwrap_or_else(|e| panic!("fake tree node {kernel_path}: {e}"));
        self
    }

    /// Remove a node, as a kernel without the feature would lack it.
    pub fn remove(&self, kernel_path: &str) -> &Self {
        let host = self.host_path(kernel_path);
        std::fs::remove_file(&host).unwrap_or_else(|e| panic!("remove {}: {e}", host.display()));
        self
    }

    /// A node's current content.
    pub fn read(&self, kernel_path: &str) -> String {
        self.fs
            .read(kernel_path)
            .unwrap_or_else(|e| panic!("read fake node {kernel_path}: {e}"))
    }

    /// Where a kernel path lives on the host.
    pub fn host_path(&self, kernel_path: &str) -> PathBuf {
        self.root().join(kernel_path.trim_start_matches('/'))
    }
}

/// `tests/fixtures/NAME` of the crate whose `CARGO_MANIFEST_DIR` is given
/// (pass `env!("CARGO_MANIFEST_DIR")`).
pub fn fixture(manifest_dir: &str, name: &str) -> String {
    let path = fixture_path(manifest_dir, name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The path of `tests/fixtures/NAME` of a crate.
pub fn fixture_path(manifest_dir: &str, name: &str) -> PathBuf {
    Path::new(manifest_dir).join("tests/fixtures").join(name)
}

/// Every regular file under `root` with its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("snapshot {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.expect("read a directory entry");
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                let bytes = std::fs::read(entry.path())
                    .unwrap_or_else(|e| panic!("snapshot {}: {e}", entry.path().display()));
                out.insert(entry.path(), bytes);
            }
        }
    }
    out
}

/// The files whose content differs between two snapshots (or that exist in
/// only the first), as `path: "before" -> Some("after")` lines.
pub fn changed(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<String> {
    before
        .iter()
        .filter(|(path, bytes)| after.get(*path) != Some(bytes))
        .map(|(path, bytes)| {
            let now = after
                .get(path)
                .map(|x| String::from_utf8_lossy(x).into_owned());
            format!(
                "{}: {:?} -> {now:?}",
                path.display(),
                String::from_utf8_lossy(bytes)
            )
        })
        .collect()
}

/// Compare `actual` with the golden file at `path`; with
/// `LEVER_UPDATE_GOLDEN=1` in the environment, (re)write the file instead,
/// so an intended change is one run and a reviewed diff.
pub fn golden(path: &Path, actual: &str) {
    if std::env::var_os("LEVER_UPDATE_GOLDEN").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (LEVER_UPDATE_GOLDEN=1 creates it)", path.display()));
    assert_eq!(
        actual,
        expected,
        "{} differs; LEVER_UPDATE_GOLDEN=1 rewrites it",
        path.display()
    );
}

/// Is this run under `CI=true`? There, `.ci/run` has installed every tool
/// the tests use, so a test that would skip for a missing tool fails.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}
