//! Names the build in `lever --version`: git revision, target, features
//! (`LEVER_VERSION`, read by `args.rs`).

include!("build_support/revision.rs");

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // crates/cli -> the workspace root, where .git is in a clone.
    let root = Path::new(&manifest).join("../..");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build_support/revision.rs");
    // Packagers building from a tarball (Yocto's SRCREV, Buildroot's
    // version) can say which commit it is.
    println!("cargo:rerun-if-env-changed=LEVER_GIT_REV");
    let rev = match std::env::var("LEVER_GIT_REV") {
        Ok(rev) if !rev.is_empty() => Some(rev),
        _ => git_revision(&root).map(|(rev, files)| {
            for file in files {
                println!("cargo:rerun-if-changed={}", file.display());
            }
            rev
        }),
    };
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(str::to_string))
        .map(|f| f.to_lowercase().replace('_', "-"))
        // `default` says nothing the others do not (`host` is named).
        .filter(|f| f != "default")
        .collect();
    features.sort();
    let line = version_line(
        &std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
        rev.as_deref(),
        &std::env::var("TARGET").unwrap_or_default(),
        &features,
    );
    println!("cargo:rustc-env=LEVER_VERSION={line}");
}
