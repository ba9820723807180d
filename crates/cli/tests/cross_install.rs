//! `scripts/cross.sh --install TARGET` on a machine with none of the cross
//! tools (issue 27: it installed qemu only, and the aarch64 musl build then
//! failed in cc-rs for want of `aarch64-linux-gnu-gcc`). The script runs
//! with a PATH holding only the basics and stubs: `apt-get` "installs" a
//! package by creating the executables Debian's package provides, `rustup`
//! and `cargo` only record. Every C tool `.cargo/config.toml` names for the
//! target must exist by the time cargo starts, and the target's C headers
//! must have been asked for.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const TARGETS: [&str; 4] = [
    "aarch64-unknown-linux-musl",
    "aarch64-unknown-linux-gnu",
    "armv7-unknown-linux-gnueabihf",
    "x86_64-unknown-linux-musl",
];

/// What Debian's packages put on PATH (with their dependencies':
/// gcc-PREFIX depends on binutils-PREFIX).
const DEBIAN: &[(&str, &[&str])] = &[
    (
        "gcc-aarch64-linux-gnu",
        &["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-ar"],
    ),
    ("binutils-aarch64-linux-gnu", &["aarch64-linux-gnu-ar"]),
    (
        "gcc-arm-linux-gnueabihf",
        &["arm-linux-gnueabihf-gcc", "arm-linux-gnueabihf-ar"],
    ),
    ("binutils-arm-linux-gnueabihf", &["arm-linux-gnueabihf-ar"]),
    ("libc6-dev-arm64-cross", &[]),
    ("libc6-dev-armhf-cross", &[]),
    ("qemu-user", &["qemu-aarch64", "qemu-arm"]),
    ("qemu-user-binfmt", &[]),
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

/// The tools `.cargo/config.toml` names for `target`: `linker` in its
/// `[target.T]` table, `CC_T`/`AR_T` in `[env]`; rust-lld aside.
fn config_tools(target: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(".cargo/config.toml")).unwrap();
    let env = target.replace('-', "_");
    let (mut section, mut tools) = (String::new(), Vec::new());
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim().trim_matches('"'));
        let wanted = (section == format!("[target.{target}]") && key == "linker")
            || (section == "[env]" && (key == format!("CC_{env}") || key == format!("AR_{env}")));
        if wanted && value != "rust-lld" {
            tools.push(value.to_string());
        }
    }
    tools
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/bash\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn install_installs_every_tool_the_build_names() {
    let mut seen_c_tool = false;
    for target in TARGETS {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for tool in ["bash", "awk", "sed", "grep", "dirname", "cat"] {
            let real = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("no {tool}"));
            std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
        }
        let log = dir.path().join("log");
        let mut cases = String::new();
        for (pkg, tools) in DEBIAN {
            let make: String = tools
                .iter()
                .map(|t| {
                    format!(
                        "printf '#!/bin/bash\\n' > {0}/{t}; chmod +x {0}/{t}; ",
                        bin.display()
                    )
                })
                .collect();
            cases.push_str(&format!("    {pkg}) {make}: ;;\n"));
        }
        script(
            &bin.join("apt-get"),
            &format!(
                "echo \"apt-get $*\" >> {log}\nfor p in \"$@\"; do\n  case $p in\n{cases}    -*|update|install) ;;\n    *) echo \"no such package $p\" >&2; exit 100 ;;\n  esac\ndone",
                log = log.display()
            ),
        );
        script(
            &bin.join("rustup"),
            &format!("echo \"rustup $*\" >> {}", log.display()),
        );
        script(
            &bin.join("cargo"),
            &format!("echo \"cargo $*\" >> {}", log.display()),
        );
        let out = Command::new(bin.join("bash"))
            .arg(repo().join("scripts/cross.sh"))
            .args(["--install", target])
            .env_clear()
            .env("PATH", &bin)
            .output()
            .unwrap();
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(out.status.success(), "{target}: {out:?}\n{log}");
        assert!(
            log.contains(&format!("cargo build --target {target}")),
            "{target}: {log}"
        );
        for tool in config_tools(target) {
            seen_c_tool = true;
            assert!(
                bin.join(&tool).exists(),
                "{target}: .cargo/config.toml names {tool}, which --install did not install:\n{log}"
            );
            if let Some(prefix) = tool.strip_suffix("-gcc") {
                let arch = if prefix.starts_with("aarch64") {
                    "arm64"
                } else {
                    "armhf"
                };
                assert!(
                    log.contains(&format!("libc6-dev-{arch}-cross")),
                    "{target}: {tool} without the target's C headers:\n{log}"
                );
            }
        }
    }
    assert!(
        seen_c_tool,
        "the config names no C tool: the test checks nothing"
    );
}
