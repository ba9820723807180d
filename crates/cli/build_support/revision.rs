// The git revision `lever --version` names. Shared by build.rs (which
// `include!`s it) and tests/version.rs (which checks the fallback), so it
// is plain functions on std only.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The revision a build of the workspace at `root` comes from, and the
/// files whose change means a new revision (for `cargo:rerun-if-changed`).
/// `None` outside a git checkout of this very workspace: a tarball, or a
/// tarball unpacked inside some other repository (a Yocto or Buildroot
/// tree often is one) must not report that repository's commit.
pub fn git_revision(root: &Path) -> Option<(String, Vec<PathBuf>)> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    let toplevel = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    if toplevel.canonicalize().ok()? != root.canonicalize().ok()? {
        return None;
    }
    let rev = git(&["rev-parse", "--short=12", "HEAD"])?;
    // HEAD, the branch it points to and packed-refs: a commit or checkout
    // changes one of them. `--git-path` resolves worktrees' shared refs.
    let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(branch);
    }
    let files = watch
        .iter()
        .filter_map(|name| git(&["rev-parse", "--git-path", name]))
        .map(|p| root.join(p))
        .filter(|p| p.exists())
        .collect();
    Some((rev, files))
}

/// The text after `lever ` in `lever --version`:
/// `0.1.0 (git 0123456789ab, aarch64-unknown-linux-musl, features: none)`.
pub fn version_line(version: &str, rev: Option<&str>, target: &str, features: &[String]) -> String {
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(",")
    };
    format!(
        "{version} (git {}, {target}, features: {features})",
        rev.unwrap_or("unknown")
    )
}
