//! Where a tree comes from: a `.dtb` file, the live tree the kernel
//! exposes (`/sys/firmware/devicetree/base`: a directory per node, a file
//! per property holding its raw value), or a `.dts` source compiled with
//! `dtc` (after `cpp` when include directories are given, as the kernel's
//! build does for `#include`).

use crate::error::{DtError, Result};
use crate::tree::{NodeId, Tree, TreeBuilder};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The live tree's place below a root prefix.
pub const LIVE_TREE: &str = "sys/firmware/devicetree/base";

/// Read a `.dtb` file.
pub fn read_dtb(path: &Path) -> Result<Tree> {
    let data = std::fs::read(path).map_err(|source| DtError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    crate::fdt::parse(&data)
}

/// Read the live tree below `root` (`root/sys/firmware/devicetree/base`).
pub fn read_live(root: &Path) -> Result<Tree> {
    read_dir_tree(&root.join(LIVE_TREE))
}

/// Read a device tree laid out as directories and files (the live tree's
/// form): directories are nodes, regular files are properties.
pub fn read_dir_tree(base: &Path) -> Result<Tree> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DtError::Io { path, source }
    };
    let mut b = TreeBuilder::new();
    let root = b.add_node(None, "");
    let mut todo: Vec<(PathBuf, NodeId)> = vec![(base.to_path_buf(), root)];
    while let Some((dir, node)) = todo.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .map_err(io(&dir))?
            .collect::<std::io::Result<_>>()
            .map_err(io(&dir))?;
        // readdir order is arbitrary: sort naturally (cpu@100 before
        // cpu@1000, opp-300000000 before opp-1228800000), which gives the
        // source's order for the usual ascending unit addresses and OPPs.
        entries.sort_by_cached_key(|e| natural_key(&e.file_name().to_string_lossy()));
        let mut subdirs = Vec::new();
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let ft = e.file_type().map_err(io(&e.path()))?;
            if ft.is_dir() {
                subdirs.push((e.path(), name));
            } else if ft.is_file() {
                let value = std::fs::read(e.path()).map_err(io(&e.path()))?;
                // The kernel adds a `name` property to every node that
                // DTBs since version 16 no longer carry.
                if name == "name" && node_base_name(b.path(node)).as_bytes() == trim_nul(&value) {
                    continue;
                }
                b.add_property(node, &name, value);
            }
        }
        let children: Vec<(PathBuf, NodeId)> = subdirs
            .into_iter()
            .map(|(path, name)| {
                let child = b.add_node(Some(node), &name);
                (path, child)
            })
            .collect();
        // Depth first; the stack pops the first child first.
        todo.extend(children.into_iter().rev());
    }
    Ok(b.build(Vec::new(), 0))
}

/// A name cut into text and numbers, numbers compared by value
/// (hexadecimal after `@`, decimal elsewhere).
fn natural_key(name: &str) -> Vec<(String, u128)> {
    let mut key = Vec::new();
    let (base, unit) = match name.split_once('@') {
        Some((b, u)) => (b, Some(u)),
        None => (name, None),
    };
    let mut text = String::new();
    let mut digits = String::new();
    for ch in base.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            if !digits.is_empty() {
                key.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u128::MAX),
                ));
                digits.clear();
            }
            text.push(ch);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    if let Some(u) = unit {
        let first = u.split(',').next().unwrap_or(u);
        key.push((
            "@".into(),
            u128::from_str_radix(first, 16).unwrap_or(u128::MAX),
        ));
        key.push((u.to_string(), 0));
    }
    key
}

fn node_base_name(path: &str) -> &str {
    let last = path.rsplit('/').next().unwrap_or("");
    last.split('@').next().unwrap_or(last)
}

fn trim_nul(v: &[u8]) -> &[u8] {
    v.strip_suffix(&[0]).unwrap_or(v)
}

/// Compile a `.dts` with `dtc` (`-@`, so labels reach `__symbols__`) and
/// parse the result. With include directories the source first goes
/// through `cpp -nostdinc -undef -x assembler-with-cpp` as the kernel's
/// build does, so `#include <dt-bindings/...>` works.
pub fn read_dts(path: &Path, include_dirs: &[PathBuf]) -> Result<Tree> {
    let source = if include_dirs.is_empty() {
        None
    } else {
        let mut cpp = Command::new("cpp");
        cpp.args([
            "-nostdinc",
            "-undef",
            "-D__DTS__",
            "-x",
            "assembler-with-cpp",
            "-P",
        ]);
        for d in include_dirs {
            cpp.arg("-I").arg(d);
        }
        cpp.arg(path);
        Some(run("cpp", path, &mut cpp)?)
    };
    let mut dtc = Command::new("dtc");
    dtc.args(["-q", "-@", "-I", "dts", "-O", "dtb", "-o", "-"]);
    for d in include_dirs {
        dtc.arg("-i").arg(d);
    }
    let blob = match source {
        None => {
            dtc.arg(path);
            run("dtc", path, &mut dtc)?
        }
        Some(text) => {
            // dtc resolves /include/ relative to the source's directory.
            if let Some(dir) = path.parent() {
                dtc.arg("-i").arg(dir);
            }
            dtc.arg("-");
            run_with_input("dtc", path, &mut dtc, &text)?
        }
    };
    crate::fdt::parse(&blob)
}

/// The source `dtc -O dts` prints of a tree: a `.dtb` (`-I dtb`), a
/// directory in the live tree's form (`-I fs`) or a `.dts` (`-I dts`,
/// without `#include`s) — the text a patch of the tree applies to.
pub fn dtc_source(path: &Path) -> Result<String> {
    let format = if path.is_dir() {
        "fs"
    } else if std::fs::read(path)
        .map_err(|source| DtError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .starts_with(&[0xd0, 0x0d, 0xfe, 0xed])
    {
        "dtb"
    } else {
        "dts"
    };
    let mut dtc = Command::new("dtc");
    dtc.args(["-q", "-I", format, "-O", "dts", "-o", "-"])
        .arg(path);
    let out = run("dtc", path, &mut dtc)?;
    String::from_utf8(out).map_err(|_| DtError::Tool {
        tool: "dtc",
        path: path.to_path_buf(),
        message: "printed source that is not UTF-8".into(),
    })
}

fn run(tool: &'static str, path: &Path, cmd: &mut Command) -> Result<Vec<u8>> {
    run_with_input(tool, path, cmd, &[])
}

fn run_with_input(
    tool: &'static str,
    path: &Path,
    cmd: &mut Command,
    input: &[u8],
) -> Result<Vec<u8>> {
    use std::io::Write;
    let fail = |message: String| DtError::Tool {
        tool,
        path: path.to_path_buf(),
        message,
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run {tool}: {e}")))?;
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    // Feed stdin from a thread so a large output cannot deadlock us.
    let feeder = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
        drop(stdin);
    });
    let out = child
        .wait_with_output()
        .map_err(|e| fail(format!("waiting for {tool}: {e}")))?;
    let _ = feeder.join();
    if !out.status.success() {
        return Err(fail(format!(
            "{} ({})",
            String::from_utf8_lossy(&out.stderr).trim(),
            out.status
        )));
    }
    Ok(out.stdout)
}
